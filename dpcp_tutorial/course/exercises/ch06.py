"""Checkers for the coding exercises of chapter 6 (DPCP)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from ...dpcp import dpcp_levels
from ...quantile import private_quantile, private_quantile_level, private_quantile_miscoverage_bound
from ...training import DPRidgeRegression
from . import _stats
from ._common import Case, Rng, array, checker, number, sequence

__all__ = ["check_dpcp_level", "check_dpcp_miss_bound", "check_dpcp_levels", "check_dpcp_assembly"]


# ----------------------------------------------------------------------------------------------------------
# ex-06-level: the level DPCP hands to the private quantile


def _level_one_cases(rng: np.random.Generator) -> list[Case]:
    def draw(lo, hi):
        return float(f"{rng.uniform(lo, hi):.4g}")
    return [
        Case("a typical budget", "", args=(draw(0.05, 0.2), draw(0.2, 0.6), draw(1e-7, 1e-5))),
        Case("a large training budget", "", args=(draw(0.05, 0.2), draw(1.5, 3.0), draw(1e-7, 1e-5))),
        Case("delta = 0", "", args=(draw(0.05, 0.3), draw(0.1, 1.0), 0.0)),
        Case("refused: delta at least alpha", "", args=(draw(0.01, 0.05), draw(0.1, 1.0), draw(0.05, 0.1)),
             raises=True),
    ]


@checker(function="my_dpcp_level", exercise="ex-06-level", cases=_level_one_cases,
         implements=("dpcp_tutorial.dpcp.dpcp_levels", "dpcp_tutorial.dpcp.differential_cp_level",
                     "dpcp_tutorial.dpcp._shifted_level"))
def check_dpcp_level(ctx, case) -> None:
    """Check a reader's ``my_dpcp_level(alpha, epsilon1, delta) -> float`` (chapter 6).

    Expected: :math:`\\alpha_1 = e^{-\\varepsilon_1}(\\alpha - \\delta)`, and ``ValueError`` when
    :math:`\\alpha \\le \\delta` (no level is left for the quantile).
    """
    alpha, eps1, delta = case.args
    if case.has("raises"):
        ctx.call_raises(ValueError, *case.args,
                        message="with delta >= alpha no level is left for the quantile: raise ValueError")
        return
    got = ctx.call(*case.args, returns=number())
    expected = math.exp(-eps1) * (alpha - delta)
    if math.isclose(got, expected, rel_tol=1e-9):
        return
    variants = {
        "the stability factor divides the level: alpha1 = e^-eps1 (alpha - delta), not e^+eps1":
            math.exp(eps1) * (alpha - delta),
        "delta must be subtracted inside: e^-eps1 (alpha - delta), not e^-eps1 alpha - delta":
            math.exp(-eps1) * alpha - delta,
        "delta is missing from alpha1 = e^-eps1 (alpha - delta)": math.exp(-eps1) * alpha,
        "e^-eps1 is not 1 - eps1: use the exponential": (1 - eps1) * (alpha - delta),
        "that is 1 - alpha1; return the miscoverage level alpha1": 1 - expected,
    }
    hint = next((m for m, v in variants.items() if math.isclose(got, v, rel_tol=1e-9)),
                "your level differs from e^-eps1 (alpha - delta)")
    ctx.fail(hint, f"expected {expected:.6g}, got {got:.6g}")


# ----------------------------------------------------------------------------------------------------------
# ex-06-bound: the coverage theorem's bound on DPCP's miss probability


def _bound_cases(rng: np.random.Generator) -> list[Case]:
    out = []
    for kind, n_range, eps1_range, eps2_range, bins in [
            ("a typical setting", (800, 3000), (0.2, 0.5), (0.5, 1.0), 1000),
            ("a large data set", (8000, 30000), (0.5, 1.0), (1.0, 3.0), 1000),
            ("a coarse grid", (300, 900), (0.1, 0.4), (1.0, 2.0), int(rng.integers(20, 60)))]:
        n = int(rng.integers(*n_range))
        eps1 = round(float(rng.uniform(*eps1_range)), 3)
        eps2 = round(float(rng.uniform(*eps2_range)), 3)
        delta = float(f"{rng.uniform(1e-7, 1e-5):.3g}")
        alpha1 = math.exp(-eps1) * (0.1 - delta)
        alpha0 = private_quantile_level(alpha1, n, eps2, bins)
        out.append(Case(kind, "", args=(round(alpha0 * float(rng.uniform(0.8, 1.0)), 6), n, eps1, eps2, delta,
                                        bins)))
    return out


@checker(function="my_dpcp_miss_bound", exercise="ex-06-bound", cases=_bound_cases,
         implements=())
def check_dpcp_miss_bound(ctx, case) -> None:
    """Check a reader's ``my_dpcp_miss_bound(alpha0, n, epsilon1, epsilon2, delta, bins) -> float`` (chapter 6).

    Expected: the bound of DPCP's coverage theorem on the miss probability,
    :math:`e^{\\varepsilon_1}\\bar\\beta(\\alpha_0) + \\delta`, with :math:`\\bar\\beta` =
    ``private_quantile_miscoverage_bound(alpha0, n, epsilon2, bins)`` (chapter 3's bound, which the exercise
    may call).
    """
    alpha0, n, eps1, eps2, delta, bins = case.args
    got = ctx.call(*case.args, returns=number())
    beta_bar = private_quantile_miscoverage_bound(alpha0, n, eps2, bins)
    expected = math.exp(eps1) * beta_bar + delta
    if math.isclose(got, expected, rel_tol=1e-9):
        return
    variants = {
        "the stability factor e^eps1 is missing: the trainer saw the calibration scores": beta_bar + delta,
        "the stability factor multiplies the bound: e^+eps1, not e^-eps1": math.exp(-eps1) * beta_bar + delta,
        "chapter 3's bound uses the quantile's budget epsilon2, not epsilon1 + epsilon2":
            math.exp(eps1) * private_quantile_miscoverage_bound(alpha0, n, eps1 + eps2, bins) + delta,
        "chapter 3's bound uses the quantile's budget epsilon2, not epsilon1":
            math.exp(eps1) * private_quantile_miscoverage_bound(alpha0, n, eps1, bins) + delta,
        "the quantile's level alpha0 is not its miss bound: use chapter 3's bound beta_bar(alpha0)":
            math.exp(eps1) * alpha0 + delta,
        "delta is added once, outside: e^eps1 beta_bar + delta": math.exp(eps1) * (beta_bar + delta),
        "delta is missing": math.exp(eps1) * beta_bar,
    }
    hint = next((m for m, v in variants.items() if math.isclose(got, v, rel_tol=1e-9)),
                "your bound differs from e^eps1 beta_bar(alpha0) + delta")
    ctx.fail(hint, f"expected {expected:.6g}, got {got:.6g}")


def _variants(n, alpha, eps1, eps2, delta) -> dict[str, tuple[float, float]]:
    def pair(alpha1, shift_eps):
        return alpha1, alpha1 - 2.0 / (n * shift_eps)

    good = math.exp(-eps1) * (alpha - delta)
    return {
        "alpha1 must use the training budget epsilon1 only, not epsilon1 + epsilon2":
            pair(math.exp(-(eps1 + eps2)) * (alpha - delta), eps2),
        "the shift 2/(n eps) of Algorithm 1 uses the quantile's budget epsilon2, not epsilon1": pair(good, eps1),
        "the shift 2/(n eps) uses epsilon2 only, not the total budget": pair(good, eps1 + eps2),
        "delta is missing from alpha1 = e^-eps1 (alpha - delta)": pair(math.exp(-eps1) * alpha, eps2),
        "delta must be subtracted inside: e^-eps1 (alpha - delta), not e^-eps1 alpha - delta":
            pair(math.exp(-eps1) * alpha - delta, eps2),
    }


def _alpha0(n, alpha, eps1, eps2, delta) -> float:
    return math.exp(-eps1) * (alpha - delta) - 2.0 / (n * eps2)


def _levels_cases(rng: np.random.Generator) -> list[Case]:
    n = int(rng.integers(3000, 8000))
    typical = (int(rng.integers(800, 1500)), 0.1, float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.3, 0.7)), 1e-5)
    pure = (int(rng.integers(150, 300)), 0.2, float(rng.uniform(0.15, 0.35)), float(rng.uniform(0.8, 1.5)), 0.0)
    while True:   # the training budget leaves too small a level for the shift
        large = (int(rng.integers(800, 1200)), 0.1, float(rng.uniform(4.0, 6.0)), float(rng.uniform(0.8, 1.2)), 1e-5)
        if _alpha0(*large) < 0:
            break
    while True:   # too few points for the shift
        few = (int(rng.integers(10, 30)), 0.1, float(rng.uniform(0.4, 0.6)), float(rng.uniform(0.4, 0.6)), 1e-5)
        if _alpha0(*few) < 0:
            break

    def shown(args):
        return f"(n, alpha, eps1, eps2, delta)=({args[0]}, {args[1]:g}, {args[2]:.3g}, {args[3]:.3g}, {args[4]:g})"

    return [
        Case("a typical budget", shown(typical), args=typical),
        Case("another budget", f"(n, alpha, eps1, eps2, delta)=({n}, 0.1, 1.0, 2.0, 1e-6)",
             args=(n, 0.1, 1.0, 2.0, 1e-6)),
        Case("delta = 0", shown(pure), args=pure),
        Case("infeasible: a large training budget", shown(large), args=large, raises=True),
        Case("infeasible: too few points", shown(few), args=few, raises=True),
    ]


@checker(function="my_levels", exercise="ex-06-code", cases=_levels_cases,
         implements=("dpcp_tutorial.dpcp.dpcp_levels", "dpcp_tutorial.dpcp.differential_cp_level",
                     "dpcp_tutorial.quantile.algorithm1_level"))
def check_dpcp_levels(ctx, case) -> None:
    """Check a reader's ``my_levels(n, alpha, epsilon1, epsilon2, delta) -> (alpha1, alpha0)`` (chapter 6).

    Expected: :math:`\\alpha_1 = e^{-\\varepsilon_1}(\\alpha-\\delta)` and the write-up's
    :math:`\\alpha_0 = \\alpha_1 - 2/(n\\varepsilon_2)`; three feasible cases are compared, two infeasible ones
    (:math:`\\alpha_0 \\le 0`) must raise ``ValueError``.
    """
    if case.has("raises"):
        ctx.call_raises(ValueError, *case.args,
                        message="this input is infeasible (alpha0 <= 0), but your function returned a value; "
                                "raise ValueError and say which n or epsilon2 would work")
        return
    got = ctx.call(*case.args, returns=sequence(number(), number(), names="a pair (alpha1, alpha0)"))
    expected = dpcp_levels(*case.args, variant="original")  # the exercise asks for the shift 2/(n eps2)
    if not all(math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-15) for g, e in zip(got, expected)):
        hint = next((msg for msg, value in _variants(*case.args).items()
                     if all(math.isclose(g, v, rel_tol=1e-9) for g, v in zip(got, value))),
                    "your levels differ from alpha1 = e^-eps1 (alpha - delta) and alpha0 = alpha1 - 2/(n eps2)")
        ctx.fail(hint, f"expected {expected}, got {got}")


# ----------------------------------------------------------------------------------------------------------
# ex-06-assemble: DPCP end to end from the reader's own pieces

_DPCP = ("my_dpcp_budget", "my_dpcp_scores", "my_dpcp_interval")
_X_BOUND, _Y_BOUND = 1.0, 2.0


def _budget(alpha, epsilon, share, delta) -> tuple[float, float, float]:
    epsilon1 = share * epsilon
    return epsilon1, epsilon - epsilon1, math.exp(-epsilon1) * (alpha - delta)


def _dpcp_data(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of norm at most 1 (= x_bound), responses clipped to [-2, 2] (= y_bound)."""
    theta = np.linspace(1.0, -0.5, d)
    X = rng.uniform(-1.0, 1.0, size=(n, d)) / math.sqrt(d)
    y = np.clip(2.0 * X @ theta + 0.4 * rng.standard_normal(n), -_Y_BOUND, _Y_BOUND)
    return X, y


