"""Robust aggregation of client updates with a private depth median (chapter 13).

In federated learning a server combines the update vectors :math:`g_1, \\dots, g_n \\in \\mathbb R^d`
sent by :math:`n` clients. The mean is what FedAvg uses; one client can move it
arbitrarily far. This module provides

* :func:`private_median_aggregate` -- the **exact** exponential mechanism over
  public candidates with a depth of the updates as utility, i.e. the private
  depth median of chapter 10 applied to client updates. Privacy unit: **one
  client's update** (replace-one neighbours; the number of clients is public).
  It is :math:`\\varepsilon`-DP for that unit in one round, whatever the other
  clients -- honest or Byzantine -- send;
* :func:`aggregation_log_probabilities` -- its exact output law (for audits);
* :func:`ball_candidates` -- public candidates, uniform in a public ball;
* :func:`dp_clipped_mean_aggregate` -- the usual private baseline (clip every
  update to norm :math:`C`, average, add Gaussian noise), :math:`(\\varepsilon, \\delta)`-DP;
* :func:`robust_aggregate` -- the non-private aggregators (mean, coordinate-wise
  median, spatial median, Tukey median) for comparison;
* :func:`byzantine_updates` -- simulated attacks.

Over :math:`T` rounds in which a client takes part, its guarantee composes to
:math:`T\\varepsilon` (basic adaptive composition).
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    MAX_MAGNITUDE,
    RandomLike,
    real_array,
    check_2d,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_scalar,
)
from .depth import check_depth_name
from .mechanisms import gaussian_mechanism
from .median import depth_median, depth_median_log_probabilities, private_depth_median, spatial_median

__all__ = [
    "ball_candidates",
    "aggregation_log_probabilities",
    "private_median_aggregate",
    "dp_clipped_mean_aggregate",
    "clipped_mean_sensitivity",
    "robust_aggregate",
    "byzantine_updates",
    "AGGREGATORS",
    "ATTACKS",
]

AGGREGATORS = ("mean", "coordinate_median", "spatial_median", "tukey_median")
"""Names accepted by :func:`robust_aggregate`."""

ATTACKS = ("collude", "sign_flip", "noise")
"""Names accepted by :func:`byzantine_updates`."""


def _check_updates(updates) -> np.ndarray:
    return check_2d(updates, "updates", min_rows=2)


def check_center(center, d: int, name: str = "center") -> np.ndarray:
    """A public centre: a finite real scalar (repeated ``d`` times) or a vector of length ``d``, at most 1e100."""
    if isinstance(center, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of {d} real numbers, got {type(center).__name__}")
    c = real_array(center, name)
    c = np.full(d, float(c)) if c.ndim == 0 else c
    if c.shape != (d,) or not np.all(np.isfinite(c)):
        raise ValueError(f"{name} must be a finite scalar or an array of length d={d}, got shape {c.shape}")
    if not np.abs(c).max() <= MAX_MAGNITUDE:
        raise ValueError(f"{name} has entries beyond {MAX_MAGNITUDE:g} in magnitude; rescale the problem")
    return c.copy()


def ball_candidates(n_candidates: int, d: int, radius: float, center=0.0, rng: RandomLike = None) -> np.ndarray:
    """``n_candidates`` i.i.d. points, uniform in the public ball :math:`B(c, R)` (chapter 13).

    A point is :math:`c + R\\,U^{1/d} Z/\\|Z\\|` with :math:`Z \\sim N(0, I_d)` and
    :math:`U \\sim U(0, 1)`. The candidates are public because they are drawn
    from ``rng`` only; :math:`R` and :math:`c` must come from public knowledge
    (e.g. a norm bound on the updates), never from the updates themselves.
    Public randomness: a seed is fine (:term:`Seed`).

    Parameters
    ----------
    n_candidates : int
        Number of candidates :math:`K`.
    d : int
        Dimension.
    radius : float
        Public radius :math:`R > 0`.
    center : float or array-like of shape (d,), default=0.0
        Public centre :math:`c`.
    rng : None, int or numpy.random.Generator, default=None
        Source of the candidates.

    Returns
    -------
    ndarray of shape (n_candidates, d)

    Examples
    --------
    >>> c = ball_candidates(1000, 2, radius=3.0, rng=0)
    >>> c.shape, bool(np.linalg.norm(c, axis=1).max() <= 3.0)
    ((1000, 2), True)
    """
    k = check_positive_int(n_candidates, "n_candidates", maximum=10 ** 9)
    d = check_positive_int(d, "d", maximum=10 ** 6)
    if k * d > 10 ** 9:
        raise ValueError(f"n_candidates * d = {k * d} exceeds 1e9 values; use fewer candidates")
    radius = check_scalar(radius, "radius", low=0.0, hint="it is a public bound on the norm of an update")
    c = check_center(center, d)
    rng = check_random_state(rng)
    z = rng.standard_normal((k, d))
    norms = np.linalg.norm(z, axis=1)
    while np.any(norms == 0):  # probability zero; keeps every direction well defined
        bad = norms == 0
        z[bad] = rng.standard_normal((int(bad.sum()), d))
        norms = np.linalg.norm(z, axis=1)
    r = radius * rng.uniform(size=k) ** (1.0 / d)
    return c + z * (r / norms)[:, None]


def aggregation_log_probabilities(updates, epsilon: float, candidates, depth: str = "halfspace",
                                  directions=None) -> np.ndarray:
    """Exact output law of :func:`private_median_aggregate`, in log space (chapter 13).

    .. math:: \\log P(\\text{release } c_k) = \\eta D(c_k; g_{1:n}) - \\log\\sum_l e^{\\eta D(c_l; g_{1:n})},
              \\qquad \\eta = \\frac{\\varepsilon}{2\\,GS_n(D)}.

    Parameters
    ----------
    updates : array-like of shape (n_clients, d)
        One row per client.
    epsilon : float
        Budget of this round for one client's update.
    candidates : array-like of shape (K, d)
        Public candidates (e.g. :func:`ball_candidates`).
    depth : {"halfspace", "spatial", "idd"}, default="halfspace"
        The utility; ``"halfspace"`` is exact for ``d <= 2`` and uses the public
        ``directions`` otherwise.
    directions : array-like of shape (m, d), default=None
        Public directions; required for ``"idd"`` and for ``"halfspace"`` when ``d > 2``.

    Returns
    -------
    ndarray of shape (K,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> updates = rng.normal(size=(50, 2))
    >>> cand = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 3.0]])
    >>> np.exp(aggregation_log_probabilities(updates, 1.0, cand)).round(3)
    array([0.998, 0.002, 0.   ])
    """
    updates = _check_updates(updates)
    depth = _check_aggregation_depth(depth)
    return depth_median_log_probabilities(updates, epsilon, candidates, depth=depth, directions=directions)


def _check_aggregation_depth(depth) -> str:
    depth = check_depth_name(depth)
    if depth == "smoothed_idd":
        raise ValueError("depth='smoothed_idd' is meant for the Langevin sampler, which is only approximately "
                         "private; the aggregator uses the exact candidate mechanism: choose 'halfspace', "
                         "'spatial' or 'idd'")
    return depth


def private_median_aggregate(updates, epsilon: float, candidates, depth: str = "halfspace", directions=None,
                             rng: RandomLike = None) -> np.ndarray:
    """:math:`\\varepsilon`-DP depth median of the clients' updates (chapter 13).

    Releases candidate :math:`c_k` with probability proportional to
    :math:`\\exp(\\eta D(c_k; g_{1:n}))`, :math:`\\eta = \\varepsilon/(2\\,GS_n)`
    (:math:`\\varepsilon n/2` for halfspace and integrated dual depth,
    :math:`\\varepsilon n/4` for spatial depth), by the Gumbel-max trick: the
    exact finite exponential mechanism with base measure the empirical law of the
    public candidates.

    Privacy unit: **one client's update**. If any single row of ``updates`` is
    replaced by any other vector (the number of clients stays the same), the
    law of the output changes by a factor in :math:`[e^{-\\varepsilon}, e^{\\varepsilon}]`.
    This holds whatever the other rows are, so Byzantine clients cannot weaken the
    guarantee of the honest ones. A client that takes part in :math:`T` rounds has
    :math:`T\\varepsilon` in total (basic composition).

    Robustness (chapter 13): with :math:`m` adversarial rows, every point that a
    direction separates from all honest rows (outside their convex hull for
    exact halfspace depth; outside the polygon cut out by the public directions
    otherwise) has depth at most :math:`m/n`, so the probability of releasing such
    a candidate is at most :math:`(K_{out}/K_t)\\,e^{-\\eta(t - m/n)}` for every
    level :math:`t`, where :math:`K_t` counts the candidates of depth at least
    :math:`t`. Below a fraction :math:`1/(d+1)` of attackers some point is deeper
    than :math:`m/n` (centerpoint theorem), and the bound vanishes as
    :math:`\\varepsilon n` grows.

    Parameters
    ----------
    updates : array-like of shape (n_clients, d)
        One row per client.
    epsilon : float
        Budget of this round for one client's update.
    candidates : array-like of shape (K, d)
        Public candidates, chosen without looking at the updates (:func:`ball_candidates`).
    depth : {"halfspace", "spatial", "idd"}, default="halfspace"
        The utility.
    directions : array-like of shape (m, d), default=None
        Public directions (see :func:`aggregation_log_probabilities`).
    rng : None, int or numpy.random.Generator, default=None
        Source of the Gumbel variates: ``None`` (fresh entropy) for a real
        round (:term:`Seed`). NumPy's floating-point sampler (not hardened, see
        :mod:`dpcp_tutorial.mechanisms`); to draw the same law with OpenDP's
        exact sampler, pass the exponents ``eta * D(c_k)`` (the log-law of
        :func:`aggregation_log_probabilities` up to a constant) to
        :func:`~dpcp_tutorial.exponential_mechanism` with ``sampler="opendp"``.

    Returns
    -------
    ndarray of shape (d,)
        One of the candidates.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> updates = rng.normal(loc=1.0, size=(100, 2))
    >>> cand = ball_candidates(200, 2, radius=4.0, rng=1)
    >>> private_median_aggregate(updates, 1.0, cand, rng=2).round(2)
    array([1.13, 1.18])
    """
    updates = _check_updates(updates)
    depth = _check_aggregation_depth(depth)
    needs = depth == "idd" or (depth == "halfspace" and updates.shape[1] > 2)
    if needs and directions is None:
        raise ValueError(f"depth={depth!r} in d={updates.shape[1]} needs public `directions` "
                         "(e.g. dpcp_tutorial.depth.random_directions(500, d, rng))")
    return private_depth_median(updates, epsilon, depth=depth, method="candidates", candidates=candidates,
                                directions=directions, rng=rng)


def clipped_mean_sensitivity(n_clients: int, clip_norm: float) -> float:
    """Replace-one :math:`L_2` sensitivity :math:`2C/n` of the mean of updates clipped to norm :math:`C` (chapter 13).

    Parameters
    ----------
    n_clients : int
        Public number of clients :math:`n`.
    clip_norm : float
        Public clipping norm :math:`C`.

    Examples
    --------
    >>> clipped_mean_sensitivity(100, 1.0)
    0.02
    """
    n = check_positive_int(n_clients, "n_clients")
    clip_norm = check_scalar(clip_norm, "clip_norm", low=0.0)
    return 2.0 * clip_norm / n


def dp_clipped_mean_aggregate(updates, clip_norm: float, epsilon: float, delta: float,
                              rng: RandomLike = None) -> np.ndarray:
    """Clipped mean plus Gaussian noise (DP-FedAvg style), :math:`(\\varepsilon, \\delta)`-DP per client (chapter 13).

    .. math:: \\tilde g = \\frac1n \\sum_i g_i \\min\\Big(1, \\frac{C}{\\|g_i\\|}\\Big) + N(0, \\sigma^2 I_d),

    with :math:`\\sigma` calibrated to the replace-one sensitivity :math:`2C/n`
    by the analytic Gaussian mechanism (chapter 2). Privacy unit: one client's update.

    Parameters
    ----------
    updates : array-like of shape (n_clients, d)
        One row per client.
    clip_norm : float
        Public clipping norm :math:`C`.
    epsilon, delta : float
        Budget of this round for one client's update.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise: ``None`` (fresh entropy) for a real release
        (:term:`Seed`). The Gaussian noise is NumPy's (:func:`~dpcp_tutorial.gaussian_mechanism`,
        whose Notes say why no OpenDP sampler is offered).

    Returns
    -------
    ndarray of shape (d,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> updates = rng.normal(loc=0.5, size=(1000, 2))
    >>> dp_clipped_mean_aggregate(updates, 2.0, 1.0, 1e-5, rng=1).round(2)
    array([0.44, 0.44])
    """
    updates = _check_updates(updates)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = clipped_mean_sensitivity(updates.shape[0], clip_norm)
    clip_norm = check_scalar(clip_norm, "clip_norm", low=0.0)
    norms = np.linalg.norm(updates, axis=1)
    scale = np.minimum(1.0, np.divide(clip_norm, norms, out=np.ones_like(norms), where=norms > 0))
    clipped_mean = (updates * scale[:, None]).mean(axis=0)
    return np.asarray(gaussian_mechanism(clipped_mean, sensitivity, epsilon, delta, rng=rng))


def robust_aggregate(updates, method: str = "spatial_median", directions=None) -> np.ndarray:
    """Non-private aggregation of client updates (chapter 13).

    Parameters
    ----------
    updates : array-like of shape (n_clients, d)
        One row per client.
    method : {"mean", "coordinate_median", "spatial_median", "tukey_median"}, default="spatial_median"
        ``"mean"``: FedAvg's average (breakdown point :math:`1/n`).
        ``"coordinate_median"``: the median of every coordinate.
        ``"spatial_median"``: :math:`\\arg\\min_\\theta\\sum_i\\|g_i - \\theta\\|` (breakdown point 1/2).
        ``"tukey_median"``: the deepest update in halfspace depth (exact for
        ``d <= 2``, public ``directions`` otherwise).
    directions : array-like of shape (m, d), default=None
        Public directions for ``"tukey_median"`` in ``d > 2``.

    Returns
    -------
    ndarray of shape (d,)

    Examples
    --------
    >>> honest = np.random.default_rng(0).normal(loc=1.0, size=(40, 2))
    >>> updates = byzantine_updates(honest, 10, rng=1)   # 10 attackers at -10 * mean
    >>> robust_aggregate(updates, "mean").round(2)
    array([-1.28, -1.41])
    >>> robust_aggregate(updates).round(2)
    array([0.66, 0.92])
    """
    updates = _check_updates(updates)
    method = check_choice(method, "method", AGGREGATORS)
    if directions is not None:          # public directions are checked in every method (used by tukey_median)
        directions = check_2d(directions, "directions")
        if directions.shape[1] != updates.shape[1]:
            raise ValueError(f"directions have {directions.shape[1]} columns but the updates have "
                             f"d={updates.shape[1]}")
    if method == "mean":
        return updates.mean(axis=0)
    if method == "coordinate_median":
        return np.median(updates, axis=0)
    if method == "spatial_median":
        return spatial_median(updates)
    # method == "tukey_median"
    if updates.shape[1] > 2 and directions is None:
        raise ValueError("method='tukey_median' in d > 2 needs public `directions`; exact halfspace depth "
                         "is implemented for d <= 2 only")
    return depth_median(updates, "halfspace", directions=directions)


def byzantine_updates(honest, n_byzantine: int, attack: str = "collude", scale: float = 10.0,
                      rng: RandomLike = None) -> np.ndarray:
    """Append ``n_byzantine`` malicious updates to the honest ones (chapter 13).

    Attacks (the attackers know the honest updates, the usual worst case):

    * ``"collude"``: every attacker sends the same vector
      :math:`-\\text{scale}\\cdot\\bar g`, where :math:`\\bar g` is the honest mean
      (it pulls the mean backwards);
    * ``"sign_flip"``: attacker :math:`j` sends :math:`-\\text{scale}\\cdot g_j`
      for a randomly chosen honest update :math:`g_j`;
    * ``"noise"``: independent :math:`N(0, \\text{scale}^2 I_d)` vectors.

    Parameters
    ----------
    honest : array-like of shape (n_honest, d)
        The honest clients' updates.
    n_byzantine : int
        Number of attackers (0 allowed).
    attack : {"collude", "sign_flip", "noise"}, default="collude"
        The attack, as above.
    scale : float, default=10.0
        Size of the attack (positive).
    rng : None, int or numpy.random.Generator, default=None
        A simulation: a seed is fine.

    Returns
    -------
    ndarray of shape (n_honest + n_byzantine, d)
        The honest rows first, then the attackers.

    Examples
    --------
    >>> honest = np.ones((3, 2))
    >>> byzantine_updates(honest, 2, attack="collude", scale=5.0)
    array([[ 1.,  1.],
           [ 1.,  1.],
           [ 1.,  1.],
           [-5., -5.],
           [-5., -5.]])
    """
    honest = check_2d(honest, "honest")
    m = check_positive_int(n_byzantine, "n_byzantine", minimum=0, maximum=10 ** 7)
    scale = check_scalar(scale, "scale", low=0.0)
    attack = check_choice(attack, "attack", ATTACKS)
    rng = check_random_state(rng)
    d = honest.shape[1]
    if attack == "collude":
        bad = np.tile(-scale * honest.mean(axis=0), (m, 1))
    elif attack == "sign_flip":
        bad = -scale * honest[rng.integers(0, honest.shape[0], size=m)]
    else:                                        # "noise"
        bad = scale * rng.standard_normal((m, d))
    return np.vstack([honest, bad])
