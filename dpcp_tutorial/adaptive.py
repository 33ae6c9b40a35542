"""Adaptive private regression intervals: normalised scores with a DP scale model (issue 13, section 4; chapter 17).

A constant-width interval :math:`\\hat\\mu(x) \\pm t` is too wide where the noise
is small and too narrow where it is large (chapter 1). The normalised score

.. math:: s(x, y) = \\min\\Big(\\frac{|y - \\hat\\mu(x)|}{K\\,\\hat\\sigma(x)},\\ 1\\Big),
          \\qquad \\hat\\sigma(x) = \\max\\big(\\sigma_{\\min},\\ g(x)\\big),

gives intervals :math:`\\hat\\mu(x) \\pm K\\hat\\sigma(x)\\hat q` whose width follows a
*scale model* :math:`g` of the absolute residuals. Everything that makes it
private and bounded is public:

* :math:`\\sigma_{\\min} > 0` (``sigma_min``), a floor on the scale, so that the
  ratio is finite;
* :math:`K > 0` (``score_bound``), a public bound on the normalised residual.
  Dividing by :math:`K` and clipping at 1 puts every score in :math:`[0, 1]`, the
  domain of the private quantile, whatever the data. Any public :math:`K` keeps
  the guarantees; :math:`K = 2Y/\\sigma_{\\min}` (the default, with :math:`Y` the
  public bound ``y_bound`` on :math:`|y|` and on the clipped predictions) never
  clips a response inside :math:`[-Y, Y]`, a smaller :math:`K` resolves the
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
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    RandomLike,
    check_1d,
    check_2d,
    check_alpha,
    check_bool,
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
)
from .quantile import private_quantile, private_quantile_level
from .training import _SGD_DOC, _check_bounds, _check_features, _clip_rows, _DPSGDBase

__all__ = [
    "normalized_score",
    "normalized_interval",
    "adaptive_privacy_account",
    "PrivateNormalizedConformalRegressor",
    "DPSGDQuantileRegressor",
    "cqr_score",
    "cqr_interval",
    "PrivateConformalizedQuantileRegressor",
]

_SCALE_TARGETS = ("abs", "log")


def _check_positive(value, name: str, hint: str) -> float:
    return check_scalar(value, name, low=0.0, hint=hint)


def normalized_score(y_true, y_pred, scale, score_bound: float) -> np.ndarray:
    """Bounded normalised residual score (chapter 17).

    .. math:: s = \\min\\Big(\\frac{|y - \\hat\\mu(x)|}{K\\,\\hat\\sigma(x)},\\ 1\\Big) \\in [0, 1].

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Responses and mean predictions.
    scale : array-like of shape (n,)
        The scales :math:`\\hat\\sigma(x) > 0` (already floored at a public
        :math:`\\sigma_{\\min}`).
    score_bound : float
        The public bound :math:`K > 0`, chosen without looking at the data.

    Returns
    -------
    ndarray of shape (n,)
    """
    score_bound = _check_positive(score_bound, "score_bound",
                                  "K is a public bound on the normalised residual, chosen before seeing the data")
    y_true = check_1d(y_true, "y_true")
    y_pred = check_1d(y_pred, "y_pred")
    scale = check_1d(scale, "scale")
    check_same_length(("y_true", y_true), ("y_pred", y_pred), ("scale", scale))
    if not scale.min() > 0.0:   # scales come from a public floor: a non-positive one is a programming error
        raise ValueError("scale must be positive; floor the scale model at a public sigma_min > 0")
    return np.minimum(np.abs(y_true - y_pred) / (score_bound * scale), 1.0)


def normalized_interval(y_pred, scale, qhat: float, score_bound: float) -> np.ndarray:
    """Intervals :math:`\\hat\\mu(x) \\pm K\\hat\\sigma(x)\\hat q`, the line when :math:`\\hat q = 1` (chapter 17).

    :math:`\\{y : s(x, y) \\le \\hat q\\}` for the score of :func:`normalized_score`:
    for :math:`\\hat q < 1` this is :math:`|y - \\hat\\mu(x)| \\le K\\hat\\sigma(x)\\hat q`;
    the top edge :math:`\\hat q = 1` admits every clipped score, i.e. every
    :math:`y`.

    Returns
    -------
    ndarray of shape (n, 2)
    """
    y_pred = check_1d(y_pred, "y_pred")
    scale = check_1d(scale, "scale")
    check_same_length(("y_pred", y_pred), ("scale", scale))
    if not scale.min() > 0.0:
        raise ValueError("scale must be positive; floor the scale model at a public sigma_min > 0")
    qhat = check_scalar(qhat, "qhat", low=0.0, high=1.0, low_inclusive=True, high_inclusive=True,
                        hint="qhat is a threshold on scores normalised to [0, 1]")
    score_bound = _check_positive(score_bound, "score_bound",
                                  "K is a public bound on the normalised residual, chosen before seeing the data")
    half = np.full(y_pred.size, math.inf) if qhat >= 1.0 else score_bound * qhat * scale
    return np.column_stack([y_pred - half, y_pred + half])


def _check_trainer_privacy(privacy, name: str):
    if privacy is None:
        return None
    if not isinstance(privacy, (tuple, list)) or len(privacy) != 2:
        raise TypeError(f"{name} must be None (a model trained on public data) or a pair (epsilon, delta), "
                        "the trainer's add/remove guarantee (e.g. DPRidgeRegression.privacy_)")
    return check_epsilon(privacy[0], f"{name}[0] (epsilon)"), check_delta(privacy[1], f"{name}[1] (delta)")


def adaptive_privacy_account(mean_privacy, scale_privacy, calibration_epsilon: float, *,
                             calibration_level: float | None = None, disjoint: bool = True) -> dict:
    """Privacy account of the adaptive private interval pipeline, under both neighbour relations (chapter 17).

    Components (each stated for its own part of the data):

    * the mean and the scale trainer, each :math:`(\\varepsilon_j, \\delta_j)`-DP
      under **add/remove** for every data size (the package's trainers,
      ``privacy_`` attribute); under **replace-one** a replacement is a removal
      and an addition, so by group privacy each is
      :math:`(2\\varepsilon_j, (1+e^{\\varepsilon_j})\\delta_j)`-DP (a bound; the
      exact value depends on the mechanism);
    * the calibration, the tight private quantile with budget
      :math:`\\varepsilon_c` and a public size :math:`n`: exactly
      :math:`\\varepsilon_c` under replace-one and
      :math:`\\varepsilon_c\\max(\\alpha_0, 1-\\alpha_0)` under add/remove, where
      :math:`\\alpha_0` is its level (:func:`~dpcp_tutorial.private_quantile_level`);
      without ``calibration_level`` the bound :math:`\\varepsilon_c` is used.

    ``disjoint=True`` (three disjoint parts; each record's part decided by its
    own random draw or public key, independently of the values and of the
    other records, so that adding or removing a record moves no other record;
    under replace-one a fixed-size random split of fixed positions suffices):
    parallel composition, :math:`(\\max_j \\varepsilon_j, \\max_j \\delta_j)`. The
    later steps take the earlier releases as public inputs; for neighbours that
    differ in part :math:`j`, the releases before :math:`j` have the same law and
    those after are post-processing given the release of part :math:`j`.
    ``disjoint=False`` (every step reads the same records): basic sequential
    composition, :math:`(\\sum_j \\varepsilon_j, \\sum_j \\delta_j)`.

    Parameters
    ----------
    mean_privacy, scale_privacy : (epsilon, delta) or None
        The trainers' add/remove guarantees; ``None`` for a model that reads no
        private data (trained on public data, or absent, e.g. a constant scale).
    calibration_epsilon : float
        Budget of the private quantile.
    calibration_level : float, optional
        Its level :math:`\\alpha_0 \\in (0, 1)` (public; sharpens add/remove).
    disjoint : bool
        Whether the three steps read disjoint parts of the data.

    Returns
    -------
    dict
        ``{"add/remove": (epsilon, delta), "replace-one": (epsilon, delta)}``
        (plain floats). The record count of each part is public under
        replace-one; under add/remove only the calibration's size parameter
        :math:`n` is public (the trainers need no size).
    """
    mean = _check_trainer_privacy(mean_privacy, "mean_privacy")
    scale = _check_trainer_privacy(scale_privacy, "scale_privacy")
    eps_c = check_epsilon(calibration_epsilon, "calibration_epsilon")
    disjoint = check_bool(disjoint, "disjoint")
    if calibration_level is None:
        cal_ar = eps_c
    else:
        level = check_scalar(calibration_level, "calibration_level", low=0.0, high=1.0,
                             hint="the level alpha0 of the tight private quantile (private_quantile_level)")
        cal_ar = eps_c * max(level, 1.0 - level)
    trainers = [t for t in (mean, scale) if t is not None]
    parts = {
        "add/remove": [(e, d) for e, d in trainers] + [(cal_ar, 0.0)],
        "replace-one": [(2.0 * e, (1.0 + math.exp(e)) * d) for e, d in trainers] + [(eps_c, 0.0)],
    }
    combine = max if disjoint else sum
    return {relation: (float(combine(e for e, _ in steps)), float(min(1.0, combine(d for _, d in steps))))
            for relation, steps in parts.items()}


def _trainer_privacy(model):
    """The ``privacy_`` pair of a fitted trainer (or of the last step of a pipeline), else None."""
    last = model.steps[-1][1] if isinstance(model, Pipeline) else model
    return getattr(last, "privacy_", None)


class PrivateNormalizedConformalRegressor(BaseEstimator):
    """Adaptive private split conformal intervals with a DP-trained scale model (chapter 17).

    ``fit(X1, y1)`` trains a clone of ``mean_estimator`` (part 1);
    ``fit_scale(X2, y2)`` trains a clone of ``scale_estimator`` on the absolute
    (or log) residuals of the mean model (part 2); ``calibrate(X3, y3)``
    releases the threshold :math:`\\hat q` of the scores
    :func:`normalized_score` with the tight private quantile (part 3);
    ``predict_interval`` returns :math:`\\hat\\mu(x) \\pm K\\hat\\sigma(x)\\hat q`.

    Parameters
    ----------
    mean_estimator : scikit-learn regressor
        For a private pipeline, a DP trainer (e.g.
        :class:`~dpcp_tutorial.DPRidgeRegression`, possibly after a public,
        data-independent feature map in a :class:`sklearn.pipeline.Pipeline`).
    scale_estimator : scikit-learn regressor or None
        The scale model (a DP trainer whose public label bound covers the
        targets: :math:`[0, 2Y]` for ``"abs"``). ``None``: constant scale 1
        (the constant-width private interval).
    alpha : float
        Target miscoverage.
    epsilon : float
        Budget of the private quantile (the trainers carry their own).
    y_bound : float
        Public bound :math:`Y` on the responses (and the mean predictions).
    sigma_min : float
        Public floor of the scale, :math:`\\hat\\sigma(x) \\ge \\sigma_{\\min} > 0`.
    score_bound : float or None
        Public :math:`K`; ``None``: :math:`2Y/\\sigma_{\\min}` (:math:`2Y` with a
        constant scale), which never clips a response inside :math:`[-Y, Y]`.
    bins : int
        Edges of the private quantile (:math:`j/M`).
    scale_target : {"abs", "log"}
        Target of the scale model: :math:`|r|` or :math:`\\log(|r| + \\sigma_{\\min})`.
    n : int or None
        Public calibration size, used for the quantile's level; ``None``: the
        number of calibration records, declared public. The coverage proof
        needs exactly ``n`` calibration records; the add/remove privacy
        statement (level from this public ``n``) covers neighbours whose sizes
        differ by one, as for :func:`~dpcp_tutorial.private_quantile`.
    prefit : bool
        Whether both models are already fitted (then only ``calibrate``).
    rng : None, int or numpy.random.Generator
        Randomness of the private quantile.

    Attributes
    ----------
    mean_estimator_, scale_estimator_ : fitted models
    qhat_ : float
        The released threshold on the normalised scale.
    level_ : float
        The level :math:`\\alpha_0` of the private quantile.
    score_bound_ : float
        The :math:`K` used.

    Notes
    -----
    **Privacy.** See :func:`adaptive_privacy_account` (and
    :meth:`privacy_account`, which reads the trainers' ``privacy_``): with the
    three parts disjoint and each record's part decided by its own random
    draw (independent of the values and of the other records), the
    pipeline is :math:`(\\max_j\\varepsilon_j, \\max_j\\delta_j)`-DP under add/remove
    (calibration size :math:`n` public) and, with the trainers' replace-one
    bounds :math:`(2\\varepsilon_j, (1+e^{\\varepsilon_j})\\delta_j)` and the exact
    :math:`\\varepsilon` of the quantile, :math:`\\max`-DP under replace-one.
    No branch, error or message of ``calibrate`` depends on the private values
    beyond the data-domain checks (NaN/inf, one fixed message each).

    **Coverage.** Given parts 1 and 2 (hence :math:`\\hat\\mu`, :math:`\\hat\\sigma`),
    the scores of part 3 and of a test point are i.i.d., so
    :math:`P(s_{n+1} \\le \\hat q) \\ge 1-\\alpha` by the tight private quantile's
    guarantee, and :math:`s \\le \\hat q` is exactly :math:`Y \\in` the interval.
    """

    def __init__(self, mean_estimator, scale_estimator=None, alpha: float = 0.1, epsilon: float = 1.0,
                 y_bound: float = 1.0, sigma_min: float = 0.01, score_bound: float | None = None,
                 bins: int = 1000, scale_target: str = "abs", n: int | None = None, prefit: bool = False,
                 rng: RandomLike = None):
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

    # ------------------------------------------------------------------ public settings
    def _settings(self):
        y_bound = _check_positive(self.y_bound, "y_bound", "a public bound on |y| from domain knowledge")
        sigma_min = _check_positive(self.sigma_min, "sigma_min", "a public floor on the scale model, chosen "
                                    "before seeing the data")
        if self.scale_target not in _SCALE_TARGETS:
            raise ValueError(f"scale_target={self.scale_target!r} is not supported; choose 'abs' or 'log'")
        if self.score_bound is None:
            bound = 2.0 * y_bound / (sigma_min if self.scale_estimator is not None else 1.0)
        else:
            bound = _check_positive(self.score_bound, "score_bound", "K is a public bound on the normalised "
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
            raise ValueError(f"{type(self).__name__} is not fitted: call fit(X1, y1) first, or pass prefit=True "
                             "with fitted models")
        if self.scale_estimator is not None and not hasattr(self, "scale_estimator_"):
            raise ValueError(f"{type(self).__name__} has no scale model yet: call fit_scale(X2, y2) on a part of "
                             "the data disjoint from fit's and calibrate's")
        return self.mean_estimator_, getattr(self, "scale_estimator_", None)

    def fit(self, X, y):
        """Fit a clone of ``mean_estimator`` on part 1 (skipped when ``prefit``)."""
        if check_bool(self.prefit, "prefit"):
            raise ValueError("prefit=True: the models are already fitted; call calibrate(X3, y3) directly")
        self._settings()
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        self.mean_estimator_ = clone(self.mean_estimator).fit(X, y)
        if hasattr(self, "scale_estimator_"):
            del self.scale_estimator_      # a new mean model invalidates the scale model
        return self

    def fit_scale(self, X, y):
        """Fit a clone of ``scale_estimator`` on part 2: targets :math:`|y - \\hat\\mu(x)|` (or their log).

        With ``scale_estimator=None`` there is nothing to fit (and nothing is read).
        """
        if check_bool(self.prefit, "prefit"):
            raise ValueError("prefit=True: the models are already fitted; call calibrate(X3, y3) directly")
        y_bound, sigma_min, _ = self._settings()
        if not hasattr(self, "mean_estimator_"):
            raise ValueError(f"{type(self).__name__} is not fitted: call fit(X1, y1) before fit_scale(X2, y2)")
        if self.scale_estimator is None:
            return self
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        residual = np.minimum(np.abs(y - self.mean_estimator_.predict(X)), 2.0 * y_bound)
        target = residual if self.scale_target == "abs" else np.log(residual + sigma_min)
        self.scale_estimator_ = clone(self.scale_estimator).fit(X, target)
        return self

    def predict(self, X) -> np.ndarray:
        """Mean predictions :math:`\\hat\\mu(x)`."""
        mean, _ = self._models()
        return np.asarray(mean.predict(check_2d(X, "X")), dtype=float)

    def predict_scale(self, X) -> np.ndarray:
        """Scales :math:`\\hat\\sigma(x) = \\max(\\sigma_{\\min}, g(x))`; 1 without a scale model."""
        _, sigma_min, _ = self._settings()
        X = check_2d(X, "X")
        _, scale = self._models()
        if scale is None:
            return np.ones(X.shape[0])
        raw = np.asarray(scale.predict(X), dtype=float)
        if self.scale_target == "log":
            raw = np.exp(np.minimum(raw, 700.0))
        return np.maximum(raw, sigma_min)

    # ------------------------------------------------------------------ calibration
    def calibrate(self, X, y):
        """Release the private threshold ``qhat_`` from part 3."""
        alpha = check_alpha(self.alpha)
        epsilon = check_epsilon(self.epsilon)
        bins = check_positive_int(self.bins, "bins", minimum=2, maximum=10**6)
        _, _, bound = self._settings()
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        n = X.shape[0] if self.n is None else check_positive_int(self.n, "n")
        level = private_quantile_level(alpha, n, epsilon, bins)   # public inputs only (may raise: infeasible n)
        scores = normalized_score(y, self.predict(X), self.predict_scale(X), bound)
        self.qhat_ = private_quantile(scores, alpha, epsilon, bins, rng=check_random_state(self.rng), n=n)
        self.level_ = level
        self.n_ = n
        self.score_bound_ = bound
        return self

    def predict_interval(self, X) -> np.ndarray:
        """Intervals (n, 2): :math:`\\hat\\mu(x) \\pm K\\hat\\sigma(x)\\hat q`; the line when ``qhat_ == 1``."""
        if not hasattr(self, "qhat_"):
            raise ValueError(f"{type(self).__name__} is not calibrated: call calibrate(X3, y3) first")
        return normalized_interval(self.predict(X), self.predict_scale(X), self.qhat_, self.score_bound_)

    def privacy_account(self, disjoint: bool = True) -> dict:
        """:func:`adaptive_privacy_account` from the fitted trainers' ``privacy_`` and the calibration.

        Raises ``ValueError`` when a fitted model reports no ``privacy_`` (a
        non-private model: its account is not this estimator's to make).
        """
        if not hasattr(self, "qhat_"):
            raise ValueError(f"{type(self).__name__} is not calibrated: call calibrate(X3, y3) first")
        mean, scale = self._models()
        privacy = []
        for name, model in (("mean", mean), ("scale", scale)):
            if model is None:
                privacy.append(None)
                continue
            pair = _trainer_privacy(model)
            if pair is None:
                raise ValueError(f"the {name} model reports no privacy_ (it is not a DP trainer); compute the "
                                 "account with adaptive_privacy_account, passing None for a model trained on "
                                 "public data")
            privacy.append(pair)
        return adaptive_privacy_account(privacy[0], privacy[1], self.epsilon, calibration_level=self.level_,
                                        disjoint=disjoint)


# ---------------------------------------------------------------------------
# conformalised quantile regression with DP quantile regressors (optional part of issue 13, section 4)
# ---------------------------------------------------------------------------

class DPSGDQuantileRegressor(RegressorMixin, _DPSGDBase):
    __doc__ = """Linear quantile regression (pinball loss) trained with DP-SGD (chapter 17).

    Minimises :math:`\\sum_i \\rho_\\tau(y_i - \\theta^\\top x_i)` with
    :math:`\\rho_\\tau(u) = u(\\tau - 1\\{u < 0\\})`; the per-example gradient is
    :math:`(1\\{y_i < \\theta^\\top x_i\\} - \\tau)\\,x_i`, of norm at most
    :math:`\\max(\\tau, 1-\\tau)B` whatever :math:`y` is, so no label bound is
    needed (it is clipped to ``clip_norm`` like every DP-SGD gradient). Same
    loop and accounting as :class:`~dpcp_tutorial.DPSGDRegressor`:
""" + _SGD_DOC + """
    Parameters
    ----------
    quantile : float
        The level :math:`\\tau \\in (0, 1)`.
    noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, delta, l2 : see DPSGDRegressor
        As in :class:`~dpcp_tutorial.DPSGDRegressor`.
    x_bound, fit_intercept, rng, expected_batch_size, accountant, epsilon : see DPSGDRegressor
        As in :class:`~dpcp_tutorial.DPSGDRegressor`.

    Attributes
    ----------
    coef_, intercept_, epsilon_, privacy_, noise_multiplier_, expected_batch_size_, n_features_in_
        As in :class:`~dpcp_tutorial.DPSGDRegressor`; ``privacy_`` is ``(epsilon_, delta)`` under add/remove.
"""

    def __init__(self, quantile: float = 0.9, noise_multiplier: float = 1.0, clip_norm: float = 1.0,
                 sampling_rate: float = 0.05, steps: int = 300, learning_rate: float = 20.0, delta: float = 1e-6,
                 l2: float = 0.0, x_bound: float = 1.0, fit_intercept: bool = True, rng: RandomLike = None,
                 expected_batch_size: float | None = None, accountant: str = "rdp", epsilon: float | None = None):
        self.quantile = quantile
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.sampling_rate = sampling_rate
        self.steps = steps
        self.learning_rate = learning_rate
        self.delta = delta
        self.l2 = l2
        self.x_bound = x_bound
        self.fit_intercept = fit_intercept
        self.rng = rng
        self.expected_batch_size = expected_batch_size
        self.accountant = accountant
        self.epsilon = epsilon

    def fit(self, X, y):
        """Run DP-SGD on the pinball loss. Returns ``self``."""
        tau = check_alpha(self.quantile, "quantile")
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))

        def pinball_gradient(Z, Y):
            return (Y < Z).astype(float) - tau

        theta = self._run(X, y[:, None], pinball_gradient)[0]
        self.coef_ = theta[:-1] if self.fit_intercept else theta
        self.intercept_ = float(theta[-1]) if self.fit_intercept else 0.0
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted :math:`\\tau`-quantiles, on rows clipped to ``x_bound``."""
        check_is_fitted(self, "coef_")
        X = _check_features(X, self.n_features_in_, type(self).__name__)
        x_bound, _ = _check_bounds(self.x_bound)
        return _clip_rows(X, x_bound) @ self.coef_ + self.intercept_


def _check_score_bound(score_bound) -> float:
    return _check_positive(score_bound, "score_bound",
                           "K is a public bound on the CQR score, chosen before seeing the data")


def cqr_score(y_true, lower, upper, score_bound: float) -> np.ndarray:
    """Bounded conformalised-quantile-regression score (chapter 17).

    .. math:: E = \\max(\\hat q_{lo}(x) - y,\\ y - \\hat q_{hi}(x)), \\qquad
              s = \\tfrac12\\big(\\mathrm{clip}(E/K, -1, 1) + 1\\big) \\in [0, 1],

    with a public :math:`K > 0` (Romano et al., 2019, made bounded for the
    private quantile). :math:`s \\le \\hat q < 1` is exactly
    :math:`E \\le (2\\hat q - 1)K` (:func:`cqr_interval`).
    """
    score_bound = _check_score_bound(score_bound)
    y_true = check_1d(y_true, "y_true")
    lower = check_1d(lower, "lower")
    upper = check_1d(upper, "upper")
    check_same_length(("y_true", y_true), ("lower", lower), ("upper", upper))
    excess = np.maximum(lower - y_true, y_true - upper)
    return 0.5 * (np.clip(excess / score_bound, -1.0, 1.0) + 1.0)


def cqr_interval(lower, upper, qhat: float, score_bound: float) -> np.ndarray:
    """Intervals :math:`[\\hat q_{lo}(x) - t, \\hat q_{hi}(x) + t]`, :math:`t = (2\\hat q - 1)K` (chapter 17).

    :math:`\\{y : s(x, y) \\le \\hat q\\}` for :func:`cqr_score`; the whole line when
    :math:`\\hat q = 1`. The margin :math:`t` may be negative; a row with
    lower end above its upper end is an **empty** set (it covers nothing).

    Returns
    -------
    ndarray of shape (n, 2)
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
    return np.column_stack([lower - margin, upper + margin])


class PrivateConformalizedQuantileRegressor(BaseEstimator):
    """Private conformalised quantile regression (CQR) with DP quantile regressors (chapter 17).

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
    alpha, epsilon, bins, n, prefit, rng
        As in :class:`PrivateNormalizedConformalRegressor`.
    score_bound : float
        Public :math:`K > 0` of :func:`cqr_score`.

    Notes
    -----
    **Privacy.** :func:`adaptive_privacy_account` with the two trainers in
    place of the mean and the scale model (``disjoint=False`` if
    ``fit`` trained both on one part: then the trainers compose sequentially
    with each other, and in parallel with the calibration; the account with
    ``disjoint=False`` over all three steps is a valid upper bound).
    **Coverage.** Given the two models the scores of the calibration part and
    of a test point are exchangeable, so :math:`P(Y \\in C(X)) \\ge 1-\\alpha`.
    """

    def __init__(self, lower_estimator, upper_estimator, alpha: float = 0.1, epsilon: float = 1.0,
                 score_bound: float = 1.0, bins: int = 1000, n: int | None = None, prefit: bool = False,
                 rng: RandomLike = None):
        self.lower_estimator = lower_estimator
        self.upper_estimator = upper_estimator
        self.alpha = alpha
        self.epsilon = epsilon
        self.score_bound = score_bound
        self.bins = bins
        self.n = n
        self.prefit = prefit
        self.rng = rng

    def _fit_one(self, which: str, X, y):
        if check_bool(self.prefit, "prefit"):
            raise ValueError("prefit=True: the models are already fitted; call calibrate(X, y) directly")
        _check_score_bound(self.score_bound)
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        setattr(self, f"{which}_estimator_", clone(getattr(self, f"{which}_estimator")).fit(X, y))
        return self

    def fit_lower(self, X, y):
        """Fit a clone of ``lower_estimator``."""
        return self._fit_one("lower", X, y)

    def fit_upper(self, X, y):
        """Fit a clone of ``upper_estimator``."""
        return self._fit_one("upper", X, y)

    def fit(self, X, y):
        """Fit both quantile models on the same data (their budgets then add up)."""
        return self.fit_lower(X, y).fit_upper(X, y)

    def _models(self):
        if check_bool(self.prefit, "prefit"):
            check_is_fitted(self.lower_estimator)
            check_is_fitted(self.upper_estimator)
            return self.lower_estimator, self.upper_estimator
        if not (hasattr(self, "lower_estimator_") and hasattr(self, "upper_estimator_")):
            raise ValueError(f"{type(self).__name__} is not fitted: call fit_lower(X1, y1) and fit_upper(X2, y2) "
                             "(or fit(X, y)) first, or pass prefit=True with fitted models")
        return self.lower_estimator_, self.upper_estimator_

    def predict_quantiles(self, X) -> tuple[np.ndarray, np.ndarray]:
        """The two quantile models' predictions."""
        lower, upper = self._models()
        X = check_2d(X, "X")
        return np.asarray(lower.predict(X), dtype=float), np.asarray(upper.predict(X), dtype=float)

    def calibrate(self, X, y):
        """Release the private threshold ``qhat_``."""
        alpha = check_alpha(self.alpha)
        epsilon = check_epsilon(self.epsilon)
        bins = check_positive_int(self.bins, "bins", minimum=2, maximum=10**6)
        bound = _check_score_bound(self.score_bound)
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        n = X.shape[0] if self.n is None else check_positive_int(self.n, "n")
        level = private_quantile_level(alpha, n, epsilon, bins)   # public inputs only
        lower, upper = self.predict_quantiles(X)
        scores = cqr_score(y, lower, upper, bound)
        self.qhat_ = private_quantile(scores, alpha, epsilon, bins, rng=check_random_state(self.rng), n=n)
        self.level_ = level
        self.n_ = n
        return self

    def predict_interval(self, X) -> np.ndarray:
        """Intervals of shape (n, 2) (:func:`cqr_interval`; an empty set has lower > upper)."""
        if not hasattr(self, "qhat_"):
            raise ValueError(f"{type(self).__name__} is not calibrated: call calibrate(X, y) first")
        lower, upper = self.predict_quantiles(X)
        return cqr_interval(lower, upper, self.qhat_, self.score_bound)

    def privacy_account(self, disjoint: bool = True) -> dict:
        """:func:`adaptive_privacy_account` for the two quantile models and the calibration."""
        if not hasattr(self, "qhat_"):
            raise ValueError(f"{type(self).__name__} is not calibrated: call calibrate(X, y) first")
        pairs = []
        for name, model in zip(("lower", "upper"), self._models()):
            pair = _trainer_privacy(model)
            if pair is None:
                raise ValueError(f"the {name} model reports no privacy_ (it is not a DP trainer); compute the "
                                 "account with adaptive_privacy_account")
            pairs.append(pair)
        return adaptive_privacy_account(pairs[0], pairs[1], self.epsilon, calibration_level=self.level_,
                                        disjoint=disjoint)
