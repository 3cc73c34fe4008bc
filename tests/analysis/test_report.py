"""Report tables of a two-arm run set, checked against figures counted by hand.

The fixture (conftest.build_two_arm_run_set): 10 GPU questions x 3 repeats x {browsing, tooled}.
Browsing misses questions 0 and 5 every time (budget) and question 1 once (wrong separator);
tooled is always right except one infra error on question 9, repeat 2.
"""
import html

import pytest
from rich.console import Console

from armbench.analysis.publish import write_report
from armbench.analysis.report import (
    NO_TOOL,
    by_tool,
    miss_counts,
    outcome_counts,
    pass_k,
    report_tables,
    summarize,
)
from armbench.analysis.tables import to_markdown, to_rich
from armbench.engine.store import RunSetStore
from tests.support.run_sets import make_manifest, make_record


def rows_by_key(rows):
    return {(r.set, r.arm): r for r in rows}


def test_summary(two_arm_run_set):
    rows = rows_by_key(summarize(two_arm_run_set.records()))
    assert (rows["design", "browsing"].correct, rows["design", "browsing"].graded) == (11, 15)
    assert (rows["heldout", "browsing"].correct, rows["heldout", "browsing"].graded) == (12, 15)
    tooled = rows["heldout", "tooled"]
    assert (tooled.correct, tooled.graded, tooled.infra_errors) == (14, 14, 1)


def test_outcomes_and_miss_reasons(two_arm_run_set):
    records = two_arm_run_set.records()
    outcomes = rows_by_key(outcome_counts(records))
    assert outcomes["design", "browsing"].counts == {
        "fully_correct": 11, "correct_with_extraneous": 0, "partially_correct": 0,
        "fully_incorrect": 1, "no_answer": 3,
    }
    misses = rows_by_key(miss_counts(records))
    assert misses["design", "browsing"].counts["no_answer_budget"] == 3
    assert misses["design", "browsing"].counts["wrong_separator"] == 1
    assert sum(misses["heldout", "tooled"].counts.values()) == 0


def test_miss_table_lists_only_reasons_that_occur(two_arm_run_set):
    table = report_tables(two_arm_run_set.records())[2]
    assert table.columns == ["domain", "set", "arm", "no answer budget", "wrong separator"]
    assert [row[:3] for row in table.rows] == [["gpus", "design", "browsing"], ["gpus", "heldout", "browsing"]]


def test_pass_k_on_the_fixture(two_arm_run_set):
    rows = rows_by_key(pass_k(two_arm_run_set.records()))
    browsing = rows["design", "browsing"]  # correct per question: 0, 2, 3, 3, 3 of 3
    assert browsing.repeats == 3
    assert browsing.pass_at[1] == pytest.approx((0 + 2 / 3 + 3) / 5)
    assert browsing.pass_at[2] == pytest.approx(4 / 5)
    assert browsing.pass_hat[2] == pytest.approx((1 / 3 + 3) / 5)
    assert browsing.pass_hat[3] == pytest.approx(3 / 5)
    assert rows["heldout", "tooled"].repeats == 2  # the infra error leaves question 9 two graded runs
    assert 3 not in rows["heldout", "tooled"].pass_at


def test_tokens_and_cost_by_tool_split_each_run_by_its_calls():
    run = make_record(actions=4, actions_by_tool={"browser": 3, "python": 1}, prompt_tokens=900,
                      completion_tokens=100, cost_usd=0.02)
    silent = make_record(repeat=1, actions=0, actions_by_tool={}, prompt_tokens=500, completion_tokens=0,
                         cost_usd=0.01)
    rows = {r.tool: r for r in by_tool([run, silent])}
    assert rows["browser"].calls == 3 and rows["browser"].calls_per_run == 1.5
    assert rows["browser"].tokens_per_run == pytest.approx(1000 * 3 / 4 / 2)
    assert rows["python"].cost_per_run_usd == pytest.approx(0.02 / 4 / 2)
    assert rows[NO_TOOL].tokens_per_run == 250 and rows[NO_TOOL].calls == 0


def test_per_tool_rows_add_up_to_the_summary(two_arm_run_set):
    records = two_arm_run_set.records()
    for row in summarize(records):
        tools = [t for t in by_tool(records) if (t.domain, t.set, t.arm) == (row.domain, row.set, row.arm)]
        assert sum(t.tokens_per_run for t in tools) == pytest.approx(row.mean_tokens)
        assert sum(t.cost_per_run_usd for t in tools) == pytest.approx(row.mean_cost_usd)


def test_an_unknown_cost_stays_unknown_per_tool():
    priced = make_record(cost_usd=0.01)
    unpriced = make_record(repeat=1, cost_usd=None)
    [row] = by_tool([priced, unpriced])
    assert row.cost_per_run_usd is None
    assert "unknown" in to_markdown(report_tables([priced, unpriced])[3])


def test_markdown_has_every_table(two_arm_run_set):
    text = "".join(map(to_markdown, report_tables(two_arm_run_set.records())))
    for title in ("Accuracy, actions, cost and time", "Outcomes", "Why runs missed", "by tool", "pass@k"):
        assert title in text
    assert "| gpus | design | browsing | 11/15 | 48%–89% |" in text


def test_a_group_with_over_a_tenth_of_its_tool_calls_empty_is_warned_about_in_every_format(tmp_path):
    """gpus/design: 2 of 10 calls empty (20%) warns; gpus/heldout: 1 of 10 (exactly 10%) does not."""
    records = [
        make_record(question_id="q1", actions=5, actions_by_tool={"gpu_query": 5}, empty_tool_args=2),
        make_record(question_id="q2", actions=5, actions_by_tool={"gpu_query": 5}),
        make_record(question_id="q3", set="heldout", actions=10, actions_by_tool={"gpu_query": 10}, empty_tool_args=1),
    ]
    summary = report_tables(records)[0]
    assert summary.notices == (
        "warning: gpus/design/tooled: 2 of 10 tool calls (20%) had empty arguments; the provider may be "
        "dropping them (check with `bench doctor`)",
    )
    store = RunSetStore(tmp_path / "set")
    store.create(make_manifest())
    for record in records:
        store.append(record)
    tables, _ = write_report(store)
    terminal = Console(width=200, record=True)
    terminal.print(to_rich(tables[1]))  # the summary, after the study's table
    for text in (terminal.export_text(), (store.directory / "report.md").read_text(),
                 html.unescape((store.directory / "report.html").read_text())):
        assert summary.notices[0] in text
