"""`bench plan`: what a run set would spend, and what accuracy difference between arms it can show.

Pure functions over plain figures and run records; nothing here runs, prices or reads a file.
Token figures come from a run set's records (`--from`) or, failing that, DEFAULT_TOKENS_PER_RUN.
The power figures use McNemar's test, as the report's paired statistics do: each question x repeat
is run in every arm, so the arms are compared pair by pair.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass

from armbench.types import RunRecord

Z_ALPHA = 1.959963984540054  # alpha 0.05, two-sided
Z_POWER = 0.8416212335729143  # 80% power
COST_CAP_HEADROOM = 1.5  # token use varies run to run; a cap at the expected cost would halt half the sets
# Share of question x repeat pairs where exactly one arm is right. 0.5 is what two arms near 50%
# accuracy give when their outcomes are independent: a cautious guess. Arms that fail the same
# questions (correlated outcomes) have fewer discordant pairs and can show smaller differences.
DEFAULT_DISCORDANCE = 0.5


@dataclass(frozen=True)
class Tokens:
    """Mean tokens of one run, kept apart because providers price input and output differently."""

    prompt: float
    completion: float

    def cost(self, price: tuple[float, float]) -> float:
        """Dollars at `price`: dollars per million input and output tokens."""
        return (self.prompt * price[0] + self.completion * price[1]) / 1e6


# Mean tokens per run by arm, when no --from run set is given: the 42 runs of the committed
# recordings results/recordings/local-qwen2.5-coder-0.5b-{gpus,worldbank}/runs.jsonl (21 per arm).
# That model takes one or two actions a run; a model that browses longer reads more. The
# synthesized arm has no recording: it is taken to read what the tooled arm reads.
DEFAULT_TOKENS_PER_RUN = {
    "browsing": Tokens(prompt=6358, completion=439),
    "tooled": Tokens(prompt=11986, completion=343),
    "synthesized": Tokens(prompt=11986, completion=343),
}


@dataclass(frozen=True)
class ArmEstimate:
    arm: str
    runs: int
    prompt_tokens: float
    completion_tokens: float
    cost_usd: float | None  # None: the model has no price
    observed_questions: int  # questions whose figure came from the --from run set


@dataclass(frozen=True)
class SpendPlan:
    model: str
    questions: int
    runs_per_question: int
    arms: list[ArmEstimate]
    price_per_million: tuple[float, float] | None
    token_source: str  # the --from run set, or where the defaults come from
    discordance: float
    detectable_difference: float | None  # None: fewer than two arms, or no difference is detectable
    difference: float | None  # --difference asked about
    runs_for_difference: int | None  # --runs that difference needs

    @property
    def total_runs(self) -> int:
        return sum(arm.runs for arm in self.arms)

    @property
    def total_cost(self) -> float | None:
        costs = [arm.cost_usd for arm in self.arms]
        return None if None in costs else sum(costs)

    @property
    def cost_cap(self) -> float | None:
        """A --max-cost with headroom, rounded up to the cent."""
        total = self.total_cost
        return None if total is None else math.ceil(total * COST_CAP_HEADROOM * 100) / 100

    def to_json(self) -> dict:
        return {**asdict(self), "total_runs": self.total_runs, "total_cost_usd": self.total_cost,
                "max_cost_suggested": self.cost_cap, "cost_cap_headroom": COST_CAP_HEADROOM,
                "test": "McNemar (Connor 1987 normal approximation), alpha 0.05 two-sided, power 0.8"}


def mean_tokens(records: list[RunRecord]) -> dict[tuple[str, str], Tokens]:
    """Mean tokens per run by (question id, arm), over every recorded run (a miss spends too)."""
    runs: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in records:
        runs[record.question_id, record.arm].append(record)
    return {key: Tokens(statistics.fmean(r.prompt_tokens for r in group),
                        statistics.fmean(r.completion_tokens for r in group)) for key, group in runs.items()}


def estimate_arm(arm: str, question_ids: list[str], runs: int, observed: dict[tuple[str, str], Tokens],
                 price: tuple[float, float] | None) -> ArmEstimate:
    """One arm's expected tokens and cost: each question's observed mean where the run set has it,
    else the arm's mean over the run set, else the default per run."""
    seen = [tokens for (_, seen_arm), tokens in observed.items() if seen_arm == arm]
    fallback = (Tokens(statistics.fmean(t.prompt for t in seen), statistics.fmean(t.completion for t in seen))
                if seen else DEFAULT_TOKENS_PER_RUN.get(arm, DEFAULT_TOKENS_PER_RUN["tooled"]))
    per_question = [observed.get((question, arm), fallback) for question in question_ids]
    total = Tokens(runs * sum(t.prompt for t in per_question), runs * sum(t.completion for t in per_question))
    return ArmEstimate(arm, runs * len(question_ids), total.prompt, total.completion,
                       None if price is None else total.cost(price),
                       sum((question, arm) in observed for question in question_ids))


