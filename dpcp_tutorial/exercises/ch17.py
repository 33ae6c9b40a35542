"""Checkers for the coding exercises of chapter 17 (per-class and adaptive private conformal prediction)."""

from __future__ import annotations

import math

import numpy as np

from ._common import array, checker, number, sequence

__all__ = ["check_mondrian_thresholds", "check_bounded_normalized_score", "check_pipeline_privacy"]


# --------------------------------------------------------------------------- per-class thresholds

def _thresholds(scores: np.ndarray, y: np.ndarray, n_classes: int, alpha: float) -> np.ndarray:
    out = np.full(n_classes, np.inf)
    for k in range(n_classes):
        s = np.sort(scores[y == k])
        rank = math.ceil((s.size + 1) * (1 - alpha))
        if rank <= s.size:
            out[k] = s[rank - 1]
    return out


def _threshold_cases():
    rng = np.random.default_rng(1717)
    sizes = [50, 23, 7, 3]            # (n + 1)(1 - alpha) is never close to an integer here
    y = np.concatenate([np.full(m, k) for k, m in enumerate(sizes)])
    y = y[rng.permutation(y.size)]
    scores = rng.uniform(size=y.size) ** np.array([3.0, 1.0, 0.5, 0.3])[y]
    cases = [("four imbalanced classes, alpha=0.1", scores, y, 4, 0.1)]
    sizes2 = [30, 12, 0]              # the last class is absent from the calibration data
    y2 = np.concatenate([np.full(m, k) for k, m in enumerate(sizes2)])
    y2 = y2[rng.permutation(y2.size)]
    scores2 = np.round(rng.uniform(size=y2.size), 1)   # ties
    cases.append(("tied scores, a class without calibration records, alpha=0.25", scores2, y2, 3, 0.25))
    y3 = np.r_[np.zeros(40, int), np.ones(40, int)]
    scores3 = np.r_[rng.uniform(0.0, 0.3, size=40), rng.uniform(0.5, 1.0, size=40)]
    cases.append(("two classes with very different scores, alpha=0.1", scores3, y3, 2, 0.1))
    return cases


@checker(function="mondrian_thresholds", exercise="ex-17-thresholds")
def check_mondrian_thresholds(ctx):
    """Check a reader's ``mondrian_thresholds(scores, y, n_classes, alpha) -> ndarray`` (chapter 17).

    One (non-private) split-conformal threshold per class, computed from the
    calibration scores of that class only, with the finite-sample rank of
    chapter 1 and ``np.inf`` for a class with too few records. Hidden cases
    include imbalanced classes, tied scores and a class without records.
    """
    for label, scores, y, k, alpha in _threshold_cases():
        expected = _thresholds(scores, y, k, alpha)
        got = ctx.call(scores.copy(), y.copy(), k, alpha,
                       returns=array((k,), allow_inf=True, what="one threshold per class"), case=label)
        if np.array_equal(got, expected):
            continue
        pooled = np.sort(scores)[math.ceil((scores.size + 1) * (1 - alpha)) - 1]
        if np.allclose(got, pooled):
            ctx.stop(f"{label}: every class got the same threshold, computed from all the scores; each class "
                     "must be calibrated on its own records")
        naive = np.full(k, np.inf)
        for c in range(k):
            s = np.sort(scores[y == c])
            r = math.ceil(s.size * (1 - alpha))
            if 1 <= r <= s.size:
                naive[c] = s[r - 1]
        if np.array_equal(got, naive):
            ctx.stop(f"{label}: your rank misses the test point: the finite-sample rank of chapter 1 counts "
                     "n + 1 scores")
        finite = np.isfinite(expected)
        if np.all(np.isfinite(got)) and not np.all(finite):
            ctx.stop(f"{label}: a class with too few calibration records for the level needs the threshold "
                     "np.inf (every label enters the set); you returned finite values")
        ctx.stop(f"{label}: the thresholds differ from the expected ones for "
                 f"{int(np.sum(got != expected))} of the {k} classes")


# --------------------------------------------------------------------------- bounded normalised score

def _score(y, mu, g, sigma_min, bound):
    return np.minimum(np.abs(y - mu) / (bound * np.maximum(g, sigma_min)), 1.0)


