"""Statistical tests the checkers of randomised releases share (they run only in the checking process).

Every test fails a correct release with probability at most :data:`P_MIN` (about one in ten million), so
that a reader whose answer is right never sees a spurious failure, while the numbers of draws the checkers
use make the tests reject the wrong answers their feedback names with near certainty (the tests of
``tests/test_exercises_*.py`` prove it on those wrong answers).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

P_MIN = 1e-7
"""A goodness-of-fit test fails below this p-value."""

Z = 5.5
"""Standard errors of tolerance of a z-test (two-sided p about 4e-8)."""


def goodness_of_fit(draws: np.ndarray, probabilities: np.ndarray) -> tuple[float, str]:
    """Chi-square test of integer draws in ``0..K-1`` against the exact ``probabilities``.

    Cells with expected counts below 5 are pooled. Returns ``(p_value, problem)``: ``problem`` is non-empty
    when a draw is outside ``0..K-1`` or has probability zero (then ``p_value`` is 0).
    """
    draws = np.asarray(draws)
    probabilities = np.asarray(probabilities, dtype=float)
    k = probabilities.size
    if draws.size == 0:
        return 1.0, ""
    if draws.min() < 0 or draws.max() >= k:
        return 0.0, "out of range"
    counts = np.bincount(draws.astype(np.int64), minlength=k).astype(float)
    if np.any(counts[probabilities <= 0] > 0):
        return 0.0, "impossible"
    expected = probabilities * draws.size
    keep = expected >= 5
    pooled_expected = list(expected[keep])
    pooled_counts = list(counts[keep])
    rest_e, rest_c = expected[~keep].sum(), counts[~keep].sum()
    if rest_e > 0:
        if rest_e >= 5 or not pooled_expected:
            pooled_expected.append(rest_e)
            pooled_counts.append(rest_c)
        else:   # merge the small remainder into the smallest kept cell
            j = int(np.argmin(pooled_expected))
            pooled_expected[j] += rest_e
            pooled_counts[j] += rest_c
    e = np.array(pooled_expected)
    c = np.array(pooled_counts)
    if e.size < 2:
        return 1.0, ""
    statistic = float(np.sum((c - e) ** 2 / e))
    return float(stats.chi2.sf(statistic, e.size - 1)), ""


def two_sample_discrete(a: np.ndarray, b: np.ndarray) -> float:
    """p-value of a chi-square test that two samples of integer codes come from one law."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    values = np.union1d(a, b)
    table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]], dtype=float)
    expected = table.sum(axis=0)
    # pool rare categories
    rare = expected < 10
    if rare.any():
        table = np.column_stack([table[:, ~rare], table[:, rare].sum(axis=1)])
        table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0
    return float(stats.chi2_contingency(table, correction=False).pvalue)


def binomial_upper(p_hat: float, trials: int, z: float = Z) -> float:
    """An upper confidence bound ``p_hat + z * SE`` with the SE at ``max(p_hat, 1/trials)``."""
    p = min(max(p_hat, 1.0 / trials), 1 - 1.0 / trials)
    return p_hat + z * math.sqrt(p * (1 - p) / trials)
