"""Bad-input sweep over every public function and estimator of dpcp_tutorial (issue 10, section 3).

Every public callable is called once with valid arguments (``BASE``), then with
each parameter replaced, one at a time, by values that are invalid for it
(``BAD``) or extreme but legal (``EXTREME``). Each call must either succeed
with an output free of NaN, or raise ``ValueError``/``TypeError`` (scikit-learn's
``NotFittedError`` is a ``ValueError``) with a message that says something. An
unhelpful crash (``ZeroDivisionError``, ``IndexError``, ``AttributeError``,
``OverflowError``, ...), a NaN in the output or a bad value that is silently
accepted fails the test. A new public name must be added to ``BASE`` (or, with a
reason, to ``NOT_SWEPT``).
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

import dpcp_tutorial as dp

# --------------------------------------------------------------------------- data

_R = np.random.default_rng(0)
X = _R.normal(size=(80, 2)) * 0.4
Y = X @ np.array([1.0, -0.5]) + 0.1 * _R.normal(size=80)
YC = (X[:, 0] > 0).astype(int)
XT = _R.normal(size=(6, 2)) * 0.4
SCORES = _R.uniform(size=150)
DATA2 = _R.normal(size=(40, 2))
PROBA = np.full((5, 3), 1 / 3)
DIRS = dp.random_directions(8, 2, rng=1)
GRID = dp.public_grid(-1, 1, 5, 2)
BOX = ((-4.0, -4.0), (4.0, 4.0))


def _regions():
    return dp.tukey_depth_regions(DATA2[:12], BOX, 1.0)


# --------------------------------------------------------------------------- valid calls

def _est(cls, fit, **fixed):
    """An estimator run as a function of its constructor parameters."""
    def run(**params):
        return fit(cls(**{**fixed, **params}))
    run.__name__ = cls.__name__
    return run


def _fit_xy(model):
    return model.fit(X, Y)


def _fit_x1y(model):
    return model.fit(X[:, :1], Y)


def _fit_xc(model):
    return model.fit(X, YC)


def _split_fit(model, y):
    return model.fit(X[:40], y[:40]).calibrate(X[40:], y[40:])


BASE = {
    # name: (callable or None for the attribute itself, kwargs)
    "absolute_residual_score": (None, dict(y_true=Y, y_pred=Y * 0.9)),
    "aggregation_log_probabilities": (None, dict(updates=DATA2, epsilon=1.0, candidates=GRID)),
    "algorithm1_add_remove_loss": (None, dict(beta=0.1, n=200, epsilon=1.0)),
    "algorithm1_level": (None, dict(beta=0.1, n=200, epsilon=1.0)),
    "private_quantile_level": (None, dict(beta=0.1, n=2000, epsilon=1.0, bins=50)),
    "private_quantile_miscoverage_bound": (None, dict(alpha0=0.05, n=2000, epsilon=1.0, bins=50)),
    "private_quantile_privacy_loss": (None, dict(beta=0.1, n=2000, epsilon=1.0, bins=50)),
    "pps_privacy_loss": (None, dict(n=2000, alpha=0.1, epsilon=1.0, m=1000)),
    "aps_prediction_set": (None, dict(proba=PROBA, qhat=0.5)),
    "aps_score": (None, dict(proba=PROBA, y=np.array([0, 1, 2, 0, 1]))),
    "ball_candidates": (None, dict(n_candidates=20, d=2, radius=1.0, rng=0)),
    "bounded_interval": (None, dict(y_pred=Y[:5], qhat=0.5, bound=2.0)),
    "byzantine_updates": (None, dict(honest=DATA2, n_byzantine=3, scale=10.0, rng=0)),
    "clipped_mean_sensitivity": (None, dict(n_clients=20, clip_norm=1.0)),
    "coinpress_mean": (None, dict(data=DATA2, rho=0.5, radius=10.0, rng=0)),
    "conformal_quantile": (None, dict(scores=SCORES, alpha=0.1)),
    "conformal_rank": (None, dict(n=100, alpha=0.1)),
    "coordinatewise_private_median": (None, dict(data=DATA2, epsilon=1.0, bounds=(-5.0, 5.0), bins=50, rng=0)),
    "depth_median": (None, dict(data=DATA2, depth="spatial")),
    "depth_median_log_probabilities": (None, dict(data=DATA2, epsilon=1.0, candidates=GRID, smoothing=10.0)),
    "depth_sensitivity": (None, dict(depth="halfspace", n=100)),
    "differential_cp_coverage_floor": (None, dict(alpha=0.1, epsilon=1.0, delta=1e-6)),
    "differential_cp_interval": (None, dict(trainer=dp.DPRidgeRegression(x_bound=1.0, y_bound=1.0), X=X, y=Y, X_test=XT, alpha=0.2,
                                            corrected=True, rng=0)),
    "differential_cp_level": (None, dict(alpha=0.1, epsilon=1.0, delta=1e-6)),
    "differential_cp_quantile": (None, dict(scores=SCORES, alpha=0.1, epsilon=1.0, delta=1e-6, corrected=True)),
    "differential_cp_set": (None, dict(trainer=dp.DPLogisticRegression(classes=[0, 1], x_bound=1.0), X=X, y=YC, X_test=XT,
                                       alpha=0.2, corrected=True, rng=0)),
    "dp_clipped_mean_aggregate": (None, dict(updates=DATA2, clip_norm=1.0, epsilon=1.0, delta=1e-5, rng=0)),
    "dpcp_interval": (None, dict(trainer=dp.DPRidgeRegression(x_bound=1.0, y_bound=1.0), X=X, y=Y, X_test=XT, epsilon=4.0, training_share=0.25,
                                 bound=3.0, bins=50, rng=0, n=2000)),
    "dpcp_levels": (None, dict(n=2000, alpha=0.1, epsilon1=0.3, epsilon2=0.7, delta=1e-6, bins=50)),
    "dpcp_quantile": (None, dict(scores=SCORES, alpha=0.1, epsilon1=0.3, epsilon2=0.7, delta=1e-6, bins=50, rng=0,
                                 n=2000)),
    "dpcp_set": (None, dict(trainer=dp.DPLogisticRegression(x_bound=1.0), X=X, y=YC, X_test=XT, epsilon=4.0, training_share=0.25,
                            bins=50, rng=0, classes=[0, 1], n=2000)),
    "exponential_mechanism": (None, dict(utilities=np.arange(5.0), sensitivity=1.0, epsilon=1.0, rng=0)),
    "exponential_mechanism_probabilities": (None, dict(utilities=np.arange(5.0), sensitivity=1.0, epsilon=1.0,
                                                       log=False)),
    "full_conformal_interval": (None, dict(estimator=__import__("sklearn.linear_model").linear_model.Ridge(),
                                           X=X[:30], y=Y[:30], x_new=XT[0], alpha=0.2,
                                           y_grid=np.linspace(-2, 2, 21))),
    "gaussian_mechanism": (None, dict(value=1.0, sensitivity=1.0, epsilon=1.0, delta=1e-5, rng=0, analytic=True)),
    "gaussian_sigma": (None, dict(sensitivity=1.0, epsilon=1.0, delta=1e-5, analytic=True)),
    "gumbel_max_sample": (None, dict(logits=np.zeros(4), rng=0)),
    "halfspace_depth": (None, dict(points=DATA2[:5], data=DATA2)),
    "integrated_dual_depth": (None, dict(points=DATA2[:5], data=DATA2, n_directions=20, rng=0)),
    "integrated_dual_depth_gradient": (None, dict(points=DATA2[:5], data=DATA2, n_directions=20, smoothing=10.0,
                                                  rng=0)),
    "interval_coverage": (None, dict(y=Y[:5], intervals=np.column_stack([Y[:5] - 1, Y[:5] + 1]))),
    "interval_width": (None, dict(intervals=np.column_stack([Y[:5] - 1, Y[:5] + 1]))),
    "lac_prediction_set": (None, dict(proba=PROBA, qhat=0.5)),
    "lac_score": (None, dict(proba=PROBA, y=np.array([0, 1, 2, 0, 1]))),
    "langevin_step_size": (None, dict(beta=10.0, directions=DIRS, smoothing=10.0, prior_scale=5.0)),
    "laplace_mechanism": (None, dict(value=1.0, sensitivity=1.0, epsilon=1.0, rng=0)),
    "laplace_scale": (None, dict(sensitivity=1.0, epsilon=1.0)),
    "make_cauchy": (None, dict(n=10, d=2, rng=0)),
    "make_contaminated_gaussian": (None, dict(n=10, d=2, fraction=0.2, shift=5.0, rng=0)),
    "make_heteroscedastic_regression": (None, dict(n=10, rng=0, noise=0.5)),
    "mechanism_beta": (None, dict(epsilon=1.0, depth="halfspace", n=100)),
    "normalised_residual_score": (None, dict(y_true=Y, y_pred=Y * 0.9, bound=2.0)),
    "output_perturbation_sensitivity": (None, dict(x_bound=1.0, l2=1.0, fit_intercept=True, n_classes=2)),
    "pps_choose_m": (None, dict(n=500, alpha=0.1, epsilon=1.0, candidates=[10, 50, 100], rng=0)),
    "pps_corrected_level": (None, dict(n=500, alpha=0.1, epsilon=1.0, m=50, gamma=0.05)),
    "pps_grid": (None, dict(m=20)),
    "pps_optimal_gamma": (None, dict(n=500, alpha=0.1, epsilon=1.0)),
    "pps_private_quantile": (None, dict(scores=np.r_[SCORES, SCORES, SCORES, SCORES], alpha=0.1, epsilon=1.0,
                                        m=50, rng=0)),
    "pps_quantile_probabilities": (None, dict(scores=np.r_[SCORES, SCORES, SCORES, SCORES], alpha=0.1,
                                              epsilon=1.0, m=50, log=False)),
    "pps_round_up": (None, dict(scores=SCORES, m=20)),
    "private_depth_median": (None, dict(data=DATA2, epsilon=1.0, candidates=GRID, rng=0)),
    "private_median_aggregate": (None, dict(updates=DATA2, epsilon=1.0, candidates=GRID, rng=0)),
    "private_quantile": (None, dict(scores=SCORES, beta=0.1, epsilon=1.0, bins=50, rng=0)),
    "private_quantile_probabilities": (None, dict(scores=SCORES, beta=0.1, epsilon=1.0, bins=50, log=False)),
    "private_sufficient_statistics": (None, dict(X=X, y=Y, epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0,
                                                 fit_intercept=True, rng=0)),
    "public_grid": (None, dict(lower=-1.0, upper=1.0, num=3, d=2)),
    "pure_dp_to_zcdp": (None, dict(epsilon=1.0)),
    "quantile_edges": (None, dict(bins=10)),
    "random_directions": (None, dict(n_directions=5, d=2, rng=0)),
    "robust_aggregate": (None, dict(updates=DATA2, method="spatial_median")),
    "set_coverage": (None, dict(y=np.array([0, 1, 2]), sets=np.eye(3, dtype=bool))),
    "set_size": (None, dict(sets=np.eye(3, dtype=bool))),
    "spatial_depth": (None, dict(points=DATA2[:5], data=DATA2)),
    "spatial_median": (None, dict(data=DATA2, tol=1e-10, max_iter=100)),
    "ssp_sensitivity": (None, dict(x_bound=1.0, y_bound=1.0, fit_intercept=True)),
    "zcdp_to_approx_dp": (None, dict(rho=0.5, delta=1e-5)),
    "check_dp_trainer": (None, dict(trainer=dp.DPRidgeRegression(x_bound=1.0, y_bound=1.0))),
    "dp_sgd_epsilon": (None, dict(noise_multiplier=1.0, sampling_rate=0.01, steps=100, delta=1e-5)),
    "private_quantile_level": (None, dict(beta=0.1, n=500, epsilon=1.0, bins=50)),
    "private_quantile_miscoverage_bound": (None, dict(alpha0=0.05, n=500, epsilon=1.0, bins=50)),
    "private_quantile_privacy_loss": (None, dict(beta=0.1, n=500, epsilon=1.0, bins=50)),
    "pps_privacy_loss": (None, dict(n=500, alpha=0.1, epsilon=1.0, m=50)),
    "pcoqs_steps": (None, dict(lower=0.0, upper=1.0, tol=1e-6)),
    "pcoqs_quantile": (None, dict(scores=SCORES, alpha=0.1, rho=1.0, rng=0)),
    "pcoqs_corrected_level": (None, dict(alpha=0.1, n=1000, rho=0.5)),
    "laplace_prefix_tail": (None, dict(bins=50, scale=2.0, failure=0.01)),
    "laplace_histogram_quantile": (None, dict(scores=SCORES, alpha=0.1, epsilon=1.0, bins=20, rng=0)),
    "polygon_area": (None, dict(vertices=np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))),
    "opendp_quantile": (None, dict(scores=SCORES, alpha=0.1, epsilon=1.0, bins=20, rng=0)),
    "opendp_quantile_level": (None, dict(alpha=0.1, n=2000, epsilon=1.0, bins=20)),
    "opendp_quantile_probabilities": (None, dict(scores=SCORES, alpha=0.1, epsilon=1.0, bins=20)),
    "mondrian_privacy_loss": (None, dict(epsilon=1.0)),
    "count_lower_margin": (None, dict(epsilon=1.0, failure=0.01)),
    "noisy_class_counts": (None, dict(counts=np.array([3, 5]), epsilon=1.0, rng=0)),
    "normalized_score": (None, dict(y_true=Y, y_pred=Y * 0.9, scale=np.full(Y.size, 0.5), score_bound=4.0)),
    "cqr_score": (None, dict(y_true=Y, lower=Y - 1.0, upper=Y + 0.5, score_bound=4.0)),
    "cqr_interval": (None, dict(lower=Y[:5] - 1.0, upper=Y[:5] + 1.0, qhat=0.5, score_bound=4.0)),
    "normalized_interval": (None, dict(y_pred=Y[:5], scale=np.full(5, 0.5), qhat=0.5, score_bound=4.0)),
    "adaptive_privacy_account": (None, dict(mean_privacy=(1.0, 1e-6), scale_privacy=(0.5, 1e-6),
                                            calibration_epsilon=1.0, alpha=0.1, n=500, bins=50, public_n=False,
                                            disjoint=True)),
    "load_rand_hie": (None, dict(task="classification")),
    "tukey_depth_regions": (None, dict(data=DATA2[:12], box=BOX, epsilon=1.0)),
    "tukey_median_2d": (None, dict(data=DATA2[:12], box=BOX)),
    "private_tukey_median_2d": (None, dict(data=DATA2[:12], epsilon=1.0, box=BOX, rng=0)),
    "exact_cell_probabilities": (lambda **kw: dp.exact_cell_probabilities(_regions(), **kw),
                                 dict(epsilon=1.0, x_edges=np.linspace(-4, 4, 5), y_edges=np.linspace(-4, 4, 5))),
    # estimators and classes: swept over their constructor parameters
    "DPRidgeRegression": (_est(dp.DPRidgeRegression, _fit_xy), dict(epsilon=1.0, delta=1e-6, l2=1.0, x_bound=1.0,
                                                                   y_bound=1.0, fit_intercept=True, rng=0)),
    "DPLogisticRegression": (_est(dp.DPLogisticRegression, _fit_xc), dict(epsilon=1.0, delta=1e-6, l2=1.0,
                                                                         x_bound=1.0, fit_intercept=True, rng=0,
                                                                         classes=[0, 1])),
    "DPRegressogram": (_est(dp.DPRegressogram, _fit_x1y), dict(epsilon=1.0, delta=0.0, n_bins=10, low=-3.0,
                                                              high=3.0, y_bound=3.0, rng=0)),
    "DPSGDRegressor": (_est(dp.DPSGDRegressor, _fit_xy), dict(noise_multiplier=1.0, clip_norm=1.0,
                                                              sampling_rate=0.1, steps=5, learning_rate=0.2,
                                                              delta=1e-6, x_bound=1.0, y_bound=1.0, rng=0,
                                                              expected_batch_size=8.0)),
    "DPSGDClassifier": (_est(dp.DPSGDClassifier, _fit_xc), dict(noise_multiplier=1.0, clip_norm=1.0,
                                                                sampling_rate=0.1, steps=5, learning_rate=0.5,
                                                                delta=1e-6, x_bound=1.0, rng=0,
                                                                expected_batch_size=8.0, classes=[0, 1])),
    "DPCPRegressor": (_est(dp.DPCPRegressor, _fit_xy, trainer=dp.DPRidgeRegression(x_bound=1.0, y_bound=1.0)),
                      dict(alpha=0.1, epsilon=4.0, training_share=0.25, delta=1e-6, bound=3.0, bins=50, rng=0, n=2000)),
    "DPCPClassifier": (_est(dp.DPCPClassifier, _fit_xc, trainer=dp.DPLogisticRegression(x_bound=1.0)),
                       dict(alpha=0.1, epsilon=4.0, training_share=0.25, delta=1e-6, score="lac", bins=50, rng=0,
                            classes=[0, 1], n=2000)),
    "SplitConformalRegressor": (_est(dp.SplitConformalRegressor, lambda m: _split_fit(m, Y),
                                     estimator=dp.DPRidgeRegression(rng=0, x_bound=1.0, y_bound=1.0)), dict(alpha=0.1, prefit=False)),
    "SplitConformalClassifier": (_est(dp.SplitConformalClassifier, lambda m: _split_fit(m, YC),
                                      estimator=dp.DPLogisticRegression(rng=0, classes=[0, 1], x_bound=1.0)),
                                 dict(alpha=0.1, score="lac", prefit=False)),
    "PrivateSplitConformalRegressor": (_est(dp.PrivateSplitConformalRegressor, lambda m: _split_fit(m, Y),
                                            estimator=dp.DPRidgeRegression(rng=0, x_bound=1.0, y_bound=1.0)),
                                       dict(alpha=0.2, epsilon=5.0, bound=3.0, calibrator="pps", bins=50, m=20,
                                            gamma="auto", variant="tight", n=40, prefit=False, rng=0)),
    "PrivateSplitConformalClassifier": (_est(dp.PrivateSplitConformalClassifier, lambda m: _split_fit(m, YC),
                                             estimator=dp.DPLogisticRegression(rng=0, classes=[0, 1], x_bound=1.0)),
                                        dict(alpha=0.2, epsilon=5.0, score="lac", calibrator="pps", bins=50, m=20,
                                             gamma="auto", variant="tight", n=40, prefit=False, rng=0)),
    "MondrianPrivateConformalClassifier": (_est(dp.MondrianPrivateConformalClassifier, lambda m: _split_fit(m, YC),
                                                estimator=dp.DPLogisticRegression(rng=0, classes=[0, 1], x_bound=1.0)),
                                           dict(classes=[0, 1], alpha=0.2, epsilon=5.0, bins=20, prefit=False,
                                                rng=0)),
    "PrivateNormalizedConformalRegressor": (
        _est(dp.PrivateNormalizedConformalRegressor,
             lambda m: m.fit(X[:30], Y[:30]).fit_scale(X[30:55], Y[30:55]).calibrate(X[55:], Y[55:]),
             mean_estimator=dp.DPRidgeRegression(rng=0, y_bound=3.0, x_bound=1.0),
             scale_estimator=dp.DPRidgeRegression(rng=1, y_bound=6.0, x_bound=1.0)),
        dict(alpha=0.2, epsilon=5.0, y_bound=3.0, sigma_min=0.1, score_bound=5.0, bins=20, scale_target="abs",
             prefit=False, rng=0)),
    "DPSGDQuantileRegressor": (_est(dp.DPSGDQuantileRegressor, _fit_xy),
                               dict(quantile=0.9, noise_multiplier=1.0, clip_norm=1.0, sampling_rate=0.1, steps=5,
                                    learning_rate=0.5, delta=1e-6, x_bound=1.0, rng=0, expected_batch_size=8.0)),
    "PrivateConformalizedQuantileRegressor": (
        _est(dp.PrivateConformalizedQuantileRegressor,
             lambda m: m.fit_lower(X[:30], Y[:30]).fit_upper(X[30:55], Y[30:55]).calibrate(X[55:], Y[55:]),
             lower_estimator=dp.DPSGDQuantileRegressor(quantile=0.1, steps=5, rng=0, expected_batch_size=8.0, x_bound=1.0),
             upper_estimator=dp.DPSGDQuantileRegressor(quantile=0.9, steps=5, rng=1, expected_batch_size=8.0, x_bound=1.0)),
        dict(alpha=0.2, epsilon=5.0, score_bound=3.0, bins=20, prefit=False, rng=0)),
    "GaussianPrior": (lambda **kw: dp.GaussianPrior(**kw).sample(3, 2, rng=0), dict(mean=0.0, scale=1.0)),
    "PrivacyBudget": (lambda **kw: dp.PrivacyBudget(**kw).spend(0.1, 0.0, "x"),
                      dict(epsilon=1.0, delta=0.0, relation="add/remove", partition="per-record")),
    "Spend": (None, dict(label="x", add_remove=(0.5, 0.0), replace_one=(1.0, 0.0), part="all")),
    "PrivacyAccount": (None, dict(epsilon=1.0, delta=0.0, relation="add/remove", add_remove=(1.0, 0.0),
                                  replace_one=(2.0, 0.0))),
    "ReleaseWarning": (None, dict()),
}

# names whose sweep would cost too much time for a unit test, or that are not functions of user input
NOT_SWEPT = {
    "TukeyDepthRegions": "the result container of tukey_depth_regions (swept); not built from user input",
    "total_variation_on_cells": "a test helper comparing two laws on cells of a fitted TukeyDepthRegions",
    "dp_sgd_noise_multiplier": "a root search over dp-accounting (seconds per call); its parameters go through "
                               "the same validators as dp_sgd_epsilon, which is swept",
}

# --------------------------------------------------------------------------- bad and extreme values

_POSITIVE = {"epsilon", "epsilon1", "epsilon2", "sensitivity", "bound", "radius", "clip_norm", "scale", "rho",
             "noise_multiplier", "x_bound", "y_bound", "l2", "smoothing", "prior_scale", "learning_rate", "qhat_pos",
             "expected_batch_size", "tol", "noise"}
_LEVEL = {"alpha", "beta", "sampling_rate", "fraction", "alpha0", "failure"}
_DELTA = {"delta"}
_INT = {"n", "m", "n_candidates", "n_directions", "d", "steps", "num", "n_iter", "max_iter", "n_clients",
        "n_classes", "n_bins", "n_byzantine"}
_BOOL = {"log", "corrected", "analytic", "fit_intercept", "prefit"}
_ARRAY1 = {"scores", "y_true", "y_pred", "utilities", "logits", "y_grid"}
_ARRAY2 = {"X", "X_test", "data", "points", "updates", "candidates", "directions", "honest"}

_STRINGS_NUM = ["0.5", "1"]


def _bad_values(name, good):
    """Values that are invalid for parameter ``name`` (must raise), and extreme legal ones (must not crash)."""
    bad, extreme = [], []
    if name in _POSITIVE | _LEVEL | _DELTA | {"qhat", "lower", "upper", "low", "high", "shift", "mean", "value",
                                                "failure_prob"}:
        bad += [float("nan"), "0.5", True, 1 + 1j, [1.0, 2.0]]
        if name not in {"value", "lower", "upper", "low", "high", "shift", "mean"}:
            bad += [float("inf")]
        if name in _POSITIVE and name not in {"l2", "smoothing", "expected_batch_size"}:
            bad += [-1.0, 0.0]
        if name in _LEVEL:
            bad += [0.0, 1.0, -0.5, 1.5]
        if name in _DELTA:
            bad += [-0.1, 1.0]
        extreme += [1e300, 1e-300] if name in _POSITIVE else [1e-300]
        if name in {"value", "lower", "upper", "low", "high", "shift", "mean"}:
            extreme += [1e300, -1e300]
    elif name in _INT:
        bad += [2.5, "10", True, float("nan"), -3]
        if name != "n_byzantine":
            bad += [0]
        extreme += [10 ** 30]
    elif name in _BOOL:
        bad += ["False", "True", 1, 0, None]
    elif name in _ARRAY1 or name in _ARRAY2:
        arr = np.asarray(good, dtype=float)
        with_nan = arr.copy()
        with_nan.flat[0] = np.nan
        bad += [with_nan, arr.astype(complex) + 1j, arr.astype(str), arr[:0]]
        if arr.ndim == 1:
            bad += [arr[:, None] * np.ones((1, 2))]
        else:
            bad += [arr[0, 0]]
        extreme += [arr * 1e300] if name not in {"scores"} else []
    elif name == "rng":
        bad += ["seed", -1, 1.5, True]
    elif name == "bins":
        bad += [0, 2.5, "10", True, [0.5, 0.2, 1.0], [0.2, float("nan"), 1.0], 1 + 1j]
    return bad, extreme


# values the generic table calls bad that are legal for a particular parameter (documented there)
_LEGAL = {
    ("*", "noise_multiplier", 0.0): "sigma = 0 is DP-SGD without noise (epsilon = inf), allowed for baselines",
    ("*", "sampling_rate", 1.0): "full-batch steps",
    ("*", "fraction", 0.0): "no contamination (chapter 10 uses it)",
    ("*", "noise", 0.0): "noise-free regression data",
    ("*", "qhat", float("inf")): "an infinite threshold is the whole label set (split CP with k > n)",
    ("*", "value", "list"): "a vector query",
    ("GaussianPrior", "mean", "list"): "a mean vector",
    ("Spend", "epsilon", 0.0): "a delta-only spend",
    ("private_quantile_miscoverage_bound", "alpha0", 0.0): "alpha0 lies in [0, 1)",
    ("langevin_step_size", "beta", 1.0): "beta is an inverse temperature here, any positive number",
    ("langevin_step_size", "beta", 1.5): "beta is an inverse temperature here, any positive number",
    ("langevin_step_size", "prior_scale", float("inf")): "a flat prior (documented default)",
    ("pcoqs_quantile", "rho", 1.5): "rho is a zCDP budget, not a level",
    ("PrivacyAccount", "epsilon", 0.0): "a release that reads no private data costs nothing",
    ("PrivacyAccount", "epsilon", float("inf")): "the primary relation is not covered",
    ("PrivacyAccount", "delta", 1.0): "a vacuous delta (group privacy of a large epsilon, or an uncovered relation)",
    ("normalised_residual_score", "y_pred", "nan"): "model outputs on private records: NaN is read as 0, never "
                                                    "refused (issue 19, section 6)",
}


def _legal(name, param, value):
    for key in ((name, param), ("*", param)):
        if isinstance(value, list) and key + ("list",) in _LEGAL:
            return True
        if isinstance(value, float) and key + (value,) in _LEGAL:
            return True
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and np.isnan(value).any() \
                and key + ("nan",) in _LEGAL:
            return True
    return False


def _has_nan(value, depth=0):
    if depth > 3:
        return False
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if isinstance(value, (tuple, list)):
        return any(_has_nan(v, depth + 1) for v in value)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return any(_has_nan(v, depth + 1) for k, v in vars(value).items() if k.endswith("_") or k == "x")
    return False


def _call(fn, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # a RuntimeWarning (overflow, invalid value) is a failure too
        warnings.simplefilter("ignore", dp.ReleaseWarning)   # a documented, free note on a trivial release
        return fn(**kwargs)


def _callable(name):
    fn, kwargs = BASE[name]
    return (getattr(dp, name) if fn is None else fn), kwargs


def _public_callables():
    names = []
    for name in dir(dp):
        obj = getattr(dp, name)
        if name.startswith("_") or inspect.ismodule(obj) or not callable(obj):
            continue
        names.append(name)
    return sorted(names)


def test_every_public_callable_is_swept():
    missing = [n for n in _public_callables() if n not in BASE and n not in NOT_SWEPT]
    assert not missing, f"add a valid call for {missing} to BASE in tests/test_bad_input_sweep.py"


@pytest.mark.parametrize("name", sorted(BASE))
def test_sweep(name):
    fn, kwargs = _callable(name)
    out = _call(fn, kwargs)
    assert not _has_nan(out), f"{name}: the valid call returned NaN"
    problems = []
    for param, good in kwargs.items():
        bad, extreme = _bad_values(param, good)
        for kind, values in (("bad", bad), ("extreme", extreme)):
            for value in values:
                trial = {**kwargs, param: value}
                label = f"{name}({param}={value!r:.40})"
                try:
                    out = _call(fn, trial)
                except (ValueError, TypeError) as exc:     # NotFittedError is a ValueError
                    if len(str(exc)) < 15:
                        problems.append(f"{label}: unhelpful message {str(exc)!r}")
                    continue
                except Exception as exc:                   # noqa: BLE001 - the point of the sweep
                    problems.append(f"{label}: {type(exc).__name__}: {str(exc)[:120]}")
                    continue
                if kind == "bad" and not _legal(name, param, value):
                    problems.append(f"{label}: bad value silently accepted")
                elif _has_nan(out):
                    problems.append(f"{label}: returned NaN")
    assert not problems, "\n".join(problems)