def _reference_interval(X, y, X_test, alpha, epsilon, share, delta, bound, bins, rng) -> np.ndarray:
    """DPCP with the package's pieces (the law the reader's function must have)."""
    epsilon1, epsilon2, alpha1 = _budget(alpha, epsilon, share, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPRidgeRegression(epsilon=epsilon1, delta=delta, x_bound=_X_BOUND, y_bound=_Y_BOUND, rng=rng)
        model.fit(X, y)
        scores = np.minimum(np.abs(y - model.predict(X)) / bound, 1.0)
        qhat = private_quantile(scores, alpha1, epsilon2, bins=bins, rng=rng)
        centre = model.predict(X_test)
    half = math.inf if qhat >= 1 else bound * qhat
    return np.column_stack([centre - half, centre + half])


def _dpcp_cases(rng: np.random.Generator) -> list[Case]:
    budgets = [(0.1, round(float(rng.uniform(0.5, 1.5)), 3), round(float(rng.uniform(0.2, 0.4)), 3), 1e-6),
               (float(rng.choice([0.05, 0.1, 0.2])), float(rng.choice([2.0, 4.0, 8.0])),
                float(rng.choice([0.2, 0.5, 0.7])), 1e-5),
               (0.2, round(float(rng.uniform(0.3, 0.8)), 3), round(float(rng.uniform(0.8, 0.95)), 3), 0.0)]
    y = rng.normal(size=300) * 3
    y_pred = y + rng.normal(size=300) * np.r_[np.full(290, 0.5), np.full(10, 50.0)]
    y_pred[:5] = y[:5]                                             # exact fits
    X_law, y_law = _dpcp_data(rng, 60, 3)
    x_probe = rng.uniform(-0.5, 0.5, size=(1, 3)) / math.sqrt(3)
    law = dict(alpha=0.2, epsilon=20.0, share=0.1, delta=1e-5, bound=3.7, bins=20)
    return [
        Case("the budget split and the level alpha1", f"(alpha, epsilon, share, delta)={budgets[0]}",
             function=_DPCP[0], budget=budgets[0]),
        Case("the budget split and the level alpha1, another budget", f"(alpha, epsilon, share, delta)={budgets[1]}",
             function=_DPCP[0], budget=budgets[1]),
        Case("the budget split and the level alpha1 with delta = 0", f"(alpha, epsilon, share, delta)={budgets[2]}",
             function=_DPCP[0], budget=budgets[2]),
        Case("scores: residuals far beyond the bound and exact fits", "n=300, bound=3", function=_DPCP[1], y=y,
             y_pred=y_pred, bound=3.0),
        Case("scores: a small bound", "n=300, bound=0.25", function=_DPCP[1], y=y, y_pred=y_pred, bound=0.25),
        Case("the released intervals: one width B q_hat around the model, q_hat an edge", "n=60, d=3",
             function=_DPCP[2], xy=_dpcp_data(rng, 60, 3), test=rng.uniform(-1, 1, size=(25, 3)) / math.sqrt(3),
             setup=dict(law, seed=int(rng.integers(2**31)))),
        Case("every score clipped at 1: q_hat = 1 means the whole line", "n=60, bound=0.001", function=_DPCP[2],
             xy=_dpcp_data(rng, 60, 3), test=rng.uniform(-1, 1, size=(10, 3)) / math.sqrt(3),
             setup=dict(law, bound=0.001, seed=int(rng.integers(2**31)))),
        Case("the law of the release (model and threshold) against DPCP's", "n=60, d=3, 300 releases",
             function=_DPCP[2], xy=(X_law, y_law), test=x_probe, setup=law, releases=300,
             seed=int(rng.integers(2**31))),
        Case("coverage at small n and large epsilon", "n=40, d=3, 300 data sets", function=_DPCP[2], n=40, d=3,
             reps=300, setup=dict(law, bound=2.0), seed=int(rng.integers(2**31))),
        Case("a budget where alpha1 is too small for n: DPCP must refuse", "n=40, epsilon=20, share=0.25",
             function=_DPCP[2], xy=_dpcp_data(rng, 40, 3), test=rng.uniform(-1, 1, size=(5, 3)) / math.sqrt(3),
             setup=dict(law, share=0.25, seed=1)),
        Case("the same seed gives the same release", "n=200, bound=8", function=_DPCP[2], xy=_dpcp_data(rng, 200, 3),
             test=rng.uniform(-1, 1, size=(5, 3)) / math.sqrt(3),
             setup=dict(law, bound=8.0, seed=int(rng.integers(2**31)))),
    ]


def _kwargs(params: dict, seed: int) -> dict:
    return dict(alpha=params["alpha"], epsilon=params["epsilon"], share=params["share"], delta=params["delta"],
                x_bound=_X_BOUND, y_bound=_Y_BOUND, bound=params["bound"], bins=params["bins"], rng=Rng(seed))


def _diagnose_budget(budget, got) -> str:
    alpha, epsilon, share, delta = budget
    e1, e2, a1 = _budget(alpha, epsilon, share, delta)
    if not (math.isclose(got[0], e1, rel_tol=1e-9) and math.isclose(got[1], e2, rel_tol=1e-9)):
        if math.isclose(got[0], e2, rel_tol=1e-9) and math.isclose(got[1], e1, rel_tol=1e-9):
            return "epsilon1 and epsilon2 are swapped: the training gets share * epsilon, the quantile the rest"
        if math.isclose(got[0], share, rel_tol=1e-9):
            return "share is a fraction of epsilon: epsilon1 = share * epsilon"
        return "epsilon1 = share * epsilon (training) and epsilon2 = (1 - share) * epsilon (the quantile)"
    variants = {
        "alpha1 uses the training budget epsilon1 only, not the total epsilon": math.exp(-epsilon) * (alpha - delta),
        "alpha1 uses the training budget epsilon1, not the quantile's epsilon2": math.exp(-e2) * (alpha - delta),
        "delta is missing from alpha1 = e^-epsilon1 (alpha - delta)": math.exp(-e1) * alpha,
        "delta must be subtracted inside: e^-epsilon1 (alpha - delta), not e^-epsilon1 alpha - delta":
            math.exp(-e1) * alpha - delta,
        "the shift goes the wrong way: alpha1 = e^-epsilon1 (alpha - delta) is smaller than alpha":
            math.exp(e1) * (alpha - delta),
        "alpha1 is the level passed to the private quantile, alpha1 = e^-epsilon1 (alpha - delta), not alpha":
            alpha,
    }
    for hint, value in variants.items():
        if math.isclose(got[2], value, rel_tol=1e-9) and not math.isclose(value, a1, rel_tol=1e-9):
            return hint
    return "alpha1 differs from e^-epsilon1 (alpha - delta)"


def _diagnose_scores(y, y_pred, bound, got) -> str:
    expected = np.minimum(np.abs(y - y_pred) / bound, 1.0)
    residual = np.abs(y - y_pred)
    if np.allclose(got, residual / bound):
        return "clip the scores at 1: min(|y - mu(x)| / B, 1), so that every score lies in [0, 1] whatever the data"
    if np.allclose(got, np.minimum(residual, 1.0)) or np.allclose(got, residual):
        return "divide the residuals by the public bound B before clipping"
    if np.allclose(got, np.minimum((y - y_pred) / bound, 1.0)) or np.allclose(got, np.clip((y - y_pred) / bound, -1, 1)):
        return "use the absolute residual |y - mu(x)|"
    if np.allclose(got, residual / residual.max()):
        return ("you divided by the largest residual of the data; the bound B must be public (a data-dependent "
                "bound leaks the largest residual)")
    if np.allclose(got, expected * bound):
        return "return the normalised scores min(|y - mu(x)| / B, 1), not residuals"
    return f"{int(np.sum(~np.isclose(got, expected)))} of the {y.size} scores differ from min(|y - mu(x)| / B, 1)"


def _interval_structure(ctx, intervals: np.ndarray, bound: float, bins: int) -> float | None:
    """Check (lower, upper) rows of one release; return q_hat (1.0 for the whole line) or fail the case."""
    lower, upper = intervals[:, 0], intervals[:, 1]
    infinite = np.isinf(lower) | np.isinf(upper)
    if infinite.any():
        if not (np.all(lower == -np.inf) and np.all(upper == np.inf)):
            ctx.stop("a release is either the whole line (-inf, inf) for every test point (q_hat = 1) or a finite "
                     "interval mu(x) +/- B q_hat for every test point")
        return 1.0
    if np.any(upper < lower):
        ctx.stop("some intervals have lower > upper")
    half = (upper - lower) / 2
    if not np.allclose(half, half[0], rtol=1e-9, atol=1e-12):
        ctx.stop("the half-widths differ between test points: DPCP's interval is mu(x) +/- B q_hat with one "
                 "threshold q_hat for every point")
    qhat = float(half[0] / bound)
    edges = np.arange(1, bins + 1) / bins
    if not np.any(np.isclose(edges, qhat, rtol=1e-9, atol=1e-12)):
        if np.any(np.isclose(edges, half[0], rtol=1e-9, atol=1e-12)):
            ctx.stop("the half-width is B q_hat, on the scale of y: multiply the released threshold by the bound B")
        ctx.stop("the half-width divided by B must be an edge j/M of the private quantile")
    if math.isclose(qhat, 1.0):
        ctx.stop("q_hat = 1 is the top edge of clipped scores: every residual is admitted, so the release is the "
                 "whole line (-inf, inf), not mu(x) +/- B")
    return qhat


@checker(functions=_DPCP, exercise="ex-06-assemble", cases=_dpcp_cases, points=12,
         implements=("dpcp_tutorial.dpcp.DPCPRegressor", "dpcp_tutorial.dpcp.DPCPClassifier",
                     "dpcp_tutorial.dpcp.dpcp_interval", "dpcp_tutorial.dpcp.dpcp_set", "dpcp_tutorial.dpcp.dpcp_quantile",
                     "dpcp_tutorial.dpcp.dpcp_levels", "dpcp_tutorial.dpcp.differential_cp_level",
                     "dpcp_tutorial.dpcp._fit_trainer", "dpcp_tutorial.private_split.bounded_interval",
                     "dpcp_tutorial.private_split.normalized_residual_score"))
def check_dpcp_assembly(ctx, case) -> None:
    """Check a reader's DPCP assembled end to end from three functions (chapter 6).

    Call ``check_dpcp_assembly(my_dpcp_budget, my_dpcp_scores, my_dpcp_interval)``.

    * ``my_dpcp_budget(alpha, epsilon, share, delta) -> (epsilon1, epsilon2, alpha1)``:
      :math:`\\varepsilon_1 = \\text{share}\\cdot\\varepsilon`, :math:`\\varepsilon_2 = (1-\\text{share})\\varepsilon`,
      :math:`\\alpha_1 = e^{-\\varepsilon_1}(\\alpha-\\delta)`.
    * ``my_dpcp_scores(y, y_pred, bound) -> ndarray``: :math:`\\min(|y - \\mu(x)|/B, 1)`.
    * ``my_dpcp_interval(X, y, X_test, *, alpha, epsilon, share, delta, x_bound, y_bound, bound, bins, rng)
      -> ndarray (len(X_test), 2)``: fit ``dpcp_tutorial.DPRidgeRegression(epsilon=epsilon1, delta=delta,
      x_bound=x_bound, y_bound=y_bound, rng=rng)`` (default ``l2`` and intercept) on **all** n points, score
      the same n points with ``my_dpcp_scores``, release :math:`\\hat q` =
      ``dpcp_tutorial.private_quantile(scores, alpha1, epsilon2, bins=bins, rng=rng)`` (which raises
      ``ValueError`` when alpha1 is too small for n; let it propagate), and return the rows
      :math:`(\\mu(x) - B\\hat q, \\mu(x) + B\\hat q)`, or :math:`(-\\infty, \\infty)` when :math:`\\hat q = 1`.
      The checker calls it with keyword arguments after ``X_test``; every random draw comes from ``rng``.

    Cases: the budget and level exactly (three budgets), the scores exactly (residuals far beyond the
    bound, exact fits, a small bound), the structure of the released intervals (one width, an edge, the
    whole line when every score is clipped), the law of the release -- the model's prediction at a probe
    point (two-sample Kolmogorov-Smirnov) and the threshold (two-sample chi-square), 300 releases against
    300 of DPCP built from the package's pieces -- the simulated coverage at n = 40 and epsilon = 20
    (binomial standard error), the refusal where alpha1 is too small for n (calibrating at alpha instead
    of alpha1 releases there; with a DP ridge model, whose privacy noise keeps it from overfitting, a
    simulation's coverage cannot tell alpha from alpha1, so this case and the law of the threshold are what
    catch that mistake), and determinism under a seed. No call may change numpy's global random state.
    """
    checks = {_DPCP[0]: _check_budget, _DPCP[1]: _check_scores}
    checks.get(case.function, _check_interval)(ctx, case)


def _check_budget(ctx, case) -> None:
    """``my_dpcp_budget``: the split of epsilon and the level alpha1, exactly."""
    got = ctx.call(*case.budget, function=case.function,
                   returns=sequence(number(), number(), number(), names="a tuple (epsilon1, epsilon2, alpha1)"))
    expected = _budget(*case.budget)
    if not all(math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-15) for g, e in zip(got, expected)):
        ctx.fail(_diagnose_budget(case.budget, got), f"expected {expected}, got {got}")


