"""Stopping a run set (Ctrl-C, kill -9) and resuming it: nothing finished is lost or redone."""
import asyncio
import json
import os
import signal
import subprocess
import time

import pytest

from armbench.domains import data_hash
from armbench.engine import runner
from armbench.engine.manifest import check_environment, resume_differences
from armbench.engine.plan import plan
from armbench.engine.store import RunSetStore
from armbench.errors import UserError
from armbench.forkserver import ForkedProcess
from armbench.questions import load_set_file, set_path
from armbench.types import Manifest, RunConfig
from tests.support import forked_bench
from tests.support.models import run_set
from tests.support.processes import first_to_end, gone_within

SLOW_ORACLE = "scripted/oracle+latency=0.05"


async def wait_for_records(store: RunSetStore, count: int, running: asyncio.Task) -> None:
    deadline = time.monotonic() + 120
    while len(store.records()) < count:
        assert not running.done() and time.monotonic() < deadline, f"{count} runs were not recorded"
        await asyncio.sleep(0.01)


@pytest.mark.slow
async def test_a_cancelled_set_resumes_without_losing_or_redoing_runs(tmp_path, gpu_design, gpu_heldout):
    sets = [gpu_design, gpu_heldout]
    config = RunConfig(model=SLOW_ORACLE, arms=["tooled"], runs=2, concurrency=3)
    store = RunSetStore(tmp_path / "set")
    first = asyncio.create_task(run_set(sets, config, store, show_progress=False))
    await wait_for_records(store, 4, first)
    first.cancel()  # what Ctrl-C does to `bench run`
    with pytest.raises(asyncio.CancelledError):
        await first
    before = store.runs_path.read_text().splitlines()
    assert 4 <= len(before) < 20

    result = await run_set(sets, config, store, resume=True, show_progress=False)
    after = store.runs_path.read_text().splitlines()
    assert after[: len(before)] == before  # kept, not rewritten
    run_ids = [json.loads(line)["run_id"] for line in after]
    assert sorted(run_ids) == sorted(job.run_id for job in plan(sets, config))
    assert result.already_done == len(before) and len(result.records) == 20 - len(before)
    assert len(store.manifest()["resumes"]) == 1


@pytest.mark.slow
async def test_resuming_a_finished_set_runs_nothing(tmp_path, gpu_design):
    config = RunConfig(model="scripted/oracle", arms=["tooled"])
    store = RunSetStore(tmp_path / "done")
    await run_set([gpu_design], config, store, show_progress=False)
    again = await run_set([gpu_design], config, store, resume=True, show_progress=False)
    assert again.records == [] and again.already_done == 5 and len(store.records()) == 5


@pytest.mark.parametrize(
    "change, named",
    [
        ({"model": "scripted/drop-args"}, "model: the run set used 'scripted/oracle', this command 'scripted/drop-args'"),
        ({"runs": 2}, "--runs: the run set has 1 per question, this command 2"),
        ({"budget": 30}, "--budget: the run set allowed 24 tool calls per episode, this command 30"),
        ({"arms": ["browsing", "tooled"]}, "--arm: the run set ran tooled, this command browsing, tooled"),
    ],
)
@pytest.mark.slow
async def test_resume_refuses_another_model_or_plan(tmp_path, gpu_design, change, named):
    store = RunSetStore(tmp_path / "set")
    await run_set([gpu_design], RunConfig(model="scripted/oracle", arms=["tooled"]), store, show_progress=False)
    other = RunConfig(**{"model": "scripted/oracle", "arms": ["tooled"], **change})
    with pytest.raises(UserError, match="cannot resume") as refused:
        await run_set([gpu_design], other, store, resume=True, show_progress=False)
    assert named in str(refused.value)


