"""Tests of dpcp_tutorial.training (chapter 7): private ridge, logistic and DP-SGD.

Privacy is tested exactly where the output law is known:

* the noise scales equal their closed forms (analytic Gaussian mechanism checked
  against dp_accounting's own implementation);
* for add/remove neighbours (add one, remove one; adversarial points included)
  the released vectors move by at most the stated sensitivity, and the exact
  hockey-stick divergence of the two Gaussian output laws is at most delta;
* for the L2-Laplace mechanism the log-density ratio is at most epsilon;
* the noise actually drawn has the stated scale (variance tests with tolerances
  from the chi-square standard error, stated per test).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from scipy.special import log_ndtr

from dpcp_tutorial import (
    DPLogisticRegression,
    DPRidgeRegression,
    DPSGDClassifier,
    DPSGDRegressor,
    dp_sgd_epsilon,
    dp_sgd_noise_multiplier,
    output_perturbation_sensitivity,
    private_sufficient_statistics,
    ssp_sensitivity,
)
from dpcp_tutorial.training._common import clipped_design, one_hot, probabilities, unit_noise_scale
from dpcp_tutorial.training.logistic import _SOLVER_SLACK, _logistic_hessian, _minimise_logistic
from dpcp_tutorial.training.ridge import _clipped_statistics, _sufficient_statistics


def _log_gaussian_delta(sigma: float, epsilon: float) -> float:
    """Exact log delta(epsilon) of the Gaussian mechanism with sensitivity 1 and noise std sigma
    (Balle & Wang 2018, Theorem 8), written out independently of the package."""
    x = log_ndtr(0.5 / sigma - epsilon * sigma)
    y = epsilon + log_ndtr(-0.5 / sigma - epsilon * sigma)
    return float(x + math.log1p(-math.exp(y - x))) if y < x else -math.inf


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The noise std the trainers use for sensitivity ``sensitivity``."""
    mechanism, per_unit = unit_noise_scale(epsilon, delta)
    assert mechanism == "gaussian"
    return sensitivity * per_unit


def _regression_data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.5
    y = X @ np.linspace(1, -1, d) + 0.1 * rng.normal(size=n)
    return X, y


def _classification_data(n=300, d=3, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.5
    score = X @ np.linspace(2, -1, d) + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.arange(1, k) / k))
    return X, y


def _gaussian_hockey_stick(distance: float, sigma: float, epsilon: float) -> float:
    """Exact delta(epsilon) between N(a, sigma^2 I) and N(a', sigma^2 I) with |a - a'| = distance."""
    if distance == 0:
        return 0.0
    return math.exp(_log_gaussian_delta(sigma / distance, epsilon))


def _neighbour_pairs(X, y, rng, k=6):
    """Add/remove neighbours of (X, y): adversarial and random added points, and random removals."""
    d = X.shape[1]
    extra = [np.eye(d)[0] * 50.0, -np.eye(d)[1] * 3.0, np.ones(d) * 1e6, np.zeros(d)]
    extra += [rng.normal(size=d) * s for s in (0.1, 1.0, 10.0)]
    labels = [1e9, -7.0, 0.3, -1e9, 2.0, 0.0, -0.5]
    pairs = [((X, y), (np.vstack([X, x]), np.append(y, t))) for x, t in zip(extra, labels)]
    for i in rng.choice(len(X), size=k, replace=False):
        pairs.append(((X, y), (np.delete(X, i, axis=0), np.delete(y, i))))
    return pairs


# ---------------------------------------------------------------------------
# Gaussian calibration used by the trainers
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [1e-3, 0.1, 1.0, 10.0, 1e3])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-2])
def test_trainers_gaussian_calibration_is_exact(epsilon, delta):
    sigma = analytic_gaussian_sigma(epsilon, delta)
    assert sigma == pytest.approx(dp_accounting.get_sigma_gaussian(epsilon, delta), rel=1e-8)
    # tight: the exact delta at sigma is at most the target, slightly less noise violates it
    assert _log_gaussian_delta(sigma, epsilon) <= math.log(delta) + 1e-9
    assert _log_gaussian_delta(sigma * (1 - 1e-6), epsilon) > math.log(delta)


def test_trainers_use_l2_laplace_for_pure_dp():
    assert unit_noise_scale(2.0, 0.0) == ("l2-laplace", 0.5)


# ---------------------------------------------------------------------------
# sufficient-statistics perturbation
# ---------------------------------------------------------------------------

def test_ssp_sensitivity_formula():
    # B^2 = x^2 + 1 with intercept; Delta = B sqrt(B^2 + Y^2)
    assert ssp_sensitivity(1.0, 1.0, True) == pytest.approx(math.sqrt(2) * math.sqrt(3))
    assert ssp_sensitivity(2.0, 3.0, False) == pytest.approx(2 * math.sqrt(4 + 9))
    assert ssp_sensitivity(2.0, 3.0, False, "replace-one") == pytest.approx(4 * math.sqrt(13))
    with pytest.raises(ValueError, match="relation"):
        ssp_sensitivity(1.0, 1.0, True, "swap")


@pytest.mark.parametrize("function, args", [(ssp_sensitivity, (2.0, 3.0, False)),
                                            (output_perturbation_sensitivity, (2.0, 0.5, True, 3))])
def test_sensitivity_neighbouring_is_a_deprecated_alias_of_relation(function, args):
    with pytest.warns(FutureWarning, match="relation="):
        old = function(*args, neighbouring="replace-one")
    assert old == function(*args, relation="replace-one") > function(*args, relation="add/remove")
    with pytest.raises(TypeError, match="relation="):
        function(*args, neighbouring="replace-one", relation="replace-one")


