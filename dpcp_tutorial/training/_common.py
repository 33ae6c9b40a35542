"""What the DP trainers of chapter 7 share: public bounds, row clipping, noise, labels, accounts.

An internal module of :mod:`dpcp_tutorial.training`: its names without an
underscore are the package's internals, used by :mod:`~dpcp_tutorial.training.ridge`,
:mod:`~dpcp_tutorial.training.logistic`, :mod:`~dpcp_tutorial.training.dpsgd` and
:mod:`~dpcp_tutorial.training.regressogram` (and re-exported by the package where
other modules use them: :func:`check_classes`, :func:`trainer_privacy_account`,
:data:`Y_BOUND_ADVICE`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, softmax
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    as_array,
    check_choice,
    check_features,
    check_scalar,
    require,
)
from ..accounting import single_mechanism_account
from ..mechanisms import gaussian_sigma

RELATIONS = ("add/remove", "replace-one")
"""The neighbour relations a sensitivity is stated for."""


def check_relation(relation: str) -> str:
    """The neighbour relation of a sensitivity: ``"add/remove"`` or ``"replace-one"``."""
    return check_choice(relation, "relation", RELATIONS,
                        "'add/remove': one record added or removed; 'replace-one': one record replaced")


def row_bound(x_bound: float, fit_intercept: bool) -> float:
    """Norm bound :math:`B` of an augmented row (the intercept column adds 1 to :math:`B^2`)."""
    return math.sqrt(x_bound**2 + 1.0) if fit_intercept else x_bound


def clip_factors(norms: np.ndarray, bound: float) -> np.ndarray:
    """:math:`\\min(1, \\text{bound}/\\|v\\|)` for each norm, computed only where it is below 1 (so no overflow)."""
    return np.divide(bound, norms, out=np.ones_like(norms), where=norms > bound)


def row_norms(X: np.ndarray) -> np.ndarray:
    """Euclidean norm of every row, as :func:`numpy.linalg.norm` computes it (the square root of the
    row sums of squares), the squares written block by block into one buffer of at most
    :data:`BLOCK_BYTES`: no temporary of the size of a large ``X``."""
    n, d = X.shape
    block = max(1024, BLOCK_BYTES // (8 * max(d, 1)))
    norms = np.empty(n)
    fortran = X.flags.f_contiguous and not X.flags.c_contiguous     # same layout, same order of summation
    buffer = np.empty((min(n, block), d), order="F" if fortran else "C")
    for start in range(0, n, block):
        squares = buffer[:min(n - start, block)]
        np.multiply(X[start:start + block], X[start:start + block], out=squares)
        np.add.reduce(squares, axis=1, out=norms[start:start + block])
    return np.sqrt(norms, out=norms)


def fit_clip_factors(X: np.ndarray, bound: float) -> np.ndarray:
    """Clip factors of the rows of the data a model is fitted on.

    The squared norms are summed by one :func:`numpy.einsum` pass: no
    temporary, and many times faster than the row reduction of
    :func:`row_norms`. The factors differ from those of :func:`row_norms` (the
    arithmetic of :func:`clipped_design` and of prediction) at most in the last
    bits of a clipped row's factor.
    """
    return clip_factors(np.sqrt(np.einsum("ij,ij->i", X, X)), bound)


def clip_rows(X: np.ndarray, bound: float) -> np.ndarray:
    """Rescale every row with Euclidean norm above ``bound`` to norm ``bound``."""
    return X * clip_factors(row_norms(X), bound)[:, None]


def clipped_design(X: np.ndarray, x_bound: float, fit_intercept: bool) -> np.ndarray:
    """Clip rows to ``x_bound``, then append the intercept column of ones if requested (one new array)."""
    n, d = X.shape
    Xa = np.empty((n, d + 1) if fit_intercept else (n, d))
    np.multiply(X, clip_factors(row_norms(X), x_bound)[:, None], out=Xa[:, :d])
    if fit_intercept:
        Xa[:, d] = 1.0
    return Xa


BLOCK_BYTES = 1 << 24
"""Size of one block of rows (16 MiB) in the row-block loops (ridge statistics, logistic Hessian): a bounded
buffer instead of a scaled copy of the whole data, and few enough BLAS calls that a multi-threaded BLAS
works on large blocks."""

CACHE_BLOCK_BYTES = 1 << 20
"""Block size (1 MiB) of the row-block loops on data larger than :data:`BLOCK_BYTES`: the scaled block
is still in the CPU cache when the BLAS reads it back (about twice as fast as 16 MiB blocks)."""


def rows_per_block(n: int, p: int) -> int:
    """Rows per block of a row-block loop over ``n`` rows of ``p`` columns: all of them up to
    :data:`BLOCK_BYTES` (the arithmetic of the whole design), cache-sized blocks above."""
    size = BLOCK_BYTES if n * p * 8 <= BLOCK_BYTES else min(BLOCK_BYTES, CACHE_BLOCK_BYTES)
    return max(1024, size // (8 * max(p, 1)))


def unit_noise_scale(epsilon: float, delta: float) -> tuple[str, float]:
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


def draw_noise(shape, scale: float, mechanism: str, rng: np.random.Generator) -> np.ndarray:
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


def require_bounds(owner: str, x_bound, y_bound=None, needs_y: bool = False) -> None:
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


def check_bounds(x_bound, y_bound=None) -> tuple[float, float | None]:
    hint = "it is a public a-priori bound, never computed from the private data"
    x_bound = check_scalar(x_bound, "x_bound", low=0.0, hint=hint)
    if y_bound is not None:
        y_bound = check_scalar(y_bound, "y_bound", low=0.0, hint=hint)
    return x_bound, y_bound


def prediction_features(X, owner) -> np.ndarray:
    """Features at prediction: columns matched to the fitted schema (a DataFrame by name), finite values.

    A record with a missing or infinite feature is refused (one fixed message); the conformal estimators
    evaluate such a model record by record (:func:`~dpcp_tutorial._validation.model_outputs`), so a record it
    refuses alone gets the worst score at calibration.
    """
    return check_features(X, owner, reset=False, numeric=True, allow_nan=False)


def fit_features(X, owner, min_rows: int = 1) -> np.ndarray:
    """Features at fit: a finite float array (the data domain); a DataFrame's column names are recorded."""
    return check_features(X, owner, reset=True, numeric=True, allow_nan=False, min_rows=min_rows)


