"""A synthesized tool: its spec's checks, and every call run in the sandbox — what it returns, how
it fails (each failure a tool error, never a raise), and what it cannot do: read the project,
reach anything but its domain's replica, or outlive its call."""
from __future__ import annotations

import json
import random
import subprocess
import textwrap
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

import pytest

from armbench.domains import find_domain
from armbench.tools.sandbox import bwrap_problem
from armbench.tools.synthesized import SynthesizedTool, ToolSpec
from armbench.tools.web_tools import PythonTool

ROOT = Path(__file__).resolve().parents[2]
needs_bwrap = pytest.mark.skipif(bwrap_problem("/usr/bin/python3") is not None, reason="no bwrap here")
OPEN_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": True}


def spec(body: str, name: str = "probe", parameters: dict | None = None) -> ToolSpec:
    source = f"import json, os, subprocess, time, urllib.request\n\n\ndef {name}(**arguments):\n" + textwrap.indent(
        textwrap.dedent(body), "    ")
    return ToolSpec(name, "A test tool.", parameters or OPEN_SCHEMA, source)


def tool(env, body: str, timeout_s: float = 20.0, **kwargs) -> SynthesizedTool:
    return SynthesizedTool(spec(body, **kwargs), PythonTool(env.routes("gpus")), env.target("gpus").base_url, timeout_s)


def test_a_spec_names_its_problems():
    good = spec("return {}")
    assert good.problems() == []
    assert good.sha256 == spec("return {}").sha256 != spec("return {'a': 1}").sha256
    cases = [
        (ToolSpec("Bad-Name", "d", OPEN_SCHEMA, "def x(): pass"), "lower-case Python identifier"),
        (ToolSpec("class", "d", OPEN_SCHEMA, "def x(): pass"), "lower-case Python identifier"),
        (ToolSpec("t", " ", OPEN_SCHEMA, "def t(): pass"), "description is empty"),
        (ToolSpec("t", "d", {"type": "array"}, "def t(): pass"), "schema of an object"),
        (ToolSpec("t", "d", {"type": "object", "properties": 3}, "def t(): pass"), "not a valid JSON schema"),
        (ToolSpec("t", "d", OPEN_SCHEMA, "def t(:"), "does not compile"),
        (ToolSpec("t", "d", OPEN_SCHEMA, "def other(): pass"), "no top-level function 't'"),
        (ToolSpec("t", "d", OPEN_SCHEMA, "def t(): pass\n" + "#" * 70_000), "limit"),
    ]
    for bad, expected in cases:
        assert any(expected in problem for problem in bad.problems()), (bad.name, bad.problems())


def test_the_model_sees_the_specs_name_description_and_schema(arm_env):
    offered = tool(arm_env, "return {}").schema()["function"]
    assert offered == {"name": "probe", "description": "A test tool.", "parameters": OPEN_SCHEMA}


@needs_bwrap
async def test_a_call_reaches_the_replica_at_replica_url_and_returns_the_functions_dict(arm_env):
    probe = tool(arm_env, """
        print("prints are discarded")
        with urllib.request.urlopen(REPLICA_URL + "/healthz", timeout=10) as response:
            health = json.loads(response.read())
        return {"replica": health["replica"], "echo": arguments}
    """)
    outcome = await probe.invoke({"x": [1, "é"]})
    assert not outcome.is_error, outcome.result
    assert outcome.result == {"replica": find_domain("gpus").replica.name, "echo": {"x": [1, "é"]}}
    assert "REPLICA_URL" not in json.dumps(probe.schema())  # the address is the harness's, never the spec's


@needs_bwrap
async def test_a_non_dict_result_is_wrapped_and_a_tool_reported_error_counts_as_one(arm_env):
    assert (await tool(arm_env, "return [1, 2]").invoke({})).result == {"result": [1, 2]}
    reported = await tool(arm_env, "return {'error': {'type': 'bad_field', 'message': 'no such field'}}").invoke({})
    assert reported.is_error and reported.result["error"]["type"] == "bad_field"


async def test_arguments_are_checked_against_the_schema_before_anything_runs(arm_env):
    schema = {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1}}, "required": ["limit"],
              "additionalProperties": False}
    checked = tool(arm_env, "raise SystemExit('must not run')", parameters=schema)
    outcome = await checked.invoke('{"limit": 0, "extra": 1}')
    assert outcome.is_error and outcome.result["error"]["type"] == "invalid_arguments"
    assert {problem["at"] for problem in outcome.result["error"]["problems"]} == {"limit", "(root)"}
    assert (await checked.invoke("{not json")).result["error"]["type"] == "invalid_json"


