"""Data depth: halfspace (Tukey), spatial and integrated dual depth (chapter 9).

A depth :math:`D(x; X)` measures how central a point :math:`x \\in \\mathbb R^d`
is with respect to a sample :math:`X = (X_1, \\dots, X_n)`; its maximiser is a
multivariate median. Every function here takes ``points`` of shape ``(q, d)``
and ``data`` of shape ``(n, d)`` and returns the ``q`` depths.

Global sensitivity (chapter 10). For replace-one neighbours (the sample size
:math:`n` is public) each depth moves by at most :math:`c/n` at every point:

* halfspace depth, exact or over fixed directions: :math:`c = 1` (every
  halfspace count moves by at most 1);
* spatial depth: :math:`c = 2` (one unit vector of the average is replaced),
  attained in every dimension;
* integrated dual depth with :math:`F(1-F)`, exact or smoothed: :math:`c = 1`
  (:math:`F(1-F)` moves by :math:`|F-F'|\\,|1-F-F'| \\le 1/n`).

These bounds hold only when the directions used by the approximations are
**public**: drawn independently of the data (as :func:`random_directions` does).
"""

from __future__ import annotations

import numpy as np

from ._counts import spatial_from_sums, spatial_sums
from ._depth_core import (
    CHUNK,
    MAX_DIRECTIONS,
    halfspace_depth_directions,
    idd_exact,
    project,
    resolve_directions,
    smoothed_cdfs,
    smoothed_gradient,
)
from ._validation import RandomLike, check_2d, check_choice, check_positive_int, check_random_state, check_scalar

__all__ = [
    "HALFSPACE_SENSITIVITY",
    "SPATIAL_SENSITIVITY",
    "IDD_SENSITIVITY",
    "depth_sensitivity",
    "random_directions",
    "halfspace_depth",
    "spatial_depth",
    "integrated_dual_depth",
    "integrated_dual_depth_gradient",
]

HALFSPACE_SENSITIVITY = 1.0
"""Halfspace depth: :math:`GS_n = 1/n` (replace-one neighbours, any :math:`d`)."""

SPATIAL_SENSITIVITY = 2.0
"""Spatial depth: :math:`GS_n = 2/n`, attained in every dimension (not :math:`\\sqrt d/n`)."""

IDD_SENSITIVITY = 1.0
"""Integrated dual depth with :math:`F(1-F)`, exact or logistic-smoothed: :math:`GS_n \\le 1/n`."""

DEPTHS = ("halfspace", "spatial", "idd", "smoothed_idd")
_SENSITIVITY = {"halfspace": HALFSPACE_SENSITIVITY, "spatial": SPATIAL_SENSITIVITY,
                "idd": IDD_SENSITIVITY, "smoothed_idd": IDD_SENSITIVITY}

_SURE_ANGLE = 1e-13     # computed angles farther apart than this are certainly distinct (errors are ~1e-15)
_PAIR_BATCH = 2 ** 12   # points near arcs' ends classified per orientation call (its arrays stay in cache)
_SWEEP_BLOCK = CHUNK // 8   # keys per block of the sweep over all points (small temporaries are reused)
_ROW_SEARCH = 128       # above this many distinct points, the sweep runs point by point (rows stay in cache)
_FSUM_SLICE = 4096      # determinants per list handed to math.fsum (a few thousand rows convert fastest)


def depth_sensitivity(depth: str, n: int) -> float:
    """Global sensitivity :math:`GS_n = c/n` of a depth (replace-one neighbours).

    Parameters
    ----------
    depth : {"halfspace", "spatial", "idd", "smoothed_idd"}
    n : int
        Sample size (public).

    Returns
    -------
    float
        ``1/n`` for halfspace and (smoothed) integrated dual depth, ``2/n`` for spatial depth.

    Examples
    --------
    >>> from dpcp_tutorial.depth import depth_sensitivity
    >>> depth_sensitivity("halfspace", 100), depth_sensitivity("spatial", 100)
    (0.01, 0.02)
    """
    return _SENSITIVITY[check_depth_name(depth)] / check_positive_int(n, "n")


