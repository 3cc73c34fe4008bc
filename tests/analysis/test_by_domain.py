"""The study's table, one row per domain, on records counted by hand.

funds has both arms over three questions (two design, one held-out, pooled). Browsing: 2 of 3
graded runs right, costs $0.02/$0.04/$0.03 (mean $0.03), wall 10/20/30 s (median 20). Tooled: 3 of
3, costs $0.005/$0.007/$0.006 (mean $0.006), wall 2/4/3 s (median 3). Each arm also has an infra
error and a run an injected fault corrupted, with costs and times that would show if counted, and a
fourth question has nothing but an infra error. gpus has tooled runs only: 1 of 2, $0.001 each,
wall 1 and 3 s. Its records come first, to show the rows are sorted.
"""
import html
import json
import statistics
import sys

import pytest
from rich.console import Console

from armbench.analysis.publish import all_tables, as_json, write_report
from armbench.analysis.report import ALL_DOMAINS, by_domain, domain_table, summarize
from armbench.analysis.stats import wilson_interval
from armbench.analysis.tables import to_markdown, to_rich
from armbench.engine.store import RunSetStore
from tests.support.run_sets import make_manifest, make_record

TITLE = "Every question we built and measured a tool for, by domain"
INFRA = dict(correct=None, outcome=None, answer=None, stop_reason="infra_error", error_kind="infra")
INJECTED = dict(INFRA, stop_reason="answered", error_kind="injected", injected_faults=["dropped_args"])
WRONG = dict(correct=False, outcome="fully_incorrect", miss_reason="wrong")


def run(domain: str, set_name: str, question: str, arm: str, cost: float | None, wall: float, repeat: int = 0,
        **fields):
    return make_record(domain=domain, set=set_name, question_id=question, arm=arm, repeat=repeat, cost_usd=cost,
                       wall_seconds=wall, **fields)


GPUS = [
    run("gpus", "design", "gpus-design-01", "tooled", 0.001, 1.0),
    run("gpus", "heldout", "gpus-heldout-01", "tooled", 0.001, 3.0, **WRONG),
]
FUNDS = [
    run("funds", "design", "funds-design-01", "browsing", 0.02, 10.0),
    run("funds", "design", "funds-design-02", "browsing", 0.04, 20.0, **WRONG),
    run("funds", "heldout", "funds-heldout-01", "browsing", 0.03, 30.0),
    run("funds", "heldout", "funds-heldout-01", "browsing", 9.0, 900.0, repeat=1, **INFRA),
    run("funds", "design", "funds-design-01", "browsing", 9.0, 900.0, repeat=1, **INJECTED),
    run("funds", "design", "funds-design-01", "tooled", 0.005, 2.0),
    run("funds", "design", "funds-design-02", "tooled", 0.007, 4.0),
    run("funds", "heldout", "funds-heldout-01", "tooled", 0.006, 3.0),
    run("funds", "heldout", "funds-heldout-01", "tooled", None, 900.0, repeat=1, **INFRA),
    run("funds", "design", "funds-design-02", "tooled", 9.0, 900.0, repeat=1, **INJECTED),
    run("funds", "heldout", "funds-heldout-02", "tooled", 9.0, 900.0, **INFRA),  # never graded
]
RECORDS = GPUS + FUNDS
TOOLED_COSTS = [0.005, 0.007, 0.006, 0.001, 0.001]


def test_one_row_per_domain_sorted_and_a_total_over_graded_runs_only():
    figures = by_domain(RECORDS)
    funds, gpus = figures.domains
    assert (funds.domain, funds.questions, gpus.domain, gpus.questions) == ("funds", 3, "gpus", 2)
    assert (funds.browsing.correct, funds.browsing.graded, funds.tooled.correct, funds.tooled.graded) == (2, 3, 3, 3)
    assert (funds.browsing.ci_low, funds.browsing.ci_high) == wilson_interval(2, 3)
    assert funds.browsing.mean_cost_usd == statistics.fmean([0.02, 0.04, 0.03])
    assert funds.tooled.mean_cost_usd == statistics.fmean([0.005, 0.007, 0.006])
    assert (funds.browsing.median_wall_seconds, funds.tooled.median_wall_seconds) == (20.0, 3.0)
    assert funds.cost_ratio_tooled_over_browsing == pytest.approx(0.2)
    assert gpus.browsing is None and gpus.cost_ratio_tooled_over_browsing is None
    assert (gpus.tooled.correct, gpus.tooled.graded, gpus.tooled.median_wall_seconds) == (1, 2, 2.0)
    assert funds.browsing.cost_per_correct_usd == pytest.approx((0.02 + 0.04 + 0.03) / 2)
    assert (funds.browsing.median_actions, funds.browsing.mean_tokens, funds.browsing.tokens_per_correct) == (
        1, 1100, 1650)
    assert list(funds.arms) == ["browsing", "tooled"] and list(gpus.arms) == ["tooled"]

    total = figures.total
    assert (total.domain, total.questions) == (ALL_DOMAINS, 5)
    assert total.browsing == funds.browsing  # gpus has no browsing run
    assert (total.tooled.correct, total.tooled.graded) == (4, 5)
    assert (total.tooled.ci_low, total.tooled.ci_high) == wilson_interval(4, 5)
    assert total.tooled.mean_cost_usd == statistics.fmean(TOOLED_COSTS)
    assert total.tooled.median_wall_seconds == 3.0  # of 2, 4, 3, 1, 3
    assert total.cost_ratio_tooled_over_browsing == statistics.fmean(TOOLED_COSTS) / statistics.fmean(
        [0.02, 0.04, 0.03])


