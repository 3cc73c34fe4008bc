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
