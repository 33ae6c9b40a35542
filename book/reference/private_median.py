"""Exponential-mechanism spatial median over public candidates (chapter 10).

After Ramsay, Jagannath & Chenouri (2025). Copy-ready: needs only NumPy and
the standard library. The candidates are draws from a public Gaussian prior
N(prior_mean, prior_scale^2 I) made inside the function, never from the
data; the draw is sampled with the Gumbel-max trick in log space.
"""
import numbers

import numpy as np


def _as_array(values, name):
    """``np.asarray(values)``, refusing what it would misread (TypeError).

    A masked array would lose its mask (the masked entries would count as
    data); a ragged sequence (rows of different lengths) has no shape.
    """
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array; pass {name}.compressed() "
                        f"or {name}.filled(value) explicitly")
    try:
        return np.asarray(values)
    except ValueError:
        raise TypeError(f"{name} must be an array of real numbers with rows "
                        "of equal length (got a ragged sequence)") from None

_LIMIT = 1e150      # |coordinates| below this: squared distances stay finite


def _check_number(value, name):
    """A finite real ``value`` as a float, else TypeError or ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not abs(value) < np.inf:
        raise ValueError(f"{name}={value} must be finite")
    return value


def _check_rng(rng):
    """None, a non-negative int seed or a Generator -> a Generator."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(
            rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"rng={rng} must be a non-negative int seed")
        return np.random.default_rng(int(rng))
    raise TypeError("rng must be None, an int seed or a numpy.random."
                    f"Generator, got {type(rng).__name__}")


def _check_data(data, name="data"):
    """A real 2-D float array (n, d) with d >= 1 and finite, bounded values."""
    data = _as_array(data, name)
    if data.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers, got "
                        f"dtype {data.dtype}")
    if data.ndim != 2 or data.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d) with "
                         "d >= 1 columns; use x.reshape(-1, 1) for d = 1")
    data = data.astype(float)
    if not (np.abs(data) < _LIMIT).all():   # also catches NaN and inf
        raise ValueError(f"{name} must be finite with every |coordinate| "
                         "below 1e150; outside that domain no privacy is "
                         "claimed")
    return data


def spatial_depth(points, data):
    """Spatial depth of each row x of ``points`` in ``data`` (chapter 9).

        SD(x) = 1 - || (1/n) sum_i S(x - X_i) ||,
        S(v) = v / ||v||,  S(0) = 0,

    with each unit vector S(x - X_i) computed from its own record: the
    difference, divided by its largest coordinate (no overflow, and no
    underflow however close X_i is to x), then by its norm. So every
    term has norm 1 (or 0), and replacing one record moves the sum by at
    most 2, up to the rounding of the summation. (A closed form such as
    x sum_i w_i - sum_i w_i X_i with w_i = 1/||x - X_i|| mixes the
    records: a record a few units in the last place from x gets a weight
    near 1e16, the two sums cancel, and the depth can move by many times
    2/n between neighbouring data sets.)

    Not a release by itself: it reads the data exactly, so it refuses
    bad input freely.

    Parameters
    ----------
    points : array-like of shape (q, d), q >= 1
        Real, finite, every |coordinate| below 1e150.
    data : array-like of shape (n, d), n >= 1
        Real, finite, every |coordinate| below 1e150.

    Returns
    -------
    ndarray of shape (q,)
        Depths in [0, 1]; the deepest point is the spatial median.

    Raises
    ------
    TypeError
        If an array is not real.
    ValueError
        If an array is not 2-D, has non-finite or huge values, is
        empty, or the two have different numbers of columns.

    Examples
    --------
    >>> data = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> spatial_depth(np.array([[1.0, 1.0], [5.0, 5.0]]), data).round(3)
    array([1.   , 0.015])
    """
    points = _check_data(points, "points")
    data = _check_data(data)
    if len(points) == 0 or len(data) == 0:
        raise ValueError("points and data must each have at least one row")
    if points.shape[1] != data.shape[1]:
        raise ValueError("points and data must have the same number d of "
                         "columns")
    depths = np.empty(len(points))
    for k, x in enumerate(points):
        diff = x - data                              # one record per row
        top = np.abs(diff).max(axis=1, keepdims=True)
        v = diff[top[:, 0] > 0] / top[top[:, 0] > 0]  # S(0) = 0: dropped
        u = v / np.sqrt((v ** 2).sum(axis=1, keepdims=True))
        depths[k] = 1.0 - np.linalg.norm(u.sum(axis=0)) / len(data)
    return np.clip(depths, 0.0, 1.0)


