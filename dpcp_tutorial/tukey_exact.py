"""The exact private Tukey median in 2D (chapter 15).

The continuous exponential mechanism with halfspace depth and a uniform prior
on a public box :math:`B` releases :math:`\\tilde\\theta` with density

.. math:: q_X(\\theta) \\propto \\exp\\big(\\beta\\, HD(\\theta; X)\\big)\\,\\mathbf 1_B(\\theta),
          \\qquad \\beta = \\frac{\\varepsilon n}{2},
          \\qquad\\text{i.e.}\\qquad q_X(\\theta) \\propto e^{\\varepsilon\\, c(\\theta)/2},

where :math:`c(\\theta) = n\\,HD(\\theta; X) \\in \\{0, 1, \\dots, n\\}` is the
halfspace *count* (the smallest number of data points in a closed halfplane
whose boundary passes through :math:`\\theta`). Its upper level sets
:math:`R_k = \\{\\theta : c(\\theta) \\ge k\\}` are nested convex polygons (the
Tukey depth regions), so the law is a mixture over depth levels,

.. math:: P(c(\\tilde\\theta) = k) \\propto e^{\\varepsilon k/2}\\, a_k,
          \\qquad a_k = \\operatorname{area}\\big((R_k \\setminus R_{k+1}) \\cap B\\big),

followed by a uniform draw on the annulus :math:`(R_k \\setminus R_{k+1}) \\cap B`.
Level 0 is the box minus the convex hull of the data.

Privacy. The count :math:`c` has sensitivity 1 under both neighbour
relations, and under add/remove it moves **in one direction** at every
:math:`\\theta` (adding a point raises every count by 0 or 1). Hence the
release is

* :math:`\\varepsilon`-DP for replace-one neighbours (the usual exponential
  mechanism bound with :math:`GS_n(HD) = 1/n` and :math:`\\beta = \\varepsilon n/2`), and
* :math:`\\varepsilon/2`-DP for add/remove neighbours (monotone utility).

:math:`n` need not be public: the law depends on the data only through
:math:`c`, and :math:`\\beta/n = \\varepsilon/2` does not involve :math:`n`.

Exactness. The regions are computed from the :math:`O(n^2)` critical
directions normal to lines through two data points (:func:`tukey_depth_regions`)
with exact combinatorics: which points lie on, left or right of each line is
decided by the exact orientation predicate
(:func:`~dpcp_tutorial.depth.orientation`), so ties, collinear and nearly
collinear points (1e-15 off a line) get their true counts, with no collinearity
tolerance. No region or annulus of positive computed area is dropped: a thin
region is recognised by clipping the box with its halfplanes, and every
annulus keeps the area computed for it, however small. What remains is the
rounding of vertex coordinates (about 1e-16 of the box size), so the law is
that of the exponential mechanism on the computed polygons, which differ from
the exact regions only within rounding of their boundaries; a region thinner
than that (area below about 1e-16 of the box) is not resolved. The sampler
computes only the deepest levels whose mass matters and keeps an exact
fall-back for the rest, so it adds no approximation (no :math:`\\delta`): see
:func:`private_tukey_median_2d`. The exact privacy audit of the tests compares
neighbouring laws cell by cell, near-degenerate configurations included.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull
from scipy.special import logsumexp

from .depth import orientation
from ._validation import (
    RandomLike,
    _real_array,
    check_2d,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_scalar,
)

__all__ = [
    "TukeyDepthRegions",
    "tukey_depth_regions",
    "private_tukey_median_2d",
    "tukey_median_2d",
    "polygon_area",
    "exact_cell_probabilities",
    "total_variation_on_cells",
]

_SURE_ANGLE = 1e-13     # computed angles farther apart than this are certainly distinct (errors are ~1e-15)
_RADIUS_TOL = 1e-12     # deepest non-empty region (max_depth, the non-private median only): Chebyshev radius
_SURE_RADIUS = 1e-6     # a Chebyshev radius (LP, tolerance ~1e-7) beyond +-this decides area / no area
_INSIDE_TOL = 1e-14     # membership tolerance (relative) of level_of and density for points on a boundary
DEFAULT_TAIL_MASS = 1e-12
_BOX_LIMIT = 1e50       # public box: corners at most this far from 0, sides at least its inverse
_DATA_LIMIT = 1e200     # data domain: |coordinates| <= 1e200 (in box units at most ~1e250: no overflow)


# --------------------------------------------------------------------------- validation of public inputs

def _check_box(box) -> np.ndarray:
    try:
        b = _real_array(box, "box")
    except TypeError as exc:
        raise TypeError(f"box must be ((x_min, y_min), (x_max, y_max)) of real numbers ({exc})") from None
    if b.shape != (2, 2):
        raise ValueError(f"box must be ((x_min, y_min), (x_max, y_max)), got an array of shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError("box contains NaN or infinite values; the prior must be a bounded public box")
    if not (b[1, 0] > b[0, 0] and b[1, 1] > b[0, 1]):
        raise ValueError(f"box={b.tolist()} must have x_max > x_min and y_max > y_min")
    if not (np.abs(b).max() <= _BOX_LIMIT and np.min(b[1] - b[0]) >= 1.0 / _BOX_LIMIT):
        raise ValueError(f"box={b.tolist()} must lie within {_BOX_LIMIT:g} of the origin and have sides of at "
                         f"least {1.0 / _BOX_LIMIT:g}; rescale the data and the box together (depth is affine "
                         "invariant)")
    return b


def _check_data_2d(data) -> np.ndarray:
    # the domain: coordinates up to 1e200 in magnitude, far beyond any public box (<= 1e50): points outside
    # the box are fine, and all the geometry stays inside the floating-point range
    x = check_2d(data, "data", min_rows=1, max_magnitude=_DATA_LIMIT)
    if x.shape[1] != 2:
        raise ValueError(f"data must have 2 columns (points in the plane), got {x.shape[1]}")
    return x


# --------------------------------------------------------------------------- geometry helpers

def _check_vertices(vertices) -> np.ndarray:
    """Polygon vertices as a finite float array of shape (m, 2) (m may be 0)."""
    v = _real_array(vertices, "vertices")
    if v.shape == (0,):
        return v.reshape(0, 2)
    if v.ndim != 2 or v.shape[1] != 2:
        raise ValueError(f"vertices must be an array of shape (m, 2), one (x, y) row per vertex, got shape "
                         f"{v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("vertices contain NaN or infinite values; a polygon needs finite vertices")
    if v.size and not np.abs(v).max() <= _BOX_LIMIT * 2:
        raise ValueError(f"vertices beyond {_BOX_LIMIT * 2:g} in magnitude: the area would overflow; rescale them")
    return v


def polygon_area(vertices) -> float:
    """Area of a simple polygon from its vertices in order (shoelace formula, chapter 15).

    .. math:: A = \\tfrac12 \\Big|\\sum_i (x_i y_{i+1} - x_{i+1} y_i)\\Big|

    Parameters
    ----------
    vertices : array-like of shape (m, 2)
        Finite real vertices in order (either orientation); fewer than three
        vertices give area 0.

    Returns
    -------
    float
    """
    v = _check_vertices(vertices)
    if v.shape[0] < 3:
        return 0.0
    x, y = v[:, 0], v[:, 1]
    return float(0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y)))


def _inside(points: np.ndarray, poly: np.ndarray, tol: float) -> np.ndarray:
    """Points in the closed convex polygon ``poly`` (counter-clockwise), with tolerance ``tol``."""
    if poly.shape[0] < 3:
        return np.zeros(points.shape[0], dtype=bool)
    a = poly
    e = np.roll(poly, -1, axis=0) - poly
    norm = np.hypot(e[:, 0], e[:, 1])
    # signed distance to the left of every edge, times the edge length (an edge of length 0 constrains nothing)
    cross = (e[None, :, 0] * (points[:, None, 1] - a[None, :, 1])
             - e[None, :, 1] * (points[:, None, 0] - a[None, :, 0]))
    return np.all(cross >= -tol * norm[None, :], axis=1)


def _clip(poly: np.ndarray, nx: float, ny: float, c: float) -> np.ndarray:
    """Clip a convex polygon to the halfplane ``nx*x + ny*y <= c`` (Sutherland-Hodgman)."""
    if poly.shape[0] == 0:
        return poly
    s = poly @ np.array([nx, ny]) - c
    keep = s <= 0
    if keep.all():
        return poly
    if not keep.any():
        return poly[:0]
    out = []
    m = poly.shape[0]
    for i in range(m):
        j = (i + 1) % m
        if keep[i]:
            out.append(poly[i])
        if keep[i] != keep[j]:
            t = s[i] / (s[i] - s[j])
            out.append(poly[i] + t * (poly[j] - poly[i]))
    return np.array(out).reshape(-1, 2)


# --------------------------------------------------------------------------- the constraints of every level

def _pair_constraints(x: np.ndarray, unit: np.ndarray, half: np.ndarray):
    """Halfplanes ``u . theta <= c`` (box coordinates) valid for the levels ``lo < k <= hi``, one per line.

    For a line through two distinct data points and its unit normal ``u``, ``lo``
    is the number of points strictly on the ``u`` side and ``hi`` adds the points
    on the line (ties included). At that direction the k-th largest projection
    equals ``u . x_i`` exactly for ``lo < k <= hi``.

    The counts are exact (no collinearity tolerance): the angles of the points
    seen from ``x_i`` (original coordinates: every difference is correctly
    rounded, so every angle is within 1e-15 rad of the truth) classify all points
    except those within ``_SURE_ANGLE`` of the line, which are classified by the
    exact :func:`~dpcp_tutorial.depth.orientation`. A line through three or more
    points is generated once, from its two lowest-indexed distinct points (so
    coincident regions get bit-identical polygons). ``x`` are the data, ``unit``
    the same points in box coordinates and ``half`` the box half-widths (the
    direction of a pair that the change of coordinates rounds onto one point is
    taken from the original difference).
    """
    n = x.shape[0]
    nxs, nys, cs, los, his = [], [], [], [], []
    two_pi = 2.0 * np.pi
    index = np.arange(n)
    for i in range(n - 1):
        w = x - x[i]                                    # all points, original coordinates
        same = (x[:, 0] == x[i, 0]) & (x[:, 1] == x[i, 1])
        n_same = int(same.sum())                        # x_i itself and its copies: on every line
        if same[:i].any():                              # a copy of an earlier point: its lines are generated there
            continue
        partners = index[i + 1:][~same[i + 1:]]
        if partners.size == 0:
            continue
        with np.errstate(invalid="ignore"):
            angle = np.arctan2(w[:, 1], w[:, 0])
        ang = np.sort(angle[~same])
        ext = np.concatenate([ang - two_pi, ang, ang + two_pi])
        phi = angle[partners]

        def count(lo_, hi_):
            return np.searchsorted(ext, hi_, side="right") - np.searchsorted(ext, lo_, side="left")
        on_fwd = count(phi - _SURE_ANGLE, phi + _SURE_ANGLE)
        on_bwd = count(phi + np.pi - _SURE_ANGLE, phi + np.pi + _SURE_ANGLE)
        left = count(phi + _SURE_ANGLE, phi + np.pi - _SURE_ANGLE)   # strictly left, no point near the line
        on = 1 + n_same + np.zeros_like(left)
        canonical = np.ones(partners.size, dtype=bool)
        unsure = (on_fwd > 1) | (on_bwd > 0) | ~np.isfinite(phi)
        if unsure.any():
            j = partners[unsure]
            sign = orientation(x[i, 0], x[i, 1], x[j, 0][:, None], x[j, 1][:, None], x[None, :, 0], x[None, :, 1])
            left[unsure] = (sign > 0).sum(axis=1)
            on[unsure] = (sign == 0).sum(axis=1)
            # canonical pair of the line: its lowest index (i here, or the line was generated earlier) and the
            # lowest index of a point on it distinct from x_i
            first_on = np.argmax(sign == 0, axis=1)          # lowest index on the line
            distinct = (sign == 0) & ~same[None, :]
            second = np.argmax(distinct, axis=1)
            canonical[unsure] = (first_on == i) & (second == j)
        right = n - left - on
        keep = canonical
        j = partners[keep]
        dv = unit[j] - unit[i]                          # direction in box coordinates
        lost = (dv[:, 0] == 0.0) & (dv[:, 1] == 0.0)    # distinct points that the change of coordinates merged
        dv[lost] = (x[j[lost]] - x[i]) / half           # their direction from the exact data
        norm = np.hypot(dv[:, 0], dv[:, 1])
        ux, uy = -dv[:, 1] / norm, dv[:, 0] / norm      # left normal
        c = ux * unit[i, 0] + uy * unit[i, 1]
        left, right, on = left[keep], right[keep], on[keep]
        nxs += [ux, -ux]
        nys += [uy, -uy]
        cs += [c, -c]
        los += [left, right]
        his += [left + on, right + on]
    if not nxs:
        empty = np.empty(0)
        return empty, empty, empty, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return (np.concatenate(nxs), np.concatenate(nys), np.concatenate(cs),
            np.concatenate(los).astype(np.int64), np.concatenate(his).astype(np.int64))


class _Levels:
    """The halfplanes of every level ``R_k`` (in box coordinates scaled to [-1, 1]^2)."""

    def __init__(self, data: np.ndarray, x: np.ndarray, half: np.ndarray):
        self.n = x.shape[0]
        nx, ny, c, lo, hi = _pair_constraints(data, x, half)
        # a halfplane containing the whole box [-1, 1]^2 is redundant at every level
        useful = c < np.abs(nx) + np.abs(ny)
        self.nx, self.ny, self.c, self.lo, self.hi = nx[useful], ny[useful], c[useful], lo[useful], hi[useful]
        # four fixed directions (+-x, +-y): consecutive critical directions are then < pi apart
        self.sorted_x = np.sort(x[:, 0])[::-1]
        self.sorted_y = np.sort(x[:, 1])[::-1]
        self._cache: dict[int, tuple] = {}

    def halfplanes(self, k: int):
        """Normals (m, 2) and offsets (m,) whose intersection is ``R_k`` within the box."""
        mask = (self.lo < k) & (k <= self.hi)
        qx, qy = self.sorted_x[k - 1], self.sorted_y[k - 1]          # k-th largest projections on +x, +y
        mx, my = -self.sorted_x[self.n - k], -self.sorted_y[self.n - k]   # ... on -x, -y
        fixed_n = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
        fixed_c = np.array([min(qx, 1.0), min(qy, 1.0), min(mx, 1.0), min(my, 1.0)])   # with the box
        normals = np.concatenate([fixed_n, np.stack([self.nx[mask], self.ny[mask]], axis=1)])
        return normals, np.concatenate([fixed_c, self.c[mask]])

    def chebyshev(self, k: int) -> tuple[float, np.ndarray]:
        """Signed Chebyshev radius and centre of ``R_k``: max r s.t. u.p + r <= c (negative: empty)."""
        if k in self._cache:
            return self._cache[k]
        normals, c = self.halfplanes(k)
        res = linprog(np.array([0.0, 0.0, -1.0]), A_ub=np.column_stack([normals, np.ones(len(c))]), b_ub=c,
                      bounds=[(-1.0, 1.0), (-1.0, 1.0), (-4.0, 2.0)], method="highs")
        if res.status == 0:
            out = (float(res.x[2]), np.asarray(res.x[:2]))
        else:   # cannot happen for this bounded, feasible LP; treat as empty rather than raise on data
            out = (-np.inf, np.zeros(2))
        self._cache[k] = out
        return out

    def has_area(self, k: int) -> bool:
        """Whether ``R_k`` (within the box) has positive area: the LP decides clear cases, clipping the rest."""
        if k == 0:
            return True
        r = self.chebyshev(k)[0]
        if r > _SURE_RADIUS:
            return True
        if r < -_SURE_RADIUS:
            return False
        # a thin or degenerate region: clip the box by every halfplane (robust) and look at the area
        return polygon_area(_clip_all(*self.halfplanes(k))) > 0.0

    def polygon(self, k: int, interior: np.ndarray) -> np.ndarray:
        """Vertices (counter-clockwise) of ``R_k``; ``interior`` must lie strictly inside it."""
        normals, c = self.halfplanes(k)
        slack = c - normals @ interior
        if not np.all(slack > 0):                          # rounding put `interior` on a boundary
            return _clip_all(normals, c)
        pts = normals / slack[:, None]                     # dual points; the hull gives the binding halfplanes
        try:
            hull = ConvexHull(pts)
        except Exception:  # noqa: BLE001 - qhull precision trouble: the slow exact route, never an error
            return _clip_all(normals, c)
        idx = hull.vertices                                # counter-clockwise
        a, b = idx, np.roll(idx, -1)
        n1, n2, c1, c2 = normals[a], normals[b], slack[a], slack[b]
        det = n1[:, 0] * n2[:, 1] - n1[:, 1] * n2[:, 0]
        vx = (c1 * n2[:, 1] - c2 * n1[:, 1]) / det
        vy = (n1[:, 0] * c2 - n2[:, 0] * c1) / det
        return np.stack([vx, vy], axis=1) + interior


def _clip_all(normals: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Intersection of the box [-1, 1]^2 with the halfplanes, by successive clipping (slow, robust fallback)."""
    poly = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    for (nx, ny), ci in zip(normals, c):
        poly = _clip(poly, nx, ny, ci)
        if poly.shape[0] < 3:
            return np.empty((0, 2))
    return poly


