"""Training models with differential privacy under add/remove neighbours (chapter 7).

Differential CP and DPCP compare a model fitted on :math:`D_n` with one fitted on
:math:`D_n` plus one point, and the size :math:`n` is not public. A trainer used
there must therefore be :math:`(\\varepsilon, \\delta)`-DP under the **add/remove**
neighbour relation, for data sets of every size, and symmetric in its input.
Every estimator below satisfies this:

* :class:`DPRidgeRegression` -- *sufficient-statistics perturbation*: the
  upper triangle of :math:`X^\\top X` and :math:`X^\\top y` are released once with
  the analytic Gaussian mechanism (the L2-Laplace mechanism when
  :math:`\\delta = 0`); adding a point changes them by :math:`x x^\\top` and
  :math:`x y`, whose norms are bounded by the public bounds alone.
* :class:`DPLogisticRegression` -- *output perturbation* of the minimiser of a
  sum-form objective with a fixed ridge term :math:`\\lambda`; adding a point
  moves the minimiser by at most :math:`c_K B / \\lambda`, whatever :math:`n` is.
* :class:`DPSGDRegressor`, :class:`DPSGDClassifier` -- DP-SGD with Poisson
  subsampling, per-example clipping and Gaussian noise, accounted with Google's
  ``dp_accounting`` (its Poisson-subsampled Gaussian accountants are stated for
  add/remove).

Public bounds: each feature row is clipped to Euclidean norm ``x_bound`` and
each label to ``[-y_bound, y_bound]``. Both are **required** arguments (no
default): choose them from public knowledge -- the units of the features and of
the response, a physical, clinical or codebook range -- never from the data. With ``fit_intercept=True`` a constant
column of ones is appended *after* clipping, so an augmented row has norm at
most :math:`B = \\sqrt{x_{\\max}^2 + 1}` (``fit_intercept=False``:
:math:`B = x_{\\max}`); the intercept is penalised like every other coefficient.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math

import numpy as np
from scipy.special import expit, logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    as_array,
    REQUIRED,
    RandomLike,
    check_1d,
    check_2d,
    check_bool,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
    require,
)
from .accounting import single_mechanism_account
from .mechanisms import gaussian_sigma

__all__ = [
    "ssp_sensitivity",
    "output_perturbation_sensitivity",
    "private_sufficient_statistics",
    "DPRidgeRegression",
    "DPLogisticRegression",
    "dp_sgd_epsilon",
    "dp_sgd_noise_multiplier",
    "DPSGDRegressor",
    "DPSGDClassifier",
]

NEIGHBOURING = ("add/remove", "replace-one")

_SOLVER_SLACK = 1e-6
"""The logistic solver stops only when :math:`\\|\\nabla J\\| \\le 10^{-6} B`, which
certifies :math:`\\|\\hat\\theta - \\theta^*\\| \\le 10^{-6} B/\\lambda` by strong
convexity; the sensitivity adds twice this slack."""


# ---------------------------------------------------------------------------
# small helpers: public bounds and noise
# ---------------------------------------------------------------------------

def _check_neighbouring(neighbouring: str) -> str:
    return check_choice(neighbouring, "neighbouring", NEIGHBOURING,
                        "'add/remove': one record added or removed; 'replace-one': one record replaced")


_check_bool = check_bool


def _row_bound(x_bound: float, fit_intercept: bool) -> float:
    """Norm bound :math:`B` of an augmented row (the intercept column adds 1 to :math:`B^2`)."""
    return math.sqrt(x_bound**2 + 1.0) if fit_intercept else x_bound


def _clip_factors(norms: np.ndarray, bound: float) -> np.ndarray:
    """:math:`\\min(1, \\text{bound}/\\|v\\|)` for each norm, computed only where it is below 1 (so no overflow)."""
    return np.divide(bound, norms, out=np.ones_like(norms), where=norms > bound)


def _row_norms(X: np.ndarray) -> np.ndarray:
    """Euclidean norm of every row, as :func:`numpy.linalg.norm` computes it (the square root of the
    row sums of squares), the squares written block by block into one buffer of at most
    :data:`_BLOCK_BYTES`: no temporary of the size of a large ``X``."""
    n, d = X.shape
    block = max(1024, _BLOCK_BYTES // (8 * max(d, 1)))
    norms = np.empty(n)
    fortran = X.flags.f_contiguous and not X.flags.c_contiguous     # same layout, same order of summation
    buffer = np.empty((min(n, block), d), order="F" if fortran else "C")
    for start in range(0, n, block):
        squares = buffer[:min(n - start, block)]
        np.multiply(X[start:start + block], X[start:start + block], out=squares)
        np.add.reduce(squares, axis=1, out=norms[start:start + block])
    return np.sqrt(norms, out=norms)


def _fit_clip_factors(X: np.ndarray, bound: float) -> np.ndarray:
    """Clip factors of the rows of the data a model is fitted on.

    Up to one block (:data:`_BLOCK_BYTES`) they are those of :func:`_row_norms`
    (the arithmetic of :func:`_design`); above, the squared norms are summed by
    one :func:`numpy.einsum` pass (no temporary, four times faster than the
    blocked squares). The two differ at most in the last bits of a clipped row's
    factor.
    """
    if X.size * 8 <= _BLOCK_BYTES:
        return _clip_factors(_row_norms(X), bound)
    return _clip_factors(np.sqrt(np.einsum("ij,ij->i", X, X)), bound)


def _clip_rows(X: np.ndarray, bound: float) -> np.ndarray:
    """Rescale every row with Euclidean norm above ``bound`` to norm ``bound``."""
    return X * _clip_factors(_row_norms(X), bound)[:, None]


def _design(X: np.ndarray, x_bound: float, fit_intercept: bool) -> np.ndarray:
    """Clip rows to ``x_bound``, then append the intercept column of ones if requested (one new array)."""
    n, d = X.shape
    Xa = np.empty((n, d + 1) if fit_intercept else (n, d))
    np.multiply(X, _clip_factors(_row_norms(X), x_bound)[:, None], out=Xa[:, :d])
    if fit_intercept:
        Xa[:, d] = 1.0
    return Xa


_BLOCK_BYTES = 1 << 24
"""Size of one block of rows (16 MiB) in the row-block loops (ridge statistics, logistic Hessian): a bounded
buffer instead of a scaled copy of the whole data, and few enough BLAS calls that a multi-threaded BLAS
works on large blocks."""

_CACHE_BLOCK_BYTES = 1 << 20
"""Block size (1 MiB) of the row-block loops on data larger than :data:`_BLOCK_BYTES`: the scaled block
is still in the CPU cache when the BLAS reads it back (about twice as fast as 16 MiB blocks)."""


def _rows_per_block(n: int, p: int) -> int:
    """Rows per block of a row-block loop over ``n`` rows of ``p`` columns: all of them up to
    :data:`_BLOCK_BYTES` (the arithmetic of the whole design), cache-sized blocks above."""
    size = _BLOCK_BYTES if n * p * 8 <= _BLOCK_BYTES else min(_BLOCK_BYTES, _CACHE_BLOCK_BYTES)
    return max(1024, size // (8 * max(p, 1)))


def _noise_multiplier(epsilon: float, delta: float) -> tuple[str, float]:
    """Mechanism name and noise scale per unit of L2 sensitivity.

    :math:`\\delta > 0`: the analytic Gaussian mechanism (Balle & Wang, 2018), whose
    std :math:`\\sigma_1(\\varepsilon, \\delta)` for sensitivity 1 is the smallest with
    :math:`\\Phi(\\tfrac{1}{2\\sigma} - \\varepsilon\\sigma) - e^{\\varepsilon}\\Phi(-\\tfrac{1}{2\\sigma} - \\varepsilon\\sigma) \\le \\delta`
    (:func:`dpcp_tutorial.mechanisms.gaussian_sigma`, chapter 2); valid for every
    :math:`\\varepsilon > 0`. :math:`\\delta = 0`: the L2-Laplace mechanism, scale :math:`1/\\varepsilon`.
    """
    if delta == 0.0:
        return "l2-laplace", 1.0 / epsilon
    return "gaussian", gaussian_sigma(1.0, epsilon, delta)


def _draw_noise(shape, scale: float, mechanism: str, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise with std ``scale``, or L2-Laplace noise with density :math:`\\propto e^{-\\|z\\|/\\text{scale}}`.

    The L2-Laplace vector (Chaudhuri et al., 2011) is a uniform direction times a
    :math:`\\mathrm{Gamma}(m, \\text{scale})` radius, :math:`m` the dimension; with
    scale :math:`\\Delta/\\varepsilon` it is :math:`\\varepsilon`-DP for L2
    sensitivity :math:`\\Delta` (the log-density changes by at most
    :math:`\\|a - a'\\|/\\text{scale}` when the centre moves from :math:`a` to :math:`a'`).
    """
    if mechanism == "gaussian":
        return rng.normal(0.0, scale, size=shape)
    direction = rng.standard_normal(size=shape)
    direction /= np.linalg.norm(direction)
    return direction * rng.gamma(shape=direction.size, scale=scale)


