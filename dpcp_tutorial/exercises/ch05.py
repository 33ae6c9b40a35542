"""Checkers for the coding exercises of chapter 5 (Differential CP)."""

from __future__ import annotations

import math

import numpy as np

from ..conformal import conformal_quantile
from ..dpcp import differential_cp_quantile
from ._common import checker, number

__all__ = ["check_differential_cp_quantile"]


def _variants(scores, alpha, eps, delta) -> dict[str, float]:
    def at(level):
        return conformal_quantile(scores, level) if 0 < level < 1 else math.inf

    n = scores.size
    alpha1 = math.exp(-eps) * (alpha - delta)
    naive_k = math.ceil(n * (1 - alpha1))
    return {
        "you calibrate at alpha itself: the in-sample quantile needs the shifted level alpha1 = e^-eps (alpha - delta)":
            at(alpha),
        "delta is subtracted after the exponential: use alpha1 = e^-eps (alpha - delta), not e^-eps alpha - delta":
            at(math.exp(-eps) * alpha - delta),
        "delta is missing: alpha1 = e^-eps (alpha - delta)": at(math.exp(-eps) * alpha),
        "the level is shifted the wrong way (e^+eps); the shift must make the set larger": at(min(math.exp(eps) * alpha,
                                                                                                 0.999)),
        "your rank is ceil(n (1 - alpha1)); the argument needs ceil((n+1)(1 - alpha1)), infinite beyond n":
            float(np.sort(scores)[min(max(naive_k, 1), n) - 1]),
    }


@checker(function="my_dcp_quantile", exercise="ex-05-code")
def check_differential_cp_quantile(ctx) -> None:
    """Check a reader's ``my_dcp_quantile(scores, alpha, epsilon, delta) -> float`` against the Differential-CP quantile.

    ``math.inf`` is expected when the rank exceeds n (chapter 5); four hidden cases.
    """
    rng = np.random.default_rng(5)
    cases = [(rng.exponential(size=500), 0.1, 0.5, 1e-5), (rng.exponential(size=2000), 0.1, 1.0, 1e-3),
             (rng.exponential(size=100), 0.2, 0.25, 0.0), (rng.exponential(size=50), 0.1, 2.0, 1e-6)]
    for scores, alpha, eps, delta in cases:
        case = f"n={scores.size}, alpha={alpha}, eps={eps}, delta={delta}"
        got = ctx.call(scores.copy(), alpha, eps, delta, returns=number(allow_inf=True), case=case)
        expected = differential_cp_quantile(scores, alpha, eps, delta)
        if got != expected:
            hint = next((msg for msg, value in _variants(scores, alpha, eps, delta).items()
                         if value == got and value != expected), f"expected {expected!r}, got {got!r}")
            ctx.fail(f"{case}: {hint}")
            break
