"""Tests of Differential CP and DPCP (chapters 5 and 6)."""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression

from dpcp_tutorial import (
    DPCPClassifier,
    DPCPRegressor,
    DPLogisticRegression,
    DPRegressogram,
    DPRidgeRegression,
    DPSGDRegressor,
    check_dp_trainer,
    differential_cp_coverage_floor,
    differential_cp_interval,
    differential_cp_level,
    differential_cp_quantile,
    differential_cp_set,
    dpcp_interval,
    dpcp_levels,
    private_quantile_level,
    private_quantile_privacy_loss,
    dpcp_quantile,
    dpcp_set,
    interval_coverage,
    make_heteroscedastic_regression,
    normalized_residual_score,
    private_quantile,
    quantile_edges,
    set_coverage,
)
from dpcp_tutorial.accounting import ReleaseWarning
from dpcp_tutorial.experiments.dpcp_compare import (
    SYNTHETIC,
    make_synthetic,
    pps_tuning,
    regression_repetition,
)

ALPHA, DELTA = 0.1, 1e-5


# --------------------------------------------------------------------------- levels and feasibility


@pytest.mark.parametrize("eps1, alpha1", [(0.1, 0.09047), (0.25, 0.07787), (0.5, 0.06065), (1, 0.03678),
                                          (2, 0.01353), (4, 0.00183), (8, 0.00003)])
def test_level_inflation_table(eps1, alpha1):
    """Section 9 of the reference note (alpha = 0.1, delta = 1e-5), five decimals."""
    assert differential_cp_level(ALPHA, eps1, DELTA) == pytest.approx(alpha1, abs=5e-6)


@pytest.mark.parametrize("eps1, eps2, n_min", [(0.1, 0.9, 25), (0.25, 0.75, 35), (1, 1, 55), (0.5, 0.5, 66),
                                               (2, 1, 148), (0.8, 0.2, 223), (4, 1, 1093)])
def test_feasibility_table_and_error_states_smallest_n(eps1, eps2, n_min):
    """The write-up's feasibility (variant="original"): alpha1 > 2/(n eps2)."""
    dpcp_levels(n_min, ALPHA, eps1, eps2, DELTA, variant="original")
    with pytest.raises(ValueError, match=f"at least n={n_min} points"):
        dpcp_levels(n_min - 1, ALPHA, eps1, eps2, DELTA, variant="original")


@pytest.mark.parametrize("eps1, eps2", [(0.1, 0.9), (0.3, 0.7), (1, 1), (0.5, 0.5)])
def test_tight_feasibility_states_smallest_n(eps1, eps2):
    """The default (tight) quantile needs more points; the message names the smallest n, which works."""
    with pytest.raises(ValueError, match="at least N=") as info:
        dpcp_levels(20, ALPHA, eps1, eps2, DELTA)
    n_min = int(str(info.value).split("at least N=")[1].split(" ")[0])
    alpha1, alpha0 = dpcp_levels(n_min, ALPHA, eps1, eps2, DELTA)
    assert 0 < alpha0 < alpha1
    with pytest.raises(ValueError):
        dpcp_levels(n_min - 1, ALPHA, eps1, eps2, DELTA)


def test_infeasible_error_states_epsilon2_and_epsilon1_that_work():
    n, eps1, eps2 = 1000, 4.0, 1.0          # the note's example: alpha0 = -0.00017
    with pytest.raises(ValueError) as info:
        dpcp_levels(n, ALPHA, eps1, eps2, DELTA, variant="original")
    message = str(info.value)
    eps2_min = float(message.split("epsilon2 above ")[1].split(",")[0])
    eps1_max = float(message.split("epsilon1 below ")[1])
    alpha1, alpha0 = dpcp_levels(n, ALPHA, eps1, eps2_min * 1.001, DELTA, variant="original")
    assert alpha0 > 0 and alpha1 == pytest.approx(math.exp(-4) * (ALPHA - DELTA))
    assert dpcp_levels(n, ALPHA, eps1_max * 0.999, eps2, DELTA, variant="original")[1] > 0
    assert alpha1 - 2 / (n * eps2) == pytest.approx(-0.00017, abs=5e-6)


def test_alpha_not_above_delta_is_refused():
    with pytest.raises(ValueError, match="must exceed delta"):
        differential_cp_level(0.1, 1.0, 0.1)
    with pytest.raises(ValueError, match="must exceed delta"):
        dpcp_levels(1000, 0.05, 0.5, 0.5, 0.2)


