"""`bench export inspect`: a run set as inspect_ai eval logs, read back with inspect_ai itself."""
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from armbench.engine.store import RunSetStore
from armbench.types import RunConfig
from tests.support.models import run_set

QUESTIONS = ("gpus-design-01", "gpus-design-02")


@pytest.fixture
async def oracle_set(tmp_path, gpu_design) -> RunSetStore:
    """A real run set: the oracle on two GPU design questions, tooled arm, twice each."""
    store = RunSetStore(tmp_path / "oracle")
    config = RunConfig(model="scripted/oracle", arms=["tooled"], runs=2, questions=QUESTIONS)
    await run_set([gpu_design], config, store, show_progress=False)
    return store


def read_logs(folder: Path) -> dict[str, object]:
    """Every log in `folder` by task name, read back by inspect_ai (imported here, as armbench does:
    only the pytest worker that runs these tests pays for it)."""
    from inspect_ai.log import read_eval_log

    logs = [read_eval_log(str(path)) for path in sorted(folder.glob("*.eval"))]
    return {log.eval.task: log for log in logs}


def runs_of(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "runs.jsonl").read_text().splitlines()]


def test_a_real_run_set_reads_back_with_its_prompt_target_tool_calls_usage_and_hashes(oracle_set, gpu_design, cli,
                                                                                      tmp_path):
    code, out, err = cli("export", "inspect", str(oracle_set.directory), "--out", str(tmp_path / "logs"))
    assert code == 0, err
    assert f"inspect view --log-dir {tmp_path / 'logs'}" in out
    logs = read_logs(tmp_path / "logs")
    assert list(logs) == ["gpus-design-tooled"]
    log = logs["gpus-design-tooled"]
    assert log.status == "success" and log.eval.model == "scripted/oracle"
    records = {(r["question_id"], r["repeat"] + 1): r for r in runs_of(oracle_set.directory)}
    assert {(s.id, s.epoch) for s in log.samples} == set(records) and len(records) == 4

    questions = {q.id: q for q in gpu_design.questions}
    for sample in log.samples:
        record, question = records[(sample.id, sample.epoch)], questions[sample.id]
        assert sample.metadata["run_id"] == record["run_id"]
        assert sample.input == question.prompt()
        assert sample.target == question.join_answer(question.answer)
        assert sample.scores["correct"].value == "C" and sample.scores["correct"].answer == record["answer"]
        assert sample.scores["correct"].metadata["outcome"] == "fully_correct"
        usage = sample.model_usage["scripted/oracle"]
        assert (usage.input_tokens, usage.output_tokens) == (record["prompt_tokens"], record["completion_tokens"])
        assert usage.input_tokens > 0 and usage.output_tokens > 0
        # the model's turns: a gpu_query call, its result paired by id, then the ANSWER line
        roles = [m.role for m in sample.messages]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant" and "tool" in roles
        [call] = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
        [result] = [m for m in sample.messages if m.role == "tool"]
        assert call.function == "gpu_query" and isinstance(call.arguments, dict) and call.arguments
        assert result.tool_call_id == call.id and result.function == "gpu_query" and result.error is None
        assert "rows" in json.loads(result.text)
        assert sample.output.completion.startswith("ANSWER:")

    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert log.results.total_samples == 4 and log.results.scores[0].scored_samples == 4
    total = log.stats.model_usage["scripted/oracle"]
    assert total.input_tokens == sum(r["prompt_tokens"] for r in records.values())
    manifest = json.loads(oracle_set.manifest_path.read_text())
    metadata = log.eval.metadata
    assert metadata["question_set_hash"] == manifest["question_sets"]["gpus/design"]
    assert metadata["tool_manifest_hash"] == manifest["tool_manifests"]["tooled/gpus"]
    assert (metadata["data_hash"], metadata["prompt_hash"]) == (manifest["data_hash"], manifest["prompt_hash"])
    assert metadata["question_set_hash"] and metadata["tool_manifest_hash"] and metadata["data_hash"]


