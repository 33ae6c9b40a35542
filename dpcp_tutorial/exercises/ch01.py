"""Checkers for the coding exercises of chapter 1 (conformal prediction)."""

from __future__ import annotations

import math

import numpy as np

from ..conformal import aps_prediction_set, conformal_quantile, conformal_rank
from ._common import ExerciseResult, run_safely

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
                "point gives 1-alpha slightly above its true value; round (n+1)(1-alpha) with a small tolerance "
                "or exact fractions before taking the ceiling")
    if math.isfinite(got) and not np.any(np.isclose(ordered, got, rtol=0, atol=0)):
        return (f"you returned {got:.6g}, which is not one of the scores: do not interpolate "
                "(np.quantile's default does); return the k-th smallest score itself")
    return f"for n={n}, alpha={alpha} expected {conformal_quantile(scores, alpha):.6g}, got {got!r}"


def check_conformal_quantile(fn) -> ExerciseResult:
    """Check a reader's ``fn(scores, alpha) -> float`` against the finite-sample quantile.

    Hidden cases cover ranks where (n+1)(1-alpha) is an integer, floating-point
    traps such as alpha=0.7, tiny n (infinite quantile), ties and unsorted input.
    """
    result = ExerciseResult("check_conformal_quantile")
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
        got = run_safely(result, fn, scores.copy(), alpha)
        if got is None:
            break
        expected = conformal_quantile(scores, alpha)
        try:
            ok = float(got) == expected
        except (TypeError, ValueError):
            ok = False
        if not ok:
            result.fail(_diagnose_quantile(scores, alpha, got))
    return result.report()


def check_aps_prediction_set(fn) -> ExerciseResult:
    """Check a reader's ``fn(proba, qhat) -> bool array (n, K)`` of APS sets.

    The expected set is ``{y : s_APS(x, y) <= qhat}`` with
    ``s_APS(x, y)`` the mass of the classes ranked at or above ``y``.
    """
    result = ExerciseResult("check_aps_prediction_set")
    rng = np.random.default_rng(7)
    proba = rng.dirichlet(np.full(5, 0.6), size=200)
    for qhat in [0.3, 0.8, 0.95]:
        got = run_safely(result, fn, proba.copy(), qhat)
        if got is None:
            break
        got = np.asarray(got)
        expected = aps_prediction_set(proba, qhat)
        if got.shape != expected.shape:
            result.fail(f"expected a boolean array of shape {expected.shape}, got shape {got.shape}")
            break
        got = got.astype(bool)
        if np.array_equal(got, expected):
            continue
        lac = (1 - proba) <= qhat
        if np.array_equal(got, lac):
            result.fail("your sets threshold 1 - p_y(x) (the LAC score); APS thresholds the cumulative mass of "
                        "the classes ranked at or above y")
        elif np.all(got >= expected) and np.array_equal(got.sum(1), np.minimum(expected.sum(1) + 1, 5)):
            result.fail("your sets add one class too many: you keep adding classes until the cumulative mass "
                        "exceeds qhat, which includes the first class whose APS score is above qhat")
        else:
            bad = int(np.argmax((got != expected).any(axis=1)))
            result.fail(f"for qhat={qhat}, row {bad} with probabilities {np.round(proba[bad], 3).tolist()} "
                        f"expected set {np.flatnonzero(expected[bad]).tolist()}, got {np.flatnonzero(got[bad]).tolist()}")
        break
    return result.report()
