"""Differential CP and DPCP: conformal prediction without a data split (chapters 5 and 6).

*Differential CP* (not private) fits an :math:`(\\varepsilon, \\delta)`-DP model
:math:`\\mu_n` on **all** :math:`n` points and calibrates on the same points at the
shifted level

.. math:: \\alpha_1 = e^{-\\varepsilon}(\\alpha - \\delta).

If the trainer is DP under *add/remove* neighbours and symmetric, then
:math:`\\mu_n = A(D_n)` and the oracle :math:`\\mu_{n+1} = A(D_n \\cup \\{Z_{n+1}\\})`
miscover with probabilities that differ by at most the DP factor, which gives
coverage :math:`\\ge 1 - \\alpha` at level :math:`\\alpha_1` and only
:math:`\\ge 1 - e^{\\varepsilon}\\alpha - \\delta` without the shift (chapter 5).

*DPCP* (the DPCP write-up's Algorithm 2) replaces the exact in-sample quantile
by the private quantile (:func:`dpcp_tutorial.private_quantile`, by default its
tight variant) with budget :math:`\\varepsilon_2`. With a public ``n`` the
in-sample scores are first subsampled or padded with 1 to exactly ``n``
(``dpcp_tutorial._counts.subsample_or_pad``, as the split estimators do),
so the level computed for ``n`` is valid at every data size. Privacy with
:math:`n` public, by basic composition (chapter 6): under add/remove (the
trainer's relation) the release is :math:`(\\varepsilon_1 + \\varepsilon_2, \\delta)`-DP
with the tight quantile and :math:`(\\varepsilon_1 + \\varepsilon_2/(2\\max(\\alpha_0,
1-\\alpha_0)), \\delta)`-DP with the write-up's (``variant="original"``): the
subsample-or-pad step turns adding or removing a record into a replacement
at size ``n``; under replace-one the generic conversion of the
trainer gives :math:`(2\\varepsilon_1 + \\varepsilon_2, (1 + e^{\\varepsilon_1})\\delta)`
(tight) and :math:`(2\\varepsilon_1 + \\varepsilon_2/(2(1-\\alpha_0)),
(1 + e^{\\varepsilon_1})\\delta)` (original, :math:`\\alpha_0 \\le 1/2`). The estimators
report both in ``privacy_`` (:class:`~dpcp_tutorial.PrivacyAccount`); ``epsilon``
is the total and ``training_share`` the trainer's fraction of it (the rule:
:mod:`dpcp_tutorial.accounting`). Coverage is proved in chapter 6 (theorem
"Coverage of DPCP"): for exchangeable records and a symmetric trainer that is
:math:`(\\varepsilon_1, \\delta)`-DP under add/remove at sizes ``n`` and ``n + 1``,
:math:`P(Y_{n+1} \\in C(X_{n+1})) \\ge 1 - e^{\\varepsilon_1}\\bar\\beta(\\alpha_0) - \\delta \\ge 1 - \\alpha`,
where :math:`\\bar\\beta` is the private quantile's miscoverage bound; the proof
needs no assumption of the DPCP write-up beyond these.
"""

from __future__ import annotations

import math
import types

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    REQUIRED,
    RandomLike,
    check_1d,
    check_alpha,
    check_bool,
    check_coverage_alpha,
    check_delta,
    check_epsilon,
    check_estimator,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
    require,
)
from ._counts import check_scores_or_histogram
from .accounting import Spend, make_account, trainer_account
from .training import DPRegressogram  # noqa: F401  (its home is training.regressogram; importable here too)
from .training import check_classes
from .conformal import check_label_array, classification_score_functions, conformal_quantile
from ._validation import (as_array, check_features, check_quantile_variant, composite_steps, is_frame, model_outputs,
                          silenced_model)
from .mechanisms import check_sampler
from ._split_core import (
    BOUND_ADVICE,
    check_bound,
    check_public_classes,
    is_unbounded,
    label_index,
    model_columns,
    private_classification_scores,
    public_size,
    residual_scores,
    sets_or_all,
    unbounded_interval,
    warn_trivial,
)
from .private_split import bounded_interval, normalized_residual_score
from .quantile import (
    private_quantile,
    private_quantile_level,
    private_quantile_miscoverage_bound,
    private_quantile_privacy_loss,
    quantile_edges,
)

_LARGEST_SIZE = 2 ** 62      # the largest data size the tight quantile's feasibility search considers

__all__ = [
    "check_dp_trainer",
    "differential_cp_level",
    "differential_cp_coverage_floor",
    "differential_cp_quantile",
    "differential_cp_interval",
    "differential_cp_set",
    "dpcp_levels",
    "dpcp_quantile",
    "dpcp_interval",
    "dpcp_set",
    "DPCPRegressor",
    "DPCPClassifier",
]


# ---------------------------------------------------------------------------
# the trainer contract (DPCP write-up error D8)
# ---------------------------------------------------------------------------

def check_dp_trainer(trainer) -> None:
    """Refuse trainers that the no-split argument does not cover (chapter 5, DPCP write-up error D8).

    Differential CP and DPCP compare the model fitted on :math:`D_n` with the one
    fitted on :math:`D_n` plus the test point: an *add/remove* pair. The trainer
    must therefore

    * be a scikit-learn estimator (``fit``, ``get_params``), and
    * declare ``relation = "add/remove"`` (a class attribute; the older name
      ``neighbouring`` is still read when ``relation`` is absent). A
      replace-one guarantee says nothing about data sets of different sizes;
    * state its budget: either a constructor parameter ``epsilon`` (and
      ``delta``), which DPCP sets on a clone (``training_share``), or, after
      fitting, a ``privacy_`` account (:class:`~dpcp_tutorial.PrivacyAccount`) with
      an add/remove guarantee (``training_share=None``: the trainer's own
      settings, e.g. a DP-SGD noise multiplier, fix its budget).

    It must also be symmetric (its output law invariant to the order of the
    records); that cannot be checked in code and is the trainer's promise.
    Every check reads public settings only.

    Parameters
    ----------
    trainer : scikit-learn estimator
        The DP trainer (unfitted).

    Raises
    ------
    TypeError
        If ``trainer`` is not a scikit-learn estimator.
    ValueError
        If it does not declare add/remove neighbours, or divides by its data's
        own size (DP-SGD with ``expected_batch_size=None``).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from dpcp_tutorial import DPRidgeRegression
    >>> check_dp_trainer(DPRidgeRegression(x_bound=1.0, y_bound=1.0))     # accepted
    >>> try:
    ...     check_dp_trainer(LinearRegression())
    ... except ValueError as error:
    ...     print(str(error)[:55])
    LinearRegression declares relation=None, but the no-spl
    """
    check_estimator(trainer, "trainer", ("fit", "get_params"))
    from .accounting import declared_relation

    if composite_steps(trainer) is not None:
        raise ValueError(
            f"the trainer is a {type(trainer).__name__}: Differential CP and DPCP need the DP trainer itself (they "
            "set its budget on a clone and read its add/remove guarantee). Apply a public per-record transform to "
            "X first, e.g. X = PublicScaler(low, high).fit_transform(X) (public ranges, nothing learnt from the "
            "data), and pass the trainer alone")
    relation = declared_relation(trainer)
    if relation != "add/remove":
        raise ValueError(
            f"{type(trainer).__name__} declares relation={relation!r}, but the no-split argument compares "
            "D_n with D_n plus one point, so the trainer must be (epsilon, delta)-DP under add/remove neighbours "
            "(DPCP write-up error D8: not every DP trainer works). Use an add/remove trainer (e.g. "
            "dpcp_tutorial.DPRidgeRegression or Poisson-subsampled DP-SGD) or re-derive the trainer's guarantee for "
            "add/remove and set relation = 'add/remove'"
        )
    if "expected_batch_size" in trainer.get_params(deep=False) and trainer.expected_batch_size is None:
        raise ValueError(
            f"{type(trainer).__name__}(expected_batch_size=None) divides its gradients by sampling_rate * n, so its "
            "output depends on the private size n and its add/remove guarantee does not hold for the model fitted "
            "on n and on n + 1 points; pass a public constant, e.g. expected_batch_size=sampling_rate * n0 for a "
            "planned size n0"
        )


