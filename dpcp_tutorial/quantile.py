"""Private quantile of conformal scores: Algorithm 1 of the DPCP write-up and its tight variant (chapter 3).

Given scores :math:`R_1, \\dots, R_n \\in [0, 1]`, right bin edges
:math:`0 \\le e_1 < \\dots < e_M = 1`, a miscoverage level :math:`\\beta` and a
budget :math:`\\varepsilon`, both variants release an edge :math:`e_j` with
probability :math:`\\propto \\exp(-\\varepsilon\\,u_j)`.

``variant="original"`` (the DPCP write-up's Algorithm 1, reproduced exactly):
:math:`\\alpha_0 = \\beta - 2/(n\\varepsilon)`, :math:`a_j = \\#\\{R_i < e_j\\}`,
:math:`b_j = \\#\\{R_i > e_j\\}`, loss
:math:`w_j = \\max(a_j/(1-\\alpha_0), b_j/\\alpha_0)`, sensitivity
:math:`\\Delta = 1/\\min(\\alpha_0, 1-\\alpha_0)` and
:math:`\\varepsilon u_j = \\varepsilon w_j/(2\\Delta)`.

``variant="tight"`` (the package default, chapter 3): the scores are rounded up
to the grid (a score in :math:`(e_{j-1}, e_j]` becomes :math:`e_j`, which leaves
every event :math:`\\{R \\le e_j\\}` unchanged), so
:math:`a_j = \\#\\{R_i \\le e_{j-1}\\}` and :math:`b_j = \\#\\{R_i > e_j\\}`; the
exponent is :math:`\\varepsilon\\alpha_0(1-\\alpha_0)w_j`, i.e.
:math:`u_j = \\max(\\alpha_0 a_j, (1-\\alpha_0) b_j)`; and :math:`\\alpha_0` is the
largest level whose proven miscoverage bound
(:func:`private_quantile_miscoverage_bound`) is at most :math:`\\beta`.

A public ``n`` means exactly ``n`` scores: :func:`private_quantile` first
takes a uniform ``n``-subset of the scores, or pads them with the maximal score
1 (``at_public_size``), so the level's proof holds at every data size and
adding or removing a record becomes a replacement at size ``n``.

Privacy (sharp bounds, :func:`private_quantile_privacy_loss`), under
replace-one with :math:`n` public, and under both relations with a public ``n``:

* ``"tight"``: :math:`\\varepsilon`;
* ``"original"``: :math:`\\varepsilon/(2\\max(\\alpha_0, 1-\\alpha_0))`.

(The exponential mechanism itself, run on :math:`n \\pm 1` scores at a level fixed
by ``n``, moves by :math:`\\varepsilon\\max(\\alpha_0, 1-\\alpha_0)` and
:math:`\\varepsilon/2`; without the subsample-or-pad step its coverage fails at sizes
below ``n``.)

When :math:`\\alpha_0` is recomputed from each data set's own size (``n=None``)
under add/remove, the level moves with the size and the exact bound is
``private_quantile_privacy_loss(..., relation="add/remove", public_n=False)``.
Coverage: the tight variant has :math:`P(R_{n+1} \\le \\hat q) \\ge 1-\\beta` for
every exchangeable score distribution (ties included) at every feasible
:math:`(n, \\varepsilon, M)`; the original has no such guarantee.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ._counts import (EdgeHistogram, below_above, check_scores_or_histogram, check_unit_scores, edge_histogram,
                      subsample_or_pad)
from ._validation import (
    MAX_BINS,
    MAX_RECORDS,
    QUANTILE_VARIANTS,
    RandomLike,
    check_1d,
    check_alpha,
    check_bool,
    check_choice,
    check_epsilon,
    check_positive_int,
    check_quantile_variant,
    check_scalar,
)
from ._mechanism_core import normalise, opendp_noisy_max
from .mechanisms import check_sampler, gumbel_max_sample, rounded_up

__all__ = [
    "quantile_edges",
    "algorithm1_level",
    "algorithm1_add_remove_loss",
    "QUANTILE_VARIANTS",
    "private_quantile_level",
    "private_quantile_miscoverage_bound",
    "private_quantile_privacy_loss",
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

    Examples
    --------
    >>> from dpcp_tutorial import quantile_edges
    >>> quantile_edges(4)
    array([0.25, 0.5 , 0.75, 1.  ])
    """
    if np.ndim(bins) == 0:
        m = check_positive_int(bins, "bins", maximum=MAX_BINS)
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
    """The shifted level :math:`\\alpha_0 = \\beta - 2/(n\\varepsilon)` of Algorithm 1.

    Parameters
    ----------
    beta : float
        Miscoverage level of the quantile, in (0, 1).
    n : int
        Public number of calibration scores :math:`n`.
    epsilon : float
        Privacy budget of the release, > 0.

    Returns
    -------
    float
        The level :math:`\\alpha_0`.

    Raises
    ------
    ValueError
        If :math:`\\alpha_0 \\le 0`, with the smallest ``n`` (or ``epsilon``) that works.

    Examples
    --------
    >>> from dpcp_tutorial import algorithm1_level
    >>> round(algorithm1_level(0.1, n=1000, epsilon=1.0), 4)
    0.098
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
    :math:`n\\varepsilon` close to :math:`2/\\beta` it can exceed :math:`\\varepsilon`
    (chapter 3 has a counterexample). For a data set of size
    :math:`n`, both ``algorithm1_add_remove_loss(beta, n - 1, epsilon)`` (remove
    one) and ``algorithm1_add_remove_loss(beta, n, epsilon)`` (add one) apply.

    Parameters
    ----------
    beta : float
        Miscoverage level of the quantile, in (0, 1).
    n : int
        Public number of calibration scores :math:`n`.
    epsilon : float
        Privacy budget of the release, > 0.

    Returns
    -------
    float
        The bound on the log-probability ratio.

    Raises
    ------
    ValueError
        If Algorithm 1 is infeasible at size ``n``.

    Examples
    --------
    >>> from dpcp_tutorial import algorithm1_add_remove_loss
    >>> round(algorithm1_add_remove_loss(0.1, n=1000, epsilon=1.0), 4)
    0.5
    """
    alpha = algorithm1_level(beta, n, epsilon)
    n = check_positive_int(n, "n")          # a Python int: n * (n + 1) must not wrap around in a NumPy integer
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