@pytest.mark.slow
async def test_resume_refuses_edited_questions(tmp_path, gpu_design, gpu_heldout):
    store = RunSetStore(tmp_path / "set")
    config = RunConfig(model="scripted/oracle", arms=["tooled"])
    await run_set([gpu_design], config, store, show_progress=False)
    edited = gpu_design.model_copy(update={"questions": gpu_design.questions[:4]})
    with pytest.raises(UserError, match=r"question set gpus/design: hash \w{12} in the run set, \w{12} now"):
        await run_set([edited], config, store, resume=True, show_progress=False)
    with pytest.raises(UserError, match="--set: the run set ran design, this command design, heldout"):
        await run_set([gpu_design, gpu_heldout], config, store, resume=True, show_progress=False)


@pytest.mark.slow
async def test_a_refused_resume_starts_nothing_and_names_the_changed_domain(tmp_path, gpu_design, monkeypatch):
    store = RunSetStore(tmp_path / "set")
    config = RunConfig(model="scripted/oracle", arms=["tooled"])
    await run_set([gpu_design], config, store, show_progress=False)

    def started(*_args, **_kwargs):
        raise AssertionError("the environment was started for a resume that is refused")

    monkeypatch.setattr(runner, "open_environment", started)
    worldbank = load_set_file(set_path("worldbank", "design"))
    with pytest.raises(UserError) as refused:
        await run_set([gpu_design, worldbank], config, store, resume=True, show_progress=False)
    assert str(refused.value).endswith("it differs from this command: "
                                       "--domain: the run set ran gpus, this command gpus, worldbank")


@pytest.mark.slow
async def test_a_changed_system_prompt_is_refused_once_the_environment_is_up(tmp_path, gpu_design):
    store = RunSetStore(tmp_path / "set")
    config = RunConfig(model="scripted/oracle", arms=["tooled"])
    await run_set([gpu_design], config, store, show_progress=False)
    store.manifest_path.write_text(json.dumps({**store.manifest(), "prompt_hash": "0" * 64}))
    with pytest.raises(UserError, match=r"system prompt: its text differs from the run set's"):
        await run_set([gpu_design], config, store, resume=True, show_progress=False)


def stored_manifest(question_sets, config: RunConfig) -> dict:
    """The parts of a stored manifest that are checked before anything starts."""
    return {"model": config.model, "config": config.manifest_config(),
            "question_sets": {qs.key: qs.content_hash() for qs in question_sets},
            "data_hash": data_hash(qs.domain for qs in question_sets)}


def test_resume_differences_name_each_flag_and_the_data(gpu_design):
    config = RunConfig(model="scripted/oracle", arms=["tooled"])
    stored = stored_manifest([gpu_design], config)
    assert resume_differences(stored, [gpu_design], config) == []

    def differences(**change) -> list[str]:
        return resume_differences(stored, [gpu_design], config.model_copy(update=change))

    assert differences(questions=("q1",)) == ["--question: the run set ran every question, this command q1"]
    assert differences(record=True, price_per_million=(1.0, 2.0)) == [
        "--record: the run set was not recorded; give the same --record",
        "--price: the run set used None, this command [1.0, 2.0]",
    ]
    narrowed = {**stored, "config": {**stored["config"], "questions": ["q1", "q2"]}}
    assert resume_differences(narrowed, [gpu_design], config.model_copy(update={"questions": ("q2", "q1")})) == []
    assert differences(completion_kwargs={"temperature": 0.5}) == [
        "generation settings (--temperature, -M, ...): the run set used {}, this command {'temperature': 0.5}"]
    rebuilt = {**stored, "data_hash": "c" * 64}
    assert resume_differences(rebuilt, [gpu_design], config) == [
        f"replica data: hash {'c' * 12} in the run set, {stored['data_hash'][:12]} now"]
    older = {**stored, "config": {key: value for key, value in stored["config"].items() if key not in ("arms", "budget")}}
    assert resume_differences(older, [gpu_design], config.model_copy(update={"budget": 30})) == []