def check_depth_name(depth) -> str:
    """Return ``depth`` if it names a supported depth, else raise ``ValueError``."""
    return check_choice(depth, "depth", DEPTHS)


def random_directions(n_directions: int, d: int, rng: RandomLike = None) -> np.ndarray:
    """``n_directions`` i.i.d. uniform unit vectors in :math:`\\mathbb R^d` (normalised Gaussians).

    They are drawn from ``rng`` only, never from the data, so they are public and
    the depths built on them keep their sensitivity (chapter 9).

    Parameters
    ----------
    n_directions, d : int
        Number of directions and dimension.
    rng : None, int or numpy.random.Generator, default=None
        Public randomness, so a seed is fine (:term:`Seed`).

    Returns
    -------
    ndarray of shape (n_directions, d)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.depth import random_directions
    >>> u = random_directions(4, 3, rng=0)
    >>> u.shape, np.round(np.linalg.norm(u, axis=1), 4)
    ((4, 3), array([1., 1., 1., 1.]))
    """
    m = check_positive_int(n_directions, "n_directions", maximum=MAX_DIRECTIONS)
    d = check_positive_int(d, "d", maximum=10 ** 6)
    if m * d > 10 ** 9:
        raise ValueError(f"n_directions * d = {m * d} exceeds 1e9 values; use fewer directions")
    rng = check_random_state(rng)
    u = rng.standard_normal((m, d))
    norms = np.linalg.norm(u, axis=1)
    while np.any(norms == 0):  # probability zero; kept so the output is always a unit vector
        bad = norms == 0
        u[bad] = rng.standard_normal((int(bad.sum()), d))
        norms = np.linalg.norm(u, axis=1)
    return u / norms[:, None]


def _check_points_data(points, data) -> tuple[np.ndarray, np.ndarray]:
    data = check_2d(data, "data", min_rows=2)
    points = check_2d(points, "points")
    if points.shape[1] != data.shape[1]:
        raise ValueError(f"points have {points.shape[1]} columns but data have {data.shape[1]}; "
                         "both must be (rows, d) arrays in the same dimension d")
    return points, data


# --------------------------------------------------------------------------- exact orientation (2D)

_EPS = 2.0 ** -53
_ORIENT_BOUND = (3.0 + 16.0 * _EPS) * _EPS      # Shewchuk's ccwerrboundA for orient2d in floating point
_SPLIT = 134217729.0                             # 2**27 + 1: Dekker's splitter


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p, e)`` with ``p = fl(a b)`` and ``a b = p + e`` exactly (Dekker), for ``|a|, |b| <= 4``."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    a_hi, b_hi = ca - (ca - a), cb - (cb - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _orient_exact(ax, ay, bx, by, cx, cy) -> int:
    """Exact sign of the determinant in rational arithmetic (the slow, always valid route)."""
    from fractions import Fraction as F

    det = (F(bx) - F(ax)) * (F(cy) - F(ay)) - (F(by) - F(ay)) * (F(cx) - F(ax))
    return (det > 0) - (det < 0)


