"""Ridge regression by sufficient-statistics perturbation, add/remove DP (chapter 7).

The upper triangle of :math:`X^\\top X` and :math:`X^\\top y` are released once
with the analytic Gaussian mechanism (the L2-Laplace mechanism when
:math:`\\delta = 0`); adding a point changes them by :math:`x x^\\top` and
:math:`x y`, whose norms are bounded by the public bounds alone.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    REQUIRED,
    RandomLike,
    check_1d,
    check_2d,
    check_bool,
    check_delta,
    check_epsilon,
    check_random_state,
    check_same_length,
    check_scalar,
    renamed_keywords,
)
from ._common import (
    check_bounds,
    check_relation,
    clip_rows,
    draw_noise,
    fit_clip_factors,
    fit_features,
    prediction_features,
    require_bounds,
    row_bound,
    rows_per_block,
    trainer_privacy_account,
    unit_noise_scale,
)

__all__ = ["ssp_sensitivity", "private_sufficient_statistics", "DPRidgeRegression"]


@renamed_keywords(neighbouring="relation")
def ssp_sensitivity(x_bound: float, y_bound: float, fit_intercept: bool = True,
                    relation: str = "add/remove") -> float:
    """L2 sensitivity of the ridge sufficient statistics (chapter 7).

    The released vector is the upper triangle (diagonal included) of
    :math:`X^\\top X` together with :math:`X^\\top y`, computed on augmented rows
    of norm at most :math:`B` (:math:`B^2 = x_{\\max}^2 + 1` with an intercept,
    :math:`x_{\\max}^2` without) and labels in :math:`[-Y, Y]`.

    *Add/remove.* One point :math:`(x, y)` adds :math:`x x^\\top` and :math:`x y`.
    The squared norm of the upper triangle of :math:`x x^\\top` is
    :math:`\\sum_{i \\le j} x_i^2 x_j^2 = (\\|x\\|^4 + \\sum_i x_i^4)/2 \\le \\|x\\|^4`,
    so

    .. math:: \\Delta_{\\mathrm{AR}} = \\sqrt{B^4 + B^2 Y^2} = B\\sqrt{B^2 + Y^2},

    with equality for a feature vector on a coordinate axis (no intercept). The
    bound involves only public constants, never :math:`n`.

    *Replace-one.* Removing one point and adding another: by the triangle
    inequality :math:`\\Delta_{\\mathrm{RO}} \\le 2\\Delta_{\\mathrm{AR}}`, the value returned.

    Parameters
    ----------
    x_bound, y_bound : float
        Public bounds on the feature-row norm and the label magnitude.
    fit_intercept : bool, default=True
        Whether a column of ones is appended.
    relation : {"add/remove", "replace-one"}, default="add/remove"
        The neighbour relation (the old keyword ``neighbouring=`` still works,
        with a FutureWarning).

    Returns
    -------
    float

    Examples
    --------
    >>> round(ssp_sensitivity(1.0, 2.0), 4)            # B = sqrt(2): sqrt(2) * sqrt(2 + 4)
    3.4641
    >>> round(ssp_sensitivity(1.0, 2.0, relation="replace-one"), 4)
    6.9282
    """
    x_bound, y_bound = check_bounds(x_bound, y_bound)
    b = row_bound(x_bound, check_bool(fit_intercept, "fit_intercept"))
    delta_ar = b * math.sqrt(b**2 + y_bound**2)
    return delta_ar if check_relation(relation) == "add/remove" else 2.0 * delta_ar


def _sufficient_statistics(Xa: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact :math:`X^\\top X` and :math:`X^\\top y` of an augmented, clipped design."""
    return Xa.T @ Xa, Xa.T @ y


