"""Private quantile of conformal scores (Algorithm 1 of the DPCP write-up, as taught in chapter 3).

Copy-ready: numpy only. The exponential mechanism over bin edges, sampled with the
Gumbel-max trick in log space (McSherry & Talwar 2007), so it never under- or overflows.
"""
import numpy as np


def private_quantile(scores, beta, epsilon, bins=1000, rng=None):
    """epsilon-DP threshold for scores in [0, 1] at miscoverage beta; returns one of the edges j/bins."""
    scores = np.sort(np.asarray(scores, dtype=float))
    if scores.ndim != 1 or scores.size == 0 or not (scores[0] >= 0.0 and scores[-1] <= 1.0):
        raise ValueError("scores must be a non-empty 1-D array in [0, 1] (normalise by a public bound)")
    n = scores.size
    alpha0 = beta - 2.0 / (n * epsilon)
    if alpha0 <= 0:
        raise ValueError(f"beta={beta} must exceed 2/(n*epsilon)={2.0 / (n * epsilon):.4g}; raise epsilon or n")
    edges = np.arange(1, bins + 1, dtype=float) / bins
    below = np.searchsorted(scores, edges, side="left")         # #{R_i < e_j}
    above = n - np.searchsorted(scores, edges, side="right")    # #{R_i > e_j}
    loss = np.maximum(below / (1.0 - alpha0), above / alpha0)
    sensitivity = 1.0 / min(alpha0, 1.0 - alpha0)
    logits = -(epsilon / (2.0 * sensitivity)) * (loss - loss.min())
    rng = np.random.default_rng(rng)
    return float(edges[np.argmax(logits + rng.gumbel(size=logits.size))])
