"""Exponential-mechanism spatial median over public candidates (Ramsay, Jagannath & Chenouri 2025; chapter 10).

Copy-ready: numpy only. Exactly epsilon-DP (replace-one neighbours, n public): spatial depth
has global sensitivity 2/n in every dimension, so beta = epsilon / (2 * 2/n) = epsilon * n / 4.
The candidates are drawn from a public prior N(0, (5 sqrt(d))^2 I), never from the data.
"""
import numpy as np


def spatial_depth(points, data):
    """1 - || mean_i S(x - X_i) || with S(v) = v / ||v|| and S(0) = 0, for each row x of points."""
    centre = data.mean(axis=0)
    xc, qc = data - centre, points - centre
    depths = np.empty(len(points))
    for k, q in enumerate(qc):
        diff = q - xc
        r = np.sqrt((diff ** 2).sum(axis=1))
        w = np.divide(1.0, r, out=np.zeros_like(r), where=r > 0)
        depths[k] = 1.0 - np.linalg.norm(q * w.sum() - w @ xc) / len(data)
    return np.clip(depths, 0.0, 1.0)


def private_spatial_median(data, epsilon, n_candidates=1000, rng=None):
    data = np.asarray(data, dtype=float)
    n, d = data.shape
    rng = np.random.default_rng(rng)
    candidates = 5.0 * np.sqrt(d) * rng.standard_normal((n_candidates, d))   # public prior draws
    beta = epsilon * n / 4.0
    values = spatial_depth(candidates, data)
    logits = beta * (values - values.max())                                  # log space: never overflows
    return candidates[np.argmax(logits + rng.gumbel(size=n_candidates))].copy()