def test_levels_and_floor_formulas():
    alpha1, alpha0 = dpcp_levels(2000, 0.1, 0.5, 1.5, 1e-6, variant="original")
    assert alpha1 == pytest.approx(math.exp(-0.5) * (0.1 - 1e-6))
    assert alpha0 == pytest.approx(alpha1 - 2 / (2000 * 1.5))
    assert dpcp_levels(2000, 0.1, 0.5, 1.5, 1e-6) == (alpha1, private_quantile_level(alpha1, 2000, 1.5, 1000))
    assert differential_cp_coverage_floor(0.1, 1.0, 1e-6) == pytest.approx(1 - math.e * 0.1 - 1e-6)
    # the shifted level gives exactly alpha back in the miscoverage bound e^eps alpha1 + delta
    assert math.exp(1.0) * differential_cp_level(0.1, 1.0, 1e-6) + 1e-6 == pytest.approx(0.1)


def test_differential_cp_quantile_uses_the_n_plus_one_rank():
    scores = np.arange(1, 101, dtype=float)                   # 1..100
    alpha1 = differential_cp_level(0.1, 0.5, 0.0)             # 0.0607: rank ceil(101 * 0.9393) = 95
    assert differential_cp_quantile(scores, 0.1, 0.5, 0.0) == 95.0
    assert differential_cp_quantile(scores, 0.1, 0.5, 0.0, corrected=False) == 91.0
    assert math.isinf(differential_cp_quantile(scores[:10], 0.1, 2.0, 0.0))   # rank 11 > 10
    assert alpha1 == pytest.approx(math.exp(-0.5) * 0.1)


def test_dpcp_quantile_is_algorithm1_at_alpha1():
    scores = np.random.default_rng(0).uniform(size=3000)
    q = dpcp_quantile(scores, ALPHA, 0.5, 1.0, DELTA, bins=200, rng=3)
    assert q in quantile_edges(200)
    assert 1 - differential_cp_level(ALPHA, 0.5, DELTA) - 0.02 < q < 1.0


# --------------------------------------------------------------------------- the trainer contract (D8)


class _ReplaceOneTrainer(DPRidgeRegression):
    relation = "replace-one"


class _OldSpellingTrainer(LinearRegression):
    neighbouring = "replace-one"          # the attribute's older name is still read


def test_trainer_contract_refusals():
    with pytest.raises(ValueError, match="relation=None.*add/remove"):
        check_dp_trainer(LinearRegression())
    with pytest.raises(ValueError, match="relation='replace-one'.*add/remove"), \
            pytest.warns(FutureWarning, match="relation"):
        check_dp_trainer(_OldSpellingTrainer())
    with pytest.raises(ValueError, match="add/remove"):
        check_dp_trainer(_ReplaceOneTrainer(x_bound=1.0, y_bound=1.0))
    with pytest.raises(TypeError, match="scikit-learn estimator"):
        check_dp_trainer(object())
    with pytest.raises(ValueError, match="expected_batch_size"):
        check_dp_trainer(DPSGDRegressor(epsilon=1.0, x_bound=1.0, y_bound=1.0))
    X, y = make_synthetic(300, 0)
    with pytest.raises(ValueError, match="error D8"):
        DPCPRegressor(_ReplaceOneTrainer(x_bound=1.0, y_bound=1.0), bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="add/remove"):
        differential_cp_interval(LinearRegression(), X, y, X)
    for trainer in [DPRidgeRegression(x_bound=1.0, y_bound=1.0), DPLogisticRegression(x_bound=1.0), DPRegressogram(low=-3.0, high=3.0, y_bound=3.0),
                    DPSGDRegressor(epsilon=1.0, expected_batch_size=10.0, x_bound=1.0, y_bound=1.0)]:
        check_dp_trainer(trainer)


class _CountingTrainer(DPRegressogram):
    fits = 0

    def __init__(self, epsilon=1.0, delta=0.0, bins=20, *, low=-3.0, high=3.0, y_bound=3.0, rng=None):
        super().__init__(epsilon, delta, bins, low=low, high=high, y_bound=y_bound, rng=rng)

    def fit(self, X, y):
        type(self).fits += 1
        return super().fit(X, y)


def test_infeasible_setting_raises_before_training():
    X, y = make_heteroscedastic_regression(100, rng=0)
    with pytest.raises(ValueError, match="infeasible"):
        DPCPRegressor(_CountingTrainer(), epsilon=2.0, training_share=0.95, bound=3.0).fit(X, y)
    assert _CountingTrainer.fits == 0


