"""Serve a domain's typed tools over MCP: the same Tool objects, names, descriptions and schemas.

Every `Tool` is registered generically: it is listed with `Args.model_json_schema()` as its input
schema and called through `Tool.invoke`, so validation and error results are exactly those of
the in-process tool. This uses the SDK's low-level `Server` (which `MCPServer` wraps) because
`MCPServer` derives a tool's schema from a Python function signature and validates arguments
itself; a served armbench tool must advertise and validate with its own pydantic model.
"""
from __future__ import annotations

import json
import socket
from collections.abc import Callable

import anyio
import uvicorn
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from armbench.arms.tool_source import in_process_tools
from armbench.errors import UserError
from armbench.tools.base import OfferedTool, ToolOutcome

HOST = "127.0.0.1"
PATH = "/mcp"
BACKLOG = 128


def build_server(name: str, tools: list[OfferedTool]) -> Server:
    by_name = {tool.name: tool for tool in tools}
    listed = [
        types.Tool(
            name=spec["name"], description=spec["description"], input_schema=spec["parameters"]
        )
        for spec in (tool.schema()["function"] for tool in tools)
    ]

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:  # the spec makes an unknown tool a protocol error, not a tool result
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
        return call_tool_result(await tool.invoke(params.arguments))

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


def call_tool_result(outcome: ToolOutcome) -> types.CallToolResult:
    """The JSON the model would see in-process, as text; a success also as structured content."""
    text = outcome.to_message_content()
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=None if outcome.is_error else json.loads(text),
        is_error=outcome.is_error,
    )


async def serve_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def listen(port: int) -> socket.socket:
    """Bind and listen before serving, so a busy port is one clear message (port 0 picks a free one)
    and a client that connects as soon as the URL is announced waits in the backlog, not refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as error:
        sock.close()
        raise UserError(f"cannot listen on {HOST}:{port}: {error.strerror}") from None
    sock.listen(BACKLOG)
    return sock


class AnnouncedServer(uvicorn.Server):
    """Says it serves once it does, with its signal handlers in place: a Ctrl-C that follows the
    announcement stops it, even in a process that started with SIGINT ignored (a background job),
    where a Ctrl-C before the handlers would be lost."""

    def __init__(self, config: uvicorn.Config, announce: Callable[[], None]) -> None:
        super().__init__(config)
        self.announce = announce

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self.announce()


async def serve_http(server: Server, sock: socket.socket, announce: Callable[[], None]) -> None:
    config = uvicorn.Config(server.streamable_http_app(streamable_http_path=PATH), log_level="warning")
    await AnnouncedServer(config, announce).serve(sockets=[sock])


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}{PATH}"


def serve(domain: str, port: int | None, announce: Callable[[str], None]) -> None:
    """Serve until stdin closes (stdio, when `port` is None) or the process is stopped (HTTP)."""
    server = build_server(f"armbench-{domain}", in_process_tools(domain))
    if port is None:
        anyio.run(serve_stdio, server)
        return
    sock = listen(port)
    anyio.run(serve_http, server, sock, lambda: announce(url_of(sock)))
