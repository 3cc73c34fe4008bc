"""Turn a run set into the study-style table: one row per domain x set x arm."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import groupby

from rich.table import Table

from harness.stats import mean, median, wilson_interval
from harness.store import RunRecord


@dataclass(frozen=True)
class ReportRow:
    domain: str
    set: str
    arm: str
    correct: int
    graded: int
    infra_errors: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    median_actions: float | None
    mean_cost_usd: float | None  # None when any graded run's cost is unknown
    median_wall_seconds: float | None
    mean_tokens: float | None

    def to_json(self) -> dict:
        return asdict(self)


def summarize(records: list[RunRecord]) -> list[ReportRow]:
    key = lambda r: (r.domain, r.set, r.arm)  # noqa: E731
    rows = []
    for (domain, set_name, arm), group in groupby(sorted(records, key=key), key=key):
        runs = list(group)
        graded = [r for r in runs if r.correct is not None]
        correct = sum(bool(r.correct) for r in graded)
        low, high = wilson_interval(correct, len(graded)) if graded else (None, None)
        costs = [r.cost_usd for r in graded]
        rows.append(
            ReportRow(
                domain=domain,
                set=set_name,
                arm=arm,
                correct=correct,
                graded=len(graded),
                infra_errors=len(runs) - len(graded),
                accuracy=correct / len(graded) if graded else None,
                ci_low=low,
                ci_high=high,
                median_actions=median([r.actions for r in graded]),
                mean_cost_usd=None if None in costs else mean(costs),
                median_wall_seconds=median([r.wall_seconds for r in graded]),
                mean_tokens=mean([r.prompt_tokens + r.completion_tokens for r in graded]),
            )
        )
    return rows


COLUMNS = (
    "domain", "set", "arm", "correct", "95% CI", "median actions", "mean cost/task",
    "median wall s", "mean tokens", "infra errors",
)


def format_cells(row: ReportRow) -> list[str]:
    def num(value: float | None, spec: str) -> str:
        return "—" if value is None else format(value, spec)

    interval = "—" if row.ci_low is None else f"{row.ci_low:.0%}–{row.ci_high:.0%}"
    cost = "unknown" if row.mean_cost_usd is None and row.graded else num(row.mean_cost_usd, ".4f")
    return [
        row.domain,
        row.set,
        row.arm,
        f"{row.correct}/{row.graded}",
        interval,
        num(row.median_actions, "g"),
        cost if cost in ("unknown", "—") else f"${cost}",
        num(row.median_wall_seconds, ".2f"),
        num(row.mean_tokens, ",.0f"),
        str(row.infra_errors),
    ]


def rich_table(rows: list[ReportRow], title: str) -> Table:
    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("domain", "set", "arm") else "right")
    for row in rows:
        table.add_row(*format_cells(row))
    return table


def markdown_table(rows: list[ReportRow], title: str) -> str:
    lines = [f"# {title}", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(format_cells(row)) + " |" for row in rows]
    lines += ["", "Accuracy excludes infra errors (runs where the model never answered because "
              "the provider failed). The interval is Wilson's 95% score interval."]
    return "\n".join(lines) + "\n"
