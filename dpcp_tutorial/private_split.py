"""Private split conformal prediction, after Angelopoulos et al. (chapter 4).

The model is fitted on one part of the data and a private quantile of the
scores is released from a *disjoint* calibration part of size :math:`n`, so the
two releases compose in parallel: an :math:`\\varepsilon`-DP model and an
:math:`\\varepsilon`-DP quantile together cost :math:`\\varepsilon`.

The quantile follows the authors' reference implementation
(``aangelopoulos/private_prediction_sets``):

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
  authors' code. Its exact loss is :math:`c\\,(1/\\tilde q + 1/(1-\\tilde q))`
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
    RandomLike,
    check_1d,
    check_2d,
    check_alpha,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
)
from ._counts import check_scores_or_histogram, edge_histogram, round_up_counts
from .conformal import _SplitConformalBase, aps_prediction_set, aps_score, lac_prediction_set, lac_score
from .mechanisms import _normalise, gumbel_max_sample

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
    "normalised_residual_score",
    "bounded_interval",
    "PrivateSplitConformalRegressor",
    "PrivateSplitConformalClassifier",
]

_GAMMA_CLIP = 1e-12     # the reference clips gamma to [1e-12, 1 - 1e-12]
_M_SCAN = (4.0, 6.0, 50)  # the reference scans 50 log-spaced integers from 1e4 to 1e6


def _check_m(m) -> int:
    return check_positive_int(m, "m", minimum=2)


def _check_gamma(gamma) -> float:
    return check_scalar(gamma, "gamma", low=0.0, high=1.0,
                        hint="gamma splits alpha between the finite-sample and the privacy correction; "
                             "use gamma='auto' for the optimal value")


def pps_grid(m: int) -> np.ndarray:
    """The :math:`m` equally spaced edges :math:`e_k = k/(m-1)`, :math:`k = 0, \\dots, m-1` (chapter 4).

    Both ends, 0 and 1, are edges; the resolution is :math:`1/(m-1)`.
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


