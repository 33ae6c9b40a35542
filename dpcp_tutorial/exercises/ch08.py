"""Checkers for the coding exercises of chapter 8 (troubleshooting)."""

from __future__ import annotations

import math

import numpy as np

from ..private_split import bounded_interval
from ._common import ExerciseResult, run_safely

__all__ = ["check_bounded_interval", "check_smallest_n"]


def check_bounded_interval(fn) -> ExerciseResult:
    """Check a reader's ``fn(y_pred, qhat, bound) -> array (n, 2)``: a threshold on [0, 1] scores as intervals."""
    result = ExerciseResult("check_bounded_interval")
    y_pred = np.array([-1.0, 0.0, 2.5])
    for qhat, bound in [(0.2, 3.0), (0.5, 0.1), (1.0, 2.0)]:
        got = run_safely(result, fn, y_pred.copy(), qhat, bound)
        if got is None:
            break
        got = np.asarray(got, dtype=float)
        expected = bounded_interval(y_pred, qhat, bound)
        if got.shape != expected.shape:
            result.fail(f"return an array of shape (n, 2) with lower and upper ends, got shape {got.shape}")
            break
        if np.array_equal(got, expected):
            continue
        if qhat < 1 and np.allclose(got, np.column_stack([y_pred - qhat, y_pred + qhat])):
            result.fail("the threshold lives on the normalised scale: the half-width is B * qhat, not qhat "
                        "(seed error S7)")
        elif qhat == 1 and np.all(np.isfinite(got)):
            result.fail("qhat = 1 is the top edge of *clipped* scores: every residual is admitted, so the interval is "
                        "(-inf, inf), not mu +- B")
        else:
            result.fail(f"for qhat={qhat}, bound={bound} expected {expected.tolist()}, got {got.tolist()}")
        break
    return result.report()


def _smallest_n(alpha, eps1, eps2, delta) -> int:
    alpha1 = math.exp(-eps1) * (alpha - delta)
    return math.floor(2.0 / (alpha1 * eps2)) + 1


def check_smallest_n(fn) -> ExerciseResult:
    """Check a reader's ``fn(alpha, epsilon1, epsilon2, delta) -> int``: the smallest n for which DPCP is feasible.

    Feasible means :math:`e^{-\\varepsilon_1}(\\alpha-\\delta) > 2/(n\\varepsilon_2)` (strictly).
    """
    result = ExerciseResult("check_smallest_n")
    cases = [(0.1, 0.1, 0.9, 1e-5), (0.1, 4.0, 1.0, 1e-5), (0.1, 1.0, 1.0, 1e-5), (0.2, 0.5, 0.4, 1e-3)]
    for alpha, eps1, eps2, delta in cases:
        got = run_safely(result, fn, alpha, eps1, eps2, delta)
        if got is None:
            break
        expected = _smallest_n(alpha, eps1, eps2, delta)
        if got == expected:
            continue
        if got in (_smallest_n(alpha, eps1 + eps2, eps2, delta), _smallest_n(alpha, eps1, eps1 + eps2, delta)):
            result.fail("alpha1 uses epsilon1 (training) and the shift uses epsilon2 (quantile); "
                        "do not mix in the total")
        elif got == _smallest_n(alpha, eps1, eps2, 0.0):
            result.fail("alpha1 = e^-eps1 (alpha - delta): delta is missing")
        elif got == expected - 1:
            result.fail("off by one: the condition alpha1 > 2/(n eps2) is strict, so n must exceed 2/(alpha1 eps2)")
        else:
            result.fail(f"for alpha={alpha}, eps1={eps1:.4g}, eps2={eps2}, delta={delta} expected n={expected}, "
                        f"got {got!r}")
        break
    return result.report()
