"""The run set's progress on stderr: live figures, a line per tenth when piped, warnings said once."""
from __future__ import annotations

import io

from rich.console import Console

from armbench.engine.progress import RunProgress, Totals
from tests.support.run_sets import make_record


def piped() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=200)


def test_piped_progress_is_a_line_per_tenth_with_every_figure():
    console = piped()
    records = [make_record(question_id=f"q{n}", correct=n % 2 == 0, cost_usd=0.01, retries=n % 3) for n in range(40)]
    with RunProgress("scripted/oracle", 40, Totals([]), console=console) as progress:
        for record in records:
            progress.add(record)
    lines = console.file.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0].startswith("scripted/oracle: 4/40 runs, 2 correct, $0.0400, 0 infra errors, 3 retries, 0:00:00 elapsed")
    assert lines[-1].startswith("scripted/oracle: 40/40 runs, 20 correct, $0.4000, 0 infra errors, 39 retries")
    assert "left" in lines[0]


def test_a_resumed_set_counts_what_was_done_and_unpriced_cost_is_unknown():
    console = piped()
    done = [make_record(question_id=f"q{n}", cost_usd=None) for n in range(5)]
    totals = Totals(done)
    with RunProgress("m", 10, totals, console=console) as progress:
        progress.add(make_record(question_id="q5"))
    assert console.file.getvalue().splitlines() == [
        "m: 6/10 runs, 6 correct, cost unknown, 0 infra errors, 0 retries, 0:00:00 elapsed, ~0:00:00 left"]
    assert totals.done == 6 and totals.cost_usd == 0.001 and totals.unpriced == 5


def test_each_infra_error_is_said_once_and_no_warning_repeats_per_run():
    console = piped()
    down = dict(correct=None, outcome=None, stop_reason="infra_error", error_kind="infra", actions=0,
                actions_by_tool={})
    records = ([make_record(question_id=f"e{n}", empty_tool_args=2) for n in range(5)]
               + [make_record(question_id=f"i{n}", error="provider down", **down) for n in range(4)]
               + [make_record(question_id="j", error="rate limited", **down)])
    with RunProgress("m", 1000, Totals([]), console=console) as progress:
        for record in records:
            progress.add(record)
    text = console.file.getvalue()
    assert text.count("infra error:") == 2 and "i0.tooled.r0: provider down" in text and "rate limited" in text
    assert "warning" not in text  # `bench run` sums those up once, at the end


def test_quiet_shows_nothing_but_still_counts():
    console = piped()
    totals = Totals([])
    with RunProgress("m", 2, totals, show=False, console=console) as progress:
        progress.add(make_record(empty_tool_args=1))
    assert console.file.getvalue() == "" and totals.done == 1
