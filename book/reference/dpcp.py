"""DPCP, the calibration step of Algorithm 2 (as described by the DPCP write-up; chapters 5-6).

Copy-ready: numpy only. The model mu_n was trained on the same n points by an
(epsilon1, delta)-DP algorithm under add/remove neighbours; this function releases the
threshold with epsilon2 more (total epsilon1 + epsilon2, delta by basic composition).
"""
import math

import numpy as np


def dpcp_intervals(y, pred_train, pred_test, bound, alpha, delta, epsilon1, epsilon2, bins=1000, rng=None):
    """Intervals mu_n(x) +/- bound * q_hat for the test predictions, or the whole line when q_hat = 1."""
    scores = np.minimum(np.abs(np.asarray(y, float) - np.asarray(pred_train, float)) / bound, 1.0)
    n = scores.size
    if not alpha > delta:
        raise ValueError("alpha must exceed delta")
    alpha1 = math.exp(-epsilon1) * (alpha - delta)      # the Differential-CP level
    alpha0 = alpha1 - 2.0 / (n * epsilon2)              # the level inside Algorithm 1
    if alpha0 <= 0:
        raise ValueError(f"infeasible: need n > {2.0 / (alpha1 * epsilon2):.1f} for these budgets")
    ordered = np.sort(scores)
    edges = np.arange(1, bins + 1, dtype=float) / bins
    below = np.searchsorted(ordered, edges, side="left")
    above = n - np.searchsorted(ordered, edges, side="right")
    loss = np.maximum(below / (1.0 - alpha0), above / alpha0)
    sensitivity = 1.0 / min(alpha0, 1.0 - alpha0)
    logits = -(epsilon2 / (2.0 * sensitivity)) * (loss - loss.min())
    rng = np.random.default_rng(rng)
    qhat = float(edges[np.argmax(logits + rng.gumbel(size=bins))])
    half = math.inf if qhat >= 1.0 else bound * qhat
    pred_test = np.asarray(pred_test, float)
    return np.column_stack([pred_test - half, pred_test + half])
