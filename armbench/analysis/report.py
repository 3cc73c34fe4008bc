"""The tables of one run set: the study's table, one row per domain with its sets pooled; then, each
per domain x set x arm: accuracy, outcomes, misses, tools, pass@k.

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

from armbench.analysis.stats import mean, median, pass_at_k, pass_hat_k, wilson_interval
from armbench.analysis.summary import ARM_GROUP, GroupSummary, graded, grouped, question_tallies, summarize
from armbench.analysis.tables import Table, interval, number, percent, usd
from armbench.types import MissReason, Outcome, RunRecord, Term

NO_TOOL = "(no tool call)"
BROWSING, TOOLED = "browsing", "tooled"  # the study's two arms: the table sets them side by side
ALL_DOMAINS = "all"  # the study table's total row
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


@dataclass(frozen=True)
class ArmFigures:
    """One arm's graded runs in a domain, or in all of them."""

    correct: int
    graded: int
    accuracy: float
    ci_low: float  # Wilson 95%
    ci_high: float
    mean_cost_usd: float | None  # per graded run; None when any one's cost is unknown
    median_wall_seconds: float
    median_actions: float
    mean_tokens: float  # prompt + completion, per graded run
    cost_per_correct_usd: float | None  # all graded runs' cost over the correct ones; None: unknown, or none correct
    tokens_per_correct: float | None  # None: none correct


@dataclass(frozen=True)
class DomainRow:
    domain: str  # ALL_DOMAINS in the total
    questions: int  # distinct questions with a graded run, the domain's sets pooled
    browsing: ArmFigures | None  # None: the arm has no graded run here
    tooled: ArmFigures | None
    cost_ratio_tooled_over_browsing: float | None  # None: an arm or a cost missing, or browsing's is $0
    arms: dict[str, ArmFigures]  # every arm with a graded run here (synthesized too), by name


@dataclass(frozen=True)
class ByDomain:
    domains: list[DomainRow]  # sorted by domain
    total: DomainRow


def arm_figures(runs: list[RunRecord]) -> ArmFigures | None:
    """The summary's figures (its exclusions, its statistics) over an arm's runs in any grouping."""
    done = graded(runs)
    if not done:
        return None
    correct = sum(bool(r.correct) for r in done)
    low, high = wilson_interval(correct, len(done))
    costs = [r.cost_usd for r in done]
    tokens = sum(r.prompt_tokens + r.completion_tokens for r in done)
    return ArmFigures(
        correct, len(done), correct / len(done), low, high,
        mean_cost_usd=None if None in costs else mean(costs),
        median_wall_seconds=median([r.wall_seconds for r in done]),
        median_actions=median([r.actions for r in done]),
        mean_tokens=tokens / len(done),
        cost_per_correct_usd=None if None in costs or not correct else sum(costs) / correct,
        tokens_per_correct=tokens / correct if correct else None,
    )


def cost_ratio(browsing: ArmFigures | None, tooled: ArmFigures | None) -> float | None:
    """Tooled's mean cost over browsing's; None when an arm or a cost is missing, or browsing's is $0."""
    if browsing is None or tooled is None or browsing.mean_cost_usd is None or tooled.mean_cost_usd is None:
        return None
    return tooled.mean_cost_usd / browsing.mean_cost_usd if browsing.mean_cost_usd > 0 else None


def domain_row(domain: str, runs: list[RunRecord]) -> DomainRow:
    measured = {arm: arm_figures(arm_runs) for arm, arm_runs in grouped(runs, attrgetter("arm"))}
    arms = {arm: figures for arm, figures in measured.items() if figures is not None}
    browsing, tooled = arms.get(BROWSING), arms.get(TOOLED)
    return DomainRow(
        domain,
        questions=len(question_tallies(runs, ("domain", "set", "question_id"))),
        browsing=browsing,
        tooled=tooled,
        cost_ratio_tooled_over_browsing=cost_ratio(browsing, tooled),
        arms=arms,
    )


def by_domain(records: list[RunRecord]) -> ByDomain:
    """One row per domain, design and held-out pooled: the study's unit is the domain (one table, one
    tool), and a set of 5 questions is too small to read alone. The total pools every graded run."""
    return ByDomain(
        domains=[domain_row(domain, runs) for domain, runs in grouped(records, attrgetter("domain"))],
        total=domain_row(ALL_DOMAINS, records),
    )


# --- tables -----------------------------------------------------------------------------------

KEY_COLUMNS = ["domain", "set", "arm"]


def domain_table(figures: ByDomain) -> Table:
    def arm_cells(arm: ArmFigures | None) -> list[str]:
        if arm is None:
            return ["—"] * 4
        return [f"{arm.correct}/{arm.graded}", interval(arm.ci_low, arm.ci_high), usd(arm.mean_cost_usd),
                number(arm.median_wall_seconds, ".2f")]

    def ratio(row: DomainRow) -> str:
        if row.browsing is None or row.tooled is None:
            return "—"
        if row.cost_ratio_tooled_over_browsing is not None:
            return f"{row.cost_ratio_tooled_over_browsing:.2f}"
        if row.browsing.mean_cost_usd is None or row.tooled.mean_cost_usd is None:
            return "unknown"
        return f"undefined ({BROWSING} $0)"  # the paired table's wording, narrowed to fit 160 columns

    def cells(row: DomainRow) -> list[str]:
        b, t = arm_cells(row.browsing), arm_cells(row.tooled)
        return [row.domain, str(row.questions), b[0], t[0], b[1], t[1], b[2], t[2], ratio(row), b[3], t[3]]

    return Table(
        title="Every question we built and measured a tool for, by domain",
        columns=["domain", "questions", BROWSING, TOOLED, f"{BROWSING} CI", f"{TOOLED} CI", f"{BROWSING} cost",
                 f"{TOOLED} cost", f"cost {TOOLED}/{BROWSING}", f"{BROWSING} wall s", f"{TOOLED} wall s"],
        rows=[cells(row) for row in [*figures.domains, figures.total]] if figures.domains else [],
        key_columns=1,
        note="One row per domain, sorted by name, its design and held-out sets pooled; all: every graded "
        "run of each arm across domains, so a domain with more runs weighs more. questions: distinct "
        "questions with a graded run. browsing, tooled: correct of the graded runs; infra errors and runs "
        "an injected fault (`+faults=`) corrupted are excluded, as in the summary. CI: Wilson's 95% "
        "score interval of the arm's accuracy. cost: mean per run (unknown when any run's model has no "
        "known price); the ratio is of those means. wall s: median seconds per run. —: the arm has no "
        "graded run in the domain.",
        notices=tuple(one_arm_notices(figures)),
    )


def one_arm_notices(figures: ByDomain) -> list[str]:
    """A line per domain measured in one arm only: the total then compares the arms over different questions."""
    total = figures.total
    if total.browsing is None or total.tooled is None:
        return []
    notices = []
    for row in figures.domains:
        missing = [arm for arm, measured in ((BROWSING, row.browsing), (TOOLED, row.tooled)) if measured is None]
        if len(missing) == 1:
            present = TOOLED if missing[0] == BROWSING else BROWSING
            notices.append(f"{row.domain} has graded {present} runs only: the all row's {present} figures "
                           f"include its questions, its {missing[0]} figures do not")
    return notices


def summary_table(rows: list[GroupSummary]) -> Table:
    def cells(row: GroupSummary) -> list[str]:
        return [
            row.domain, row.set, row.arm,
            f"{row.correct}/{row.graded}",
            interval(row.ci_low, row.ci_high),
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