def _ssp_vector(X, y, x_bound, y_bound, fit_intercept):
    """The released statistics as private_sufficient_statistics computes them (before the noise)."""
    gram, moment = _clipped_statistics(X, np.clip(y, -y_bound, y_bound), x_bound, fit_intercept)
    return np.concatenate([gram[np.triu_indices(len(gram))], moment])


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n", [500, 2600])
def test_clipped_statistics_are_those_of_the_clipped_design(fit_intercept, n, monkeypatch):
    """The statistics computed without the design column (in blocks of 1024 rows here) equal X_a^T X_a and
    X_a^T y of the design."""
    monkeypatch.setattr("dpcp_tutorial.training._common.BLOCK_BYTES", 1)
    X, y = _regression_data(n=n, d=4)
    X[:7] *= 40.0                                       # some rows are clipped
    gram, moment = _clipped_statistics(X, y, 1.5, fit_intercept)
    ref_gram, ref_moment = _sufficient_statistics(clipped_design(X, 1.5, fit_intercept), y)
    np.testing.assert_allclose(gram, ref_gram, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(moment, ref_moment, rtol=1e-12, atol=1e-12)
    assert np.array_equal(gram, gram.T)
    if fit_intercept:
        assert gram[-1, -1] == n


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ssp_add_remove_neighbours_within_sensitivity_and_delta(fit_intercept):
    rng = np.random.default_rng(1)
    X, y = _regression_data(n=50, d=3)
    x_bound, y_bound, eps, delta = 1.5, 0.8, 0.7, 1e-6
    sens = ssp_sensitivity(x_bound, y_bound, fit_intercept)
    sigma = sens * analytic_gaussian_sigma(eps, delta)
    worst = 0.0
    for (X1, y1), (X2, y2) in _neighbour_pairs(X, y, rng):
        dist = np.linalg.norm(_ssp_vector(X1, y1, x_bound, y_bound, fit_intercept)
                              - _ssp_vector(X2, y2, x_bound, y_bound, fit_intercept))
        assert dist <= sens * (1 + 1e-12)
        # exact (eps, delta) of this pair of Gaussian output laws
        assert _gaussian_hockey_stick(dist, sigma, eps) <= delta * (1 + 1e-9)
        worst = max(worst, dist)
    if not fit_intercept:  # the bound is attained by a point on a coordinate axis with |y| >= y_bound
        assert worst == pytest.approx(sens, rel=1e-12)


def test_ssp_sensitivity_holds_for_empty_to_one_point():
    x = np.array([[0.0, 7.0]])
    vec = _ssp_vector(x, np.array([-5.0]), 1.0, 1.0, True)
    assert np.linalg.norm(vec) <= ssp_sensitivity(1.0, 1.0, True)


def test_private_sufficient_statistics_noise_has_stated_std():
    """Pooled over R=300 seeds and m=9 coordinates (2700 draws): the sample variance of the
    noise has relative SE sqrt(2/2700)=0.027; we allow 5 SE. The mean has SE sigma/sqrt(2700)."""
    X, y = _regression_data(n=40, d=2)
    Xa = clipped_design(X, 1.0, True)
    gram, moment = _sufficient_statistics(Xa, np.clip(y, -1, 1))
    noise = []
    for seed in range(300):
        g, m, scale, mech = private_sufficient_statistics(X, y, epsilon=2.0, delta=1e-5, rng=seed, x_bound=1.0, y_bound=1.0)
        assert mech == "gaussian"
        assert np.allclose(g, g.T)
        noise.append(np.concatenate([(g - gram)[np.triu_indices(3)], m - moment]))
    noise = np.asarray(noise).ravel()
    assert scale == pytest.approx(ssp_sensitivity(1.0, 1.0, True) * dp_accounting.get_sigma_gaussian(2.0, 1e-5),
                                  rel=1e-8)
    assert abs(noise.var() / scale**2 - 1) < 5 * math.sqrt(2 / noise.size)
    assert abs(noise.mean()) < 5 * scale / math.sqrt(noise.size)


def test_private_sufficient_statistics_pure_dp_uses_l2_laplace():
    """delta=0: the noise norm must be Gamma(m, Delta/eps) distributed (KS test, 400 draws,
    fixed seeds so the p-value is deterministic), and the log-density ratio of the two
    output laws of neighbours is <= eps at every point."""
    X, y = _regression_data(n=30, d=2)
    Xa = clipped_design(X, 1.0, True)
    gram, moment = _sufficient_statistics(Xa, np.clip(y, -1, 1))
    norms = []
    for seed in range(400):
        g, m, scale, mech = private_sufficient_statistics(X, y, epsilon=0.5, delta=0.0, rng=seed, x_bound=1.0, y_bound=1.0)
        norms.append(np.linalg.norm(np.concatenate([(g - gram)[np.triu_indices(3)], m - moment])))
    assert mech == "l2-laplace"
    assert scale == pytest.approx(ssp_sensitivity(1.0, 1.0, True) / 0.5)
    assert stats.kstest(norms, stats.gamma(a=9, scale=scale).cdf).pvalue > 1e-3

    rng = np.random.default_rng(3)
    for (X1, y1), (X2, y2) in _neighbour_pairs(X, y, rng):
        a1 = _ssp_vector(X1, y1, 1.0, 1.0, True)
        a2 = _ssp_vector(X2, y2, 1.0, 1.0, True)
        z = a1 + rng.normal(size=(200, a1.size)) * scale * 3
        log_ratio = (np.linalg.norm(z - a2, axis=1) - np.linalg.norm(z - a1, axis=1)) / scale
        assert np.max(np.abs(log_ratio)) <= 0.5 + 1e-9


# ---------------------------------------------------------------------------
# DPRidgeRegression
# ---------------------------------------------------------------------------

def test_ridge_attributes_and_noise_scale():
    X, y = _regression_data()
    model = DPRidgeRegression(epsilon=0.8, delta=1e-7, l2=2.0, x_bound=1.2, y_bound=0.9, rng=0).fit(X, y)
    expected = 1.2 ** 0 * math.sqrt(1.44 + 1) * math.sqrt(1.44 + 1 + 0.81) * dp_accounting.get_sigma_gaussian(0.8, 1e-7)
    assert model.noise_scale_ == pytest.approx(expected, rel=1e-8)
    assert model.sensitivity_ == pytest.approx(ssp_sensitivity(1.2, 0.9, True))
    assert model.privacy_.add_remove == (0.8, 1e-7) and model.privacy_.relation == "add/remove"
    assert model.privacy_.replace_one == pytest.approx((1.6, (1 + math.exp(0.8)) * 1e-7))
    assert "x_bound = 1.2" in model.privacy_.public and "chapter 7" in str(model.privacy_)
    assert model.mechanism_ == "gaussian"
    assert DPRidgeRegression.relation == "add/remove"
    assert model.coef_.shape == (3,) and isinstance(model.intercept_, float)
    assert model.n_features_in_ == 3


def test_ridge_converges_to_nonprivate_ridge_for_huge_epsilon():
    X, y = _regression_data()
    model = DPRidgeRegression(epsilon=1e9, delta=1e-6, l2=3.0, x_bound=2.0, y_bound=5.0, rng=0).fit(X, y)
    Xa = clipped_design(X, 2.0, True)
    exact = np.linalg.solve(Xa.T @ Xa + 3.0 * np.eye(4), Xa.T @ y)
    assert np.allclose(np.append(model.coef_, model.intercept_), exact, atol=1e-4)  # noise std ~3e-4 / n-scale


def test_ridge_is_accurate_for_moderate_epsilon_and_large_n():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(20000, 2))
    y = X @ [1.0, -1.0] + 0.05 * rng.normal(size=20000)
    model = DPRidgeRegression(epsilon=1.0, rng=1, x_bound=1.0, y_bound=1.0).fit(X, y)
    assert np.allclose(model.coef_, [1.0, -1.0], atol=0.05)