def pps_privacy_loss(n: int, alpha: float, epsilon: float, m: int, gamma="auto", variant: str = "tight", *,
                     relation: str = "replace-one") -> float:
    """Exact privacy loss of :func:`pps_private_quantile` with :math:`n` public (chapter 4).

    With :math:`c` the exponent of ``variant``: :math:`c\\,(1/\\tilde q + 1/(1-\\tilde q))`
    under replace-one and :math:`c/\\min(\\tilde q, 1-\\tilde q)` under add/remove
    (the supremum of the log-ratio over neighbouring data sets). For
    ``"tight"`` these are :math:`\\varepsilon` and
    :math:`\\varepsilon\\max(\\tilde q, 1-\\tilde q)`. When :math:`\\tilde q \\ge 1` the
    release is the constant 1 and the loss is 0.
    """
    variant = _check_variant(variant)
    if relation not in ("replace-one", "add/remove"):
        raise ValueError(f"relation={relation!r} is not supported; choose 'replace-one' or 'add/remove'")
    n = check_positive_int(n, "n")
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    m = _check_m(m)
    qtilde = pps_corrected_level(n, alpha, epsilon, m, _resolve_gamma(gamma, n, alpha, epsilon))
    if qtilde >= 1.0:
        return 0.0
    if variant == "tight":   # c (1/q + 1/(1-q)) = eps and c / min(q, 1-q) = eps max(q, 1-q), without rounding
        return epsilon if relation == "replace-one" else epsilon * max(qtilde, 1.0 - qtilde)
    c = _exponent(alpha, epsilon, qtilde, variant)
    if relation == "replace-one":
        return c * (1.0 / qtilde + 1.0 / (1.0 - qtilde))
    return c / min(qtilde, 1.0 - qtilde)


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
    scores, alpha, epsilon, gamma, variant
        As in :func:`pps_private_quantile`.
    m : int
        Number of grid edges.
    n : int, optional
        The public calibration size used in :math:`\\tilde q` (default: the number
        of scores). Privacy audits fix it while adding or removing a record.
    log : bool
        Return log-probabilities (exact where probabilities underflow).

    Returns
    -------
    edges : ndarray of shape (m,)
    probabilities : ndarray of shape (m,)
        :math:`P(\\hat s = e_j)`; all mass on the top edge when :math:`\\tilde q \\ge 1`.
    """
    edges, logits, _ = _pps_law(scores, alpha, epsilon, m, gamma, variant, n)
    if logits is None:
        logits = np.full(edges.size, -np.inf)
        logits[-1] = 0.0
    return edges, _normalise(logits, log)


def pps_choose_m(n: int, alpha: float, epsilon: float, candidates=None, variant: str = "tight",
                 rule: str = "reference", rng: RandomLike = None) -> tuple[int, float]:
    """Data-independent choice of the grid size :math:`m` and of :math:`\\gamma` (chapter 4).

    ``rule="reference"`` follows the reference implementation: simulate one
    set of :math:`n` uniform scores, run the private quantile once for every
    candidate :math:`m` (with the optimal :math:`\\gamma`), and keep the :math:`m`
    whose sampled threshold is smallest. It is random (seed ``rng``) and, with a
    single simulated sample, noisy: the winner can be a coarse grid whose edges
    happen to fall just below the sample's quantile.

    ``rule="analytic"`` [derived] is deterministic: it minimises
    :math:`\\tilde q(m) + 1/(2(m-1))`, the corrected level plus the mean rounding of a
    score whose position between two edges is uniform (exact for uniform
    scores, in score units). Since :math:`m` enters :math:`\\tilde q` as
    :math:`\\frac{2}{\\varepsilon n}\\log m`, the minimiser is close to :math:`m = \\varepsilon n/4`.

    Neither rule looks at the data, so both cost no privacy. The default
    candidates are 50 log-spaced integers from :math:`10^4` to :math:`10^6` (the
    reference scan); :math:`m` enters :math:`\\tilde q` only through :math:`\\log m`
    while the resolution is :math:`1/(m-1)`, so for small :math:`n\\varepsilon` a wider
    scan (down to :math:`m = 10`) can do much better.

    Returns
    -------
    m : int
        The chosen number of edges (the reference's fallback
        :math:`\\lfloor 1/\\alpha \\rfloor` if no candidate beats 1).
    gamma : float
        :func:`pps_optimal_gamma` ``(n, alpha, epsilon)``.
    """
    n = check_positive_int(n, "n")
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    if rule not in ("reference", "analytic"):
        raise ValueError(f"rule={rule!r} is not supported; choose 'reference' or 'analytic'")
    rng = check_random_state(rng)
    if candidates is None:
        low, high, count = _M_SCAN
        candidates = np.logspace(low, high, count).astype(int)
    candidates = [_check_m(c) for c in np.atleast_1d(candidates)]
    if not candidates:
        raise ValueError("candidates is empty; give at least one grid size m (or None for the default grid)")
    gamma = pps_optimal_gamma(n, alpha, epsilon)
    if rule == "analytic":
        cost = [pps_corrected_level(n, alpha, epsilon, m, gamma) + 0.5 / (m - 1) for m in candidates]
        return candidates[int(np.argmin(cost))], gamma
    simulated = rng.uniform(size=n)
    best_m, best_s = max(int(1 / alpha), 2), 1.0
    for m in candidates:
        s = pps_private_quantile(simulated, alpha, epsilon, m=m, gamma=gamma, variant=variant, rng=rng)
        if s < best_s:
            best_m, best_s = m, s
    return best_m, gamma


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
    m : int or "auto"
        Number of grid edges; ``"auto"`` runs :func:`pps_choose_m` (data-independent).
    gamma : float or "auto"
        Split of :math:`\\alpha`; ``"auto"`` is :func:`pps_optimal_gamma`.
    variant : {"tight", "reference"}
        ``"tight"`` (default): :math:`c = \\varepsilon\\tilde q(1-\\tilde q)`, exactly
        :math:`\\varepsilon`-DP under replace-one and
        :math:`\\varepsilon\\max(\\tilde q, 1-\\tilde q)`-DP under add/remove (:math:`n`
        public). ``"reference"``: :math:`c = \\varepsilon\\min(\\alpha,1-\\alpha)/2`,
        the authors' code; its loss can exceed :math:`\\varepsilon` (:func:`pps_privacy_loss`).
    n : int, optional
        Public calibration size used in :math:`\\tilde q` (default: ``len(scores)``).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    float
        The threshold :math:`\\hat s`, an edge of the grid. When :math:`\\tilde q \\ge 1`
        it is 1 (the whole space), returned without looking at the scores.
        The set is :math:`\\{y : s(x, y) \\le \\hat s\\}` (the reference uses ``<``;
        the two differ only on exact ties).
    """
    rng = check_random_state(rng)
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    scores_arr = check_scores_or_histogram(scores)
    n_public = scores_arr.size if n is None else check_positive_int(n, "n")
    if isinstance(m, str):
        if m != "auto":
            raise ValueError(f"m={m!r}: pass an integer >= 2 or 'auto'")
        m, _ = pps_choose_m(n_public, alpha, epsilon, variant=variant, rng=rng)
    edges, logits, _ = _pps_law(scores_arr, alpha, epsilon, m, gamma, variant, n_public)
    if logits is None:
        return 1.0
    return float(edges[gumbel_max_sample(logits, rng)])


