"""Checkers for the coding exercises of chapter 7 (training models privately)."""

from __future__ import annotations

import math

import numpy as np

from ...training import ssp_sensitivity
from ._common import Case, array, checker, number

__all__ = ["check_ssp_sensitivity", "check_clip_gradients"]


def _diagnose_sensitivity(x_bound: float, y_bound: float, fit_intercept: bool, got: float) -> tuple[str, str]:
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
    detail = f"x_bound={x_bound}, y_bound={y_bound}, fit_intercept={fit_intercept}: expected {expected:.6g}, got {got!r}"
    for message, value in candidates.items():
        if math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, expected, rel_tol=1e-9):
            return message, detail
    return "your sensitivity differs from the add/remove L2 sensitivity of the released statistics", detail


def _ssp_cases(rng: np.random.Generator) -> list[Case]:
    x, y = float(rng.choice([0.3, 0.5, 2.0])), float(rng.choice([0.5, 4.0, 7.0]))

    def bound(low, high):
        return round(float(rng.uniform(low, high)), 2)

    equal, equal2 = bound(0.5, 1.5), bound(0.5, 1.5)
    return [Case(f"{kind}", "", args=args) for kind, args in [
        ("equal bounds with an intercept", (equal, equal, True)),
        ("equal bounds without an intercept", (equal2, equal2, False)),
        ("unequal bounds with an intercept", (bound(1.5, 3.0), bound(0.2, 0.8), True)),
        ("unequal bounds without an intercept", (x, y, False)),
        ("large bounds with an intercept", (bound(4.0, 10.0), bound(4.0, 10.0), True))]]


@checker(function="my_ssp_sensitivity", exercise="ex-07-ssp-code", cases=_ssp_cases,
         implements=("dpcp_tutorial.training.ssp_sensitivity",))
def check_ssp_sensitivity(ctx, case) -> None:
    """Check a reader's ``my_ssp_sensitivity(x_bound, y_bound, fit_intercept) -> float`` (chapter 7).

    The value is compared with the add/remove L2 sensitivity of the released
    sufficient statistics (:func:`dpcp_tutorial.ssp_sensitivity`) on five
    combinations of bounds, with and without an intercept.
    """
    x_bound, y_bound, fit_intercept = case.args
    got = ctx.call(x_bound, y_bound, fit_intercept, returns=number())
    if not math.isclose(got, ssp_sensitivity(x_bound, y_bound, fit_intercept), rel_tol=1e-9):
        ctx.fail(*_diagnose_sensitivity(x_bound, y_bound, fit_intercept, got))


def _reference_clip(G: np.ndarray, clip_norm: float) -> np.ndarray:
    norms = np.linalg.norm(G, axis=1)
    scale = np.ones_like(norms)
    outside = norms > clip_norm
    scale[outside] = clip_norm / norms[outside]
    return G * scale[:, None]


def _clip_cases(rng: np.random.Generator) -> list[Case]:
    G = rng.normal(size=(8, 3)) * np.array([0.1, 0.5, 1.0, 2.0, 5.0, 0.01, 3.0, 0.7])[:, None]
    G[5] = 0.0
    m = int(rng.integers(1, 5))       # integer rows of norm exactly 5m (= the clipping norm) and 10m, 15m, ...
    sphere = np.array([[3.0 * m, 4.0 * m], [5.0 * m, 0.0], [6.0 * m * int(rng.integers(1, 4)), 8.0 * m], [0.0, 0.0]])
    sphere = sphere[rng.permutation(4)][:, rng.permutation(2)] * rng.choice([-1.0, 1.0], size=(4, 2))
    return [
        Case("rows inside and outside the ball, a zero row", "C=1", G=G, clip_norm=1.0),
        Case("a small clipping norm", "C=0.25", G=G, clip_norm=0.25),
        Case("a single row", "C=2", G=rng.normal(size=(1, 4)) * 10, clip_norm=2.0),
        Case("many rows", "C=1.5", G=rng.normal(size=(50, 2)), clip_norm=1.5),
        Case("a row exactly on the sphere", f"C={5 * m}", G=sphere, clip_norm=5.0 * m),
    ]


@checker(function="clip_gradients", exercise="ex-07-clip", cases=_clip_cases)
def check_clip_gradients(ctx, case) -> None:
    """Check a reader's per-example clipping ``clip_gradients(G, clip_norm) -> array`` (DP-SGD, chapter 7).

    Expected: each row scaled by :math:`\\min(1, C/\\lVert g_i\\rVert)`. Cases include rows inside and
    outside the ball, a zero row, a row on the sphere, a single row and several clipping norms; the input
    array must not be modified.
    """
    original, clip_norm = case.G, case.clip_norm
    nan_hint = "your output contains NaN: a zero gradient has norm 0; guard the division and leave zero rows at zero"
    got = ctx.call(original, clip_norm, inputs=True,
                   returns=array(original.shape, nan_hint=nan_hint, what="one clipped gradient per row"))
    expected = _reference_clip(original, clip_norm)
    if np.allclose(got, expected, rtol=1e-9, atol=1e-12):
        return
    total = np.linalg.norm(original)
    row_norms = np.linalg.norm(original, axis=1)
    bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-9, atol=1e-12).all(axis=1)))
    detail = (f"with C={clip_norm}, row {bad} = {np.round(original[bad], 4).tolist()} should become "
              f"{np.round(expected[bad], 4).tolist()}, got {np.round(got[bad], 4).tolist()}")
    if np.allclose(got, original * min(1.0, clip_norm / total), rtol=1e-9, atol=1e-12):
        ctx.fail("you clipped the whole batch (its Frobenius norm) at once; DP-SGD clips each example's gradient "
                 "separately, which is what bounds one person's contribution by C", detail)
    elif np.allclose(got, np.clip(original, -clip_norm, clip_norm), rtol=1e-9, atol=1e-12):
        ctx.fail("you clipped each coordinate to [-C, C]; that bounds a row's norm only by C*sqrt(p), not by C", detail)
    elif np.allclose(got[row_norms > 0], original[row_norms > 0] * (clip_norm / row_norms[row_norms > 0])[:, None],
                     rtol=1e-9, atol=1e-12):
        ctx.fail("you normalised every row to norm C, also the small ones; rows already inside the ball must stay "
                 "unchanged", detail)
    else:
        ctx.fail("some rows are not clipped to norm min(norm, C)", detail)