def _check_scores(ctx, case) -> None:
    """``my_dpcp_scores``: the clipped normalised scores min(|y - mu(x)| / B, 1), exactly."""
    got = ctx.call(case.y, case.y_pred, case.bound, function=case.function, inputs=True,
                   returns=array(case.y.shape, what="one score per point"))
    expected = np.minimum(np.abs(case.y - case.y_pred) / case.bound, 1.0)
    if not np.allclose(got, expected, rtol=1e-12, atol=1e-12):
        ctx.fail(_diagnose_scores(case.y, case.y_pred, case.bound, got))


def _check_interval(ctx, case) -> None:
    """``my_dpcp_interval``: the case's kind says which property of the release is checked."""
    kind = case.kind
    if kind.startswith("a budget where"):
        _check_refusal(ctx, case)
    elif kind.startswith("coverage"):
        _check_coverage(ctx, case)
    elif kind.startswith("the law"):
        _check_law(ctx, case)
    elif kind.startswith("the same seed"):
        _check_seeds(ctx, case)
    else:
        _check_one_release(ctx, case)


def _release_spec(case):
    """The form of one release on the case's test points: (lower, upper) rows, infinite for the whole line."""
    return array((len(case.test), 2), allow_inf=True, what="(lower, upper) per test point")


def _check_refusal(ctx, case) -> None:
    """Where alpha1 = e^-epsilon1 (alpha - delta) is too small for n the tight quantile refuses, and so must
    the reader's function (one that calibrates at alpha releases)."""
    params = case.setup
    X, y = case.xy
    ctx.call_raises(ValueError, X, y, case.test, function=case.function, kwargs=_kwargs(params, params["seed"]),
                    message="alpha1 = e^-epsilon1 (alpha - delta) is too small for this n, so the tight quantile "
                            "refuses (ValueError), but your function released an interval: is the level passed "
                            "to private_quantile alpha1 (not alpha)?")