def test_ridge_predictions_within_bounds_and_inputs_clipped():
    X, y = _regression_data()
    model = DPRidgeRegression(epsilon=0.01, y_bound=0.5, rng=0, x_bound=1.0).fit(X, y * 100)
    pred = model.predict(np.vstack([X, X * 1e6]))
    assert np.all(np.abs(pred) <= 0.5)
    far = model.predict(np.array([[1e6, 0.0, 0.0]]))
    near = model.predict(np.array([[1.0, 0.0, 0.0]]))  # the far point is clipped to norm x_bound=1
    assert far == pytest.approx(near)


def test_ridge_deterministic_seed_and_permutation_invariant():
    X, y = _regression_data()
    a = DPRidgeRegression(rng=5, x_bound=1.0, y_bound=1.0).fit(X, y)
    b = DPRidgeRegression(rng=5, x_bound=1.0, y_bound=1.0).fit(X, y)
    c = DPRidgeRegression(rng=6, x_bound=1.0, y_bound=1.0).fit(X, y)
    perm = np.random.default_rng(0).permutation(len(y))
    d = DPRidgeRegression(rng=5, x_bound=1.0, y_bound=1.0).fit(X[perm], y[perm])
    assert np.array_equal(a.coef_, b.coef_)
    assert not np.allclose(a.coef_, c.coef_)
    assert np.allclose(a.coef_, d.coef_, atol=1e-10) and a.intercept_ == pytest.approx(d.intercept_, abs=1e-10)


def test_ridge_noisy_system_always_solvable():
    """Tiny epsilon makes the noisy Gram matrix indefinite; the PSD projection plus l2 keeps it solvable."""
    X, y = _regression_data(n=5)
    for seed in range(20):
        model = DPRidgeRegression(epsilon=1e-3, l2=1e-3, rng=seed, x_bound=1.0, y_bound=1.0).fit(X, y)
        assert np.all(np.isfinite(model.coef_)) and math.isfinite(model.intercept_)


def test_ridge_pure_dp_and_one_sample():
    model = DPRidgeRegression(epsilon=2.0, delta=0.0, rng=0, x_bound=1.0, y_bound=1.0).fit([[0.3, 0.1]], [0.2])
    assert model.mechanism_ == "l2-laplace"
    assert model.noise_scale_ == pytest.approx(ssp_sensitivity(1.0, 1.0, True) / 2.0)
    assert np.all(np.isfinite(model.predict([[0.0, 0.0]])))


def test_ridge_extreme_epsilon_and_huge_n():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200000, 2)) * 0.5
    y = X[:, 0]
    for eps in (1e-3, 1e3):
        pred = DPRidgeRegression(epsilon=eps, rng=1, x_bound=1.0, y_bound=1.0).fit(X, y).predict(X[:10])
        assert np.all(np.isfinite(pred))


def test_ridge_clone_and_params():
    model = DPRidgeRegression(epsilon=0.3, l2=5.0, rng=7, x_bound=1.0, y_bound=1.0)
    twin = clone(model)
    assert twin.get_params() == model.get_params()
    X, y = _regression_data()
    assert np.array_equal(twin.fit(X, y).coef_, model.fit(X, y).coef_)


@pytest.mark.parametrize("params, match", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"), ({"delta": 1.0}, "delta"),
    ({"delta": -1e-9}, "delta"), ({"l2": 0.0}, "l2"), ({"x_bound": 0.0}, "x_bound"), ({"y_bound": -1.0}, "y_bound"),
])
def test_ridge_rejects_bad_parameters(params, match):
    X, y = _regression_data(n=20)
    with pytest.raises(ValueError, match=match):
        DPRidgeRegression(**{"x_bound": 1.0, "y_bound": 1.0, **params}).fit(X, y)


def test_ridge_rejects_bad_data_and_unfitted_use():
    X, y = _regression_data(n=20)
    with pytest.raises(NotFittedError, match="fit"):
        DPRidgeRegression(x_bound=1.0, y_bound=1.0).predict(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPRidgeRegression(x_bound=1.0, y_bound=1.0).fit(Xn, y)
    with pytest.raises(ValueError, match="NaN"):
        DPRidgeRegression(x_bound=1.0, y_bound=1.0).fit(X, np.where(np.arange(20) == 3, np.nan, y))
    with pytest.raises(ValueError, match="different numbers"):
        DPRidgeRegression(x_bound=1.0, y_bound=1.0).fit(X, y[:-1])
    with pytest.raises(ValueError, match="two-dimensional"):
        DPRidgeRegression(x_bound=1.0, y_bound=1.0).fit(X[:, 0], y)
    with pytest.raises(TypeError, match="fit_intercept"):
        DPRidgeRegression(fit_intercept="yes", x_bound=1.0, y_bound=1.0).fit(X, y)
    model = DPRidgeRegression(rng=0, x_bound=1.0, y_bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])


