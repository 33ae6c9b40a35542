"""Feature scaling from public ranges: a transformer that learns nothing from the data (chapter 7).

A scaler fitted on private records stores their statistics (a mean and a
spread, a minimum and a maximum) and moves every later prediction with them:
it is a release that no DP account certifies. :class:`PublicScaler` maps each
feature's **public** range :math:`[l_j, h_j]` (from its units and documented
range, chosen before seeing the data) to :math:`[-1, 1]`,

.. math:: t_j(x) = 2\\,\\frac{\\min(\\max(x_j, l_j), h_j) - l_j}{h_j - l_j} - 1,

clipping values outside the range, so a transformed row has Euclidean norm at
most :math:`\\sqrt d` (``row_norm_bound_``): the ``x_bound`` a DP trainer after it
needs. Its ``fit`` reads only the number of columns (public), so a pipeline
``make_pipeline(PublicScaler(low, high), DPRidgeRegression(x_bound=sqrt(d), ...))``
is accounted for by the trainer's own ``privacy_``
(:func:`dpcp_tutorial.accounting.check_model_privacy`).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import REQUIRED, real_array, check_2d, require

__all__ = ["PublicScaler"]

_ADVICE = ("low and high are the public range of each feature (from its units and documented or physical range, "
           "chosen before seeing the data, never the data's own minimum and maximum); pass one number for every "
           "feature or one per feature, e.g. low=[0, 18], high=[1, 90]")


def _bounds(value, name: str) -> np.ndarray:
    arr = real_array(value, name)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-D array of one number per feature. " + _ADVICE)
    if arr.size == 0 or not np.isfinite(arr).all():
        raise ValueError(f"{name} must hold finite numbers, one per feature (or one for all). " + _ADVICE)
    return arr


class PublicScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Map each feature's public range ``[low, high]`` to ``[-1, 1]``, clipping values outside (chapter 7).

    A stateless transformer: :meth:`fit` learns nothing from the values of
    ``X`` (it checks the public number of columns), so it is safe inside a
    pipeline fitted on private data. The account of a pipeline with a DP
    trainer after it is the trainer's own.

    Parameters
    ----------
    low, high : float or array-like of shape (d,)
        **Required** public range of each feature, :math:`l_j < h_j` (one
        number broadcasts to every feature).

    Attributes
    ----------
    low_, high_ : ndarray of shape (d,)
        The public ranges, one per feature.
    n_features_in_ : int
        The number of features :math:`d` (public: the schema).
    row_norm_bound_ : float
        :math:`\\sqrt d`, the largest Euclidean norm of a transformed row:
        the ``x_bound`` for a DP trainer after the scaler.

    Notes
    -----
    ``learns_from_data = False`` declares the transformer public to the
    package's accounts; a transformer of your own may declare it too, if its
    ``fit`` reads nothing but the public shape of the data.

    Examples
    --------
    >>> import numpy as np
    >>> scaler = PublicScaler(low=[0.0, 18.0], high=[10.0, 90.0]).fit(np.zeros((1, 2)))
    >>> scaler.transform(np.array([[5.0, 100.0]])).tolist(), round(scaler.row_norm_bound_, 4)
    ([[0.0, 1.0]], 1.4142)
    """

    #: read by :func:`dpcp_tutorial.accounting.check_model_privacy`: fit learns nothing from the data
    learns_from_data = False

    def __init__(self, low=REQUIRED, high=REQUIRED):
        require(low, "low", type(self).__name__, _ADVICE)
        require(high, "high", type(self).__name__, _ADVICE)
        self.low = low
        self.high = high

    def _ranges(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        low, high = _bounds(self.low, "low"), _bounds(self.high, "high")
        for name, arr in (("low", low), ("high", high)):
            if arr.size not in (1, d):
                raise ValueError(f"{name} has {arr.size} entries but X has {d} features; pass one number for "
                                 "every feature or one per feature")
        low, high = np.broadcast_to(low, (d,)).astype(float), np.broadcast_to(high, (d,)).astype(float)
        if not (low < high).all():
            raise ValueError("every low must be below its high: [low, high] is the public range of a feature. "
                             + _ADVICE)
        return low, high

    def row_norm_bound(self, n_features: int) -> float:
        """:math:`\\sqrt d`: the Euclidean norm bound of a transformed row with ``n_features`` features."""
        return math.sqrt(int(n_features))

    def fit(self, X, y=None):
        """Check the public ranges against the number of columns of ``X``; learns nothing from its values.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Only its number of columns :math:`d` is read.
        y : None, default=None
            Ignored (scikit-learn's signature).

        Returns
        -------
        PublicScaler
            ``self``.
        """
        d = check_2d(X, "X").shape[1]
        self.low_, self.high_ = self._ranges(d)
        self.n_features_in_ = d
        self.row_norm_bound_ = self.row_norm_bound(d)
        return self

    def transform(self, X) -> np.ndarray:
        """:math:`2(\\mathrm{clip}(x_j, l_j, h_j) - l_j)/(h_j - l_j) - 1` for every feature."""
        check_is_fitted(self, "low_")
        X = check_2d(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features but PublicScaler was fitted with "
                             f"{self.n_features_in_}")
        return 2.0 * (np.clip(X, self.low_, self.high_) - self.low_) / (self.high_ - self.low_) - 1.0

    def inverse_transform(self, X) -> np.ndarray:
        """Back to the features' units (the clipping is not undone)."""
        check_is_fitted(self, "low_")
        X = check_2d(X, "X")
        return self.low_ + (np.clip(X, -1.0, 1.0) + 1.0) / 2.0 * (self.high_ - self.low_)
