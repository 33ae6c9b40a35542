"""Checkers for the coding exercises of chapter 16 (choosing a private calibrator)."""

from __future__ import annotations

import math

import numpy as np

from ._common import Case, array, checker, number

__all__ = ["check_pcoqs_noise_sd", "check_pool_coverage"]


def _rho(epsilon: float) -> float:
    """The zCDP budget chapter 16 pairs with an epsilon-DP method: rho = eps tanh(eps/2) (prop-16-conversion)."""
    return epsilon * math.tanh(epsilon / 2)


def _noise_cases(rng: np.random.Generator) -> list[Case]:
    eps = float(rng.choice([0.2, 0.3, 0.6]))

    def budget(low, high):
        return round(float(rng.uniform(low, high)), 2)

    def steps(low, high):
        return int(rng.integers(low, high))

    return [Case(kind, f"epsilon={e}, steps={t}", epsilon=e, steps=t) for kind, e, t in [
        ("a typical budget", budget(0.4, 0.8), steps(25, 40)), ("epsilon = 1", 1.0, steps(10, 60)),
        ("a small budget", budget(0.05, 0.15), steps(25, 40)), ("fewer steps", eps, 20),
        ("a large budget", budget(2.5, 4.0), steps(25, 40)),
        ("a huge budget and few steps", budget(8.0, 12.0), steps(3, 9)),
        ("one step", budget(1.0, 3.0), 1), ("many steps", budget(0.2, 0.6), steps(50, 200))]] + [
        Case("the scaling in the steps", "", scaling=True, epsilon=budget(0.3, 1.5), steps=steps(4, 40))]


@checker(function="pcoqs_noise_sd", exercise="ex-16-noise", cases=_noise_cases,
         implements=("dpcp_tutorial.calibrators.pcoqs_quantile",))
def check_pcoqs_noise_sd(ctx, case) -> None:
    """Check a reader's ``pcoqs_noise_sd(epsilon, steps) -> float`` (chapter 16).

    The standard deviation of the Gaussian noise on each of the ``steps``
    range counts of P-COQS when the search is given the zCDP budget that
    matches an ``epsilon``-DP method (:math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)`, split evenly over the
    steps). Cases cover several budgets and step counts, small and large, and the scaling in the steps.
    """
    if case.has("scaling"):
        low = ctx.call(case.epsilon, case.steps, returns=number())
        high = ctx.call(case.epsilon, 4 * case.steps, returns=number())
        if not math.isclose(high, 2 * low, rel_tol=1e-9):
            ctx.fail("quadrupling the steps should double the noise on each count")
        return
    epsilon, steps = case.epsilon, case.steps
    rho = _rho(epsilon)
    expected = math.sqrt(steps / (2 * rho))
    got = ctx.call(epsilon, steps, returns=number())
    if math.isclose(got, expected, rel_tol=1e-9):
        return
    detail = f"expected {expected:.6g}, got {got:.6g}"
    if math.isclose(got, math.sqrt(steps) / epsilon, rel_tol=1e-9):
        ctx.stop("you used rho = epsilon^2/2, which is valid but looser; the budget that every epsilon-DP method "
                 "satisfies is rho = epsilon * tanh(epsilon / 2)", detail)
    if math.isclose(got, math.sqrt(steps / (2 * epsilon)), rel_tol=1e-9) and steps > 0:
        ctx.stop("you used epsilon itself as the zCDP budget; convert the pure-DP budget to zCDP first", detail)
    if math.isclose(got, math.sqrt(1 / (2 * rho)), rel_tol=1e-9) and steps > 1:
        ctx.stop("the budget must be split over the steps of the search", detail)
    if math.isclose(got, math.sqrt(steps / (2 * rho)) ** 2, rel_tol=1e-9) and steps / (2 * rho) != 1:
        ctx.stop("return a standard deviation, not a variance", detail)
    if got <= 0:
        ctx.stop("a standard deviation is positive", detail)
    ctx.fail("your noise differs from the one that gives the search exactly the zCDP budget an epsilon-DP method "
             "would have", f"{got / expected:.3g} times the expected one")


def _coverage(pool: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    return (np.asarray(pool)[None, :] <= np.asarray(thresholds)[:, None]).mean(axis=1)


def _pool_cases(rng: np.random.Generator) -> list[Case]:
    lattice = rng.integers(0, 21, size=400) / 20
    return [
        Case("a continuous pool", "N=300", pool=rng.beta(2, 5, size=300), thresholds=np.array([0.1, 0.3, 0.5, 0.51, 0.9])),
        Case("a pool with ties, thresholds on pool values", "N=400", pool=lattice,
             thresholds=np.array([0.0, 0.25, 0.5, 0.95, 1.0])),
        Case("thresholds outside the range", "N=50", pool=rng.uniform(0.2, 0.8, size=50),
             thresholds=np.array([0.0, 0.1, 0.85, 1.0])),
        Case("one threshold", "N=5", pool=rng.permutation(np.array([0.3, 0.1, 0.2, 0.2, 0.9])), thresholds=np.array([0.2])),
        Case("a large pool and many thresholds", "N=20000", pool=rng.uniform(size=20_000),
             thresholds=rng.uniform(size=2_000)),
    ]


@checker(function="pool_coverage", exercise="ex-16-pool", cases=_pool_cases)
def check_pool_coverage(ctx, case) -> None:
    """Check a reader's ``pool_coverage(pool, thresholds) -> coverage`` (chapter 16).

    For a finite pool of scores drawn with replacement, the exact coverage of
    each released threshold, :math:`\\#\\{s_i \\le t\\}/N`: one number per threshold, an array of the
    thresholds' length. Cases include unsorted pools, ties, thresholds
    equal to pool values, thresholds outside the pool's range and a large pool.
    """
    pool, thresholds = case.pool, case.thresholds
    expected = _coverage(pool, thresholds)
    got = ctx.call(pool, thresholds, inputs=True,
                   returns=array((thresholds.size,), what="one coverage per threshold"))
    if np.allclose(got, expected, rtol=0, atol=1e-12):
        return
    strict = (pool[None, :] < thresholds[:, None]).mean(axis=1)
    if np.allclose(got, strict, atol=1e-12):
        ctx.stop("a test score equal to the threshold is covered too")
    plus_one = (pool[None, :] <= thresholds[:, None]).sum(axis=1) / (pool.size + 1)
    if np.allclose(got, plus_one, atol=1e-12):
        ctx.stop("the population is the pool itself; its probabilities need no finite-sample correction")
    if np.allclose(got, 1 - expected, atol=1e-12):
        ctx.stop("you returned the miscoverage")
    ctx.fail("your coverage differs from the exact one",
             f"at {int(np.sum(~np.isclose(got, expected, atol=1e-12)))} of the {expected.size} thresholds")