def _edge_count(bins) -> int:
    return check_positive_int(bins, "bins", maximum=MAX_BINS) if np.ndim(bins) == 0 else quantile_edges(bins).size


def private_quantile_miscoverage_bound(alpha0: float, n: int, epsilon: float, bins=1000) -> float:
    """Proven miscoverage bound of the tight private quantile at level ``alpha0`` (chapter 3).

    With :math:`c = \\varepsilon(1-\\alpha_0)` and :math:`M` edges,

    .. math:: P(R_{n+1} > \\hat q) \\le \\frac{1}{n+1}\\Big(1 + \\sum_{k=1}^{n} \\min\\big(1,\\
              (M-1)\\,e^{-c\\,(k - \\alpha_0 n)}\\big)\\Big)

    for every exchangeable score distribution (ties included): the test
    score's rank from the top is uniform on :math:`\\{0, \\dots, n\\}` and,
    whatever the data, the mechanism puts probability at most
    :math:`(M-1)e^{-c(k - \\alpha_0 n)}` on edges with :math:`k` or more scores
    above them (the term :math:`k = 0` is bounded by 1). The sum is evaluated
    in closed form. For ``M = 1`` the
    release is always 1 and the bound is :math:`1/(n+1)`.

    Parameters
    ----------
    alpha0 : float
        Level of the mechanism, in [0, 1).
    n : int
        Public number of calibration scores :math:`n`.
    epsilon : float
        Privacy budget.
    bins : int or array-like, default=1000
        The edges (only their number :math:`M` matters).

    Examples
    --------
    >>> from dpcp_tutorial import private_quantile_miscoverage_bound
    >>> round(private_quantile_miscoverage_bound(0.08, n=1000, epsilon=1.0, bins=100), 4)
    0.0866
    """
    alpha0 = check_scalar(alpha0, "alpha0", low=0.0, high=1.0, low_inclusive=True)
    n = check_positive_int(n, "n")
    epsilon = check_epsilon(epsilon)
    m = _edge_count(bins)
    if m == 1:
        return 1.0 / (n + 1)
    c = epsilon * (1.0 - alpha0)
    # terms with (M-1) e^{-c(k - alpha0 N)} >= 1 contribute 1 each (k = 0..k0), the rest a geometric tail
    k0 = math.floor(alpha0 * n + math.log(m - 1) / c)
    if k0 >= n:
        return 1.0
    first = (m - 1) * math.exp(-c * (k0 + 1 - alpha0 * n))
    tail = first * (-math.expm1(-c * (n - k0))) / (-math.expm1(-c))
    return min(1.0, (k0 + 1 + tail) / (n + 1))