X_BOUND_ADVICE = ("x_bound is a public bound on the Euclidean norm of a feature row (rows are clipped to it): take "
                  "it from the features' units and documented ranges, e.g. scale each of d features to [-1, 1] by "
                  "its public range and use x_bound = sqrt(d).")
Y_BOUND_ADVICE = ("y_bound is a public bound on |y| (labels and predictions are clipped to [-y_bound, y_bound]): "
                  "take it from the response's units and a physical, clinical or codebook range, e.g. a count "
                  "capped at its documented maximum.")


def _require_bounds(owner: str, x_bound, y_bound=None, needs_y: bool = False) -> None:
    """Refuse missing public bounds at construction (the advice says how to choose them)."""
    require(x_bound, "x_bound", owner, X_BOUND_ADVICE)
    if needs_y:
        require(y_bound, "y_bound", owner, Y_BOUND_ADVICE)


def trainer_privacy_account(label: str, epsilon: float, delta: float, public, *, n_public: bool = False):
    """``privacy_`` of a trainer that is (epsilon, delta)-DP under add/remove for every data size (chapter 7).

    Replace-one follows by group privacy. With ``n_public`` (a step size that
    divides by the data's own size) add/remove is not covered and the primary
    relation is replace-one: both data sets have the same size, so the
    normaliser is the same constant and group privacy of the add/remove
    guarantee at that normaliser applies.
    """
    if not n_public:
        return single_mechanism_account(label, (epsilon, delta), chapter="chapter 7", public=public)
    replace_one = single_mechanism_account(label, (epsilon, delta)).replace_one
    return single_mechanism_account(
        label, None, replace_one, relation="replace-one", chapter="chapter 7",
        public=tuple(public) + ("the record count n (expected_batch_size=None divides by sampling_rate * n)",),
        notes=("add/remove: not covered: the step divides by sampling_rate * n, the data's own size; pass a "
               "public expected_batch_size for an add/remove guarantee",
               "replace-one by group privacy of the add/remove guarantee at the fixed size n"))


def _check_bounds(x_bound, y_bound=None) -> tuple[float, float | None]:
    hint = "it is a public a-priori bound, never computed from the private data"
    x_bound = check_scalar(x_bound, "x_bound", low=0.0, hint=hint)
    if y_bound is not None:
        y_bound = check_scalar(y_bound, "y_bound", low=0.0, hint=hint)
    return x_bound, y_bound


def _check_features(X, n_features: int, name: str) -> np.ndarray:
    X = check_2d(X, "X")
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {name} was fitted with {n_features}; "
                         "pass the same columns as in fit")
    return X


# ---------------------------------------------------------------------------
# sufficient-statistics perturbation (ridge regression)
# ---------------------------------------------------------------------------

def ssp_sensitivity(x_bound: float, y_bound: float, fit_intercept: bool = True,
                    neighbouring: str = "add/remove") -> float:
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
    fit_intercept : bool
        Whether a column of ones is appended.
    neighbouring : {"add/remove", "replace-one"}
        The neighbour relation.

    Returns
    -------
    float
    """
    x_bound, y_bound = _check_bounds(x_bound, y_bound)
    b = _row_bound(x_bound, _check_bool(fit_intercept, "fit_intercept"))
    delta_ar = b * math.sqrt(b**2 + y_bound**2)
    return delta_ar if _check_neighbouring(neighbouring) == "add/remove" else 2.0 * delta_ar


def _sufficient_statistics(Xa: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact :math:`X^\\top X` and :math:`X^\\top y` of an augmented, clipped design."""
    return Xa.T @ Xa, Xa.T @ y


