"""The per-group summary on records counted by hand, and every reader of it agreeing with it.

Two groups, given out of order: gpus/design/tooled has 4 graded runs (an even count) and an
infra error; funds/heldout/browsing has 3 graded runs (odd), one of unknown cost. The float
figures are Python's statistics to the last bit: polars' own mean of the tooled costs is 0.275 and
its median of the wall times 0.4, where statistics gives 0.27499999999999997 and 0.39999999999999997.
"""
import statistics

from armbench.analysis.compare import compare_run_sets
from armbench.analysis.publish import as_json
from armbench.analysis.regress import regress
from armbench.analysis.report import report_tables
from armbench.analysis.stats import wilson_interval
from armbench.analysis.summary import GroupSummary, summarize
from tests.support.run_sets import make_record

INFRA = dict(correct=None, outcome=None, stop_reason="infra_error", error_kind="infra", answer=None)
WRONG = dict(correct=False, outcome="fully_incorrect", miss_reason="wrong")


def run(group: str, question: str, **fields):
    domain, set_name, arm = group.split("/")
    tools = {"gpu_query": fields["actions"]} if fields["actions"] else {}
    return make_record(domain=domain, set=set_name, arm=arm, question_id=question, actions_by_tool=tools, **fields)


TOOLED = [
    run("gpus/design/tooled", "q1", actions=1, wall_seconds=0.05, cost_usd=0.1, prompt_tokens=1000,
        completion_tokens=100),
    run("gpus/design/tooled", "q2", actions=2, wall_seconds=0.1, cost_usd=0.3, prompt_tokens=2000,
        completion_tokens=100),
    run("gpus/design/tooled", "q3", actions=4, wall_seconds=0.7, cost_usd=0.7, prompt_tokens=3000,
        completion_tokens=100, **WRONG),
    run("gpus/design/tooled", "q4", actions=7, wall_seconds=9.0, cost_usd=0.0, prompt_tokens=4000,
        completion_tokens=100),
    # in no figure but infra_errors, its unknown cost included
    run("gpus/design/tooled", "q5", actions=9, wall_seconds=60.0, cost_usd=None, prompt_tokens=50_000,
        completion_tokens=0, **INFRA),
]
BROWSING = [
    run("funds/heldout/browsing", "q1", actions=5, wall_seconds=4.0, cost_usd=0.01, prompt_tokens=1000,
        completion_tokens=0),
    run("funds/heldout/browsing", "q2", actions=1, wall_seconds=1.0, cost_usd=None, prompt_tokens=2000,
        completion_tokens=0, **WRONG),
    run("funds/heldout/browsing", "q3", actions=3, wall_seconds=2.0, cost_usd=0.02, prompt_tokens=3000,
        completion_tokens=0, **WRONG),
]
RECORDS = TOOLED + BROWSING


def test_one_row_per_domain_set_and_arm_sorted_with_figures_counted_by_hand():
    browsing, tooled = summarize(RECORDS)
    assert browsing == GroupSummary(
        domain="funds", set="heldout", arm="browsing",
        correct=1, graded=3, infra_errors=0,
        accuracy=1 / 3, ci_low=wilson_interval(1, 3)[0], ci_high=wilson_interval(1, 3)[1],
        median_actions=3,  # odd count: the middle run
        mean_cost_usd=None,  # one graded run's cost is unknown
        median_wall_seconds=2.0,
        mean_tokens=2000.0,
        mean_actions=3.0,
        injected_faults=0,
        tool_calls=9,  # like the two below, over every run
        empty_tool_args=0,
    )
    assert tooled == GroupSummary(
        domain="gpus", set="design", arm="tooled",
        correct=3, graded=4, infra_errors=1,
        accuracy=0.75, ci_low=wilson_interval(3, 4)[0], ci_high=wilson_interval(3, 4)[1],
        median_actions=3.0,  # even count: halfway between 2 and 4
        mean_cost_usd=statistics.fmean([0.1, 0.3, 0.7, 0.0]),
        median_wall_seconds=statistics.median([0.05, 0.1, 0.7, 9.0]),
        mean_tokens=2600.0,
        mean_actions=3.5,
        injected_faults=0,
        tool_calls=23,
        empty_tool_args=0,
    )
    assert (tooled.mean_cost_usd, tooled.median_wall_seconds) == (0.27499999999999997, 0.39999999999999997)
    assert isinstance(browsing.median_actions, int)  # as statistics.median gives it: `3` in --json


