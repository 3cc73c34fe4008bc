"""Statistics against values computed by hand."""
import math

import pytest

from armbench.analysis.stats import bootstrap_ratio, mcnemar_exact, pass_at_k, pass_hat_k

# Four questions, three runs each, with 3, 2, 0 and 1 correct.
MATRIX = [(3, 3), (3, 2), (3, 0), (3, 1)]


def test_pass_at_k_codex_estimator():
    # n=3, c=1: pass@2 = 1 - C(2,2)/C(3,2) = 2/3; n=5, c=2: pass@3 = 1 - C(3,3)/C(5,3) = 9/10.
    assert pass_at_k([(3, 1)], 2) == pytest.approx(2 / 3)
    assert pass_at_k([(5, 2)], 3) == pytest.approx(0.9)
    # per question 1, 1, 0, 2/3 -> mean 2/3
    assert pass_at_k(MATRIX, 2) == pytest.approx((1 + 1 + 0 + 2 / 3) / 4)
    assert pass_at_k(MATRIX, 3) == pytest.approx(3 / 4)


def test_pass_hat_k_tau_bench():
    # C(c,2)/C(3,2) per question: 3/3, 1/3, 0, 0 -> mean 1/3; pass^3: only the 3/3 question.
    assert pass_hat_k(MATRIX, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(MATRIX, 3) == pytest.approx(1 / 4)


def test_pass_at_1_and_pass_hat_1_are_mean_accuracy():
    assert pass_at_k(MATRIX, 1) == pass_hat_k(MATRIX, 1) == pytest.approx(0.5)


def test_k_larger_than_the_runs_is_refused():
    with pytest.raises(ValueError):
        pass_at_k([(3, 1), (2, 2)], 3)


@pytest.mark.parametrize(
    "only_a,only_b,p",
    [
        (1, 6, 2 * (1 + 7) / 2**7),  # 0.125
        (0, 5, 2 / 2**5),  # 0.0625
        (0, 7, 2 / 2**7),  # 0.015625
        (2, 8, 2 * (1 + 10 + 45) / 2**10),  # 0.109375
        (4, 4, 1.0),
        (0, 0, 1.0),
    ],
)
def test_mcnemar_exact_two_sided(only_a, only_b, p):
    assert mcnemar_exact(only_a, only_b) == pytest.approx(p)
    assert mcnemar_exact(only_b, only_a) == pytest.approx(p)


def test_bootstrap_ratio_of_a_constant_ratio_has_no_spread():
    estimate = bootstrap_ratio([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    assert (estimate.value, estimate.low, estimate.high) == pytest.approx((2.0, 2.0, 2.0))


def test_bootstrap_ratio_is_the_ratio_of_means_and_reproducible():
    numerators, denominators = [1.0, 5.0, 2.0, 8.0], [2.0, 2.0, 4.0, 4.0]
    first = bootstrap_ratio(numerators, denominators)
    assert first.value == pytest.approx(16 / 12)
    assert first.low < first.value < first.high
    assert bootstrap_ratio(numerators, denominators) == first


def test_bootstrap_ratio_with_a_zero_denominator_is_undefined():
    assert bootstrap_ratio([1.0, 2.0], [0.0, 0.0]) is None
    assert bootstrap_ratio([], []) is None
    # some resamples draw only the zero-cost question; they are dropped, not infinite
    partly = bootstrap_ratio([1.0, 3.0], [0.0, 2.0])
    assert partly.value == 2.0 and math.isfinite(partly.high)
