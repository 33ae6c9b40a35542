"""Class-conditional (Mondrian) private conformal prediction.

One private threshold per class, each calibrated on the calibration records
of that class only, so that coverage holds *per class*:
:math:`P(Y \\in C(X) \\mid Y = y) \\ge 1-\\alpha` for every label :math:`y`. A single
(marginal) threshold only promises the average over classes and can leave a
rare class badly under-covered.

The per-class calibration sets are disjoint, so under add/remove a record
touches one class only (parallel composition). Their sizes :math:`n_y` are
private under add/remove, yet every calibrator needs a public size. Design
used here (the default, ``class_sizes="private"``):

1. release all per-class counts once with discrete Laplace (two-sided
   geometric) noise, :math:`\\tilde n_y = n_y + Z_y`,
   :math:`P(Z = z) \\propto e^{-\\varepsilon_0 |z|}`, with
   :math:`\\varepsilon_0 =` ``count_share`` :math:`\\cdot\\,\\varepsilon`;
2. a public lower bound :math:`m_y = \\max(0, \\tilde n_y - t)` with
   :math:`P(Z \\ge t+1) = q^{t+1}/(1+q) \\le \\zeta`, :math:`q = e^{-\\varepsilon_0}`;
3. *subsample or pad* to exactly :math:`m_y` scores: a uniformly random
   :math:`m_y`-subset of the class's scores when :math:`n_y \\ge m_y`, else all of
   them plus :math:`m_y - n_y` copies of the maximal score 1;
4. the class threshold is the chosen calibrator on those :math:`m_y` scores,
   at level :math:`\\alpha` for the tight private quantile (its coverage
   theorem covers padding: chapter 3) and :math:`\\alpha - \\zeta` for the
   others (whose guarantee is proved for a uniform subset only), with the public size :math:`m_y` and budget
   :math:`\\varepsilon - \\varepsilon_0`. A class whose :math:`m_y` is infeasible for
   the calibrator (decided from the released :math:`m_y` only) gets the
   threshold 1: its label enters every set.

No step branches on a private quantity: the only data-dependent choice,
subsample versus pad, is inside the private mechanism and is covered by its
privacy proof (Notes of :class:`MondrianPrivateConformalClassifier`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.exceptions import NotFittedError

from ._counts import subsample_or_pad
from ._validation import (
    RandomLike,
    as_array,
    check_bool,
    check_choice,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_scalar,
    check_same_length,
    is_frame,
    model_outputs,
    format_pair,
    silenced_model,
)
from .accounting import (
    ReleaseWarning,
    Spend,
    check_model_privacy,
    make_account,
    public_step_notes,
    trainer_account,
)
from .calibrators import laplace_histogram_quantile, opendp_quantile
from ._split_core import (
    compose_with_training,
    SplitConformalBase,
    check_public_classes,
    fit_with_classes,
    label_index,
    model_columns,
    private_classification_scores,
    sets_or_all,
)
from .conformal import check_label_array, classification_score_functions
from .private_split import pps_private_quantile
from .quantile import private_quantile, private_quantile_level

__all__ = [
    "MONDRIAN_CALIBRATORS",
    "mondrian_privacy_loss",
    "noisy_class_counts",
    "count_lower_margin",
    "MondrianPrivateConformalClassifier",
]

MONDRIAN_CALIBRATORS = ("private_quantile", "pps", "opendp", "laplace_histogram")

#: Public cap on the calibration size of one class (a larger noisy lower bound is cut to it; any public cap keeps
#: both the privacy and the coverage argument, it only bounds memory when the count noise is huge).
MAX_CLASS_CALIBRATION_SIZE = 10**7

#: Public floor of ``count_share``: a smaller share makes the noisy class sizes pure noise (scale
#: 1/(count_share * epsilon) records) and only costs time (every class padded towards the cap above).
MIN_COUNT_SHARE = 1e-6


def mondrian_privacy_loss(epsilon: float, relation: str = "add/remove") -> float:
    """Privacy loss of :class:`MondrianPrivateConformalClassifier`'s calibration with total budget ``epsilon``.

    ``"add/remove"`` (class sizes private): :math:`\\varepsilon` (counts
    :math:`\\varepsilon_0` plus calibration :math:`\\varepsilon - \\varepsilon_0`, each
    in parallel over the classes). ``"replace-one"`` (total size public, a
    record may change class): :math:`2\\varepsilon`, since a record that moves
    from class :math:`y` to :math:`y'` changes two counts and two calibration
    sets (a replacement within one class costs only :math:`\\varepsilon - \\varepsilon_0`).

    Parameters
    ----------
    epsilon : float
        Total budget of the calibration (counts plus thresholds).
    relation : {"add/remove", "replace-one"}, default="add/remove"
        The neighbour relation.

    Returns
    -------
    float
        The privacy loss under ``relation``.

    Examples
    --------
    >>> mondrian_privacy_loss(1.0), mondrian_privacy_loss(1.0, relation="replace-one")
    (1.0, 2.0)
    """
    epsilon = check_epsilon(epsilon)
    relation = check_choice(relation, "relation", ("replace-one", "add/remove"))
    return epsilon if relation == "add/remove" else 2.0 * epsilon


def count_lower_margin(epsilon: float, failure: float) -> int:
    """Smallest :math:`t \\ge 0` with :math:`P(Z \\ge t + 1) \\le` ``failure`` for discrete Laplace noise.

    For :math:`P(Z = z) = \\frac{1-q}{1+q} q^{|z|}`, :math:`q = e^{-\\varepsilon}`:
    :math:`P(Z \\ge s) = q^s/(1+q)` for :math:`s \\ge 1`, so
    :math:`t = \\max(0, \\lceil \\log(1/(\\zeta(1+q)))/\\varepsilon \\rceil - 1)`.

    Parameters
    ----------
    epsilon : float
        Budget of the noisy counts.
    failure : float
        :math:`\\zeta \\in (0, 1)`, the allowed probability that the noise exceeds the margin.

    Returns
    -------
    int
        The margin :math:`t`.

    Examples
    --------
    >>> count_lower_margin(0.1, failure=0.01)
    39
    """
    epsilon = check_epsilon(epsilon)
    failure = check_scalar(failure, "failure", low=0.0, high=1.0)
    q = math.exp(-epsilon)
    t = math.ceil(math.log(1.0 / (failure * (1.0 + q))) / epsilon - 1e-12) - 1
    return max(0, t)


def noisy_class_counts(counts, epsilon: float, rng: RandomLike = None) -> np.ndarray:
    """Per-class counts plus i.i.d. discrete Laplace noise, :math:`P(Z=z) \\propto e^{-\\varepsilon|z|}`.

    The count vector has L1 sensitivity 1 under add/remove (one record, one
    class) and 2 under replace-one (a record may change class), so the
    release is :math:`\\varepsilon`-DP, respectively :math:`2\\varepsilon`-DP. All noise
    is drawn at once (one variate pair per class, data-independent):
    :math:`Z = G_1 - G_2` with :math:`G = \\lfloor E/\\varepsilon \\rfloor`,
    :math:`E \\sim \\mathrm{Exp}(1)`, so :math:`P(G \\ge g) = e^{-\\varepsilon g}` (geometric).

    Parameters
    ----------
    counts : array-like of shape (K,)
        Non-negative integer counts, one per public class.
    epsilon : float
        Budget of the release.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise; ``None`` (fresh OS entropy) for a real release
        (:term:`Seed`).

    Returns
    -------
    ndarray of float64
        Integer values, stored as floats so that the noise of a tiny
        ``epsilon`` never overflows.

    Examples
    --------
    >>> noisy_class_counts(np.array([50, 30, 20]), epsilon=1.0, rng=0)
    array([50., 31., 19.])
    """
    counts = as_array(counts, "counts")
    if counts.ndim != 1 or counts.dtype.kind not in "iu" or np.any(counts < 0):
        raise ValueError("counts must be a 1-D array of non-negative integers")
    if counts.size == 0:
        raise ValueError("counts is empty: pass one count per public class")
    epsilon = check_epsilon(epsilon)
    gen = check_random_state(rng)
    first = np.floor(gen.standard_exponential(counts.size) / epsilon)
    second = np.floor(gen.standard_exponential(counts.size) / epsilon)
    return counts.astype(float) + (first - second)


class MondrianPrivateConformalClassifier(SplitConformalBase):
    """Class-conditional private split conformal prediction sets.

    ``fit`` trains a clone of ``estimator``; ``calibrate`` releases one private
    threshold :math:`\\hat q_y` per public label from the calibration records of
    class :math:`y`; ``predict_set`` returns :math:`\\{y : s(x, y) \\le \\hat q_y\\}`.

    Parameters
    ----------
    estimator : scikit-learn classifier with ``predict_proba``
        Its probability columns are matched to ``classes`` by its own
        ``classes_`` (scikit-learn classifiers); a model without ``classes_``
        must give them in the sorted order of ``classes``. For an end-to-end
        private pipeline use a DP trainer on data disjoint from the
        calibration set.
    classes : sequence of labels, default=None
        The public label set (required; never read from the data): any
        distinct labels (strings, 1..K, ...), in the column order of
        :meth:`predict_set` (and of ``class_sizes``), matched to the model's
        ``classes_`` by name. A record whose label is outside it belongs to
        no class: :meth:`fit` leaves it out of the training data and
        :meth:`calibrate` out of every class's calibration set (a per-record
        rule; its label is never quoted or counted). A DP trainer whose
        ``classes`` is ``None`` is given the set.
    alpha : float, default=0.1
        Target miscoverage per class.
    epsilon : float, default=1.0
        Total privacy budget of the calibration (counts plus thresholds).
    score : {"lac", "aps"}, default="lac"
        The non-conformity score.
    calibrator : {"private_quantile", "pps", "opendp", "laplace_histogram"}, default="private_quantile"
        The per-class private quantile, each run with the public size
        :math:`m_y` and a guarantee of exactly its budget under replace-one at
        that size: :func:`~dpcp_tutorial.private_quantile` (tight, default),
        :func:`~dpcp_tutorial.pps_private_quantile` (tight),
        :func:`~dpcp_tutorial.opendp_quantile` (corrected level),
        :func:`~dpcp_tutorial.laplace_histogram_quantile` (corrected).
    bins : int, default=100
        Grid size passed to the calibrator (``m`` for ``"pps"``).
    class_sizes : "private" or sequence of int, default="private"
        ``"private"`` (default): sizes released with noise as described in
        :mod:`dpcp_tutorial.mondrian`. A sequence declares the per-class
        calibration sizes **public** (then they must equal the data's, no
        budget is spent on counts and :math:`\\zeta = 0`).
    count_share : float, default=0.1
        Fraction of ``epsilon`` spent on the noisy counts, in :math:`[10^{-6}, 1)`
        (a public floor: below it the counts are pure noise).
    count_failure : float or None, default=None
        :math:`\\zeta`, the probability that a class's lower bound exceeds its
        true size (the lower bound's margin). The tight private quantile runs
        at level :math:`\\alpha` (padding keeps its guarantee); the other
        calibrators run at level :math:`\\alpha - \\zeta`.
        ``None``: :math:`\\alpha/10`.
    prefit : bool, default=False
        Whether ``estimator`` is already fitted (then :meth:`fit` is skipped).
    allow_low_coverage : bool, default=False
        ``alpha`` is the miscoverage, ``1 - confidence_level``; an ``alpha``
        above 1/2 is refused unless this is ``True``.
    rng : None, int or numpy.random.Generator, default=None
        Randomness of the counts, the subsampling and the thresholds;
        ``rng=None`` (fresh OS entropy) for a real release (:term:`Seed`).

    Attributes
    ----------
    classes_ : ndarray
        The public label set in the order of ``classes`` (the columns of
        :meth:`predict_set` and the order of ``qhat_``).
    qhat_ : ndarray of shape (K,)
        Per-class thresholds (1 for a class without a feasible calibration).
    noisy_counts_, calibration_sizes_ : ndarray of int
        Released noisy counts (``None`` with public sizes) and the public
        sizes :math:`m_y` used.
    privacy_ : PrivacyAccount
        Counts (every record) and one threshold per class (the class's
        records), under both relations; ``epsilon`` is the total of the
        calibration (the rule: :mod:`dpcp_tutorial.accounting`), ``count_share``
        the counts' fraction. With a DP trainer (its own ``privacy_``) the
        totals are the whole pipeline's: the model's training part in parallel
        with the calibration part, as in the split estimators; a model without
        ``privacy_`` has its training data listed as public.
    n_features_in_, feature_names_in_ : int, ndarray
        The features' schema (names only when fitted on a DataFrame with
        string column names); later frames are matched by name.
        A class whose threshold is 1 triggers a
        :class:`~dpcp_tutorial.ReleaseWarning` (a function of the release).

    Notes
    -----
    **Privacy (add/remove, class sizes private).** The noisy counts are
    :math:`\\varepsilon_0`-DP (:func:`noisy_class_counts`). Given the released
    :math:`m_y`, class :math:`y`'s threshold is :math:`\\varepsilon_1`-DP with respect to
    adding or removing one record of class :math:`y`
    (:math:`\\varepsilon_1 = \\varepsilon - \\varepsilon_0`): the calibrators are exactly
    :math:`\\varepsilon_1`-DP under replace-one at the fixed size :math:`m_y`, and
    subsample-or-pad turns add/remove into replace-one by a coupling (a
    uniform :math:`m`-subset of :math:`D \\cup \\{r\\}` either avoids :math:`r`, and is then
    a uniform :math:`m`-subset of :math:`D`, or is such a subset with one element
    replaced by :math:`r`; when padding, :math:`r` replaces one pad; at
    :math:`|D| = m-1` the padded :math:`D` and :math:`D\\cup\\{r\\}` differ in one
    element). The classes are disjoint, so the thresholds compose in
    parallel, and with the counts sequentially: :math:`\\varepsilon` in total. Under
    replace-one: :math:`2\\varepsilon` (:func:`mondrian_privacy_loss`). With public
    ``class_sizes`` the relation is replace-one *within* a class (class
    membership public): :math:`\\varepsilon`.

    **Coverage.** Conditionally on the labels, the class-:math:`y` calibration
    scores and a class-:math:`y` test score are exchangeable, and the noisy
    count depends on the labels only. With the tight private quantile its
    coverage theorem for a public size (chapter 3) applies on both events:
    :math:`m_y \\le n_y` (a uniform subset, exchangeable with the test score)
    and :math:`m_y > n_y` (all scores padded with the top score 1), so the
    level is :math:`\\alpha`. For the other calibrators the guarantee is proved
    for a uniform subset only: on the event :math:`m_y \\le n_y` (failure
    probability :math:`\\le \\zeta`) it applies at level :math:`\\alpha-\\zeta`, and
    the failure adds at most :math:`\\zeta`. A class with threshold 1 is always
    covered. Hence :math:`P(Y \\in C(X) \\mid Y = y) \\ge 1-\\alpha` for
    every class, for the calibrators with a proven guarantee
    (``"private_quantile"``, ``"opendp"``, ``"laplace_histogram"``; ``"pps"``
    for :math:`\\alpha \\le 1/2` per its reference argument).

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1200, 2))
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=1200) > 0).astype(int)
    >>> clf = MondrianPrivateConformalClassifier(
    ...     LogisticRegression(), classes=[0, 1], alpha=0.1, epsilon=1.0, rng=0)
    >>> clf = clf.fit(X[:200], y[:200]).calibrate(X[200:], y[200:])
    >>> clf.qhat_, clf.calibration_sizes_
    (array([0.81, 0.69]), array([526, 466]))
    >>> clf.predict_set(X[:3])
    array([[ True,  True],
           [False,  True],
           [ True, False]])
    """

    _METHODS = ("fit", "predict_proba")
    _FIT_MIN_ROWS = 0       # labels outside the public set are left out: the model decides what no record means

    def __init__(self, estimator, classes=None, alpha: float = 0.1, epsilon: float = 1.0, score: str = "lac",
                 calibrator: str = "private_quantile", bins: int = 100, class_sizes="private",
                 count_share: float = 0.1, count_failure: float | None = None, prefit: bool = False,
                 rng: RandomLike = None, *, allow_low_coverage: bool = False):
        self.allow_low_coverage = allow_low_coverage
        self.estimator = estimator
        self.classes = classes
        self.alpha = alpha
        self.epsilon = epsilon
        self.score = score
        self.calibrator = calibrator
        self.bins = bins
        self.class_sizes = class_sizes
        self.count_share = count_share
        self.count_failure = count_failure
        self.prefit = prefit
        self.rng = rng

    # ------------------------------------------------------------------ plumbing
    def fit(self, X, y):
        """Fit a clone of ``estimator`` on the training data (skipped when ``prefit``); labels in ``classes``.

        A model whose steps no account certifies (a DP step beside a step
        fitted on the data, e.g. a fitted scaler) is refused
        (:func:`dpcp_tutorial.accounting.check_model_privacy`; the model object
        is read, never the data).
        """
        check_model_privacy(self.estimator, type(self).__name__)
        if check_bool(self.prefit, "prefit"):
            return super().fit(X, y)
        classes_ = check_public_classes(self.classes)
        y = check_label_array(y)
        inside = label_index(y, classes_) >= 0         # a per-record rule: labels outside the set are left out
        if not inside.all():
            rows = np.flatnonzero(inside)
            X = X.iloc[rows] if is_frame(X) else np.asarray(X)[rows]
            y = y[rows]
        return fit_with_classes(self, super().fit, X, y)

    def _public_classes(self):
        return check_public_classes(self.classes)

    def _public_order(self):
        """``(classes_, position)``: the public label set in the caller's order, and where each sorted label sits."""
        ordered = check_public_classes(self.classes)
        sorted_ = np.unique(ordered)
        lookup = {c: j for j, c in enumerate(ordered.tolist())}
        return ordered, np.array([lookup[c] for c in sorted_.tolist()])

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the underlying model, one column per public class, in the order of ``classes``."""
        model = self._fitted_estimator()
        return self._columns_in_order(model, np.asarray(model.predict_proba(self._features(X)), dtype=float))

    def _columns_in_order(self, model, proba):
        ordered, position = self._public_order()
        if getattr(model, "classes_", None) is not None:
            return proba[:, model_columns(model, ordered)]
        if proba.ndim != 2 or proba.shape[1] != ordered.size:
            raise ValueError(f"the estimator returns {proba.shape[-1]} probability columns but classes has "
                             f"{ordered.size} labels; train it on the same public label set")
        return proba[:, np.argsort(position)]      # sorted columns to the caller's order

    def _score_fn(self):
        return classification_score_functions(self.score)[0]

    def _check_settings(self):
        alpha = self._alpha()
        epsilon = check_epsilon(self.epsilon)
        check_choice(self.calibrator, "calibrator", MONDRIAN_CALIBRATORS)
        bins = check_positive_int(self.bins, "bins", minimum=2, maximum=10**6)
        share = check_scalar(self.count_share, "count_share", low=MIN_COUNT_SHARE, high=1.0, low_inclusive=True,
                             hint=f"the fraction of epsilon spent on the noisy class counts, at least "
                                  f"{MIN_COUNT_SHARE:g} (below it the count noise, of scale 1/(count_share * "
                                  "epsilon) records, drowns every class size)")
        zeta = alpha / 10.0 if self.count_failure is None else check_scalar(
            self.count_failure, "count_failure", low=0.0, high=alpha,
            hint="the calibrators run at level alpha - count_failure, so it must lie in (0, alpha)")
        return alpha, epsilon, bins, share, zeta

    def _threshold(self, scores, level, epsilon, m, bins, gen) -> float:
        """The calibrator at the public size m; 1 when m is infeasible (decided from public inputs only)."""
        if m < 1:
            return 1.0
        if self.calibrator == "private_quantile":
            try:
                private_quantile_level(level, m, epsilon, bins)
            except ValueError:          # infeasible at the public (m, level, epsilon, bins)
                return 1.0
            return private_quantile(scores, level, epsilon, bins, rng=gen, n=m)
        if self.calibrator == "pps":
            return pps_private_quantile(scores, level, epsilon, m=bins, n=m, rng=gen)
        if self.calibrator == "opendp":
            return opendp_quantile(scores, level, epsilon, bins=bins, n=m, rng=gen)
        return laplace_histogram_quantile(scores, level, epsilon, bins=bins, n=m, rng=gen)

    # ------------------------------------------------------------------ calibration
    def calibrate(self, X, y):
        """Release the per-class thresholds ``qhat_`` from the calibration data."""
        alpha, epsilon, bins, share, zeta = self._check_settings()
        check_model_privacy(self._fitted_estimator(), type(self).__name__)    # the model object only
        self._score_fn()                 # checks score
        X = self._features(X, calibrating=True, min_rows=0)    # the class sizes are private: none at all is data
        classes_, position = self._public_order()
        y = check_label_array(y, allow_empty=True)
        index = label_index(y, classes_)       # each label's position in the caller's order; -1 outside the set
        check_same_length(("X", X), ("y", index))
        self.classes_ = classes_
        n_classes = classes_.size
        gen = check_random_state(self.rng)
        # child generators: the caller's generator advances by the same amount for every data set
        seeds = gen.integers(0, 2**63 - 1, size=2 * n_classes + 1)
        model = self._fitted_estimator()
        width = len(model.classes_) if getattr(model, "classes_", None) is not None else n_classes
        with silenced_model():
            outputs = model_outputs(model.predict_proba, X, width) if X.shape[0] else np.empty((0, width))
            proba = self._columns_in_order(model, outputs)
        scores = private_classification_scores(self.score, proba, index)
        counts = np.bincount(index[index >= 0], minlength=n_classes)   # counting first (no record outside the set)
        if isinstance(self.class_sizes, str):
            if self.class_sizes != "private":
                raise ValueError(f"class_sizes={self.class_sizes!r}: pass 'private' or one public size per class")
            count_eps = share * epsilon
            noisy = noisy_class_counts(counts, count_eps, rng=seeds[-1])   # ... then all count noise at once
            margin = count_lower_margin(count_eps, zeta)
            sizes = np.clip(noisy - float(margin), 0.0, MAX_CLASS_CALIBRATION_SIZE).astype(np.int64)
            # the tight quantile's coverage theorem covers padding (chapter 3): level alpha; the other
            # calibrators are proved for a uniform subset only and pay the lower bound's failure zeta
            cal_eps = epsilon - count_eps
            level = alpha if self.calibrator == "private_quantile" else alpha - zeta
            self.noisy_counts_ = noisy
        else:
            sizes = np.asarray(self.class_sizes)
            if sizes.shape != (n_classes,) or sizes.dtype.kind not in "iu" or np.any(sizes < 0):
                raise TypeError("class_sizes must be 'private' or one non-negative integer per class")
            if np.any(sizes != counts):   # declared public by the caller: comparing them reveals nothing
                raise ValueError("class_sizes are declared public but differ from the per-class calibration "
                                 "sizes; pass the calibration records of exactly those sizes")
            cal_eps, level = epsilon, alpha
            self.noisy_counts_ = None
        qhat = np.ones(n_classes)
        for j in range(n_classes):
            m = int(sizes[j])
            sub = np.random.default_rng(seeds[2 * j])
            chosen = subsample_or_pad(scores[index == j], m, sub) if m >= 1 else scores[:0]
            qhat[j] = self._threshold(chosen, level, cal_eps, m, bins, np.random.default_rng(seeds[2 * j + 1]))
        self.calibration_sizes_ = sizes.astype(np.int64)
        self.qhat_ = qhat
        self.privacy_ = self._account(classes_, epsilon, count_eps if self.noisy_counts_ is not None else None,
                                      cal_eps, zeta)
        trivial = classes_[qhat >= 1.0]
        if trivial.size:   # a function of the release and the public label set: post-processing, no privacy cost
            warnings.warn(f"the released threshold of class(es) {trivial.tolist()} is 1: those labels enter every "
                          "prediction set. This is a valid private release; use more calibration data or a larger "
                          "epsilon (the warning depends only on the release, so it costs no privacy)",
                          ReleaseWarning, stacklevel=2)
        return self

    def _model_note(self) -> str:
        """What the account says about a model that reports no privacy_ (its training data are public)."""
        return ("the model reports no privacy_ (not a DP trainer): the data it was fitted on are treated as "
                "public and are not covered by this account")

    def _account(self, classes_, epsilon, count_eps, cal_eps, zeta):
        model = self._fitted_estimator()
        trainer = trainer_account(model)                        # refuses a model no account certifies
        thresholds = [Spend(f"threshold of class {c!r} ({self.calibrator}, subsample-or-pad)", (cal_eps, 0.0),
                            (cal_eps, 0.0), part=f"class {c!r}") for c in classes_.tolist()]
        public = [f"classes = {classes_.tolist()}", f"score = {self.score!r}", f"bins = {self.bins}",
                  *public_step_notes(model)]
        rule = "each record's class (its label) decides its calibration part: a per-record rule"
        if count_eps is None:
            calibration = make_account(
                thresholds, relation="replace-one", partition="positional", chapter="chapter 17",
                public=public + [f"the per-class calibration sizes {list(self.class_sizes)} and each record's class"],
                notes=("replace-one within a class (class sizes public): a record keeps its class",))
        else:
            counts = Spend("noisy class counts (discrete Laplace)", (count_eps, 0.0), (2.0 * count_eps, 0.0))
            calibration = make_account([counts, *thresholds], relation="add/remove", chapter="chapter 17",
                                       public=public + [f"count_share = {float(self.count_share):g}",
                                                        f"count_failure zeta = {zeta:.4g}"], notes=(rule,))
        if trainer is None:
            return make_account(calibration.parts, relation=calibration.relation,
                                partition="positional" if count_eps is None else "per-record",
                                public=calibration.public, chapter="chapter 17",
                                notes=(*calibration.notes, self._model_note()))
        # the model's training part and the calibration part are disjoint: parallel composition, as in the
        # split estimators; the calibration's own breakdown (counts, one threshold per class) is in the notes
        breakdown = "; ".join(f"{p.label}: {format_pair(p.add_remove)} add/remove, {format_pair(p.replace_one)} "
                              f"replace-one" for p in calibration.parts)
        return compose_with_training(
            trainer, Spend("Mondrian calibration (noisy class counts and one threshold per class)",
                           calibration.add_remove, calibration.replace_one, part="calibration"),
            public=calibration.public, notes=(*calibration.notes, f"calibration breakdown: {breakdown}"),
            chapter="chapter 17")

    def predict_set(self, X) -> np.ndarray:
        """Boolean matrix of shape (n, K): label :math:`y` is in the set iff :math:`s(x, y) \\le \\hat q_y`."""
        if not hasattr(self, "qhat_"):
            raise NotFittedError(f"{type(self).__name__} is not calibrated: call calibrate(X_cal, y_cal) first")
        score_fn = self._score_fn()
        return sets_or_all(lambda proba, _: self._sets(score_fn, proba), self.predict_proba(X), None)

    def _sets(self, score_fn, proba):
        out = np.empty(proba.shape, dtype=bool)
        for j in range(proba.shape[1]):
            s = score_fn(proba, np.full(proba.shape[0], j))
            out[:, j] = True if self.qhat_[j] >= 1.0 else (s <= self.qhat_[j])
        return out
