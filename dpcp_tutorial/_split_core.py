"""The release core that the split conformal estimators share (chapters 1, 4, 6, 14 and 17).

The estimators of :mod:`~dpcp_tutorial.conformal`, :mod:`~dpcp_tutorial.private_split`,
:mod:`~dpcp_tutorial.mondrian`, :mod:`~dpcp_tutorial.adaptive`, :mod:`~dpcp_tutorial.dpcp` and
:mod:`~dpcp_tutorial.scale` fit a model on one part of the data and release a threshold from the scores
of another. What they share lives here once: the fit/calibrate plumbing, the public label set and the
model's columns, the scores of private records (defined for every model output, so that no record can
make a release fail), the public bound on the residuals, and the release of the threshold by the tight
private quantile with its privacy losses. Internal to the package: the names below are not public API.
"""

from __future__ import annotations


import math

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from ._counts import subsample_or_pad
from ._validation import (
    MAX_RECORDS,
    adopt_schema,
    as_array,
    check_bool,
    check_coverage_alpha,
    check_estimator,
    check_features,
    check_positive_int,
    check_scalar,
    real_array,
    require,
)


def schema_features(owner, X, prefit_model, *, calibrating: bool, min_rows: int) -> np.ndarray:
    """``X`` matched to ``owner``'s schema (:func:`~dpcp_tutorial._validation.check_features`).

    At calibration with ``owner.prefit``, the schema of the prefit model ``prefit_model()``
    (``feature_names_in_``, ``n_features_in_``) becomes the owner's; a model without one takes the
    calibration features' columns.
    """
    reset = False
    if calibrating and check_bool(owner.prefit, "prefit"):
        reset = not adopt_schema(owner, prefit_model())
    return check_features(X, owner, reset=reset, min_rows=min_rows)


class SplitConformalBase(BaseEstimator):
    """Shared fit/calibrate plumbing of the split-conformal wrappers."""

    def __init__(self, estimator, alpha: float = 0.1, prefit: bool = False, *, allow_low_coverage: bool = False):
        self.estimator = estimator
        self.alpha = alpha
        self.prefit = prefit
        self.allow_low_coverage = allow_low_coverage

    def _alpha(self) -> float:
        """``alpha``, refused above 1/2 unless ``allow_low_coverage=True`` (``alpha = 1 - confidence_level``)."""
        return check_coverage_alpha(self.alpha, self.allow_low_coverage)

    _METHODS = ("fit", "predict")     # what the estimator must offer
    _FIT_MIN_ROWS = 1                 # Mondrian: 0 (its per-record label rule may leave no training record)

    def fit(self, X, y):
        """Fit a clone of ``estimator`` on the training data (skipped when ``prefit``)."""
        check_estimator(self.estimator, "estimator", self._METHODS)
        if check_bool(self.prefit, "prefit"):
            raise ValueError("prefit=True: the estimator is already fitted; call calibrate(X_cal, y_cal) directly")
        X = check_features(X, self, reset=True, min_rows=self._FIT_MIN_ROWS)
        self.estimator_ = clone(self.estimator).fit(X, y)
        return self

    def _features(self, X, *, calibrating: bool = False, min_rows: int = 1):
        """``X`` as the model receives it (:func:`~dpcp_tutorial._validation.check_features`).

        At calibration a prefit model's schema (``feature_names_in_``,
        ``n_features_in_``) becomes the estimator's; a model without one takes
        the calibration features' columns.
        """
        return schema_features(self, X, self._fitted_estimator, calibrating=calibrating, min_rows=min_rows)

    def _fitted_estimator(self):
        check_estimator(self.estimator, "estimator", self._METHODS)
        if check_bool(self.prefit, "prefit"):
            check_is_fitted(self.estimator)
            return self.estimator
        if not hasattr(self, "estimator_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(X_train, y_train) first, "
                             "or pass prefit=True with an already fitted estimator")
        return self.estimator_

    def calibrate(self, X, y):
        """Compute calibration scores and the conformal quantile ``qhat_``."""
        self._alpha()
        X = self._features(X, calibrating=True)
        self.calibration_scores_ = self._scores(self._fitted_estimator(), X, y)
        from .conformal import conformal_quantile

        self.qhat_ = conformal_quantile(self.calibration_scores_, self.alpha)
        return self

    def _check_calibrated(self):
        if not hasattr(self, "qhat_"):
            raise NotFittedError(f"{type(self).__name__} is not calibrated: call calibrate(X_cal, y_cal) first")