# --------------------------------------------------------------------------- the regions and the law

@dataclass
class TukeyDepthRegions:
    """Nested Tukey depth regions clipped to a public box, and the exact law of the private median (chapter 15).

    Attributes
    ----------
    box : ndarray of shape (2, 2)
        ``((x_min, y_min), (x_max, y_max))``.
    n : int
        Number of data points.
    levels : ndarray of int
        The computed levels ``k`` in increasing order; level 0 (the whole box)
        is always the first when ``complete``.
    polygons : list of ndarray
        Vertices (counter-clockwise, data coordinates) of :math:`R_k \\cap B`
        for every level; an empty ``(0, 2)`` array when the region has no area
        (empty, a point or a segment).
    areas : ndarray
        :math:`\\operatorname{area}(R_k \\cap B)`.
    annulus_areas : ndarray
        :math:`a_k = \\operatorname{area}(R_k \\cap B) - \\operatorname{area}(R_{k+1} \\cap B)`.
    max_depth : int
        The deepest level :math:`k^*` with :math:`R_{k^*} \\cap B` non-empty
        (0 if the box misses the hull); :math:`HD \\le k^*/n` on the box.
    deepest_point : ndarray of shape (2,)
        A point of :math:`R_{k^*} \\cap B` (its centroid if it has area, else its
        Chebyshev centre): the non-private Tukey median restricted to the box.
    complete : bool
        Whether every level from 0 to the deepest one with area was computed.
    """

    box: np.ndarray
    n: int
    levels: np.ndarray
    polygons: list
    areas: np.ndarray
    annulus_areas: np.ndarray
    max_depth: int
    deepest_point: np.ndarray
    complete: bool
    _scale: tuple = field(default=None, repr=False)

    def log_level_weights(self, epsilon: float) -> np.ndarray:
        """Unnormalised log weights :math:`\\varepsilon k/2 + \\log a_k` of the computed levels (``-inf`` if :math:`a_k = 0`)."""
        epsilon = check_epsilon(epsilon)
        with np.errstate(divide="ignore"):
            return 0.5 * epsilon * self.levels + np.log(self.annulus_areas)

    def level_probabilities(self, epsilon: float) -> np.ndarray:
        """Exact :math:`P(n\\,HD(\\tilde\\theta) = k)`, :math:`k` in ``levels`` (needs ``complete`` regions)."""
        if not self.complete:
            raise ValueError("these regions were truncated (tail_mass > 0); call tukey_depth_regions with "
                             "tail_mass=0 for the exact law over all levels")
        lw = self.log_level_weights(epsilon)
        return np.exp(lw - logsumexp(lw))

    def level_of(self, points) -> np.ndarray:
        """Depth count :math:`c(\\theta) = n\\,HD(\\theta)` of points in the box, read off the polygons.

        Only levels in ``levels`` are resolved; a point deeper than the last
        region with area gets that region's level.
        """
        p = check_2d(points, "points")
        if p.shape[1] != 2:
            raise ValueError("points must have 2 columns")
        return self._levels_within(p, _INSIDE_TOL)

    def _levels_within(self, p: np.ndarray, relative_tol: float) -> np.ndarray:
        """Levels read off the polygons, a point within ``relative_tol`` (of the box scale) of a region counting
        as inside it (a negative value shrinks the regions instead)."""
        out = np.full(p.shape[0], self.levels[0] if len(self.levels) else 0, dtype=np.int64)
        tol = relative_tol * self._scale[1]
        for k, poly in zip(self.levels, self.polygons):
            if poly.shape[0] >= 3:
                out[_inside(p, poly, tol)] = k
        return out

    def density(self, points, epsilon: float) -> np.ndarray:
        """Exact density of the private median at ``points`` (0 outside the box; needs ``complete``)."""
        prob = self.level_probabilities(epsilon)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_area = np.where(self.annulus_areas > 0, prob / self.annulus_areas, 0.0)
        p = check_2d(points, "points")
        lvl = self.level_of(p)
        pos = np.searchsorted(self.levels, lvl)
        in_box = np.all((p >= self.box[0]) & (p <= self.box[1]), axis=1)
        return np.where(in_box, per_area[pos], 0.0)


