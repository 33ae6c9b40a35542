"""Private location baselines for the depth medians (chapter 10).

* :func:`coordinatewise_private_median` -- one private median per coordinate
  (the private quantile of chapter 3 at level 1/2), the budget split evenly
  over the :math:`d` coordinates: :math:`\\varepsilon`-DP by basic composition.
* :func:`coinpress_mean` -- CoinPress (Biswas, Dong, Kamath & Ullman, 2020):
  iteratively shrink a public ball around the mean, clip to it, and add
  Gaussian noise; :math:`\\rho`-zCDP. ``variant="specified"`` (default) clips
  the original data at every step, as the algorithm is specified;
  ``variant="in_place"`` reproduces the reference code, which overwrites the
  data with the clipped points, so later steps clip already-clipped points.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    RandomLike,
    real_array,
    check_2d,
    check_choice,
    check_epsilon,
    check_positive_int,
    check_scalar,
)
from .aggregation import check_center
from ._mechanism_core import opendp_additive
from .mechanisms import check_sampler
from .quantile import private_quantile

__all__ = ["coordinatewise_private_median", "coinpress_mean", "COINPRESS_VARIANTS", "pure_dp_to_zcdp", "ZCDP_CONVERSIONS",
           "zcdp_to_approx_dp"]


def coordinatewise_private_median(data, epsilon: float, bounds: tuple[float, float], bins: int = 1000,
                                  rng: RandomLike = None, *, sampler: str = "numpy") -> np.ndarray:
    """:math:`\\varepsilon`-DP coordinate-wise median (chapter 10).

    Coordinate :math:`k` is rescaled to [0, 1] with the **public** bounds,
    :math:`R_i = \\mathrm{clip}((X_{ik} - a)/(b - a), 0, 1)`, and released by
    :func:`~dpcp_tutorial.private_quantile` with budget :math:`\\varepsilon/d`
    at level :math:`\\beta = 1/2 + 2d/(n\\varepsilon)` and ``variant="original"``
    (the DPCP write-up's Algorithm 1, whose shifted level is then exactly
    :math:`\\alpha_0 = 1/2`; the tight variant's level serves coverage, not a
    median): the exponential mechanism with utility
    :math:`-\\max(\\#\\{R_i < e_j\\}, \\#\\{R_i > e_j\\})` (sensitivity 1) over the
    bin edges :math:`e_j = j/M`. Basic composition over the :math:`d`
    coordinates gives :math:`\\varepsilon`-DP (replace-one neighbours).

    Parameters
    ----------
    data : array-like of shape (n, d)
    epsilon : float
        Total budget; each coordinate gets ``epsilon / d``.
    bounds : (float, float)
        Public range :math:`[a, b]` of every coordinate; values outside are clipped.
    bins : int, default=1000
        Number of bins :math:`M` per coordinate (resolution :math:`(b - a)/M`).
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise with ``sampler="numpy"``; ``None`` for a real
        release (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    sampler : {"numpy", "opendp"}, default="numpy"
        Passed to :func:`~dpcp_tutorial.private_quantile`: ``"opendp"`` draws
        each coordinate with OpenDP's exact report-noisy-max (level on the grid
        :math:`A/2^{32}`, see there).

    Returns
    -------
    ndarray of shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.baselines import coordinatewise_private_median
    >>> data = np.random.default_rng(0).normal(size=(2000, 2))
    >>> m = coordinatewise_private_median(data, epsilon=1.0, bounds=(-5, 5), rng=1)
    >>> np.round(m, 2)
    array([-0.02, -0.03])
    """
    data = check_2d(data, "data", min_rows=2)
    epsilon = check_epsilon(epsilon)
    lower, upper = _check_bounds(bounds)
    bins = check_positive_int(bins, "bins", minimum=2, maximum=10 ** 8)
    sampler, rng = check_sampler(sampler, rng)
    n, d = data.shape
    eps_k = epsilon / d
    if n * eps_k <= 4.0:
        raise ValueError(f"n * epsilon / d = {n * eps_k:.4g} must exceed 4 for the median level to be valid; "
                         "use more data or a larger epsilon")
    level = 0.5 + 2.0 / (n * eps_k)
    scaled = np.clip((data - lower) / (upper - lower), 0.0, 1.0)
    out = np.empty(d)
    for k in range(d):
        out[k] = lower + (upper - lower) * private_quantile(scaled[:, k], level, eps_k, bins=bins, rng=rng,
                                                            variant="original", sampler=sampler)
    return out


def _check_bounds(bounds) -> tuple[float, float]:
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise TypeError("bounds must be a pair (lower, upper) of public numbers") from None
    lower = check_scalar(lower, "lower bound")
    upper = check_scalar(upper, "upper bound")
    if upper <= lower:
        raise ValueError(f"bounds=({lower}, {upper}): the upper bound must exceed the lower bound")
    return lower, upper


def _gaussian_tail_radius(d: int, failure_prob: float) -> float:
    """:math:`\\gamma = \\sqrt{d + 2\\sqrt{d\\log(1/b)} + 2\\log(1/b)}`: a :math:`N(0, I_d)` vector is shorter w.p. :math:`\\ge 1 - b`."""
    log_b = np.log(1.0 / failure_prob)
    return float(np.sqrt(d + 2.0 * np.sqrt(d * log_b) + 2.0 * log_b))


def _project_onto_ball(data: np.ndarray, center: np.ndarray, clip: float) -> np.ndarray:
    """Every row projected onto the ball :math:`B(c, R)` (rows inside are unchanged); returns the offsets from ``c``."""
    diff = data - center
    norms = np.linalg.norm(diff, axis=1)
    factor = np.minimum(1.0, np.divide(clip, norms, out=np.ones_like(norms), where=norms > 0))
    return diff * factor[:, None]


def _clipped_mean(data: np.ndarray, center: np.ndarray, clip: float) -> np.ndarray:
    """Mean of the points projected onto the ball :math:`B(c, R)`; moves by at most :math:`2R/n` between neighbours."""
    return center + _project_onto_ball(data, center, clip).mean(axis=0)


def _coinpress_step(data: np.ndarray, center: np.ndarray, radius: float, rho: float, gamma: float,
                    rng: np.random.Generator | None) -> tuple[np.ndarray, float, float, float]:
    """One CoinPress step; returns (new centre, new radius, clipping radius R, noise scale sigma).

    ``rng=None`` adds the noise with OpenDP's exact Gaussian sampler instead of NumPy's.
    """
    n = data.shape[0]
    clip = min(np.sqrt(radius ** 2 + 6.0 * radius + gamma ** 2), radius + gamma)
    clipped_mean = _clipped_mean(data, center, clip)
    sigma = (2.0 * clip / n) / np.sqrt(2.0 * rho)
    if rng is None:
        new_center = opendp_additive(clipped_mean, sigma, "gaussian")
    else:
        new_center = clipped_mean + sigma * rng.standard_normal(data.shape[1])
    new_radius = gamma * np.sqrt(1.0 / n + sigma ** 2)
    return new_center, new_radius, clip, sigma


COINPRESS_VARIANTS = ("specified", "in_place")


def coinpress_mean(data, rho: float, radius: float, center=0.0, n_iter: int = 4, split=None,
                   failure_prob: float = 0.01, variant: str = "specified", rng: RandomLike = None, *,
                   sampler: str = "numpy") -> np.ndarray:
    """CoinPress private mean for data with covariance :math:`\\preceq I_d` (Biswas et al., 2020; chapter 10).

    Starting from a **public** ball :math:`B(c, r)` believed to contain the
    mean, each of the ``n_iter`` steps, with budget :math:`\\rho_t`:

    1. :math:`\\gamma = \\sqrt{d + 2\\sqrt{d\\log(1/b)} + 2\\log(1/b)}`;
    2. clipping radius :math:`R = \\min(\\sqrt{r^2 + 6r + \\gamma^2},\\, r + \\gamma)`;
    3. project every point onto :math:`B(c, R)`;
    4. :math:`c \\leftarrow` mean of the projected points :math:`+ N(0, \\sigma^2 I)`,
       :math:`\\sigma = (2R/n)/\\sqrt{2\\rho_t}`;
    5. :math:`r \\leftarrow \\gamma\\sqrt{1/n + \\sigma^2}`.

    Step 4 is the Gaussian mechanism with :math:`L_2` sensitivity :math:`2R/n`,
    so it is :math:`\\rho_t`-zCDP; the steps compose to
    :math:`\\rho = \\sum_t \\rho_t`-zCDP for replace-one neighbours with
    :math:`n` public. Under add/remove neighbours :math:`n` itself differs
    between neighbours and enters both the divisor and :math:`\\sigma`; the
    output then reveals :math:`n` and this calibration gives no add/remove
    guarantee (release :math:`n` separately, or pad to a public size).

    Two variants, both :math:`\\rho`-zCDP by the same argument:

    * ``"specified"`` (default): every step projects the **original** data onto
      :math:`B(c, R)`, the algorithm as specified by Biswas et al.;
    * ``"in_place"``: the reference implementation (``algos.py`` of the
      CoinPress repository, used by the medians paper's experiments)
      overwrites the data with the projected points, so step :math:`t`
      projects the points already projected in steps :math:`1, \\dots, t-1`.
      Privacy is unchanged: the working copy of record :math:`i` is a function
      of :math:`X_i` and of the already released centres and radii only, so
      replacing one record changes one row, which lies in :math:`B(c, R)` after
      the projection; the sensitivity is still :math:`2R/n`. Accuracy is not:
      a point clipped towards an early, wrong centre stays where it was put,
      so under contamination the far cluster is never fully released from the
      first ball (chapter 10).

    Parameters
    ----------
    data : array-like of shape (n, d)
    rho : float
        Total zCDP budget; to compare with an :math:`\\varepsilon`-DP estimator at
        equal privacy, :math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)`, the sharp
        conversion (:func:`pure_dp_to_zcdp`).
    radius : float
        Public radius :math:`r` of the initial ball (the authors use :math:`10\\sqrt d`).
    center : float or array-like of shape (d,), default=0.0
        Public centre of the initial ball.
    n_iter : int, default=4
        Number of steps :math:`t`.
    split : array-like of shape (n_iter,), default=None
        Fractions of :math:`\\rho` per step (positive, summing to 1). Default:
        the first :math:`t-1` steps share 1/4 and the last gets 3/4 (for
        :math:`t = 4`: [1/12, 1/12, 1/12, 3/4], the authors' choice).
    failure_prob : float, default=0.01
        :math:`b` in :math:`\\gamma` (accuracy only; privacy does not depend on it).
    variant : {"specified", "in_place"}, default="specified"
        ``"specified"`` projects the original data at every step;
        ``"in_place"`` reproduces the reference code, which projects the
        points projected by the previous steps.
    rng : None, int or numpy.random.Generator, default=None
        Source of the Gaussian noise with ``sampler="numpy"``; ``None`` for a
        real release (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"`` (default): NumPy's floating-point Gaussian (not hardened).
        ``"opendp"``: each step's clipped mean goes through OpenDP's
        ``make_gaussian`` (L2 sensitivity :math:`2R/n`; exact noise on the
        finest lattice, one rounding; OpenDP's zCDP map is :math:`\\rho_t`).
        The same law, the same guarantee.

    Returns
    -------
    ndarray of shape (d,)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.baselines import coinpress_mean
    >>> data = np.random.default_rng(0).normal(loc=1.0, size=(5000, 2))
    >>> m = coinpress_mean(data, rho=0.5, radius=10.0, rng=1)
    >>> bool(np.linalg.norm(m - 1.0) < 0.2)
    True
    """
    variant = check_choice(variant, "variant", COINPRESS_VARIANTS,
                           "'specified' is the algorithm as published, 'in_place' the reference code, which "
                           "overwrites the data with the projected points")
    data = check_2d(data, "data", min_rows=2)
    n, d = data.shape
    rho = check_scalar(rho, "rho", low=1e-30, hint="rho is the zCDP budget (below 1e-30 the noise leaves the "
                       "floating-point range)")
    radius = check_scalar(radius, "radius", low=0.0)
    n_iter = check_positive_int(n_iter, "n_iter", maximum=10 ** 6)
    failure_prob = check_scalar(failure_prob, "failure_prob", low=0.0, high=1.0)
    c = check_center(center, d)
    if split is None:
        fractions = np.array([1.0]) if n_iter == 1 else np.r_[np.full(n_iter - 1, 0.25 / (n_iter - 1)), 0.75]
    else:
        fractions = real_array(split, "split")
        if fractions.shape != (n_iter,) or not np.all(fractions > 0) or not abs(fractions.sum() - 1.0) <= 1e-9:
            raise ValueError(f"split must be {n_iter} positive fractions summing to 1, got {split}")
    sampler, rng = check_sampler(sampler, rng)
    gamma = _gaussian_tail_radius(d, failure_prob)
    r = radius
    work = data.copy() if variant == "in_place" else data     # never modify the caller's array
    for frac in fractions:
        new_c, r, clip, _ = _coinpress_step(work, c, r, rho * frac, gamma, rng)
        if variant == "in_place":
            work = c + _project_onto_ball(work, c, clip)       # the reference code's X[outside] = c + ...
        c = new_c
    return c


#: the conversions accepted by :func:`pure_dp_to_zcdp`
ZCDP_CONVERSIONS = ("tight", "bun-steinke")


def pure_dp_to_zcdp(epsilon: float, conversion: str = "tight") -> float:
    """The zCDP budget :math:`\\rho` implied by :math:`\\varepsilon`-DP (chapters 10 and 16).

    .. math:: \\rho_{\\rm tight}(\\varepsilon) = \\varepsilon\\tanh(\\varepsilon/2)
              = \\varepsilon\\,\\frac{e^{\\varepsilon} - 1}{e^{\\varepsilon} + 1}
              \\;\\le\\; \\rho_{\\rm BS}(\\varepsilon) = \\frac{\\varepsilon^2}{2}.

    ``conversion="tight"`` (default) returns :math:`\\varepsilon\\tanh(\\varepsilon/2)`,
    the smallest :math:`\\rho` such that *every* :math:`\\varepsilon`-DP mechanism is
    :math:`\\rho`-zCDP (chapter 16, proposition *Pure DP implies zCDP, tightly*);
    ``conversion="bun-steinke"`` returns the classic :math:`\\varepsilon^2/2` of Bun &
    Steinke (2016, Prop. 1.4), valid but looser by the factor
    :math:`\\varepsilon/(2\\tanh(\\varepsilon/2))`: 1.0008 at :math:`\\varepsilon = 0.1`,
    1.08 at 1, 1.66 at 3 and 5.0 at 10. Use the tight one to compare a zCDP
    method with an :math:`\\varepsilon`-DP one at equal privacy; the other only to
    reproduce a source that used it.

    *Proof sketch* (chapter 16 gives it in full). For neighbours :math:`x, x'` put
    :math:`P = M(x)`, :math:`Q = M(x')` and :math:`w = dQ/dP \\in [e^{-\\varepsilon}, e^{\\varepsilon}]`,
    :math:`\\mathbb E_P w = 1`. Then :math:`e^{(\\lambda-1)D_\\lambda(P\\|Q)} = \\mathbb E_P w^{1-\\lambda}`,
    and the convex :math:`w \\mapsto w^{1-\\lambda}` lies below its chord, so the
    worst law of :math:`w` puts its mass on the two endpoints: binary
    randomised response, :math:`P = (p, 1-p)`, :math:`Q = (1-p, p)`,
    :math:`p = e^{\\varepsilon}/(1 + e^{\\varepsilon})`. With :math:`t = \\lambda - 1` and
    :math:`a = \\varepsilon/2`, :math:`t D_\\lambda = \\log\\cosh(a + \\varepsilon t) - \\log\\cosh a
    \\le \\varepsilon t\\tanh a + \\tfrac12\\varepsilon^2t^2\\operatorname{sech}^2 a \\le \\rho t(1 + t)`
    (Taylor, :math:`\\operatorname{sech}^2` decreasing, and :math:`2a \\le \\sinh 2a`), i.e.
    :math:`D_\\lambda \\le \\rho\\lambda` for every order :math:`\\lambda > 1`. As
    :math:`\\lambda \\to 1`, :math:`D_\\lambda/\\lambda` tends to randomised response's
    Kullback-Leibler divergence :math:`(2p - 1)\\varepsilon = \\rho`, so no smaller
    :math:`\\rho` holds for it. :math:`\\tanh u \\le u` gives :math:`\\rho_{\\rm tight} \\le \\rho_{\\rm BS}`.

    *Neighbour relation.* The conversion is a statement about one pair of
    output laws, so it holds under whichever relation the :math:`\\varepsilon`-DP
    statement uses: an :math:`\\varepsilon`-DP mechanism under replace-one
    (add/remove) neighbours is :math:`\\rho`-zCDP under replace-one (add/remove)
    neighbours. Convert the loss under the relation you compare at (e.g.
    :math:`\\varepsilon' \\le 2\\varepsilon` under replace-one for an
    :math:`\\varepsilon`-DP add/remove mechanism) before calling this. The
    converse does not hold: :math:`\\rho`-zCDP implies only approximate DP
    (:func:`zcdp_to_approx_dp`), so the zCDP side still holds the weaker guarantee.

    Parameters
    ----------
    epsilon : float
        Pure-DP budget, positive and finite.
    conversion : {"tight", "bun-steinke"}, default="tight"
        ``"tight"``: :math:`\\varepsilon\\tanh(\\varepsilon/2)`; ``"bun-steinke"``:
        :math:`\\varepsilon^2/2`.

    Returns
    -------
    float
        :math:`\\rho`.

    Examples
    --------
    >>> from dpcp_tutorial.baselines import pure_dp_to_zcdp
    >>> round(pure_dp_to_zcdp(1.0), 4), round(pure_dp_to_zcdp(1.0, "bun-steinke"), 4)
    (0.4621, 0.5)
    """
    epsilon = check_epsilon(epsilon)
    conversion = check_choice(conversion, "conversion", ZCDP_CONVERSIONS,
                              "'tight' is epsilon*tanh(epsilon/2), the sharp conversion; 'bun-steinke' is the "
                              "looser epsilon**2/2")
    if conversion == "bun-steinke":
        return 0.5 * epsilon ** 2
    return epsilon * math.tanh(epsilon / 2.0)


def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """:math:`\\rho`-zCDP implies :math:`(\\rho + 2\\sqrt{\\rho\\log(1/\\delta)}, \\delta)`-DP.

    Bun & Steinke (2016), Proposition 1.3.

    Parameters
    ----------
    rho : float
        The zCDP parameter :math:`\\rho \\ge 0`.
    delta : float
        The target :math:`\\delta \\in (0, 1]`.

    Returns
    -------
    float
        The :math:`\\varepsilon` of the implied :math:`(\\varepsilon, \\delta)`-DP.

    Examples
    --------
    >>> from dpcp_tutorial.baselines import zcdp_to_approx_dp
    >>> round(float(zcdp_to_approx_dp(0.5, 1e-6)), 4)
    5.7565
    """
    rho = check_scalar(rho, "rho", low=0.0)
    delta = check_scalar(delta, "delta", low=0.0, high=1.0)
    return rho + 2.0 * np.sqrt(rho * np.log(1.0 / delta))