def _orient_expansion(ax, ay, bx, by, cx, cy) -> np.ndarray:
    """Exact signs by error-free transformations: 0/+-1, or 2 where they do not apply (then rational arithmetic).

    The six coordinates of a triple are scaled by one power of two (which keeps the
    sign) to at most 1 in magnitude; each difference is then an exact sum of two
    floats, each product of two such sums an exact sum of eight, and the sign of the
    exact 16-term determinant is that of its correctly rounded sum (``math.fsum``).
    """
    import math

    coords = np.stack([ax, ay, bx, by, cx, cy])
    big = np.abs(coords).max(axis=0)
    _, exponent = np.frexp(np.where(big > 0, big, 1.0))
    scaled = np.ldexp(coords, -exponent)
    # scaling down is exact unless a coordinate falls below the normal range (then it may lose bits or vanish)
    lost = ((coords != 0) & (np.abs(scaled) < 2.0 ** -1000)).any(axis=0)
    # the four differences bx - ax, cy - ay, by - ay, cx - ax as exact sums s + e, in one call on stacked rows
    s, e = _two_sum(scaled[[2, 5, 3, 4]], -scaled[[0, 1, 1, 0]])
    s1, s2, s3, s4 = s
    e1, e2, e3, e4 = e
    # the eight products (s1 + e1)(s2 + e2) and (s3 + e3)(s4 + e4), term by term, as exact sums hi + lo
    hi, lo = _two_product(np.stack([s1, s1, e1, e1, s3, s3, e3, e3]), np.stack([s2, e2, s2, e2, s4, e4, s4, e4]))
    sign = np.array([1.0] * 4 + [-1.0] * 4)[:, None]
    terms = np.stack([sign * hi, sign * lo], axis=1).reshape(16, -1).T    # per triple: hi, lo of each product
    # a product of two parts below 2**-450 can underflow (to 0 as well), and then its error term is wrong: such
    # triples (coordinates of very different magnitudes, denormals) go to rational arithmetic
    parts = np.abs(np.concatenate([s, e]))
    tiny = ((parts != 0) & (parts < 2.0 ** -450)).any(axis=0)
    valid = np.isfinite(terms).all(axis=1) & ~tiny & ~lost
    out = np.full(terms.shape[0], 2, dtype=np.int8)
    # exact differences and exact products (integer and lattice coordinates): the determinant is hi_1 - hi_5,
    # two floats, whose computed difference has the exact sign
    plain = valid & (e == 0).all(axis=0) & (lo[0] == 0) & (lo[4] == 0)
    out[plain] = np.sign(hi[0, plain] - hi[4, plain])
    rows = np.flatnonzero(valid & ~plain)
    for start in range(0, rows.size, _FSUM_SLICE):
        part = rows[start:start + _FSUM_SLICE]
        out[part] = np.sign([math.fsum(row) for row in terms[part].tolist()])   # Python floats for fsum
    return out


def orientation(ax, ay, bx, by, cx, cy) -> np.ndarray:
    """Exact sign of :math:`(b - a) \\times (c - a)` for floating-point points (arrays broadcast).

    +1 when :math:`c` lies strictly left of the directed line :math:`a \\to b`, -1 strictly
    right, 0 on it -- computed exactly, whatever the rounding: a floating-point
    determinant whose error bound (Shewchuk 1997) cannot change its sign decides;
    the others (ties, collinear and near-collinear points, lattice data) are
    evaluated exactly by error-free transformations (sums and products of floats
    as exact sums of floats), or in rational arithmetic where those do not apply
    (coordinates more than 2**900 apart in magnitude). The combinatorics of
    halfspace depth (which points lie on, left or right of a line) are then
    exact, with no collinearity tolerance.
    """
    ax, ay, bx, by, cx, cy = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (ax, ay, bx, by, cx, cy)))
    if ax.ndim == 0:
        return orientation(ax[None], ay[None], bx[None], by[None], cx[None], cy[None])[0]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        left = (bx - ax) * (cy - ay)
        right = (by - ay) * (cx - ax)
        det = left - right
        # relative error bound (Shewchuk), plus the absolute error of products that underflow (denormals)
        bound = _ORIENT_BOUND * (np.abs(left) + np.abs(right)) + 2.0 ** -1020
        sign = np.sign(det).astype(np.int8)
        unsure = ~(np.abs(det) > bound)              # NaN (overflow) is unsure too
        if unsure.any():
            idx = np.nonzero(unsure)
            exact = _orient_expansion(ax[idx], ay[idx], bx[idx], by[idx], cx[idx], cy[idx])
            sign[idx] = exact
            for t in zip(*(i[exact == 2] for i in idx)):
                sign[t] = _orient_exact(ax[t], ay[t], bx[t], by[t], cx[t], cy[t])
    return sign


# --------------------------------------------------------------------------- halfspace depth