def _fit_trainer(trainer, X, y, rng: np.random.Generator, params=None):
    """Clone ``trainer``, set ``params`` (privacy, label set) and a seed from ``rng``, and fit it on all the data."""
    check_dp_trainer(trainer)
    model = clone(trainer)
    params = dict(params or {})
    if "rng" in model.get_params(deep=False):
        params["rng"] = np.random.default_rng(rng.integers(2**63))
    return model.set_params(**params).fit(X, y)


def _reported_privacy(model) -> tuple[float, float]:
    """The add/remove ``(epsilon, delta)`` that a fitted trainer reports in ``privacy_`` (public settings only)."""
    account = trainer_account(model)
    if account is None or account.add_remove is None:
        raise TypeError(f"{type(model).__name__} reports no add/remove privacy_ account after fitting; Differential "
                        "CP and DPCP need the trainer's (epsilon, delta) under add/remove: give it an `epsilon` "
                        "parameter or a privacy_ PrivacyAccount (e.g. dpcp_tutorial.DPRidgeRegression)")
    epsilon, delta = account.add_remove
    return check_epsilon(epsilon, "the trainer's epsilon"), check_delta(delta, "the trainer's delta")


# ---------------------------------------------------------------------------
# Differential CP (not private)
# ---------------------------------------------------------------------------

def differential_cp_level(alpha: float, epsilon: float, delta: float) -> float:
    """The Differential-CP level :math:`\\alpha_1 = e^{-\\varepsilon}(\\alpha - \\delta)` (chapter 5).

    Calibrating in-sample at :math:`\\alpha_1` with an :math:`(\\varepsilon, \\delta)`-DP
    add/remove trainer gives miscoverage at most
    :math:`e^{\\varepsilon}\\alpha_1 + \\delta = \\alpha`.

    Parameters
    ----------
    alpha : float
        Target miscoverage in (0, 1).
    epsilon, delta : float
        The trainer's add/remove guarantee :math:`(\\varepsilon, \\delta)`.

    Raises
    ------
    ValueError
        If :math:`\\alpha \\le \\delta` (no level works).

    Examples
    --------
    >>> round(differential_cp_level(0.1, 0.5, 1e-6), 4)
    0.0607
    """
    return _shifted_level(alpha, epsilon, delta, "epsilon")


def _shifted_level(alpha, epsilon, delta, name: str) -> float:
    """:math:`e^{-\\varepsilon}(\\alpha - \\delta)` with ``epsilon`` checked (and named in errors) as ``name``."""
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon, name)
    delta = check_delta(delta)
    if alpha <= delta:
        raise ValueError(
            f"alpha={alpha:.6g} must exceed delta={delta:.3g}: the guarantee is miscoverage <= e^eps * alpha1 + delta, "
            f"so no level alpha1 > 0 reaches alpha. Use delta far below both alpha and 1/n (e.g. delta=1e-6)"
        )
    level = math.exp(-epsilon) * (alpha - delta)
    if level == 0.0:
        raise ValueError(f"{name}={epsilon:g} is too large, the level is infeasible: alpha1 = e^-{name} (alpha - "
                         f"delta) underflows to 0 (no sample size reaches it; the set would be the whole space); use "
                         f"{name} below about 700, in practice a few units")
    return level


def differential_cp_coverage_floor(alpha: float, epsilon: float, delta: float) -> float:
    """Coverage floor :math:`1 - e^{\\varepsilon}\\alpha - \\delta` of Differential CP *without* the shift (chapter 5).

    The stability argument applied at level :math:`\\alpha` itself; it can be
    negative (vacuous) for large :math:`\\varepsilon`, and is ``-inf`` where
    :math:`e^{\\varepsilon}\\alpha` exceeds the floating-point range.

    Parameters
    ----------
    alpha : float
        Target miscoverage in (0, 1).
    epsilon, delta : float
        The trainer's add/remove guarantee :math:`(\\varepsilon, \\delta)`.

    Examples
    --------
    >>> round(differential_cp_coverage_floor(0.1, 0.5, 1e-6), 4)
    0.8351
    >>> round(differential_cp_coverage_floor(0.1, 3.0, 1e-6), 4)      # vacuous
    -1.0086
    """
    alpha = check_alpha(alpha)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if epsilon + math.log(alpha) > 700.0:     # e^eps * alpha > 1e304: vacuous, and exp would overflow
        return -math.inf
    return 1.0 - math.exp(epsilon) * alpha - delta


def differential_cp_quantile(scores, alpha: float, epsilon: float, delta: float, corrected: bool = True) -> float:
    """In-sample conformal quantile of Differential CP (chapter 5).

    .. math:: q = s_{(k)}, \\quad k = \\lceil (n+1)(1-\\alpha_1) \\rceil,
              \\quad \\alpha_1 = e^{-\\varepsilon}(\\alpha - \\delta),

    with ``inf`` when :math:`k > n`. The scores are those of the model fitted on
    the *same* :math:`n` points. ``corrected=False`` uses :math:`\\alpha` itself
    (coverage only :math:`\\ge 1 - e^{\\varepsilon}\\alpha - \\delta`).

    Parameters
    ----------
    scores : array-like of shape (n,)
        In-sample scores.
    alpha : float
        Target miscoverage in (0, 1).
    epsilon, delta : float
        The trainer's add/remove guarantee :math:`(\\varepsilon, \\delta)`.
    corrected : bool, default=True
        Calibrate at :math:`\\alpha_1` (``False``: at :math:`\\alpha`).

    Examples
    --------
    >>> scores = np.arange(1, 101) / 100
    >>> differential_cp_quantile(scores, 0.1, 0.5, 1e-6)
    0.95
    >>> differential_cp_quantile(scores, 0.1, 0.5, 1e-6, corrected=False)
    0.91
    """
    level = differential_cp_level(alpha, epsilon, delta) if check_bool(corrected, "corrected") else check_alpha(alpha)
    return conformal_quantile(scores, level)


