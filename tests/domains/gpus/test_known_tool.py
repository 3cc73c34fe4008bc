"""The known-good GPU tool that `scripted/synth-oracle` submits (armbench/domains/gpus/known_tool/tool.py
with its spec tool.json): a stdlib module that crawls the GPU replica over HTTP. Every GPU question's
tooled solution, replayed against it on a real replica, grades correct; its spec accepts every
solution's arguments; a bad argument is a clear error at once. Each call runs in a fresh interpreter
(`python -I`), the module executed with REPLICA_URL set first, as the harness does; `-s` prints the
per-call wall times (timing is the benchmarks' business, so nothing here asserts on it)."""
import ast
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema
import pytest

from armbench.domains import find_domain
from armbench.domains.gpus.tools import GpuQuery
from armbench.grading.strict import grade
from armbench.questions import load_sets, with_replica_addresses
from armbench.replicas import serve
from armbench.replicas.supervisor import replicas_running
from armbench.types import StopReason
from tests.conftest import free_port_base

SOURCE = (find_domain("gpus").known_tool / "tool.py").read_text()
SPEC = json.loads((find_domain("gpus").known_tool / "tool.json").read_text())
# The sets the known tool was written beside (heldout-2 came later and is not its business).
QUESTIONS = {q.id: q for qs in load_sets(["gpus"], ["design", "heldout"]) for q in qs.questions if "tooled" in q.solutions}
CALL_TIMEOUT_S = 60  # about the harness's per-call timeout: past it, the tool hangs

# What the harness does in its sandbox: a fresh namespace with REPLICA_URL, then the module, then
# one call with the model's arguments (stdin, JSON); the result goes out as JSON.
DRIVER = """
import json, sys
namespace = {"__name__": "synthesized_tool", "REPLICA_URL": sys.argv[1]}
exec(compile(sys.argv[2], "gpus.py", "exec"), namespace)
print(json.dumps(namespace[sys.argv[3]](**json.load(sys.stdin))))
"""


def call_tool(replica_url: str, arguments: dict) -> tuple[dict, float]:
    """The tool's result for `arguments`, and the call's wall time in seconds."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-I", "-c", DRIVER, replica_url, SOURCE, SPEC["name"]],
                          input=json.dumps(arguments), capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), elapsed


@pytest.fixture(scope="module")
def gpus_url():
    """The GPU replica on free ports for this module; solutions' `{replica:gpus}` resolve to it."""
    directory = tempfile.mkdtemp(prefix="ab-", dir="/tmp")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(serve.PORT_BASE_ENV, str(free_port_base()))
            patch.setenv(serve.SOCKET_DIR_ENV, directory)
            with replicas_running([find_domain("gpus").replica]) as endpoints:
                yield endpoints["gpus"].base_url.rstrip("/")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_every_gpu_question_has_a_tooled_solution_to_replay():
    assert len(QUESTIONS) == 10 and {q.set for q in QUESTIONS.values()} == {"design", "heldout"}


@pytest.mark.slow
@pytest.mark.parametrize("qid", sorted(QUESTIONS))
def test_the_tooled_solution_answers_right_with_the_known_tool(gpus_url, qid):
    question = QUESTIONS[qid]
    solution = question.solutions["tooled"]
    results = []
    for call in solution.calls:
        assert call.tool == SPEC["name"]
        result, elapsed = call_tool(gpus_url, with_replica_addresses(call.args))
        print(f"\n{qid}: {elapsed:.2f} s, matched {result.get('matched')}")
        assert "error" not in result, result
        results.append(result)
    items = solution.answer.items(results)
    verdict = grade(question.join_answer(items), question.answer, question.separator, stop_reason=StopReason.answered)
    assert verdict.correct, (items, question.answer)


