"""Arms: the tool sets an agent gets. `tooled` = browsing tools + the domain's typed tools."""
from __future__ import annotations

from typing import Callable

from arms.base import Arm
from arms.tooled import tooled_arm

ARMS: dict[str, Callable[[str], Arm]] = {"tooled": tooled_arm}


def build_arm(name: str, domain: str) -> Arm:
    return ARMS[name](domain)
