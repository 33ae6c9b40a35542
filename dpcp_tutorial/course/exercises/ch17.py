"""Checkers for the coding exercises of chapter 17 (per-class and adaptive private conformal prediction)."""

from __future__ import annotations

import math

import numpy as np

from ._common import Case, array, checker, number, sequence

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


def _threshold_cases(rng: np.random.Generator) -> list[Case]:
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
    return [Case(label, "", scores=sc, y=yy, k=k, alpha=a) for label, sc, yy, k, a in cases]


@checker(function="mondrian_thresholds", exercise="ex-17-thresholds", cases=_threshold_cases)
def check_mondrian_thresholds(ctx, case):
    """Check a reader's ``mondrian_thresholds(scores, y, n_classes, alpha) -> ndarray`` (chapter 17).

    One (non-private) split-conformal threshold per class, computed from the
    calibration scores of that class only, with the finite-sample rank of
    chapter 1 and ``np.inf`` for a class with too few records. Cases
    include imbalanced classes, tied scores and a class without records.
    """
    scores, y, k, alpha = case.scores, case.y, case.k, case.alpha
    expected = _thresholds(scores, y, k, alpha)
    got = ctx.call(scores, y, k, alpha, inputs=True, returns=array((k,), allow_inf=True, what="one threshold per class"))
    if np.array_equal(got, expected):
        return
    pooled = np.sort(scores)[math.ceil((scores.size + 1) * (1 - alpha)) - 1]
    if np.allclose(got, pooled):
        ctx.stop("every class got the same threshold, computed from all the scores; each class must be calibrated "
                 "on its own records")
    naive = np.full(k, np.inf)
    for c in range(k):
        s = np.sort(scores[y == c])
        r = math.ceil(s.size * (1 - alpha))
        if 1 <= r <= s.size:
            naive[c] = s[r - 1]
    if np.array_equal(got, naive):
        ctx.stop("your rank misses the test point: the finite-sample rank of chapter 1 counts n + 1 scores")
    finite = np.isfinite(expected)
    if np.all(np.isfinite(got)) and not np.all(finite):
        ctx.stop("a class with too few calibration records for the level needs the threshold np.inf (every label "
                 "enters the set); you returned finite values")
    ctx.fail("the thresholds differ from the expected ones",
             f"for {int(np.sum(got != expected))} of the {k} classes")


# --------------------------------------------------------------------------- bounded normalised score

def _score(y, mu, g, sigma_min, bound):
    return np.minimum(np.abs(y - mu) / (bound * np.maximum(g, sigma_min)), 1.0)


def _score_cases(rng: np.random.Generator) -> list[Case]:
    n = 200
    exact = np.round(rng.normal(size=10) * 3, 2)
    return [
        Case("typical values", "", y=rng.normal(size=n) * 2, mu=rng.normal(size=n), g=rng.uniform(0.2, 2.0, size=n),
             smin=0.1, bound=5.0),
        Case("negative and zero scale predictions", "", y=rng.normal(size=n), mu=np.zeros(n),
             g=np.r_[rng.uniform(-1.0, 0.0, size=n - 1), 0.0], smin=0.5, bound=4.0),
        Case("residuals far beyond the bound", "", y=rng.normal(size=n) * 1000, mu=rng.normal(size=n),
             g=rng.uniform(0.05, 1.0, size=n), smin=0.05, bound=3.0),
        Case("exact fits", "", y=exact, mu=exact.copy(), g=np.full(10, round(float(rng.uniform(0.2, 0.5)), 2)),
             smin=0.1, bound=2.0),
    ]


@checker(function="bounded_normalized_score", exercise="ex-17-score", cases=_score_cases,
         implements=("dpcp_tutorial.adaptive.normalized_score",))