@lru_cache(maxsize=256)
def _tight_level(beta: float, n: int, epsilon: float, m: int) -> float:
    bins = m                  # only the number of edges enters the bound
    if m == 1:
        return beta   # the release is always the top edge; the level plays no role
    if private_quantile_miscoverage_bound(0.0, n, epsilon, bins) > beta:
        n_min = n
        while private_quantile_miscoverage_bound(0.0, n_min, epsilon, bins) > beta and n_min < 2**62:
            n_min *= 2
        lo = n_min // 2
        while n_min - lo > 1:   # smallest feasible n by bisection (the bound at level 0 falls with n)
            mid = (lo + n_min) // 2
            lo, n_min = (lo, mid) if private_quantile_miscoverage_bound(0.0, mid, epsilon, bins) <= beta \
                else (mid, n_min)
        raise ValueError(
            f"the tight private quantile cannot guarantee miscoverage beta={beta:.6g} with N={n} scores, "
            f"epsilon={epsilon:.6g} and M={m} edges (even at level 0 the proven bound exceeds beta); use at least "
            f"N={n_min} scores, a larger epsilon or fewer bins"
        )
    lo, hi = 0.0, 1.0
    for _ in range(64):   # the bound increases with the level: bisection to double precision
        mid = 0.5 * (lo + hi)
        if private_quantile_miscoverage_bound(mid, n, epsilon, bins) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


def private_quantile_level(beta: float, n: int, epsilon: float, bins=1000, variant: str = "tight") -> float:
    """The level :math:`\\alpha_0` of the private quantile (chapter 3).

    ``variant="original"``: :math:`\\alpha_0 = \\beta - 2/(n\\varepsilon)`
    (:func:`algorithm1_level`). ``variant="tight"``: the largest
    :math:`\\alpha_0` with :func:`private_quantile_miscoverage_bound`
    :math:`\\le \\beta`, found by bisection; it depends on :math:`n`,
    :math:`\\varepsilon`, :math:`\\beta` and the number of edges :math:`M`, all public.

    Parameters
    ----------
    beta : float
        Miscoverage level of the quantile, in (0, 1).
    n : int
        Public number of calibration scores :math:`n`.
    epsilon : float
        Privacy budget of the release, > 0.
    bins : int or array-like, default=1000
        The edges (:func:`quantile_edges`; only their number :math:`M` matters).
    variant : {"tight", "original"}, default="tight"
        The mechanism (:func:`private_quantile`).

    Returns
    -------
    float
        The level :math:`\\alpha_0`.

    Raises
    ------
    ValueError
        If no positive level works; the message names the smallest ``n`` (and
        what else to change). It depends only on the public inputs.

    Examples
    --------
    >>> from dpcp_tutorial import private_quantile_level
    >>> round(private_quantile_level(0.1, n=1000, epsilon=1.0, bins=100), 4)
    0.0935
    """
    variant = check_quantile_variant(variant)
    if variant == "original":
        return algorithm1_level(beta, n, epsilon)
    beta = check_alpha(beta, "beta")
    n = check_positive_int(n, "n")
    epsilon = check_epsilon(epsilon)
    return _tight_level(float(beta), n, float(epsilon), _edge_count(bins))