def _clipped_statistics(X: np.ndarray, y: np.ndarray, x_bound: float,
                        fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sufficient_statistics` of ``_design(X, x_bound, fit_intercept)`` without building the whole design.

    The design is built block by block (:func:`_rows_per_block`) in one reused
    buffer and each block's :math:`X_a^\\top X_a` (a symmetric rank update) and
    :math:`X_a^\\top y` are added: one pass over the data, no copy of it. Up to one
    block the arithmetic is that of the whole design.
    """
    n, d = X.shape
    p = d + 1 if fit_intercept else d
    factors = _fit_clip_factors(X, x_bound)
    block = _rows_per_block(n, p)
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
    epsilon, delta : float
        Privacy parameters, :math:`\\varepsilon > 0`, :math:`0 \\le \\delta < 1`.
    x_bound, y_bound : float
        Public clipping bounds, **required** (see :class:`DPRidgeRegression`).
    fit_intercept : bool
        Append a column of ones (it is the last coordinate).
    rng : None, int or numpy.random.Generator
        Source of the noise. A known seed makes the release reproducible by
        anyone who knows it, hence not private: use ``rng=None`` (fresh OS
        entropy) for a real release.

    Returns
    -------
    gram : ndarray of shape (p, p)
        Noisy, symmetric :math:`X^\\top X` (not necessarily positive semi-definite).
    moment : ndarray of shape (p,)
        Noisy :math:`X^\\top y`.
    noise_scale : float
        The Gaussian std (or L2-Laplace scale) :math:`s` that was used.
    mechanism : {"gaussian", "l2-laplace"}
    """
    _require_bounds("private_sufficient_statistics", x_bound, y_bound, needs_y=True)
    X = check_2d(X, "X")
    y = check_1d(y, "y")
    check_same_length(("X", X), ("y", y))
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    x_bound, y_bound = _check_bounds(x_bound, y_bound)
    fit_intercept = _check_bool(fit_intercept, "fit_intercept")
    rng = check_random_state(rng)

    gram, moment = _clipped_statistics(X, np.clip(y, -y_bound, y_bound), x_bound, fit_intercept)
    mechanism, per_unit = _noise_multiplier(epsilon, delta)
    noise_scale = ssp_sensitivity(x_bound, y_bound, fit_intercept) * per_unit
    p = gram.shape[0]
    upper = np.triu_indices(p)
    noise = _draw_noise(len(upper[0]) + p, noise_scale, mechanism, rng)
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
    epsilon : float
        Privacy budget, positive.
    delta : float
        In [0, 1). ``delta=0`` switches to the L2-Laplace mechanism (pure DP).
    l2 : float
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
    fit_intercept : bool
        Append a constant column of ones (penalised like the other coefficients).
    rng : None, int or numpy.random.Generator
        Source of the privacy noise. A known seed makes the release
        reproducible by anyone who knows it, hence not private: use
        ``rng=None`` (fresh OS entropy) for a real release.

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

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(5000, 2)); y = X @ [1.0, -1.0]
    >>> model = DPRidgeRegression(epsilon=1.0, l2=1.0, x_bound=1.0, y_bound=1.0, rng=1).fit(X, y)
    >>> np.round(model.coef_, 1)
    array([ 1., -1.])
    """

    neighbouring = "add/remove"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, l2: float = 1.0, *, x_bound=REQUIRED,
                 y_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None):
        _require_bounds(type(self).__name__, x_bound, y_bound, needs_y=True)
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
        X = check_2d(X, "X")
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
        X = _check_features(X, self.n_features_in_, type(self).__name__)
        pred = _clip_rows(X, self.x_bound) @ self.coef_ + self.intercept_
        return np.clip(pred, -self.y_bound, self.y_bound)


# ---------------------------------------------------------------------------
# output perturbation (logistic regression)
# ---------------------------------------------------------------------------

def output_perturbation_sensitivity(x_bound: float, l2: float, fit_intercept: bool = True, n_classes: int = 2,
                                    neighbouring: str = "add/remove") -> float:
    """L2 sensitivity of the regularised logistic minimiser (chapter 7).

    The minimiser of the sum-form objective
    :math:`J_D(\\theta) = \\sum_{z \\in D} \\ell(\\theta; z) + \\tfrac{\\lambda}{2}\\|\\theta\\|^2`
    with a fixed :math:`\\lambda`. If :math:`G` is :math:`\\lambda`-strongly convex
    and :math:`g` is convex with :math:`\\|\\nabla g\\| \\le L`, the minimisers of
    :math:`G` and :math:`G + g` are at most :math:`L/\\lambda` apart. Adding a point
    adds :math:`g = \\ell(\\cdot; z)`:

    * binary logistic loss: :math:`\\|\\nabla\\ell\\| = |\\sigma(\\theta^\\top x) - y|\\,\\|x\\| \\le B`;
    * softmax loss (K >= 3): :math:`\\|\\nabla\\ell\\|_F = \\|p - e_y\\|\\,\\|x\\| \\le \\sqrt 2 B`.

    Hence, for every :math:`n` (empty data set included),

    .. math:: \\Delta_{\\mathrm{AR}} = (c_K + 2\\cdot 10^{-6})\\,\\frac{B}{\\lambda},
              \\qquad c_2 = 1,\\ c_{K \\ge 3} = \\sqrt 2,

    where :math:`2\\cdot 10^{-6} B/\\lambda` covers the certified solver error of
    both fits. Replace-one (remove then add) doubles the :math:`c_K` term. The
    textbook replace-one bound :math:`2/(n\\Lambda)` of Chaudhuri et al. (2011)
    is this with :math:`\\lambda = n\\Lambda` and :math:`B = 1`: it needs :math:`n` public.

    Returns
    -------
    float
    """
    x_bound, _ = _check_bounds(x_bound)
    l2 = check_scalar(l2, "l2", low=0.0, hint="output perturbation needs a positive ridge penalty")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    c = 1.0 if n_classes == 2 else math.sqrt(2.0)
    if _check_neighbouring(neighbouring) == "replace-one":
        c *= 2.0
    return (c + 2.0 * _SOLVER_SLACK) * _row_bound(x_bound, _check_bool(fit_intercept, "fit_intercept")) / l2


def _logistic_loss(Z: np.ndarray, Y: np.ndarray) -> float:
    """:math:`\\sum_i \\ell` from the logits ``Z`` (n, K): logistic loss for one column, softmax loss for several."""
    if Z.shape[1] == 1:          # log(1 + e^z) = max(z, 0) + log1p(e^{-|z|}): a third of logaddexp's time
        return float(np.sum(np.log1p(np.exp(-np.abs(Z)))) + np.sum(np.maximum(Z, 0.0)) - np.vdot(Y, Z))
    return float(np.sum(logsumexp(Z, axis=1)) - np.vdot(Y, Z))


def _probabilities(Z: np.ndarray) -> np.ndarray:
    """Sigmoid of a single logit column, softmax of several."""
    return expit(Z) if Z.shape[1] == 1 else softmax(Z, axis=1)


class _ClippedDesign:
    """The design :math:`X_a = [\\,f \\odot X,\\ 1\\,]` (rows scaled by clip factors :math:`f`, then the
    intercept column) used through its products, never built: no copy of the data.

    ``_ClippedDesign(Xa)`` wraps an explicit design (no factors, no added column).
    """

    def __init__(self, X: np.ndarray, factors: np.ndarray | None = None, intercept: bool = False):
        self.X, self.factors, self.intercept = X, factors, intercept
        self.d = X.shape[1]
        self.p = self.d + intercept

    @classmethod
    def clipped(cls, X: np.ndarray, x_bound: float, fit_intercept: bool) -> _ClippedDesign:
        """The design of :func:`_design` (rows clipped to ``x_bound``, then the column of ones)."""
        return cls(X, _fit_clip_factors(X, x_bound), fit_intercept)

    def rows(self, stride: int) -> _ClippedDesign:
        """Every ``stride``-th row of the design (a view of the data, no copy)."""
        return type(self)(self.X[::stride], None if self.factors is None else self.factors[::stride],
                          self.intercept)

    def logits(self, theta: np.ndarray) -> np.ndarray:
        """:math:`X_a \\theta^\\top`, shape (n, K)."""
        Z = self.X @ theta[:, :self.d].T
        if self.factors is not None:
            Z *= self.factors[:, None]
        if self.intercept:
            Z += theta[:, self.d]
        return Z

    def gradient(self, R: np.ndarray) -> np.ndarray:
        """:math:`R^\\top X_a`, shape (K, p), for residuals ``R`` of shape (n, K)."""
        G = (R if self.factors is None else R * self.factors[:, None]).T @ self.X
        return np.column_stack([G, R.sum(axis=0)]) if self.intercept else G

    def weighted_blocks(self, weights: list[np.ndarray]):
        """For each block of rows (:data:`_CACHE_BLOCK_BYTES`): ``(start, rows)`` with ``rows[j]`` the rows of
        :math:`X_a` scaled by ``weights[j]`` (one multiply per weight, the clip factors folded into it).

        The buffers are reused from block to block: use a block before asking for the next.
        """
        n = self.X.shape[0]
        block = max(1024, min(_BLOCK_BYTES, _CACHE_BLOCK_BYTES) // (8 * self.p))    # cache-sized
        buffers = [np.empty((min(n, block), self.p)) for _ in weights]
        for start in range(0, n, block):
            stop = min(n, start + block)
            rows = []
            for weight, buffer in zip(weights, buffers):
                scaled = buffer[:stop - start]
                w = weight[start:stop] if self.factors is None else weight[start:stop] * self.factors[start:stop]
                np.multiply(self.X[start:stop], w[:, None], out=scaled[:, :self.d])
                if self.intercept:
                    scaled[:, self.d] = weight[start:stop]
                rows.append(scaled)
            yield start, rows


def _logistic_hessian(design, P: np.ndarray, l2: float) -> np.ndarray:
    """Hessian of the objective, shape (K p, K p).

    Block :math:`(k, l)` is :math:`X^\\top \\mathrm{diag}(P_k(\\delta_{kl} - P_l)) X`, plus :math:`\\lambda I` on the diagonal.

    ``design`` is an explicit design matrix or a :class:`_ClippedDesign`. A diagonal
    block is the Gram matrix of the rows scaled by :math:`\\sqrt{P_k(1-P_k)}` (a
    symmetric rank update); an off-diagonal block of the softmax loss is
    :math:`-X^\\top \\mathrm{diag}(P_k P_l) X`, the product of the rows scaled by
    :math:`P_k P_l` with the rows. Both are summed over cache-sized blocks of rows
    (:data:`_CACHE_BLOCK_BYTES`), so no weighted copy of the whole design is made.
    """
    if not isinstance(design, _ClippedDesign):
        design = _ClippedDesign(design)
    k, p = P.shape[1], design.p
    hessian = np.zeros((k * p, k * p))
    roots = [np.sqrt(P[:, a] * (1.0 - P[:, a])) for a in range(k)]
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    weights = roots + [P[:, a] * P[:, b] for a, b in pairs] + ([np.ones(P.shape[0])] if pairs else [])
    for _, rows in design.weighted_blocks(weights):
        for a in range(k):
            hessian[a * p:(a + 1) * p, a * p:(a + 1) * p] += rows[a].T @ rows[a]
        for j, (a, b) in enumerate(pairs):
            hessian[a * p:(a + 1) * p, b * p:(b + 1) * p] -= rows[k + j].T @ rows[-1]
    for a, b in pairs:
        hessian[b * p:(b + 1) * p, a * p:(a + 1) * p] = hessian[a * p:(a + 1) * p, b * p:(b + 1) * p].T
    hessian[np.diag_indices(k * p)] += l2
    return hessian


_HESSIAN_ROWS = 1 << 16
"""On more than twice this many rows the logistic solver's Newton systems use the Hessian of every
``n // _HESSIAN_ROWS``-th row (scaled to all rows) instead of the full one; see :func:`_minimise_logistic`."""


def _minimise_logistic(Xa, Y: np.ndarray, l2: float, grad_tol: float, max_iter: int = 200) -> np.ndarray:
    """Damped Newton for the sum-form regularised logistic (``Y`` of shape (n, 1)) or softmax objective.

    ``Xa`` is the design: an explicit matrix or a :class:`_ClippedDesign` (the
    clipped rows and the intercept column used through their products). From the
    data-independent start :math:`\\theta_0 = 0`, each step solves the Newton
    system and backtracks (halving) until the Armijo condition holds. The logits
    of a trial point :math:`\\theta - t\\,s` are :math:`Z - t\\,(X s)`, so a step
    costs two products with :math:`X` (the direction :math:`X s` and the gradient
    :math:`X^\\top(P - Y)`) and the Hessian; the accepted trial's logits are the
    next step's. Stops when :math:`\\|\\nabla J\\| \\le` ``grad_tol``; by
    :math:`\\lambda`-strong convexity the iterate is then within ``grad_tol / l2``
    of the exact minimiser.

    On :math:`n > 2\\cdot 2^{16}` rows the Newton systems use the Hessian of every
    :math:`s`-th row, :math:`s = \\lfloor n/2^{16} \\rfloor`, scaled by :math:`n/m`
    (:math:`m` rows used) plus :math:`\\lambda I`: positive definite, so each step is
    still a descent direction and the Armijo search ends, and close to the
    Hessian, so each step shrinks the gradient by a large factor (about
    :math:`\\sqrt{p/m}`). Its cost is :math:`1/s` of the full Hessian's, the most
    expensive part of a step. After the second step that shrinks the gradient
    norm by less than half, the remaining steps use the full Hessian. The
    stopping rule is the same test on the exact gradient of all rows, so the
    certificate (and the sensitivity that relies on it) does not depend on which
    Hessian guided the steps.
    """
    design = Xa if isinstance(Xa, _ClippedDesign) else _ClippedDesign(Xa)
    k, p, n = Y.shape[1], design.p, Y.shape[0]
    stride = n // _HESSIAN_ROWS if n > 2 * _HESSIAN_ROWS else 1
    theta = np.zeros((k, p))
    Z = np.zeros((n, k))                                            # the logits X theta at theta = 0
    f0 = _logistic_loss(Z, Y)
    previous, stalls = np.inf, 0
    for _ in range(max_iter):
        P = _probabilities(Z)
        grad = design.gradient(P - Y) + l2 * theta
        norm = np.linalg.norm(grad)
        if norm <= grad_tol:
            return theta
        stalls += norm > 0.5 * previous
        if stalls == 2:                                                 # subsampled steps stall: full Hessian
            stride = 1
        if stride > 1:
            sample = design.rows(stride)
            hessian = _logistic_hessian(sample, P[::stride], 0.0)
            hessian *= n / sample.X.shape[0]
            hessian[np.diag_indices(k * p)] += l2
        else:
            hessian = _logistic_hessian(design, P, l2)
        step = np.linalg.solve(hessian, grad.ravel()).reshape(k, p)
        slope, t = float(grad.ravel() @ step.ravel()), 1.0
        slack = 1e-12 * (1.0 + abs(f0))                                # tolerate rounding near the optimum
        direction = design.logits(step)
        while True:
            trial, Z_trial = theta - t * step, Z - t * direction
            f = _logistic_loss(Z_trial, Y) + 0.5 * l2 * float(np.sum(trial**2))
            if f <= f0 - 1e-4 * t * slope + slack or t <= 1e-12:
                break
            t *= 0.5
        theta, Z, f0, previous = trial, Z_trial, f, norm
    raise RuntimeError(f"the logistic solver did not certify its minimiser (gradient norm <= {grad_tol:.3g}) in "
                       f"{max_iter} Newton steps; increase l2 or reduce the number of features")


def check_classes(classes, owner: str) -> np.ndarray:
    """The public label set, sorted; required wherever a private release depends on it.

    Reading the label set from the data would make the release data-dependent:
    removing the only record of a class changes the model's shape or turns a
    result into an error (an infinite privacy loss). So ``classes=None`` is
    refused with the same message for every data set.
    """
    if classes is None:
        raise ValueError(f"{owner} needs the public label set: pass classes=[...] (e.g. classes=[0, 1]). "
                         "Reading the labels from the data would make the private release depend on which "
                         "classes happen to occur")
    if isinstance(classes, (str, bytes)) or np.ndim(classes) != 1:
        raise TypeError(f"classes must be a 1-D list of labels, got {type(classes).__name__}")
    values = as_array(classes, "classes")
    if values.dtype.kind == "c" or (values.dtype.kind == "f" and not np.all(np.isfinite(values))):
        raise ValueError("classes must be finite real labels or strings")
    classes_ = np.unique(values)
    if classes_.size != len(values) or classes_.size < 2:
        raise ValueError(f"classes={values.tolist()!r} must hold at least two distinct labels")
    return classes_


def _encode_labels(y, classes, owner: str = "this classifier") -> tuple[np.ndarray, np.ndarray]:
    """``classes_`` (the sorted public label set) and the index of each label in it.

    The label set is public (:func:`check_classes`). A label outside it is
    outside the data domain; the message is the same for every such data set
    (it names the public classes, never the offending values or their number).
    """
    classes_ = check_classes(classes, owner)
    y = as_array(y, "y")
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y must be a non-empty 1-D array of labels, got a {y.ndim}-D array" if y.ndim != 1
                         else "y must be a non-empty 1-D array of labels, got an empty one")
    if y.dtype.kind == "c":
        raise TypeError("y must hold real labels or strings, not complex numbers")
    try:
        index = np.searchsorted(classes_, y).clip(0, classes_.size - 1)
        unknown = classes_[index] != y
    except TypeError:          # e.g. string labels against numeric classes
        unknown = np.ones(y.shape, dtype=bool)
    if np.any(unknown):
        raise ValueError(f"y contains labels outside the public label set classes={classes_.tolist()} "
                         "(NaN included); remove those rows or fix classes")
    return classes_, index


def _one_hot(index: np.ndarray, n_classes: int) -> np.ndarray:
    """Targets: one 0/1 column for two classes, one-hot columns for more."""
    if n_classes == 2:
        return index[:, None].astype(float)
    return np.eye(n_classes)[index]


class _LinearClassifierMixin:
    """``predict_proba``/``predict`` shared by the private linear classifiers."""

    def _set_coefficients(self, theta: np.ndarray) -> None:
        self.coef_ = theta[:, :-1] if self.fit_intercept else theta
        self.intercept_ = theta[:, -1].copy() if self.fit_intercept else np.zeros(theta.shape[0])

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n, K), columns in the order of ``classes_``; rows sum to 1."""
        check_is_fitted(self, "coef_")
        X = _check_features(X, self.n_features_in_, type(self).__name__)
        Z = _clip_rows(X, self.x_bound) @ self.coef_.T + self.intercept_
        P = _probabilities(Z)
        return np.column_stack([1.0 - P[:, 0], P[:, 0]]) if P.shape[1] == 1 else P

    def predict(self, X) -> np.ndarray:
        """Most probable class of each row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class DPLogisticRegression(_LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Logistic regression by output perturbation, add/remove DP (chapter 7).

    1. Clip rows to ``x_bound``, append the intercept column.
    2. Minimise :math:`J_D(\\theta) = \\sum_i \\ell(\\theta; x_i, y_i) + \\tfrac{\\lambda}{2}\\|\\theta\\|^2`
       with damped Newton until :math:`\\|\\nabla J\\| \\le 10^{-6} B` (binary: logistic
       loss, one coefficient vector; :math:`K \\ge 3` classes: softmax loss, a
       :math:`K \\times p` matrix).
    3. Release :math:`\\hat\\theta + Z` with :math:`Z \\sim N(0, s^2 I)`,
       :math:`s = \\Delta_{\\mathrm{AR}}\\,\\sigma_1(\\varepsilon, \\delta)` and
       :math:`\\Delta_{\\mathrm{AR}} = (c_K + 2\\cdot 10^{-6})B/\\lambda`
       (:func:`output_perturbation_sensitivity`); for :math:`\\delta = 0`, L2-Laplace
       noise with scale :math:`\\Delta_{\\mathrm{AR}}/\\varepsilon` (Chaudhuri et al., 2011).

    The whole coefficient matrix is released once, so multiclass needs no budget
    split (the :math:`\\sqrt 2` of the softmax gradient is all it costs). The
    minimiser is unique and order-free (symmetric), and the bound holds for every
    :math:`n`: :math:`(\\varepsilon, \\delta)`-DP under add/remove.

    Parameters
    ----------
    epsilon, delta : float
        Privacy parameters (``delta=0`` gives pure DP with L2-Laplace noise).
    l2 : float
        Fixed public ridge penalty :math:`\\lambda > 0` of the sum-form objective
        (intercept included). Larger values mean less noise (:math:`\\propto 1/\\lambda`)
        and more shrinkage; a value of order :math:`\\Lambda n_0` for a planned,
        public size :math:`n_0` mimics the mean-form objective.
    x_bound : float
        **Required** public bound on the feature-row norm (rows are clipped in fit and predict;
        the intercept column raises the row bound to :math:`\\sqrt{x_{\\max}^2+1}`).
    fit_intercept : bool
    rng : None, int or numpy.random.Generator
        Source of the noise; a known seed makes the release reproducible by
        anyone (not private): use ``rng=None`` for a real release.
    classes : array-like
        The public label set, **required** by :meth:`fit` (e.g. ``[0, 1]``):
        reading it from ``y`` would make the release depend on which classes
        occur (removing the only record of a class would change the model or
        raise). Labels in ``classes`` but absent from ``y`` are fine.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    coef_ : ndarray of shape (1, d) for two classes, (K, d) otherwise
    intercept_ : ndarray of shape (1,) or (K,)
    noise_scale_ : float
        Std of the Gaussian noise on each coefficient (L2-Laplace scale if ``delta=0``).
    sensitivity_ : float
    mechanism_ : {"gaussian", "l2-laplace"}
    privacy_ : PrivacyAccount
        As in :class:`DPRidgeRegression`.
    n_features_in_ : int
    """

    neighbouring = "add/remove"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, l2: float = 1.0, *, x_bound=REQUIRED,
                 fit_intercept: bool = True, rng: RandomLike = None, classes=None):
        _require_bounds(type(self).__name__, x_bound)
        self.epsilon = epsilon
        self.delta = delta
        self.l2 = l2
        self.x_bound = x_bound
        self.fit_intercept = fit_intercept
        self.rng = rng
        self.classes = classes

    def fit(self, X, y):
        """Fit on ``(X, y)``; spends ``(epsilon, delta)`` once. Returns ``self``."""
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta)
        l2 = check_scalar(self.l2, "l2", low=0.0, hint="output perturbation needs a positive ridge penalty")
        x_bound, _ = _check_bounds(self.x_bound)
        fit_intercept = _check_bool(self.fit_intercept, "fit_intercept")
        X = check_2d(X, "X")
        classes_, index = _encode_labels(y, self.classes, "DPLogisticRegression")
        check_same_length(("X", X), ("y", index))
        rng = check_random_state(self.rng)

        bound = _row_bound(x_bound, fit_intercept)
        theta = _minimise_logistic(_ClippedDesign.clipped(X, x_bound, fit_intercept), _one_hot(index, classes_.size),
                                   l2, grad_tol=_SOLVER_SLACK * bound)
        sensitivity = output_perturbation_sensitivity(x_bound, l2, fit_intercept, classes_.size)
        mechanism, per_unit = _noise_multiplier(epsilon, delta)
        self.noise_scale_ = sensitivity * per_unit
        theta = theta + _draw_noise(theta.shape, self.noise_scale_, mechanism, rng)
        self.classes_ = classes_
        self._set_coefficients(theta)
        self.sensitivity_ = sensitivity
        self.mechanism_ = mechanism
        self.privacy_ = trainer_privacy_account(
            f"DP logistic regression (output perturbation, {mechanism})", epsilon, delta,
            (f"x_bound = {x_bound:g}", f"l2 = {l2:g}", f"classes = {classes_.tolist()}",
             "the record count is not used"))
        self.n_features_in_ = X.shape[1]
        return self


# ---------------------------------------------------------------------------
# DP-SGD and its accounting
# ---------------------------------------------------------------------------

@contextlib.contextmanager
def _quiet_absl():
    """Silence dp_accounting's "order excluded" log lines (the bound stays valid without those orders)."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _check_accountant(accountant: str) -> str:
    return check_choice(accountant, "accountant", ("rdp", "pld"),
                        "'rdp': Renyi DP (fast); 'pld': privacy loss distributions (tighter, slower)")


def _check_sgd_privacy(noise_multiplier, sampling_rate, steps, delta) -> tuple[float, float, int, float]:
    noise_multiplier = check_scalar(noise_multiplier, "noise_multiplier", low=0.0, low_inclusive=True)
    if 0.0 < noise_multiplier < 1e-4:
        raise ValueError(f"noise_multiplier={noise_multiplier:g} is too small to account for (below 1e-4 the "
                         "privacy loss is astronomically large); use 0 for no noise or at least 1e-4")
    sampling_rate = check_scalar(sampling_rate, "sampling_rate", low=0.0, high=1.0, high_inclusive=True,
                                 hint="it is the probability that an example enters a step's batch")
    steps = check_positive_int(steps, "steps", maximum=10 ** 8)
    delta = check_scalar(delta, "delta", low=0.0, high=1.0,
                         hint="DP-SGD's Gaussian noise needs 0 < delta < 1, far below 1/n")
    return noise_multiplier, sampling_rate, steps, delta


_MIN_RTOL = 1e-9      # dp_sgd_noise_multiplier's narrowest bracket (the accountants are not more precise)


def dp_sgd_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                   accountant: str = "rdp") -> float:
    """Epsilon of DP-SGD with Poisson subsampling, from Google's ``dp_accounting`` (chapter 7).

    The event is ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)``:
    each step includes every example independently with probability :math:`q`
    and adds :math:`N(0, \\sigma^2 C^2 I)` to the sum of gradients clipped to norm
    :math:`C`. It is accounted under the **add/remove** relation, either with
    Rényi DP (``"rdp"``, Mironov 2017; Mironov, Talwar & Zhang 2019) and the
    library's default orders, or with privacy loss distributions (``"pld"``,
    tighter, slower; discretisation interval :math:`10^{-4}`).

    Parameters
    ----------
    noise_multiplier : float
        :math:`\\sigma \\ge 0` (0 means no privacy: returns ``inf``).
    sampling_rate : float
        :math:`q \\in (0, 1]`.
    steps : int
        Number of noisy steps :math:`T`.
    delta : float
        Target :math:`\\delta \\in (0, 1)`.
    accountant : {"rdp", "pld"}

    Returns
    -------
    float
        The smallest :math:`\\varepsilon` the accountant certifies.

    Raises
    ------
    ImportError
        If ``dp_accounting`` is not installed (``pip install dp-accounting``).
    """
    noise_multiplier, sampling_rate, steps, delta = _check_sgd_privacy(noise_multiplier, sampling_rate, steps, delta)
    accountant = _check_accountant(accountant)
    if noise_multiplier == 0.0:
        return math.inf
    return _accounted_epsilon(noise_multiplier, sampling_rate, steps, delta, accountant)


@functools.lru_cache(maxsize=4096)
def _accounted_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                       accountant: str) -> float:
    """The dp_accounting computation behind :func:`dp_sgd_epsilon`, memoised (it is deterministic)."""
    try:
        import dp_accounting
    except ImportError:  # pragma: no cover - dp-accounting is in requirements.txt
        raise ImportError("dp_sgd_epsilon needs Google's dp-accounting: pip install dp-accounting") from None
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(sampling_rate, dp_accounting.GaussianDpEvent(noise_multiplier)), steps)
    if accountant == "rdp":
        acc = dp_accounting.rdp.RdpAccountant()
    else:
        acc = dp_accounting.pld.PLDAccountant()
    with _quiet_absl():
        acc.compose(event)
        return float(acc.get_epsilon(delta))


def dp_sgd_noise_multiplier(target_epsilon: float, sampling_rate: float, steps: int, delta: float,
                            accountant: str = "rdp", rtol: float = 1e-3) -> float:
    """Smallest noise multiplier whose DP-SGD epsilon is at most ``target_epsilon`` (chapter 7).

    :func:`dp_sgd_epsilon` decreases in :math:`\\sigma`. A bracket
    :math:`[\\sigma_{lo}, \\sigma_{hi}]` with :math:`\\varepsilon(\\sigma_{lo}) > \\varepsilon^* \\ge \\varepsilon(\\sigma_{hi})`
    is narrowed with secant steps through the last two evaluations of :math:`\\log\\varepsilon`
    against :math:`\\log\\sigma` (nearly linear), each followed by two probes :math:`(1 \\pm \\text{rtol}/3)` around the estimate, with a bisection
    step whenever the bracket does not halve. The returned :math:`\\sigma` is the upper end of the
    final bracket, so ``dp_sgd_epsilon(sigma, ...) <= target_epsilon`` always holds and
    :math:`\\sigma/(1 + \\text{rtol})` misses the target.

    Parameters
    ----------
    target_epsilon : float
    sampling_rate, steps, delta, accountant
        As in :func:`dp_sgd_epsilon`.
    rtol : float
        Relative width of the final bracket, in :math:`[10^{-9}, 1)` (a public
        tolerance: narrower brackets than :math:`10^{-9}` are below the
        accountant's own precision and would only cost time).

    Returns
    -------
    float
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    rtol = check_scalar(rtol, "rtol", low=_MIN_RTOL, high=1.0, low_inclusive=True,
                        hint=f"the relative width of the final bracket, between {_MIN_RTOL:g} (about 30 "
                             "accountant calls) and 1")
    _check_sgd_privacy(1.0, sampling_rate, steps, delta)     # every argument checked before the search
    accountant = _check_accountant(accountant)

    history: list[tuple[float, float]] = []   # (log sigma, excess) of every evaluation

    def excess(sigma: float) -> float:  # > 0: too little noise
        eps = dp_sgd_epsilon(sigma, sampling_rate, steps, delta, accountant)
        g = -math.inf if eps == 0.0 else math.log(eps / target_epsilon)  # the accountant may certify epsilon = 0
        history.append((math.log(sigma), g))
        return g

    lo = hi = 1.0
    g_hi = excess(hi)
    while g_hi > 0:
        lo, hi = hi, hi * 4.0
        if hi > 1e8:
            raise ValueError(f"target_epsilon={target_epsilon:g} is not reachable with noise_multiplier <= 1e8; "
                             "raise the target or lower sampling_rate or steps")
        g_hi = excess(hi)
    if lo == hi:
        g_lo = g_hi
        while g_lo <= 0:
            hi, g_hi, lo = lo, g_lo, lo / 4.0
            if lo < 1e-4:
                return hi
            g_lo = excess(lo)
    else:
        g_lo = excess(lo)

    def update(sigma: float) -> None:
        nonlocal lo, hi, g_lo, g_hi
        g = excess(sigma)
        if g > 0:
            lo, g_lo = sigma, g
        else:
            hi, g_hi = sigma, g

    while hi / lo - 1.0 > rtol:
        width = math.log(hi / lo)
        (u1, g1), (u2, g2) = history[-2:]
        if math.isfinite(g1) and math.isfinite(g2) and g1 != g2:
            log_guess = u2 - g2 * (u2 - u1) / (g2 - g1)
            # a guess more than a factor e outside the bracket has no probe inside it (rtol < 1): skipped, so
            # that exp never overflows
            guess = math.exp(log_guess) if math.log(lo) - 1.0 < log_guess < math.log(hi) + 1.0 else None
            for probe in () if guess is None else (guess * (1 - rtol / 3), guess * (1 + rtol / 3)):
                if lo < probe < hi:
                    update(probe)
        if math.log(hi / lo) > 0.5 * width:
            update(math.sqrt(lo * hi))
    return hi


def _sgd_residuals(kind, Z: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """:math:`\\partial\\ell/\\partial z`: ``z - y`` (squared loss), ``p - y`` (logistic / softmax);
    a callable ``kind`` gives ``kind(Z, Y)`` (the pinball loss of
    :class:`dpcp_tutorial.adaptive.DPSGDQuantileRegressor`)."""
    if callable(kind):
        return kind(Z, Y)
    if kind == "squared":
        return Z - Y
    return _probabilities(Z) - Y


def _dp_sgd(Xa: np.ndarray, Y: np.ndarray, kind: str, *, noise_multiplier: float, clip_norm: float,
            sampling_rate: float, steps: int, learning_rate: float, l2: float, batch_size: float,
            rng: np.random.Generator) -> np.ndarray:
    """The DP-SGD loop for linear models; returns the final iterate, shape (K, p).

    Per step: a Poisson sample (a Binomial(n, q) size, then a uniform subset of that
    size: the same law as independent inclusions), per-example gradients
    :math:`r_i \\otimes x_i` clipped to norm ``clip_norm``, their sum plus
    :math:`N(0, (\\sigma C)^2 I)`, divided by ``batch_size``, plus the public
    :math:`\\lambda\\theta`.
    """
    n, p = Xa.shape
    theta = np.zeros((Y.shape[1], p))
    row_norms = np.linalg.norm(Xa, axis=1)
    noise_std = noise_multiplier * clip_norm
    for _ in range(steps):
        m = rng.binomial(n, sampling_rate)
        idx = rng.choice(n, size=m, replace=False) if m else np.empty(0, dtype=int)
        Xb = Xa[idx]
        R = _sgd_residuals(kind, Xb @ theta.T, Y[idx])
        norms = np.linalg.norm(R, axis=1) * row_norms[idx]
        R = R * _clip_factors(norms, clip_norm)[:, None]
        noisy_sum = R.T @ Xb + rng.normal(0.0, noise_std, size=theta.shape)
        theta = theta - learning_rate * (noisy_sum / batch_size + l2 * theta)
    return theta


class _DPSGDBase(BaseEstimator):
    """Parameter checks and the privacy bookkeeping shared by the DP-SGD estimators."""

    neighbouring = "add/remove"

    def _run(self, X, Y: np.ndarray, kind: str) -> np.ndarray:
        noise_multiplier, sampling_rate, steps, delta = _check_sgd_privacy(
            self.noise_multiplier, self.sampling_rate, self.steps, self.delta)
        accountant = _check_accountant(self.accountant)
        if self.epsilon is not None:
            noise_multiplier = dp_sgd_noise_multiplier(check_epsilon(self.epsilon), sampling_rate, steps, delta,
                                                       accountant)
        clip_norm = check_scalar(self.clip_norm, "clip_norm", low=0.0)
        learning_rate = check_scalar(self.learning_rate, "learning_rate", low=0.0)
        l2 = check_scalar(self.l2, "l2", low=0.0, low_inclusive=True)
        x_bound, _ = _check_bounds(self.x_bound)
        fit_intercept = _check_bool(self.fit_intercept, "fit_intercept")
        rng = check_random_state(self.rng)
        if self.expected_batch_size is None:
            batch_size = sampling_rate * X.shape[0]
        else:
            batch_size = check_scalar(self.expected_batch_size, "expected_batch_size", low=1e-6,
                                      hint="a public constant such as sampling_rate * (planned data-set size)")
        theta = _dp_sgd(_design(X, x_bound, fit_intercept), Y, kind, noise_multiplier=noise_multiplier,
                        clip_norm=clip_norm, sampling_rate=sampling_rate, steps=steps,
                        learning_rate=learning_rate, l2=l2, batch_size=batch_size, rng=rng)
        self.expected_batch_size_ = batch_size
        self.noise_multiplier_ = noise_multiplier
        self.epsilon_ = dp_sgd_epsilon(noise_multiplier, sampling_rate, steps, delta, accountant)
        public = [f"x_bound = {x_bound:g}", f"clip_norm = {clip_norm:g}", f"sampling_rate = {sampling_rate:g}",
                  f"steps = {steps}", f"noise_multiplier = {noise_multiplier:.4g}"]
        if getattr(self, "y_bound", None) is not None:
            public.insert(1, f"y_bound = {float(self.y_bound):g}")
        if self.expected_batch_size is not None:
            public.append(f"expected_batch_size = {batch_size:g}")
        self.privacy_ = trainer_privacy_account(f"{type(self).__name__} (DP-SGD, {accountant} accountant)",
                                                self.epsilon_, delta, public,
                                                n_public=self.expected_batch_size is None)
        self.n_features_in_ = X.shape[1]
        return theta


_SGD_DOC = """
    Each of ``steps`` steps draws a Poisson sample (every example independently
    with probability ``sampling_rate``), clips each example's gradient to norm
    ``clip_norm``, adds :math:`N(0, (\\sigma C)^2 I)` to the *sum* and divides by
    the expected batch size :math:`b`, then takes a step
    :math:`\\theta \\leftarrow \\theta - \\eta\\,(\\tilde g / b + \\lambda\\theta)`
    from :math:`\\theta_0 = 0` (Abadi et al., 2016); the last iterate is returned.
    ``epsilon_`` comes from :func:`dp_sgd_epsilon` (add/remove). The output law
    does not depend on the order of the rows.

    The default :math:`b = q n` uses the data-set size. Under add/remove with a
    private :math:`n` (Differential CP and DPCP compare fits on :math:`n` and
    :math:`n+1` points) the step size must not depend on :math:`n`: pass
    ``expected_batch_size`` as a public constant, e.g. ``q * n0`` for a planned
    size ``n0``. Only then is the accountant's add/remove guarantee the
    guarantee of the released model.

    Passing ``epsilon`` instead calibrates the noise multiplier with
    :func:`dp_sgd_noise_multiplier` (``noise_multiplier`` is then ignored), so the
    estimator can be given a budget like the other trainers.
"""


class DPSGDRegressor(RegressorMixin, _DPSGDBase):
    __doc__ = """Linear regression (squared loss) trained with DP-SGD (chapter 7).
""" + _SGD_DOC + """
    Parameters
    ----------
    noise_multiplier : float
        :math:`\\sigma \\ge 0`.
    clip_norm : float
        Per-example gradient norm bound :math:`C`.
    sampling_rate : float
        Poisson sampling probability :math:`q \\in (0, 1]`.
    steps : int
        Number of steps :math:`T`.
    learning_rate : float
        :math:`\\eta`.
    delta : float
        Target :math:`\\delta \\in (0, 1)` for ``epsilon_``.
    l2 : float
        Ridge coefficient :math:`\\lambda \\ge 0` added to the averaged gradient.
    x_bound, y_bound : float
        **Required** public bounds: rows are clipped to norm ``x_bound`` and labels to
        ``[-y_bound, y_bound]``; predictions are clipped to ``[-y_bound, y_bound]``.
    fit_intercept : bool
    rng : None, int or numpy.random.Generator
        Source of the sampling and the noise; a known seed makes the release
        reproducible by anyone (not private): use ``rng=None`` for a real release.
    expected_batch_size : float or None
        Public divisor :math:`b`; ``None`` uses ``sampling_rate * n`` (see above).
    accountant : {"rdp", "pld"}
    epsilon : float or None
        Target budget; if given, ``noise_multiplier_`` is calibrated to it.

    Attributes
    ----------
    coef_ : ndarray of shape (d,)
    intercept_ : float
    epsilon_ : float
        The accountant's epsilon (at most ``epsilon`` when that is given).
    privacy_ : PrivacyAccount
        ``(epsilon_, delta)`` under add/remove (primary; with a public
        ``expected_batch_size``), replace-one by group privacy. With
        ``expected_batch_size=None`` the step divides by the data's own size:
        add/remove is then not covered and the primary relation is replace-one.
        The rule for ``epsilon`` (the total of what ``fit`` computes from the
        data) is in :mod:`dpcp_tutorial.accounting`.
    noise_multiplier_ : float
        The noise multiplier used.
    expected_batch_size_ : float
    n_features_in_ : int
"""

    def __init__(self, noise_multiplier: float = 1.0, clip_norm: float = 1.0, sampling_rate: float = 0.01,
                 steps: int = 1000, learning_rate: float = 0.2, delta: float = 1e-6, l2: float = 0.0, *,
                 x_bound=REQUIRED, y_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None,
                 expected_batch_size: float | None = None, accountant: str = "rdp", epsilon: float | None = None):
        _require_bounds(type(self).__name__, x_bound, y_bound, needs_y=True)
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.sampling_rate = sampling_rate
        self.steps = steps
        self.learning_rate = learning_rate
        self.delta = delta
        self.l2 = l2
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.fit_intercept = fit_intercept
        self.rng = rng
        self.expected_batch_size = expected_batch_size
        self.accountant = accountant
        self.epsilon = epsilon

    def fit(self, X, y):
        """Run DP-SGD on ``(X, y)``. Returns ``self``."""
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        _, y_bound = _check_bounds(self.x_bound, self.y_bound)
        theta = self._run(X, np.clip(y, -y_bound, y_bound)[:, None], "squared")[0]
        self.coef_ = theta[:-1] if self.fit_intercept else theta
        self.intercept_ = float(theta[-1]) if self.fit_intercept else 0.0
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions clipped to ``[-y_bound, y_bound]``, on rows clipped to ``x_bound``."""
        check_is_fitted(self, "coef_")
        X = _check_features(X, self.n_features_in_, type(self).__name__)
        pred = _clip_rows(X, self.x_bound) @ self.coef_ + self.intercept_
        return np.clip(pred, -self.y_bound, self.y_bound)


class DPSGDClassifier(_LinearClassifierMixin, ClassifierMixin, _DPSGDBase):
    __doc__ = """Logistic (two classes) or softmax (K >= 3) regression trained with DP-SGD (chapter 7).
""" + _SGD_DOC + """
    Parameters
    ----------
    noise_multiplier, clip_norm, sampling_rate, steps, learning_rate, delta, l2, x_bound, fit_intercept, rng
        As in :class:`DPSGDRegressor` (``x_bound`` is required; a known seed
        makes the released model reproducible by anyone who knows it, hence
        not private: use ``rng=None`` for a real release).
    expected_batch_size : float or None
    accountant : {"rdp", "pld"}
    epsilon : float or None
        Target budget (calibrates ``noise_multiplier_``).
    classes : array-like
        The public label set, **required** by :meth:`fit` (as in
        :class:`DPLogisticRegression`).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    coef_ : ndarray of shape (1, d) or (K, d)
    intercept_ : ndarray of shape (1,) or (K,)
    epsilon_ : float
    privacy_ : PrivacyAccount
        As in :class:`DPSGDRegressor`.
    noise_multiplier_ : float
    expected_batch_size_ : float
    n_features_in_ : int
"""

    def __init__(self, noise_multiplier: float = 1.0, clip_norm: float = 1.0, sampling_rate: float = 0.01,
                 steps: int = 1000, learning_rate: float = 0.5, delta: float = 1e-6, l2: float = 0.0, *,
                 x_bound=REQUIRED, fit_intercept: bool = True, rng: RandomLike = None,
                 expected_batch_size: float | None = None, accountant: str = "rdp", epsilon: float | None = None,
                 classes=None):
        _require_bounds(type(self).__name__, x_bound)
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
        self.classes = classes

    def fit(self, X, y):
        """Run DP-SGD on ``(X, y)``. Returns ``self``."""
        X = check_2d(X, "X")
        classes_, index = _encode_labels(y, self.classes, "DPSGDClassifier")
        check_same_length(("X", X), ("y", index))
        kind = "logistic" if classes_.size == 2 else "softmax"
        theta = self._run(X, _one_hot(index, classes_.size), kind)
        self.classes_ = classes_
        self._set_coefficients(theta)
        return self
