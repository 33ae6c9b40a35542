"""Checkers for the coding exercises of chapter 3 (exponential mechanism, Algorithm 1)."""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax

from ._common import array, checker

__all__ = ["check_algorithm1_loss", "check_stable_probabilities"]


def _reference_loss(scores, edges, alpha0):
    ordered = np.sort(scores)
    a = np.searchsorted(ordered, edges, side="left")
    b = scores.size - np.searchsorted(ordered, edges, side="right")
    return np.maximum(a / (1 - alpha0), b / alpha0)


def _diagnose_loss(scores, edges, alpha0, got) -> str:
    """Name the typical mistake that produces ``got``."""
    ordered = np.sort(scores)
    n = scores.size
    a_lt = np.searchsorted(ordered, edges, side="left")
    a_le = np.searchsorted(ordered, edges, side="right")
    b_gt, b_ge = n - a_le, n - a_lt
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
    }
    for hint, wrong in variants.items():
        if np.allclose(got, wrong, rtol=1e-12, atol=0):
            return hint
    bad = int(np.argmax(~np.isclose(got, _reference_loss(scores, edges, alpha0), rtol=1e-12, atol=0)))
    return (f"at edge e_{bad + 1} = {edges[bad]:.6g} expected w = {_reference_loss(scores, edges, alpha0)[bad]:.6g}, "
            f"got {got[bad]:.6g}")


@checker(function="loss", exercise="ex-03-loss")
def check_algorithm1_loss(ctx) -> None:
    """Check a reader's ``loss(scores, edges, alpha0) -> array`` against the losses of Algorithm 1 (chapter 3).

    One loss per edge; hidden cases include scores exactly on edges, ties, scores
    at 0 and 1, and unsorted input.
    """
    rng = np.random.default_rng(3)
    cases = [
        (rng.uniform(size=50), np.arange(1, 11) / 10, 0.1),
        (np.array([0.0, 0.2, 0.2, 0.5, 0.5, 0.5, 1.0, 0.7, 0.2, 1.0]), np.array([0.2, 0.5, 0.7, 1.0]), 0.3),
        (rng.integers(0, 21, size=300) / 20, np.arange(1, 21) / 20, 0.05),   # every score on an edge or at 0
        (rng.beta(2, 5, size=1000), np.arange(1, 1001) / 1000, 0.02),
    ]
    for scores, edges, alpha0 in cases:
        got = ctx.call(scores.copy(), edges.copy(), alpha0, returns=array(edges.shape, what="one loss per edge"),
                       case=f"{scores.size} scores, {edges.size} edges, alpha0={alpha0}")
        if not np.allclose(got, _reference_loss(scores, edges, alpha0), rtol=1e-12, atol=0):
            ctx.fail(_diagnose_loss(scores, edges, alpha0, got))
            break


@checker(function="probabilities", exercise="ex-03-stable")
def check_stable_probabilities(ctx) -> None:
    """Check a reader's ``probabilities(losses, epsilon, sensitivity) -> probabilities`` (chapter 3).

    The output must be the exponential mechanism's probabilities, one per
    candidate, and never NaN: the hidden cases include losses of size
    :math:`10^5` to :math:`10^9` for which a naive computation underflows.
    """
    rng = np.random.default_rng(5)
    cases = [
        (np.array([3.0, 1.0, 2.0, 1.0, 5.0]), 1.0, 1.0),
        (rng.uniform(0, 20, size=50), 0.7, 2.0),
        (50_000 + rng.integers(0, 300, size=100).astype(float), 1.0, 1 / 0.03),   # every exp(...) underflows
        (1e9 + np.array([0.0, 1.0, 2.0, 1e6]), 1e3, 1.0),                      # huge losses and epsilon
    ]
    for losses, epsilon, sensitivity in cases:
        nan_hint = (f"NaN for losses around {np.min(losses):.3g}: every unnormalised weight underflows to 0 and "
                    "0/0 = NaN; normalise without computing those tiny weights directly (work in log space)")
        got = ctx.call(losses.copy(), epsilon, sensitivity,
                       returns=array(losses.shape, nan_hint=nan_hint, what="one probability per candidate"),
                       case=f"{losses.size} candidates")
        expected = np.exp(log_softmax(-epsilon * losses / (2 * sensitivity)))
        if np.allclose(got, expected, rtol=1e-9, atol=1e-300):
            continue
        if np.allclose(got, np.exp(log_softmax(-epsilon * losses / sensitivity)), rtol=1e-9, atol=1e-300):
            ctx.fail("your exponent is twice too large: compare it with the exponential mechanism's privacy "
                     "theorem in chapter 3")
        elif np.allclose(got, np.exp(log_softmax(epsilon * losses / (2 * sensitivity))), rtol=1e-9, atol=1e-300):
            ctx.fail("your probabilities favour the largest loss; w is a loss, not a utility")
        elif not np.isclose(got.sum(), 1.0):
            ctx.fail(f"your probabilities sum to {got.sum():.6g}; normalise them")
        else:
            bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-9, atol=1e-300)))
            ctx.fail(f"candidate {bad}: expected probability {expected[bad]:.6g}, got {got[bad]:.6g}")
        break
