"""Checkers for the coding exercises of chapter 13 (extensions: robust private aggregation)."""

from __future__ import annotations

import math

import numpy as np

from ._common import Case, array, checker, integer, number, sequence

__all__ = ["check_clipped_mean", "check_tukey_safe_attackers"]


def _reference_clipped_mean(updates: np.ndarray, clip_norm: float) -> tuple[np.ndarray, float]:
    norms = np.linalg.norm(updates, axis=1)
    scale = np.minimum(1.0, np.divide(clip_norm, norms, out=np.ones_like(norms), where=norms > 0))
    return (updates * scale[:, None]).mean(axis=0), 2.0 * clip_norm / updates.shape[0]


def _clip_cases(rng: np.random.Generator) -> list[Case]:
    g = rng.normal(size=(10, 3)) * np.array([0.1, 0.5, 1, 2, 5, 0.01, 3, 0.7, 8, 1.2])[:, None]
    g[5] = 0.0
    return [
        Case("updates inside and outside the ball, a zero update", "n=10, d=3, C=1", updates=g, clip_norm=1.0),
        Case("many large updates", "n=40, d=2, C=2", updates=rng.normal(size=(40, 2)) * 3, clip_norm=2.0),
        Case("a small clipping norm in d = 6", "n=7, d=6, C=0.5", updates=rng.normal(size=(7, 6)), clip_norm=0.5),
        Case("a single update", "n=1, d=2, C=1", updates=rng.normal(size=(1, 2)) * 5, clip_norm=1.0),
    ]


@checker(function="clipped_mean", exercise="ex-13-clip", cases=_clip_cases,
         implements=("dpcp_tutorial.aggregation.clipped_mean_sensitivity", "dpcp_tutorial.aggregation.dp_clipped_mean_aggregate"))
def check_clipped_mean(ctx, case) -> None:
    """Check a reader's ``clipped_mean(updates, clip_norm) -> (clipped_mean, sensitivity)`` (chapter 13).

    The mean must be that of the updates after clipping each row's Euclidean norm
    to at most C (cases include a zero row and a single update), the sensitivity the
    replace-one L2 sensitivity of that mean, :math:`2C/n`, and the input must not be modified.
    """
    original, clip_norm = case.updates, case.clip_norm
    n, d = original.shape
    nan_hint = "your mean contains NaN: guard the division for zero updates (a zero row stays zero)"
    mean, sensitivity = ctx.call(original, clip_norm, inputs=True,
                                 returns=sequence(array((d,), nan_hint=nan_hint), number(),
                                                  names="a pair (clipped_mean, sensitivity)"))
    expected_mean, expected_sens = _reference_clipped_mean(original, clip_norm)
    if not np.allclose(mean, expected_mean, rtol=1e-9, atol=1e-12):
        norms = np.linalg.norm(original, axis=1)
        batch = original.mean(axis=0) * min(1.0, clip_norm / max(np.linalg.norm(original.mean(axis=0)), 1e-300))
        detail = (f"with C={clip_norm} the clipped mean should be {np.round(expected_mean, 5).tolist()}, got "
                  f"{np.round(mean, 5).tolist()}")
        if np.allclose(mean, np.clip(original, -clip_norm, clip_norm).mean(axis=0)):
            ctx.stop("you clipped each coordinate to [-C, C]; the bound is on each update's Euclidean norm", detail)
        if np.allclose(mean, batch) and not np.allclose(batch, expected_mean):
            ctx.stop("you clipped the mean after averaging; then one client can still move the mean arbitrarily far",
                     detail)
        if np.allclose(mean, (original * (clip_norm / np.where(norms > 0, norms, 1.0))[:, None]).mean(axis=0)):
            ctx.stop("you rescaled every update to norm C, also the short ones; updates already within the bound "
                     "stay unchanged", detail)
        ctx.stop("your clipped mean differs from the mean of the updates clipped to norm C", detail)
    if not math.isclose(sensitivity, expected_sens, rel_tol=1e-9):
        detail = f"n={n}, C={clip_norm}: expected {expected_sens:.4g}, got {sensitivity:.4g}"
        if math.isclose(sensitivity, clip_norm / n, rel_tol=1e-9):
            ctx.fail("your sensitivity is too small: under replace-one the removed update and the added one can point "
                     "in opposite directions", detail)
        elif math.isclose(sensitivity, 2 * clip_norm, rel_tol=1e-9) or (
                n > 1 and math.isclose(sensitivity, clip_norm, rel_tol=1e-9)):
            ctx.fail("that is the sensitivity of the sum, not of the mean", detail)
        else:
            ctx.fail(f"your sensitivity is too {'small' if sensitivity < expected_sens else 'large'}", detail)


def _safe_cases(rng: np.random.Generator) -> list[Case]:
    d = int(rng.integers(3, 6))
    d2 = int(rng.integers(2, 5))
    divisible = (d2 + 1) * int(rng.integers(10, 40))
    not_divisible = divisible + int(rng.integers(1, d2 + 1))
    d_equal = int(rng.integers(5, 15))
    n_small = int(rng.integers(2, 10))
    while True:   # n where the floating-point ceil(n / 3) is off
        huge = 10 ** 18 + int(rng.integers(1, 10 ** 6))
        if math.ceil(huge / 3) != -(-huge // 3):
            break
    return [Case(kind, f"n={n}, d={d_}", n=n, d=d_) for kind, n, d_ in [
        ("n divisible by d + 1", divisible, d2), ("n not divisible by d + 1", not_divisible, d2),
        ("one dimension", int(rng.integers(50, 200)), 1), ("d + 1 = n", d_equal + 1, d_equal),
        ("d >= n", n_small, n_small + int(rng.integers(0, 5))),
        ("n beyond 2**53 (floating point is not exact)", huge, 2), ("a higher dimension", 1000, d)]]


@checker(function="tukey_safe_attackers", exercise="ex-13-safe", cases=_safe_cases)
def check_tukey_safe_attackers(ctx, case) -> None:
    """Check a reader's ``tukey_safe_attackers(n, d) -> int`` for exercise ex-13-safe (chapter 13).

    Expected: :math:`\\lceil n/(d+1)\\rceil - 1`. Seven (n, d) pairs, including n divisible and not
    divisible by d + 1, d >= n, and n beyond 2**53, where floating-point arithmetic is not exact. The
    answer must be an integer.
    """
    n, d = case.n, case.d
    got = ctx.call(n, d, returns=integer())
    expected = -(-n // (d + 1)) - 1
    if got == expected:
        return
    detail = f"n={n}, d={d}: expected {expected}, got {got}"
    if n > 2 ** 53 and got == math.ceil(n / (d + 1)) - 1:
        ctx.fail("your answer is off because floating-point division loses precision for large n; use integer "
                 "arithmetic", detail)
    elif got == n // (d + 1) - 1:
        ctx.fail("your answer is one too small when d + 1 does not divide n: does the centerpoint theorem's depth "
                 "bound round down (floor) or up?", detail)
    elif got == expected + 1:
        ctx.fail("with that many attackers they can tie the depth the centerpoint theorem guarantees; the guarantee "
                 "needs strictly fewer", detail)
    elif d != 2 and got == -(-n // 3) - 1:
        ctx.fail("1/3 is the Tukey median's best case in d >= 2, not what the centerpoint theorem guarantees in every "
                 "dimension", detail)
    else:
        ctx.fail(f"your answer is too {'small' if got < expected else 'large'}", detail)