def probabilities(Z: np.ndarray) -> np.ndarray:
    """Sigmoid of a single logit column, softmax of several."""
    return expit(Z) if Z.shape[1] == 1 else softmax(Z, axis=1)


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


def encode_labels(y, classes, owner: str = "this classifier",
                  allow_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``classes_`` (the sorted public label set) and the index of each label in it.

    The label set is public (:func:`check_classes`). A label outside it is
    outside the data domain; the message is the same for every such data set
    (it names the public classes, never the offending values or their number).
    """
    classes_ = check_classes(classes, owner)
    y = as_array(y, "y")
    if y.ndim != 1 or (y.size == 0 and not allow_empty):
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


def one_hot(index: np.ndarray, n_classes: int) -> np.ndarray:
    """Targets: one 0/1 column for two classes, one-hot columns for more."""
    if n_classes == 2:
        return index[:, None].astype(float)
    return np.eye(n_classes)[index]


class LinearClassifierMixin:
    """``predict_proba``/``predict`` shared by the private linear classifiers."""

    def _set_coefficients(self, theta: np.ndarray) -> None:
        self.coef_ = theta[:, :-1] if self.fit_intercept else theta
        self.intercept_ = theta[:, -1].copy() if self.fit_intercept else np.zeros(theta.shape[0])

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n, K), columns in the order of ``classes_``; rows sum to 1."""
        check_is_fitted(self, "coef_")
        X = prediction_features(X, self)
        Z = clip_rows(X, self.x_bound) @ self.coef_.T + self.intercept_
        P = probabilities(Z)
        return np.column_stack([1.0 - P[:, 0], P[:, 0]]) if P.shape[1] == 1 else P

    def predict(self, X) -> np.ndarray:
        """Most probable class of each row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
