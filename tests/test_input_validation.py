"""Input-validation findings, each reproduced as a regression test.

The systematic version is tests/test_bad_input_sweep.py; these pin the cases
found by hand, by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import dpcp_tutorial as dp
from dpcp_tutorial._validation import check_1d, check_2d, check_bool, check_scalar

X = np.random.default_rng(0).normal(size=(40, 2))


def test_dpcp_classifier_predict_before_fit_is_not_fitted_error():
    with pytest.raises(NotFittedError):
        dp.DPCPClassifier(dp.DPLogisticRegression(x_bound=1.0), classes=[0, 1]).predict(X)


def test_coinpress_split_with_nan_is_refused():
    with pytest.raises(ValueError, match="split"):
        dp.coinpress_mean(X, 0.5, 10.0, split=[np.nan] * 4, rng=0)


@pytest.mark.parametrize("epsilon1", [746.0, 800.0, 1e4])
def test_dpcp_levels_with_huge_epsilon1_is_a_clear_value_error(epsilon1):
    with pytest.raises(ValueError, match="infeasible"):
        dp.dpcp_levels(1000, 0.1, epsilon1, 1.0, 1e-6)
    with pytest.raises(ValueError, match="infeasible"):
        dp.dpcp_quantile(np.linspace(0, 1, 100), 0.1, epsilon1, 1.0, 1e-6)


def test_coverage_floor_does_not_overflow():
    assert dp.differential_cp_coverage_floor(0.1, 1e12, 0.0) == -np.inf


def test_set_coverage_rejects_one_dimensional_nan_and_string_sets():
    y = np.array([0, 1])
    with pytest.raises(ValueError, match="shape"):
        dp.set_coverage(y, np.array([True, False]))
    with pytest.raises(TypeError, match="booleans"):
        dp.set_coverage(y, np.array([[np.nan, 0.0], [0.0, 1.0]]))
    with pytest.raises(TypeError, match="booleans"):
        dp.set_coverage(y, np.array([["yes", ""], ["", "yes"]]))
    assert dp.set_coverage(y, np.array([[1, 0], [0, 1]])) == 1.0          # 0/1 integers are fine


@pytest.mark.parametrize("fn", [dp.lac_prediction_set, dp.aps_prediction_set])
def test_prediction_sets_refuse_nan_threshold(fn):
    proba = np.full((3, 3), 1 / 3)
    with pytest.raises(ValueError, match="NaN"):
        fn(proba, np.nan)
    with pytest.raises(TypeError):
        fn(proba, "0.5")
    assert fn(proba, np.inf).all()                                          # inf: every label


def test_pps_choose_m_refuses_empty_candidates():
    with pytest.raises(ValueError, match="empty"):
        dp.pps_choose_m(500, 0.1, 1.0, candidates=[])


def test_gaussian_prior_checks_size_d_and_scale():
    for scale in (1e-300, 1e300, 0.0, -1.0, np.nan):
        with pytest.raises(ValueError):
            dp.GaussianPrior(0.0, scale=scale)
    with pytest.raises(TypeError):
        dp.GaussianPrior(scale=1.0)                 # the centre is required too
    with pytest.raises(ValueError):
        dp.GaussianPrior(0.0, 1.0).sample(0, 2)
    with pytest.raises(ValueError):
        dp.GaussianPrior(0.0, 1.0).sample(3, 0)
    with pytest.raises(TypeError):
        dp.GaussianPrior(0.0, 1.0).sample(3.0, 2)


def test_langevin_step_size_refuses_zero_and_negative_prior_scale():
    for scale in (0.0, -1.0, 1e-300):
        with pytest.raises(ValueError, match="prior_scale"):
            dp.langevin_step_size(1.0, np.eye(2), prior_scale=scale)


@pytest.mark.parametrize("fn", [
    lambda b: dp.ssp_sensitivity(b, 1.0), lambda b: dp.ssp_sensitivity(1.0, b),
    lambda b: dp.output_perturbation_sensitivity(b, 1.0), lambda b: dp.clipped_mean_sensitivity(10, b),
    lambda b: dp.laplace_scale(b, 1.0), lambda b: dp.pure_dp_to_zcdp(b),
])
def test_huge_bounds_give_value_errors_not_overflow(fn):
    with pytest.raises(ValueError, match="too large"):
        fn(1e300)


def test_boolean_flags_must_be_real_bools():
    for value in ("False", "True", 0, 1, None):
        with pytest.raises(TypeError):
            check_bool(value, "flag")
        with pytest.raises(TypeError):
            dp.differential_cp_quantile(np.linspace(0, 1, 50), 0.1, 1.0, 0.0, corrected=value)
        with pytest.raises(TypeError):
            dp.private_quantile_probabilities(np.linspace(0, 1, 500), 0.1, 1.0, bins=10, log=value)
        with pytest.raises(TypeError):
            dp.gaussian_sigma(1.0, 1.0, 1e-5, analytic=value)
        with pytest.raises(TypeError):
            dp.SplitConformalRegressor(dp.DPRidgeRegression(x_bound=1.0, y_bound=1.0), prefit=value).fit(X, X[:, 0])
    assert check_bool(np.bool_(True), "flag") is True


def test_numeric_strings_and_complex_numbers_are_type_errors():
    for value in ("0.1", "1", 1 + 0j, np.complex128(0.5)):
        with pytest.raises(TypeError):
            check_scalar(value, "x")
    with pytest.raises(TypeError):
        check_1d(["0.1", "0.2"], "scores")
    with pytest.raises(TypeError):
        check_1d(np.array([0.1, 0.2]) + 0j, "scores")
    with pytest.raises(TypeError):
        check_2d([[1 + 1j, 0.0]], "X")
    with pytest.raises(TypeError):
        dp.private_quantile(["0.1", "0.5", "0.9"] * 100, 0.1, 1.0, bins=10, rng=0)
    with pytest.raises(TypeError):
        dp.private_quantile(np.linspace(0, 1, 300) + 0j, 0.1, 1.0, bins=10, rng=0)
    with pytest.raises(TypeError):
        dp.laplace_mechanism("3.0", 1.0, 1.0, rng=0)