def private_quantile_privacy_loss(beta: float, n: int, epsilon: float, bins=1000, variant: str = "tight", *,
                                  relation: str = "replace-one", public_n: bool = True) -> float:
    """Sharp privacy loss of the private quantile: no neighbours exceed it, and they approach it (chapter 3).

    Write the release as :math:`P(e_j) \\propto \\exp(-\\varepsilon u_j)` with
    :math:`u_j = \\max(A a_j, B b_j)`: :math:`(A, B) = (\\alpha_0, 1-\\alpha_0)` for
    ``"tight"`` and :math:`\\min(\\alpha_0, 1-\\alpha_0)/2 \\cdot (1/(1-\\alpha_0), 1/\\alpha_0)`
    for ``"original"``. Replacing one record moves a score from one side of
    the edges between its old and new value to the other, so every
    :math:`u_j` changes by at least :math:`-A` and at most :math:`B` (or the
    reverse): the loss is :math:`\\varepsilon(A + B)`. Adding a record to the
    scores, at a level fixed by a public ``n``, moves every :math:`u_j` up by
    at most :math:`\\max(A, B)` (the mechanism's own add/remove loss, the
    one chapter 4 audits). With :math:`M \\ge 2` bins these bounds are sharp
    (with one bin the release is constant and the loss 0): neighbouring data
    sets come arbitrarily close to them as :math:`\\varepsilon n` grows (all
    scores on one edge, one record moved to the next), while at a fixed
    :math:`n` the largest log-ratio is slightly smaller, e.g. for the tight
    variant at :math:`M = 2`, :math:`n = 20`, :math:`\\beta = 0.3` it is
    :math:`0.982\\varepsilon` at :math:`\\varepsilon = 0.216` and
    :math:`0.9999997\\varepsilon` at :math:`\\varepsilon = 1` (chapter 3).

    ``relation="replace-one"`` (sizes equal, :math:`n` public):
    :math:`\\varepsilon` (tight), :math:`\\varepsilon/(2\\max(\\alpha_0, 1-\\alpha_0))` (original).
    ``relation="add/remove"``, ``public_n=True``: the loss of
    :func:`private_quantile` with the public ``n``, which first subsamples or
    pads the scores to exactly ``n`` (``at_public_size``). A uniform
    ``n``-subset of :math:`D \\cup \\{r\\}` avoids :math:`r` or is a subset of
    :math:`D` with one element replaced by :math:`r`; with padding, :math:`r`
    takes the place of one pad. So adding or removing a record is a
    replace-one pair at size ``n``, and the loss is the replace-one loss above,
    under both relations: :math:`\\varepsilon` (tight),
    :math:`\\varepsilon/(2\\max(\\alpha_0, 1-\\alpha_0))` (original). It is sharp
    too (a pad, the top score 1, replaced by a score in the lowest cell).
    ``public_n=False``: between sizes ``n`` and
    ``n + 1`` with :math:`\\alpha_0` recomputed from each size; for the original
    variant this is :func:`algorithm1_add_remove_loss`, for the tight one, with
    :math:`\\alpha = \\alpha_0(n)`, :math:`\\alpha' = \\alpha_0(n+1)` and
    :math:`d = n\\,|\\alpha' - \\alpha|`, the bound
    :math:`\\varepsilon[\\max(\\alpha' + d, 1-\\alpha') + d]` if :math:`\\alpha' \\ge \\alpha`
    and :math:`\\varepsilon[\\max(\\alpha', 1-\\alpha' + d) + d]` otherwise.

    Parameters
    ----------
    beta : float
        Miscoverage level of the quantile, in (0, 1).
    n : int
        Public number of calibration scores :math:`n`.
    epsilon : float
        Privacy budget of the release, > 0.
    bins : int or array-like, default=1000
        The edges (:func:`quantile_edges`; only their number :math:`M` matters).
    variant : {"tight", "original"}, default="tight"
        The mechanism (:func:`private_quantile`).
    relation : {"replace-one", "add/remove"}, default="replace-one"
        The neighbour relation of the loss.
    public_n : bool, default=True
        Under add/remove: whether the level is fixed by a public ``n``
        (``True``) or recomputed from each data set's own size (``False``).

    Returns
    -------
    float
        The privacy loss :math:`\\varepsilon'` of one release.

    Raises
    ------
    ValueError
        If the variant is infeasible at size ``n`` (or ``n + 1``).

    Examples
    --------
    >>> from dpcp_tutorial import private_quantile_privacy_loss
    >>> round(private_quantile_privacy_loss(0.1, 1000, 1.0, bins=100), 4)
    1.0
    >>> loss = private_quantile_privacy_loss(
    ...     0.1, 1000, 1.0, bins=100, relation="add/remove", public_n=False)
    >>> round(loss, 4)
    0.909
    """
    variant = check_quantile_variant(variant)
    relation = check_choice(relation, "relation", ("replace-one", "add/remove"))
    public_n = check_bool(public_n, "public_n")
    epsilon = check_epsilon(epsilon)
    alpha = private_quantile_level(beta, n, epsilon, bins, variant)
    if variant == "original":
        if relation == "replace-one" or public_n:
            return epsilon / (2.0 * max(alpha, 1.0 - alpha))
        return algorithm1_add_remove_loss(beta, n, epsilon)
    if relation == "replace-one" or public_n:
        return epsilon
    alpha_next = private_quantile_level(beta, n + 1, epsilon, bins, variant)
    d = n * abs(alpha_next - alpha)
    if alpha_next >= alpha:
        return epsilon * (max(alpha_next + d, 1.0 - alpha_next) + d)
    return epsilon * (max(alpha_next, 1.0 - alpha_next + d) + d)