# ---------------------------------------------------------------------------
# DPLogisticRegression
# ---------------------------------------------------------------------------

def test_output_perturbation_sensitivity_formula():
    b = math.sqrt(2.0)
    assert output_perturbation_sensitivity(1.0, 4.0) == pytest.approx((1 + 2 * _SOLVER_SLACK) * b / 4)
    assert output_perturbation_sensitivity(1.0, 4.0, n_classes=3) == pytest.approx((math.sqrt(2) + 2e-6) * b / 4)
    assert output_perturbation_sensitivity(2.0, 1.0, False, 2, "replace-one") == pytest.approx((2 + 2e-6) * 2)


@pytest.mark.parametrize("k", [2, 4])
def test_logistic_minimiser_moves_at_most_sensitivity_under_add_remove(k):
    rng = np.random.default_rng(2)
    X, y = _classification_data(n=60, d=3, k=k)
    l2, x_bound = 0.5, 1.0
    sens = output_perturbation_sensitivity(x_bound, l2, True, k)
    sigma = sens * analytic_gaussian_sigma(1.0, 1e-6)

    def fit(X_, y_):
        Xa = clipped_design(X_, x_bound, True)
        return _minimise_logistic(Xa, one_hot(y_, k), l2, grad_tol=_SOLVER_SLACK * math.sqrt(2))

    base = fit(X, y)
    extra = [np.eye(3)[0] * 40, -np.ones(3), rng.normal(size=3), np.zeros(3)]
    worst = 0.0
    for x in extra:
        for label in range(k):
            dist = np.linalg.norm(fit(np.vstack([X, x]), np.append(y, label)) - base)
            assert dist <= sens
            assert _gaussian_hockey_stick(dist, sigma, 1.0) <= 1e-6 * (1 + 1e-9)
            worst = max(worst, dist)
    for i in range(5):
        assert np.linalg.norm(fit(np.delete(X, i, 0), np.delete(y, i)) - base) <= sens
    assert worst > 0.2 * sens  # the bound is not vacuous for these adversarial points
    # empty data set: minimiser 0; one point moves it by at most the sensitivity
    one = fit(np.array([[0.0, 5.0, 0.0]]), np.array([k - 1]))
    assert np.linalg.norm(one) <= sens


@pytest.mark.parametrize("k", [2, 3])
def test_logistic_solver_matches_sklearn(k):
    X, y = _classification_data(n=200, d=3, k=k)
    ours = DPLogisticRegression(epsilon=1e12, l2=2.0, fit_intercept=False, rng=0, classes=list(range(k)), x_bound=1.0).fit(X, y)
    Xc = clipped_design(X, 1.0, False)  # the rows our estimator sees (clipped to x_bound=1)
    ref = LogisticRegression(C=1 / 2.0, fit_intercept=False, tol=1e-12, max_iter=10000).fit(Xc, y)
    if k == 2:
        assert np.allclose(ours.coef_, ref.coef_, atol=1e-5)
    else:
        assert np.allclose(ours.predict_proba(X), ref.predict_proba(Xc), atol=1e-5)


def test_logistic_noise_has_stated_std():
    """300 seeds x 4 coefficients = 1200 draws around a fixed minimiser; sample variance has
    relative SE sqrt(2/1200)=0.041, we allow 5 SE."""
    X, y = _classification_data(n=100)
    fits = [DPLogisticRegression(epsilon=1.5, delta=1e-5, l2=3.0, rng=s, classes=[0, 1], x_bound=1.0).fit(X, y) for s in range(300)]
    theta = np.array([np.append(f.coef_, f.intercept_) for f in fits])
    noise = (theta - theta.mean(axis=0)).ravel()
    scale = fits[0].noise_scale_
    expected = output_perturbation_sensitivity(1.0, 3.0, True, 2) * dp_accounting.get_sigma_gaussian(1.5, 1e-5)
    assert scale == pytest.approx(expected, rel=1e-8)
    assert abs(noise.var() * 300 / 299 / scale**2 - 1) < 5 * math.sqrt(2 / noise.size)


def test_logistic_probabilities_valid_and_labels_kept():
    X, y = _classification_data(n=150, k=3)
    labels = np.array(["cat", "dog", "emu"])[y]
    model = DPLogisticRegression(epsilon=0.5, rng=0, classes=["cat", "dog", "emu"], x_bound=1.0).fit(X, labels)
    proba = model.predict_proba(np.vstack([X, X * 1e8]))
    assert proba.shape == (300, 3)
    assert np.all((proba >= 0) & (proba <= 1)) and np.allclose(proba.sum(axis=1), 1)
    assert set(model.predict(X)) <= {"cat", "dog", "emu"}
    assert model.coef_.shape == (3, 3) and model.intercept_.shape == (3,)
    binary = DPLogisticRegression(epsilon=0.5, rng=0, classes=[False, True], x_bound=1.0).fit(X, y == 1)
    pb = binary.predict_proba(X)
    assert pb.shape == (150, 2) and np.allclose(pb.sum(axis=1), 1)
    assert binary.coef_.shape == (1, 3) and list(binary.classes_) == [False, True]


