"""Arms: the tool sets an agent gets. `tooled` = browsing tools + the domain's typed tools."""
from __future__ import annotations

from typing import Callable

from arms.base import Arm
from arms.tool_source import TypedTools, in_process_tools
from arms.tooled import tooled_arm

ArmFactory = Callable[[str, TypedTools], Arm]
"""(domain, where typed tools come from) -> Arm; an arm without typed tools ignores the second."""

ARMS: dict[str, ArmFactory] = {"tooled": tooled_arm}


def build_arm(name: str, domain: str, typed_tools: TypedTools = in_process_tools) -> Arm:
    return ARMS[name](domain, typed_tools)
