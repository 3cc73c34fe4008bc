"""ARMS: the tool sets an agent gets, as data. Every arm gets the same model, system prompt and
budget; only the tools differ. `environment.ArmEnvironment` builds them for each run.

The synthesized arm needs a tool an agent built (`bench synthesize`, then `--tool-from`), so "all
arms" means it only when one is given.

Kept free of heavy imports, so the CLI checks `--arm` before anything loads.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArmSpec:
    name: str
    typed_tools: bool  # whether the domain's typed tools are added to browsing
    synthesized_tool: bool = False  # whether the domain's frozen synthesized tool is added to browsing


ARMS: dict[str, ArmSpec] = {
    arm.name: arm
    for arm in (
        ArmSpec("browsing", typed_tools=False),  # a browser, a python sandbox and raw HTTP to the replica
        ArmSpec("tooled", typed_tools=True),  # browsing + the domain's typed tools
        # browsing + the tool an agent wrote for the domain, run in the sandbox per call
        ArmSpec("synthesized", typed_tools=False, synthesized_tool=True),
    )
}


def default_arms(with_synthesized_tool: bool) -> list[str]:
    """What "all arms" means: every arm, the synthesized one only when a tool is given for it."""
    return [name for name, arm in ARMS.items() if with_synthesized_tool or not arm.synthesized_tool]