def test_public_n_makes_feasibility_independent_of_the_data_size():
    """With a public n the data's own size is never used: neighbours of sizes 38 and 39 both release."""
    X, y = make_heteroscedastic_regression(40, rng=0)
    kw = dict(epsilon=1.0, training_share=0.3, bound=5.0, bins=50, rng=0)
    with pytest.raises(ValueError, match="infeasible"):       # n = len(X) = 38 is public here, and too small
        DPCPRegressor(DPRidgeRegression(x_bound=1.0, y_bound=1.0), **kw).fit(X[:38], y[:38])
    for m in (37, 38, 39, 40):                                 # n public and fixed: same behaviour for every size
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseWarning)        # padded to 1000 with the worst score: qhat = 1
            model = DPCPRegressor(DPRidgeRegression(x_bound=1.0, y_bound=1.0), n=1000, **kw).fit(X[:m], y[:m])
        assert 0 < model.qhat_ <= 1 and model.n_ == 1000 and not hasattr(model, "n_samples_")
    with pytest.raises(ValueError, match="infeasible"):        # a too small public n fails for every data set
        DPCPRegressor(DPRidgeRegression(x_bound=1.0, y_bound=1.0), n=20, **kw).fit(X, y)
    # dpcp_quantile: the public n replaces the number of scores
    s = np.linspace(0, 1, 30)
    assert dpcp_quantile(s, 0.1, 0.3, 0.7, 1e-6, bins=20, rng=0, n=1000) == 1.0    # 970 pads of 1
    with pytest.raises(ValueError, match="infeasible"):
        dpcp_quantile(s, 0.1, 0.3, 0.7, 1e-6, bins=20, rng=0)


def test_dpcp_levels_and_floor_extremes_are_finite_or_clear():
    with pytest.raises(ValueError, match="infeasible"):
        dpcp_levels(100, 0.1, 746.0, 1.0, 1e-6)                 # alpha1 underflows to 0: no ZeroDivisionError
    with pytest.raises(ValueError, match="infeasible"):
        dpcp_quantile(np.linspace(0, 1, 50), 0.1, 800.0, 1.0, 1e-6)
    assert differential_cp_coverage_floor(0.1, 1e12, 0.0) == -np.inf
    assert differential_cp_coverage_floor(0.1, 1.0, 0.0) == pytest.approx(1 - np.e * 0.1)


