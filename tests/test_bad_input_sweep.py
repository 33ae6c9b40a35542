"""Bad-input sweep over every parameter of every public callable.

What is swept: every name of ``dpcp_tutorial.__all__`` that is callable (functions and
classes; a class is swept over its constructor parameters through the method that uses
them, scikit-learn style), the public functions of ``dpcp_tutorial.scale`` and the
copy-ready reference files ``book/reference/*.py``. Each callable gets **one valid call**
(``BASE``: the arguments it needs; every other parameter takes its signature default, so
parameters that the valid call's mode does not use are swept too -- they must be
validated anyway), plus a few extra modes (``MODES``) where a parameter only matters in
another mode. Then every parameter, one at a time, is replaced by the values of its
kind (``KINDS``; ``_bad_values``): the wrong type, a bool for a number, numeric strings,
NaN, +-inf, complex numbers, negative numbers and zero where they are invalid, huge
values such as ``10**30``, empty arrays, arrays of the wrong dimension, object arrays
holding ``None``.

Outcomes (``_outcome``):

* a **bad** value must raise ``TypeError`` or ``ValueError`` whose message names the
  parameter (or the documented name it is checked under, ``ALIASES``); a value listed in
  ``LEGAL`` (with the reason) may also succeed;
* an **extreme** value (legal for some parameters: ``1e300``, ``1e-300``, data at 1e300,
  an object array of real numbers) may succeed or raise that way;
* a success must not contain NaN; a warning is a failure (``simplefilter("error")``,
  except :class:`dpcp_tutorial.ReleaseWarning`, which marks a release on its public bound);
* anything else (``ZeroDivisionError``, ``IndexError``, ``MemoryError``, an
  ``OverflowError``, a numpy warning ...) is an unhelpful crash.

Other kinds of the same value (``_other_kinds``, ``test_other_kinds_of_value``): each valid value is also passed
as the types users bring -- NumPy scalars of every dtype (int8 ... uint64, float16, float32, longdouble, bool_),
0-d arrays, ``Fraction``, ``Decimal``, ``pd.NA``/``pd.NaT``, nullable ``Float64``/``Int64`` columns (with and
without ``<NA>``), categorical and string columns, ``np.matrix``, masked arrays, float16/float32/longdouble
arrays, read-only, non-contiguous and Fortran-ordered arrays, lists, ragged lists, generators, datetime arrays,
and ``SeedSequence``/``PCG64``/``RandomState`` for ``rng``. A value with a plain equivalent must give the plain
value's result (to 1e-9: BLAS may sum another memory layout in another order) or be refused by name; a value
without one (a masked entry, a missing value, a generator ...) must be refused by name.

Rows are (callable, parameter). A row that fails in a module this file's owner does not
own is marked ``xfail(strict=True)`` with the owning helper and what fails (``XFAIL``),
so it turns into a failure the moment it is fixed and the mark must go.
``python tests/test_bad_input_sweep.py`` prints the counts and every failure.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import pathlib
import re
import signal
import sys
import warnings

import numpy as np
import pytest

import dpcp_tutorial as dp

pytestmark = pytest.mark.slow   # every public function against every kind of bad input: make test runs it

REFERENCE = pathlib.Path(__file__).resolve().parent.parent / "book" / "reference"

# --------------------------------------------------------------------------- data

_R = np.random.default_rng(0)
X = _R.normal(size=(80, 2)) * 0.4
Y = X @ np.array([1.0, -0.5]) + 0.1 * _R.normal(size=80)
YC = (X[:, 0] > 0).astype(int)
XT = _R.normal(size=(6, 2)) * 0.4
SCORES = _R.uniform(size=150)
DATA2 = _R.normal(size=(40, 2))
PROBA = np.full((5, 3), 1 / 3)
LABELS = np.array([0, 1, 2, 0, 1])
DIRS = dp.random_directions(8, 2, rng=1)
GRID = dp.public_grid(-1, 1, 5, 2)
BOX = ((-4.0, -4.0), (4.0, 4.0))
TUKEY = DATA2[:7]
INTERVALS = np.column_stack([Y[:5] - 1, Y[:5] + 1])


def _regions():
    return dp.tukey_depth_regions(TUKEY, BOX)


def _load_reference(name):
    spec = importlib.util.spec_from_file_location(f"_sweep_reference_{name}", REFERENCE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REF = {name: _load_reference(name) for name in
       ("conformal_quantile", "private_quantile", "private_split_conformal", "dpcp", "private_median",
        "unbounded_quantile",
        "private_localization")}


# --------------------------------------------------------------------------- valid calls

def _est(cls, fit, **fixed):
    """An estimator run as a function of its constructor parameters (validated in fit, scikit-learn style)."""
    def run(**params):
        return fit(cls(**{**fixed, **params}))
    run.__signature__ = inspect.signature(cls)
    run.__name__ = cls.__name__
    return run


def _with_signature(fn, target):
    fn.__signature__ = inspect.signature(target)
    return fn


def _fit_xy(model):
    return model.fit(X, Y)


def _fit_x1y(model):
    return model.fit(X[:, :1], Y)


def _fit_xc(model):
    return model.fit(X, YC)


def _split_fit(model, y):
    return model.fit(X[:40], y[:40]).calibrate(X[40:], y[40:])


def _ridge(**kw):
    return dp.DPRidgeRegression(**{"x_bound": 1.0, "y_bound": 3.0, "rng": 0, **kw})


def _logistic(**kw):
    return dp.DPLogisticRegression(**{"x_bound": 1.0, "classes": [0, 1], "rng": 0, **kw})


# name -> (callable or None for dpcp_tutorial.<name>, the arguments of one valid call).
# Parameters not given take their signature default (and are swept like the others).
BASE = {
    "absolute_residual_score": (None, dict(y_true=Y, y_pred=Y * 0.9)),
    "aggregation_log_probabilities": (None, dict(updates=DATA2, epsilon=1.0, candidates=GRID)),
    "algorithm1_add_remove_loss": (None, dict(beta=0.1, n=200, epsilon=1.0)),
    "algorithm1_level": (None, dict(beta=0.1, n=200, epsilon=1.0)),
    "private_quantile_level": (None, dict(beta=0.1, n=500, epsilon=1.0, bins=50)),
    "private_quantile_miscoverage_bound": (None, dict(alpha0=0.05, n=500, epsilon=1.0, bins=50)),
    "private_quantile_privacy_loss": (None, dict(beta=0.1, n=500, epsilon=1.0, bins=50)),
    "pps_privacy_loss": (None, dict(n=500, alpha=0.1, epsilon=1.0, m=50)),
    "aps_prediction_set": (None, dict(proba=PROBA, qhat=0.5)),
    "aps_score": (None, dict(proba=PROBA, y=LABELS)),
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
    "differential_cp_interval": (None, dict(trainer=_ridge(), X=X, y=Y, X_test=XT, alpha=0.2, rng=0)),
    "differential_cp_level": (None, dict(alpha=0.1, epsilon=1.0, delta=1e-6)),
    "differential_cp_quantile": (None, dict(scores=SCORES, alpha=0.1, epsilon=1.0, delta=1e-6)),
    "differential_cp_set": (None, dict(trainer=_logistic(), X=X, y=YC, X_test=XT, alpha=0.2, rng=0)),
    "dp_clipped_mean_aggregate": (None, dict(updates=DATA2, clip_norm=1.0, epsilon=1.0, delta=1e-5, rng=0)),
    "dpcp_interval": (None, dict(trainer=_ridge(), X=X, y=Y, X_test=XT, epsilon=4.0, training_share=0.25,
                                 bound=3.0, bins=50, rng=0, n=2000)),
    "dpcp_levels": (None, dict(n=2000, alpha=0.1, epsilon1=0.3, epsilon2=0.7, delta=1e-6, bins=50)),
    "dpcp_quantile": (None, dict(scores=SCORES, alpha=0.1, epsilon1=0.3, epsilon2=0.7, delta=1e-6, bins=50, rng=0,
                                 n=2000)),
    "dpcp_set": (None, dict(trainer=_logistic(), X=X, y=YC, X_test=XT, epsilon=4.0, training_share=0.25, bins=50,
                            rng=0, classes=[0, 1], n=2000)),
    "exponential_mechanism": (None, dict(utilities=np.arange(5.0), sensitivity=1.0, epsilon=1.0, rng=0)),
    "exponential_mechanism_probabilities": (None, dict(utilities=np.arange(5.0), sensitivity=1.0, epsilon=1.0)),
    "full_conformal_interval": (None, dict(estimator=__import__("sklearn.linear_model").linear_model.Ridge(),
                                           X=X[:30], y=Y[:30], x_new=XT[0], alpha=0.2,
                                           y_grid=np.linspace(-2, 2, 11))),
    "gaussian_mechanism": (None, dict(value=1.0, sensitivity=1.0, epsilon=1.0, delta=1e-5, rng=0)),
    "gaussian_sigma": (None, dict(sensitivity=1.0, epsilon=1.0, delta=1e-5)),
    "gumbel_max_sample": (None, dict(logits=np.zeros(4), rng=0)),
    "halfspace_depth": (None, dict(points=DATA2[:5], data=DATA2)),
    "integrated_dual_depth": (None, dict(points=DATA2[:5], data=DATA2, n_directions=20, rng=0)),
    "integrated_dual_depth_gradient": (None, dict(points=DATA2[:5], data=DATA2, n_directions=20, rng=0)),
    "interval_coverage": (None, dict(y=Y[:5], intervals=INTERVALS)),
    "interval_width": (None, dict(intervals=INTERVALS)),
    "lac_prediction_set": (None, dict(proba=PROBA, qhat=0.5)),
    "lac_score": (None, dict(proba=PROBA, y=LABELS)),
    "langevin_step_size": (None, dict(eta=10.0, directions=DIRS)),
    "laplace_mechanism": (None, dict(value=1.0, sensitivity=1.0, epsilon=1.0, rng=0)),
    "laplace_scale": (None, dict(sensitivity=1.0, epsilon=1.0)),
    "make_cauchy": (None, dict(n=10, d=2, rng=0)),
    "make_contaminated_gaussian": (None, dict(n=10, d=2, rng=0)),
    "make_heteroscedastic_regression": (None, dict(n=10, rng=0)),
    "mechanism_eta": (None, dict(epsilon=1.0, depth="halfspace", n=100)),
    "normalized_residual_score": (None, dict(y_true=Y, y_pred=Y * 0.9, bound=2.0)),
    "output_perturbation_sensitivity": (None, dict(x_bound=1.0, l2=1.0)),
    "pps_choose_m": (None, dict(n=500, alpha=0.1, epsilon=1.0, candidates=[10, 50, 100], rng=0)),
    "pps_corrected_level": (None, dict(n=500, alpha=0.1, epsilon=1.0, m=50, gamma=0.05)),
    "pps_grid": (None, dict(m=20)),
    "pps_optimal_gamma": (None, dict(n=500, alpha=0.1, epsilon=1.0)),
    "pps_private_quantile": (None, dict(scores=np.tile(SCORES, 4), alpha=0.1, epsilon=1.0, m=50, rng=0)),
    "pps_quantile_probabilities": (None, dict(scores=np.tile(SCORES, 4), alpha=0.1, epsilon=1.0, m=50)),
    "pps_round_up": (None, dict(scores=SCORES, m=20)),
    "private_depth_median": (None, dict(data=DATA2, epsilon=1.0, candidates=GRID, rng=0)),
    "private_prior": (None, dict(data=DATA2, epsilon=1.0, rng=0)),
    "private_localization": (None, dict(data=DATA2, epsilon=1.0, rng=0)),
    "depth_median_account": (None, dict(epsilon=1.0)),
    "private_median_aggregate": (None, dict(updates=DATA2, epsilon=1.0, candidates=GRID, rng=0)),
    "private_quantile": (None, dict(scores=SCORES, beta=0.1, epsilon=1.0, bins=50, rng=0)),
    "private_quantile_probabilities": (None, dict(scores=SCORES, beta=0.1, epsilon=1.0, bins=50)),
    "unbounded_grid": (None, dict(max_steps=100)),
    "unbounded_histogram": (None, dict(scores=SCORES * 10, max_steps=500)),
    "unbounded_quantile_target": (None, dict(beta=0.1, n=500, epsilon=1.0, max_steps=500)),
    "unbounded_quantile_miscoverage_bound": (None, dict(m=20.0, n=500, epsilon=1.0, max_steps=500)),
    "unbounded_quantile_privacy_loss": (None, dict(beta=0.1, n=500, epsilon=1.0, max_steps=500)),
    "unbounded_private_quantile": (None, dict(scores=np.tile(SCORES, 4), beta=0.1, epsilon=1.0, max_steps=500,
                                              rng=0)),
    "unbounded_quantile_probabilities": (None, dict(scores=np.tile(SCORES, 4), beta=0.1, epsilon=1.0,
                                                    growth=2.0, max_steps=12)),
    "private_sufficient_statistics": (None, dict(X=X, y=Y, x_bound=1.0, y_bound=1.0, rng=0)),
    "public_grid": (None, dict(lower=-1.0, upper=1.0, num=3, d=2)),
    "pure_dp_to_zcdp": (None, dict(epsilon=1.0)),
    "quantile_edges": (None, dict(bins=10)),
    "random_directions": (None, dict(n_directions=5, d=2, rng=0)),
    "robust_aggregate": (None, dict(updates=DATA2)),
    "set_coverage": (None, dict(y=np.array([0, 1, 2]), sets=np.eye(3, dtype=bool))),
    "set_size": (None, dict(sets=np.eye(3, dtype=bool))),
    "spatial_depth": (None, dict(points=DATA2[:5], data=DATA2)),
    "spatial_median": (None, dict(data=DATA2, max_iter=100)),
    "ssp_sensitivity": (None, dict(x_bound=1.0, y_bound=1.0)),
    "zcdp_to_approx_dp": (None, dict(rho=0.5, delta=1e-5)),
    "check_dp_trainer": (None, dict(trainer=_ridge())),
    "dp_sgd_epsilon": (None, dict(noise_multiplier=1.0, sampling_rate=0.01, steps=10, delta=1e-5)),
    "dp_sgd_noise_multiplier": (None, dict(target_epsilon=1.0, sampling_rate=0.01, steps=10, delta=1e-5,
                                           rtol=0.1)),
    "pcoqs_steps": (None, dict(tol=1e-6)),
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
                                            calibration_epsilon=1.0, alpha=0.1, n=500, bins=50)),
    "load_rand_hie": (None, dict(task="classification")),
    "tukey_depth_regions": (None, dict(data=TUKEY, box=BOX)),
    "tukey_median_2d": (None, dict(data=TUKEY, box=BOX)),
    "private_tukey_median_2d": (None, dict(data=TUKEY, epsilon=1.0, box=BOX, rng=0)),
    "exact_cell_probabilities": (None, dict(regions=_regions(), epsilon=1.0, x_edges=np.linspace(-4, 4, 3),
                                            y_edges=np.linspace(-4, 4, 3))),
    "total_variation_on_cells": (None, dict(regions=_regions(), epsilon=1.0, x_edges=np.linspace(-4, 4, 3),
                                            y_edges=np.linspace(-4, 4, 3), probabilities=np.full((2, 2), 0.25))),
    # estimators and classes: swept over their constructor parameters
    "DPRidgeRegression": (_est(dp.DPRidgeRegression, _fit_xy), dict(x_bound=1.0, y_bound=1.0, rng=0)),
    "DPLogisticRegression": (_est(dp.DPLogisticRegression, _fit_xc), dict(x_bound=1.0, rng=0, classes=[0, 1])),
    "DPRegressogram": (_est(dp.DPRegressogram, _fit_x1y), dict(bins=10, low=-3.0, high=3.0, y_bound=3.0, rng=0)),
    "PublicScaler": (_est(dp.PublicScaler, lambda m: m.fit(X)), dict(low=-2.0, high=2.0)),
    "DPSGDRegressor": (_est(dp.DPSGDRegressor, _fit_xy), dict(steps=5, x_bound=1.0, y_bound=1.0, rng=0,
                                                              expected_batch_size=8.0)),
    "DPSGDClassifier": (_est(dp.DPSGDClassifier, _fit_xc), dict(steps=5, x_bound=1.0, rng=0,
                                                                expected_batch_size=8.0, classes=[0, 1])),
    "DPCPRegressor": (_est(dp.DPCPRegressor, _fit_xy), dict(trainer=_ridge(), epsilon=4.0, training_share=0.25,
                                                            bound=3.0, bins=50, rng=0, n=2000)),
    "DPCPClassifier": (_est(dp.DPCPClassifier, _fit_xc), dict(trainer=_logistic(), epsilon=4.0, training_share=0.25,
                                                              bins=50, rng=0, classes=[0, 1], n=2000)),
    "SplitConformalRegressor": (_est(dp.SplitConformalRegressor, lambda m: _split_fit(m, Y)),
                                dict(estimator=_ridge())),
    "SplitConformalClassifier": (_est(dp.SplitConformalClassifier, lambda m: _split_fit(m, YC)),
                                 dict(estimator=_logistic())),
    "PrivateSplitConformalRegressor": (_est(dp.PrivateSplitConformalRegressor, lambda m: _split_fit(m, Y)),
                                       dict(estimator=_ridge(), alpha=0.2, epsilon=5.0, bound=3.0, bins=50, m=20,
                                            rng=0)),
    "PrivateSplitConformalClassifier": (_est(dp.PrivateSplitConformalClassifier, lambda m: _split_fit(m, YC)),
                                        dict(estimator=_logistic(), alpha=0.2, epsilon=5.0, bins=50, m=20, rng=0)),
    "MondrianPrivateConformalClassifier": (_est(dp.MondrianPrivateConformalClassifier, lambda m: _split_fit(m, YC)),
                                           dict(estimator=_logistic(), classes=[0, 1], alpha=0.2, epsilon=5.0,
                                                bins=20, rng=0)),
    "PrivateNormalizedConformalRegressor": (
        _est(dp.PrivateNormalizedConformalRegressor,
             lambda m: m.fit(X[:30], Y[:30]).fit_scale(X[30:55], Y[30:55]).calibrate(X[55:], Y[55:])),
        dict(mean_estimator=_ridge(), scale_estimator=_ridge(rng=1, y_bound=6.0), alpha=0.2, epsilon=5.0,
             y_bound=3.0, sigma_min=0.1, score_bound=5.0, bins=20, rng=0)),
    "DPSGDQuantileRegressor": (_est(dp.DPSGDQuantileRegressor, _fit_xy),
                               dict(steps=5, x_bound=1.0, rng=0, expected_batch_size=8.0)),
    "PrivacyAccount": (None, dict(epsilon=1.0, delta=0.0, relation="add/remove", add_remove=(1.0, 0.0),
                                  replace_one=(2.0, 0.0))),
    "PrivateConformalizedQuantileRegressor": (
        _est(dp.PrivateConformalizedQuantileRegressor,
             lambda m: m.fit_lower(X[:30], Y[:30]).fit_upper(X[30:55], Y[30:55]).calibrate(X[55:], Y[55:])),
        dict(lower_estimator=dp.DPSGDQuantileRegressor(quantile=0.1, steps=5, rng=0, expected_batch_size=8.0,
                                                       x_bound=1.0),
             upper_estimator=dp.DPSGDQuantileRegressor(quantile=0.9, steps=5, rng=1, expected_batch_size=8.0,
                                                       x_bound=1.0),
             alpha=0.2, epsilon=5.0, score_bound=3.0, bins=20, rng=0)),
    "GaussianPrior": (_with_signature(lambda **kw: dp.GaussianPrior(**kw).sample(3, 2, rng=0), dp.GaussianPrior),
                      dict(mean=0.0, scale=1.0)),
    "PrivacyBudget": (_with_signature(lambda **kw: dp.PrivacyBudget(**kw).spend(0.1, 0.0, "x"), dp.PrivacyBudget),
                      dict(epsilon=1.0)),
    "Spend": (None, dict(label="x", add_remove=(0.5, 0.0), replace_one=(1.0, 0.0))),
    # dpcp_tutorial.scale (the optional Dask extra): arrays are computed on the default local scheduler
    "scale.simulated_scores": (_with_signature(lambda **kw: dp.scale.simulated_scores(**kw).compute(),
                                               dp.scale.simulated_scores), dict(n=100, chunk_size=40)),
    "scale.score_histogram": (None, dict(scores=SCORES, edges=dp.quantile_edges(20))),
    "scale.private_quantile": (None, dict(scores=SCORES, beta=0.1, epsilon=1.0, bins=50, rng=0)),
    "scale.pps_private_quantile": (None, dict(scores=np.tile(SCORES, 4), alpha=0.1, epsilon=1.0, m=50, rng=0)),
    "scale.dpcp_quantile": (None, dict(scores=SCORES, alpha=0.1, epsilon1=0.3, epsilon2=0.7, delta=1e-6, bins=50,
                                       rng=0)),
    "scale.private_depth_median": (None, dict(data=DATA2, epsilon=1.0, candidates=GRID, directions=DIRS, rng=0)),
    "scale.unbounded_private_quantile": (None, dict(scores=np.tile(SCORES, 4), beta=0.1, epsilon=1.0,
                                                    max_steps=500, rng=0)),
    "scale.model_scores": (None, dict(frame=None, model=_ridge().fit(X, Y), features=["a", "b"], target="y",
                                      bound=3.0)),
    # the copy-ready reference files (book/reference/*.py)
    "reference.conformal_quantile": (REF["conformal_quantile"].conformal_quantile, dict(scores=SCORES, alpha=0.1)),
    "reference.private_quantile": (REF["private_quantile"].private_quantile,
                                   dict(scores=SCORES, beta=0.1, epsilon=1.0, bins=50, rng=0)),
    "reference.private_split_quantile": (REF["private_split_conformal"].private_split_quantile,
                                         dict(scores=np.tile(SCORES, 4), alpha=0.1, epsilon=1.0, m=50, rng=0)),
    "reference.dpcp_intervals": (REF["dpcp"].dpcp_intervals,
                                 dict(y=Y, pred_train=Y * 0.9, pred_test=Y[:5], bound=3.0, alpha=0.1, delta=1e-6,
                                      epsilon1=0.3, epsilon2=4.0, bins=50, rng=0, n=2000)),
    "reference.spatial_depth": (REF["private_median"].spatial_depth, dict(points=DATA2[:5], data=DATA2)),
    "reference.unbounded_private_quantile": (REF["unbounded_quantile"].unbounded_private_quantile,
                                             dict(scores=np.tile(SCORES, 4), beta=0.1, epsilon=1.0, max_steps=500,
                                                  rng=0)),
    "reference.private_spatial_median": (REF["private_median"].private_spatial_median,
                                         dict(data=DATA2, epsilon=1.0, prior_mean=0.0, prior_scale=3.0,
                                              n_candidates=50, rng=0)),
    "reference.private_localization": (REF["private_localization"].private_localization,
                                       dict(data=DATA2, epsilon=1.0, rng=0)),
}

# The methods of the estimators: each stage of the valid pipeline (fit, calibrate, ...) with its X and y
# replaced, and every prediction method on the fitted estimator.
_XC, _Y1 = X, YC
PIPELINES = {   # class -> (stages [(method, X, y)], prediction methods)
    "DPRidgeRegression": ([("fit", X, Y)], ["predict"]),
    "DPLogisticRegression": ([("fit", X, YC)], ["predict", "predict_proba"]),
    "DPRegressogram": ([("fit", X[:, :1], Y)], ["predict"]),
    "DPSGDRegressor": ([("fit", X, Y)], ["predict"]),
    "DPSGDClassifier": ([("fit", X, YC)], ["predict", "predict_proba"]),
    "DPSGDQuantileRegressor": ([("fit", X, Y)], ["predict"]),
    "DPCPRegressor": ([("fit", X, Y)], ["predict", "predict_interval"]),
    "DPCPClassifier": ([("fit", X, YC)], ["predict", "predict_set", "predict_proba"]),
    "SplitConformalRegressor": ([("fit", X[:40], Y[:40]), ("calibrate", X[40:], Y[40:])],
                                ["predict", "predict_interval"]),
    "SplitConformalClassifier": ([("fit", X[:40], YC[:40]), ("calibrate", X[40:], YC[40:])],
                                 ["predict_set", "predict_proba"]),
    "PrivateSplitConformalRegressor": ([("fit", X[:40], Y[:40]), ("calibrate", X[40:], Y[40:])],
                                       ["predict", "predict_interval"]),
    "PrivateSplitConformalClassifier": ([("fit", X[:40], YC[:40]), ("calibrate", X[40:], YC[40:])],
                                        ["predict_set", "predict_proba"]),
    "MondrianPrivateConformalClassifier": ([("fit", X[:40], YC[:40]), ("calibrate", X[40:], YC[40:])],
                                           ["predict_set", "predict_proba"]),
    "PrivateNormalizedConformalRegressor": ([("fit", X[:30], Y[:30]), ("fit_scale", X[30:55], Y[30:55]),
                                             ("calibrate", X[55:], Y[55:])],
                                            ["predict", "predict_interval", "predict_scale"]),
    "PrivateConformalizedQuantileRegressor": ([("fit_lower", X[:30], Y[:30]), ("fit_upper", X[30:55], Y[30:55]),
                                               ("calibrate", X[55:], Y[55:])],
                                              ["predict_interval", "predict_quantiles"]),
}


def _build(cls_name):
    """A fresh estimator with the constructor arguments of its BASE row."""
    return getattr(dp, cls_name)(**{k: v for k, v in BASE[cls_name][1].items()})


def _stage_call(cls_name, stage):
    """A function of ``(X, y)`` running the pipeline with that stage's data replaced."""
    stages, _ = PIPELINES[cls_name]

    def run(X, y):
        model = _build(cls_name)
        for name, xs, ys in stages:
            model = getattr(model, name)(*((X, y) if name == stage else (xs, ys)))
        return model
    run.__signature__ = inspect.Signature([inspect.Parameter("X", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                           inspect.Parameter("y", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return run


_FITTED: dict = {}


def _predict_call(cls_name, method):
    def run(X):
        if cls_name not in _FITTED:
            _FITTED[cls_name] = _stage_call(cls_name, None)(None, None)
        return getattr(_FITTED[cls_name], method)(X)
    run.__signature__ = inspect.Signature([inspect.Parameter("X", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return run


METHODS = {}
for _cls, (_stages, _predictions) in PIPELINES.items():
    for _name, _xs, _ys in _stages:
        METHODS[f"{_cls}.{_name}"] = (_stage_call(_cls, _name), dict(X=_xs, y=_ys))
    for _method in _predictions:
        METHODS[f"{_cls}.{_method}"] = (_predict_call(_cls, _method), dict(X=XT if _cls != "DPRegressogram"
                                                                          else XT[:, :1]))
def _scaler_call(method):
    def run(X):
        return getattr(dp.PublicScaler(low=-2.0, high=2.0).fit(np.zeros((1, 2))), method)(X)
    run.__signature__ = inspect.Signature([inspect.Parameter("X", inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    return run


for _method in ("fit", "transform", "inverse_transform"):    # a transformer: X only (fit ignores y)
    METHODS[f"PublicScaler.{_method}"] = (_scaler_call(_method), dict(X=XT))
BASE.update(METHODS)

# Extra valid calls in another mode, so that parameters that only matter there are swept there too.
MODES = {
    "halfspace_depth[directions]": ("halfspace_depth", dict(points=DATA2[:5], data=DATA2, method="directions",
                                                            n_directions=20, rng=0)),
    "integrated_dual_depth[smoothed]": ("integrated_dual_depth", dict(points=DATA2[:5], data=DATA2,
                                                                      directions=DIRS, smoothing=10.0)),
    "private_quantile[original]": ("private_quantile", dict(scores=SCORES, beta=0.2, epsilon=1.0, bins=50,
                                                            variant="original", rng=0)),
    "pcoqs_quantile[unrounded]": ("pcoqs_quantile", dict(scores=SCORES, alpha=0.1, rho=1.0, decimals=None, rng=0)),
    "laplace_histogram_quantile[paper]": ("laplace_histogram_quantile", dict(scores=SCORES, alpha=0.1,
                                                                             epsilon=1.0, bins=20,
                                                                             variant="paper", rng=0)),
    "opendp_quantile[raw]": ("opendp_quantile", dict(scores=SCORES, alpha=0.1, epsilon=1.0, bins=20, variant="raw",
                                                     rng=0)),
    "pure_dp_to_zcdp[bun-steinke]": ("pure_dp_to_zcdp", dict(epsilon=1.0, conversion="bun-steinke")),
    "coinpress_mean[in_place]": ("coinpress_mean", dict(data=DATA2, rho=0.5, radius=10.0, variant="in_place",
                                                        split=np.array([0.25, 0.25, 0.25, 0.25]), rng=0)),
    "robust_aggregate[tukey]": ("robust_aggregate", dict(updates=DATA2, method="tukey_median")),
    "byzantine_updates[noise]": ("byzantine_updates", dict(honest=DATA2, n_byzantine=3, attack="noise", rng=0)),
    "private_depth_median[langevin]": ("private_depth_median", dict(data=DATA2, epsilon=1.0, depth="smoothed_idd",
                                                                    method="langevin",
                                                                    prior=dp.GaussianPrior(0.0, 3.0), n_directions=10,
                                                                    n_steps=20, rng=0)),
    "private_depth_median[private]": ("private_depth_median", dict(data=DATA2, epsilon=1.0, prior="private",
                                                                   n_candidates=50, rng=0)),
    "depth_median_account[private]": ("depth_median_account", dict(epsilon=1.0, prior="private")),
    "scale.private_depth_median[private]": ("scale.private_depth_median", dict(data=DATA2, epsilon=1.0,
                                                                               prior="private", box=BOX,
                                                                               n_candidates=50, rng=0)),
    "private_depth_median[box]": ("private_depth_median", dict(data=DATA2, epsilon=1.0, box=BOX,
                                                               prior=dp.GaussianPrior(0.0, 3.0), n_candidates=50,
                                                               rng=0)),
    "private_quantile[opendp]": ("private_quantile", dict(scores=SCORES, beta=0.1, epsilon=1.0, bins=50,
                                                          sampler="opendp")),
    "DPCPRegressor[unbounded]": ("DPCPRegressor", dict(trainer=_ridge(), alpha=0.2, epsilon=8.0, bound="unbounded",
                                                       rng=0)),
    "PrivateSplitConformalRegressor[unbounded]": ("PrivateSplitConformalRegressor", dict(
        estimator=_ridge(), alpha=0.2, epsilon=5.0, bound="unbounded", rng=0)),
    "unbounded_private_quantile[two_stage]": ("unbounded_private_quantile", dict(
        scores=np.tile(SCORES, 10), beta=0.1, epsilon=2.0, max_steps=500, method="two_stage", bins=50, rng=0)),
    "unbounded_private_quantile[opendp]": ("unbounded_private_quantile", dict(
        scores=np.tile(SCORES, 4), beta=0.1, epsilon=1.0, max_steps=200, sampler="opendp")),
    "unbounded_private_quantile[n]": ("unbounded_private_quantile", dict(
        scores=SCORES, beta=0.1, epsilon=1.0, max_steps=500, n=600, rng=0)),
    "laplace_mechanism[opendp]": ("laplace_mechanism", dict(value=1.0, sensitivity=1.0, epsilon=1.0,
                                                            sampler="opendp")),
    "exponential_mechanism[opendp]": ("exponential_mechanism", dict(utilities=np.arange(5.0), sensitivity=1.0,
                                                                    epsilon=1.0, sampler="opendp")),
    # beta > 1/2 with a size that fits in int8: n * (n + 1) wraps around in a NumPy int8 or int16
    "algorithm1_add_remove_loss[beta>1/2]": ("algorithm1_add_remove_loss", dict(beta=0.6, n=90, epsilon=2.0)),
    "private_quantile_privacy_loss[beta>1/2]": ("private_quantile_privacy_loss", dict(beta=0.6, n=90, epsilon=2.0,
                                                                                      bins=50)),
    "tukey_depth_regions[truncated]": ("tukey_depth_regions", dict(data=TUKEY, box=BOX, epsilon=1.0,
                                                                   tail_mass=1e-3)),
}

# Callables that are not swept, with the reason.
NOT_SWEPT = {
    "ReleaseWarning": "a warning category (no parameters), raised by the releases and checked in their tests",
    "TukeyDepthRegions": "the result container of tukey_depth_regions (swept); never built from user input",
    "GridHistogram": "the result container of unbounded_histogram (swept); never built from user input",
    "scale.local_cluster": "starts worker processes (seconds per call); its n_workers goes through "
                           "check_positive_int, and tests/test_scale.py starts it",
}


# --------------------------------------------------------------------------- kinds of parameters

_POS = "pos"            # a positive real number
_KINDS = {
    **dict.fromkeys(["epsilon", "epsilon1", "epsilon2", "sensitivity", "bound", "radius", "clip_norm", "rho",
                     "x_bound", "y_bound", "score_bound", "smoothing", "learning_rate", "tol", "rtol",
                     "calibration_epsilon", "target_epsilon", "step_size", "sigma_min", "expected_batch_size",
                     "scale", "prior_scale"], _POS),
    **dict.fromkeys(["noise_multiplier", "l2", "noise", "qhat"], "nonneg"),
    **dict.fromkeys(["unit", "growth"], _POS),
    **dict.fromkeys(["threshold_share", "bound_share"], "level"),
    "max_steps": "int",
    "allow_empty": "bool",
    **dict.fromkeys(["shift", "lower", "upper", "low", "high"], "real"),
    **dict.fromkeys(["alpha", "beta", "failure", "failure_prob", "count_share", "count_failure", "quantile",
                     "calibration_level", "sampling_rate"], "level"),
    **dict.fromkeys(["alpha0", "tail_mass", "fraction"], "level0"),
    "delta": "delta",
    "gamma": "gamma",
    "training_share": "level",
    "localize_share": "level",
    **dict.fromkeys(["n", "d", "n_candidates", "n_directions", "steps", "num", "n_iter", "max_iter",
                     "n_clients", "n_classes", "n_bins", "size", "n_steps", "chunk_size", "n_workers",
                     "threads_per_worker"], "int"),
    **dict.fromkeys(["n_byzantine", "decimals"], "int0"),
    "m": "m",
    "seed": "seed",
    **dict.fromkeys(["log", "corrected", "analytic", "fit_intercept", "prefit", "public_n", "disjoint", "quiet",
                     "progress", "allow_low_coverage"], "bool"),
    **dict.fromkeys(["variant", "relation", "depth", "method", "sampler", "attack", "score", "level", "rounding",
                     "accountant", "neighbouring", "rule", "task", "kind", "distribution", "scale_target",
                     "calibrator", "class_sizes", "conversion"], "choice"),
    "rng": "rng",
    **dict.fromkeys(["scores", "y_true", "y_pred", "utilities", "logits", "y_grid", "x_new", "x_edges",
                     "y_edges", "pred_train", "pred_test", "y", "start", "split", "edges"], "arr1"),
    "counts": "labels",
    **dict.fromkeys(["X", "X_test", "data", "points", "updates", "candidates", "directions", "honest",
                     "proba", "intervals", "vertices", "probabilities"], "arr2"),
    "sets": "sets",
    **dict.fromkeys(["value", "mean", "center", "prior_mean"], "real_or_array"),
    **dict.fromkeys(["trainer", "estimator", "mean_estimator", "scale_estimator", "lower_estimator",
                     "upper_estimator", "model"], "estimator"),
    **dict.fromkeys(["mean_privacy", "scale_privacy", "add_remove", "replace_one"], "privacy_pair"),
    **dict.fromkeys(["parts", "public", "notes"], "sequence"),
    **dict.fromkeys(["composition", "chapter", "part"], "text"),
    "partition": "choice",
    "bins": "bins",
    "box": "box",
    "bounds": "bounds",
    "classes": "classes",
    "regions": "regions",
    "prior": "prior",
    "client": "client",
    "frame": "frame",
    "features": "names",
    "target": "name",
    "label": "text",
}

# kinds that depend on the callable
_KIND_OVERRIDES = {
    ("pps_choose_m", "candidates"): "int_list",
    ("normalized_score", "scale"): "arr1",
    ("normalized_interval", "scale"): "arr1",
    ("cqr_score", "lower"): "arr1",
    ("cqr_score", "upper"): "arr1",
    ("cqr_interval", "lower"): "arr1",
    ("cqr_interval", "upper"): "arr1",
    ("aps_score", "y"): "labels",
    ("lac_score", "y"): "labels",
    ("set_coverage", "y"): "labels",
    ("langevin_step_size", "eta"): _POS,                 # an inverse temperature
    ("DPSGDClassifier", "epsilon"): _POS,
    ("full_conformal_interval", "X"): "arr2",
    ("depth_sensitivity", "depth"): "choice",
    ("mechanism_eta", "depth"): "choice",
    ("pcoqs_quantile", "rho"): _POS,
    ("unbounded_quantile_miscoverage_bound", "m"): "real",    # a real target count, not a grid size
    ("PublicScaler", "low"): "real_or_array",            # one range for all features, or one per feature
    ("PublicScaler", "high"): "real_or_array",
}


_CLASSIFIERS = ("DPLogisticRegression", "DPSGDClassifier", "DPCPClassifier", "SplitConformalClassifier",
                "PrivateSplitConformalClassifier", "MondrianPrivateConformalClassifier")


def kind_of(name, param):
    if param == "y" and name in METHODS and name.split(".")[0] in _CLASSIFIERS:
        return "labels"
    return _KIND_OVERRIDES.get((name, param), _KINDS.get(param))


# --------------------------------------------------------------------------- bad and extreme values

class _Opaque:
    """An object of no useful type."""

    def __repr__(self):
        return "<object>"


_NUMBER_TYPE_BAD = [("numeric string", "0.5"), ("bool", True), ("nan", float("nan")), ("complex", 1 + 1j),
                    ("list", [1.0, 2.0]), ("array", np.array([0.5, 0.5])), ("object", _Opaque())]


def _array_bad(good, ndim):
    arr = np.asarray(good, dtype=float)
    if arr.ndim == 0:
        arr = np.full((3,) if ndim == 1 else (3, 2), float(arr))
    out = []
    for label, value in (("nan entry", np.nan), ("inf entry", np.inf), ("-inf entry", -np.inf)):
        v = arr.copy()
        v.flat[0] = value
        out.append((label, v))
    obj = arr.astype(object)
    obj.flat[0] = None
    out += [("complex entries", arr.astype(complex) + 1j), ("string entries", arr.astype(str)),
            ("object array with None", obj), ("empty", arr[:0]), ("bool scalar", True), ("string", "abc"),
            ("object", _Opaque())]
    if ndim == 1:
        out += [("2-D", np.stack([arr, arr], axis=1)), ("0-D", arr.flat[0])]
    else:
        out += [("1-D", arr[:, 0]), ("3-D", arr[None]), ("0-D", arr.flat[0]), ("no columns", arr[:, :0])]
    extreme = [("huge entries", arr * 1e300 + 1e300), ("object array of reals", arr.astype(object)),
               ("int 10**30 entry", _with_int(arr))]
    return out, extreme


def _with_int(arr):
    obj = arr.astype(object)
    obj.flat[0] = 10 ** 30
    return obj


# a valid value to derive the bad ones from, for parameters whose valid call passes None
_PROTOTYPES = {"directions": DIRS, "candidates": GRID, "start": np.zeros(2), "split": np.full(4, 0.25),
               "classes": [0, 1], "edges": dp.quantile_edges(10)}


def _bad_values(kind, good, default_is_none, param=None):
    """``(bad, extreme)``: lists of ``(label, value)``."""
    bad, extreme = [], []
    none_ok = default_is_none or good is None
    if good is None:
        good = _PROTOTYPES.get(param, good)
    if kind in (_POS, "nonneg", "real", "level", "level0", "delta", "gamma"):
        bad += _NUMBER_TYPE_BAD + [("inf", math.inf), ("-inf", -math.inf)]
        if kind == _POS:
            bad += [("zero", 0.0), ("negative", -1.0)]
            extreme += [("1e300", 1e300), ("1e-300", 1e-300), ("10**30", 10 ** 30)]
        elif kind == "nonneg":
            bad += [("negative", -1.0)]
            extreme += [("zero", 0.0), ("1e300", 1e300), ("10**30", 10 ** 30)]
        elif kind == "real":
            extreme += [("1e300", 1e300), ("-1e300", -1e300), ("10**30", 10 ** 30), ("zero", 0.0)]
        elif kind in ("level", "gamma"):
            bad += [("zero", 0.0), ("one", 1.0), ("negative", -0.5), ("above 1", 1.5), ("10**30", 10 ** 30)]
            extreme += [("1e-300", 1e-300)]
            if kind == "gamma":
                bad += [("other string", "automatic")]
        elif kind == "level0":
            bad += [("one", 1.0), ("negative", -0.5), ("above 1", 1.5), ("10**30", 10 ** 30)]
            extreme += [("zero", 0.0), ("1e-300", 1e-300)]
        elif kind == "delta":
            bad += [("negative", -0.1), ("one", 1.0), ("10**30", 10 ** 30)]
            extreme += [("zero", 0.0), ("1e-300", 1e-300)]
    elif kind in ("int", "int0", "m", "seed"):
        bad += [("float", 2.5), ("integral float", 3.0), ("numeric string", "10"), ("bool", True),
                ("nan", float("nan")), ("negative", -3), ("complex", 1 + 1j), ("list", [1, 2]),
                ("object", _Opaque())]
        if kind != "int0" and kind != "seed":
            bad += [("zero", 0)]
        extreme += [("10**30", 10 ** 30)]
        if kind == "m":
            bad += [("other string", "automatic")]
    elif kind == "bool":
        bad += [("string False", "False"), ("string True", "True"), ("int 1", 1), ("int 0", 0), ("float", 1.0),
                ("array", np.array([True])), ("object", _Opaque())]
        if not none_ok:
            bad += [("None", None)]
    elif kind == "choice":
        bad += [("unknown name", "no-such-option"), ("int", 1), ("bool", True), ("list", ["x"]),
                ("array", np.array(["x", "y"])), ("bytes", b"x"), ("object", _Opaque())]
    elif kind == "rng":
        bad += [("string", "seed"), ("negative", -1), ("float", 1.5), ("bool", True),
                ("legacy RandomState", np.random.RandomState(0)), ("list", [1, 2]), ("object", _Opaque())]
        extreme += [("seed 10**30", 10 ** 30)]
    elif kind in ("arr1", "arr2", "labels", "sets"):
        if kind == "sets":
            arr = np.asarray(good)
            bad += [("1-D", arr[0]), ("3-D", arr[None]), ("empty", arr[:0]), ("string entries", arr.astype(str)),
                    ("nan entries", np.where(arr, np.nan, 0.0)), ("object", _Opaque())]
        elif kind == "labels":
            arr = np.asarray(good)
            obj = arr.astype(object)
            obj.flat[0] = None
            bad += [("fractional labels", arr + 0.5), ("nan entry", np.r_[np.nan, arr[1:]]),
                    ("complex entries", arr + 1j), ("string entries", arr.astype(str)), ("negative", arr - 5),
                    ("object array with None", obj), ("empty", arr[:0]), ("2-D", np.stack([arr, arr], 1)),
                    ("object", _Opaque())]
        else:
            bad, extreme = _array_bad(good, 1 if kind == "arr1" else 2)
    elif kind == "real_or_array":
        bad += [("numeric string", "0.5"), ("bool", True), ("nan", float("nan")), ("inf", math.inf),
                ("complex", 1 + 1j), ("string list", ["a", "b"]), ("object", _Opaque())]
        extreme += [("1e300", 1e300), ("-1e300", -1e300), ("10**30", 10 ** 30), ("list", [1.0, 2.0])]
    elif kind == "estimator":
        bad += [("string", "abc"), ("number", 1.0), ("object", _Opaque()), ("class", type(good))]
        if not none_ok:
            bad += [("None", None)]
    elif kind == "bins":
        bad += [("zero", 0), ("float", 2.5), ("numeric string", "10"), ("bool", True), ("negative", -3),
                ("complex", 1 + 1j), ("nan", float("nan")), ("decreasing edges", [0.5, 0.2, 1.0]),
                ("edges with nan", [0.2, float("nan"), 1.0]), ("edges with inf", [0.2, float("inf")]),
                ("complex edges", [0.5 + 1j, 1.0]), ("string edges", ["0.5", "1"]), ("empty edges", []),
                ("2-D edges", [[0.5, 1.0]]), ("object", _Opaque())]
        extreme += [("10**30", 10 ** 30)]
    elif kind == "box":
        bad += [("flat", (0.0, 1.0, 2.0, 3.0)), ("reversed", ((1.0, 1.0), (0.0, 0.0))),
                ("nan corner", ((0.0, np.nan), (1.0, 1.0))), ("inf corner", ((0.0, 0.0), (np.inf, 1.0))),
                ("complex", ((0.0, 0.0), (1j, 1.0))), ("strings", (("a", "b"), ("c", "d"))), ("string", "abc"),
                ("bool", True), ("None", None), ("object", _Opaque())]
        extreme += [("huge box", ((-1e300, -1e300), (1e300, 1e300))), ("tiny box", ((0.0, 0.0), (1e-300, 1e-300)))]
    elif kind == "bounds":
        bad += [("one number", (1.0,)), ("three numbers", (0.0, 1.0, 2.0)), ("reversed", (1.0, 0.0)),
                ("equal", (1.0, 1.0)), ("nan", (np.nan, 1.0)), ("inf", (0.0, np.inf)), ("complex", (0.0, 1j)),
                ("strings", ("0", "1")), ("bools", (False, True)), ("string", "ab"), ("None", None),
                ("object", _Opaque())]
        extreme += [("huge", (-1e300, 1e300))]
    elif kind == "classes":
        bad += [("duplicates", [0, 0, 1]), ("one class", [0]), ("empty", []), ("nan", [0.0, np.nan]),
                ("2-D", [[0], [1]]), ("scalar", 2), ("string", "ab"), ("object", _Opaque())]
    elif kind == "int_list":
        bad += [("floats", [10.5, 50.0]), ("zero", [0, 10]), ("empty", []), ("strings", ["10"]),
                ("nan", [float("nan")]), ("bools", [True, False]), ("scalar", 10), ("object", _Opaque())]
    elif kind == "privacy_pair":
        bad += [("one number", (1.0,)), ("nan", (np.nan, 1e-6)), ("negative epsilon", (-1.0, 1e-6)),
                ("delta one", (1.0, 1.0)), ("strings", ("1", "0")), ("bools", (True, False)), ("scalar", 1.0),
                ("None", None), ("object", _Opaque())]
    elif kind == "client":
        # a malformed address is refused by its syntax before any distributed.Client is built (a Client that
        # fails in its constructor would stay half-open and block the process; tests/test_scale.py)
        bad += [("number", 1.0), ("object", _Opaque()), ("address without a port", "abc")]
    elif kind in ("regions", "prior", "frame"):
        bad += [("string", "abc"), ("number", 1.0), ("object", _Opaque())]
        if kind == "regions":
            bad += [("None", None)]
    elif kind == "sequence":
        bad += [("number", 1.0), ("object", _Opaque())]
    elif kind == "names":
        bad += [("string", "a"), ("numbers", [0, 1]), ("empty", []), ("object", _Opaque())]
    elif kind in ("name", "text"):
        bad += [("number", 1.0), ("None", None), ("list", ["y"]), ("object", _Opaque())]
    if none_ok:
        bad = [(label, v) for label, v in bad if v is not None]
    return bad, extreme


# Bad values that are legal for a parameter (the docstring says so): (row or "*", parameter, label) -> reason
LEGAL = {
    ("*", "noise_multiplier", "zero"): "sigma = 0 is DP-SGD without noise (epsilon = inf), allowed for baselines",
    ("*", "sampling_rate", "one"): "full-batch steps",
    ("*", "qhat", "inf"): "an infinite threshold is the whole label set (split CP with k > n)",
    ("unbounded_private_quantile[n]", "scores", "empty"): "with a public n an empty calibration part is padded "
                                                          "(documented)",
    **{(row, "scores", "inf entry"): "an unbounded score: +inf lies above every candidate (documented; a model's "
                                     "missing output is mapped to it)"
       for row in ("unbounded_private_quantile", "unbounded_histogram", "unbounded_quantile_probabilities",
                   "scale.unbounded_private_quantile", "reference.unbounded_private_quantile",
                   "unbounded_private_quantile[two_stage]", "unbounded_private_quantile[opendp]",
                   "unbounded_private_quantile[n]")},
    ("*", "value", "list"): "a vector query",
    ("GaussianPrior", "mean", "list"): "a mean vector",
    ("PrivacyAccount", "epsilon", "zero"): "a release that reads no private data costs nothing",
    ("PrivacyAccount", "epsilon", "inf"): "the primary relation is not covered",
    ("PrivacyAccount", "delta", "one"): "a vacuous delta (group privacy of a large epsilon, or an uncovered relation)",
    ("normalized_residual_score", "y_pred", "nan entry"): "model outputs on private records: a NaN residual is "
                                                          "the worst score 1, never refused",
    ("normalized_residual_score", "y_pred", "inf entry"): "model outputs on private records: an infinite "
                                                          "residual is the worst score 1 (documented)",
    ("normalized_residual_score", "y_pred", "-inf entry"): "model outputs on private records: an infinite "
                                                           "residual is the worst score 1 (documented)",
    ("adaptive_privacy_account", "mean_privacy", "None"): "None is a mean model fitted on public data (documented; "
                                                          "chapter 17 passes it)",
    ("adaptive_privacy_account", "scale_privacy", "None"): "None is a scale model fitted on public data "
                                                           "(documented; chapter 17 passes it)",
    **{("reference.dpcp_intervals", "pred_train", label): "model outputs on private records: NaN read as 0, "
                                                           "+-inf clipped to +-1e100, never refused (documented)"
       for label in ("nan entry", "inf entry", "-inf entry")},
    ("normalized_residual_score", "y_pred", "nullable Float64 with NA"): "model outputs on private records: a "
                                                                        "missing value is the worst score 1",
    ("reference.dpcp_intervals", "pred_train", "nullable Float64 with NA"): "model outputs on private records: "
                                                                           "a missing value is read as 0",
    ("PrivateSplitConformalClassifier.calibrate", "y", "negative"): "a private label the model has no column for "
                                                                    "has probability 0: the worst score, never "
                                                                    "refused (documented)",
    **{(row, "X", label): "features go to the model as they are (the missing-value rule of "
                          "dpcp_tutorial._validation.check_features): a record it refuses, or whose score is NaN or "
                          "infinite, gets the worst score (documented)"
       for row in ("SplitConformalRegressor.calibrate", "SplitConformalClassifier.calibrate",
                   "PrivateSplitConformalRegressor.calibrate", "PrivateSplitConformalClassifier.calibrate",
                   "MondrianPrivateConformalClassifier.calibrate", "PrivateNormalizedConformalRegressor.calibrate",
                   "PrivateConformalizedQuantileRegressor.calibrate")
       for label in ("nan entry", "inf entry", "-inf entry", "string column")},
    **{(row, "y", label): "a label outside the public label set is never refused or quoted: it does not train the "
                          "model and scores as the worst class (Mondrian: it belongs to no class) (documented)"
       for row in ("DPCPClassifier.fit", "dpcp_set", "MondrianPrivateConformalClassifier.fit",
                   "MondrianPrivateConformalClassifier.calibrate", "SplitConformalClassifier.calibrate")
       for label in ("fractional labels", "nan entry", "inf entry", "-inf entry", "complex entries",
                     "string entries", "negative", "object array with None", "object array with pd.NA",
                     "datetime array", "string column", "nullable Int64 with NA")},
    **{("PrivateSplitConformalRegressor.calibrate", "y", label): "a NaN or infinite response gives its record the "
                                                                 "worst score 1, as on Dask (documented)"
       for label in ("nan entry", "inf entry", "-inf entry", "nullable Float64 with NA")},
    **{(row, "X", label): "an object feature array (df.to_numpy() of mixed columns) goes to the model as it is, "
                          "like a frame: whether a record holds None or NaN is data, and the model decides per "
                          "record (dpcp_tutorial._validation.check_features, documented)"
       for row in ("SplitConformalRegressor.calibrate", "SplitConformalClassifier.calibrate",
                   "PrivateSplitConformalRegressor.calibrate", "PrivateSplitConformalClassifier.calibrate",
                   "MondrianPrivateConformalClassifier.calibrate", "PrivateNormalizedConformalRegressor.calibrate",
                   "PrivateConformalizedQuantileRegressor.calibrate")
       for label in ("object array with None", "object array with pd.NA")},
    **{(row, "y", label): "a private response is read record by record: a missing, non-finite or huge one gives "
                          "its record the worst score 1, never a refusal (dpcp_tutorial._validation."
                          "private_responses, documented)"
       for row in ("PrivateSplitConformalRegressor.calibrate", "PrivateNormalizedConformalRegressor.calibrate",
                   "PrivateConformalizedQuantileRegressor.calibrate")
       for label in ("nan entry", "inf entry", "-inf entry", "nullable Float64 with NA", "object array with None",
                     "object array with pd.NA")},
    **{("PrivateSplitConformalClassifier.calibrate", "y", label): "classes=None: a label that is not an integer "
                                                                  "(missing, NaN, fractional) gives its record the "
                                                                  "worst score, like a label outside 0..K-1; only "
                                                                  "the dtype (schema) is refused (documented)"
       for label in ("fractional labels", "nan entry", "inf entry", "-inf entry", "object array with None",
                     "object array with pd.NA", "nullable Int64 with NA")},
    ("dpcp_quantile", "scores", "empty"): "with a public n an empty calibration part is padded (documented)",
    ("scale.score_histogram", "scores", "empty"): "an empty collection is an all-zero histogram; the release that "
                                                  "reads it pads it to a public n or refuses it (documented)",
    **{("bounded_interval", "y_pred", label): "a NaN or infinite prediction gives the whole line (documented)"
       for label in ("nan entry", "inf entry", "-inf entry", "nullable Float64 with NA")},
    ("conformal_quantile", "scores", "inf entry"): "an infinite score is the worst score (documented)",
    ("differential_cp_quantile", "scores", "inf entry"): "an infinite score is the worst score (documented)",
    ("interval_coverage", "intervals", "-inf entry"): "a lower end of -inf is a half-line (documented)",
    ("interval_width", "intervals", "-inf entry"): "a lower end of -inf is a half-line, of width inf (documented)",
    ("langevin_step_size", "prior_scale", "inf"): "a flat prior (documented default)",
    ("gumbel_max_sample", "logits", "-inf entry"): "a logit of -inf is a candidate of probability 0 (documented)",
    ("polygon_area", "vertices", "empty"): "fewer than three vertices give area 0 (documented)",
    ("pcoqs_quantile", "scores", "inf entry"): "scores outside [lower, upper] are never counted",
    ("pcoqs_quantile", "scores", "-inf entry"): "scores outside [lower, upper] are never counted",
    ("laplace_histogram_quantile", "scores", "inf entry"): "scores outside the range are clipped",
    ("laplace_histogram_quantile", "scores", "-inf entry"): "scores outside the range are clipped",
    ("opendp_quantile", "scores", "inf entry"): "scores outside the range are clipped",
    ("opendp_quantile", "scores", "-inf entry"): "scores outside the range are clipped",
    ("opendp_quantile_probabilities", "scores", "inf entry"): "clipped",
    ("opendp_quantile_probabilities", "scores", "-inf entry"): "clipped",
}

# A message may name a parameter by the name it is checked under.
ALIASES = {
    "bins": ("bin edges",),
    "bounds": ("bound",),
    "frame": ("frame", "DataFrame", "dataframe"),
    "y_grid": ("y_grid", "grid"),
    "x_new": ("x_new", "point"),
    "mean_privacy": ("mean",),
    "scale_privacy": ("scale",),
    "box": ("box",),
    "prior": ("prior",),
    "value": ("value", "query"),
    "y": ("y", "label", "labels", "target"),
    "X_test": ("X_test", "X contains", "X must be"),      # the model's own refusal of the test features
}

# --------------------------------------------------------------------------- running one row

_OWNERS = {
    "conformal": "api", "accounting": "api", "private_split": "api", "dpcp": "api", "adaptive": "api",
    "mondrian": "api", "median": "api", "training": "api", "_validation": "api", "scale": "scale",
    "calibrators": "edges", "tukey_exact": "edges", "_counts": "edges", "quantile": "edges",
    "mechanisms": "edges", "depth": "edges", "aggregation": "edges", "baselines": "edges", "datasets": "edges",
}


def _target(name):
    """The public object a row is about (for its owner and signature)."""
    if name.startswith("reference."):
        return BASE[name][0]
    if name in METHODS:
        return getattr(dp, name.split(".")[0])
    if name.startswith("scale."):
        return getattr(dp.scale, name[len("scale."):])
    return getattr(dp, name)


def owner(name):
    if name.startswith("reference."):
        return "api"
    module = _target(name).__module__.rsplit(".", 1)[-1]
    return _OWNERS.get(module, "?")


def _call_spec(row):
    """(callable, full valid arguments) of a row: BASE/MODES plus the signature defaults."""
    if row in MODES:
        name, given = MODES[row]
        fn = BASE[name][0]
    else:
        name, (fn, given) = row, BASE[row]
    fn = fn if fn is not None else _target(name)
    sig = inspect.signature(fn)
    kwargs, missing = {}, []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name.startswith("_"):
            continue
        if p.name in given:
            kwargs[p.name] = given[p.name]
        elif p.default is not inspect.Parameter.empty and repr(p.default) != "<required>":
            kwargs[p.name] = p.default
        else:
            missing.append(p.name)
    return name, fn, kwargs, missing


class _Hang(BaseException):
    """Raised in a call that uses more than ``TIME_LIMIT`` of CPU (a BaseException: no ``except Exception`` eats it)."""


TIME_LIMIT = 3.0        # CPU seconds per call (not wall time: the machine may be loaded); valid calls take ms


def _alarm(signum, frame):
    raise _Hang()


def _call(fn, kwargs, timed=True):
    # not inside Dask: an interrupted computation can leave the threaded scheduler blocked
    timed = timed and hasattr(signal, "setitimer") and hasattr(signal, "SIGPROF")
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a RuntimeWarning (overflow, invalid value) is a failure too
        release_warning = getattr(dp, "ReleaseWarning", None) if "ReleaseWarning" in dir(dp) else None
        if release_warning is not None:
            warnings.simplefilter("ignore", release_warning)
        if timed:
            previous = signal.signal(signal.SIGPROF, _alarm)
            signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT)
        try:
            return fn(**kwargs)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_PROF, 0)
                signal.signal(signal.SIGPROF, previous)


def _has_nan(value, depth=0):
    if depth > 3:
        return False
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if isinstance(value, (tuple, list)):
        return any(_has_nan(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(v, depth + 1) for v in value.values())
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return any(_has_nan(v, depth + 1) for k, v in vars(value).items() if k.endswith("_") or k == "x")
    return False


def _names_parameter(message, param):
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(alias)}(?![A-Za-z0-9_])", message, re.IGNORECASE)
               for alias in (param,) + ALIASES.get(param, ()))


def _outcome(fn, kwargs, param, kind_of_value, timed=True):
    """``None`` if fine, else a short description of the problem."""
    try:
        out = _call(fn, kwargs, timed)
    except _Hang:
        return f"hangs (still running after {TIME_LIMIT:g} s of CPU)"
    except (TypeError, ValueError) as exc:        # NotFittedError is a ValueError
        if not _names_parameter(str(exc), param):
            return f"unhelpful {type(exc).__name__}: {str(exc)[:100]!r}"
        return None
    except Exception as exc:                      # noqa: BLE001 - the point of the sweep
        return f"crash {type(exc).__name__}: {str(exc)[:100]}"
    if kind_of_value == "bad":
        return "silently accepted"
    if _has_nan(out):
        return "returned NaN"
    return None


_DASK_PARAMS = ("scores", "data")     # the private collections of dpcp_tutorial.scale, passed as dask arrays


def _prepare(name, kwargs):
    """The arguments as the callable takes them: the scale functions get dask collections."""
    if not name.startswith("scale."):
        return kwargs
    da = pytest.importorskip("dask.array")
    out = dict(kwargs)
    for key in _DASK_PARAMS:
        value = out.get(key)
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            out[key] = da.from_array(value, chunks=max(1, (len(value) + 1) // 2))
    if name == "scale.model_scores" and out.get("frame") is None:
        pd = pytest.importorskip("pandas")
        dd = pytest.importorskip("dask.dataframe")
        out["frame"] = dd.from_pandas(pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": Y}), npartitions=2)
    return out


def run_row(row, param, first_only=False):
    """Problems of one (callable, parameter) row: a list of strings (only the first with ``first_only``)."""
    name, fn, kwargs, missing = _call_spec(row)
    kwargs = _prepare(name, kwargs)
    good = kwargs[param]
    if name.startswith("scale.") and param in _DASK_PARAMS:
        good = _call_spec(row)[2][param]          # the numpy version: its bad variants are wrapped below
    kind = kind_of(name, param)
    default = inspect.signature(fn).parameters[param].default
    bad, extreme = _bad_values(kind, good, default is None, param)
    problems = []
    for kind_of_values, values in (("bad", bad), ("extreme", extreme)):
        for label, value in values:
            legal = (row, param, label) in LEGAL or (name, param, label) in LEGAL or ("*", param, label) in LEGAL
            kind_of_value = "extreme" if legal else kind_of_values     # for this value only
            problem = _outcome(fn, _prepare(name, {**kwargs, param: value}), param, kind_of_value,
                               timed=not name.startswith("scale."))
            if problem:
                problems.append(f"{param}={label}: {problem}")
                if first_only:
                    return problems
    return problems


def _rows():
    names = sorted(BASE) + sorted(MODES)
    out = []
    for row in names:
        name, fn, kwargs, missing = _call_spec(row)
        for param in kwargs:
            out.append((row, param))
    return out


# --------------------------------------------------------------------------- rows that fail in other helpers' modules

# (row, parameter) -> what fails; the owning helper is read from the module (strict: the mark must go when fixed)
XFAIL: dict[tuple[str, str], str] = {}


def _param(row, param):
    name = MODES[row][0] if row in MODES else row
    reason = XFAIL.get((row, param))
    marks = [pytest.mark.xfail(strict=True, reason=f"owned by {owner(name)}: {reason}")] if reason else []
    return pytest.param(row, param, id=f"{row}-{param}", marks=marks)


# --------------------------------------------------------------------------- other kinds of the same value

# The values users bring that are not plain Python floats, ints and float64 arrays: NumPy scalars of every dtype,
# 0-d arrays, Fraction, Decimal, pandas' missing values and nullable, categorical and string columns, np.matrix,
# masked arrays, float16/longdouble arrays, read-only and non-contiguous arrays, ragged lists, generators,
# datetime arrays; SeedSequence/PCG64/RandomState for rng. Each is either ``("same", value, plain)`` -- it must give
# the result of the call with ``plain`` (or be refused like any bad value) -- or ``("bad", value)``: it must be
# refused with a TypeError/ValueError naming the parameter.

_INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
_SCALAR_KINDS = (_POS, "nonneg", "real", "level", "level0", "delta", "gamma")


def _numpy_ints(value):
    out = []
    for dtype in _INT_DTYPES:
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            out.append((f"np.{dtype.__name__}", "same", dtype(value), value))
    return out


def _matrix(values):
    with warnings.catch_warnings():           # NumPy's PendingDeprecationWarning on building one
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.matrix(values)


def _other_kinds(kind, good):
    """``[(label, "same", value, plain)]`` and ``[(label, "bad", value)]`` for one parameter's valid value."""
    from decimal import Decimal
    from fractions import Fraction

    pd = pytest.importorskip("pandas")
    out = []
    if kind in _SCALAR_KINDS and isinstance(good, (int, float)) and not isinstance(good, bool) \
            and math.isfinite(good):
        g = float(good)
        out += [("np.float32", "same", np.float32(g), float(np.float32(g))),
                ("np.float16", "same", np.float16(g), float(np.float16(g))),
                ("np.float64", "same", np.float64(g), g),
                ("np.longdouble", "same", np.longdouble(g), float(np.longdouble(g))),
                ("Fraction", "same", Fraction(g), g),
                ("Decimal", "same", Decimal(repr(g)), g),
                ("0-d array", "same", np.array(g), g),
                ("np.bool_", "bad", np.bool_(True)), ("pd.NA", "bad", pd.NA), ("pd.NaT", "bad", pd.NaT),
                ("datetime64", "bad", np.datetime64("2020-01-01"))]
        if g.is_integer():
            out += _numpy_ints(int(g))
    elif kind in ("int", "int0", "m", "seed", "bins") and isinstance(good, int) and not isinstance(good, bool):
        out += _numpy_ints(good)
        out += [("0-d array", "same", np.array(good), good), ("Fraction", "same", Fraction(good), good),
                ("np.bool_", "bad", np.bool_(True)), ("pd.NA", "bad", pd.NA), ("np.float64", "bad", np.float64(good))]
    elif kind == "classes" and isinstance(good, list) and good:
        masked = np.ma.array(good, mask=[False] * (len(good) - 1) + [True])
        out += [("array", "same", np.array(good), good), ("tuple", "same", tuple(good), good),
                ("np.int8 array", "same", np.array(good, dtype=np.int8), good),
                ("masked entry", "bad", masked), ("generator", "bad", (c for c in good))]
    elif kind == "bool" and isinstance(good, bool):
        out += [("np.bool_", "same", np.bool_(good), good), ("pd.NA", "bad", pd.NA)]
    elif kind == "rng":
        out += [("SeedSequence", "same", np.random.SeedSequence(0), 0), ("PCG64", "same", np.random.PCG64(0), 0),
                ("np.int64 seed", "same", np.int64(0), 0), ("np.uint8 seed", "same", np.uint8(0), 0),
                ("RandomState", "bad", np.random.RandomState(0)), ("pd.NA", "bad", pd.NA)]
    elif kind in ("arr1", "arr2", "labels") and isinstance(good, np.ndarray) and good.ndim in (1, 2) and good.size \
            and good.dtype.kind in "biuf":
        g = good
        frozen = g.copy()
        frozen.flags.writeable = False
        wide = np.repeat(g, 2, axis=-1)
        strided = wide[..., ::2]
        masked = np.ma.array(g, mask=np.zeros(g.shape, dtype=bool))
        masked.mask.flat[0] = True
        obj_na = g.astype(object)
        obj_na.flat[0] = pd.NA
        out += [("read-only", "same", frozen, g), ("non-contiguous", "same", strided, g),
                ("list", "same", g.tolist(), g),
                ("masked entry", "bad", masked), ("generator", "bad", (v for v in g.tolist())),
                ("object array with pd.NA", "bad", obj_na),
                ("datetime array", "bad", np.zeros(g.shape, dtype="datetime64[s]")),
                ("string column", "bad", pd.Series(g.astype(str)) if g.ndim == 1 else pd.DataFrame(g.astype(str)))]
        if g.dtype.kind == "f":
            out += [("float32 array", "same", g.astype(np.float32), g.astype(np.float32).astype(float)),
                    ("float16 array", "same", g.astype(np.float16), g.astype(np.float16).astype(float)),
                    ("longdouble array", "same", g.astype(np.longdouble), g)]
        else:
            out += [(f"{np.dtype(t).name} array", "same", g.astype(t), g) for t in (np.int8, np.uint16, np.int64)
                    if np.iinfo(t).min <= g.min() and g.max() <= np.iinfo(t).max]
        if g.ndim == 1:
            nullable = "Int64" if g.dtype.kind in "iu" else "Float64"
            with_na = pd.array(g.tolist(), dtype=nullable)
            with_na[0] = pd.NA
            out += [("pd.Series", "same", pd.Series(g), g),
                    (f"nullable {nullable}", "same", pd.array(g.tolist(), dtype=nullable), g),
                    (f"nullable {nullable} with NA", "bad", with_na),
                    ("categorical", "same", pd.Categorical(g), g),
                    ("ragged", "bad", [g.tolist()[:1], g.tolist()[1:]] if g.size > 2 else [[g[0]], []]),
                    ("np.matrix (1, n)", "bad", _matrix(g))]
        else:
            ragged = [row.tolist() for row in g]
            ragged[0] = ragged[0][:-1] if len(ragged[0]) > 1 else ragged[0] + [0.0]
            out += [("pd.DataFrame", "same", pd.DataFrame(g), g), ("np.matrix", "same", _matrix(g), g),
                    ("Fortran order", "same", np.asfortranarray(g), g), ("ragged rows", "bad", ragged)]
    return out


def _canonical(value, depth=0):
    """A comparable form of a result: numbers as floats, arrays as arrays, objects by their public state."""
    from decimal import Decimal
    from fractions import Fraction

    if depth > 5:
        return "..."
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating, Fraction, Decimal)):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return tuple(_canonical(v, depth + 1) for v in value.ravel()) + (value.shape,)
        return np.array(value)
    if isinstance(value, np.random.Generator):
        return ("generator", repr(value.bit_generator.state))
    if isinstance(value, (tuple, list)):
        return tuple(_canonical(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _canonical(v, depth + 1)) for k, v in value.items()))
    if value is None or isinstance(value, type):
        return repr(value)
    if hasattr(value, "get_params"):     # an estimator: its fitted state (its parameters are what differ)
        return (type(value).__name__,
                tuple(sorted((k, _canonical(v, depth + 1)) for k, v in vars(value).items()
                             if k.endswith("_") and not k.startswith("_"))))
    if hasattr(value, "__dict__"):
        return (type(value).__name__,
                tuple(sorted((k, _canonical(v, depth + 1)) for k, v in vars(value).items() if not k.startswith("_"))))
    return repr(value)


def _close(a, b) -> bool:
    """Equal canonical forms; floats and float arrays to 1e-9 (a Fortran-ordered or non-contiguous copy may be
    summed in another order by BLAS), everything else exactly."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.dtype.kind in "fiub" and b.dtype.kind in "fiub":
            return bool(np.allclose(a.astype(float), b.astype(float), rtol=1e-9, atol=1e-12, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _kind_rows():
    """Rows whose parameter has values of other kinds to try."""
    out = []
    for row, param in _rows():
        name, fn, kwargs, _ = _call_spec(row)
        if _other_kinds(kind_of(name, param), kwargs[param]):
            out.append((row, param))
    return out


def _problem_of_call(fn, args, param):
    """``(None, result)`` for a success without NaN, ``(None, None)`` for a clear refusal, else ``(problem, None)``."""
    try:
        out = _call(fn, args, timed=False)
    except (TypeError, ValueError) as exc:
        return (None if _names_parameter(str(exc), param) else
                f"unhelpful {type(exc).__name__}: {str(exc)[:100]!r}"), None
    except Exception as exc:                      # noqa: BLE001 - the point of the sweep
        return f"crash {type(exc).__name__}: {str(exc)[:100]}", None
    if _has_nan(out):
        return "returned NaN", None
    return None, ("ok", out)


def run_kind_row(row, param):
    """Problems of one row under the other kinds of its valid value (one call per value: a bit generator such
    as PCG64 is consumed by its call, as a Generator would be)."""
    name, fn, kwargs, _ = _call_spec(row)
    fresh_entropy = "rng" in kwargs and kwargs["rng"] is None and param != "rng"    # no result to compare with
    problems = []
    plain_results = {}
    for label, verdict, value, *plain in _other_kinds(kind_of(name, param), kwargs[param]):
        if verdict == "bad":
            legal = any(key in LEGAL for key in ((row, param, label), (name, param, label), ("*", param, label)))
            problem = _outcome(fn, _prepare(name, {**kwargs, param: value}), param, "extreme" if legal else "bad",
                               timed=False)
            if problem:
                problems.append(f"{param}={label}: {problem}")
            continue
        problem, got = _problem_of_call(fn, _prepare(name, {**kwargs, param: value}), param)
        if problem:
            problems.append(f"{param}={label}: {problem}")
        if got is None:                            # refused by name, or a problem reported above
            continue
        key = (type(plain[0]).__name__,
               plain[0].tobytes() if isinstance(plain[0], np.ndarray) else repr(plain[0]))
        if key not in plain_results:
            try:
                plain_results[key] = ("ok", _call(fn, _prepare(name, {**kwargs, param: plain[0]}), timed=False))
            except (TypeError, ValueError) as exc:
                plain_results[key] = ("raised", exc)
        status, expected = plain_results[key]
        if status == "raised":
            problems.append(f"{param}={label}: accepted, but the plain value {plain[0]!r} is refused ({expected})")
        elif not fresh_entropy and not _close(_canonical(got[1]), _canonical(expected)):
            problems.append(f"{param}={label}: a result different from the plain value's")
    return problems


# --------------------------------------------------------------------------- tests

def _public_callables():
    names = []
    for name in dp.__all__:
        obj = getattr(dp, name)
        if not inspect.ismodule(obj) and callable(obj):
            names.append(name)
    names += [f"scale.{name}" for name in dp.scale.__all__]
    for module in REF.values():
        names += [f"reference.{key}" for key, obj in vars(module).items()
                  if callable(obj) and not key.startswith("_") and getattr(obj, "__module__", None) == module.__name__]
    return sorted(names)


def test_every_public_callable_is_swept():
    missing = [n for n in _public_callables() if n not in BASE and n not in NOT_SWEPT]
    assert not missing, f"add a valid call for {missing} to BASE in tests/test_bad_input_sweep.py"


def test_every_parameter_has_a_valid_value_and_a_kind():
    problems = []
    for row in sorted(BASE) + sorted(MODES):
        name, fn, kwargs, missing = _call_spec(row)
        problems += [f"{row}: no valid value for {p} (add it to BASE)" for p in missing]
        problems += [f"{row}: no kind for {p} (add it to _KINDS)" for p in kwargs if kind_of(name, p) is None]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("row", sorted(BASE) + sorted(MODES))
def test_valid_call_releases_without_nan(row):
    name, fn, kwargs, _ = _call_spec(row)
    out = _call(fn, _prepare(name, kwargs), timed=not name.startswith("scale."))
    assert not _has_nan(out), f"{row}: the valid call returned NaN"


@pytest.mark.parametrize("row, param", [_param(r, p) for r, p in _rows()])
def test_sweep(row, param):
    # a row marked xfail stops at its first problem (it fails anyway; when it is fixed, it runs in full)
    problems = run_row(row, param, first_only=(row, param) in XFAIL)
    assert not problems, f"{row}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("row, param", [pytest.param(r, p, id=f"{r}-{p}") for r, p in _kind_rows()])
def test_other_kinds_of_value(row, param):
    problems = run_kind_row(row, param)
    assert not problems, f"{row}:\n  " + "\n  ".join(problems)


def test_reference_median_refuses_empty_data_clearly():
    fn = REF["private_median"].private_spatial_median
    with pytest.raises(ValueError, match="data"):
        fn(np.empty((0, 2)), 1.0, 0.0, 3.0, rng=0)


def _category(problem):
    for word, category in (("silently accepted", "silent accepts"), ("returned NaN", "NaN outputs"),
                           ("unhelpful", "unhelpful errors"), ("crash", "unhelpful crashes"),
                           ("hangs", "hangs"), ("different", "results unlike the plain value's")):
        if word in problem:
            return category
    return "other"


if __name__ == "__main__":       # counts and every failure, grouped by owner
    rows = _rows()
    by_owner: dict[str, list] = {}
    counts: dict[str, int] = {}
    calls = 0
    for row, param in rows:
        name = MODES[row][0] if row in MODES else row
        _, fn, kwargs, _ = _call_spec(row)
        bad, extreme = _bad_values(kind_of(name, param), kwargs[param],
                                   inspect.signature(fn).parameters[param].default is None, param)
        kinds = _other_kinds(kind_of(name, param), kwargs[param])
        calls += len(bad) + len(extreme) + len(kinds)
        problems = run_row(row, param) + (run_kind_row(row, param) if kinds else [])
        for p in problems:
            counts[_category(p)] = counts.get(_category(p), 0) + 1
        if problems:
            by_owner.setdefault(owner(name), []).append((row, param, problems))
    callables = len({MODES[r][0] if r in MODES else r for r, _ in rows})
    print(f"{callables} callables, {len(rows)} (callable, parameter) rows, {calls} bad, extreme or other-kind calls")
    for category in ("silent accepts", "unhelpful errors", "unhelpful crashes", "NaN outputs", "hangs",
                     "results unlike the plain value's", "other"):
        print(f"  {counts.get(category, 0)} {category}")
    for who, failures in sorted(by_owner.items()):
        print(f"\n== {who}: {len(failures)} failing rows")
        for row, param, problems in failures:
            print(f"{row} / {param}:")
            for p in problems:
                print("    " + p)
    sys.exit(0)
