"""Private quantile of conformal scores: the seed's Algorithm 1 (chapter 3).

Given scores :math:`R_1, \\dots, R_N \\in [0, 1]`, right bin edges
:math:`0 \\le e_1 < \\dots < e_M = 1`, a miscoverage level :math:`\\beta` and a
budget :math:`\\varepsilon`:

1. :math:`\\alpha_0 = \\beta - 2/(N\\varepsilon)` (must be positive);
2. :math:`a_j = \\#\\{i : R_i < e_j\\}`, :math:`b_j = \\#\\{i : R_i > e_j\\}`;
3. loss :math:`w_j = \\max\\big(a_j/(1-\\alpha_0),\\, b_j/\\alpha_0\\big)` with
   sensitivity :math:`\\Delta = 1/\\min(\\alpha_0, 1-\\alpha_0)`;
4. release :math:`e_j` with probability :math:`\\propto \\exp(-\\varepsilon w_j/(2\\Delta))`.

The loss is minimised near the :math:`(1-\\alpha_0)` empirical quantile. One
record changes every :math:`w_j` by at most :math:`\\Delta` (add/remove and
replace-one alike), so the release is :math:`\\varepsilon`-DP. The number of
records :math:`N` is treated as public.
"""

from __future__ import annotations

import numpy as np

from ._validation import RandomLike, check_1d, check_alpha, check_epsilon, check_positive_int
from .mechanisms import _normalise, gumbel_max_sample

__all__ = ["quantile_edges", "private_quantile", "private_quantile_probabilities", "algorithm1_level"]


def quantile_edges(bins) -> np.ndarray:
    """Right bin edges for Algorithm 1.

    Parameters
    ----------
    bins : int or array-like
        An int ``M`` gives the edges :math:`j/M`, :math:`j = 1, \\dots, M`;
        an array must be strictly increasing, start at or above 0 and end at 1.
    """
    if np.ndim(bins) == 0:
        m = check_positive_int(bins, "bins")
        return np.arange(1, m + 1, dtype=float) / m
    edges = check_1d(bins, "bins")
    if edges[0] < 0 or edges[-1] != 1.0:
        raise ValueError(f"bin edges must lie in [0, 1] and end exactly at 1, got [{edges[0]}, ..., {edges[-1]}]")
    if np.any(np.diff(edges) <= 0):
        raise ValueError("bin edges must be strictly increasing")
    return edges


def algorithm1_level(beta: float, n: int, epsilon: float) -> float:
    """The shifted level :math:`\\alpha_0 = \\beta - 2/(N\\varepsilon)` of Algorithm 1.

    Raises
    ------
    ValueError
        If :math:`\\alpha_0 \\le 0`, with the smallest ``n`` (or ``epsilon``) that works.
    """
    beta = check_alpha(beta, "beta")
    n = check_positive_int(n, "n")
    epsilon = check_epsilon(epsilon)
    shift = 2.0 / (n * epsilon)
    alpha0 = beta - shift
    if alpha0 <= 0:
        n_min = int(np.floor(2.0 / (beta * epsilon))) + 1
        raise ValueError(
            f"beta={beta:.6g} must exceed 2/(N*epsilon)={shift:.6g} (N={n}, epsilon={epsilon:.6g}); "
            f"increase epsilon above {2.0 / (n * beta):.6g} or use at least N={n_min} scores"
        )
    return alpha0


def _algorithm1_logits(scores, beta: float, epsilon: float, bins) -> tuple[np.ndarray, np.ndarray]:
    scores = check_1d(scores, "scores", unit_interval=True)
    edges = quantile_edges(bins)
    n = scores.size
    alpha0 = algorithm1_level(beta, n, epsilon)
    epsilon = float(epsilon)
    sorted_scores = np.sort(scores)
    below = np.searchsorted(sorted_scores, edges, side="left")        # a_j = #{R_i < e_j}
    above = n - np.searchsorted(sorted_scores, edges, side="right")   # b_j = #{R_i > e_j}
    loss = np.maximum(below / (1.0 - alpha0), above / alpha0)
    sensitivity = 1.0 / min(alpha0, 1.0 - alpha0)
    # shift by the minimum loss before scaling: logits are <= 0, the best is 0
    logits = -(epsilon / (2.0 * sensitivity)) * (loss - loss.min())
    return edges, logits


def private_quantile_probabilities(scores, beta: float, epsilon: float, bins=1000,
                                   log: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exact output law of :func:`private_quantile`.

    Parameters
    ----------
    scores, beta, epsilon, bins
        As in :func:`private_quantile`.
    log : bool
        Return log-probabilities (exact where probabilities underflow to 0).

    Returns
    -------
    edges : ndarray of shape (M,)
        The candidate outputs.
    probabilities : ndarray of shape (M,)
        :math:`P(\\hat q = e_j)` (or its logarithm).
    """
    edges, logits = _algorithm1_logits(scores, beta, epsilon, bins)
    return edges, _normalise(logits, log)


def private_quantile(scores, beta: float, epsilon: float, bins=1000, rng: RandomLike = None) -> float:
    """:math:`\\varepsilon`-DP quantile of scores in [0, 1] (Algorithm 1, chapter 3).

    Returns one of the right bin edges, chosen by the exponential mechanism
    with loss :math:`w_j = \\max(a_j/(1-\\alpha_0), b_j/\\alpha_0)` and
    :math:`\\alpha_0 = \\beta - 2/(N\\varepsilon)`; sampled with the Gumbel-max trick
    in log space. Cost :math:`O(N \\log N + M \\log N)`.

    Parameters
    ----------
    scores : array-like of shape (N,)
        Non-conformity scores, already normalised to [0, 1] by a *public* bound.
    beta : float
        Miscoverage level in (0, 1); must exceed :math:`2/(N\\varepsilon)`.
    epsilon : float
        Privacy budget spent on this release.
    bins : int or array-like
        ``M`` equal bins (edges :math:`j/M`) or explicit increasing right edges
        ending at 1.
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    float
        The released threshold :math:`\\hat q \\in \\{e_1, \\dots, e_M\\}`.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.random.default_rng(0).uniform(size=5000)
    >>> q = private_quantile(s, beta=0.1, epsilon=1.0, bins=100, rng=1)
    >>> 0.85 < q <= 0.95
    True
    """
    edges, logits = _algorithm1_logits(scores, beta, epsilon, bins)
    return float(edges[gumbel_max_sample(logits, rng)])