def test_bad_estimator_parameters():
    X, y = make_heteroscedastic_regression(500, rng=0)
    with pytest.raises(ValueError, match="training_share=1.0 must be < 1"):
        DPCPRegressor(DPRegressogram(low=-3.0, high=3.0, y_bound=3.0), epsilon=1.0, training_share=1.0, bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="never the data's own maximum"):
        DPCPRegressor(DPRegressogram(low=-3.0, high=3.0, y_bound=3.0), bound=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        DPCPRegressor(DPRegressogram(low=-3.0, high=3.0, y_bound=3.0), bound=1.0).fit(X, y[:-1])
    with pytest.raises(ValueError, match="end exactly at 1"):
        DPCPRegressor(DPRegressogram(low=-3.0, high=3.0, y_bound=3.0), bins=[0.2, 0.5], bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="score="):
        DPCPClassifier(DPLogisticRegression(x_bound=1.0), score="raps", classes=[0, 1]).fit(X, (y > 0).astype(int))
    with pytest.raises(ValueError, match="public label set"):       # never read from the data
        DPCPClassifier(DPLogisticRegression(x_bound=1.0)).fit(X, (y > 0).astype(int))
    with pytest.raises(Exception, match="not fitted"):
        DPCPRegressor(DPRegressogram(low=-3.0, high=3.0, y_bound=3.0), bound=1.0).predict_interval(X)
    for method in ("predict", "predict_proba", "predict_set"):
        with pytest.raises(NotFittedError):
            getattr(DPCPClassifier(DPLogisticRegression(x_bound=1.0), classes=[0, 1]), method)(X)


# --------------------------------------------------------------------------- estimators: ledger and attributes


def test_regressor_ledger_levels_and_attributes():
    X, y = make_synthetic(2000, 0)
    model = DPCPRegressor(DPRidgeRegression(l2=10.0, y_bound=1.5, x_bound=1.0), alpha=ALPHA, epsilon=2.0, training_share=0.3,
                          delta=DELTA, bound=2.0, bins=500, rng=1).fit(X, y)
    acc = model.privacy_
    assert [p.part for p in acc.parts] == ["all", "all"] and acc.relation == "add/remove"
    training, quantile = acc.parts
    assert training.add_remove == (pytest.approx(0.6), DELTA) and "training_share 0.3" in training.label
    assert quantile.replace_one == (pytest.approx(1.4), 0.0)
    a0 = private_quantile_level(model.alpha1_, 2000, 1.4, 500)
    assert quantile.add_remove[0] == pytest.approx(max(private_quantile_privacy_loss(
        model.alpha1_, k, 1.4, 500, relation="add/remove", public_n=False) for k in (1999, 2000)))
    assert quantile.add_remove[0] > 1.4 * max(a0, 1 - a0) - 1e-9            # n=None: recomputed level
    assert acc.add_remove[0] == pytest.approx(0.6 + quantile.add_remove[0]) and acc.add_remove[1] == DELTA
    assert acc.replace_one[0] == pytest.approx(1.2 + 1.4)                    # group privacy + the exact 1.4
    assert model.epsilon1_ + model.epsilon2_ == pytest.approx(2.0)
    assert model.estimator_.get_params()["epsilon"] == pytest.approx(0.6)
    assert model.estimator_.privacy_.add_remove == (pytest.approx(0.6), DELTA)
    assert (model.alpha1_, model.alpha0_) == dpcp_levels(2000, ALPHA, 0.6, model.epsilon2_, DELTA, 500)
    assert model.qhat_ in quantile_edges(500)
    intervals = model.predict_interval(X[:10])
    np.testing.assert_allclose(intervals[:, 1] - intervals[:, 0], 2 * 2.0 * model.qhat_)
    np.testing.assert_allclose(intervals.mean(axis=1), model.predict(X[:10]))


def test_same_seed_same_release_and_trainer_is_reseeded():
    X, y = make_synthetic(1000, 0)
    make = lambda seed: DPCPRegressor(DPRidgeRegression(l2=10.0, y_bound=1.5, rng=0, x_bound=1.0), epsilon=2.0, training_share=0.25,
                                      bound=2.0, rng=seed).fit(X, y)
    a, b, c = make(5), make(5), make(6)
    np.testing.assert_array_equal(a.predict_interval(X[:20]), b.predict_interval(X[:20]))
    assert not np.array_equal(a.estimator_.coef_, c.estimator_.coef_)   # the DP noise follows DPCP's rng


def test_top_edge_gives_the_whole_line_and_all_classes():
    X, y = make_synthetic(400, 0)
    # a bound far below the residuals clips every score to 1, so Algorithm 1 releases the top edge
    with pytest.warns(ReleaseWarning, match="qhat = 1"):
        model = DPCPRegressor(DPRidgeRegression(y_bound=1.5, x_bound=1.0), epsilon=2.0, training_share=0.25,
                              bound=1e-3, bins=50, rng=0).fit(X, y)
    assert model.qhat_ == 1.0 and np.isinf(model.predict_interval(X[:5])).all()
    with pytest.warns(ReleaseWarning):
        assert np.isinf(dpcp_interval(DPRidgeRegression(y_bound=1.5, x_bound=1.0), X, y, X[:3], epsilon=2.0,
                                      training_share=0.25, bound=1e-3, bins=50, rng=0)).all()


def test_classifier_ledger_labels_and_sets():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 2)) * 0.4
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=1500) > 0, "b", "a")
    model = DPCPClassifier(DPLogisticRegression(l2=5.0, x_bound=1.0), epsilon=3.0, training_share=1 / 3, delta=DELTA, rng=0,
                           classes=["a", "b"]).fit(X, y)
    assert model.classes_.tolist() == ["a", "b"]
    assert model.epsilon1_ == pytest.approx(1.0) and model.privacy_.add_remove[1] == DELTA
    assert model.privacy_.add_remove[0] == pytest.approx(1.0 + model.privacy_.parts[1].add_remove[0])
    assert "classes = ['a', 'b']" in model.privacy_.public
    sets = model.predict_set(X[:50])
    assert sets.shape == (50, 2) and sets.dtype == bool
    np.testing.assert_array_equal(sets, (1 - model.predict_proba(X[:50])) <= model.qhat_)
    np.testing.assert_array_equal(dpcp_set(DPLogisticRegression(l2=5.0, x_bound=1.0), X, y, X[:50], epsilon=3.0, training_share=1 / 3,
                                           delta=DELTA, rng=0, classes=["a", "b"]), sets)
    assert set(model.predict(X[:50])) <= {"a", "b"}


# --------------------------------------------------------------------------- DPRegressogram: exact privacy


def _regressogram_log_density(model, sums, counts):
    """Log-density of the released (noisy sums, noisy counts) if the true statistics were (sums, counts)."""
    return -(np.abs(model.sums_ - sums).sum() / model.sum_scale_ + np.abs(model.counts_ - counts).sum()
             / model.count_scale_)


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 2.0, 1e3])
def test_regressogram_is_epsilon_dp_under_add_remove(epsilon):
    rng = np.random.default_rng(1)
    X, y = make_heteroscedastic_regression(200, rng=rng)
    y[:3] = [50.0, -50.0, 3.0]                                   # clipped outliers
    trainer = DPRegressogram(epsilon=epsilon, bins=8, y_bound=3.0, low=-3.0, high=3.0)

    def statistics(Xd, yd):
        bins = trainer._bin(Xd)
        return (np.bincount(bins, weights=np.clip(yd, -3, 3), minlength=8),
                np.bincount(bins, minlength=8).astype(float))

    worst = 0.0
    for seed in range(20):
        model = DPRegressogram(epsilon=epsilon, bins=8, y_bound=3.0, rng=seed, low=-3.0, high=3.0).fit(X, y)
        base = _regressogram_log_density(model, *statistics(X, y))
        for i in range(5):
            others = [(np.delete(X, i, axis=0), np.delete(y, i)),
                      (np.vstack([X, [[rng.uniform(-4, 4)]]]), np.append(y, rng.choice([-40.0, 0.1, 40.0])))]
            for Xd, yd in others:
                worst = max(worst, abs(base - _regressogram_log_density(model, *statistics(Xd, yd))))
    assert worst <= epsilon + 1e-9


