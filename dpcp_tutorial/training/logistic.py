"""Logistic regression by output perturbation, add/remove DP (chapter 7).

The minimiser of a sum-form objective with a fixed ridge term :math:`\\lambda`
is released with Gaussian (or L2-Laplace) noise; adding a point moves the
minimiser by at most :math:`c_K B / \\lambda`, whatever :math:`n` is.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin

from .._validation import (
    REQUIRED,
    RandomLike,
    check_bool,
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
    renamed_keywords,
)
from . import _common
from ._common import (
    LinearClassifierMixin,
    check_bounds,
    check_relation,
    draw_noise,
    encode_labels,
    fit_clip_factors,
    fit_features,
    one_hot,
    probabilities,
    require_bounds,
    row_bound,
    trainer_privacy_account,
    unit_noise_scale,
)

__all__ = ["output_perturbation_sensitivity", "DPLogisticRegression"]

_SOLVER_SLACK = 1e-6
"""The logistic solver stops only when :math:`\\|\\nabla J\\| \\le 10^{-6} B`, which
certifies :math:`\\|\\hat\\theta - \\theta^*\\| \\le 10^{-6} B/\\lambda` by strong
convexity; the sensitivity adds twice this slack."""


@renamed_keywords(neighbouring="relation")
def output_perturbation_sensitivity(x_bound: float, l2: float, fit_intercept: bool = True, n_classes: int = 2,
                                    relation: str = "add/remove") -> float:
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

    Parameters
    ----------
    x_bound : float
        Public bound on the feature-row norm.
    l2 : float
        The fixed ridge penalty :math:`\\lambda > 0` of the sum-form objective.
    fit_intercept : bool, default=True
        Whether a column of ones is appended (:math:`B = \\sqrt{x_{\\max}^2 + 1}`).
    n_classes : int, default=2
        Number of classes :math:`K` (softmax loss for :math:`K \\ge 3`).
    relation : {"add/remove", "replace-one"}, default="add/remove"
        The neighbour relation (the old keyword ``neighbouring=`` still works,
        with a FutureWarning).

    Returns
    -------
    float

    Examples
    --------
    >>> round(output_perturbation_sensitivity(1.0, l2=10.0), 4)     # sqrt(2) / 10
    0.1414
    >>> round(output_perturbation_sensitivity(1.0, l2=10.0, n_classes=3), 4)
    0.2
    """
    x_bound, _ = check_bounds(x_bound)
    l2 = check_scalar(l2, "l2", low=0.0, hint="output perturbation needs a positive ridge penalty")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    c = 1.0 if n_classes == 2 else math.sqrt(2.0)
    if check_relation(relation) == "replace-one":
        c *= 2.0
    return (c + 2.0 * _SOLVER_SLACK) * row_bound(x_bound, check_bool(fit_intercept, "fit_intercept")) / l2


