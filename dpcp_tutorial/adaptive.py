"""Adaptive private regression intervals: normalised scores with a DP scale model (chapter 17).

A constant-width interval :math:`\\hat\\mu(x) \\pm t` is too wide where the noise
is small and too narrow where it is large (chapter 1). The normalised score

.. math:: s(x, y) = \\min\\Big(\\frac{|y - \\hat\\mu(x)|}{B\\,\\hat\\sigma(x)},\\ 1\\Big),
          \\qquad \\hat\\sigma(x) = \\max\\big(\\sigma_{\\min},\\ g(x)\\big),

gives intervals :math:`\\hat\\mu(x) \\pm B\\hat\\sigma(x)\\hat q` whose width follows a
*scale model* :math:`g` of the absolute residuals. Everything that makes it
private and bounded is public:

* :math:`\\sigma_{\\min} > 0` (``sigma_min``), a floor on the scale, so that the
  ratio is finite;
* :math:`B > 0` (``score_bound``), a public bound on the normalised residual.
  Dividing by :math:`B` and clipping at 1 puts every score in :math:`[0, 1]`, the
  domain of the private quantile, whatever the data. Any public :math:`B` keeps
  the guarantees; :math:`B = 2y_{\\max}/\\sigma_{\\min}` (the default, with :math:`y_{\\max}` the
  public bound ``y_bound`` on :math:`|y|` and on the clipped predictions) never
  clips a response inside :math:`[-y_{\\max}, y_{\\max}]`, a smaller :math:`B` resolves the
  typical scores with fewer bins and only costs width when the released
  threshold reaches 1 (then the interval is the whole line);
* the grid of the private quantile (``bins``) and the calibration size
  :math:`n` (public).

The pipeline uses three **disjoint** parts of the data: the mean model
:math:`\\hat\\mu` is trained on part 1, the scale model :math:`g` on part 2 with
targets :math:`|y - \\hat\\mu(x)|` (``scale_target="abs"``) or
:math:`\\log(|y - \\hat\\mu(x)| + \\sigma_{\\min})` (``"log"``; then
:math:`\\hat\\sigma = \\max(\\sigma_{\\min}, e^{g(x)})`), and the threshold
:math:`\\hat q` is released from the scores of part 3 by the tight private
quantile (:func:`~dpcp_tutorial.private_quantile`, chapter 3). With
``scale_estimator=None`` the scale is the constant 1: the constant-width
private interval with the same calibrator, for comparison.

Privacy (:func:`adaptive_privacy_account`): each part is read by one
mechanism only, the later mechanisms use the earlier releases as public
inputs, and the split is decided independently of the data values (e.g. each
record's part drawn from a public random key). Under add/remove a record lies
in one part, so the pipeline is :math:`(\\max_j\\varepsilon_j, \\max_j\\delta_j)`-DP
(parallel composition); under replace-one, with the record staying in its
part, the same holds with each component's replace-one guarantee. Coverage:
given parts 1 and 2, the calibration scores and the test score are
exchangeable, so :math:`P(Y \\in C(X)) \\ge 1-\\alpha` by the private quantile's
finite-sample guarantee.

Conformalised quantile regression (:class:`PrivateConformalizedQuantileRegressor`)
is the alternative for residuals whose shape, not only their scale, changes
with :math:`x`: two quantile models (e.g. :class:`DPSGDQuantileRegressor`, DP-SGD
on the pinball loss) and the bounded score :func:`cqr_score`, with the same
account.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    MAX_MAGNITUDE,
    private_responses,
    REQUIRED,
    RandomLike,
    check_1d,
    check_alpha,
    check_coverage_alpha,
    check_bool,
    check_delta,
    check_choice,
    check_epsilon,
    check_estimator,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
    check_features,
    model_outputs,
    require,
    silenced_model,
)
from .accounting import (PrivacyAccount, Spend, check_model_privacy, covered, group_privacy, make_account,
                         public_step_notes, trainer_account)
from ._split_core import (check_release_sampler, public_size, quantile_losses, release_threshold, schema_features,
                          warn_trivial)
from .training import Y_BOUND_ADVICE
from .training import DPSGDQuantileRegressor  # noqa: F401  (its home is training.dpsgd; importable here too)

__all__ = [
    "normalized_score",
    "normalized_interval",
    "adaptive_privacy_account",
    "PrivateNormalizedConformalRegressor",
    "cqr_score",
    "cqr_interval",
    "PrivateConformalizedQuantileRegressor",
]

_SCALE_TARGETS = ("abs", "log")


def _check_positive(value, name: str, hint: str) -> float:
    return check_scalar(value, name, low=0.0, hint=hint)


def normalized_score(y_true, y_pred, scale, score_bound: float) -> np.ndarray:
    """Bounded normalised residual score (chapter 17).

    .. math:: s = \\min\\Big(\\frac{|y - \\hat\\mu(x)|}{B\\,\\hat\\sigma(x)},\\ 1\\Big) \\in [0, 1].

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Responses and mean predictions.
    scale : array-like of shape (n,)
        The scales :math:`\\hat\\sigma(x) > 0` (already floored at a public
        :math:`\\sigma_{\\min}`).
    score_bound : float
        The public bound :math:`B > 0`, chosen without looking at the data.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> normalized_score([1.0, 2.0, 9.0], [0.0, 0.0, 0.0], [1.0, 4.0, 1.0], score_bound=4.0)
    array([0.25 , 0.125, 1.   ])
    """
    score_bound = _check_positive(score_bound, "score_bound",
                                  "B is a public bound on the normalised residual, chosen before seeing the data")
    y_true = check_1d(y_true, "y_true")
    y_pred = check_1d(y_pred, "y_pred")
    scale = check_1d(scale, "scale")
    check_same_length(("y_true", y_true), ("y_pred", y_pred), ("scale", scale))
    if not scale.min() > 0.0:   # scales come from a public floor: a non-positive one is a programming error
        raise ValueError("scale must be positive; floor the scale model at a public sigma_min > 0")
    # divide twice rather than by the product B * scale, which underflows to 0 for tiny public bounds (0/0 = NaN
    # for a residual of 0); an overflow to inf is clipped to 1. Nothing here can fail on finite inputs.
    with np.errstate(over="ignore", under="ignore"):
        return np.minimum(np.abs(y_true - y_pred) / score_bound / scale, 1.0)


def normalized_interval(y_pred, scale, qhat: float, score_bound: float) -> np.ndarray:
    """Intervals :math:`\\hat\\mu(x) \\pm B\\hat\\sigma(x)\\hat q`, the line when :math:`\\hat q = 1` (chapter 17).

    :math:`\\{y : s(x, y) \\le \\hat q\\}` for the score of :func:`normalized_score`:
    for :math:`\\hat q < 1` this is :math:`|y - \\hat\\mu(x)| \\le B\\hat\\sigma(x)\\hat q`;
    the top edge :math:`\\hat q = 1` admits every clipped score, i.e. every
    :math:`y`.

    Parameters
    ----------
    y_pred : array-like of shape (n,)
        Mean predictions :math:`\\hat\\mu(x)`.
    scale : array-like of shape (n,)
        The scales :math:`\\hat\\sigma(x) > 0`.
    qhat : float
        The released threshold in :math:`[0, 1]`.
    score_bound : float
        The public bound :math:`B > 0` of :func:`normalized_score`.

    Returns
    -------
    ndarray of shape (n, 2)

    Examples
    --------
    >>> normalized_interval([0.0, 5.0], [1.0, 2.0], qhat=0.5, score_bound=4.0)
    array([[-2.,  2.],
           [ 1.,  9.]])
    """
    y_pred = check_1d(y_pred, "y_pred")
    scale = check_1d(scale, "scale")
    check_same_length(("y_pred", y_pred), ("scale", scale))
    if not scale.min() > 0.0:
        raise ValueError("scale must be positive; floor the scale model at a public sigma_min > 0")
    qhat = check_scalar(qhat, "qhat", low=0.0, high=1.0, low_inclusive=True, high_inclusive=True,
                        hint="qhat is a threshold on scores normalised to [0, 1]")
    score_bound = _check_positive(score_bound, "score_bound",
                                  "B is a public bound on the normalised residual, chosen before seeing the data")
    with np.errstate(over="ignore", under="ignore"):
        half = np.full(y_pred.size, math.inf) if qhat >= 1.0 else score_bound * qhat * scale
    return np.column_stack([y_pred - half, y_pred + half])


def _trainer_spend(privacy, label: str, part: str):
    """A :class:`~dpcp_tutorial.accounting.Spend` from a trainer's guarantee: a pair (add/remove) or an account."""
    if privacy is None:
        return None
    if isinstance(privacy, PrivacyAccount):
        return Spend(label, privacy.add_remove, privacy.replace_one, part=part)
    if isinstance(privacy, (str, bytes)) or not isinstance(privacy, (tuple, list)) or len(privacy) != 2:
        raise TypeError(f"{label} privacy must be None (a model trained on public data), a pair (epsilon, delta) "
                        "-- the trainer's add/remove guarantee -- or its privacy_ PrivacyAccount")
    pair = (check_epsilon(privacy[0], f"{label} epsilon"), check_delta(privacy[1], f"{label} delta"))
    return Spend(label, pair, covered(group_privacy(*pair)), part=part)