def _level_and_counts(hist, beta: float, epsilon: float, bins, n, variant: str):
    """The level :math:`\\alpha_0` of ``variant`` and the counts :math:`a_j`, :math:`b_j` of its loss."""
    size = hist.size
    if variant == "tight":
        alpha0 = private_quantile_level(beta, size if n is None else n, epsilon, bins, variant)
        through = np.cumsum(hist.counts)[1::2]  # #{R_i <= e_j}
        below = np.concatenate(([0], through[:-1]))   # scores rounded up to e_j: a_j = #{R_i <= e_(j-1)}
        above = size - through                  # b_j = #{R_i > e_j}
    else:
        alpha0 = algorithm1_level(beta, size if n is None else n, epsilon)
        below, above = below_above(hist)        # a_j = #{R_i < e_j}, b_j = #{R_i > e_j}
    return alpha0, below, above


def _algorithm1_logits(scores, beta: float, epsilon: float, bins, n, variant: str = "tight"
                       ) -> tuple[np.ndarray, np.ndarray]:
    variant = check_quantile_variant(variant)
    edges = quantile_edges(bins)
    hist = edge_histogram(scores, edges)        # one pass over the scores (or a merged histogram, chapter 14)
    epsilon = float(check_epsilon(epsilon))
    alpha0, below, above = _level_and_counts(hist, beta, epsilon, bins, n, variant)
    if variant == "tight":
        loss = np.maximum(alpha0 * below, (1.0 - alpha0) * above)
        with np.errstate(over="ignore"):    # a huge epsilon: -inf is probability 0; no data-dependent warning
            return edges, -epsilon * (loss - loss.min())
    loss = np.maximum(below / (1.0 - alpha0), above / alpha0)
    sensitivity = 1.0 / min(alpha0, 1.0 - alpha0)
    # shift by the minimum loss before scaling: logits are <= 0, the best is 0
    logits = -(epsilon / (2.0 * sensitivity)) * (loss - loss.min())
    return edges, logits


