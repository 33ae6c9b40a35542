"""Private split-conformal quantile (Angelopoulos, Bates, Zrnic & Jordan 2022), as taught in chapter 4.

Copy-ready: numpy only. Scores in [0, 1] come from a model trained on *other* data; the
calibration set is disjoint, so this release spends its epsilon on the calibration set only.
Grid: m edges k/(m-1), k = 0..m-1; scores are rounded up to the next edge; the exponent is
the reference implementation's epsilon*min(alpha, 1-alpha)/2 (epsilon-DP when
min(qtilde, 1-qtilde) >= min(alpha, 1-alpha)/2).
"""
import math

import numpy as np


def private_split_quantile(scores, alpha, epsilon, m, rng=None):
    """Return the private threshold s_hat in [0, 1]; the set is {y : s(x, y) <= s_hat} (1 = everything)."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0 or not (scores.min() >= 0.0 and scores.max() <= 1.0):
        raise ValueError("scores must be a non-empty 1-D array in [0, 1]")
    n = scores.size
    # optimal gamma: smaller root of a^2 g^2 - (a eps (n+1)(1-a)/2 + 2a) g + 1 = 0, clipped as in the reference
    b = alpha * epsilon * (n + 1) * (1 - alpha) / 2 + 2 * alpha
    gamma = min(max(2.0 / (b + math.sqrt(b * b - 4 * alpha * alpha)), 1e-12), 1 - 1e-12)
    qtilde = (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 2.0 / (epsilon * n) * math.log(m / (gamma * alpha))
    if qtilde >= 1.0:
        return 1.0                                    # too little data or budget: the trivial set
    edges = np.arange(m, dtype=float) / (m - 1)
    rounded = np.minimum(np.searchsorted(edges, scores, side="right"), m - 1)   # index of the next edge up
    counts = np.bincount(rounded, minlength=m)
    at_or_below = np.cumsum(counts)
    below, above = at_or_below - counts, n - at_or_below
    loss = np.maximum(below / qtilde, above / (1.0 - qtilde))
    exponent = epsilon * min(alpha, 1.0 - alpha) / 2.0
    if exponent / min(qtilde, 1.0 - qtilde) > epsilon:
        raise ValueError("this exponent is not epsilon-DP here; use more data or a larger epsilon")
    logits = -exponent * (loss - loss.min())
    rng = np.random.default_rng(rng)
    return float(edges[np.argmax(logits + rng.gumbel(size=m))])