def differential_cp_interval(trainer, X, y, X_test, alpha: float = 0.1, corrected: bool = True,
                             rng: RandomLike = None) -> np.ndarray:
    """Differential-CP intervals :math:`\\mu_n(x) \\pm q` (chapter 5; not private).

    Fits ``trainer`` (an add/remove :math:`(\\varepsilon, \\delta)`-DP estimator,
    whose own guarantee, read from the fitted model's ``privacy_``, is used) on
    all of ``X, y`` and calibrates on the same data with
    :func:`differential_cp_quantile`.

    Parameters
    ----------
    trainer : scikit-learn regressor
        DP under add/remove (:func:`check_dp_trainer`); cloned and fitted.
    X, y : array-like of shape (n, p) and (n,)
        The data: the model is trained and calibrated on all of it.
    X_test : array-like of shape (n_test, p)
        Test features.
    alpha : float, default=0.1
        Target miscoverage.
    corrected : bool, default=True
        Calibrate at :math:`\\alpha_1` (:func:`differential_cp_quantile`).
    rng : None, int or numpy.random.Generator, default=None
        Seeds the trainer (:term:`Seed`).

    Returns
    -------
    ndarray of shape (n_test, 2)
        Rows are ``(-inf, inf)`` when the rank exceeds ``n``.

    Examples
    --------
    >>> from dpcp_tutorial import DPRidgeRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 1)); y = X[:, 0] + 0.3 * rng.normal(size=2000)
    >>> trainer = DPRidgeRegression(epsilon=0.5, x_bound=1.0, y_bound=2.0)
    >>> differential_cp_interval(trainer, X, y, [[0.0]], rng=1).round(2)
    array([[-0.55,  0.6 ]])
    """
    check_dp_trainer(trainer)
    X, X_test = _test_features(X, X_test)
    y = check_1d(y, "y")
    check_same_length(("X", X), ("y", y))
    model = _fit_trainer(trainer, X, y, check_random_state(rng))
    epsilon, delta = _reported_privacy(model)
    residual = np.abs(y - model_outputs(model.predict, X))
    q = differential_cp_quantile(np.where(np.isnan(residual), math.inf, residual), alpha, epsilon, delta, corrected)
    mu = np.asarray(model.predict(X_test), dtype=float)
    half = np.where(np.isfinite(mu), q, math.inf)            # a NaN prediction: the whole line
    mu = np.where(np.isfinite(mu), mu, 0.0)
    return np.column_stack([mu - half, mu + half])


def differential_cp_set(trainer, X, y, X_test, alpha: float = 0.1, corrected: bool = True, score: str = "lac",
                        rng: RandomLike = None, *, classes=None) -> np.ndarray:
    """Differential-CP prediction sets (chapter 5; not private).

    As :func:`differential_cp_interval` for a classifier with ``predict_proba``;
    the score is LAC (:math:`1-\\hat p_y`) or APS.

    Parameters
    ----------
    trainer : scikit-learn classifier with ``predict_proba``
        DP under add/remove (:func:`check_dp_trainer`); cloned and fitted.
    X, y : array-like of shape (n, p) and (n,)
        The data: the model is trained and calibrated on all of it.
    X_test : array-like of shape (n_test, p)
        Test features.
    alpha : float, default=0.1
        Target miscoverage.
    corrected : bool, default=True
        Calibrate at :math:`\\alpha_1` (:func:`differential_cp_quantile`).
    score : {"lac", "aps"}, default="lac"
        The classification score.
    rng : None, int or numpy.random.Generator, default=None
        Seeds the trainer (:term:`Seed`).
    classes : array-like, default=None
        The public label set (any labels), in the column order of the sets;
        it is given to the trainer (whose own ``classes`` must then be
        ``None`` or the same set) and matched to its ``classes_`` by name. A
        label outside the set has the worst score.

    Returns
    -------
    ndarray of shape (n_test, K)
        Boolean; column order is ``classes`` (``model.classes_`` without it).

    Examples
    --------
    >>> from dpcp_tutorial import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 1)); y = np.where(X[:, 0] > 0, "b", "a")
    >>> trainer = DPLogisticRegression(epsilon=1.0, x_bound=1.0)
    >>> differential_cp_set(trainer, X, y, [[-0.9], [0.9]], classes=["a", "b"], rng=1)
    array([[ True, False],
           [False,  True]])
    """
    check_dp_trainer(trainer)
    X, X_test = _test_features(X, X_test)
    y = check_label_array(as_array(y, "y"))
    score_fn, set_fn = _score_functions(score)
    params = {}
    if classes is not None:
        ordered = check_public_classes(classes)
        own = trainer.get_params(deep=False)
        if "classes" not in own:
            raise TypeError(f"{type(trainer).__name__} has no `classes` parameter; pass classes=None and use its "
                            "own label set, or a trainer that takes the public label set (e.g. DPLogisticRegression)")
        if own["classes"] is not None and not np.array_equal(check_classes(own["classes"], "the trainer"),
                                                             np.unique(ordered)):
            raise ValueError("classes and the trainer's classes differ; give the label set once")
        params["classes"] = ordered.tolist()
    model = _fit_trainer(trainer, X, y, check_random_state(rng), params)
    epsilon, delta = _reported_privacy(model)
    labels = np.asarray(model.classes_) if classes is None else ordered
    columns = model_columns(model, labels)
    proba = model_outputs(model.predict_proba, X, len(model.classes_))[:, columns]
    scores = private_classification_scores(score, proba, label_index(y, labels))
    q = differential_cp_quantile(scores, alpha, epsilon, delta, corrected)
    return sets_or_all(set_fn, np.asarray(model.predict_proba(X_test))[:, columns], q)


# ---------------------------------------------------------------------------
# DPCP (Algorithm 2 of the DPCP write-up)
# ---------------------------------------------------------------------------

