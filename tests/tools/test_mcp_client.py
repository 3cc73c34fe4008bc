"""MCP servers as the tooled arm's typed tools: parity with in-process, server errors, lost servers."""
import json
import shlex
import sys
from pathlib import Path

import pytest

from armbench.analysis.report import summarize
from armbench.arms.tool_source import in_process_tools, open_typed_tools
from armbench.engine.agent import run_episode
from armbench.engine.runner import RunSetFailed
from armbench.engine.store import RunSetStore
from armbench.errors import UserError
from armbench.players.script_registry import Reply, ScriptedToolCall, register_script
from armbench.tools.base import ArmTools, ToolInfraError
from armbench.tools.mcp_client import connect
from armbench.types import RunConfig
from tests.support.models import caller, run_set

FAULTY_OVER_STDIO = shlex.join([sys.executable, str(Path(__file__).parents[1] / "support" / "faulty_mcp_server.py")])


def calling(tool: str):
    """A script that calls `tool` once with no arguments, then gives up."""

    def script(turn):
        if not turn.tool_results():
            return Reply(tool_calls=[ScriptedToolCall(tool, {})])
        return Reply(text="ANSWER: unknown")

    return script


def tool_messages(store: RunSetStore, record) -> list[str]:
    lines = (store.directory / record.transcript_path).read_text().splitlines()
    return [m["content"] for m in map(json.loads, lines) if m["role"] == "tool"]


@pytest.mark.slow
async def test_gpu_sets_over_mcp_grade_as_in_process(tmp_path, gpu_design, gpu_heldout, serve_gpus):
    served_by = f"mcp:{shlex.join(serve_gpus)}"
    sets = [gpu_design, gpu_heldout]
    local_store, served_store = RunSetStore(tmp_path / "local"), RunSetStore(tmp_path / "mcp")
    local = (await run_set(sets, RunConfig(model="scripted/oracle", arms=["tooled"]), local_store, show_progress=False)).records
    served = (await run_set(
        sets,
        RunConfig(model="scripted/oracle", arms=["tooled"], concurrency=4, tools=served_by),
        served_store,
        show_progress=False,
    )).records
    assert len(served) == 10
    assert {r.question_id: r.correct for r in served} == {r.question_id: r.correct for r in local}
    assert all(r.correct for r in served)
    assert {r.tool_manifest_hash for r in served} == {r.tool_manifest_hash for r in local}
    assert served_store.manifest()["config"]["tools"] == served_by
    local_by_question = {r.question_id: r for r in local}
    for record in served:
        seen = tool_messages(served_store, record)
        assert seen == tool_messages(local_store, local_by_question[record.question_id])


@pytest.mark.slow
async def test_server_errors_and_timeouts_reach_the_model_as_tool_errors(gpu_design, script_registry):
    register_script("call-fail")(calling("fail"))
    register_script("call-slow")(calling("slow"))
    question = gpu_design.questions[0]
    async with connect(FAULTY_OVER_STDIO, timeout=1.0) as tools:
        arm = ArmTools("tooled", tools)
        for script, kind in [("call-fail", "out_of_service"), ("call-slow", "timeout")]:
            episode = await run_episode(question, arm, caller(f"scripted/{script}"))
            assert episode.stop_reason == "answered" and episode.tool_errors == 1
            [seen] = [m["content"] for m in episode.transcript if m["role"] == "tool"]
            assert json.loads(seen)["error"]["type"] == kind


@pytest.mark.slow
async def test_a_server_that_crashes_mid_run_is_a_retryable_infra_error(tmp_path, gpu_design, script_registry):
    """The harness broke the runs, not the agent: they are excluded, the set fails, --resume runs them again."""
    register_script("call-crash")(calling("crash"))
    config = RunConfig(model="scripted/call-crash", arms=["tooled"], tools=f"mcp:{FAULTY_OVER_STDIO}",
                       max_infra_errors=5)  # every run an infra error, allowed
    with pytest.raises(RunSetFailed, match="5 runs were broken by the harness") as failed:
        await run_set([gpu_design], config, RunSetStore(tmp_path / "set"), show_progress=False)
    records = failed.value.result.records
    assert len(records) == 5
    for record in records:
        assert (record.stop_reason, record.error_kind, record.correct, record.retryable) == (
            "infra_error", "infra", None, True)
        assert "MCP server connection lost" in record.error
    [row] = summarize(records)
    assert (row.graded, row.infra_errors) == (0, 5)


async def test_an_http_server_that_goes_away_is_an_infra_error(http_gpus):
    process, url = http_gpus
    async with connect(url) as tools:
        assert ArmTools("tooled", tools).manifest_hash() == ArmTools("tooled", in_process_tools("gpus")).manifest_hash()
        assert not (await tools[0].invoke({"limit": 1})).is_error
        process.kill()
        process.wait(timeout=30)
        with pytest.raises(ToolInfraError, match="connection lost"):
            await tools[0].invoke({"limit": 1})


async def test_a_server_that_cannot_start_is_one_clear_user_error(serve_gpus):
    broken = shlex.join([*serve_gpus[:-1], "nosuch"])
    with pytest.raises(UserError, match="could not start .*no domain 'nosuch'"):
        async with connect(broken):
            pass
    with pytest.raises(UserError, match="mcp:COMMAND or mcp:URL"):
        async with open_typed_tools("stdio:bench mcp serve gpus"):
            pass
