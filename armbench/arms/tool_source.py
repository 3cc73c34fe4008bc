"""Where the tooled arm's typed tools come from: this process (the domain's `tools`) or an MCP server.

`bench run --tools mcp:TARGET` swaps the in-process typed tools for the tools an MCP server lists,
so any server runs against the same questions, model, prompt and budget as ours.
"""
from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from armbench.domains import find_domain
from armbench.errors import UserError
from armbench.tools.base import OfferedTool

TypedTools = Callable[[str], list[OfferedTool]]
"""A domain's typed tools."""

MCP_PREFIX = "mcp:"


def in_process_tools(domain: str) -> list[OfferedTool]:
    return [cls() for cls in find_domain(domain).tool_classes()]


@asynccontextmanager
async def open_typed_tools(source: str | None) -> AsyncIterator[TypedTools]:
    """`None`: the in-process tools. `mcp:COMMAND` or `mcp:URL`: the server's, for the block."""
    if source is None:
        yield in_process_tools
        return
    if not source.startswith(MCP_PREFIX):
        raise UserError(f"--tools takes mcp:COMMAND or mcp:URL, not {source!r}")
    from armbench.tools.mcp_client import connect  # the MCP SDK loads only when a run uses it

    async with connect(source.removeprefix(MCP_PREFIX)) as tools:
        yield lambda domain: list(tools)  # a server serves one domain: `bench run` takes one with it
