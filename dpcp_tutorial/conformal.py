"""Split conformal prediction (chapter 1, *Conformal prediction*).

The one formula everything else builds on: with calibration scores
:math:`s_1, \\dots, s_n` and miscoverage :math:`\\alpha`, the conformal quantile is
the :math:`k`-th smallest score with :math:`k = \\lceil (n+1)(1-\\alpha) \\rceil`,
and :math:`+\\infty` when :math:`k > n`. The prediction set
:math:`C(x) = \\{y : s(x, y) \\le \\hat q\\}` then covers a fresh exchangeable point
with probability at least :math:`1 - \\alpha`.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
from scipy.linalg import LinAlgWarning
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from ._validation import (
    real_array,
    as_array,
    check_1d,
    check_2d,
    check_alpha,
    check_choice,
    check_positive_int,
    check_same_length,
    check_scalar,
    silenced_model,
    model_outputs,
)
from ._split_core import (
    LabelSetMixin,
    SplitConformalBase,
    aps_all_scores,
    label_index,
    model_columns,
    private_classification_scores,
    residual_scores,
    sets_or_all,
)

#: Warnings of an estimator's fit that make a full-conformal set unreliable (numerical failures).
_NUMERICAL_WARNINGS = (RuntimeWarning, LinAlgWarning, ConvergenceWarning)

__all__ = [
    "conformal_rank",
    "conformal_quantile",
    "absolute_residual_score",
    "lac_score",
    "aps_score",
    "lac_prediction_set",
    "aps_prediction_set",
    "full_conformal_interval",
    "SplitConformalRegressor",
    "SplitConformalClassifier",
    "interval_coverage",
    "interval_width",
    "set_coverage",
    "set_size",
]


def _rank(n: int, alpha: float) -> int:
    """:math:`\\lceil (n+1)(1-\\alpha) \\rceil` for validated inputs.

    Floating point is used when the product is clearly not an integer; near an
    integer the product is recomputed exactly with ``alpha`` read as the
    simplest fraction within 1e-12 (so 0.7 is 7/10 and 1 - 0.7 is exactly 3/10).
    """
    product = (n + 1) * (1.0 - alpha)
    if abs(product - round(product)) > 1e-6 + 1e-12 * (n + 1):  # far beyond floating error
        return math.ceil(product)
    return math.ceil((n + 1) * (1 - Fraction(alpha).limit_denominator(10**12)))


def conformal_rank(n: int, alpha: float) -> int:
    """Rank :math:`k = \\lceil (n+1)(1-\\alpha) \\rceil` of the conformal quantile.

    Computed so that levels such as ``alpha=0.7`` (where
    ``1 - 0.7 == 0.30000000000000004`` in floating point) give the intended
    integer rank: ``conformal_rank(9, 0.7) == 3``.

    Parameters
    ----------
    n : int
        Number of calibration scores (at least 1).
    alpha : float
        Miscoverage level in (0, 1).

    Returns
    -------
    int
        The rank, between 1 and n + 1; a value of n + 1 means the quantile is
        infinite.

    Examples
    --------
    >>> conformal_rank(9, 0.7)
    3
    >>> conformal_rank(5, 0.1)       # n + 1: too few scores, the quantile is infinite
    6
    """
    return _rank(check_positive_int(n, "n"), check_alpha(alpha))


def conformal_quantile(scores, alpha: float) -> float:
    """Finite-sample conformal quantile of calibration scores (chapter 1).

    .. math:: \\hat q = s_{(k)}, \\qquad k = \\lceil (n+1)(1-\\alpha) \\rceil,

    the :math:`k`-th smallest score, and :math:`\\hat q = +\\infty` when
    :math:`k > n` (too few scores for the requested level). Runs in
    :math:`O(n)`: :func:`numpy.partition`, on large arrays after one pass that keeps
    only the scores near the rank (the value is the same).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Non-conformity scores of the calibration points (no NaN; ``inf`` is
        the worst score, e.g. of a record whose prediction is missing).
    alpha : float
        Miscoverage level in (0, 1).

    Returns
    -------
    float
        The quantile, or ``numpy.inf``.

    Examples
    --------
    >>> conformal_quantile([0.3, 0.1, 0.2, 0.5], alpha=0.5)
    0.3
    >>> conformal_quantile([0.3, 0.1], alpha=0.1)
    inf
    """
    scores = check_1d(scores, "scores", allow_inf=True)
    if np.any(scores == -math.inf):
        raise ValueError("scores contains -inf; a score that cannot be computed is the worst score, +inf")
    k = _rank(scores.size, check_alpha(alpha))
    if k > scores.size:
        return math.inf
    return _kth_smallest(scores, k)


_SELECT_DIRECT = 1 << 15     # below this size np.partition is used directly


def _kth_smallest(values: np.ndarray, k: int) -> float:
    """The exact :math:`k`-th smallest of ``values`` (no NaN), :math:`1 \\le k \\le n`.

    Large arrays: a fixed strided sample (every :math:`\\lfloor n/2^{13} \\rfloor`-th value)
    is sorted and gives a bracket :math:`[lo, hi]` four binomial standard deviations
    around the rank; one pass counts the values below ``lo`` and keeps those in the
    bracket, and the answer is selected among these few. If the rank falls outside
    the bracket (unlikely, and only a matter of time), the whole array is
    partitioned. Same value as ``np.partition(values, k - 1)[k - 1]``.
    """
    n = values.size
    if n < _SELECT_DIRECT:
        return float(np.partition(values, k - 1)[k - 1])
    sample = np.sort(values[::n >> 13])
    m = sample.size
    centre, margin = (k - 0.5) * m / n, 4.0 * math.sqrt(m) + 2.0
    lo, hi = sample[max(0, int(centre - margin))], sample[min(m - 1, int(centre + margin) + 1)]
    keep = values >= lo
    below = n - int(np.count_nonzero(keep))
    keep &= values <= hi
    inside = values[keep]
    j = k - below
    if 1 <= j <= inside.size:
        return float(np.partition(inside, j - 1)[j - 1])
    return float(np.partition(values, k - 1)[k - 1])


# ---------------------------------------------------------------------------
# score functions
# ---------------------------------------------------------------------------

def absolute_residual_score(y_true, y_pred) -> np.ndarray:
    """Regression score :math:`s(x, y) = |y - \\hat\\mu(x)|`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Responses.
    y_pred : array-like of shape (n,)
        The model's predictions.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> absolute_residual_score([1.0, 2.0, 3.0], [1.5, 2.0, 2.0])
    array([0.5, 0. , 1. ])
    """
    y_true = check_1d(y_true, "y_true")
    y_pred = check_1d(y_pred, "y_pred")
    check_same_length(("y_true", y_true), ("y_pred", y_pred))
    residuals = np.subtract(y_true, y_pred)
    return np.abs(residuals, out=residuals)


def _check_proba(proba) -> np.ndarray:
    proba = check_2d(proba, "proba")
    if proba.min() < 0 or not np.allclose(proba.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("proba must hold class probabilities: non-negative rows that sum to 1 "
                         "(use estimator.predict_proba)")
    return proba


def _check_labels(y, n_classes: int, n: int) -> np.ndarray:
    y = as_array(y, "y")
    if y.ndim != 1 or y.size != n:   # no sizes or values in messages: the labels may be private
        raise ValueError("y must be a 1-D array with one label per row of proba")
    if not np.issubdtype(y.dtype, np.integer):
        raise TypeError("y must hold integer class indices 0..n_classes-1: the position of each label in the "
                        "public label set (from the codebook, never read from the data; the private estimators "
                        "take it as classes=)")
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(f"labels must lie in 0..{n_classes - 1} (one per column of proba); encode them with "
                         "the public label set first")
    return y


def check_label_array(y, *, allow_empty: bool = False) -> np.ndarray:
    """``y`` as a 1-D array of class labels (values checked later against the public label set).

    The messages quote no size or value: the labels may be private.
    """
    y = as_array(y, "y")
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of class labels, one per row of X, got a {y.ndim}-D array")
    if y.size == 0 and not allow_empty:
        raise ValueError("y is empty; at least one labelled record is needed")
    return y


def lac_score(proba, y) -> np.ndarray:
    """Least-ambiguous-set (LAC) score :math:`s(x, y) = 1 - \\hat p_y(x)`.

    Parameters
    ----------
    proba : array of shape (n, K)
        Predicted class probabilities.
    y : array of shape (n,)
        Integer class indices.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> lac_score([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]], [0, 2])
    array([0.3, 0.7])
    """
    proba = _check_proba(proba)
    y = _check_labels(y, proba.shape[1], proba.shape[0])
    return 1.0 - proba[np.arange(proba.shape[0]), y]


def aps_score(proba, y) -> np.ndarray:
    """Adaptive prediction sets (APS) score, non-randomised.

    .. math:: s(x, y) = \\sum_{y' : \\pi(y') \\le \\pi(y)} \\hat p_{y'}(x),

    the total probability of the classes ranked at or above ``y`` when classes
    are sorted by decreasing :math:`\\hat p` (ties broken by class index).

    Parameters
    ----------
    proba : array of shape (n, K)
        Predicted class probabilities.
    y : array of shape (n,)
        Integer class indices.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> aps_score([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2]], [0, 2]).round(3)
    array([0.5, 1. ])
    """
    proba = _check_proba(proba)
    y = _check_labels(y, proba.shape[1], proba.shape[0])
    return aps_all_scores(proba)[np.arange(proba.shape[0]), y]


def _check_qhat(qhat) -> float:
    """A threshold: a real number >= 0 (``inf`` is allowed: every label is then in the set)."""
    if isinstance(qhat, (float, np.floating)) and qhat == math.inf:
        return math.inf
    if isinstance(qhat, (float, np.floating)) and math.isnan(qhat):
        raise ValueError("qhat is NaN; calibrate first (an uncalibrated threshold would give empty sets)")
    return check_scalar(qhat, "qhat", low=0.0, low_inclusive=True,
                        hint="qhat is a calibrated threshold on non-negative scores (inf: every label); calibrate "
                             "first")


def lac_prediction_set(proba, qhat: float) -> np.ndarray:
    """Boolean matrix of LAC sets :math:`\\{y : 1 - \\hat p_y(x) \\le \\hat q\\}`.

    Parameters
    ----------
    proba : array of shape (n, K)
        Predicted class probabilities.
    qhat : float
        Calibrated threshold (``inf``: every label).

    Returns
    -------
    ndarray of bool, shape (n, K)

    Examples
    --------
    >>> lac_prediction_set([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25]], qhat=0.7)
    array([[ True, False, False],
           [ True,  True, False]])
    """
    proba = _check_proba(proba)
    return (1.0 - proba) <= _check_qhat(qhat)


def aps_prediction_set(proba, qhat: float) -> np.ndarray:
    """Boolean matrix of APS sets :math:`\\{y : s_{APS}(x, y) \\le \\hat q\\}`.

    Uses the same score as :func:`aps_score`, so calibration and prediction
    agree (a set built by a different rule loses the guarantee).

    Parameters
    ----------
    proba : array of shape (n, K)
        Predicted class probabilities.
    qhat : float
        Calibrated threshold (``inf``: every label).

    Returns
    -------
    ndarray of bool, shape (n, K)

    Examples
    --------
    >>> aps_prediction_set([[0.5, 0.3, 0.2]], qhat=0.8)
    array([[ True,  True, False]])
    """
    proba = _check_proba(proba)
    return aps_all_scores(proba) <= _check_qhat(qhat)


def full_conformal_interval(estimator, X, y, x_new, alpha: float, y_grid) -> tuple[float, float]:
    """Full (transductive) conformal interval for one test point, on a grid (chapter 1).

    For each candidate :math:`y` in ``y_grid`` the model is refitted on the
    :math:`n+1` points :math:`(X, y) \\cup \\{(x_{new}, y)\\}` and :math:`y` is kept when
    its own absolute residual is at most the
    :math:`\\lceil (n+1)(1-\\alpha) \\rceil`-th smallest of all :math:`n+1` residuals.
    Every point both trains and calibrates, at the price of one fit per
    candidate; coverage is :math:`\\ge 1-\\alpha` for a symmetric fitting procedure.

    Parameters
    ----------
    estimator : scikit-learn regressor
        Cloned and refitted for every grid value (must be symmetric in its
        training points).
    X, y : arrays of shape (n, p) and (n,)
        The data.
    x_new : array of shape (p,)
        The test covariate.
    alpha : float
        Miscoverage level.
    y_grid : array-like
        Candidate responses, increasing.

    Returns
    -------
    (lower, upper) : tuple of float
        The smallest and largest kept grid value (the set is reported as its
        hull). A kept end of the grid is reported as ``-inf``/``inf``, since
        the set may extend beyond it; an empty set raises ``ValueError``.

    Raises
    ------
    ValueError
        Also when a refit emits a numerical warning (``RuntimeWarning``,
        ``LinAlgWarning``, ``ConvergenceWarning``): an unreliable fit gives an
        unreliable set, so it is refused once instead of warning once per
        grid value. Other warnings of the refits are passed on once each.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 1))
    >>> y = 2 * X[:, 0] + rng.normal(size=30)
    >>> lo, hi = full_conformal_interval(LinearRegression(), X, y, np.array([0.0]),
    ...                                  alpha=0.2, y_grid=np.linspace(-5, 5, 41))
    >>> print(f"[{lo:.2f}, {hi:.2f}]")
    [-1.00, 1.50]
    """
    X = check_2d(X, "X")
    y = check_1d(y, "y")
    check_same_length(("X", X), ("y", y))
    x_new = check_1d(x_new, "x_new")
    if x_new.size != X.shape[1]:
        raise ValueError(f"x_new has {x_new.size} features, X has {X.shape[1]}; pass one test point of shape "
                         "(n_features,)")
    grid = check_1d(y_grid, "y_grid")
    if grid.size < 2 or np.any(np.diff(grid) <= 0):
        raise ValueError("y_grid must be strictly increasing with at least two values")
    k = conformal_rank(len(y), alpha)
    X_aug = np.vstack([X, x_new[None, :]])
    kept = np.zeros(grid.size, dtype=bool)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for j, candidate in enumerate(grid):
            y_aug = np.append(y, candidate)
            residuals = np.abs(y_aug - clone(estimator).fit(X_aug, y_aug).predict(X_aug))
            kept[j] = k > len(y) or residuals[-1] <= np.partition(residuals, k - 1)[k - 1]
    numerical = [w for w in caught if issubclass(w.category, _NUMERICAL_WARNINGS)]
    if numerical:      # an unreliable fit gives an unreliable set: refuse, once, instead of a warning per refit
        w = numerical[0]
        raise ValueError(f"the estimator's refits on X, y and x_new were numerically unreliable "
                         f"({w.category.__name__}: {str(w.message)[:120]}); rescale X and y (e.g. standardise "
                         "them by public constants) or regularise the estimator")
    seen = set()
    for w in caught:                  # any other warning (a deprecation, ...) reaches the caller once, not per refit
        if (w.category, str(w.message)) not in seen:
            seen.add((w.category, str(w.message)))
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if not kept.any():
        raise ValueError("no value of y_grid was kept: the full conformal set misses the grid; widen or refine "
                         "y_grid to cover the plausible range of y")
    lower = -math.inf if kept[0] else float(grid[kept.argmax()])
    upper = math.inf if kept[-1] else float(grid[len(kept) - 1 - kept[::-1].argmax()])
    return lower, upper


# ---------------------------------------------------------------------------
# evaluation helpers
# ---------------------------------------------------------------------------

def _check_intervals(intervals) -> np.ndarray:
    """Intervals of shape (n, 2), ``lower <= upper``; infinite ends are allowed (a half-line or the whole line)."""
    intervals = real_array(intervals, "intervals")
    if intervals.ndim != 2 or intervals.shape[1] != 2:
        raise ValueError(f"intervals must have shape (n, 2), one row [lower, upper] per point, got shape "
                         f"{intervals.shape}")
    if intervals.shape[0] == 0:
        raise ValueError("intervals is empty; pass at least one interval")
    if np.isnan(intervals).any():
        raise ValueError("intervals contain NaN; an interval needs two ends")
    if not (intervals[:, 0] <= intervals[:, 1]).all() or (intervals[:, 0] == math.inf).any() \
            or (intervals[:, 1] == -math.inf).any():
        raise ValueError("intervals must satisfy lower <= upper with lower < inf and upper > -inf (column 0 is "
                         "the lower end, column 1 the upper end)")
    return intervals


def interval_coverage(y, intervals) -> float:
    """Fraction of ``y`` inside the closed intervals ``[lower, upper]`` (infinite ends allowed, lower <= upper).

    Parameters
    ----------
    y : array-like of shape (n,)
        Responses.
    intervals : array-like of shape (n, 2)
        One row ``[lower, upper]`` per point.

    Examples
    --------
    >>> interval_coverage([0.5, 2.0, 3.0], [[0, 1], [0, 1], [2, np.inf]])
    0.6666666666666666
    """
    y = check_1d(y, "y")
    intervals = _check_intervals(intervals)
    check_same_length(("y", y), ("intervals", intervals))
    return float(np.mean((intervals[:, 0] <= y) & (y <= intervals[:, 1])))


def interval_width(intervals) -> np.ndarray:
    """Width ``upper - lower`` of each interval of shape (n, 2) (``inf`` for unbounded ones).

    Parameters
    ----------
    intervals : array-like of shape (n, 2)
        One row ``[lower, upper]`` per point.

    Examples
    --------
    >>> interval_width([[0.0, 1.5], [2.0, np.inf]])
    array([1.5, inf])
    """
    intervals = _check_intervals(intervals)
    return intervals[:, 1] - intervals[:, 0]


def _check_sets(sets) -> np.ndarray:
    """Prediction sets: a boolean (or 0/1 integer) matrix of shape (n, K), as returned by ``predict_set``."""
    arr = as_array(sets, "sets")
    if arr.ndim != 2:
        raise ValueError(f"sets must be a boolean matrix of shape (n, K), got shape {arr.shape}; "
                         "one row per test point, one column per class")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"sets is empty (shape {arr.shape}); pass one row per test point, one column per class")
    if arr.dtype.kind != "b":
        if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
            raise TypeError(f"sets must hold booleans (or 0/1), got dtype {arr.dtype}; NaN or strings are not "
                            "membership indicators")
        arr = arr.astype(bool)
    return arr


def set_coverage(y, sets) -> float:
    """Fraction of labels ``y`` contained in boolean prediction sets of shape (n, K).

    Parameters
    ----------
    y : array-like of shape (n,)
        Integer class indices.
    sets : array-like of bool, shape (n, K)
        Prediction sets, as returned by ``predict_set``.

    Examples
    --------
    >>> set_coverage([0, 2], [[True, True, False], [True, False, False]])
    0.5
    """
    sets = _check_sets(sets)
    y = _check_labels(y, sets.shape[1], sets.shape[0])
    return float(np.mean(sets[np.arange(sets.shape[0]), y]))


def set_size(sets) -> np.ndarray:
    """Number of labels in each boolean prediction set.

    Parameters
    ----------
    sets : array-like of bool, shape (n, K)
        Prediction sets, as returned by ``predict_set``.

    Examples
    --------
    >>> set_size([[True, True, False], [True, False, False]])
    array([2, 1])
    """
    return _check_sets(sets).sum(axis=1)


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------

#: The classification scores: name -> (score function, prediction-set function) (chapter 1).
CLASSIFICATION_SCORES = {"lac": (lac_score, lac_prediction_set), "aps": (aps_score, aps_prediction_set)}


def classification_score_functions(score) -> tuple:
    """``(score_fn, set_fn)`` of a classification score name, ``"lac"`` or ``"aps"`` (checked by name)."""
    return CLASSIFICATION_SCORES[check_choice(score, "score", CLASSIFICATION_SCORES,
                                              hint="'lac': 1 - p_y(x); 'aps': cumulative sorted mass")]


class SplitConformalRegressor(SplitConformalBase):
    """Split conformal intervals :math:`\\hat\\mu(x) \\pm \\hat q` (chapter 1).

    Parameters
    ----------
    estimator : scikit-learn regressor
        Fitted (with ``prefit=True``) or unfitted; an unfitted one is cloned
        and fitted by :meth:`fit`.
    alpha : float, default=0.1
        Miscoverage level; intervals cover with probability at least 1 - alpha.
    prefit : bool, default=False
        Whether ``estimator`` is already fitted.
    allow_low_coverage : bool, default=False
        ``alpha`` is the miscoverage, ``1 - confidence_level``; an ``alpha``
        above 1/2 is refused unless this is ``True``.

    Attributes
    ----------
    qhat_ : float
        The conformal quantile of the absolute residuals (``inf`` when the
        calibration set is too small for ``alpha``).
    calibration_scores_ : ndarray
        Absolute residuals on the calibration set (``inf`` where the residual
        is NaN or infinite: the worst score).
    n_features_in_, feature_names_in_ : int, ndarray
        The features' schema (names only when fitted on a DataFrame with
        string column names); later frames are matched by name.

    Notes
    -----
    **Missing values.** Features go to the model as they are (it decides:
    ``HistGradientBoostingRegressor`` handles NaN). A residual that comes out
    NaN or infinite is the worst score at calibration; at prediction a NaN
    prediction gives the whole line.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> y = X @ [1.0, -1.0] + rng.normal(size=200)
    >>> scr = SplitConformalRegressor(LinearRegression(), alpha=0.1)
    >>> scr = scr.fit(X[:100], y[:100]).calibrate(X[100:], y[100:])
    >>> round(scr.qhat_, 3)
    1.519
    >>> scr.predict_interval([[0.0, 0.0]]).round(2)
    array([[-1.51,  1.52]])
    """

    def _scores(self, model, X, y):
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        with silenced_model():
            pred = model_outputs(model.predict, X)
        return residual_scores(y, pred)       # NaN or inf: the worst score

    def predict(self, X) -> np.ndarray:
        """Point predictions of the underlying model."""
        return self._fitted_estimator().predict(self._features(X))

    def predict_interval(self, X) -> np.ndarray:
        """Intervals of shape (n, 2): ``[mu(x) - qhat, mu(x) + qhat]``; ``(-inf, inf)`` where ``mu(x)`` is NaN."""
        self._check_calibrated()
        mu = np.asarray(self.predict(X), dtype=float)
        half = np.where(np.isnan(mu), math.inf, self.qhat_)
        centre = np.where(np.isnan(mu), 0.0, mu)
        return np.column_stack([centre - half, centre + half])


class SplitConformalClassifier(LabelSetMixin, SplitConformalBase):
    """Split conformal prediction sets with the LAC or APS score (chapter 1).

    Parameters
    ----------
    estimator : scikit-learn classifier with ``predict_proba``
        Without ``classes``: labels are the integers 0..K-1, in the order of
        the probability columns. With ``classes``: its ``classes_`` must be the
        label set (in any order); a DP trainer with a ``classes`` parameter
        left at ``None`` is given it.
    alpha : float, default=0.1
        Miscoverage level.
    score : {"lac", "aps"}, default="lac"
        ``"lac"``: :math:`1 - \\hat p_y(x)`; ``"aps"``: cumulative sorted mass.
    prefit : bool, default=False
        Whether ``estimator`` is already fitted.
    allow_low_coverage : bool, default=False
        ``alpha`` is the miscoverage, ``1 - confidence_level``; an ``alpha``
        above 1/2 is refused unless this is ``True``.
    classes : sequence of labels or None, default=None
        The label set (strings, 1..K, ...), in the column order of
        :meth:`predict_set` and :meth:`predict_proba`, matched to the model's
        ``classes_`` by name. A calibration label outside it, and a row of
        ``predict_proba`` that is not a probability vector (NaN, ...), get the
        worst score 1.

    Attributes
    ----------
    qhat_ : float
        The conformal quantile of the calibration scores.
    classes_ : ndarray
        The label set in the order of ``classes`` (only with ``classes``).
    n_features_in_, feature_names_in_ : int, ndarray
        As in :class:`SplitConformalRegressor`.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> scc = SplitConformalClassifier(LogisticRegression(), alpha=0.1)
    >>> scc = scc.fit(X[:150], y[:150]).calibrate(X[150:], y[150:])
    >>> scc.predict_set([[2.0, 0.0], [0.0, 0.0]])
    array([[False,  True],
           [ True,  True]])
    """

    _METHODS = ("fit", "predict_proba")

    def __init__(self, estimator, alpha: float = 0.1, score: str = "lac", prefit: bool = False, *,
                 allow_low_coverage: bool = False, classes=None):
        super().__init__(estimator, alpha=alpha, prefit=prefit, allow_low_coverage=allow_low_coverage)
        self.score = score
        self.classes = classes

    def _scores(self, model, X, y):
        self._score_functions()
        y = check_label_array(y)
        check_same_length(("X", X), ("y", y))
        classes_ = self._public_classes()
        width = self._n_columns(model, classes_)
        with silenced_model():      # a model without classes_ names no column count: called as it is
            proba = model_outputs(model.predict_proba, X, width) if width is not None else model.predict_proba(X)
        if classes_ is None:
            return private_classification_scores(self.score, proba, y)
        columns = model_columns(model, classes_)        # the model object and the public classes only
        self.classes_ = classes_
        return private_classification_scores(self.score, np.asarray(proba)[:, columns], label_index(y, classes_))

    def _n_columns(self, model, classes_):
        if classes_ is not None:
            return len(np.asarray(getattr(model, "classes_", classes_)))
        return len(model.classes_) if getattr(model, "classes_", None) is not None else None

    def predict_set(self, X) -> np.ndarray:
        """Boolean matrix of shape (n, K): entry (i, y) says whether y is in C(x_i).

        A row of ``predict_proba`` with NaN (e.g. from NaN features) holds every label.
        """
        self._check_calibrated()
        _, set_fn = self._score_functions()
        return sets_or_all(set_fn, self.predict_proba(X), self.qhat_)