def test_regressogram_noise_has_stated_scale():
    """Laplace(b) has variance 2 b^2; 4000 fits x 5 bins, relative SE of the variance about 2.4 %, tolerance 15 %."""
    X, y = make_heteroscedastic_regression(300, rng=0)
    clean = DPRegressogram(epsilon=1e9, bins=5, rng=0, low=-3.0, high=3.0, y_bound=3.0).fit(X, y)
    rng = np.random.default_rng(1)
    noise = np.array([DPRegressogram(epsilon=2.0, bins=5, rng=rng, low=-3.0, high=3.0, y_bound=3.0).fit(X, y).sums_ - clean.sums_
                      for _ in range(4000)])
    assert np.var(noise) == pytest.approx(2 * (2 * 3.0 / 2.0) ** 2, rel=0.15)
    assert clean.privacy_.add_remove == (1e9, 0.0) and clean.privacy_.replace_one == (2e9, 0.0)


# --------------------------------------------------------------------------- Monte Carlo coverage


def _coverage_check(covered: int, reps: int) -> tuple[float, float]:
    coverage = covered / reps
    return coverage, 1 - ALPHA - 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_differential_cp_coverage_and_uncorrected_undercoverage():
    """DP regressogram with 50 bins (about 4 points per bin: in-sample residuals are too small), n = 200, eps = 2.

    R = 2000 repetitions with one test point each; binomial SE = sqrt(0.09/2000) = 0.0067.
    Corrected (alpha1): coverage >= 0.9 - 3 SE. Uncorrected (alpha): coverage < 0.9 - 3 SE, i.e. the
    correction is needed here (the floor 1 - e^eps alpha - delta = 0.26 is far below).
    """
    reps, n, eps = 2000, 200, 2.0
    rng = np.random.default_rng(0)
    corrected = uncorrected = 0
    for _ in range(reps):
        X, y = make_heteroscedastic_regression(n + 1, rng=rng)
        model = DPRegressogram(epsilon=eps, bins=50, rng=rng, low=-3.0, high=3.0, y_bound=3.0).fit(X[:n], y[:n])
        scores = np.abs(y[:n] - model.predict(X[:n]))
        test = abs(y[n] - model.predict(X[n:])[0])
        corrected += test <= differential_cp_quantile(scores, ALPHA, eps, DELTA)
        uncorrected += test <= differential_cp_quantile(scores, ALPHA, eps, DELTA, corrected=False)
    coverage, floor = _coverage_check(corrected, reps)
    assert coverage >= floor
    coverage, floor = _coverage_check(uncorrected, reps)
    assert coverage < floor
    assert coverage >= differential_cp_coverage_floor(ALPHA, eps, DELTA)


@pytest.mark.slow
def test_differential_cp_interval_and_set_coverage():
    """Through the public functions: regression (regressogram, n = 150, eps = 1) and classification
    (DP logistic, n = 300, eps = 1); 600 repetitions each, SE = 0.012, tolerance 3 SE."""
    reps = 600
    rng = np.random.default_rng(1)
    reg = cls = 0
    for _ in range(reps):
        X, y = make_heteroscedastic_regression(151, rng=rng)
        iv = differential_cp_interval(DPRegressogram(epsilon=1.0, bins=10, low=-3.0, high=3.0, y_bound=3.0), X[:150], y[:150], X[150:],
                                      alpha=ALPHA, rng=rng)
        reg += interval_coverage(y[150:], iv)
        Xc = rng.normal(size=(301, 2)) * 0.5
        yc = (Xc[:, 0] + 0.5 * rng.normal(size=301) > 0).astype(int)
        sets = differential_cp_set(DPLogisticRegression(epsilon=1.0, delta=1e-6, l2=2.0, classes=[0, 1], x_bound=1.0),
                                   Xc[:300], yc[:300], Xc[300:], alpha=ALPHA, rng=rng)
        cls += set_coverage(yc[300:], sets)
    for covered in (reg, cls):
        coverage, floor = _coverage_check(covered, reps)
        assert coverage >= floor


