"""The tooled arm: the browsing arm's tools plus the domain's typed tools.

The browsing tools (browser, python, http_get) arrive with the browsing arm; until then the tooled
arm is the domain's typed tools alone, and `ARMS` lists only this arm.
"""
from __future__ import annotations

from arms.base import Arm
from arms.tools import TOOLS_BY_DOMAIN
from harness.errors import UserError


def tooled_arm(domain: str) -> Arm:
    tool_classes = TOOLS_BY_DOMAIN.get(domain)
    if tool_classes is None:
        raise UserError(f"no typed tools for domain {domain!r}; domains: {', '.join(TOOLS_BY_DOMAIN)}")
    return Arm(name="tooled", tools=[cls() for cls in tool_classes])
