"""Paired arm comparison and run-set comparison, on the two-arm fixture (see test_report.py)."""
import pytest

from armbench.analysis.compare import (
    ARM_UNIT,
    arm_tables,
    compare,
    compare_arms,
    compare_run_sets,
    manifest_differences,
    run_set_labels,
)
from armbench.analysis.tables import to_markdown
from armbench.web_profile import load_profile
from tests.support.run_sets import make_record


def test_arms_pair_on_question_and_repeat(two_arm_run_set):
    [comparison] = compare_arms(two_arm_run_set.records())
    assert (comparison.a, comparison.b) == ("browsing", "tooled")
    paired = {p.group: p for p in comparison.paired}
    assert list(paired) == ["gpus/design", "gpus/heldout", "all"]
    # heldout: 15 pairs less the tooled infra error; browsing misses 3 of them, tooled none
    heldout = paired["gpus/heldout"]
    assert (heldout.pairs, heldout.questions, heldout.only_a, heldout.only_b) == (14, 5, 0, 3)
    assert heldout.accuracy_a == pytest.approx(11 / 14) and heldout.accuracy_b == 1.0
    assert heldout.p_value == pytest.approx(2 / 2**3)
    assert paired["gpus/design"].p_value == pytest.approx(2 / 2**4)
    everything = paired["all"]
    assert (everything.pairs, everything.only_a, everything.only_b) == (29, 0, 7)
    assert everything.p_value == pytest.approx(2 / 2**7)
    assert everything.delta == pytest.approx(1 - 22 / 29)


def test_cost_and_action_ratios_are_b_over_a_of_the_means(two_arm_run_set):
    [comparison] = compare_arms(two_arm_run_set.records())
    design = comparison.paired[0]
    # browsing design: question 0 three times at $0.03, the other 12 runs at $0.014; tooled $0.0011 each
    assert design.cost_ratio.value == pytest.approx(15 * 0.0011 / (3 * 0.03 + 12 * 0.014))
    assert design.cost_ratio.low <= design.cost_ratio.value <= design.cost_ratio.high
    # actions: browsing 24 x 3 for question 0, then 10 + i; tooled 1 + i % 2
    browsing = 3 * (24 + 11 + 12 + 13 + 14)
    tooled = 3 * (1 + 2 + 1 + 2 + 1)
    assert design.action_ratio.value == pytest.approx(tooled / browsing)
    runs = [r for r in two_arm_run_set.records() if r.set == "design" and r.correct is not None]
    tokens = {arm: sum(r.prompt_tokens + r.completion_tokens for r in runs if r.arm == arm) for arm in ("browsing", "tooled")}
    assert design.token_ratio.value == pytest.approx(tokens["tooled"] / tokens["browsing"])


def test_per_question_deltas_name_the_questions_that_differ(two_arm_run_set):
    [comparison] = compare_arms(two_arm_run_set.records())
    flips = {d.unit[2]: (d.correct_a, d.graded_a, d.correct_b, d.graded_b) for d in comparison.flips}
    assert flips == {
        "gpus-design-01": (0, 3, 3, 3),
        "gpus-design-02": (2, 3, 3, 3),
        "gpus-heldout-01": (0, 3, 3, 3),
    }
    assert len(comparison.deltas) == 10


def test_any_two_arm_names_compare_in_name_order():
    records = [
        make_record(question_id=f"q{i}", arm=arm, correct=(arm == "zeta" or i == 0), repeat=0)
        for i in range(4) for arm in ("zeta", "alpha")
    ]
    [comparison] = compare_arms(records)
    assert (comparison.a, comparison.b) == ("alpha", "zeta")
    assert (comparison.paired[0].only_a, comparison.paired[0].only_b) == (0, 3)


def test_one_arm_has_nothing_to_compare():
    assert compare_arms([make_record()]) == []
    assert arm_tables([make_record()]) == []


def test_unknown_or_zero_cost_makes_no_ratio():
    a = [make_record(arm="a", cost_usd=None), make_record(arm="a", question_id="r", cost_usd=0.01)]
    b = [make_record(arm="b", cost_usd=0.02), make_record(arm="b", question_id="r", cost_usd=0.01)]
    [paired] = compare(a, b, "a", "b", ARM_UNIT).paired
    assert not paired.cost_known and paired.cost_ratio is None
    free = [r.model_copy(update={"cost_usd": 0.0}) for r in a]
    [paired] = compare(free, b, "a", "b", ARM_UNIT).paired
    assert paired.cost_known and paired.cost_ratio is None
    [table, _] = arm_tables(free + b)
    assert "undefined (a cost $0)" in to_markdown(table)


