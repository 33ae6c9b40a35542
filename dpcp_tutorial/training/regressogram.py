"""A small symmetric add/remove-DP trainer: noisy bin means of one feature (chapter 5).

Differential CP and DPCP need a trainer that is DP under add/remove for every
data size; :class:`DPRegressogram` is the smallest such model, for
illustrations and fast tests.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    renamed_keywords,
    REQUIRED,
    RandomLike,
    check_1d,
    check_delta,
    check_epsilon,
    check_features,
    check_positive_int,
    check_random_state,
    check_same_length,
    check_scalar,
    require,
)
from ._common import trainer_privacy_account

__all__ = ["DPRegressogram"]



class DPRegressogram(RegressorMixin, BaseEstimator):
    """Noisy bin means of one feature: a small symmetric add/remove-DP trainer (chapter 5).

    The feature range ``[low, high]`` (public) is cut into ``bins`` equal
    bins; each bin releases its clipped response sum and its count with Laplace
    noise,

    .. math:: \\tilde S_b = \\sum_{x_i \\in b} [y_i]_{-C}^{C} + \\mathrm{Lap}(2C/\\varepsilon),
              \\qquad \\tilde N_b = N_b + \\mathrm{Lap}(2/\\varepsilon),

    and predicts :math:`[\\tilde S_b / \\max(\\tilde N_b, 1)]_{-C}^{C}`. Adding or
    removing one record changes one bin's sum by at most :math:`C` and its count
    by 1, so the release is :math:`\\varepsilon`-DP under add/remove (hence
    :math:`(\\varepsilon, \\delta)`-DP for any ``delta``), at every sample size, and
    symmetric. With many bins it overfits on purpose: in-sample residuals are
    smaller than fresh ones, which is what the Differential-CP shift must absorb.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget.
    delta : float, default=0.0
        Accepted for the trainer contract; the mechanism is pure DP.
    bins : int, default=20
        Number of bins (``n_bins=``, its former name, still works with a
        FutureWarning).
    low, high : float
        **Required** public range of the feature (values outside are clipped
        to it), from the feature's units and documented range.
    y_bound : float
        **Required** public clipping bound :math:`C` of the response.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise; ``None`` for a real release (:term:`Seed`).

    Attributes
    ----------
    sums_, counts_ : ndarray
        The noisy bin sums and counts.
    privacy_ : PrivacyAccount
        :math:`(\\varepsilon, 0)` under add/remove (primary) and :math:`2\\varepsilon`
        under replace-one (a replaced record can move one unit of count and
        :math:`C` of sum out of one bin and into another). ``epsilon`` is the
        total of what ``fit`` computes (:mod:`dpcp_tutorial.accounting`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0.0, 1.0, size=(5000, 1)); y = 2.0 * X[:, 0]
    >>> model = DPRegressogram(epsilon=1.0, bins=4, low=0.0, high=1.0, y_bound=2.0, rng=1).fit(X, y)
    >>> np.round(model.predict([[0.1], [0.6], [0.9]]), 2)   # bin means 0.25, 1.25, 1.75
    array([0.25, 1.24, 1.75])
    """

    relation = "add/remove"

    @renamed_keywords(n_bins="bins")
    def __init__(self, epsilon: float = 1.0, delta: float = 0.0, bins: int = 20, *, low=REQUIRED, high=REQUIRED,
                 y_bound=REQUIRED, rng: RandomLike = None):
        for name, value in (("low", low), ("high", high)):
            require(value, name, type(self).__name__, "low and high are the public range of the one feature (its "
                    "units and documented or physical range); values outside are clipped.")
        require(y_bound, "y_bound", type(self).__name__, "y_bound is the public bound C on |y| (the response's "
                "units and a documented range); responses are clipped to [-C, C].")
        self.epsilon = epsilon
        self.delta = delta
        self.bins = bins
        self.low = low
        self.high = high
        self.y_bound = y_bound
        self.rng = rng

    def _bin(self, X, reset: bool = False) -> np.ndarray:
        X = check_features(X, self, reset=reset, numeric=True, allow_nan=False)   # a DataFrame: by name
        if X.shape[1] != 1:
            raise ValueError(f"DPRegressogram uses one feature, got {X.shape[1]}; select a column first")
        low = check_scalar(self.low, "low")
        high = check_scalar(self.high, "high")
        if not low < high:
            raise ValueError(f"low={low:g} must be below high={high:g}: [low, high] is the public range of the "
                             "feature, chosen from domain knowledge")
        n_bins = check_positive_int(self.bins, "bins", maximum=10 ** 7)
        position = (np.clip(X[:, 0], low, high) - low) / (high - low) * n_bins
        return np.minimum(position.astype(int), n_bins - 1)

    def fit(self, X, y):
        """Release the noisy bin sums and counts."""
        epsilon = check_epsilon(self.epsilon)
        check_delta(self.delta)
        bound = check_scalar(self.y_bound, "y_bound", low=0.0)
        rng = check_random_state(self.rng)
        y = check_1d(y, "y")
        cells = self._bin(X, reset=True)
        check_same_length(("X", cells), ("y", y))
        n_bins = self.bins
        sums = np.bincount(cells, weights=np.clip(y, -bound, bound), minlength=n_bins)
        counts = np.bincount(cells, minlength=n_bins).astype(float)
        self.sum_scale_ = 2.0 * bound / epsilon
        self.count_scale_ = 2.0 / epsilon
        self.sums_ = sums + rng.laplace(scale=self.sum_scale_, size=n_bins)
        self.counts_ = counts + rng.laplace(scale=self.count_scale_, size=n_bins)
        self.privacy_ = trainer_privacy_account(
            "DP regressogram (Laplace bin sums and counts)", epsilon, 0.0,
            (f"feature range [{float(self.low):g}, {float(self.high):g}]", f"y_bound = {bound:g}",
             f"bins = {n_bins}", "the record count is not used"))
        return self

    def predict(self, X) -> np.ndarray:
        """Noisy bin mean of each point's bin, clipped to ``[-y_bound, y_bound]``."""
        check_is_fitted(self, "sums_")
        bins = self._bin(X)
        means = self.sums_ / np.maximum(self.counts_, 1.0)
        return np.clip(means[bins], -self.y_bound, self.y_bound)