def _to_unit(x: np.ndarray, box: np.ndarray):
    centre = box.mean(axis=0)
    half = (box[1] - box[0]) / 2.0
    return (x - centre) / half, centre, half


def _compute(data: np.ndarray, box: np.ndarray, epsilon: float | None, tail_mass: float,
             levels_obj: _Levels | None = None) -> tuple[TukeyDepthRegions, _Levels, dict]:
    """All levels (``epsilon is None`` or ``tail_mass == 0``) or the deepest ones until the tail bound holds."""
    u, centre, half = _to_unit(data, box)
    lv = _Levels(data, u, half) if levels_obj is None else levels_obj
    n = lv.n
    jac = float(half[0] * half[1])                     # area factor from unit to data coordinates
    area_box = 4.0                                     # [-1, 1]^2
    # deepest level with area and deepest non-empty level: the predicates are monotone in k (nested regions)
    def last_true(pred) -> int:
        lo, hi = 0, n                                  # pred(0) is true by convention
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if pred(mid):
                lo = mid
            else:
                hi = mid - 1
        return lo
    k_area = last_true(lv.has_area)
    k_star = last_true(lambda k: lv.chebyshev(k)[0] >= -_RADIUS_TOL)
    interior = lv.chebyshev(k_area)[1] if k_area > 0 else np.zeros(2)
    ks, polys, areas = [], [], []
    truncate = epsilon is not None and tail_mass > 0
    k = k_area
    while k >= 1:
        poly = lv.polygon(k, interior)
        a = polygon_area(poly)
        ks.append(k)
        polys.append(poly)
        areas.append(a)
        # head mass so far: levels k..k_area; the tail (levels < k) lives on box \ R_k with count <= k - 1
        if truncate:
            a_arr = np.array(areas)
            # annulus areas of the computed levels, deepest last in `areas`
            next_area = np.append([0.0], a_arr[:-1])   # area of R_{k+1} for each computed k
            ann = _annuli(a_arr, next_area)
            with np.errstate(divide="ignore"):
                log_head = logsumexp(0.5 * epsilon * np.array(ks) + np.log(ann))
            rest = area_box - a
            log_tail_bound = 0.5 * epsilon * (k - 1) + np.log(rest) if rest > 0 else -np.inf
            if log_tail_bound - np.logaddexp(log_head, log_tail_bound) <= np.log(tail_mass):
                break
        k -= 1
    complete = (k <= 1) or not truncate
    if complete and (not ks or ks[-1] != 0):
        ks.append(0)
        polys.append(np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]))
        areas.append(area_box)
    order = np.argsort(ks)
    ks_arr = np.array(ks, dtype=np.int64)[order]
    areas_arr = np.array(areas)[order]
    polys = [polys[i] for i in order]
    nxt = np.append(areas_arr[1:], 0.0)
    ann = _annuli(areas_arr, nxt)
    if k_star > k_area:
        r, c = lv.chebyshev(k_star)
        deep = c
    elif k_area > 0:
        deep = _centroid(polys[-1])
    else:
        deep = np.zeros(2)
    regions = TukeyDepthRegions(
        box=box.copy(), n=n, levels=ks_arr,
        polygons=[p * half + centre if p.shape[0] >= 3 else np.empty((0, 2)) for p in polys],
        areas=areas_arr * jac, annulus_areas=ann * jac, max_depth=int(k_star),
        deepest_point=deep * half + centre, complete=bool(complete),
        _scale=(centre, float(np.hypot(*half))))
    info = {"k_area": k_area, "interior": interior, "unit_polys": polys, "unit_areas": areas_arr,
            "centre": centre, "half": half}
    return regions, lv, info


