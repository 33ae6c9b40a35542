"""bound='unbounded' in the private split regressor: the threshold without a score bound, and its account."""

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from dpcp_tutorial import PrivateSplitConformalRegressor, ReleaseWarning, unbounded_private_quantile


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X @ [1.0, 2.0, 3.0] + 5.0 * rng.standard_t(3, size=n)


def test_threshold_is_the_unbounded_quantile_of_the_residuals_and_covers():
    X, y = data(6000, 0)
    est = PrivateSplitConformalRegressor(LinearRegression(), alpha=0.1, epsilon=1.0, bound="unbounded", n=2000,
                                         rng=3).fit(X[:2000], y[:2000])
    est.calibrate(X[2000:4000], y[2000:4000])
    residuals = np.abs(y[2000:4000] - est.predict(X[2000:4000]))
    gen = np.random.default_rng(3)
    assert est.qhat_ == unbounded_private_quantile(residuals, 0.1, 1.0, n=2000, rng=gen)
    iv = est.predict_interval(X[4000:])
    assert np.allclose(iv[:, 1] - iv[:, 0], 2 * est.qhat_)
    assert np.mean((y[4000:] >= iv[:, 0]) & (y[4000:] <= iv[:, 1])) > 0.87
    text = str(est.privacy_)
    assert "no bound on the residuals was assumed" in text
    assert est.privacy_.under("add/remove")[0] == 1.0 and est.privacy_.under("replace-one")[0] == 1.0


def test_private_size_account_and_explicit_choice():
    X, y = data(3000, 1)
    est = PrivateSplitConformalRegressor(LinearRegression(), alpha=0.1, epsilon=1.0, bound="unbounded",
                                         rng=0).fit(X[:1500], y[:1500]).calibrate(X[1500:], y[1500:])
    assert 0.5 < est.privacy_.under("add/remove")[0] <= 1.0
    with pytest.raises(ValueError, match="calibrator='pps' needs a public bound"):
        PrivateSplitConformalRegressor(LinearRegression(), bound="unbounded", calibrator="pps",
                                       rng=0).fit(X[:1500], y[:1500]).calibrate(X[1500:], y[1500:])
    with pytest.raises(TypeError):
        PrivateSplitConformalRegressor(LinearRegression(), bound="unbound", rng=0).fit(X[:1500], y[:1500]) \
            .calibrate(X[1500:], y[1500:])
    with pytest.raises(TypeError, match="bound"):
        PrivateSplitConformalRegressor(LinearRegression())          # never a default


def test_nonfinite_model_outputs_and_empty_calibration_with_public_n():
    class Wild(LinearRegression):
        def predict(self, X):
            out = super().predict(X)
            out[::40] = np.nan
            out[1::40] = np.inf
            return out

    X, y = data(2000, 2)
    est = PrivateSplitConformalRegressor(Wild(), alpha=0.2, epsilon=2.0, bound="unbounded", n=1000,
                                         rng=0).fit(X[:1000], y[:1000])
    est.calibrate(X[1000:], y[1000:])
    assert math.isfinite(est.qhat_)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.calibrate(X[:0], y[:0])
    assert est.qhat_ == math.inf and any(issubclass(w.category, ReleaseWarning) for w in caught)


def test_dpcp_regressor_with_an_unbounded_threshold():
    from dpcp_tutorial import DPCPRegressor, DPRidgeRegression, unbounded_quantile_target

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(6000, 2))
    y = X @ [1.0, -0.5] + 0.3 * rng.standard_t(3, size=6000)
    est = DPCPRegressor(DPRidgeRegression(x_bound=1.5, y_bound=5.0), alpha=0.1, epsilon=2.0, bound="unbounded",
                        n=4000, rng=0).fit(X[:4000], y[:4000])
    assert math.isclose(est.alpha1_, math.exp(-0.6) * (0.1 - 1e-6))
    assert est.alpha0_ == unbounded_quantile_target(est.alpha1_, 4000, 1.4)
    iv = est.predict_interval(X[4000:])
    assert np.allclose(iv[:, 1] - iv[:, 0], 2 * est.qhat_)
    assert np.mean((y[4000:] >= iv[:, 0]) & (y[4000:] <= iv[:, 1])) > 0.9
    assert "no bound on the residuals was assumed" in str(est.privacy_)
    assert est.privacy_.under("add/remove") == (2.0, 1e-6)
    private_size = DPCPRegressor(DPRidgeRegression(x_bound=1.5, y_bound=5.0), alpha=0.1, epsilon=2.0,
                                 bound="unbounded", rng=0).fit(X[:3000], y[:3000])
    assert 1.6 < private_size.privacy_.under("add/remove")[0] <= 2.0
    with pytest.raises(ValueError, match="epsilon=2"):
        DPCPRegressor(DPRidgeRegression(x_bound=1.5, y_bound=5.0), alpha=0.1, epsilon=2.0, bound="unbounded",
                      n=5, rng=0).fit(X[:100], y[:100])