def test_the_table_prints_dashes_for_an_absent_arm_and_warns_that_the_total_mixes_domains():
    low, high = wilson_interval(4, 5)
    table = domain_table(by_domain(RECORDS))
    assert table.title == TITLE
    assert table.rows == [
        ["funds", "3", "2/3", "3/3", "21%–94%", "44%–100%", "$0.0300", "$0.0060", "0.20", "20.00", "3.00"],
        ["gpus", "2", "—", "1/2", "—", "9%–91%", "—", "$0.0010", "—", "—", "2.00"],
        ["all", "5", "2/3", "4/5", "21%–94%", f"{low:.0%}–{high:.0%}", "$0.0300", "$0.0040", "0.13", "20.00",
         "3.00"],
    ]
    assert "excluded" in table.note and "infra errors" in table.note and "injected fault" in table.note
    assert "pooled" in table.note
    assert table.notices == ("gpus has graded tooled runs only: the all row's tooled figures include its "
                             "questions, its browsing figures do not",)


def test_a_single_domain_gets_its_row_and_the_total():
    table = domain_table(by_domain(FUNDS))
    assert [row[0] for row in table.rows] == ["funds", "all"]
    assert table.rows[0][1:] == table.rows[1][1:]
    assert table.notices == ()


def test_the_cost_ratio_is_undefined_when_browsing_costs_nothing_and_unknown_when_a_cost_is():
    free = [run("gpus", "design", "q", "browsing", 0.0, 1.0), run("gpus", "design", "q", "tooled", 0.001, 1.0)]
    unpriced = [run("gpus", "design", "q", "browsing", 0.01, 1.0), run("gpus", "design", "q", "tooled", None, 1.0)]
    assert domain_table(by_domain(free)).rows[0][8] == "undefined (browsing $0)"
    row = domain_table(by_domain(unpriced)).rows[0]
    assert (row[7], row[8]) == ("unknown", "unknown")
    assert by_domain(free).domains[0].cost_ratio_tooled_over_browsing is None


def test_an_arm_in_a_domain_of_one_set_has_the_summarys_figures():
    one_set = [r for r in RECORDS if r.set == "design"]
    rows = {row.domain: row for row in by_domain(one_set).domains}
    for summary in summarize(one_set):
        figures = getattr(rows[summary.domain], summary.arm)
        assert (figures.correct, figures.graded, figures.accuracy, figures.ci_low, figures.ci_high,
                figures.mean_cost_usd, figures.median_wall_seconds) == (
            summary.correct, summary.graded, summary.accuracy, summary.ci_low, summary.ci_high,
            summary.mean_cost_usd, summary.median_wall_seconds)


def test_report_json_has_by_domain_with_a_row_per_domain_and_the_total():
    data = json.loads(json.dumps(as_json(RECORDS)))
    by = data["by_domain"]
    assert list(by) == ["domains", "total"]
    assert [row["domain"] for row in by["domains"]] == ["funds", "gpus"]
    funds = by["domains"][0]
    assert list(funds) == ["domain", "questions", "browsing", "tooled", "cost_ratio_tooled_over_browsing", "arms"]
    assert list(funds["browsing"]) == ["correct", "graded", "accuracy", "ci_low", "ci_high", "mean_cost_usd",
                                       "median_wall_seconds", "median_actions", "mean_tokens", "cost_per_correct_usd",
                                       "tokens_per_correct"]
    assert funds["arms"] == {"browsing": funds["browsing"], "tooled": funds["tooled"]}
    assert (funds["questions"], funds["browsing"]["correct"], funds["browsing"]["graded"]) == (3, 2, 3)
    assert by["domains"][1]["browsing"] is None
    assert by["total"]["domain"] == "all" and by["total"]["questions"] == 5
    assert by["total"]["tooled"]["graded"] == 5


def test_the_printed_report_and_its_files_lead_with_the_table(tmp_path, monkeypatch, capsys):
    store = RunSetStore(tmp_path / "set")
    store.create(make_manifest(question_sets={f"{r.domain}/{r.set}": "a" for r in RECORDS}))
    for record in RECORDS:
        store.append(record)
    tables, _ = write_report(store)
    assert tables[0].title == TITLE and tables == all_tables(store.records_to_report())
    markdown = (store.directory / "report.md").read_text()
    assert f"## {TITLE}" in markdown and "| gpus | 2 | — | 1/2 | — | 9%–91% |" in markdown
    page = html.unescape((store.directory / "report.html").read_text())
    assert f'<h2>{TITLE}</h2>' in page and '<td class="left">all</td>' in page
    assert to_markdown(tables[0]) in markdown

    from armbench.cli import main

    monkeypatch.setattr(sys, "argv", ["bench", "report", str(store.directory), "--full"])
    with pytest.raises(SystemExit) as exit_:
        main()
    printed = capsys.readouterr().out
    assert exit_.value.code in (0, None)
    assert TITLE in printed
    terminal = Console(width=120, record=True)  # `bench` piped: 120 columns
    terminal.print(to_rich(tables[0]))
    table_lines = [line for line in terminal.export_text().splitlines() if line.strip()]
    assert len(table_lines) > 5
    for line in table_lines:
        assert line in printed