def _calibration_spend(epsilon: float, *, alpha, n, bins, public_n: bool, part: str):
    alpha = None if alpha is None else check_alpha(alpha)        # validated in both modes
    n = public_size(n)
    if public_n:
        ar, ro, notes = quantile_losses(None, None, epsilon, bins, True)
    else:
        if alpha is None or n is None:
            raise TypeError("public_n=False needs alpha and n (the calibration part's own size), so that the "
                            "add/remove bound for a recomputed level can be computed")
        ar, ro, notes = quantile_losses(alpha, n, epsilon, bins, False)
    return Spend("private quantile (tight)", ar, ro, part=part), notes


def _adaptive_account(trainers, calibration, notes=(), public=()):
    trainers = [sp for sp in trainers if sp is not None]
    if not trainers:        # no model reads private data: the calibration part is the whole private data set
        calibration = Spend(calibration.label, calibration.add_remove, calibration.replace_one, part="all")
    spends = trainers + [calibration]
    primary = "add/remove" if all(sp.add_remove is not None for sp in spends) else "replace-one"
    return make_account(spends, relation=primary, public=public, chapter="chapter 17", notes=notes)


def adaptive_privacy_account(mean_privacy, scale_privacy, calibration_epsilon: float, *, alpha=None, n=None,
                             bins=1000, public_n: bool = True, disjoint: bool = True) -> PrivacyAccount:
    """Privacy account of the adaptive private interval pipeline, under both neighbour relations (chapter 17).

    Components (each stated for its own part of the data):

    * the mean and the scale trainer: a pair :math:`(\\varepsilon_j, \\delta_j)`, the
      trainer's add/remove guarantee for every data size (replace-one then
      follows by group privacy, :math:`(2\\varepsilon_j, (1+e^{\\varepsilon_j})\\delta_j)`),
      or the trainer's ``privacy_`` account (both relations read from it);
      ``None`` for a model that reads no private data;
    * the calibration, the tight private quantile with budget
      :math:`\\varepsilon_c`. ``public_n=True``: the part is subsampled or padded to
      a public size (as the estimators do with ``n=``), so it is
      :math:`\\varepsilon_c`-DP under both relations at every part size.
      ``public_n=False`` (the estimators' ``n=None``): the level is recomputed
      from the part's own size ``n`` (then treated as public); replace-one is
      :math:`\\varepsilon_c`, and add/remove is the exact bound for a recomputed level
      between sizes :math:`n-1, n` and :math:`n, n+1`
      (:func:`~dpcp_tutorial.private_quantile_privacy_loss` with ``public_n=False``),
      which exceeds :math:`\\varepsilon_c` near feasibility (1.023 at :math:`n = 206`,
      :math:`\\alpha = 0.1`, 1000 bins), or not covered when the smaller neighbour is
      infeasible (it raises where the other releases). *Proof of the bound:*
      the release is :math:`P(e_j) \\propto \\exp(-\\varepsilon_c\\max(\\alpha_0 a_j, (1-\\alpha_0)b_j))`
      with counts :math:`a_j, b_j \\le n`; adding a record raises one of :math:`a_j, b_j`
      by at most 1 and moves the level from :math:`\\alpha_0(n)` to :math:`\\alpha_0(n+1)`,
      so every exponent moves within an interval :math:`[L, U]` whose width is the
      bound (the argument of :func:`~dpcp_tutorial.pps_privacy_loss` with
      ``public_n=False``), and the normalising constants move within the same
      interval. tests/test_adaptive.py checks it against the exact laws.

    ``disjoint=True`` (three disjoint parts; each record's part decided by a
    per-record rule -- its own coin or public key --, independently of the
    values and of the other records): parallel composition
    (:mod:`dpcp_tutorial.accounting`): :math:`\\max_j` under add/remove, and under
    replace-one :math:`\\max(\\max_j RO_j, \\max_{j \\ne k} AR_j + AR_k)`, because a
    replaced record may land in another part. The later steps take the earlier
    releases as public inputs. ``disjoint=False`` (every step reads the same
    records): sequential composition, the sums.

    Parameters
    ----------
    mean_privacy, scale_privacy : (float, float), PrivacyAccount or None
        The trainers' guarantees, as above.
    calibration_epsilon : float
        Budget :math:`\\varepsilon_c` of the private quantile.
    alpha : float, default=None
        Target miscoverage; needed with ``public_n=False``.
    n : int, default=None
        The calibration part's size; needed with ``public_n=False``.
    bins : int, default=1000
        Edges of the private quantile.
    public_n : bool, default=True
        Whether the calibration part is subsampled or padded to a public size.
    disjoint : bool, default=True
        Whether the three parts are disjoint.

    Returns
    -------
    PrivacyAccount

    Examples
    --------
    >>> acc = adaptive_privacy_account((1.0, 1e-6), (1.0, 1e-6), 1.0)
    >>> acc.relation, round(acc.epsilon, 3)
    ('add/remove', 1.0)
    >>> acc = adaptive_privacy_account((1.0, 1e-6), (1.0, 1e-6), 1.0, disjoint=False)
    >>> round(acc.epsilon, 3)
    3.0
    """
    disjoint = check_bool(disjoint, "disjoint")
    public_n = check_bool(public_n, "public_n")
    eps_c = check_epsilon(calibration_epsilon, "calibration_epsilon")
    part = (lambda j: f"part {j}") if disjoint else (lambda j: "all")
    trainers = [_trainer_spend(mean_privacy, "mean model", part(1)),
                _trainer_spend(scale_privacy, "scale model", part(2))]
    calibration, notes = _calibration_spend(eps_c, alpha=alpha, n=n, bins=bins, public_n=public_n, part=part(3))
    return _adaptive_account(trainers, calibration, notes)


