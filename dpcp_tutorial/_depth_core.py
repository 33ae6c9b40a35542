"""The depth computations over public directions that the depth functions and the medians share (chapters 9, 10, 14).

:mod:`~dpcp_tutorial.depth` exposes the depths; :mod:`~dpcp_tutorial.median`, :mod:`~dpcp_tutorial.scale`
and :mod:`~dpcp_tutorial._counts` evaluate them block by block (with a progress bar, on partitions). What
they share lives here once: the public directions, the projections (computed row by row, so that replacing
one record never moves another record's projection), the halfspace and integrated dual depths over
directions, and the logistic-smoothed CDFs with their gradient. Internal to the package: the names below
are not public API.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ._validation import RandomLike, check_2d, check_positive_int, check_random_state

MAX_DIRECTIONS = 10 ** 7   # public directions at most (each costs d floats and a projection of the data)
CHUNK = 2 ** 21        # elements per temporary (q x n) block: ~16 MB of float64
SMOOTH_BLOCK_BYTES = 2 ** 19  # block size of the smoothed-CDF sums (512 kB: stays in cache)


def resolve_directions(directions, n_directions, d: int, rng: RandomLike) -> np.ndarray:
    """Given public directions (normalised), or ``n_directions`` drawn from ``rng``.

    ``n_directions`` and ``rng`` are validated even when ``directions`` are given (then unused).
    """
    n_directions = check_positive_int(n_directions, "n_directions", maximum=MAX_DIRECTIONS)
    if directions is None:
        from .depth import random_directions

        return random_directions(n_directions, d, rng)
    check_random_state(rng)
    u = check_2d(directions, "directions")
    if u.shape[1] != d:
        raise ValueError(f"directions have {u.shape[1]} columns but the data have d={d}")
    norms = np.linalg.norm(u, axis=1)
    if np.any(norms == 0):
        raise ValueError("directions contain a zero vector; every direction must be non-zero")
    return u / norms[:, None]


def project(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Projections ``x @ u.T`` computed row by row in a fixed order.

    ``einsum`` gives every row the same rounding wherever it sits, unlike BLAS
    ``matmul`` (whose result for a row can change with the number of rows). So
    a query equal to a data point gets exactly that point's projection, and
    replacing one record never moves another record's projection.
    """
    return np.einsum("nd,md->nm", x, u)