def _check_coverage(ctx, case) -> None:
    """The simulated miscoverage over ``case.reps`` data sets is at most alpha (within the Monte Carlo error);
    every release has the structure of DPCP's interval."""
    params = case.setup
    data = np.random.default_rng(case.seed)
    sets = [_dpcp_data(data, case.n + 200, case.d) for _ in range(case.reps)]
    arg_tuples = [(X[:case.n], y[:case.n], X[case.n:]) for X, y in sets]
    keywords = [_kwargs(params, case.seed + 1 + r) for r in range(case.reps)]
    spec = array(None, allow_inf=True, what="(lower, upper) per test point")
    released = ctx.map(arg_tuples, kwargs_list=keywords, function=case.function, returns=spec, rng_state=True,
                       inputs=True)
    misses = []
    for intervals, (X, y) in zip(released, sets):
        if intervals.shape != (200, 2):
            ctx.stop("return an array of shape (len(X_test), 2): one (lower, upper) row per test point")
        _interval_structure(ctx, intervals, params["bound"], params["bins"])
        y_test = y[case.n:]
        misses.append(np.mean((y_test < intervals[:, 0]) | (y_test > intervals[:, 1])))
    misses = np.array(misses)
    miscoverage = float(misses.mean())
    se = float(misses.std(ddof=1) / math.sqrt(misses.size))
    if miscoverage > params["alpha"] + _stats.Z * max(se, 1e-3):
        ctx.fail("your intervals miss more often than alpha: check the level alpha1, the scores on the same n "
                 "points and the half-width B q_hat", f"miscoverage {miscoverage:.4f} +/- {se:.4f}, alpha = "
                                                    f"{params['alpha']}")


