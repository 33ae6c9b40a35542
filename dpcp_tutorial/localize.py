"""Private localisation: a prior for the depth median without a public range (chapter 19).

:func:`private_localization` releases a centre :math:`\\tilde c \\in \\mathbb{R}^d`
and a scale :math:`\\tilde s > 0` of a data set with **no** public bound, by
four kinds of finite exponential mechanisms on public grids, each with a
rank utility of sensitivity 1:

1. **Radius** (AboveThreshold, Durfee's unbounded quantile on the rows' sup
   norms). On the grid :math:`r_k = 2^k`, :math:`k = -100, \\dots, 333` (every
   magnitude the package accepts, :math:`|x| \\le 10^{100} < 2^{333}`), with
   :math:`N_k = \\#\\{i : \\|X_i\\|_\\infty \\le r_k\\}`, draw
   :math:`\\rho \\sim \\mathrm{Lap}(2/\\varepsilon_R)` and
   :math:`\\nu_k \\sim \\mathrm{Lap}(2/\\varepsilon_R)` and release the first
   :math:`r_k` with :math:`N_k - q_R n + \\nu_k \\ge \\rho`, :math:`q_R = 0.9`
   (the last grid point if none passes: it bounds every accepted record).
2. **Centre.** For each coordinate :math:`j`, :math:`\\tilde c_j` is the
   centre of one of the :math:`B = 2^{16}` bins
   :math:`(e_k, e_{k+1}]`, :math:`e_k = -\\tilde R + 2\\tilde R k/B`, of
   :math:`[-\\tilde R, \\tilde R]`, chosen by the exponential mechanism with
   :math:`\\varepsilon_c = \\varepsilon_C/d` and the utility
   :math:`u_k = -\\max(L_k - n/2,\\ n/2 - L_{k+1},\\ 0)`, where
   :math:`L_k = \\#\\{i : \\mathrm{clip}(x_{ij}) \\le e_k\\}` for
   :math:`0 < k < B`, :math:`L_0 = 0` and :math:`L_B = n`: the distance in
   ranks from the bin to the median, 0 for the bin that holds it (the
   coordinate-wise median), however concentrated the data are.
3. **Scale** (AboveThreshold again). :math:`\\tilde s` is the first point of
   the increasing geometric grid :math:`2\\tilde R \\cdot 2^{-k/4}`,
   :math:`k = 64, 63, \\dots, 0`, at which the noisy count
   :math:`\\#\\{i : v_i \\le s_k\\}` passes the noisy target :math:`n/2`, with
   :math:`v_i = \\|\\mathrm{clip}(X_i) - \\tilde c\\|_2/\\sqrt d` and
   :math:`\\mathrm{clip}` the projection on :math:`[-\\tilde R, \\tilde R]^d`.

Step 2 draws index :math:`k` with probability proportional to
:math:`\\exp(\\varepsilon_c u_k / 2)` by the Gumbel-max trick, in log space. The
budget :math:`\\varepsilon_{\\rm loc}` is split 0.2 (radius,
:math:`\\varepsilon_R`), 0.6 (the :math:`d` centres together,
:math:`\\varepsilon_C`) and 0.2 (scale). AboveThreshold, not the exponential
mechanism, releases the radius and the scale: both are searched upwards from
the bottom of a long grid, and on data concentrated at one value the
exponential mechanism's utility would be flat on both sides of it.

**Privacy** (chapter 19, ``thm-localization``). Each utility moves by at
most 1 between neighbours under **both** relations: replacing one record
changes every count by at most 1 (``n`` fixed); adding one record raises a
count by 0 or 1 and the target :math:`qn` by :math:`q`, so their difference
moves by :math:`-q` or :math:`1 - q`, at most 1 in absolute value, and ``n``
need not be public. Moreover all the differences :math:`g_k(X') - g_k(X)` of
one pair of neighbours lie in one interval :math:`[c, c + 1]`: :math:`\\{0, -1\\}`
or :math:`\\{0, 1\\}` under replace-one (a replaced value moves every count in
the same direction), :math:`\\{-q, 1 - q\\}` or :math:`\\{q - 1, q\\}` under
add/remove. AboveThreshold with threshold noise :math:`\\mathrm{Lap}(1/\\varepsilon_1)`
and query noise :math:`\\mathrm{Lap}(1/\\varepsilon_2)` then loses at most
:math:`\\varepsilon_2 + \\varepsilon_1\\max(|c|, |c + 1|) \\le \\varepsilon_1 + \\varepsilon_2`
for any number of queries (a shift argument as in Durfee 2023;
chapter 19, ``lem-above-threshold``); here :math:`\\varepsilon_1 = \\varepsilon_2 = \\varepsilon_R/2`.
The clip box and the grids of steps 2 and 3 are functions
of the earlier releases only. By the exponential mechanism and sequential
(adaptive) composition the release :math:`(\\tilde R, \\tilde c, \\tilde s)` is
:math:`\\varepsilon_{\\rm loc}`-DP under add/remove and under replace-one.

Nothing here raises, warns or branches on data values: the data are checked
finite and at most :math:`10^{100}` in magnitude by the shared validation
(one fixed message), every count is an integer between 0 and ``n``, and the
grids are finite and public given the earlier releases. All noise of a
step is drawn once, after its counts.

The noise is NumPy's (continuous Laplace, Gumbel); there is no
``sampler="opendp"``: OpenDP's Laplace mechanism on floats adds noise
discretised to a power-of-two grid, a different law from the one audited
here, and a release is only as exact as its least exact step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._mechanism_core import above_threshold, above_threshold_log_law, gauss_legendre
from ._validation import RandomLike, check_2d, check_epsilon, check_random_state
from .mechanisms import gumbel_max_sample

__all__ = ["LOCALIZATION_SPLIT", "Localization", "above_threshold_log_probabilities", "localization_grids",
           "localization_log_probabilities", "private_localization"]

#: exponents of the radius grid 2**k: every |x| <= 1e100 (the package's cap) lies below 2**333
RADIUS_EXPONENTS = np.arange(-100, 334)
#: level of the radius: the grid point below which about 90 % of the rows lie (in sup norm)
RADIUS_LEVEL = 0.9
#: bins of the centre grid on [-R, R] per coordinate
CENTRE_BINS = 2 ** 16
#: the scale grid 2R * 2**(-k / SCALE_STEPS_PER_OCTAVE), k = SCALE_OCTAVES * SCALE_STEPS_PER_OCTAVE .. 0
SCALE_STEPS_PER_OCTAVE = 4
SCALE_OCTAVES = 16
#: shares of the localisation budget: radius, all centres together, scale
LOCALIZATION_SPLIT = (0.2, 0.6, 0.2)


@dataclass(frozen=True)
class Localization:
    """The release of :func:`private_localization`: centre, scale and radius (all private releases).

    Attributes
    ----------
    centre : numpy.ndarray of shape (d,)
        The released centre :math:`\\tilde c`, in :math:`[-\\tilde R, \\tilde R]^d`.
    scale : float
        The released scale :math:`\\tilde s > 0`.
    radius : float
        The released radius :math:`\\tilde R`, a power of two.

    Examples
    --------
    >>> loc = Localization(centre=np.array([0.5, -0.25]), scale=1.0, radius=2.0)
    >>> loc.centre.shape, loc.radius
    ((2,), 2.0)
    """

    centre: np.ndarray
    scale: float
    radius: float


def _bin_utility(edge_counts: np.ndarray, target: float) -> np.ndarray:
    """``-max(L_k - target, target - L_{k+1}, 0)`` for the bins between consecutive edges (``L_0 = 0``, ``L_B = n``)."""
    return -np.maximum(np.maximum(edge_counts[:-1] - target, target - edge_counts[1:]), 0.0)


def _bin_mechanism(edge_counts: np.ndarray, target: float, epsilon: float, rng: np.random.Generator) -> int:
    """Bin ``k`` with probability proportional to ``exp(epsilon u_k / 2)`` (:func:`_bin_utility`; Gumbel-max)."""
    return gumbel_max_sample(0.5 * epsilon * _bin_utility(edge_counts, target), rng)


def _above_threshold(counts: np.ndarray, target: float, epsilon: float, rng: np.random.Generator) -> int:
    """First ``k`` with ``counts_k - target + nu_k >= rho`` (AboveThreshold); the last index if none.

    ``rho ~ Lap(2/epsilon)``, then ``nu ~ Lap(2/epsilon)`` for every grid point
    (:func:`~dpcp_tutorial._mechanism_core.above_threshold`).
    """
    k = above_threshold(counts - target, 0.0, 2.0 / epsilon, 2.0 / epsilon, rng)
    return counts.size - 1 if k is None else k


def radius_grid() -> np.ndarray:
    """The public radius grid :math:`2^k`, :math:`k = -100, \\dots, 333`."""
    return np.exp2(RADIUS_EXPONENTS.astype(float))


def radius_counts(block: np.ndarray) -> np.ndarray:
    """:math:`\\#\\{i : \\|X_i\\|_\\infty \\le 2^k\\}` for every radius of the grid (they add across partitions)."""
    return np.searchsorted(np.sort(np.max(np.abs(block), axis=1)), radius_grid(), side="right")


def centre_edges(radius: float) -> np.ndarray:
    """The ``CENTRE_BINS + 1`` public bin edges of ``[-radius, radius]``."""
    return -radius + (2.0 * radius / CENTRE_BINS) * np.arange(CENTRE_BINS + 1)


def centre_counts(block: np.ndarray, radius: float) -> np.ndarray:
    """Shape (d, CENTRE_BINS + 1): :math:`L_k`, the clipped values at most each inner edge (they add across parts).

    :math:`L_0 = 0` and :math:`L_B` is the number of rows: every clipped value
    lies in :math:`[-R, R]`, and one at :math:`-R` belongs to the first bin.
    """
    edges = centre_edges(radius)
    clipped = np.clip(block, -radius, radius)
    out = np.empty((block.shape[1], CENTRE_BINS + 1), dtype=np.int64)
    for j in range(block.shape[1]):
        out[j, 1:-1] = np.searchsorted(np.sort(clipped[:, j]), edges[1:-1], side="right")
    out[:, 0], out[:, -1] = 0, block.shape[0]
    return out


def scale_counts(block: np.ndarray, radius: float, centre: np.ndarray) -> np.ndarray:
    """:math:`\\#\\{i : \\|\\mathrm{clip}(X_i) - \\tilde c\\|_2/\\sqrt d \\le s_k\\}` on the scale grid."""
    d = block.shape[1]
    spread = np.linalg.norm(np.clip(block, -radius, radius) - centre, axis=1) / math.sqrt(d)
    return np.searchsorted(np.sort(spread), localization_grids(radius, d)[1], side="right")


def localization_grids(radius: float, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The public grids of the centre and scale steps given the released radius: (centre grid, scale grid).

    Centre: the ``CENTRE_BINS`` bin centres of ``[-radius, radius]`` (the
    edges are ``-radius + 2 radius k / CENTRE_BINS``); scale:
    ``2 radius 2**(-k/4)``, ``k = 64, ..., 0``, increasing.

    Parameters
    ----------
    radius : float
        The released radius :math:`\\tilde R` (public once released).
    d : int
        The number of coordinates of the data.

    Returns
    -------
    centres : numpy.ndarray of shape (CENTRE_BINS,)
        The centre grid of every coordinate.
    scales : numpy.ndarray of shape (65,)
        The scale grid, from :math:`2\\tilde R\\,2^{-16}` up to :math:`2\\tilde R`.

    Examples
    --------
    >>> centres, scales = localization_grids(4.0, d=2)
    >>> centres.size, float(centres[0]), float(scales[0]), float(scales[-1])
    (65536, -3.99993896484375, 0.0001220703125, 8.0)
    """
    width = 2.0 * radius / CENTRE_BINS
    centres = -radius + (np.arange(CENTRE_BINS) + 0.5) * width
    k = np.arange(SCALE_OCTAVES * SCALE_STEPS_PER_OCTAVE, -1, -1)
    scales = 2.0 * radius * np.exp2(-k / SCALE_STEPS_PER_OCTAVE)
    return centres, scales


