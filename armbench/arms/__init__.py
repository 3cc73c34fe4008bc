"""ARMS: the tool sets an agent gets, as data. Every arm gets the same model, system prompt and
budget; only the tools differ. `environment.ArmEnvironment` builds them for each run.

Kept free of heavy imports, so the CLI checks `--arm` before anything loads.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArmSpec:
    name: str
    tools: str  # what the arm offers, in words (the report and docs)
    typed_tools: bool  # whether the domain's typed tools are added to browsing


ARMS: dict[str, ArmSpec] = {
    arm.name: arm
    for arm in (
        ArmSpec("browsing", "a browser, a python sandbox and raw HTTP to the replica", typed_tools=False),
        ArmSpec("tooled", "browsing + the domain's typed tools", typed_tools=True),
    )
}
