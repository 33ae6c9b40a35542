"""Checkers for the coding exercises of chapter 16 (choosing a private calibrator)."""

from __future__ import annotations

import math

import numpy as np

from ._common import array, checker, number

__all__ = ["check_pcoqs_noise_sd", "check_pool_coverage"]


def _rho(epsilon: float) -> float:
    """The zCDP budget chapter 16 pairs with an epsilon-DP method: rho = eps tanh(eps/2) (prop-16-conversion)."""
    return epsilon * math.tanh(epsilon / 2)


@checker(function="pcoqs_noise_sd", exercise="ex-16-noise")
def check_pcoqs_noise_sd(ctx) -> None:
    """Check a reader's ``pcoqs_noise_sd(epsilon, steps) -> float`` (chapter 16).

    The standard deviation of the Gaussian noise on each of the ``steps``
    range counts of P-COQS when the search is given the zCDP budget that
    matches an ``epsilon``-DP method, :math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)`,
    split evenly over the steps. Hidden cases cover several budgets and step
    counts, small and large, and the scaling in the steps.
    """
    cases = [(0.5, 34), (1.0, 34), (0.1, 34), (0.3, 20), (3.0, 34), (10.0, 7), (2.0, 1), (0.4, 50)]
    for epsilon, steps in cases:
        rho = _rho(epsilon)
        expected = math.sqrt(steps / (2 * rho))
        got = ctx.call(epsilon, steps, returns=number(), case=f"epsilon={epsilon}, steps={steps}")
        if math.isclose(got, expected, rel_tol=1e-9):
            continue
        if math.isclose(got, math.sqrt(steps) / epsilon, rel_tol=1e-9):
            ctx.stop(f"epsilon={epsilon}, steps={steps}: you used rho = epsilon^2/2, which is valid but looser; "
                     "the budget that every epsilon-DP method satisfies is rho = epsilon * tanh(epsilon / 2)")
        if math.isclose(got, math.sqrt(steps / (2 * epsilon)), rel_tol=1e-9) and steps > 0:
            ctx.stop(f"epsilon={epsilon}, steps={steps}: you used epsilon itself as the zCDP budget; convert "
                     "the pure-DP budget to zCDP first")
        if math.isclose(got, math.sqrt(1 / (2 * rho)), rel_tol=1e-9):
            ctx.stop(f"epsilon={epsilon}, steps={steps}: the budget must be split over the steps of the search")
        if math.isclose(got, math.sqrt(steps / (2 * rho)) ** 2, rel_tol=1e-9):
            ctx.stop(f"epsilon={epsilon}, steps={steps}: return a standard deviation, not a variance")
        if got <= 0:
            ctx.stop(f"epsilon={epsilon}, steps={steps}: a standard deviation is positive")
        ratio = got / expected
        ctx.stop(f"epsilon={epsilon}, steps={steps}: your noise is {ratio:.3g} times the one that gives the "
                 "search exactly the zCDP budget an epsilon-DP method would have")
    # the noise must grow with the steps like their square root
    low = ctx.call(0.7, 16, returns=number(), case="epsilon=0.7, steps=16")
    high = ctx.call(0.7, 64, returns=number(), case="epsilon=0.7, steps=64")
    if not math.isclose(high, 2 * low, rel_tol=1e-9):
        ctx.fail("quadrupling the steps should double the noise on each count")


def _coverage(pool: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    return (np.asarray(pool)[None, :] <= np.asarray(thresholds)[:, None]).mean(axis=1)


@checker(function="pool_coverage", exercise="ex-16-pool")
def check_pool_coverage(ctx) -> None:
    """Check a reader's ``pool_coverage(pool, thresholds) -> coverage`` (chapter 16).

    For a finite pool of scores drawn with replacement, the exact coverage of
    each released threshold: one number per threshold, an array of the
    thresholds' length. Hidden cases include unsorted pools, ties, thresholds
    equal to pool values and thresholds outside the pool's range.
    """
    rng = np.random.default_rng(1616)
    lattice = rng.integers(0, 21, size=400) / 20
    cases = [
        ("a continuous pool", rng.beta(2, 5, size=300), np.array([0.1, 0.3, 0.5, 0.51, 0.9])),
        ("a pool with ties, thresholds on pool values", lattice, np.array([0.0, 0.25, 0.5, 0.95, 1.0])),
        ("thresholds outside the range", rng.uniform(0.2, 0.8, size=50), np.array([0.0, 0.1, 0.85, 1.0])),
        ("one threshold", np.array([0.3, 0.1, 0.2, 0.2, 0.9]), np.array([0.2])),
    ]
    for label, pool, thresholds in cases:
        expected = _coverage(pool, thresholds)
        got = ctx.call(pool.copy(), thresholds.copy(),
                       returns=array((thresholds.size,), what="one coverage per threshold"), case=label)
        if np.allclose(got, expected, rtol=0, atol=1e-12):
            continue
        strict = (pool[None, :] < thresholds[:, None]).mean(axis=1)
        if np.allclose(got, strict, atol=1e-12):
            ctx.stop(f"{label}: a test score equal to the threshold is covered too")
        plus_one = (pool[None, :] <= thresholds[:, None]).sum(axis=1) / (pool.size + 1)
        if np.allclose(got, plus_one, atol=1e-12):
            ctx.stop(f"{label}: the population is the pool itself; its probabilities need no finite-sample "
                     "correction")
        if np.allclose(got, 1 - expected, atol=1e-12):
            ctx.stop(f"{label}: you returned the miscoverage")
        ctx.stop(f"{label}: your coverage differs from the exact one at "
                 f"{int(np.sum(~np.isclose(got, expected, atol=1e-12)))} of the {expected.size} thresholds")
    pool = rng.uniform(size=20_000)
    thresholds = rng.uniform(size=2_000)
    got = ctx.call(pool.copy(), thresholds.copy(), returns=array((thresholds.size,), what="one coverage per "
                                                                   "threshold"),
                   case="20,000 scores, 2,000 thresholds")
    if not np.allclose(got, np.searchsorted(np.sort(pool), thresholds, side="right") / pool.size, atol=1e-12):
        ctx.fail("20,000 scores, 2,000 thresholds: the coverage is wrong for a large pool")