def private_localization(data, epsilon: float, rng: RandomLike = None) -> Localization:
    """Private centre and scale of ``data`` without any public bound (chapter 19).

    Three releases in sequence (module docstring): a radius
    :math:`\\tilde R` on the grid :math:`2^k` from the rows' sup norms
    (AboveThreshold), the coordinate-wise median on a grid of :math:`2^{16}`
    points in :math:`[-\\tilde R, \\tilde R]` (exponential mechanism), and the
    median distance to that centre, divided by :math:`\\sqrt d`, on a
    geometric grid with ratio :math:`2^{1/4}` (AboveThreshold).

    Parameters
    ----------
    data : array-like of shape (n, d)
        The private sample, finite, ``n >= 2``.
    epsilon : float
        The localisation budget :math:`\\varepsilon_{\\rm loc}`: the release is
        :math:`\\varepsilon_{\\rm loc}`-DP under add/remove (``n`` need not be
        public) and under replace-one (chapter 19, ``thm-localization``).
    rng : None, int or numpy.random.Generator, default=None
        Used in the order: radius, centres (coordinate by coordinate), scale.
        ``None`` (fresh entropy) for a real release (:term:`Seed`).

    Returns
    -------
    Localization
        ``centre`` (shape (d,)), ``scale`` (> 0) and ``radius``. The centre
        lies in :math:`[-\\tilde R, \\tilde R]^d`; the scale between
        :math:`2\\tilde R\\,2^{-16}` and :math:`2\\tilde R`.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(loc=5.0, size=(200, 2))
    >>> loc = private_localization(X, epsilon=5.0, rng=1)
    >>> np.round(loc.centre, 2), round(loc.scale, 3), loc.radius
    (array([4.91, 4.97]), 0.841, 8.0)
    """
    data = check_2d(data, "data", min_rows=2)
    epsilon = check_epsilon(epsilon)
    rng = check_random_state(rng)
    return localize_from_counts(lambda: radius_counts(data), lambda r: centre_counts(data, r),
                                 lambda r, c: scale_counts(data, r, c), data.shape, epsilon, rng)