@checker(function="bounded_normalized_score", exercise="ex-17-score")
def check_bounded_normalized_score(ctx):
    """Check a reader's ``bounded_normalized_score(y, mu, g, sigma_min, score_bound) -> ndarray`` (chapter 17).

    ``g`` holds the raw outputs of a scale model (possibly negative or zero);
    the function must return one score per point, in [0, 1], built from the
    public floor ``sigma_min`` and the public bound ``score_bound`` as in the
    chapter. Hidden cases include negative scale predictions, residuals far
    beyond the bound and exact zeros.
    """
    rng = np.random.default_rng(1718)
    n = 200
    cases = [
        ("typical values", rng.normal(size=n) * 2, rng.normal(size=n), rng.uniform(0.2, 2.0, size=n), 0.1, 5.0),
        ("negative and zero scale predictions", rng.normal(size=n), np.zeros(n),
         np.r_[rng.uniform(-1.0, 0.0, size=n - 1), 0.0], 0.5, 4.0),
        ("residuals far beyond the bound", rng.normal(size=n) * 1000, rng.normal(size=n),
         rng.uniform(0.05, 1.0, size=n), 0.05, 3.0),
        ("exact fits", np.arange(10.0), np.arange(10.0), np.full(10, 0.3), 0.1, 2.0),
    ]
    for label, y, mu, g, smin, bound in cases:
        expected = _score(y, mu, g, smin, bound)
        got = ctx.call(y.copy(), mu.copy(), g.copy(), smin, bound, returns=array((y.size,), what="one score each"),
                       case=label)
        if np.allclose(got, expected, rtol=1e-10, atol=1e-12):
            continue
        if got.min() < 0 or got.max() > 1:
            ctx.stop(f"{label}: some scores lie outside [0, 1]; the private quantile needs scores in [0, 1] "
                     "whatever the data")
        with np.errstate(divide="ignore", invalid="ignore"):
            no_floor = np.minimum(np.abs(y - mu) / (bound * np.abs(g)), 1.0)
        if np.allclose(got, no_floor, equal_nan=False):
            ctx.stop(f"{label}: the scale must be floored at sigma_min before dividing")
        if np.allclose(got, np.minimum(np.abs(y - mu) / np.maximum(g, smin), 1.0)):
            ctx.stop(f"{label}: the normalised residual must also be divided by the public score bound")
        ctx.stop(f"{label}: the scores differ from the expected ones at {int(np.sum(~np.isclose(got, expected)))} "
                 f"of {y.size} points")


# --------------------------------------------------------------------------- privacy account of a pipeline

def _account(parts, disjoint):
    eps = [e for e, _ in parts]
    dels = [d for _, d in parts]
    ro = [(2 * e, (1 + math.exp(e)) * d) for e, d in parts]
    combine = max if disjoint else sum
    return (combine(eps), combine(dels), combine(e for e, _ in ro), combine(d for _, d in ro))


@checker(function="pipeline_privacy", exercise="ex-17-account")
def check_pipeline_privacy(ctx):
    """Check a reader's ``pipeline_privacy(parts, disjoint) -> (eps_ar, delta_ar, eps_ro, delta_ro)`` (chapter 17).

    ``parts`` is a list of ``(epsilon, delta)`` add/remove guarantees of the
    steps of a pipeline; ``disjoint`` says whether the steps read disjoint
    parts of the data. Expected: the pipeline's guarantee under add/remove and,
    with each step converted to replace-one by group privacy before composing,
    under replace-one. Hidden cases have unequal parts, one, two and three
    steps, both values of ``disjoint``.
    """
    cases = [
        ([(1.0, 1e-6), (0.5, 1e-7), (0.8, 0.0)], True),
        ([(1.0, 1e-6), (0.5, 1e-7), (0.8, 0.0)], False),
        ([(0.3, 2e-6), (1.2, 1e-8)], True),
        ([(0.3, 2e-6), (1.2, 1e-8)], False),
        ([(2.0, 1e-5)], True),
        ([(0.1, 0.0), (0.1, 0.0), (0.1, 0.0)], False),
    ]
    spec = sequence(number(), number(), number(), number(), names="(eps_ar, delta_ar, eps_ro, delta_ro)")
    for parts, disjoint in cases:
        expected = _account(parts, disjoint)
        case = f"{len(parts)} steps, disjoint={disjoint}"
        got = ctx.call([tuple(p) for p in parts], disjoint, returns=spec, case=case)
        if np.allclose(got, expected, rtol=1e-9, atol=1e-15):
            continue
        if np.allclose(got[:2], expected[:2], rtol=1e-9, atol=1e-15):
            e_sum = sum(e for e, _ in parts)
            d_sum = sum(d for _, d in parts)
            whole = (2 * e_sum, (1 + math.exp(e_sum)) * d_sum) if not disjoint else None
            if whole is not None and np.allclose(got[2:], whole, rtol=1e-9, atol=1e-15):
                ctx.stop(f"{case}: you applied group privacy to the composed pipeline; the exercise converts "
                         "each step first, then composes")
            if np.allclose(got[2:], expected[:2], rtol=1e-9, atol=1e-15):
                ctx.stop(f"{case}: under replace-one a step that is private for adding or removing one record "
                         "is not automatically private at the same level")
            ctx.stop(f"{case}: the add/remove part is right, the replace-one part is not")
        swapped = _account(parts, not disjoint)
        if np.allclose(got, swapped, rtol=1e-9, atol=1e-15) and swapped != expected:
            ctx.stop(f"{case}: your composition rule is the one for the other value of disjoint")
        ctx.stop(f"{case}: the add/remove guarantee differs from the expected one")
