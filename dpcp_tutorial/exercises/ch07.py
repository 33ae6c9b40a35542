"""Checkers for the coding exercises of chapter 7 (training models privately)."""

from __future__ import annotations

import math

import numpy as np

from ..training import ssp_sensitivity
from ._common import ExerciseResult, run_safely

__all__ = ["check_ssp_sensitivity", "check_clip_gradients"]


def _diagnose_sensitivity(x_bound: float, y_bound: float, fit_intercept: bool, got: float) -> str:
    """Name the typical mistake that produces ``got``."""
    b = math.sqrt(x_bound**2 + 1) if fit_intercept else x_bound
    expected = b * math.sqrt(b**2 + y_bound**2)
    candidates = {
        "you forgot the intercept column: with fit_intercept=True every augmented row has an extra entry 1, "
        "so B^2 = x_bound^2 + 1": x_bound * math.sqrt(x_bound**2 + y_bound**2),
        "you returned the replace-one bound (twice the add/remove one): under add/remove one point is only "
        "added or removed, so x x^T and x y enter once": 2 * expected,
        "you only counted the Gram matrix x x^T; the moment vector x y changes too, and both are released "
        "together": b**2,
        "you added the two norms (B^2 + B*Y); the released vector is the concatenation, so its change has norm "
        "sqrt(|x x^T|^2 + |x y|^2)": b**2 + b * y_bound,
        "you returned the squared sensitivity; take the square root": expected**2,
    }
    for message, value in candidates.items():
        if math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, expected, rel_tol=1e-9):
            return f"x_bound={x_bound}, y_bound={y_bound}, fit_intercept={fit_intercept}: {message}"
    return (f"x_bound={x_bound}, y_bound={y_bound}, fit_intercept={fit_intercept}: expected {expected:.6g}, "
            f"got {got!r}")


def check_ssp_sensitivity(fn) -> ExerciseResult:
    """Check a reader's ``fn(x_bound, y_bound, fit_intercept) -> float``.

    The expected value is the add/remove L2 sensitivity of the released vector
    (upper triangle of :math:`X^\\top X`, :math:`X^\\top y`):
    :math:`B\\sqrt{B^2 + Y^2}` with :math:`B^2 = x_{\\max}^2 + 1` when an intercept
    column is appended (:func:`dpcp_tutorial.ssp_sensitivity`).
    """
    result = ExerciseResult("check_ssp_sensitivity")
    cases = [(1.0, 1.0, True), (1.0, 1.0, False), (2.0, 0.5, True), (0.3, 4.0, False), (5.0, 5.0, True)]
    for x_bound, y_bound, fit_intercept in cases:
        got = run_safely(result, fn, x_bound, y_bound, fit_intercept)
        if got is None:
            break
        try:
            got = float(got)
        except (TypeError, ValueError):
            result.fail(f"expected a number, got {type(got).__name__}")
            break
        if not math.isclose(got, ssp_sensitivity(x_bound, y_bound, fit_intercept), rel_tol=1e-9):
            result.fail(_diagnose_sensitivity(x_bound, y_bound, fit_intercept, got))
            break
    return result.report()


def _reference_clip(G: np.ndarray, clip_norm: float) -> np.ndarray:
    norms = np.linalg.norm(G, axis=1)
    return G * np.minimum(1.0, clip_norm / np.maximum(norms, np.finfo(float).tiny))[:, None]


def check_clip_gradients(fn) -> ExerciseResult:
    """Check a reader's per-example clipping ``fn(G, clip_norm) -> array`` (DP-SGD, chapter 7).

    Row :math:`g_i` of ``G`` (one example's gradient) must become
    :math:`g_i \\min(1, C/\\|g_i\\|)`: rows inside the ball are unchanged, rows
    outside are scaled onto its boundary, zero rows stay zero, and the input
    array is not modified.
    """
    result = ExerciseResult("check_clip_gradients")
    rng = np.random.default_rng(77)
    G = rng.normal(size=(8, 3)) * np.array([0.1, 0.5, 1.0, 2.0, 5.0, 0.01, 3.0, 0.7])[:, None]
    G[5] = 0.0
    cases = [(G, 1.0), (G, 0.25), (rng.normal(size=(1, 4)) * 10, 2.0), (rng.normal(size=(50, 2)), 1.5)]
    for grads, clip_norm in cases:
        original = grads.copy()
        got = run_safely(result, fn, grads, clip_norm)
        if got is None:
            break
        if not np.array_equal(grads, original):
            result.fail("your function modified the input array in place; return a new array (e.g. G * scale)")
            break
        got = np.asarray(got, dtype=float)
        expected = _reference_clip(original, clip_norm)
        if got.shape != expected.shape:
            result.fail(f"expected an array of shape {expected.shape} (one clipped gradient per row), "
                        f"got shape {got.shape}")
            break
        if np.isnan(got).any():
            result.fail("your output contains NaN: a zero gradient has norm 0, so guard the division "
                        "(e.g. np.maximum(norm, tiny)) and leave zero rows at zero")
            break
        if np.allclose(got, expected, rtol=1e-9, atol=1e-12):
            continue
        total = np.linalg.norm(original)
        row_norms = np.linalg.norm(original, axis=1)
        if np.allclose(got, original * min(1.0, clip_norm / total), rtol=1e-9, atol=1e-12):
            result.fail("you clipped the whole batch (its Frobenius norm) at once; DP-SGD clips each example's "
                        "gradient separately, which is what bounds one person's contribution by C")
        elif np.allclose(got, np.clip(original, -clip_norm, clip_norm), rtol=1e-9, atol=1e-12):
            result.fail("you clipped each coordinate to [-C, C]; that bounds a row's norm only by C*sqrt(p). "
                        "Rescale the whole row: g * min(1, C/|g|)")
        elif np.allclose(got[row_norms > 0], original[row_norms > 0] * (clip_norm / row_norms[row_norms > 0])[:, None],
                         rtol=1e-9, atol=1e-12):
            result.fail("you normalised every row to norm C, also the small ones; rows with |g| <= C must stay "
                        "unchanged (min(1, C/|g|))")
        else:
            bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-9, atol=1e-12).all(axis=1)))
            result.fail(f"with C={clip_norm}, row {bad} = {np.round(original[bad], 4).tolist()} should become "
                        f"{np.round(expected[bad], 4).tolist()}, got {np.round(got[bad], 4).tolist()}")
        break
    return result.report()
