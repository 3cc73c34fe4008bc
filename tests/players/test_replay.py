"""Record a run set, replay it: same graded outcomes, and a changed tool is caught at its step."""
import json
import shutil
from pathlib import Path

import pytest

from armbench.domains.gpus.tools import GpuQuery
from armbench.engine.runner import RunSetFailed
from armbench.engine.store import RunSetStore
from armbench.errors import UserError
from armbench.models.recording import recording_path
from armbench.players.jsondiff import first_difference
from armbench.questions import load_set_file, set_path
from armbench.types import RunConfig
from tests.support.models import run_set

TOOLED = ["tooled"]


@pytest.fixture(scope="module")
async def recorded_once(tmp_path_factory):
    """The GPU design set recorded once for the module; each test gets a copy it may change."""
    store = RunSetStore(tmp_path_factory.mktemp("replay") / "recorded")
    config = RunConfig(model="scripted/oracle", arms=TOOLED, record=True, concurrency=2)
    await run_set([load_set_file(set_path("gpus", "design"))], config, store, show_progress=False)
    return store


@pytest.fixture
def recorded(recorded_once, tmp_path):
    return RunSetStore(Path(shutil.copytree(recorded_once.directory, tmp_path / "recorded")))


async def replay(recording: RunSetStore, question_sets, out, **config):
    store = RunSetStore(out)
    replay_config = RunConfig(model=f"replay/{recording.directory}", arms=TOOLED, **config)
    result = await run_set(question_sets, replay_config, store, show_progress=False)
    return store, {record.run_id: record for record in result.records}


def steps(store: RunSetStore, run_id: str) -> list[dict]:
    return [json.loads(line) for line in recording_path(store.directory, run_id).read_text().splitlines()]


async def test_every_model_call_is_recorded_with_what_was_sent(recorded):
    for record in recorded.records():
        lines = steps(recorded, record.run_id)
        assert [line["step"] for line in lines] == list(range(record.actions + 1))
        assert [m["role"] for m in lines[0]["sent"]] == ["system", "user"]
        assert lines[0]["tool_schemas"] and all(line["tools"] == lines[0]["tools"] for line in lines)
        assert all(m["role"] == "tool" for line in lines[1:] for m in line["sent"])
        assert lines[-1]["response"]["message"]["content"].splitlines()[-1].startswith("ANSWER:")


@pytest.mark.slow
async def test_a_replay_reproduces_every_graded_outcome_and_diverges_nowhere(recorded, gpu_design, tmp_path):
    store, replayed = await replay(recorded, [gpu_design], tmp_path / "replay")
    original = {record.run_id: record for record in recorded.records()}
    assert replayed.keys() == original.keys()
    for run_id, record in replayed.items():
        before = original[run_id]
        assert (record.answer, record.outcome, record.correct) == (before.answer, before.outcome, before.correct)
        assert (record.prompt_tokens, record.completion_tokens, record.cost_usd) == (
            before.prompt_tokens, before.completion_tokens, before.cost_usd)
        assert record.actions_by_tool == before.actions_by_tool
        assert record.replay_divergence is None
    assert store.manifest()["replay_of"]["model"] == "scripted/oracle"


@pytest.mark.slow
async def test_a_renamed_key_in_a_tool_result_is_reported_at_its_step(recorded, gpu_design, tmp_path, monkeypatch, cli):
    original_run = GpuQuery.run

    async def renamed(self, args):
        result = await original_run(self, args)
        result["match_count"] = result.pop("matched")
        return result

    monkeypatch.setattr(GpuQuery, "run", renamed)
    store, replayed = await replay(recorded, [gpu_design], tmp_path / "replay")
    for record in replayed.values():
        assert record.replay_divergence is not None
        assert record.replay_divergence.startswith("step 1: the result of gpu_query")
        assert "key 'matched' is gone (new key 'match_count')" in record.replay_divergence
        assert record.correct  # the model's turns still come from the recording

    code, out, _ = cli("regress", "--baseline", str(recorded.directory), str(store.directory))
    assert code == 1
    assert "diverged gpus-design-01.tooled.r0: step 1: the result of gpu_query" in out
    assert "REGRESSION 5 replayed run(s) diverged from the recording" in out