def test_logistic_public_classes_and_label_errors():
    X, y = _classification_data(n=50)
    model = DPLogisticRegression(classes=[0, 1, 2], rng=0, x_bound=1.0).fit(X, y)  # class 2 absent from y: still fine
    assert list(model.classes_) == [0, 1, 2] and model.predict_proba(X).shape == (50, 3)
    model = DPLogisticRegression(classes=[0, 1], rng=0, x_bound=1.0).fit(X, np.zeros(50))  # one class present: fine
    assert list(model.classes_) == [0, 1]
    for estimator in (DPLogisticRegression(x_bound=1.0), DPSGDClassifier(steps=5, x_bound=1.0)):
        with pytest.raises(ValueError, match="public label set"):      # the label set is never read from y
            estimator.fit(X, y)
    with pytest.raises(ValueError, match="outside the public label set"):
        DPLogisticRegression(classes=[0, 1], x_bound=1.0).fit(X, y + 1)
    with pytest.raises(ValueError, match="distinct"):
        DPLogisticRegression(classes=[1, 1], x_bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        DPLogisticRegression(classes=[0, 1], x_bound=1.0).fit(X, np.where(np.arange(50) == 0, np.nan, y.astype(float)))
    with pytest.raises(TypeError, match="classes"):
        DPLogisticRegression(classes="01", x_bound=1.0).fit(X, y)
    # the message for labels outside the label set quotes no data value and no count
    a = pytest.raises(ValueError, DPLogisticRegression(classes=[0, 1], x_bound=1.0).fit, X, np.where(np.arange(50) < 3, 7, y))
    b = pytest.raises(ValueError, DPLogisticRegression(classes=[0, 1], x_bound=1.0).fit, X, np.where(np.arange(50) < 9, 5, y))
    assert str(a.value) == str(b.value)


def test_logistic_determinism_permutation_clone_and_errors():
    X, y = _classification_data(n=80)
    a = DPLogisticRegression(rng=3, classes=[0, 1], x_bound=1.0).fit(X, y)
    perm = np.random.default_rng(1).permutation(80)
    b = DPLogisticRegression(rng=3, classes=[0, 1], x_bound=1.0).fit(X[perm], y[perm])
    assert np.allclose(a.coef_, b.coef_, atol=1e-8)
    assert np.array_equal(clone(a).fit(X, y).coef_, a.coef_)
    assert DPLogisticRegression.relation == "add/remove"
    assert a.privacy_.add_remove == (1.0, 1e-6) and a.privacy_.epsilon == 1.0
    pure = DPLogisticRegression(delta=0.0, epsilon=2.0, rng=0, classes=[0, 1], x_bound=1.0).fit(X, y)
    assert pure.mechanism_ == "l2-laplace" and pure.noise_scale_ == pytest.approx(pure.sensitivity_ / 2.0)
    with pytest.raises(NotFittedError):
        DPLogisticRegression(x_bound=1.0).predict_proba(X)
    with pytest.raises(ValueError, match="epsilon"):
        DPLogisticRegression(epsilon=0, classes=[0, 1], x_bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="different numbers"):
        DPLogisticRegression(classes=[0, 1], x_bound=1.0).fit(X, y[:-1])
    with pytest.raises(ValueError, match="l2"):
        DPLogisticRegression(l2=0, classes=[0, 1], x_bound=1.0).fit(X, y)


# ---------------------------------------------------------------------------
# DP-SGD accounting
# ---------------------------------------------------------------------------

def _direct_epsilon(sigma, q, steps, delta, accountant):
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    acc = dp_accounting.rdp.RdpAccountant() if accountant == "rdp" else dp_accounting.pld.PLDAccountant()
    acc.compose(event)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_dp_sgd_epsilon_equals_direct_dp_accounting(accountant):
    cases = [(1.1, 0.01, 200), (2.0, 0.1, 50)] if accountant == "rdp" else [(2.0, 0.1, 20)]
    for sigma, q, steps in cases:
        assert dp_sgd_epsilon(sigma, q, steps, 1e-6, accountant) == pytest.approx(
            _direct_epsilon(sigma, q, steps, 1e-6, accountant), rel=1e-12)


def test_dp_sgd_epsilon_neighbouring_relation_is_add_remove():
    acc = dp_accounting.rdp.RdpAccountant()
    assert acc.neighboring_relation == dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def test_dp_sgd_epsilon_monotone_in_each_argument():
    base = dict(noise_multiplier=1.5, sampling_rate=0.02, steps=200, delta=1e-6)
    e0 = dp_sgd_epsilon(**base)
    assert dp_sgd_epsilon(**{**base, "noise_multiplier": 2.0}) < e0
    assert dp_sgd_epsilon(**{**base, "sampling_rate": 0.05}) > e0
    assert dp_sgd_epsilon(**{**base, "steps": 400}) > e0
    assert dp_sgd_epsilon(**{**base, "delta": 1e-9}) > e0
    assert dp_sgd_epsilon(0.0, 0.1, 10, 1e-6) == math.inf


def test_dp_sgd_single_full_batch_step_is_gaussian_mechanism():
    """q=1, T=1 is the Gaussian mechanism: RDP is a valid upper bound on the exact epsilon,
    PLD matches it up to its discretisation."""
    exact = dp_accounting.get_epsilon_gaussian(2.0, 1e-5)
    assert dp_sgd_epsilon(2.0, 1.0, 1, 1e-5, "rdp") >= exact
    assert dp_sgd_epsilon(2.0, 1.0, 1, 1e-5, "pld") == pytest.approx(exact, abs=1e-3)


def test_dp_sgd_noise_multiplier_round_trip():
    for target in (0.5, 8.0):
        sigma = dp_sgd_noise_multiplier(target, 0.02, 100, 1e-6, rtol=1e-3)
        assert dp_sgd_epsilon(sigma, 0.02, 100, 1e-6) <= target
        assert dp_sgd_epsilon(sigma / (1 + 2e-3), 0.02, 100, 1e-6) > target


def test_dp_sgd_estimator_calibrates_to_a_budget():
    X, y = _regression_data(n=100)
    model = DPSGDRegressor(epsilon=3.0, sampling_rate=0.05, steps=40, rng=0, x_bound=1.0, y_bound=1.0).fit(X, y)
    assert model.noise_multiplier_ == dp_sgd_noise_multiplier(3.0, 0.05, 40, 1e-6)
    assert model.epsilon_ <= 3.0 and model.epsilon_ == pytest.approx(3.0, rel=0.01)
    assert DPSGDRegressor(noise_multiplier=2.0, steps=3, rng=0, x_bound=1.0, y_bound=1.0).fit(X, y).noise_multiplier_ == 2.0


@pytest.mark.parametrize("args, match", [
    ((1.0, 0.0, 10, 1e-6), "sampling_rate"), ((1.0, 1.5, 10, 1e-6), "sampling_rate"),
    ((1.0, 0.1, 0, 1e-6), "steps"), ((1.0, 0.1, 10, 0.0), "delta"), ((-1.0, 0.1, 10, 1e-6), "noise_multiplier"),
])
def test_dp_sgd_epsilon_rejects_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        dp_sgd_epsilon(*args)
    with pytest.raises(ValueError, match="accountant"):
        dp_sgd_epsilon(1.0, 0.1, 10, 1e-6, accountant="moments")


# ---------------------------------------------------------------------------
# DP-SGD estimators
# ---------------------------------------------------------------------------

def test_dp_sgd_per_example_clipping_is_exact():
    """One full-batch step without noise equals the manual clipped-gradient step."""
    X = np.array([[1.0, 0.0], [0.0, 0.5], [0.6, 0.8]])
    y = np.array([1.0, -1.0, 0.5])
    model = DPSGDRegressor(noise_multiplier=0.0, clip_norm=0.4, sampling_rate=1.0, steps=1, learning_rate=0.3,
                           fit_intercept=False, y_bound=10.0, rng=0, x_bound=1.0).fit(X, y)
    grads = (0.0 - y)[:, None] * X              # theta_0 = 0
    norms = np.linalg.norm(grads, axis=1)
    clipped = grads * np.minimum(1, 0.4 / norms)[:, None]
    assert np.allclose(model.coef_, -0.3 * clipped.sum(axis=0) / 3)
    assert model.epsilon_ == math.inf and model.expected_batch_size_ == 3


def test_dp_sgd_noise_has_stated_std():
    """X = 0 and no intercept: gradients vanish, one step gives theta = -lr * N(0,(sigma C)^2)/b.
    600 seeds x 2 coordinates: variance relative SE sqrt(2/1200)=0.041, 5 SE allowed."""
    X = np.zeros((50, 2))
    y = np.ones(50)
    draws = [DPSGDRegressor(noise_multiplier=1.7, clip_norm=0.5, sampling_rate=0.2, steps=1, learning_rate=2.0,
                            fit_intercept=False, rng=s, x_bound=1.0, y_bound=1.0).fit(X, y).coef_ for s in range(600)]
    draws = np.ravel(draws)
    expected_std = 2.0 * 1.7 * 0.5 / (0.2 * 50)
    assert abs(draws.var() / expected_std**2 - 1) < 5 * math.sqrt(2 / draws.size)


def test_dp_sgd_without_noise_converges_to_ridge_solution():
    X, y = _regression_data(n=200, d=2)
    model = DPSGDRegressor(noise_multiplier=0.0, clip_norm=1e6, sampling_rate=1.0, steps=3000, learning_rate=0.5,
                           l2=0.1, y_bound=10.0, fit_intercept=True, rng=0, x_bound=1.0).fit(X, y)
    Xa = clipped_design(X, 1.0, True)
    exact = np.linalg.solve(Xa.T @ Xa / 200 + 0.1 * np.eye(3), Xa.T @ y / 200)
    assert np.allclose(np.append(model.coef_, model.intercept_), exact, atol=1e-6)


def test_dp_sgd_regressor_privacy_bookkeeping_and_bounds():
    X, y = _regression_data(n=400)
    model = DPSGDRegressor(noise_multiplier=1.2, sampling_rate=0.05, steps=100, y_bound=0.7, rng=0, x_bound=1.0).fit(X, y)
    assert model.epsilon_ == pytest.approx(dp_sgd_epsilon(1.2, 0.05, 100, 1e-6))
    assert model.privacy_.replace_one[0] == pytest.approx(2 * model.epsilon_)   # b = q n: replace-one only
    assert model.privacy_.relation == "replace-one" and model.privacy_.add_remove is None
    assert model.expected_batch_size_ == pytest.approx(20.0)
    assert np.all(np.abs(model.predict(X * 1e3)) <= 0.7)
    fixed = DPSGDRegressor(steps=10, expected_batch_size=25.0, rng=0, x_bound=1.0, y_bound=1.0).fit(X, y)
    assert fixed.expected_batch_size_ == 25.0
    assert fixed.privacy_.add_remove == (fixed.epsilon_, 1e-6) and fixed.privacy_.relation == "add/remove"
    pld = DPSGDRegressor(steps=20, noise_multiplier=2.0, sampling_rate=0.1, accountant="pld", rng=0, x_bound=1.0, y_bound=1.0).fit(X, y)
    assert pld.epsilon_ == pytest.approx(dp_sgd_epsilon(2.0, 0.1, 20, 1e-6, "pld"))
    assert DPSGDRegressor.relation == "add/remove"


def test_dp_sgd_deterministic_and_clone():
    X, y = _regression_data(n=200)
    a = DPSGDRegressor(steps=50, rng=4, x_bound=1.0, y_bound=1.0).fit(X, y)
    b = clone(a).fit(X, y)
    c = DPSGDRegressor(steps=50, rng=5, x_bound=1.0, y_bound=1.0).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and not np.allclose(a.coef_, c.coef_)


@pytest.mark.parametrize("k", [2, 3])
def test_dp_sgd_classifier_probabilities_and_accuracy(k):
    X, y = _classification_data(n=600, k=k)
    model = DPSGDClassifier(noise_multiplier=0.8, sampling_rate=0.1, steps=300, learning_rate=1.0, rng=0,
                            x_bound=3.0, classes=list(range(k))).fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (600, k) and np.allclose(proba.sum(axis=1), 1) and proba.min() >= 0
    assert model.score(X, y) > (0.8 if k == 2 else 0.6)
    assert model.coef_.shape == ((1, 3) if k == 2 else (3, 3))
    assert model.epsilon_ == pytest.approx(dp_sgd_epsilon(0.8, 0.1, 300, 1e-6))


@pytest.mark.parametrize("params, match", [
    ({"sampling_rate": 0.0}, "sampling_rate"), ({"sampling_rate": 2.0}, "sampling_rate"),
    ({"clip_norm": 0.0}, "clip_norm"), ({"delta": 0.0}, "delta"), ({"steps": 0}, "steps"),
    ({"learning_rate": -1.0}, "learning_rate"), ({"accountant": "gdp"}, "accountant"),
    ({"expected_batch_size": 0.0}, "expected_batch_size"), ({"noise_multiplier": -0.5}, "noise_multiplier"),
])
def test_dp_sgd_rejects_bad_parameters(params, match):
    X, y = _classification_data(n=30)
    with pytest.raises(ValueError, match=match):
        DPSGDClassifier(**{"steps": 5, "classes": [0, 1], "x_bound": 1.0, **params}).fit(X, y)


def test_dp_sgd_unfitted_and_shape_errors():
    X, y = _regression_data(n=30)
    with pytest.raises(NotFittedError):
        DPSGDRegressor(x_bound=1.0, y_bound=1.0).predict(X)
    with pytest.raises(NotFittedError):
        DPSGDClassifier(x_bound=1.0).predict(X)
    with pytest.raises(ValueError, match="different numbers"):
        DPSGDRegressor(steps=5, x_bound=1.0, y_bound=1.0).fit(X, y[:3])
    model = DPSGDRegressor(steps=5, rng=0, x_bound=1.0, y_bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :1])


