"""Checkers for the coding exercises of chapter 3 (exponential mechanism, Algorithm 1)."""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax

from ._common import ExerciseResult, run_safely

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
        "you count scores equal to an edge in a_j: use a strict inequality, a_j = #{R_i < e_j}":
            np.maximum(a_le / (1 - alpha0), b_gt / alpha0),
        "you count scores equal to an edge in b_j: use a strict inequality, b_j = #{R_i > e_j}":
            np.maximum(a_lt / (1 - alpha0), b_ge / alpha0),
        "your denominators are swapped: a_j (scores below the edge) is divided by 1 - alpha0 and b_j by alpha0":
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


def check_algorithm1_loss(fn) -> ExerciseResult:
    """Check a reader's ``fn(scores, edges, alpha0) -> array`` of Algorithm 1 losses (chapter 3).

    Expected :math:`w_j = \\max(a_j/(1-\\alpha_0), b_j/\\alpha_0)` with the strict counts
    :math:`a_j = \\#\\{R_i < e_j\\}` and :math:`b_j = \\#\\{R_i > e_j\\}`. Hidden cases include
    scores exactly on edges, ties, scores at 0 and 1, and unsorted input.
    """
    result = ExerciseResult("check_algorithm1_loss")
    rng = np.random.default_rng(3)
    cases = [
        (rng.uniform(size=50), np.arange(1, 11) / 10, 0.1),
        (np.array([0.0, 0.2, 0.2, 0.5, 0.5, 0.5, 1.0, 0.7, 0.2, 1.0]), np.array([0.2, 0.5, 0.7, 1.0]), 0.3),
        (rng.integers(0, 21, size=300) / 20, np.arange(1, 21) / 20, 0.05),   # every score on an edge or at 0
        (rng.beta(2, 5, size=1000), np.arange(1, 1001) / 1000, 0.02),
    ]
    for scores, edges, alpha0 in cases:
        got = run_safely(result, fn, scores.copy(), edges.copy(), alpha0)
        if got is None:
            break
        got = np.asarray(got, dtype=float)
        if got.shape != edges.shape:
            result.fail(f"expected one loss per edge, shape {edges.shape}; got shape {got.shape}")
            break
        if not np.allclose(got, _reference_loss(scores, edges, alpha0), rtol=1e-12, atol=0):
            result.fail(_diagnose_loss(scores, edges, alpha0, got))
            break
    return result.report()


def check_stable_probabilities(fn) -> ExerciseResult:
    """Check a reader's ``fn(losses, epsilon, sensitivity) -> probabilities`` (chapter 3).

    Expected :math:`p_j \\propto \\exp(-\\varepsilon w_j / (2\\Delta))`, computed so that it
    never returns NaN: the hidden cases include losses of size :math:`10^5` to :math:`10^9` for
    which every unnormalised weight underflows to 0.
    """
    result = ExerciseResult("check_stable_probabilities")
    rng = np.random.default_rng(5)
    cases = [
        (np.array([3.0, 1.0, 2.0, 1.0, 5.0]), 1.0, 1.0),
        (rng.uniform(0, 20, size=50), 0.7, 2.0),
        (50_000 + rng.integers(0, 300, size=100).astype(float), 1.0, 1 / 0.03),   # every exp(...) underflows
        (1e9 + np.array([0.0, 1.0, 2.0, 1e6]), 1e3, 1.0),                      # huge losses and epsilon
    ]
    for losses, epsilon, sensitivity in cases:
        with np.errstate(all="ignore"):  # the reader's naive version may warn; the feedback says why
            got = run_safely(result, fn, losses.copy(), epsilon, sensitivity)
        if got is None:
            break
        got = np.asarray(got, dtype=float)
        expected = np.exp(log_softmax(-epsilon * losses / (2 * sensitivity)))
        if got.shape != losses.shape:
            result.fail(f"expected one probability per candidate, shape {losses.shape}; got shape {got.shape}")
            break
        if np.isnan(got).any():
            result.fail(f"NaN for losses around {np.min(losses):.3g}: exp(-epsilon * w / (2 Delta)) underflows to "
                        "0 for every candidate and 0/0 = NaN; subtract the smallest loss before exponentiating "
                        "(or use scipy.special.softmax / log_softmax)")
            break
        if np.allclose(got, expected, rtol=1e-9, atol=1e-300):
            continue
        if np.allclose(got, np.exp(log_softmax(-epsilon * losses / sensitivity)), rtol=1e-9, atol=1e-300):
            result.fail("you use exp(-epsilon * w / Delta); the exponential mechanism needs the factor 2: "
                        "exp(-epsilon * w / (2 Delta)) (chapter 3, privacy theorem)")
        elif np.allclose(got, np.exp(log_softmax(epsilon * losses / (2 * sensitivity))), rtol=1e-9, atol=1e-300):
            result.fail("your probabilities favour the largest loss; w is a loss, so use exp(-epsilon * w / (2 Delta))")
        elif not np.isclose(got.sum(), 1.0):
            result.fail(f"your probabilities sum to {got.sum():.6g}; normalise them")
        else:
            bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-9, atol=1e-300)))
            result.fail(f"candidate {bad}: expected probability {expected[bad]:.6g}, got {got[bad]:.6g}")
        break
    return result.report()
