"""`bench regress`: fails beyond the baseline's noise, on cost/tokens/actions rises and divergences."""
from armbench.analysis.regress import Thresholds, regress
from armbench.engine.store import RunSetStore
from tests.support.run_sets import make_manifest, make_record


def runs(correct: int, total: int = 10, arm: str = "tooled", **fields) -> list:
    return [
        make_record(question_id=f"q{i}", arm=arm, correct=i < correct,
                    outcome="fully_correct" if i < correct else "fully_incorrect", **fields)
        for i in range(total)
    ]


def test_the_same_results_pass():
    verdict = regress(runs(8), runs(8))
    assert verdict.ok and verdict.problems == [] and verdict.flips == []


def test_a_drop_within_the_baselines_noise_passes_and_its_flips_are_listed():
    verdict = regress(runs(8), runs(6))  # Wilson lower bound of 8/10 is 49%
    assert verdict.ok
    assert [d.unit[3] for d in verdict.flips] == ["q6", "q7"]


def test_a_drop_below_the_baselines_lower_bound_fails():
    verdict = regress(runs(8), runs(4))
    assert verdict.problems == [
        "gpus/design/tooled: accuracy 40% is below the baseline's 95% lower bound 49% (baseline 8/10)"
    ]


def test_more_repeats_in_the_baseline_tighten_the_floor():
    wide = regress(runs(8), runs(6))
    tight = regress(runs(80, total=100), runs(60, total=100))
    assert wide.ok and not tight.ok


def test_rises_in_cost_tokens_and_actions_fail_beyond_their_thresholds():
    baseline = runs(8, cost_usd=0.010, prompt_tokens=1000, actions=4)
    assert regress(baseline, runs(8, cost_usd=0.012, prompt_tokens=1100, actions=5)).ok
    verdict = regress(baseline, runs(8, cost_usd=0.020, prompt_tokens=2000, actions=9))
    assert [p.split(" rose")[0] for p in verdict.problems] == [
        "gpus/design/tooled: mean cost", "gpus/design/tooled: mean tokens", "gpus/design/tooled: mean actions"]
    assert regress(baseline, runs(8, cost_usd=0.020), Thresholds(max_cost_rise=1.5)).ok


def test_a_free_baseline_is_not_judged_on_cost_and_zero_actions_still_compare():
    baseline = runs(5, cost_usd=0.0, actions=0)
    assert regress(baseline, runs(5, cost_usd=0.0, actions=1)).ok  # +1 call on a floor of one
    assert not regress(baseline, runs(5, cost_usd=0.0, actions=2)).ok


def test_any_divergence_fails_and_names_the_run_and_step():
    candidate = runs(8)
    candidate[3] = candidate[3].model_copy(update={"replay_divergence": "step 2: the result of gpu_query differs"})
    verdict = regress(runs(8), candidate)
    assert verdict.divergences == [("q3.tooled.r0", "step 2: the result of gpu_query differs")]
    assert verdict.problems == ["1 replayed run(s) diverged from the recording"]


def test_a_group_the_candidate_did_not_run_fails_and_an_extra_one_is_a_note():
    verdict = regress(runs(8) + runs(5, arm="browsing"), runs(8) + runs(5, arm="other"))
    assert verdict.problems == ["gpus/design/browsing: not run by the candidate"]
    assert verdict.notes == ["gpus/design/other: in the candidate only, not checked"]


def write_set(directory, records) -> RunSetStore:
    store = RunSetStore(directory)
    store.create(make_manifest())
    for record in records:
        store.append(record)
    return store


def test_the_command_exits_0_or_1_with_a_one_screen_summary(cli, tmp_path):
    baseline = write_set(tmp_path / "base", runs(8))
    good = write_set(tmp_path / "good", runs(8))
    bad = write_set(tmp_path / "bad", runs(2))
    code, out, _ = cli("regress", "--baseline", str(baseline.directory), str(good.directory))
    assert code == 0 and "OK: no regression" in out
    code, out, _ = cli("regress", "--baseline", str(baseline.directory), str(bad.directory))
    assert code == 1 and "REGRESSION gpus/design/tooled: accuracy 20%" in out
    assert "Per-question flips" in out and len(out.splitlines()) < 60


def test_the_command_refuses_a_folder_that_is_not_a_run_set(cli, tmp_path):
    code, _, err = cli("regress", "--baseline", str(tmp_path), str(tmp_path))
    assert code == 2 and "is not a run set" in err


def test_more_infra_errors_than_the_baseline_fail_even_when_the_rest_is_right():
    candidate = runs(10)
    for index in range(7):
        candidate[index] = candidate[index].model_copy(update={"correct": None, "outcome": None, "error_kind": "infra"})
    verdict = regress(runs(10), candidate)  # 3/3 graded looks perfect
    assert verdict.problems == ["gpus/design/tooled: 7 infra error(s), baseline 0"]


def test_in_a_replay_any_flip_fails_even_within_the_noise():
    assert regress(runs(8), runs(7)).ok
    verdict = regress(runs(8), runs(7), exact=True)
    assert verdict.problems == ["1 question(s) flipped in a replay, which should reproduce every grade"]


def test_the_table_shows_no_change_where_nothing_changed_even_at_zero_actions():
    from armbench.analysis.regress import groups_table

    table = groups_table(regress(runs(0, actions=0, cost_usd=0.0), runs(0, actions=0, cost_usd=0.0)))
    (row,) = table.rows
    assert row[5:8] == ["+0%", "+0%", "+0%"] and row[-1] == "ok"
