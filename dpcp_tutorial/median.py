"""Differentially private depth medians (chapter 10).

The exponential mechanism with a public base measure :math:`\\pi` releases

.. math:: \\tilde\\theta \\sim Q_X(d\\theta) \\propto \\exp\\big(\\eta D(\\theta; X)\\big)\\,\\pi(d\\theta),
          \\qquad \\eta = \\frac{\\varepsilon}{2\\,GS_n(D)},

which is :math:`\\varepsilon`-DP for replace-one neighbours with ``n`` public
(McSherry & Talwar, 2007; Ramsay, Jagannath & Chenouri, 2025). For add/remove
neighbours the same mechanism, with :math:`\\eta` computed from the data's own
size, is :math:`\\varepsilon/2`-DP and ``n`` need not be public: for the depths
here :math:`nD` never decreases and grows by at most :math:`n\\,GS_n` when a
record is added (chapter 10, theorem ``thm-depth-mechanism``). Two methods
(``method=``) sample it:

* ``method="candidates"`` -- **exact**: the finite mechanism over
  data-independent candidates (draws from the public prior made inside the
  function, or a public grid), sampled with the Gumbel-max trick in log space.
  It is exactly :math:`\\varepsilon`-DP for any number of candidates.
* ``method="langevin"`` -- **approximate**: unadjusted Langevin on the
  logistic-smoothed integrated dual depth, as in the authors' experiments.
  Its output law only approximates :math:`Q_X`; if it is within total
  variation :math:`\\delta_{\\mathrm{TV}}` of :math:`Q_X` for every data set, the
  release is :math:`(\\varepsilon, (1 + e^\\varepsilon)\\delta_{\\mathrm{TV}})`-DP, and
  :math:`\\delta_{\\mathrm{TV}}` is not computed. The Langevin median is therefore only **approximately**
  :math:`\\varepsilon`-DP.

Everything the samplers use besides the data -- directions, candidates, the
prior, the starting point, the step size and the number of steps -- must be
chosen without looking at the data. The functions do **not** test that (for
example by refusing candidates equal to data rows): such a test is itself a
data-dependent refusal -- on lattice data (ages, rounded coordinates) a public
grid point equals a record in one data set and not in its neighbour, so a
refusal would be an infinite privacy loss and a membership test -- and it
cannot detect data-derived inputs anyway (``data + 1e-12`` passes). A
candidate that happens to equal a record is harmless: the mechanism is
:math:`\\varepsilon`-DP for every fixed set of public candidates. Every error
raised here depends only on public inputs (shapes, ``epsilon``, the prior,
the candidates' shape, the sampler's settings), never on data values. The
record count ``n`` is treated as public (replace-one neighbours); under
add/remove the checks on ``n`` (``n >= 2``) are the only data-size-dependent
edge, so an add/remove release must be made on at least two records by design.

With ``prior="private"`` no public centre is needed: a declared share of
:math:`\\varepsilon` locates the data (:func:`~dpcp_tutorial.localize.private_localization`,
chapter 19), the Gaussian prior is built from that release, and the rest of
the budget runs the depth mechanism; the two compose sequentially
(:func:`depth_median_account`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax

from ._validation import (
    RandomLike,
    check_2d,
    check_array,
    check_bool,
    check_choice,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_scalar,
    deprecated_alias,
    renamed_keywords,
)
from ._depth_core import (
    halfspace_depth_directions,
    idd_exact,
    project,
    resolve_directions,
    smoothed_cdfs,
    smoothed_gradient,
)
from ._median_core import (
    DEFAULT_DIRECTIONS,
    MAX_CANDIDATES,
    MAX_SCALE,
    MIN_SCALE,
    check_box,
    check_candidates_in_box,
    check_direction_settings,
    check_candidate_memory,
    check_localize_share,
    check_prior_setting,
    draw_candidates,
    prior_from_localization,
    warn_far_tail,
)
from .depth import (
    check_depth_name,
    depth_sensitivity,
    halfspace_depth,
    integrated_dual_depth,
    spatial_depth,
)
from .mechanisms import gumbel_max_sample

#: default share of epsilon spent on locating the data with prior="private"
LOCALIZE_SHARE = 0.2

__all__ = [
    "GaussianPrior",
    "mechanism_eta",
    "public_grid",
    "langevin_step_size",
    "depth_median_log_probabilities",
    "private_depth_median",
    "depth_median_account",
    "private_prior",
    "depth_median",
    "spatial_median",
]

# bound on |d^2/dt^2 F(1-F)| for a logistic-smoothed CDF with slope s, divided by s^2:
# max|sigma''| + 2 max(sigma')^2 = 1/(6 sqrt 3) + 1/8
_CURVATURE = 1.0 / (6.0 * np.sqrt(3.0)) + 0.125
# iterates are kept below this magnitude by a public check made before the chain runs
_LANGEVIN_LIMIT = 1e150
#: A release is in its prior's far tail beyond the prior's 1 - FAR_TAIL quantile of the Mahalanobis radius
FAR_TAIL = 1e-6

PRIOR_ADVICE = ("The base measure is part of the mechanism. The candidate sampler releases one of its candidates, so "
                "its error is at least the distance from the median to the nearest candidate, about the spread of "
                "the candidates times n_candidates^(-1/d): keep them where the median can be. Give box=(low, high), "
                "a public box that surely contains the median, from a codebook, a clinical reference range or the "
                "instrument's range (map skewed coordinates first, e.g. counts to the log scale); candidates are "
                "then drawn uniformly in the box, and with a prior from the prior restricted to the box. Centre a "
                "prior on a typical value of each coordinate from the same public knowledge, in the data's units, "
                "with scale the spread of plausible values, e.g. GaussianPrior(mean=[125, 80], scale=20.0) for "
                "blood pressures in mmHg, or GaussianPrior(0.0, 1.0) with box=([-3] * d, [3] * d) for data "
                "standardised by public constants (GaussianPrior(0.0, 5 * sqrt(d)), the authors' choice, suits "
                "the Langevin sampler, not 1000 candidates). Or pass public candidates=.")


@dataclass(frozen=True)
class GaussianPrior:
    """Public prior :math:`\\pi = N(\\text{mean}, \\text{scale}^2 I_d)` (chapter 10).

    Parameters
    ----------
    mean : float or array-like of shape (d,)
        Centre, in the data's units; a scalar is repeated in every coordinate.
        **Required**: a typical value of each coordinate from public knowledge
        (a codebook, a clinical reference range, the middle of the
        instrument's range), never the data's own mean.
    scale : float
        Standard deviation of every coordinate, **required**: the spread of
        plausible values from the same public source (e.g. a quarter of a
        reference range), so that the median's true location is well inside
        a few prior standard deviations of ``mean``.

    Notes
    -----
    The prior is part of the mechanism: choose it from public knowledge only.
    Its scale matters differently for the two samplers of
    :func:`private_depth_median`:

    * **Candidates** (the default sampler): the release is one of
      ``n_candidates`` prior draws, so its error is at least the distance from
      the median to the nearest draw, about ``scale * n_candidates**(-1/d)``.
      Use the tightest scale public knowledge supports, and give the public
      box (``box=``) so that no candidate is wasted outside it. On data
      standardised by public constants, ``GaussianPrior(0.0, 1.0)`` with
      ``box`` :math:`[-3, 3]^d` has an error of about 0.15 at :math:`d = 3`
      (1000 candidates, :math:`n = 10^3` to :math:`10^5`, :math:`\\varepsilon = 1`),
      while ``GaussianPrior(0.0, 5 * sqrt(d))`` has about 1 to 1.6 whatever
      :math:`n` (chapter 10, *The base measure of the candidate sampler*).
    * **Langevin**: the chain moves continuously, so a wide prior costs
      little; the authors' final runs, on standardised data, use
      :math:`N(0, 25d\\, I_d)`, i.e. ``GaussianPrior(0.0, 5 * sqrt(d))``.

    On data in other units either choice puts the median 3 to 9 standard
    deviations away from the data and the release lands near the prior, far
    from the data: standardise the data with public constants or centre the
    prior on public knowledge.

    Examples
    --------
    >>> prior = GaussianPrior(mean=[125.0, 80.0], scale=20.0)   # blood pressures, mmHg
    >>> prior.sample(3, 2, rng=0).round(1)
    array([[127.5,  77.4],
           [137.8,  82.1],
           [114.3,  87.2]])
    >>> round(prior.far_tail_radius(2), 2)
    5.26
    """

    mean: float | tuple
    scale: float

    def __post_init__(self):
        # stored as a Python float (a NumPy scalar or a Fraction would leak its type into every draw)
        scale = check_scalar(self.scale, "prior scale", low=MIN_SCALE, high=MAX_SCALE, low_inclusive=True,
                             high_inclusive=True, hint=f"use a standard deviation between {MIN_SCALE:g} and "
                             f"{MAX_SCALE:g} on the data's (public) scale; rescale the data if it lives outside "
                             "that range")
        object.__setattr__(self, "scale", scale)
        mean = check_array(self.mean, "prior mean", max_ndim=1)
        if mean.ndim == 1 and mean.size == 0:
            raise ValueError("prior mean is empty; give a scalar or one value per coordinate")
        if np.any(np.abs(mean) > MAX_SCALE):
            raise ValueError(f"prior mean must lie within +-{MAX_SCALE:g} in every coordinate")

    def mean_vector(self, d: int) -> np.ndarray:
        """The mean as a vector of length ``d``."""
        d = check_positive_int(d, "d")
        mean = np.asarray(self.mean, dtype=float)
        if mean.ndim == 0:
            return np.full(d, float(mean))
        if mean.shape != (d,):
            raise ValueError(f"prior mean has length {mean.size} but the data have d={d}")
        return mean.copy()

    def sample(self, size: int, d: int, rng: RandomLike = None) -> np.ndarray:
        """``size`` i.i.d. draws, shape ``(size, d)``.

        Inside :func:`private_depth_median` these are the mechanism's public
        candidates, drawn from its ``rng`` (:term:`Seed`).

        Parameters
        ----------
        size : int
            Number of draws.
        d : int
            Dimension.
        rng : None, int or numpy.random.Generator, default=None
            Source of the draws.
        """
        size = check_positive_int(size, "size")
        d = check_positive_int(d, "d")
        if size * d > 10 ** 8:
            raise ValueError(f"size * d = {size * d} draws would not fit in memory; use fewer (at most 1e8)")
        rng = check_random_state(rng)
        return self.mean_vector(d) + self.scale * rng.standard_normal((size, d))

    def sample_in_box(self, size: int, box, rng: RandomLike = None) -> np.ndarray:
        """``size`` i.i.d. draws from the prior **restricted to** the public ``box``, shape ``(size, d)``.

        The restriction :math:`\\pi(\\cdot \\mid B)` of :math:`N(\\mu, \\tau^2 I)` to a box
        :math:`B = \\prod_k [l_k, h_k]` is a product of one-dimensional truncated
        normals, drawn exactly coordinate by coordinate
        (``scipy.stats.truncnorm``); every draw lies in the box. Inside
        :func:`private_depth_median` (``box=``) they are the mechanism's
        public candidates.

        Parameters
        ----------
        size : int
            Number of draws.
        box : array-like of shape (2, d)
            Lower corner, then upper corner (:func:`private_depth_median`, ``box``).
        rng : None, int or numpy.random.Generator, default=None
            Source of the draws.

        Examples
        --------
        >>> GaussianPrior(0.0, 1.0).sample_in_box(2, [[0, 0], [1, 1]], rng=0).round(2)
        array([[0.58, 0.23],
               [0.04, 0.01]])
        """
        from scipy.stats import truncnorm

        size = check_positive_int(size, "size")
        box = check_box(box)
        d = box.shape[1]
        if size * d > 10 ** 8:
            raise ValueError(f"size * d = {size * d} draws would not fit in memory; use fewer (at most 1e8)")
        rng = check_random_state(rng)
        mean = self.mean_vector(d)
        low, high = (box[0] - mean) / self.scale, (box[1] - mean) / self.scale
        # a side much narrower than the scale can collapse to one standardised value: the prior's density is
        # then constant on it to double precision, so that coordinate is uniform on its side, drawn exactly as
        # the probability integral transform of a standard normal truncated to [0, 1]
        flat = ~(high > low)
        if flat.any():
            low, high = np.where(flat, 0.0, low), np.where(flat, 1.0, high)
        z = truncnorm.rvs(low, high, size=(size, d), random_state=rng)
        out = mean + self.scale * z
        if flat.any():
            from scipy.special import ndtr

            u = (ndtr(z[:, flat]) - 0.5) / (ndtr(1.0) - 0.5)
            out[:, flat] = box[0][flat] + (box[1] - box[0])[flat] * u
        return np.clip(out, box[0], box[1])      # rounding never leaves the box

    def far_tail_radius(self, d: int, tail: float = FAR_TAIL) -> float:
        """The prior's Mahalanobis radius beyond which a point is in its far tail (chapter 10).

        :math:`\\|\\theta - \\mu\\|/\\tau` is :math:`\\chi_d`-distributed under the prior; the
        far tail starts at its :math:`1 - 10^{-6}` quantile, :math:`\\sqrt{\\chi^2_{d,\\,1-10^{-6}}}`
        (about 4.9 in one dimension, 6.0 in five).

        Parameters
        ----------
        d : int
            Dimension.
        tail : float, default=1e-06
            The prior mass beyond the radius.
        """
        from scipy.stats import chi2

        d = check_positive_int(d, "d")
        tail = check_scalar(tail, "tail", low=0.0, high=1.0)
        return float(math.sqrt(chi2.isf(tail, d)))

    def mahalanobis_radius(self, x) -> float:
        """:math:`\\|x - \\mu\\| / \\tau` of one point ``x`` of shape (d,)."""
        x = check_array(x, "x", max_ndim=1)
        if x.ndim != 1:
            raise ValueError("x must be one point of shape (d,)")
        return float(np.linalg.norm(x - self.mean_vector(x.shape[0])) / self.scale)

    def log_density(self, x) -> np.ndarray:
        """Log density up to an additive constant, :math:`-\\|x - \\mu\\|^2 / (2\\tau^2)`, rows of ``x``."""
        x = check_array(x, "x", max_ndim=2)
        x = np.atleast_2d(x)
        return -0.5 * np.sum((x - self.mean_vector(x.shape[1])) ** 2, axis=1) / self.scale ** 2

    def grad_log_density(self, x) -> np.ndarray:
        """:math:`-(x - \\mu)/\\tau^2` for one point ``x`` of shape (d,)."""
        x = check_array(x, "x", max_ndim=1)
        if x.ndim != 1:
            raise ValueError(f"x must be one point of shape (d,), got shape {x.shape}")
        return -(x - self.mean_vector(x.shape[0])) / self.scale ** 2


def mechanism_eta(epsilon: float, depth: str, n: int) -> float:
    """Inverse temperature :math:`\\eta = \\varepsilon / (2\\,GS_n)` of the depth mechanism (chapter 10).

    :math:`\\varepsilon n/2` for halfspace and (smoothed) integrated dual depth,
    :math:`\\varepsilon n/4` for spatial depth.

    Parameters
    ----------
    epsilon : float
        Budget of the depth mechanism.
    depth : {"halfspace", "spatial", "idd", "smoothed_idd"}
        The utility.
    n : int
        Public record count.

    Examples
    --------
    >>> mechanism_eta(1.0, "halfspace", 1000)
    500.0
    >>> mechanism_eta(1.0, "spatial", 1000)
    250.0
    """
    return check_epsilon(epsilon) / (2.0 * depth_sensitivity(depth, n))


mechanism_beta = deprecated_alias(mechanism_eta, "mechanism_beta")


def public_grid(lower: float, upper: float, num: int, d: int) -> np.ndarray:
    """A public grid of candidates: ``num`` equally spaced values per axis in ``[lower, upper]^d``.

    Parameters
    ----------
    lower, upper : float
        Public range of every axis.
    num : int
        Points per axis (at least 2; at most :math:`10^6` grid points in all).
    d : int
        Dimension.

    Returns
    -------
    ndarray of shape (num**d, d)

    Examples
    --------
    >>> public_grid(0.0, 1.0, 3, 2)
    array([[0. , 0. ],
           [0. , 0.5],
           [0. , 1. ],
           [0.5, 0. ],
           [0.5, 0.5],
           [0.5, 1. ],
           [1. , 0. ],
           [1. , 0.5],
           [1. , 1. ]])
    """
    lower = check_scalar(lower, "lower")
    upper = check_scalar(upper, "upper")
    if upper <= lower:
        raise ValueError(f"upper={upper} must exceed lower={lower}")
    num = check_positive_int(num, "num", minimum=2, maximum=10 ** 6)
    d = check_positive_int(d, "d", maximum=10 ** 6)
    if d * math.log10(num) > 6:
        raise ValueError(f"num={num} points per axis in d={d} dimensions give num**d > 1e6 grid points, which is too large; "
                         "use fewer points per axis or candidates drawn from a public prior")
    axis = np.linspace(lower, upper, num)
    return np.stack([g.ravel() for g in np.meshgrid(*([axis] * d), indexing="ij")], axis=1)


@renamed_keywords(beta="eta")
def langevin_step_size(eta: float, directions, smoothing: float = 10.0, prior_scale: float = np.inf) -> float:
    """Default (public) Langevin step :math:`h = 1/L` (chapter 10).

    :math:`L = \\eta\\, c\\, s^2\\, \\lambda_{\\max}\\big(\\tfrac1m \\sum_j u_j u_j^\\top\\big) + 1/\\tau^2`
    with :math:`c = 1/(6\\sqrt3) + 1/8` bounds the curvature of the log target
    :math:`\\eta\\, IDD_s + \\log\\pi` for **every** data set, because
    :math:`|\\partial_t^2 F(1-F)| \\le c s^2` for a logistic-smoothed CDF. It
    depends on :math:`\\varepsilon`, :math:`n`, the directions and the prior
    only, never on the data.

    Parameters
    ----------
    eta : float
        Inverse temperature, ``> 0`` (:func:`mechanism_eta`; ``beta=`` is its
        deprecated old name).
    directions : array-like of shape (m, d)
        Public, non-zero directions.
    smoothing : float, default=10.0
        Logistic slope :math:`s > 0`.
    prior_scale : float, default=inf
        Prior standard deviation :math:`\\tau > 0`; ``inf`` drops the prior's
        curvature :math:`1/\\tau^2`.

    Examples
    --------
    >>> print(f"{langevin_step_size(500.0, np.eye(2), prior_scale=1.0):.3g}")
    0.000181
    """
    eta = check_scalar(eta, "eta", low=0.0, hint="it is the inverse temperature, see mechanism_eta")
    u = check_2d(directions, "directions")
    norms = np.linalg.norm(u, axis=1)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        raise ValueError("directions must be non-zero vectors of moderate size")
    u = u / norms[:, None]
    s = check_scalar(smoothing, "smoothing", low=0.0)
    if not (isinstance(prior_scale, (int, float, np.integer, np.floating)) and prior_scale == np.inf):
        prior_scale = check_scalar(prior_scale, "prior_scale", low=MIN_SCALE, high=MAX_SCALE, low_inclusive=True,
                                   high_inclusive=True, hint="it is the prior's standard deviation "
                                   f"(between {MIN_SCALE:g} and {MAX_SCALE:g}); pass numpy.inf for a flat prior")
    lam = float(np.linalg.eigvalsh(u.T @ u / u.shape[0])[-1])
    curvature = eta * _CURVATURE * s ** 2 * lam + 1.0 / float(prior_scale) ** 2   # Python floats: may be 0 or inf
    step = 1.0 / curvature if curvature > 0.0 else math.inf
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"eta={eta:g}, smoothing={s:g} and prior_scale={prior_scale:g} give no usable step "
                         "(it under- or overflows); use moderate values")
    return step


def _check_candidates(candidates, data: np.ndarray) -> np.ndarray:
    cand = check_2d(candidates, "candidates")
    if cand.shape[1] != data.shape[1]:
        raise ValueError(f"candidates have {cand.shape[1]} columns but data have {data.shape[1]}")
    return cand


def _check_data(data) -> np.ndarray:
    return check_2d(data, "data", min_rows=2)


def _depth_at(candidates: np.ndarray, data: np.ndarray, depth: str, directions, smoothing,
              progress: bool = False) -> np.ndarray:
    """Depths of the candidates; with ``progress``, a tqdm bar over blocks of candidates or of directions.

    The values are the same with and without the bar: the blocks follow the
    depth functions' own (direction-based depths: blocks of directions, whose
    counts are exact) or evaluate each candidate independently (spatial, exact
    2-D halfspace, smoothed IDD).
    """
    if not progress:
        if depth == "halfspace":
            if directions is None:
                return halfspace_depth(candidates, data, method="exact")
            return halfspace_depth(candidates, data, method="directions", directions=directions)
        if depth == "spatial":
            return spatial_depth(candidates, data)
        if depth == "idd":
            return integrated_dual_depth(candidates, data, directions=directions)
        return integrated_dual_depth(candidates, data, directions=directions, smoothing=smoothing)
    from tqdm import tqdm

    q, (n, d) = candidates.shape[0], data.shape
    u = None if directions is None else resolve_directions(directions, 1, d, None)   # as the depth functions do
    by_direction = depth == "idd" or (depth == "halfspace" and u is not None)
    total, unit = (u.shape[0], "direction") if by_direction else (q, "candidate")
    with tqdm(total=total, unit=unit, desc=f"{depth} depth of {q} candidates (n={n})", leave=False) as bar:
        if depth == "halfspace" and u is not None:
            return halfspace_depth_directions(candidates, data, u, bar.update)
        if depth == "idd":
            return idd_exact(candidates, data, u, bar.update)
        out = np.empty(q)
        if depth == "smoothed_idd":         # integrated_dual_depth's loop, one candidate at a time
            cdfs = smoothed_cdfs(data, u, smoothing)
            t = project(candidates, u)
            for k in range(q):
                f, _ = cdfs(t[k])
                out[k] = np.mean(f * (1.0 - f))
                bar.update(1)
            return out
        block = max(1, -(-q // 100))        # spatial and exact 2-D halfspace depth: each candidate on its own
        fn = spatial_depth if depth == "spatial" else (lambda c, x: halfspace_depth(c, x, method="exact"))
        for start in range(0, q, block):
            out[start:start + block] = fn(candidates[start:start + block], data)
            bar.update(min(block, q - start))
        return out


def depth_median_log_probabilities(data, epsilon: float, candidates, depth: str = "halfspace",
                                   directions=None, smoothing: float = 10.0) -> np.ndarray:
    """Exact output law of the candidate mechanism, in log space (chapter 10).

    .. math:: \\log P(\\tilde\\theta = c_k) = \\eta D(c_k; X) - \\log \\sum_l e^{\\eta D(c_l; X)}

    Parameters
    ----------
    data : array-like of shape (n, d)
        The private sample.
    epsilon : float
        Privacy budget.
    candidates : array-like of shape (K, d)
        Public, data-independent candidates. A candidate may equal a data row
        (lattice data on a public grid); nothing is refused on that ground.
    depth : {"halfspace", "spatial", "idd", "smoothed_idd"}, default="halfspace"
        The utility.
    directions : array-like of shape (m, d), default=None
        Public directions. Required for ``"idd"``, ``"smoothed_idd"`` and for
        ``"halfspace"`` when ``d > 2`` (exact halfspace depth is used for ``d <= 2``).
    smoothing : float, default=10.0
        Logistic slope for ``"smoothed_idd"``.

    Returns
    -------
    ndarray of shape (K,)

    Examples
    --------
    >>> data = np.random.default_rng(0).normal(size=(100, 2))
    >>> cand = public_grid(-1.0, 1.0, 3, 2)
    >>> np.exp(depth_median_log_probabilities(data, 0.2, cand)).round(3)
    array([0.02 , 0.054, 0.022, 0.036, 0.726, 0.06 , 0.016, 0.036, 0.03 ])
    """
    data = _check_data(data)
    depth = check_depth_name(depth)
    eta = mechanism_eta(epsilon, depth, data.shape[0])
    cand = _check_candidates(candidates, data)
    smoothing = check_scalar(smoothing, "smoothing", low=0.0)
    needs = depth in ("idd", "smoothed_idd") or (depth == "halfspace" and data.shape[1] > 2)
    if needs and directions is None:
        raise ValueError(f"depth={depth!r} in d={data.shape[1]} needs public `directions` "
                         "(e.g. random_directions(500, d, rng)) so that the law is well defined")
    values = _depth_at(cand, data, depth, directions, smoothing)
    return log_softmax(eta * (values - values.max()))


def _resolve_method(method) -> str:
    return check_choice("candidates" if method is None else method, "method", ("candidates", "langevin"),
                        "'candidates' is the exact mechanism, 'langevin' the approximate one")


def private_prior(data, epsilon: float, rng: RandomLike = None) -> GaussianPrior:
    """A Gaussian prior built from an :math:`\\varepsilon`-DP localisation of ``data`` (chapter 19).

    :math:`N(\\tilde c, \\tilde s^2 I_d)` with :math:`(\\tilde c, \\tilde s)` released by
    :func:`~dpcp_tutorial.localize.private_localization` at budget ``epsilon``
    (add/remove and replace-one alike); the prior is a function of that
    release only (post-processing). The centre is clipped to the prior's public
    range :math:`\\pm 10^{100}` and the scale to :math:`[10^{-100}, 10^{100}]`.

    Parameters
    ----------
    data : array-like of shape (n, d)
        The private sample.
    epsilon : float
        Budget of the localisation.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise (:term:`Seed`).

    Returns
    -------
    GaussianPrior

    Examples
    --------
    >>> data = np.random.default_rng(0).normal(loc=50.0, size=(2000, 2))
    >>> prior = private_prior(data, 1.0, rng=1)
    >>> np.round(prior.mean, 1), round(prior.scale, 1)
    (array([49.9, 50. ]), 0.8)
    """
    from .localize import private_localization

    loc = private_localization(data, epsilon, rng)
    return prior_from_localization(loc)


def depth_median_account(epsilon: float, prior: str = "public", localize_share: float | None = None):
    """The privacy account of :func:`private_depth_median` with ``method="candidates"`` (chapters 10, 19).

    Parameters
    ----------
    epsilon : float
        The ``epsilon`` passed to :func:`private_depth_median`.
    prior : {"public", "private"}, default="public"
        ``"public"``: a public prior, box or candidates; ``"private"``:
        ``prior="private"``.
    localize_share : float, default=None
        With ``prior="private"``: the share of ``epsilon`` spent on the
        localisation (``None``: 0.2).

    Returns
    -------
    PrivacyAccount
        Replace-one with ``n`` public (primary): :math:`\\varepsilon`. Add/remove
        (``n`` need not be public): :math:`\\varepsilon/2` with a public prior,
        :math:`a\\varepsilon + (1 - a)\\varepsilon/2` with the private prior and
        share :math:`a` (the localisation is :math:`a\\varepsilon`-DP under both
        relations, the depth mechanism :math:`(1-a)\\varepsilon` under replace-one
        and half that under add/remove; sequential composition, chapter 19,
        ``thm-private-prior``). The Langevin method is only approximately DP
        and has no certified account.

    Examples
    --------
    >>> acc = depth_median_account(1.0, "private")
    >>> acc.relation, round(acc.epsilon, 3)
    ('replace-one', 1.0)
    """
    from .accounting import Spend, make_account

    epsilon = check_epsilon(epsilon)
    prior = check_choice(prior, "prior", ("public", "private"), "'private' is prior='private'")
    share = check_localize_share(localize_share, prior == "private")
    rest = (1.0 - share) * epsilon
    spends = [Spend("depth mechanism (candidates)", (rest / 2.0, 0.0), (rest, 0.0))]
    if share:
        spends.insert(0, Spend("localisation (radius, centre, scale)", (share * epsilon, 0.0),
                               (share * epsilon, 0.0)))
    public = ("n (replace-one)", "the candidates' law, directions, epsilon") + \
        (("the prior's centre and scale",) if prior == "public" else ())
    return make_account(spends, relation="replace-one", public=public,
                        chapter="19" if share else "10",
                        composition="sequential: both parts read every record" if share else None)


@renamed_keywords(sampler="method")    # sampler= means the noise sampler elsewhere (sampler="opendp")
def private_depth_median(data, epsilon: float, depth: str = "spatial", method: str | None = None,
                         prior: GaussianPrior | str | None = None, *, localize_share: float | None = None,
                         box=None, candidates=None, n_candidates: int = 1000,
                         directions=None, n_directions: int | None = None, smoothing: float = 10.0,
                         start=None, n_steps: int | None = None, step_size: float | None = None,
                         rng: RandomLike = None, progress: bool = False) -> np.ndarray:
    """:math:`\\varepsilon`-DP depth median by the exponential mechanism with a public prior (chapter 10).

    Releases a draw from :math:`Q_X \\propto \\exp(\\eta D(\\theta; X))\\pi(d\\theta)`
    with :math:`\\eta = \\varepsilon/(2\\,GS_n)` (:func:`mechanism_eta`).

    Parameters
    ----------
    data : array-like of shape (n, d)
        The private sample, ``n >= 2`` (``n`` is treated as public).
    epsilon : float
        The total privacy budget of the release, under replace-one neighbours
        with ``n`` public (the rule for ``epsilon``:
        :mod:`dpcp_tutorial.accounting`); the candidate sampler is exactly
        :math:`\\varepsilon`-DP. Under add/remove neighbours the same release
        is :math:`\\varepsilon/2`-DP and ``n`` need not be public (chapter 10,
        ``thm-depth-mechanism``).
    depth : {"spatial", "halfspace", "idd", "smoothed_idd"}, default="spatial"
        The utility; ``"spatial"``, the default, costs is :math:`O(Knd)` for
        :math:`K` candidates (about as long as one pass over the data per
        candidate). The exact 2-D halfspace depth sorts the data's angles
        around every candidate, :math:`O(Kn \\log n)`, which is more than ten
        times slower at :math:`n = 10^6` (``python -m benchmarks median``).
        ``method="langevin"`` needs ``"smoothed_idd"``.
    method : {"candidates", "langevin"}, default=None
        ``"candidates"``: exact finite mechanism over data-independent candidates,
        **exactly** :math:`\\varepsilon`-DP. ``"langevin"``: unadjusted Langevin
        :math:`\\theta_{t+1} = \\theta_t + h(\\nabla\\log\\pi + \\eta\\nabla IDD_s)(\\theta_t) + \\sqrt{2h}\\,\\xi_t`,
        releasing the last iterate; **only approximately** :math:`\\varepsilon`-DP: if its
        output law is within total variation :math:`\\delta_{\\mathrm{TV}}` of :math:`Q_X` for
        every data set it is :math:`(\\varepsilon, (1 + e^\\varepsilon)\\delta_{\\mathrm{TV}})`-DP,
        and :math:`\\delta_{\\mathrm{TV}}` is not computed (chapter 10). ``None`` means
        ``"candidates"``. (``sampler=`` is its deprecated old name.)
    prior : GaussianPrior or "private", default=None
        Public prior :math:`\\pi`, **required** unless explicit public
        ``candidates`` or a public ``box`` are given (with candidates it is only
        used for the far-tail check). Candidates are drawn from it; Langevin uses its
        gradient. Choose its centre and scale from public knowledge, in the
        data's units (:class:`GaussianPrior`). ``"private"``: no public centre
        is needed; the share ``localize_share`` of ``epsilon`` releases a
        centre and a scale of the data without any public bound
        (:func:`private_prior`), and the rest, :math:`(1 - a)\\varepsilon`, runs the
        depth mechanism with that prior. Both parts read every record and
        compose sequentially: :math:`\\varepsilon`-DP under replace-one with ``n``
        public, :math:`a\\varepsilon + (1 - a)\\varepsilon/2` under add/remove with
        ``n`` private (:func:`depth_median_account`; chapter 19). Not combined
        with explicit ``candidates``. It needs :math:`n\\varepsilon a/d` large
        enough to find every coordinate (chapter 19 measures it).
    localize_share : float, default=None
        With ``prior="private"`` only: the share :math:`a \\in (0, 1)` of
        ``epsilon`` spent on the localisation; ``None`` means 0.2.
    box : array-like of shape (2, d), default=None
        Public box :math:`B = \\prod_k [l_k, h_k]` that contains the median,
        ``((l_1, ..., l_d), (h_1, ..., h_d))``, from public knowledge (a
        codebook, the instrument's range, a public cap), never from the data.
        The base measure becomes the prior restricted to the box,
        :math:`\\pi(\\cdot \\mid B)` (:meth:`GaussianPrior.sample_in_box`), or the
        uniform distribution on the box when no prior is given; explicit
        ``candidates`` must lie in it, and the Langevin release is clipped to
        it. Every release then lies in the box. The privacy argument is
        unchanged: the candidates are drawn from a public law, independently
        of the data, and the finite mechanism over them is exactly
        :math:`\\varepsilon`-DP for every candidate set; clipping the Langevin
        iterate is post-processing. Data outside the box are allowed (the
        depths are defined for all data).
    candidates : array-like of shape (K, d), default=None
        Public candidates, e.g. :func:`public_grid`. By default ``n_candidates``
        draws from ``prior`` (restricted to ``box`` if given) or, with ``box``
        and no prior, uniform draws in the box. The caller is responsible for their independence
        from the data; a candidate that equals a data row is allowed (the
        mechanism is exactly epsilon-DP for every fixed public candidate set,
        lattice data included), and nothing is refused on that ground.
    n_candidates : int, default=1000
        Number of prior draws when ``candidates`` is not given.
    directions : array-like of shape (m, d), default=None
        Public directions for the direction-based depths (``"idd"``,
        ``"smoothed_idd"``, and ``"halfspace"`` when ``d > 2``); by default
        ``n_directions`` are drawn from ``rng`` (1000 for halfspace, 500 otherwise).
        For ``d <= 2`` halfspace depth is exact unless directions are given.
    n_directions : int, default=None
        Number of random directions drawn when ``directions`` is not given.
    smoothing : float, default=10.0
        Logistic slope :math:`s` of the smoothed IDD.
    start : array-like of shape (d,), default=None
        Langevin starting point; by default a draw from :math:`N(\\text{prior mean}, I_d)`
        (the authors' choice). Must be data-independent (it may equal a data row).
    n_steps : int, default=None
        Langevin steps; by default :math:`\\max(1000, 80d)`, a public rule of thumb
        that reaches the stationary regime with the default step on unit-scale
        data (chapter 10). At most :math:`10^8/d` (the noise is drawn up front).
    step_size : float, default=None
        Langevin step :math:`h`; by default :func:`langevin_step_size`. Must be
        below :math:`2\\tau^2` (:math:`\\tau` the prior scale), which keeps the
        chain stable for every data set. The defaults of ``start``,
        ``n_steps`` and ``step_size`` **assume standardised data** (see Notes).
    rng : None, int or numpy.random.Generator, default=None
        Randomness, used in the order: the localisation (with
        ``prior="private"``), directions, candidates or start, sampling;
        ``None`` for a real release (:term:`Seed`).
    progress : bool, default=False
        Show a tqdm progress bar (on stderr) over the depth computation or the
        Langevin steps; off by default. The release is the same either way.

    Returns
    -------
    ndarray of shape (d,)
        Inside ``box`` when one is given.

    Warns
    -----
    ReleaseWarning
        When the release lies in the prior's **far tail**: its Mahalanobis
        radius :math:`\\|\\tilde\\theta - \\mu\\|/\\tau` exceeds the prior's
        :math:`1 - 10^{-6}` quantile :math:`\\sqrt{\\chi^2_{d,1-10^{-6}}}`
        (:meth:`GaussianPrior.far_tail_radius`), a sign that the prior does not
        fit the data's units. The condition is a function of the release and
        the public prior only, so the warning is post-processing: it costs no
        privacy. **It cannot detect a misplaced prior when the candidates are
        drawn from that prior** (the default of the candidate sampler): the
        release is then one of the prior's own draws, a prior draw, which lies
        in the far tail with probability about ``n_candidates`` times
        :math:`10^{-6}` whatever the data. A prior centred far from the data
        gives the prior draw nearest the data -- inside the prior's bulk,
        still far from the data -- and no warning; no free check can tell, so
        choose the prior from public knowledge. The warning does fire for explicit ``candidates`` and for
        the Langevin chain, whose release can leave the prior's bulk.

    Notes
    -----
    **Scale of the data.** The default Langevin settings -- the start
    :math:`N(\\text{prior mean}, I_d)`, ``n_steps`` :math:`= \\max(1000, 80d)` and
    the step :func:`langevin_step_size` -- are tuned for data of unit scale,
    like the authors' prior :math:`N(0, 25d\\,I)` for standardised data. On data
    in other units (mmHg, dollars) the chain mixes slowly or not at all within
    the default steps. Standardise every coordinate by **public** constants
    first (subtract a public reference centre, divide by a public spread, never
    the sample's own mean and standard deviation), release the median on that
    scale with a prior such as ``GaussianPrior(0.0, 5 * sqrt(d))``, and map it
    back with the same constants (post-processing, free).

    **Base measure of the candidate sampler.** The release is one of the
    candidates, so the candidates set the resolution: with :math:`K` of them
    spread over a region of width :math:`w` per coordinate the release is
    about :math:`w K^{-1/d}` from the median however large :math:`n` is. Give
    the tightest public ``box`` that contains the median (every candidate
    then lies in it, and so does the release), map skewed coordinates to a
    scale on which the box is not mostly empty (counts to the log scale), and
    restrict a public prior to the box when a public centre is known
    (``GaussianPrior(0.0, 1.0)`` with ``box`` :math:`[-3, 3]^d` for data
    standardised by public constants). Chapter 10 measures these choices.

    Raises
    ------
    ValueError, TypeError
        Only for public inputs: the data's shape (``n >= 2`` and ``d`` are
        public), non-finite entries (the data domain is :math:`\\mathbb{R}^d`;
        the message is the same for every such data set), ``epsilon``, the
        options above, and Langevin settings whose a-priori bound on the
        iterates (computed from the public settings and the data-independent
        noise, before the chain runs) leaves the floating-point range. Nothing
        is raised because of data values (tests/test_private_errors.py).

    Examples
    --------
    >>> data = np.random.default_rng(0).normal(loc=1.0, size=(500, 2))
    >>> box = ([-3.0, -3.0], [3.0, 3.0])          # public bounds on the median
    >>> private_depth_median(data, 1.0, prior=GaussianPrior(0.0, 1.0), box=box,
    ...                      rng=1).round(2)
    array([0.86, 0.96])
    """
    data = _check_data(data)
    n, d = data.shape
    depth = check_depth_name(depth)
    epsilon = check_epsilon(epsilon)
    method = _resolve_method(method)
    private, share = check_prior_setting(prior, localize_share, candidates)
    eta = mechanism_eta((1.0 - share) * epsilon, depth, n)
    n_candidates = check_positive_int(n_candidates, "n_candidates", maximum=MAX_CANDIDATES)  # checked in every mode
    smoothing = check_scalar(smoothing, "smoothing", low=0.0, hint="it is the logistic slope s of the smoothed "
                             "integrated dual depth (the authors use s = 10)")
    if method == "langevin" and depth != "smoothed_idd":
        raise ValueError("method='langevin' needs a differentiable depth: use depth='smoothed_idd', "
                         "or method='candidates' for the other depths")
    progress = check_bool(progress, "progress")
    box = None if box is None else check_box(box, d)
    if method == "langevin" and prior is None:
        raise TypeError("method='langevin' needs a prior: pass prior=GaussianPrior(mean, scale) "
                        "explicitly, or prior='private'. " + PRIOR_ADVICE)
    if prior is None and candidates is None and box is None:
        raise TypeError("private_depth_median needs a base measure: pass box=(low, high), the public box "
                        "that contains the median (candidates are then drawn uniformly in it), or "
                        "prior=GaussianPrior(mean, scale), or both (the prior restricted to the box), or "
                        "prior='private' when no public centre is known (a share of epsilon locates the data; "
                        "chapter 19). " + PRIOR_ADVICE)
    if prior is not None and not private and not isinstance(prior, GaussianPrior):
        raise TypeError(f"prior must be a GaussianPrior or 'private', got {type(prior).__name__}")
    rng = check_random_state(rng)
    if private:
        if method == "candidates":           # checked before the data are read
            check_candidate_memory(n_candidates, d)
        prior = private_prior(data, share * epsilon, rng)
    u = None
    if depth != "spatial" and not (depth == "halfspace" and d <= 2 and directions is None):
        m = DEFAULT_DIRECTIONS[depth] if n_directions is None else n_directions
        u = resolve_directions(directions, m, d, rng)
    else:
        check_direction_settings(directions, n_directions, d)     # unused here; checked without a draw
    if method == "candidates":
        if start is not None or step_size is not None or n_steps is not None:
            raise ValueError("start, step_size and n_steps are Langevin options; "
                             "they are not used with method='candidates'")
        if candidates is None:
            cand = draw_candidates(prior, box, n_candidates, d, rng)
        else:
            cand = _check_candidates(candidates, data)
            check_candidates_in_box(cand, box)
        values = _depth_at(cand, data, depth, u, smoothing, progress)
        release = cand[gumbel_max_sample(eta * (values - values.max()), rng)].copy()
        if prior is not None:
            warn_far_tail(release, prior)
        return release
    if candidates is not None:
        raise ValueError("candidates are only used with method='candidates'")
    n_steps = max(1000, 80 * d) if n_steps is None else check_positive_int(n_steps, "n_steps", maximum=10 ** 8)
    if n_steps * d > 10 ** 8:
        raise ValueError(f"n_steps={n_steps} in d={d} dimensions needs n_steps * d > 1e8 noise draws, more than "
                         "fit in memory; use fewer steps")
    mean, precision = prior.mean_vector(d), 1.0 / prior.scale ** 2
    h = langevin_step_size(eta, u, smoothing, prior.scale) if step_size is None else \
        check_scalar(step_size, "step_size", low=0.0, high=2.0 * prior.scale ** 2,
                     hint="a step of 2 * prior.scale**2 or more makes the chain unstable for every data set")
    if start is None:
        theta = mean + rng.standard_normal(d)
    else:
        theta = _check_point(start, d, "start")
    noise = np.sqrt(2.0 * h) * rng.standard_normal((n_steps, d))
    # A public bound on every iterate, for every data set: per coordinate x = theta - mean follows
    # x' = (1 - a) x + h eta grad + noise with a = h / tau^2 in (0, 2) and |grad| <= s / 4 (the smoothed
    # IDD's gradient: |(1 - 2F) F'| <= 1/4 and unit directions), so |x_t| <= |x_0| + (h eta s/4 + max|noise|)
    # / min(a, 2 - a). It uses no data, so refusing on it is not a release.
    a = h * precision
    bound = float(np.abs(theta - mean).max()) + (h * eta * smoothing / 4.0 + float(np.abs(noise).max())) \
        / min(a, 2.0 - a) + float(np.abs(mean).max())
    if not bound < _LANGEVIN_LIMIT:
        raise ValueError(f"with these public settings (step_size={h:.3g}, eta={eta:.3g}, prior scale "
                         f"{prior.scale:.3g}) the chain's iterates are not bounded below {_LANGEVIN_LIMIT:g}; "
                         "use a smaller step_size, a smaller prior scale or the default step")
    cdfs = smoothed_cdfs(data, u, smoothing, dtype=np.float32)   # drift only: float32 is ample
    from tqdm import tqdm

    for step in tqdm(range(n_steps), desc=f"Langevin median (n={n}, d={d})", unit="step", leave=False,
                     disable=not progress):
        drift = eta * smoothed_gradient(cdfs, u, u @ theta) - precision * (theta - mean)
        theta = theta + h * drift + noise[step]
    if box is not None:
        theta = np.clip(theta, box[0], box[1])       # post-processing of the last iterate: free
    warn_far_tail(theta, prior)
    return theta


def _check_point(x, d: int, name: str) -> np.ndarray:
    x = check_array(x, name, max_ndim=1)
    if x.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return x


def spatial_median(data, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Spatial (geometric) median :math:`\\arg\\min_\\theta \\sum_i \\|X_i - \\theta\\|`, the maximiser of spatial depth (chapter 9).

    Weiszfeld's iteration with the Vardi & Zhang (2000) modification, which
    stays correct when an iterate hits a data point: with
    :math:`T(y) = \\sum_{X_i \\ne y} X_i/\\|X_i - y\\| \\big/ \\sum_{X_i \\ne y} 1/\\|X_i - y\\|`,
    :math:`r(y) = \\|\\sum_{X_i \\ne y} (X_i - y)/\\|X_i - y\\|\\|` and
    :math:`\\eta(y)` the multiplicity of :math:`y` in the data,
    :math:`y \\leftarrow (1 - \\eta/r)^+ T(y) + \\min(1, \\eta/r)\\, y`.
    Non-private.

    Parameters
    ----------
    data : array-like of shape (n, d)
        The sample.
    tol : float, default=1e-10
        Stop when a step is shorter than ``tol`` times the median distance of
        the data to their coordinate-wise median.
    max_iter : int, default=10000
        Most Weiszfeld steps.

    Returns
    -------
    ndarray of shape (d,)

    Examples
    --------
    >>> spatial_median([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [10.0, 10.0]]).round(3)
    array([0.5, 0.5])
    """
    data = _check_data(data)
    tol = check_scalar(tol, "tol", low=0.0)
    max_iter = check_positive_int(max_iter, "max_iter")
    y = np.median(data, axis=0)
    scale = float(np.median(np.linalg.norm(data - y, axis=1))) or 1.0    # a robust spread of the data
    for _ in range(max_iter):
        diff = data - y
        r = np.linalg.norm(diff, axis=1)
        at = r == 0
        w = np.divide(1.0, r, out=np.zeros_like(r), where=~at)
        if not w.any():
            return y
        t = w @ data / w.sum()
        eta = int(at.sum())
        if eta:
            rr = np.linalg.norm(w @ diff)
            lam = min(1.0, eta / rr) if rr > 0 else 1.0
            y_new = (1.0 - lam) * t + lam * y
        else:
            y_new = t
        if np.linalg.norm(y_new - y) <= tol * scale:
            return y_new
        y = y_new
    return y


def depth_median(data, depth: str = "spatial", *, candidates=None, directions=None,
                 n_directions: int | None = None, smoothing: float = 10.0, start=None,
                 rng: RandomLike = None, progress: bool = False) -> np.ndarray:
    """Non-private depth median, for comparison with :func:`private_depth_median` (chapters 9, 10).

    * With ``candidates``: the deepest candidate (candidates may be data here).
    * ``"spatial"``: the spatial median (:func:`spatial_median`).
    * ``"halfspace"``, ``"idd"``: the deepest data point (exact halfspace depth
      for ``d <= 2``, public directions otherwise).
    * ``"smoothed_idd"``: maximises :math:`IDD_s` by L-BFGS from ``start``
      (default: the coordinate-wise median).

    ``rng`` only draws the random directions; the result is not private, so
    the seed protects nothing (``rng=None`` or a seed, as for any
    computation; for a private median use :func:`private_depth_median` with
    ``rng=None`` for a real release). ``progress=True`` shows a tqdm bar over
    the depth computation (candidates, or every data point for ``"halfspace"``
    and ``"idd"``: :math:`n^2 \\log n` work for the exact 2-D halfspace depth).

    Parameters
    ----------
    data : array-like of shape (n, d)
        The sample, ``n >= 2``.
    depth : {"spatial", "halfspace", "idd", "smoothed_idd"}, default="spatial"
        The depth whose maximiser is returned.
    candidates : array-like of shape (K, d), default=None
        Restrict the maximisation to these points.
    directions : array-like of shape (m, d), default=None
        Directions for ``"idd"``, ``"smoothed_idd"`` and ``"halfspace"`` in
        ``d > 2`` (or in ``d <= 2`` instead of the exact depth).
    n_directions : int, default=None
        Random directions drawn when ``directions`` is not given (1000 for
        halfspace, 500 otherwise).
    smoothing : float, default=10.0
        Logistic slope :math:`s` of the smoothed IDD.
    start : array-like of shape (d,), default=None
        Starting point of L-BFGS for ``"smoothed_idd"``.
    rng : None, int or numpy.random.Generator, default=None
        Draws the random directions.
    progress : bool, default=False
        Show a tqdm progress bar.

    Returns
    -------
    ndarray of shape (d,)

    Examples
    --------
    >>> data = np.random.default_rng(0).normal(size=(200, 2))
    >>> depth_median(data, "halfspace").round(3)
    array([-0.191, -0.02 ])
    """
    data = _check_data(data)
    n, d = data.shape
    depth = check_depth_name(depth)
    rng = check_random_state(rng)
    progress = check_bool(progress, "progress")
    smoothing = check_scalar(smoothing, "smoothing", low=0.0, hint="it is the logistic slope s of the smoothed "
                             "integrated dual depth")                    # checked in every mode
    x0 = None if start is None else _check_point(start, d, "start")     # (used by "smoothed_idd" only)
    u = None
    if depth in ("idd", "smoothed_idd") or (depth == "halfspace" and (d > 2 or directions is not None)):
        m = DEFAULT_DIRECTIONS[depth] if n_directions is None else n_directions
        u = resolve_directions(directions, m, d, rng)
    else:
        check_direction_settings(directions, n_directions, d)     # unused here; checked without a draw
    if candidates is not None:
        cand = check_2d(candidates, "candidates")
        if cand.shape[1] != d:
            raise ValueError(f"candidates have {cand.shape[1]} columns but data have {d}")
        return cand[int(np.argmax(_depth_at(cand, data, depth, u, smoothing, progress)))].copy()
    if depth == "spatial":
        return spatial_median(data)
    if depth in ("halfspace", "idd"):
        return data[int(np.argmax(_depth_at(data, data, depth, u, smoothing, progress)))].copy()
    cdfs = smoothed_cdfs(data, u, smoothing)
    x0 = np.median(data, axis=0) if x0 is None else x0
    scale = 4.0 * d  # makes the curvature near the optimum O(1) for unit-scale data

    def objective(theta):
        f, g = cdfs(u @ theta)
        value = np.mean(f * (1.0 - f))
        grad = u.T @ ((1.0 - 2.0 * f) * g) * (smoothing / u.shape[0])
        return -scale * value, -scale * grad

    res = minimize(objective, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 2000, "gtol": 1e-10, "ftol": 1e-15})
    return res.x