@pytest.mark.slow
@pytest.mark.parametrize("n, eps, eps1, bins", [(300, 2.0, 0.5, 1000), (500, 1.0, 0.3, 100), (2000, 4.0, 0.2, 1000)])
@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_dpcp_regression_coverage_regressogram(n, eps, eps1, bins):
    """DPCP with the DP regressogram; R = 1000 repetitions, one test point each, SE = 0.0095, tolerance 3 SE."""
    reps = 1000
    rng = np.random.default_rng(n)
    covered = 0
    for _ in range(reps):
        X, y = make_heteroscedastic_regression(n + 1, rng=rng)
        model = DPCPRegressor(DPRegressogram(bins=10, low=-3.0, high=3.0, y_bound=3.0), alpha=ALPHA, epsilon=eps, training_share=eps1 / eps, delta=DELTA,
                              bound=4.0, bins=bins, rng=rng).fit(X[:n], y[:n])
        covered += interval_coverage(y[n:], model.predict_interval(X[n:]))
    coverage, floor = _coverage_check(covered, reps)
    assert coverage >= floor


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_dpcp_regression_coverage_dp_ridge():
    """DPCP with DP ridge on the chapter-6 synthetic data, n = 400, eps = 1 (eps1 = 0.3); 500 repetitions,
    SE = 0.013, tolerance 3 SE."""
    reps, n = 500, 400
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(reps):
        X, y = make_synthetic(n + 1, rng)
        model = DPCPRegressor(DPRidgeRegression(l2=10.0, y_bound=1.5, x_bound=1.0), alpha=ALPHA, epsilon=1.0, training_share=0.3,
                              delta=DELTA, bound=2.0, rng=rng).fit(X[:n], y[:n])
        covered += interval_coverage(y[n:], model.predict_interval(X[n:]))
    coverage, floor = _coverage_check(covered, reps)
    assert coverage >= floor


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_dpcp_classification_coverage():
    """DPCP with DP logistic regression, two overlapping classes, n = 400, eps = 2 (eps1 = 0.5);
    600 repetitions, SE = 0.012, tolerance 3 SE."""
    reps, n = 600, 400
    rng = np.random.default_rng(8)
    covered = 0
    for _ in range(reps):
        X = rng.normal(size=(n + 1, 2)) * 0.5
        y = (X[:, 0] - X[:, 1] + 0.4 * rng.normal(size=n + 1) > 0).astype(int)
        model = DPCPClassifier(DPLogisticRegression(l2=2.0, classes=[0, 1], x_bound=1.0), alpha=ALPHA, epsilon=2.0,
                               training_share=0.25, delta=DELTA, rng=rng).fit(X[:n], y[:n])
        covered += set_coverage(y[n:], model.predict_set(X[n:]))
    coverage, floor = _coverage_check(covered, reps)
    assert coverage >= floor


# --------------------------------------------------------------------------- where DPCP wins and where it does not


