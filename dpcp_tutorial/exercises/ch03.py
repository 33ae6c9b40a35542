"""Checkers for the coding exercises of chapter 3 (exponential mechanism, private quantiles)."""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax

from ._common import Case, array, checker

__all__ = ["check_algorithm1_loss", "check_stable_probabilities"]


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
    """Check a reader's ``loss(scores, edges, alpha0) -> array``: the losses of the write-up's Algorithm 1 (chapter 3, *Reproducing the sources*).

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
         implements=("dpcp_tutorial.mechanisms.exponential_mechanism_probabilities", "dpcp_tutorial.mechanisms._normalise",
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