def test_runs_an_injected_fault_corrupted_are_excluded_and_counted_apart_from_infra_errors():
    injected = dict(INFRA, stop_reason="answered", error_kind="injected", injected_faults=["dropped_args"])
    [row] = summarize([run("gpus/design/tooled", "q1", actions=2), run("gpus/design/tooled", "q2", actions=3, **INFRA),
                       run("gpus/design/tooled", "q3", actions=1, empty_tool_args=1, **injected)])
    assert (row.graded, row.infra_errors, row.injected_faults) == (1, 1, 1)
    assert (row.mean_actions, row.tool_calls, row.empty_tool_args) == (2.0, 6, 1)  # calls: every run's


def test_a_group_of_infra_errors_only_has_no_figures_and_no_records_no_rows():
    [row] = summarize([run("gpus/design/tooled", q, actions=0, **INFRA) for q in ("q1", "q2")])
    assert (row.correct, row.graded, row.infra_errors) == (0, 0, 2)
    assert row.accuracy is row.ci_low is row.ci_high is None
    assert row.median_actions is row.mean_cost_usd is row.median_wall_seconds is None
    assert row.mean_tokens is row.mean_actions is None
    assert summarize([]) == []


def test_the_report_table_prints_the_summary():
    low, high = wilson_interval(3, 4)
    summary_table = report_tables(RECORDS)[0]
    assert summary_table.rows == [
        ["funds", "heldout", "browsing", "1/3", "6%–79%", "3", "unknown", "2.00", "2,000", "0"],
        ["gpus", "design", "tooled", "3/4", f"{low:.0%}–{high:.0%}", "3", "$0.2750", "0.40", "2,600", "1"],
    ]


def test_report_json_rows_are_the_summary_with_their_fields():
    rows = as_json(RECORDS)["rows"]
    assert rows == [row.to_json() for row in summarize(RECORDS)]
    assert list(rows[0])[:13] == [
        "domain", "set", "arm", "correct", "graded", "infra_errors", "accuracy", "ci_low", "ci_high",
        "median_actions", "mean_cost_usd", "median_wall_seconds", "mean_tokens",
    ]


def test_the_gate_checks_each_group_on_its_summary():
    summary = summarize(RECORDS)
    verdict = regress(RECORDS, RECORDS[1:])  # the candidate lacks gpus/design/tooled's first run
    assert [(g.group, g.baseline) for g in verdict.groups] == [("/".join(row.key), row) for row in summary]
    assert [g.candidate for g in verdict.groups] == summarize(RECORDS[1:])
    assert [g.accuracy_floor for g in verdict.groups] == [row.ci_low for row in summary]
    for group in verdict.to_json()["groups"]:
        for side in (group["baseline"], group["candidate"]):
            assert {"correct", "graded", "infra_errors", "mean_cost_usd", "mean_tokens", "mean_actions"} <= set(side)


def test_run_set_comparison_reads_each_sides_summary():
    a, b = summarize(RECORDS), summarize(TOOLED[:2])
    [delta] = compare_run_sets(RECORDS, TOOLED[:2], "a", "b").set_deltas
    assert (delta.domain, delta.set, delta.arm) == b[0].key == a[1].key
    assert (delta.correct_a, delta.graded_a, delta.correct_b, delta.graded_b) == (
        a[1].correct, a[1].graded, b[0].correct, b[0].graded)