@pytest.mark.slow
async def test_a_changed_question_is_reported_at_step_0(recorded, gpu_design, tmp_path):
    first = steps(recorded, "gpus-design-01.tooled.r0")
    first[0]["sent"][1]["content"] = first[0]["sent"][1]["content"].replace("GPU", "graphics card", 1)
    recording_path(recorded.directory, "gpus-design-01.tooled.r0").write_text("".join(json.dumps(s) + "\n" for s in first))
    _, replayed = await replay(recorded, [gpu_design], tmp_path / "replay")
    divergence = replayed["gpus-design-01.tooled.r0"].replay_divergence
    assert divergence.startswith("step 0: the question differs at content: texts differ from character")
    assert replayed["gpus-design-02.tooled.r0"].replay_divergence is None


@pytest.mark.slow
async def test_a_recording_that_ends_early_is_an_infra_error_and_a_divergence(recorded, gpu_design, tmp_path):
    path = recording_path(recorded.directory, "gpus-design-01.tooled.r0")
    path.write_text(path.read_text().splitlines(keepends=True)[0])
    _, replayed = await replay(recorded, [gpu_design], tmp_path / "replay")
    record = replayed["gpus-design-01.tooled.r0"]
    assert record.error_kind == "infra" and record.correct is None
    assert record.replay_divergence == "step 1: the recording ends before this model call"


@pytest.mark.slow
async def test_a_recorded_provider_failure_replays_as_the_same_infra_error(tmp_path, gpu_design):
    store = RunSetStore(tmp_path / "recorded")
    # Every run an infra error, allowed: without --max-infra-errors more than half would fail the set.
    config = RunConfig(model="scripted/server-error", arms=TOOLED, record=True, max_retries=0, max_infra_errors=5)
    await run_set([gpu_design], config, store, show_progress=False)
    before = {r.run_id: r for r in store.records()}
    _, replayed = await replay(store, [gpu_design], tmp_path / "replay", max_infra_errors=5)
    for run_id, record in replayed.items():
        assert before[run_id].error_kind == record.error_kind == "infra"
        assert record.stop_reason == before[run_id].stop_reason
        assert record.replay_divergence is None


@pytest.mark.slow
async def test_planned_runs_missing_from_the_recording_are_refused_before_anything_runs(recorded, gpu_heldout, tmp_path):
    with pytest.raises(UserError, match="has no run for 5 planned run"):
        await replay(recorded, [gpu_heldout], tmp_path / "replay")
    assert not (tmp_path / "replay" / "runs.jsonl").exists()


def test_a_folder_without_a_recording_is_refused(tmp_path):
    from armbench.models import get_model

    with pytest.raises(UserError, match="holds no recording"):
        get_model(f"replay/{tmp_path}").check()


@pytest.mark.parametrize(
    "recorded, current, expected",
    [
        ({"a": 1}, {"a": 1}, None),
        ({"a": 1}, {"a": 1.0}, "a: recorded 1, now 1.0"),
        ({"rows": [{"name": "x"}]}, {"rows": [{"title": "x"}]}, "rows[0]: key 'name' is gone (new key 'title')"),
        ({"a": [1, 2]}, {"a": [1]}, "a: 2 items recorded, 1 now"),
        ({"a": 1}, {"a": 1, "b": 2}, "new key 'b'"),
        ("x" * 100 + "old", "x" * 100 + "new", "texts differ from character 100: recorded \"" + "x" * 20 + "old\", now \"" + "x" * 20 + "new\""),
    ],
)
def test_first_difference_names_the_path(recorded, current, expected):
    assert first_difference(recorded, current) == expected


@pytest.mark.slow
async def test_a_changed_tool_description_is_reported_at_step_0_naming_the_tool(recorded, gpu_design, tmp_path, monkeypatch):
    monkeypatch.setattr(GpuQuery, "description", GpuQuery.description + " Prefer narrow filters.")
    _, replayed = await replay(recorded, [gpu_design], tmp_path / "replay")
    for record in replayed.values():
        assert record.replay_divergence.startswith(
            "step 0: the offered tools differ (gpu_query.function.description: texts differ from character")