def test_environment_differences_name_tools_and_prompt(tmp_path):
    stored = Manifest(created="then", model="m", config={}, git_commit=None, question_sets={},
                      tool_manifests={"tooled/d": "b" * 64}, replicas={}, data_hash="c" * 64,
                      prompt_hash="d" * 64, versions={})
    check_environment(RunSetStore(tmp_path), stored, stored)
    current = stored.model_copy(update={"tool_manifests": {"tooled/d": "e" * 64}, "prompt_hash": "0"})
    with pytest.raises(UserError) as refused:
        check_environment(RunSetStore(tmp_path), stored, current)
    assert str(refused.value).split(": ", 1)[1] == (
        f"tool manifest tooled/d: hash {'b' * 12} in the run set, {'e' * 12} now; system prompt: its text differs "
        "from the run set's (made by another armbench version)")


async def test_resume_needs_a_run_set(tmp_path, gpu_design):
    with pytest.raises(UserError, match="not a run set"):
        await run_set([gpu_design], RunConfig(model="scripted/oracle", arms=["tooled"]),
                      RunSetStore(tmp_path / "empty"), resume=True, show_progress=False)


@pytest.mark.slow
async def test_a_torn_last_line_is_dropped_before_new_records(tmp_path, gpu_design):
    config = RunConfig(model="scripted/oracle", arms=["tooled"], runs=2)
    store = RunSetStore(tmp_path / "torn")
    first = asyncio.create_task(run_set([gpu_design], config, store, show_progress=False))
    await first
    lines = store.runs_path.read_text().splitlines()
    store.runs_path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])  # crash mid-write
    await run_set([gpu_design], config, store, resume=True, show_progress=False)
    run_ids = [json.loads(line)["run_id"] for line in store.runs_path.read_text().splitlines()]
    assert len(run_ids) == len(set(run_ids)) == 10


SLOW_SET = ["run", "--model", "scripted/oracle+latency=0.3",
            "--arm", "tooled", "--set", "design", "--domain", "gpus", "--runs", "2", "--concurrency", "2",
            "--quiet"]