def _model_spend(model, label: str, part: str):
    """The spend of a fitted model's own ``privacy_``; None for a non-private model."""
    account = trainer_account(model) if model is not None else None
    return None if account is None else _trainer_spend(account, label, part)


def _outputs(method, X, private: bool) -> np.ndarray:
    """A model's outputs: on private records by the per-record rule of
    :func:`~dpcp_tutorial._validation.model_outputs` (a refused record gives NaN), elsewhere as the model gives
    them (its own errors included)."""
    if private:
        return model_outputs(method, X)
    return np.asarray(method(X), dtype=float).ravel()


def _clean_outputs(values, low: float, high: float, nan: float) -> np.ndarray:
    """Model outputs on private records as finite floats in ``[low, high]`` (public): NaN read as ``nan``.

    A domain check, a NaN or an overflow on a value derived from private
    records would be a data-dependent edge (one neighbour releases, the other
    raises); clipping to public bounds makes every later step total.
    """
    out = np.asarray(values, dtype=float).ravel()
    return np.clip(np.nan_to_num(out, nan=nan, posinf=high, neginf=low), low, high)


#: Public cap of the scale :math:`\\hat\\sigma(x)` (a scale model's output on a private record is clipped to it)
MAX_SCALE = 1e100

_RNG_DOC = """rng : None, int or numpy.random.Generator, default=None
        Randomness of the private quantile (and of the subsampling); ``None``
        for a real release (:term:`Seed`).
    sampler : {"numpy", "opendp"}, default="numpy"
        The private quantile's sampler (:func:`~dpcp_tutorial.private_quantile`):
        ``"numpy"`` or OpenDP's exact report-noisy-max (``"opendp"``,
        the same privacy and coverage guarantees; ``rng`` must be ``None``)."""

_N_DOC = """n : int or None, default=None
        Public calibration size. Given: the calibration scores are subsampled
        or padded with 1 to exactly ``n`` (``mondrian``'s rule), which keeps the
        coverage proof at every data size and makes the calibration
        :math:`\\varepsilon`-DP under add/remove and replace-one alike.
        ``None``: the number of calibration records is used and treated as
        **public**; add/remove is then the bound for a level recomputed from
        each neighbour's size (:func:`adaptive_privacy_account`, in ``privacy_``)."""


