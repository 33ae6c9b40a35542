"""DPCP, the calibration step of Algorithm 2 of the DPCP write-up.

Chapters 5-6; as the package's ``dpcp_quantile`` + ``bounded_interval``
with their default, the tight private quantile (``variant="tight"``; the
write-up's Algorithm 1 is ``variant="original"`` there). Copy-ready:
needs only NumPy and the standard library. The model mu_n was trained on
the same n points by an (epsilon1, delta)-DP algorithm under add/remove
neighbours; this function releases the threshold with epsilon2 more.
The level code is the same as in private_quantile.py.
"""
import math
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


def _check_number(value, name):
    """A finite real ``value`` as a float, else TypeError or ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
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


def _check_count(value, name):
    """A positive integer ``value`` as an int, else TypeError or ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name}={value} must be a positive integer")
    return int(value)


def _check_vector(values, name):
    """A 1-D float array of real numbers, possibly empty."""
    values = _as_array(values, name)
    if values.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers, got "
                        f"dtype {values.dtype}")
    if values.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got a "
                         f"{values.ndim}-D one")
    return values.astype(float)


def _at_public_size(scores, n, edges, rng):
    """Exactly ``n`` sorted scores, as the package releases with a public n.

    More scores than ``n``: a uniform n-subset, drawn from their cell
    counts over the edges (a cell is an edge itself or the open interval
    between two edges; the release reads only these counts), so that an
    array and its histogram give the same release for the same seed.
    Fewer: the scores padded with the maximal score 1. The release then
    depends on the data through a data set of the public size ``n`` only:
    adding or removing a record becomes a replacement at size ``n``, and
    the coverage proof holds at every data size (chapter 3).
    """
    if scores.size <= n:
        return np.concatenate([scores, np.ones(n - scores.size)])
    below = np.searchsorted(edges, scores, side="left")
    on_edge = edges[np.minimum(below, edges.size - 1)] == scores
    counts = np.bincount(2 * below + on_edge, minlength=2 * edges.size + 1)
    drawn = rng.multivariate_hypergeometric(counts.astype(np.int64), n)
    cells = np.empty(2 * edges.size + 1)       # one score inside each cell
    cells[1::2] = edges
    left = np.concatenate(([0.0], edges[:-1]))
    cells[0:-1:2] = 0.5 * (left + edges)
    cells[-1] = 1.0                            # above the last edge: empty
    return np.repeat(cells, drawn)


def _miscoverage_bound(alpha0, n, epsilon, bins):
    """Proven miscoverage bound of the mechanism at level ``alpha0``.

    With c = epsilon * (1 - alpha0) and M = ``bins`` edges,

        P(R_{N+1} > q) <= 1/(N+1) * sum_{k=0}^{N}
                              min(1, (M-1) exp(-c (k - alpha0 N)))

    for every exchangeable score distribution, ties included (chapter 3).
    The first k0 + 1 terms equal 1, the rest form a geometric series, so
    the sum has a closed form. For M = 1 the release is
    always 1 and the bound is 1 / (N+1).

    Parameters
    ----------
    alpha0 : float
        Level of the mechanism, in [0, 1).
    n : int
        Public number N >= 1 of calibration scores.
    epsilon : float
        Privacy budget, > 0.
    bins : int
        Number M >= 1 of edges.

    Returns
    -------
    float
        The bound, in (0, 1].

    Examples
    --------
    >>> b = _miscoverage_bound(0.08, n=1000, epsilon=1.0, bins=100)
    >>> 0.08 < b < 0.1
    True
    """
    if bins == 1:
        return 1.0 / (n + 1)
    c = epsilon * (1.0 - alpha0)
    top = alpha0 * n + math.log(bins - 1) / c if c > 0 else math.inf
    if top >= n:                      # every term is 1
        return 1.0
    k0 = math.floor(top)
    first = (bins - 1) * math.exp(-c * (k0 + 1 - alpha0 * n))
    tail = first * (-math.expm1(-c * (n - k0))) / (-math.expm1(-c))
    return min(1.0, (k0 + 1 + tail) / (n + 1))