def _annuli(outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Annulus areas ``outer - inner`` (never negative). No tolerance: a thin annulus keeps its area."""
    return np.maximum(outer - inner, 0.0)


def _centroid(poly: np.ndarray) -> np.ndarray:
    x, y = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x, -1), np.roll(y, -1)
    cr = x * y1 - x1 * y
    a = cr.sum() / 2.0
    if a == 0:
        return poly.mean(axis=0)
    return np.array([((x + x1) * cr).sum(), ((y + y1) * cr).sum()]) / (6.0 * a)


def tukey_depth_regions(data, box, epsilon: float | None = None, *, tail_mass: float = 0.0) -> TukeyDepthRegions:
    """Tukey depth regions :math:`R_k \\cap B` of 2D data and the exact law of the private Tukey median (chapter 15).

    :math:`R_k = \\{\\theta : n\\,HD(\\theta; X) \\ge k\\} = \\bigcap_{\\|u\\|=1}\\{u^\\top\\theta \\le q_k(u)\\}`,
    where :math:`q_k(u)` is the :math:`k`-th largest of the projections
    :math:`u^\\top X_i`. :math:`q_k` changes its index only at directions normal to
    a line through two data points, so :math:`R_k` is the intersection of the
    halfplanes at those critical directions (where the line carries rank
    :math:`k`), at the four axis directions, and the box. Cost
    :math:`O(n^2 \\log n)` for the constraints plus :math:`O(m_k \\log m_k)` per
    level (a convex hull of :math:`m_k` dual points).

    Parameters
    ----------
    data : array-like of shape (n, 2)
        The private sample (finite points of magnitude at most 1e200; points
        outside the box are fine).
    box : ((x_min, y_min), (x_max, y_max))
        The public box carrying the uniform prior.
    epsilon : float, optional
        Needed only with ``tail_mass > 0``: then only the deepest levels are
        computed, until the levels below carry at most ``tail_mass`` of the
        mass of the private median's law (a bound, see
        :func:`private_tukey_median_2d`).
    tail_mass : float
        0 (default) computes every level.

    Returns
    -------
    TukeyDepthRegions
        Use ``.level_probabilities(epsilon)`` for the exact law over levels,
        :math:`P(k) \\propto e^{\\varepsilon k/2} a_k`.

    Notes
    -----
    Floating point: the geometry runs in coordinates where the box is
    :math:`[-1, 1]^2` (depth is affine invariant); the counts of every line
    are exact (orientation predicate on the original data, see the module
    docstring). A level has area when the Chebyshev radius of its region (a
    linear program, accurate to about 1e-7) is clearly positive, or, for thin
    regions, when the box clipped by the level's halfplanes has positive area;
    annulus areas are differences of polygon areas, never rounded to 0, so a
    sliver between two regions keeps its weight. ``max_depth`` and
    ``deepest_point`` (the non-private median only) read the Chebyshev radius
    with a 1e-12 tolerance. Public inputs: the box corners within 1e50 of the
    origin, sides of at least 1e-50; the data domain is coordinates of
    magnitude at most 1e200 (far outside any such box: points outside the box
    are fine), where no intermediate quantity overflows.
    """
    x = _check_data_2d(data)
    b = _check_box(box)
    tail_mass = check_scalar(tail_mass, "tail_mass", low=0.0, high=1.0, low_inclusive=True)
    if tail_mass > 0:
        if epsilon is None:
            raise ValueError("tail_mass > 0 needs epsilon: the truncation depends on the law's weights")
        epsilon = check_epsilon(epsilon)
    elif epsilon is not None:
        epsilon = check_epsilon(epsilon)
    regions, _, _ = _compute(x, b, epsilon, tail_mass)
    return regions


def tukey_median_2d(data, box) -> np.ndarray:
    """Non-private Tukey median restricted to a box: a point of the deepest region (chapter 15).

    The centroid of :math:`R_{k^*} \\cap B` when it has area, otherwise its
    Chebyshev centre (the region is then a point or a segment).
    """
    return tukey_depth_regions(data, box).deepest_point


# --------------------------------------------------------------------------- sampling

def _uniform_in_convex(poly: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` uniform points in a convex polygon (fan triangulation, then a uniform point per triangle)."""
    a = poly[0]
    b, c = poly[1:-1], poly[2:]
    tri_area = 0.5 * np.abs((b[:, 0] - a[0]) * (c[:, 1] - a[1]) - (b[:, 1] - a[1]) * (c[:, 0] - a[0]))
    cdf = np.cumsum(tri_area)
    t = np.minimum(np.searchsorted(cdf, rng.random(m) * cdf[-1], side="right"), len(cdf) - 1)
    r1, r2 = rng.random(m), rng.random(m)
    flip = r1 + r2 > 1.0
    r1, r2 = np.where(flip, 1.0 - r1, r1), np.where(flip, 1.0 - r2, r2)
    return a + r1[:, None] * (b[t] - a) + r2[:, None] * (c[t] - a)