def pairs_needed(difference: float, discordance: float = DEFAULT_DISCORDANCE) -> int:
    """Question x repeat pairs McNemar's test needs to detect `difference` in accuracy between two
    arms (80% power, alpha 0.05 two-sided), by Connor's (1987) normal approximation:
    n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, psi the discordant share of pairs."""
    if not 0 < difference <= discordance <= 1:
        raise ValueError(f"need 0 < difference ({difference:g}) <= discordance ({discordance:g}) <= 1: "
                         "a difference comes only from pairs where the arms disagree")
    root = Z_ALPHA * math.sqrt(discordance) + Z_POWER * math.sqrt(discordance - difference**2)
    return math.ceil(root**2 / difference**2)


def detectable_difference(pairs: int, discordance: float = DEFAULT_DISCORDANCE) -> float | None:
    """The smallest accuracy difference `pairs` pairs detect (80% power, alpha 0.05): `pairs_needed`
    solved for the difference by bisection. None when even a difference of `discordance` is not."""
    if pairs < 1 or pairs_needed(discordance, discordance) > pairs:
        return None
    low, high = 0.0, discordance  # pairs_needed falls as the difference grows
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if pairs_needed(middle, discordance) > pairs else (low, middle)
    return high


def runs_needed(difference: float, questions: int, discordance: float = DEFAULT_DISCORDANCE) -> int:
    """--runs for `questions` questions to detect `difference`: each repeat adds one pair per question."""
    return math.ceil(pairs_needed(difference, discordance) / questions)


def plan_spending(model: str, question_ids: list[str], arms: list[str], runs: int,
                  price: tuple[float, float] | None, records: list[RunRecord] | None, token_source: str,
                  discordance: float = DEFAULT_DISCORDANCE, difference: float | None = None) -> SpendPlan:
    """The whole plan: runs, tokens and cost per arm, and the power of comparing two arms."""
    observed = mean_tokens(records or [])
    pairs = len(question_ids) * runs
    return SpendPlan(
        model=model, questions=len(question_ids), runs_per_question=runs,
        arms=[estimate_arm(arm, question_ids, runs, observed, price) for arm in arms],
        price_per_million=price, token_source=token_source, discordance=discordance,
        detectable_difference=detectable_difference(pairs, discordance) if len(arms) > 1 else None,
        difference=difference,
        runs_for_difference=None if difference is None else runs_needed(difference, len(question_ids), discordance),
    )


def plan_lines(plan: SpendPlan) -> list[str]:
    """The plan as text under 80 columns."""
    lines = [f"{plan.model}: {plan.questions} questions x {len(plan.arms)} arms x --runs "
             f"{plan.runs_per_question} = {plan.total_runs:,} runs", "",
             f"{'arm':<12} {'runs':>6} {'input tokens':>14} {'output tokens':>14} {'cost':>10}"]
    for arm in plan.arms:
        lines.append(f"{arm.arm:<12} {arm.runs:>6,} {arm.prompt_tokens:>14,.0f} {arm.completion_tokens:>14,.0f} "
                     f"{dollars(arm.cost_usd):>10}")
    lines.append(f"{'total':<12} {plan.total_runs:>6,} {'':>14} {'':>14} {dollars(plan.total_cost):>10}")
    lines.append(f"tokens: {plan.token_source}")
    if plan.price_per_million is None:
        lines.append(f"price: LiteLLM has no price for {plan.model}; give one with --price IN,OUT")
    else:
        lines.append(f"price: ${plan.price_per_million[0]:g} in, ${plan.price_per_million[1]:g} out "
                     "per million tokens")
        lines.append(f"cost cap: --max-cost {plan.cost_cap:.2f} (expected cost x {COST_CAP_HEADROOM:g})")
    lines.append("")
    pairs = plan.questions * plan.runs_per_question
    if len(plan.arms) < 2:
        lines.append("detectable difference: one arm, nothing to compare")
    elif plan.detectable_difference is None:
        lines.append(f"detectable difference: none with {pairs} pairs at 80% power")
    else:
        lines.append(f"detectable difference: {plan.detectable_difference:.1%} accuracy between two arms "
                     f"({pairs:,} pairs)")
    lines.append("  McNemar's test, paired by question x repeat, alpha 0.05 two-sided, 80% power;")
    lines.append(f"  assumes {plan.discordance:.0%} of pairs discordant (--discordance), repeats independent")
    if plan.difference is not None:
        lines.append(f"a difference of {plan.difference:.1%} needs --runs {plan.runs_for_difference}")
    return lines


def dollars(amount: float | None) -> str:
    return "unpriced" if amount is None else f"${amount:,.2f}"