def halfspace_depth(points, data, method: str = "exact", directions=None, n_directions: int = 1000,
                    rng: RandomLike = None) -> np.ndarray:
    """Halfspace (Tukey) depth :math:`HD(x) = \\min_{\\|u\\|=1} \\frac1n \\#\\{i : u^\\top X_i \\ge u^\\top x\\}` (chapter 9).

    Parameters
    ----------
    points : array-like of shape (q, d)
        Where to evaluate the depth.
    data : array-like of shape (n, d)
        The sample, ``n >= 2``.
    method : {"exact", "directions"}, default="exact"
        ``"exact"`` (``d <= 2``): the angular sweep of Rousseeuw & Ruts (1996),
        :math:`O(n \\log n)` per point, vectorised over points. ``"directions"``
        (any ``d``): the minimum over the public directions :math:`\\pm u_k`,
        :math:`HD_K(x) = \\min_k \\min(n - \\#\\{u_k^\\top X_i < u_k^\\top x\\},\\,
        n - \\#\\{u_k^\\top X_i > u_k^\\top x\\})/n`, an **upper bound** on
        :math:`HD` with the same sensitivity :math:`1/n`.
    directions : array-like of shape (K, d), default=None
        Public directions for ``method="directions"`` (rows are normalised);
        by default ``n_directions`` are drawn from ``rng``.
    n_directions : int, default=1000
        Number of random directions when ``directions`` is not given.
    rng : None, int or numpy.random.Generator, default=None
        Source of the random directions (``method="directions"`` without
        ``directions``; checked in every mode).
        Public randomness, so a seed is fine (:term:`Seed`).

    Returns
    -------
    ndarray of shape (q,)
        Depths in :math:`\\{0, 1/n, \\dots, 1\\}`.

    Notes
    -----
    The exact sweep is exact in floating point: the points whose computed angle
    is within 1e-13 rad of an arc's ends (ties, collinear and lattice data,
    near-collinear points) are classified by the exact :func:`orientation`
    predicate, so no tolerance merges distinct directions and the sensitivity
    :math:`1/n` holds for the computed depth itself.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.depth import halfspace_depth
    >>> data = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> np.round(halfspace_depth(np.array([[0.5, 0.5], [3.0, 3.0]]), data), 4)
    array([0.5, 0. ])
    """
    points, data = _check_points_data(points, data)
    d = data.shape[1]
    method = check_choice(method, "method", ("exact", "directions"))
    if method == "exact":
        if directions is not None:
            raise ValueError("directions are only used by method='directions'")
        check_positive_int(n_directions, "n_directions", maximum=MAX_DIRECTIONS)   # unused here; still checked
        check_random_state(rng)
        if d == 1:
            return _halfspace_depth_1d(points[:, 0], data[:, 0])
        if d == 2:
            return _halfspace_depth_2d(points, data)
        raise ValueError(f"exact halfspace depth is implemented for d <= 2 (got d={d}); its cost grows like "
                         "n^(d-1) in general. Use method='directions' for an upper bound with public directions")
    u = resolve_directions(directions, n_directions, d, rng)
    return halfspace_depth_directions(points, data, u)


def _halfspace_depth_1d(x: np.ndarray, data: np.ndarray) -> np.ndarray:
    s = np.sort(data)
    n = s.size
    at_least = n - np.searchsorted(s, x, side="left")   # #{X_i >= x}
    at_most = np.searchsorted(s, x, side="right")       # #{X_i <= x}
    return np.minimum(at_least, at_most) / n