def dpcp_levels(n: int, alpha: float, epsilon1: float, epsilon2: float, delta: float, bins=1000,
                variant: str = "tight") -> tuple[float, float]:
    """The two levels of DPCP (chapter 6).

    .. math:: \\alpha_1 = e^{-\\varepsilon_1}(\\alpha - \\delta), \\qquad
              \\alpha_0 = \\alpha_1 - \\frac{2}{n\\varepsilon_2}\\ \\text{(``variant="original"``)}

    or, for the default ``variant="tight"``, :math:`\\alpha_0` =
    :func:`dpcp_tutorial.private_quantile_level` ``(alpha1, n, epsilon2, bins)``,
    the level at which the tight private quantile provably keeps miscoverage
    at most :math:`\\alpha_1` (chapter 3).

    Parameters
    ----------
    n : int
        Public number of scores.
    alpha : float
        Target miscoverage; must exceed ``delta``.
    epsilon1, epsilon2 : float
        Budgets of the trainer and of the private quantile.
    delta : float
        The trainer's :math:`\\delta`.
    bins : int or array-like, default=1000
        Edges of the private quantile.
    variant : {"tight", "original"}, default="tight"
        The private quantile (:func:`dpcp_tutorial.private_quantile`).

    Returns
    -------
    (alpha1, alpha0) : tuple of float

    Examples
    --------
    >>> a1, a0 = dpcp_levels(5000, 0.1, 0.3, 0.7, 1e-6)
    >>> round(a1, 4), round(a0, 4)
    (0.0741, 0.0716)

    Raises
    ------
    ValueError
        If :math:`\\alpha \\le \\delta`, or if :math:`\\alpha_0 \\le 0` (Algorithm 1 is then
        infeasible); the message states the smallest :math:`n`, the smallest
        :math:`\\varepsilon_2` and the largest :math:`\\varepsilon_1` that work.
        Every argument is public, so the message may quote them.
    """
    n = check_positive_int(n, "n")
    epsilon1 = check_epsilon(epsilon1, "epsilon1")
    epsilon2 = check_epsilon(epsilon2, "epsilon2")
    alpha1 = _shifted_level(alpha, epsilon1, delta, "epsilon1")
    if check_quantile_variant(variant) == "tight":
        quantile_edges(bins)         # bad bins are refused as such; below, a ValueError means infeasible
        try:
            return alpha1, private_quantile_level(alpha1, n, epsilon2, bins, "tight")
        except ValueError as error:
            if private_quantile_miscoverage_bound(0.0, _LARGEST_SIZE, epsilon2, bins) > alpha1:
                raise ValueError(f"DPCP is infeasible at every data size with epsilon2={epsilon2:.4g}: even 2**62 "
                                 f"scores cannot reach alpha1 = e^-epsilon1 (alpha - delta) = {alpha1:.4g} "
                                 f"(epsilon1={epsilon1:.4g}) with M={quantile_edges(bins).size} edges; raise "
                                 "epsilon2 or lower epsilon1") from None
            advice = str(error).replace("epsilon=", "epsilon2=").replace("a larger epsilon or",
                                                                  "a larger epsilon2, a smaller epsilon1 or")
            raise ValueError(f"DPCP is infeasible: alpha1 = e^-epsilon1 (alpha - delta) = {alpha1:.4g} "
                             f"(epsilon1={epsilon1:.4g}), and {advice}") from None
    shift = 2.0 / (n * epsilon2)
    if alpha1 <= shift:
        hints = []
        if alpha1 * epsilon2 > 0 and 2.0 / (alpha1 * epsilon2) < 1e15:
            hints.append(f"at least n={math.floor(2.0 / (alpha1 * epsilon2)) + 1} points")
        if alpha1 > 0 and 2.0 / (n * alpha1) < 1e300:
            hints.append(f"epsilon2 above {2.0 / (n * alpha1):.4g}")
        eps1_max = math.log((alpha - delta) * n * epsilon2 / 2.0) if (alpha - delta) * n * epsilon2 > 0 else 0.0
        if eps1_max > 0:
            hints.append(f"epsilon1 below {eps1_max:.4g}")
        raise ValueError(
            f"DPCP is infeasible: alpha1 = e^-epsilon1 (alpha - delta) = {alpha1:.4g} must exceed "
            f"2/(n epsilon2) = {shift:.4g} (n={n}, epsilon1={epsilon1:.4g}, epsilon2={epsilon2:.4g}). "
            "Use " + (", or ".join(hints) if hints else "a much smaller epsilon1")
        )
    return alpha1, alpha1 - shift


def dpcp_quantile(scores, alpha: float, epsilon1: float, epsilon2: float, delta: float, bins=1000,
                  rng: RandomLike = None, *, n: int | None = None, variant: str = "tight",
                  sampler: str = "numpy") -> float:
    """Private in-sample threshold of DPCP: the private quantile at level :math:`\\alpha_1` (chapter 6).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Scores in [0, 1] of the model trained on the *same* n points with
        :math:`(\\varepsilon_1, \\delta)`.
    alpha, delta : float
        Target miscoverage and the trainer's :math:`\\delta`.
    epsilon1, epsilon2 : float
        Budgets of the trainer (enters :math:`\\alpha_1`) and of this release.
    bins : int or array-like, default=1000
        Edges of Algorithm 1 (:func:`dpcp_tutorial.quantile_edges`).
    rng : None, int or numpy.random.Generator, default=None
        The mechanism's randomness; ``None`` for a real release (:term:`Seed`).
    n : int, default=None
        Public record count for :math:`\\alpha_0` and the feasibility check; the
        scores are subsampled or padded with 1 to exactly ``n``
        (:func:`dpcp_tutorial.private_quantile`), which keeps the coverage proof
        at every data size. With ``n=None`` the number of scores is used and is
        **public** (the infeasibility error and its message depend on it). For
        an add/remove guarantee with a private size pass a public ``n`` (e.g. a
        planned size): the data's own size is then never used.
    variant : {"tight", "original"}, default="tight"
        The private quantile (:func:`dpcp_tutorial.private_quantile`).
    sampler : {"numpy", "opendp"}, default="numpy"
        The private quantile's sampler (:func:`dpcp_tutorial.private_quantile`):
        ``"opendp"`` draws with OpenDP's exact report-noisy-max on integer
        utilities (level rounded down to the grid :math:`A/2^{32}`: the same
        privacy and coverage guarantees) and needs ``rng=None``.

    Returns
    -------
    float
        :math:`\\hat q`, an edge; 1 (the top edge) means the whole space.

    Examples
    --------
    >>> scores = np.random.default_rng(0).uniform(size=5000)
    >>> dpcp_quantile(scores, 0.1, 0.3, 0.7, 1e-6, rng=1)
    0.929
    """
    check_sampler(sampler, rng)                   # a seed with sampler="opendp" is refused before any work
    if n is None:                                 # the number of scores is public
        scores = check_scores_or_histogram(scores)    # an array, or a merged histogram (chapter 14)
    # with a public n the scores are checked and brought to that size (none at all included) by private_quantile
    alpha1, _ = dpcp_levels(scores.size if n is None else n, alpha, epsilon1, epsilon2, delta, bins, variant)
    return private_quantile(scores, alpha1, epsilon2, bins=bins, rng=rng, n=n, variant=variant, sampler=sampler)


def _check_share(training_share):
    if training_share is None:
        return None
    return check_scalar(training_share, "training_share", low=0.0, high=1.0,
                        hint="it is the fraction of the total epsilon given to the trainer (e.g. 0.3); the rest pays "
                             "for the private quantile. Pass None to keep the trainer's own budget")


def _check_regression_data(X, y, owner) -> tuple[np.ndarray, np.ndarray]:
    X = check_features(X, owner, reset=True)
    y = check_1d(y, "y")
    check_same_length(("X", X), ("y", y))
    return X, y


def _test_features(X, X_test):
    """``X`` and ``X_test`` checked as one schema (a DataFrame's columns matched by name) before any fit."""
    schema = types.SimpleNamespace()
    X = check_features(X, schema, reset=True, owner_name="the training data")
    return X, check_features(X_test, schema, reset=False, name="X_test", owner_name="the training data")


def _score_functions(score: str):
    score_fn, set_fn = classification_score_functions(score)
    return (lambda proba, y: np.clip(score_fn(proba, y), 0.0, 1.0)), set_fn


def _encode(model, y) -> np.ndarray:
    """Labels as indices into ``model.classes_`` (the column order of ``predict_proba``); -1 outside them.

    A label outside the model's classes is given the index -1, i.e. the worst
    score 1 (:func:`~dpcp_tutorial._split_core.private_classification_scores`);
    it is never quoted.
    """
    y = check_label_array(y)
    return label_index(y, np.asarray(model.classes_))