def _logistic_loss(Z: np.ndarray, Y: np.ndarray) -> float:
    """:math:`\\sum_i \\ell` from the logits ``Z`` (n, K): logistic loss for one column, softmax loss for several."""
    if Z.shape[1] == 1:          # log(1 + e^z) = max(z, 0) + log1p(e^{-|z|}): a third of logaddexp's time
        return float(np.sum(np.log1p(np.exp(-np.abs(Z)))) + np.sum(np.maximum(Z, 0.0)) - np.vdot(Y, Z))
    return float(np.sum(logsumexp(Z, axis=1)) - np.vdot(Y, Z))


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
        """The design of :func:`clipped_design` (rows clipped to ``x_bound``, then the column of ones).

        When no row is clipped (every factor is 1) the rows are used as they
        are: a product with factors of 1 is exact, so only the work changes.
        """
        factors = fit_clip_factors(X, x_bound)
        return cls(X, None if np.all(factors == 1.0) else factors, fit_intercept)

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

    def weighted_blocks(self, weights: list[np.ndarray], dtype=np.float64):
        """For each block of rows (:data:`CACHE_BLOCK_BYTES`): ``(start, rows)`` with ``rows[j]`` the rows of
        :math:`X_a` scaled by ``weights[j]`` (one multiply per weight, the clip factors folded into it),
        rounded to ``dtype``.

        The buffers are reused from block to block: use a block before asking for the next.
        """
        n = self.X.shape[0]
        block = max(1024, min(_common.BLOCK_BYTES, _common.CACHE_BLOCK_BYTES) // (8 * self.p))    # cache-sized
        buffers = [np.empty((min(n, block), self.p), dtype=dtype) for _ in weights]
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


def _logistic_hessian(design, P: np.ndarray, l2: float, dtype=np.float64) -> np.ndarray:
    """Hessian of the objective, shape (K p, K p), summed in double precision from products of the
    weighted rows rounded to ``dtype`` (``numpy.float32``: single-precision products).

    Block :math:`(k, l)` is :math:`X^\\top \\mathrm{diag}(P_k(\\delta_{kl} - P_l)) X`, plus :math:`\\lambda I` on the diagonal.

    ``design`` is an explicit design matrix or a :class:`_ClippedDesign`. A diagonal
    block is the Gram matrix of the rows scaled by :math:`\\sqrt{P_k(1-P_k)}` (a
    symmetric rank update); an off-diagonal block of the softmax loss is
    :math:`-X^\\top \\mathrm{diag}(P_k P_l) X`, the product of the rows scaled by
    :math:`P_k P_l` with the rows. Both are summed over cache-sized blocks of rows
    (:data:`CACHE_BLOCK_BYTES`), so no weighted copy of the whole design is made.
    """
    if not isinstance(design, _ClippedDesign):
        design = _ClippedDesign(design)
    k, p = P.shape[1], design.p
    hessian = np.zeros((k * p, k * p))
    roots = [np.sqrt(P[:, a] * (1.0 - P[:, a])) for a in range(k)]
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    weights = roots + [P[:, a] * P[:, b] for a, b in pairs] + ([np.ones(P.shape[0])] if pairs else [])
    for _, rows in design.weighted_blocks(weights, dtype):
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
    next step's. The Hessian guides the steps only, so it is summed from
    single-precision products of the weighted rows (half the memory traffic
    and twice the arithmetic rate of double precision; its relative error,
    about :math:`10^{-7}`, leaves the convergence of the steps unchanged).
    Stops when :math:`\\|\\nabla J\\| \\le` ``grad_tol``; by :math:`\\lambda`-strong
    convexity the iterate is then within ``grad_tol / l2`` of the exact
    minimiser.

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
        P = probabilities(Z)
        grad = design.gradient(P - Y) + l2 * theta
        norm = np.linalg.norm(grad)
        if norm <= grad_tol:
            return theta
        stalls += norm > 0.5 * previous
        if stalls == 2:                                                 # subsampled steps stall: full Hessian
            stride = 1
        if stride > 1:
            sample = design.rows(stride)
            hessian = _logistic_hessian(sample, P[::stride], 0.0, np.float32)
            hessian *= n / sample.X.shape[0]
            hessian[np.diag_indices(k * p)] += l2
        else:
            hessian = _logistic_hessian(design, P, l2, np.float32)
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


class DPLogisticRegression(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
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
    epsilon : float, default=1.0
        Privacy budget, positive.
    delta : float, default=1e-06
        In [0, 1); ``delta=0`` gives pure DP with L2-Laplace noise.
    l2 : float, default=1.0
        Fixed public ridge penalty :math:`\\lambda > 0` of the sum-form objective
        (intercept included). Larger values mean less noise (:math:`\\propto 1/\\lambda`)
        and more shrinkage; a value of order :math:`\\Lambda n_0` for a planned,
        public size :math:`n_0` mimics the mean-form objective.
    x_bound : float
        **Required** public bound on the feature-row norm (rows are clipped in fit and predict;
        the intercept column raises the row bound to :math:`\\sqrt{x_{\\max}^2+1}`).
    fit_intercept : bool, default=True
        Append a constant column of ones (penalised like the other coefficients).
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise; ``None`` for a real release (:term:`Seed`).
    classes : array-like, default=None
        The public label set, **required** by :meth:`fit` (e.g. ``[0, 1]``):
        reading it from ``y`` would make the release depend on which classes
        occur (removing the only record of a class would change the model or
        raise). Labels in ``classes`` but absent from ``y`` are fine, and so
        is a data set with no record at all (the release is then the noise
        around the regulariser's minimiser 0): the guarantee holds at every
        size, so no data set is refused while a neighbour releases.

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
    feature_names_in_ : ndarray
        The column names when fitted on a DataFrame with string column names;
        a later frame is matched by name (reordered columns are read by name).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(2000, 2))
    >>> y = (X @ [4.0, -4.0] + rng.logistic(size=2000) > 0).astype(int)
    >>> model = DPLogisticRegression(epsilon=1.0, l2=50.0, x_bound=1.0, classes=[0, 1], rng=1).fit(X, y)
    >>> np.round(model.coef_, 1)
    array([[ 1.4, -1.2]])
    >>> round(model.score(X, y), 2)
    0.76
    """

    relation = "add/remove"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6, l2: float = 1.0, *, x_bound=REQUIRED,
                 fit_intercept: bool = True, rng: RandomLike = None, classes=None):
        require_bounds(type(self).__name__, x_bound)
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
        x_bound, _ = check_bounds(self.x_bound)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        X = fit_features(X, self, min_rows=0)          # no record at all is a data set too: it releases
        classes_, index = encode_labels(y, self.classes, "DPLogisticRegression", allow_empty=True)
        check_same_length(("X", X), ("y", index))
        rng = check_random_state(self.rng)

        bound = row_bound(x_bound, fit_intercept)
        theta = _minimise_logistic(_ClippedDesign.clipped(X, x_bound, fit_intercept), one_hot(index, classes_.size),
                                   l2, grad_tol=_SOLVER_SLACK * bound)
        sensitivity = output_perturbation_sensitivity(x_bound, l2, fit_intercept, classes_.size)
        mechanism, per_unit = unit_noise_scale(epsilon, delta)
        self.noise_scale_ = sensitivity * per_unit
        theta = theta + draw_noise(theta.shape, self.noise_scale_, mechanism, rng)
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