def _halfspace_depth_2d(points: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Angular sweep (AS 307): depth = (n - largest count in a half-open half-circle) / n, exactly.

    A closed halfplane through ``x`` misses exactly the points in the opposite
    open halfplane; the largest open half-circle count of the angles of
    ``X_i - x`` is attained by a half-open arc ``[phi_k, phi_k + pi)`` that
    starts at a data angle. Points equal to ``x`` lie in every closed halfplane.

    The computed angles are within 1e-15 rad of the true ones (each difference
    ``X_i - x`` is correctly rounded), so every point farther than
    ``_SURE_ANGLE`` from both ends of an arc is classified by its angle; the few
    near an end (ties, collinear points, lattice data) are classified by the
    exact :func:`orientation`. No tolerance merges distinct directions.
    """
    n = data.shape[0]
    # distinct points with their multiplicities: ties share one angle and are counted by weight
    data, weight = np.unique(data + 0.0, axis=0, return_counts=True)   # + 0.0 turns -0.0 into +0.0
    m = data.shape[0]
    points = points + 0.0
    out = np.empty(points.shape[0])
    if m > _ROW_SEARCH:          # row by row: each row's arrays fit in cache
        block, sweep = max(1, CHUNK // m), _sweep_rows
    else:                        # few distinct points: every row of a block at once
        block, sweep = max(1, _SWEEP_BLOCK // (3 * m)), _sweep_block
    for start in range(0, points.shape[0], block):
        out[start:start + block] = sweep(points[start:start + block], data, weight, n)
    return out


def _sorted_angles(q: np.ndarray, data: np.ndarray):
    """Per point of ``q``: the angles of ``X_i - q`` sorted (``+inf`` last for the data points equal to it),
    their order, and the number ``k`` of data points other than the point."""
    vx = data[None, :, 0] - q[:, 0, None]
    vy = data[None, :, 1] - q[:, 1, None]
    zero = (vx == 0.0) & (vy == 0.0)
    phi = np.arctan2(vy, vx)                     # (-pi, pi]
    phi[zero] = np.inf                           # sorted to the end, then dropped
    order = np.argsort(phi, axis=1, kind="stable")
    return np.take_along_axis(phi, order, axis=1), order, data.shape[0] - zero.sum(axis=1)


def _sweep_rows(q: np.ndarray, data: np.ndarray, weight: np.ndarray, n: int) -> np.ndarray:
    """The angular sweep (see :func:`_halfspace_depth_2d`), point by point; the points near the arcs' ends are
    classified for many points at once, in batches of about ``_PAIR_BATCH`` pairs."""
    phi, order, k = _sorted_angles(q, data)
    first = np.cumsum(k) - k                     # point r's arcs are the entries first[r] to first[r] + k_r - 1
    counts = np.empty(int(k.sum()), dtype=np.int64)
    two_pi = 2.0 * np.pi
    pending, n_pending = [], 0
    for row in range(q.shape[0]):
        kk = int(k[row])
        if kk == 0:
            continue
        a = phi[row, :kk]
        w = weight[order[row, :kk]]
        ext = np.concatenate([a - two_pi, a, a + two_pi])
        cum = np.concatenate([[0], np.cumsum(np.tile(w, 3))])           # weight of ext[:i] is cum[i]
        s_lo = np.searchsorted(ext, a - _SURE_ANGLE, side="left")
        s_hi = np.searchsorted(ext, a + _SURE_ANGLE, side="right")
        e_lo = np.searchsorted(ext, a + (np.pi - _SURE_ANGLE), side="left")
        e_hi = np.searchsorted(ext, a + (np.pi + _SURE_ANGLE), side="right")
        counts[first[row]:first[row] + kk] = cum[e_lo] - cum[s_hi] + w    # surely inside, and the arc's own
        unsure = np.flatnonzero((s_hi - s_lo > 1) | (e_hi > e_lo))
        if unsure.size:
            pending.append((np.full(unsure.size, row), unsure, s_lo[unsure], s_hi[unsure], e_lo[unsure],
                            e_hi[unsure]))
            n_pending += int((s_hi - s_lo + e_hi - e_lo)[unsure].sum())
            if n_pending >= _PAIR_BATCH:
                _add_arc_ends(counts, first, q, data, weight, order, k, pending)
                pending, n_pending = [], 0
    if pending:
        _add_arc_ends(counts, first, q, data, weight, order, k, pending)
    return _depths(counts, first, k, n)


def _add_arc_ends(counts, first, q, data, weight, order, k, pending) -> None:
    """Adds to ``counts`` the points near the ends of the arcs in ``pending`` (one tuple of arrays per row)."""
    r, j, s_lo, s_hi, e_lo, e_hi = (np.concatenate(parts) for parts in zip(*pending))
    counts[first[r] + j] += _arc_ends_inside(q, data, weight, order, r, j, k[r], s_lo, s_hi, e_lo, e_hi)


def _sweep_block(q: np.ndarray, data: np.ndarray, weight: np.ndarray, n: int) -> np.ndarray:
    """The angular sweep (see :func:`_halfspace_depth_2d`) for all the points ``q`` at once.

    Row ``r`` holds the ``k_r`` angles of the data points other than ``q_r``, sorted, as the three copies
    ``phi - 2 pi, phi, phi + 2 pi`` (the arcs wrap around), then ``+inf``. Every row's searches run as one
    search in a sorted array of complex keys ``r + i angle``, which NumPy orders by row, then by angle: exact
    float comparisons.
    """
    phi, order, k = _sorted_angles(q, data)
    rows, m = phi.shape
    # the arcs, row by row: arc (r, j) starts at the j-th angle of row r, for j < k_r; row r's arcs are the
    # entries first[r] to first[r] + k_r - 1 of the arrays below
    first = np.cumsum(k) - k
    r = np.repeat(np.arange(rows), k)
    j = np.arange(r.size) - first[r]
    kr = k[r]
    a, w = phi[r, j], weight[order[r, j]]
    two_pi = 2.0 * np.pi
    width = 3 * m
    if k.min() == m:                             # no point of q is a data point: the copies side by side
        ext = np.concatenate([phi - two_pi, phi, phi + two_pi], axis=1)
        ext_weight = np.tile(weight[order], 3)
    else:
        ext = np.full((rows, width), np.inf)
        ext_weight = np.zeros((rows, width), dtype=np.int64)
        for copy, shift in enumerate((-two_pi, 0.0, two_pi)):
            ext[r, copy * kr + j] = a + shift
            ext_weight[r, copy * kr + j] = w
    cum = np.zeros((rows, width + 1), dtype=np.int64)       # cum[r, i]: the weight of ext[r, :i]
    np.cumsum(ext_weight, axis=1, out=cum[:, 1:])
    keys = np.empty((rows, width), dtype=complex)
    keys.real, keys.imag = np.arange(rows)[:, None], ext
    keys = keys.ravel()
    query = np.empty(r.size, dtype=complex)
    query.real = r
    base = r * width

    def search(angle, side):                     # per row: np.searchsorted(ext[r, :3 k_r], angle, side)
        query.imag = angle
        return np.searchsorted(keys, query, side=side) - base

    s_lo = search(a - _SURE_ANGLE, "left")
    s_hi = search(a + _SURE_ANGLE, "right")
    e_lo = search(a + (np.pi - _SURE_ANGLE), "left")
    e_hi = search(a + (np.pi + _SURE_ANGLE), "right")
    cum_at = cum.ravel()                         # cum[r, i] is cum_at[r * (width + 1) + i]
    row_base = r * (width + 1)
    counts = cum_at[row_base + e_lo] - cum_at[row_base + s_hi] + w   # surely inside, and the arc's own point
    unsure = np.flatnonzero((s_hi - s_lo > 1) | (e_hi > e_lo))
    if unsure.size:                              # in batches of about _PAIR_BATCH pairs
        size = (s_hi - s_lo + e_hi - e_lo)[unsure]
        cuts = np.flatnonzero(np.diff(np.cumsum(size) // _PAIR_BATCH)) + 1
        for arcs in np.split(unsure, cuts):
            counts[arcs] += _arc_ends_inside(q, data, weight, order, r[arcs], j[arcs], kr[arcs], s_lo[arcs],
                                             s_hi[arcs], e_lo[arcs], e_hi[arcs])
    return _depths(counts, first, k, n)


def _depths(counts: np.ndarray, first: np.ndarray, k: np.ndarray, n: int) -> np.ndarray:
    """Depth ``(n - largest arc count) / n`` per point; 1 for a point with every data point equal to it."""
    depth = np.ones(k.size)
    live = np.flatnonzero(k > 0)
    if live.size:
        depth[live] = (n - np.maximum.reduceat(counts, first[live])) / n
    return depth


def _ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, value)`` of every integer in the ranges ``[lo_i, hi_i)``."""
    size = hi - lo
    owner = np.repeat(np.arange(lo.size), size)
    value = np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size) + np.repeat(lo, size)
    return owner, value