def _opendp_grid_law(scores, beta, epsilon, bins, n, variant):
    """Edges, integer utilities ``v_j`` (shifted to min 0) and scale ``s`` of the OpenDP-sampled release.

    The level is rounded down to the public grid, :math:`A = \\lfloor \\alpha_0 D \\rfloor`,
    :math:`D = 2^{32}`, so that :math:`v_j = \\max(A a_j, (D - A) b_j)` are exact integers and the law
    :math:`\\propto e^{-v_j / s}` is sampled by OpenDP's exact report-noisy-max.
    """
    variant = check_quantile_variant(variant)
    edges = quantile_edges(bins)
    hist = edge_histogram(scores, edges)
    size = hist.size
    if size >= _OPENDP_MAX_SCORES:
        # a domain limit (like the package's 1e100): the integer utilities must fit in 64 bits
        raise ValueError("sampler='opendp' handles fewer than 2**31 scores (its utilities are 64-bit integers); "
                         "use sampler='numpy' or subsample to a public size")
    epsilon = float(check_epsilon(epsilon))
    alpha0, below, above = _level_and_counts(hist, beta, epsilon, bins, n, variant)
    grid = _OPENDP_GRID
    a = math.floor(alpha0 * grid)               # exact: alpha0 * 2**32 is a float product without rounding
    v = np.maximum(a * below.astype(np.int64), (grid - a) * above.astype(np.int64))
    v = v - v.min()
    weight = grid if variant == "tight" else 2 * max(a, grid - a)
    return edges, v, rounded_up(weight / epsilon)


_OPENDP_GRID = 2 ** 32              # the OpenDP sampler's level lies on the public grid A / 2**32
_OPENDP_MAX_SCORES = 2 ** 31        # then A * count < 2**63: the utilities are exact 64-bit integers


def private_quantile_probabilities(scores, beta: float, epsilon: float, bins=1000, log: bool = False, *,
                                   n: int | None = None, variant: str = "tight",
                                   sampler: str = "numpy") -> tuple[np.ndarray, np.ndarray]:
    """Exact output law of the exponential mechanism of :func:`private_quantile` on ``scores`` (chapter 3).

    .. math:: P(\\hat q = e_j) = \\frac{\\exp(-\\varepsilon u_j)}{\\sum_k \\exp(-\\varepsilon u_k)},

    computed as a log-softmax, so it never returns ``nan`` even where every
    unnormalised weight underflows. The counts are those of ``scores`` as
    given, the level that of ``n``: this is the law of
    :func:`private_quantile` when ``n`` is ``None`` or ``len(scores)``. With
    a public ``n`` and other sizes, :func:`private_quantile` first pads (its law
    is this one on the padded scores) or subsamples (its law is the average of
    this one over the uniform ``n``-subsets); on :math:`n \\pm 1` scores at a fixed
    level it shows the mechanism's own add/remove loss (chapter 4).

    Parameters
    ----------
    scores, beta, epsilon
        As in :func:`private_quantile`.
    bins : int or array-like, default=1000
        As in :func:`private_quantile`.
    n : int, default=None
        As in :func:`private_quantile`.
    variant : {"tight", "original"}, default="tight"
        As in :func:`private_quantile`.
    log : bool, default=False
        Return log-probabilities (exact where probabilities underflow to 0;
        used by the privacy audits).
    sampler : {"numpy", "opendp"}, default="numpy"
        The law of :func:`private_quantile` with that sampler: ``"opendp"``
        uses the level rounded down to the grid :math:`A/2^{32}` (see there).

    Returns
    -------
    edges : ndarray of shape (M,)
        The candidate outputs.
    probabilities : ndarray of shape (M,)
        :math:`P(\\hat q = e_j)` (or its logarithm).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import private_quantile_probabilities
    >>> scores = np.linspace(0.0, 1.0, 200)
    >>> edges, p = private_quantile_probabilities(scores, beta=0.1, epsilon=1.0, bins=10)
    >>> float(edges[np.argmax(p)]), round(float(p.sum()), 4)
    (1.0, 1.0)
    """
    log = check_bool(log, "log")
    sampler = check_sampler(sampler, None)[0]
    if sampler == "opendp":
        edges, v, scale = _opendp_grid_law(scores, beta, epsilon, bins, n, variant)
        return edges, normalise(-(v / scale), log)
    edges, logits = _algorithm1_logits(scores, beta, epsilon, bins, n, variant)
    return edges, normalise(logits, log)


