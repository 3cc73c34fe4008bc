"""The tables of one run set, each per domain x set x arm: accuracy, outcomes, misses, tools, pass@k.

Every figure counts graded runs only: an infra error (the provider failed, the model never
answered) and a run whose tool calls an injected fault corrupted are excluded from accuracy and
counted separately in the summary, which also warns of groups where many tool calls arrived with
empty arguments (a provider dropping them looks just like that). The summary's figures
come from summary.py; the other tables group records here, in Python: they count categories,
split runs among tools and go per question, which reads more plainly over records than as frames.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from operator import attrgetter

from armbench.analysis.stats import pass_at_k, pass_hat_k
from armbench.analysis.summary import ARM_GROUP, GroupSummary, graded, grouped, question_tallies, summarize
from armbench.analysis.tables import Table, number, percent, usd
from armbench.types import MissReason, Outcome, RunRecord, Term

NO_TOOL = "(no tool call)"
EMPTY_ARGS_WARNING = 0.10  # a group's share of tool calls with empty arguments above which the report warns


@dataclass(frozen=True)
class CountRow:
    domain: str
    set: str
    arm: str
    counts: dict[str, int]  # every value of the vocabulary counted, in its declared order


def category_counts(records: list[RunRecord], field: str, vocabulary: type[Term]) -> list[CountRow]:
    """Graded runs per value of `field` (an outcome or a miss reason), every value listed."""
    rows = []
    for (domain, set_name, arm), runs in grouped(records, attrgetter(*ARM_GROUP)):
        seen = Counter(getattr(r, field) for r in graded(runs))
        rows.append(CountRow(domain, set_name, arm, {term.value: seen[term] for term in vocabulary}))
    return rows


def outcome_counts(records: list[RunRecord]) -> list[CountRow]:
    return category_counts(records, "outcome", Outcome)


def miss_counts(records: list[RunRecord]) -> list[CountRow]:
    return category_counts(records, "miss_reason", MissReason)


@dataclass(frozen=True)
class ToolRow:
    """One tool's share of a group's graded runs; the per-run figures add up to the summary's."""

    domain: str
    set: str
    arm: str
    tool: str
    calls: int
    calls_per_run: float
    tokens_per_run: float
    cost_per_run_usd: float | None  # None when a run that used the tool has no known cost


def by_tool(records: list[RunRecord]) -> list[ToolRow]:
    """Calls per tool, with each run's tokens and cost split among its calls in equal shares.

    Usage is recorded per run, not per model turn, so a tool is charged (its calls / the run's
    calls) of the run's tokens and cost. A run that made no call is charged to NO_TOOL.
    """
    rows = []
    for (domain, set_name, arm), runs in grouped(records, attrgetter(*ARM_GROUP)):
        done = graded(runs)
        calls: Counter[str] = Counter()
        tokens: defaultdict[str, float] = defaultdict(float)
        cost: defaultdict[str, float | None] = defaultdict(float)
        for run in done:
            shares = {t: n / run.actions for t, n in run.actions_by_tool.items() if n} or {NO_TOOL: 1.0}
            calls.update(run.actions_by_tool)
            for tool, share in shares.items():
                tokens[tool] += share * (run.prompt_tokens + run.completion_tokens)
                known = cost[tool] is not None and run.cost_usd is not None
                cost[tool] = cost[tool] + share * run.cost_usd if known else None
        for tool in sorted(tokens):
            spent = cost[tool]
            rows.append(
                ToolRow(
                    domain, set_name, arm, tool,
                    calls=calls[tool],
                    calls_per_run=calls[tool] / len(done),
                    tokens_per_run=tokens[tool] / len(done),
                    cost_per_run_usd=None if spent is None else spent / len(done),
                )
            )
    return rows


@dataclass(frozen=True)
class PassRow:
    domain: str
    set: str
    arm: str
    questions: int
    repeats: int  # the fewest graded runs of any question: the largest k estimable for all
    pass_at: dict[int, float]
    pass_hat: dict[int, float]


def correct_counts(runs: list[RunRecord]) -> list[tuple[int, int]]:
    """(graded runs, correct runs) per question that has at least one graded run."""
    return [(total, correct) for correct, total in question_tallies(runs, ("question_id",)).values()]


def pass_k(records: list[RunRecord]) -> list[PassRow]:
    rows = []
    for (domain, set_name, arm), runs in grouped(records, attrgetter(*ARM_GROUP)):
        counts = correct_counts(runs)
        if not counts:
            continue
        repeats = min(n for n, _ in counts)
        ks = range(1, repeats + 1)
        rows.append(
            PassRow(
                domain, set_name, arm, len(counts), repeats,
                pass_at={k: pass_at_k(counts, k) for k in ks},
                pass_hat={k: pass_hat_k(counts, k) for k in ks},
            )
        )
    return rows


# --- tables -----------------------------------------------------------------------------------

KEY_COLUMNS = ["domain", "set", "arm"]


