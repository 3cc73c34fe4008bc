"""A whole run set through the runner and store, and the report built from it."""
import json
import os
import shutil
import tempfile

import polars as pl
import pytest

from armbench.analysis.report import summarize, summary_table
from armbench.analysis.stats import wilson_interval
from armbench.analysis.tables import to_markdown
from armbench.engine.plan import plan
from armbench.engine.store import RunSetStore, open_run_set
from armbench.errors import UserError
from armbench.questions import load_set_file, set_path
from armbench.tools.sandbox import BWRAP, SandboxConfig, call_caps
from armbench.types import RunConfig, RunRecord
from tests.support.models import run_set
from tests.support.run_sets import make_manifest


@pytest.fixture(scope="module")
async def oracle_run(tmp_path_factory):
    """One run set for the module's tests, which only read it."""
    store = RunSetStore(tmp_path_factory.mktemp("runner") / "set")
    config = RunConfig(model="scripted/oracle", arms=["tooled"], runs=3, concurrency=4)
    sets = [load_set_file(set_path("gpus", name)) for name in ("design", "heldout")]
    result = await run_set(sets, config, store, show_progress=False)
    return store, result.records


async def test_oracle_gets_30_of_30_and_every_record_is_complete(oracle_run):
    store, records = oracle_run
    assert len(records) == 30 and all(r.correct for r in records)
    assert {r.run_id for r in records} == {r.run_id for r in store.records()}
    for record in records:
        assert record.outcome == "fully_correct" and record.miss_reason is None
        assert record.actions >= 1 and record.actions_by_tool["gpu_query"] == record.actions
        assert record.cost_usd == 0.0
        assert (store.directory / record.transcript_path).exists()


async def test_manifest_names_model_commit_and_hashes(oracle_run):
    store, records = oracle_run
    manifest = store.manifest()
    assert manifest["model"] == "scripted/oracle"
    assert set(manifest["question_sets"]) == {"gpus/design", "gpus/heldout"}
    assert set(manifest["tool_manifests"]) == {"tooled/gpus"}
    assert manifest["data_hash"] == records[0].data_hash
    assert manifest["sandbox_isolation"] == f"{BWRAP}; {call_caps(SandboxConfig())}"  # CI has bubblewrap
    assert manifest["tool_manifests"]["tooled/gpus"] == records[0].tool_manifest_hash


async def test_parquet_holds_the_same_rows(oracle_run):
    store, records = oracle_run
    frame = pl.read_parquet(store.directory / "runs.parquet")
    assert frame.height == 30
    assert frame["correct"].sum() == 30
    first = frame["actions_by_tool"][0].to_list()
    assert {entry["tool"]: entry["count"] for entry in first} == records[0].actions_by_tool


async def test_report_rows(oracle_run):
    store, _ = oracle_run
    rows = summarize(store.records())
    assert [(r.set, r.arm, r.correct, r.graded) for r in rows] == [
        ("design", "tooled", 15, 15),
        ("heldout", "tooled", 15, 15),
    ]
    assert "| gpus | design | tooled | 15/15 |" in to_markdown(summary_table(rows))


@pytest.mark.slow
async def test_an_existing_run_set_is_not_overwritten(oracle_run, gpu_design):
    store, _ = oracle_run
    with pytest.raises(UserError, match="already holds a run set"):
        await run_set([gpu_design], RunConfig(model="scripted/oracle", arms=["tooled"]), store)


def test_plan_is_question_by_arm_by_repeat(gpu_design):
    jobs = plan([gpu_design], RunConfig(model="m", arms=["tooled"], runs=3))
    assert len(jobs) == 15
    assert len({job.run_id for job in jobs}) == 15


def test_a_torn_last_line_is_skipped(tmp_path):
    store = RunSetStore(tmp_path)
    store.create(make_manifest())
    record = RunRecord.model_validate(json.loads(_a_record_json()))
    store.append(record)
    with store.runs_path.open("a") as handle:
        handle.write('{"run_id": "half')
    assert [r.run_id for r in open_run_set(tmp_path).records()] == [record.run_id]


def test_a_line_that_is_not_a_record_before_the_last_is_an_error_not_a_lost_run(tmp_path):
    store = RunSetStore(tmp_path)
    store.create(make_manifest())
    record = RunRecord.model_validate(json.loads(_a_record_json()))
    store.append(record)
    with store.runs_path.open("a") as handle:
        handle.write(_a_record_json().replace('"infra_error"', '"exploded"') + "\n")
    store.append(record)
    with pytest.raises(UserError, match=r"runs.jsonl:2 is not a run record \(stop_reason: Input should be 'answered'"):
        open_run_set(tmp_path).records()


def _a_record_json() -> str:
    return json.dumps({
        "run_id": "q.tooled.r0", "question_id": "q", "domain": "gpus", "set": "design",
        "arm": "tooled", "repeat": 0, "model": "m", "provider": None, "answer": None,
        "correct": None, "outcome": None, "miss_reason": None, "stop_reason": "infra_error",
        "error": "RateLimitError", "error_kind": "infra", "cost_usd": None, "prompt_tokens": 0,
        "completion_tokens": 0, "actions": 0, "actions_by_tool": {}, "tool_errors": 0,
        "wall_seconds": 0.1, "model_seconds": 0.1, "tool_seconds": 0.0,
        "question_set_hash": "a", "tool_manifest_hash": "b", "data_hash": "c", "prompt_hash": "d",
        "transcript_path": "transcripts/q.tooled.r0.jsonl",
    })


