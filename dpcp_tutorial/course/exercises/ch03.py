"""Checkers for the coding exercises of chapter 3 (exponential mechanism, private quantiles)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_softmax

from ._common import Case, array, checker, number

__all__ = ["check_algorithm1_loss", "check_miscoverage_bound", "check_release_log_probabilities",
           "check_stable_probabilities"]


def _reference_loss(scores, edges, alpha0):
    ordered = np.sort(scores)
    a = np.searchsorted(ordered, edges, side="left")
    b = scores.size - np.searchsorted(ordered, edges, side="right")
    return np.maximum(a / (1 - alpha0), b / alpha0)


def _diagnose_loss(scores, edges, alpha0, got) -> tuple[str, str]:
    """(the mistake, the values) behind a wrong loss vector ``got``."""
    ordered = np.sort(scores)
    n = scores.size
    a_lt = np.searchsorted(ordered, edges, side="left")
    a_le = np.searchsorted(ordered, edges, side="right")
    b_gt, b_ge = n - a_le, n - a_lt
    expected = _reference_loss(scores, edges, alpha0)
    bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-12, atol=0)))
    detail = f"at edge e_{bad + 1} = {edges[bad]:.6g} expected w = {expected[bad]:.6g}, got {got[bad]:.6g}"
    variants = {
        "you count scores equal to an edge in a_j; check the inequality in the definition of a_j":
            np.maximum(a_le / (1 - alpha0), b_gt / alpha0),
        "you count scores equal to an edge in b_j; check the inequality in the definition of b_j":
            np.maximum(a_lt / (1 - alpha0), b_ge / alpha0),
        "your denominators are swapped between the two terms":
            np.maximum(a_lt / alpha0, b_gt / (1 - alpha0)),
        "you take the sum of the two terms; the loss is their maximum":
            a_lt / (1 - alpha0) + b_gt / alpha0,
        "you return the minimum of the two terms; the loss is their maximum":
            np.minimum(a_lt / (1 - alpha0), b_gt / alpha0),
        "return counts a_j and b_j, not fractions of the scores":
            np.maximum(a_lt / n / (1 - alpha0), b_gt / n / alpha0),
    }
    for hint, wrong in variants.items():
        if np.allclose(got, wrong, rtol=1e-12, atol=0):
            return hint, detail
    return "some losses differ from max(a_j / (1 - alpha0), b_j / alpha0)", detail


def _loss_cases(rng: np.random.Generator) -> list[Case]:
    ties = np.array([0.0, 0.2, 0.2, 0.5, 0.5, 0.5, 1.0, 0.7, 0.2, 1.0])
    ties = rng.permutation(np.concatenate([ties, rng.choice([0.2, 0.5, 0.7], size=int(rng.integers(2, 8)))]))
    m = int(rng.choice([10, 20, 25]))
    a1 = float(rng.choice([0.05, 0.1, 0.2]))
    return [
        Case("uniform scores and ten edges", f"N=50, alpha0={a1}", scores=rng.uniform(size=50),
             edges=np.arange(1, 11) / 10, alpha0=a1),
        Case("ties, scores on edges, 0 and 1, unsorted input", f"N={ties.size}, alpha0=0.3", scores=ties,
             edges=np.array([0.2, 0.5, 0.7, 1.0]), alpha0=0.3),
        Case("every score on an edge or at 0", f"N=300, M={m}", scores=rng.integers(0, m + 1, size=300) / m,
             edges=np.arange(1, m + 1) / m, alpha0=0.05),
        Case("many scores on a fine grid", "N=1000, M=1000", scores=rng.beta(2, 5, size=1000),
             edges=np.arange(1, 1001) / 1000, alpha0=0.02),
        Case("a level above one half", "N=40, alpha0=0.7", scores=rng.uniform(size=40), edges=np.arange(1, 9) / 8,
             alpha0=0.7),
    ]


@checker(function="loss", exercise="ex-03-loss", cases=_loss_cases,
         implements=("dpcp_tutorial.quantile._algorithm1_logits", "dpcp_tutorial._counts.below_above",
                     "dpcp_tutorial._counts.edge_histogram"))
def check_algorithm1_loss(ctx, case) -> None:
    """Check a reader's ``loss(scores, edges, alpha0) -> array``: the losses of the write-up's Algorithm 1 (page *Private quantiles: reference notes*).

    Expected: :math:`w_j = \\max(a_j/(1-\\alpha_0), b_j/\\alpha_0)` with :math:`a_j = \\#\\{R_i < e_j\\}` and
    :math:`b_j = \\#\\{R_i > e_j\\}`, one loss per edge. Cases include scores exactly on edges, ties, scores at
    0 and 1, unsorted input and a level above one half.
    """
    got = ctx.call(case.scores, case.edges, case.alpha0, returns=array(case.edges.shape, what="one loss per edge"),
                   inputs=True)
    if not np.allclose(got, _reference_loss(case.scores, case.edges, case.alpha0), rtol=1e-12, atol=0):
        ctx.fail(*_diagnose_loss(case.scores, case.edges, case.alpha0, got))


def _probability_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case("five candidates with a tie", "", losses=rng.permutation(np.array([3.0, 1.0, 2.0, 1.0, 5.0])), epsilon=1.0,
             sensitivity=1.0),
        Case("fifty candidates", "", losses=rng.uniform(0, 20, size=50), epsilon=0.7, sensitivity=2.0),
        Case("losses so large that every exp(...) underflows", "losses near 5e4",
             losses=50_000 + rng.integers(0, 300, size=100).astype(float), epsilon=1.0, sensitivity=1 / 0.03),
        Case("huge losses and a huge epsilon", "losses near 1e9, epsilon=1000",
             losses=1e9 + rng.permutation(np.array([0.0, 1.0, 2.0, 1e6])), epsilon=1e3, sensitivity=1.0),
        Case("one candidate", "", losses=np.array([float(rng.integers(0, 100))]), epsilon=1.0, sensitivity=1.0),
    ]


@checker(function="probabilities", exercise="ex-03-stable", cases=_probability_cases,
         implements=("dpcp_tutorial.mechanisms.exponential_mechanism_probabilities", "dpcp_tutorial._mechanism_core.normalise",
                     "dpcp_tutorial.mechanisms.exponential_mechanism"))
def check_stable_probabilities(ctx, case) -> None:
    """Check a reader's ``probabilities(losses, epsilon, sensitivity) -> probabilities`` (chapter 3).

    Expected: the exponential mechanism's probabilities
    :math:`\\propto \\exp(-\\varepsilon w_j / (2\\Delta))`, one per candidate, never NaN: cases include
    losses of size :math:`10^5` to :math:`10^9` for which a naive computation underflows, ties and a single
    candidate.
    """
    losses, epsilon, sensitivity = case.losses, case.epsilon, case.sensitivity
    nan_hint = ("NaN: every unnormalised weight underflows to 0 and 0/0 = NaN; normalise without computing those "
                "tiny weights directly (work in log space)")
    got = ctx.call(losses, epsilon, sensitivity, inputs=True,
                   returns=array(losses.shape, nan_hint=nan_hint, what="one probability per candidate"))
    expected = np.exp(log_softmax(-epsilon * losses / (2 * sensitivity)))
    if np.allclose(got, expected, rtol=1e-9, atol=1e-300):
        return
    bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-9, atol=1e-300)))
    detail = f"candidate {bad}: expected probability {expected[bad]:.6g}, got {got[bad]:.6g}"
    if np.allclose(got, np.exp(log_softmax(-epsilon * losses / sensitivity)), rtol=1e-9, atol=1e-300):
        ctx.fail("your exponent is twice too large: compare it with the exponential mechanism's privacy theorem",
                 detail)
    elif np.allclose(got, np.exp(log_softmax(epsilon * losses / (2 * sensitivity))), rtol=1e-9, atol=1e-300):
        ctx.fail("your probabilities favour the largest loss; w is a loss, not a utility", detail)
    elif not np.isclose(got.sum(), 1.0):
        ctx.fail("your probabilities do not sum to 1; normalise them", f"they sum to {got.sum():.6g}")
    else:
        ctx.fail("your probabilities differ from the exponential mechanism's", detail)


# ----------------------------------------------------------------------------------------------------------
# ex-03-bound: the tight quantile's proven miscoverage bound, summed term by term

def _bound_terms(alpha0, n, epsilon, m, *, plus_one=True, one=True, m_minus_one=True, one_minus_alpha=True,
                 cap=True):
    k = np.arange(1, n + 1, dtype=float)
    rate = epsilon * ((1 - alpha0) if one_minus_alpha else 1.0)
    with np.errstate(over="ignore"):
        tau = ((m - 1) if m_minus_one else m) * np.exp(-rate * (k - alpha0 * n))
    terms = np.minimum(1.0, tau) if cap else tau
    return ((1.0 if one else 0.0) + float(terms.sum())) / ((n + 1) if plus_one else n)


def _bound_variants(alpha0, n, epsilon, m) -> dict[str, float]:
    return {
        "you divide by n; the bound divides by n + 1 (one term per rank of the test score among n + 1)":
            _bound_terms(alpha0, n, epsilon, m, plus_one=False),
        "the term for k = 0 (the test score above every calibration score) is missing: add 1 before dividing":
            _bound_terms(alpha0, n, epsilon, m, one=False),
        "the tail has M edges in front of the exponential; at most M - 1 edges have a score above them":
            _bound_terms(alpha0, n, epsilon, m, m_minus_one=False),
        "the exponent misses the factor (1 - alpha0)": _bound_terms(alpha0, n, epsilon, m, one_minus_alpha=False),
        "each term is a probability: cap it at 1 with min(1, tau_k)": _bound_terms(alpha0, n, epsilon, m, cap=False),
    }


def _bound_cases(rng: np.random.Generator) -> list[Case]:
    n1, n2, n3 = int(rng.integers(150, 400)), int(rng.integers(15, 40)), int(rng.integers(2000, 6000))
    a1, a2 = float(rng.uniform(0.03, 0.08)), float(rng.uniform(0.1, 0.25))
    m1, m2 = int(rng.choice([100, 500, 1000])), int(rng.integers(4, 12))
    eps1, eps2 = float(rng.uniform(0.5, 2.0)), float(rng.uniform(20.0, 60.0))
    return [
        Case("a typical calibration set", f"n={n1}, alpha0={a1:.3f}, M={m1}", args=(a1, n1, eps1, m1)),
        Case("few scores and a large epsilon", f"n={n2}, alpha0={a2:.3f}, M={m2}", args=(a2, n2, eps2, m2)),
        Case("level 0", f"n={n1}, alpha0=0, M={m1}", args=(0.0, n1, eps1, m1)),
        Case("a bound that is capped near 1", f"n={n2}, M=1000", args=(a2, n2, 0.1 * eps1, 1000)),
        Case("thousands of scores", f"n={n3}, alpha0={a1:.3f}, M=1000", args=(a1, n3, eps1, 1000)),
    ]


@checker(function="miscoverage_bound", exercise="ex-03-bound", cases=_bound_cases,
         implements=("dpcp_tutorial.quantile.private_quantile_miscoverage_bound",))
def check_miscoverage_bound(ctx, case) -> None:
    """Check a reader's ``miscoverage_bound(alpha0, n, epsilon, m) -> float``: the tight quantile's proven bound (chapter 3).

    Expected: :math:`\\bar\\beta(\\alpha_0) = \\big(1 + \\sum_{k=1}^{n}\\min(1, (M-1)e^{-\\varepsilon(1-\\alpha_0)
    (k-\\alpha_0 n)})\\big)/(n+1)`, with :math:`M \\ge 2` edges. Cases include level 0, a bound near 1, few scores
    at a large :math:`\\varepsilon` and thousands of scores.
    """
    from ...quantile import private_quantile_miscoverage_bound

    alpha0, n, epsilon, m = case.args
    got = ctx.call(*case.args, returns=number())
    expected = private_quantile_miscoverage_bound(alpha0, n, epsilon, m)
    if math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12):
        return
    hint = next((msg for msg, value in _bound_variants(*case.args).items()
                 if math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, expected, rel_tol=1e-9)),
                "your bound differs from the chapter's miscoverage bound")
    ctx.fail(hint, f"expected {expected:.8f}, got {got:.8f}")


# ----------------------------------------------------------------------------------------------------------
# ex-03-release: the tight quantile's release law on a public grid, in log space

def _release_log_law(scores, edges, alpha0, epsilon, *, rounding=True, below_le=False, swapped=False, half=False):
    scores = np.asarray(scores, dtype=float)
    through = np.searchsorted(np.sort(scores), edges, side="right")          # #{R_i <= e_j}
    if rounding:
        below = np.concatenate(([0], through[:-1]))                          # #{R_i <= e_(j-1)}
    else:
        below = through if below_le else np.searchsorted(np.sort(scores), edges, side="left")
    above = scores.size - through
    if swapped:
        loss = np.maximum((1 - alpha0) * below, alpha0 * above)
    else:
        loss = np.maximum(alpha0 * below, (1 - alpha0) * above)
    return log_softmax(-(epsilon / 2 if half else epsilon) * loss)


def _release_variants(scores, edges, alpha0, epsilon) -> dict[str, np.ndarray]:
    return {
        "you count the raw scores below e_j; round every score up to its edge first (a score in "
        "(e_(j-1), e_j] counts as e_j, not below it)": _release_log_law(scores, edges, alpha0, epsilon, rounding=False),
        "you count scores at or below e_j in a_j; a_j counts the rounded scores strictly below the edge":
            _release_log_law(scores, edges, alpha0, epsilon, rounding=False, below_le=True),
        "the weights alpha0 and 1 - alpha0 are swapped between the two terms":
            _release_log_law(scores, edges, alpha0, epsilon, swapped=True),
        "your exponent has a factor 1/2: the tight quantile's exponent is -epsilon * u_j":
            _release_log_law(scores, edges, alpha0, epsilon, half=True),
    }


def _release_cases(rng: np.random.Generator) -> list[Case]:
    m = int(rng.integers(8, 15))
    uneven = np.r_[np.sort(rng.choice(np.arange(1, 200) / 200, size=int(rng.integers(5, 12)), replace=False)), 1.0]
    ties = rng.choice(np.r_[np.arange(1, m + 1) / m, 0.0], size=int(rng.integers(30, 60)))
    big = int(rng.integers(20_000, 60_000))
    return [
        Case("scores between the edges of a regular grid", f"n=40, M={m}", scores=rng.uniform(size=40),
             edges=np.arange(1, m + 1) / m, alpha0=float(rng.uniform(0.05, 0.2)), epsilon=1.0),
        Case("scores exactly on the edges and at 0, unsorted", f"M={m}", scores=ties,
             edges=np.arange(1, m + 1) / m, alpha0=float(rng.uniform(0.1, 0.3)), epsilon=2.0),
        Case("uneven public edges", f"M={uneven.size}", scores=rng.beta(2, 5, size=int(rng.integers(50, 90))),
             edges=uneven, alpha0=float(rng.uniform(0.05, 0.15)), epsilon=float(rng.uniform(0.5, 3.0))),
        Case("so many scores that exp(-epsilon u_j) underflows", f"n={big}, M=1000",
             scores=rng.beta(2, 5, size=big), edges=np.arange(1, 1001) / 1000,
             alpha0=float(rng.uniform(0.05, 0.1)), epsilon=1.0),
        Case("a level above one half", "M=5", scores=rng.uniform(size=30), edges=np.arange(1, 6) / 5,
             alpha0=float(rng.uniform(0.6, 0.8)), epsilon=float(rng.uniform(0.5, 2.0))),
    ]


@checker(function="release_log_probabilities", exercise="ex-03-release", cases=_release_cases,
         implements=("dpcp_tutorial.quantile._algorithm1_logits", "dpcp_tutorial.quantile.private_quantile_probabilities",
                     "dpcp_tutorial._counts.edge_histogram"))
def check_release_log_probabilities(ctx, case) -> None:
    """Check a reader's ``release_log_probabilities(scores, edges, alpha0, epsilon) -> array``: the tight quantile's log-law (chapter 3).

    Expected: :math:`\\log P(\\hat q = e_j)` with :math:`P \\propto \\exp(-\\varepsilon u_j)`,
    :math:`u_j = \\max(\\alpha_0 a_j, (1-\\alpha_0) b_j)`, the scores rounded up to the public edges, :math:`a_j`
    and :math:`b_j` the rounded scores strictly below and above :math:`e_j`. Cases include uneven edges, scores on
    edges, unsorted input and tens of thousands of scores, where the unnormalised weights underflow.
    """
    scores, edges, alpha0, epsilon = case.scores, case.edges, case.alpha0, case.epsilon
    nan_hint = ("NaN or -inf everywhere: the weights exp(-epsilon u_j) underflow to 0; subtract the smallest loss "
                "first, or normalise with a log-sum-exp")
    got = ctx.call(scores, edges, alpha0, epsilon, inputs=True,
                   returns=array(edges.shape, allow_inf=True, nan_hint=nan_hint, what="one log-probability per edge"))
    expected = _release_log_law(scores, edges, alpha0, epsilon)
    if np.allclose(got, expected, rtol=1e-9, atol=1e-9):
        return
    if np.any(np.isinf(got) & np.isfinite(expected)):
        ctx.stop("some log-probabilities are -inf although every edge has a positive probability: the "
                 "logarithm of a weight that underflowed; compute log-probabilities directly (log-sum-exp)")
    bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-9, atol=1e-9)))
    detail = f"at edge e_{bad + 1} = {edges[bad]:.6g} expected {expected[bad]:.6g}, got {got[bad]:.6g}"
    for hint, wrong in _release_variants(scores, edges, alpha0, epsilon).items():
        if np.allclose(got, wrong, rtol=1e-9, atol=1e-9):
            ctx.fail(hint, detail)
            return
    if np.allclose(got, np.exp(expected), rtol=1e-9, atol=1e-12):
        ctx.fail("return log-probabilities (np.log of the law), not probabilities", detail)
    elif not math.isclose(float(np.exp(got).sum()), 1.0, rel_tol=1e-6):
        ctx.fail("your log-probabilities do not normalise: their exponentials sum to "
                 f"{float(np.exp(got).sum()):.6g}, not 1", None)
    else:
        ctx.fail("your log-law differs from the tight quantile's", detail)
