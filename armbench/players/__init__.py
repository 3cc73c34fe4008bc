"""Offline players: models that play without a provider, for tests, demos, the oracle and the nightly gate.

- `scripted/<script>[+options]` (scripted.py): a LiteLLM custom provider plays a script (scripts.py:
  the oracle, which plays each question's stored solution; synthesis_scripts.py: the synthesis
  players), with faults injected on request (faults.py);
- `replay/<run-set dir>` (replay.py): the model's turns from a recorded run set, checked against
  what today's harness sends.

They register with armbench.models through the `armbench.providers` entry points (pyproject.toml),
which name the functions below (not named like their modules, which would shadow them once imported);
a player module is imported when a model string first names it.
"""
from __future__ import annotations

from armbench.models.model import Model


def scripted_provider() -> type[Model]:
    from armbench.players.scripted import ScriptedModel, set_up

    set_up()
    return ScriptedModel


def replay_provider() -> type[Model]:
    from armbench.players.replay import ReplayModel

    return ReplayModel