class _DPCPBase(BaseEstimator):
    """Shared fit: train on all data with epsilon1 = share * epsilon, release the private quantile with the rest."""

    def _features(self, X):
        """``X`` as the trainer receives it, matched to the fitted schema (a DataFrame's columns by name)."""
        self._check_fitted()
        return check_features(X, self, reset=False)

    def _fit(self, X, y, trainer_params=None, train=None):
        """Train on the rows ``train`` (all rows when None) and release the quantile of every row's score."""
        check_coverage_alpha(self.alpha, self.allow_low_coverage)
        epsilon = check_epsilon(self.epsilon)
        share = _check_share(self.training_share)
        delta = check_delta(self.delta)
        edges = quantile_edges(self.bins)
        check_quantile_variant(self.variant)
        sampler, _ = check_sampler(self.sampler, self.rng)     # "opendp" needs rng=None
        rng = check_random_state(self.rng)
        n = len(X) if self.n is None else public_size(self.n)
        check_dp_trainer(self.trainer)
        params = dict(trainer_params or {})
        own = self.trainer.get_params(deep=False)
        if share is not None:
            if "epsilon" not in own:
                raise TypeError(
                    f"{type(self.trainer).__name__} has no `epsilon` parameter, so training_share cannot set its "
                    "budget. Pass training_share=None to use the budget it reports in privacy_ after fitting (it "
                    "must report one), or use a trainer with an epsilon parameter (e.g. DPRidgeRegression)")
            epsilon1 = share * epsilon
            params["epsilon"] = epsilon1
            if "delta" in own:
                params["delta"] = delta
            # feasibility depends only on public inputs (n public or declared so) and is checked before training
            self.alpha1_, self.alpha0_ = self._levels(n, epsilon, epsilon1, delta)
        if train is None:
            self.estimator_ = _fit_trainer(self.trainer, X, y, rng, params)
        else:        # a per-record rule (e.g. the label is in the public set) decides who trains the model
            rows = np.flatnonzero(train)
            self.estimator_ = _fit_trainer(self.trainer, X.iloc[rows] if is_frame(X) else X[rows], y[rows], rng,
                                           params)
        epsilon1, delta1 = _reported_privacy(self.estimator_)
        if share is None:          # the trainer's own budget (public settings), checked after fitting
            if not epsilon1 < epsilon:
                raise ValueError(f"the trainer reports epsilon={epsilon1:.6g}, which leaves nothing of the total "
                                 f"epsilon={epsilon:.6g} for the private quantile; raise epsilon or lower the "
                                 "trainer's budget")
            if delta1 > delta:
                raise ValueError(f"the trainer reports delta={delta1:.3g} above the total delta={delta:.3g}")
            self.alpha1_, self.alpha0_ = self._levels(n, epsilon, epsilon1, delta1)
        epsilon2 = epsilon - epsilon1
        scores = self._scores(self.estimator_, X, y)
        self.qhat_ = self._release_quantile(scores, epsilon2, rng, sampler, n)
        self.epsilon1_, self.epsilon2_ = epsilon1, epsilon2
        self.n_ = n       # the public n (with n=None the row count, then declared public)
        self.privacy_ = self._account(n, epsilon, share, epsilon2, edges.size)
        self.warn_trivial()
        return self

    def _release_quantile(self, scores, epsilon2, rng, sampler, n):
        return private_quantile(scores, self.alpha1_, epsilon2, bins=self.bins,
                                rng=None if sampler == "opendp" else rng, n=None if self.n is None else n,
                                variant=self.variant, sampler=sampler)

    def warn_trivial(self):
        warn_trivial(self.qhat_, self._trivial_message)

    def _levels(self, n: int, epsilon: float, epsilon1: float, delta: float):
        """:func:`dpcp_levels` of the split, with an infeasible split refused under the estimator's ``epsilon``."""
        try:
            return dpcp_levels(n, self.alpha, epsilon1, epsilon - epsilon1, delta, self.bins, self.variant)
        except ValueError as error:
            split = "training_share=None" if self.training_share is None else f"training_share={self.training_share:g}"
            advice = str(error).replace("a larger epsilon2, a smaller epsilon1 or", "a larger epsilon (or another "
                                        "training_share) or").replace("epsilon2 above", "(1 - training_share) * "
                                                                      "epsilon above")
            raise ValueError(f"epsilon={epsilon:g} with {split} (epsilon1 = {epsilon1:.4g} for the trainer, "
                             f"epsilon2 = {epsilon - epsilon1:.4g} for the quantile): {advice}") from None

    def _account(self, n, epsilon, share, epsilon2, n_edges):
        trainer = trainer_account(self.estimator_)
        beta, bins, variant = self.alpha1_, self.bins, self.variant
        replace = (private_quantile_privacy_loss(beta, n, epsilon2, bins, variant), 0.0)
        notes = []
        if self.n is not None:
            add_remove = (private_quantile_privacy_loss(beta, n, epsilon2, bins, variant, relation="add/remove"),
                          0.0)
            size = f"n = {n} (the scores are subsampled or padded to exactly n; the level alpha0 is computed from it)"
        else:
            size = f"n = {n}: the number of rows (n=None, declared public)"
            try:
                if n < 2:
                    raise ValueError
                add_remove = (max(private_quantile_privacy_loss(beta, k, epsilon2, bins, variant,
                                                                relation="add/remove", public_n=False)
                                  for k in (n - 1, n)), 0.0)
                notes.append("n=None: add/remove is the bound for a level alpha0 recomputed from each neighbour's "
                             "own size; pass a public n= for the fixed-level bound")
            except ValueError:
                add_remove = None
                notes.append("add/remove: not covered: with n=None the level is recomputed from the data's size and "
                             "a neighbour with one record fewer is infeasible (it would raise); pass a public n=")
        budget = (f"training_share {share:g}: epsilon1 = {self.epsilon1_:.4g} set on a clone of the trainer"
                  if share is not None else f"training_share=None: the trainer's own epsilon1 = {self.epsilon1_:.4g}")
        parts = [Spend(f"model training ({budget})", trainer.add_remove, trainer.replace_one),
                 Spend(f"private quantile at level alpha1 ({variant}, M = {n_edges}, epsilon2 = {epsilon2:.4g})",
                       add_remove, replace)]
        primary = "add/remove" if add_remove is not None else "replace-one"
        public = [size, f"total epsilon = {epsilon:g}", *self._public(), *(f"trainer: {p}" for p in trainer.public)]
        notes += [f"trainer: {note}" for note in trainer.notes]
        return make_account(parts, relation=primary, public=public, chapter="chapter 6", notes=notes)

    def _check_fitted(self):
        check_is_fitted(self, "qhat_")


