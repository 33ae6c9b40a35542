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

Exactness. Every record is first rounded to a public dyadic grid of the box
(:func:`tukey_depth_regions`: per axis the power of two
:math:`s = 2^{\\lfloor\\log_2 w\\rfloor - 28}`, :math:`w` the box's width, so between
:math:`2^{28}` and :math:`2^{29}` steps per side). This is a fixed map applied to
each record separately, chosen without the data, so it changes no privacy
statement: the mechanism is the exponential mechanism above run on the rounded
records, and its neighbours are the rounded neighbours. Everything after it is
exact, in integer and rational arithmetic on the grid coordinates: which
points lie on, left or right of the line through two records (the counts), the
lines themselves, the polygons of the regions (clipping with exact predicates;
floating point only proposes which halfplanes bind, and an exact test checks
every other one), their areas and the annulus areas (rationals). Ties, collinear
points, near-duplicates (which the grid merges), denormal coordinates, thin and
degenerate regions are all exact. Floating point enters only at the end:
the level is drawn with probabilities computed from the exact areas in log space
(rounding of about 1e-16, relative), the piece of the annulus and the triangle
within it likewise, and the released point is a uniform point of the exact
triangle rounded to floats (and to the box). The sampler computes only the
deepest levels whose mass matters and keeps an exact fall-back for the rest, so
it adds no approximation (no :math:`\\delta`): see
:func:`private_tukey_median_2d`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull
from scipy.special import logsumexp

