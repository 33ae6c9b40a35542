"""Checkers for the coding exercises of chapter 7 (training models privately)."""

from __future__ import annotations

import math

import numpy as np

from ..training import ssp_sensitivity
from ._common import array, checker, number

__all__ = ["check_ssp_sensitivity", "check_clip_gradients"]


def _diagnose_sensitivity(x_bound: float, y_bound: float, fit_intercept: bool, got: float) -> str:
    """Name the typical mistake that produces ``got``."""
    b = math.sqrt(x_bound**2 + 1) if fit_intercept else x_bound
    expected = b * math.sqrt(b**2 + y_bound**2)
    candidates = {
        "you forgot the intercept column: with fit_intercept=True every augmented row has an extra entry 1, "
        "which changes the bound on the row's norm": x_bound * math.sqrt(x_bound**2 + y_bound**2),
        "you returned the replace-one bound (twice the add/remove one): under add/remove one point is only "
        "added or removed, so x x^T and x y enter once": 2 * expected,
        "you only counted the Gram matrix x x^T; the moment vector x y changes too, and both are released "
        "together": b**2,
        "you added the two norms; the released vector is the concatenation of both parts, and the norm of a "
        "concatenation is not the sum of the parts' norms": b**2 + b * y_bound,
        "you returned the squared sensitivity; take the square root": expected**2,
    }
    for message, value in candidates.items():
        if math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, expected, rel_tol=1e-9):
            return f"x_bound={x_bound}, y_bound={y_bound}, fit_intercept={fit_intercept}: {message}"
    return (f"x_bound={x_bound}, y_bound={y_bound}, fit_intercept={fit_intercept}: expected {expected:.6g}, "
            f"got {got!r}")


@checker(function="my_ssp_sensitivity", exercise="ex-07-ssp-code")
def check_ssp_sensitivity(ctx) -> None:
    """Check a reader's ``my_ssp_sensitivity(x_bound, y_bound, fit_intercept) -> float`` (chapter 7).

    The value is compared with the add/remove L2 sensitivity of the released
    sufficient statistics (:func:`dpcp_tutorial.ssp_sensitivity`) on five
    combinations of bounds, with and without an intercept.
    """
    cases = [(1.0, 1.0, True), (1.0, 1.0, False), (2.0, 0.5, True), (0.3, 4.0, False), (5.0, 5.0, True)]
    for x_bound, y_bound, fit_intercept in cases:
        got = ctx.call(x_bound, y_bound, fit_intercept, returns=number(),
                       case=f"x_bound={x_bound}, y_bound={y_bound}, fit_intercept={fit_intercept}")
        if not math.isclose(got, ssp_sensitivity(x_bound, y_bound, fit_intercept), rel_tol=1e-9):
            ctx.fail(_diagnose_sensitivity(x_bound, y_bound, fit_intercept, got))
            break


def _reference_clip(G: np.ndarray, clip_norm: float) -> np.ndarray:
    norms = np.linalg.norm(G, axis=1)
    return G * np.minimum(1.0, clip_norm / np.maximum(norms, np.finfo(float).tiny))[:, None]


@checker(function="clip_gradients", exercise="ex-07-clip")
def check_clip_gradients(ctx) -> None:
    """Check a reader's per-example clipping ``clip_gradients(G, clip_norm) -> array`` (DP-SGD, chapter 7).

    Hidden cases include rows inside and outside the ball, a zero row, a single
    row and several clipping norms; the input array must not be modified.
    """
    rng = np.random.default_rng(77)
    G = rng.normal(size=(8, 3)) * np.array([0.1, 0.5, 1.0, 2.0, 5.0, 0.01, 3.0, 0.7])[:, None]
    G[5] = 0.0
    cases = [(G, 1.0), (G, 0.25), (rng.normal(size=(1, 4)) * 10, 2.0), (rng.normal(size=(50, 2)), 1.5)]
    nan_hint = "your output contains NaN: a zero gradient has norm 0; guard the division and leave zero rows at zero"
    for grads, clip_norm in cases:
        original = grads.copy()
        got = ctx.call(grads, clip_norm, inputs=True, returns=array(original.shape, nan_hint=nan_hint,
                                                       what="one clipped gradient per row"), case=f"C={clip_norm}")
        if not np.array_equal(grads, original):
            ctx.fail("your function modified the input array in place; return a new array")
            break
        expected = _reference_clip(original, clip_norm)
        if np.allclose(got, expected, rtol=1e-9, atol=1e-12):
            continue
        total = np.linalg.norm(original)
        row_norms = np.linalg.norm(original, axis=1)
        if np.allclose(got, original * min(1.0, clip_norm / total), rtol=1e-9, atol=1e-12):
            ctx.fail("you clipped the whole batch (its Frobenius norm) at once; DP-SGD clips each example's "
                     "gradient separately, which is what bounds one person's contribution by C")
        elif np.allclose(got, np.clip(original, -clip_norm, clip_norm), rtol=1e-9, atol=1e-12):
            ctx.fail("you clipped each coordinate to [-C, C]; that bounds a row's norm only by C*sqrt(p), not by C")
        elif np.allclose(got[row_norms > 0], original[row_norms > 0] * (clip_norm / row_norms[row_norms > 0])[:, None],
                         rtol=1e-9, atol=1e-12):
            ctx.fail("you normalised every row to norm C, also the small ones; rows already inside the ball must "
                     "stay unchanged")
        else:
            bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-9, atol=1e-12).all(axis=1)))
            ctx.fail(f"with C={clip_norm}, row {bad} = {np.round(original[bad], 4).tolist()} should become "
                     f"{np.round(expected[bad], 4).tolist()}, got {np.round(got[bad], 4).tolist()}")
        break
