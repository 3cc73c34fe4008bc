"""`bench show`: one transcript in the terminal; finding the run; bad input is one message."""
import json

import pytest
from rich.console import Console

from armbench.analysis.show import render
from armbench.analysis.transcript import locate, read_turns, reference_answer
from armbench.errors import UserError


def rendered(store, run_id, **options) -> str:
    _, record = locate(run_id, store.directory, store.directory)
    console = Console(record=True, width=120)
    console.print(render(record, read_turns(store.directory, record), reference_answer(record), **options))
    return console.export_text()


def test_show_has_roles_calls_results_answer_and_grade(two_arm_run_set):
    text = rendered(two_arm_run_set, "gpus-design-02.browsing.r0")
    for needle in ("system", "user", "assistant", "→ browser", '"q": "gpu"', "tool result · python",
                   "alert('pwned')", "H200 NVL, H200 SXM 141 GB", "H200 NVL | H200 SXM 141 GB",
                   "wrong_separator", "fully_incorrect", "$0.01400"):
        assert needle in text, needle


def test_long_tool_results_are_cut_unless_full(two_arm_run_set):
    store = two_arm_run_set
    path = store.directory / "transcripts" / "gpus-design-03.tooled.r0.jsonl"
    messages = [json.loads(line) for line in path.read_text().splitlines()]
    long_result = {"rows": [{"name": f"GPU {i}", "note": "x" * 40} for i in range(200)]}
    next(m for m in messages if m["role"] == "tool")["content"] = json.dumps(long_result)
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    short = rendered(store, "gpus-design-03.tooled.r0")
    assert "more characters (--full shows everything)" in short and "GPU 199" not in short
    assert "GPU 0" in short and "GPU 50" not in short  # about RESULT_PREVIEW characters
    assert "GPU 199" in rendered(store, "gpus-design-03.tooled.r0", full=True)


def test_an_unknown_run_id_names_an_example(two_arm_run_set):
    with pytest.raises(UserError, match=r"no run 'nosuch'.*run ids look like"):
        locate("nosuch", two_arm_run_set.directory, two_arm_run_set.directory)


def test_without_run_set_the_newest_holding_the_run_is_used(two_arm_run_set, tmp_path):
    results = two_arm_run_set.directory.parent
    store, record = locate("gpus-heldout-05.tooled.r2", None, results)
    assert store.directory == two_arm_run_set.directory and record.stop_reason == "infra_error"
    with pytest.raises(UserError, match="pass --run-set"):
        locate("nosuch", None, results)


def test_a_missing_transcript_is_a_user_error(two_arm_run_set):
    _, record = locate("gpus-design-01.tooled.r0", two_arm_run_set.directory, two_arm_run_set.directory)
    (two_arm_run_set.directory / record.transcript_path).unlink()
    with pytest.raises(UserError, match="cannot read the transcript"):
        read_turns(two_arm_run_set.directory, record)
