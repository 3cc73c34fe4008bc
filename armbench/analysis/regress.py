"""The regression gate: does a run set do worse than a baseline, beyond what the baseline's noise allows?

Per domain x set x arm of the baseline, the candidate fails when
- its accuracy is below the baseline's Wilson 95% lower bound (so N repeats widen the tolerance
  only as much as the baseline's own spread does), or it has no graded run there;
- its mean cost, mean tokens or mean actions per run rise by more than a threshold (relative to
  the baseline; actions relative to at least one call, so a baseline of 0 actions still compares);
- it has more infra errors than the baseline (its accuracy would rest on fewer graded runs; runs
  excluded for an injected fault are not counted: the faults were asked for);
and the whole run set fails when any replayed run diverged from its recording. Cost is compared
only where both sides' costs are known and the baseline's is above zero (a local model is free).

`exact`: for a replay, which is deterministic, any per-question flip fails too; noise cannot
explain it, so a grader or reference change that flips an answer is caught.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from armbench.analysis.compare import RUN_SET_UNIT, QuestionDelta, compare
from armbench.analysis.summary import GroupSummary, summarize
from armbench.analysis.tables import Table, percent, points
from armbench.types import RunRecord


@dataclass(frozen=True)
class Thresholds:
    max_cost_rise: float = 0.25  # fractions: 0.25 = a rise of more than 25% fails
    max_tokens_rise: float = 0.25
    max_actions_rise: float = 0.25


@dataclass(frozen=True)
class GroupCheck:
    group: str  # domain/set/arm
    baseline: GroupSummary
    candidate: GroupSummary | None  # None: the candidate has no run in this group
    accuracy_floor: float  # the baseline's Wilson 95% lower bound
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Verdict:
    groups: list[GroupCheck]
    divergences: list[tuple[str, str]]  # (run_id, divergence) of replayed runs
    flips: list[QuestionDelta]
    exact: bool = False  # any flip fails (a replay)
    notes: list[str] = field(default_factory=list)  # not failures: context for a reader

    @property
    def problems(self) -> list[str]:
        found = [f"{g.group}: {problem}" for g in self.groups for problem in g.problems]
        if self.divergences:
            found.append(f"{len(self.divergences)} replayed run(s) diverged from the recording")
        if self.exact and self.flips:
            found.append(f"{len(self.flips)} question(s) flipped in a replay, which should reproduce every grade")
        return found

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "problems": self.problems,
            "groups": [asdict(g) for g in self.groups],
            "divergences": [{"run_id": r, "divergence": d} for r, d in self.divergences],
            "flips": [{**asdict(d), "delta": d.delta} for d in self.flips],
            "notes": self.notes,
        }


def check_group(
    name: str, baseline: GroupSummary, candidate: GroupSummary | None, limits: Thresholds
) -> GroupCheck:
    floor = baseline.ci_low if baseline.graded else 0.0
    problems: list[str] = []
    if candidate is None or not candidate.graded:
        problems.append("no graded run in the candidate" if candidate else "not run by the candidate")
        return GroupCheck(name, baseline, candidate, floor, problems)
    if candidate.infra_errors > baseline.infra_errors:
        problems.append(f"{candidate.infra_errors} infra error(s), baseline {baseline.infra_errors}")
    if candidate.accuracy < floor:
        problems.append(f"accuracy {percent(candidate.accuracy)} is below the baseline's 95% lower "
                        f"bound {percent(floor)} (baseline {baseline.correct}/{baseline.graded})")
    for what, base, now, limit in (
        ("mean cost", baseline.mean_cost_usd, candidate.mean_cost_usd, limits.max_cost_rise),
        ("mean tokens", baseline.mean_tokens, candidate.mean_tokens, limits.max_tokens_rise),
        ("mean actions", baseline.mean_actions, candidate.mean_actions, limits.max_actions_rise),
    ):
        rise = relative_change(base, now, ACTIONS_FLOOR if what == "mean actions" else 0.0)
        if rise is not None and rise > limit:
            problems.append(f"{what} rose {rise:+.0%} ({base:.4g} -> {now:.4g}), more than the allowed {limit:+.0%}")
    return GroupCheck(name, baseline, candidate, floor, problems)


ACTIONS_FLOOR = 1.0  # actions compare against at least one call, so a baseline of 0 still compares


def relative_change(base: float | None, now: float | None, floor: float = 0.0) -> float | None:
    """now / max(base, floor) - 1; None when either is unknown or the base is 0 (a free model's cost)."""
    if base is None or now is None:
        return None
    if now == base:
        return 0.0
    base = max(base, floor)
    return now / base - 1 if base else None


def regress(
    baseline: list[RunRecord], candidate: list[RunRecord], limits: Thresholds = Thresholds(), *, exact: bool = False
) -> Verdict:
    baseline_groups = {row.key: row for row in summarize(baseline)}
    candidate_groups = {row.key: row for row in summarize(candidate)}
    checks = [
        check_group("/".join(group), row, candidate_groups.get(group), limits)
        for group, row in baseline_groups.items()
    ]
    notes = [f"{'/'.join(group)}: in the candidate only, not checked"
             for group in sorted(candidate_groups.keys() - baseline_groups.keys())]
    divergences = [(r.run_id, r.replay_divergence) for r in candidate if r.replay_divergence]
    flips = compare(baseline, candidate, "baseline", "candidate", RUN_SET_UNIT).flips
    return Verdict(checks, sorted(divergences), flips, exact, notes)


def groups_table(verdict: Verdict) -> Table:
    def accuracy(s: GroupSummary | None) -> str:
        return "—" if s is None or not s.graded else f"{s.correct}/{s.graded} {percent(s.accuracy)}"

    def change(base: float | None, now: float | None, floor: float = 0.0) -> str:
        rise = relative_change(base, now, floor)
        return "—" if rise is None else f"{rise:+.0%}"

    return Table(
        title="Regression check per set and arm",
        columns=["group", "baseline", "floor", "candidate", "infra errors", "cost", "tokens", "actions", "verdict"],
        rows=[
            [g.group, accuracy(g.baseline), percent(g.accuracy_floor), accuracy(g.candidate),
             "—" if g.candidate is None else f"{g.candidate.infra_errors} (was {g.baseline.infra_errors})",
             change(g.baseline.mean_cost_usd, g.candidate and g.candidate.mean_cost_usd),
             change(g.baseline.mean_tokens, g.candidate and g.candidate.mean_tokens),
             change(g.baseline.mean_actions, g.candidate and g.candidate.mean_actions, ACTIONS_FLOOR),
             "ok" if g.ok else "FAIL"]
            for g in verdict.groups
        ],
        key_columns=1,
        empty="the baseline has no runs",
        note="floor: the baseline's Wilson 95% lower bound on accuracy; the candidate fails below it. "
        "cost, tokens, actions: change of the candidate's mean per graded run (actions against at "
        "least one call).",
    )


def flips_table(verdict: Verdict) -> Table:
    return Table(
        title="Per-question flips",
        columns=["domain", "set", "arm", "question", "baseline", "candidate", "Δ"],
        rows=[[*d.unit, f"{d.correct_a}/{d.graded_a}", f"{d.correct_b}/{d.graded_b}", points(d.delta)]
              for d in verdict.flips],
        key_columns=4,
        empty="no question changed",
    )
