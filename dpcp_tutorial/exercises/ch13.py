"""Checkers for the coding exercises of chapter 13 (extensions: robust private aggregation)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._common import ExerciseResult, run_safely

__all__ = ["check_clipped_mean", "check_tukey_safe_attackers"]


def _reference_clipped_mean(updates: np.ndarray, clip_norm: float) -> tuple[np.ndarray, float]:
    norms = np.linalg.norm(updates, axis=1)
    scale = np.minimum(1.0, np.divide(clip_norm, norms, out=np.ones_like(norms), where=norms > 0))
    return (updates * scale[:, None]).mean(axis=0), 2.0 * clip_norm / updates.shape[0]


def check_clipped_mean(fn) -> ExerciseResult:
    """Check a reader's ``fn(updates, clip_norm) -> (clipped_mean, sensitivity)`` (chapter 13).

    Each row :math:`g_i` must be scaled by :math:`\\min(1, C/\\|g_i\\|)` (zero rows stay
    zero), the rows averaged, and the replace-one :math:`L_2` sensitivity of that mean
    reported as :math:`2C/n`. The input must not be modified.
    """
    result = ExerciseResult("check_clipped_mean")
    rng = np.random.default_rng(1313)
    g = rng.normal(size=(10, 3)) * np.array([0.1, 0.5, 1, 2, 5, 0.01, 3, 0.7, 8, 1.2])[:, None]
    g[5] = 0.0
    cases = [(g, 1.0), (rng.normal(size=(40, 2)) * 3, 2.0), (rng.normal(size=(7, 6)), 0.5)]
    for updates, clip_norm in cases:
        original = updates.copy()
        out = run_safely(result, fn, updates, clip_norm)
        if out is None:
            break
        if not np.array_equal(updates, original):
            result.fail("your function modified the updates in place; return new arrays")
            break
        try:
            mean, sensitivity = out
            mean = np.asarray(mean, dtype=float)
            sensitivity = float(sensitivity)
        except (TypeError, ValueError):
            result.fail("return a pair (clipped_mean, sensitivity): an array of length d and a number")
            break
        expected_mean, expected_sens = _reference_clipped_mean(original, clip_norm)
        n = original.shape[0]
        if mean.shape != expected_mean.shape:
            result.fail(f"the clipped mean must have shape ({original.shape[1]},), got {mean.shape}")
            break
        if np.isnan(mean).any():
            result.fail("your mean contains NaN: guard the division for zero updates (a zero row stays zero)")
            break
        if not np.allclose(mean, expected_mean, rtol=1e-9, atol=1e-12):
            norms = np.linalg.norm(original, axis=1)
            batch = original.mean(axis=0) * min(1.0, clip_norm / np.linalg.norm(original.mean(axis=0)))
            if np.allclose(mean, np.clip(original, -clip_norm, clip_norm).mean(axis=0)):
                result.fail("you clipped each coordinate to [-C, C]; clip each update's Euclidean norm: "
                            "g * min(1, C/|g|)")
            elif np.allclose(mean, batch):
                result.fail("you clipped the mean after averaging; clip every client's update before averaging, "
                            "otherwise one client can still move the mean arbitrarily")
            elif np.allclose(mean, (original * (clip_norm / np.where(norms > 0, norms, 1.0))[:, None]).mean(axis=0)):
                result.fail("you rescaled every update to norm C, also the short ones; updates with |g| <= C stay "
                            "unchanged")
            else:
                result.fail(f"with C={clip_norm} the clipped mean should be {np.round(expected_mean, 5).tolist()}, "
                            f"got {np.round(mean, 5).tolist()}")
            break
        if not math.isclose(sensitivity, expected_sens, rel_tol=1e-9):
            if math.isclose(sensitivity, clip_norm / n, rel_tol=1e-9):
                result.fail(f"sensitivity C/n={clip_norm / n:.4g} is too small: replacing one update removes a "
                            "vector of norm up to C and adds another one, which can point the opposite way, so "
                            "the sum moves by up to 2C and the mean by 2C/n")
            elif math.isclose(sensitivity, 2 * clip_norm, rel_tol=1e-9) or math.isclose(sensitivity, clip_norm,
                                                                                          rel_tol=1e-9):
                result.fail("that is the sensitivity of the sum; the mean divides it by the number n of clients")
            else:
                result.fail(f"with n={n} and C={clip_norm} the replace-one L2 sensitivity is 2C/n = "
                            f"{expected_sens:.4g}, got {sensitivity:.4g}")
            break
    return result.report()


def check_tukey_safe_attackers(fn) -> ExerciseResult:
    """Check a reader's ``fn(n, d) -> int``: the largest :math:`m` with :math:`m < \\lceil n/(d+1)\\rceil` (chapter 13).

    Below that many replaced points, the centerpoint theorem keeps every Tukey
    median inside the hull of the untouched points.
    """
    result = ExerciseResult("check_tukey_safe_attackers")
    cases = [(60, 2), (61, 2), (100, 1), (10, 9), (7, 10), (10 ** 18 + 1, 2), (1000, 3)]
    for n, d in cases:
        got = run_safely(result, fn, n, d)
        if got is None:
            break
        if isinstance(got, bool) or not isinstance(got, (numbers.Integral, np.integer, float, np.floating)):
            result.fail(f"expected an integer, got {type(got).__name__}")
            break
        expected = -(-n // (d + 1)) - 1
        if got == expected and float(got).is_integer():
            continue
        if n > 2 ** 53 and got == math.ceil(n / (d + 1)) - 1:
            result.fail(f"n={n}, d={d}: expected {expected}, got {got!r}: floating-point division loses precision "
                        "for large n; use integer arithmetic, e.g. -(-n // (d + 1)) for the ceiling")
        elif got == n // (d + 1) - 1:
            result.fail(f"n={n}, d={d}: you used floor(n/(d+1)) - 1 = {got}; the centerpoint depth is "
                        f"ceil(n/(d+1)) points, so m = ceil(n/(d+1)) - 1 = {expected} attackers are still safe")
        elif got == expected + 1:
            result.fail(f"n={n}, d={d}: {got} attackers can tie the centerpoint's depth ceil(n/(d+1)) = "
                        f"{expected + 1}; the guarantee needs m < ceil(n/(d+1)), i.e. m <= {expected}")
        elif d != 2 and got == -(-n // 3) - 1:
            result.fail(f"n={n}, d={d}: 1/3 is the Tukey median's best case in d >= 2, not what the centerpoint "
                        f"theorem guarantees; the guaranteed number is ceil(n/(d+1)) - 1 = {expected}")
        else:
            result.fail(f"n={n}, d={d}: expected ceil(n/(d+1)) - 1 = {expected}, got {got!r}")
        break
    return result.report()