class PrivateNormalizedConformalRegressor(BaseEstimator):
    __doc__ = """Adaptive private split conformal intervals with a DP-trained scale model (chapter 17).

    ``fit(X1, y1)`` trains a clone of ``mean_estimator`` (part 1);
    ``fit_scale(X2, y2)`` trains a clone of ``scale_estimator`` on the absolute
    (or log) residuals of the mean model (part 2); ``calibrate(X3, y3)``
    releases the threshold :math:`\\hat q` of the scores
    :func:`normalized_score` with the tight private quantile (part 3);
    ``predict_interval`` returns :math:`\\hat\\mu(x) \\pm B\\hat\\sigma(x)\\hat q`.

    Parameters
    ----------
    mean_estimator : scikit-learn regressor
        For a private pipeline, a DP trainer (e.g.
        :class:`~dpcp_tutorial.DPRidgeRegression`, possibly after a public,
        data-independent feature map in a :class:`sklearn.pipeline.Pipeline`).
    scale_estimator : scikit-learn regressor or None, default=None
        The scale model (a DP trainer whose public label bound covers the
        targets: :math:`[0, 2Y]` for ``"abs"``). ``None``: constant scale 1
        (the constant-width private interval).
    alpha : float, default=0.1
        Target miscoverage.
    epsilon : float, default=1.0
        Budget of the private quantile, the one release this estimator
        computes from part 3 (the trainers carry their own budgets, read from
        their ``privacy_``; the rule: :mod:`dpcp_tutorial.accounting`).
    y_bound : float
        **Required** public bound :math:`y_{\\max}` on the responses, in their units,
        from domain knowledge; mean predictions are clipped to :math:`[-y_{\\max}, y_{\\max}]`.
    sigma_min : float
        Public floor of the scale, :math:`\\hat\\sigma(x) \\ge \\sigma_{\\min} > 0`;
        **required** with a scale model (the smallest noise level that domain
        knowledge allows, e.g. the measurement resolution); unused (but
        validated) without one.
    score_bound : float or None, default=None
        Public :math:`B`; ``None``: :math:`2y_{\\max}/\\sigma_{\\min}` (:math:`2Y` with a
        constant scale), which never clips a response inside :math:`[-y_{\\max}, y_{\\max}]`.
    bins : int, default=1000
        Edges of the private quantile (:math:`j/M`).
    scale_target : {"abs", "log"}, default="abs"
        Target of the scale model: :math:`|r|` or :math:`\\log(|r| + \\sigma_{\\min})`.
    """ + _N_DOC + """
    prefit : bool, default=False
        Whether both models are already fitted (then only ``calibrate``).
    allow_low_coverage : bool, default=False
        ``alpha`` is the miscoverage, ``1 - confidence_level``; an ``alpha``
        above 1/2 is refused unless this is ``True``.
    """ + _RNG_DOC + """

    Attributes
    ----------
    mean_estimator_, scale_estimator_ : fitted models
    qhat_ : float
        The released threshold on the normalised scale (1 with a
        :class:`~dpcp_tutorial.ReleaseWarning`: the whole line).
    level_ : float
        The level :math:`\\alpha_0` of the private quantile.
    n_ : int
        The calibration size the mechanism used.
    score_bound_ : float
        The :math:`B` used.
    privacy_ : PrivacyAccount
        The models' own accounts (parts 1 and 2; a model without ``privacy_``
        is listed as trained on public data) in parallel with the calibration
        (part 3): :func:`adaptive_privacy_account`.

    Notes
    -----
    **Privacy.** With the three parts disjoint and each record's part decided
    by a per-record rule (its own coin or a public key, independent of the
    values and of the other records), the parts compose in parallel
    (:mod:`dpcp_tutorial.accounting`). Model outputs on private records are
    clipped to public bounds before the score (means to :math:`[-y_{\\max}, y_{\\max}]`;
    scales to :math:`[\\sigma_{\\min}, 10^{100}]`); a record whose mean or scale
    output is NaN, or that a model refuses alone (features go to the models
    as they are: :func:`~dpcp_tutorial._validation.check_features`), gets the
    worst score 1, and at prediction the whole line. So does a calibration
    response that is missing, non-finite or beyond :math:`10^{100}` (read
    record by record: NaN, ``None``, ``pd.NA``). The score is computed so
    that it cannot fail, so no branch, error or message of ``calibrate``
    depends on private values; only the schema (types and shapes) is
    checked, and the :class:`~dpcp_tutorial.ReleaseWarning` depends on the
    release only. (``fit`` and ``fit_scale`` train the models: a NaN or
    infinite value there is the trainers' data-domain check, one fixed
    message for every such data set.)

    **Coverage.** Given parts 1 and 2 (hence :math:`\\hat\\mu`, :math:`\\hat\\sigma`),
    the scores of part 3 and of a test point are i.i.d., so
    :math:`P(s_{n+1} \\le \\hat q) \\ge 1-\\alpha` by the tight private quantile's
    guarantee (subsampling and padding keep it), and :math:`s \\le \\hat q` is
    exactly :math:`Y \\in` the interval, computed with the same clipped outputs.

    Examples
    --------
    >>> from dpcp_tutorial import DPRidgeRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(30000, 1))       # the noise grows with x
    >>> y = np.clip(X[:, 0] + (0.1 + 0.5 * X[:, 0]) * rng.normal(size=30000), -3, 3)
    >>> ridge = dict(epsilon=1.0, x_bound=1.0, rng=1)
    >>> model = PrivateNormalizedConformalRegressor(
    ...     DPRidgeRegression(y_bound=3.0, **ridge), DPRidgeRegression(y_bound=3.0, **ridge),
    ...     alpha=0.1, epsilon=1.0, y_bound=3.0, sigma_min=0.05, score_bound=5.0, rng=2)
    >>> parts = np.array_split(np.arange(30000), 3)            # three disjoint parts
    >>> model = model.fit(X[parts[0]], y[parts[0]]).fit_scale(X[parts[1]], y[parts[1]])
    >>> model = model.calibrate(X[parts[2]], y[parts[2]])
    >>> model.predict_interval([[0.0], [1.0]]).round(1)
    array([[-0.2,  0.2],
           [ 0. ,  1.9]])
    """

    def __init__(self, mean_estimator, scale_estimator=None, alpha: float = 0.1, epsilon: float = 1.0, *,
                 y_bound=REQUIRED, sigma_min=REQUIRED, score_bound: float | None = None, bins: int = 1000,
                 scale_target: str = "abs", n: int | None = None, prefit: bool = False, rng: RandomLike = None,
                 sampler: str = "numpy", allow_low_coverage: bool = False):
        require(y_bound, "y_bound", type(self).__name__, Y_BOUND_ADVICE)
        self.allow_low_coverage = allow_low_coverage
        if scale_estimator is not None:
            require(sigma_min, "sigma_min", type(self).__name__, "sigma_min is the public floor of the scale "
                    "model, in the response's units: the smallest noise level domain knowledge allows (e.g. the "
                    "measurement resolution).")
        self.mean_estimator = mean_estimator
        self.scale_estimator = scale_estimator
        self.alpha = alpha
        self.epsilon = epsilon
        self.y_bound = y_bound
        self.sigma_min = sigma_min
        self.score_bound = score_bound
        self.bins = bins
        self.scale_target = scale_target
        self.n = n
        self.prefit = prefit
        self.rng = rng
        self.sampler = sampler

    # ------------------------------------------------------------------ public settings
    def _settings(self):
        check_estimator(self.mean_estimator, "mean_estimator")
        if self.scale_estimator is not None:
            check_estimator(self.scale_estimator, "scale_estimator")
        y_bound = _check_positive(self.y_bound, "y_bound", "a public bound on |y| from domain knowledge")
        if self.sigma_min is REQUIRED:
            if self.scale_estimator is not None:
                require(self.sigma_min, "sigma_min", type(self).__name__, "")
            sigma_min = 1.0                 # no scale model: the scale is the constant 1
        else:
            sigma_min = _check_positive(self.sigma_min, "sigma_min", "a public floor on the scale model, chosen "
                                        "before seeing the data")
        check_choice(self.scale_target, "scale_target", _SCALE_TARGETS,
                     "'abs': the scale model learns |r|; 'log': log(|r| + sigma_min)")
        if self.score_bound is None:
            bound = 2.0 * y_bound / (sigma_min if self.scale_estimator is not None else 1.0)
        else:
            bound = _check_positive(self.score_bound, "score_bound", "B is a public bound on the normalised "
                                    "residual, chosen before seeing the data (or None for 2 y_bound / sigma_min)")
        return y_bound, sigma_min, bound

    # ------------------------------------------------------------------ models
    def _models(self):
        if check_bool(self.prefit, "prefit"):
            check_is_fitted(self.mean_estimator)
            if self.scale_estimator is not None:
                check_is_fitted(self.scale_estimator)
            return self.mean_estimator, self.scale_estimator
        if not hasattr(self, "mean_estimator_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(X1, y1) first, or pass prefit=True "
                             "with fitted models")
        if self.scale_estimator is not None and not hasattr(self, "scale_estimator_"):
            raise NotFittedError(f"{type(self).__name__} has no scale model yet: call fit_scale(X2, y2) on a part of "
                             "the data disjoint from fit's and calibrate's")
        return self.mean_estimator_, getattr(self, "scale_estimator_", None)

    def fit(self, X, y):
        """Fit a clone of ``mean_estimator`` on part 1 (skipped when ``prefit``)."""
        if check_bool(self.prefit, "prefit"):
            raise ValueError("prefit=True: the models are already fitted; call calibrate(X3, y3) directly")
        self._settings()
        self._check_models_privacy((self.mean_estimator, self.scale_estimator))
        X = check_features(X, self, reset=True)
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        self.mean_estimator_ = clone(self.mean_estimator).fit(X, y)
        if hasattr(self, "scale_estimator_"):
            del self.scale_estimator_      # a new mean model invalidates the scale model
        return self

    def _check_models_privacy(self, models):
        """Refuse a model whose steps no account certifies (the model objects only, never data; chapter 7)."""
        for model in models:
            if model is not None:
                check_model_privacy(model, type(self).__name__)

    def fit_scale(self, X, y):
        """Fit a clone of ``scale_estimator`` on part 2: targets :math:`|y - \\hat\\mu(x)|` (or their log).

        With ``scale_estimator=None`` there is nothing to fit (and nothing is read).
        """
        if check_bool(self.prefit, "prefit"):
            raise ValueError("prefit=True: the models are already fitted; call calibrate(X3, y3) directly")
        y_bound, sigma_min, _ = self._settings()
        if not hasattr(self, "mean_estimator_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(X1, y1) before fit_scale(X2, y2)")
        if self.scale_estimator is None:
            return self
        X = check_features(X, self, reset=False)
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        residual = np.minimum(np.abs(y - self._mean(X, y_bound)), 2.0 * y_bound)
        target = residual if self.scale_target == "abs" else np.log(residual + sigma_min)
        self.scale_estimator_ = clone(self.scale_estimator).fit(X, target)
        return self

    def _mean(self, X: np.ndarray, y_bound: float) -> np.ndarray:
        return _clean_outputs(self._mean_raw(X, private=True), -y_bound, y_bound, 0.0)

    def _mean_raw(self, X, private: bool = False) -> np.ndarray:
        """The mean model's outputs as floats; on private records NaN for a record it refuses alone."""
        if check_bool(self.prefit, "prefit"):
            check_is_fitted(self.mean_estimator)
            mean = self.mean_estimator
        elif hasattr(self, "mean_estimator_"):
            mean = self.mean_estimator_
        else:
            mean, _ = self._models()            # raises the "not fitted" message
        if X.shape[0] == 0:
            return np.empty(0)
        return _outputs(mean.predict, X, private)

    def _features(self, X, *, calibrating: bool = False, min_rows: int = 1):
        """``X`` matched to the schema of fit (a prefit mean model's at calibration; a DataFrame by name)."""
        return schema_features(self, X, lambda: self.mean_estimator, calibrating=calibrating, min_rows=min_rows)

    def predict(self, X) -> np.ndarray:
        """Mean predictions :math:`\\hat\\mu(x)`, clipped to the public :math:`[-y_{\\max}, y_{\\max}]`."""
        y_bound, _, _ = self._settings()
        return _clean_outputs(self._mean_raw(self._features(X)), -y_bound, y_bound, 0.0)

    def _scale_raw(self, X, private: bool = False) -> np.ndarray:
        """The scale model's outputs as floats (NaN for a refused record); ones without a scale model."""
        _, scale = self._models()
        if scale is None:
            return np.ones(X.shape[0])
        if X.shape[0] == 0:
            return np.empty(0)
        return _outputs(scale.predict, X, private)

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return self._scale_from(self._scale_raw(X))

    def _scale_from(self, outputs: np.ndarray) -> np.ndarray:
        _, sigma_min, _ = self._settings()
        if self.scale_estimator is None:
            return np.ones(outputs.size)
        raw = _clean_outputs(outputs, -MAX_SCALE, MAX_SCALE, -math.inf)
        if self.scale_target == "log":
            raw = np.exp(np.minimum(raw, math.log(MAX_SCALE)))
        return np.clip(raw, sigma_min, max(MAX_SCALE, sigma_min))

    def predict_scale(self, X) -> np.ndarray:
        """Scales :math:`\\hat\\sigma(x) = \\min(\\max(\\sigma_{\\min}, g(x)), 10^{100})`; 1 without a scale model.

        A NaN output of the scale model is read as the floor :math:`\\sigma_{\\min}`.
        """
        return self._scale(self._features(X))

    # ------------------------------------------------------------------ calibration
    def calibrate(self, X, y):
        """Release the private threshold ``qhat_`` (and ``privacy_``) from part 3."""
        alpha = check_coverage_alpha(self.alpha, self.allow_low_coverage)
        epsilon = check_epsilon(self.epsilon)
        bins = check_positive_int(self.bins, "bins", minimum=2, maximum=10**6)
        y_bound, _, bound = self._settings()
        n = public_size(self.n)
        sampler = check_release_sampler(self.sampler, self.rng, "quantile")
        self._check_models_privacy(self._models())
        X = self._features(X, calibrating=True, min_rows=0 if n is not None else 1)
        y, usable = private_responses(y, allow_empty=n is not None)      # record by record: never refused
        check_same_length(("X", X), ("y", y))
        if X.shape[0]:
            with silenced_model():          # the models' outputs on private records: no warning escapes
                raw_mu, raw_sigma = self._mean_raw(X, private=True), self._scale_raw(X, private=True)
            scores = normalized_score(y, _clean_outputs(raw_mu, -y_bound, y_bound, 0.0), self._scale_from(raw_sigma),
                                      bound)
            # a missing output or an unusable response (missing, non-finite, beyond 1e100): the worst score
            scores[np.isnan(raw_mu) | np.isnan(raw_sigma) | ~usable] = 1.0
        else:
            scores = np.empty(0)
        self.qhat_, calibration, notes = release_threshold(
            self, scores, alpha=alpha, epsilon=epsilon, bins=bins, n=n, rng=check_random_state(self.rng),
            sampler=sampler)
        self.score_bound_ = bound
        mean, scale = self._models()
        self.privacy_ = _pipeline_account(
            [("mean model", mean, "part 1"), ("scale model", scale, "part 2")], calibration, notes,
            (f"y_bound y_max = {y_bound:g}", f"score bound B = {bound:g}", _size_text(n, self.n_)))
        warn_trivial(self.qhat_, "every interval is (-inf, inf)")
        return self

    def predict_interval(self, X) -> np.ndarray:
        """Intervals (n, 2): :math:`\\hat\\mu(x) \\pm B\\hat\\sigma(x)\\hat q`; the line when ``qhat_ == 1``."""
        if not hasattr(self, "qhat_"):
            raise NotFittedError(f"{type(self).__name__} is not calibrated: call calibrate(X3, y3) first")
        X = self._features(X)
        y_bound, _, _ = self._settings()
        raw_mu, raw_sigma = self._mean_raw(X), self._scale_raw(X)
        out = normalized_interval(_clean_outputs(raw_mu, -y_bound, y_bound, 0.0), self._scale_from(raw_sigma),
                                  self.qhat_, self.score_bound_)
        out[np.isnan(raw_mu) | np.isnan(raw_sigma)] = (-math.inf, math.inf)      # a missing output: the line
        return out