def _arc_ends_inside(q, data, weight, order, r, j, k, s_lo, s_hi, e_lo, e_hi) -> np.ndarray:
    """For arcs ``(r, j)`` (row ``r`` of ``q``, starting at its ``j``-th angle, of ``k`` in the row): the weight
    of the points near the arc's two ends (positions ``[s_lo, s_hi)`` and ``[e_lo, e_hi)`` of the row's three
    copies of the angles) that lie in the half-open half-circle ``[theta_j, theta_j + pi)``, by the exact
    :func:`orientation`.

    Near the start, a point counts if it is strictly left of the ray to the arc's first point ``b`` or on it in
    the same direction; near the end, if strictly left.
    """
    o1, p1 = _ranges(s_lo, s_hi)
    keep = p1 != j[o1] + k[o1]                   # the arc's own first point is counted already
    o1, p1 = o1[keep], p1[keep]
    o2, p2 = _ranges(e_lo, e_hi)
    owner = np.concatenate([o1, o2])
    at_start = np.concatenate([np.ones(o1.size, bool), np.zeros(o2.size, bool)])
    rows = r[owner]
    other = order[rows, np.concatenate([p1, p2]) % k[owner]]            # data index of the point near an end
    x, b, c = q[rows], data[order[rows, j[owner]]], data[other]
    sign = orientation(x[:, 0], x[:, 1], b[:, 0], b[:, 1], c[:, 0], c[:, 1])
    # on the line through x (sign 0), c points the same way as b iff the signs of their coordinate differences
    # agree: exact (a difference of two floats is 0 only if they are equal), whereas a dot product of tiny
    # differences can underflow to 0
    same_way = np.all(np.sign(b - x) == np.sign(c - x), axis=1)
    inside = (sign > 0) | (at_start & (sign == 0) & same_way)
    return np.bincount(owner, weights=inside * weight[other], minlength=s_lo.size).astype(np.int64)


