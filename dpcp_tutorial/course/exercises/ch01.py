"""Checkers for the coding exercises of chapter 1 (conformal prediction)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...conformal import aps_prediction_set, conformal_quantile, conformal_rank
from ._common import Case, array, checker, number

__all__ = ["check_conformal_quantile", "check_aps_prediction_set"]

_LEVELS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def _exact_rank(n: int, alpha: float) -> int:
    return math.ceil((n + 1) * (1 - Fraction(str(alpha))))


def _float_traps() -> list[tuple[int, float]]:
    """(n, alpha) where (n+1)(1-alpha) is an integer k <= n that floating point computes above k."""
    out = []
    for n in range(4, 80):
        for alpha in _LEVELS:
            exact = (n + 1) * (1 - Fraction(str(alpha)))
            if exact.denominator == 1 and 1 <= exact <= n and math.ceil((n + 1) * (1 - alpha)) != int(exact):
                out.append((n, alpha))
    return out


def _exact_integers() -> list[tuple[int, float]]:
    """(n, alpha) where (n+1)(1-alpha) is an integer <= n that floating point gets right."""
    out = []
    for n in range(9, 200):
        for alpha in (0.05, 0.1, 0.2, 0.25, 0.5):
            exact = (n + 1) * (1 - Fraction(str(alpha)))
            if exact.denominator == 1 and 1 <= exact <= n and math.ceil((n + 1) * (1 - alpha)) == int(exact):
                out.append((n, alpha))
    return out


_TRAPS = _float_traps()
_INTEGERS = _exact_integers()


def _quantile_cases(rng: np.random.Generator) -> list[Case]:
    n, alpha = _TRAPS[rng.integers(len(_TRAPS))]
    n2, alpha2 = _INTEGERS[rng.integers(len(_INTEGERS))]
    n_inf = int(rng.integers(2, 9))                        # rank ceil((n+1)0.9) = n + 1 > n for n <= 8
    ties = rng.integers(0, 4, size=int(rng.integers(6, 12))).astype(float)   # few values: many ties
    alpha_ties = float(rng.choice([0.2, 0.3, 0.4]))
    n1_alpha = float(rng.choice([0.5, 0.6, 0.75]))
    return [
        Case("(n+1)(1-alpha) is an integer that floating point overshoots", f"n={n}, alpha={alpha}",
             scores=rng.exponential(size=n), alpha=alpha),
        Case("(n+1)(1-alpha) is an exact integer", f"n={n2}, alpha={alpha2}",
             scores=rng.exponential(size=n2), alpha=alpha2),
        Case("a typical case", "n=100, alpha=0.1", scores=rng.exponential(size=100), alpha=0.1),
        Case("too few scores: the rank exceeds n", f"n={n_inf}, alpha=0.1",
             scores=rng.exponential(size=n_inf), alpha=0.1),
        Case("n = 1000", "n=1000, alpha=0.05", scores=rng.uniform(size=1000), alpha=0.05),
        Case("ties and unsorted input", f"n={ties.size}, alpha={alpha_ties}", scores=ties, alpha=alpha_ties),
        Case("a single score", f"n=1, alpha={n1_alpha}", scores=rng.exponential(size=1), alpha=n1_alpha),
    ]


def _diagnose_quantile(scores: np.ndarray, alpha: float, got: float) -> tuple[str, str]:
    """(message without the expected value, detail with it) for a wrong quantile ``got``."""
    n = scores.size
    ordered = np.sort(scores)
    k = conformal_rank(n, alpha)
    expected = conformal_quantile(scores, alpha)
    detail = f"expected {expected:.6g}, got {got!r}"
    float_k = math.ceil((n + 1) * (1 - alpha))
    naive_k = math.ceil(n * (1 - alpha))
    at = {r: float(ordered[r - 1]) for r in range(1, n + 1)}
    if k > n and math.isfinite(got):
        return ("here the rank ceil((n+1)(1-alpha)) exceeds n, so the quantile is infinite (return math.inf: "
                "the set is the whole space)", detail)
    if math.isfinite(got) and not np.any(ordered == got):
        return ("you returned a value that is not one of the scores: do not interpolate (np.quantile's default "
                "does); return the k-th smallest score itself", detail)
    if float_k != k and got == at.get(float_k) and got != expected:
        return ("your rank is one too high: (n+1)(1-alpha) is an exact integer here, but computed in floating "
                "point it lands just above it and the ceiling moves up (compute the rank exactly, e.g. with "
                "fractions.Fraction or by rounding before the ceiling); a 0-based index slip gives the same "
                "value here", detail)
    if 1 <= naive_k <= n and naive_k != k and got == at.get(naive_k) and got != expected:
        return ("your quantile uses the rank ceil(n(1-alpha)); the +1 in ceil((n+1)(1-alpha)) accounts for the "
                "test point", detail)
    if k + 1 <= n and got == at.get(k + 1) and got != expected:
        return ("you took the (k+1)-th smallest score: Python indexes from 0, so the k-th smallest is "
                "sorted_scores[k - 1]", detail)
    if k - 1 >= 1 and got == at.get(k - 1) and got != expected:
        return "you took the (k-1)-th smallest score; the quantile is the k-th smallest", detail
    if got == -math.inf or (math.isinf(got) and k <= n):
        return "the quantile is finite here: k = ceil((n+1)(1-alpha)) is at most n", detail
    return "your quantile is not the k-th smallest score with k = ceil((n+1)(1-alpha))", detail


@checker(function="my_quantile", exercise="ex-01-code-quantile", cases=_quantile_cases,
         implements=("dpcp_tutorial.conformal.conformal_quantile", "dpcp_tutorial.conformal.conformal_rank"))
def check_conformal_quantile(ctx, case) -> None:
    """Check a reader's ``my_quantile(scores, alpha) -> float``: the finite-sample split-conformal quantile.

    Expected: the :math:`k`-th smallest score with :math:`k = \\lceil (n+1)(1-\\alpha) \\rceil`, and
    ``math.inf`` when :math:`k > n`. Seven cases: a level where floating point overshoots the integer
    :math:`(n+1)(1-\\alpha)`, an exact integer, a typical and a large case, too few scores, ties with
    unsorted input, and a single score.
    """
    got = ctx.call(case.scores, case.alpha, returns=number(allow_inf=True))
    if got != conformal_quantile(case.scores, case.alpha):
        ctx.fail(*_diagnose_quantile(case.scores, case.alpha, got))


def _dyadic_row(rng: np.random.Generator, classes: int) -> np.ndarray:
    """Probabilities that are distinct multiples of 1/32 (cumulative sums are exact in floating point)."""
    while True:
        parts = rng.multinomial(32 - classes, np.full(classes, 1.0 / classes)) + 1
        if len(set(parts.tolist())) == classes:
            return parts / 32.0


def _aps_cases(rng: np.random.Generator) -> list[Case]:
    proba = rng.dirichlet(np.full(5, 0.6), size=200)
    dyadic = np.array([_dyadic_row(rng, 5) for _ in range(60)])
    # thresholds equal to a cumulative mass that occurs in the rows (exactly representable)
    masses = np.unique(np.cumsum(-np.sort(-dyadic, axis=1), axis=1)[:, 1:3])
    on_mass = float(rng.choice(masses))
    tied = np.tile(np.array([[0.25, 0.25, 0.25, 0.125, 0.125]]), (5, 1))
    for row in tied:
        rng.shuffle(row)
    # 32 classes with three distinct (dyadic) probabilities: NumPy's default sort is not stable beyond 16
    # elements, so only a stable sort ranks equal classes by index here
    many = np.tile(np.repeat([1.0, 2.0, 3.0], [8, 16, 8]) / 64, (20, 1))
    for row in many:
        rng.shuffle(row)
    return [
        Case("a small threshold", "qhat=0.3, 200 rows", proba=proba, qhat=0.3),
        Case("a typical threshold", "qhat=0.8, 200 rows", proba=proba, qhat=0.8),
        Case("a large threshold", "qhat=0.95, 200 rows", proba=proba, qhat=0.95),
        Case("a cumulative mass exactly equal to the threshold", f"qhat={on_mass}, 60 rows", proba=dyadic,
             qhat=on_mass),
        Case("tied probabilities", "qhat=0.5, 5 rows", proba=tied, qhat=0.5),
        Case("many tied classes", "qhat=0.5, 32 classes, 20 rows", proba=many, qhat=0.5),
    ]


def _other_tie_break(proba: np.ndarray, qhat: float, got: np.ndarray) -> bool:
    """Whether ``got`` is APS with ties broken by decreasing class index."""
    order = np.argsort(proba, axis=1, kind="stable")[:, ::-1]
    cumulative = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    other = np.zeros(proba.shape, dtype=bool)
    np.put_along_axis(other, order, cumulative <= qhat, axis=1)
    return bool(np.array_equal(got, other))


@checker(function="my_aps_sets", exercise="ex-01-code-aps", cases=_aps_cases,
         implements=("dpcp_tutorial.conformal.aps_prediction_set", "dpcp_tutorial.conformal.aps_score",
                     "dpcp_tutorial._split_core.aps_all_scores"))
def check_aps_prediction_set(ctx, case) -> None:
    """Check a reader's ``my_aps_sets(proba, qhat) -> bool array (n, K)`` of APS prediction sets (chapter 1).

    Expected: class :math:`y` is in the set when the probability mass of the classes ranked at or above it
    (by decreasing probability, ties broken by class index) is at most ``qhat``. Cases: three thresholds on
    random probabilities, a threshold equal to a cumulative mass (where ``<`` and ``<=`` differ), tied
    probabilities, and 32 classes with many ties (where only a stable sort ranks equals by class index).
    """
    proba, qhat = case.proba, case.qhat
    expected = aps_prediction_set(proba, qhat)
    got = ctx.call(proba, qhat, returns=array(expected.shape, dtype=bool,
                                              what="one row per example, one column per class"))
    if np.array_equal(got, expected):
        return
    order = np.argsort(-proba, axis=1, kind="stable")
    cumulative = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    strict = np.zeros(proba.shape, dtype=bool)
    np.put_along_axis(strict, order, cumulative < qhat, axis=1)
    bad = int(np.argmax((got != expected).any(axis=1)))
    detail = (f"row {bad} with probabilities {np.round(proba[bad], 4).tolist()}: expected the classes "
              f"{np.flatnonzero(expected[bad]).tolist()}, got {np.flatnonzero(got[bad]).tolist()}")
    if np.array_equal(got, (1 - proba) <= qhat):
        ctx.fail("your sets threshold 1 - p_y(x) (the LAC score); APS thresholds the cumulative mass of the "
                 "classes ranked at or above y", detail)
    elif np.array_equal(got, strict):
        ctx.fail("a class whose cumulative mass equals qhat exactly must be in the set: the score is compared "
                 "with <=, as in calibration (with < the sets lose their coverage for discrete probabilities)",
                 detail)
    elif case.kind == "tied probabilities" and _other_tie_break(proba, qhat, got):
        ctx.fail("with tied probabilities the classes are ranked by class index among equals (a stable sort of "
                 "-proba); the same rule must hold at calibration and prediction time", detail)
    elif case.kind == "many tied classes" and np.array_equal(got.sum(1), expected.sum(1)):
        ctx.fail("your sets have the right sizes but other classes among equal probabilities: rank equals by "
                 "class index with a stable sort, np.argsort(-proba, axis=1, kind='stable') (NumPy's default "
                 "sort is not stable for more than 16 classes)", detail)
    elif np.all(got >= expected) and np.array_equal(got.sum(1), np.minimum(expected.sum(1) + 1, proba.shape[1])):
        ctx.fail("your sets add one class too many: the last class you add already has an APS score above qhat",
                 detail)
    else:
        ctx.fail(f"{int(np.sum((got != expected).any(axis=1)))} of the {proba.shape[0]} sets differ from the "
                 "APS sets", detail)