def _tight_level(beta, n, epsilon, bins):
    """The level alpha0: the largest one whose bound is at most beta.

    Found by 64 bisection steps on [0, 1] (_miscoverage_bound increases
    with the level), i.e. to double precision. It depends on the public
    beta, N, epsilon and M only.

    Parameters
    ----------
    beta : float
        Target miscoverage, in (0, 1).
    n : int
        Public number N >= 1 of calibration scores.
    epsilon : float
        Privacy budget, > 0.
    bins : int
        Number M >= 1 of edges.

    Returns
    -------
    float
        alpha0 in [0, beta].

    Raises
    ------
    ValueError
        If even level 0 has a bound above beta (too few scores for this
        epsilon and M); a check on public inputs only.

    Examples
    --------
    >>> a = _tight_level(0.1, n=1000, epsilon=1.0, bins=100)
    >>> 0.08 < a < 0.1
    True
    """
    if bins == 1:
        return beta           # the release is always 1; no level needed
    if _miscoverage_bound(0.0, n, epsilon, bins) > beta:
        raise ValueError(f"infeasible: with N={n} scores, epsilon={epsilon}"
                         f" and {bins} bins no level guarantees miscoverage"
                         f" beta={beta}; use more scores, a larger epsilon "
                         "or fewer bins")
    lo, hi = 0.0, 1.0
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        if _miscoverage_bound(mid, n, epsilon, bins) <= beta:
            lo = mid
        else:
            hi = mid
    return lo