def private_quantile(scores, beta: float, epsilon: float, bins=1000, rng: RandomLike = None, *,
                     n: int | None = None, variant: str = "tight", sampler: str = "numpy") -> float:
    """:math:`\\varepsilon`-DP quantile of scores in [0, 1] for conformal prediction (chapter 3).

    Returns one of the right bin edges, chosen by the exponential mechanism,
    :math:`P(\\hat q = e_j) \\propto \\exp(-\\varepsilon u_j)`, sampled with the
    Gumbel-max trick in log space.

    * ``variant="tight"`` (default): scores rounded up to the edges,
      :math:`u_j = \\max(\\alpha_0 a_j, (1-\\alpha_0) b_j)` with
      :math:`a_j = \\#\\{R_i \\le e_{j-1}\\}`, :math:`b_j = \\#\\{R_i > e_j\\}` and
      :math:`\\alpha_0` from :func:`private_quantile_level`. Exactly
      :math:`\\varepsilon`-DP under replace-one (:math:`n` public), and under
      both relations with a public ``n`` (subsample-or-pad, below). Coverage
      :math:`P(R_{n+1} \\le \\hat q) \\ge 1-\\beta` for exchangeable scores, at
      every data size when ``n`` is public.
    * ``variant="original"``: the DPCP write-up's Algorithm 1,
      :math:`w_j = \\max(a_j/(1-\\alpha_0), b_j/\\alpha_0)` with
      :math:`a_j = \\#\\{R_i < e_j\\}`, :math:`\\alpha_0 = \\beta - 2/(n\\varepsilon)` and
      :math:`\\varepsilon u_j = \\varepsilon w_j \\min(\\alpha_0, 1-\\alpha_0)/2`. Sharp loss
      :math:`\\varepsilon/(2\\max(\\alpha_0, 1-\\alpha_0))` under replace-one, and
      under add/remove with a public ``n`` (with ``n=None`` see
      :func:`algorithm1_add_remove_loss`); no coverage guarantee.

    Cost :math:`O(n + M)`: one counting pass over the scores into the cells
    of the edges (no sort; :mod:`dpcp_tutorial._counts`, shared with the
    distributed path of chapter 14).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Non-conformity scores, already normalised to [0, 1] by a *public* bound.
    beta : float
        Miscoverage level in (0, 1). ``"original"`` needs
        :math:`\\beta > 2/(n\\varepsilon)`; ``"tight"`` needs the proven bound at
        level 0 to be at most :math:`\\beta` (:func:`private_quantile_level`).
    epsilon : float
        Privacy budget spent on this release.
    bins : int or array-like, default=1000
        ``M`` equal bins (edges :math:`j/M`, :math:`j = 1..M`) or explicit
        strictly increasing right edges in [0, 1] ending at 1.
    rng : None, int or numpy.random.Generator, default=None
        Source of the Gumbel variates with ``sampler="numpy"``; ``None`` for a
        real release (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``,
        whose sampler cannot be seeded.
    n : int, default=None
        Public record count used for :math:`\\alpha_0` (and hence
        :math:`\\Delta`); defaults to ``len(scores)``. Given, the release runs
        on exactly ``n`` scores: a uniform ``n``-subset when there are more
        (drawn from ``rng``), the scores padded with the maximal score 1 when
        there are fewer (none at all is allowed) -- ``at_public_size``.
        That keeps the coverage proof at every data size (a level computed
        for ``n`` on fewer scores would under-cover: at :math:`\\beta = 0.1`
        and ``n=1000`` on 38 scores the miss rate exceeds 0.1) and makes
        add/remove a replacement at size ``n`` (the loss above, under both
        relations). **Size and errors:** with
        ``n=None`` the number of scores is treated as **public** -- the
        feasibility check (and its message, which quotes it) depends on it, as
        the replace-one guarantee allows. For an add/remove guarantee with a
        private size pass a public ``n``: the data's own size is then never
        used, and every error depends only on public inputs (``beta``,
        ``epsilon``, ``bins``, ``n``) or on scores outside the domain
        ``[0, 1]`` (one fixed message for every such data set, see
        :mod:`dpcp_tutorial._validation`).
    variant : {"tight", "original"}, default="tight"
        The mechanism (see above).
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"`` (default): NumPy's floating-point Gumbel variates, not a
        hardened DP implementation (:mod:`dpcp_tutorial.mechanisms`,
        *Randomness and real releases*). ``"opendp"``: OpenDP's exact
        report-noisy-max (``make_noisy_max`` with Gumbel noise, compared in
        arbitrary precision) on integer utilities. For them the level is
        rounded down to the public grid, :math:`A = \\lfloor 2^{32}\\alpha_0
        \\rfloor`, and :math:`2^{32} u_j` becomes the integer
        :math:`v_j = \\max(A a_j, (2^{32} - A) b_j)`; the release is
        :math:`P(e_j) \\propto e^{-v_j/s}` with :math:`s = 2^{32}/\\varepsilon`
        (``"tight"``) or :math:`2\\max(A, 2^{32} - A)/\\varepsilon`
        (``"original"``), rounded up. This is the mechanism above at level
        :math:`A/2^{32} \\le \\alpha_0`: the same privacy loss (at most
        ``epsilon``, exactly, since the utilities are exact), and, because the
        miscoverage bound increases with the level, the same coverage
        guarantee; its law (:func:`private_quantile_probabilities` with
        ``sampler="opendp"``) differs from the NumPy law by a factor within
        :math:`e^{\\pm 2\\varepsilon n/2^{32}}` (``"tight"``; the utilities move
        by at most :math:`n/2^{32}`) or :math:`e^{\\pm 4\\varepsilon n/2^{32}}`
        (``"original"``, whose exponent :math:`\\max(\\alpha a_j, (1-\\alpha)
        b_j)/(2\\max(\\alpha, 1-\\alpha))` has slope at most :math:`2n` in the
        level). Domain: fewer than
        :math:`2^{31}` scores (64-bit utilities). The refusal beyond it
        depends on the number of scores, which is public under replace-one;
        under add/remove with a private size the guarantee is over data sets
        of fewer than :math:`2^{31}` records, a bound the deployment must
        ensure by design (with more, use ``sampler="numpy"`` or subsample to a
        public ``n``).

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
    sampler, gen = check_sampler(sampler, rng)
    scores = at_public_size(scores, n, gen, quantile_edges(bins))
    if sampler == "opendp":
        edges, v, scale = _opendp_grid_law(scores, beta, epsilon, bins, n, variant)
        return float(edges[opendp_noisy_max(v, scale, negate=True, integer=True)])
    edges, logits = _algorithm1_logits(scores, beta, epsilon, bins, n, variant)
    return float(edges[gumbel_max_sample(logits, gen)])


def at_public_size(scores, n, gen, edges=None):
    """The scores (array or :class:`~dpcp_tutorial._counts.EdgeHistogram`) at exactly the public size ``n``.

    ``n=None``: unchanged (their number is then public). Otherwise a uniform
    ``n``-subset, or the scores padded with the maximal score 1
    (:func:`~dpcp_tutorial._counts.subsample_or_pad`, the rule of the split
    and Mondrian estimators); ``gen=None`` (OpenDP's sampler) subsamples with
    fresh OS entropy. Scores outside [0, 1] are refused first (the domain
    check, one message for every such data set); none at all are padded.
    With ``edges``, more scores than ``n`` are counted over them first and the
    subset is drawn from the counts, as on partitioned data (chapter 14), so
    that an array and its histogram give the same release for the same seed.
    """
    if n is None:
        return check_scores_or_histogram(scores) if isinstance(scores, EdgeHistogram) else scores
    n = check_positive_int(n, "n", maximum=MAX_RECORDS)
    if not isinstance(scores, EdgeHistogram):
        try:
            empty = np.ndim(scores) == 1 and np.size(scores) == 0
        except (TypeError, ValueError):
            empty = False
        scores = np.empty(0) if empty else check_unit_scores(scores)
        if edges is not None and scores.size > n:
            scores = edge_histogram(scores, edges, validated=True)
    return subsample_or_pad(scores, n, np.random.default_rng() if gen is None else gen)
