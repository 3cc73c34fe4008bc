"""A leaderboard of three or more run sets (models, or one model with other settings): one row per
run set x arm, ranked by accuracy, with each run set's tooled-minus-browsing gap. Run sets that met
different web conditions (`--web`) are grouped by profile: each label names its profile, and the
ranking is within a profile, the kind web's first.

Rows are scored on the same questions: only the (domain, set, question) groups every run set ran
count, and the runs outside them are counted per run set, never silently dropped. Each row's
figures are report.py's `arm_figures`, so a leaderboard row agrees with a run set's own report
whenever nothing is left out.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from operator import attrgetter
from pathlib import Path

from armbench.analysis.compare import manifest_differences
from armbench.analysis.plots import Plot, accuracy_spend
from armbench.analysis.report import BROWSING, TOOLED, ArmFigures, arm_figures
from armbench.analysis.summary import grouped, summarize
from armbench.analysis.tables import Table, interval, number, percent, points, usd
from armbench.types import RunRecord
from armbench.web_profile import profile_name_in

SHARED_UNIT = ("domain", "set", "question_id")


@dataclass(frozen=True)
class RunSet:
    folder: Path
    manifest: dict
    records: list[RunRecord]

    @property
    def model(self) -> str:
        return self.manifest.get("model", "?")

    @property
    def web(self) -> str:
        return profile_name_in(self.manifest)


@dataclass(frozen=True)
class Entry:
    """One run set x arm over the shared groups."""

    run_set: str  # the run set's label
    web: str  # the web profile its runs met
    arm: str
    figures: ArmFigures | None  # None: no graded run
    infra_errors: int


@dataclass(frozen=True)
class RunSetFigures:
    label: str
    folder: str
    model: str
    web: str
    runs: int  # runs in the shared groups
    left_out: int  # runs in groups some other run set lacks
    gap: float | None  # tooled minus browsing accuracy; None unless both arms have graded runs
    differences: list[str]  # besides the model, against the first run set, in the shared groups


@dataclass(frozen=True)
class Leaderboard:
    run_sets: list[RunSetFigures]
    entries: list[Entry]  # by web profile (the kind web first), then by accuracy, best first
    shared_groups: int

    @property
    def in_tokens(self) -> bool:
        """Every cost known and $0 (scripted or local models): spend is read in tokens, as in the cost plot."""
        measured = [e.figures for e in self.entries if e.figures is not None]
        return bool(measured) and all(f.mean_cost_usd == 0 for f in measured)

    def to_json(self) -> dict:
        return {
            "shared_groups": self.shared_groups,
            "run_sets": [asdict(r) for r in self.run_sets],
            "entries": [asdict(e) for e in self.entries],
        }

    def tables(self) -> list[Table]:
        return [leaderboard_table(self), run_sets_table(self)]

    def plot(self) -> Plot:
        return accuracy_spend([(f"{e.run_set} {e.arm}", e.figures) for e in self.entries], self.in_tokens)


def labels(run_sets: list[RunSet]) -> list[str]:
    """The model (and its web profile, when the run sets met more than one); with the folder name
    when another run set has the same (the path when even those are alike)."""
    several_webs = len({r.web for r in run_sets}) > 1
    models = [f"{r.model} · web {r.web}" if several_webs else r.model for r in run_sets]
    named = [model if models.count(model) == 1 else f"{model} ({r.folder.name})" for model, r in zip(models, run_sets)]
    return [name if named.count(name) == 1 else f"{model} ({r.folder})" for name, model, r in zip(named, models, run_sets)]


def web_order(run_sets: list[RunSet]) -> dict[str, int]:
    """The web profiles, the kind web first, then as the run sets come."""
    webs = dict.fromkeys(["kind", *(r.web for r in run_sets)])
    return {web: place for place, web in enumerate(webs)}


def group_of(record: RunRecord) -> tuple[str, ...]:
    return attrgetter(*SHARED_UNIT)(record)


def leaderboard(run_sets: list[RunSet]) -> Leaderboard:
    shared = set.intersection(*({group_of(r) for r in run_set.records} for run_set in run_sets))
    kept = [[r for r in run_set.records if group_of(r) in shared] for run_set in run_sets]
    entries, figures = [], []
    for label, run_set, records in zip(labels(run_sets), run_sets, kept):
        arms = {arm: arm_figures(runs) for arm, runs in grouped(records, attrgetter("arm"))}
        infra: Counter[str] = Counter()
        for row in summarize(records):
            infra[row.arm] += row.infra_errors
        entries += [Entry(label, run_set.web, arm, measured, infra[arm]) for arm, measured in arms.items()]
        browsing, tooled = arms.get(BROWSING), arms.get(TOOLED)
        figures.append(RunSetFigures(
            label, str(run_set.folder), run_set.model, run_set.web,
            runs=len(records),
            left_out=len(run_set.records) - len(records),
            gap=tooled.accuracy - browsing.accuracy if browsing and tooled else None,
            differences=manifest_differences(run_sets[0].manifest, run_set.manifest, kept[0], records),
        ))
    place = web_order(run_sets)
    entries.sort(key=lambda e: (place[e.web], -1.0 if e.figures is None else -e.figures.accuracy))
    return Leaderboard(figures, entries, len(shared))


# --- tables -----------------------------------------------------------------------------------


def leaderboard_table(board: Leaderboard) -> Table:
    def cells(entry: Entry) -> list[str]:
        f = entry.figures
        if f is None:
            return [entry.run_set, entry.arm, "0/0", *["—"] * 6, str(entry.infra_errors)]
        return [entry.run_set, entry.arm, f"{f.correct}/{f.graded}", percent(f.accuracy),
                interval(f.ci_low, f.ci_high), usd(f.cost_per_correct_usd) if f.correct else "—",
                number(f.tokens_per_correct, ",.0f"), number(f.median_actions),
                number(f.median_wall_seconds, ".2f"), str(entry.infra_errors)]

    return Table(
        title="Leaderboard",
        columns=["run set", "arm", "correct", "accuracy", "95% CI", "cost/correct", "tokens/correct",
                 "actions", "wall s", "infra errors"],
        rows=[cells(entry) for entry in board.entries],
        key_columns=2,
        empty="the run sets share no question",
        note=f"Over the {board.shared_groups} domain/set/question group(s) every run set ran, each row's "
        "graded runs pooled, best accuracy first (within each web profile, when they met more than one). correct: correct/graded runs. 95% CI: Wilson score "
        "interval. cost/correct, tokens/correct: graded runs' spend over the correct ones (unknown cost: "
        "some model has no known price). actions, wall s: medians per graded run. infra errors: runs "
        "not graded because the provider failed.",
    )


def run_sets_table(board: Leaderboard) -> Table:
    return Table(
        title=f"Run sets: {TOOLED} minus {BROWSING}",
        columns=["run set", "folder", "runs", "left out", f"{TOOLED} − {BROWSING}"],
        rows=[[r.label, r.folder, str(r.runs), str(r.left_out), points(r.gap)] for r in board.run_sets],
        key_columns=2,
        note=f"runs: in the shared groups; left out: in groups some other run set did not run. "
        f"{TOOLED} − {BROWSING}: accuracy gap in points over the shared groups (— without both arms).",
    )