def test_run_sets_compare_per_set_and_name_flips(two_arm_run_set):
    before = two_arm_run_set.records()
    fixed = {"gpus-design-01", "gpus-heldout-01"}
    after = [
        r.model_copy(update={"correct": True}) if r.question_id in fixed and r.arm == "browsing" and r.repeat < 2
        else r.model_copy(update={"correct": False}) if r.question_id == "gpus-design-03" and r.arm == "tooled"
        else r
        for r in before
    ]
    result = compare_run_sets(before, after, "before", "after")
    deltas = {(d.set, d.arm): d for d in result.set_deltas}
    assert deltas["design", "browsing"].delta == pytest.approx(2 / 15)
    assert deltas["design", "tooled"].delta == pytest.approx(-3 / 15)
    flips = {(d.unit[2], d.unit[3]): d.delta for d in result.comparison.flips}
    assert flips == pytest.approx({
        ("browsing", "gpus-design-01"): 2 / 3,
        ("browsing", "gpus-heldout-01"): 2 / 3,
        ("tooled", "gpus-design-03"): -1.0,
    })
    paired = {p.group: p for p in result.comparison.paired}
    assert (paired["all"].only_a, paired["all"].only_b) == (3, 4)
    text = "".join(map(to_markdown, result.tables()))
    assert "| gpus | design | tooled | gpus-design-03 | 3/3 | 0/3 | -100 pp | worse |" in text


def test_questions_on_one_side_only_are_counted_not_compared():
    a = [make_record(question_id="q1"), make_record(question_id="q2")]
    b = [make_record(question_id="q1"), make_record(question_id="q3"), make_record(question_id="q4")]
    result = compare_run_sets(a, b, "A", "B")
    assert (result.comparison.only_in_a, result.comparison.only_in_b) == (1, 2)
    assert "1 question(s) only in A, 2 only in B" in to_markdown(result.tables()[1])


def test_manifest_differences_name_what_changed():
    a = {"model": "x", "question_sets": {"gpus/design": "1"}, "tool_manifests": {"tooled/gpus": "t1"},
         "data_hash": "d", "prompt_hash": "p"}
    b = {**a, "model": "y", "tool_manifests": {"tooled/gpus": "t2"}}
    runs = [make_record()]
    assert manifest_differences(a, a, runs, runs) == []
    assert manifest_differences(a, b, runs, runs) == ["tool manifest tooled/gpus differs"]
    real = {**a, "config": {"web": load_profile("real").model_dump(mode="json")}}
    assert manifest_differences(a, real, runs, runs) == ["web conditions differ (--web): 'kind' vs 'real'"]
    reseeded = {**a, "config": {"web": load_profile("real").model_copy(update={"seed": 3}).model_dump(mode="json")}}
    assert manifest_differences(real, reseeded, runs, runs) == ["web conditions differ (--web): 'real' with other seed"]


def test_data_and_prompt_differ_only_where_both_run_sets_ran_the_domain():
    """Run sets of other domains carry other set-level hashes; the domains they share are compared."""
    a = [make_record(domain="gpus"), make_record(domain="funds", question_id="f", data_hash="f1")]
    b = [make_record(domain="gpus"), make_record(domain="nba", question_id="n", data_hash="n1", prompt_hash="n")]
    assert manifest_differences({"data_hash": "x"}, {"data_hash": "y"}, a, b) == []
    changed = [make_record(domain="gpus", data_hash="c2", prompt_hash="d2")]
    assert manifest_differences({}, {}, a, changed) == ["replica data of gpus differs", "system prompt of gpus differs"]


def test_two_run_sets_of_other_web_profiles_are_labelled_with_them(tmp_path):
    assert run_set_labels(tmp_path / "a", tmp_path / "b", "kind", "kind") == ("a", "b")
    assert run_set_labels(tmp_path / "x" / "r", tmp_path / "y" / "r", "kind", "kind") == ("A", "B")
    assert run_set_labels(tmp_path / "a", tmp_path / "b", "kind", "real") == ("kind", "real")