def stop_mid_set(out, how: signal.Signals) -> tuple[ForkedProcess, list[int]]:
    """Start the slow set on replicas of its own, send `how` once 3 runs are recorded; the stopped
    process and the pids of the replica servers it had started."""
    process = forked_bench.start([*SLOW_SET, "--out", str(out)], env=forked_bench.keyless_env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
    runs = out / "runs.jsonl"
    deadline = time.monotonic() + 240
    while not (runs.exists() and runs.read_text().count("\n") >= 3):
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "no runs finished"
        time.sleep(0.05)
    servers = replica_servers_of(process.pid)
    assert servers, "the set started no replica server of its own"
    process.send_signal(how)
    process.wait(timeout=60)
    return process, servers


def replica_servers_of(ancestor: int) -> list[int]:
    """The replica servers `ancestor` started, and the fork server they were forked from."""
    parents, commands = {}, {}
    for entry in os.scandir("/proc"):
        try:
            status = open(f"/proc/{entry.name}/status").read()
            commands[int(entry.name)] = open(f"/proc/{entry.name}/cmdline", "rb").read()
        except (OSError, ValueError):
            continue
        parents[int(entry.name)] = int(status.partition("\nPPid:\t")[2].split()[0])

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == ancestor:
                return True
        return False

    return [pid for pid, command in commands.items() if b"armbench.replicas.serve" in command and descends(pid)]


@pytest.mark.slow
def test_sigterm_stops_like_ctrl_c(tmp_path, replica_env):
    """SIGTERM (what `timeout` sends): exit 143, every record whole, how to resume said, and the
    replica server stopped."""
    out = tmp_path / "terminated"
    process, servers = stop_mid_set(out, signal.SIGTERM)
    stderr = process.stderr.read()
    assert process.returncode == 143, stderr
    assert f"terminated: finished runs are kept in {out / 'runs.jsonl'}" in stderr
    assert f"--resume {out}" in stderr and "Traceback" not in stderr
    assert len(RunSetStore(out).records()) >= 3
    assert (out / "runs.jsonl").read_bytes().endswith(b"\n")  # every line a whole record
    assert gone_within(servers, 5.0)


@pytest.mark.slow
def test_kill_9_mid_set_then_two_resumes_at_once_one_writes_and_redoes_nothing(tmp_path, replica_env):
    """`bench run` in a subprocess with a slow model, SIGKILLed after some runs finished: its replica
    server goes with it. One writer per run set: of two `--resume`s started together, one is refused
    while the other runs (exit 2, naming the holder); the writer loses and redoes nothing, and the
    set ends with one record per planned run."""
    out = tmp_path / "killed"
    _process, servers = stop_mid_set(out, signal.SIGKILL)
    assert gone_within(servers, 5.0), f"replica servers {servers} outlived the killed bench"
    runs = out / "runs.jsonl"
    before = runs.read_text().splitlines()
    assert 3 <= len(before) < 10, "the set finished before it could be killed"

    resumes = [forked_bench.start([*SLOW_SET, "--resume", str(out)], env=forked_bench.keyless_env(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for _ in range(2)]
    refused, writer = first_to_end(resumes, 120)
    message = refused.stderr.read()
    assert writer.poll() is None, "the refused resume waited for the other to finish"
    assert refused.returncode == 2 and "Traceback" not in message, message
    assert f"{out} is being written by another `bench run` (pid {writer.pid})" in message
    code, said = writer.wait(timeout=300), writer.stderr.read()
    assert code == 0 and f"{len(before)} were done before this resume" in said, said
    after = runs.read_text().splitlines()
    assert after[: len(before)] == before
    run_ids = [json.loads(line)["run_id"] for line in after]
    assert len(run_ids) == len(set(run_ids)) == 10


@pytest.mark.slow
def test_a_resume_sets_aside_duplicates_and_runs_broken_runs_again(tmp_path, gpu_design):
    """A run set with a run recorded twice and one the harness broke: the resume keeps the last
    record of the first, moves the broken one's to runs.jsonl.retried and runs it again."""
    config = RunConfig(model="scripted/oracle", arms=["tooled"])
    store = RunSetStore(tmp_path / "set")
    asyncio.run(run_set([gpu_design], config, store, show_progress=False))
    lines = store.runs_path.read_text().splitlines()
    broken = json.loads(lines[1]) | {"correct": None, "outcome": None, "miss_reason": None, "retryable": True,
                                     "error_kind": "infra", "stop_reason": "infra_error",
                                     "error": "ToolInfraError: the replica server died during this python call"}
    lines[1] = json.dumps(broken)
    store.runs_path.write_text("\n".join([lines[0], *lines]) + "\n")  # the first run recorded twice

    result = asyncio.run(run_set([gpu_design], config, store, resume=True, show_progress=False))
    assert [record.run_id for record in result.records] == [broken["run_id"]]
    records = [json.loads(line) for line in store.runs_path.read_text().splitlines()]
    assert sorted(r["run_id"] for r in records) == sorted(job.run_id for job in plan([gpu_design], config))
    assert all(r["correct"] is True for r in records)
    assert json.loads(store.retried_path.read_text())["run_id"] == broken["run_id"]


@pytest.mark.slow
def test_what_a_broken_run_cost_still_counts_against_the_cost_cap(tmp_path, gpu_design):
    """Its money is spent though its record is set aside to run it again: a resume may not overspend."""
    config = RunConfig(model="scripted/oracle", arms=["tooled"])
    store = RunSetStore(tmp_path / "set")
    asyncio.run(run_set([gpu_design], config, store, show_progress=False))
    lines = store.runs_path.read_text().splitlines()
    lines[0] = json.dumps(json.loads(lines[0]) | {"correct": None, "outcome": None, "miss_reason": None,
                                                  "retryable": True, "error_kind": "infra", "cost_usd": 2.5,
                                                  "stop_reason": "infra_error", "error": "ToolInfraError: gone"})
    store.runs_path.write_text("\n".join(lines) + "\n")
    capped = config.model_copy(update={"max_cost": 2.0})
    result = asyncio.run(run_set([gpu_design], capped, store, resume=True, show_progress=False))
    assert result.records == [] and "run-set cost cap reached: $2.5000 spent" in result.halted
