"""Where the tooled arm's typed tools come from: this process (TOOLS_BY_DOMAIN), by default."""
from __future__ import annotations

from typing import Callable

from arms.base import OfferedTool
from arms.tools import TOOLS_BY_DOMAIN
from harness.errors import UserError

TypedTools = Callable[[str], list[OfferedTool]]
"""A domain's typed tools."""


def in_process_tools(domain: str) -> list[OfferedTool]:
    tool_classes = TOOLS_BY_DOMAIN.get(domain)
    if tool_classes is None:
        raise UserError(f"no typed tools for domain {domain!r}; domains: {', '.join(TOOLS_BY_DOMAIN)}")
    return [cls() for cls in tool_classes]