def localize_from_counts(radius_counts_fn, centre_counts_fn, scale_counts_fn, shape, epsilon: float,
                          rng: np.random.Generator) -> Localization:
    """The three releases from the counts (in memory or summed over partitions: the same integers).

    :func:`private_localization` counts in memory; :mod:`dpcp_tutorial.scale` sums the counts of the
    partitions (:func:`radius_counts`, :func:`centre_counts`, :func:`scale_counts`) and releases with this
    function, so that both give the same release for the same ``rng``.
    """
    n, d = shape
    e_radius, e_centre, e_scale = (share * epsilon for share in LOCALIZATION_SPLIT)
    radius = float(radius_grid()[_above_threshold(radius_counts_fn(), RADIUS_LEVEL * n, e_radius, rng)])
    centre_grid, scale_grid = localization_grids(radius, d)
    counts = centre_counts_fn(radius)
    centre = np.array([centre_grid[_bin_mechanism(counts[j], 0.5 * n, e_centre / d, rng)] for j in range(d)])
    scale = float(scale_grid[_above_threshold(scale_counts_fn(radius, centre), 0.5 * n, e_scale, rng)])
    return Localization(centre, scale, radius)


def above_threshold_log_probabilities(queries, epsilon: float, nodes: int = 128) -> np.ndarray:
    """Log-probabilities of the index released by :func:`_above_threshold` for query values ``queries`` (chapter 19).

    With :math:`a_k` the query values (count minus target),
    :math:`P(K = k) = \\int f_\\rho(r) \\prod_{j<k} P(\\nu_j < r - a_j)\\,
    P(\\nu_k \\ge r - a_k)\\,dr` (the last index also collects "none passed"),
    integrated by Gauss-Legendre quadrature with ``nodes`` nodes on every
    piece between the kinks :math:`\\{0\\} \\cup \\{a_k\\}`, where the integrand is
    smooth, and on two tail pieces of 60 noise scales. Accurate to about
    :math:`10^{-10}` in relative terms for the audits' small data sets.

    Parameters
    ----------
    queries : array-like of shape (K,)
        The query values :math:`a_k` (count minus target), in the order searched.
    epsilon : float
        The budget of the AboveThreshold run: threshold and query noise are both
        :math:`\\mathrm{Lap}(2/\\varepsilon)`.
    nodes : int, default=128
        Gauss-Legendre nodes per smooth piece of the integral.

    Returns
    -------
    numpy.ndarray of shape (K,)
        :math:`\\log P(K = k)`; their exponentials sum to 1.

    Examples
    --------
    >>> p = np.exp(above_threshold_log_probabilities([-3.0, 0.0, 3.0], epsilon=1.0))
    >>> np.round(p, 3), round(float(p.sum()), 6)
    (array([0.195, 0.349, 0.456]), 1.0)
    """
    a = np.asarray(queries, float)
    b_rho, b_nu = 2.0 / epsilon, 2.0 / epsilon
    kinks = np.unique(np.concatenate([[0.0], a]))
    edges = np.concatenate([[kinks[0] - 60 * b_nu], kinks, [kinks[-1] + 60 * b_nu]])
    x, w = gauss_legendre(nodes)
    r = np.concatenate([(hi - lo) / 2 * x + (hi + lo) / 2 for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo])
    logw = np.concatenate([np.log((hi - lo) / 2 * w) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo])
    log_f = -np.abs(r) / b_rho - math.log(2.0 * b_rho)
    # query k passes iff a_k + nu_k >= r, i.e. -nu_k <= a_k - r (-nu_k has the law of nu_k)
    return above_threshold_log_law(a[None, :] - r[:, None], b_nu, log_f + logw, last_collects_none=True)