def dpcp_intervals(y, pred_train, pred_test, bound, alpha, delta, epsilon1,
                   epsilon2, bins=1000, rng=None, *, n=None):
    """DPCP intervals mu_n(x) +/- bound * q for the test predictions.

    With scores R_i = min(|y_i - mu_n(x_i)| / bound, 1) of the model
    trained on the same n points, the threshold q is the tight private
    quantile (private_quantile.py) at the Differential-CP level

        alpha1 = exp(-epsilon1) * (alpha - delta)

    with budget epsilon2: over the edges e_j = j / bins,
    P(q = e_j) proportional to exp(-epsilon2 * max(alpha0 a_j,
    (1 - alpha0) b_j)), a_j = #{R_i <= e_{j-1}}, b_j = #{R_i > e_j}, and
    alpha0 the largest level whose proven miscoverage bound is at most
    alpha1. When q = 1 the interval is the whole line: every residual,
    however large, has the clipped score 1 <= q. Coverage >= 1 - alpha
    for exchangeable points and a symmetric add/remove DP trainer is
    proved in chapter 6 (through chapter 5's stability argument).

    Privacy. Add/remove neighbours (the trainer's relation) with n
    public: the model costs (epsilon1, delta) and the threshold, run on
    exactly n scores (subsampled or padded), epsilon2, so the pair is
    (epsilon1 + epsilon2, delta)-DP by basic composition. Replace-one
    neighbours: the threshold costs exactly epsilon2; an add/remove
    trainer is (2 epsilon1, (1 + exp(epsilon1)) delta)-DP under
    replace-one, so the pair is (2 epsilon1 + epsilon2,
    (1 + exp(epsilon1)) delta)-DP. With ``n=None`` the size n = len(y)
    sets alpha0 and is treated as public: the feasibility refusal
    depends on it. Pass a public ``n`` to keep the data's own size out
    of the level and of the refusal.

    Refusals. Every check except the domain check uses public inputs
    (alpha, delta, the budgets, bound, bins, rng, n, the test
    predictions and the lengths). The data domain is finite real y:
    privacy is claimed for data inside it, and two neighbours inside it
    are never treated differently. A NaN, inf or non-numeric entry there
    (outside the domain) raises ValueError (TypeError for the last)
    without quoting any value or count. The training predictions are
    values derived from private records, so they are never refused:
    NaN is read as 0 and values beyond +-1e100 are clipped.

    Parameters
    ----------
    y : array-like of shape (N,)
        Private responses of the training points, finite; N >= 1
        unless a public ``n`` is given (then N = 0 releases too).
    pred_train : array-like of shape (N,)
        mu_n at the same points (NaN read as 0, clipped to +-1e100).
    pred_test : array-like of shape (k,)
        mu_n at the test points, finite (k >= 1).
    bound : float
        Public bound B > 0 on the residuals, chosen without the data;
        residuals above it are clipped to the score 1.
    alpha : float
        Target miscoverage in (0, 1).
    delta : float
        The trainer's delta, in [0, 1) and below alpha.
    epsilon1 : float
        The trainer's epsilon, finite and > 0 (it enters alpha1).
    epsilon2 : float
        Budget of the threshold, finite and > 0.
    bins : int
        Number of edges of the private quantile, between 1 and 1e8.
    rng : None, int or numpy.random.Generator
        Source of randomness (the Gumbel noise). A known seed makes the
        release reproducible by anyone, hence not private: use rng=None
        (fresh OS entropy) for a real release.
    n : int, optional
        Public number of training points used for alpha0 and the
        feasibility check; defaults to len(y). Given, the threshold
        runs on exactly n scores (a uniform subset, or padded with 1).

    Returns
    -------
    ndarray of shape (k, 2)
        Lower and upper ends; (-inf, inf) rows when q = 1.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a public parameter is out of range, DPCP is infeasible at
        this n (no level alpha0 reaches alpha1), or the data lie
        outside the domain.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=2000)
    >>> pred = np.zeros(2000)            # a (trivially private) model
    >>> iv = dpcp_intervals(y, pred, np.array([0.0, 1.0]), bound=4.0,
    ...                     alpha=0.1, delta=1e-6, epsilon1=0.5,
    ...                     epsilon2=1.0, rng=1)
    >>> iv.shape, bool(np.all(iv[:, 1] - iv[:, 0] > 3.0))
    ((2, 2), True)
    """
    bound = _check_number(bound, "bound")
    if bound <= 0:
        raise ValueError(f"bound={bound} must be > 0: a public bound on "
                         "the residuals, chosen without the data")
    alpha = _check_number(alpha, "alpha")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha={alpha} must lie strictly between 0 and 1 "
                         "(a miscoverage level, e.g. 0.1 for 90% coverage)")
    delta = _check_number(delta, "delta")
    if not 0.0 <= delta < alpha:
        raise ValueError(f"delta={delta} must lie in [0, alpha={alpha}); "
                         "use delta far below 1/n, e.g. 1e-6")
    epsilon1 = _check_number(epsilon1, "epsilon1")
    epsilon2 = _check_number(epsilon2, "epsilon2")
    if epsilon1 <= 0 or epsilon2 <= 0:
        raise ValueError(f"epsilon1={epsilon1} and epsilon2={epsilon2} "
                         "must be > 0")
    bins = _check_count(bins, "bins")
    if bins > 10 ** 8:
        raise ValueError(f"bins={bins} must be at most 1e8 (the release "
                         "costs O(bins) memory and time)")
    if n is not None:
        n = _check_count(n, "n")
        if n > 10 ** 9:
            raise ValueError(f"n={n} must be at most 1e9 (a public count "
                             "of records; the release pads to n scores)")
    rng = _check_rng(rng)
    y = _check_vector(y, "y")
    pred_train = _check_vector(pred_train, "pred_train")
    pred_test = _check_vector(pred_test, "pred_test")
    if pred_train.size != y.size:
        raise ValueError("y and pred_train must have the same length (one "
                         "prediction per training point)")
    if n is None and y.size == 0:
        raise ValueError("y is empty; at least one training point is "
                         "needed (or pass a public n)")
    if pred_test.size == 0:
        raise ValueError("pred_test is empty; pass at least one test "
                         "prediction")
    if not np.isfinite(pred_test).all():
        raise ValueError("pred_test contains NaN or infinite values")
    if not np.isfinite(y).all():
        raise ValueError("y must be finite (no NaN or inf); outside that "
                         "domain no privacy is claimed")
    # model outputs on private records are private too: never refuse them,
    # read NaN as 0 and clip to +-1e100 (public constants), as the package
    pred_train = np.clip(np.nan_to_num(pred_train, nan=0.0, posinf=1e100,
                                       neginf=-1e100), -1e100, 1e100)
    alpha1 = math.exp(-epsilon1) * (alpha - delta)
    if not alpha1 > 0:
        raise ValueError("DPCP is infeasible: alpha1 = exp(-epsilon1) "
                         "(alpha - delta) underflows to 0; use a much "
                         "smaller epsilon1")
    try:
        alpha0 = _tight_level(alpha1, y.size if n is None else n, epsilon2,
                              bins)
    except ValueError as error:
        reason = str(error).removeprefix("infeasible: ")
        raise ValueError(f"DPCP is infeasible with epsilon2={epsilon2}: "
                         f"alpha1 = exp(-epsilon1) (alpha - delta) = "
                         f"{alpha1:.4g}, and {reason} (the quantile's "
                         "epsilon is epsilon2, its beta is alpha1)"
                         ) from None
    with np.errstate(over="ignore"):     # an overflow to inf clips to 1
        scores = np.minimum(np.abs(y - pred_train) / bound, 1.0)
    scores = np.sort(scores)
    edges = np.arange(1, bins + 1, dtype=float) / bins
    if n is not None:
        scores = _at_public_size(scores, n, edges, rng)
    through = np.searchsorted(scores, edges, side="right")  # #{R <= e_j}
    below = np.concatenate(([0], through[:-1]))             # a_j
    above = scores.size - through                           # b_j
    loss = np.maximum(alpha0 * below, (1.0 - alpha0) * above)
    with np.errstate(over="ignore"):     # huge epsilon: -inf = probability 0
        logits = -epsilon2 * (loss - loss.min())
    qhat = float(edges[np.argmax(logits + rng.gumbel(size=bins))])
    half = math.inf if qhat >= 1.0 else bound * qhat
    return np.column_stack([pred_test - half, pred_test + half])
