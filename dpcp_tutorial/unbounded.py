"""Private conformal threshold without an upper score bound: AboveThreshold on a geometric grid (chapter 18).

The private quantile of chapter 3 needs a public bound :math:`B` on the
scores. Following Durfee (2023, "Unbounded differentially private quantile and
maximum estimation"), this module needs only a public *lower* end (0 for
conformal scores): the candidates grow geometrically,

.. math:: t_k = \\ell + u\\,(g^k - 1), \\qquad k = 0, \\dots, K - 1,

(``lower`` :math:`\\ell`, ``unit`` :math:`u`, ``growth`` :math:`g`,
``max_steps`` :math:`K`) and AboveThreshold walks up the grid, stopping at the
first candidate whose noisy count of scores *above* it falls below a noisy
target:

.. math:: \\hat q = t_{\\hat k}, \\qquad
          \\hat k = \\min\\{k : a_k + \\nu_k \\le m + \\rho\\}, \\qquad a_k = \\#\\{i : s_i > t_k\\},

with :math:`\\rho \\sim \\mathrm{Lap}(1/\\varepsilon_1)`,
:math:`\\nu_k \\sim \\mathrm{Lap}(1/\\varepsilon_2)` i.i.d.,
:math:`\\varepsilon_1 = \\sigma\\varepsilon` (``threshold_share`` :math:`\\sigma`)
and :math:`\\varepsilon_2 = \\varepsilon - \\varepsilon_1`. If no candidate passes,
the release is :math:`+\\infty` (the trivial threshold, which always covers).

**Privacy** (:func:`unbounded_quantile_privacy_loss`). Write
:math:`g_k = m - a_k`. *Lemma*: if for two data sets every difference
:math:`g'_k - g_k` lies in one interval :math:`[c, c + 1]`, the log-ratio of the
probabilities of every outcome is at most
:math:`\\varepsilon_2 + \\varepsilon_1\\max(|c|, |c + 1|)`. (Shift the threshold
noise by :math:`c + 1`, the largest difference: every "not yet" comparison
stays true, the stopping comparison moves by at most 1, which costs
:math:`\\varepsilon_2`, and the shift costs :math:`\\varepsilon_1|c + 1|`; the other
direction shifts by :math:`-c`.) Replacing one score moves every :math:`a_k`
by 0 or by the same :math:`\\pm 1` (the counts are monotone in the score), so
:math:`c \\in \\{-1, 0\\}` and the loss is :math:`\\varepsilon`: **replace-one,
and add/remove with a public** ``n`` (the counts are subsampled or padded with
:math:`+\\infty` to exactly ``n`` records, which turns adding or removing into
a replacement). Adding a record with ``n=None`` moves every :math:`a_k` by 0
or 1 and the target by :math:`\\Delta m = m(N+1) - m(N)`:
the loss is :math:`\\varepsilon_2 + \\varepsilon_1\\max(|\\Delta m|, |1 - \\Delta m|)`,
which is at most :math:`\\varepsilon` when :math:`0 \\le \\Delta m \\le 1`.

**Coverage** (:func:`unbounded_quantile_miscoverage_bound`). Let
:math:`W = \\min_k \\nu_k - \\rho`. A release with at least :math:`j` scores above
it needs a stop at a candidate with :math:`a_k \\ge j`, hence
:math:`W \\le m - j`; so, whatever the data,
:math:`P(a(\\hat q) \\ge j) \\le P(W \\le m - j)`. A missed test score has at
least as many calibration scores above :math:`\\hat q` as its own rank from the
top, which is uniform on :math:`\\{0, \\dots, n\\}` for exchangeable scores (ties
broken at random). Hence

.. math:: P(R_{n+1} > \\hat q) \\le \\frac{1}{n + 1}\\Big(1 + \\sum_{j=1}^{n} P(W \\le m - j)\\Big)
          = \\frac{1 + E\\,[\\min(n, \\max(0, \\lfloor m - W\\rfloor))]}{n + 1},

and the target :math:`m` (:func:`unbounded_quantile_target`) is the largest
value for which an upper bound of the right-hand side, computed on a lattice
from the exact laws of :math:`\\min_k \\nu_k` and :math:`\\rho`, is at most
:math:`\\beta`. The bound holds for every exchangeable score distribution,
ties included, and at every data size when ``n`` is public (pads lie above
every candidate).

Counting is one pass over the scores (:func:`unbounded_histogram`: the cell
of every score on the grid by a logarithm, checked against the grid), then
:math:`O(K)` work; histograms of disjoint parts add up, so the release is the
same on partitioned data (:func:`dpcp_tutorial.scale.unbounded_private_quantile`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ._validation import (
    MAX_MAGNITUDE,
    MAX_RECORDS,
    RandomLike,
    real_array,
    check_alpha,
    check_bool,
    check_choice,
    check_epsilon,
    check_positive_int,
    check_scalar,
)
from ._counts import BAD_GRID_SCORES, grid_counts
from ._mechanism_core import above_threshold, above_threshold_log_law, gauss_legendre
from .mechanisms import check_sampler

__all__ = [
    "GridHistogram",
    "unbounded_grid",
    "unbounded_histogram",
    "unbounded_quantile_target",
    "unbounded_quantile_miscoverage_bound",
    "unbounded_quantile_privacy_loss",
    "unbounded_quantile_probabilities",
    "unbounded_private_quantile",
]

GROWTH = 1.005          # default relative precision of the candidates: 0.5 %
MAX_STEPS = 20_000      # default number of candidates: u (g^K - 1) ~ 2e43 u
THRESHOLD_SHARE = 0.25  # default share of epsilon spent on the noisy target
_MAX_STEPS_LIMIT = 10 ** 6
_MARGIN = 1e-9          # added to the computed miscoverage bound: covers floating-point error in the lattice sums
_TAIL = 45.0            # lattice ranges reach 45 noise scales: the mass left out is below e^-45 (and is counted)
_LATTICE = 2 ** 15      # lattice cells per noise law


# --------------------------------------------------------------------------- public parameters

def _check_grid_parameters(lower, unit, growth, max_steps):
    lower = check_scalar(lower, "lower", hint="the public smallest possible score, e.g. 0 for conformal scores")
    unit = check_scalar(unit, "unit", low=0.0, hint="the public scale of the first candidates (t_k = lower + "
                        "unit (growth^k - 1)); 1.0 unless the scores are known to be tiny")
    growth = check_scalar(growth, "growth", low=1.0, high=16.0, hint="the ratio between consecutive candidates, "
                          "e.g. 1.01 for 1 % relative precision")
    max_steps = check_positive_int(max_steps, "max_steps", maximum=_MAX_STEPS_LIMIT)
    return lower, unit, growth, max_steps


@lru_cache(maxsize=64)
def _grid(lower: float, unit: float, growth: float, max_steps: int) -> np.ndarray:
    log_g = math.log(growth)
    top = unit * math.expm1(min((max_steps - 1) * log_g, 709.0))
    if not (lower + top <= MAX_MAGNITUDE and (max_steps - 1) * log_g < 709.0):
        raise ValueError(f"the top candidate lower + unit*(growth^(max_steps-1) - 1) exceeds {MAX_MAGNITUDE:g} "
                         f"(lower={lower:g}, unit={unit:g}, growth={growth:g}, max_steps={max_steps}); "
                         "use fewer steps or a smaller unit")
    k = np.arange(max_steps)
    with np.errstate(over="ignore"):
        # growth^k - 1: by expm1 near k = 0 (no cancellation), by the power above (exact for powers of two)
        grid = lower + unit * np.where(k * log_g < 0.5, np.expm1(k * log_g), np.power(growth, k) - 1.0)
    if max_steps > 1 and not np.all(np.diff(grid) > 0):
        raise ValueError(f"the candidates lower + unit*(growth^k - 1) are not strictly increasing in floating point "
                         f"(lower={lower:g}, unit={unit:g}, growth={growth:g}): unit*(growth - 1) is below the "
                         "rounding step of lower; use a larger unit or growth, or shift the scores")
    grid.setflags(write=False)
    return grid


def unbounded_grid(lower: float = 0.0, unit: float = 1.0, growth: float = GROWTH,
                   max_steps: int = MAX_STEPS) -> np.ndarray:
    """The public candidates :math:`t_k = \\ell + u\\,(g^k - 1)`, :math:`k = 0, \\dots, K - 1` (chapter 18).

    Parameters
    ----------
    lower : float, default=0.0
        Public lower end :math:`\\ell` of the scores (0 for conformal scores).
    unit : float, default=1.0
        Public scale :math:`u` of the first steps: :math:`t_1 - t_0 = u(g - 1)`.
    growth : float, default=1.005
        Ratio :math:`g \\in (1, 16)`: above :math:`\\ell + u`, consecutive
        candidates differ by the factor :math:`g` at most.
    max_steps : int, default=20000
        Number of candidates :math:`K` (at most :math:`10^6`).

    Returns
    -------
    ndarray of shape (K,)
        Strictly increasing, finite, at most 1e100 (refused otherwise, from the
        public parameters only).

    Examples
    --------
    >>> unbounded_grid(growth=2.0, max_steps=5)
    array([ 0.,  1.,  3.,  7., 15.])
    """
    return _grid(*_check_grid_parameters(lower, unit, growth, max_steps))


# --------------------------------------------------------------------------- counting

@dataclass(frozen=True, eq=False)
class GridHistogram:
    """Counts of scores on the cells of a geometric grid (the only view of the data the release uses).

    ``counts[k]`` is :math:`\\#\\{s : t_{k-1} < s \\le t_k\\}` (with :math:`t_{-1} = -\\infty`)
    for :math:`k < K` and ``counts[K]`` is :math:`\\#\\{s > t_{K-1}\\}`. Histograms of
    disjoint parts of the data over the same grid add up.

    Attributes
    ----------
    grid : ndarray of shape (K,)
        The candidates :math:`t_k` (:func:`unbounded_grid`).
    counts : ndarray of shape (K + 1,)
        The counts of the cells, the last one above every candidate.

    Examples
    --------
    >>> a = unbounded_histogram([0.5, 1.5, 2.5, 10.0], growth=2.0, max_steps=5)
    >>> b = unbounded_histogram([0.2], growth=2.0, max_steps=5)
    >>> a.counts, (a + b).counts, (a + b).size
    (array([0, 1, 2, 0, 1, 0]), array([0, 2, 2, 0, 1, 0]), 5)
    """

    grid: np.ndarray
    counts: np.ndarray

    @property
    def size(self) -> int:
        """Number of scores counted."""
        return int(self.counts.sum())

    def __add__(self, other: "GridHistogram") -> "GridHistogram":
        if not isinstance(other, GridHistogram) or not _same_grid(self.grid, other.grid):
            raise ValueError("only histograms counted over the same grid can be added")
        return GridHistogram(self.grid, self.counts + other.counts)


def _same_grid(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.shape == b.shape and bool(np.array_equal(a, b)))


def unbounded_histogram(scores, lower: float = 0.0, unit: float = 1.0, growth: float = GROWTH,
                        max_steps: int = MAX_STEPS, *, allow_empty: bool = False) -> GridHistogram:
    """Counts of the scores on the cells of :func:`unbounded_grid` (one pass, no sort; chapter 18).

    Scores are real numbers at or above ``lower``; :math:`+\\infty` is allowed (it lies
    above every candidate). NaN and values below ``lower`` are refused with one
    fixed message (the same for every such data set: it quotes no value and no
    count). A :class:`GridHistogram` over the same grid is returned unchanged.

    Parameters
    ----------
    scores : array-like of shape (N,) or GridHistogram
        The scores, real numbers at or above ``lower`` (``np.inf`` allowed).
    lower : float, default=0.0
        Public lower end of the scores (:func:`unbounded_grid`).
    unit : float, default=1.0
        Public scale of the first steps of the grid.
    growth : float, default=1.005
        Ratio of the grid.
    max_steps : int, default=20000
        Number of candidates :math:`K`.
    allow_empty : bool, default=False
        Whether an empty ``scores`` is counted (all counts 0) rather than refused.

    Returns
    -------
    GridHistogram
        The counts of the cells of the grid.

    Examples
    --------
    >>> h = unbounded_histogram([0.5, 1.5, 2.5, 10.0], growth=2.0, max_steps=5)
    >>> h.grid, h.counts
    (array([ 0.,  1.,  3.,  7., 15.]), array([0, 1, 2, 0, 1, 0]))
    """
    lower, unit, growth, max_steps = _check_grid_parameters(lower, unit, growth, max_steps)
    allow_empty = check_bool(allow_empty, "allow_empty")
    grid = _grid(lower, unit, growth, max_steps)
    if isinstance(scores, GridHistogram):
        if not _same_grid(scores.grid, grid):
            raise ValueError("the score histogram was counted over another grid than this release uses; count it "
                             "with the same lower, unit, growth and max_steps")
        return scores
    values = real_array(scores, "scores")
    if values.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got a {values.ndim}-D array; use .ravel() if that is "
                         "intended")
    if values.size == 0 and not allow_empty:
        raise ValueError("scores is empty; at least one score is needed (or pass the public n)")
    counts = grid_counts(values, grid, lower, unit, growth)
    if counts is None:
        raise ValueError(BAD_GRID_SCORES)
    return GridHistogram(grid, counts)


def _at_public_size(hist: GridHistogram, n: int | None, gen) -> GridHistogram:
    """Exactly ``n`` counted scores: a uniform ``n``-subset (from the counts), or pads at :math:`+\\infty`."""
    if n is None:
        return hist
    size = hist.size
    if size == n:
        return hist
    if size > n:
        gen = np.random.default_rng() if gen is None else gen
        counts = gen.multivariate_hypergeometric(hist.counts, n)
    else:
        counts = hist.counts.copy()
        counts[-1] += n - size           # pads lie above every candidate
    return GridHistogram(hist.grid, np.asarray(counts, dtype=np.int64))


# --------------------------------------------------------------------------- calibration of the target

def _check_share(threshold_share) -> float:
    return check_scalar(threshold_share, "threshold_share", low=0.0, high=1.0,
                        hint="the share of epsilon spent on the noisy target, e.g. 0.5")


def _laplace_cdf(x: np.ndarray, b: float) -> np.ndarray:
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b), -0.5 * np.expm1(-np.maximum(x, 0) / b) + 0.5)


def _min_laplace_cdf(x: np.ndarray, b: float, k: int) -> np.ndarray:
    """CDF of the minimum of ``k`` i.i.d. Laplace(b): :math:`1 - (1 - F(x))^k`, without cancellation."""
    with np.errstate(divide="ignore"):
        log_survival = np.where(x < 0, np.log1p(-0.5 * np.exp(np.minimum(x, 0) / b)),
                                math.log(0.5) - np.maximum(x, 0) / b)
    return -np.expm1(k * log_survival)


@lru_cache(maxsize=64)
def _w_lattice(eps1: float, eps2: float, steps: int):
    """Lattice law bounding :math:`W = \\min_k \\nu_k - \\rho` from below.

    Returns ``(w, pmf, p_low)``: :math:`W \\ge W_\\mathrm{lo}` where :math:`W_\\mathrm{lo}` takes the
    lattice value ``w[i]`` with probability ``pmf[i]`` and :math:`-\\infty` with probability
    ``p_low`` (an upper bound of the mass below the lattice). Each of :math:`X = \\min_k \\nu_k` and
    :math:`Y = -\\rho` is rounded down to the lattice of step ``h`` (mass above the range goes to
    the top point, mass below to :math:`-\\infty`); the sum of the two rounded variables is at most
    :math:`W`, and its law is the convolution of theirs.
    """
    b1, b2 = 1.0 / eps1, 1.0 / eps2
    x_lo, x_hi = -b2 * (math.log(steps) + _TAIL), b2 * _TAIL
    y_lo, y_hi = -b1 * _TAIL, b1 * _TAIL
    h = max(x_hi - x_lo, y_hi - y_lo) / _LATTICE
    nx = int(math.ceil((x_hi - x_lo) / h)) + 1
    ny = int(math.ceil((y_hi - y_lo) / h)) + 1
    xs = x_lo + h * np.arange(nx)
    ys = y_lo + h * np.arange(ny)
    fx = _min_laplace_cdf(xs, b2, steps)
    fy = _laplace_cdf(ys, b1)
    px = np.diff(np.append(fx, 1.0))      # P(X in [x_i, x_{i+1})), the last point takes everything above
    py = np.diff(np.append(fy, 1.0))
    size = px.size + py.size - 1
    fft_size = 1 << (size - 1).bit_length()
    pmf = np.fft.irfft(np.fft.rfft(px, fft_size) * np.fft.rfft(py, fft_size), fft_size)[:size]
    pmf = np.maximum(pmf, 0.0)            # the convolution by FFT: rounding errors of ~1e-16 (in _MARGIN)
    w = x_lo + y_lo + h * np.arange(pmf.size)
    p_low = float(fx[0] + fy[0])
    return w, pmf, p_low


def _bound_at(m: float, n: int, w: np.ndarray, pmf: np.ndarray, p_low: float) -> float:
    counts = np.clip(np.floor(m - w), 0, n)
    return (1.0 + n * p_low + float(pmf @ counts)) / (n + 1) + _MARGIN


def unbounded_quantile_miscoverage_bound(m: float, n: int, epsilon: float, max_steps: int = MAX_STEPS,
                                         threshold_share: float = THRESHOLD_SHARE) -> float:
    """Proven miscoverage bound of :func:`unbounded_private_quantile` at target ``m`` (chapter 18).

    .. math:: P(R_{n+1} > \\hat q) \\le \\frac{1 + E\\,[\\min(n, \\max(0, \\lfloor m - W\\rfloor))]}{n + 1},
              \\qquad W = \\min_{k < K} \\nu_k - \\rho,

    for every exchangeable score distribution (ties included), every grid of
    ``max_steps`` candidates and, with a public ``n``, every data size. The
    expectation is bounded above on a lattice (:math:`W` rounded down, laws
    convolved exactly up to floating point; :math:`10^{-9}` is added for
    rounding), so the returned value is an upper bound of the right-hand side.

    Parameters
    ----------
    m : float
        The target (a number of scores above the release).
    n : int
        The number of calibration scores.
    epsilon : float
        Privacy budget of the release.
    max_steps : int, default=20000
        Number of candidates :math:`K` of the grid.
    threshold_share : float, default=0.25
        Share :math:`\\sigma` of ``epsilon`` spent on the noisy target.

    Returns
    -------
    float
        The bound, at most 1.

    Examples
    --------
    >>> round(unbounded_quantile_miscoverage_bound(50.0, n=1000, epsilon=1.0), 4)
    0.0635
    """
    m = check_scalar(m, "m")
    n = check_positive_int(n, "n", maximum=MAX_RECORDS)
    epsilon = check_epsilon(epsilon)
    max_steps = check_positive_int(max_steps, "max_steps", maximum=_MAX_STEPS_LIMIT)
    share = _check_share(threshold_share)
    w, pmf, p_low = _w_lattice(share * epsilon, (1.0 - share) * epsilon, max_steps)
    return min(1.0, _bound_at(m, n, w, pmf, p_low))


@lru_cache(maxsize=256)
def _target(beta: float, n: int, epsilon: float, max_steps: int, share: float) -> float:
    w, pmf, p_low = _w_lattice(share * epsilon, (1.0 - share) * epsilon, max_steps)
    lo = float(w[0]) - 1.0                      # every floor(m - w) <= 0: the bound is (1 + n p_low)/(n + 1)
    if _bound_at(lo, n, w, pmf, p_low) > beta:
        n_min = n
        while _bound_at(lo, n_min, w, pmf, p_low) > beta and n_min < MAX_RECORDS:
            n_min *= 2
        low_n = n_min // 2
        while n_min - low_n > 1:
            mid = (low_n + n_min) // 2
            low_n, n_min = (low_n, mid) if _bound_at(lo, mid, w, pmf, p_low) <= beta else (mid, n_min)
        raise ValueError(f"no target guarantees miscoverage beta={beta:.6g} with n={n} scores (even a release "
                         f"of +inf every time misses 1/(n+1) of test points); use at least n={n_min} scores or a "
                         "larger beta")
    hi = float(w[-1]) + n + 1.0                  # every floor(m - w) >= n: the bound is at least 1
    for _ in range(200):
        if hi - lo <= 1e-9 * max(1.0, abs(lo)):
            break
        mid = 0.5 * (lo + hi)
        if _bound_at(mid, n, w, pmf, p_low) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


def unbounded_quantile_target(beta: float, n: int, epsilon: float, max_steps: int = MAX_STEPS,
                              threshold_share: float = THRESHOLD_SHARE) -> float:
    """The target :math:`m` of :func:`unbounded_private_quantile`: the largest with a proven miscoverage :math:`\\le \\beta`.

    Found by bisection on :func:`unbounded_quantile_miscoverage_bound` (which
    increases with :math:`m`); it depends only on public inputs. Roughly
    :math:`m \\approx \\beta(n + 1) - 1 - \\log(K/2)/\\varepsilon_2`: the price of
    not knowing where the data are is the expected minimum of :math:`K`
    Laplace variables.

    Parameters
    ----------
    beta : float
        Miscoverage level in (0, 1).
    n : int
        The number of calibration scores.
    epsilon : float
        Privacy budget of the release.
    max_steps : int, default=20000
        Number of candidates :math:`K` of the grid.
    threshold_share : float, default=0.25
        Share :math:`\\sigma` of ``epsilon`` spent on the noisy target.

    Returns
    -------
    float
        The target :math:`m`.

    Raises
    ------
    ValueError
        If no target works (:math:`\\beta(n + 1) < 1`, essentially); the message
        names the smallest ``n``.

    Examples
    --------
    >>> round(unbounded_quantile_target(0.1, n=1000, epsilon=1.0), 2)
    86.54
    """
    beta = check_alpha(beta, "beta")
    n = check_positive_int(n, "n", maximum=MAX_RECORDS)
    epsilon = check_epsilon(epsilon)
    max_steps = check_positive_int(max_steps, "max_steps", maximum=_MAX_STEPS_LIMIT)
    share = _check_share(threshold_share)
    return _target(float(beta), n, float(epsilon), max_steps, float(share))


def unbounded_quantile_privacy_loss(beta: float, n: int, epsilon: float, max_steps: int = MAX_STEPS,
                                    threshold_share: float = THRESHOLD_SHARE, *, relation: str = "replace-one",
                                    public_n: bool = True) -> float:
    """Privacy loss of :func:`unbounded_private_quantile` under a neighbour relation (chapter 18).

    ``relation="replace-one"`` (sizes equal), or ``"add/remove"`` with a public
    ``n`` (``public_n=True``: the counts are first subsampled or padded to exactly
    ``n``, which turns adding or removing into a replacement at size ``n``):
    :math:`\\varepsilon`. ``"add/remove"`` with ``public_n=False`` (the target
    recomputed from each data set's own size, :math:`N = n` and :math:`n + 1`):
    :math:`\\varepsilon_2 + \\varepsilon_1\\max(|\\Delta m|, |1 - \\Delta m|)` with
    :math:`\\Delta m = m(n + 1) - m(n)`, at most :math:`\\varepsilon` when
    :math:`0 \\le \\Delta m \\le 1`. See the module docstring for the proof.

    Parameters
    ----------
    beta : float
        Miscoverage level in (0, 1).
    n : int
        The number of calibration scores.
    epsilon : float
        Privacy budget of the release.
    max_steps : int, default=20000
        Number of candidates :math:`K` of the grid.
    threshold_share : float, default=0.25
        Share :math:`\\sigma` of ``epsilon`` spent on the noisy target.
    relation : {"replace-one", "add/remove"}, default="replace-one"
        The neighbour relation.
    public_n : bool, default=True
        Whether the release is given the public ``n``.

    Returns
    -------
    float
        The privacy loss.

    Examples
    --------
    >>> unbounded_quantile_privacy_loss(0.1, n=1000, epsilon=1.0)
    1.0
    >>> loss = unbounded_quantile_privacy_loss(0.1, n=1000, epsilon=1.0,
    ...                                        relation="add/remove", public_n=False)
    >>> round(loss, 4)
    0.9752
    """
    relation = check_choice(relation, "relation", ("replace-one", "add/remove"))
    public_n = check_bool(public_n, "public_n")
    epsilon = check_epsilon(epsilon)
    share = _check_share(threshold_share)
    m0 = unbounded_quantile_target(beta, n, epsilon, max_steps, share)
    if relation == "replace-one" or public_n:
        return epsilon
    m1 = unbounded_quantile_target(beta, n + 1, epsilon, max_steps, share)
    d = m1 - m0
    return (1.0 - share) * epsilon + share * epsilon * max(abs(d), abs(1.0 - d))


# --------------------------------------------------------------------------- the release

METHODS = ("above_threshold", "two_stage")
BOUND_SHARE = 0.2       # two_stage: the share of epsilon spent on the private bound


def _prepare(scores, beta, epsilon, lower, unit, growth, max_steps, threshold_share, n, gen, level_n=None):
    beta = check_alpha(beta, "beta")
    epsilon = check_epsilon(epsilon)
    lower, unit, growth, max_steps = _check_grid_parameters(lower, unit, growth, max_steps)
    share = _check_share(threshold_share)
    if n is not None:
        n = check_positive_int(n, "n", maximum=MAX_RECORDS)
    hist = unbounded_histogram(scores, lower, unit, growth, max_steps, allow_empty=n is not None)
    if n is None and hist.size == 0:
        raise ValueError("scores is empty; at least one score is needed (or pass the public n)")
    hist = _at_public_size(hist, n, gen)
    size = hist.size
    m = unbounded_quantile_target(beta, size if level_n is None else level_n, epsilon, max_steps, share)
    above = size - np.cumsum(hist.counts)[:max_steps]          # a_k = #{s > t_k}
    return hist.grid, above, m, share * epsilon, (1.0 - share) * epsilon


def unbounded_private_quantile(scores, beta: float, epsilon: float, *, lower: float = 0.0, unit: float = 1.0,
                               growth: float = GROWTH, max_steps: int = MAX_STEPS,
                               threshold_share: float = THRESHOLD_SHARE, n: int | None = None,
                               rng: RandomLike = None, method: str = "above_threshold",
                               sampler: str = "numpy", bound_share: float = BOUND_SHARE,
                               bins: int = 1000) -> float:
    """:math:`\\varepsilon`-DP conformal threshold of scores with no upper bound (chapter 18).

    AboveThreshold over the geometric candidates of :func:`unbounded_grid`:
    the release is the first :math:`t_k` with :math:`a_k + \\nu_k \\le m + \\rho`
    (:math:`a_k` the number of scores above :math:`t_k`), or :math:`+\\infty` if
    none passes. Privacy and coverage are proved in the module docstring:

    * :math:`\\varepsilon`-DP under replace-one (size public), and under
      add/remove with a public ``n``; with ``n=None`` under add/remove see
      :func:`unbounded_quantile_privacy_loss` (``public_n=False``).
    * :math:`P(R_{n+1} \\le \\hat q) \\ge 1 - \\beta` for exchangeable scores, ties
      included, at every data size when ``n`` is public.

    Cost :math:`O(N + K)`: one counting pass (:func:`unbounded_histogram`),
    then the noise and one comparison per candidate.

    Parameters
    ----------
    scores : array-like of shape (N,) or GridHistogram
        Non-conformity scores, real numbers at or above ``lower`` (``np.inf``
        allowed); or their histogram on the same grid (partitioned data).
    beta : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of the release.
    lower : float, default=0.0
        Public lower end of the scores (:func:`unbounded_grid`).
    unit : float, default=1.0
        Public scale of the first steps of the grid.
    growth : float, default=1.005
        Ratio of the grid: the relative precision of the release above
        ``lower + unit``.
    max_steps : int, default=20000
        Number of candidates :math:`K`; the price of more steps is a target
        lower by about :math:`\\log(K)/\\varepsilon_2` scores.
    threshold_share : float, default=0.25
        Share :math:`\\sigma \\in (0, 1)` of ``epsilon`` spent on the noisy target.
    n : int, default=None
        Public number of calibration scores. Given, the counts are subsampled
        (uniformly, from ``rng``) or padded with :math:`+\\infty` to exactly ``n``
        (an empty ``scores`` is allowed), and no error or branch depends on the
        data's own size. ``None``: the size of ``scores`` is public.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise (the threshold's first, then one variate per
        candidate, all drawn after counting). ``None`` for a real release
        (:term:`Seed`). Must be ``None`` with ``sampler="opendp"``.
    method : {"above_threshold", "two_stage"}, default="above_threshold"
        ``"above_threshold"`` (default): the one pass above. ``"two_stage"``:
        the rival -- a private bound :math:`\\hat B` from ``bound_share`` of
        ``epsilon`` (this function at level :math:`\\beta/2`), then chapter 3's
        tight quantile (:func:`dpcp_tutorial.private_quantile`, ``bins`` edges)
        on :math:`\\min(s/\\hat B, 1)` with the rest; its top edge releases
        :math:`+\\infty` (scores clipped to it may lie anywhere above
        :math:`\\hat B`). :math:`\\varepsilon`-DP by sequential composition
        (both relations with a public ``n``; with ``n=None`` add the two
        stages' own losses). Coverage :math:`\\ge 1 - \\beta`: for every
        :math:`\\hat B` the tight quantile's tail bound holds uniformly over the
        data, and a clipped score lies above an edge :math:`e_j < 1` exactly when
        the score lies above :math:`\\hat B e_j`. It reads the scores twice, so it
        takes an array, not a histogram. Measured in chapter 18: no narrower at
        :math:`n = 10^4` and often infinite at :math:`n = 10^3`, hence not the
        default.
    sampler : {"numpy", "opendp"}, default="numpy"
        ``"numpy"``: NumPy's Laplace variates. ``"opendp"``: OpenDP's exact
        Laplace sampler adds the same noise laws (:math:`\\rho` to the target,
        :math:`\\nu_k` to the counts, continuous Laplace rounded to floats), so
        the release has the law of the NumPy release.
    bound_share : float, default=0.2
        ``"two_stage"`` only: share of ``epsilon`` spent on the bound.
    bins : int, default=1000
        ``"two_stage"`` only: number of edges of the tight quantile.

    Returns
    -------
    float
        A candidate :math:`t_k`, or ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.abs(np.random.default_rng(0).normal(size=5000))
    >>> q = unbounded_private_quantile(s, beta=0.1, epsilon=1.0, rng=1)
    >>> 1.6 < q < 1.8
    True
    """
    sampler, gen = check_sampler(sampler, rng)
    method = check_choice(method, "method", METHODS, "'above_threshold' is the default (one pass), 'two_stage' "
                          "a private bound then the bounded tight quantile")
    _check_bound_share(bound_share)          # validated in both modes
    check_positive_int(bins, "bins", minimum=2, maximum=10 ** 6)
    if method == "two_stage":
        return _two_stage(scores, beta, epsilon, lower, unit, growth, max_steps, threshold_share, n, gen, sampler,
                          bound_share, bins)
    grid, above, m, eps1, eps2 = _prepare(scores, beta, epsilon, lower, unit, growth, max_steps,
                                          threshold_share, n, gen)
    k = above_threshold(above, m, 1.0 / eps1, 1.0 / eps2, gen, below=True, sampler=sampler)
    return math.inf if k is None else float(grid[k])


def _check_bound_share(bound_share) -> float:
    return check_scalar(bound_share, "bound_share", low=0.0, high=1.0,
                        hint="the share of epsilon spent on the private bound, e.g. 0.2")


def _two_stage(scores, beta, epsilon, lower, unit, growth, max_steps, threshold_share, n, gen, sampler,
               bound_share, bins):
    """A private bound from ``bound_share`` of epsilon, then the tight quantile on the clipped scores."""
    from .quantile import private_quantile

    beta = check_alpha(beta, "beta")
    epsilon = check_epsilon(epsilon)
    share = _check_bound_share(bound_share)
    bins = check_positive_int(bins, "bins", minimum=2, maximum=10 ** 6)
    lower = check_scalar(lower, "lower")
    if isinstance(scores, GridHistogram):
        raise TypeError("method='two_stage' reads the scores twice (the bound, then the clipped scores) and needs "
                        "them as an array, not a histogram; use method='above_threshold'")
    hist = unbounded_histogram(scores, lower, unit, growth, max_steps, allow_empty=n is not None)
    values = real_array(scores, "scores")
    rng = None if sampler == "opendp" else gen
    bound = unbounded_private_quantile(hist, beta / 2.0, share * epsilon, lower=lower, unit=unit, growth=growth,
                                       max_steps=max_steps, threshold_share=threshold_share, n=n, rng=rng,
                                       sampler=sampler)
    if not (math.isfinite(bound) and bound > lower):   # no scale for the second stage: the trivial threshold
        return math.inf
    # each score clipped to the released bound, then rescaled to [0, 1]; halved first, so that no difference
    # overflows, however large a score (an overflow would warn for one data set and not its neighbour)
    top = np.minimum(values, bound)
    clipped = np.minimum((top / 2.0 - lower / 2.0) / (bound / 2.0 - lower / 2.0), 1.0)
    q = private_quantile(clipped, beta, (1.0 - share) * epsilon, bins=bins, rng=rng, n=n, sampler=sampler)
    return math.inf if q >= 1.0 else float(lower + (bound - lower) * q)


# --------------------------------------------------------------------------- exact law (audits, chapter 18)

def unbounded_quantile_probabilities(scores, beta: float, epsilon: float, *, lower: float = 0.0,
                                     unit: float = 1.0, growth: float = GROWTH, max_steps: int = MAX_STEPS,
                                     threshold_share: float = THRESHOLD_SHARE, n: int | None = None,
                                     log: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exact output law of :func:`unbounded_private_quantile` on ``scores`` (chapter 18).

    .. math:: P(\\hat k = k) = \\int p_\\rho(r) \\prod_{j<k} P(\\nu_j > m + r - a_j)\\,
              P(\\nu_k \\le m + r - a_k)\\,dr,

    and :math:`P(\\hat q = +\\infty)` the integral of the product over all
    :math:`K` candidates. The integral is computed in log space by 64-point
    Gauss-Legendre rules between the kinks of the integrand (:math:`r = 0` and
    :math:`r = a_j - m`) and on a partition of :math:`\\pm 200` noise scales
    (relative accuracy near machine precision for moderate :math:`K`). The
    counts are those of ``scores`` as given (with a public ``n`` the release
    first subsamples or pads: its law is this one on the padded counts, or the
    average over subsets). Cost :math:`O(K^2)`: for audits on small grids.

    Parameters
    ----------
    scores : array-like of shape (N,) or GridHistogram
        The scores, as in :func:`unbounded_private_quantile`.
    beta : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of the release.
    lower : float, default=0.0
        Public lower end of the scores.
    unit : float, default=1.0
        Public scale of the first steps of the grid.
    growth : float, default=1.005
        Ratio of the grid.
    max_steps : int, default=20000
        Number of candidates :math:`K`.
    threshold_share : float, default=0.25
        Share of ``epsilon`` spent on the noisy target.
    n : int, default=None
        Public size whose target is used, on the counts as given; ``None``: the
        size of ``scores``.
    log : bool, default=False
        Return log-probabilities.

    Returns
    -------
    outcomes : ndarray of shape (K + 1,)
        The candidates, then ``inf``.
    probabilities : ndarray of shape (K + 1,)
        Their probabilities (or logarithms with ``log=True``).

    Examples
    --------
    >>> outcomes, p = unbounded_quantile_probabilities(
    ...     [0.5, 1.5, 2.5, 10.0], beta=0.5, epsilon=1.0, growth=2.0, max_steps=5)
    >>> outcomes, np.round(p, 3)
    (array([ 0.,  1.,  3.,  7., 15., inf]), array([0.159, 0.07 , 0.124, 0.06 , 0.078, 0.509]))
    """
    log = check_bool(log, "log")
    if n is not None:     # the target of the public size, on the counts as given
        n = check_positive_int(n, "n", maximum=MAX_RECORDS)
    grid, above, m, eps1, eps2 = _prepare(scores, beta, epsilon, lower, unit, growth, max_steps,
                                          threshold_share, None, None, level_n=n)
    b1, b2 = 1.0 / eps1, 1.0 / eps2
    scale = max(b1, b2)
    kinks = np.concatenate(([0.0], above - m, np.arange(-200, 201, 5) * scale))
    kinks = np.unique(kinks[(kinks >= -200 * scale) & (kinks <= 200 * scale)])
    nodes, weights = gauss_legendre(64)
    left, right = kinks[:-1], kinks[1:]
    half = 0.5 * (right - left)
    r = (0.5 * (left + right))[:, None] + half[:, None] * nodes[None, :]
    log_w = np.log(half)[:, None] + np.log(weights)[None, :]
    r = r.ravel()
    log_w = log_w.ravel()
    log_prior = -np.abs(r) / b1 - math.log(2.0 * b1)
    x = m + r[:, None] - above[None, :].astype(float)              # stop at k iff nu_k <= x_k
    logp = above_threshold_log_law(x, b2, log_prior + log_w)
    outcomes = np.append(grid, math.inf)
    return outcomes, (logp if log else np.exp(logp))