def _size_text(n, used: int) -> str:
    return f"calibration size n = {n} (subsample-or-pad)" if n is not None else \
        f"calibration size N = {used} (n=None, declared public)"


def _pipeline_account(models, calibration, notes, public):
    """Parallel composition of the models' own accounts and the calibration (chapter 17)."""
    spends, public = [], list(public)
    for label, model, part in models:
        if model is None:
            continue
        spend = _model_spend(model, label, part)
        public.extend(f"{label}: {line}" for line in public_step_notes(model))
        if spend is None:
            public.append(f"the data of the {label}: it reports no privacy_ (not a DP trainer), so they are treated "
                          "as public; fit it on public data or use a DP trainer")
        spends.append(spend)
    return _adaptive_account(spends, calibration, notes, public)


# ---------------------------------------------------------------------------
# conformalised quantile regression with DP quantile regressors
# ---------------------------------------------------------------------------

def _check_score_bound(score_bound) -> float:
    return _check_positive(score_bound, "score_bound",
                           "B is a public bound on the CQR score, chosen before seeing the data")


def cqr_score(y_true, lower, upper, score_bound: float) -> np.ndarray:
    """Bounded conformalised-quantile-regression score (chapter 17).

    .. math:: E = \\max(\\hat q_{lo}(x) - y,\\ y - \\hat q_{hi}(x)), \\qquad
              s = \\tfrac12\\big(\\mathrm{clip}(E/B, -1, 1) + 1\\big) \\in [0, 1],

    with a public :math:`B > 0` (Romano et al., 2019, made bounded for the
    private quantile). :math:`s \\le \\hat q < 1` is exactly
    :math:`E \\le (2\\hat q - 1)B` (:func:`cqr_interval`).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Responses.
    lower, upper : array-like of shape (n,)
        The two quantile models' predictions.
    score_bound : float
        The public :math:`B > 0`.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> cqr_score([0.5, 3.0, -9.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], score_bound=4.0)
    array([0.4375, 0.75  , 1.    ])
    """
    score_bound = _check_score_bound(score_bound)
    y_true = check_1d(y_true, "y_true")
    lower = check_1d(lower, "lower")
    upper = check_1d(upper, "upper")
    check_same_length(("y_true", y_true), ("lower", lower), ("upper", upper))
    excess = np.maximum(lower - y_true, y_true - upper)   # inputs within 1e100: finite
    with np.errstate(over="ignore"):                       # a tiny public B: the ratio overflows to inf, clipped
        return 0.5 * (np.clip(excess / score_bound, -1.0, 1.0) + 1.0)