def _annulus_pieces(outer: np.ndarray, inner: np.ndarray) -> list:
    """Convex pieces partitioning ``outer \\ inner`` (both convex, counter-clockwise).

    Piece ``j`` is the part of ``outer`` outside edge ``j`` of ``inner`` and inside edges ``1..j-1``.
    """
    if inner.shape[0] < 3:
        return [outer]
    pieces, cur = [], outer
    for a, b in zip(inner, np.roll(inner, -1, axis=0)):
        nx, ny = b[1] - a[1], a[0] - b[0]              # outward normal of a counter-clockwise edge
        c = nx * a[0] + ny * a[1]
        piece = _clip(cur, -nx, -ny, -c)
        if piece.shape[0] >= 3:
            pieces.append(piece)
        cur = _clip(cur, nx, ny, c)
        if cur.shape[0] < 3:
            break
    return pieces


def _sample_annulus(outer: np.ndarray, inner: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` uniform points of ``outer \\ inner``: a convex piece with probability proportional to its area,
    then a uniform point of it (no rejection, so no data-dependent loop)."""
    pieces = _annulus_pieces(outer, inner)
    area = np.array([polygon_area(p) for p in pieces])
    if not area.sum() > 0:       # only reachable through rounding; never raise on private data
        pieces, area = [outer], np.array([1.0])
    which = _draw(area, rng, m)
    out = np.empty((m, 2))
    for j in np.unique(which):
        sel = np.flatnonzero(which == j)
        out[sel] = _uniform_in_convex(pieces[j], sel.size, rng)
    return out


def private_tukey_median_2d(data, epsilon: float, box, size: int | None = None, *,
                            tail_mass: float = DEFAULT_TAIL_MASS, rng: RandomLike = None) -> np.ndarray:
    """Exact :math:`\\varepsilon`-DP Tukey median in 2D: the continuous exponential mechanism on a box (chapter 15).

    Samples :math:`q_X(\\theta) \\propto \\exp(\\tfrac{\\varepsilon}{2}\\, n\\,HD(\\theta; X))`
    on the public box :math:`B` (uniform prior), i.e. :math:`\\beta = \\varepsilon n/2`:

    1. a depth level :math:`k` with probability :math:`\\propto e^{\\varepsilon k/2} a_k`;
    2. a uniform point of the annulus :math:`(R_k \\setminus R_{k+1}) \\cap B`: the
       annulus is split into convex pieces (piece :math:`j` is the part of
       :math:`R_k \\cap B` outside edge :math:`j` of :math:`R_{k+1}` and inside its
       edges :math:`1, \\dots, j-1`), a piece is drawn with probability
       proportional to its area and a uniform point of it by a fan
       triangulation. No rejection loop: the work per draw is bounded.

    Tail rule (exact, no :math:`\\delta`). Only the deepest levels
    :math:`k \\ge L` are computed, with :math:`L` the largest level such that
    :math:`U = e^{\\varepsilon (L-1)/2}\\,\\operatorname{area}(B \\setminus R_L)`, an
    upper bound on the unnormalised mass :math:`T` of the levels below
    :math:`L`, satisfies :math:`U/(H + U) \\le` ``tail_mass`` (:math:`H`: mass of
    the computed levels). A draw picks level :math:`k \\ge L` with probability
    :math:`w_k/(H+U)` and a "tail token" with probability
    :math:`U/(H+U) \\le` ``tail_mass``; only then are all levels computed
    (exactly :math:`T`), and the token turns into a computed level with
    probability :math:`H(U - T)/((H + T)U)` (renormalised) and into a tail
    level otherwise. The output law is exactly :math:`q_X`; the cut-off only
    bounds how often the slow path runs (probability at most ``tail_mass``,
    whatever the data).

    Privacy: :math:`\\varepsilon`-DP for replace-one neighbours; :math:`\\varepsilon/2`-DP
    for add/remove neighbours (the halfspace count moves by 0 or +1 everywhere
    when a point is added); :math:`n` need not be public. The function raises only on public
    inputs (box, epsilon, size, tail_mass, rng, the shape of ``data``) and on
    data outside the domain (NaN, infinite values, coordinates beyond 1e200:
    one fixed message for every such data set); data outside the box, ties,
    collinear and nearly collinear data and regions without area are handled.

    Parameters
    ----------
    data : array-like of shape (n, 2)
    epsilon : float
    box : ((x_min, y_min), (x_max, y_max))
        Public box; the prior is uniform on it.
    size : int, optional
        Number of independent draws (for studying the law); ``None`` for one point.
    tail_mass : float
        Bound on the probability of the slow path, in [0, 1); 0 computes every level.
    rng : None, int or numpy.random.Generator
        Source of randomness: ``None`` (fresh entropy) for a real release; a
        seed makes the release reproducible by anyone, so not private
        (:mod:`dpcp_tutorial.mechanisms`, *Randomness and real releases*).
        NumPy's floating-point uniforms draw the level and the point; no
        OpenDP sampler is offered, as OpenDP has no sampler for a continuous
        law on polygons (its exact samplers cover additive noise and selection
        from finitely many candidates).

    Returns
    -------
    ndarray of shape (2,) or (size, 2)
    """
    x = _check_data_2d(data)
    epsilon = check_epsilon(epsilon)
    b = _check_box(box)
    m = 1 if size is None else check_positive_int(size, "size", maximum=10 ** 8)
    tail_mass = check_scalar(tail_mass, "tail_mass", low=0.0, high=1.0, low_inclusive=True)
    rng = check_random_state(rng)
    regions, lv, info = _compute(x, b, epsilon, tail_mass)
    polys, ks = info["unit_polys"], regions.levels
    ann = regions.annulus_areas / (info["half"][0] * info["half"][1])      # unit coordinates
    with np.errstate(divide="ignore"):
        logw = 0.5 * epsilon * ks + np.log(ann)
    log_h = logsumexp(logw)
    if regions.complete:
        log_u = -np.inf
    else:
        L = int(ks[0])
        log_u = 0.5 * epsilon * (L - 1) + np.log(4.0 - info["unit_areas"][0])
    log_z = np.logaddexp(log_h, log_u)
    p = np.exp(np.append(logw, log_u) - log_z)
    choice = _draw(p, rng, m)
    token = choice == len(ks)
    all_polys, all_ks = polys, ks
    if token.any():
        full, _, finfo = _compute(x, b, None, 0.0, levels_obj=lv)
        all_polys, all_ks = finfo["unit_polys"], full.levels
        fann = full.annulus_areas / (info["half"][0] * info["half"][1])
        with np.errstate(divide="ignore"):
            flogw = 0.5 * epsilon * all_ks + np.log(fann)
        tail = all_ks < ks[0]
        log_t = logsumexp(flogw[tail]) if tail.any() else -np.inf
        # P(token -> head) = H (U - T) / ((H + T) U)
        log_x = log_h + np.log(-np.expm1(log_t - log_u)) - np.logaddexp(log_h, log_t) if log_t < log_u else -np.inf
        n_tok = int(token.sum())
        to_head = rng.random(n_tok) < np.exp(log_x)
        head_p = np.exp(flogw - logsumexp(flogw[~tail]))
        head_p[tail] = 0.0
        tail_p = np.exp(flogw - log_t) if tail.any() else np.zeros_like(flogw)
        tail_p[~tail] = 0.0
        picks = np.where(to_head,
                         _draw(head_p, rng, n_tok),
                         _draw(tail_p, rng, n_tok) if tail.any() else _draw(head_p, rng, n_tok))
        level_idx = np.searchsorted(all_ks, np.where(token, 0, ks[np.minimum(choice, len(ks) - 1)]))
        level_idx[token] = picks
    else:
        level_idx = choice
    out = np.empty((m, 2))
    for j in np.unique(level_idx):
        sel = np.flatnonzero(level_idx == j)
        outer = all_polys[j]
        inner = all_polys[j + 1] if j + 1 < len(all_polys) else np.empty((0, 2))
        out[sel] = _sample_annulus(outer, inner, sel.size, rng)
    out = out * info["half"] + info["centre"]
    return out[0] if size is None else out


def _draw(p: np.ndarray, rng: np.random.Generator, m: int) -> np.ndarray:
    """``m`` indices drawn with probabilities proportional to ``p`` (entries with ``p == 0`` never come out)."""
    pos = np.flatnonzero(p > 0)
    cdf = np.cumsum(p[pos])
    return pos[np.minimum(np.searchsorted(cdf, rng.random(m) * cdf[-1], side="right"), len(pos) - 1)]


# --------------------------------------------------------------------------- law on a partition

def exact_cell_probabilities(regions: TukeyDepthRegions, epsilon: float, x_edges, y_edges) -> np.ndarray:
    """Exact mass of every cell of a rectangular partition of the box under the private median's law (chapter 15).

    With :math:`d_k` the density on the annulus of level :math:`k`,
    :math:`P(\\text{cell}) = \\sum_k d_k\\,|\\text{cell} \\cap (R_k \\setminus R_{k+1})|`.
    The areas :math:`|\\text{cell} \\cap R_k|` are exact: :math:`R_k` is clipped to
    :math:`\\{x \\le a\\}` at every column edge :math:`a`, the area below every row
    edge follows from the piecewise-linear width of the clipped polygon, and
    inclusion-exclusion gives the cells.

    Parameters
    ----------
    regions : TukeyDepthRegions
        Complete regions (``tail_mass=0``).
    epsilon : float
    x_edges, y_edges : array-like
        Increasing cell edges spanning the box exactly.

    Returns
    -------
    ndarray of shape (len(x_edges) - 1, len(y_edges) - 1)
    """
    dens, areas = _cell_level_areas(regions, epsilon, x_edges, y_edges)
    return np.einsum("k,kij->ij", dens, areas)


def total_variation_on_cells(regions: TukeyDepthRegions, epsilon: float, x_edges, y_edges,
                             probabilities) -> tuple[float, float]:
    """Total-variation distance of a law given on grid cells from the exact private median's law (chapter 15).

    Parameters
    ----------
    regions : TukeyDepthRegions
        Complete regions.
    epsilon : float
    x_edges, y_edges : array-like
        Increasing cell edges spanning the box exactly.
    probabilities : array-like of shape (len(x_edges) - 1, len(y_edges) - 1)
        The other law's mass on every cell (e.g. the candidate mechanism over
        the cell centres). Must sum to 1.

    Returns
    -------
    (tv_cells, tv_spread) : tuple of float
        ``tv_cells``: :math:`\\tfrac12\\sum_c |p_c - q_c|`, the distance between the
        two laws *rounded to cells* (a lower bound on the distance between any
        two laws with these cell masses). ``tv_spread``: the exact distance
        between the exact law and the continuous law that spreads each
        :math:`p_c` uniformly over its cell,
        :math:`\\tfrac12\\sum_c\\sum_k |p_c/|c| - d_k|\\,|c \\cap (R_k\\setminus R_{k+1})|`.
    """
    dens, areas = _cell_level_areas(regions, epsilon, x_edges, y_edges)
    p = _real_array(probabilities, "probabilities")
    if p.shape != areas.shape[1:]:
        raise ValueError(f"probabilities must have shape {areas.shape[1:]} (one value per cell), got {p.shape}")
    if not (np.all(np.isfinite(p)) and np.all(p >= 0) and np.isclose(p.sum(), 1.0)):
        raise ValueError("probabilities must be finite, non-negative and sum to 1")
    q = np.einsum("k,kij->ij", dens, areas)
    cell = areas.sum(axis=0)
    tv_cells = 0.5 * float(np.abs(p - q).sum())
    tv_spread = 0.5 * float(np.sum(np.abs(p[None] / cell[None] - dens[:, None, None]) * areas))
    return tv_cells, tv_spread


def _check_regions(regions) -> TukeyDepthRegions:
    if not isinstance(regions, TukeyDepthRegions):
        raise TypeError(f"regions must be the TukeyDepthRegions returned by tukey_depth_regions, got "
                        f"{type(regions).__name__}")
    return regions


def _cell_level_areas(regions: TukeyDepthRegions, epsilon: float, x_edges, y_edges):
    """Densities ``d_k`` and areas ``|cell \\cap annulus_k|`` of shape (levels, cells_x, cells_y)."""
    prob = _check_regions(regions).level_probabilities(epsilon)
    xe, ye = _real_array(x_edges, "x_edges"), _real_array(y_edges, "y_edges")
    if not (np.isfinite(xe).all() and np.isfinite(ye).all()):
        raise ValueError("x_edges and y_edges contain NaN or infinite values; the cells must be finite")
    if xe.ndim != 1 or ye.ndim != 1 or xe.size < 2 or ye.size < 2 or np.any(np.diff(xe) <= 0) \
            or np.any(np.diff(ye) <= 0):
        raise ValueError("x_edges and y_edges must be increasing 1-D arrays with at least 2 entries")
    if not (np.allclose([xe[0], ye[0]], regions.box[0]) and np.allclose([xe[-1], ye[-1]], regions.box[1])):
        raise ValueError("x_edges and y_edges must span the box exactly: first edges = box[0], last edges = "
                         "box[1]")
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(regions.annulus_areas > 0, prob / regions.annulus_areas, 0.0)
    inside = [np.outer(np.diff(xe), np.diff(ye))]
    for poly in regions.polygons[1:]:
        inside.append(_cell_areas(poly, xe, ye) if poly.shape[0] >= 3 else np.zeros_like(inside[0]))
    inside.append(np.zeros_like(inside[0]))
    inside = np.array(inside)
    return dens, np.maximum(inside[:-1] - inside[1:], 0.0)


def _area_below(poly: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Area of the convex polygon below each height ``t`` (exact: the width is piecewise linear in y)."""
    if poly.shape[0] < 3:
        return np.zeros_like(t)
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    yb = np.unique(y0)
    if yb.size < 2:
        return np.zeros_like(t)
    lo, hi = np.minimum(y0, y1), np.maximum(y0, y1)
    hit = (yb[:, None] >= lo[None]) & (yb[:, None] <= hi[None])
    flat = y1 == y0
    with np.errstate(divide="ignore", invalid="ignore"):
        xa = np.where(flat[None], x0[None], x0[None] + (yb[:, None] - y0[None]) * (x1 - x0)[None] / (y1 - y0)[None])
    xb = np.where(flat[None], x1[None], xa)
    big = np.inf
    right = np.maximum(np.where(hit, xa, -big), np.where(hit, xb, -big)).max(axis=1)
    left = np.minimum(np.where(hit, xa, big), np.where(hit, xb, big)).min(axis=1)
    w = np.maximum(right - left, 0.0)
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (w[1:] + w[:-1]) * np.diff(yb))])
    tc = np.clip(t, yb[0], yb[-1])
    i = np.clip(np.searchsorted(yb, tc, side="right") - 1, 0, yb.size - 2)
    wt = np.interp(tc, yb, w)
    return cum[i] + 0.5 * (w[i] + wt) * (tc - yb[i])


def _cell_areas(poly: np.ndarray, xe: np.ndarray, ye: np.ndarray) -> np.ndarray:
    """Area of the convex polygon ``poly`` within every cell of the grid ``xe`` x ``ye``."""
    f = np.array([_area_below(_clip(poly, 1.0, 0.0, a), ye) for a in xe])    # F(a, b) = |P and x<=a and y<=b|
    return np.maximum(f[1:, 1:] - f[:-1, 1:] - f[1:, :-1] + f[:-1, :-1], 0.0)
