"""Plots render to PNG for any run set, including ones with unknown costs or no graded runs."""
from armbench.analysis.plots import all_plots, cost_accuracy, pareto_front
from armbench.analysis.report import summarize
from tests.support.run_sets import make_record

PNG = b"\x89PNG\r\n\x1a\n"


def size(png: bytes) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_three_plots_from_a_two_arm_run_set(two_arm_run_set):
    plots = all_plots(two_arm_run_set.records())
    assert [p.name for p in plots] == ["cost_accuracy", "question_heatmap", "actions"]
    for plot in plots:
        assert plot.png.startswith(PNG)
        width, height = size(plot.png)
        assert width > 300 and height > 200


def test_unknown_cost_is_a_note_not_a_crash():
    records = [make_record(arm="tooled", cost_usd=0.001), make_record(arm="browsing", cost_usd=None)]
    plot = cost_accuracy(summarize(records))
    assert plot.png.startswith(PNG)
    assert plot.note == "Cost unknown, not plotted: browsing gpus/design."
    nothing_priced = cost_accuracy(summarize([make_record(cost_usd=None)]))
    assert nothing_priced.png.startswith(PNG) and "unknown" in nothing_priced.note


def test_runs_that_were_never_graded_still_plot():
    infra = make_record(correct=None, outcome=None, stop_reason="infra_error", actions=0, actions_by_tool={})
    assert all(p.png.startswith(PNG) for p in all_plots([infra]))
    assert all(p.png.startswith(PNG) for p in all_plots([]))


def test_pareto_front_keeps_points_nothing_beats():
    points = [(0.01, 0.8), (0.001, 1.0), (0.02, 0.9), (0.001, 0.5)]
    assert pareto_front(points) == [(0.001, 1.0)]
    assert pareto_front([(0.001, 0.6), (0.01, 0.9), (0.02, 0.8)]) == [(0.001, 0.6), (0.01, 0.9)]


def test_more_domain_set_pairs_than_markers_plot_and_zero_costs_plot_tokens():
    """Ten domains x two sets x two arms (the oracle over everything) once raised a KeyError."""
    records = [make_record(domain=f"d{i}", set=set_name, arm=arm, question_id=f"d{i}-{set_name}", cost_usd=0.0,
                           prompt_tokens=1000 * (i + 1) if arm == "browsing" else 500)
               for i in range(10) for set_name in ("design", "heldout") for arm in ("browsing", "tooled")]
    plot = cost_accuracy(summarize(records))
    assert plot.png.startswith(PNG)
    assert "x is mean tokens per task" in plot.note
    width, _ = size(plot.png)
    assert width > 850  # the legends sit beside the axes, not on the points
    priced = cost_accuracy(summarize([make_record(arm="tooled", cost_usd=0.002)]))
    assert "tokens" not in priced.note
