"""Private quantile of conformal scores: the seed's Algorithm 1 (chapter 3).

Given scores :math:`R_1, \\dots, R_N \\in [0, 1]`, right bin edges
:math:`0 \\le e_1 < \\dots < e_M = 1`, a miscoverage level :math:`\\beta` and a
budget :math:`\\varepsilon`:

1. :math:`\\alpha_0 = \\beta - 2/(N\\varepsilon)` (must be positive);
2. :math:`a_j = \\#\\{i : R_i < e_j\\}`, :math:`b_j = \\#\\{i : R_i > e_j\\}`;
3. loss :math:`w_j = \\max\\big(a_j/(1-\\alpha_0),\\, b_j/\\alpha_0\\big)` with
   sensitivity :math:`\\Delta = 1/\\min(\\alpha_0, 1-\\alpha_0)`;
4. release :math:`e_j` with probability :math:`\\propto \\exp(-\\varepsilon w_j/(2\\Delta))`.

The loss is minimised near the :math:`(1-\\alpha_0)` empirical quantile.

Privacy (chapter 3, *What exactly is guaranteed*): with the record count
:math:`N` public, replacing one record changes every :math:`w_j` by at most
:math:`\\Delta`, so the release is :math:`\\varepsilon`-DP under replace-one.
Under add/remove with :math:`\\alpha_0` computed from a fixed public ``n`` the
loss is monotone and the release is :math:`\\varepsilon/2`-DP; when
:math:`\\alpha_0` is recomputed from each data set's own size the exact bound is
:func:`algorithm1_add_remove_loss`, which equals :math:`\\varepsilon/2` for every
:math:`\\beta \\le 1/2` (every conformal level) and can exceed :math:`\\varepsilon`
for :math:`\\beta > 1/2`.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import RandomLike, check_1d, check_alpha, check_epsilon, check_positive_int
from .mechanisms import _normalise, gumbel_max_sample

__all__ = [
    "quantile_edges",
    "algorithm1_level",
    "algorithm1_add_remove_loss",
    "private_quantile",
    "private_quantile_probabilities",
]


def quantile_edges(bins) -> np.ndarray:
    """Right bin edges for Algorithm 1.

    Parameters
    ----------
    bins : int or array-like
        An int ``M`` gives the edges :math:`j/M`, :math:`j = 1, \\dots, M`;
        an array must be strictly increasing, start at or above 0 and end at 1.

    Returns
    -------
    ndarray of shape (M,)
        The edges; the last one is exactly 1.
    """
    if np.ndim(bins) == 0:
        m = check_positive_int(bins, "bins")
        return np.arange(1, m + 1, dtype=float) / m
    edges = check_1d(bins, "bins")
    if edges[0] < 0 or edges[-1] != 1.0:
        raise ValueError(f"bin edges must lie in [0, 1] and end exactly at 1, got [{edges[0]}, ..., {edges[-1]}]; "
                         "scores live in [0, 1], so the last right edge must be 1")
    steps = np.diff(edges)
    if np.any(steps <= 0):
        j = int(np.argmax(steps <= 0))
        raise ValueError(f"bin edges must be strictly increasing, but edge {j + 1} ({edges[j + 1]}) "
                         f"does not exceed edge {j} ({edges[j]}); sort them and drop duplicates (np.unique)")
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


def _loss_weights(alpha0: float) -> tuple[float, float]:
    """:math:`(A, B) = (\\min(\\alpha_0, 1-\\alpha_0)/(1-\\alpha_0),\\ \\min(\\alpha_0, 1-\\alpha_0)/\\alpha_0)`."""
    m = min(alpha0, 1.0 - alpha0)
    return m / (1.0 - alpha0), m / alpha0


def algorithm1_add_remove_loss(beta: float, n: int, epsilon: float) -> float:
    """Bound on the privacy loss of Algorithm 1 between data sets of sizes ``n`` and ``n + 1`` (chapter 3).

    When :math:`\\alpha_0` is recomputed from each data set's own size, adding a
    record changes both the counts and :math:`\\alpha_0`. With
    :math:`A(\\alpha) = \\min(\\alpha, 1-\\alpha)/(1-\\alpha)`,
    :math:`B(\\alpha) = \\min(\\alpha, 1-\\alpha)/\\alpha`,
    :math:`\\alpha = \\alpha_0(n)` and :math:`\\alpha' = \\alpha_0(n+1)`, every
    log-probability ratio is at most

    .. math:: \\frac{\\varepsilon}{2}\\Big[\\max\\big(A(\\alpha') + n\\,(A(\\alpha') - A(\\alpha)),\\ B(\\alpha')\\big)
              + n\\,\\big(B(\\alpha) - B(\\alpha')\\big)\\Big],

    which equals :math:`\\varepsilon/2` whenever :math:`\\beta \\le 1/2` and is
    :math:`\\varepsilon/2 + O(1/n)` in general; for :math:`\\beta > 1/2` and
    :math:`N\\varepsilon` close to :math:`2/\\beta` it can exceed :math:`\\varepsilon`
    (chapter 3 has a counterexample). For a data set of size
    :math:`N`, both ``algorithm1_add_remove_loss(beta, N - 1, epsilon)`` (remove
    one) and ``algorithm1_add_remove_loss(beta, N, epsilon)`` (add one) apply.

    Raises
    ------
    ValueError
        If Algorithm 1 is infeasible at size ``n``.
    """
    alpha = algorithm1_level(beta, n, epsilon)
    alpha_next = algorithm1_level(beta, n + 1, epsilon)
    gap = 2.0 / (n * (n + 1) * float(epsilon))  # alpha' - alpha, computed without cancellation
    # n * (A(alpha') - A(alpha)) and n * (B(alpha) - B(alpha')) in closed form (A rises below 1/2, B falls above)
    if alpha_next <= 0.5:
        rise_a, fall_b = n * gap / ((1.0 - alpha) * (1.0 - alpha_next)), 0.0
    elif alpha >= 0.5:
        rise_a, fall_b = 0.0, n * gap / (alpha * alpha_next)
    else:  # the pair straddles 1/2
        rise_a, fall_b = n * (1.0 - 2.0 * alpha) / (1.0 - alpha), n * (2.0 * alpha_next - 1.0) / alpha_next
    a_next, b_next = _loss_weights(alpha_next)
    return 0.5 * float(epsilon) * (max(a_next + rise_a, b_next) + fall_b)


def _sorted_unit_scores(scores) -> np.ndarray:
    """Sorted copy of the scores; validated from the sorted ends (no extra pass on the happy path)."""
    try:
        arr = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1 or arr.size == 0:
        check_1d(scores, "scores", unit_interval=True)  # raises the standard message
    ordered = np.sort(arr)  # NaN sorts last, so the two ends decide validity
    if not (ordered[0] >= 0.0 and ordered[-1] <= 1.0):
        check_1d(arr, "scores", unit_interval=True)  # raises the standard message
    return ordered


def _algorithm1_logits(scores, beta: float, epsilon: float, bins, n) -> tuple[np.ndarray, np.ndarray]:
    ordered = _sorted_unit_scores(scores)
    edges = quantile_edges(bins)
    size = ordered.size
    alpha0 = algorithm1_level(beta, size if n is None else n, epsilon)
    epsilon = float(epsilon)
    below = np.searchsorted(ordered, edges, side="left")         # a_j = #{R_i < e_j}
    above = size - np.searchsorted(ordered, edges, side="right")  # b_j = #{R_i > e_j}
    loss = np.maximum(below / (1.0 - alpha0), above / alpha0)
    sensitivity = 1.0 / min(alpha0, 1.0 - alpha0)
    # shift by the minimum loss before scaling: logits are <= 0, the best is 0
    logits = -(epsilon / (2.0 * sensitivity)) * (loss - loss.min())
    return edges, logits


def private_quantile_probabilities(scores, beta: float, epsilon: float, bins=1000, log: bool = False, *,
                                   n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact output law of :func:`private_quantile` (chapter 3).

    .. math:: P(\\hat q = e_j) = \\frac{\\exp(-\\varepsilon w_j/(2\\Delta))}{\\sum_k \\exp(-\\varepsilon w_k/(2\\Delta))},

    computed as a log-softmax, so it never returns ``nan`` even where every
    unnormalised weight underflows.

    Parameters
    ----------
    scores, beta, epsilon, bins, n
        As in :func:`private_quantile`.
    log : bool
        Return log-probabilities (exact where probabilities underflow to 0;
        used by the privacy audits).

    Returns
    -------
    edges : ndarray of shape (M,)
        The candidate outputs.
    probabilities : ndarray of shape (M,)
        :math:`P(\\hat q = e_j)` (or its logarithm).
    """
    edges, logits = _algorithm1_logits(scores, beta, epsilon, bins, n)
    return edges, _normalise(logits, log)


def private_quantile(scores, beta: float, epsilon: float, bins=1000, rng: RandomLike = None, *,
                     n: int | None = None) -> float:
    """:math:`\\varepsilon`-DP quantile of scores in [0, 1] (Algorithm 1, chapter 3).

    Returns one of the right bin edges, chosen by the exponential mechanism
    with loss :math:`w_j = \\max(a_j/(1-\\alpha_0), b_j/\\alpha_0)`,
    :math:`a_j = \\#\\{R_i < e_j\\}`, :math:`b_j = \\#\\{R_i > e_j\\}` and
    :math:`\\alpha_0 = \\beta - 2/(N\\varepsilon)`; sampled with the Gumbel-max
    trick in log space. Cost :math:`O(N \\log N + M \\log N)` (one sort, two
    ``searchsorted`` calls).

    Privacy: :math:`\\varepsilon`-DP under replace-one with :math:`N` public;
    :math:`\\varepsilon/2`-DP under add/remove when ``n`` is a fixed public
    constant; under add/remove with ``n=None`` see
    :func:`algorithm1_add_remove_loss` (:math:`\\varepsilon/2` for every
    :math:`\\beta \\le 1/2`).

    Parameters
    ----------
    scores : array-like of shape (N,)
        Non-conformity scores, already normalised to [0, 1] by a *public* bound.
    beta : float
        Miscoverage level in (0, 1); must exceed :math:`2/(N\\varepsilon)`.
    epsilon : float
        Privacy budget spent on this release.
    bins : int or array-like
        ``M`` equal bins (edges :math:`j/M`, :math:`j = 1..M`) or explicit
        strictly increasing right edges in [0, 1] ending at 1.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    n : int, optional
        Public record count used for :math:`\\alpha_0` (and hence
        :math:`\\Delta`); defaults to ``len(scores)``. Fixing it makes
        :math:`\\alpha_0` data-independent.

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
    edges, logits = _algorithm1_logits(scores, beta, epsilon, bins, n)
    return float(edges[gumbel_max_sample(logits, rng)])