# ---------------------------------------------------------------------------
# scores on [0, 1] and the sets they give (shared with chapter 6)
# ---------------------------------------------------------------------------

def _check_bound(bound) -> float:
    return check_scalar(bound, "bound", low=0.0,
                        hint="B is a public a-priori bound on the residuals, chosen without looking at the data "
                             "(never the data's own maximum)")


def normalised_residual_score(y_true, y_pred, bound: float) -> np.ndarray:
    """Regression score on [0, 1] through a public bound :math:`B` (chapters 4 and 6).

    .. math:: R = \\min(|y - \\hat\\mu(x)| / B,\\ 1).

    :math:`B` must not depend on the data (a data maximum has unbounded
    sensitivity and leaks); residuals above :math:`B` are clipped to 1.
    """
    bound = _check_bound(bound)
    y_true = check_1d(y_true, "y_true")
    y_pred = check_1d(y_pred, "y_pred")
    check_same_length(("y_true", y_true), ("y_pred", y_pred))
    return np.minimum(np.abs(y_true - y_pred) / bound, 1.0)


def bounded_interval(y_pred, qhat: float, bound: float) -> np.ndarray:
    """Intervals :math:`\\hat\\mu(x) \\pm B\\hat q`, or the whole line when :math:`\\hat q = 1` (chapters 4 and 6).

    A threshold at the top edge admits every clipped score, i.e. every
    residual, so the set is :math:`(-\\infty, \\infty)`, not
    :math:`\\hat\\mu \\pm B` (DPCP write-up error D7).

    Returns
    -------
    ndarray of shape (n, 2)
    """
    y_pred = check_1d(y_pred, "y_pred")
    bound = _check_bound(bound)
    qhat = check_scalar(qhat, "qhat", low=0.0, high=1.0, low_inclusive=True, high_inclusive=True,
                        hint="qhat is a threshold on scores normalised to [0, 1]")
    half = math.inf if qhat >= 1.0 else bound * qhat
    return np.column_stack([y_pred - half, y_pred + half])


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------

class _PrivateSplitBase(_SplitConformalBase):
    """Shared calibrate step: a private threshold from the calibration scores."""

    def _release(self, scores: np.ndarray):
        alpha = check_alpha(self.alpha)
        epsilon = check_epsilon(self.epsilon)
        rng = check_random_state(self.rng)
        n = scores.size
        if isinstance(self.m, str):
            if self.m != "auto":
                raise ValueError(f"m={self.m!r}: pass an integer >= 2 or 'auto'")
            m, _ = pps_choose_m(n, alpha, epsilon, variant=self.variant, rng=rng)
        else:
            m = _check_m(self.m)
        self.m_ = m
        self.gamma_ = _resolve_gamma(self.gamma, n, alpha, epsilon)
        self.qtilde_ = pps_corrected_level(n, alpha, epsilon, m, self.gamma_)
        self.qhat_ = pps_private_quantile(scores, alpha, epsilon, m=m, gamma=self.gamma_, variant=self.variant,
                                          rng=rng)
        return self