@pytest.mark.slow
async def test_a_run_that_ends_before_the_recording_does_is_a_divergence(recorded, gpu_design, tmp_path, monkeypatch):
    from armbench.tools.base import ToolInfraError

    async def gone(self, arguments):
        raise ToolInfraError("the replica is gone")

    monkeypatch.setattr(GpuQuery, "invoke", gone)  # the run ends at its first tool call, an infra error
    with pytest.raises(RunSetFailed, match="broken by the harness"):  # the set fails: --resume runs them again
        await replay(recorded, [gpu_design], tmp_path / "replay", max_infra_errors=5)
    record = {r.run_id: r for r in RunSetStore(tmp_path / "replay").records()}["gpus-design-01.tooled.r0"]
    assert (record.error_kind, record.retryable) == ("infra", True)
    assert record.replay_divergence == "step 1: the run ended after 1 of 2 recorded model calls"


@pytest.mark.slow
async def test_a_reformatted_tool_result_is_a_divergence_even_when_its_values_match(recorded, gpu_design, tmp_path, monkeypatch):
    from armbench.tools.base import ToolOutcome

    monkeypatch.setattr(ToolOutcome, "to_message_content", lambda self: json.dumps(self.result, indent=1))
    _, replayed = await replay(recorded, [gpu_design], tmp_path / "replay")
    divergence = replayed["gpus-design-01.tooled.r0"].replay_divergence
    assert divergence.startswith("step 1: the result of gpu_query (")
    assert divergence.endswith(") differs in JSON formatting or key order")


@pytest.mark.slow
async def test_a_model_call_cut_by_the_run_timeout_replays_as_the_same_timeout(tmp_path, gpu_design):
    store = RunSetStore(tmp_path / "recorded")
    config = RunConfig(model="scripted/oracle+latency=5", arms=TOOLED, record=True, run_timeout=0.5,
                       questions=("gpus-design-01",), max_infra_errors=1)
    await run_set([gpu_design], config, store, show_progress=False)
    (before,) = store.records()
    assert before.stop_reason == "timeout" and steps(store, before.run_id)[0]["interrupted"]
    _, replayed = await replay(store, [gpu_design], tmp_path / "replay", questions=("gpus-design-01",),
                              max_infra_errors=1)
    record = replayed[before.run_id]
    assert (record.stop_reason, record.error_kind, record.replay_divergence) == ("timeout", "infra", None)


@pytest.mark.slow
async def test_a_recording_replays_on_another_port_base_without_divergence(tmp_path, gpu_design, replica_env,
                                                                           monkeypatch):
    """The replica address is in the system prompt (and in fund_screener results): a recording made
    on one port base replays on another with zero divergence, its addresses read as today's."""
    from armbench.replicas import serve
    from tests.conftest import free_port_base

    store = RunSetStore(tmp_path / "recorded")
    config = RunConfig(model="scripted/oracle", arms=TOOLED, record=True, concurrency=2)
    await run_set([gpu_design], config, store, show_progress=False)
    recorded_at = store.manifest()["replicas"]["gpus"]
    monkeypatch.setenv(serve.PORT_BASE_ENV, str(free_port_base()))
    monkeypatch.setenv(serve.SOCKET_DIR_ENV, str(tmp_path / "sockets"))
    replay_store, replayed = await replay(store, [gpu_design], tmp_path / "replay")
    assert replay_store.manifest()["replicas"]["gpus"] != recorded_at
    first = json.loads(recording_path(store.directory, "gpus-design-01.tooled.r0").read_text().splitlines()[0])
    assert recorded_at in first["sent"][0]["content"]  # the recorded prompt names the old address
    assert {record.replay_divergence for record in replayed.values()} == {None}
    assert all(record.correct for record in replayed.values())


@pytest.mark.slow
async def test_a_replayed_run_reports_the_recorded_runs_model_time(tmp_path, gpu_design):
    """A replay answers at once; its records carry the recorded model seconds, marked as such, so its
    wall time is not the 0.00 s of a file read."""
    recording = RunSetStore(tmp_path / "slow")
    config = RunConfig(model="scripted/oracle+latency=0.3", arms=TOOLED, record=True, questions=("gpus-design-01",))
    await run_set([gpu_design], config, recording, show_progress=False)
    (original,) = recording.records()
    _, replayed = await replay(recording, [gpu_design], tmp_path / "replay", questions=("gpus-design-01",))
    record = replayed["gpus-design-01.tooled.r0"]
    assert record.replayed_times and record.model_seconds == original.model_seconds >= 0.6
    assert record.wall_seconds >= record.model_seconds + record.tool_seconds