class LabelSetMixin:
    """What the split-conformal classifiers share: the score functions, the public label set ``classes``
    (or the column indices 0..K-1), the fit that gives a DP trainer those classes, and the model's
    probabilities with their columns in the order of ``classes``."""

    def _score_functions(self):
        from .conformal import classification_score_functions

        return classification_score_functions(self.score)

    def _public_classes(self):
        """The public label set in the caller's order, or None (labels are the column indices 0..K-1)."""
        return None if self.classes is None else check_public_classes(self.classes)

    def fit(self, X, y):
        """Fit a clone of ``estimator`` on the training part (a DP trainer's ``classes=None`` set to ``classes``)."""
        return fit_with_classes(self, super().fit, X, y)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the underlying model, columns in the order of ``classes`` (when given)."""
        model = self._fitted_estimator()
        proba = model.predict_proba(self._features(X))
        classes_ = self._public_classes()
        return proba if classes_ is None else np.asarray(proba)[:, model_columns(model, classes_)]


def fit_with_classes(owner, fit, X, y):
    """``fit(X, y)``, with a DP trainer whose ``classes`` is ``None`` given the public ``classes`` of ``owner``."""
    check_estimator(owner.estimator, "estimator", owner._METHODS)
    classes_ = owner._public_classes()
    if classes_ is None or check_bool(owner.prefit, "prefit"):
        return fit(X, y)
    params = owner.estimator.get_params(deep=False) if hasattr(owner.estimator, "get_params") else {}
    if "classes" in params and params["classes"] is None:
        original = owner.estimator
        try:
            owner.estimator = clone(original).set_params(classes=classes_.tolist())
            return fit(X, y)
        finally:
            owner.estimator = original
    return fit(X, y)


def sets_or_all(set_fn, proba, qhat) -> np.ndarray:
    """``set_fn(proba, qhat)``, with every label in the set of a row that holds NaN (the whole label set)."""
    proba = real_array(proba, "proba")
    missing = np.isnan(proba).any(axis=1) if proba.ndim == 2 else np.zeros(0, dtype=bool)
    if not missing.any():
        return set_fn(proba, qhat)
    out = np.ones(proba.shape, dtype=bool)
    if (~missing).any():
        out[~missing] = set_fn(proba[~missing], qhat)
    return out


def aps_all_scores(proba: np.ndarray) -> np.ndarray:
    """APS score of every class: mass of the classes ranked at or above it.

    Classes are ranked by decreasing probability; ties are broken by class
    index (a stable sort), the same rule at calibration and prediction time.
    """
    order = np.argsort(-proba, axis=1, kind="stable")
    cumulative = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    scores = np.empty_like(proba)
    np.put_along_axis(scores, order, cumulative, axis=1)
    return scores


#: The refusal of labels whose dtype (the schema) holds no class indices, when no public label set is given.
INTEGER_LABELS = ("y must hold integer class indices 0..n_classes-1; for other labels pass the public label set "
                  "from the codebook as classes= (never a label encoder fitted on the data)")


def private_classification_scores(score: str, proba, y) -> np.ndarray:
    """The classification score of private records, defined for every model output (chapters 4 and 17).

    ``proba`` is a model's output on private records and ``y`` their labels as
    integer indices into its columns. Unlike :func:`lac_score` and
    :func:`aps_score`, which refuse a bad input, this map never fails on a
    value, so that no record can make a release raise while its neighbour
    releases. It is a per-record rule:

    * a row of ``proba`` that is not a probability vector -- a NaN or infinite
      entry, a negative entry, or a sum that is not 1 within the tolerance that
      :func:`lac_score` accepts -- gives the record the worst score 1;
    * a label outside ``0..K-1`` (a class the model has no column for, so
      probability 0) gives the worst score 1, as it does for LAC and APS;
    * so does a label that is not an integer: NaN, ``None`` or ``pd.NA`` (a
      missing label, which turns a column of integers into floats or objects),
      2.5, a string (:func:`integer_labels`); a label array of strings,
      booleans or dates is refused by its dtype (the schema);
    * every other score is clipped to ``[0, 1]``.

    A worst score can only raise a released threshold. Only the types and
    shapes (public: the model and the schema) are checked, with messages that
    quote no size or value.
    """
    from .conformal import classification_score_functions, lac_score

    score_fn = classification_score_functions(score)[0]
    proba = real_array(proba, "proba")
    labels = as_array(y, "y")
    if labels.ndim != 1:
        raise ValueError("y must be a 1-D array with one label per row of proba")
    if labels.dtype.kind not in "iufO":           # strings, booleans, dates: the dtype is the schema (public)
        raise TypeError(INTEGER_LABELS)
    if labels.dtype.kind in "fO":     # one missing label turns integers into floats or objects: read each record
        labels = integer_labels(labels)
    if proba.ndim != 2 or proba.shape[0] != labels.shape[0] or proba.shape[1] == 0:
        raise ValueError("the model's predict_proba must return a 2-D array with one row of class probabilities "
                         "per record and one column per class")
    n_classes = proba.shape[1]
    with np.errstate(all="ignore"):
        valid = (np.isfinite(proba).all(axis=1) & (proba >= 0).all(axis=1)
                 & np.isclose(proba.sum(axis=1), 1.0, atol=1e-6))       # the tolerance of lac_score's check
    known = (labels >= 0) & (labels < n_classes)
    safe = np.where(valid[:, None], proba, 1.0 / n_classes)
    rows = np.arange(labels.size)
    index = np.where(known, labels, 0).astype(np.intp)
    if score_fn is lac_score:
        value = 1.0 - safe[rows, index]
    else:
        value = aps_all_scores(safe)[rows, index]
    return np.where(valid & known, np.clip(value, 0.0, 1.0), 1.0)


def integer_labels(labels: np.ndarray) -> np.ndarray:
    """Each label as an integer class index, or -1 (the worst score) where it is not an integer.

    A per-record rule: 3, ``np.int64(3)`` and 3.0 are the index 3; NaN, ``None``,
    ``pd.NA``, 2.5, a string or ``True`` are -1, whatever the other records are.
    """
    if labels.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(labels) & (labels == np.floor(labels)) & (np.abs(labels) < 2.0**62)
        return np.where(whole, labels, -1.0).astype(np.int64)
    return np.array([_integer_label(v) for v in labels.tolist()], dtype=np.int64)


def _integer_label(value) -> int:
    if isinstance(value, (bool, np.bool_)):
        return -1
    if isinstance(value, (int, np.integer)):
        return int(value) if abs(int(value)) < 2**62 else -1
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value) if abs(value) < 2.0**62 else -1
    return -1


BOUND_ADVICE = ("bound is the public bound B on the absolute residuals |y - prediction|, in the response's "
                 "units: take it from domain knowledge (a physical, clinical or codebook range of y, e.g. its "
                 "documented maximum minus minimum); residuals above it are clipped. Without a trustworthy B, "
                 "pass bound='unbounded' (chapter 18: no bound is assumed).")


def check_bound(bound) -> float:
    require(bound, "bound", "this private release", BOUND_ADVICE)
    return check_scalar(bound, "bound", low=0.0,
                        hint="B is a public a-priori bound on the residuals, chosen without looking at the data "
                             "(never the data's own maximum)")


def clipped_residual_scores(y_true: np.ndarray, y_pred, bound: float) -> np.ndarray:
    """:math:`\\min(|y - \\hat\\mu(x)|/B, 1)` for validated responses and *any* model outputs.

    Model outputs are values derived from private records: a NaN, an infinite
    or a huge prediction must not raise (one neighbour would release, the
    other refuse). A residual that comes out NaN or infinite (a NaN
    prediction, e.g. from missing features, or a NaN response) is the worst
    score 1, as on Dask (:func:`dpcp_tutorial.scale.model_scores`); every other
    score is clipped to 1. The division and the clip cannot fail.
    """
    pred = real_array(y_pred, "y_pred")
    if pred.ndim != 1 or pred.shape != y_true.shape:     # no sizes: the record count may be private
        raise ValueError("y_pred (the model's predictions) must be a 1-D array with one prediction per row of the "
                         "data; the model returned an array of another shape")
    with np.errstate(all="ignore"):
        value = np.abs(y_true - pred) / bound
    return np.where(np.isnan(value), 1.0, np.minimum(value, 1.0))


def is_unbounded(bound) -> bool:
    return isinstance(bound, str) and bound == "unbounded"


def residual_scores(y_true: np.ndarray, y_pred) -> np.ndarray:
    """:math:`|y - \\hat\\mu(x)|` for validated responses and *any* model outputs (non-finite ones become inf)."""
    pred = np.asarray(y_pred, dtype=float).reshape(-1) if np.size(y_pred) else np.empty(0)
    with np.errstate(all="ignore"):
        scores = np.abs(y_true - pred)
    return np.where(np.isfinite(scores), scores, np.inf)


def unbounded_interval(y_pred, qhat: float) -> np.ndarray:
    """Intervals :math:`\\hat\\mu(x) \\pm \\hat q` of a threshold on raw residuals (chapter 18); a NaN or infinite
    prediction gets the whole line, as in :func:`~dpcp_tutorial.private_split.bounded_interval`."""
    pred = np.asarray(y_pred, dtype=float).reshape(-1)
    finite = np.isfinite(pred)
    with np.errstate(all="ignore"):
        return np.column_stack([np.where(finite, pred - qhat, -np.inf), np.where(finite, pred + qhat, np.inf)])


def check_public_classes(classes) -> np.ndarray:
    """The public label set in the caller's order (validated as :func:`~dpcp_tutorial.training.check_classes`)."""
    from .training import check_classes

    check_classes(classes, "classes")
    return np.asarray(classes)


