"""Private split-conformal quantile, tight exponent (chapter 4).

After Angelopoulos, Bates, Zrnic & Jordan (2022): their reference code's
grid, rounding and corrected level with the exact exponent
epsilon * qt * (1 - qt), as the package's default
``pps_private_quantile(..., variant="tight")``; the authors' exponent is
``variant="reference"`` there. Copy-ready: needs only NumPy and the
standard library. The scores come from a model trained on *other* data;
the calibration set is disjoint, so this release spends its epsilon on
the calibration set only.
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


def _check_count(value, name, minimum=1):
    """An integer ``value`` >= minimum as an int, else TypeError/ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name}={value} must be an integer >= {minimum}")
    return int(value)


def _check_unit_scores(scores):
    """Scores as a 1-D float array; the domain is [0, 1]."""
    scores = _as_array(scores, "scores")
    if scores.dtype.kind not in "iuf":
        raise TypeError("scores must be an array of real numbers, got "
                        f"dtype {scores.dtype}")
    if scores.ndim != 1:
        raise ValueError("scores must be a 1-D array, got a "
                         f"{scores.ndim}-D one; use .ravel() if intended")
    scores = scores.astype(float)
    if not ((scores >= 0.0) & (scores <= 1.0)).all():    # NaN fails too
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
    the coverage proof holds at every data size (chapters 3 and 4).
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


def private_split_quantile(scores, alpha, epsilon, m, rng=None, *, n=None):
    """Release the private split-conformal threshold s in [0, 1].

    1. Grid of m edges e_k = k / (m - 1), k = 0..m-1; each score is
       rounded up to the smallest edge strictly above it (capped at 1).
    2. Corrected level, with gamma the smaller root of
       a^2 g^2 - (a eps (n+1)(1-a)/2 + 2a) g + 1 = 0
       (clipped to [1e-12, 1 - 1e-12] as in the authors' code):

           qt = (n+1)(1-alpha) / (n (1 - gamma alpha))
                + 2 / (epsilon n) * log(m / (gamma alpha)).

       If qt >= 1 the answer is s = 1 (the whole label space), returned
       without reading the scores.
    3. Loss w_k = max(A_k / qt, B_k / (1 - qt)) with A_k, B_k the
       numbers of rounded scores below and above e_k; release e_k with
       probability proportional to exp(-c w_k), c = epsilon qt (1 - qt),
       i.e. c w_k = epsilon max((1 - qt) A_k, qt B_k).

    The prediction set is {y : s(x, y) <= s}. Coverage >= 1 - alpha by
    the authors' argument, which holds for this exponent when
    alpha <= 1/2 (chapter 4).

    With a public ``n`` the release runs on exactly n scores: a uniform
    n-subset when there are more, the scores padded with the maximal
    score 1 when there are fewer (none at all is allowed), so the
    coverage argument at size n holds at every data size.

    Privacy. Replace-one neighbours (one score replaced), n public:
    exactly epsilon-DP, since a moved score leaves A_k (weight 1 - qt)
    and joins B_k (weight qt) at the edges it crosses. Add/remove
    neighbours with a public ``n``: the subset or the padding turns
    adding or removing a record into a replacement at size n, so
    epsilon-DP too. With ``n=None`` the size n = len(scores) sets qt and
    is treated as public (whether qt >= 1 reveals it).

    Refusals. None depends on the data except the domain check: every
    other check uses the public alpha, epsilon, m, rng and n, and there
    is no refusal window (a small n or epsilon gives s = 1). The data
    domain is [0, 1]: privacy is claimed for score vectors inside it,
    and two neighbours inside it are never treated differently. A score
    outside [0, 1], a NaN or a non-numeric entry (outside the domain)
    raises ValueError (TypeError for the last) without quoting any value
    or count.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Private calibration scores in [0, 1]; at least one unless a
        public ``n`` is given (then none releases too).
    alpha : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of this release, finite and > 0.
    m : int
        Number of grid edges, 2 <= m <= 1e8 (public; choose it without the
        data).
    rng : None, int or numpy.random.Generator
        Source of randomness (the subset, then the Gumbel noise).
    n : int, optional
        Public calibration size used in qt; defaults to len(scores).
        Given, the scores are subsampled or padded to exactly n first.

    Returns
    -------
    float
        The threshold s, an edge of the grid; 1 means every label.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a public parameter is out of range, or the scores are not a
        non-empty 1-D array inside [0, 1].

    Examples
    --------
    >>> s = np.random.default_rng(0).uniform(size=5000)
    >>> t = private_split_quantile(s, alpha=0.1, epsilon=1.0, m=200, rng=1)
    >>> 0.88 < t < 0.96
    True
    """
    alpha = _check_number(alpha, "alpha")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha={alpha} must lie strictly between 0 and 1 "
                         "(a miscoverage level, e.g. 0.1 for 90% coverage)")
    epsilon = _check_number(epsilon, "epsilon")
    if epsilon <= 0:
        raise ValueError(f"epsilon={epsilon} must be > 0")
    m = _check_count(m, "m", minimum=2)
    if m > 10 ** 8:
        raise ValueError(f"m={m} must be at most 1e8 (the release "
                         "costs O(m) memory and time)")
    if n is not None:
        n = _check_count(n, "n")
        if n > 10 ** 9:
            raise ValueError(f"n={n} must be at most 1e9 (a public count "
                             "of records; the release pads to n scores)")
    rng = _check_rng(rng)
    scores = _check_unit_scores(scores)
    if n is None:
        if scores.size == 0:
            raise ValueError("scores is empty; at least one score is needed"
                             " (or pass a public n)")
        n = scores.size
    b = alpha * epsilon * (n + 1) * (1 - alpha) / 2 + 2 * alpha
    gamma = 2.0 / (b + math.sqrt(b * b - 4 * alpha * alpha))
    gamma = min(max(gamma, 1e-12), 1 - 1e-12)
    qtilde = ((n + 1) * (1 - alpha) / (n * (1 - gamma * alpha))
              + 2.0 / (epsilon * n) * math.log(m / (gamma * alpha)))
    edges = np.arange(m, dtype=float) / (m - 1)
    if scores.size != n:                # exactly the public n scores
        scores = _at_public_size(scores, n, edges, rng)
    if qtilde >= 1.0:
        return 1.0                      # too little data or budget
    up = np.minimum(np.searchsorted(edges, scores, side="right"), m - 1)
    counts = np.bincount(up, minlength=m)
    at_or_below = np.cumsum(counts)
    below, above = at_or_below - counts, scores.size - at_or_below
    loss = np.maximum(below / qtilde, above / (1.0 - qtilde))
    exponent = epsilon * qtilde * (1.0 - qtilde)
    with np.errstate(over="ignore"):     # huge epsilon: -inf = probability 0
        logits = -exponent * (loss - loss.min())
    gumbel = rng.gumbel(size=m)
    return float(edges[np.argmax(logits + gumbel)])
