"""Question-by-question comparison of two sides: two arms of a run set, or two run sets.

A side is a list of run records. Runs pair up when they agree on the *unit* (the fields naming a
question: domain, set, question, and the arm when comparing run sets) and on the repeat index;
both must be graded. On the pairs: the accuracy delta, an exact McNemar test, and bootstrap
intervals (questions resampled) for the ratios B/A of mean cost and of mean actions.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from itertools import combinations
from operator import attrgetter
from pathlib import Path

from armbench.analysis.stats import Estimate, bootstrap_ratio, mcnemar_exact
from armbench.analysis.summary import graded, grouped, question_tallies, summarize
from armbench.analysis.tables import Table, percent, points
from armbench.types import RunRecord
from armbench.web_profile import profile_in, profiles_apart

ARM_UNIT = ("domain", "set", "question_id")
RUN_SET_UNIT = ("domain", "set", "arm", "question_id")
Pair = tuple[RunRecord, RunRecord]


@dataclass(frozen=True)
class Paired:
    group: str  # "gpus/heldout" (or "gpus/heldout/tooled" between run sets), or "all"
    a: str
    b: str
    pairs: int
    questions: int
    accuracy_a: float
    accuracy_b: float
    only_a: int  # pairs A got right and B wrong
    only_b: int
    p_value: float
    cost_known: bool
    cost_ratio: Estimate | None  # B/A of mean cost; None if unknown or A's cost is 0
    action_ratio: Estimate | None
    token_ratio: Estimate | None  # B/A of mean tokens (prompt + completion): defined where cost is $0
    wall_ratio: Estimate | None  # B/A of mean wall seconds (what a slower web costs an arm in time)

    @property
    def delta(self) -> float:
        return self.accuracy_b - self.accuracy_a


@dataclass(frozen=True)
class QuestionDelta:
    unit: tuple[str, ...]
    correct_a: int
    graded_a: int
    correct_b: int
    graded_b: int

    @property
    def delta(self) -> float:
        return self.correct_b / self.graded_b - self.correct_a / self.graded_a


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    unit: tuple[str, ...]
    paired: list[Paired]
    deltas: list[QuestionDelta]  # every question graded on both sides
    only_in_a: int  # questions graded on one side only
    only_in_b: int

    @property
    def flips(self) -> list[QuestionDelta]:
        return [d for d in self.deltas if d.delta != 0]

    def to_json(self) -> dict:
        return {
            "a": self.a, "b": self.b, "unit": list(self.unit),
            "paired": [{**asdict(p), "delta": p.delta} for p in self.paired],
            "flips": [{**asdict(d), "delta": d.delta} for d in self.flips],
            "only_in_a": self.only_in_a, "only_in_b": self.only_in_b,
        }


def pair_up(a: list[RunRecord], b: list[RunRecord], unit: tuple[str, ...]) -> list[Pair]:
    key = attrgetter(*unit, "repeat")
    b_by_key = {key(r): r for r in graded(b)}
    return [(r, b_by_key[key(r)]) for r in sorted(graded(a), key=key) if key(r) in b_by_key]


def paired_stats(pairs: list[Pair], group: str, a: str, b: str, unit: tuple[str, ...]) -> Paired:
    by_question = grouped(pairs, lambda pair: attrgetter(*unit)(pair[0]))
    costs_known = all(x.cost_usd is not None for pair in pairs for x in pair)

    def ratio(figure: Callable[[RunRecord], float]) -> Estimate | None:
        b_sums = [sum(figure(y) for _, y in runs) for _, runs in by_question]
        a_sums = [sum(figure(x) for x, _ in runs) for _, runs in by_question]
        return bootstrap_ratio(b_sums, a_sums)

    only_a = sum(bool(x.correct) and not y.correct for x, y in pairs)
    only_b = sum(bool(y.correct) and not x.correct for x, y in pairs)
    return Paired(
        group=group, a=a, b=b,
        pairs=len(pairs),
        questions=len(by_question),
        accuracy_a=sum(bool(x.correct) for x, _ in pairs) / len(pairs),
        accuracy_b=sum(bool(y.correct) for _, y in pairs) / len(pairs),
        only_a=only_a,
        only_b=only_b,
        p_value=mcnemar_exact(only_a, only_b),
        cost_known=costs_known,
        cost_ratio=ratio(attrgetter("cost_usd")) if costs_known else None,
        action_ratio=ratio(attrgetter("actions")),
        token_ratio=ratio(lambda run: run.prompt_tokens + run.completion_tokens),
        wall_ratio=ratio(attrgetter("wall_seconds")),
    )


def compare(a: list[RunRecord], b: list[RunRecord], a_name: str, b_name: str, unit: tuple[str, ...]) -> Comparison:
    """Paired figures per group (the unit without its question) and over all groups."""
    pairs = pair_up(a, b, unit)
    group_of = attrgetter(*unit[:-1])
    paired = [
        paired_stats(group_pairs, "/".join(key), a_name, b_name, unit)
        for key, group_pairs in grouped(pairs, lambda pair: group_of(pair[0]))
    ]
    if len(paired) > 1:
        paired.append(paired_stats(pairs, "all", a_name, b_name, unit))
    fractions_a, fractions_b = question_tallies(a, unit), question_tallies(b, unit)
    deltas = [
        QuestionDelta(tuple(key), *fractions_a[key], *fractions_b[key])
        for key in sorted(fractions_a.keys() & fractions_b.keys())
    ]
    return Comparison(
        a_name, b_name, unit, paired, deltas,
        only_in_a=len(fractions_a.keys() - fractions_b.keys()),
        only_in_b=len(fractions_b.keys() - fractions_a.keys()),
    )


def compare_arms(records: list[RunRecord]) -> list[Comparison]:
    """Every pair of arms in a run set, A the first by name (browsing before tooled)."""
    arms = sorted({r.arm for r in records})
    return [
        compare([r for r in records if r.arm == a], [r for r in records if r.arm == b], a, b, ARM_UNIT)
        for a, b in combinations(arms, 2)
    ]


@dataclass(frozen=True)
class SetDelta:
    domain: str
    set: str
    arm: str
    correct_a: int
    graded_a: int
    correct_b: int
    graded_b: int

    @property
    def delta(self) -> float | None:
        if not (self.graded_a and self.graded_b):
            return None
        return self.correct_b / self.graded_b - self.correct_a / self.graded_a


def set_deltas(a: list[RunRecord], b: list[RunRecord]) -> list[SetDelta]:
    """Accuracy over all graded runs of each side, for every domain x set x arm in both."""
    rows_a = {row.key: row for row in summarize(a)}
    rows_b = {row.key: row for row in summarize(b)}
    return [
        SetDelta(*key, rows_a[key].correct, rows_a[key].graded, rows_b[key].correct, rows_b[key].graded)
        for key in sorted(rows_a.keys() & rows_b.keys())
    ]


def run_set_labels(a: Path, b: Path, web_a: str, web_b: str) -> tuple[str, str]:
    """Short names for two run sets: the web profiles their runs met, when those differ (the
    comparison is of the web conditions); else their folder names, or A and B when those are the same."""
    if web_a != web_b:
        return web_a, web_b
    return (a.name, b.name) if a.name != b.name else ("A", "B")


# --- tables -----------------------------------------------------------------------------------


def ratio_cell(estimate: Estimate | None, undefined: str) -> str:
    if estimate is None:
        return undefined
    return f"{estimate.value:.2f} ({estimate.low:.2f}–{estimate.high:.2f})"


def paired_table(comparison: Comparison) -> Table:
    a, b = comparison.a, comparison.b
    return Table(
        title=f"Paired comparison: {b} vs {a}",
        columns=["group", "pairs", "questions", f"acc {a}", f"acc {b}", "Δ acc",
                 f"only {a} right", f"only {b} right", "McNemar p",
                 "cost B/A (95% CI)", "actions B/A (95% CI)", "tokens B/A (95% CI)", "wall s B/A (95% CI)"],
        rows=[
            [p.group, str(p.pairs), str(p.questions), percent(p.accuracy_a), percent(p.accuracy_b),
             points(p.delta), str(p.only_a), str(p.only_b), f"{p.p_value:.3g}",
             ratio_cell(p.cost_ratio, f"undefined ({a} cost $0)" if p.cost_known else "unknown"),
             ratio_cell(p.action_ratio, f"undefined ({a} made no call)"),
             ratio_cell(p.token_ratio, f"undefined ({a} used no tokens)"),
             ratio_cell(p.wall_ratio, f"undefined ({a} took no time)")]
            for p in comparison.paired
        ],
        key_columns=1,
        empty="no runs pair up",
        note=f"A = {a}, B = {b}. Runs pair up on question and repeat index; only pairs where both "
        "runs were graded count. McNemar p: exact two-sided binomial test on the pairs where only "
        "one side was right (it treats repeats as independent pairs). Ratios are B/A of the mean "
        "over pairs, with a 95% percentile bootstrap interval from 10,000 resamples of questions "
        "(seed 0).",
    )


def deltas_table(comparison: Comparison, title: str) -> Table:
    names = [c.replace("question_id", "question") for c in comparison.unit]
    skipped = comparison.only_in_a + comparison.only_in_b
    note = (f"Questions whose fraction correct differs between {comparison.a} and {comparison.b}, over "
            f"each side's graded runs; better or worse for {comparison.b}.")
    if skipped:
        note += (f" Not compared: {comparison.only_in_a} question(s) only in {comparison.a}, "
                 f"{comparison.only_in_b} only in {comparison.b}.")
    return Table(
        title=title,
        columns=names + [comparison.a, comparison.b, "Δ", "direction"],
        rows=[
            [*d.unit, f"{d.correct_a}/{d.graded_a}", f"{d.correct_b}/{d.graded_b}", points(d.delta),
             "better" if d.delta > 0 else "worse"]
            for d in comparison.flips
        ],
        key_columns=len(names),
        empty="no question changed",
        note=note,
    )


def arm_tables(records: list[RunRecord]) -> list[Table]:
    tables = []
    for comparison in compare_arms(records):
        tables.append(paired_table(comparison))
        tables.append(deltas_table(comparison, f"Questions that differ: {comparison.b} vs {comparison.a}"))
    return tables


def set_delta_table(rows: list[SetDelta], a: str, b: str) -> Table:
    return Table(
        title=f"Accuracy per set: {b} vs {a}",
        columns=["domain", "set", "arm", a, b, "Δ acc"],
        rows=[
            [r.domain, r.set, r.arm, f"{r.correct_a}/{r.graded_a}", f"{r.correct_b}/{r.graded_b}",
             points(r.delta)]
            for r in rows
        ],
        empty="the run sets share no domain x set x arm",
        note="Over all graded runs of each run set.",
    )


@dataclass(frozen=True)
class RunSetComparison:
    set_deltas: list[SetDelta]
    comparison: Comparison

    def tables(self) -> list[Table]:
        a, b = self.comparison.a, self.comparison.b
        return [
            set_delta_table(self.set_deltas, a, b),
            deltas_table(self.comparison, f"Flips: {b} vs {a}"),
            paired_table(self.comparison),
        ]

    def to_json(self) -> dict:
        return {
            "set_deltas": [{**asdict(d), "delta": d.delta} for d in self.set_deltas],
            **self.comparison.to_json(),
        }


def compare_run_sets(a: list[RunRecord], b: list[RunRecord], a_name: str, b_name: str) -> RunSetComparison:
    return RunSetComparison(set_deltas(a, b), compare(a, b, a_name, b_name, RUN_SET_UNIT))


def manifest_differences(a: dict, b: dict, a_records: list[RunRecord], b_records: list[RunRecord]) -> list[str]:
    """What differs between two run sets besides the model, in what both hold: question sets, tools,
    and each shared domain's replica data and system prompt (read from its records, which hash one
    domain each: two run sets of different domains are not "different data"), and the web
    conditions their runs met."""
    differences = []
    for field, what in (("question_sets", "question set"), ("tool_manifests", "tool manifest")):
        left, right = a.get(field, {}), b.get(field, {})
        changed = sorted(k for k in left.keys() & right.keys() if left[k] != right[k])
        differences += [f"{what} {key} differs" for key in changed]
    for field, what in (("data_hash", "replica data"), ("prompt_hash", "system prompt")):
        left, right = per_domain(a_records, field), per_domain(b_records, field)
        changed = sorted(domain for domain in left.keys() & right.keys() if left[domain] != right[domain])
        differences += [f"{what} of {domain} differs" for domain in changed]
    if profile_in(a) != profile_in(b):
        differences.append(f"web conditions differ (--web): {profiles_apart(a, b, ' vs ')}")
    return differences


def per_domain(records: list[RunRecord], field: str) -> dict[str, str]:
    """A record field that is one value per domain in a run set (its data or prompt hash), by domain."""
    return {record.domain: getattr(record, field) for record in records}
