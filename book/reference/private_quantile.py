"""Private quantile of conformal scores, tight variant (chapter 3).

The package's default ``private_quantile(..., variant="tight")``: the
exponential mechanism of Algorithm 1 of the DPCP write-up with an exact
exponent and a level proven to give finite-sample coverage. The
write-up's own version is ``variant="original"`` in the package.
Copy-ready: needs only NumPy and the standard library. Sampled with the
Gumbel-max trick in log space (McSherry & Talwar 2007), so nothing
under- or overflows.
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


def _check_unit_scores(scores):
    """Scores as a sorted 1-D float array; the domain is [0, 1]."""
    scores = _as_array(scores, "scores")
    if scores.dtype.kind not in "iuf":
        raise TypeError("scores must be an array of real numbers, got "
                        f"dtype {scores.dtype}")
    if scores.ndim != 1:
        raise ValueError("scores must be a 1-D array, got a "
                         f"{scores.ndim}-D one; use .ravel() if intended")
    scores = np.sort(scores.astype(float))      # NaN sorts last
    if scores.size and not (scores[0] >= 0.0 and scores[-1] <= 1.0):
        raise ValueError("scores must lie in [0, 1] (no NaN): normalise "
                         "them by a public bound B, e.g. "
                         "np.minimum(residuals / B, 1.0)")
    return scores


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
    the sum has a closed form. For M = 1 the release is always 1 and the
    bound is 1 / (N+1).

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


def private_quantile(scores, beta, epsilon, bins=1000, rng=None, *, n=None):
    """Release an epsilon-DP threshold q for scores in [0, 1].

    The exponential mechanism over the right bin edges e_j = j / M,
    j = 1..M (M = ``bins``), with each score rounded up to its edge (a
    score in (e_{j-1}, e_j] counts as e_j, which leaves every event
    {R <= e_j} unchanged):

        a_j = #{i : R_i <= e_{j-1}},   b_j = #{i : R_i > e_j}
        u_j = max(alpha0 * a_j, (1 - alpha0) * b_j)
        P(q = e_j)  proportional to  exp(-epsilon * u_j)

    where alpha0 = _tight_level(beta, n, epsilon, M), the largest level
    whose proven miscoverage bound is at most beta. Coverage: for
    exchangeable scores (ties included) P(R_{N+1} <= q) >= 1 - beta.

    Privacy. Replace-one neighbours (one score replaced), n public:
    exactly epsilon-DP, since one score leaves a_j (weight alpha0) and
    joins b_j (weight 1 - alpha0) at the edges it crosses. Add/remove
    neighbours with alpha0 from a public ``n``: epsilon * max(alpha0,
    1 - alpha0)-DP (<= epsilon), since adding a score raises each u_j by
    at most that weight. With ``n=None`` the size N = len(scores) is
    used and so is not hidden: under add/remove the level moves with N
    (the exact loss is the package's ``private_quantile_privacy_loss(
    ..., relation="add/remove", public_n=False)``) and the feasibility
    refusal reveals whether N is large enough.

    Refusals. The feasibility check uses the public beta, epsilon, M
    and n (or N) only. The data domain is [0, 1]: privacy is claimed
    for score vectors inside it, and two neighbours inside it are never
    treated differently. A score outside [0, 1], a NaN or a non-numeric
    entry (outside the domain) raises ValueError (TypeError for the
    last) without quoting any value or count; np.minimum(residuals / B,
    1.0) with a public B > 0 always lands inside.

    Parameters
    ----------
    scores : array-like of shape (N,)
        Private non-conformity scores in [0, 1]; N >= 1 unless a
        public ``n`` is given (then N = 0 releases too).
    beta : float
        Target miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of this release, finite and > 0.
    bins : int
        Number M of equal bins, 1 <= M <= 1e8; the output is a multiple
        of 1/M.
    rng : None, int or numpy.random.Generator
        Source of randomness (the Gumbel noise).
    n : int, optional
        Public number of scores used for alpha0; defaults to
        len(scores). Given, the release runs on exactly n scores (a
        uniform subset, or padded with the score 1), so neither the level
        nor the release depends on the data's own size.

    Returns
    -------
    float
        The threshold q, one of the edges 1/M, ..., 1; q = 1 admits
        every score.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a public parameter is out of range, no level reaches beta at
        this (n, epsilon, M), or the scores are not a non-empty 1-D
        array inside [0, 1].

    Examples
    --------
    >>> s = np.random.default_rng(0).uniform(size=5000)
    >>> q = private_quantile(s, beta=0.1, epsilon=1.0, bins=100, rng=1)
    >>> 0.85 < q <= 0.95
    True
    """
    beta = _check_number(beta, "beta")
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta={beta} must lie strictly between 0 and 1 "
                         "(a miscoverage level, e.g. 0.1 for 90% coverage)")
    epsilon = _check_number(epsilon, "epsilon")
    if epsilon <= 0:
        raise ValueError(f"epsilon={epsilon} must be > 0")
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
    scores = _check_unit_scores(scores)
    if n is None and scores.size == 0:
        raise ValueError("scores is empty; at least one score is needed "
                         "(or pass a public n)")
    alpha0 = _tight_level(beta, scores.size if n is None else n, epsilon,
                         bins)
    edges = np.arange(1, bins + 1, dtype=float) / bins
    if n is not None:
        scores = _at_public_size(scores, n, edges, rng)
    through = np.searchsorted(scores, edges, side="right")  # #{R <= e_j}
    below = np.concatenate(([0], through[:-1]))             # a_j
    above = scores.size - through                           # b_j
    loss = np.maximum(alpha0 * below, (1.0 - alpha0) * above)
    with np.errstate(over="ignore"):     # huge epsilon: -inf = probability 0
        logits = -epsilon * (loss - loss.min())
    gumbel = rng.gumbel(size=logits.size)
    return float(edges[np.argmax(logits + gumbel)])