def model_columns(model, classes_: np.ndarray) -> np.ndarray:
    """The column of ``model.predict_proba`` of each public class; refused unless ``classes_`` are the model's."""
    model_classes = getattr(model, "classes_", None)
    if model_classes is None:
        raise TypeError(f"{type(model).__name__} has no classes_: with classes=, the model must name the label of "
                        "each probability column (scikit-learn classifiers do)")
    model_classes = np.asarray(model_classes).tolist()
    lookup = {c: j for j, c in enumerate(model_classes)}
    columns = [lookup.get(c) for c in classes_.tolist()]
    if len(model_classes) != len(columns) or any(j is None for j in columns):
        raise ValueError(f"the model's classes_ {model_classes} are not the public label set classes="
                         f"{classes_.tolist()}; train it on the public label set (a DP trainer takes classes=, "
                         "from the codebook)")
    return np.array(columns)


def label_index(y, classes_: np.ndarray) -> np.ndarray:
    """The position of each label in the public set; -1 for a label outside it (never quoted or counted)."""
    lookup = {c: j for j, c in enumerate(classes_.tolist())}
    values = np.asarray(y, dtype=object).tolist()
    return np.array([lookup.get(v, -1) if _hashable(v) else -1 for v in values], dtype=np.int64)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def public_size(n):
    return None if n is None else check_positive_int(n, "n", maximum=MAX_RECORDS)