from .depth import orientation
from ._validation import (
    RandomLike,
    real_array,
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
_GRID_BITS = 28         # public grid: between 2^28 and 2^29 steps per side of the box
_WINDOW = 2 ** 29       # records within this many steps of the box centre: 64-bit exact arithmetic
_UNIT = 2.0 ** _GRID_BITS   # floating-point work in grid units / 2^28 (the box is then about [-1, 1]^2)
DEFAULT_TAIL_MASS = 1e-12
_BOX_LIMIT = 1e50       # public box: corners at most this far from 0, sides at least its inverse
_DATA_LIMIT = 1e200     # data domain: |coordinates| <= 1e200 (in grid units at most ~1e260: no overflow)


# --------------------------------------------------------------------------- validation of public inputs

def _check_box(box) -> np.ndarray:
    try:
        b = real_array(box, "box")
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
    v = real_array(vertices, "vertices")
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

    Examples
    --------
    >>> from dpcp_tutorial.tukey_exact import polygon_area
    >>> polygon_area([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [0.0, 1.0]])
    2.0
    """
    v = _check_vertices(vertices)
    if v.shape[0] < 3:
        return 0.0
    x, y = v[:, 0], v[:, 1]
    return float(0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y)))


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


# --------------------------------------------------------------------------- the public grid

@dataclass(frozen=True)
class _Grid:
    """The public dyadic grid of a box: records are rounded to it, and the geometry runs in its integer units.

    Per axis the step is the power of two :math:`s = 2^{\\lfloor \\log_2 w\\rfloor - 28}` (``w`` the box's
    width), so a side of the box spans between :math:`2^{28}` and :math:`2^{29}` steps. Grid coordinates are
    ``round(x / s) - offset`` with ``offset`` the grid index nearest to the box's centre; the box corners are
    dyadic rationals in these units.
    """

    step: np.ndarray        # (2,) powers of two
    offset: tuple           # Python ints
    lo: tuple               # box corners in grid units (Fractions)
    hi: tuple
    origin: np.ndarray      # offset * step (floats, about the centre of the box)


def _make_grid(box: np.ndarray) -> _Grid:
    _, exponent = np.frexp(box[1] - box[0])                  # w = m 2^e with m in [0.5, 1): floor(log2 w) = e - 1
    step = np.ldexp(1.0, (exponent - 1 - _GRID_BITS).astype(int))
    centre = box.mean(axis=0)
    offset = tuple(int(np.rint(centre[i] / step[i])) for i in range(2))
    lo = tuple(Fraction(float(box[0, i] / step[i])) - offset[i] for i in range(2))     # exact: step is 2^e
    hi = tuple(Fraction(float(box[1, i] / step[i])) - offset[i] for i in range(2))
    origin = np.array([float(offset[0]) * step[0], float(offset[1]) * step[1]])
    return _Grid(step=step, offset=offset, lo=lo, hi=hi, origin=origin)


def _snap(x: np.ndarray, grid: _Grid):
    """Round every record to the grid: ``(snapped floats, integer coordinates, fast)``.

    ``snapped`` are the records on the grid as floats (exact: integer multiples of a power of two);
    the integer coordinates are an int64 array when every record lies within :math:`2^{29}` steps of the
    offset (then all the arithmetic below fits in 64 bits), else an object array of Python integers.
    """
    idx = np.rint(x / grid.step) + 0.0                       # integer-valued floats (exact); -0.0 -> 0.0
    snapped = idx * grid.step
    off = np.array(grid.offset, dtype=float)
    if np.abs(idx).max(initial=0.0) < 2.0 ** 52 and np.abs(off).max() < 2.0 ** 52:
        rel = idx - off                                      # exact
        if np.abs(rel).max(initial=0.0) <= _WINDOW:
            return snapped, rel.astype(np.int64), True
    ints = np.empty(idx.shape, dtype=object)
    for r in range(idx.shape[0]):
        ints[r, 0] = int(idx[r, 0]) - grid.offset[0]
        ints[r, 1] = int(idx[r, 1]) - grid.offset[1]
    return snapped, ints, False


# --------------------------------------------------------------------------- exact convex polygons

class _ExactPolygon:
    """A convex polygon (possibly empty, a point or a segment) with exact rational vertices.

    Vertices are homogeneous integer triples ``(X, Y, D)``, ``D > 0``, for the point ``(X/D, Y/D)`` (grid
    units); edge ``i`` runs from vertex ``i`` to vertex ``i + 1`` on the integer line ``(a, b, c)``
    (:math:`a x + b y = c`, the polygon on the side :math:`a x + b y \\le c`). Every vertex is the crossing of
    two such lines, so the integers stay small: at most about three times the size of the line
    coefficients, however many clippings were made.
    """

    __slots__ = ("verts", "edges")

    def __init__(self, verts: list, edges: list):
        self.verts = verts
        self.edges = edges

    def area2(self) -> Fraction:
        """Twice the area, exactly (shoelace formula on the rational vertices)."""
        v = self.verts
        if len(v) < 3:
            return Fraction(0)
        num, den = 0, 1
        for (x0, y0, d0), (x1, y1, d1) in zip(v, v[1:] + v[:1]):
            t, dd = x0 * y1 - x1 * y0, d0 * d1
            if t:
                num, den = num * dd + t * den, den * dd
        return Fraction(num, den) if num > 0 else Fraction(0)

    def floats(self) -> np.ndarray:
        """Vertices as floats (grid units, each coordinate correctly rounded)."""
        return np.array([[x / d, y / d] for x, y, d in self.verts]).reshape(-1, 2)


def _meet(l1: tuple, l2: tuple) -> tuple:
    """Crossing point of two non-parallel integer lines, as a homogeneous triple with ``D > 0``."""
    a1, b1, c1 = l1
    a2, b2, c2 = l2
    d = a1 * b2 - a2 * b1
    x, y = c1 * b2 - c2 * b1, a1 * c2 - a2 * c1
    return (x, y, d) if d > 0 else (-x, -y, -d)


def _side(line: tuple, v: tuple) -> int:
    """Sign of :math:`a x + b y - c` at the rational point ``v`` (exact)."""
    s = line[0] * v[0] + line[1] * v[1] - line[2] * v[2]
    return (s > 0) - (s < 0)


def _clip_exact(poly: _ExactPolygon, line: tuple) -> _ExactPolygon:
    """Exact Sutherland-Hodgman: the part of ``poly`` where :math:`a x + b y \\le c`."""
    verts, edges = poly.verts, poly.edges
    m = len(verts)
    if m == 0:
        return poly
    sides = [_side(line, v) for v in verts]
    if max(sides) <= 0:
        return poly
    if min(sides) > 0:
        return _ExactPolygon([], [])
    if m == 1:
        return poly if sides[0] <= 0 else _ExactPolygon([], [])
    out_v, out_e = [], []
    for i in range(m):
        j = (i + 1) % m
        si, sj = sides[i], sides[j]
        if si <= 0:
            out_v.append(verts[i])
            out_e.append(line if (si == 0 and sj > 0) else edges[i])
            if si < 0 and sj > 0:
                out_v.append(_meet(edges[i], line))
                out_e.append(line)
        elif sj < 0:                                          # entering: the crossing, then along the edge
            out_v.append(_meet(edges[i], line))
            out_e.append(edges[i])
    return _ExactPolygon(out_v, out_e)


def _box_polygon(grid: _Grid) -> _ExactPolygon:
    """The box in grid units, counter-clockwise, with integer edge lines."""
    def frac_line(a: int, b: int, value: Fraction) -> tuple:
        # a x + b y <= value with value = p / q: (q a) x + (q b) y <= p
        return (a * value.denominator, b * value.denominator, value.numerator)
    bottom = frac_line(0, -1, -grid.lo[1])
    right = frac_line(1, 0, grid.hi[0])
    top = frac_line(0, 1, grid.hi[1])
    left = frac_line(-1, 0, -grid.lo[0])
    edges = [bottom, right, top, left]
    verts = [_meet(left, bottom), _meet(bottom, right), _meet(right, top), _meet(top, left)]
    return _ExactPolygon(verts, edges)


def _log_fraction(q: Fraction) -> float:
    """:math:`\\log q` of a positive rational, accurate to rounding, whatever the size of its terms."""
    num, den = q.numerator, q.denominator
    shift = num.bit_length() - den.bit_length()
    ratio = num / (den << shift) if shift >= 0 else (num << -shift) / den      # in [0.5, 2], correctly rounded
    return math.log(ratio) + shift * math.log(2.0)


def _fractions_to_weights(values: list) -> np.ndarray:
    """Non-negative exact rationals as floats proportional to them (never overflowing nor all underflowing)."""
    logs = np.array([_log_fraction(v) if v > 0 else -np.inf for v in values])
    if not np.isfinite(logs).any():
        return np.zeros(len(values))
    return np.exp(logs - logs.max())


# --------------------------------------------------------------------------- the constraints of every level

def _orient_rows(ints: np.ndarray, floats: np.ndarray, fast: bool, i: int, js: np.ndarray) -> np.ndarray:
    """Exact signs of :math:`(P_j - P_i) \\times (P_c - P_i)` for every ``j`` in ``js`` (rows) and every point ``c``."""
    if fast:                                            # |coordinates| <= 2^29: products < 2^61, exact in int64
        d = ints - ints[i]
        dj = d[js]
        return np.sign(dj[:, 0, None] * d[None, :, 1] - dj[:, 1, None] * d[None, :, 0])
    return orientation(floats[i, 0], floats[i, 1], floats[js, 0][:, None], floats[js, 1][:, None],
                       floats[None, :, 0], floats[None, :, 1])


def _pair_constraints(ints: np.ndarray, floats: np.ndarray, fast: bool):
    """Integer halfplanes ``a x + b y <= c`` (grid units) valid for the levels ``lo < k <= hi``, one per line.

    For a line through two distinct (snapped) records and its left normal
    :math:`(a, b) = (-(y_j - y_i), x_j - x_i)`, ``lo`` is the number of points
    strictly on the normal's side and ``hi`` adds the points on the line (ties
    included); the opposite normal gives the second halfplane. At that direction
    the k-th largest projection is attained on the line for ``lo < k <= hi``.

    The counts are exact: the angles of the points seen from ``P_i`` classify
    all points except those within ``_SURE_ANGLE`` of the line (the computed
    angles are within about 1e-15 rad of the truth), which are classified by an
    exact orientation (64-bit integers when ``fast``, else
    :func:`~dpcp_tutorial.depth.orientation` on the snapped floats). A line
    through three or more points is generated once, from its two lowest-indexed
    distinct points. The coefficients are exact integers, from the same
    integer coordinates as the counts.
    """
    n = ints.shape[0]
    As, Bs, Cs, los, his = [], [], [], [], []
    two_pi = 2.0 * np.pi
    index = np.arange(n)
    for i in range(n - 1):
        same = (floats[:, 0] == floats[i, 0]) & (floats[:, 1] == floats[i, 1])
        if same[:i].any():                              # a copy of an earlier point: its lines are generated there
            continue
        n_same = int(same.sum())                        # P_i itself and its copies: on every line
        partners = index[i + 1:][~same[i + 1:]]
        if partners.size == 0:
            continue
        w = floats - floats[i]
        angle = np.arctan2(w[:, 1], w[:, 0])
        ang = np.sort(angle[~same])
        ext = np.concatenate([ang - two_pi, ang, ang + two_pi])
        phi = angle[partners]

        def count(lo_, hi_):
            return np.searchsorted(ext, hi_, side="right") - np.searchsorted(ext, lo_, side="left")
        on_fwd = count(phi - _SURE_ANGLE, phi + _SURE_ANGLE)
        on_bwd = count(phi + np.pi - _SURE_ANGLE, phi + np.pi + _SURE_ANGLE)
        left = count(phi + _SURE_ANGLE, phi + np.pi - _SURE_ANGLE)   # strictly left, no point near the line
        on = n_same + 1 + np.zeros_like(left)
        canonical = np.ones(partners.size, dtype=bool)
        unsure = (on_fwd > 1) | (on_bwd > 0)
        if unsure.any():
            j = partners[unsure]
            sign = _orient_rows(ints, floats, fast, i, j)
            left[unsure] = (sign > 0).sum(axis=1)
            on[unsure] = (sign == 0).sum(axis=1)
            first_on = np.argmax(sign == 0, axis=1)          # lowest index on the line
            second = np.argmax((sign == 0) & ~same[None, :], axis=1)
            canonical[unsure] = (first_on == i) & (second == j)
        right = n - left - on
        j = partners[canonical]
        d = ints[j] - ints[i]
        a, b = -d[:, 1], d[:, 0]
        c = a * ints[i, 0] + b * ints[i, 1]
        left, right, on = left[canonical], right[canonical], on[canonical]
        As += [a, -a]
        Bs += [b, -b]
        Cs += [c, -c]
        los += [left, right]
        his += [left + on, right + on]
    dtype = np.int64 if fast else object
    if not As:
        empty = np.empty(0, dtype=dtype)
        return empty, empty, empty, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return (np.concatenate(As), np.concatenate(Bs), np.concatenate(Cs),
            np.concatenate(los).astype(np.int64), np.concatenate(his).astype(np.int64))


def _float_lines(a: np.ndarray, b: np.ndarray, c: np.ndarray, fast: bool):
    """Unit normals and offsets of integer lines in unit coordinates (grid units / 2^28): approximations used
    only to find candidates quickly; every decision is then checked exactly."""
    if fast:
        af, bf, cf = a.astype(float), b.astype(float), c.astype(float)
    else:
        m = [max(abs(int(p)), abs(int(q))) for p, q in zip(a, b)]
        af = np.array([int(p) / mm for p, mm in zip(a, m)])
        bf = np.array([int(q) / mm for q, mm in zip(b, m)])
        cf = np.array([int(r) / mm for r, mm in zip(c, m)])
    h = np.hypot(af, bf)
    return af / h, bf / h, cf / h / _UNIT


class _Levels:
    """The exact halfplanes of every level ``R_k`` and the exact regions (grid units)."""

    def __init__(self, data: np.ndarray, grid: _Grid):
        self.grid = grid
        self.snapped, ints, self.fast = _snap(data, grid)
        self.n = ints.shape[0]
        floats = ints.astype(float) if self.fast else self.snapped
        a, b, c, lo, hi = _pair_constraints(ints, floats, self.fast)
        af, bf, cf = _float_lines(a, b, c, self.fast)
        self.box_f = np.array([[float(grid.lo[0]), float(grid.lo[1])],
                               [float(grid.hi[0]), float(grid.hi[1])]]) / _UNIT
        # a halfplane that surely contains the whole box is redundant at every level (float test with a margin;
        # a kept redundant halfplane costs nothing but time)
        top = np.maximum(af * self.box_f[0, 0], af * self.box_f[1, 0]) + np.maximum(bf * self.box_f[0, 1],
                                                                                 bf * self.box_f[1, 1])
        useful = cf <= top + 1e-9 * (1.0 + np.abs(cf))
        self.a, self.b, self.c, self.lo, self.hi = a[useful], b[useful], c[useful], lo[useful], hi[useful]
        self.af, self.bf, self.cf = af[useful], bf[useful], cf[useful]
        # the halfplanes of every level, grouped once: halfplane i belongs to the levels lo_i < k <= hi_i
        span = self.hi - self.lo
        owner = np.repeat(np.arange(span.size), span)
        level = np.repeat(self.lo + 1, span) + (np.arange(owner.size) - np.repeat(np.cumsum(span) - span, span))
        by_level = np.argsort(level, kind="stable")          # within a level, increasing index
        self._member_index = owner[by_level]
        self._member_start = np.searchsorted(level[by_level], np.arange(ints.shape[0] + 2))
        # four fixed directions (+-x, +-y): consecutive critical directions are then < pi apart
        xs = sorted(int(v) for v in ints[:, 0])
        ys = sorted(int(v) for v in ints[:, 1])
        self.sorted_x, self.sorted_y = xs, ys                 # increasing
        self.box = _box_polygon(grid)
        self.interior = None                                  # a float point inside every region with area
        self._lp: dict[int, tuple] = {}
        self._regions: dict[int, _ExactPolygon] = {0: self.box}
        self._area2: dict[int, Fraction] = {}

    # ---- the constraints of one level
    def _axis_lines(self, k: int) -> list:
        n = self.n
        return [(1, 0, self.sorted_x[n - k]), (0, 1, self.sorted_y[n - k]),
                (-1, 0, -self.sorted_x[k - 1]), (0, -1, -self.sorted_y[k - 1])]

    def _members(self, k: int) -> np.ndarray:
        """Indices (increasing) of the halfplanes of level ``k``: ``lo < k <= hi``."""
        return self._member_index[self._member_start[k]:self._member_start[k + 1]]

    def _float_halfplanes(self, k: int):
        """Unit normals (m, 2) and offsets (m,) of ``R_k`` (the four axis constraints first), in floats."""
        axis = self._axis_lines(k)
        idx = self._members(k)
        fixed_n = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
        fixed_c = np.array([line[2] / _UNIT for line in axis], dtype=float)
        normals = np.concatenate([fixed_n, np.stack([self.af[idx], self.bf[idx]], axis=1)])
        return normals, np.concatenate([fixed_c, self.cf[idx]]), idx

    def chebyshev(self, k: int) -> tuple[float, np.ndarray]:
        """Signed Chebyshev radius and centre of ``R_k`` (floats, unit coordinates; negative: empty). Used only
        to guess which levels have area and to find a point inside them."""
        if k in self._lp:
            return self._lp[k]
        normals, c, _ = self._float_halfplanes(k)
        b = self.box_f
        res = linprog(np.array([0.0, 0.0, -1.0]), A_ub=np.column_stack([normals, np.ones(len(c))]), b_ub=c,
                      bounds=[(b[0, 0], b[1, 0]), (b[0, 1], b[1, 1]), (-4.0, 2.0)], method="highs")
        out = (float(res.x[2]), np.asarray(res.x[:2])) if res.status == 0 else (-np.inf, np.zeros(2))
        self._lp[k] = out
        return out

    def _line(self, j: int) -> tuple:
        return (int(self.a[j]), int(self.b[j]), int(self.c[j]))

    # ---- the exact region of one level
    def region(self, k: int) -> _ExactPolygon:
        """``R_k`` within the box, exactly: the box clipped by the axis constraints, by the halfplanes that the
        floating-point hull finds binding, and then by every halfplane that an exact test finds violated at a
        vertex, until none is (so the result does not depend on the floating-point steps being right)."""
        if k in self._regions:
            return self._regions[k]
        poly = self.box
        for line in self._axis_lines(k):
            poly = _clip_exact(poly, line)
        normals, c, idx = self._float_halfplanes(k)
        done = np.zeros(idx.size, dtype=bool)
        for j in self._candidates(normals, c):
            poly = _clip_exact(poly, self._line(idx[j]))
            done[j] = True
        while poly.verts and not done.all():
            todo = np.flatnonzero(~done)
            cut = self._violated(poly, idx[todo])
            if not cut:
                break
            for j in cut:
                poly = _clip_exact(poly, self._line(idx[todo[j]]))
                done[todo[j]] = True
        self._regions[k] = poly
        return poly

    def _candidates(self, normals: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Indices (into the level's halfplanes, axis ones excluded) of the halfplanes binding in floating point,
        in counter-clockwise order: the convex hull of the dual points ``u / (c - u.p)`` for ``p`` inside."""
        if self.interior is None:
            return np.empty(0, dtype=int)
        slack = c - normals @ self.interior
        if not np.all(slack > 0):
            return np.empty(0, dtype=int)
        try:
            hull = ConvexHull(normals / slack[:, None])
        except Exception:  # noqa: BLE001 - qhull precision trouble: the exact loop alone finds the region
            return np.empty(0, dtype=int)
        v = hull.vertices
        return v[v >= 4] - 4

    def _violated(self, poly: _ExactPolygon, rows: np.ndarray) -> list:
        """Positions (into ``rows``) of halfplanes violated at some vertex of ``poly``, exactly; a few at a time
        (the most violated at each vertex, or all when few)."""
        vf = poly.floats() / _UNIT
        af, bf, cf = self.af[rows, None], self.bf[rows, None], self.cf[rows, None]
        tx, ty = af * vf[None, :, 0], bf * vf[None, :, 1]
        s = tx + ty - cf
        bound = 1e-13 * (np.abs(tx) + np.abs(ty) + np.abs(cf)) + 1e-300
        sure = s > bound
        check = (s >= -bound) & ~sure
        viol = sure.copy()
        for r, v in zip(*np.nonzero(check)):
            if _side(self._line(rows[r]), poly.verts[v]) > 0:
                viol[r, v] = True
        bad = np.flatnonzero(viol.any(axis=1))
        if bad.size <= 16:
            score = np.where(viol[bad], s[bad], -np.inf).max(axis=1)
            return [int(r) for r in bad[np.argsort(-score, kind="stable")]]
        worst = np.where(viol, s, -np.inf).argmax(axis=0)          # per vertex, its most violated halfplane
        has = viol.any(axis=0)
        return list(dict.fromkeys(int(r) for r in worst[has]))

    def area2(self, k: int) -> Fraction:
        if k not in self._area2:
            self._area2[k] = self.region(k).area2()
        return self._area2[k]

    def has_area(self, k: int) -> bool:
        return k == 0 or self.area2(k) > 0

    def non_empty(self, k: int) -> bool:
        return k == 0 or bool(self.region(k).verts)

    def deepest(self, predicate, guess: int) -> int:
        """Largest ``k`` in ``[0, n]`` with ``predicate(k)`` (monotone, true at 0), decided exactly, starting from a
        floating-point ``guess``."""
        guess = int(min(max(guess, 0), self.n))
        if predicate(guess):
            if guess == self.n or not predicate(guess + 1):
                return guess
            lo, hi = guess + 1, self.n
        else:
            lo, hi = 0, guess - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if predicate(mid):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def float_guess(self, radius: float) -> int:
        lo, hi = 0, self.n
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.chebyshev(mid)[0] > radius:
                lo = mid
            else:
                hi = mid - 1
        return lo


