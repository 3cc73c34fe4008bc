"""ARMS: the tool sets an agent gets, as data. Every arm gets the same model, system prompt and
budget; only the tools differ. `environment.ArmEnvironment` builds them for each run.

Kept free of heavy imports, so the CLI checks `--arm` before anything loads.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArmSpec:
    name: str
    typed_tools: bool  # whether the domain's typed tools are added to browsing


ARMS: dict[str, ArmSpec] = {
    arm.name: arm
    for arm in (
        ArmSpec("browsing", typed_tools=False),  # a browser, a python sandbox and raw HTTP to the replica
        ArmSpec("tooled", typed_tools=True),  # browsing + the domain's typed tools
    )
}
