"""`bench plan`: McNemar power against simulation, token and cost estimates, and the command itself."""
import json
import subprocess
import sys

import numpy as np
import pytest

from armbench.analysis.planning import (
    DEFAULT_TOKENS_PER_RUN,
    detectable_difference,
    pairs_needed,
    plan_spending,
    runs_needed,
)
from tests.support.run_sets import make_record


def simulated_mcnemar_power(pairs: int, difference: float, discordance: float, seed: int = 0) -> float:
    """Share of 20,000 simulated paired studies where McNemar's test (z = (b - c) / sqrt(b + c)) rejects
    at alpha 0.05 two-sided, when arm A alone is right in (psi + d) / 2 of pairs and B alone in (psi - d) / 2."""
    rng = np.random.default_rng(seed)
    only_a, only_b, _ = rng.multinomial(
        pairs, [(discordance + difference) / 2, (discordance - difference) / 2, 1 - discordance], size=20_000).T
    discordant = np.maximum(only_a + only_b, 1)
    return float(np.mean(np.abs(only_a - only_b) / np.sqrt(discordant) > 1.959963984540054))


def test_connors_sample_size_worked_by_hand():
    # (1.96 sqrt(0.2) + 0.8416 sqrt(0.2 - 0.01))^2 / 0.01 = 154.6
    assert pairs_needed(0.1, 0.2) == 155
    assert pairs_needed(0.2, 0.5) == 96  # (1.96 sqrt(0.5) + 0.8416 sqrt(0.46))^2 / 0.04 = 95.7


@pytest.mark.parametrize("difference, discordance", [(0.1, 0.2), (0.2, 0.5), (0.15, 0.3)])
def test_the_pairs_needed_give_80_percent_power_in_simulation(difference, discordance):
    pairs = pairs_needed(difference, discordance)
    assert simulated_mcnemar_power(pairs, difference, discordance) == pytest.approx(0.80, abs=0.025)
    assert simulated_mcnemar_power(pairs // 2, difference, discordance) < 0.7  # half as many fall short


def test_the_detectable_difference_inverts_the_pairs_needed():
    smallest = detectable_difference(402, 0.5)
    assert pairs_needed(smallest, 0.5) <= 402 < pairs_needed(smallest - 0.005, 0.5)
    assert detectable_difference(1, 0.5) is None  # no difference within the discordance is detectable
    assert runs_needed(0.2, questions=67, discordance=0.5) == 2  # 96 pairs / 67 questions


def test_a_difference_beyond_the_discordance_is_refused():
    with pytest.raises(ValueError, match="discordance"):
        pairs_needed(0.6, 0.5)


def test_tokens_and_cost_come_from_the_run_set_per_question_and_arm():
    records = [make_record(question_id="q1", arm="tooled", repeat=r, prompt_tokens=p, completion_tokens=c)
               for r, (p, c) in enumerate([(1000, 100), (3000, 300)])]
    records.append(make_record(question_id="q1", arm="browsing", prompt_tokens=10_000, completion_tokens=500))
    plan = plan_spending("m", ["q1", "q2"], ["browsing", "tooled"], runs=3, price=(1.0, 10.0),
                         records=records, token_source="test")
    browsing, tooled = plan.arms
    # q1 tooled: its mean 2000 + 200; q2, never run: the arm's mean over the run set, the same
    assert (tooled.runs, tooled.prompt_tokens, tooled.completion_tokens) == (6, 12_000, 1_200)
    assert tooled.cost_usd == pytest.approx((12_000 * 1 + 1_200 * 10) / 1e6)
    assert (browsing.prompt_tokens, browsing.observed_questions) == (60_000, 1)
    assert plan.total_runs == 12
    assert plan.cost_cap == pytest.approx(0.18)  # 0.114 x 1.5 = 0.171, up to the cent


def test_without_a_run_set_the_defaults_are_used_and_an_unpriced_model_has_no_cost():
    plan = plan_spending("m", ["q1"], ["tooled"], runs=2, price=None, records=None, token_source="defaults")
    (tooled,) = plan.arms
    assert tooled.prompt_tokens == 2 * DEFAULT_TOKENS_PER_RUN["tooled"].prompt
    assert tooled.cost_usd is None and plan.total_cost is None and plan.cost_cap is None
    assert plan.detectable_difference is None  # one arm: nothing to compare


def test_bench_plan_prints_runs_cost_and_power_and_runs_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a plan needs no credentials
    monkeypatch.setattr("armbench.paths.RESULTS_DIR", tmp_path / "results")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("plan", "--model", "openai/gpt-4o-mini", "--domain", "all", "--arm", "all",
                         "--set", "all", "--runs", "3", "--difference", "0.2")
    assert code == 0, err
    assert "x 2 arms x --runs 3 = " in out and "total" in out
    assert "$" in out and "--max-cost" in out
    assert "detectable difference: " in out and "McNemar" in out
    assert "a difference of 20.0% needs --runs" in out
    assert list(tmp_path.iterdir()) == []  # no results folder, nothing written
    assert max(len(line) for line in out.splitlines()) <= 80


def test_bench_plan_json_reads_tokens_from_a_run_set(cli, two_arm_run_set):
    code, out, err = cli("plan", "--model", "scripted/oracle", "--domain", "gpus", "--from",
                         str(two_arm_run_set.directory), "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["total_runs"] == 2 * plan["questions"]
    assert all(arm["observed_questions"] > 0 for arm in plan["arms"])
    assert plan["total_cost_usd"] == 0  # a scripted model is priced at $0


def test_bench_plan_refuses_a_difference_the_discordance_cannot_hold(cli):
    code, _, err = cli("plan", "--model", "scripted/oracle", "--difference", "0.7")
    assert code == 2 and "--discordance" in err


def test_a_plan_prices_a_litellm_model_without_loading_litellm():
    """LiteLLM takes seconds to import; a plan reads the cost map it would load instead."""
    code = ("import sys\nfrom armbench.api import plan_spending\n"
            "plan = plan_spending('openai/gpt-4o-mini', domains=['gpus'])\n"
            "print(plan.total_cost is not None and plan.total_cost > 0, 'litellm' in sys.modules)")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert ran.stdout.split() == ["True", "False"], ran.stderr


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "gpt-4o", "anthropic/claude-3-5-sonnet-20240620",
                                   "openai/no-such-model", "anthropic/gpt-4o", "mistral/mistral-large-latest"])
def test_the_cost_map_file_prices_as_litellm_does(model):
    import litellm

    from armbench.models.litellm_setup import configure_litellm
    from armbench.models.pricing import bundled_model_info

    configure_litellm()
    try:
        info = litellm.get_model_info(model)
        expected = info["input_cost_per_token"], info["output_cost_per_token"]
    except Exception:
        expected = None
    entry = bundled_model_info(model)
    assert (entry and (entry["input_cost_per_token"], entry["output_cost_per_token"])) == expected
