"""One summary per domain x set x arm, the figures the report, `--json`, run-set comparison and the
regression gate all read, so no two of them can disagree.

polars groups the records frame and counts: graded runs (`correct` not null), correct ones, the
runs excluded (`correct` null: infra errors, and runs an injected fault corrupted), every run's tool
calls and those with empty arguments, and the mean tokens and actions (sums of integers, so exactly
statistics.fmean). The medians and the mean cost come from stats.py over each group's graded
values, because polars rounds float means and medians differently in the last bit; the Wilson
interval is computed per row after the group_by.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from itertools import groupby
from typing import Any, TypeVar

import polars as pl

from armbench.analysis.stats import mean, median, wilson_interval
from armbench.engine.store import scalar_columns
from armbench.types import ErrorKind, RunRecord

K = TypeVar("K")
ARM_GROUP = ("domain", "set", "arm")
GRADED = pl.col("correct").is_not_null()
INJECTED = pl.col("error_kind").eq_missing(ErrorKind.injected.value)
SUMMARY_COLUMNS = [*ARM_GROUP, "correct", "error_kind", "prompt_tokens", "completion_tokens", "actions",
                   "empty_tool_args", "cost_usd", "wall_seconds"]


@dataclass(frozen=True)
class GroupSummary:
    """One domain x set x arm. Every figure but the counts of excluded runs and of tool calls is over
    the graded runs."""

    domain: str
    set: str
    arm: str
    correct: int
    graded: int
    infra_errors: int
    accuracy: float | None
    ci_low: float | None  # Wilson 95%
    ci_high: float | None
    median_actions: float | None
    mean_cost_usd: float | None  # None when any graded run's cost is unknown
    median_wall_seconds: float | None
    mean_tokens: float | None
    mean_actions: float | None
    injected_faults: int  # runs excluded because an injected fault corrupted their tool calls
    tool_calls: int  # over every run, graded or not
    empty_tool_args: int  # of those, calls with empty arguments to a tool that takes some

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.domain, self.set, self.arm)

    def to_json(self) -> dict:
        return asdict(self)


def grouped(records: Iterable[RunRecord], key: Callable[[RunRecord], K]) -> list[tuple[K, list[RunRecord]]]:
    ordered = sorted(records, key=key)
    return [(k, list(group)) for k, group in groupby(ordered, key=key)]


def graded(records: Iterable[RunRecord]) -> list[RunRecord]:
    return [r for r in records if r.correct is not None]


def question_tallies(records: list[RunRecord], unit: tuple[str, ...]) -> dict[tuple, tuple[int, int]]:
    """(correct, graded) runs per `unit` key (a question, or a question and arm) with a graded run."""
    return {
        key: (sum(bool(r.correct) for r in runs), len(runs))
        for key, runs in grouped(graded(records), lambda r: tuple(getattr(r, field) for field in unit))
    }


def summarize(records: list[RunRecord]) -> list[GroupSummary]:
    """One summary per domain x set x arm that has a run, sorted by domain, set and arm."""
    if not records:
        return []  # the frame of no records has no columns to group by
    groups = (
        scalar_columns(records, SUMMARY_COLUMNS)
        .with_columns(
            pl.col("correct").cast(pl.Boolean),  # a column holding only nulls comes out untyped
            pl.col("cost_usd").cast(pl.Float64),
            tokens=pl.col("prompt_tokens") + pl.col("completion_tokens"),
        )
        .group_by(ARM_GROUP)
        .agg(
            correct=pl.col("correct").sum(),
            graded=pl.col("correct").count(),
            infra_errors=(pl.col("correct").is_null() & ~INJECTED).sum(),
            injected_faults=(pl.col("correct").is_null() & INJECTED).sum(),
            tool_calls=pl.col("actions").sum(),
            empty_tool_args=pl.col("empty_tool_args").sum(),
            mean_tokens=pl.col("tokens").filter(GRADED).mean(),
            mean_actions=pl.col("actions").filter(GRADED).mean(),
            actions=pl.col("actions").filter(GRADED),
            costs=pl.col("cost_usd").filter(GRADED),
            wall_seconds=pl.col("wall_seconds").filter(GRADED),
        )
        .sort(ARM_GROUP)
    )
    return [group_summary(group) for group in groups.iter_rows(named=True)]


def group_summary(group: dict[str, Any]) -> GroupSummary:
    """A group's counts and graded values from the group_by, with the statistics stats.py defines."""
    correct, graded = group["correct"], group["graded"]
    low, high = wilson_interval(correct, graded) if graded else (None, None)
    return GroupSummary(
        domain=group["domain"],
        set=group["set"],
        arm=group["arm"],
        correct=correct,
        graded=graded,
        infra_errors=group["infra_errors"],
        accuracy=correct / graded if graded else None,
        ci_low=low,
        ci_high=high,
        median_actions=median(group["actions"]),
        mean_cost_usd=None if None in group["costs"] else mean(group["costs"]),
        median_wall_seconds=median(group["wall_seconds"]),
        mean_tokens=group["mean_tokens"],
        mean_actions=group["mean_actions"],
        injected_faults=group["injected_faults"],
        tool_calls=group["tool_calls"],
        empty_tool_args=group["empty_tool_args"],
    )