# --------------------------------------------------------------------------- spatial depth

def spatial_depth(points, data) -> np.ndarray:
    """Spatial depth :math:`SD(x) = 1 - \\big\\|\\frac1n\\sum_i S(x - X_i)\\big\\|` with :math:`S(v) = v/\\|v\\|`, :math:`S(0) = 0` (chapter 9).

    Each record's unit vector :math:`S(x_k - X_i)` is computed from that record
    and the point alone (the difference, scaled by its largest coordinate, then
    by its norm), and the unit vectors are summed: replacing one record moves
    the sum by at most 2, so the depth by at most :math:`2/n`, up to the
    rounding of the summation (about :math:`10^{-15}`). Cost :math:`O(qnd)`,
    in blocks of bounded memory.

    Parameters
    ----------
    points : array-like of shape (q, d)
    data : array-like of shape (n, d), ``n >= 2``

    Returns
    -------
    ndarray of shape (q,)
        Depths in [0, 1]; the maximiser is the spatial (geometric) median.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.depth import spatial_depth
    >>> data = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 1.0]])
    >>> np.round(spatial_depth(np.array([[0.0, 0.0], [10.0, 0.0]]), data), 4)
    array([1.    , 0.0025])
    """
    points, data = _check_points_data(points, data)
    return spatial_from_sums(spatial_sums(data, points), data.shape[0])


# --------------------------------------------------------------------------- integrated dual depth


def _check_smoothing(smoothing) -> float:
    return check_scalar(smoothing, "smoothing", low=0.0,
                        hint="it is the logistic slope s (the authors use s = 10); pass None for the exact CDF")


