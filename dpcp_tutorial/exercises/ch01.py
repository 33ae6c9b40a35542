"""Checkers for the coding exercises of chapter 1 (conformal prediction)."""

from __future__ import annotations

import math

import numpy as np

from ..conformal import aps_prediction_set, conformal_quantile, conformal_rank
from ._common import array, checker, number

__all__ = ["check_conformal_quantile", "check_aps_prediction_set"]


def _diagnose_quantile(scores: np.ndarray, alpha: float, got: float) -> str:
    """Name the typical mistake that produces ``got``."""
    n = scores.size
    ordered = np.sort(scores)
    k = conformal_rank(n, alpha)
    naive_k = math.ceil(n * (1 - alpha))
    if k > n and math.isfinite(got):
        return (f"with n={n} and alpha={alpha} the rank ceil((n+1)(1-alpha))={k} exceeds n, so the quantile must be "
                f"infinite (the set is the whole space); you returned {got:.6g}")
    if 1 <= naive_k <= n and got == ordered[naive_k - 1] and naive_k != k:
        return (f"your quantile uses rank ceil(n(1-alpha))={naive_k}; expected ceil((n+1)(1-alpha))={k} "
                "(the +1 accounts for the test point)")
    float_k = math.ceil((n + 1) * (1 - alpha))
    if float_k != k and 1 <= float_k <= n and got == ordered[float_k - 1]:
        return (f"for n={n}, alpha={alpha} you used rank {float_k} but (n+1)(1-alpha) is exactly {k}: floating "
                "point gives 1-alpha slightly above its true value; compute the rank exactly")
    if math.isfinite(got) and not np.any(np.isclose(ordered, got, rtol=0, atol=0)):
        return (f"you returned {got:.6g}, which is not one of the scores: do not interpolate "
                "(np.quantile's default does); return the k-th smallest score itself")
    return f"for n={n}, alpha={alpha} expected {conformal_quantile(scores, alpha):.6g}, got {got!r}"


@checker(function="my_quantile", exercise="ex-01-code-quantile")
def check_conformal_quantile(ctx) -> None:
    """Check a reader's ``fn(scores, alpha) -> float`` against the finite-sample split-conformal quantile.

    Hidden cases cover ranks where (n+1)(1-alpha) is an integer, floating-point
    traps, tiny n (infinite quantile), ties and unsorted input.
    """
    rng = np.random.default_rng(2024)
    cases = [
        (rng.exponential(size=9), 0.7),     # float trap: 10 * (1 - 0.7) = 3.0000000000000004
        (rng.exponential(size=19), 0.1),    # (n+1)(1-alpha) = 18 exactly
        (rng.exponential(size=100), 0.1),
        (rng.exponential(size=8), 0.1),     # rank 9 > n: infinite
        (rng.uniform(size=1000), 0.05),
        (np.array([3.0, 1.0, 2.0, 2.0, 2.0, 5.0]), 0.4),   # ties, unsorted
    ]
    for scores, alpha in cases:
        got = ctx.call(scores.copy(), alpha, returns=number(allow_inf=True), case=f"n={scores.size}, alpha={alpha}")
        if got != conformal_quantile(scores, alpha):
            ctx.fail(_diagnose_quantile(scores, alpha, got))


@checker(function="my_aps_sets", exercise="ex-01-code-aps")
def check_aps_prediction_set(ctx) -> None:
    """Check a reader's ``fn(proba, qhat) -> bool array (n, K)`` of APS prediction sets (chapter 1).

    Three thresholds on 200 rows of five-class probabilities; the output must be a
    boolean array with one row per example and one column per class.
    """
    rng = np.random.default_rng(7)
    proba = rng.dirichlet(np.full(5, 0.6), size=200)
    for qhat in [0.3, 0.8, 0.95]:
        expected = aps_prediction_set(proba, qhat)
        got = ctx.call(proba.copy(), qhat, returns=array(expected.shape, dtype=bool, what="one row per example, "
                                                         "one column per class"), case=f"qhat={qhat}")
        if np.array_equal(got, expected):
            continue
        lac = (1 - proba) <= qhat
        if np.array_equal(got, lac):
            ctx.fail("your sets threshold 1 - p_y(x) (the LAC score); APS thresholds the cumulative mass of "
                     "the classes ranked at or above y")
        elif np.all(got >= expected) and np.array_equal(got.sum(1), np.minimum(expected.sum(1) + 1, 5)):
            ctx.fail("your sets add one class too many: the last class you add already has an APS score "
                     "above qhat")
        else:
            bad = int(np.argmax((got != expected).any(axis=1)))
            ctx.fail(f"for qhat={qhat}, row {bad} with probabilities {np.round(proba[bad], 3).tolist()} "
                     f"expected set {np.flatnonzero(expected[bad]).tolist()}, got {np.flatnonzero(got[bad]).tolist()}")
        break
