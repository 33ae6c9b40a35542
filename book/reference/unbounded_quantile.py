"""Private conformal threshold without an upper score bound (chapter 18).

The package's ``unbounded_private_quantile`` (default method): AboveThreshold
over the geometric candidates ``lower + unit * (growth**k - 1)`` (Durfee
2023), with a target count calibrated so that the release covers with
probability at least ``1 - beta`` in finite samples. Copy-ready: needs only
NumPy and the standard library; the same release as the package for the same
seed.
"""
import functools
import math
import numbers

import numpy as np

_TAIL = 45.0          # lattice ranges reach 45 noise scales
_LATTICE = 2 ** 15    # lattice cells per noise law
_MARGIN = 1e-9        # added to the miscoverage bound for rounding
_BAD_SCORES = ("scores must be real numbers at or above `lower` (NaN is "
               "not a score); clip model outputs to the public lower end "
               "first, e.g. np.maximum(scores, lower), and map missing "
               "scores to np.inf")


def _number(value, name, low=None, high=None):
    """A finite real in the open interval (low, high), else an error."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or abs(value) > 1e100:
        raise ValueError(f"{name}={value} must be finite (at most 1e100)")
    if (low is not None and value <= low) or (
            high is not None and value >= high):
        raise ValueError(f"{name}={value} must lie in ({low}, {high})")
    return value


def _integer(value, name, low, high):
    """An integer in [low, high], else an error."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer, got {type(value).__name__}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}={value} must lie in [{low}, {high}]")
    return int(value)


def _grid(lower, unit, growth, max_steps):
    """The candidates lower + unit * (growth**k - 1), k < max_steps."""
    log_g = math.log(growth)
    top = unit * math.expm1(min((max_steps - 1) * log_g, 709.0))
    if not (lower + top <= 1e100 and (max_steps - 1) * log_g < 709.0):
        raise ValueError(f"the top candidate for lower={lower:g}, unit="
                         f"{unit:g}, growth={growth:g}, max_steps="
                         f"{max_steps} exceeds 1e100; use fewer steps or a "
                         "smaller unit")
    k = np.arange(max_steps)
    with np.errstate(over="ignore"):
        grid = lower + unit * np.where(k * log_g < 0.5,
                                       np.expm1(k * log_g),
                                       np.power(growth, k) - 1.0)
    if max_steps > 1 and not np.all(np.diff(grid) > 0):
        raise ValueError(f"the candidates for lower={lower:g}, unit={unit:g}"
                         f", growth={growth:g} are not strictly increasing "
                         "in floating point: use a larger unit or growth")
    return grid


def _laplace_cdf(x, b):
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b),
                    -0.5 * np.expm1(-np.maximum(x, 0) / b) + 0.5)


def _min_laplace_cdf(x, b, k):
    """CDF of the minimum of k i.i.d. Laplace(b) variables."""
    with np.errstate(divide="ignore"):
        log_survival = np.where(
            x < 0, np.log1p(-0.5 * np.exp(np.minimum(x, 0) / b)),
            math.log(0.5) - np.maximum(x, 0) / b)
    return -np.expm1(k * log_survival)


def _w_lattice(eps1, eps2, steps):
    """A lattice law below W = min_k nu_k - rho: (points, pmf, p_low)."""
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
    px = np.diff(np.append(fx, 1.0))
    py = np.diff(np.append(fy, 1.0))
    size = px.size + py.size - 1
    fft_size = 1 << (size - 1).bit_length()
    pmf = np.fft.irfft(np.fft.rfft(px, fft_size)
                       * np.fft.rfft(py, fft_size), fft_size)[:size]
    pmf = np.maximum(pmf, 0.0)
    w = x_lo + y_lo + h * np.arange(pmf.size)
    return w, pmf, float(fx[0] + fy[0])


def _bound_at(m, n, w, pmf, p_low):
    """Upper bound of (1 + E[min(n, max(0, floor(m - W)))]) / (n + 1)."""
    counts = np.clip(np.floor(m - w), 0, n)
    return (1.0 + n * p_low + float(pmf @ counts)) / (n + 1) + _MARGIN


@functools.lru_cache(maxsize=64)     # public values only: cached
def _target(beta, n, epsilon, max_steps, share):
    """The largest target m whose proven miscoverage is at most beta."""
    w, pmf, p_low = _w_lattice(share * epsilon, (1.0 - share) * epsilon,
                               max_steps)
    lo = float(w[0]) - 1.0
    if _bound_at(lo, n, w, pmf, p_low) > beta:
        raise ValueError(f"no target guarantees miscoverage beta={beta:g} "
                         f"with n={n} scores; use more scores or a larger "
                         "beta")
    hi = float(w[-1]) + n + 1.0
    for _ in range(200):
        if hi - lo <= 1e-9 * max(1.0, abs(lo)):
            break
        mid = 0.5 * (lo + hi)
        if _bound_at(mid, n, w, pmf, p_low) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


