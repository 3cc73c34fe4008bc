"""`bench import inspect` refuses what it cannot import, in one line and before it writes anything.
(Importing an eval set of armbench's own task, and reporting it, is tests/test_inspect_tasks.py's.)"""
from __future__ import annotations


def other_task_log(folder) -> str:
    """A log of a task that is not armbench's: one arithmetic sample, scored by inspect's `match`."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match

    output = ModelOutput.from_content("mockllm/model", "4")
    output.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)  # else inspect wants a tokenizer
    task = Task(dataset=[Sample(input="What is 2 + 2?", target="4")], scorer=match(), name="arithmetic")
    (log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=[output]), log_dir=str(folder),
                          display="none")
    return log.location


def test_a_log_it_cannot_import_is_refused_in_one_line_and_nothing_is_written(cli, tmp_path, two_arm_run_set):
    code, _, err = cli("export", "inspect", str(two_arm_run_set.directory), "--out", str(tmp_path / "exported"))
    assert code == 0, err
    exported = str(next((tmp_path / "exported").glob("*.eval")))
    (tmp_path / "notes.eval").write_text("not a log\n")
    out = tmp_path / "imported"
    refusals = {
        exported: "was written by `bench export inspect` from the run set",
        other_task_log(tmp_path / "other"): "is a log of the task 'arithmetic', not of armbench's",
        str(tmp_path / "notes.eval"): "is not an inspect log",
        str(tmp_path / "missing.eval"): "no such log file",
    }
    for log, reason in refusals.items():
        code, stdout, err = cli("import", "inspect", log, "--out", str(out))
        assert code == 2 and reason in err and len(err.strip().splitlines()) == 1, (log, err)
        assert not out.exists()


def test_an_out_that_holds_a_run_set_is_refused(cli, two_arm_run_set, tmp_path):
    (tmp_path / "notes.eval").write_text("not a log\n")
    code, _, err = cli("import", "inspect", str(tmp_path / "notes.eval"), "--out", str(two_arm_run_set.directory))
    assert code == 2 and "already holds a run set" in err


def armbench_log(path, samples: list) -> str:
    """A log as armbench's task writes it (its eval metadata that of the real task), with `samples`."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

    from armbench.inspect_tasks import questions

    task = questions(domain="gpus", arm="tooled", set="heldout")
    spec = EvalSpec(created="2026-12-03T10:00:00+00:00", task=task.name, dataset=EvalDataset(name="gpus-heldout"),
                    model="openai/gpt-4o-mini", config=EvalConfig(), metadata=task.metadata,
                    packages={"inspect_ai": "0.3.285"})
    write_eval_log(EvalLog(status="success", eval=spec, samples=samples), str(path))
    return str(path)


def sample(question: str, epoch: int, *, score: str | None, answer: str | None = None, stop_reason: str | None = None,
           miss_reason: str | None = None, limit: str | None = None, error: str | None = None, cache_read: int = 0):
    """One sample as armbench's solver and scorer leave it: its episode's counts in the metadata."""
    from inspect_ai.log import EvalError, EvalSample, EvalSampleLimit
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelUsage
    from inspect_ai.scorer import Score

    outcome = {"C": "fully_correct", "I": "fully_incorrect"}.get(score or "")
    return EvalSample(
        id=question, epoch=epoch, input="Which GPU?", target=["RTX 4090"],
        messages=[ChatMessageUser(content="Which GPU?"), ChatMessageAssistant(content=f"ANSWER: {answer or ''}")],
        scores=None if score is None else {"strict_answer": Score(value=score, answer=answer, metadata={
            "outcome": outcome, "miss_reason": miss_reason})},
        metadata={"separator": ";", "episode": {"stop_reason": stop_reason, "actions": 2,
                                                "actions_by_tool": {"gpu_query": 2}, "tool_errors": 1,
                                                "model_seconds": 1.5, "tool_seconds": 0.25}},
        model_usage={"openai/gpt-4o-mini": ModelUsage(input_tokens=1000, output_tokens=50, total_tokens=1050,
                                                      input_tokens_cache_read=cache_read, total_cost=0.002)},
        total_time=2.0, completed_at="2026-12-03T10:00:05+00:00",
        limit=None if limit is None else EvalSampleLimit(type=limit, limit=100),
        error=None if error is None else EvalError(message=error, traceback="", traceback_ansi=""),
    )


def test_each_sample_becomes_the_run_bench_run_would_have_recorded(cli, tmp_path):
    import armbench

    log = armbench_log(tmp_path / "gpus.eval", [
        sample("gpus-heldout-01", 1, score="C", answer="RTX 4090", stop_reason="answered", cache_read=400),
        sample("gpus-heldout-01", 2, score="I", stop_reason="token_cap", miss_reason="no_answer_limit", limit="token"),
        sample("gpus-heldout-02", 1, score=None, error="ToolInfraError: the gpus replica is gone"),
        sample("gpus-heldout-03", 1, score="I", miss_reason="no_answer_stopped", limit="operator"),
    ])
    code, stdout, err = cli("import", "inspect", log, "--out", str(tmp_path / "imported"))
    assert code == 0, err
    assert "4 runs from 1 log" in stdout and "1/2 correct" in stdout
    runs = {record.run_id: record for record in armbench.report(tmp_path / "imported").records}
    assert sorted(runs) == ["gpus-heldout-01.tooled.r0", "gpus-heldout-01.tooled.r1", "gpus-heldout-02.tooled.r0",
                            "gpus-heldout-03.tooled.r0"]
    answered, limited = runs["gpus-heldout-01.tooled.r0"], runs["gpus-heldout-01.tooled.r1"]
    assert (answered.correct, answered.stop_reason, answered.repeat) == (True, "answered", 0)
    assert answered.prompt_tokens == 1400 and answered.completion_tokens == 50  # cached input counted, as LiteLLM does
    assert answered.cost_usd == 0.002 and answered.actions_by_tool == {"gpu_query": 2} and answered.tool_errors == 1
    assert (limited.correct, limited.stop_reason, limited.miss_reason, limited.error_kind) == (
        False, "token_cap", "no_answer_limit", "agent")
    for broken in (runs["gpus-heldout-02.tooled.r0"], runs["gpus-heldout-03.tooled.r0"]):  # none of the agent's doing
        assert (broken.correct, broken.error_kind, broken.stop_reason) == (None, "infra", "infra_error")
    (row,) = armbench.report(tmp_path / "imported").rows
    assert (row.correct, row.graded, row.infra_errors) == (1, 2, 2)


def test_logs_that_do_not_make_one_run_set_are_refused(cli, tmp_path):
    first = armbench_log(tmp_path / "a.eval", [sample("gpus-heldout-01", 1, score="C", answer="RTX 4090")])
    again = armbench_log(tmp_path / "b.eval", [sample("gpus-heldout-01", 1, score="I", answer="RTX 3090")])
    code, _, err = cli("import", "inspect", first, again, "--out", str(tmp_path / "imported"))
    assert code == 2 and "gpus-heldout-01.tooled.r0 is in" in err
    unscored = armbench_log(tmp_path / "c.eval", [sample("gpus-heldout-01", 1, score=None)])
    code, _, err = cli("import", "inspect", unscored, "--out", str(tmp_path / "imported"))
    assert code == 2 and "inspect score" in err
    assert not (tmp_path / "imported").exists()