def direction_blocks(data: np.ndarray, u: np.ndarray):
    """``(j, sorted projections)`` for consecutive blocks of directions starting at ``j``.

    Each block holds at most ``CHUNK`` projections (about 16 MB), so the
    memory stays :math:`O(n)` however many directions there are (all of them at
    once would take :math:`8nm` bytes: 8 GB for :math:`n = 10^6`, :math:`m = 1000`).
    :func:`project` computes every entry independently of the block, so the
    values are those of one projection of all directions.
    """
    block = max(1, CHUNK // data.shape[0])
    for j in range(0, u.shape[0], block):
        yield j, np.sort(project(data, u[j:j + block]), axis=0)


def halfspace_depth_directions(points: np.ndarray, data: np.ndarray, u: np.ndarray, tick=None) -> np.ndarray:
    """:math:`HD_K` over the directions ``u``: one sort of the data per direction, a binary search per point.

    Cost :math:`O(K (n \\log n + q \\log n))` and memory :math:`O(n + qK)`. ``tick(k)``, if given, is called
    after each block of ``k`` directions (a progress bar).
    """
    n = data.shape[0]
    t = project(points, u)                     # (q, K)
    worst = np.zeros(points.shape[0], dtype=np.int64)
    for j, proj in direction_blocks(data, u):
        for k in range(proj.shape[1]):
            below = np.searchsorted(proj[:, k], t[:, j + k], side="left")            # #{u'X_i < u'x}
            above = n - np.searchsorted(proj[:, k], t[:, j + k], side="right")       # #{u'X_i > u'x}
            np.maximum(worst, np.maximum(below, above), out=worst)
        if tick is not None:
            tick(proj.shape[1])
    return (n - worst) / n


def idd_exact(points: np.ndarray, data: np.ndarray, u: np.ndarray, tick=None) -> np.ndarray:
    """Exact :math:`IDD_m` over the directions ``u`` (sorted projections and binary search), in blocks of directions.

    ``tick(k)``, if given, is called after each block of ``k`` directions.
    """
    n = data.shape[0]
    t = project(points, u)
    total = np.zeros(points.shape[0])
    for j, proj in direction_blocks(data, u):
        for k in range(proj.shape[1]):
            f = np.searchsorted(proj[:, k], t[:, j + k], side="right") / n
            total += f * (1.0 - f)
        if tick is not None:
            tick(proj.shape[1])
    return total / u.shape[0]


class SmoothedCDFs:
    """Logistic-smoothed projected CDFs :math:`F_{s,j}(t) = \\frac1n\\sum_i \\sigma(s(t - p_{ij}))`.

    Evaluates, for one query vector ``t`` of length ``m``, all ``F_j(t_j)`` and
    ``G_j = \\frac1n\\sum_i \\sigma_{ij}(1 - \\sigma_{ij})`` (so that
    ``F_j'(t_j) = s G_j``) in :math:`O(nm)` without any ``exp`` per data point:
    with a per-direction shift :math:`c_j` (the median of the projections; a
    numerical device that leaves the function unchanged),
    :math:`\\sigma(s(t-p)) = b/(b + a)` with :math:`a = e^{s(p - c_j)}` computed
    once and :math:`b = e^{s(t - c_j)}`. Exponents are clipped to
    :math:`\\pm L` (700 in float64, 80 in float32); as long as
    :math:`|s(t - c_j)| \\le L - 100` (float64) or :math:`L - 20` (float32) a
    clipped point has :math:`|s(t - p)|` of at least 100 (20) and its term is
    exact to :math:`e^{-100}` (:math:`e^{-20}`, below float32 resolution).
    Directions outside that range use ``scipy.special.expit`` in float64.

    ``dtype=np.float32`` halves the memory traffic; it is used only for the
    Langevin drift (relative error about :math:`10^{-6}`), never for depth values.
    """

    def __init__(self, projections: np.ndarray, smoothing: float, dtype=np.float64):
        self.s = smoothing
        self.p = np.ascontiguousarray(projections.T)            # (m, n)
        self.centre = np.median(self.p, axis=1)
        limit = 700.0 if dtype == np.float64 else 80.0
        self._safe = limit - (100.0 if dtype == np.float64 else 20.0)
        z = np.clip(smoothing * (self.p - self.centre[:, None]), -limit, limit)
        self.a = np.exp(z).astype(dtype)
        self.m, self.n = self.p.shape
        self._rows = max(1, SMOOTH_BLOCK_BYTES // (self.n * self.a.itemsize))
        self._buf = np.empty((self._rows, self.n), dtype=dtype)
        self._ones = np.ones(self.n, dtype=dtype)

    def __call__(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        st = self.s * (t - self.centre)
        unsafe = np.abs(st) > self._safe
        any_unsafe = bool(unsafe.any())
        b = np.exp(np.where(unsafe, 0.0, st) if any_unsafe else st).astype(self.a.dtype)[:, None]
        f = np.empty(self.m, dtype=self.a.dtype)
        sq = np.empty(self.m, dtype=self.a.dtype)
        for j in range(0, self.m, self._rows):
            k = min(j + self._rows, self.m)
            buf = self._buf[: k - j]
            np.add(self.a[j:k], b[j:k], out=buf)
            np.divide(b[j:k], buf, out=buf)                                 # sigma_ij
            np.matmul(buf, self._ones, out=f[j:k])
            np.square(buf, out=buf)
            np.matmul(buf, self._ones, out=sq[j:k])
        f, sq = f.astype(np.float64), sq.astype(np.float64)
        if any_unsafe:
            for j in np.flatnonzero(unsafe):
                sig = expit(self.s * (t[j] - self.p[j]))
                f[j] = sig.sum()
                sq[j] = sig @ sig
        return f / self.n, (f - sq) / self.n


def smoothed_cdfs(data: np.ndarray, u: np.ndarray, smoothing: float, dtype=np.float64) -> SmoothedCDFs:
    return SmoothedCDFs(project(data, u), smoothing, dtype)


def smoothed_gradient(cdfs: SmoothedCDFs, u: np.ndarray, t: np.ndarray) -> np.ndarray:
    f, g = cdfs(t)
    return u.T @ ((1.0 - 2.0 * f) * g) * (cdfs.s / u.shape[0])
