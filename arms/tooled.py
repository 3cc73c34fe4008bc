"""The tooled arm: the browsing arm's tools plus the domain's typed tools.

The browsing tools (browser, python, http_get) arrive with the browsing arm; until then the tooled
arm is the domain's typed tools alone, and `ARMS` lists only this arm. The typed tools come from a
tool source (`arms/tool_source.py`): in-process by default, or an MCP server.
"""
from __future__ import annotations

from arms.base import Arm
from arms.tool_source import TypedTools, in_process_tools


def tooled_arm(domain: str, typed_tools: TypedTools = in_process_tools) -> Arm:
    return Arm(name="tooled", tools=typed_tools(domain))