def feasible_level(alpha: float, size: int, epsilon: float, bins, name: str = "alpha") -> float:
    """The tight quantile's level, with an infeasible request refused under the caller's parameter ``name``.

    Its message depends on public inputs only (``size`` is the public ``n`` or declared public with ``n=None``).
    """
    from .quantile import private_quantile_level

    try:
        return private_quantile_level(alpha, size, epsilon, bins)
    except ValueError as exc:
        raise ValueError(f"{name}={alpha:g} is infeasible for this calibration: {exc}") from None


def quantile_losses(alpha: float, size: int, epsilon: float, bins, public_n: bool):
    """(add/remove, replace-one) losses and notes of the tight private quantile on ``size`` scores."""
    from .quantile import private_quantile_level, private_quantile_privacy_loss, quantile_edges

    quantile_edges(bins)              # validated in every mode: below, a ValueError can only mean infeasible
    if public_n:   # subsampled or padded to the public size: replace-one at a fixed size under both relations
        return (epsilon, 0.0), (epsilon, 0.0), ()
    replace = (epsilon, 0.0)
    private_quantile_level(alpha, size, epsilon, bins)     # the release itself is feasible (else it raised)
    try:
        if size - 1 < 1:
            raise ValueError
        private_quantile_level(alpha, size - 1, epsilon, bins)
    except ValueError:
        return None, replace, ("add/remove: not covered: with n=None the level is recomputed from the calibration "
                               "size, and a neighbour with one record fewer is infeasible (it would raise); pass "
                               "a public n=",)
    losses = [private_quantile_privacy_loss(alpha, k, epsilon, bins, relation="add/remove", public_n=False)
              for k in (size - 1, size)]
    return (max(losses), 0.0), replace, (
        f"n=None: the calibration size {size} is treated as public; add/remove is the bound for a level recomputed "
        "from each neighbour's own size (private_quantile_privacy_loss(..., public_n=False)); pass a public n= for "
        "epsilon under both relations",)