def localization_log_probabilities(data, epsilon: float, step: str, *, radius: float | None = None,
                                   centre=None, coordinate: int = 0) -> np.ndarray:
    """Exact log-probabilities of one step of :func:`private_localization` (for audits; chapter 19).

    ``step="radius"``: over the radius grid; ``"centre"``: over the centre grid
    of ``coordinate`` given ``radius``; ``"scale"``: over the scale grid given
    ``radius`` and ``centre``.

    Parameters
    ----------
    data : array-like of shape (n, d)
        The sample, finite, ``n >= 2``.
    epsilon : float
        The whole localisation budget :math:`\\varepsilon_{\\rm loc}` (split as
        in :func:`private_localization`).
    step : {"radius", "centre", "scale"}
        The step whose law is computed.
    radius : float, default=None
        The released radius; required by the steps ``"centre"`` and ``"scale"``.
    centre : array-like of shape (d,), default=None
        The released centre; required by the step ``"scale"``.
    coordinate : int, default=0
        The coordinate of the step ``"centre"``.

    Returns
    -------
    numpy.ndarray
        Log-probabilities over the step's grid (:func:`localization_grids`; the
        radius grid :math:`2^k`, :math:`k = -100, \\dots, 333`, for ``"radius"``).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(loc=5.0, size=(200, 2))
    >>> lp = localization_log_probabilities(X, 5.0, "centre", radius=8.0)
    >>> centres, _ = localization_grids(8.0, d=2)
    >>> lp.shape, round(float(centres[np.argmax(lp)]), 2)
    ((65536,), 4.86)
    """
    from scipy.special import log_softmax

    data = check_2d(data, "data", min_rows=2)
    epsilon = check_epsilon(epsilon)
    n, d = data.shape
    e_radius, e_centre, e_scale = (share * epsilon for share in LOCALIZATION_SPLIT)
    if step == "radius":
        return above_threshold_log_probabilities(radius_counts(data) - RADIUS_LEVEL * n, e_radius)
    if radius is None:
        raise ValueError(f"step={step!r} needs the released radius")
    if step == "centre":
        counts = centre_counts(data, radius)[coordinate]
        return log_softmax(0.5 * (e_centre / d) * _bin_utility(counts, 0.5 * n))
    if step == "scale":
        if centre is None:
            raise ValueError("step='scale' needs the released centre")
        counts = scale_counts(data, radius, np.asarray(centre, float))
        return above_threshold_log_probabilities(counts - 0.5 * n, e_scale)
    raise ValueError(f"step must be 'radius', 'centre' or 'scale', got {step!r}")
