"""Any MCP server's tools as the tooled arm's typed tools.

The runner holds one connection per run set, around all its episodes, as it builds in-process
tools once per set: the server is listed once, so every run of the set records the same tool
manifest, and a server is not restarted for each of hundreds of runs. Concurrent episodes share
the connection; MCP matches replies to requests by id.

What a call ends in:
- the server's result, or its error result (isError): the model sees the server's text verbatim;
- a protocol error or a timeout: a tool error the model sees;
- a lost connection (the server process exited, the HTTP endpoint went away): ToolInfraError,
  which makes the run an infra error; later calls on the dead connection end the same way.
"""
from __future__ import annotations

import asyncio
import logging
import os
import shlex
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any

from mcp import Client, StdioServerParameters, stdio_client, types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from armbench.errors import UserError
from armbench.tools.base import ToolError, ToolInfraError, ToolOutcome, parse_arguments

CALL_TIMEOUT_SECONDS = 60.0
STDERR_TAIL_BYTES = 600


@dataclass(frozen=True)
class McpOutcome(ToolOutcome):
    """A server's reply. The model sees `text`, the server's text content, verbatim."""

    text: str = ""

    def to_message_content(self) -> str:
        return self.text


class Connection:
    """The client session, held open by a task of its own until `closing` is set.

    The SDK raises a transport failure through the task groups that hold the session, cancelling
    whatever task entered them; holding the session in a dedicated task keeps that failure away
    from the runs, which see it as a lost connection on their next call.
    """

    def __init__(self, transport: Any, stderr: IO[str], timeout: float):
        self.transport = transport
        self.stderr = stderr
        self.timeout = timeout
        self.client: Client | None = None
        self.listed: list[types.Tool] = []
        self.failure = "the connection closed"
        self.ready = asyncio.Event()
        self.closing = asyncio.Event()

    async def hold(self) -> None:
        try:
            async with Client(self.transport, read_timeout_seconds=self.timeout) as client:
                self.listed = await list_tools(client)
                self.client = client
                self.ready.set()
                await self.closing.wait()
        except Exception as error:
            self.failure = describe(error)
        finally:
            self.client = None
            self.ready.set()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if self.client is None:
            raise ToolInfraError(f"MCP server connection lost: {self.failure}{self.stderr_tail()}")
        try:
            reply = await self.client.call_tool(name, arguments, read_timeout_seconds=self.timeout)
        except MCPError as error:
            if error.code == types.CONNECTION_CLOSED:
                raise ToolInfraError(f"MCP server connection lost{self.stderr_tail()}") from None
            kind = "timeout" if error.code == types.REQUEST_TIMEOUT else "server_error"
            error_result = ToolError(kind, error.error.message, code=error.code).as_result()
            return ToolOutcome(error_result, is_error=True)
        except ValidationError as error:  # the server answered, but not with a tool result
            return ToolOutcome(ToolError("bad_reply", str(error)).as_result(), is_error=True)
        except Exception as error:  # the transport itself failed
            raise ToolInfraError(f"MCP transport failed: {describe(error)}{self.stderr_tail()}") from None
        return outcome_of(reply)

    def stderr_tail(self) -> str:
        """The end of a local server's stderr: often the reason it died.

        Read with pread, so the file offset the server process shares with us is left alone.
        """
        fd = self.stderr.fileno()
        start = max(0, os.fstat(fd).st_size - STDERR_TAIL_BYTES)
        tail = os.pread(fd, STDERR_TAIL_BYTES, start).decode("utf-8", "replace").strip()
        return f"; the server's stderr ends: {tail}" if tail else ""


class McpTool:
    """One tool a server lists, offered to the model with its name, description and schema verbatim.

    The server validates its own arguments; the harness only checks that they are a JSON object,
    as an MCP client must before it can send them.
    """

    def __init__(self, connection: Connection, listed: types.Tool):
        self.name = listed.name
        self.connection = connection
        self._schema = {
            "type": "function",
            "function": {
                "name": listed.name,
                "description": listed.description or "",
                "parameters": listed.input_schema,
            },
        }

    def schema(self) -> dict[str, Any]:
        return self._schema

    async def invoke(self, arguments: str | dict[str, Any] | None) -> ToolOutcome:
        try:
            raw = parse_arguments(arguments)
        except ToolError as error:
            return ToolOutcome(error.as_result(), is_error=True)
        return await self.connection.call(self.name, raw)


def outcome_of(reply: types.CallToolResult) -> McpOutcome:
    text = "\n".join(
        block.text if isinstance(block, types.TextContent) else f"[{block.type} content]"
        for block in reply.content
    )
    structured = reply.structured_content
    result = structured if isinstance(structured, dict) else {"text": text}
    return McpOutcome(result=result, is_error=reply.is_error, text=text)


def transport(target: str, stderr: IO[str]) -> Any:
    """A URL is streamable HTTP; anything else is a command line, run as a local stdio server."""
    if target.startswith(("http://", "https://")):
        return target
    try:
        argv = shlex.split(target)
    except ValueError as error:
        raise UserError(f"cannot parse the MCP server command {target!r}: {error}") from None
    if not argv:
        raise UserError("--tools mcp: needs a command line or an http(s) URL after 'mcp:'")
    # The server inherits the caller's environment, as it would if run from the same shell.
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    return stdio_client(params, errlog=stderr)


@asynccontextmanager
async def connect(target: str, *, timeout: float = CALL_TIMEOUT_SECONDS) -> AsyncIterator[list[McpTool]]:
    """Start or reach the server at `target`, list its tools, and keep the session for the block.

    A server that cannot be started, reached or listed is a UserError, raised before any run.
    """
    # The SDK logs transport failures with tracebacks; the harness reports them itself.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    with tempfile.TemporaryFile("w+") as stderr:
        connection = Connection(transport(target, stderr), stderr, timeout)
        holder = asyncio.create_task(connection.hold())
        try:
            await connection.ready.wait()
            if connection.client is None:
                raise UserError(
                    f"could not start or reach the MCP server {target!r}: "
                    f"{connection.failure}{connection.stderr_tail()}"
                )
            if not connection.listed:
                raise UserError(f"the MCP server {target!r} lists no tools")
            yield [McpTool(connection, tool) for tool in connection.listed]
        finally:
            connection.closing.set()
            if not connection.ready.is_set():  # interrupted while starting: don't await a handshake
                holder.cancel()
            with suppress(asyncio.CancelledError):
                await holder


async def list_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools


def describe(error: BaseException) -> str:
    """The innermost cause of a failure, in one line (task groups wrap errors in groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        return error.error.message
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
