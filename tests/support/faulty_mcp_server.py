"""An MCP server whose tools fail on purpose, served over stdio by the real server code.

`crash` kills the server process mid-call, `fail` returns a tool error, `slow` outlasts a short
client timeout.
"""
import asyncio
import os

import anyio
from pydantic import BaseModel

from armbench.arms.mcp_server import build_server, serve_stdio
from armbench.tools.base import Tool, ToolError


class NoArgs(BaseModel):
    pass


class Crash(Tool):
    name = "crash"
    description = "Exits the server process."
    Args = NoArgs

    async def run(self, args):
        os._exit(3)


class Fail(Tool):
    name = "fail"
    description = "Always fails."
    Args = NoArgs

    async def run(self, args):
        raise ToolError("out_of_service", "the backend is down for maintenance")


class Slow(Tool):
    name = "slow"
    description = "Answers after five seconds."
    Args = NoArgs

    async def run(self, args):
        await asyncio.sleep(5)
        return {"done": True}


if __name__ == "__main__":
    anyio.run(serve_stdio, build_server("faulty", [Crash(), Fail(), Slow()]))