def _paired_width_gap(n, eps, eps1, reps, seed, dpcp_variant="tight"):
    """Mean and SE over repetitions of (private split width - DPCP width) on the same data."""
    rng = np.random.default_rng(seed)
    pps = pps_tuning(n // 2, eps)
    gaps = []
    for _ in range(reps):
        X, y = make_synthetic(n, rng)
        X_test, y_test = make_synthetic(1000, rng)
        out = regression_repetition(X, y, X_test, y_test, epsilon=eps, epsilon1=eps1, config=SYNTHETIC, pps=pps,
                                    rng=rng, methods=("private_split", "dpcp"), dpcp_variant=dpcp_variant)
        gaps.append(out["private_split"]["width"] - out["dpcp"]["width"])
    gaps = np.array(gaps)
    return gaps.mean(), gaps.std(ddof=1) / math.sqrt(reps)


def test_dpcp_is_narrower_at_small_n_and_epsilon():
    """n = 500, eps1 = 0.2, eps2 = 0.3 (eps = 0.5): private split calibrates on 250 points, where its
    log(m)/(n eps) correction is huge. 40 paired repetitions; the gap exceeds 3 SE, with the tight quantile (the
    default, coverage proven) and with the write-up's (variant="original", no coverage guarantee)."""
    for variant in ("tight", "original"):
        gap, se = _paired_width_gap(500, 0.5, 0.2, 40, seed=1, dpcp_variant=variant)
        assert gap > 3 * se


def test_dpcp_is_wider_at_large_n_and_epsilon():
    """n = 5000, eps1 = 1, eps2 = 3 (eps = 4): splitting costs little, DPCP's level e^-1 (alpha - delta) costs a lot.
    40 paired repetitions; private split is narrower by more than 3 SE."""
    gap, se = _paired_width_gap(5000, 4.0, 1.0, 40, seed=2)
    assert gap < -3 * se


# --------------------------------------------------------------------------- the budget split


class _OwnBudgetTrainer(DPRegressogram):
    """A DP trainer without an epsilon parameter: its budget is fixed by its own settings and reported."""

    def __init__(self, noise_level=2.0, *, low=-3.0, high=3.0, y_bound=3.0, rng=None):
        self.noise_level = noise_level
        super().__init__(1.0 / noise_level, 0.0, 10, low=low, high=high, y_bound=y_bound, rng=rng)

    def get_params(self, deep=True):
        params = super().get_params(deep)
        return {k: v for k, v in params.items() if k not in ("epsilon", "delta", "bins")}

    def set_params(self, **params):
        if "noise_level" in params:
            self.epsilon = 1.0 / params["noise_level"]
        return super().set_params(**params)


def test_small_total_budget_works_and_the_share_is_a_fraction():
    """DPCPRegressor(epsilon=0.2) works: epsilon1 = 0.3 * 0.2 on a clone of the trainer."""
    X, y = make_synthetic(4000, 0)
    trainer = DPRidgeRegression(epsilon=5.0, l2=10.0, y_bound=1.5, x_bound=1.0)
    model = DPCPRegressor(trainer, epsilon=0.2, bound=2.0, n=4000, rng=0).fit(X, y)
    assert model.epsilon1_ == pytest.approx(0.06) and model.epsilon2_ == pytest.approx(0.14)
    assert model.estimator_.epsilon == pytest.approx(0.06) and trainer.epsilon == 5.0   # a clone, not the original
    a0 = model.alpha0_
    assert 0 < a0 < 0.1
    assert model.privacy_.add_remove[0] == pytest.approx(0.2)   # public n: subsample-or-pad, replace-one at size n
    assert model.privacy_.add_remove[0] <= 0.2
    assert "n = 4000" in model.privacy_.public[0]


def test_trainer_without_an_epsilon_parameter_needs_its_own_report():
    X, y = make_synthetic(3000, 0)
    with pytest.raises(TypeError, match="has no `epsilon` parameter.*training_share=None"):
        DPCPRegressor(_OwnBudgetTrainer(), bound=2.0).fit(X[:, :1], y)
    model = DPCPRegressor(_OwnBudgetTrainer(noise_level=4.0), epsilon=1.0, training_share=None, bound=2.0,
                          rng=0).fit(X[:, :1], y)
    assert model.epsilon1_ == pytest.approx(0.25) and model.epsilon2_ == pytest.approx(0.75)
    assert "the trainer's own epsilon1 = 0.25" in model.privacy_.parts[0].label
    with pytest.raises(ValueError, match="leaves nothing"):
        DPCPRegressor(_OwnBudgetTrainer(noise_level=0.5), epsilon=1.0, training_share=None, bound=2.0).fit(X[:, :1], y)

    class Silent(_OwnBudgetTrainer):
        def fit(self, X, y):
            super().fit(X, y)
            del self.privacy_
            return self

    with pytest.raises(TypeError, match="reports no add/remove privacy_"):
        DPCPRegressor(Silent(), training_share=None, bound=2.0).fit(X[:, :1], y)


@pytest.mark.parametrize("share", [0.0, 1.0, -0.1, "0.3", True])
def test_bad_training_share(share):
    X, y = make_synthetic(500, 0)
    with pytest.raises((ValueError, TypeError), match="training_share"):
        DPCPRegressor(DPRidgeRegression(x_bound=1.0, y_bound=1.5), training_share=share, bound=2.0).fit(X, y)


def test_bound_is_required():
    with pytest.raises(TypeError, match="needs the public bound"):
        DPCPRegressor(DPRidgeRegression(x_bound=1.0, y_bound=1.5))
    with pytest.raises(TypeError, match="needs the public low"):
        DPRegressogram()


# ---------------------------------------------------------------------------
# OpenDP's exact sampler and errors named by the caller's parameter
# ---------------------------------------------------------------------------

def test_dpcp_quantile_with_the_opendp_sampler_follows_its_law_and_refuses_a_seed():
    from dpcp_tutorial import private_quantile_probabilities

    scores = np.random.default_rng(40).uniform(size=300)
    alpha1, _ = dpcp_levels(300, 0.2, 0.3, 2.0, 1e-6, bins=5)
    edges, law = private_quantile_probabilities(scores, alpha1, 2.0, bins=5, sampler="opendp")
    draws = np.array([dpcp_quantile(scores, 0.2, 0.3, 2.0, 1e-6, bins=5, sampler="opendp") for _ in range(2000)])
    counts = np.array([np.sum(np.isclose(draws, e)) for e in edges])
    assert counts.sum() == draws.size
    se = np.sqrt(draws.size * law * (1 - law))
    assert np.all(np.abs(counts - draws.size * law) <= 5 * se + 1)
    with pytest.raises(ValueError, match="cannot be seeded; pass rng=None"):
        dpcp_quantile(scores, 0.2, 0.3, 2.0, 1e-6, bins=5, rng=1, sampler="opendp")


def test_dpcp_estimators_forward_the_sampler():
    rng = np.random.default_rng(41)
    X = rng.uniform(-1, 1, size=(3000, 1))
    y = X[:, 0] + 0.3 * rng.standard_normal(3000)
    trainer = DPRidgeRegression(l2=10.0, x_bound=1.0, y_bound=2.0)
    model = DPCPRegressor(trainer, epsilon=2.0, bound=2.0, n=3000, sampler="opendp").fit(X, y)
    assert 0.0 < model.qhat_ < 1.0
    assert model.predict_interval(X[:3]).shape == (3, 2)
    with pytest.raises(ValueError, match="cannot be seeded"):
        DPCPRegressor(trainer, epsilon=2.0, bound=2.0, n=3000, sampler="opendp", rng=0).fit(X, y)
    with pytest.raises(ValueError, match="sampler"):
        dpcp_interval(trainer, X, y, X[:2], epsilon=2.0, bound=2.0, sampler="hardened")


def test_dpcp_errors_name_the_callers_parameter():
    rng = np.random.default_rng(42)
    X = rng.uniform(-1, 1, size=(500, 1))
    y = X[:, 0] + 0.3 * rng.standard_normal(500)
    trainer = DPRidgeRegression(l2=10.0, x_bound=1.0, y_bound=2.0)
    with pytest.raises(ValueError, match=r"^epsilon=1e\+30 with training_share=0.3 .*too large"):
        DPCPRegressor(trainer, epsilon=1e30, bound=2.0, n=500).fit(X, y)
    with pytest.raises(ValueError, match="epsilon2=1e-300"):
        dpcp_levels(2000, 0.1, 0.3, 1e-300, 1e-6, bins=50)
    with pytest.raises(ValueError, match="epsilon=800 is too large"):
        differential_cp_level(0.1, 800.0, 1e-6)
    with pytest.raises(TypeError, match="got the class DPRidgeRegression"):
        check_dp_trainer(DPRidgeRegression)
    with pytest.raises(ValueError, match="X_test has 2 features"):
        dpcp_interval(trainer, X, y, np.zeros((2, 2)), epsilon=2.0, bound=2.0)
    # NaN test features go to the model, which decides (the package's DP trainers refuse them)
    with pytest.raises(ValueError, match="X contains NaN"):
        dpcp_interval(trainer, X, y, np.full((2, 1), np.nan), epsilon=2.0, bound=2.0, n=500)
    with pytest.raises(TypeError, match="score must be one of"):
        DPCPClassifier(DPLogisticRegression(x_bound=1.0), score=["lac"], classes=[0, 1]).fit(X, (y > 0).astype(int))


def test_public_n_means_exactly_n_scores():
    """DPCP with a public n runs the private quantile on exactly n scores (padded with 1 here: 100 rows, n = 300),
    stores the public n, not the row count, and reports epsilon under both relations."""
    X, y = make_heteroscedastic_regression(100, rng=1)
    trainer = DPRidgeRegression(x_bound=1.0, y_bound=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseWarning)
        model = DPCPRegressor(trainer, epsilon=8.0, bound=5.0, n=300, bins=100, rng=5).fit(X, y)
    gen = np.random.default_rng(5)
    gen.integers(2**63)                                    # the trainer's seed
    scores = normalized_residual_score(y, model.estimator_.predict(X), 5.0)
    expected = private_quantile(np.r_[scores, np.ones(200)], model.alpha1_, model.epsilon2_, bins=100, n=300,
                                rng=gen)
    assert model.qhat_ == expected and model.n_ == 300 and not hasattr(model, "n_samples_")
    assert model.privacy_.add_remove[0] == pytest.approx(8.0)
    assert any("subsampled or padded" in p for p in model.privacy_.public)


def test_regressogram_n_bins_is_a_deprecated_alias_of_bins():
    from sklearn.base import clone

    X, y = make_heteroscedastic_regression(200, rng=0)
    bounds = dict(low=-3.0, high=3.0, y_bound=3.0)
    with pytest.warns(FutureWarning, match="renamed bins="):
        old = DPRegressogram(epsilon=1.0, n_bins=7, rng=0, **bounds)
    new = DPRegressogram(epsilon=1.0, bins=7, rng=0, **bounds)
    assert old.get_params() == new.get_params() and "n_bins" not in new.get_params()
    np.testing.assert_array_equal(old.fit(X, y).predict(X), clone(new).fit(X, y).predict(X))
    with pytest.raises(TypeError, match="bins= only"):
        DPRegressogram(epsilon=1.0, bins=7, n_bins=7, **bounds)
