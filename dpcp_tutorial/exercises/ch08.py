"""Checkers for the coding exercises of chapter 8 (troubleshooting)."""

from __future__ import annotations

import math

import numpy as np

from ..private_split import bounded_interval
from ._common import array, checker, integer

__all__ = ["check_bounded_interval", "check_smallest_n"]


@checker(function="my_interval", exercise="ex-08-code-interval")
def check_bounded_interval(ctx) -> None:
    """Check a reader's ``my_interval(y_pred, qhat, bound) -> array (n, 2)`` (chapter 8).

    The intervals (lower and upper ends per prediction) must be those that a
    threshold on scores normalised by the public bound gives, for three
    thresholds up to and including the top edge 1.
    """
    y_pred = np.array([-1.0, 0.0, 2.5])
    for qhat, bound in [(0.2, 3.0), (0.5, 0.1), (1.0, 2.0)]:
        expected = bounded_interval(y_pred, qhat, bound)
        got = ctx.call(y_pred.copy(), qhat, bound, returns=array(expected.shape, allow_inf=True,
                                                                 what="lower and upper end per prediction"),
                       case=f"qhat={qhat}, bound={bound}")
        if np.array_equal(got, expected):
            continue
        if qhat < 1 and np.allclose(got, np.column_stack([y_pred - qhat, y_pred + qhat])):
            ctx.fail("you used qhat itself as the half-width, but qhat is a threshold on normalised scores; "
                     "convert it back to the scale of y (DPCP write-up error D7 in the book's appendix)")
        elif qhat == 1 and np.all(np.isfinite(got)):
            ctx.fail("qhat = 1 is the top edge of *clipped* scores: every residual is admitted, so a finite "
                     "interval is wrong here")
        else:
            ctx.fail(f"for qhat={qhat}, bound={bound} expected {expected.tolist()}, got {got.tolist()}")
        break


def _smallest_n(alpha, eps1, eps2, delta) -> int:
    alpha1 = math.exp(-eps1) * (alpha - delta)
    return math.floor(2.0 / (alpha1 * eps2)) + 1


@checker(function="smallest_n", exercise="ex-08-code-n")
def check_smallest_n(ctx) -> None:
    """Check a reader's ``smallest_n(alpha, epsilon1, epsilon2, delta) -> int``: the smallest n for which DPCP is feasible.

    Feasible means that Algorithm 1's level alpha0 is strictly positive (chapter 6); four hidden cases.
    """
    cases = [(0.1, 0.1, 0.9, 1e-5), (0.1, 4.0, 1.0, 1e-5), (0.1, 1.0, 1.0, 1e-5), (0.2, 0.5, 0.4, 1e-3)]
    for alpha, eps1, eps2, delta in cases:
        case = f"alpha={alpha}, eps1={eps1:.4g}, eps2={eps2}, delta={delta}"
        got = ctx.call(alpha, eps1, eps2, delta, returns=integer(), case=case)
        expected = _smallest_n(alpha, eps1, eps2, delta)
        if got == expected:
            continue
        if got in (_smallest_n(alpha, eps1 + eps2, eps2, delta), _smallest_n(alpha, eps1, eps1 + eps2, delta)):
            ctx.fail(f"{case}: alpha1 uses epsilon1 (training) and the shift uses epsilon2 (quantile); "
                     "do not mix in the total")
        elif got == _smallest_n(alpha, eps1, eps2, 0.0):
            ctx.fail(f"{case}: delta is missing from alpha1")
        elif got == expected - 1:
            ctx.fail(f"{case}: off by one: at your n, alpha0 is not yet strictly positive")
        else:
            ctx.fail(f"{case}: your n={got} is too {'small' if got < expected else 'large'}")
        break