def unbounded_private_quantile(scores, beta, epsilon, *, lower=0.0,
                               unit=1.0, growth=1.005, max_steps=20000,
                               threshold_share=0.25, n=None, rng=None):
    """Private conformal threshold of scores with no upper bound.

    Candidates :math:`t_k = \\ell + u(g^k - 1)`, :math:`k < K`. With
    :math:`a_k` the number of scores above :math:`t_k`, the release is
    the first :math:`t_k` with :math:`a_k + \\nu_k \\le m + \\rho`
    (:math:`\\rho \\sim \\mathrm{Lap}(1/\\varepsilon_1)`,
    :math:`\\nu_k \\sim \\mathrm{Lap}(1/\\varepsilon_2)`,
    :math:`\\varepsilon_1 = \\sigma\\varepsilon`,
    :math:`\\varepsilon_2 = (1 - \\sigma)\\varepsilon`), or ``inf`` when
    none passes. The target :math:`m` is the largest whose proven
    miscoverage bound is at most ``beta``: then
    :math:`P(R_{n+1} \\le \\hat q) \\ge 1 - \\beta` for exchangeable
    scores, ties included (chapter 18).

    **Privacy.** Replace-one neighbours (sizes equal):
    :math:`\\varepsilon`-DP. Add/remove neighbours: with a public ``n``
    (the counts subsampled, or padded with ``inf``, to exactly ``n``)
    :math:`\\varepsilon`-DP; with ``n=None`` the target moves with the
    size by :math:`d = m(N+1) - m(N)` and the loss is
    :math:`\\varepsilon_2 + \\varepsilon_1\\max(|d|, |1 - d|)`.

    **Refusals.** Public parameters are checked and quoted. The data's
    domain is the reals at or above ``lower`` (``inf`` included): NaN or a
    score below ``lower`` raises one fixed message for every such data set.
    With ``n=None`` the number of scores is public (an infeasible size is
    refused); with a public ``n`` no refusal depends on the data's size.

    Parameters
    ----------
    scores : array-like of shape (N,)
        Scores at or above ``lower``; may be empty when ``n`` is given.
    beta : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget, positive.
    lower, unit, growth, max_steps
        The public grid: lower end, first scale, ratio in (1, 16) and
        number of candidates in [1, 10**6].
    threshold_share : float
        Share of ``epsilon`` spent on the noisy target, in (0, 1).
    n : int, optional
        Public number of scores (at most 10**9).
    rng : None, int or numpy.random.Generator
        Source of the noise; ``None`` for a real release.

    Returns
    -------
    float
        A candidate, or ``inf``.

    Raises
    ------
    TypeError, ValueError
        For bad public parameters, and (one fixed message) for scores
        outside the domain.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.abs(np.random.default_rng(0).normal(size=5000))
    >>> q = unbounded_private_quantile(s, 0.1, 1.0, rng=1)
    >>> 1.6 < q < 1.8
    True
    """
    beta = _number(beta, "beta", 0.0, 1.0)
    epsilon = _number(epsilon, "epsilon", 0.0)
    lower = _number(lower, "lower")
    unit = _number(unit, "unit", 0.0)
    growth = _number(growth, "growth", 1.0, 16.0)
    max_steps = _integer(max_steps, "max_steps", 1, 10 ** 6)
    share = _number(threshold_share, "threshold_share", 0.0, 1.0)
    if n is not None:
        n = _integer(n, "n", 1, 10 ** 9)
    if rng is not None and not isinstance(rng, np.random.Generator):
        if isinstance(rng, (bool, np.bool_)) or not isinstance(
                rng, numbers.Integral) or rng < 0:
            raise TypeError("rng must be None, a non-negative int seed or "
                            "a numpy.random.Generator")
    gen = np.random.default_rng(rng)
    grid = _grid(lower, unit, growth, max_steps)
    if isinstance(scores, np.ma.MaskedArray):
        raise TypeError("scores is a masked array; pass scores.compressed()")
    try:
        values = np.asarray(scores)
    except ValueError:
        raise TypeError("scores must be an array of real numbers (got a "
                        "ragged sequence)") from None
    if values.dtype.kind not in "biuf" and not (
            values.dtype.kind == "O" and values.size == 0):
        raise TypeError("scores must be an array of real numbers")
    values = values.astype(float)
    if values.ndim != 1:
        raise ValueError("scores must be one-dimensional")
    if values.size == 0 and n is None:
        raise ValueError("scores is empty; at least one score is needed "
                         "(or pass the public n)")
    if values.size and not values.min() >= lower:
        raise ValueError(_BAD_SCORES)
    counts = np.bincount(np.searchsorted(grid, values, side="left"),
                         minlength=max_steps + 1).astype(np.int64)
    if n is not None and values.size > n:
        counts = np.asarray(gen.multivariate_hypergeometric(counts, n),
                            dtype=np.int64)
    elif n is not None:
        counts[-1] += n - values.size
    size = int(counts.sum())
    m = _target(beta, size, epsilon, max_steps, share)
    above = size - np.cumsum(counts)[:max_steps]
    rho = gen.laplace(scale=1.0 / (share * epsilon))
    nu = gen.laplace(scale=1.0 / ((1.0 - share) * epsilon), size=max_steps)
    passed = above + nu <= m + rho
    k = int(np.argmax(passed))
    return float(grid[k]) if passed[k] else math.inf
