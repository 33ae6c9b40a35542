"""Checkers for the coding exercises of chapter 2 (differential privacy)."""

from __future__ import annotations

import math

import numpy as np

from ._common import checker, number

__all__ = ["check_private_mean"]

_DRAWS = 4000  # releases per hidden case: the scale is then estimated to about 1.6% (one standard error)


def _diagnose_scale(ratio: float, n: int) -> str:
    """Name the mistake behind a noise scale that is ``ratio`` times the correct one."""
    if ratio < 1e-9:
        return ("your releases do not vary: the exact mean is not private; add noise drawn from the rng "
                "argument")
    if abs(ratio / n - 1) < 0.1:
        return (f"your noise is about n={n} times too large: how much can the mean of n clipped values change "
                "when one value is replaced?")
    for factor, hint in [(2.0, "twice too large (did you use 2 * sensitivity / epsilon, or epsilon / 2?)"),
                         (0.5, "half the required scale: that release is only 2*epsilon-DP"),
                         (math.sqrt(2.0), "sqrt(2) times too large: numpy's laplace takes the scale b, "
                                          "not the standard deviation")]:
        if abs(ratio / factor - 1) < 0.1:
            return f"your noise scale is {hint}"
    return f"your noise scale is {ratio:.3g} times the scale an epsilon-DP release needs"


@checker(function="private_mean", exercise="ex-02-private-mean")
def check_private_mean(ctx) -> None:
    """Check a reader's ``fn(x, lower, upper, epsilon, rng) -> float``: an epsilon-DP mean (chapter 2).

    Each hidden case draws 4000 releases from one Generator and checks, within five
    standard errors, where they are centred, their noise scale against the one
    epsilon-DP under replace-one (n public) requires, and the shape of the noise
    law; it also checks that the same seed gives the same release. Hidden cases
    include outliers far outside ``[lower, upper]``.
    """
    data = np.random.default_rng(11)
    cases = [
        (data.uniform(0, 1, size=500), 0.0, 1.0, 1.0),
        (np.r_[data.uniform(0, 10, size=195), [1000.0, 500.0, -50.0, 80.0, 12.0]], 0.0, 10.0, 0.5),  # outliers
        (data.normal(2.0, 1.0, size=40), -1.0, 5.0, 4.0),
    ]
    for case_id, (x, lower, upper, epsilon) in enumerate(cases):
        rng = np.random.default_rng(case_id)
        releases = np.array(ctx.repeat(_DRAWS, lambda: (x.copy(), lower, upper, epsilon, rng), returns=number(),
                                       case=f"case {case_id}"))
        n = x.size
        target = float(np.mean(np.clip(x, lower, upper)))
        scale = (upper - lower) / (n * epsilon)
        deviation = np.abs(releases - target)
        ratio = float(deviation.mean() / scale)
        # five standard errors of the median of Laplace draws with the *observed* scale (sd = sqrt(2) b)
        spread = float(np.mean(np.abs(releases - np.median(releases))))
        centre_tolerance = 5 * math.sqrt(2.0) * spread / math.sqrt(_DRAWS) + 1e-12 * (1 + abs(target))
        if abs(float(np.median(releases)) - float(np.mean(x))) < centre_tolerance and \
                abs(float(np.mean(x)) - target) > 10 * centre_tolerance:
            ctx.fail(f"case {case_id}: your releases centre on the unclipped mean {np.mean(x):.4g}; without "
                     "clipping, one outlier can move the mean arbitrarily far, so no finite noise is enough")
            continue
        if abs(float(np.median(releases)) - target) > centre_tolerance:
            ctx.fail(f"case {case_id}: your releases centre on {np.median(releases):.6g}, but the clipped mean "
                     f"is {target:.6g}")
            continue
        if abs(ratio - 1) > 5 / math.sqrt(_DRAWS):
            ctx.fail(f"case {case_id} (n={n}, epsilon={epsilon}): " + _diagnose_scale(ratio, n))
            continue
        shape = deviation.mean() / math.sqrt(np.mean(deviation**2))  # 1/sqrt(2) for Laplace, sqrt(2/pi) for normal
        if abs(shape - 1 / math.sqrt(2)) > 0.03:
            ctx.fail(f"case {case_id}: your noise has the right scale but not the Laplace shape "
                     f"(E|Z|/sqrt(E Z^2) = {shape:.3f}, Laplace has 0.707, a normal 0.798)")
            continue
        first = ctx.call(x.copy(), lower, upper, epsilon, np.random.default_rng(99), returns=number(),
                         case=f"case {case_id}")
        second = ctx.call(x.copy(), lower, upper, epsilon, np.random.default_rng(99), returns=number(),
                          case=f"case {case_id}")
        if first != second:
            ctx.fail("two calls with the same seed gave different releases: draw the noise from the rng "
                     "argument, not from np.random's global state")