@pytest.mark.parametrize("make, name", [
    (lambda: DPRidgeRegression(), "x_bound"), (lambda: DPRidgeRegression(x_bound=1.0), "y_bound"),
    (lambda: DPLogisticRegression(), "x_bound"), (lambda: DPSGDRegressor(x_bound=2.0), "y_bound"),
    (lambda: DPSGDClassifier(), "x_bound"),
    (lambda: private_sufficient_statistics(np.ones((3, 1)), np.ones(3), x_bound=1.0), "y_bound"),
])
def test_public_bounds_are_required_with_advice(make, name):
    """No silent default for a public bound: the refusal names it and says how to choose it."""
    with pytest.raises(TypeError, match=rf"needs the public {name}: pass {name}=.*units.*before seeing the data"):
        make()


def test_dp_sgd_with_a_size_dependent_step_is_replace_one_only():
    """expected_batch_size=None divides by the data's own size: add/remove is not covered, and the account says so."""
    X, y = _regression_data(n=200)
    model = DPSGDRegressor(epsilon=1.0, steps=20, x_bound=1.0, y_bound=1.0, rng=0).fit(X, y)
    assert model.privacy_.add_remove is None and model.privacy_.relation == "replace-one"
    assert model.privacy_.replace_one[0] == pytest.approx(2 * model.epsilon_)
    assert any("expected_batch_size" in note for note in model.privacy_.notes)