# --------------------------------------------------------------------------- the regions and the law

@dataclass
class TukeyDepthRegions:
    """Nested Tukey depth regions clipped to a public box, and the exact law of the private median (chapter 15).

    Everything is computed for :attr:`data`, the records rounded to the public grid of the box (see
    :func:`tukey_depth_regions`): regions, counts and areas exactly (integer and rational arithmetic); the
    float attributes below are those exact values rounded.

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
        Vertices (counter-clockwise, data coordinates, rounded from the exact
        rational vertices) of :math:`R_k \\cap B` for every level; an empty
        ``(0, 2)`` array when the region has no area (empty, a point or a
        segment).
    areas : ndarray
        :math:`\\operatorname{area}(R_k \\cap B)` (the exact areas, rounded).
    annulus_areas : ndarray
        :math:`a_k = \\operatorname{area}(R_k \\cap B) - \\operatorname{area}(R_{k+1} \\cap B)`
        (exact differences, rounded: a thin annulus keeps its area).
    max_depth : int
        The deepest level :math:`k^*` with :math:`R_{k^*} \\cap B` non-empty
        (0 if the box misses the hull); :math:`HD \\le k^*/n` on the box.
    deepest_point : ndarray of shape (2,)
        A point of :math:`R_{k^*} \\cap B` (its centroid if it has area, else
        the mean of its vertices: a point or a segment): the non-private Tukey
        median restricted to the box.
    complete : bool
        Whether every level from 0 to the deepest one with area was computed.
    data : ndarray of shape (n, 2), default=None
        The records on the public grid, the input of every computation.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.tukey_exact import tukey_depth_regions
    >>> data = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> regions = tukey_depth_regions(data, box=[[-1.0, -1.0], [2.0, 2.0]])
    >>> regions.n, regions.levels.tolist(), np.round(regions.areas, 4).tolist()
    (5, [0, 1], [9.0, 1.0])
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
    data: np.ndarray = None
    _exact: dict = field(default=None, repr=False)

    def log_level_weights(self, epsilon: float) -> np.ndarray:
        """Unnormalised log weights :math:`\\varepsilon k/2 + \\log a_k` of the computed levels (``-inf`` if :math:`a_k = 0`).

        The logarithms are taken of the exact annulus areas, so a thin annulus
        gets its weight to rounding, however small.
        """
        epsilon = check_epsilon(epsilon)
        return 0.5 * epsilon * self.levels + self._exact["log_annuli"]

    def level_probabilities(self, epsilon: float) -> np.ndarray:
        """Exact :math:`P(n\\,HD(\\tilde\\theta) = k)`, :math:`k` in ``levels`` (needs ``complete`` regions)."""
        self._need_complete()
        lw = self.log_level_weights(epsilon)
        return np.exp(lw - logsumexp(lw))

    def _need_complete(self) -> None:
        if not self.complete:
            raise ValueError("these regions were truncated (tail_mass > 0); call tukey_depth_regions with "
                             "tail_mass=0 for the exact law over all levels")

    def level_of(self, points) -> np.ndarray:
        """Depth count :math:`c(\\theta) = n\\,HD(\\theta)` (for :attr:`data`) of points in the box, read off the
        exact polygons.

        A point is in the closed region :math:`R_k` when it satisfies every edge
        of its polygon, decided exactly (a floating-point test with an error
        bound, rational arithmetic when that is not conclusive); the largest
        such computed level is returned, so a point on a boundary gets the
        larger level, as the closed regions say. Only levels in ``levels`` are
        resolved: a point deeper than the last region with area gets that
        region's level; a point outside the box gets the first level.
        """
        p = check_2d(points, "points")
        if p.shape[1] != 2:
            raise ValueError("points must have 2 columns")
        return self._levels_exact(p)

    def _levels_exact(self, p: np.ndarray) -> np.ndarray:
        ex = self._exact
        grid = ex["grid"]
        out = np.full(p.shape[0], self.levels[0] if len(self.levels) else 0, dtype=np.int64)
        in_box = np.all((p >= self.box[0]) & (p <= self.box[1]), axis=1)
        scaled = p[in_box] / grid.step                        # exact (a power-of-two scaling)
        off = np.array(grid.offset, dtype=float)
        rel = scaled - off                                   # rounded; its error is in the bound below
        rel_err = 2.0 ** -52 * (np.abs(scaled) + np.abs(off))
        pos = np.flatnonzero(in_box)
        for k, poly in zip(self.levels, ex["polygons"]):
            if k == 0 or len(poly.verts) < 3:
                continue
            inside = np.ones(pos.size, dtype=bool)
            for line in poly.edges:
                inside &= _below_exact(line, scaled, rel, rel_err, grid.offset, inside)
            out[pos[inside]] = k
        return out

    def density(self, points, epsilon: float) -> np.ndarray:
        """Exact density of the private median at ``points`` (0 outside the box; needs ``complete``).

        On the annulus of level :math:`k` it is :math:`e^{\\varepsilon k/2}/Z`,
        :math:`Z = \\sum_j e^{\\varepsilon j/2} a_j`; it integrates to 1 over the
        box whatever the regions (thin, degenerate or empty).
        """
        self._need_complete()
        lw = self.log_level_weights(epsilon)
        log_z = logsumexp(lw)                                # lw are in data units: Z in data units
        p = check_2d(points, "points")
        if p.shape[1] != 2:
            raise ValueError("points must have 2 columns")
        lvl = self._levels_exact(p)
        in_box = np.all((p >= self.box[0]) & (p <= self.box[1]), axis=1)
        return np.where(in_box, np.exp(0.5 * check_epsilon(epsilon) * lvl - log_z), 0.0)


def _below_exact(line: tuple, scaled: np.ndarray, rel: np.ndarray, rel_err: np.ndarray, offset: tuple,
                 active: np.ndarray) -> np.ndarray:
    """Exact test :math:`a x + b y \\le c` at points given by ``scaled`` (grid index floats, exact); ``rel`` are
    the rounded grid coordinates with error at most ``rel_err``. Only ``active`` points are decided."""
    a, b, c = line
    m = max(abs(a), abs(b))
    af, bf, cf = a / m, b / m, c / m
    s = af * rel[:, 0] + bf * rel[:, 1] - cf
    bound = (1e-15 * (np.abs(af * rel[:, 0]) + np.abs(bf * rel[:, 1]) + abs(cf))
             + abs(af) * rel_err[:, 0] + abs(bf) * rel_err[:, 1]) * 1.01 + 1e-300
    out = s <= 0
    for r in np.flatnonzero(active & (np.abs(s) <= bound)):
        x = Fraction(float(scaled[r, 0])) - offset[0]
        y = Fraction(float(scaled[r, 1])) - offset[1]
        out[r] = a * x + b * y - c <= 0
    return out


def _to_data(v: np.ndarray, grid: _Grid) -> np.ndarray:
    """Grid coordinates (floats) to data coordinates."""
    return v * grid.step + grid.origin


def _compute(data: np.ndarray, box: np.ndarray, epsilon: float | None, tail_mass: float,
             levels_obj: _Levels | None = None, deepest: bool = True) -> tuple[TukeyDepthRegions, _Levels, dict]:
    """All levels (``epsilon is None`` or ``tail_mass == 0``) or the deepest ones until the tail bound holds.

    Exact throughout: the deepest level with area (and, with ``deepest``, the deepest non-empty level) is
    found by exact tests on exact regions, started from a floating-point guess; areas are exact rationals.
    """
    grid = _make_grid(box)
    lv = _Levels(data, grid) if levels_obj is None else levels_obj
    n = lv.n
    k_area = lv.deepest(lv.has_area, lv.float_guess(1e-9))
    if k_area > 0:
        r, centre = lv.chebyshev(k_area)
        if r > 1e-9:
            lv.interior = centre
    box_area2 = lv.area2(0)
    ks, areas2 = [], []
    log_areas, log_annuli = [], []
    truncate = epsilon is not None and tail_mass > 0
    k = k_area
    while k >= 1:
        a2 = lv.area2(k)
        ks.append(k)
        areas2.append(a2)
        if truncate:
            inner = areas2[-2] if len(areas2) > 1 else Fraction(0)
            ann = a2 - inner
            log_annuli.append(_log_fraction(ann) if ann > 0 else -np.inf)
            log_head = logsumexp(0.5 * epsilon * np.array(ks) + np.array(log_annuli))
            rest = box_area2 - a2
            log_tail_bound = 0.5 * epsilon * (k - 1) + _log_fraction(rest) if rest > 0 else -np.inf
            if log_tail_bound - np.logaddexp(log_head, log_tail_bound) <= np.log(tail_mass):
                break
        k -= 1
    complete = (k <= 1) or not truncate
    if complete:
        ks.append(0)
        areas2.append(box_area2)
    order = np.argsort(ks)
    ks_arr = np.array(ks, dtype=np.int64)[order]
    areas2 = [areas2[i] for i in order]
    annuli2 = _annuli(areas2, areas2[1:] + [Fraction(0)])          # R_{k+1} of the deepest level: no area
    log_ann = np.array([_log_fraction(a / 2) if a > 0 else -np.inf for a in annuli2])
    exact_polys = [lv.region(int(kk)) for kk in ks_arr]
    jac = float(grid.step[0] * grid.step[1])
    log_jac = float(np.log(grid.step[0]) + np.log(grid.step[1]))
    if deepest:
        k_star = k_area if k_area == n else lv.deepest(lv.non_empty, max(k_area, lv.float_guess(-1e-12)))
        deep_poly = lv.region(k_star)
        if k_star == 0:
            deep = box.mean(axis=0)
        elif k_star == k_area:                                # a region with area: its centroid
            deep = _to_data(_centroid(deep_poly.floats()), grid)
        else:                                                 # a point or a segment: the mean of its vertices
            deep = _to_data(deep_poly.floats().mean(axis=0), grid)
    else:
        k_star, deep = k_area, box.mean(axis=0)
    float_polys = [np.clip(_to_data(p.floats(), grid), box[0], box[1]) if kk > 0 and len(p.verts) >= 3
                   else (_box_corners(box) if kk == 0 else np.empty((0, 2)))
                   for kk, p in zip(ks_arr, exact_polys)]
    regions = TukeyDepthRegions(
        box=box.copy(), n=n, levels=ks_arr, polygons=float_polys,
        areas=np.array([float(a / 2) * jac for a in areas2]),
        annulus_areas=np.array([float(a / 2) * jac for a in annuli2]),
        max_depth=int(k_star), deepest_point=np.clip(deep, box[0], box[1]), complete=bool(complete),
        data=lv.snapped.copy(),
        _exact={"grid": grid, "polygons": exact_polys, "areas2": areas2, "annuli2": annuli2,
                "log_annuli": log_ann + log_jac, "log_annuli_grid": log_ann})
    info = {"k_area": k_area, "grid": grid, "areas2": areas2, "log_annuli_grid": log_ann}
    return regions, lv, info


def _box_corners(box: np.ndarray) -> np.ndarray:
    (x0, y0), (x1, y1) = box
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def _annuli(outer: list, inner: list) -> list:
    """Exact annulus areas ``outer - inner`` (rationals; never negative, as the regions are nested)."""
    return [o - i for o, i in zip(outer, inner)]


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
    :math:`O(n^2 \\log n)` for the constraints plus, per level, a convex hull
    of its :math:`m_k` dual points and an exact check of the :math:`m_k`
    halfplanes.

    Everything is computed for the records rounded to the public grid of the
    box (:attr:`TukeyDepthRegions.data`): per axis the step is the power of two
    :math:`s = 2^{\\lfloor \\log_2 w\\rfloor - 28}` (:math:`w` the box's width),
    and a record :math:`x` becomes :math:`s\\,\\operatorname{round}(x/s)` (ties to
    even). The rounding is a fixed map applied to each record separately and
    chosen from the box alone, so it changes no privacy statement; it moves a
    record by at most :math:`s/2`, merges records closer than that, turns
    denormal coordinates into 0 and keeps dyadic data unchanged. On the rounded
    records the counts, lines, regions and areas are exact (integers and
    rationals; see the module docstring).

    Parameters
    ----------
    data : array-like of shape (n, 2)
        The private sample (finite points of magnitude at most 1e200; points
        outside the box are fine).
    box : ((x_min, y_min), (x_max, y_max))
        The public box carrying the uniform prior.
    epsilon : float, default=None
        Needed only with ``tail_mass > 0``: then only the deepest levels are
        computed, until the levels below carry at most ``tail_mass`` of the
        mass of the private median's law (a bound, see
        :func:`private_tukey_median_2d`).
    tail_mass : float, default=0.0
        0 (default) computes every level.

    Returns
    -------
    TukeyDepthRegions
        Use ``.level_probabilities(epsilon)`` for the exact law over levels,
        :math:`P(k) \\propto e^{\\varepsilon k/2} a_k`.

    Notes
    -----
    Exactness: the polygons are the box clipped by the level's halfplanes with
    exact predicates on rational vertices (floating point only proposes the
    binding halfplanes; every other one is then checked exactly), so
    :attr:`~TukeyDepthRegions.levels` (up to the deepest level with area),
    ``max_depth`` (the deepest non-empty level, which may be a point or a
    segment) and the areas are exact; the float attributes are the exact values
    rounded. Public inputs: the box corners within 1e50 of the origin, sides of
    at least 1e-50; the data domain is coordinates of magnitude at most 1e200
    (points outside the box are fine and keep counting).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.tukey_exact import tukey_depth_regions
    >>> data = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> regions = tukey_depth_regions(data, box=[[-1.0, -1.0], [2.0, 2.0]])
    >>> regions.max_depth, np.round(regions.deepest_point, 4)
    (3, array([0.5, 0.5]))
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

    The centroid of :math:`R_{k^*} \\cap B` when it has area, otherwise the
    mean of its vertices (the region is then a point or a segment), for the
    records rounded to the public grid of the box (:func:`tukey_depth_regions`).

    Parameters
    ----------
    data, box
        As in :func:`tukey_depth_regions`.

    Returns
    -------
    ndarray of shape (2,)
        The median.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.tukey_exact import tukey_median_2d
    >>> data = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> np.round(tukey_median_2d(data, box=[[-1.0, -1.0], [2.0, 2.0]]), 4)
    array([0.5, 0.5])
    """
    return tukey_depth_regions(data, box).deepest_point