def integrated_dual_depth(points, data, directions=None, n_directions: int = 500,
                          smoothing: float | None = None, rng: RandomLike = None) -> np.ndarray:
    """Integrated dual depth, Monte Carlo over public directions (chapter 9).

    .. math:: IDD_m(x) = \\frac1m \\sum_{j=1}^m F_j(u_j^\\top x)\\,\\big(1 - F_j(u_j^\\top x)\\big),
              \\qquad F_j(t) = \\tfrac1n \\#\\{i : u_j^\\top X_i \\le t\\},

    the average over directions :math:`u_j` of the univariate depth
    :math:`F(1-F)` (maximum 1/4, at the projected median) of the projected
    sample (Cuevas & Fraiman, 2009). Exact version: project once, sort each
    column, ``searchsorted``: :math:`O(nm \\log n)` set-up and
    :math:`O(m(d + \\log n))` per point.

    With ``smoothing=s`` the indicator is replaced by a logistic function,
    :math:`F_{s,j}(t) = \\frac1n\\sum_i \\sigma(s(t - u_j^\\top X_i))` (the
    smoothed IDD of the authors' experiments, :math:`s = 10`), at
    :math:`O(nm)` per point. Both versions have sensitivity :math:`\\le 1/n`.

    Parameters
    ----------
    points : array-like of shape (q, d)
    data : array-like of shape (n, d), ``n >= 2``
    directions : array-like of shape (m, d), default=None
        Public directions (rows are normalised). Pass the same directions to
        compare depths across calls; by default ``n_directions`` are drawn from ``rng``.
    n_directions : int, default=500
        Number of random directions when ``directions`` is not given.
    smoothing : float or None, default=None
        Logistic slope :math:`s`; ``None`` for the exact empirical CDF.
    rng : None, int or numpy.random.Generator, default=None
        Source of the random directions when ``directions`` is not given
        (checked in every mode).
        Public randomness, so a seed is fine (:term:`Seed`).

    Returns
    -------
    ndarray of shape (q,)
        Depths in [0, 1/4].

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.depth import integrated_dual_depth
    >>> data = np.random.default_rng(0).normal(size=(500, 2))
    >>> d = integrated_dual_depth(np.array([[0.0, 0.0], [4.0, 4.0]]), data, rng=1)
    >>> bool(d[0] > d[1])
    True
    """
    points, data = _check_points_data(points, data)
    u = resolve_directions(directions, n_directions, data.shape[1], rng)
    if smoothing is not None:
        cdfs = smoothed_cdfs(data, u, _check_smoothing(smoothing))
        t = project(points, u)
        out = np.empty(points.shape[0])
        for k in range(points.shape[0]):
            f, _ = cdfs(t[k])
            out[k] = np.mean(f * (1.0 - f))
        return out
    return idd_exact(points, data, u)


def integrated_dual_depth_gradient(points, data, directions=None, n_directions: int = 500,
                                   smoothing: float = 10.0, rng: RandomLike = None) -> np.ndarray:
    """Gradient of the smoothed integrated dual depth (chapter 9).

    .. math:: \\nabla IDD_s(x) = \\frac1m \\sum_j \\big(1 - 2F_{s,j}(t_j)\\big)\\,
              \\frac sn \\sum_i \\sigma_{ij}(1 - \\sigma_{ij})\\; u_j,
              \\qquad t_j = u_j^\\top x,\\ \\sigma_{ij} = \\sigma\\big(s(t_j - u_j^\\top X_i)\\big).

    Parameters
    ----------
    points, data
        As in :func:`integrated_dual_depth`.
    directions : array-like of shape (m, d), default=None
        As in :func:`integrated_dual_depth`.
    n_directions : int, default=500
        As in :func:`integrated_dual_depth`.
    rng : None, int or numpy.random.Generator, default=None
        As in :func:`integrated_dual_depth` (public randomness, :term:`Seed`).
    smoothing : float, default=10.0
        Logistic slope :math:`s > 0`.

    Returns
    -------
    ndarray of shape (q, d)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.depth import integrated_dual_depth_gradient
    >>> data = np.random.default_rng(0).normal(size=(500, 2))
    >>> g = integrated_dual_depth_gradient(np.array([[2.0, 0.0]]), data, rng=1)
    >>> g.shape, bool(g[0, 0] < 0)
    ((1, 2), True)
    """
    points, data = _check_points_data(points, data)
    u = resolve_directions(directions, n_directions, data.shape[1], rng)
    cdfs = smoothed_cdfs(data, u, _check_smoothing(smoothing))
    t = project(points, u)
    out = np.empty_like(points)
    for k in range(points.shape[0]):
        out[k] = smoothed_gradient(cdfs, u, t[k])
    return out