_DPCP_PARAMS = """
    alpha : float, default=0.1
        Target miscoverage; must exceed ``delta``.
    epsilon : float, default=1.0
        Total budget :math:`\\varepsilon = \\varepsilon_1 + \\varepsilon_2` of everything
        :meth:`fit` computes from the data (the rule for ``epsilon``:
        :mod:`dpcp_tutorial.accounting`).
    training_share : float or None, default=0.3
        Fraction of ``epsilon`` given to the trainer, in (0, 1):
        :math:`\\varepsilon_1 = \\text{training\\_share}\\cdot\\varepsilon` is set as the
        ``epsilon`` parameter of a clone of ``trainer`` (shown in ``privacy_``),
        :math:`\\varepsilon_2 = \\varepsilon - \\varepsilon_1` goes to the private
        quantile. No fixed ratio is right (chapter 6); 0.3 (default) keeps the
        level shift :math:`e^{-\\varepsilon_1}` mild. ``None``: the trainer keeps
        its own settings (e.g. a DP-SGD noise multiplier) and must report its
        budget in ``privacy_`` after fitting (checked from public settings
        only); :math:`\\varepsilon_1` is read from it.
    delta : float, default=1e-6
        :math:`\\delta` of the trainer; keep it far below :math:`1/n`.
    bins : int or array-like, default=1000
        Edges of the private quantile (1000 equal bins: a package choice).
    n : int, default=None
        Public record count for :math:`\\alpha_0` and the feasibility check.
        Given, the in-sample scores are subsampled (a uniform ``n``-subset) or
        padded with the worst score 1 to exactly ``n`` before the private
        quantile, so the coverage proof holds at every data size (chapter 6).
        ``None`` (default): the number of rows of ``X`` is used and is
        **public** -- the infeasibility error of :meth:`fit` (and its message,
        which names the smallest feasible ``n``) depends on it, and the
        add/remove account is the bound for a level recomputed from each
        neighbour's size. For an add/remove guarantee with a private size, pass
        a public ``n`` (a planned or published size): then the data's own size
        is never used, and a data set and its neighbour are refused or released
        alike. :meth:`fit` raises ``ValueError``/``TypeError`` only from public
        inputs: infeasible levels (``n`` public, see above), bad parameters, an
        invalid trainer, ``X``/``y`` of the wrong type or shape, or outside the
        data domain, with the same message for every such data set: non-finite
        values, or no row at all (the trainer fits on the data; the
        add/remove guarantee is between data sets of at least one row, so a
        one-row data set and its empty neighbour are outside it).
    variant : {"tight", "original"}, default="tight"
        The private quantile: ``"tight"`` (exactly :math:`\\varepsilon_2`-DP
        under replace-one, proven finite-sample level) or ``"original"`` (the
        DPCP write-up's Algorithm 1, for reproduction); see
        :func:`dpcp_tutorial.private_quantile`.
    allow_low_coverage : bool, default=False
        ``alpha`` is the miscoverage, ``1 - confidence_level``; an ``alpha``
        above 1/2 is refused unless this is ``True``.
    rng : None, int or numpy.random.Generator, default=None
        Seeds the trainer's clone and draws the quantile; ``None`` for a real
        release (:term:`Seed`).
    sampler : {"numpy", "opendp"}, default="numpy"
        The private quantile's sampler (:func:`dpcp_tutorial.private_quantile`):
        ``"numpy"`` or OpenDP's exact report-noisy-max
        (``"opendp"``: level rounded down to the grid :math:`A/2^{32}`, the same
        privacy and coverage guarantees; needs ``rng=None``). The trainer keeps
        its own sampler (e.g. NumPy's Gaussian noise, see its docstring).
"""

_DPCP_PRIVACY = """
    Privacy of the release :math:`(\\mu_n, \\hat q)` (sequential composition on
    the same records, chapter 6), with :math:`n` public: under add/remove (the
    trainer's relation, primary) :math:`(\\varepsilon_1 + \\varepsilon_2, \\delta) =
    (\\varepsilon, \\delta)`, because subsampling or padding to exactly ``n`` turns
    adding or removing a record into a replacement at size ``n`` (with
    ``variant="original"`` :math:`(\\varepsilon_1 + \\varepsilon_2/(2\\max(\\alpha_0,
    1-\\alpha_0)), \\delta)`); under replace-one the
    trainer's group-privacy bound :math:`(2\\varepsilon_1, (1+e^{\\varepsilon_1})\\delta)` plus
    the quantile's exact :math:`\\varepsilon_2`. Both are in ``privacy_``. The
    :class:`~dpcp_tutorial.ReleaseWarning` on :math:`\\hat q = 1` depends on the
    release only (post-processing, no privacy cost).
"""


