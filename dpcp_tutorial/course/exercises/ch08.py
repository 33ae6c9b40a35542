"""Checkers for the coding exercises of chapter 8 (troubleshooting)."""

from __future__ import annotations

import math

import numpy as np

from ...private_split import bounded_interval
from ._common import Case, array, checker, integer

__all__ = ["check_bounded_interval", "check_smallest_n"]


def _interval_cases(rng: np.random.Generator) -> list[Case]:
    y_pred = np.round(rng.normal(size=3) * 2, 2)
    return [
        Case("a threshold below 1", "qhat=0.2, bound=3", y_pred=y_pred, qhat=0.2, bound=3.0),
        Case("a small bound", "qhat=0.5, bound=0.1", y_pred=y_pred, qhat=0.5, bound=0.1),
        Case("the top edge qhat = 1", "qhat=1, bound=2", y_pred=y_pred, qhat=1.0, bound=2.0),
        Case("many predictions", "qhat=0.35, bound=5", y_pred=rng.normal(size=100), qhat=0.35, bound=5.0),
    ]


@checker(function="my_interval", exercise="ex-08-code-interval", cases=_interval_cases,
         implements=("dpcp_tutorial.private_split.bounded_interval",))
def check_bounded_interval(ctx, case) -> None:
    """Check a reader's ``my_interval(y_pred, qhat, bound) -> array (n, 2)`` (chapter 8).

    The intervals (lower and upper ends per prediction) must be those that a
    threshold on scores normalised by the public bound gives: :math:`\\hat\\mu \\pm B\\hat q`, and the whole
    line when :math:`\\hat q = 1`. Four cases, the top edge 1 included.
    """
    y_pred, qhat, bound = case.y_pred, case.qhat, case.bound
    expected = bounded_interval(y_pred, qhat, bound)
    got = ctx.call(y_pred, qhat, bound, inputs=True,
                   returns=array(expected.shape, allow_inf=True, what="lower and upper end per prediction"))
    if np.array_equal(got, expected) or np.allclose(got, expected, rtol=1e-12, atol=1e-12):
        return
    detail = f"for qhat={qhat}, bound={bound} expected {expected[:3].tolist()}..., got {got[:3].tolist()}..."
    if qhat < 1 and np.allclose(got, np.column_stack([y_pred - qhat, y_pred + qhat])):
        ctx.fail("you used qhat itself as the half-width, but qhat is a threshold on normalised scores; convert it "
                 "back to the scale of y (DPCP write-up error D7 in the book's appendix)", detail)
    elif qhat == 1 and np.all(np.isfinite(got)):
        ctx.fail("qhat = 1 is the top edge of *clipped* scores: every residual is admitted, so a finite interval is "
                 "wrong here", detail)
    else:
        ctx.fail("your intervals differ from mu(x) -/+ bound * qhat", detail)


def _smallest_n(alpha, eps1, eps2, delta) -> int:
    alpha1 = math.exp(-eps1) * (alpha - delta)
    return math.floor(2.0 / (alpha1 * eps2)) + 1


def _n_cases(rng: np.random.Generator) -> list[Case]:
    eps2 = float(rng.choice([0.7, 0.9, 1.1]))
    large = round(float(rng.uniform(3.0, 5.0)), 2)
    equal = round(float(rng.uniform(0.5, 1.5)), 2)
    delta_case = (0.2, round(float(rng.uniform(0.3, 0.7)), 2), round(float(rng.uniform(0.3, 0.5)), 2),
                  float(rng.choice([5e-4, 1e-3, 2e-3])))
    # alpha1 = alpha / k exactly (eps1 = ln k) and 2 / (alpha1 eps2) an integer in exact arithmetic
    k, eps2_edge = int(rng.choice([2, 4])), float(rng.choice([0.2, 0.25, 0.4, 0.5, 0.8]))
    return [
        Case("a small training budget", f"alpha=0.1, eps1=0.1, eps2={eps2}", args=(0.1, 0.1, eps2, 1e-5)),
        Case("a large training budget", f"alpha=0.1, eps1={large}, eps2=1", args=(0.1, large, 1.0, 1e-5)),
        Case("equal budgets", f"alpha=0.1, eps1={equal}, eps2={equal}", args=(0.1, equal, equal, 1e-5)),
        Case("a large delta", "alpha={}, eps1={}, eps2={}, delta={:g}".format(*delta_case), args=delta_case),
        Case("2/(alpha1 eps2) just below an integer", f"alpha=0.5, eps1=ln {k}, eps2={eps2_edge}",
             args=(0.5, math.log(k), eps2_edge, 0.0)),
    ]


@checker(function="smallest_n", exercise="ex-08-code-n", cases=_n_cases,
         implements=("dpcp_tutorial.dpcp.dpcp_levels", "dpcp_tutorial.quantile.algorithm1_level"))
def check_smallest_n(ctx, case) -> None:
    """Check a reader's ``smallest_n(alpha, epsilon1, epsilon2, delta) -> int``: the write-up's smallest feasible n.

    The smallest n for which the DPCP write-up's Algorithm 1 is feasible, i.e. its level
    :math:`\\alpha_0^{\\mathrm{wu}} = \\alpha_1 - 2/(n\\varepsilon_2)` is strictly positive (chapter 8): expected
    :math:`\\lfloor 2/(\\alpha_1\\varepsilon_2)\\rfloor + 1`; five cases.
    """
    alpha, eps1, eps2, delta = case.args
    got = ctx.call(alpha, eps1, eps2, delta, returns=integer())
    expected = _smallest_n(alpha, eps1, eps2, delta)
    if got == expected:
        return
    detail = f"expected n={expected}, got {got}"
    if got in (_smallest_n(alpha, eps1 + eps2, eps2, delta), _smallest_n(alpha, eps1, eps1 + eps2, delta)):
        ctx.fail("alpha1 uses epsilon1 (training) and the shift uses epsilon2 (quantile); do not mix in the total",
                 detail)
    elif got == _smallest_n(alpha, eps1, eps2, 0.0) and delta > 0:
        ctx.fail("delta is missing from alpha1", detail)
    elif got == expected - 1:
        ctx.fail("off by one: at your n, the write-up's alpha0 is not yet strictly positive", detail)
    else:
        ctx.fail(f"your n is too {'small' if got < expected else 'large'}", detail)