def private_spatial_median(data, epsilon, prior_mean, prior_scale,
                           n_candidates=1000, rng=None):
    """Private spatial median: the exponential mechanism over prior draws.

    Draws K = ``n_candidates`` public candidates c_k from the prior
    N(prior_mean, prior_scale^2 I_d) and releases c_k with probability

        P(c_k)  proportional to  exp(beta * SD(c_k; X)),
        beta = epsilon / (2 * GS) = epsilon * n / 4,

    where GS = 2/n is the sensitivity of spatial depth SD (chapter 9)
    under replace-one. Equivalently the exponent is
    (epsilon / 4) * (n - ||sum_i S(c_k - X_i)||).

    Privacy. Replace-one neighbours (one row replaced, n public):
    exactly epsilon-DP, because ||sum_i S(c - X_i)|| moves by at most 2,
    so every exponent moves by at most epsilon / 2. Add/remove neighbours
    (one row added or removed, both data sets non-empty; n private, beta
    taken from each data set's own size): epsilon/2-DP, because adding a
    row changes every exponent by an amount in [0, epsilon / 2]. Both
    hold for any number of candidates, ties and lattice data included (a
    candidate equal to a data row is allowed: S(0) = 0). The prior, K,
    epsilon and d are public and must be chosen without looking at the
    data.

    Refusals. Every check on epsilon, the prior, K and rng depends on
    public inputs only, and so does the shape check (d and the 2-D
    layout). The only data-dependent refusals are the domain checks:
    privacy is claimed for non-empty data sets (n >= 1) whose entries
    are all real and finite with |value| < 1e150, and two neighbours
    inside that domain are never treated differently (under add/remove
    both have at least one row). An empty data set, or a NaN, inf,
    huge or non-numeric entry (outside the domain) raises ValueError
    (TypeError for a non-numeric one) without quoting any value or
    count; clean or clip the data with public rules first.

    Parameters
    ----------
    data : array-like of shape (n, d)
        The private sample, n >= 1 rows, real and finite (see the domain
        above).
    epsilon : float
        Privacy budget, finite and > 0.
    prior_mean : float or array-like of shape (d,)
        Public centre of the prior (a scalar is used in every
        coordinate), |value| <= 1e100, chosen before seeing the data. A
        prior far from the data gives candidates far from the data and a
        poor median: nothing warns, since a warning would depend on the
        data.
    prior_scale : float
        Public standard deviation of every coordinate of the prior, in
        [1e-100, 1e100]. It should cover the plausible location of the
        median.
    n_candidates : int
        Number K >= 1 of prior draws, with K * d <= 1e8 (memory).
    rng : None, int or numpy.random.Generator
        Randomness: first the candidates, then the Gumbel noise.

    Returns
    -------
    ndarray of shape (d,)
        The released candidate.

    Raises
    ------
    TypeError
        If an argument has the wrong type (rng, a non-real value, a
        non-integer ``n_candidates``).
    ValueError
        If a public parameter is out of range, the data are not 2-D, or
        the data lie outside the domain above (empty included).

    Examples
    --------
    Data centred at (100, 100) need a prior centred there too:

    >>> rng = np.random.default_rng(0)
    >>> data = rng.normal(100.0, 1.0, size=(500, 2))
    >>> med = private_spatial_median(data, epsilon=1.0, prior_mean=100.0,
    ...                              prior_scale=5.0, rng=1)
    >>> bool(np.all(np.abs(med - 100.0) < 0.5))
    True
    """
    data = _check_data(data)
    n, d = data.shape
    if n == 0:
        raise ValueError("data is empty; the domain is data sets with at "
                         "least one row")
    epsilon = _check_number(epsilon, "epsilon")
    if epsilon <= 0:
        raise ValueError(f"epsilon={epsilon} must be > 0")
    mean = _as_array(prior_mean, "prior_mean")
    if mean.dtype.kind not in "iuf":
        raise TypeError("prior_mean must be a real number or array, got "
                        f"dtype {mean.dtype}")
    if mean.shape not in ((), (d,)):
        raise ValueError(f"prior_mean must be a number or have shape ({d},)"
                         f" like a data row, got shape {mean.shape}")
    mean = np.broadcast_to(mean.astype(float), (d,))
    scale = _check_number(prior_scale, "prior_scale")
    if not (np.abs(mean) <= 1e100).all():
        raise ValueError("prior_mean must be finite with |value| <= 1e100")
    if not 1e-100 <= scale <= 1e100:
        raise ValueError(f"prior_scale={scale} must lie in [1e-100, 1e100]")
    if isinstance(n_candidates, (bool, np.bool_)) or not isinstance(
            n_candidates, numbers.Integral):
        raise TypeError("n_candidates must be an integer, got "
                        f"{type(n_candidates).__name__}")
    if n_candidates < 1:
        raise ValueError(f"n_candidates={n_candidates} must be >= 1")
    if n_candidates * d > 10 ** 8:
        raise ValueError(f"n_candidates={n_candidates} in d={d} "
                         "dimensions needs more than 1e8 draws; use fewer")
    rng = _check_rng(rng)
    candidates = mean + scale * rng.standard_normal((int(n_candidates), d))
    sensitivity = 2.0 / n                     # of spatial depth
    beta = min(epsilon / (2.0 * sensitivity), 1e300)   # never inf * 0
    values = spatial_depth(candidates, data)
    logits = beta * (values - values.max())     # log space: no overflow
    gumbel = rng.gumbel(size=len(candidates))
    return candidates[np.argmax(logits + gumbel)].copy()