def check_release_sampler(sampler, rng, calibrator: str) -> str:
    """The sampler of a split estimator's threshold: ``"numpy"``, or ``"opendp"`` with ``rng=None`` and the tight quantile.

    Checked in every mode (also when ``calibrator="pps"``, which offers NumPy's sampler only: see
    :func:`pps_private_quantile`).
    """
    from .mechanisms import check_sampler

    sampler, _ = check_sampler(sampler, rng)
    if sampler == "opendp" and calibrator != "quantile":
        raise ValueError(f"sampler='opendp' is offered with calibrator='quantile' (the tight private quantile) only; "
                         f"calibrator={calibrator!r} draws with NumPy's sampler (pps_private_quantile says why)")
    return sampler


def release_threshold(owner, scores: np.ndarray, *, alpha: float, epsilon: float, bins, n,
                      rng: np.random.Generator, sampler: str = "numpy", calibrate=None):
    """The private threshold of a split estimator and the :class:`~dpcp_tutorial.accounting.Spend` it costs.

    ``scores`` are the calibration scores in [0, 1] (possibly none when ``n``
    is public). With a public ``n`` they are first subsampled or padded to
    exactly ``n`` (:func:`~dpcp_tutorial._counts.subsample_or_pad`); the subsampling uses a child
    generator whose seed is drawn from ``rng`` whatever the data, so the
    mechanism's own draws do not depend on the part's size. The threshold is
    the tight private quantile with ``bins`` edges; ``sampler`` (checked by
    :func:`check_release_sampler`) is its sampler, and with ``"opendp"`` only the
    subsampling uses ``rng`` (a fresh generator). Another calibrator is passed
    as ``calibrate(owner, scores, size, public_n, rng) -> (qhat, label, add_remove,
    replace_one, notes)`` (the PPS mechanism of :mod:`~dpcp_tutorial.private_split`).
    Sets the fitted attributes on ``owner`` and returns ``(qhat, spend, notes)``.
    """
    from .accounting import Spend
    from .quantile import private_quantile, quantile_edges

    edges = quantile_edges(bins)                 # validated in every mode
    public_n = n is not None
    child = np.random.default_rng(rng.integers(2**63))
    if public_n:
        scores = subsample_or_pad(scores, n, child)
    size = scores.size
    if calibrate is None:
        level = feasible_level(alpha, size, epsilon, bins)   # public inputs only (n public or declared so)
        qhat = private_quantile(scores, alpha, epsilon, bins, rng=None if sampler == "opendp" else rng, n=size,
                                sampler=sampler)
        owner.level_ = level
        ar, ro, notes = quantile_losses(alpha, size, epsilon, bins, public_n)
        label = f"private quantile (tight, M = {edges.size} edges" + (", OpenDP sampler)" if sampler == "opendp"
                                                                       else ")")
    else:
        qhat, label, ar, ro, notes = calibrate(owner, scores, size, public_n, rng)
    owner.n_ = size
    return qhat, Spend(label, ar, ro, part="calibration"), notes


def warn_trivial(qhat: float, what: str) -> None:
    """:class:`~dpcp_tutorial.ReleaseWarning` when the released threshold is its public upper bound 1.

    The condition depends on the release only (post-processing, no privacy cost).
    """
    if qhat >= 1.0:
        import warnings

        from .accounting import ReleaseWarning

        warnings.warn(f"the released threshold is the top edge (qhat = 1): {what}. This is a valid private release "
                      "but carries no information; use more calibration data, a larger epsilon or a larger public "
                      "bound (the warning depends only on the release, so it costs no privacy)", ReleaseWarning,
                      stacklevel=3)


def compose_with_training(trainer, calibration, *, public, notes, chapter: str):
    """The account of a DP model's training composed in parallel with its calibration (disjoint parts).

    ``trainer`` is the model's own :class:`~dpcp_tutorial.accounting.PrivacyAccount`, ``calibration`` the
    :class:`~dpcp_tutorial.accounting.Spend` of the calibration part. The records used to train and those
    used to calibrate are disjoint (a per-record split), so the total under each relation is the larger of
    the two parts' losses; the primary relation is add/remove when both parts state it. The trainer's
    public inputs and notes follow ``public`` and ``notes``, prefixed ``trainer:``.
    """
    from .accounting import Spend, make_account

    training = Spend(f"model training: {trainer.parts[0].label}" if len(trainer.parts) == 1 else "model training",
                     trainer.add_remove, trainer.replace_one, part="training")
    parts = [training, calibration]
    relation = "add/remove" if all(p.add_remove is not None for p in parts) else "replace-one"
    return make_account(parts, relation=relation, chapter=chapter,
                        public=[*public, *(f"trainer: {p}" for p in trainer.public)],
                        notes=(*notes, *(f"trainer: {note}" for note in trainer.notes)))
