"""The answer on one screen, what `bench run` and `bench report` print unless asked for --full: a
headline per pair of arms, then the study's table (one row per domain, its sets pooled) narrowed to
the figures a reader decides on. Every figure is by_domain's, so it agrees with the full report.

When every cost is known and $0 (a scripted or local model) cost says nothing, so the per-run and
per-correct figures are tokens instead, as the cost plot falls back to tokens.
"""
from __future__ import annotations

from itertools import combinations

from armbench.analysis.report import ArmFigures, ByDomain, one_arm_notices
from armbench.analysis.summary import GroupSummary
from armbench.analysis.tables import Table, number, usd

STUDY_TITLE = "By domain, design and held-out pooled"


def in_tokens(figures: ByDomain) -> bool:
    """Every arm's cost is known and $0 overall."""
    arms = figures.total.arms.values()
    return bool(arms) and all(arm.mean_cost_usd == 0 for arm in arms)


def per_run(arm: ArmFigures, tokens: bool) -> str:
    return number(arm.mean_tokens, ",.0f") if tokens else usd(arm.mean_cost_usd)


def per_correct(arm: ArmFigures, tokens: bool) -> str:
    """— when no run was right: nothing was bought at any price."""
    if not arm.correct:
        return "—"
    return number(arm.tokens_per_correct, ",.0f") if tokens else usd(arm.cost_per_correct_usd)


def share(b: float | None, a: float | None) -> str:
    """b/a as a reader says it: 1/12 below a half, else 0.8×, 2.5×; empty when undefined."""
    if b is None or not a:
        return ""
    ratio = b / a
    return f"1/{1 / ratio:.0f}" if 0 < ratio < 0.5 else f"{ratio:.2g}×"


def accuracy(name: str, arm: ArmFigures) -> str:
    return f"{name} {arm.correct}/{arm.graded} (95% CI {arm.ci_low * 100:.0f}–{arm.ci_high:.0%})"


def pair_headline(a_name: str, a: ArmFigures, b_name: str, b: ArmFigures, tokens: bool) -> str:
    """B vs A, as the paired comparison names them: A is the first arm by name."""
    spend = (b.tokens_per_correct, a.tokens_per_correct) if tokens else (b.cost_per_correct_usd, a.cost_per_correct_usd)
    ratio = share(*spend)
    aside = "; ".join(filter(None, [ratio and f"{b_name}/{a_name} {ratio}", tokens and "costs $0"]))
    return (f"{accuracy(b_name, b)} vs {accuracy(a_name, a)} · median actions {number(b.median_actions)} vs "
            f"{number(a.median_actions)} · {'tokens' if tokens else 'cost'} per correct {per_correct(b, tokens)} "
            f"vs {per_correct(a, tokens)}" + (f" ({aside})" if aside else ""))


def headlines(figures: ByDomain) -> list[str]:
    """A line per pair of arms over every graded run; one arm alone gets its own figures."""
    arms, tokens = figures.total.arms, in_tokens(figures)
    if len(arms) == 1:
        [(name, arm)] = arms.items()
        return [f"{accuracy(name, arm)} · median actions {number(arm.median_actions)} · "
                f"{'tokens' if tokens else 'cost'} per correct {per_correct(arm, tokens)}"
                + (" (costs $0)" if tokens else "")]
    return [pair_headline(a, arms[a], b, arms[b], tokens) for a, b in combinations(sorted(arms), 2)]


def exclusions(rows: list[GroupSummary]) -> str | None:
    """The runs no figure counts, which a summary of graded runs would otherwise hide."""
    infra, injected = sum(row.infra_errors for row in rows), sum(row.injected_faults for row in rows)
    if not infra and not injected:
        return None
    return (f"not graded, so in no figure: {infra} infra errors (the model never answered), {injected} runs an "
            "injected fault corrupted; per group with `bench report --full`")


def tool_drift_notices(manifest: dict) -> list[str]:
    """A line per held-out set whose tool changed after it was frozen (the manifest says which)."""
    return [f"held-out set {key}: {why}" for key, why in sorted(manifest.get("heldout_tool_changed", {}).items())]


def study_table(figures: ByDomain) -> Table:
    """Per figure a column per arm, headed figure then arm, so a narrow terminal splits it by figure."""
    arms, tokens = sorted(figures.total.arms), in_tokens(figures)
    spent = "tokens" if tokens else "cost"
    cells = {
        "correct": lambda arm: f"{arm.correct}/{arm.graded}",
        "actions": lambda arm: number(arm.median_actions),
        f"{spent}/run": lambda arm: per_run(arm, tokens),
        f"{spent}/correct": lambda arm: per_correct(arm, tokens),
        "wall s": lambda arm: number(arm.median_wall_seconds, ".2f"),
    }
    rows = [*figures.domains, figures.total] if figures.domains else []
    return Table(
        title=STUDY_TITLE,
        columns=["domain", *(f"{figure}\n{arm}" for figure in cells for arm in arms)],
        rows=[[row.domain, *(cell(row.arms[arm]) if arm in row.arms else "—" for cell in cells.values()
                             for arm in arms)] for row in rows],
        key_columns=1,
        note=f"actions, wall s: medians; {spent}/run: mean; {spent}/correct: graded runs' {spent} / correct ones"
        + (" (every cost is $0)" if tokens else "") + ".",
        notices=tuple(one_arm_notices(figures)),
    )
