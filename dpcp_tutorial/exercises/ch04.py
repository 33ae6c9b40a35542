"""Checkers for the coding exercises of chapter 4 (private split conformal prediction)."""

from __future__ import annotations

import math

import numpy as np

from ..private_split import pps_corrected_level, pps_grid, pps_round_up
from ._common import array, checker, number

__all__ = ["check_pps_round_up", "check_pps_level"]


def _diagnose_round_up(scores: np.ndarray, m: int, got: np.ndarray) -> str:
    edges = pps_grid(m)
    expected = pps_round_up(scores, m)
    index = np.clip(np.searchsorted(edges, scores, side="left"), 0, m - 1)
    nearest = edges[np.argmin(np.abs(scores[:, None] - edges[None, :]), axis=1)]
    down = edges[np.maximum(np.searchsorted(edges, scores, side="right") - 1, 0)]
    if got.shape == expected.shape:
        if np.array_equal(got, edges[index]):
            return ("a score exactly on an edge must move to the *next* edge (the smallest edge strictly above "
                    "it); you kept it in place")
        if np.array_equal(got, nearest):
            return "you round to the nearest edge; round *up*, to the smallest edge strictly above the score"
        if np.array_equal(got, down):
            return "you round down; the method rounds up, which can only make the set larger (conservative)"
        if np.any(got > 1):
            return "the rounded score must be capped at 1 (the top edge)"
        if not np.all(np.isin(got, edges)):
            return f"outputs must be grid edges k/(m-1), k = 0..m-1 (m={m} edges, both 0 and 1 included)"
    bad = int(np.flatnonzero(got != expected)[0]) if got.shape == expected.shape else 0
    return (f"for m={m}, score {scores[bad]!r} should round to {expected[bad]!r}"
            + (f", got {got[bad]!r}" if got.shape == expected.shape else f"; got an array of shape {got.shape}"))


@checker(function="my_round_up", exercise="ex-04-code")
def check_pps_round_up(ctx) -> None:
    """Check a reader's ``fn(scores, m) -> array`` rounding scores up to the grid ``k/(m-1)`` (chapter 4).

    Hidden cases: interior scores, scores exactly on edges, 0 and 1, small and large ``m``.
    """
    rng = np.random.default_rng(4)
    cases = [(rng.uniform(size=200), 11), (np.array([0.0, 0.25, 0.5, 0.75, 1.0]), 5),
             (np.array([0.0, 1.0, 0.999999]), 2), (rng.uniform(size=1000), 10_001)]
    for scores, m in cases:
        got = ctx.call(scores.copy(), m, returns=array(scores.shape, what="one rounded score per score"),
                       case=f"m={m}")
        if not np.array_equal(got, pps_round_up(scores, m)):
            ctx.fail(_diagnose_round_up(scores, m, got))
            break


def _level_variants(n, alpha, eps, m, gamma) -> dict[str, float]:
    log_term = 2.0 / (eps * n) * math.log(m / (gamma * alpha))
    return {
        "the finite-sample part uses (1 - alpha) instead of (n+1)(1-alpha)/n":
            (1 - alpha) / (1 - gamma * alpha) + log_term,
        "the finite-sample part is not divided by (1 - gamma*alpha)": (n + 1) * (1 - alpha) / n + log_term,
        "the privacy term uses log(m/alpha) without gamma": (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha))
        + 2.0 / (eps * n) * math.log(m / alpha),
        "the privacy term has 1/(eps n) instead of 2/(eps n)": (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha))
        + log_term / 2,
        "you capped qtilde at 1 - 1e-12; return the raw value (>= 1 means the trivial set)":
            min((n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + log_term, 1 - 1e-12),
    }


@checker(function="my_qtilde", exercise="ex-04-code")
def check_pps_level(ctx) -> None:
    """Check a reader's ``fn(n, alpha, epsilon, m, gamma) -> float`` against the corrected level of chapter 4."""
    cases = [(5000, 0.1, 8.0, 33932, 5.554e-4), (1000, 0.1, 1.0, 30888, 0.0221), (100, 0.1, 1.0, 10**4, 0.2),
             (200, 0.05, 2.0, 500, 0.3)]
    for n, alpha, eps, m, gamma in cases:
        case = f"n={n}, alpha={alpha}, eps={eps}, m={m}, gamma={gamma}"
        got = ctx.call(n, alpha, eps, m, gamma, returns=number(allow_inf=True), case=case)
        expected = pps_corrected_level(n, alpha, eps, m, gamma)
        if not math.isclose(got, expected, rel_tol=1e-9):
            hint = next((msg for msg, value in _level_variants(n, alpha, eps, m, gamma).items()
                         if math.isclose(got, value, rel_tol=1e-9)), f"expected {expected:.6f}, got {got:.6f}")
            ctx.fail(f"{case}: {hint}")
            break