def check_bounded_normalized_score(ctx, case):
    """Check a reader's ``bounded_normalized_score(y, mu, g, sigma_min, score_bound) -> ndarray`` (chapter 17).

    ``g`` holds the raw outputs of a scale model (possibly negative or zero);
    the function must return one score per point, in [0, 1], built from the
    public floor ``sigma_min`` and the public bound ``score_bound`` as in the
    chapter: :math:`\\min(|y-\\mu|/(B\\max(g, \\sigma_{\\min})), 1)` with :math:`B` = ``score_bound``. Cases include negative scale
    predictions, residuals far beyond the bound and exact zeros.
    """
    y, mu, g, smin, bound = case.y, case.mu, case.g, case.smin, case.bound
    expected = _score(y, mu, g, smin, bound)
    got = ctx.call(y, mu, g, smin, bound, inputs=True, returns=array((y.size,), what="one score each"))
    if np.allclose(got, expected, rtol=1e-10, atol=1e-12):
        return
    if got.min() < 0 or got.max() > 1:
        ctx.stop("some scores lie outside [0, 1]; the private quantile needs scores in [0, 1] whatever the data")
    with np.errstate(divide="ignore", invalid="ignore"):
        no_floor = np.minimum(np.abs(y - mu) / (bound * np.abs(g)), 1.0)
    if np.allclose(got, no_floor, equal_nan=False):
        ctx.stop("the scale must be floored at sigma_min before dividing")
    if np.allclose(got, np.minimum(np.abs(y - mu) / np.maximum(g, smin), 1.0)):
        ctx.stop("the normalised residual must also be divided by the public score bound")
    ctx.fail("the scores differ from the expected ones",
             f"at {int(np.sum(~np.isclose(got, expected)))} of {y.size} points")


# --------------------------------------------------------------------------- privacy account of a pipeline

def _account(parts, disjoint):
    eps = [e for e, _ in parts]
    dels = [d for _, d in parts]
    ro = [(2 * e, (1 + math.exp(e)) * d) for e, d in parts]
    combine = max if disjoint else sum
    return (combine(eps), combine(dels), combine(e for e, _ in ro), combine(d for _, d in ro))


def _account_cases(rng: np.random.Generator) -> list[Case]:
    def part(pure: bool = False) -> tuple[float, float]:
        epsilon = round(float(rng.uniform(0.1, 2.0)), 2)
        return (epsilon, 0.0 if pure else float(rng.choice([1e-8, 1e-7, 1e-6, 2e-6, 1e-5])))

    parts3 = [part(), part(), part(pure=True)]
    parts3 = [parts3[i] for i in rng.permutation(3)]
    parts2 = [part(), part()]
    equal = part(pure=True)
    return [
        Case("three disjoint steps", "", parts=parts3, disjoint=True),
        Case("three steps on the same data", "", parts=parts3, disjoint=False),
        Case("two disjoint steps", "", parts=parts2, disjoint=True),
        Case("two steps on the same data", "", parts=parts2, disjoint=False),
        Case("one step", "", parts=[part()], disjoint=True),
        Case("three equal pure-DP steps on the same data", "", parts=[equal] * 3, disjoint=False),
    ]


@checker(function="pipeline_privacy", exercise="ex-17-account", cases=_account_cases,
         implements=("dpcp_tutorial.accounting.PrivacyBudget", "dpcp_tutorial.accounting.PrivacyAccount"))
def check_pipeline_privacy(ctx, case):
    """Check a reader's ``pipeline_privacy(parts, disjoint) -> (eps_ar, delta_ar, eps_ro, delta_ro)`` (chapter 17).

    ``parts`` is a list of ``(epsilon, delta)`` add/remove guarantees of the
    steps of a pipeline; ``disjoint`` says whether the steps read disjoint
    parts of the data. Expected: the pipeline's guarantee under add/remove and,
    with each step converted to replace-one by group privacy before composing,
    under replace-one. Cases have unequal parts, one, two and three
    steps, both values of ``disjoint``.
    """
    parts, disjoint = case.parts, case.disjoint
    spec = sequence(number(), number(), number(), number(), names="(eps_ar, delta_ar, eps_ro, delta_ro)")
    expected = _account(parts, disjoint)
    got = ctx.call([tuple(p) for p in parts], disjoint, returns=spec)
    if np.allclose(got, expected, rtol=1e-9, atol=1e-15):
        return
    if np.allclose(got[:2], expected[:2], rtol=1e-9, atol=1e-15):
        e_sum = sum(e for e, _ in parts)
        d_sum = sum(d for _, d in parts)
        whole = (2 * e_sum, (1 + math.exp(e_sum)) * d_sum) if not disjoint else None
        if whole is not None and np.allclose(got[2:], whole, rtol=1e-9, atol=1e-15):
            ctx.stop("you applied group privacy to the composed pipeline; the exercise converts each step first, then "
                     "composes")
        if np.allclose(got[2:], expected[:2], rtol=1e-9, atol=1e-15):
            ctx.stop("under replace-one a step that is private for adding or removing one record is not "
                     "automatically private at the same level")
        ctx.stop("the add/remove part is right, the replace-one part is not")
    swapped = _account(parts, not disjoint)
    if np.allclose(got, swapped, rtol=1e-9, atol=1e-15) and swapped != expected:
        ctx.stop("your composition rule is the one for the other value of disjoint")
    ctx.fail("the add/remove guarantee differs from the expected one")