def cqr_interval(lower, upper, qhat: float, score_bound: float) -> np.ndarray:
    """Intervals :math:`[\\hat q_{lo}(x) - t, \\hat q_{hi}(x) + t]`, :math:`t = (2\\hat q - 1)B` (chapter 17).

    :math:`\\{y : s(x, y) \\le \\hat q\\}` for :func:`cqr_score`; the whole line when
    :math:`\\hat q = 1`. The margin :math:`t` may be negative; a row with
    lower end above its upper end is an **empty** set (it covers nothing).

    Parameters
    ----------
    lower, upper : array-like of shape (n,)
        The two quantile models' predictions.
    qhat : float
        The released threshold in :math:`[0, 1]`.
    score_bound : float
        The public :math:`B > 0` of :func:`cqr_score`.

    Returns
    -------
    ndarray of shape (n, 2)

    Examples
    --------
    >>> cqr_interval([0.0, 1.0], [1.0, 3.0], qhat=0.6, score_bound=2.0)
    array([[-0.4,  1.4],
           [ 0.6,  3.4]])
    """
    lower = check_1d(lower, "lower")
    upper = check_1d(upper, "upper")
    check_same_length(("lower", lower), ("upper", upper))
    qhat = check_scalar(qhat, "qhat", low=0.0, high=1.0, low_inclusive=True, high_inclusive=True,
                        hint="qhat is a threshold on scores normalised to [0, 1]")
    score_bound = _check_score_bound(score_bound)
    if qhat >= 1.0:
        return np.column_stack([np.full(lower.size, -math.inf), np.full(lower.size, math.inf)])
    margin = (2.0 * qhat - 1.0) * score_bound
    with np.errstate(over="ignore"):
        return np.column_stack([lower - margin, upper + margin])


