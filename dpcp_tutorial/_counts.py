"""The one counting core of the score releases (chapters 3, 4, 6 and 14).

Algorithm 1 (:func:`dpcp_tutorial.private_quantile`), private split conformal
(:func:`dpcp_tutorial.pps_private_quantile`) and the DPCP threshold look at the
scores only through how many of them fall in each *cell* of the public edges
:math:`e_0 < \\dots < e_{L-1}`: the open intervals between consecutive edges and
the edges themselves. The cell histogram

.. math:: h_{2i} = \\#\\{s : e_{i-1} < s < e_i\\}, \\qquad h_{2i+1} = \\#\\{s : s = e_i\\},
          \\qquad h_{2L} = \\#\\{s : s > e_{L-1}\\}

(with :math:`e_{-1} = -\\infty`) has :math:`2L + 1` entries, every count the
mechanisms need is a cumulative sum of it, and histograms of disjoint parts of
the data **add up**. That is what makes the releases exact on partitioned data
(chapter 14): each partition is counted where it lives, the histograms are
summed, and the mechanism runs once on the sum.

Counting is one pass over the scores, never a sort. On the equally spaced edges
the package uses (:math:`j/M` and :math:`k/(m-1)`), a score :math:`s` whose
product :math:`x = \\mathrm{fl}(sD)` with the grid denominator :math:`D` is not
an integer lies strictly inside the cell :math:`(\\lfloor x\\rfloor/D,
(\\lfloor x\\rfloor + 1)/D)`: rounding is monotone and the grid is checked to map
every edge exactly onto its integer. Scores with an integer product (scores on
or within a rounding error of an edge) are placed exactly by a binary search.
Other edges use a binary search for every score.
"""

from __future__ import annotations

from dataclasses import dataclass
import collections.abc
import math

import numpy as np

from ._validation import real_array, check_1d, check_bool

__all__ = ["EdgeHistogram", "edge_histogram", "merge_histograms", "below_above", "round_up_counts",
           "check_unit_scores", "check_scores_or_histogram", "subsample_or_pad", "projection_counts", "halfspace_from_counts",
           "idd_from_counts", "spatial_sums", "spatial_from_sums", "BAD_GRID_SCORES", "grid_counts"]

_BLOCK = 2 ** 15  # scores per block of the fast path: the temporaries stay in the CPU cache


@dataclass(frozen=True, eq=False)
class EdgeHistogram:
    """Cell counts of scores over public edges (see the module docstring).

    Attributes
    ----------
    edges : ndarray of shape (L,)
        The public edges, strictly increasing.
    counts : ndarray of shape (2L + 1,), int64
        :math:`h`: even entries count the open cells, odd entries the edges.
    """

    edges: np.ndarray
    counts: np.ndarray

    @property
    def size(self) -> int:
        """Number of scores counted."""
        return int(self.counts.sum())

    def matches(self, edges: np.ndarray) -> bool:
        """Whether this histogram was counted over exactly ``edges``."""
        return self.edges.shape == edges.shape and bool(np.array_equal(self.edges, edges))


def _uniform_grid(edges: np.ndarray) -> tuple[int, int, bool] | None:
    """``(offset, D, clean)`` if the edges are exactly ``(i + offset)/D``, ``i = 0..L-1``.

    ``clean`` says that every edge maps back exactly onto its integer, ``fl(e_i D) = i + offset``.
    """
    size = edges.size
    for offset in (0, 1):
        denominator = size - 1 + offset
        if denominator < 1 or edges[0] != offset / denominator or edges[-1] != 1.0:
            continue
        integers = np.arange(offset, offset + size, dtype=float)
        if np.array_equal(integers / denominator, edges):
            return offset, denominator, bool(np.array_equal(edges * denominator, integers))
    return None


