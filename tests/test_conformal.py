"""Tests of split conformal prediction (chapter 1)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression

from dpcp_tutorial import (
    SplitConformalClassifier,
    SplitConformalRegressor,
    absolute_residual_score,
    aps_prediction_set,
    aps_score,
    conformal_quantile,
    conformal_rank,
    full_conformal_interval,
    interval_coverage,
    interval_width,
    lac_prediction_set,
    lac_score,
    make_heteroscedastic_regression,
    set_coverage,
    set_size,
)


# --------------------------------------------------------------------------- rank


@pytest.mark.parametrize(
    "n, alpha, expected",
    [
        (9, 0.7, 3),      # (n+1)(1-alpha) = 3 exactly; naive float arithmetic gives 4
        (19, 0.1, 18),    # = 18 exactly
        (99, 0.05, 95),   # = 95 exactly
        (9, 0.1, 9),
        (10, 0.1, 10),    # 9.9 -> 10
        (8, 0.1, 9),      # 8.1 -> 9 > n: infinite quantile
        (1, 0.5, 1),
        (1, 0.4, 2),
        (2, 0.5, 2),      # 1.5 -> 2
        (2, 1 / 3, 2),    # 2 exactly
    ],
)
def test_rank_exact_cases(n, alpha, expected):
    assert conformal_rank(n, alpha) == expected


def test_rank_matches_decimal_arithmetic_on_random_levels():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        n = int(rng.integers(1, 10**6))
        digits = int(rng.integers(1, 4))
        alpha = round(float(rng.uniform(0.001, 0.999)), digits)
        if not 0 < alpha < 1:
            continue
        exact = math.ceil((n + 1) * (1 - Fraction(str(alpha))))
        assert conformal_rank(n, alpha) == exact


def test_quantile_is_kth_smallest_and_inf_beyond_n():
    rng = np.random.default_rng(1)
    for n in [1, 2, 3, 10, 57, 1000]:
        scores = rng.exponential(size=n)
        for alpha in [0.01, 0.05, 0.1, 0.2, 0.5, 0.9]:
            k = math.ceil((n + 1) * (1 - Fraction(str(alpha))))
            expected = math.inf if k > n else np.sort(scores)[k - 1]
            assert conformal_quantile(scores, alpha) == expected


def test_quantile_with_ties_and_all_equal_scores():
    assert conformal_quantile([1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0], 0.5) == 2.0
    assert conformal_quantile(np.full(100, 0.25), 0.1) == 0.25
    assert conformal_quantile([0.5], 0.5) == 0.5
    assert conformal_quantile([0.5], 0.4) == math.inf
    assert conformal_quantile([0.2, 0.1], 1 / 3) == 0.2


def test_quantile_large_n_exact():
    scores = np.random.default_rng(2).uniform(size=10**6)
    k = conformal_rank(10**6, 0.1)
    assert k == 900001
    assert conformal_quantile(scores, 0.1) == np.sort(scores)[k - 1]


def test_split_conformal_coverage_equals_k_over_n_plus_1():
    """Exact law: for continuous scores P(cover) = k/(n+1).

    R = 40,000 independent (calibration, test) draws; the Monte Carlo mean has
    standard error sqrt(p(1-p)/R) <= 0.0015; we allow 4 SE. A quantile using rank
    ceil(n(1-alpha)) instead (coverage 45/51 = 0.882 vs 46/51 = 0.902) fails.
    """
    rng = np.random.default_rng(3)
    n, alpha, reps = 50, 0.1, 40_000
    k = conformal_rank(n, alpha)
    cal = rng.standard_normal((reps, n)) ** 2
    test = rng.standard_normal(reps) ** 2
    qhat = np.array([conformal_quantile(row, alpha) for row in cal])
    covered = test <= qhat
    p = k / (n + 1)
    se = math.sqrt(p * (1 - p) / reps)
    assert abs(covered.mean() - p) <= 4 * se
    assert covered.mean() >= 1 - alpha - 3 * se
    assert covered.mean() <= 1 - alpha + 1 / (n + 1) + 3 * se


# --------------------------------------------------------------------------- scores and sets


def _dirichlet_probs(rng, n, k, concentration=0.7):
    return rng.dirichlet(np.full(k, concentration), size=n)


def test_lac_and_aps_scores_direct_definitions():
    proba = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.25, 0.5, 0.25]])
    y = np.array([1, 2, 2])
    np.testing.assert_allclose(lac_score(proba, y), [0.7, 0.2, 0.75])
    # APS: mass of classes ranked at or above y (ties by class index)
    np.testing.assert_allclose(aps_score(proba, y), [0.8, 0.8, 1.0])
    np.testing.assert_allclose(aps_score(proba, np.array([0, 0, 0])), [0.5, 0.9, 0.75])


def test_sets_contain_label_iff_score_below_qhat():
    rng = np.random.default_rng(4)
    proba = _dirichlet_probs(rng, 500, 6)
    for q in [0.05, 0.3, 0.7, 0.95]:
        for score_fn, set_fn in [(lac_score, lac_prediction_set), (aps_score, aps_prediction_set)]:
            sets = set_fn(proba, q)
            for label in range(6):
                y = np.full(500, label)
                np.testing.assert_array_equal(sets[:, label], score_fn(proba, y) <= q)


def test_classification_coverage_lac_and_aps():
    """Labels drawn from the predicted probabilities (a calibrated model).

    For each score, 2,000 repetitions of (n = 100 calibration points, 1 test
    point): coverage must be >= 1 - alpha - 3 SE with SE = sqrt(0.09/2000) = 0.0067.
    """
    rng = np.random.default_rng(5)
    reps, n, k, alpha = 2000, 100, 5, 0.1
    se = math.sqrt(alpha * (1 - alpha) / reps)
    for score_fn, set_fn in [(lac_score, lac_prediction_set), (aps_score, aps_prediction_set)]:
        hits = 0
        for _ in range(reps):
            proba = _dirichlet_probs(rng, n + 1, k)
            y = (rng.uniform(size=(n + 1, 1)) > np.cumsum(proba, axis=1)).sum(axis=1)
            q = conformal_quantile(score_fn(proba[:n], y[:n]), alpha)
            hits += bool(set_fn(proba[n:], q)[0, y[n]])
        assert hits / reps >= 1 - alpha - 3 * se


# --------------------------------------------------------------------------- MAPIE cross-check


def _quiet_mapie():
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning)


def test_matches_mapie_regression():
    with warnings.catch_warnings():
        _quiet_mapie()
        from mapie.regression import SplitConformalRegressor as MapieRegressor

        X, y = make_heteroscedastic_regression(1400, rng=6)
        model = LinearRegression().fit(X[:400], y[:400])
        for n_cal in [20, 99, 100, 500, 1000]:
            X_cal, y_cal = X[400:400 + n_cal], y[400:400 + n_cal]
            for alpha in [0.05, 0.1, 0.2]:
                ours = SplitConformalRegressor(model, alpha=alpha, prefit=True).calibrate(X_cal, y_cal)
                theirs = MapieRegressor(model, confidence_level=1 - alpha, prefit=True).conformalize(X_cal, y_cal)
                _, iv = theirs.predict_interval(X[:50])
                np.testing.assert_allclose(ours.predict_interval(X[:50]), iv[:, :, 0], rtol=0, atol=1e-12)


def test_matches_mapie_lac_classification():
    with warnings.catch_warnings():
        _quiet_mapie()
        from mapie.classification import SplitConformalClassifier as MapieClassifier

        X, y = load_digits(return_X_y=True)
        model = LogisticRegression(max_iter=3000).fit(X[:700], y[:700])
        for n_cal in [50, 300, 600]:
            X_cal, y_cal = X[700:700 + n_cal], y[700:700 + n_cal]
            for alpha in [0.02, 0.1]:
                ours = SplitConformalClassifier(model, alpha=alpha, score="lac", prefit=True).calibrate(X_cal, y_cal)
                theirs = MapieClassifier(model, confidence_level=1 - alpha, conformity_score="lac",
                                         prefit=True).conformalize(X_cal, y_cal)
                _, sets = theirs.predict_set(X[1300:])
                np.testing.assert_array_equal(ours.predict_set(X[1300:]), sets[:, :, 0])


# --------------------------------------------------------------------------- estimators


def test_regressor_fit_calibrate_predict_and_helpers():
    X, y = make_heteroscedastic_regression(3000, rng=7)
    scr = SplitConformalRegressor(LinearRegression(), alpha=0.1).fit(X[:1000], y[:1000]).calibrate(X[1000:2000], y[1000:2000])
    iv = scr.predict_interval(X[2000:])
    np.testing.assert_allclose(interval_width(iv), 2 * scr.qhat_)
    assert scr.qhat_ == conformal_quantile(absolute_residual_score(y[1000:2000], scr.predict(X[1000:2000])), 0.1)
    cov = interval_coverage(y[2000:], iv)
    assert 0.85 <= cov <= 0.95  # 1000 test points: SE 0.0095, this is a 5 SE band


def test_classifier_fit_calibrate_predict_set():
    X, y = load_digits(return_X_y=True)
    for score in ["lac", "aps"]:
        scc = SplitConformalClassifier(LogisticRegression(max_iter=3000), alpha=0.1, score=score)
        scc.fit(X[:700], y[:700]).calibrate(X[700:1200], y[700:1200])
        sets = scc.predict_set(X[1200:])
        assert sets.shape == (len(X) - 1200, 10)
        assert set_coverage(y[1200:], sets) >= 0.85
        assert set_size(sets).mean() >= 0.9


def test_infinite_quantile_gives_whole_line():
    X, y = make_heteroscedastic_regression(30, rng=8)
    scr = SplitConformalRegressor(LinearRegression(), alpha=0.01).fit(X[:20], y[:20]).calibrate(X[20:], y[20:])
    assert scr.qhat_ == math.inf
    iv = scr.predict_interval(X[:3])
    assert np.all(iv[:, 0] == -np.inf) and np.all(iv[:, 1] == np.inf)
    assert interval_coverage(y[:3], iv) == 1.0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan"), float("inf")])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        conformal_quantile([0.1, 0.2], alpha)


def test_bad_scores():
    with pytest.raises(ValueError, match="empty"):
        conformal_quantile([], 0.1)
    with pytest.raises(ValueError, match="NaN"):
        conformal_quantile([0.1, np.nan], 0.1)
    with pytest.raises(ValueError, match="one-dimensional"):
        conformal_quantile(np.zeros((3, 2)), 0.1)
    with pytest.raises(TypeError, match="real numbers"):
        conformal_quantile(["a", "b"], 0.1)
    with pytest.raises(TypeError, match="real number"):
        conformal_quantile([0.1], "0.1")


def test_shape_mismatches_and_labels():
    with pytest.raises(ValueError, match="different numbers of samples"):
        absolute_residual_score([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="proba"):
        lac_score([[0.5, 0.6]], [0])
    with pytest.raises(ValueError, match="labels must lie"):
        lac_score([[0.5, 0.5]], [2])
    with pytest.raises(TypeError, match="integer class indices"):
        aps_score([[0.5, 0.5]], [0.0])
    X, y = make_heteroscedastic_regression(20, rng=9)
    with pytest.raises(ValueError, match="two-dimensional"):
        SplitConformalRegressor(LinearRegression()).fit(X.ravel(), y)
    scr = SplitConformalRegressor(LinearRegression()).fit(X, y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        scr.calibrate(X, y[:-1])


def test_unfitted_and_uncalibrated_estimators():
    X, y = make_heteroscedastic_regression(20, rng=10)
    with pytest.raises(ValueError, match="not fitted"):
        SplitConformalRegressor(LinearRegression()).calibrate(X, y)
    with pytest.raises(NotFittedError):
        SplitConformalRegressor(LinearRegression(), prefit=True).calibrate(X, y)
    with pytest.raises(ValueError, match="not calibrated"):
        SplitConformalRegressor(LinearRegression()).fit(X, y).predict_interval(X)
    with pytest.raises(ValueError, match="already fitted"):
        SplitConformalRegressor(LinearRegression().fit(X, y), prefit=True).fit(X, y)
    with pytest.raises(ValueError, match="score="):
        Xd, yd = load_digits(return_X_y=True)
        SplitConformalClassifier(LogisticRegression(), score="raps").fit(Xd[:50], yd[:50]).calibrate(Xd[50:99], yd[50:99])


@pytest.mark.slow
def test_full_conformal_matches_direct_definition_and_covers():
    """Full conformal with a mean-only model has a closed form check, and covers in Monte Carlo.

    150 repetitions at alpha = 0.2: SE = sqrt(0.16/150) = 0.033; we require >= 0.8 - 3 SE.
    """
    from sklearn.dummy import DummyRegressor

    rng = np.random.default_rng(11)
    grid = np.linspace(-6, 6, 241)
    X = np.zeros((19, 1))
    y = rng.standard_normal(19)
    lo, hi = full_conformal_interval(DummyRegressor(), X, y, [0.0], 0.2, grid)
    # direct definition on the grid
    k = conformal_rank(19, 0.2)
    kept = []
    for cand in grid:
        aug = np.append(y, cand)
        r = np.abs(aug - aug.mean())
        kept.append(r[-1] <= np.sort(r)[k - 1])
    kept = np.array(kept)
    assert lo == grid[kept][0] and hi == grid[kept][-1]
    hits = 0
    coarse = np.linspace(-6, 6, 81)
    for _ in range(150):
        y = rng.standard_normal(20)
        lo, hi = full_conformal_interval(DummyRegressor(), np.zeros((19, 1)), y[:19], [0.0], 0.2, coarse)
        hits += lo <= y[19] <= hi
    assert hits / 150 >= 0.8 - 3 * 0.033


def test_full_conformal_bad_grid():
    from sklearn.dummy import DummyRegressor

    with pytest.raises(ValueError, match="strictly increasing"):
        full_conformal_interval(DummyRegressor(), np.zeros((5, 1)), np.zeros(5), [0.0], 0.2, [1.0, 0.0])
    with pytest.raises(ValueError, match="features"):
        full_conformal_interval(DummyRegressor(), np.zeros((5, 1)), np.zeros(5), [0.0, 1.0], 0.2, [0.0, 1.0])


def test_score_errors_quote_no_label_or_count():
    """The scores of private records are computed in private paths (scale.model_scores,
    the private split classifier); a bad label must not be printed, nor the number of records."""
    from dpcp_tutorial import aps_score, lac_score

    proba = np.full((313, 2), 0.5)
    labels = np.zeros(313, dtype=int)
    labels[4] = 7345
    for score in (lac_score, aps_score):
        for y in (labels, labels[:-1], labels[:, None]):
            with pytest.raises(ValueError) as err:
                score(proba, y)
            assert "7345" not in str(err.value) and "313" not in str(err.value) and "312" not in str(err.value)


# --------------------------------------------------------------------------- bad inputs named

def test_thresholds_and_intervals_are_checked():
    proba = np.full((2, 3), 1 / 3)
    for fn in (lac_prediction_set, aps_prediction_set):
        assert fn(proba, math.inf).all() and fn(proba, 10**30).all()     # inf and huge: every label
        with pytest.raises(ValueError, match="qhat=-1.0 must be >= 0.0"):
            fn(proba, -1.0)
    assert interval_width([[-math.inf, 1.0], [0.0, 2.0]]).tolist() == [math.inf, 2.0]   # half-lines are intervals
    assert interval_coverage([0.5, 3.0], [[-math.inf, 1.0], [0.0, 2.0]]) == 0.5
    for bad in ([[2.0, 1.0]], [[math.inf, math.inf]], [[-math.inf, -math.inf]]):
        with pytest.raises(ValueError, match="lower <= upper"):
            interval_width(bad)
    with pytest.raises(ValueError, match="intervals is empty"):
        interval_width(np.empty((0, 2)))
    with pytest.raises(TypeError, match="intervals must hold real numbers"):
        interval_width(np.array([[0.0, 1j]]))
    with pytest.raises(ValueError, match="sets is empty"):
        set_size(np.empty((0, 3), dtype=bool))
    with pytest.raises(TypeError, match="score must be one of"):
        SplitConformalClassifier(LogisticRegression(), score=["lac"]).fit(np.zeros((4, 1)), [0, 1, 0, 1]) \
            .calibrate(np.zeros((4, 1)), [0, 1, 0, 1])


def test_full_conformal_refuses_unreliable_refits_once_and_checks_the_point():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = X @ np.array([1.0, -0.5]) + 0.1 * rng.normal(size=30)
    grid = np.linspace(-3, 3, 7)
    with pytest.raises(ValueError, match="x_new must be one-dimensional"):
        full_conformal_interval(Ridge(), X, y, X[:1], 0.2, grid)
    with pytest.raises(ValueError, match="x_new contains NaN"):
        full_conformal_interval(Ridge(), X, y, np.full(X.shape[1], np.nan), 0.2, grid)
    huge = X.copy()
    huge[0, 0] = 1e30                          # an ill-conditioned refit: LinAlgWarning in every refit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="numerically unreliable .*LinAlgWarning"):
            full_conformal_interval(Ridge(), huge, y, X[0], 0.2, grid)

    class Noisy(Ridge):                        # any other warning of a refit reaches the caller once
        def fit(self, X, y):
            warnings.warn("a deprecation of this estimator", FutureWarning)
            return super().fit(X, y)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        full_conformal_interval(Noisy(), X, y, X[0], 0.2, grid)
    assert [str(w.message) for w in caught] == ["a deprecation of this estimator"]


def test_conformal_quantile_on_large_arrays_is_the_partition_value():
    """Above the direct-partition size the quantile is selected inside a sampled bracket; the value is exactly
    np.partition's for continuous, tied, sorted, reversed and constant scores, and for an order that puts the
    strided sample far from the rank (the whole array is then partitioned)."""
    from dpcp_tutorial.conformal import _SELECT_DIRECT, _kth_smallest

    rng = np.random.default_rng(3)
    n = _SELECT_DIRECT + 4321
    continuous = rng.exponential(size=n)
    adversarial = np.full(n, 5.0)
    adversarial[::n >> 13] = 0.0                         # exactly the sampled positions are the smallest
    for values in (continuous, np.round(continuous * 2) / 2, np.sort(continuous), np.sort(continuous)[::-1],
                   np.zeros(n), rng.integers(0, 3, n).astype(float), adversarial):
        for k in (1, 2, n // 2, int(0.9 * n), n - 1, n, int(rng.integers(1, n + 1))):
            assert _kth_smallest(values, k) == np.partition(values, k - 1)[k - 1]
    for alpha in (0.05, 0.1, 0.5):
        k = conformal_rank(n, alpha)
        assert conformal_quantile(continuous, alpha) == np.partition(continuous, k - 1)[k - 1]
