"""The report's figures as PNG bytes: cost vs accuracy, question x arm heatmap, actions per run; and
the leaderboard's accuracy vs spend across run sets.

Rendered with matplotlib's Agg backend (pinned: no display, same pixels everywhere) through
`Figure` objects, never pyplot's global state.
"""
from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass
from operator import attrgetter

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from armbench.analysis.report import ArmFigures
from armbench.analysis.summary import GroupSummary, graded, grouped, question_tallies, summarize
from armbench.types import RunRecord

ARM_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
MARKERS = "os^Dvp<>h*XPd"  # one per domain/set pair, repeating past thirteen


@dataclass(frozen=True)
class Plot:
    name: str  # file stem: plots/<name>.png
    title: str
    png: bytes
    note: str = ""  # what the figure leaves out, e.g. groups whose cost is unknown


def colours(arms: list[str]) -> dict[str, str]:
    """One colour per arm, the same in every figure of a run set."""
    return {arm: ARM_COLOURS[i % len(ARM_COLOURS)] for i, arm in enumerate(sorted(set(arms)))}


def to_png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def say(axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, wrap=True)
    axes.set_axis_off()


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points no other point beats on both cost (lower) and accuracy (higher), by cost."""
    front: list[tuple[float, float]] = []
    for cost, accuracy in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or accuracy > front[-1][1]:
            front.append((cost, accuracy))
    return front


def cost_accuracy(rows: list[GroupSummary]) -> Plot:
    """Each group's accuracy against its mean cost; when every known cost is $0 (a local or
    scripted model), against its mean tokens, which still tell the arms apart. Arms are colours,
    domain/set pairs markers; the legends sit outside the axes so no point is hidden."""
    title = "Cost vs accuracy"
    figure = Figure(figsize=(8.5, 4.5))
    axes = figure.add_subplot()
    shown = [r for r in rows if r.accuracy is not None and r.mean_cost_usd is not None]
    unknown = [f"{r.arm} {r.domain}/{r.set}" for r in rows if r.accuracy is not None and r.mean_cost_usd is None]
    notes = [f"Cost unknown, not plotted: {', '.join(unknown)}."] if unknown else []
    if not shown:
        say(axes, "No group has a known cost: nothing to plot.")
        return Plot("cost_accuracy", title, to_png(figure), " ".join(notes))
    by_tokens = all(r.mean_cost_usd == 0 for r in shown)
    if by_tokens:
        notes.append("Every cost is $0 (a local or scripted model), so x is mean tokens per task instead.")

    def x(row: GroupSummary) -> float:
        return (row.mean_tokens or 0.0) if by_tokens else row.mean_cost_usd

    palette = colours([r.arm for r in rows])
    sets = sorted({(r.domain, r.set) for r in shown})
    markers = {key: MARKERS[index % len(MARKERS)] for index, key in enumerate(sets)}
    for (domain, set_name), group in grouped(shown, attrgetter("domain", "set")):
        front = pareto_front([(x(r), r.accuracy) for r in group])
        if len(front) > 1:
            axes.plot(*zip(*front), linestyle="--", color="grey", linewidth=1, zorder=1)
        for row in group:
            colour = palette[row.arm]
            axes.errorbar(
                x(row), row.accuracy, yerr=[[row.accuracy - row.ci_low], [row.ci_high - row.accuracy]],
                fmt=markers[(domain, set_name)], color=colour, capsize=3, markersize=8, zorder=2,
                markerfacecolor=colour if (x(row), row.accuracy) in front else "white",
            )
    arms = [Line2D([], [], color=palette[arm], marker="o", linestyle="", label=arm)
            for arm in sorted({r.arm for r in shown})]
    pairs = [Line2D([], [], color="grey", marker=markers[key], linestyle="", label=f"{key[0]}/{key[1]}")
             for key in sets]
    axes.legend(handles=arms + pairs, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0,
                ncols=1 if len(arms + pairs) <= 16 else 2)
    axes.set_xlabel("mean tokens per task" if by_tokens else "mean cost per task (USD)")
    axes.set_ylabel("accuracy (Wilson 95% CI)")
    axes.set_ylim(-0.05, 1.05)
    right = max(max(x(r) for r in shown) * 1.1, 1e-4)
    axes.set_xlim(-0.03 * right, right)
    axes.grid(alpha=0.3)
    axes.set_title(f"{'Tokens' if by_tokens else 'Cost'} vs accuracy per set: filled = Pareto front, "
                   "hollow = dominated", fontsize=10)
    return Plot("cost_accuracy", title, to_png(figure), " ".join(notes))


def accuracy_spend(points: list[tuple[str, ArmFigures | None]], tokens: bool) -> Plot:
    """The leaderboard's rows, accuracy against mean cost (mean tokens when `tokens`: every cost $0)
    per run, labelled, the Pareto front dashed and filled. Rows without a graded run or a known
    cost are named in the note."""
    figure = Figure(figsize=(8, 4.5))
    axes = figure.add_subplot()

    def spend(arm: ArmFigures) -> float | None:
        return arm.mean_tokens if tokens else arm.mean_cost_usd

    shown = [(label, arm) for label, arm in points if arm is not None and spend(arm) is not None]
    missing = [label for label, arm in points if (label, arm) not in shown]
    note = f"Not plotted (no graded run or unknown cost): {', '.join(missing)}." if missing else ""
    if not shown:
        say(axes, "No row has a graded run with a known cost: nothing to plot.")
        return Plot("leaderboard", "Leaderboard: accuracy vs spend", to_png(figure), note)
    front = pareto_front([(spend(arm), arm.accuracy) for _, arm in shown])
    if len(front) > 1:
        axes.plot(*zip(*front), linestyle="--", color="grey", linewidth=1, zorder=1)
    for label, arm in shown:
        on_front = (spend(arm), arm.accuracy) in front
        axes.errorbar(spend(arm), arm.accuracy, yerr=[[arm.accuracy - arm.ci_low], [arm.ci_high - arm.accuracy]],
                      fmt="o", color=ARM_COLOURS[0], capsize=3, markersize=7, zorder=2,
                      markerfacecolor=ARM_COLOURS[0] if on_front else "white")
        axes.annotate(label, (spend(arm), arm.accuracy), xytext=(5, 5), textcoords="offset points", fontsize=8)
    axes.set_xlabel("mean tokens per run" if tokens else "mean cost per run (USD)")
    axes.set_ylabel("accuracy (Wilson 95% CI)")
    axes.set_ylim(-0.05, 1.05)
    axes.grid(alpha=0.3)
    axes.set_title("Accuracy vs spend: filled = Pareto front, hollow = dominated", fontsize=10)
    return Plot("leaderboard", "Leaderboard: accuracy vs spend", to_png(figure), note)


def text_colour(rgba: tuple[float, float, float, float]) -> str:
    """Black on light cells, white on dark ones (relative luminance)."""
    red, green, blue, _ = rgba
    return "black" if 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.45 else "white"


def question_heatmap(records: list[RunRecord]) -> Plot:
    arms = sorted({r.arm for r in records})
    questions = sorted({(r.domain, r.set, r.question_id) for r in records})
    figure = Figure(figsize=(2.2 + 1.3 * len(arms), 1.2 + 0.32 * max(len(questions), 1)))
    axes = figure.add_subplot()
    if not questions:
        say(axes, "No runs.")
        return Plot("question_heatmap", "Fraction correct per question and arm", to_png(figure))
    cells = question_tallies(records, ("domain", "set", "question_id", "arm"))
    grid = [[cells.get((*q, arm)) for arm in arms] for q in questions]
    values = [[float("nan") if c is None else c[0] / c[1] for c in row] for row in grid]
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#cccccc")
    image = axes.imshow(values, cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for i, row in enumerate(grid):
        for j, cell in enumerate(row):
            label = "no graded run" if cell is None else f"{cell[0]}/{cell[1]}"
            colour = "black" if cell is None else text_colour(cmap(values[i][j]))
            axes.text(j, i, label, ha="center", va="center", fontsize=8, color=colour)
    axes.set_xticks(range(len(arms)), arms)
    axes.set_yticks(range(len(questions)), [q[2] for q in questions], fontsize=8)
    axes.xaxis.tick_top()
    figure.colorbar(image, ax=axes, label="fraction correct", shrink=0.8)
    missing = sum(cell is None for row in grid for cell in row)
    note = f"{missing} cell(s) have no graded run (grey)." if missing else ""
    return Plot("question_heatmap", "Fraction correct per question and arm", to_png(figure), note)


def actions_histogram(records: list[RunRecord]) -> Plot:
    figure = Figure(figsize=(7, 3.8))
    axes = figure.add_subplot()
    done = graded(records)
    if not done:
        say(axes, "No graded runs.")
        return Plot("actions", "Actions per run", to_png(figure))
    arms = sorted({r.arm for r in done})
    palette = colours([r.arm for r in records])
    width = 0.8 / len(arms)
    for index, arm in enumerate(arms):
        counts = Counter(r.actions for r in done if r.arm == arm)
        xs = sorted(counts)
        axes.bar([x - 0.4 + width * (index + 0.5) for x in xs], [counts[x] for x in xs],
                 width=width, color=palette[arm], label=arm)
    axes.set_xlabel("actions (tool calls) in the run")
    axes.set_ylabel("runs")
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend()
    axes.set_title("Actions per run (graded runs)")
    return Plot("actions", "Actions per run", to_png(figure))


def all_plots(records: list[RunRecord]) -> list[Plot]:
    return [cost_accuracy(summarize(records)), question_heatmap(records), actions_histogram(records)]