def test_noise_multiplier_search_has_public_tolerance_bounds_and_handles_epsilon_zero():
    """rtol below 1e-9 is refused (it used to spin for ever); a target the accountant can only meet with
    epsilon = 0 (a huge noise) is reached without a log(0); a tiny sampling rate with epsilon 0 at sigma = 1
    returns a small sigma whose epsilon is still within the target."""
    with pytest.raises(ValueError, match="rtol=1e-300 must be >= 1e-09"):
        dp_sgd_noise_multiplier(1.0, 0.01, 10, 1e-5, rtol=1e-300)
    with pytest.raises(TypeError, match="accountant must be one of"):
        dp_sgd_noise_multiplier(1.0, 0.01, 10, 1e-5, accountant=np.array(["rdp", "pld"]))
    tiny = dp_sgd_noise_multiplier(1e-300, 0.01, 10, 1e-5, rtol=0.1)
    assert dp_sgd_epsilon(tiny, 0.01, 10, 1e-5) <= 1e-300
    sigma = dp_sgd_noise_multiplier(1.0, 1e-12, 10, 1e-5, rtol=0.1)
    assert dp_sgd_epsilon(sigma, 1e-12, 10, 1e-5) <= 1.0
    tight, default = (dp_sgd_noise_multiplier(1.0, 0.01, 10, 1e-5, rtol=r) for r in (1e-9, 1e-3))
    assert default / (1 + 1e-3) <= tight <= default and dp_sgd_epsilon(tight, 0.01, 10, 1e-5) <= 1.0


def test_dp_sgd_estimators_name_their_epsilon_and_clip_without_overflow():
    X = np.random.default_rng(3).normal(size=(40, 2))
    y = X[:, 0]
    with pytest.raises(TypeError, match="^epsilon must be a real number"):
        DPSGDRegressor(epsilon="1", steps=5, x_bound=1.0, y_bound=1.0, expected_batch_size=8.0).fit(X, y)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a huge clip norm: the clip factor is 1, no overflow warning
        model = DPSGDClassifier(clip_norm=1e30, steps=3, x_bound=1.0, classes=[0, 1], expected_batch_size=8.0,
                                rng=0).fit(X, (y > 0).astype(int))
    assert np.all(np.isfinite(model.coef_))


@pytest.mark.parametrize("k", [1, 3])
def test_logistic_hessian_in_row_blocks_matches_the_formula(k, monkeypatch):
    """The blocked Hessian equals sum_i (diag(p_i) - p_i p_i^T) kron x_i x_i^T + l2 I over several blocks."""
    monkeypatch.setattr("dpcp_tutorial.training._common.BLOCK_BYTES", 1)      # blocks of 1024 rows
    rng = np.random.default_rng(5)
    n, p = 1024 * 2 + 37, 3
    Xa = rng.normal(size=(n, p))
    P = probabilities(rng.normal(size=(n, k)) * 2.0)
    if k == 1:
        W = (P * (1.0 - P))[:, :, None]
    else:
        W = P[:, :, None] * (np.eye(k)[None] - P[:, None, :])
    expected = np.einsum("ikl,ia,ib->kalb", W, Xa, Xa).reshape(k * p, k * p) + 0.7 * np.eye(k * p)
    hessian = _logistic_hessian(Xa, P, 0.7)
    np.testing.assert_allclose(hessian, expected, rtol=1e-11, atol=1e-9)
    assert np.array_equal(hessian, hessian.T)


