"""Checkers for the coding exercises of chapter 5 (Differential CP)."""

from __future__ import annotations

import math

import numpy as np

from ...conformal import conformal_quantile
from ...dpcp import differential_cp_quantile
from ._common import Case, checker, number

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


def _dcp_cases(rng: np.random.Generator) -> list[Case]:
    n_small = int(rng.integers(30, 60))
    return [
        Case("a typical case", "n=500, alpha=0.1, eps=0.5", scores=rng.exponential(size=500), alpha=0.1, eps=0.5,
             delta=1e-5),
        Case("many scores", "n=2000, eps=1, delta=1e-3", scores=rng.exponential(size=2000), alpha=0.1, eps=1.0,
             delta=1e-3),
        Case("delta = 0", "n=100, alpha=0.2, eps=0.25", scores=rng.exponential(size=100), alpha=0.2, eps=0.25,
             delta=0.0),
        Case("too few scores: the rank exceeds n", f"n={n_small}, eps=2", scores=rng.exponential(size=n_small),
             alpha=0.1, eps=2.0, delta=1e-6),
        Case("ties", "n=200, eps=0.5", scores=rng.integers(0, 6, size=200).astype(float), alpha=0.2, eps=0.5,
             delta=1e-6),
    ]


@checker(function="my_dcp_quantile", exercise="ex-05-code", cases=_dcp_cases,
         implements=("dpcp_tutorial.dpcp.differential_cp_quantile", "dpcp_tutorial.dpcp.differential_cp_level",
                     "dpcp_tutorial.conformal.conformal_quantile"))
def check_differential_cp_quantile(ctx, case) -> None:
    """Check a reader's ``my_dcp_quantile(scores, alpha, epsilon, delta) -> float``: the Differential-CP quantile.

    Expected: the conformal quantile of chapter 1 at the shifted level
    :math:`\\alpha_1 = e^{-\\varepsilon}(\\alpha - \\delta)`, ``math.inf`` when the rank exceeds n (chapter 5).
    Cases include ties, delta = 0 and too few scores.
    """
    scores, alpha, eps, delta = case.scores, case.alpha, case.eps, case.delta
    got = ctx.call(scores, alpha, eps, delta, returns=number(allow_inf=True), inputs=True)
    expected = differential_cp_quantile(scores, alpha, eps, delta)
    if got != expected:
        hint = next((msg for msg, value in _variants(scores, alpha, eps, delta).items()
                     if value == got and value != expected), "your quantile differs from the Differential-CP "
                                                             "quantile at level alpha1")
        ctx.fail(hint, f"expected {expected!r}, got {got!r}")