class DPCPRegressor(RegressorMixin, _DPCPBase):
    __doc__ = """DPCP intervals without a data split (Algorithm 2 of the DPCP write-up; chapter 6).

    ``fit(X, y)``:

    1. :math:`\\varepsilon_1 = \\text{training\\_share}\\cdot\\varepsilon`, the levels
       :math:`\\alpha_1 = e^{-\\varepsilon_1}(\\alpha-\\delta)` and :math:`\\alpha_0`
       (:func:`dpcp_levels`, which raises when DPCP is infeasible: public inputs only);
    2. train a clone of ``trainer`` on **all** :math:`n` points with
       :math:`(\\varepsilon_1, \\delta)`;
    3. scores :math:`R_i = \\min(|y_i - \\mu_n(x_i)|/B, 1)` on the same points;
    4. :math:`\\hat q` = the tight private quantile at level :math:`\\alpha_1` with
       budget :math:`\\varepsilon_2 = \\varepsilon - \\varepsilon_1`.

    ``predict_interval(X)`` returns :math:`\\mu_n(x) \\pm B\\hat q`, or the whole line
    when :math:`\\hat q = 1`.

    Parameters
    ----------
    trainer : scikit-learn regressor
        DP under add/remove (see :func:`check_dp_trainer`); cloned, its
        ``epsilon``/``delta`` set from ``training_share`` and its ``rng`` (if
        any) seeded from ``rng``.""" + _DPCP_PARAMS + """    bound : float or "unbounded"
        **Required** public bound :math:`B` on the absolute residuals, in the
        response's units, from domain knowledge (never the data's maximum).
        ``"unbounded"`` (an explicit choice, chapter 18): no bound is assumed;
        the threshold is :func:`~dpcp_tutorial.unbounded_private_quantile` of the
        raw residuals (non-finite model outputs count as :math:`+\\infty`) at
        level :math:`\\alpha_1`, whose proven miscoverage bound :math:`\\alpha_1`
        takes the place of the tight quantile's in chapter 6's coverage
        theorem; ``qhat_`` is then in the response's units, the intervals are
        :math:`\\mu_n(x) \\pm \\hat q`, ``bins`` and ``variant`` play no role, and
        ``privacy_`` says that no bound was assumed.

    Attributes
    ----------
    estimator_ : fitted trainer
    qhat_ : float
        Released threshold on the normalised scale (in the response's units
        with ``bound="unbounded"``).
    alpha1_, alpha0_ : float
        :math:`\\alpha_1` and the private quantile's level :math:`\\alpha_0` (:func:`dpcp_levels`;
        :math:`\\alpha_1 - 2/(n\\varepsilon_2)` for ``variant="original"``; the target count
        :math:`m` of :func:`~dpcp_tutorial.unbounded_quantile_target` with ``bound="unbounded"``).
    epsilon1_, epsilon2_ : float
        The split actually used.
    n_ : int
        The public ``n`` the quantile ran on (with ``n=None`` the number of
        rows, then declared public); the data's own size is not stored.
    privacy_ : PrivacyAccount
        The two spends (training, private quantile) on the same records and
        their sequential composition under both relations.

    Notes
    -----""" + _DPCP_PRIVACY + """
    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import DPCPRegressor, DPRidgeRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(4000, 1)); y = X[:, 0] + 0.3 * rng.standard_normal(4000)
    >>> trainer = DPRidgeRegression(l2=10.0, x_bound=1.0, y_bound=2.0)
    >>> model = DPCPRegressor(trainer, epsilon=0.2, bound=2.0, n=4000, rng=1).fit(X, y)
    >>> round(model.epsilon1_, 3), model.privacy_.relation
    (0.06, 'add/remove')
    """

    _trivial_message = "every interval is (-inf, inf)"

    def __init__(self, trainer, alpha: float = 0.1, epsilon: float = 1.0, *, training_share: float | None = 0.3,
                 delta: float = 1e-6, bound=REQUIRED, bins=1000, n: int | None = None, variant: str = "tight",
                 rng: RandomLike = None, sampler: str = "numpy", allow_low_coverage: bool = False):
        require(bound, "bound", type(self).__name__, BOUND_ADVICE)
        self.allow_low_coverage = allow_low_coverage
        self.trainer = trainer
        self.alpha = alpha
        self.epsilon = epsilon
        self.training_share = training_share
        self.delta = delta
        self.bound = bound
        self.bins = bins
        self.n = n
        self.variant = variant
        self.rng = rng
        self.sampler = sampler

    def _scores(self, model, X, y):
        with silenced_model():       # the trained model on the private records: none of its warnings escapes
            pred = model_outputs(model.predict, X)
        if is_unbounded(self.bound):
            return residual_scores(y, pred)
        return normalized_residual_score(y, pred, self.bound)

    def _public(self):
        if is_unbounded(self.bound):
            return ("no bound on the residuals was assumed (bound='unbounded'; only the lower end 0 of "
                    "|y - prediction| is public)",)
        return (f"bound B = {float(self.bound):g}",)

    # bound="unbounded" (chapter 18): the unbounded private quantile of the raw residuals at level alpha1; the
    # coverage proof of chapter 6 needs only its miscoverage bound alpha1 for exchangeable scores
    def _levels(self, n: int, epsilon: float, epsilon1: float, delta: float):
        if not is_unbounded(self.bound):
            return super()._levels(n, epsilon, epsilon1, delta)
        from .unbounded import unbounded_quantile_target

        try:
            alpha1 = _shifted_level(self.alpha, epsilon1, delta, "epsilon1")
            return alpha1, unbounded_quantile_target(alpha1, n, epsilon - epsilon1)
        except ValueError as error:
            raise ValueError(f"epsilon={epsilon:g} with training_share={self.training_share} (epsilon1 = "
                             f"{epsilon1:.4g} for the trainer): {error}") from None

    def _release_quantile(self, scores, epsilon2, rng, sampler, n):
        if not is_unbounded(self.bound):
            return super()._release_quantile(scores, epsilon2, rng, sampler, n)
        from .unbounded import unbounded_private_quantile

        return unbounded_private_quantile(scores, self.alpha1_, epsilon2, n=None if self.n is None else n,
                                          rng=None if sampler == "opendp" else rng, sampler=sampler)

    def warn_trivial(self):
        if not is_unbounded(self.bound):
            return super().warn_trivial()
        if not math.isfinite(self.qhat_):
            warn_trivial(1.0, self._trivial_message)     # the release is +inf: the whole line

    def _account(self, n, epsilon, share, epsilon2, n_edges):
        if not is_unbounded(self.bound):
            return super()._account(n, epsilon, share, epsilon2, n_edges)
        from .unbounded import unbounded_quantile_privacy_loss

        trainer = trainer_account(self.estimator_)
        notes = []
        if self.n is not None:
            add_remove = (epsilon2, 0.0)
            size = f"n = {n} (the residuals are subsampled or padded with +inf to exactly n; the target uses it)"
        else:
            size = f"n = {n}: the number of rows (n=None, declared public)"
            try:
                add_remove = (max(unbounded_quantile_privacy_loss(self.alpha1_, k, epsilon2, relation="add/remove",
                                                                  public_n=False) for k in (n - 1, n)), 0.0)
                notes.append("n=None: add/remove is the bound for a target recomputed from each neighbour's own "
                             "size; pass a public n= for epsilon2")
            except ValueError:
                add_remove = None
                notes.append("add/remove: not covered: with n=None the target is recomputed from the data's size "
                             "and a neighbour with one record fewer is infeasible; pass a public n=")
        budget = (f"training_share {share:g}: epsilon1 = {self.epsilon1_:.4g} set on a clone of the trainer"
                  if share is not None else f"training_share=None: the trainer's own epsilon1 = {self.epsilon1_:.4g}")
        parts = [Spend(f"model training ({budget})", trainer.add_remove, trainer.replace_one),
                 Spend(f"unbounded private quantile at level alpha1 (AboveThreshold, epsilon2 = {epsilon2:.4g})",
                       add_remove, (epsilon2, 0.0))]
        primary = "add/remove" if add_remove is not None else "replace-one"
        public = [size, f"total epsilon = {epsilon:g}", *self._public(), *(f"trainer: {p}" for p in trainer.public)]
        notes += [f"trainer: {note}" for note in trainer.notes]
        return make_account(parts, relation=primary, public=public, chapter="chapter 18", notes=notes)

    def fit(self, X, y):
        """Train on all the data and release the private threshold (and ``privacy_``)."""
        if not is_unbounded(self.bound):
            check_bound(self.bound)
        X, y = _check_regression_data(X, y, self)
        return self._fit(X, y)

    def predict(self, X) -> np.ndarray:
        """Point predictions :math:`\\mu_n(x)`."""
        X = self._features(X)
        return self.estimator_.predict(X)

    def predict_interval(self, X) -> np.ndarray:
        """Intervals of shape (n, 2); rows are ``(-inf, inf)`` when ``qhat_ == 1``."""
        if is_unbounded(self.bound):
            return unbounded_interval(self.predict(X), self.qhat_)
        return bounded_interval(self.predict(X), self.qhat_, self.bound)


