"""The samplers that the mechanisms share with the releases built on them (chapters 2, 3, 4, 18 and 19).

OpenDP's exact Laplace, Gaussian and noisy-max samplers (``sampler="opendp"``), with their measurements
cached, the normalisation of an exponential mechanism's logits in log space, and AboveThreshold (the
sparse vector technique) with the Laplace log-CDF of its exact law. :mod:`~dpcp_tutorial.mechanisms`
builds the public mechanisms on them; the quantiles, the calibrators and the baselines draw through
them. Internal to the package: the names below are not public API.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import log_softmax

from ._validation import check_bool


def opendp_additive(arr: np.ndarray, scale: float, kind: str) -> np.ndarray:
    """``arr`` plus OpenDP's exact Laplace (``kind="laplace"``) or Gaussian noise of ``scale``, same shape.

    The input is passed to OpenDP, which adds the noise in exact arithmetic and rounds once: the
    floating-point attack on ``value + noise`` does not apply. OpenDP's float samplers use the finest
    lattice (granularity ``2**-1074``), so the law is the continuous one rounded to floats.
    """
    measurement = opendp_additive_measurement(kind, float(scale), arr.ndim == 0)
    if arr.ndim == 0:
        return np.asarray(measurement(float(arr)), dtype=float)
    return np.asarray(measurement([float(v) for v in arr.ravel()]), dtype=float).reshape(arr.shape)


@functools.lru_cache(maxsize=64)
def opendp_additive_measurement(kind: str, scale: float, scalar: bool):
    from .mechanisms import opendp_prelude

    with opendp_prelude() as odp:
        atom = odp.atom_domain(T=float, nan=False)
        if scalar:
            space = (atom, odp.absolute_distance(T=float))
        else:
            space = (odp.vector_domain(atom), (odp.l1_distance if kind == "laplace" else odp.l2_distance)(T=float))
        make = odp.m.make_laplace if kind == "laplace" else odp.m.make_gaussian
        return make(*space, scale=scale)


@functools.lru_cache(maxsize=64)
def opendp_noisy_max_measurement(scale: float, negate: bool, integer: bool):
    from .mechanisms import opendp_prelude

    with opendp_prelude() as odp:
        kind = "i64" if integer else float
        atom = odp.atom_domain(T=kind) if integer else odp.atom_domain(T=float, nan=False)
        return odp.m.make_noisy_max(odp.vector_domain(atom), odp.linf_distance(T=kind),
                                    odp.zero_concentrated_divergence(), scale=scale, negate=negate)


def opendp_noisy_max(scores, scale: float, negate: bool, integer: bool) -> int:
    """Index of ``argmax_j (score_j / scale + G_j)`` (``argmin`` of ``score_j / scale - G_j`` with ``negate``),
    ``G_j`` i.i.d. Gumbel, sampled exactly by OpenDP: the law ``P(j) ∝ exp(±score_j / scale)``."""
    measurement = opendp_noisy_max_measurement(float(scale), bool(negate), bool(integer))
    values = [int(v) for v in scores] if integer else [float(v) for v in scores]
    return int(measurement(values))


def normalise(logits: np.ndarray, log: bool) -> np.ndarray:
    log = check_bool(log, "log")
    logp = log_softmax(logits)
    return logp if log else np.exp(logp)


def above_threshold(queries: np.ndarray, threshold: float, threshold_scale: float, query_scale: float, rng, *,
                    below: bool = False, sampler: str = "numpy") -> int | None:
    """AboveThreshold: the index of the first query whose noisy value passes the noisy threshold, or ``None``.

    :math:`\\rho \\sim \\mathrm{Lap}(\\text{threshold\\_scale})` is added to the threshold :math:`T`
    and :math:`\\nu_k \\sim \\mathrm{Lap}(\\text{query\\_scale})` to every query :math:`q_k`, all drawn at
    once after the queries (the same law as drawing :math:`\\nu_k` one query at a time: the queries do
    not depend on earlier noise), :math:`\\rho` first. Query :math:`k` passes when
    :math:`q_k + \\nu_k \\ge T + \\rho`, or :math:`q_k + \\nu_k \\le T + \\rho` with ``below=True``
    (chapters 18 and 19: the privacy loss is stated where it is used). ``sampler="opendp"`` draws the same
    laws with OpenDP's exact Laplace sampler (``rng`` unused).
    """
    if sampler == "opendp":
        bar = float(opendp_additive(np.asarray(threshold), threshold_scale, "laplace"))
        noisy = opendp_additive(queries.astype(float), query_scale, "laplace")
    else:
        rho = rng.laplace(scale=threshold_scale)
        nu = rng.laplace(scale=query_scale, size=queries.size)
        noisy, bar = queries + nu, threshold + rho
    passed = noisy <= bar if below else noisy >= bar
    k = int(np.argmax(passed))
    return k if passed[k] else None


@functools.lru_cache(maxsize=32)
def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [-1, 1] (``numpy.polynomial.legendre.leggauss``), computed once per
    ``n`` and returned read-only: the exact laws integrate with the same rule thousands of times in an audit."""
    nodes, weights = np.polynomial.legendre.leggauss(n)
    nodes.flags.writeable = weights.flags.writeable = False
    return nodes, weights


def laplace_log_cdf(x: np.ndarray, b: float) -> np.ndarray:
    """:math:`\\log P(\\mathrm{Lap}(b) \\le x)`, stable in both tails (the exact laws of AboveThreshold)."""
    return np.where(x < 0, x / b - math.log(2.0), np.log1p(-0.5 * np.exp(-np.maximum(x, 0) / b)))


def above_threshold_log_law(x: np.ndarray, query_scale: float, log_weight: np.ndarray, *,
                            last_collects_none: bool = False) -> np.ndarray:
    """The exact law of :func:`above_threshold`, in log space, by quadrature over the threshold noise.

    ``x[i, k]`` is the margin of query ``k`` at quadrature node ``i`` of the threshold noise: the query
    passes iff its noise :math:`\\nu_k \\sim \\mathrm{Lap}(\\text{query\\_scale})` is at most ``x[i, k]``;
    ``log_weight[i]`` is the log of the node's weight times the threshold noise's density there. Returns
    :math:`\\log P(\\text{first pass at } k) = \\log \\int \\prod_{j<k} P(\\nu_j > x_j)\\, P(\\nu_k \\le x_k)`,
    :math:`k = 0, \\dots, K-1`, then :math:`\\log P(\\text{no pass})`; with ``last_collects_none`` the
    last index :math:`K-1` takes every run with no earlier pass instead (``K`` entries).
    """
    log_stop = laplace_log_cdf(x, query_scale)
    log_go = laplace_log_cdf(-x, query_scale)                       # P(nu > x) = F(-x)
    before = np.concatenate([np.zeros((x.shape[0], 1)), np.cumsum(log_go, axis=1)], axis=1)
    if last_collects_none:
        terms = np.concatenate([before[:, :-2] + log_stop[:, :-1], before[:, -2:-1]], axis=1)
    else:
        terms = np.concatenate([before[:, :-1] + log_stop, before[:, -1:]], axis=1)
    terms += log_weight[:, None]
    top = terms.max(axis=0)
    return top + np.log(np.exp(terms - top).sum(axis=0))