def test_results_are_the_hand_built_tools_on_queries_no_question_asks(gpus_url):
    """Same matched rows, order, values and aggregates as gpu_query over the parquet table (rows
    differ only in their link: `page` on the site here, `source_url` there unless asked for)."""
    queries = [
        {"filters": [{"field": "name", "op": "contains", "value": "quadro"}], "sort_by": "memory_size_gb",
         "fields": ["name", "memory_size_gb", "source_url"], "limit": 7},
        {"filters": [{"field": "memory_type", "op": "in", "value": ["hbm2", "HBM2e"]},
                     {"field": "release_date", "op": "eq", "value": "2020-11"}], "sort_by": "name", "order": "asc"},
        {"filters": [{"field": "manufacturer", "op": "ne", "value": "nvidia"},
                     {"field": "memory_type", "op": "is_null"}], "aggregate": {"fn": "min", "field": "release_date"}},
        {"filters": [{"field": "gpu_name", "op": "starts_with", "value": "navi 3"}],
         "sort_by": "thermal_design_power_w", "order": "asc", "aggregate": {"fn": "count"}, "limit": 4},
        {"filters": [{"field": "release_date", "op": "in", "value": [1999, "2001-03"]},
                     {"field": "memory_bus_bits", "op": "gte", "value": "128"}], "limit": 3},
    ]
    for arguments in queries:
        ours, _ = call_tool(gpus_url, arguments)
        theirs = asyncio.run(GpuQuery().run(GpuQuery.Args(**arguments)))
        for key in ("matched", "returned", "truncated", "sort", "aggregate"):
            assert ours.get(key) == theirs.get(key), (key, arguments)
        link = "source_url" if "source_url" not in (arguments.get("fields") or []) else None
        assert [{k: v for k, v in row.items() if k != "page"} for row in ours["rows"]] == [
            {k: v for k, v in row.items() if k != link} for row in theirs["rows"]], arguments


def test_the_spec_accepts_every_solutions_arguments():
    jsonschema.Draft202012Validator.check_schema(SPEC["parameters"])
    assert set(SPEC) == {"name", "description", "parameters"} and SPEC["name"] == "gpu_query"
    for question in QUESTIONS.values():
        for call in question.solutions["tooled"].calls:
            jsonschema.validate(call.args, SPEC["parameters"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"filters": [{"field": "price", "op": "eq", "value": 1}]}, SPEC["parameters"])


@pytest.mark.parametrize(("arguments", "named"), [
    ({"filters": [{"field": "price", "op": "lt", "value": 500}]}, "'price'"),
    ({"filters": [{"field": "name", "op": "gt", "value": "A"}]}, "'gt'"),
    ({"filters": [{"field": "release_date", "op": "gte", "value": "2023-13"}]}, "'2023-13'"),
    ({"filters": [{"field": "memory_size_gb", "op": "in", "value": []}]}, "non-empty list"),
    ({"filters": {"field": "name", "op": "eq", "value": "x"}}, "filters"),
    ({"sort_by": "memory_size_gb", "order": "up"}, "'up'"),
    ({"limit": 0}, "limit"),
    ({"aggregate": {"fn": "avg", "field": "name"}}, "'name'"),
    ({"aggregate": {"fn": "median", "field": "die_size_mm2"}}, "'median'"),
    ({"where": "fp32 > 1000"}, "where"),
])
def test_a_bad_argument_is_a_clear_error_at_once(arguments, named):
    """Arguments are checked before the first request: the address goes nowhere, nothing waits."""
    result, elapsed = call_tool("http://127.0.0.1:9", arguments)
    assert result["error"]["type"] == "invalid_arguments" and named in result["error"]["message"], result
    assert set(result) == {"error"} and elapsed < CALL_TIMEOUT_S


def test_the_source_is_a_generic_stdlib_module_that_reaches_only_the_replica():
    tree = ast.parse(SOURCE)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names
    stores = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
              for target in node.targets if isinstance(target, ast.Name)}
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert "REPLICA_URL" not in stores and not {"open", "eval", "exec", "__import__"} & names
    assert "127.0.0.1" not in SOURCE and "localhost" not in SOURCE
    assert any(isinstance(node, ast.FunctionDef) and node.name == SPEC["name"] for node in tree.body)
    answers = {item for q in QUESTIONS.values() for item in q.answer if not item.isdigit()}
    assert not [answer for answer in answers if answer in SOURCE or answer in SPEC["description"]]