class PrivateConformalizedQuantileRegressor(BaseEstimator):
    __doc__ = """Private conformalised quantile regression (CQR) with DP quantile regressors (chapter 17).

    ``fit_lower(X, y)`` and ``fit_upper(X, y)`` train clones of the two
    quantile models (on disjoint parts for parallel composition; ``fit``
    trains both on the same part, and then their budgets add up);
    ``calibrate(X, y)`` releases :math:`\\hat q`, the tight private quantile of
    :func:`cqr_score` on a further disjoint part; ``predict_interval`` returns
    :func:`cqr_interval`.

    Parameters
    ----------
    lower_estimator, upper_estimator : scikit-learn regressors
        Quantile models at levels about :math:`\\alpha/2` and :math:`1-\\alpha/2`
        (any levels keep the guarantee), e.g. :class:`DPSGDQuantileRegressor`.
    alpha : float, default=0.1
        Target miscoverage.
    epsilon : float, default=1.0
        Budget of the private quantile (the trainers carry their own; the rule:
        :mod:`dpcp_tutorial.accounting`).
    score_bound : float
        **Required** public :math:`B > 0` of :func:`cqr_score`, in the
        response's units: how far outside the quantile band a response can
        plausibly fall (e.g. the documented range of the response).
    bins : int, default=1000
        Edges of the private quantile.
    """ + _N_DOC + """
    prefit : bool, default=False
        Whether both models are already fitted (then only ``calibrate``).
    allow_low_coverage : bool, default=False
        ``alpha`` is the miscoverage, ``1 - confidence_level``; an ``alpha``
        above 1/2 is refused unless this is ``True``.
    """ + _RNG_DOC + """

    Attributes
    ----------
    lower_estimator_, upper_estimator_ : fitted models
    qhat_, level_, n_ : float, float, int
    privacy_ : PrivacyAccount
        The two models' accounts (sequential when ``fit`` trained both on one
        part, parallel when ``fit_lower`` and ``fit_upper`` had disjoint parts)
        in parallel with the calibration part.

    Notes
    -----
    **Privacy.** :func:`adaptive_privacy_account`'s rules with the two trainers
    in place of the mean and the scale model. The models' outputs on private
    records are read as finite floats within :math:`\\pm 10^{100}` (NaN as 0)
    before the score, and the score cannot overflow, so nothing in
    ``calibrate`` raises or warns because of a private value.
    **Coverage.** Given the two models the scores of the calibration part and
    of a test point are exchangeable, so :math:`P(Y \\in C(X)) \\ge 1-\\alpha`;
    the test-time interval uses the same clipped outputs.

    Examples
    --------
    Two quantile models fitted on public data (``prefit=True``), calibrated
    on private records:

    >>> from sklearn.linear_model import QuantileRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(2200, 1))
    >>> y = X[:, 0] + 0.3 * rng.normal(size=2200)
    >>> low, high = (QuantileRegressor(quantile=q, alpha=0.0).fit(X[:200], y[:200])
    ...              for q in (0.05, 0.95))
    >>> cqr = PrivateConformalizedQuantileRegressor(low, high, score_bound=2.0,
    ...                                             prefit=True, rng=1)
    >>> cqr.calibrate(X[200:], y[200:]).predict_interval([[0.5]]).round(1)
    array([[0., 1.]])
    """

    def __init__(self, lower_estimator, upper_estimator, alpha: float = 0.1, epsilon: float = 1.0, *,
                 score_bound=REQUIRED, bins: int = 1000, n: int | None = None, prefit: bool = False,
                 rng: RandomLike = None, sampler: str = "numpy", allow_low_coverage: bool = False):
        self.allow_low_coverage = allow_low_coverage
        require(score_bound, "score_bound", type(self).__name__, "score_bound is the public B of the CQR score, "
                "in the response's units: how far outside the quantile band a response can plausibly fall.")
        self.lower_estimator = lower_estimator
        self.upper_estimator = upper_estimator
        self.alpha = alpha
        self.epsilon = epsilon
        self.score_bound = score_bound
        self.bins = bins
        self.n = n
        self.prefit = prefit
        self.rng = rng
        self.sampler = sampler

    def _check_models(self):
        check_estimator(self.lower_estimator, "lower_estimator")
        check_estimator(self.upper_estimator, "upper_estimator")
        for model in (self.lower_estimator, self.upper_estimator):   # the model objects only (chapter 7)
            check_model_privacy(model, type(self).__name__)

    def _fit_one(self, which: str, X, y, part: str):
        self._check_models()
        if check_bool(self.prefit, "prefit"):
            raise ValueError("prefit=True: the models are already fitted; call calibrate(X, y) directly")
        _check_score_bound(self.score_bound)
        X = check_features(X, self, reset=which == "lower" or not hasattr(self, "n_features_in_"))
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        setattr(self, f"{which}_estimator_", clone(getattr(self, f"{which}_estimator")).fit(X, y))
        parts = dict(getattr(self, "_parts", {}))
        parts[which] = part
        self._parts = parts
        return self

    def fit_lower(self, X, y):
        """Fit a clone of ``lower_estimator`` (on a part of its own)."""
        return self._fit_one("lower", X, y, "lower-model part")

    def fit_upper(self, X, y):
        """Fit a clone of ``upper_estimator`` (on a part of its own)."""
        return self._fit_one("upper", X, y, "upper-model part")

    def fit(self, X, y):
        """Fit both quantile models on the same data (their budgets then add up)."""
        return self._fit_one("lower", X, y, "model part")._fit_one("upper", X, y, "model part")

    def _models(self):
        self._check_models()
        if check_bool(self.prefit, "prefit"):
            check_is_fitted(self.lower_estimator)
            check_is_fitted(self.upper_estimator)
            return self.lower_estimator, self.upper_estimator
        if not (hasattr(self, "lower_estimator_") and hasattr(self, "upper_estimator_")):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit_lower(X1, y1) and fit_upper(X2, y2) "
                             "(or fit(X, y)) first, or pass prefit=True with fitted models")
        return self.lower_estimator_, self.upper_estimator_

    def _raw_quantiles(self, X, private: bool = False):
        """The two models' outputs as floats (on private records NaN for a record a model refuses alone)."""
        if X.shape[0] == 0:
            return np.empty(0), np.empty(0)
        lower, upper = self._models()
        return _outputs(lower.predict, X, private), _outputs(upper.predict, X, private)

    def _quantiles(self, X: np.ndarray):
        return tuple(_clean_outputs(raw, -MAX_MAGNITUDE, MAX_MAGNITUDE, 0.0) for raw in self._raw_quantiles(X))

    def _features(self, X, *, calibrating: bool = False, min_rows: int = 1):
        """``X`` matched to the schema of fit (a prefit lower model's at calibration; a DataFrame by name)."""
        return schema_features(self, X, lambda: self.lower_estimator, calibrating=calibrating, min_rows=min_rows)

    def predict_quantiles(self, X) -> tuple[np.ndarray, np.ndarray]:
        """The two quantile models' predictions, as finite floats within :math:`\\pm 10^{100}` (NaN read as 0)."""
        self._models()
        return self._quantiles(self._features(X))

    def calibrate(self, X, y):
        """Release the private threshold ``qhat_`` (and ``privacy_``)."""
        alpha = check_coverage_alpha(self.alpha, self.allow_low_coverage)
        epsilon = check_epsilon(self.epsilon)
        bins = check_positive_int(self.bins, "bins", minimum=2, maximum=10**6)
        bound = _check_score_bound(self.score_bound)
        n = public_size(self.n)
        sampler = check_release_sampler(self.sampler, self.rng, "quantile")
        self._models()
        X = self._features(X, calibrating=True, min_rows=0 if n is not None else 1)
        y, usable = private_responses(y, allow_empty=n is not None)      # record by record: never refused
        check_same_length(("X", X), ("y", y))
        with silenced_model():              # the models' outputs on private records: no warning escapes
            raw = self._raw_quantiles(X, private=True)
        quantiles = tuple(_clean_outputs(r, -MAX_MAGNITUDE, MAX_MAGNITUDE, 0.0) for r in raw)
        scores = cqr_score(y, *quantiles, bound) if X.shape[0] else np.empty(0)
        if X.shape[0]:      # a missing output or an unusable response: the worst score
            scores[np.isnan(raw[0]) | np.isnan(raw[1]) | ~usable] = 1.0
        self.qhat_, calibration, notes = release_threshold(
            self, scores, alpha=alpha, epsilon=epsilon, bins=bins, n=n, rng=check_random_state(self.rng),
            sampler=sampler)
        parts = getattr(self, "_parts", {}) if not check_bool(self.prefit, "prefit") else {}
        lower, upper = self._models()
        self.privacy_ = _pipeline_account(
            [("lower quantile model", lower, parts.get("lower", "lower-model part")),
             ("upper quantile model", upper, parts.get("upper", "upper-model part"))], calibration, notes,
            (f"score bound B = {bound:g}", _size_text(n, self.n_)))
        warn_trivial(self.qhat_, "every interval is (-inf, inf)")
        return self

    def predict_interval(self, X) -> np.ndarray:
        """Intervals of shape (n, 2) (:func:`cqr_interval`; an empty set has lower > upper)."""
        if not hasattr(self, "qhat_"):
            raise NotFittedError(f"{type(self).__name__} is not calibrated: call calibrate(X, y) first")
        self._models()
        raw = self._raw_quantiles(self._features(X))
        lower, upper = (_clean_outputs(r, -MAX_MAGNITUDE, MAX_MAGNITUDE, 0.0) for r in raw)
        out = cqr_interval(lower, upper, self.qhat_, self.score_bound)
        out[np.isnan(raw[0]) | np.isnan(raw[1])] = (-math.inf, math.inf)         # a missing output: the line
        return out