@pytest.mark.parametrize("k", [2, 3])
def test_logistic_solver_certifies_its_gradient_over_several_blocks(k, monkeypatch):
    """On more rows than one Hessian block, the returned minimiser has gradient norm at most the tolerance."""
    monkeypatch.setattr("dpcp_tutorial.training._common.BLOCK_BYTES", 1)      # blocks of 1024 rows
    X, y = _classification_data(n=1024 * 3 + 500, d=4, k=k)
    Xa, Y = clipped_design(X, 1.0, True), one_hot(y, k)
    tol = _SOLVER_SLACK * math.sqrt(2)
    theta = _minimise_logistic(Xa, Y, 5.0, grad_tol=tol)
    grad = (probabilities(Xa @ theta.T) - Y).T @ Xa + 5.0 * theta
    assert np.linalg.norm(grad) <= tol * (1 + 1e-6)


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_row_norms_in_blocks_are_numpy_norms(layout, monkeypatch):
    """The clip factors use norms equal bit for bit to numpy.linalg.norm(X, axis=1), over several blocks."""
    from dpcp_tutorial.training._common import row_norms

    monkeypatch.setattr("dpcp_tutorial.training._common.BLOCK_BYTES", 1)      # blocks of 1024 rows
    rng = np.random.default_rng(8)
    X = rng.normal(size=(2600, 24)) * rng.exponential(size=(2600, 24))
    X = {"C": X, "F": np.asfortranarray(X), "strided": X[:, ::2]}[layout]
    assert np.array_equal(row_norms(X), np.linalg.norm(X, axis=1))


@pytest.mark.parametrize("k", [2, 3])
def test_logistic_solver_with_a_subsampled_hessian_certifies_the_same_minimiser(k, monkeypatch):
    """On more than 2 * _HESSIAN_ROWS rows the Newton systems use every s-th row's Hessian; the stopping test
    is the exact gradient's, so the result is certified and within grad_tol / l2 of the full-Hessian one."""
    X, y = _classification_data(n=3000, d=4, k=k, seed=3)
    Xa, Y = clipped_design(X, 1.0, True), one_hot(y, k)
    tol, l2 = _SOLVER_SLACK * math.sqrt(2), 3.0
    exact = _minimise_logistic(Xa, Y, l2, grad_tol=tol)
    monkeypatch.setattr("dpcp_tutorial.training.logistic._HESSIAN_ROWS", 256)        # stride 11: 273 rows
    rows_used = []
    original = _logistic_hessian

    def spy(design, P, l2_, *dtype):
        rows_used.append(P.shape[0])
        return original(design, P, l2_, *dtype)

    monkeypatch.setattr("dpcp_tutorial.training.logistic._logistic_hessian", spy)
    theta = _minimise_logistic(Xa, Y, l2, grad_tol=tol)
    assert rows_used and max(rows_used) == 273                     # only the subsample's Hessian was needed
    grad = (probabilities(Xa @ theta.T) - Y).T @ Xa + l2 * theta
    assert np.linalg.norm(grad) <= tol
    assert np.linalg.norm(theta - exact) <= 2 * tol / l2


def test_logistic_solver_falls_back_to_the_full_hessian_on_an_unrepresentative_subsample(monkeypatch):
    """Rows the subsample sees carry no information (zero features): its Hessian is only the penalty, the
    steps stall, and the solver switches to the full Hessian; the result is still certified."""
    X, y = _classification_data(n=3000, d=4, seed=4)
    X[::11] = 0.0                                                   # exactly the rows of stride 11
    Xa, Y = clipped_design(X, 1.0, True), one_hot(y, 2)
    Xa[::11, -1] = 0.0                                              # the intercept column too
    tol, l2 = _SOLVER_SLACK * math.sqrt(2), 0.5
    monkeypatch.setattr("dpcp_tutorial.training.logistic._HESSIAN_ROWS", 256)
    rows_used = []
    original = _logistic_hessian

    def spy(design, P, l2_, *dtype):
        rows_used.append(P.shape[0])
        return original(design, P, l2_, *dtype)

    monkeypatch.setattr("dpcp_tutorial.training.logistic._logistic_hessian", spy)
    theta = _minimise_logistic(Xa, Y, l2, grad_tol=tol)
    assert rows_used[0] == 273 and rows_used[-1] == 3000
    grad = (probabilities(Xa @ theta.T) - Y).T @ Xa + l2 * theta
    assert np.linalg.norm(grad) <= tol


def test_fit_clip_factors_clip_like_the_numpy_norms():
    """The fit's clip factors come from one einsum pass: within rounding of numpy's norms, and exactly 1 for
    the rows inside the bound."""
    from dpcp_tutorial.training._common import fit_clip_factors

    rng = np.random.default_rng(9)
    X = rng.normal(size=(3000, 5)) * rng.exponential(size=(3000, 1))
    norms = np.linalg.norm(X, axis=1)
    expected = np.minimum(1.0, 1.5 / norms)
    factors = fit_clip_factors(X, 1.5)
    np.testing.assert_allclose(factors, expected, rtol=1e-15)
    inside = norms < 1.5 * (1 - 1e-12)
    assert inside.any() and np.all(factors[inside] == 1.0)


def test_logistic_design_without_clipped_rows_skips_the_factors_exactly():
    """When no row is clipped the design uses the rows as they are: the same minimiser, bit for bit, as with
    explicit clip factors of 1."""
    from dpcp_tutorial.training.logistic import _ClippedDesign

    X, y = _classification_data(n=600, d=4, seed=5)
    design = _ClippedDesign.clipped(X, 100.0, True)
    assert design.factors is None
    ones = _ClippedDesign(X, np.ones(len(X)), True)
    Y = one_hot(y, 2)
    assert np.array_equal(_minimise_logistic(design, Y, 2.0, grad_tol=1e-8),
                          _minimise_logistic(ones, Y, 2.0, grad_tol=1e-8))


@pytest.mark.parametrize("k", [2, 3])
def test_logistic_hessian_from_single_precision_products_is_close_to_the_double_one(k):
    """The solver's Newton systems use products of rows rounded to float32, summed in float64: within a
    relative 1e-5 of the double-precision Hessian (the steps only; the certificate is the exact gradient)."""
    X, y = _classification_data(n=5000, d=4, k=k, seed=7)
    Xa, Y = clipped_design(X, 1.0, True), one_hot(y, k)
    P = probabilities(Xa @ np.random.default_rng(1).normal(size=(Y.shape[1], Xa.shape[1])).T)
    double = _logistic_hessian(Xa, P, 0.7)
    single = _logistic_hessian(Xa, P, 0.7, np.float32)
    assert single.dtype == np.float64 and np.array_equal(single, single.T)
    np.testing.assert_allclose(single, double, rtol=0, atol=1e-5 * np.abs(double).max())