def _codes_exact(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Cell code ``2 #{e < s} + [s is an edge]`` of every value, by binary search."""
    below = np.searchsorted(edges, values, side="left")
    on_edge = edges[np.minimum(below, edges.size - 1)] == values
    return 2 * below + on_edge


def _histogram_uniform(values: np.ndarray, edges: np.ndarray, offset: int, denominator: int, clean: bool,
                       check: bool) -> np.ndarray | None:
    """Cell histogram on the grid ``(i + offset)/D`` in one blocked pass; ``None`` if a value is outside [0, 1].

    ``x = fl(sD)`` is monotone in ``s``. On a clean grid (``fl(e_i D) = i + offset``) a non-integer ``x``
    puts ``s`` strictly inside ``(floor(x)/D, (floor(x) + 1)/D)``; otherwise ``fl(e_i D)`` is within one
    unit in the last place of its integer, and the same holds when ``x`` is farther than ``tol`` from
    every integer. The other scores are placed by binary search.
    """
    tol = 4.0 * np.spacing(float(denominator))
    size = edges.size
    total = np.zeros(size + 1, dtype=np.int64)     # open cells: total[i] = #{e_{i-1} < s < e_i}
    exact = []
    step = max(_BLOCK, 8 * size)                    # a block's bincount stays small against the block
    block = min(step, values.size)
    x = np.empty(block)
    floor = np.empty(block)
    k = np.empty(block, dtype=np.intp)
    integral = np.empty(block, dtype=bool)
    for start in range(0, values.size, step):
        v = values[start:start + step]
        b = v.size
        xb, fb, kb, ib = x[:b], floor[:b], k[:b], integral[:b]
        np.multiply(v, denominator, out=xb)
        if check and not (xb.min() >= 0.0 and xb.max() <= denominator):   # NaN fails both
            return None
        np.floor(xb, out=fb)
        if clean:
            np.equal(xb, fb, out=ib)
        else:
            np.subtract(xb, fb, out=fb)
            ib = (fb < tol) | (fb > 1.0 - tol)
            np.floor(xb, out=fb)
        np.copyto(kb, fb, casting="unsafe")
        if ib.any():                                 # on or next to an edge: placed exactly below
            exact.append(v[ib])
            kb = kb[~ib]
        # x in (k, k + 1): s lies strictly between the edges k/D and (k + 1)/D, which are
        # e_{k - offset} and e_{k - offset + 1}; the open cell above k + 1 - offset edges
        binned = np.bincount(kb, minlength=size + 1)
        total[1 - offset:] += binned[:size + offset]
    counts = np.zeros(2 * size + 1, dtype=np.int64)
    counts[0::2] = total
    if exact:
        counts += np.bincount(_codes_exact(np.concatenate(exact), edges), minlength=2 * size + 1)
    return counts


def _as_float_vector(scores) -> np.ndarray | None:
    """A non-empty 1-D float array, or ``None`` (then ``check_1d`` gives the standard error).

    An object array is converted by the package's shared rule (``_validation.real_array``): entries that
    are all real numbers become floats, any other entry is a ``TypeError``, as everywhere else.
    """
    if isinstance(scores, (np.ma.MaskedArray, collections.abc.Iterator)):
        return real_array(scores, "scores")      # refused by name (a mask would be dropped)
    try:
        arr = np.asarray(scores)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 1 or arr.size == 0:
        return None
    if arr.dtype.kind == "O":
        return real_array(arr, "scores")
    if arr.dtype.kind not in "biuf":        # strings, complex, dates: check_1d's TypeError
        return None
    return arr.astype(float, copy=False)


def check_unit_scores(scores) -> np.ndarray:
    """Scores as a float array, validated to lie in [0, 1] (two cheap reductions, no copy when possible)."""
    arr = _as_float_vector(scores)
    if arr is None or not (arr.min() >= 0.0 and arr.max() <= 1.0):   # NaN fails both comparisons
        return check_1d(scores, "scores", unit_interval=True)          # raises the standard message
    return arr


def check_scores_or_histogram(scores):
    """Validated scores in [0, 1] (a float array), or an :class:`EdgeHistogram` unchanged.

    Both have ``.size``, the number of scores; none at all is refused alike (a
    histogram of distributed scores counts zero when the collection is empty).
    """
    if isinstance(scores, EdgeHistogram):
        if scores.size == 0:
            raise ValueError(EMPTY_SCORES)
        return scores
    return check_unit_scores(scores)


#: The message for no scores at all, in memory and on Dask (their number is then public: no ``n`` was given).
EMPTY_SCORES = "scores is empty; at least one value is needed"


def subsample_or_pad(scores, m: int, gen: np.random.Generator, top: float = 1.0):
    """Exactly ``m`` scores: a uniform m-subset, or all scores padded with ``top`` (the maximal score, 1).

    ``top`` is the public upper end of the scores' range (1 for scores in
    [0, 1]; a calibrator on a public range ``[lower, upper]`` pads with ``upper``).

    ``scores`` is an array of scores in [0, 1] or an :class:`EdgeHistogram`
    (chapter 14), whose subsample is multivariate hypergeometric (the cell
    counts of a uniform m-subset) and whose pads go to the cell of 1. A
    uniform subset needs randomness only when there are more than ``m``
    scores; ``gen`` is not used otherwise (the law of the output is the same
    either way).

    The release then depends on the private part only through a data set of
    the public size ``m``. *Privacy*: a uniform m-subset of :math:`D \\cup \\{r\\}`
    either avoids :math:`r` (and is a uniform m-subset of :math:`D`) or is such a
    subset with one element replaced by :math:`r`; when padding, :math:`r` takes
    the place of one pad; at :math:`|D| = m - 1` the padded :math:`D` and
    :math:`D \\cup \\{r\\}` differ in one element. So add/remove (and replace-one) on
    the part become replace-one at the fixed size ``m``, and a mechanism that
    is :math:`\\varepsilon`-DP under replace-one at size ``m`` is
    :math:`\\varepsilon`-DP under both relations at every part size.
    *Coverage*: a uniform subset of exchangeable scores stays exchangeable with
    a test score, so the size-``m`` guarantee applies. With padding, both
    calibrators' proofs (chapters 3 and 4) bound the miscoverage through the
    rank of the release among the input scores, whose law the mechanism's
    tail bound controls uniformly over inputs, and a release of rank
    :math:`j` among :math:`k` exchangeable scores misses a test score with
    probability at most :math:`1 - j/(k+1)`. Pads equal the maximal score 1:
    a release below 1 has the same rank among the padded input as among the
    :math:`|D| < m` real scores, and :math:`1 - j/(|D|+1) \\le 1 - j/(m+1)`;
    a release of 1 always covers. So the coverage bound at size ``m`` holds at
    every part size. (The law of the release itself is not monotone in the
    scores; the argument uses only the rank.)
    """
    size = scores.size
    if size == m:
        return scores
    if isinstance(scores, EdgeHistogram):
        if size > m:
            counts = gen.multivariate_hypergeometric(scores.counts, m)
        else:
            counts = scores.counts.copy()
            cell = int(_codes_exact(np.array([float(top)]), scores.edges)[0])
            counts[cell] += m - size
        return EdgeHistogram(scores.edges, np.asarray(counts, dtype=np.int64))
    if size > m:
        return scores[gen.permutation(size)[:m]]
    return np.concatenate([scores, np.full(m - size, float(top))])


def edge_histogram(scores, edges: np.ndarray, validated: bool = False) -> EdgeHistogram:
    """Cell histogram of scores in [0, 1] over the public ``edges`` (one pass, no sort).

    Parameters
    ----------
    scores : array-like of shape (N,) or EdgeHistogram
        Scores in [0, 1]; an :class:`EdgeHistogram` over the same edges (for
        instance the sum of per-partition histograms) is returned unchanged.
    edges : ndarray of shape (L,)
        Strictly increasing public edges.
    validated : bool
        Skip the [0, 1] check (the caller has done it); a real ``bool``
        (the string ``"False"`` is refused, not read as true).

    Returns
    -------
    EdgeHistogram
    """
    validated = check_bool(validated, "validated")
    edges = np.asarray(edges, dtype=float)
    if isinstance(scores, EdgeHistogram):
        if not scores.matches(edges):
            raise ValueError("the score histogram was counted over other edges than this release uses; "
                             "count it over the release's edges (same bins or m)")
        return scores
    grid = _uniform_grid(edges)
    if grid is None:
        values = scores if validated else check_unit_scores(scores)
        counts = np.bincount(_codes_exact(values, edges), minlength=2 * edges.size + 1).astype(np.int64)
        return EdgeHistogram(edges, counts)
    values = _as_float_vector(scores)
    counts = None if values is None else _histogram_uniform(values, edges, *grid, check=not validated)
    if counts is None:      # not a float vector in [0, 1]: the standard message, or the converted scores
        counts = _histogram_uniform(check_unit_scores(scores), edges, *grid, check=False)
    return EdgeHistogram(edges, counts)


def merge_histograms(histograms) -> EdgeHistogram:
    """Sum histograms of disjoint parts of the data, counted over the same edges."""
    histograms = list(histograms)
    if not histograms:
        raise ValueError("no histograms to merge")
    edges = histograms[0].edges
    for h in histograms[1:]:
        if not h.matches(edges):
            raise ValueError("histograms counted over different edges cannot be merged")
    return EdgeHistogram(edges, np.sum([h.counts for h in histograms], axis=0))


def below_above(hist: EdgeHistogram) -> tuple[np.ndarray, np.ndarray]:
    """:math:`a_i = \\#\\{s < e_i\\}` and :math:`b_i = \\#\\{s > e_i\\}` for every edge (Algorithm 1, chapter 3)."""
    c = hist.counts
    through = np.cumsum(c)                   # through[k] = #{code <= k}
    below = through[0::2][:-1]               # #{code <= 2i}: strictly below e_i
    above = through[-1] - through[1::2]      # N - #{code <= 2i + 1}: strictly above e_i
    return below, above


def round_up_counts(hist: EdgeHistogram) -> np.ndarray:
    """Counts of the scores rounded up to the smallest edge strictly above them, capped at the top (chapter 4).

    A score inside :math:`(e_{i-1}, e_i)` moves to :math:`e_i`, a score on :math:`e_i`
    to :math:`e_{i+1}`; everything at or above the top edge stays on the top edge.
    """
    c = hist.counts
    size = hist.edges.size
    out = c[0:2 * size:2].copy()             # open cell below e_i -> e_i
    out[1:] += c[1:2 * size - 2:2]           # on e_{i-1} -> e_i
    out[-1] += c[2 * size - 1] + c[2 * size]  # on or above the top edge -> top edge
    return out


# --------------------------------------------------------------------------- depth statistics (chapter 14)
# The candidate mechanism of chapter 10 needs the depth of every public candidate. For halfspace depth
# over public directions and for integrated dual depth these are functions of per-(candidate, direction)
# counts, for spatial depth of per-candidate sums of unit vectors: all of them add across partitions.

def projection_counts(data: np.ndarray, points_proj: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Counts :math:`\\#\\{i : u_j^\\top X_i < u_j^\\top c_k\\}` and :math:`\\#\\{i : u_j^\\top X_i > u_j^\\top c_k\\}`.

    Parameters
    ----------
    data : ndarray of shape (n, d)
        One partition of the data.
    points_proj : ndarray of shape (K, m)
        Projections of the public candidates on the public directions.
    directions : ndarray of shape (m, d)
        Unit directions (public).

    Returns
    -------
    ndarray of shape (2, K, m), int64
        ``[below, above]``; both add across partitions.
    """
    from ._depth_core import project

    proj = np.sort(project(data, directions), axis=0)
    n = proj.shape[0]
    out = np.empty((2,) + points_proj.shape, dtype=np.int64)
    for j in range(directions.shape[0]):
        out[0, :, j] = np.searchsorted(proj[:, j], points_proj[:, j], side="left")
        out[1, :, j] = n - np.searchsorted(proj[:, j], points_proj[:, j], side="right")
    return out


def halfspace_from_counts(counts: np.ndarray, n: int) -> np.ndarray:
    """Halfspace depth over the directions :math:`\\pm u_j` from the combined counts (chapter 9)."""
    worst = np.zeros(counts.shape[1], dtype=np.int64)
    for j in range(counts.shape[2]):
        np.maximum(worst, np.maximum(counts[0, :, j], counts[1, :, j]), out=worst)
    return (n - worst) / n


def idd_from_counts(counts: np.ndarray, n: int) -> np.ndarray:
    """Integrated dual depth :math:`\\frac1m\\sum_j F_j(1 - F_j)` from the combined counts (chapter 9)."""
    total = np.zeros(counts.shape[1])
    for j in range(counts.shape[2]):
        f = (n - counts[1, :, j]) / n               # F_j = #{u_j'X_i <= u_j'c}/n
        total += f * (1.0 - f)
    return total / counts.shape[2]


def spatial_sums(data: np.ndarray, points: np.ndarray) -> np.ndarray:
    """:math:`\\sum_i S(c_k - X_i)` for every candidate, :math:`S(v) = v/\\|v\\|`, :math:`S(0) = 0` (adds up).

    Each record's unit vector is computed from that record and the candidate alone:
    :math:`v = c_k - X_i` (one rounding per coordinate), divided by its norm (a record
    so close to the candidate that the squares underflow is first divided by its
    largest coordinate); :math:`v = 0` gives the zero vector. So every term has norm 1
    or 0 up to a few units in the last place, and replacing one record changes the sum
    by at most 2, up to the rounding of the (pairwise) summation. A closed form such as
    :math:`c_k \\sum_i W_{ki} - \\sum_i W_{ki} X_i` with :math:`W_{ki} = 1/\\|c_k - X_i\\|` is
    faster for large :math:`d` (a matrix product) but mixes the records: a record a few
    units in the last place from a candidate gets a weight near :math:`10^{16}`, the two
    large sums cancel, and their rounding error moves the depth by many times
    :math:`2/n` between neighbouring data sets. A candidate's value does not depend on
    how the candidates are blocked.
    """
    n, d = data.shape
    out = np.zeros((points.shape[0], d))
    records = max(1, _SPATIAL_BLOCK // (d + 1))              # records per pass: bounded memory at any n
    with np.errstate(over="ignore", invalid="ignore"):       # only data outside the domain overflow (refused)
        for lo in range(0, n, records):
            out += _unit_vector_sums(points, np.ascontiguousarray(data[lo:lo + records].T))
    return out


_SPATIAL_BLOCK = 2 ** 18    # elements per temporary of the spatial sums ((d + 1) of them): they stay in the caches
_TINY_SQUARE = 1e-290       # a squared norm below this may have lost its small coordinates' squares to underflow


def _unit_vector_sums(points: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """:func:`spatial_sums` over the records ``cols`` (shape (d, r): a row per coordinate)."""
    d, r = cols.shape
    q = points.shape[0]
    out = np.empty((q, d))
    rows = max(1, _SPATIAL_BLOCK // (r * (d + 1)))             # candidates per block
    diff, norm = np.empty((d, min(rows, q), r)), np.empty((min(rows, q), r))
    for start in range(0, q, rows):
        c = points[start:start + rows]
        b = c.shape[0]
        v, w = diff[:, :b], norm[:b]
        for j in range(d):
            np.subtract(c[:, j, None], cols[j], out=v[j])
        np.einsum("jbr,jbr->br", v, v, out=w)                  # squared norms
        small = w < _TINY_SQUARE
        if small.any():                                        # made unit vectors (or 0) here, with w = 1
            _unit_small(v, w, small)
        np.sqrt(w, out=w)
        np.divide(1.0, w, out=w)
        for j in range(d):
            np.multiply(v[j], w, out=v[j])
            out[start:start + b, j] = v[j].sum(axis=1)         # a contiguous row per candidate: pairwise
    return out


def _unit_small(v: np.ndarray, w: np.ndarray, small: np.ndarray) -> None:
    """Differences too small to square: each divided by its largest coordinate, then by its norm; 0 stays 0."""
    t = v[:, small]
    top = np.abs(t).max(axis=0)
    zero = top == 0.0                                          # the record is the candidate: S(0) = 0
    top[zero] = 1.0
    t /= top
    length = np.sqrt((t * t).sum(axis=0))
    length[zero] = 1.0
    v[:, small] = t / length
    w[small] = 1.0


def spatial_from_sums(sums: np.ndarray, n: int) -> np.ndarray:
    """Spatial depth :math:`1 - \\|\\frac1n\\sum_i S(c - X_i)\\|` from the combined sums (chapter 9)."""
    return np.clip(1.0 - np.linalg.norm(sums, axis=1) / n, 0.0, 1.0)


# --------------------------------------------------------------------------- geometric grids (chapter 18)

#: The one message of a score that cannot be counted on a geometric grid (it quotes no value and no count).
BAD_GRID_SCORES = ("scores must be real numbers at or above `lower` (NaN is not a score); clip model outputs to the "
               "public lower end first, e.g. np.maximum(scores, lower), and map missing scores to np.inf")


_GRID_BLOCK = 2 ** 16   # scores per block of the grid counts


def _grid_cells(values: np.ndarray, ext: np.ndarray, lower: float, unit: float, log_g: float,
                buf: np.ndarray, kbuf: np.ndarray) -> np.ndarray:
    """``#{k : t_k < s}`` for every value (the cell index), by a logarithm corrected against the grid.

    ``ext`` is the grid with sentinels, :math:`(-\\infty, t_0, \\dots, t_{K-1}, +\\infty)`, so that the
    cell ``k`` of ``s`` is right when ``ext[k] < s <= ext[k + 1]``. The logarithm only guesses (it may be
    off by a cell near a candidate); the comparisons with the candidates themselves decide.
    """
    size = ext.size - 2
    b = values.size
    guess, k = buf[:b], kbuf[:b]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        np.subtract(values, lower, out=guess)
        guess *= 1.0 / unit
        np.log1p(guess, out=guess)
        guess *= 1.0 / log_g
        np.ceil(guess, out=guess)
        np.clip(guess, 0, size, out=guess)
    np.copyto(k, guess, casting="unsafe")
    for _ in range(64):      # the logarithm is off by at most one cell in practice; fix every value exactly
        up = values > np.take(ext, k + 1)
        down = values <= np.take(ext, k)
        if not (up.any() or down.any()):
            return k
        k += up
        k -= down
    return np.searchsorted(ext[1:-1], values, side="left")   # pragma: no cover - never reached on a valid grid


def grid_counts(values: np.ndarray, grid: np.ndarray, lower: float, unit: float, growth: float):
    """The counts of a 1-D float array on the cells of a geometric grid, or ``None`` if a value is NaN or below ``lower``.

    The grid is :func:`dpcp_tutorial.unbounded_grid`'s, :math:`t_k = \\mathrm{lower} + \\mathrm{unit}
    (g^k - 1)`; entry ``k`` counts the scores in :math:`(t_{k-1}, t_k]` and the last one those above every
    candidate (chapter 18). Counts of disjoint parts add up (chapter 14).
    """
    counts = np.zeros(grid.size + 1, dtype=np.int64)
    log_g = math.log(growth)
    ext = np.concatenate(([-math.inf], grid, [math.inf]))
    block = min(_GRID_BLOCK, values.size)
    buf, kbuf = np.empty(block), np.empty(block, dtype=np.intp)
    for start in range(0, values.size, _GRID_BLOCK):
        part = values[start:start + _GRID_BLOCK]
        if not part.min() >= lower:          # NaN fails too
            return None
        counts += np.bincount(_grid_cells(part, ext, lower, unit, log_g, buf, kbuf), minlength=grid.size + 1)
    return counts