def _reference_law(case) -> tuple[list[float], list[float]]:
    """The thresholds q_hat and the finite centres at the probe point of ``case.releases`` releases of DPCP
    built from the package's pieces, on the case's data."""
    params = case.setup
    X, y = case.xy
    reference = [_reference_interval(X, y, case.test, params["alpha"], params["epsilon"], params["share"],
                                     params["delta"], params["bound"], params["bins"],
                                     np.random.default_rng([case.seed, r])) for r in range(case.releases)]
    ref_q = [1.0 if np.isinf(r).any() else float((r[0, 1] - r[0, 0]) / 2 / params["bound"]) for r in reference]
    ref_c = [float(r[0].mean()) for r in reference if np.isfinite(r).all()]
    return ref_q, ref_c


def _check_law(ctx, case) -> None:
    """The law of ``case.releases`` releases against as many of DPCP built from the package's pieces: the
    model's prediction at the probe point (two-sample Kolmogorov-Smirnov) and the threshold q_hat (two-sample
    chi-square on the edges)."""
    params = case.setup
    X, y = case.xy
    seeds = [case.seed + r for r in range(case.releases)]
    released = ctx.map([(X, y, case.test)] * case.releases, kwargs_list=[_kwargs(params, s) for s in seeds],
                       function=case.function, returns=_release_spec(case), rng_state=True, inputs=True)
    qhats, centres = [], []
    for intervals in released:
        qhats.append(_interval_structure(ctx, intervals, params["bound"], params["bins"]))
        centres.append(float(intervals[0].mean()) if np.isfinite(intervals).all() else np.nan)
    ref_q, ref_c = _reference_law(case)
    codes = lambda qs: np.rint(np.asarray(qs) * params["bins"]).astype(int)   # noqa: E731
    p_q = _stats.two_sample_discrete(codes(qhats), codes(ref_q))
    got_c = np.array([c for c in centres if np.isfinite(c)])
    p_c = stats.ks_2samp(got_c, ref_c).pvalue if got_c.size > 20 and len(ref_c) > 20 else 1.0
    if p_c < _stats.P_MIN:
        spread, ref_spread = float(np.std(got_c)), float(np.std(ref_c))
        more = "more" if spread > ref_spread else "less"
        ctx.fail(f"your model's predictions vary {more} from release to release than those of DPRidgeRegression "
                 "trained with epsilon1 = share * epsilon and delta on all n points (a two-sample test rejects "
                 "them): check the model's budget, bounds and training data",
                 f"spread {spread:.4g} against {ref_spread:.4g}")
    if p_q < _stats.P_MIN:
        mean, ref_mean = float(np.mean(qhats)), float(np.mean(ref_q))
        direction = "smaller" if mean < ref_mean else "larger"
        ctx.fail(f"your thresholds q_hat are {direction} than DPCP's (a two-sample test rejects them): the "
                 "private quantile runs at level alpha1 with budget epsilon2 on the scores of the same n "
                 "points", f"mean q_hat {mean:.4f} against {ref_mean:.4f}")