def test_infra_errors_are_excluded_from_accuracy_and_counted():
    infra = RunRecord.model_validate_json(_a_record_json())
    good = infra.model_copy(update={"correct": True, "error_kind": None, "stop_reason": "answered",
                                    "run_id": "q.tooled.r1", "cost_usd": 0.01, "actions": 2})
    bad = good.model_copy(update={"correct": False, "run_id": "q.tooled.r2", "cost_usd": None, "actions": 4})
    [row] = summarize([infra, good, bad])
    assert (row.correct, row.graded, row.infra_errors) == (1, 2, 1)
    assert row.median_actions == 3
    assert row.mean_cost_usd is None  # one graded run has no known price


@pytest.mark.parametrize(
    "successes,total,low,high",
    [(4, 5, 0.3755, 0.9638), (15, 15, 0.7961, 1.0), (0, 5, 0.0, 0.4345), (12, 15, 0.5481, 0.9295)],
)
def test_wilson_interval_matches_hand_computed_values(successes, total, low, high):
    got_low, got_high = wilson_interval(successes, total)
    assert got_low == pytest.approx(low, abs=5e-4) and got_high == pytest.approx(high, abs=5e-4)


@pytest.mark.parametrize("total", range(1, 40))
def test_wilson_interval_always_contains_the_observed_rate(total):
    for successes in (0, total // 2, total):
        low, high = wilson_interval(successes, total)
        assert low <= successes / total <= high


@pytest.mark.slow
async def test_a_questions_prompt_does_not_depend_on_the_rest_of_the_run_set(tmp_path, gpu_design):
    """One prompt per question: it names only its own domain's replica, alone or beside other domains."""
    funds = load_set_file(set_path("funds", "design"))
    seen = {}
    for name, sets in (("alone", [gpu_design]), ("with-funds", [gpu_design, funds])):
        store = RunSetStore(tmp_path / name)
        only = ("gpus-design-01", funds.questions[0].id)
        await run_set(sets, RunConfig(model="scripted/oracle", arms=["tooled"], questions=only), store,
                      show_progress=False)
        record = next(r for r in store.records() if r.question_id == "gpus-design-01")
        system = json.loads((store.directory / record.transcript_path).read_text().splitlines()[0])["content"]
        seen[name] = (record.prompt_hash, system)
    assert seen["alone"] == seen["with-funds"]
    assert "fund screener" not in seen["with-funds"][1] and "GPU specification database" in seen["alone"][1]


@pytest.mark.slow
async def test_a_run_set_starts_only_the_replicas_its_runs_use_and_hashes_every_set(tmp_path, gpu_design):
    """`--question gpus-design-01` over two domains' sets: one replica runs, the manifest still
    names both sets and both domains' tool hashes, and its prompt hash covers both domains."""
    funds = load_set_file(set_path("funds", "design"))
    both, alone = RunSetStore(tmp_path / "both"), RunSetStore(tmp_path / "alone")
    config = RunConfig(model="scripted/oracle", arms=["tooled"], questions=("gpus-design-01",))
    await run_set([gpu_design, funds], config, both, show_progress=False)
    await run_set([gpu_design], config, alone, show_progress=False)
    manifest = both.manifest()
    assert list(manifest["replicas"]) == ["gpus"]
    assert set(manifest["question_sets"]) == {"gpus/design", "funds/design"}
    assert set(manifest["tool_manifests"]) == {"tooled/gpus", "tooled/funds"}
    assert manifest["prompt_hash"] != alone.manifest()["prompt_hash"]  # a hash over both domains' prompts
    assert [r.prompt_hash for r in both.records()] == [r.prompt_hash for r in alone.records()]


@pytest.mark.slow
async def test_prompt_and_tool_hashes_do_not_depend_on_the_port_base(tmp_path, gpu_design, replica_env, monkeypatch,
                                                                     request):
    """The prompt and the tools show the live addresses; their hashes name the replica instead."""
    from armbench.replicas import serve
    from tests.conftest import free_port_base

    manifests, prompts = [], []
    for name in ("first", "second"):
        sockets = tempfile.mkdtemp(prefix="ab-", dir="/tmp")
        os.chmod(sockets, 0o755)  # the python sandbox runs as another user
        request.addfinalizer(lambda path=sockets: shutil.rmtree(path, ignore_errors=True))
        monkeypatch.setenv(serve.PORT_BASE_ENV, str(free_port_base()))
        monkeypatch.setenv(serve.SOCKET_DIR_ENV, sockets)
        store = RunSetStore(tmp_path / name)
        await run_set([gpu_design], RunConfig(model="scripted/oracle", arms=["tooled", "browsing"],
                                              questions=("gpus-design-01",)), store, show_progress=False)
        manifests.append(store.manifest())
        record = store.records()[0]
        prompts.append(json.loads((store.directory / record.transcript_path).read_text().splitlines()[0])["content"])
    assert manifests[0]["replicas"] != manifests[1]["replicas"] and prompts[0] != prompts[1]
    assert manifests[0]["prompt_hash"] == manifests[1]["prompt_hash"]
    assert manifests[0]["tool_manifests"] == manifests[1]["tool_manifests"]