def _clipped_statistics(X: np.ndarray, y: np.ndarray, x_bound: float,
                        fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sufficient_statistics` of ``clipped_design(X, x_bound, fit_intercept)``, the design never built.

    The design is built block by block (:func:`rows_per_block`) in one reused
    buffer and each block's :math:`X_a^\\top X_a` (a symmetric rank update) and
    :math:`X_a^\\top y` are added: one pass over the data, no copy of it. Up to one
    block the arithmetic is that of the whole design.
    """
    n, d = X.shape
    p = d + 1 if fit_intercept else d
    factors = fit_clip_factors(X, x_bound)
    block = rows_per_block(n, p)
    gram, moment = np.zeros((p, p)), np.zeros(p)
    buffer = np.empty((min(n, block), p))
    if fit_intercept:
        buffer[:, d] = 1.0
    for start in range(0, n, block):
        rows = buffer[:min(n - start, block)]
        np.multiply(X[start:start + block], factors[start:start + block, None], out=rows[:, :d])
        gram += rows.T @ rows
        moment += rows.T @ y[start:start + block]
    return gram, moment


def private_sufficient_statistics(X, y, *, epsilon: float = 1.0, delta: float = 1e-6, x_bound=REQUIRED,
                                  y_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None):
    """Release :math:`X^\\top X` and :math:`X^\\top y` with add/remove DP (chapter 7).

    Clips each row of ``X`` to norm ``x_bound`` and each label to
    ``[-y_bound, y_bound]``, appends the intercept column if requested, and adds
    to the :math:`m = p(p+1)/2 + p` numbers (upper triangle of :math:`X^\\top X`,
    then :math:`X^\\top y`) one noise vector of scale
    :math:`s = \\Delta_{\\mathrm{AR}} \\cdot \\sigma_1(\\varepsilon, \\delta)`:
    the analytic Gaussian mechanism for :math:`\\delta > 0`
    (:func:`dpcp_tutorial.mechanisms.gaussian_sigma`), the L2-Laplace mechanism with
    :math:`s = \\Delta_{\\mathrm{AR}}/\\varepsilon` for :math:`\\delta = 0`. The noisy
    upper triangle is mirrored, so the returned Gram matrix is symmetric (this
    is post-processing). :math:`(\\varepsilon, \\delta)`-DP under add/remove for
    every :math:`n`; the sums do not depend on the order of the rows.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
    epsilon : float, default=1.0
        Privacy parameter :math:`\\varepsilon > 0`.
    delta : float, default=1e-06
        Privacy parameter :math:`0 \\le \\delta < 1` (0: the L2-Laplace mechanism).
    x_bound, y_bound : float
        Public clipping bounds, **required** (see :class:`DPRidgeRegression`).
    fit_intercept : bool, default=True
        Append a column of ones (it is the last coordinate).
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise; ``None`` for a real release (:term:`Seed`).

    Returns
    -------
    gram : ndarray of shape (p, p)
        Noisy, symmetric :math:`X^\\top X` (not necessarily positive semi-definite).
    moment : ndarray of shape (p,)
        Noisy :math:`X^\\top y`.
    noise_scale : float
        The Gaussian std (or L2-Laplace scale) :math:`s` that was used.
    mechanism : {"gaussian", "l2-laplace"}

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(1000, 2)); y = X @ [1.0, -1.0]
    >>> gram, moment, scale, mechanism = private_sufficient_statistics(
    ...     X, y, epsilon=1.0, x_bound=1.0, y_bound=1.0, rng=1)
    >>> gram.shape, moment.shape, mechanism, round(scale, 2)
    ((3, 3), (3,), 'gaussian', 10.35)
    """
    require_bounds("private_sufficient_statistics", x_bound, y_bound, needs_y=True)
    X = check_2d(X, "X")
    y = check_1d(y, "y")
    check_same_length(("X", X), ("y", y))
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    x_bound, y_bound = check_bounds(x_bound, y_bound)
    fit_intercept = check_bool(fit_intercept, "fit_intercept")
    rng = check_random_state(rng)

    gram, moment = _clipped_statistics(X, np.clip(y, -y_bound, y_bound), x_bound, fit_intercept)
    mechanism, per_unit = unit_noise_scale(epsilon, delta)
    noise_scale = ssp_sensitivity(x_bound, y_bound, fit_intercept) * per_unit
    p = gram.shape[0]
    upper = np.triu_indices(p)
    noise = draw_noise(len(upper[0]) + p, noise_scale, mechanism, rng)
    noise_gram = np.zeros((p, p))
    noise_gram[upper] = noise[: len(upper[0])]
    noise_gram = noise_gram + np.triu(noise_gram, 1).T
    return gram + noise_gram, moment + noise[len(upper[0]):], noise_scale, mechanism


class DPRidgeRegression(RegressorMixin, BaseEstimator):
    """Ridge regression by sufficient-statistics perturbation, add/remove DP (chapter 7).

    Releases the noisy statistics of :func:`private_sufficient_statistics`, then
    (post-processing, no privacy cost) projects the noisy Gram matrix onto the
    positive semi-definite cone (negative eigenvalues set to 0), adds the fixed
    public ridge term :math:`\\lambda I` and solves

    .. math:: \\hat\\theta = \\big(\\Pi_{\\succeq 0}(\\widetilde{X^\\top X}) + \\lambda I\\big)^{-1}\\,
              \\widetilde{X^\\top y},

    which always exists (every eigenvalue is at least :math:`\\lambda`). The noise
    has std :math:`s = B\\sqrt{B^2+Y^2}\\,\\sigma_1(\\varepsilon, \\delta)` with
    :math:`B^2 = x_{\\max}^2 + 1` (intercept) or :math:`x_{\\max}^2`; see
    :func:`ssp_sensitivity`. This is the "SSP" estimator of Wang (2018) and Sheffet
    (2017) with a fixed regulariser, calibrated for add/remove neighbours.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, positive.
    delta : float, default=1e-06
        In [0, 1). ``delta=0`` switches to the L2-Laplace mechanism (pure DP).
    l2 : float, default=1.0
        Ridge penalty :math:`\\lambda > 0` of the *sum*-form objective
        :math:`\\|y - X\\theta\\|^2 + \\lambda\\|\\theta\\|^2` (intercept included). It must be a
        public constant; it is not rescaled by :math:`n`.
    x_bound : float
        **Required** public bound: feature rows are clipped to Euclidean norm ``x_bound``, in
        ``fit`` and in ``predict``. The intercept column (a constant 1) is not
        part of this bound; it raises the row bound to :math:`\\sqrt{x_{\\max}^2+1}`.
    y_bound : float
        **Required** public bound: labels are clipped to ``[-y_bound, y_bound]`` before
        fitting, and predictions are clipped to the same interval (the
        projection onto the label range never increases the squared error to a
        label inside the range).
    fit_intercept : bool, default=True
        Append a constant column of ones (penalised like the other coefficients).
    rng : None, int or numpy.random.Generator, default=None
        Source of the privacy noise; ``None`` for a real release (:term:`Seed`).

    Attributes
    ----------
    coef_ : ndarray of shape (d,)
    intercept_ : float
    noise_scale_ : float
        Std of the Gaussian noise added to each statistic (L2-Laplace scale when
        ``delta=0``).
    sensitivity_ : float
        :math:`\\Delta_{\\mathrm{AR}}`.
    mechanism_ : {"gaussian", "l2-laplace"}
    privacy_ : PrivacyAccount
        :math:`(\\varepsilon, \\delta)` under add/remove for every data size
        (primary), :math:`(2\\varepsilon, (1+e^{\\varepsilon})\\delta)` under replace-one
        (group privacy); the rule for ``epsilon`` is in :mod:`dpcp_tutorial.accounting`.
    n_features_in_ : int
    feature_names_in_ : ndarray
        The column names when fitted on a DataFrame with string column names;
        a later frame is matched by name (reordered columns are read by name).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(5000, 2)); y = X @ [1.0, -1.0]
    >>> model = DPRidgeRegression(epsilon=1.0, l2=1.0, x_bound=1.0, y_bound=1.0, rng=1).fit(X, y)
    >>> np.round(model.coef_, 1)
    array([ 1., -1.])
    """

    relation = "add/remove"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, l2: float = 1.0, *, x_bound=REQUIRED,
                 y_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None):
        require_bounds(type(self).__name__, x_bound, y_bound, needs_y=True)
        self.epsilon = epsilon
        self.delta = delta
        self.l2 = l2
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.fit_intercept = fit_intercept
        self.rng = rng

    def fit(self, X, y):
        """Fit on ``(X, y)``; spends ``(epsilon, delta)`` once. Returns ``self``."""
        l2 = check_scalar(self.l2, "l2", low=0.0, hint="a positive public ridge penalty keeps the noisy system solvable")
        X = fit_features(X, self)
        gram, moment, noise_scale, mechanism = private_sufficient_statistics(
            X, y, epsilon=self.epsilon, delta=self.delta, x_bound=self.x_bound, y_bound=self.y_bound,
            fit_intercept=self.fit_intercept, rng=self.rng)
        eigenvalues, vectors = np.linalg.eigh(gram)
        theta = vectors @ ((vectors.T @ moment) / (np.maximum(eigenvalues, 0.0) + l2))
        self.coef_ = theta[:-1] if self.fit_intercept else theta
        self.intercept_ = float(theta[-1]) if self.fit_intercept else 0.0
        self.noise_scale_ = noise_scale
        self.sensitivity_ = ssp_sensitivity(self.x_bound, self.y_bound, self.fit_intercept)
        self.mechanism_ = mechanism
        self.privacy_ = trainer_privacy_account(
            f"DP ridge regression (sufficient statistics, {mechanism})", float(self.epsilon), float(self.delta),
            (f"x_bound = {float(self.x_bound):g}", f"y_bound = {float(self.y_bound):g}", f"l2 = {l2:g}",
             "the record count is not used"))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions :math:`\\mathrm{clip}(\\hat\\theta^\\top x, -Y, Y)` on rows clipped to ``x_bound``."""
        check_is_fitted(self, "coef_")
        X = prediction_features(X, self)
        pred = clip_rows(X, self.x_bound) @ self.coef_ + self.intercept_
        return np.clip(pred, -self.y_bound, self.y_bound)