# --------------------------------------------------------------------------- sampling

def _triangle_area2(p: tuple, q: tuple, r: tuple) -> Fraction:
    """Twice the signed area of a triangle with rational vertices (homogeneous triples), exactly."""
    det = (p[0] * (q[1] * r[2] - r[1] * q[2]) - q[0] * (p[1] * r[2] - r[1] * p[2])
           + r[0] * (p[1] * q[2] - q[1] * p[2]))
    return Fraction(det, p[2] * q[2] * r[2])


def _uniform_in_exact(poly: _ExactPolygon, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` uniform points (grid units) of an exact convex polygon: a triangle of its fan with probability
    proportional to its exact area, then a uniform point of it (the only rounding: the vertices' floats)."""
    v = poly.verts
    weights = _fractions_to_weights([abs(_triangle_area2(v[0], v[i], v[i + 1])) for i in range(1, len(v) - 1)])
    f = poly.floats()
    a, b, c = f[0], f[1:-1], f[2:]
    t = _draw(weights, rng, m)
    r1, r2 = rng.random(m), rng.random(m)
    flip = r1 + r2 > 1.0
    r1, r2 = np.where(flip, 1.0 - r1, r1), np.where(flip, 1.0 - r2, r2)
    return a + r1[:, None] * (b[t] - a) + r2[:, None] * (c[t] - a)


def _annulus_pieces(outer: _ExactPolygon, inner: _ExactPolygon) -> list:
    """Convex pieces of positive area partitioning ``outer \\ inner`` (exact).

    Piece ``j`` is the part of ``outer`` outside edge ``j`` of ``inner`` and inside edges ``1..j-1``.
    """
    if len(inner.verts) < 3 or inner.area2() == 0:
        return [outer]
    pieces, cur = [], outer
    for a, b, c in inner.edges:
        piece = _clip_exact(cur, (-a, -b, -c))
        if piece.area2() > 0:
            pieces.append(piece)
        cur = _clip_exact(cur, (a, b, c))
        if len(cur.verts) < 3:
            break
    return pieces


def _sample_annulus(outer: _ExactPolygon, inner: _ExactPolygon, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` uniform points of ``outer \\ inner`` (grid units): a convex piece with probability proportional to
    its exact area, then a uniform point of it (no rejection, so no data-dependent loop)."""
    pieces = _annulus_pieces(outer, inner)
    which = _draw(_fractions_to_weights([p.area2() for p in pieces]), rng, m)
    out = np.empty((m, 2))
    for j in np.unique(which):
        sel = np.flatnonzero(which == j)
        out[sel] = _uniform_in_exact(pieces[j], sel.size, rng)
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

    Exactness: :math:`X` here is the data rounded to the public grid of the box
    (:func:`tukey_depth_regions`), a per-record map fixed by the box alone; the
    regions, counts and areas are exact rationals for those records. Floating
    point enters only in the final steps: the probabilities of the level, the
    piece and the triangle are computed in log space from the exact areas
    (relative rounding about 1e-16), and the released point is a uniform point
    of an exact triangle rounded to floats (and clipped to the box).

    Privacy: :math:`\\varepsilon`-DP for replace-one neighbours; :math:`\\varepsilon/2`-DP
    for add/remove neighbours (the halfspace count moves by 0 or +1 everywhere
    when a point is added); :math:`n` need not be public. The rounding to the
    grid changes none of this: rounded neighbours are neighbours (or equal)
    under the same relation. The function raises only on public
    inputs (box, epsilon, size, tail_mass, rng, the shape of ``data``) and on
    data outside the domain (NaN, infinite values, coordinates beyond 1e200:
    one fixed message for every such data set); data outside the box, ties,
    collinear data, near-duplicates, denormal coordinates and regions without
    area are handled exactly, without a warning.

    Parameters
    ----------
    data : array-like of shape (n, 2)
    epsilon : float
    box : ((x_min, y_min), (x_max, y_max))
        Public box; the prior is uniform on it.
    size : int, default=None
        Number of independent draws (for studying the law); ``None`` for one point.
    tail_mass : float, default=1e-12
        Bound on the probability of the slow path, in [0, 1); 0 computes every level.
    rng : None, int or numpy.random.Generator, default=None
        Source of randomness; ``None`` for a real release (:term:`Seed`).
        NumPy's floating-point uniforms draw the level and the point; no
        OpenDP sampler is offered, as OpenDP has no sampler for a continuous
        law on polygons (its exact samplers cover additive noise and selection
        from finitely many candidates).

    Returns
    -------
    ndarray of shape (2,) or (size, 2)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.tukey_exact import private_tukey_median_2d
    >>> data = np.random.default_rng(0).normal(size=(200, 2))
    >>> m = private_tukey_median_2d(data, epsilon=1.0, box=[[-4.0, -4.0], [4.0, 4.0]], rng=1)
    >>> m.shape, bool(np.all(np.abs(m) < 1.0))
    ((2,), True)
    """
    x = _check_data_2d(data)
    epsilon = check_epsilon(epsilon)
    b = _check_box(box)
    m = 1 if size is None else check_positive_int(size, "size", maximum=10 ** 8)
    tail_mass = check_scalar(tail_mass, "tail_mass", low=0.0, high=1.0, low_inclusive=True)
    rng = check_random_state(rng)
    regions, lv, info = _compute(x, b, epsilon, tail_mass, deepest=False)
    ks = regions.levels
    logw = 0.5 * epsilon * ks + info["log_annuli_grid"]          # grid units: a common factor is irrelevant
    log_h = logsumexp(logw)
    if regions.complete:
        log_u = -np.inf
    else:
        rest = lv.area2(0) - info["areas2"][0]                    # twice the area of B minus R_L, exactly
        log_u = 0.5 * epsilon * (int(ks[0]) - 1) + _log_fraction(rest / 2) if rest > 0 else -np.inf
    log_z = np.logaddexp(log_h, log_u)
    p = np.exp(np.append(logw, log_u) - log_z)
    choice = _draw(p, rng, m)
    token = choice == len(ks)
    all_ks = ks
    if token.any():
        full, _, finfo = _compute(x, b, None, 0.0, levels_obj=lv, deepest=False)
        all_ks = full.levels
        flogw = 0.5 * epsilon * all_ks + finfo["log_annuli_grid"]
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
    k_area = info["k_area"]
    empty = _ExactPolygon([], [])
    out = np.empty((m, 2))
    for j in np.unique(level_idx):
        sel = np.flatnonzero(level_idx == j)
        k = int(all_ks[j])
        inner = lv.region(k + 1) if k < k_area else empty
        out[sel] = _sample_annulus(lv.region(k), inner, sel.size, rng)
    out = np.clip(_to_data(out, info["grid"]), b[0], b[1])
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
    The areas :math:`|\\text{cell} \\cap R_k|` are computed, not sampled: the
    polygon of :math:`R_k` (its exact vertices rounded to floats) is clipped to
    :math:`\\{x \\le a\\}` at every column edge :math:`a`, the area below every row
    edge follows from the piecewise-linear width of the clipped polygon, and
    inclusion-exclusion gives the cells. This runs in floating point: the
    masses are exact up to rounding (about 1e-16 of the box's area per cell),
    not rational like the level law of :class:`TukeyDepthRegions`.

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

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.tukey_exact import exact_cell_probabilities, tukey_depth_regions
    >>> data = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> regions = tukey_depth_regions(data, box=[[-1.0, -1.0], [2.0, 2.0]], epsilon=1.0)
    >>> p = exact_cell_probabilities(regions, 1.0, [-1.0, 0.5, 2.0], [-1.0, 0.5, 2.0])
    >>> np.round(p, 4)
    array([[0.25, 0.25],
           [0.25, 0.25]])
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

    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial.tukey_exact import (exact_cell_probabilities,
    ...                                        total_variation_on_cells,
    ...                                        tukey_depth_regions)
    >>> data = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    >>> regions = tukey_depth_regions(data, box=[[-1.0, -1.0], [2.0, 2.0]], epsilon=1.0)
    >>> edges = [-1.0, 0.5, 2.0]
    >>> p = exact_cell_probabilities(regions, 1.0, edges, edges)
    >>> tv = total_variation_on_cells(regions, 1.0, edges, edges, p)
    >>> [round(float(x), 4) for x in tv]
    [0.0, 0.0598]
    """
    dens, areas = _cell_level_areas(regions, epsilon, x_edges, y_edges)
    p = real_array(probabilities, "probabilities")
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
    xe, ye = real_array(x_edges, "x_edges"), real_array(y_edges, "y_edges")
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