class DPCPClassifier(_DPCPBase):
    __doc__ = """DPCP prediction sets for classification (Algorithm 2 of the DPCP write-up; chapter 6).

    As :class:`DPCPRegressor` with the LAC score :math:`1 - \\hat p_y(x)` (already
    in [0, 1], no bound needed) or the APS score; the set is
    :math:`\\{y : s(x, y) \\le \\hat q\\}` with the same score (DPCP write-up error D11), all
    classes when :math:`\\hat q = 1`.

    Parameters
    ----------
    trainer : scikit-learn classifier with ``predict_proba``
        DP under add/remove with a ``classes`` parameter (the public label set
        is passed to it); see :func:`check_dp_trainer`.""" + _DPCP_PARAMS + """    score : {"lac", "aps"}, default="lac"
        The classification score.
    classes : array-like, default=None
        The public label set, **required** by :meth:`fit` (e.g. ``[0, 1]``),
        here or as the trainer's ``classes``. It is handed to the trainer;
        reading it from ``y`` would make the release depend on which classes
        occur in the data. A record whose label is outside it does not train
        the model (a per-record rule) and has the worst score 1 in the private
        quantile; it is never refused or quoted.

    Attributes
    ----------
    classes_ : ndarray
        Column order of :meth:`predict_set` and :meth:`predict_proba`: the
        public label set in the order given as ``classes`` (the trainer's
        order when it is given to the trainer only).
    estimator_, qhat_, alpha1_, alpha0_, epsilon1_, epsilon2_, privacy_
        As in :class:`DPCPRegressor`.

    Notes
    -----""" + _DPCP_PRIVACY + """
    Examples
    --------
    >>> import numpy as np
    >>> from dpcp_tutorial import DPCPClassifier, DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10000, 1)); y = np.where(X[:, 0] > 0, "b", "a")
    >>> trainer = DPLogisticRegression(x_bound=1.0)
    >>> model = DPCPClassifier(trainer, epsilon=2.0, classes=["a", "b"], n=10000, rng=1)
    >>> model.fit(X, y).predict_set([[-0.9], [0.0], [0.9]])
    array([[ True, False],
           [ True, False],
           [False,  True]])
    """

    _trivial_message = "every prediction set holds every label"

    def __init__(self, trainer, alpha: float = 0.1, epsilon: float = 1.0, *, training_share: float | None = 0.3,
                 delta: float = 1e-6, score: str = "lac", bins=1000, classes=None, n: int | None = None,
                 variant: str = "tight", rng: RandomLike = None, sampler: str = "numpy",
                 allow_low_coverage: bool = False):
        self.allow_low_coverage = allow_low_coverage
        self.trainer = trainer
        self.alpha = alpha
        self.epsilon = epsilon
        self.training_share = training_share
        self.delta = delta
        self.score = score
        self.bins = bins
        self.classes = classes
        self.n = n
        self.variant = variant
        self.rng = rng
        self.sampler = sampler

    def _scores(self, model, X, y):
        with silenced_model():       # the trained model on the private records: none of its warnings escapes
            proba = model_outputs(model.predict_proba, X, len(model.classes_))
        # a NaN or non-probability row of the model's output gives that record the worst score (never an error)
        return private_classification_scores(self.score, proba, _encode(model, y))

    def _public(self):
        return (f"score = {self.score!r}", f"classes = {np.asarray(self.classes_).tolist()}")

    def fit(self, X, y):
        """Train on all the data and release the private threshold (and ``privacy_``)."""
        _score_functions(self.score)
        check_dp_trainer(self.trainer)
        trainer_params = self.trainer.get_params(deep=False)
        if "classes" not in trainer_params:
            raise TypeError(f"{type(self.trainer).__name__} has no `classes` parameter; DPCPClassifier needs a "
                            "trainer that takes the public label set (e.g. DPLogisticRegression)")
        own, given = self.classes, trainer_params["classes"]
        classes = check_classes(own if own is not None else given, "DPCPClassifier")
        if own is not None and given is not None and not np.array_equal(check_classes(given, "the trainer"),
                                                                         classes):
            raise ValueError("DPCPClassifier(classes=...) and the trainer's classes differ; give the label set once")
        X = check_features(X, self, reset=True)
        y = check_label_array(y)
        check_same_length(("X", X), ("y", y))
        self.classes_ = classes
        # a record whose label is outside the public set does not train the model and has the worst score 1
        self._fit(X, y, {"classes": list(classes)}, train=label_index(y, classes) >= 0)
        # the caller's order of the public label set is the column order (the trainer's is sorted)
        self.classes_ = np.asarray(own) if own is not None else np.asarray(self.estimator_.classes_)
        self._columns = model_columns(self.estimator_, self.classes_)
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the private model, columns in the order of ``classes_``."""
        X = self._features(X)
        return np.asarray(self.estimator_.predict_proba(X))[:, self._columns]

    def predict(self, X) -> np.ndarray:
        """Most probable class (point prediction)."""
        proba = self.predict_proba(X)          # raises NotFittedError before fit
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_set(self, X) -> np.ndarray:
        """Boolean matrix of shape (n, K); every class is included when ``qhat_ == 1``."""
        proba = self.predict_proba(X)
        if self.qhat_ >= 1.0:
            return np.ones(proba.shape, dtype=bool)
        return sets_or_all(_score_functions(self.score)[1], proba, self.qhat_)


def dpcp_interval(trainer, X, y, X_test, alpha: float = 0.1, epsilon: float = 1.0, *,
                  training_share: float | None = 0.3, delta: float = 1e-6, bound=REQUIRED, bins=1000,
                  n: int | None = None, variant: str = "tight", rng: RandomLike = None,
                  sampler: str = "numpy") -> np.ndarray:
    """DPCP intervals for ``X_test`` in one call (chapter 6); see :class:`DPCPRegressor` (``bound`` is required).

    Parameters
    ----------
    trainer : scikit-learn regressor
        As in :class:`DPCPRegressor`.
    X, y : array-like of shape (n, p) and (n,)
        The private data (training and calibration at once).
    X_test : array-like of shape (n_test, p)
        Test features.
    alpha : float, default=0.1
    epsilon : float, default=1.0
    training_share : float or None, default=0.3
    delta : float, default=1e-6
    bound : float or "unbounded"
    bins : int or array-like, default=1000
    n : int, default=None
    variant : {"tight", "original"}, default="tight"
    rng : None, int or numpy.random.Generator, default=None
    sampler : {"numpy", "opendp"}, default="numpy"
        As in :class:`DPCPRegressor` (``rng=None`` for a real release, :term:`Seed`).

    Returns
    -------
    ndarray of shape (n_test, 2)

    Examples
    --------
    >>> from dpcp_tutorial import DPRidgeRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(4000, 1)); y = X[:, 0] + 0.3 * rng.normal(size=4000)
    >>> trainer = DPRidgeRegression(x_bound=1.0, y_bound=2.0)
    >>> dpcp_interval(trainer, X, y, [[0.0], [0.5]], bound=2.0, n=4000, rng=1).round(2)
    array([[-0.53,  0.58],
           [-0.05,  1.06]])
    """
    _test_features(X, X_test)
    model = DPCPRegressor(trainer, alpha=alpha, epsilon=epsilon, training_share=training_share, delta=delta,
                          bound=bound, bins=bins, n=n, variant=variant, rng=rng, sampler=sampler)
    return model.fit(X, y).predict_interval(X_test)


def dpcp_set(trainer, X, y, X_test, alpha: float = 0.1, epsilon: float = 1.0, *,
             training_share: float | None = 0.3, delta: float = 1e-6, score: str = "lac", bins=1000, classes=None,
             n: int | None = None, variant: str = "tight", rng: RandomLike = None,
             sampler: str = "numpy") -> np.ndarray:
    """DPCP prediction sets for ``X_test`` in one call (chapter 6); see :class:`DPCPClassifier` (``classes`` is required).

    Parameters
    ----------
    trainer : scikit-learn classifier
        As in :class:`DPCPClassifier`.
    X, y : array-like of shape (n, p) and (n,)
        The private data (training and calibration at once).
    X_test : array-like of shape (n_test, p)
        Test features.
    alpha : float, default=0.1
    epsilon : float, default=1.0
    training_share : float or None, default=0.3
    delta : float, default=1e-6
    score : {"lac", "aps"}, default="lac"
    classes : array-like, default=None
    bins : int or array-like, default=1000
    n : int, default=None
    variant : {"tight", "original"}, default="tight"
    rng : None, int or numpy.random.Generator, default=None
    sampler : {"numpy", "opendp"}, default="numpy"
        As in :class:`DPCPClassifier` (``rng=None`` for a real release, :term:`Seed`).

    Returns
    -------
    ndarray of bool, shape (n_test, K)

    Examples
    --------
    >>> from dpcp_tutorial import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10000, 1)); y = (X[:, 0] > 0).astype(int)
    >>> trainer = DPLogisticRegression(x_bound=1.0)
    >>> dpcp_set(trainer, X, y, [[-0.9], [0.9]], epsilon=2.0, classes=[0, 1], n=10000, rng=1)
    array([[ True, False],
           [False,  True]])
    """
    _test_features(X, X_test)
    model = DPCPClassifier(trainer, alpha=alpha, epsilon=epsilon, training_share=training_share, delta=delta,
                           score=score, bins=bins, classes=classes, n=n, variant=variant, rng=rng, sampler=sampler)
    return model.fit(X, y).predict_set(X_test)