class PrivateSplitConformalRegressor(_PrivateSplitBase):
    """Private split conformal intervals :math:`\\hat\\mu(x) \\pm B\\hat s` (chapter 4).

    ``fit`` trains a clone of ``estimator`` on the training part; ``calibrate``
    releases an :math:`\\varepsilon`-DP threshold from the disjoint calibration
    part with :func:`pps_private_quantile`. The whole pipeline is
    :math:`\\varepsilon`-DP when ``estimator`` is an :math:`\\varepsilon`-DP trainer under the
    same neighbouring relation (parallel composition over disjoint data, split
    drawn independently of the data). The calibration step alone, with the
    calibration size public, is exactly :math:`\\varepsilon`-DP under replace-one and
    :math:`\\varepsilon\\max(\\tilde q, 1-\\tilde q)`-DP under add/remove with the default
    ``variant="tight"`` (:func:`pps_privacy_loss` for ``"reference"``).

    Parameters
    ----------
    estimator : scikit-learn regressor
        Ideally a DP trainer fitted on data disjoint from the calibration set.
    alpha : float
        Miscoverage level.
    epsilon : float
        Budget of the private quantile.
    bound : float
        Public bound :math:`B` on the absolute residuals; scores are
        :math:`\\min(|y-\\hat\\mu(x)|/B, 1)`.
    m, gamma, variant
        As in :func:`pps_private_quantile`.
    prefit : bool
        Whether ``estimator`` is already fitted.
    rng : None, int or numpy.random.Generator
        Randomness of the mechanism (and of the ``m`` search).

    Attributes
    ----------
    qhat_ : float
        The released threshold :math:`\\hat s` on the normalised scale.
    qtilde_, m_, gamma_ : float, int, float
        The corrected level and the tuning parameters used.
    """

    def __init__(self, estimator, alpha: float = 0.1, epsilon: float = 1.0, bound: float = 1.0, m="auto",
                 gamma="auto", variant: str = "tight", prefit: bool = False, rng: RandomLike = None):
        super().__init__(estimator, alpha=alpha, prefit=prefit)
        self.epsilon = epsilon
        self.bound = bound
        self.m = m
        self.gamma = gamma
        self.variant = variant
        self.rng = rng

    def calibrate(self, X, y):
        """Release the private threshold ``qhat_`` from the calibration data."""
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        scores = normalised_residual_score(y, self._fitted_estimator().predict(X), self.bound)
        return self._release(scores)

    def predict(self, X) -> np.ndarray:
        """Point predictions of the underlying model."""
        return self._fitted_estimator().predict(check_2d(X, "X"))

    def predict_interval(self, X) -> np.ndarray:
        """Intervals of shape (n, 2); rows are ``(-inf, inf)`` when ``qhat_ == 1``."""
        self._check_calibrated()
        return bounded_interval(self.predict(X), self.qhat_, self.bound)


class PrivateSplitConformalClassifier(_PrivateSplitBase):
    """Private split conformal prediction sets (LAC or APS score; chapter 4).

    Both scores already lie in [0, 1]. The set is
    :math:`\\{y : s(x, y) \\le \\hat s\\}`, built with the *same* score as the
    calibration (DPCP write-up error D11).

    Parameters
    ----------
    estimator : scikit-learn classifier with ``predict_proba``
        Labels must be the integers 0..K-1.
    alpha, epsilon, m, gamma, variant, prefit, rng
        As in :class:`PrivateSplitConformalRegressor`.
    score : {"lac", "aps"}
        ``"lac"``: :math:`1-\\hat p_y(x)`; ``"aps"``: cumulative sorted mass.
    """

    _SCORES = {"lac": (lac_score, lac_prediction_set), "aps": (aps_score, aps_prediction_set)}

    def __init__(self, estimator, alpha: float = 0.1, epsilon: float = 1.0, score: str = "lac", m="auto",
                 gamma="auto", variant: str = "tight", prefit: bool = False, rng: RandomLike = None):
        super().__init__(estimator, alpha=alpha, prefit=prefit)
        self.epsilon = epsilon
        self.score = score
        self.m = m
        self.gamma = gamma
        self.variant = variant
        self.rng = rng

    def _score_functions(self):
        if self.score not in self._SCORES:
            raise ValueError(f"score={self.score!r} is not supported; choose 'lac' or 'aps'")
        return self._SCORES[self.score]

    def calibrate(self, X, y):
        """Release the private threshold ``qhat_`` from the calibration data."""
        X = check_2d(X, "X")
        score_fn, _ = self._score_functions()
        scores = np.clip(score_fn(self._fitted_estimator().predict_proba(X), y), 0.0, 1.0)
        return self._release(scores)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the underlying model."""
        return self._fitted_estimator().predict_proba(check_2d(X, "X"))

    def predict_set(self, X) -> np.ndarray:
        """Boolean matrix of shape (n, K); every class is included when ``qhat_ == 1``."""
        self._check_calibrated()
        _, set_fn = self._score_functions()
        proba = self.predict_proba(X)
        if self.qhat_ >= 1.0:   # the top edge admits every score (guards APS sums of 1 + 1e-16)
            return np.ones(proba.shape, dtype=bool)
        return set_fn(proba, self.qhat_)