@needs_bwrap
async def test_each_way_a_tool_fails_is_a_tool_error(arm_env):
    raised = (await tool(arm_env, "raise ValueError('no such field: colour')").invoke({})).result["error"]
    assert raised["type"] == "tool_failure" and raised["message"].endswith("ValueError: no such field: colour")
    assert raised["traceback"].startswith("Traceback") and 'File "tool.py", line 5, in probe' in raised["traceback"]
    assert "main.py" not in raised["traceback"]  # the wrapper's frames are not the author's business

    started = time.monotonic()
    hung = (await tool(arm_env, "time.sleep(600)", timeout_s=1.5).invoke({})).result["error"]
    assert hung["type"] == "timeout" and time.monotonic() - started < 15

    huge = (await tool(arm_env, "return {'rows': ['x' * 1000] * 100}").invoke({})).result["error"]
    assert huge["type"] == "result_too_large"
    not_json = (await tool(arm_env, "return {'when': time}").invoke({})).result["error"]
    assert not_json["type"] == "tool_failure" and "not JSON serializable" in not_json["message"]
    exited = (await tool(arm_env, "os._exit(3)").invoke({})).result["error"]
    assert exited["type"] == "tool_failure"


@needs_bwrap
async def test_a_tool_cannot_read_the_project_or_its_data(arm_env):
    parquet = next((ROOT / "armbench" / "domains" / "gpus" / "data").glob("*.parquet"))
    paths = [str(ROOT / "pyproject.toml"), str(parquet), str(ROOT / "questions" / "gpus" / "heldout.yaml"), "/root"]
    probe = tool(arm_env, f"""
        found = {{}}
        for path in {paths!r}:
            try:
                os.listdir(path) if os.path.isdir(path) else open(path, "rb").read(10)
                found[path] = "READ"
            except OSError as error:
                found[path] = type(error).__name__
        return found
    """)
    outcome = await probe.invoke({})
    assert set(outcome.result) == set(paths)
    assert "READ" not in outcome.result.values(), outcome.result


@pytest.fixture
def host_service():
    """A service on the host's loopback that is not the domain's replica."""

    class Hello(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"reached")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@needs_bwrap
async def test_a_tool_reaches_nothing_but_its_domains_replica(arm_env, host_service):
    targets = [f"http://127.0.0.1:{host_service}/", "http://1.1.1.1/", "http://example.com/"]
    probe = tool(arm_env, f"""
        seen = {{}}
        for url in {targets!r}:
            try:
                seen[url] = urllib.request.urlopen(url, timeout=3).read().decode()
            except OSError as error:
                seen[url] = "blocked " + type(error).__name__
        return seen
    """)
    outcome = await probe.invoke({})
    assert all(value.startswith("blocked") for value in outcome.result.values()), outcome.result


@needs_bwrap
async def test_a_tool_does_not_outlive_its_call(arm_env):
    marker = f"{random.randrange(10**6, 10**7)}.25"
    probe = tool(arm_env, f"""
        subprocess.Popen(["/usr/bin/sleep", "{marker}"], start_new_session=True)
        return {{"started": True}}
    """)
    assert (await probe.invoke({})).result == {"started": True}
    lingering = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout
    assert lingering == "", "a process the tool started outlived its call"


def test_a_schema_must_be_self_contained_and_free_of_regular_expressions():
    """Both would run in the harness on every call: a reference can point anywhere or at itself, and a
    pattern can backtrack for minutes on one argument."""
    def problems(parameters: dict) -> list[str]:
        return ToolSpec("t", "d", parameters, "def t(**a): return {}").problems()

    ref = {"type": "object", "properties": {"a": {"$ref": "https://example.com/schema"}}}
    nested_pattern = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "pattern": "^(a+)+$"}]}}}
    assert "uses $ref" in problems(ref)[0] and "uses pattern" in problems(nested_pattern)[0]
    named_pattern = {"type": "object", "properties": {"pattern": {"type": "string", "default": {"$ref": "x"}}}}
    assert problems(named_pattern) == []  # a property's name and a default's data are not keywords
    assert "limit" in problems({"type": "object", "description": "x" * 30_000})[0]


@needs_bwrap
async def test_nothing_a_call_sends_or_a_tool_writes_escapes_as_an_exception(arm_env):
    deep = "[" * 100_000 + "]" * 100_000
    outcome = await tool(arm_env, "return {}").invoke('{"a": ' + deep + "}")
    assert outcome.is_error and outcome.result["error"]["type"] in ("invalid_json", "tool_failure")
    scalar = await tool(arm_env, "os.write(1, b'1')\nos._exit(0)").invoke({})
    assert scalar.result["error"]["type"] == "tool_failure" and "no JSON result" in scalar.result["error"]["message"]


@needs_bwrap
async def test_what_a_tool_or_its_children_print_is_discarded(arm_env):
    noisy = tool(arm_env, "print('noise')\nsubprocess.run(['/usr/bin/echo', 'more noise'])\nreturn {'ok': 1}")
    assert (await noisy.invoke({})).result == {"ok": 1}


@needs_bwrap
async def test_the_cpu_cap_follows_the_call_timeout(arm_env):
    """A --tool-timeout past the sandbox's usual 20 s of CPU holds for a CPU-bound tool too."""
    probe = tool(arm_env, "import resource\nreturn {'cpu': resource.getrlimit(resource.RLIMIT_CPU)[0]}", timeout_s=45)
    assert (await probe.invoke({})).result == {"cpu": 46}