def summary_table(rows: list[GroupSummary]) -> Table:
    def cells(row: GroupSummary) -> list[str]:
        interval = "—" if row.ci_low is None else f"{row.ci_low:.0%}–{row.ci_high:.0%}"
        return [
            row.domain, row.set, row.arm,
            f"{row.correct}/{row.graded}",
            interval,
            number(row.median_actions),
            usd(row.mean_cost_usd) if row.graded else "—",
            number(row.median_wall_seconds, ".2f"),
            number(row.mean_tokens, ",.0f"),
            str(row.infra_errors),
        ]

    return Table(
        title="Accuracy, actions, cost and time",
        columns=KEY_COLUMNS + ["correct", "95% CI", "median actions", "mean cost/task",
                               "median wall s", "mean tokens", "infra errors"],
        rows=[cells(row) for row in rows],
        note="Accuracy excludes infra errors (runs where the model never answered because the "
        "provider failed) and runs whose tool calls an injected fault (`+faults=`) corrupted. The "
        "interval is Wilson's 95% score interval. Cost is unknown when any run's model has no known price.",
        notices=tuple(summary_notices(rows)),
    )


def summary_notices(rows: list[GroupSummary]) -> list[str]:
    """A line per group with runs excluded for an injected fault, and per group whose tool calls
    arrived with empty arguments too often to be the agent's choice alone."""
    notices = []
    for row in rows:
        group = "/".join(row.key)
        if row.injected_faults:
            notices.append(f"{group}: {row.injected_faults} run(s) excluded from accuracy: an injected "
                           "fault corrupted their tool calls")
        if row.tool_calls and row.empty_tool_args / row.tool_calls > EMPTY_ARGS_WARNING:
            notices.append(f"warning: {group}: {row.empty_tool_args} of {row.tool_calls} tool calls "
                           f"({row.empty_tool_args / row.tool_calls:.0%}) had empty arguments; the provider "
                           "may be dropping them (check with `bench doctor`)")
    return notices


def counts_table(
    rows: list[CountRow],
    vocabulary: type[Term],
    title: str,
    note: str,
    *,
    only_present: bool = False,
    empty: str = "",
) -> Table:
    """One column per value of the vocabulary (with `only_present`, per value that occurs; rows
    without one are left out), each value's meaning in the note."""
    terms = list(vocabulary)
    if only_present:
        terms = [t for t in terms if any(r.counts[t] for r in rows)]
        rows = [r for r in rows if any(r.counts[t] for t in terms)]
    return Table(
        title=title,
        columns=KEY_COLUMNS + [t.label for t in terms],
        rows=[[r.domain, r.set, r.arm, *(str(r.counts[t]) for t in terms)] for r in rows],
        note=note + "".join(f" {t.label}: {t.meaning}." for t in terms),
        empty=empty or "nothing to show",
    )


def tool_table(rows: list[ToolRow]) -> Table:
    return Table(
        title="Actions, tokens and cost by tool",
        columns=KEY_COLUMNS + ["tool", "calls", "calls/run", "tokens/run", "cost/run"],
        rows=[
            [r.domain, r.set, r.arm, r.tool, str(r.calls), f"{r.calls_per_run:.2f}",
             f"{r.tokens_per_run:,.0f}", usd(r.cost_per_run_usd, ".5f")]
            for r in rows
        ],
        key_columns=4,
        note="Per graded run. Usage is recorded per run, not per model turn, so each run's tokens "
        "and cost are split among its tool calls in equal shares (a tool with 2 of a run's 4 calls "
        "is charged half the run). This shows where the calls went, weighted by what their runs "
        f"cost; it cannot tell a cheap call from an expensive one in the same run. {NO_TOOL} is "
        "runs that answered without calling a tool. Per tool, the rows add up to the summary's "
        "mean tokens and mean cost.",
    )


def pass_table(rows: list[PassRow]) -> Table:
    top = max((r.repeats for r in rows), default=0)
    ks = range(1, top + 1)

    def at(values: dict[int, float], k: int) -> str:
        return percent(values.get(k), ".1%")

    return Table(
        title="pass@k and pass^k over repeats",
        columns=KEY_COLUMNS + ["questions", "runs each"]
        + [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks if k > 1],
        rows=[
            [r.domain, r.set, r.arm, str(r.questions), str(r.repeats)]
            + [at(r.pass_at, k) for k in ks] + [at(r.pass_hat, k) for k in ks if k > 1]
            for r in rows
        ],
        note="pass@k: chance that at least one of k runs of a question is right (unbiased "
        "estimator 1 − C(n−c,k)/C(n,k), Chen et al. 2021); pass^k: chance that all k are right "
        "(C(c,k)/C(n,k), tau-bench). Both averaged over questions, n graded runs and c correct "
        "per question; k goes up to the fewest graded runs of any question. pass@1 = pass^1.",
    )


def report_tables(records: list[RunRecord]) -> list[Table]:
    return [
        summary_table(summarize(records)),
        counts_table(
            outcome_counts(records),
            Outcome,
            "Outcomes (DeepSearchQA categories)",
            "Graded runs per outcome. Only fully correct counts as correct.",
        ),
        counts_table(
            miss_counts(records),
            MissReason,
            "Why runs missed",
            "Graded runs that missed, per reason (reasons that occur).",
            only_present=True,
            empty="no graded run missed",
        ),
        tool_table(by_tool(records)),
        pass_table(pass_k(records)),
    ]
