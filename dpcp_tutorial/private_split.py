"""Private split conformal prediction (chapter 4).

The model is fitted on one part of the data and a private quantile of the
scores is released from a *disjoint* calibration part of size :math:`n`, so the
two releases compose in parallel: under add/remove an :math:`\\varepsilon`-DP model
and an :math:`\\varepsilon`-DP quantile together cost :math:`\\varepsilon` (the rules,
both relations: :mod:`dpcp_tutorial.accounting`).

The estimators :class:`PrivateSplitConformalRegressor` and
:class:`PrivateSplitConformalClassifier` release, by default
(``calibrator="quantile"``), chapter 3's tight private quantile
(:func:`~dpcp_tutorial.private_quantile`) of the held-out scores; its
finite-sample coverage theorem carries over because, given the training part,
the calibration and test scores are exchangeable and the mechanism's noise is
independent of them. With a public ``n`` the scores are first subsampled or
padded to exactly ``n`` (:func:`~dpcp_tutorial._counts.subsample_or_pad`), which keeps that proof at
every part size and makes the calibration :math:`\\varepsilon`-DP under both
relations.

``calibrator="pps"`` is Angelopoulos et al.'s mechanism, after the authors'
reference implementation (``aangelopoulos/private_prediction_sets``), kept to
reproduce their results:

1. a grid of :math:`m` edges :math:`e_k = k/(m-1)`, :math:`k = 0, \\dots, m-1`
   (both 0 and 1 included);
2. each score is rounded *up* to the smallest edge strictly above it (capped at 1);
3. the corrected level :math:`\\tilde q = \\frac{(n+1)(1-\\alpha)}{n(1-\\gamma\\alpha)}
   + \\frac{2}{\\varepsilon n}\\log\\frac{m}{\\gamma\\alpha}`;
4. the loss :math:`w_j = \\max(A_j/\\tilde q,\\, B_j/(1-\\tilde q))` with
   :math:`A_j = \\#\\{\\tilde s_i < e_j\\}`, :math:`B_j = \\#\\{\\tilde s_i > e_j\\}`;
5. :math:`\\hat s = e_j` with probability :math:`\\propto \\exp(-c\\, w_j)`,
   drawn in log space.

Two exponents are available (``variant=``); the size :math:`n` of the
calibration set is treated as public.

* ``"tight"`` (default): :math:`c = \\varepsilon\\tilde q(1-\\tilde q)`, i.e.
  :math:`c\\,w_j = \\varepsilon\\max((1-\\tilde q)A_j,\\ \\tilde q B_j)`. Replacing one
  record moves a rounded score from one side of the edges between its old
  and new value to the other: every :math:`c\\,w_j` changes by at least
  :math:`-\\varepsilon(1-\\tilde q)` and at most :math:`\\varepsilon\\tilde q` (or the
  reverse), so the release is exactly :math:`\\varepsilon`-DP under replace-one;
  under add/remove (monotone loss) it is
  :math:`\\varepsilon\\max(\\tilde q, 1-\\tilde q)`-DP.
* ``"reference"``: :math:`c = \\varepsilon\\min(\\alpha, 1-\\alpha)/2`, as in the
  authors' code. Its sharp loss is :math:`c\\,(1/\\tilde q + 1/(1-\\tilde q))`
  under replace-one and :math:`c/\\min(\\tilde q, 1-\\tilde q)` under add/remove,
  which exceed :math:`\\varepsilon` once :math:`\\tilde q` is close to 1
  (:func:`pps_privacy_loss`); it is kept to reproduce the authors' results.

The coverage argument of the reference (the exponential mechanism's tail
bound) carries over to the tight exponent for :math:`\\alpha \\le 1/2`: it needs
:math:`(1-\\tilde q)/c \\le 2/\\varepsilon`, and :math:`(1-\\tilde q)/c = 1/(\\varepsilon\\tilde q)
\\le 2/\\varepsilon` because :math:`\\tilde q > 1-\\alpha \\ge 1/2` (chapter 4).
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    MAX_BINS,
    MAX_RECORDS,
    private_responses,
    real_array,
    text_column,
    REQUIRED,
    RandomLike,
    check_1d,
    check_alpha,
    check_bool,
    check_choice,
    check_epsilon,
    check_estimator,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
    deprecated_alias,
    model_outputs,
    require,
    silenced_model,
)
from ._counts import check_scores_or_histogram, edge_histogram, round_up_counts
from ._split_core import (
    compose_with_training,
    BOUND_ADVICE,
    INTEGER_LABELS,
    LabelSetMixin,
    SplitConformalBase,
    check_bound,
    check_release_sampler,
    clipped_residual_scores,
    is_unbounded,
    label_index,
    model_columns,
    private_classification_scores,
    public_size,
    release_threshold,
    residual_scores,
    sets_or_all,
    unbounded_interval,
    warn_trivial,
)
from .conformal import check_label_array
from ._mechanism_core import normalise
from .mechanisms import gumbel_max_sample

__all__ = [
    "pps_grid",
    "pps_round_up",
    "pps_corrected_level",
    "pps_optimal_gamma",
    "pps_choose_m",
    "pps_quantile_probabilities",
    "pps_private_quantile",
    "pps_privacy_loss",
    "PPS_VARIANTS",
    "normalized_residual_score",
    "bounded_interval",
    "PrivateSplitConformalRegressor",
    "PrivateSplitConformalClassifier",
]

_GAMMA_CLIP = 1e-12     # the reference clips gamma to [1e-12, 1 - 1e-12]
_M_SCAN = (4.0, 6.0, 50)  # the reference scans 50 log-spaced integers from 1e4 to 1e6
_M_WIDE = (1.0, 6.0, 61)  # the analytic rule's default scan: 61 log-spaced integers from 10 to 1e6
_M_RULES = {"auto": "analytic", "reference": "reference"}


def _check_m(m, name: str = "m") -> int:
    return check_positive_int(m, name, minimum=2, maximum=MAX_BINS)   # the tight quantile's cap: a release costs O(m)


def _check_gamma(gamma) -> float:
    return check_scalar(gamma, "gamma", low=0.0, high=1.0,
                        hint="gamma splits alpha between the finite-sample and the privacy correction; "
                             "use gamma='auto' for the optimal value")


def pps_grid(m: int) -> np.ndarray:
    """The :math:`m` equally spaced edges :math:`e_k = k/(m-1)`, :math:`k = 0, \\dots, m-1` (chapter 4).

    Both ends, 0 and 1, are edges; the resolution is :math:`1/(m-1)`.

    Parameters
    ----------
    m : int
        Number of edges, at least 2.

    Returns
    -------
    ndarray of shape (m,)
        The edges, from 0 to 1.

    Examples
    --------
    >>> pps_grid(5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    m = _check_m(m)
    return np.arange(m, dtype=float) / (m - 1)


def _round_up_index(scores: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Index of the smallest edge strictly above each score, capped at the top edge."""
    return np.minimum(np.searchsorted(edges, scores, side="right"), edges.size - 1)


def pps_round_up(scores, m: int) -> np.ndarray:
    """Round scores in [0, 1] up to the grid of :func:`pps_grid` (chapter 4).

    .. math:: \\tilde s = \\min\\{e_k : e_k > s\\}, \\quad \\text{capped at } 1,

    so an interior edge moves to the next one and a score of 1 stays at 1.
    For continuous scores this is rounding up to the next edge.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Scores in [0, 1].
    m : int
        Number of grid edges (:func:`pps_grid`).

    Returns
    -------
    ndarray of shape (n,)
        The rounded scores, edges of the grid.

    Examples
    --------
    >>> pps_round_up([0.0, 0.3, 0.5, 0.99, 1.0], m=3)
    array([0.5, 0.5, 1. , 1. , 1. ])
    """
    scores = check_1d(scores, "scores", unit_interval=True)
    edges = pps_grid(m)
    return edges[_round_up_index(scores, edges)]


def pps_corrected_level(n: int, alpha: float, epsilon: float, m: int, gamma: float) -> float:
    """The corrected quantile level :math:`\\tilde q` of private split conformal (chapter 4).

    .. math:: \\tilde q = \\frac{(n+1)(1-\\alpha)}{n(1-\\gamma\\alpha)}
                        + \\frac{2}{\\varepsilon n}\\log\\frac{m}{\\gamma\\alpha}.

    The first term is the finite-sample level inflated by :math:`1/(1-\\gamma\\alpha)`
    (a share :math:`(1-\\gamma)\\alpha` of the miscoverage is left for the data); the
    second pays for the exponential mechanism choosing among :math:`m` edges
    (a share :math:`\\gamma\\alpha` is its failure probability).

    Parameters
    ----------
    n : int
        Size of the calibration set (public).
    alpha : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of the quantile release.
    m : int
        Number of grid edges (at least 2).
    gamma : float
        Split of :math:`\\alpha`, in (0, 1); see :func:`pps_optimal_gamma`.

    Returns
    -------
    float
        :math:`\\tilde q` *without* capping. A value :math:`\\ge 1` means no
        informative private quantile exists at this :math:`(n, \\varepsilon)`: the
        prediction set is the whole label or response space
        (:func:`pps_private_quantile` then returns 1 without touching the data).

    Examples
    --------
    >>> round(pps_corrected_level(1000, alpha=0.1, epsilon=1.0, m=250, gamma=0.03), 4)
    0.9263
    """
    n = check_positive_int(n, "n")
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    m = _check_m(m)
    gamma = _check_gamma(gamma)
    return (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 2.0 / (epsilon * n) * math.log(m / (gamma * alpha))


def pps_optimal_gamma(n: int, alpha: float, epsilon: float) -> float:
    """The :math:`\\gamma` that minimises :math:`\\tilde q` (chapter 4).

    Setting :math:`\\partial\\tilde q/\\partial\\gamma = 0` gives the quadratic

    .. math:: \\alpha^2\\gamma^2 - \\Big(\\frac{\\alpha\\varepsilon(n+1)(1-\\alpha)}{2} + 2\\alpha\\Big)\\gamma + 1 = 0.

    :math:`\\tilde q` is convex in :math:`\\gamma` on :math:`(0, 1/\\alpha)` and the roots
    multiply to :math:`1/\\alpha^2`, so the minimiser is the *smaller* root,
    :math:`\\gamma^\\ast \\approx 2/(\\varepsilon n \\alpha(1-\\alpha))`. It is computed
    in the cancellation-free form :math:`2/(b + \\sqrt{b^2 - 4\\alpha^2})` and, as in
    the reference implementation, clipped to :math:`[10^{-12}, 1 - 10^{-12}]`.
    The minimiser does not depend on :math:`m`.

    Parameters
    ----------
    n : int
        Size of the calibration set (public).
    alpha : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of the quantile release.

    Returns
    -------
    float
        :math:`\\gamma^\\ast`.

    Examples
    --------
    >>> round(pps_optimal_gamma(1000, alpha=0.1, epsilon=1.0), 5)
    0.0221
    """
    n = check_positive_int(n, "n")
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    b = alpha * epsilon * (n + 1) * (1 - alpha) / 2 + 2 * alpha
    root = 2.0 / (b + math.sqrt(b * b - 4 * alpha * alpha))
    return min(max(root, _GAMMA_CLIP), 1 - _GAMMA_CLIP)


def _resolve_gamma(gamma, n: int, alpha: float, epsilon: float) -> float:
    if isinstance(gamma, str):
        if gamma != "auto":
            raise ValueError(f"gamma={gamma!r}: pass a float in (0, 1) or 'auto'")
        return pps_optimal_gamma(n, alpha, epsilon)
    return _check_gamma(gamma)


PPS_VARIANTS = ("tight", "reference")


def _check_variant(variant) -> str:
    if not isinstance(variant, str) or variant not in PPS_VARIANTS:
        raise ValueError(f"variant={variant!r} is not supported; choose 'tight' (the package default, exactly "
                         "epsilon-DP under replace-one and add/remove) or 'reference' (Angelopoulos et al.'s code)")
    return variant


def _exponent(alpha: float, epsilon: float, qtilde: float, variant: str) -> float:
    """Exponent ``c`` of ``exp(-c w)`` (chapter 4); depends only on public quantities."""
    if _check_variant(variant) == "tight":
        return epsilon * qtilde * (1.0 - qtilde)
    return epsilon * min(alpha, 1.0 - alpha) / 2.0


def _pps_weights(n: int, alpha: float, epsilon: float, m: int, gamma, variant: str):
    """Weights :math:`(w_A, w_B)` with :math:`c\\,w_j = \\max(w_A A_j, w_B B_j)`; None when :math:`\\tilde q \\ge 1`."""
    qtilde = pps_corrected_level(n, alpha, epsilon, m, _resolve_gamma(gamma, n, alpha, epsilon))
    if qtilde >= 1.0:
        return None
    if variant == "tight":        # c / q = eps (1 - q), c / (1 - q) = eps q, without rounding
        return epsilon * (1.0 - qtilde), epsilon * qtilde
    c = _exponent(alpha, epsilon, qtilde, variant)
    return c / qtilde, c / (1.0 - qtilde)


def pps_privacy_loss(n: int, alpha: float, epsilon: float, m: int, gamma="auto", variant: str = "tight", *,
                     relation: str = "replace-one", public_n: bool = True) -> float:
    """Sharp privacy loss of :func:`pps_private_quantile`: no neighbours exceed it, and they approach it (chapter 4).

    Write the release as :math:`P(e_j) \\propto \\exp(-\\max(w_A A_j, w_B B_j))`,
    :math:`(w_A, w_B) = (c/\\tilde q, c/(1-\\tilde q))` with :math:`c` the exponent
    of ``variant``. With :math:`n` public (``public_n=True``): replacing one record
    moves a rounded score from one side of the edges between its old and new
    value to the other, so the loss is :math:`w_A + w_B` under replace-one
    (:math:`\\varepsilon` for ``"tight"``). Under add/remove it is the same:
    :func:`pps_private_quantile` with a public ``n`` first subsamples or pads
    the scores to exactly ``n``, which turns adding or removing a record into
    a replacement at size ``n``. (The mechanism alone, with its level fixed
    at ``n`` and run on :math:`n \\pm 1` scores, moves every :math:`\\max(\\cdot)`
    by at most :math:`\\max(w_A, w_B)`, i.e. :math:`\\varepsilon\\max(\\tilde q,
    1-\\tilde q)` for ``"tight"``; but on other sizes than ``n`` its level
    loses the coverage guarantee, so the release never runs that way.) When
    :math:`\\tilde q \\ge 1` the release is the constant 1 and the loss is 0.

    ``public_n=False`` (add/remove only): :math:`\\tilde q` (and ``gamma="auto"``)
    recomputed from each data set's own size, between sizes :math:`n` and
    :math:`n+1` on a fixed grid of ``m`` edges. With :math:`(w_A, w_B)` at
    :math:`n`, :math:`(w_A', w_B')` at :math:`n+1` and
    :math:`\\Delta_A = w_A' - w_A`, :math:`\\Delta_B = w_B' - w_B`: adding a record
    :math:`r` changes :math:`w_A A_j` by :math:`\\Delta_A A_j + w_A' x_j` and
    :math:`w_B B_j` by :math:`\\Delta_B B_j + w_B' y_j`, with :math:`A_j, B_j \\in [0, n]`
    and :math:`x_j + y_j \\le 1` (the new rounded score lies below, above or at
    :math:`e_j`). Every exponent therefore moves within :math:`[L, U]`,

    .. math:: U = \\max\\big(\\max(0, n\\Delta_A) + w_A',\\ \\max(0, n\\Delta_B) + w_B'\\big), \\qquad
              L = \\min(0, n\\Delta_A, n\\Delta_B),

    and :math:`|\\log P'(e_j) - \\log P(e_j)| \\le U - L` (the normalising constants
    move within the same range). This bound is returned; it reduces to
    :math:`\\max(w_A, w_B)` when the level does not move. It is infinite when the
    release is trivial at exactly one of the two sizes (a constant against a
    random edge), and 0 when it is trivial at both.

    Parameters
    ----------
    n : int
        Public calibration size.
    alpha : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of the release.
    m : int
        Number of grid edges.
    gamma : float or "auto", default="auto"
        Split of :math:`\\alpha` (:func:`pps_optimal_gamma` for ``"auto"``).
    variant : {"tight", "reference"}, default="tight"
        The exponent of the release (:func:`pps_private_quantile`).
    relation : {"replace-one", "add/remove"}, default="replace-one"
        The neighbour relation.
    public_n : bool, default=True
        Whether the release is given the public ``n``; ``False`` (add/remove
        only): the level is recomputed from each data set's own size.

    Returns
    -------
    float
        The privacy loss.

    Examples
    --------
    >>> pps_privacy_loss(1000, alpha=0.1, epsilon=1.0, m=250)
    1.0
    >>> round(pps_privacy_loss(1000, alpha=0.1, epsilon=1.0, m=250, variant="reference"), 4)
    0.7312
    >>> round(pps_privacy_loss(1000, alpha=0.1, epsilon=1.0, m=250, relation="add/remove",
    ...                        public_n=False), 4)
    0.9503
    """
    variant = _check_variant(variant)
    relation = check_choice(relation, "relation", ("replace-one", "add/remove"))
    public_n = check_bool(public_n, "public_n")
    n = check_positive_int(n, "n")
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    m = _check_m(m)
    if isinstance(gamma, str):
        _resolve_gamma(gamma, n, alpha, epsilon)      # validates "auto"
    else:
        _check_gamma(gamma)
    weights = _pps_weights(n, alpha, epsilon, m, gamma, variant)
    if public_n:
        if weights is None:
            return 0.0
        if variant == "tight":
            return epsilon
        return weights[0] + weights[1]        # add/remove: a replacement at size n (subsample or pad)
    if relation != "add/remove":
        raise ValueError("public_n=False compares data sets of sizes n and n + 1: use relation='add/remove' (under "
                         "replace-one the size never changes)")
    after = _pps_weights(n + 1, alpha, epsilon, m, gamma, variant)
    if weights is None or after is None:
        return 0.0 if weights is None and after is None else math.inf
    d_a, d_b = n * (after[0] - weights[0]), n * (after[1] - weights[1])
    upper = max(max(0.0, d_a) + after[0], max(0.0, d_b) + after[1])
    lower = min(0.0, d_a, d_b)
    return upper - lower


def _pps_law(scores, alpha, epsilon, m, gamma, variant, n):
    """Edges, log-weights (up to a constant) and qtilde; ``logits is None`` means the trivial release."""
    scores = check_scores_or_histogram(scores)    # an array, or a merged histogram (chapter 14)
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    m = _check_m(m)
    n = scores.size if n is None else check_positive_int(n, "n")
    gamma = _resolve_gamma(gamma, n, alpha, epsilon)
    qtilde = pps_corrected_level(n, alpha, epsilon, m, gamma)
    edges = pps_grid(m)
    if qtilde >= 1.0:
        return edges, None, qtilde
    counts = round_up_counts(edge_histogram(scores, edges, validated=True))   # one counting pass
    at_or_below = np.cumsum(counts)
    below = at_or_below - counts              # A_j = #{rounded score < e_j}
    above = scores.size - at_or_below         # B_j = #{rounded score > e_j}
    loss = np.maximum(below / qtilde, above / (1.0 - qtilde))
    logits = -_exponent(alpha, epsilon, qtilde, variant) * (loss - loss.min())
    return edges, logits, qtilde


def pps_quantile_probabilities(scores, alpha: float, epsilon: float, m: int, gamma="auto",
                               variant: str = "tight", n: int | None = None,
                               log: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exact output law of :func:`pps_private_quantile` for a fixed grid size ``m``.

    Parameters
    ----------
    scores : array-like of shape (N,)
        Calibration scores in [0, 1], as in :func:`pps_private_quantile`.
    alpha : float
        Miscoverage level.
    epsilon : float
        Privacy budget of the release.
    m : int
        Number of grid edges.
    gamma : float or "auto", default="auto"
        Split of :math:`\\alpha`, as in :func:`pps_private_quantile`.
    variant : {"tight", "reference"}, default="tight"
        As in :func:`pps_private_quantile`.
    n : int, default=None
        The public calibration size used in :math:`\\tilde q` (default: the number
        of scores). The counts are those of ``scores`` as given: this is the
        law of :func:`pps_private_quantile` when ``n`` is ``None`` or
        ``len(scores)``. With a public ``n`` and other sizes the release first
        pads (its law is this one on the padded scores) or subsamples (the
        average of this one over the uniform ``n``-subsets); on :math:`n \\pm 1`
        scores at a fixed level it shows the mechanism's own add/remove loss.
    log : bool, default=False
        Return log-probabilities (exact where probabilities underflow).

    Returns
    -------
    edges : ndarray of shape (m,)
    probabilities : ndarray of shape (m,)
        :math:`P(\\hat s = e_j)`; all mass on the top edge when :math:`\\tilde q \\ge 1`.

    Examples
    --------
    >>> s = np.random.default_rng(0).uniform(size=1000)
    >>> edges, p = pps_quantile_probabilities(s, alpha=0.1, epsilon=1.0, m=41)
    >>> edges[p > 0.01], np.round(p[p > 0.01], 3)
    (array([0.925, 0.95 , 0.975]), array([0.789, 0.185, 0.021]))
    """
    edges, logits, _ = _pps_law(scores, alpha, epsilon, m, gamma, variant, n)
    if logits is None:
        logits = np.full(edges.size, -np.inf)
        logits[-1] = 0.0
    return edges, normalise(logits, log)


def pps_choose_m(n: int, alpha: float, epsilon: float, candidates=None, variant: str = "tight",
                 rule: str = "analytic", rng: RandomLike = None) -> tuple[int, float]:
    """Data-independent choice of the grid size :math:`m` and of :math:`\\gamma` (chapter 4).

    ``rule="analytic"`` (default, the package's ``m="auto"``) is deterministic:
    it minimises :math:`\\tilde q(m) + 1/(2(m-1))`, the corrected level plus the
    mean rounding of a score whose position between two edges is uniform
    (exact for uniform scores, in score units), over the candidates. Since
    :math:`m` enters :math:`\\tilde q` as :math:`\\frac{2}{\\varepsilon n}\\log m` while the
    resolution is :math:`1/(m-1)`, the minimiser is close to :math:`m = \\varepsilon n/4`.
    The default candidates are 61 log-spaced integers from 10 to :math:`10^6`;
    the cost is one vectorised evaluation of :math:`\\tilde q` (microseconds).

    ``rng`` is used by the reference rule only (the simulated scores and
    releases); the analytic rule is deterministic.

    ``rule="reference"`` follows the authors' reference implementation
    (``m="reference"``, kept to reproduce their results): simulate one set of
    :math:`n` uniform scores, run the private quantile once for every candidate
    (default: their 50 log-spaced integers from :math:`10^4` to :math:`10^6`) and keep
    the :math:`m` whose sampled threshold is smallest. It is random (seed
    ``rng``), slow (50 releases, about 2 s at :math:`n = 10^4`) and, with a
    single simulated sample, noisy: the winner can be a coarse grid whose edges
    happen to fall just below the sample's quantile. In the settings of
    ``python -m benchmarks private_split`` (uniform scores, exact laws) its
    expected threshold is above the analytic rule's, by about 0.01 when
    :math:`n\\varepsilon \\le 1000`, where its grids of at least :math:`10^4` edges pay
    :math:`\\frac{2}{\\varepsilon n}\\log m` for a resolution nobody needs.

    *Neither rule reads the data*: the arguments are the public size ``n``,
    ``alpha``, ``epsilon``, the candidates, the variant and (for the
    reference rule) the seed; the simulated scores of the reference rule are
    drawn from ``rng``. So the choice costs no privacy, and it is the same for
    every data set of the public size ``n``.

    Parameters
    ----------
    n : int
        Public calibration size.
    alpha : float
        Miscoverage level in (0, 1).
    epsilon : float
        Privacy budget of the release.
    candidates : sequence of int, default=None
        The grid sizes compared (each at least 2); ``None``: the rule's default
        scan.
    variant : {"tight", "reference"}, default="tight"
        As in :func:`pps_private_quantile`.
    rule : {"analytic", "reference"}, default="analytic"
        The rule (above).
    rng : None, int or numpy.random.Generator, default=None
        Source of the reference rule's simulated scores and releases (public:
        :term:`Seed`).

    Returns
    -------
    m : int
        The chosen number of edges (the reference's fallback
        :math:`\\lfloor 1/\\alpha \\rfloor` if no candidate beats 1).
    gamma : float
        :func:`pps_optimal_gamma` ``(n, alpha, epsilon)``.

    Examples
    --------
    >>> m, gamma = pps_choose_m(1000, alpha=0.1, epsilon=1.0)
    >>> m, round(gamma, 5)
    (261, 0.0221)
    """
    n = check_positive_int(n, "n")
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    rule = check_choice(rule, "rule", ("analytic", "reference"),
                        "'analytic' is deterministic (the package's m='auto'), 'reference' the authors' random scan")
    _check_variant(variant)
    rng = check_random_state(rng)
    if candidates is None:
        low, high, count = _M_SCAN if rule == "reference" else _M_WIDE
        candidates = np.unique(np.logspace(low, high, count).astype(int))
    elif isinstance(candidates, (str, bytes)) or np.ndim(candidates) != 1:
        raise TypeError(f"candidates must be a 1-D list of grid sizes m (integers >= 2), or None for the default "
                        f"grid, got {type(candidates).__name__}")
    candidates = [_check_m(c, "candidates") for c in candidates]
    if not candidates:
        raise ValueError("candidates is empty; give at least one grid size m (or None for the default grid)")
    gamma = pps_optimal_gamma(n, alpha, epsilon)
    if rule == "analytic":
        m = np.asarray(candidates, dtype=float)   # pps_corrected_level, vectorised over the candidates
        cost = (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 2.0 / (epsilon * n) * np.log(m / (gamma * alpha)) \
            + 0.5 / (m - 1)
        return candidates[int(np.argmin(cost))], gamma
    simulated = rng.uniform(size=n)
    best_m, best_s = max(int(1 / alpha), 2), 1.0
    for m in candidates:
        s = pps_private_quantile(simulated, alpha, epsilon, m=m, gamma=gamma, variant=variant, rng=rng)
        if s < best_s:
            best_m, best_s = m, s
    return best_m, gamma


def _resolve_m(m, n: int, alpha: float, epsilon: float, variant: str, rng: np.random.Generator) -> int:
    """``m`` as an integer: ``"auto"`` is the analytic rule, ``"reference"`` the authors' random scan."""
    if isinstance(m, str):
        if m not in _M_RULES:
            raise ValueError(f"m={m!r}: pass an integer >= 2, 'auto' (the analytic choice) or 'reference' (the "
                             "authors' random scan, for reproduction)")
        return pps_choose_m(n, alpha, epsilon, variant=variant, rule=_M_RULES[m], rng=rng)[0]
    return _check_m(m)


def pps_private_quantile(scores, alpha: float, epsilon: float, m="auto", gamma="auto",
                         variant: str = "tight", n: int | None = None, rng: RandomLike = None) -> float:
    """:math:`\\varepsilon`-DP conformal threshold of Angelopoulos et al. (chapter 4).

    Rounds the scores up to the grid :math:`k/(m-1)`, computes the corrected
    level :math:`\\tilde q` (:func:`pps_corrected_level`) and samples an edge with
    probability :math:`\\propto \\exp(-c\\,w_j)`,
    :math:`w_j = \\max(A_j/\\tilde q, B_j/(1-\\tilde q))`, by the Gumbel-max trick in
    log space. Cost :math:`O(n \\log m + m)`.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Calibration scores in [0, 1] (normalised by a *public* bound for regression).
    alpha : float
        Miscoverage level.
    epsilon : float
        Privacy budget of this release.
    m : int, "auto" or "reference", default="auto"
        Number of grid edges; ``"auto"``: :func:`pps_choose_m`'s deterministic
        analytic rule, ``"reference"``: the authors' random scan (slow; for
        reproduction). Neither reads the scores.
    gamma : float or "auto", default="auto"
        Split of :math:`\\alpha`; ``"auto"`` is :func:`pps_optimal_gamma`.
    variant : {"tight", "reference"}, default="tight"
        ``"tight"`` (default): :math:`c = \\varepsilon\\tilde q(1-\\tilde q)`, exactly
        :math:`\\varepsilon`-DP under replace-one and
        :math:`\\varepsilon\\max(\\tilde q, 1-\\tilde q)`-DP under add/remove (:math:`n`
        public). ``"reference"``: :math:`c = \\varepsilon\\min(\\alpha,1-\\alpha)/2`,
        the authors' code; its loss can exceed :math:`\\varepsilon` (:func:`pps_privacy_loss`).
    n : int, default=None
        Public calibration size used in :math:`\\tilde q` (default: ``len(scores)``,
        then declared public). Given, the release runs on exactly ``n``
        scores: a uniform ``n``-subset when there are more (drawn from
        ``rng``, from the counts on the grid, so that an array and its
        histogram give the same release), the scores padded with the maximal
        score 1 when there are fewer (none at all is allowed), as in
        :func:`~dpcp_tutorial.private_quantile`. The coverage argument at size
        ``n`` then holds at every data size, and adding or removing a record
        is a replacement at size ``n`` (the add/remove loss is the replace-one
        loss, :func:`pps_privacy_loss`). Nothing is drawn when there are
        exactly ``n`` scores.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise (and of the subsampling and the ``m`` search);
        ``rng=None`` (fresh OS entropy) for a real release (:term:`Seed`).

    Returns
    -------
    float
        The threshold :math:`\\hat s`, an edge of the grid. When :math:`\\tilde q \\ge 1`
        it is 1 (the whole space), returned without looking at the scores.
        The set is :math:`\\{y : s(x, y) \\le \\hat s\\}` (the reference uses ``<``;
        the two differ only on exact ties).

    Notes
    -----
    **No OpenDP sampler** is offered here (unlike
    :func:`~dpcp_tutorial.private_quantile`): the exponent
    :math:`c\\,w_j` is a real multiple of the counts through :math:`\\tilde q`,
    and OpenDP's exact report-noisy-max certifies its guarantee for utilities
    whose sensitivity is exact (integers). An integer version would round
    :math:`\\tilde q` to a grid, i.e. be another mechanism than the one this
    function reproduces, whose coverage argument (chapter 4) is stated for
    :math:`\\tilde q` itself. For a hardened release use the tight private
    quantile with ``sampler="opendp"`` (``calibrator="quantile"`` of the split
    estimators, the package default).

    Examples
    --------
    >>> s = np.random.default_rng(0).uniform(size=1000)
    >>> round(pps_private_quantile(s, alpha=0.1, epsilon=1.0, rng=1), 4)
    0.9308
    """
    from .quantile import at_public_size

    rng = check_random_state(rng)
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    if n is None:
        scores_arr = check_scores_or_histogram(scores)
        n_public = scores_arr.size
    else:
        n_public = check_positive_int(n, "n", maximum=MAX_RECORDS)
    m = _resolve_m(m, n_public, alpha, epsilon, variant, rng)
    if n is not None:        # exactly n scores: a uniform n-subset (drawn from the counts on the grid), or padded
        scores_arr = at_public_size(scores, n_public, rng, pps_grid(m))
    edges, logits, _ = _pps_law(scores_arr, alpha, epsilon, m, gamma, variant, n_public)
    if logits is None:
        return 1.0
    return float(edges[gumbel_max_sample(logits, rng)])


# ---------------------------------------------------------------------------
# scores on [0, 1] and the sets they give (shared with chapter 6)
# ---------------------------------------------------------------------------


def _responses(y, allow_empty: bool) -> np.ndarray:
    """Calibration responses read record by record; an unusable one (missing, NaN, infinite, beyond 1e100) is NaN,
    which gives its record the worst score."""
    values, usable = private_responses(y, allow_empty=allow_empty)
    return np.where(usable, values, np.nan)


def normalized_residual_score(y_true, y_pred, bound: float) -> np.ndarray:
    """Regression score on [0, 1] through a public bound :math:`B` (chapters 4 and 6).

    .. math:: R = \\min(|y - \\hat\\mu(x)| / B,\\ 1).

    :math:`B` must not depend on the data (a data maximum has unbounded
    sensitivity and leaks); residuals above :math:`B` are clipped to 1.
    ``y_true`` must lie in the data domain (finite, at most 1e100 in
    magnitude); ``y_pred`` may be any model output: a NaN or infinite
    residual is the worst score 1, so that no prediction of a model on private
    records can make the score fail.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        The responses, finite.
    y_pred : array-like of shape (n,)
        The model's predictions (any real values, NaN and infinities included).
    bound : float
        The public bound :math:`B > 0` on the absolute residuals, in the
        response's units.

    Returns
    -------
    ndarray of shape (n,)
        The scores, in [0, 1].

    Examples
    --------
    >>> normalized_residual_score([1.0, 2.0, 5.0], [1.5, np.nan, 0.0], bound=2.0)
    array([0.25, 1.  , 1.  ])
    """
    bound = check_bound(bound)
    y_true = check_1d(y_true, "y_true")
    return clipped_residual_scores(y_true, y_pred, bound)


#: the former spelling (FutureWarning); the package writes ``normalized_`` (as ``normalized_score``)
normalised_residual_score = deprecated_alias(normalized_residual_score, "normalised_residual_score")


def bounded_interval(y_pred, qhat: float, bound: float) -> np.ndarray:
    """Intervals :math:`\\hat\\mu(x) \\pm B\\hat q`, or the whole line when :math:`\\hat q = 1` (chapters 4 and 6).

    A threshold at the top edge admits every clipped score, i.e. every
    residual, so the set is :math:`(-\\infty, \\infty)`, not
    :math:`\\hat\\mu \\pm B` (DPCP write-up error D7). A prediction that is NaN
    or infinite (e.g. a model's output on missing features) gets the whole
    line: its residual is the worst score, which every threshold admits.

    Parameters
    ----------
    y_pred : array-like of shape (n,)
        The model's predictions.
    qhat : float
        The released threshold on the normalized scores, in [0, 1].
    bound : float
        The public bound :math:`B` of the scores (:func:`normalized_residual_score`).

    Returns
    -------
    ndarray of shape (n, 2)

    Examples
    --------
    >>> bounded_interval([1.0, np.nan], qhat=0.25, bound=2.0)
    array([[ 0.5,  1.5],
           [-inf,  inf]])
    """
    y_pred = real_array(y_pred, "y_pred")
    if y_pred.ndim != 1 or y_pred.size == 0:
        raise ValueError(f"y_pred must be a non-empty one-dimensional array, got a {y_pred.ndim}-D array"
                         + (" with no entry" if y_pred.ndim == 1 else ""))
    bound = check_bound(bound)
    qhat = check_scalar(qhat, "qhat", low=0.0, high=1.0, low_inclusive=True, high_inclusive=True,
                        hint="qhat is a threshold on scores normalised to [0, 1]")
    half = math.inf if qhat >= 1.0 else bound * qhat
    unknown = ~np.isfinite(y_pred)
    centre = np.where(unknown, 0.0, y_pred)
    half = np.where(unknown, math.inf, half)
    return np.column_stack([centre - half, centre + half])


# ---------------------------------------------------------------------------
# the calibration release shared by the split estimators (chapters 4 and 17)
# ---------------------------------------------------------------------------

CALIBRATORS = ("quantile", "pps")


def _check_calibrator(calibrator) -> str:
    if not isinstance(calibrator, str) or calibrator not in CALIBRATORS:
        raise ValueError(f"calibrator={calibrator!r} is not supported; choose 'quantile' (the default: chapter 3's "
                         "tight private quantile) or 'pps' (Angelopoulos et al.'s mechanism, chapter 4)")
    return calibrator


def _check_m_setting(m):
    if isinstance(m, str):
        if m not in _M_RULES:
            raise ValueError(f"m={m!r}: pass an integer >= 2, 'auto' or 'reference'")
        return m
    return _check_m(m)


def _check_gamma_setting(gamma):
    if isinstance(gamma, str):
        if gamma != "auto":
            raise ValueError(f"gamma={gamma!r}: pass a float in (0, 1) or 'auto'")
        return gamma
    return _check_gamma(gamma)


def _pps_losses(alpha, size, epsilon, m, gamma, variant, public_n: bool, m_setting, rng):
    replace = (pps_privacy_loss(size, alpha, epsilon, m, gamma, variant), 0.0)
    if public_n:
        return replace, replace, ()
    if m_setting == "reference" or (m_setting == "auto" and any(
            _resolve_m("auto", k, alpha, epsilon, variant, rng) != m for k in (size - 1, size + 1) if k >= 1)):
        return None, replace, (f"add/remove: not covered: with n=None and m={m_setting!r} the grid is chosen from "
                               "the calibration size, and neighbours of sizes N - 1, N, N + 1 can use different "
                               "grids; pass a public n= (or an integer m)",)
    losses = [pps_privacy_loss(k, alpha, epsilon, m, gamma, variant, relation="add/remove", public_n=False)
              for k in (size - 1, size) if k >= 1]
    worst = max(losses) if size >= 2 else math.inf
    if not math.isfinite(worst):
        return None, replace, ("add/remove: not covered: with n=None the corrected level is recomputed from the "
                               "calibration size and one neighbour's release is trivial while the other's is not; "
                               "pass a public n=",)
    return (worst, 0.0), replace, (
        f"n=None: the calibration size {size} is treated as public; add/remove is the bound for a level recomputed "
        "from each neighbour's own size (pps_privacy_loss(..., public_n=False))",)


def _release_threshold(owner, scores: np.ndarray, *, calibrator: str, alpha: float, epsilon: float, bins, m, gamma,
                       variant: str, n, rng: np.random.Generator, sampler: str = "numpy"):
    """The split estimators' threshold (:func:`~dpcp_tutorial._split_core.release_threshold`), by the tight
    quantile or, with ``calibrator="pps"``, by Angelopoulos et al.'s mechanism; every setting is validated in
    every mode."""
    from .quantile import quantile_edges

    quantile_edges(bins)
    _check_m_setting(m)
    _check_gamma_setting(gamma)
    _check_variant(variant)

    def pps(owner, scores, size, public_n, rng):
        m_used = _resolve_m(m, size, alpha, epsilon, variant, rng)
        owner.m_ = m_used
        owner.gamma_ = _resolve_gamma(gamma, size, alpha, epsilon)
        owner.qtilde_ = pps_corrected_level(size, alpha, epsilon, m_used, owner.gamma_)
        qhat = pps_private_quantile(scores, alpha, epsilon, m=m_used, gamma=owner.gamma_, variant=variant,
                                    n=size, rng=rng)
        ar, ro, notes = _pps_losses(alpha, size, epsilon, m_used, gamma, variant, public_n, m, rng)
        return qhat, f"private split quantile (Angelopoulos et al., {variant}, m = {m_used})", ar, ro, notes

    return release_threshold(owner, scores, alpha=alpha, epsilon=epsilon, bins=bins, n=n, rng=rng,
                             sampler=sampler, calibrate=None if calibrator == "quantile" else pps)


def _split_account(model, spend, notes, public, chapter: str):
    """Parallel composition of the model's own account (training part) and the calibration spend."""
    from .accounting import Spend, make_account, public_step_notes, trainer_account

    public = [*public, *public_step_notes(model)]
    trainer = trainer_account(model)
    if trainer is not None:
        return compose_with_training(trainer, spend, public=public, notes=notes, chapter=chapter)
    # the calibration part is then the whole private data set
    public.append("the training data: the model reports no privacy_ (not a DP trainer), so the data it was "
                  "fitted on are treated as public; fit it on public data or use a DP trainer")
    spend = Spend(spend.label, spend.add_remove, spend.replace_one, part="all")
    primary = "add/remove" if spend.add_remove is not None else "replace-one"
    return make_account([spend], relation=primary, public=public, chapter=chapter, notes=notes)


_SPLIT_PUBLIC = ("the split into a training and a calibration part, by a per-record rule (a public key or a coin "
                 "per record), independent of the values",)


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------


def _release_unbounded(owner, scores: np.ndarray):
    """The regressor's threshold without a bound: the unbounded private quantile of the raw residuals (chapter 18)."""
    import warnings

    from .accounting import ReleaseWarning, Spend
    from .unbounded import (GROWTH, MAX_STEPS, unbounded_private_quantile, unbounded_quantile_privacy_loss,
                            unbounded_quantile_target)

    from .quantile import quantile_edges

    alpha, epsilon, calibrator, n = owner._settings()
    quantile_edges(owner.bins)                  # the bounded calibrators' settings are validated in every mode
    _check_m_setting(owner.m)
    _check_gamma_setting(owner.gamma)
    _check_variant(owner.variant)
    if calibrator != "quantile":
        raise ValueError("bound='unbounded' releases the threshold with the unbounded private quantile; "
                         "calibrator='pps' needs a public bound (pass calibrator='quantile')")
    sampler = check_release_sampler(owner.sampler, owner.rng, calibrator)
    rng = check_random_state(owner.rng)
    size = n if n is not None else scores.size
    try:                                         # public inputs only (n public, or the size declared public)
        unbounded_quantile_target(alpha, size, epsilon)
    except ValueError as exc:
        raise ValueError(f"alpha={alpha:g} is infeasible for this calibration: {exc}") from None
    qhat = unbounded_private_quantile(scores, alpha, epsilon, n=n, rng=None if sampler == "opendp" else rng,
                                      sampler=sampler)
    if n is not None:
        ar, notes = (epsilon, 0.0), ()
    else:
        try:
            losses = [unbounded_quantile_privacy_loss(alpha, k, epsilon, relation="add/remove", public_n=False)
                      for k in (size - 1, size)]
            ar, notes = (max(losses), 0.0), (
                f"n=None: the calibration size {size} is treated as public; add/remove is the bound for a target "
                "recomputed from each neighbour's own size (unbounded_quantile_privacy_loss(..., public_n=False))",)
        except ValueError:
            ar, notes = None, ("add/remove: not covered: with n=None the target is recomputed from the calibration "
                               "size, and a neighbour with one record fewer is infeasible; pass a public n=",)
    spend = Spend(f"unbounded private quantile (AboveThreshold, growth {GROWTH:g}, {MAX_STEPS} steps"
                  + (", OpenDP sampler)" if sampler == "opendp" else ")"), ar, (epsilon, 0.0), part="calibration")
    owner.n_ = size
    owner.qhat_ = qhat
    described = f"calibration size n = {n} (subsample-or-pad)" if n is not None else \
        f"calibration size N = {size} (n=None)"
    owner.privacy_ = _split_account(owner._fitted_estimator(), spend, notes,
                                    ("no bound on the residuals was assumed (bound='unbounded'; only the lower "
                                     "end 0 of |y - prediction| is public)", described, *_SPLIT_PUBLIC),
                                    "chapter 18")
    if not math.isfinite(qhat):
        warnings.warn("the released threshold is +inf: every interval is (-inf, inf). This is a valid private "
                      "release but carries no information; use more calibration data or a larger epsilon (the "
                      "warning depends only on the release, so it costs no privacy)", ReleaseWarning, stacklevel=3)
    return owner


class _PrivateSplitBase(SplitConformalBase):
    """Shared calibrate step: a private threshold from the calibration scores (chapter 4)."""

    def fit(self, X, y):
        """Fit a clone of ``estimator`` on the training part; a model whose steps no account certifies is refused.

        A model with a DP step (e.g. ``make_pipeline(PublicScaler(low, high),
        DPRidgeRegression(...))``) must have every other step public
        (:func:`dpcp_tutorial.accounting.check_model_privacy`: the model
        object is read, never the data); a model with no DP step is a
        non-private model whose training data ``privacy_`` lists as public.
        """
        from .accounting import check_model_privacy

        check_estimator(self.estimator, "estimator", self._METHODS)
        check_model_privacy(self.estimator, type(self).__name__)
        return super().fit(X, y)

    def _settings(self):
        return self._alpha(), check_epsilon(self.epsilon), _check_calibrator(self.calibrator), \
            public_size(self.n)

    def _release(self, scores: np.ndarray, public, what: str):
        alpha, epsilon, calibrator, n = self._settings()
        sampler = check_release_sampler(self.sampler, self.rng, calibrator)
        rng = check_random_state(self.rng)
        qhat, spend, notes = _release_threshold(self, scores, calibrator=calibrator, alpha=alpha, epsilon=epsilon,
                                                bins=self.bins, m=self.m, gamma=self.gamma, variant=self.variant,
                                                n=n, rng=rng, sampler=sampler)
        self.qhat_ = qhat
        size = f"calibration size n = {n} (subsample-or-pad)" if n is not None else \
            f"calibration size N = {self.n_} (n=None)"
        self.privacy_ = _split_account(self._fitted_estimator(), spend, notes,
                                       (*public, size, *_SPLIT_PUBLIC), "chapter 4")
        warn_trivial(qhat, what)
        return self

    def _calibration_arrays(self, X, y, y_check):
        """Validated calibration data; empty data are allowed (and padded) when ``n`` is public."""
        from .accounting import check_model_privacy

        _, _, _, n = self._settings()
        check_model_privacy(self._fitted_estimator(), type(self).__name__)   # the model object only
        X = self._features(X, calibrating=True, min_rows=0 if n is not None else 1)
        y = y_check(y, n is not None)
        check_same_length(("X", X), ("y", y))
        return X, y


_COMMON_PARAMS = """
    calibrator : {"quantile", "pps"}, default="quantile"
        ``"quantile"`` (default): chapter 3's tight private quantile
        (:func:`~dpcp_tutorial.private_quantile`, ``bins`` edges), exactly
        :math:`\\varepsilon`-DP under replace-one with the finite-sample guarantee
        :math:`P(s_{n+1} \\le \\hat q) \\ge 1-\\alpha`. ``"pps"``: Angelopoulos et al.'s
        mechanism (:func:`pps_private_quantile`, parameters ``m``, ``gamma``,
        ``variant``), reproduced from chapter 4's last section.
    bins : int or array-like, default=1000
        Edges of the tight private quantile (``calibrator="quantile"``).
    m : int, "auto" or "reference", default="auto"
        As in :func:`pps_private_quantile` (``calibrator="pps"``); validated in
        both modes, as are ``gamma`` and ``variant``.
    gamma : float or "auto", default="auto"
        As in :func:`pps_private_quantile` (``calibrator="pps"``).
    variant : {"tight", "reference"}, default="tight"
        As in :func:`pps_private_quantile` (``calibrator="pps"``).
    n : int or None, default=None
        Public calibration size. Given: the calibration scores are subsampled
        or padded with 1 to exactly ``n`` records (``mondrian``'s rule,
        :func:`~dpcp_tutorial._counts.subsample_or_pad`), which keeps the coverage proof at every
        data size and makes the release :math:`\\varepsilon`-DP under add/remove
        and replace-one alike, with the calibration size private. ``None``:
        the number of calibration records is used and treated as **public**
        (replace-one: :math:`\\varepsilon`; add/remove: the bound for a level
        recomputed from each neighbour's size, reported in ``privacy_``).
    prefit : bool, default=False
        Whether ``estimator`` is already fitted.
    allow_low_coverage : bool, default=False
        ``alpha`` is the miscoverage, ``1 - confidence_level``; an ``alpha``
        above 1/2 is refused unless this is ``True``.
    rng : None, int or numpy.random.Generator, default=None
        Randomness of the mechanism (and of the subsampling and the ``m`` search);
        ``rng=None`` (fresh OS entropy) for a real release (:term:`Seed`).
    sampler : {"numpy", "opendp"}, default="numpy"
        The tight quantile's sampler (:func:`~dpcp_tutorial.private_quantile`):
        ``"numpy"`` (default), or OpenDP's exact report-noisy-max on integer
        utilities (``"opendp"``: level rounded down to the grid :math:`A/2^{32}`,
        the same privacy and coverage guarantees; ``rng`` must be ``None``).
        ``calibrator="pps"`` offers NumPy's sampler only.
"""

_COMMON_ATTRIBUTES = """
    qhat_ : float
        The released threshold on the normalised scale (1: the whole space,
        with a :class:`~dpcp_tutorial.ReleaseWarning`).
    privacy_ : PrivacyAccount
        The pipeline's account (rules in :mod:`dpcp_tutorial.accounting`):
        the model's own ``privacy_`` on the training part (or the training data
        listed as public for a non-private model) in parallel with the
        calibration on the disjoint calibration part.
    n_ : int
        The calibration size the mechanism used (``n``, or the data's own size).
    level_ : float
        The tight quantile's level :math:`\\alpha_0` (``calibrator="quantile"``).
    qtilde_, m_, gamma_ : float, int, float
        The corrected level and tuning parameters (``calibrator="pps"``).
"""

_PRIVACY_NOTES = """
    **Privacy.** ``epsilon`` is the budget of the calibration release, the one
    computation this estimator makes from private data (the rule for
    ``epsilon``: :mod:`dpcp_tutorial.accounting`). A DP trainer's own budget is
    read from its ``privacy_`` and shown as its own part. With the training and
    calibration parts disjoint and each record's part decided by a per-record
    rule, they compose in parallel: under add/remove the pipeline costs
    :math:`\\max(\\varepsilon_{\\text{model}}, \\varepsilon)`; under replace-one a record
    can move from one part to the other, and ``privacy_`` reports
    :math:`\\max(RO, AR_{\\text{model}} + AR_{\\text{cal}})`. No branch, warning or
    error of :meth:`calibrate` depends on private values beyond the data-domain
    checks (one fixed message each); the :class:`~dpcp_tutorial.ReleaseWarning`
    depends on the release only. The model runs on the calibration records
    inside :func:`~dpcp_tutorial._validation.silenced_model`: its own warnings
    (overflow, convergence, feature names ...) are dropped, and its outputs
    are mapped to public bounds (NaN and infinite outputs included).

    **Coverage** (chapter 4). Given the training part, the calibration scores
    and a test score are exchangeable and the mechanism's noise, tie-break and
    subsampling are independent of them, so chapter 3's theorem gives
    :math:`P(Y \\in C(X)) \\ge 1 - \\alpha` for the default calibrator.
"""


class PrivateSplitConformalRegressor(_PrivateSplitBase):
    __doc__ = """Private split conformal intervals :math:`\\hat\\mu(x) \\pm B\\hat q` (chapter 4).

    ``fit`` trains a clone of ``estimator`` on the training part; ``calibrate``
    releases an :math:`\\varepsilon`-DP threshold from the scores
    :math:`\\min(|y - \\hat\\mu(x)|/B, 1)` of the disjoint calibration part.
    This is the package's **recommended estimator for private regression
    intervals** with a DP trainer (e.g. :class:`~dpcp_tutorial.DPRidgeRegression`)
    and a public ``n``.

    Parameters
    ----------
    estimator : scikit-learn regressor
        Ideally a DP trainer fitted on data disjoint from the calibration set.
    alpha : float, default=0.1
        Miscoverage level.
    epsilon : float, default=1.0
        Budget of the calibration release (see Notes).
    bound : float or "unbounded"
        **Required** public bound :math:`B` on the absolute residuals, in the
        response's units: the width of a plausible prediction error from
        domain knowledge (e.g. the documented range of the response); scores
        above it are clipped to 1. ``"unbounded"`` (an explicit choice, chapter
        18): no bound is assumed; the threshold is
        :func:`~dpcp_tutorial.unbounded_private_quantile` of the raw residuals
        :math:`|y - \\hat\\mu(x)|` (non-finite model outputs count as
        :math:`+\\infty`), ``qhat_`` is in the response's units and the
        intervals are :math:`\\hat\\mu(x) \\pm \\hat q`; ``calibrator="quantile"``
        only (``bins``, ``m``, ``gamma`` and ``variant`` play no role), and
        ``privacy_`` says that no bound was assumed.
""" + _COMMON_PARAMS + """
    Attributes
    ----------""" + _COMMON_ATTRIBUTES + """
    Notes
    -----""" + _PRIVACY_NOTES + """
    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + rng.normal(size=2000)
    >>> reg = PrivateSplitConformalRegressor(LinearRegression(), alpha=0.1, epsilon=1.0,
    ...                                      bound=10.0, n=1000, rng=0)
    >>> reg = reg.fit(X[:1000], y[:1000]).calibrate(X[1000:], y[1000:])
    >>> round(reg.qhat_, 3), reg.n_features_in_
    (0.196, 3)
    >>> np.round(reg.predict_interval(X[:2]), 2)
    array([[-1.22,  2.7 ],
           [-0.6 ,  3.32]])
"""

    def __init__(self, estimator, alpha: float = 0.1, epsilon: float = 1.0, *, bound=REQUIRED,
                 calibrator: str = "quantile", bins=1000, m="auto", gamma="auto", variant: str = "tight",
                 n: int | None = None, prefit: bool = False, rng: RandomLike = None,
                 sampler: str = "numpy", allow_low_coverage: bool = False):
        require(bound, "bound", type(self).__name__, BOUND_ADVICE)
        super().__init__(estimator, alpha=alpha, prefit=prefit, allow_low_coverage=allow_low_coverage)
        self.epsilon = epsilon
        self.bound = bound
        self.calibrator = calibrator
        self.bins = bins
        self.m = m
        self.gamma = gamma
        self.variant = variant
        self.n = n
        self.rng = rng
        self.sampler = sampler

    def calibrate(self, X, y):
        """Release the private threshold ``qhat_`` (and ``privacy_``) from the calibration data."""
        unbounded = is_unbounded(self.bound)
        bound = None if unbounded else check_bound(self.bound)
        X, y = self._calibration_arrays(X, y, _responses)
        model = self._fitted_estimator()
        with silenced_model():
            pred = model_outputs(model.predict, X) if X.shape[0] else np.empty(0)
        if unbounded:
            return _release_unbounded(self, residual_scores(y, pred))
        scores = clipped_residual_scores(y, pred, bound)
        return self._release(scores, (f"bound B = {bound:g}",), "every interval is (-inf, inf)")

    def predict(self, X) -> np.ndarray:
        """Point predictions of the underlying model."""
        return self._fitted_estimator().predict(self._features(X))

    def predict_interval(self, X) -> np.ndarray:
        """Intervals of shape (n, 2); rows are ``(-inf, inf)`` when ``qhat_ == 1`` or the prediction is NaN."""
        self._check_calibrated()
        if is_unbounded(self.bound):
            return unbounded_interval(self.predict(X), self.qhat_)
        return bounded_interval(self.predict(X), self.qhat_, self.bound)


class PrivateSplitConformalClassifier(LabelSetMixin, _PrivateSplitBase):
    __doc__ = """Private split conformal prediction sets (LAC or APS score; chapter 4).

    Both scores already lie in [0, 1]. The set is
    :math:`\\{y : s(x, y) \\le \\hat q\\}`, built with the *same* score as the
    calibration (DPCP write-up error D11). The package's **recommended
    estimator for private classification sets** with a DP trainer (e.g.
    :class:`~dpcp_tutorial.DPLogisticRegression`) and a public ``n``.

    Parameters
    ----------
    estimator : scikit-learn classifier with ``predict_proba``
        Without ``classes``: labels are the integers 0..K-1, in the order of
        the probability columns. With ``classes``: its ``classes_`` must be the
        public label set (in any order); a DP trainer with a ``classes``
        parameter left at ``None`` is given it. At calibration, a label the
        model has no column for has probability 0, hence the worst score 1,
        and a row of ``predict_proba`` that is not a probability vector (NaN,
        infinite, negative, not summing to 1) gives its record the worst
        score: no record can make :meth:`calibrate` fail.
    alpha : float, default=0.1
        Miscoverage level.
    epsilon : float, default=1.0
        Budget of the calibration release (see Notes).
    score : {"lac", "aps"}, default="lac"
        ``"lac"``: :math:`1-\\hat p_y(x)`; ``"aps"``: cumulative sorted mass.
    classes : sequence of labels or None, default=None
        The **public** label set, from the codebook (never read from the data):
        any distinct labels (strings, 1..K, ...); their order is the column
        order of :meth:`predict_set` and :meth:`predict_proba`, matched to the
        model's ``classes_`` by name. A calibration label outside it gets the
        worst score 1 (its record is kept, its value never quoted), so the
        release never depends on which labels occur.
""" + _COMMON_PARAMS + """
    Attributes
    ----------""" + _COMMON_ATTRIBUTES + """
    Notes
    -----""" + _PRIVACY_NOTES + """
    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = np.where(X[:, 0] + rng.normal(size=2000) > 0, "yes", "no")
    >>> clf = PrivateSplitConformalClassifier(LogisticRegression(), alpha=0.1, epsilon=1.0,
    ...                                       classes=["no", "yes"], n=1000, rng=0)
    >>> clf = clf.fit(X[:1000], y[:1000]).calibrate(X[1000:], y[1000:])
    >>> round(clf.qhat_, 3), clf.classes_
    (0.744, array(['no', 'yes'], dtype='<U3'))
    >>> clf.predict_set(X[:3])
    array([[ True,  True],
           [ True,  True],
           [False,  True]])
"""

    _METHODS = ("fit", "predict_proba")

    def __init__(self, estimator, alpha: float = 0.1, epsilon: float = 1.0, *, score: str = "lac",
                 calibrator: str = "quantile", bins=1000, m="auto", gamma="auto", variant: str = "tight",
                 n: int | None = None, prefit: bool = False, rng: RandomLike = None, sampler: str = "numpy",
                 allow_low_coverage: bool = False, classes=None):
        super().__init__(estimator, alpha=alpha, prefit=prefit, allow_low_coverage=allow_low_coverage)
        self.classes = classes
        self.epsilon = epsilon
        self.score = score
        self.calibrator = calibrator
        self.bins = bins
        self.m = m
        self.gamma = gamma
        self.variant = variant
        self.n = n
        self.rng = rng
        self.sampler = sampler

    def _columns(self, model, classes_):
        return model_columns(model, classes_) if classes_ is not None else None

    def calibrate(self, X, y):
        """Release the private threshold ``qhat_`` (and ``privacy_``) from the calibration data."""
        self._score_functions()
        classes_ = self._public_classes()
        if classes_ is None and text_column(y):           # the column's dtype (public): labels need classes=
            raise TypeError(INTEGER_LABELS)
        X, y = self._calibration_arrays(X, y, lambda v, empty: check_label_array(v, allow_empty=empty))
        model = self._fitted_estimator()
        columns = self._columns(model, classes_)          # the model object and the public classes only
        model_classes = getattr(model, "classes_", None)
        if model_classes is None:       # the model object decides (public), before any private record is read
            raise TypeError(f"{type(model).__name__} has no classes_: the calibration needs the number of "
                            "probability columns before it scores a record (a record the model refuses then gets "
                            "the worst score); scikit-learn classifiers have classes_, and a wrapper can set "
                            "classes_ = np.arange(K)")
        if not X.shape[0]:
            scores = np.empty(0)
        else:
            with silenced_model():
                proba = model_outputs(model.predict_proba, X, len(model_classes))
            if classes_ is None:
                scores = private_classification_scores(self.score, proba, y)
            else:                                         # a label outside the public set: index -1, score 1
                scores = private_classification_scores(self.score, np.asarray(proba)[:, columns],
                                                        label_index(y, classes_))
        if classes_ is not None:
            self.classes_ = classes_
        labels = "the label set 0..K-1" if classes_ is None else f"the label set classes = {classes_.tolist()}"
        return self._release(scores, (f"score = {self.score!r}", labels), "every prediction set holds every label")

    def predict_set(self, X) -> np.ndarray:
        """Boolean matrix of shape (n, K); every class is included when ``qhat_ == 1``."""
        self._check_calibrated()
        _, set_fn = self._score_functions()
        proba = self.predict_proba(X)
        if self.qhat_ >= 1.0:   # the top edge admits every score (guards APS sums of 1 + 1e-16)
            return np.ones(proba.shape, dtype=bool)
        return sets_or_all(set_fn, proba, self.qhat_)
