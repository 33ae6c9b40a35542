"""The public rank corrections of the peers' calibrators (chapter 16), shared by
:mod:`~dpcp_tutorial.calibrators` and the calibrator grid of :mod:`~dpcp_tutorial.experiments`.

Each corrected calibrator targets a rank (and, for OpenDP's quantile, a level) computed from public
quantities only: P-COQS's corrected target rank, the Laplace histogram's rank and noise allowance, and
OpenDP's smallest level whose proven miscoverage bound is at most ``alpha``. Internal to the package: the
names below are not public API.
"""

from __future__ import annotations

import functools
import math

import numpy as np


def pcoqs_corrected_rank(alpha: float, n: int, rho: float, steps: int) -> int:
    """The corrected target rank :math:`m'` of :func:`~dpcp_tutorial.pcoqs_corrected_level` (may exceed ``n``)."""
    from scipy import stats

    sigma = math.sqrt(steps / (2.0 * rho))
    best = None
    for zeta in np.geomspace(alpha * 1e-4, alpha * 0.999, 200):
        k = math.ceil((1.0 - alpha + zeta) * (n + 1) - 1e-9 * (n + 1))
        tau = sigma * float(stats.norm.isf(zeta / steps))
        target = math.ceil(k - 1 + tau)
        if best is None or target < best:
            best = target
    return int(best)


@functools.lru_cache(maxsize=256)
def laplace_corrected_rank(alpha: float, n: int, bins: int, scale: float) -> tuple[int, float, float]:
    """Public choice of (k, zeta, tau) minimising the noisy count the threshold must reach."""
    from .calibrators import laplace_prefix_tail

    best = None
    for zeta in np.geomspace(alpha * 1e-4, alpha * 0.999, 200):
        k = math.ceil((1.0 - alpha + zeta) * (n + 1) - 1e-9 * (n + 1))
        tau = laplace_prefix_tail(bins, scale, float(zeta))
        need = (k - 1) + tau
        if best is None or need < best[0]:
            best = (need, k, float(zeta), tau)
    _, k, zeta, tau = best
    return k, zeta, tau


def opendp_scale(level: float, epsilon: float, relation: str) -> float:
    """Real-valued noise scale :math:`s`: :math:`2/\\varepsilon` (replace-one) or :math:`2\\max(a,1-a)/\\varepsilon`."""
    if relation == "replace-one":
        return 2.0 / epsilon
    return 2.0 * max(level, 1.0 - level) / epsilon


def opendp_gap(level: float, n: int, rank):
    r"""Data-independent lower bound on the score gap between the candidates below and above :math:`s_{(k)}`.

    See the Notes of :func:`~dpcp_tutorial.opendp_quantile`: with :math:`x = k - 1`,
    :math:`y_c = a n - (1-a) x` and :math:`H` the larger of the two scores
    around the sign change of :math:`g` above :math:`s_{(k)}`, the gap is
    :math:`a n - x - \max((1-a)x, H)`. Vectorised over ``rank``.
    """
    a = level
    k = np.asarray(rank, dtype=float)
    x = k - 1.0
    crossing = a * n - (1.0 - a) * x
    high = np.where(crossing <= k, a * (n - k) - (1.0 - a) * x,
                    np.where(crossing >= n, (1.0 - a) * n, (1.0 - a) * crossing))
    out = a * n - x - np.maximum((1.0 - a) * x, high)
    return float(out) if np.ndim(rank) == 0 else out


def opendp_bound(level: float, n: int, rank: int, candidates: int, epsilon: float, relation: str) -> float:
    """Proven miscoverage bound of the corrected OpenDP calibrator at (level, rank); see opendp_quantile."""
    if candidates == 1:
        return 0.0
    gap = opendp_gap(level, n, rank)
    if not gap > 0.0:
        return 1.0
    log_mass = math.log(candidates - 1) - gap / opendp_scale(level, epsilon, relation)
    mass = math.exp(min(log_mass, 700.0))
    tail = mass / 2.0 if mass <= 1.0 else 1.0 - 1.0 / (2.0 * mass)
    return min(1.0, (n + 1 - rank) / (n + 1) + tail)


@functools.lru_cache(maxsize=256)
def opendp_level(alpha: float, n: int, epsilon: float, candidates: int, relation: str) -> tuple[float, int]:
    """(level, rank) with the smallest level whose bound is <= alpha; (1.0, 0) when none exists."""
    k_min = math.ceil((1.0 - alpha) * (n + 1) - 1e-9 * (n + 1))
    if candidates == 1:
        return 1.0 - alpha, k_min
    ranks = {k_min}
    for zeta in np.geomspace(alpha * 1e-4, alpha * 0.999, 80):
        ranks.add(math.ceil((1.0 - alpha + zeta) * (n + 1) - 1e-9 * (n + 1)))
    best = (1.0, 0)
    for k in sorted(r for r in ranks if r <= n):
        if opendp_bound(1.0, n, k, candidates, epsilon, relation) > alpha:
            continue
        lo, hi = 0.5, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if opendp_bound(mid, n, k, candidates, epsilon, relation) <= alpha:
                hi = mid
            else:
                lo = mid
        if hi < best[0]:
            best = (hi, k)
    return best
