"""Checkers for the coding exercises of chapter 13 (extensions: robust private aggregation)."""

from __future__ import annotations

import math

import numpy as np

from ._common import array, checker, integer, number, sequence

__all__ = ["check_clipped_mean", "check_tukey_safe_attackers"]


def _reference_clipped_mean(updates: np.ndarray, clip_norm: float) -> tuple[np.ndarray, float]:
    norms = np.linalg.norm(updates, axis=1)
    scale = np.minimum(1.0, np.divide(clip_norm, norms, out=np.ones_like(norms), where=norms > 0))
    return (updates * scale[:, None]).mean(axis=0), 2.0 * clip_norm / updates.shape[0]


@checker(function="clipped_mean", exercise="ex-13-clip")
def check_clipped_mean(ctx) -> None:
    """Check a reader's ``clipped_mean(updates, clip_norm) -> (clipped_mean, sensitivity)`` (chapter 13).

    The mean must be that of the updates after clipping each row's Euclidean norm
    to at most C (hidden cases include a zero row), the sensitivity the
    replace-one L2 sensitivity of that mean, and the input must not be modified.
    """
    rng = np.random.default_rng(1313)
    g = rng.normal(size=(10, 3)) * np.array([0.1, 0.5, 1, 2, 5, 0.01, 3, 0.7, 8, 1.2])[:, None]
    g[5] = 0.0
    cases = [(g, 1.0), (rng.normal(size=(40, 2)) * 3, 2.0), (rng.normal(size=(7, 6)), 0.5)]
    for updates, clip_norm in cases:
        original = updates.copy()
        n, d = original.shape
        nan_hint = "your mean contains NaN: guard the division for zero updates (a zero row stays zero)"
        mean, sensitivity = ctx.call(
            updates, clip_norm, inputs=True, returns=sequence(array((d,), nan_hint=nan_hint), number(),
                                                 names="a pair (clipped_mean, sensitivity)"),
            case=f"n={n}, d={d}, C={clip_norm}")
        if not np.array_equal(updates, original):
            ctx.fail("your function modified the updates in place; return new arrays")
            break
        expected_mean, expected_sens = _reference_clipped_mean(original, clip_norm)
        if not np.allclose(mean, expected_mean, rtol=1e-9, atol=1e-12):
            norms = np.linalg.norm(original, axis=1)
            batch = original.mean(axis=0) * min(1.0, clip_norm / np.linalg.norm(original.mean(axis=0)))
            if np.allclose(mean, np.clip(original, -clip_norm, clip_norm).mean(axis=0)):
                ctx.fail("you clipped each coordinate to [-C, C]; the bound is on each update's Euclidean norm")
            elif np.allclose(mean, batch):
                ctx.fail("you clipped the mean after averaging; then one client can still move the mean "
                         "arbitrarily far")
            elif np.allclose(mean, (original * (clip_norm / np.where(norms > 0, norms, 1.0))[:, None]).mean(axis=0)):
                ctx.fail("you rescaled every update to norm C, also the short ones; updates already within the "
                         "bound stay unchanged")
            else:
                ctx.fail(f"with C={clip_norm} the clipped mean should be {np.round(expected_mean, 5).tolist()}, "
                         f"got {np.round(mean, 5).tolist()}")
            break
        if not math.isclose(sensitivity, expected_sens, rel_tol=1e-9):
            if math.isclose(sensitivity, clip_norm / n, rel_tol=1e-9):
                ctx.fail(f"n={n}, C={clip_norm}: your sensitivity is too small: under replace-one the removed "
                         "update and the added one can point in opposite directions")
            elif math.isclose(sensitivity, 2 * clip_norm, rel_tol=1e-9) or math.isclose(sensitivity, clip_norm,
                                                                                         rel_tol=1e-9):
                ctx.fail(f"n={n}, C={clip_norm}: that is the sensitivity of the sum, not of the mean")
            else:
                ctx.fail(f"n={n}, C={clip_norm}: your sensitivity {sensitivity:.4g} is too "
                         f"{'small' if sensitivity < expected_sens else 'large'}")
            break


@checker(function="tukey_safe_attackers", exercise="ex-13-safe")
def check_tukey_safe_attackers(ctx) -> None:
    """Check a reader's ``tukey_safe_attackers(n, d) -> int`` for exercise ex-13-safe (chapter 13).

    Seven hidden (n, d) pairs, including n divisible and not divisible by d + 1,
    d >= n, and n beyond 2**53, where floating-point arithmetic is not exact.
    The answer must be an integer.
    """
    cases = [(60, 2), (61, 2), (100, 1), (10, 9), (7, 10), (10 ** 18 + 1, 2), (1000, 3)]
    for n, d in cases:
        got = ctx.call(n, d, returns=integer(), case=f"n={n}, d={d}")
        expected = -(-n // (d + 1)) - 1
        if got == expected:
            continue
        if n > 2 ** 53 and got == math.ceil(n / (d + 1)) - 1:
            ctx.fail(f"n={n}, d={d}: your answer is off because floating-point division loses precision for "
                     "large n; use integer arithmetic")
        elif got == n // (d + 1) - 1:
            ctx.fail(f"n={n}, d={d}: your answer {got} is one too small when d + 1 does not divide n: does the "
                     "centerpoint theorem's depth bound round down (floor) or up?")
        elif got == expected + 1:
            ctx.fail(f"n={n}, d={d}: with {got} attackers they can tie the depth the centerpoint theorem "
                     "guarantees; the guarantee needs strictly fewer")
        elif d != 2 and got == -(-n // 3) - 1:
            ctx.fail(f"n={n}, d={d}: 1/3 is the Tukey median's best case in d >= 2, not what the centerpoint "
                     "theorem guarantees in every dimension")
        else:
            ctx.fail(f"n={n}, d={d}: your answer {got} is too {'small' if got < expected else 'large'}")
        break