def test_one_log_per_domain_set_arm_with_every_grade_as_in_runs_jsonl(two_arm_run_set, cli):
    directory = two_arm_run_set.directory
    code, out, err = cli("export", "inspect", str(directory))  # default: <run-set>/inspect
    assert code == 0, err
    logs = read_logs(directory / "inspect")
    runs = runs_of(directory)
    groups = Counter(f"{r['domain']}-{r['set']}-{r['arm']}" for r in runs)
    assert sorted(logs) == sorted(groups) == ["gpus-design-browsing", "gpus-design-tooled",
                                             "gpus-heldout-browsing", "gpus-heldout-tooled"]
    assert {task: len(log.samples) for task, log in logs.items()} == dict(groups)
    assert f"4 inspect logs ({len(runs)} runs) written to" in out

    by_key = {(f"{r['domain']}-{r['set']}-{r['arm']}", r["question_id"], r["repeat"] + 1): r for r in runs}
    seen = Counter()
    for task, log in logs.items():
        graded = []
        for sample in log.samples:
            record = by_key[(task, sample.id, sample.epoch)]
            score = sample.scores["correct"]
            assert score.metadata["outcome"] == record["outcome"]
            assert score.metadata["miss_reason"] == record["miss_reason"]
            assert sample.model_usage["scripted/fixture"].output_tokens == record["completion_tokens"]
            if record["correct"] is None:  # an infra error: unscored, shown as the sample's error
                assert math.isnan(score.value) and "RateLimitError" in sample.error.message
                seen["excluded"] += 1
            else:
                assert score.value == ("C" if record["correct"] else "I") and sample.error is None
                graded.append(record["correct"])
                seen[score.value] += 1
            if record["miss_reason"] == "wrong_separator":
                assert "wrong separator" in score.explanation.replace("_", " ")
                seen["wrong_separator"] += 1
        assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(sum(graded) / len(graded))
        assert log.results.scores[0].scored_samples == len(graded)
    assert seen == {"C": 52, "I": 7, "excluded": 1, "wrong_separator": 1}  # the fixture's mix
    browsing = logs["gpus-design-browsing"].samples[0]
    assert any(call.function == "browser" for m in browsing.messages if m.role == "assistant"
               for call in m.tool_calls or [])


def test_a_run_without_its_transcript_is_exported_with_a_note(two_arm_run_set, cli, tmp_path):
    directory = two_arm_run_set.directory
    (directory / "transcripts" / "gpus-design-01.tooled.r0.jsonl").unlink()
    code, _, err = cli("export", "inspect", str(directory), "--out", str(tmp_path / "logs"))
    assert code == 0 and "1 run(s) without a transcript (e.g. gpus-design-01.tooled.r0)" in err
    log = read_logs(tmp_path / "logs")["gpus-design-tooled"]
    sample = next(s for s in log.samples if s.id == "gpus-design-01" and s.epoch == 1)
    assert sample.messages == [] and sample.input.startswith("Out of all the GeForce GPUs")


def test_generation_settings_become_inspects_generate_config(two_arm_run_set, cli, tmp_path):
    manifest = json.loads(two_arm_run_set.manifest_path.read_text())
    manifest["config"]["completion_kwargs"] = {"temperature": 0.3, "seed": 7, "api_base": "http://127.0.0.1:1",
                                               "provider": {"order": ["x"]}}
    two_arm_run_set.manifest_path.write_text(json.dumps(manifest))
    assert cli("export", "inspect", str(two_arm_run_set.directory), "--out", str(tmp_path / "logs"))[0] == 0
    spec = read_logs(tmp_path / "logs")["gpus-heldout-tooled"].eval
    assert (spec.model_generate_config.temperature, spec.model_generate_config.seed) == (0.3, 7)
    assert spec.model_base_url == "http://127.0.0.1:1" and spec.model_args == {"provider": {"order": ["x"]}}


@pytest.mark.parametrize("case,needle", [
    ("not_a_run_set", "is not a run set (no runs.jsonl)"),
    ("empty", "no runs in"),
    ("out_under_a_file", "cannot make --out"),
    ("out_is_a_file", "is a file, not a folder"),
])
def test_bad_input_is_one_line_and_exit_2(two_arm_run_set, tmp_path, cli, case, needle):
    run_set, out = two_arm_run_set.directory, tmp_path / "logs"
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    if case == "not_a_run_set":
        run_set = tmp_path / "nothing"
        run_set.mkdir()
    elif case == "empty":
        run_set = tmp_path / "empty"
        run_set.mkdir()
        (run_set / "runs.jsonl").touch()
        (run_set / "manifest.json").write_text((two_arm_run_set.manifest_path).read_text())
    elif case == "out_under_a_file":
        out = blocker / "logs"
    else:
        out = blocker
    code, stdout, err = cli("export", "inspect", str(run_set), "--out", str(out))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.rglob("*.eval"))


def test_without_inspect_ai_the_error_names_the_extra(two_arm_run_set, tmp_path, cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # `import inspect_ai` now fails as if not installed
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    code, _, err = cli("export", "inspect", str(two_arm_run_set.directory), "--out", str(tmp_path / "logs"))
    assert code == 2 and "needs inspect-ai (armbench's `inspect` extra): pip install 'inspect-ai==0.3.285'" in err
    assert not (tmp_path / "logs").exists()


def test_other_commands_never_import_inspect_ai():
    probe = ("import sys\nfrom armbench.cli import main\n"
             "for argv in (['--help'], ['export', 'inspect', '--help']):\n"
             "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
             "print('inspect_ai' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr
