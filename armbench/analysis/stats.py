"""Small-sample statistics for the report: intervals, pass@k, paired tests, bootstrap ratios.

Pure functions over plain numbers; nothing here knows about run records.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

Z_95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def wilson_interval(successes: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval: honest at the 5-question, 3-run sample sizes the study uses."""
    if total == 0:
        return (0.0, 1.0)
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half_width = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    # The interval always contains p; clamping to it only removes float error (1 - 1e-17 < p = 1).
    return (max(0.0, min(p, centre - half_width)), min(1.0, max(p, centre + half_width)))


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _check_k(counts: list[tuple[int, int]], k: int) -> None:
    if k < 1 or any(n < k or not 0 <= c <= n for n, c in counts):
        raise ValueError(f"k={k} needs 1 <= k <= n and 0 <= c <= n for every question")


def pass_at_k(counts: list[tuple[int, int]], k: int) -> float:
    """Chance that at least one of k runs is right, averaged over questions.

    `counts` holds (n runs, c correct) per question. The unbiased estimator of Chen et al. 2021
    (Codex): 1 - C(n-c, k) / C(n, k).
    """
    _check_k(counts, k)
    return statistics.fmean(1 - math.comb(n - c, k) / math.comb(n, k) for n, c in counts)


def pass_hat_k(counts: list[tuple[int, int]], k: int) -> float:
    """Chance that all of k runs are right, averaged over questions (tau-bench's pass^k).

    C(c, k) / C(n, k) per question: reliability, where pass@k is coverage.
    """
    _check_k(counts, k)
    return statistics.fmean(math.comb(c, k) / math.comb(n, k) for n, c in counts)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar (sign) test on the discordant pairs.

    Under the null each discordant pair is equally likely to favour either side, so the smaller
    count is Binomial(only_a + only_b, 1/2); p = min(1, 2 * P(X <= min)).
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2**n)


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float


def bootstrap_ratio(
    numerators: list[float],
    denominators: list[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Estimate | None:
    """sum(numerators) / sum(denominators) with a 95% percentile bootstrap interval.

    Entry i is one cluster (a question: its runs are not independent), and clusters are resampled
    with replacement. With the same clusters on both sides the ratio of sums is the ratio of
    means. None when the denominator sums to 0; resamples whose denominator is 0 are dropped.
    """
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    if len(num) != len(den):
        raise ValueError("numerators and denominators differ in length")
    if len(den) == 0 or den.sum() <= 0:
        return None
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(num), size=(resamples, len(num)))
    num_sums, den_sums = num[picks].sum(axis=1), den[picks].sum(axis=1)
    defined = den_sums > 0
    low, high = np.percentile(num_sums[defined] / den_sums[defined], [2.5, 97.5])
    return Estimate(float(num.sum() / den.sum()), float(low), float(high))