def _check_seeds(ctx, case) -> None:
    """The same seed gives the same release; different seeds give different ones (unless the release is the
    whole line, which hides the model)."""
    params = case.setup
    X, y = case.xy
    spec, kwargs = _release_spec(case), _kwargs(params, params["seed"])
    first = ctx.call(X, y, case.test, function=case.function, kwargs=kwargs, returns=spec, rng_state=True,
                     inputs=True)
    second = ctx.call(X, y, case.test, function=case.function, kwargs=kwargs, returns=spec, rng_state=True,
                      inputs=True)
    others = ctx.map([(X, y, case.test)] * 3, kwargs_list=[_kwargs(params, params["seed"] + k) for k in (1, 2, 3)],
                     function=case.function, returns=spec, rng_state=True, inputs=True)
    if not np.array_equal(first, second):
        ctx.fail("two calls with the same seed gave different releases: pass the rng argument to the model and "
                 "to the private quantile, and draw nothing else")
    finite = [r for r in [first] + others if np.isfinite(r).all()]   # the whole line hides the model
    if len(finite) >= 2 and all(np.array_equal(finite[0], r) for r in finite[1:]):
        ctx.fail("different seeds gave the same release: the model's noise and the quantile's draw must come "
                 "from the rng argument")


def _check_one_release(ctx, case) -> None:
    """One release has the structure of DPCP's interval; where every score is clipped it is the whole line."""
    params = case.setup
    X, y = case.xy
    first = ctx.call(X, y, case.test, function=case.function, kwargs=_kwargs(params, params["seed"]),
                     returns=_release_spec(case), rng_state=True, inputs=True)
    qhat = _interval_structure(ctx, first, params["bound"], params["bins"])
    if case.kind.startswith("every score clipped") and qhat != 1.0:
        ctx.fail("with every score at 1 the tight quantile releases q_hat = 1 with overwhelming probability, and "
                 "the release must then be the whole line")
