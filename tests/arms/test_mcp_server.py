"""Our typed tools served over MCP, seen through the SDK's own client over stdio and HTTP."""
import json
import os
import signal
import subprocess

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from armbench.arms.tool_source import in_process_tools
from armbench.questions import load_sets
from tests.conftest import SERVE_GPUS


@pytest.fixture(params=["stdio", "http"])
def server(request, serve_gpus):
    if request.param == "stdio":
        return StdioServerParameters(command=serve_gpus[0], args=serve_gpus[1:])
    _, url = request.getfixturevalue("http_gpus")
    return url


def calls_for_every_tool() -> list[tuple[str, dict]]:
    """Every stored solution call, and one call with an argument no tool accepts, per tool."""
    stored = [
        (call.tool, call.args)
        for question_set in load_sets(["gpus"])
        for question in question_set.questions
        for call in question.solutions["tooled"].calls
    ]
    return stored + [(tool.name, {"no_such_argument": 1}) for tool in in_process_tools("gpus")]


async def test_every_tool_is_listed_and_answers_as_in_process(server):
    local = {tool.name: tool for tool in in_process_tools("gpus")}
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
        assert [tool.name for tool in listed] == list(local)
        for tool in listed:
            spec = local[tool.name].schema()["function"]
            assert (tool.description, tool.input_schema) == (spec["description"], spec["parameters"])

        calls = calls_for_every_tool()
        assert {name for name, _ in calls} == set(local)
        for name, arguments in calls:
            expected = await local[name].invoke(arguments)
            reply = await client.call_tool(name, arguments)
            assert reply.is_error == expected.is_error
            assert [block.text for block in reply.content] == [expected.to_message_content()]
            if not reply.is_error:
                assert reply.structured_content == json.loads(expected.to_message_content())

        with pytest.raises(MCPError, match="unknown tool 'web_search'"):
            await client.call_tool("web_search", {"q": "gpu"})


def test_a_ctrl_c_as_soon_as_the_http_server_says_it_serves_stops_it_even_in_a_background_job():
    """A shell's background job starts with SIGINT ignored: a Ctrl-C that came before the server's own
    handlers were in place was lost, and the server served on. It says it serves only once they are."""
    ignoring_sigint = ["sh", "-c", "trap '' INT; exec \"$@\"", "sh"]
    process = subprocess.Popen([*ignoring_sigint, *SERVE_GPUS, "--http", "0"], stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        assert "http://127.0.0.1:" in process.stderr.readline()
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=30) == 0  # it stopped as asked; the signal, ignored at start, ends no process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
