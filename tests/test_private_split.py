"""Tests of private split conformal prediction (Angelopoulos et al.; chapter 4)."""

import math
import warnings

import numpy as np
import pytest
from scipy.special import log_softmax
from sklearn.linear_model import LinearRegression, LogisticRegression

from dpcp_tutorial import (
    DPLogisticRegression,
    DPRidgeRegression,
    PrivateSplitConformalClassifier,
    PrivateSplitConformalRegressor,
    bounded_interval,
    interval_coverage,
    make_heteroscedastic_regression,
    normalized_residual_score,
    pps_choose_m,
    pps_corrected_level,
    pps_grid,
    pps_optimal_gamma,
    pps_private_quantile,
    pps_privacy_loss,
    pps_quantile_probabilities,
    pps_round_up,
    private_quantile,
    private_quantile_privacy_loss,
    set_coverage,
)
from _audit import max_add_one_log_ratio
from dpcp_tutorial.accounting import ReleaseWarning

ALPHA = 0.1

# (n, epsilon, m*, gamma*, qtilde) of the reference table (dpcp-math.md section 7)
REFERENCE_ROWS = [
    (5000, 8, 33932, 5.554e-4, 0.90124),
    (30000, 5, 28117, 1.481e-4, 0.90033),
    (30000, 0.5, 13257, 1.481e-3, 0.90260),
    (1000, 10, 15998, 2.219e-3, 0.90472),
    (1000, 1, 30888, 2.21e-2, 0.93580),
    (10000, 1, 138949, 2.221e-3, 0.90434),
    (10000, 0.1, 28117, 2.212e-2, 0.93480),
    (100, 10, 21209, 2.191e-2, 0.94317),
]
SCAN = np.logspace(4, 6, 50).astype(int)


# --------------------------------------------------------------------------- grid and rounding


def test_grid_has_both_ends_and_m_edges():
    edges = pps_grid(11)
    assert edges.size == 11 and edges[0] == 0.0 and edges[-1] == 1.0
    np.testing.assert_allclose(np.diff(edges), 0.1)
    assert pps_grid(2).tolist() == [0.0, 1.0]


def test_round_up_is_the_smallest_edge_strictly_above():
    rng = np.random.default_rng(0)
    scores = np.concatenate([rng.uniform(size=500), pps_grid(7), [0.0, 1.0]])
    edges = pps_grid(7)
    rounded = pps_round_up(scores, 7)
    for s, r in zip(scores, rounded):
        above = edges[edges > s]
        assert r == (above.min() if above.size else 1.0)
    assert pps_round_up([0.5], 3).tolist() == [1.0]      # an interior edge moves up
    assert pps_round_up([1.0], 3).tolist() == [1.0]      # the top is capped


# --------------------------------------------------------------------------- corrected level and gamma


@pytest.mark.parametrize("n, epsilon, m, gamma, qtilde", REFERENCE_ROWS)
def test_qtilde_reproduces_the_reference_table(n, epsilon, m, gamma, qtilde):
    gamma_star = pps_optimal_gamma(n, ALPHA, epsilon)
    assert gamma_star == pytest.approx(gamma, rel=2.5e-3)          # table gives 3-4 significant digits
    assert pps_corrected_level(n, ALPHA, epsilon, m, gamma_star) == pytest.approx(qtilde, abs=5e-6)


@pytest.mark.parametrize("n, epsilon", [(100, 1.0), (1000, 0.1)])
def test_capped_rows_are_trivial_for_every_m_in_the_scan(n, epsilon):
    gamma = pps_optimal_gamma(n, ALPHA, epsilon)
    assert min(pps_corrected_level(n, ALPHA, epsilon, int(m), gamma) for m in SCAN) >= 1.0
    scores = np.random.default_rng(1).uniform(size=n)
    assert pps_private_quantile(scores, ALPHA, epsilon, m=10_000, rng=0) == 1.0
    assert np.isinf(bounded_interval(np.zeros(3), 1.0, bound=2.0)).all()


@pytest.mark.parametrize("n, epsilon, alpha", [(100, 10, 0.1), (5000, 8, 0.1), (30000, 0.5, 0.05), (50, 2, 0.3)])
def test_optimal_gamma_solves_its_quadratic_and_minimises_qtilde(n, epsilon, alpha):
    gamma = pps_optimal_gamma(n, alpha, epsilon)
    b = alpha * epsilon * (n + 1) * (1 - alpha) / 2 + 2 * alpha
    assert abs(alpha**2 * gamma**2 - b * gamma + 1) < 1e-9
    other_root = 1 / (alpha**2 * gamma)                    # product of the roots is 1/alpha^2
    assert other_root > gamma
    q = pps_corrected_level(n, alpha, epsilon, 1000, gamma)
    for g in [gamma * 0.99, gamma * 1.01, gamma / 2, min(2 * gamma, 0.999)]:
        assert pps_corrected_level(n, alpha, epsilon, 1000, g) > q


def test_optimal_gamma_is_clipped_below_one():
    assert pps_optimal_gamma(1, 0.5, 1e-3) == pytest.approx(1 - 1e-12)


@pytest.mark.slow
def test_m_search_is_data_independent_seeded_and_close_to_the_reference():
    n, epsilon = 5000, 8.0
    m1, g1 = pps_choose_m(n, ALPHA, epsilon, rule="reference", rng=3)
    assert m1 in SCAN and g1 == pps_optimal_gamma(n, ALPHA, epsilon)
    assert pps_choose_m(n, ALPHA, epsilon, candidates=SCAN[::5], rule="reference", rng=4) == pps_choose_m(
        n, ALPHA, epsilon, candidates=SCAN[::5], rule="reference", rng=4)
    # m enters only through log m: over the whole scan qtilde moves by 2/(eps n) log(100)
    tolerance = 2 / (epsilon * n) * math.log(100)
    assert abs(pps_corrected_level(n, ALPHA, epsilon, m1, g1) - 0.90124) <= tolerance


@pytest.mark.parametrize("n, epsilon", [(1000, 1.0), (250, 2.0), (20000, 0.5)])
def test_analytic_m_rule_minimises_level_plus_mean_rounding(n, epsilon):
    candidates = np.unique(np.logspace(1, 6, 200).astype(int))
    m, gamma = pps_choose_m(n, ALPHA, epsilon, candidates=candidates, rule="analytic")
    cost = lambda k: pps_corrected_level(n, ALPHA, epsilon, int(k), gamma) + 0.5 / (k - 1)
    assert cost(m) == min(cost(k) for k in candidates)
    assert 0.8 < m / (epsilon * n / 4) < 1.25            # the minimiser of (2/(eps n)) log m + 1/(2m) is eps n / 4
    with pytest.raises(ValueError, match="rule="):
        pps_choose_m(n, ALPHA, epsilon, rule="best")


# --------------------------------------------------------------------------- the mechanism


def _reference_log_probabilities(scores, alpha, epsilon, m, gamma):
    """Independent port of the reference loss (np.digitize based), top-edge quirk removed."""
    n = scores.size
    bins = np.linspace(0, 1, m)
    qtilde = min((n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 2 / (epsilon * n) * np.log(m / (gamma * alpha)),
                 1 - 1e-12)
    binned = bins[np.minimum(np.digitize(scores, bins), m - 1)]
    w1 = np.clip(np.digitize(binned, bins), 0, m - 1)
    w2 = np.clip(np.digitize(binned, bins, right=True), 0, m - 1)
    lower = np.bincount(w1, minlength=m).cumsum().astype(float)
    lower[-1] = n - np.sum(binned == 1.0)            # the reference counts all n scores here
    w = np.maximum(lower / qtilde, (n - np.bincount(w2, minlength=m).cumsum()) / (1 - qtilde))
    return log_softmax(-(epsilon * min(alpha, 1 - alpha) / 2) * w)


@pytest.mark.parametrize("n, epsilon, m", [(200, 5.0, 50), (1000, 1.0, 300), (3000, 2.0, 1001)])
def test_law_matches_an_independent_port_of_the_reference(n, epsilon, m):
    scores = np.random.default_rng(n).beta(2, 5, size=n)
    gamma = pps_optimal_gamma(n, ALPHA, epsilon)
    edges, logp = pps_quantile_probabilities(scores, ALPHA, epsilon, m, gamma, variant="reference", log=True)
    np.testing.assert_allclose(logp, _reference_log_probabilities(scores, ALPHA, epsilon, m, gamma),
                               rtol=1e-9, atol=1e-9)
    assert np.isclose(np.exp(logp).sum(), 1.0) and np.array_equal(edges, pps_grid(m))


def test_sampling_follows_the_exact_law():
    """10 000 draws; each edge frequency within 5 binomial SE of its probability."""
    scores = np.random.default_rng(5).uniform(size=300)
    edges, p = pps_quantile_probabilities(scores, ALPHA, 0.5, m=21)
    rng = np.random.default_rng(6)
    draws = np.array([pps_private_quantile(scores, ALPHA, 0.5, m=21, rng=rng) for _ in range(10_000)])
    freq = np.array([(draws == e).mean() for e in edges])
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / 10_000) + 1e-4)


def _max_log_ratio(scores, neighbours, epsilon, m, variant, n):
    _, base = pps_quantile_probabilities(scores, ALPHA, epsilon, m, variant=variant, n=n, log=True)
    worst = 0.0
    for other in neighbours:
        _, logp = pps_quantile_probabilities(other, ALPHA, epsilon, m, variant=variant, n=n, log=True)
        worst = max(worst, float(np.max(np.abs(base - logp))))
    return worst


def _add_remove_neighbours(scores, rng):
    removed = [np.delete(scores, i) for i in rng.choice(scores.size, size=20, replace=False)]
    added = [np.append(scores, v) for v in np.concatenate([[0.0, 1.0], rng.uniform(size=18)])]
    return removed + added


def _replace_neighbours(scores, rng):
    out = []
    for i in rng.choice(scores.size, size=15, replace=False):
        for v in [0.0, 1.0]:
            other = scores.copy()
            other[i] = v
            out.append(other)
    return out


def _awkward_scores(rng, n, m):
    """Uniform, lattice (every score on a grid edge), heavy ties with 0 and 1, or a split around the quantile."""
    kind = rng.integers(4)
    if kind == 0:
        return rng.uniform(size=n)
    if kind == 1:
        return rng.integers(0, m, size=n) / (m - 1)
    if kind == 2:
        return rng.choice([0.0, 1.0, 0.5, rng.uniform()], size=n)
    return np.r_[np.full(n - n // 10, 0.2), np.full(n // 10, 0.95)]


@pytest.mark.parametrize("n, epsilon, m", [(100, 10.0, 21), (100, 5.0, 32), (100, 5.0, 200), (300, 1.0, 1000),
                                           (500, 1.0, 200), (2000, 0.5, 1000), (300, 1000.0, 50), (60, 10.0, 31)])
def test_tight_exponent_is_exactly_epsilon_dp_under_both_relations(n, epsilon, m):
    """Default exponent eps * qtilde (1 - qtilde), n public: replace-one loss <= eps and add/remove loss
    <= eps max(qtilde, 1 - qtilde) (pps_privacy_loss), including the old refusal window (n = 100, m = 200)."""
    rng = np.random.default_rng(n + m)
    for _ in range(3):
        scores = _awkward_scores(rng, n, m)
        assert pps_privacy_loss(n, ALPHA, epsilon, m) in (0.0, epsilon)
        replace = _max_log_ratio(scores, _replace_neighbours(scores, rng), epsilon, m, "tight", n)
        add_remove = _max_log_ratio(scores, _add_remove_neighbours(scores, rng), epsilon, m, "tight", n)
        assert replace <= pps_privacy_loss(n, ALPHA, epsilon, m) + 1e-9
        assert add_remove <= pps_privacy_loss(n, ALPHA, epsilon, m, relation="add/remove") + 1e-9


def test_tight_replace_one_loss_is_attained():
    """A split data set and one record moved from 0 to 1: the log-ratio comes within 1% of eps."""
    n, epsilon, m = 20_000, 5.0, 3
    gamma = pps_optimal_gamma(n, ALPHA, epsilon)
    qtilde = pps_corrected_level(n, ALPHA, epsilon, m, gamma)
    worst = 0.0
    for k in range(int((1 - qtilde) * n) - 3, int((1 - qtilde) * n) + 4):
        scores = np.r_[np.full(n - k, 0.2), np.full(k, 0.7)]
        for index, value in [(0, 1.0), (n - 1, 0.0), (0, 0.7), (n - 1, 0.2)]:
            other = scores.copy()
            other[index] = value
            worst = max(worst, _max_log_ratio(scores, [other], epsilon, m, "tight", n))
    assert 0.99 * epsilon < worst <= epsilon + 1e-9


@pytest.mark.parametrize("n, epsilon, m", [(100, 10.0, 21), (500, 1.0, 200), (2000, 0.5, 1000), (300, 1000.0, 50)])
def test_reference_exponent_losses(n, epsilon, m):
    """The authors' exponent: every log-ratio within its exact loss c (1/qtilde + 1/(1 - qtilde)) (replace-one)
    and c / min(qtilde, 1 - qtilde) (add/remove)."""
    rng = np.random.default_rng(n + m)
    scores = rng.beta(2, 3, size=n)
    replace = pps_privacy_loss(n, ALPHA, epsilon, m, variant="reference")
    add_remove = pps_privacy_loss(n, ALPHA, epsilon, m, variant="reference", relation="add/remove")
    assert _max_log_ratio(scores, _replace_neighbours(scores, rng), epsilon, m, "reference", n) <= replace + 1e-9
    assert _max_log_ratio(scores, _add_remove_neighbours(scores, rng), epsilon, m, "reference", n) <= add_remove + 1e-9


def test_reference_exponent_exceeds_epsilon_under_replace_one():
    """Here qtilde = 0.9486, 1 - qtilde just above alpha/2: the authors' exponent loses more than eps."""
    n, epsilon, m = 100, 5.0, 32
    scores = np.linspace(0.005, 0.995, n)
    neighbours = _replace_neighbours(scores, np.random.default_rng(0)) + [
        np.where(np.arange(n) == i, v, scores) for i in range(n) for v in (0.0, 1.0)]
    assert _max_log_ratio(scores, neighbours, epsilon, m, "reference", n) > 1.01 * epsilon
    assert pps_privacy_loss(n, ALPHA, epsilon, m, variant="reference") > 1.01 * epsilon


@pytest.mark.parametrize("variant", ["tight", "reference"])
def test_no_refusal_window(variant):
    """The old code refused for about 170 <= n <= 500 with the default m; both variants now release everywhere."""
    rng = np.random.default_rng(1)
    for n in [150, 170, 200, 300, 400, 500, 520]:
        scores = rng.uniform(size=n)
        for m in [1000, 30_000]:
            assert pps_private_quantile(scores, ALPHA, 1.0, m=m, variant=variant, rng=0) in pps_grid(m)
    with pytest.raises(ValueError, match="variant"):
        pps_private_quantile(scores, ALPHA, 1.0, m=100, variant="strict")


@pytest.mark.parametrize("n, epsilon", [(50_000, 1.0), (5_000, 8.0), (20_000, 1000.0), (200_000, 0.5)])
def test_large_n_epsilon_gives_a_valid_edge(n, epsilon):
    scores = np.random.default_rng(0).uniform(size=n)
    edges, p = pps_quantile_probabilities(scores, ALPHA, epsilon, m=5000)
    assert np.isfinite(p).all() and np.isclose(p.sum(), 1.0)
    s = pps_private_quantile(scores, ALPHA, epsilon, m=5000, rng=1)
    assert s in edges and 0.85 < s < 0.99


def test_ties_and_all_equal_scores():
    for value in [0.0, 0.3, 1.0]:
        s = pps_private_quantile(np.full(5000, value), ALPHA, 5.0, m=101, rng=0)
        assert s in pps_grid(101) and s >= value
    assert pps_private_quantile(np.full(5000, 0.3), ALPHA, 50.0, m=101, rng=0) == pytest.approx(0.31)


# --------------------------------------------------------------------------- coverage (Monte Carlo)


@pytest.mark.slow
@pytest.mark.parametrize("n, epsilon, m", [(500, 10.0, 1000), (2000, 1.0, 2000), (3000, 8.0, 3000)])
def test_mechanism_coverage_monte_carlo(n, epsilon, m):
    """R = 3000 repetitions with one fresh calibration set and one test score each (Beta(2,5) scores).

    Coverage is a binomial proportion, SE = sqrt(alpha (1 - alpha) / R) = 0.0055; we require
    coverage >= 1 - alpha - 3 SE. At (3000, 8) qtilde = 0.9021, so the margin is small there.
    """
    reps = 3000
    rng = np.random.default_rng(m)
    gamma = pps_optimal_gamma(n, ALPHA, epsilon)
    covered = 0
    for _ in range(reps):
        scores = rng.beta(2, 5, size=n + 1)
        covered += scores[-1] <= pps_private_quantile(scores[:-1], ALPHA, epsilon, m=m, gamma=gamma, rng=rng)
    coverage = covered / reps
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert coverage >= 1 - ALPHA - 3 * se


@pytest.mark.slow
@pytest.mark.parametrize("calibrator", ["quantile", "pps"])
def test_regressor_coverage_monte_carlo(calibrator):
    """Model fitted once on a training set; 1500 repetitions of (calibration set, one test point).

    SE = sqrt(0.09 / 1500) = 0.0077; requirement coverage >= 0.9 - 3 SE = 0.877.
    """
    reps, n_cal = 1500, 500
    X_train, y_train = make_heteroscedastic_regression(500, rng=0)
    model = PrivateSplitConformalRegressor(LinearRegression(), alpha=ALPHA, epsilon=2.0, bound=5.0, m=2000,
                                           calibrator=calibrator, bins=200, rng=1).fit(X_train, y_train)
    rng = np.random.default_rng(2)
    covered = 0
    for _ in range(reps):
        X, y = make_heteroscedastic_regression(n_cal + 1, rng=rng)
        model.set_params(rng=rng).calibrate(X[:-1], y[:-1])
        covered += interval_coverage(y[-1:], model.predict_interval(X[-1:]))
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert covered / reps >= 1 - ALPHA - 3 * se


def _three_class_data(n, rng):
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 2)) + np.array([[0, 0], [1.5, 0], [0, 1.5]])[y]
    return X, y


@pytest.mark.slow
@pytest.mark.parametrize("score", ["lac", "aps"])
def test_classifier_coverage_monte_carlo(score):
    """1000 repetitions, three overlapping Gaussian classes; SE = sqrt(0.09/1000) = 0.0095, tolerance 3 SE."""
    reps, n_cal = 1000, 500
    rng = np.random.default_rng(3)
    X_train, y_train = _three_class_data(600, rng)
    model = PrivateSplitConformalClassifier(LogisticRegression(), alpha=ALPHA, epsilon=2.0, score=score, m=2000,
                                            calibrator="pps", rng=4).fit(X_train, y_train)
    covered = 0
    for _ in range(reps):
        X, y = _three_class_data(n_cal + 1, rng)
        with warnings.catch_warnings():            # APS scores reach 1: some releases are the whole label set
            warnings.simplefilter("ignore", ReleaseWarning)
            model.set_params(rng=rng).calibrate(X[:-1], y[:-1])
        covered += set_coverage(y[-1:], model.predict_set(X[-1:]))
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert covered / reps >= 1 - ALPHA - 3 * se


# --------------------------------------------------------------------------- sets and estimators


def test_normalised_scores_and_bounded_interval():
    s = normalized_residual_score([0.0, 1.0, 10.0], [0.0, 0.0, 0.0], bound=2.0)
    assert s.tolist() == [0.0, 0.5, 1.0]
    iv = bounded_interval([1.0, 2.0], 0.25, bound=2.0)
    assert iv.tolist() == [[0.5, 1.5], [1.5, 2.5]]
    assert np.isinf(bounded_interval([1.0], 1.0, bound=2.0)).all()


def test_classifier_top_edge_gives_all_classes():
    rng = np.random.default_rng(0)
    X, y = _three_class_data(300, rng)
    model = PrivateSplitConformalClassifier(LogisticRegression(), alpha=ALPHA, epsilon=0.1, m=1000, rng=0,
                                            calibrator="pps")
    with pytest.warns(ReleaseWarning, match="every prediction set holds every label"):
        model.fit(X, y).calibrate(X[:100], y[:100])              # n=100, eps=0.1: qtilde >= 1
    assert model.qhat_ == 1.0 and model.predict_set(X).all()
    assert model.privacy_.add_remove is None or model.privacy_.add_remove[0] == 0.0
    assert model.qtilde_ >= 1.0 and model.m_ == 1000


def test_regressor_attributes_and_determinism():
    X, y = make_heteroscedastic_regression(2000, rng=0)
    a = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, rng=7, calibrator="pps")
    b = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, rng=7, calibrator="pps")
    ia = a.fit(X[:1000], y[:1000]).calibrate(X[1000:], y[1000:]).predict_interval(X[:5])
    ib = b.fit(X[:1000], y[:1000]).calibrate(X[1000:], y[1000:]).predict_interval(X[:5])
    np.testing.assert_array_equal(ia, ib)
    assert a.m_ == pps_choose_m(1000, ALPHA, 1.0)[0] and a.gamma_ == pps_optimal_gamma(1000, ALPHA, 1.0)
    assert a.qtilde_ == pps_corrected_level(1000, ALPHA, 1.0, a.m_, a.gamma_)
    np.testing.assert_allclose(ia[:, 1] - ia[:, 0], 2 * 5.0 * a.qhat_)


# --------------------------------------------------------------------------- bad input


def test_bad_input_messages():
    good = np.random.default_rng(0).uniform(size=100)
    with pytest.raises(ValueError, match="public bound"):
        pps_private_quantile(good * 3, ALPHA, 1.0, m=100)
    with pytest.raises(ValueError, match="m=1 must be >= 2"):
        pps_grid(1)
    with pytest.raises(ValueError, match="gamma"):
        pps_corrected_level(100, ALPHA, 1.0, 100, 1.0)
    with pytest.raises(ValueError, match="'auto'"):
        pps_private_quantile(good, ALPHA, 1.0, m="best")
    with pytest.raises(ValueError, match="'auto'"):
        pps_private_quantile(good, ALPHA, 1.0, m=100, gamma="best")
    with pytest.raises(ValueError, match="epsilon"):
        pps_private_quantile(good, ALPHA, 0.0, m=100)
    with pytest.raises(ValueError, match="alpha"):
        pps_corrected_level(100, 1.5, 1.0, 100, 0.1)
    with pytest.raises(TypeError, match="integer"):
        pps_grid(10.5)
    with pytest.raises(ValueError, match="never the data's own maximum"):
        normalized_residual_score([1.0], [0.0], bound=0.0)
    with pytest.raises(ValueError, match="not calibrated"):
        PrivateSplitConformalRegressor(LinearRegression(), bound=1.0).fit(np.ones((3, 1)), [1, 2, 3]).predict_interval(
            np.ones((1, 1)))
    with pytest.raises(ValueError, match="score="):
        PrivateSplitConformalClassifier(LogisticRegression(), score="raps")._score_functions()


# --------------------------------------------------------------------------- the estimators' API


def _split_data(n=3000, rng=0):
    X, y = make_heteroscedastic_regression(n, rng=rng)
    return X[: n // 3], y[: n // 3], X[n // 3:], y[n // 3:]


def test_default_calibrator_is_the_tight_quantile_of_the_held_out_scores():
    """calibrator='quantile' (default) releases chapter 3's private_quantile of min(|y - mu|/B, 1): the same draw
    as the function with the estimator's generator after its one child seed (drawn for every data set)."""
    X1, y1, X2, y2 = _split_data()
    est = PrivateSplitConformalRegressor(LinearRegression(), alpha=ALPHA, epsilon=1.0, bound=5.0, bins=500, rng=7)
    est.fit(X1, y1).calibrate(X2, y2)
    scores = np.minimum(np.abs(y2 - est.predict(X2)) / 5.0, 1.0)
    gen = np.random.default_rng(7)
    gen.integers(2**63)
    assert est.qhat_ == private_quantile(scores, ALPHA, 1.0, 500, rng=gen, n=scores.size)
    assert est.n_ == scores.size and 0 < est.level_ < ALPHA
    assert not hasattr(est, "m_")


def test_bound_is_required_with_advice():
    with pytest.raises(TypeError, match="needs the public bound: pass bound=.*response's units"):
        PrivateSplitConformalRegressor(LinearRegression())
    with pytest.raises(TypeError, match="needs the public bound"):
        normalized_residual_score([1.0], [0.0], bound=PrivateSplitConformalRegressor.__init__.__kwdefaults__["bound"])


def test_public_n_subsamples_or_pads_every_size_releases():
    """With a public n, calibration sets of sizes 0, n - 1, n, n + 1 all release (no size-dependent refusal), and
    the account is epsilon under both relations."""
    X1, y1, X2, y2 = _split_data()
    n = 300
    releases = []
    for size in (0, 1, n - 1, n, n + 1, 900):
        est = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, n=n, rng=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseWarning)   # tiny parts are padded with 1: trivial releases
            est.fit(X1, y1).calibrate(X2[:size], y2[:size])
        assert est.n_ == n
        assert est.privacy_.add_remove == (1.0, 0.0) and est.privacy_.replace_one == (1.0, 0.0)
        releases.append(est.qhat_)
    assert releases[0] == 1.0 and releases[-1] < 1.0


@pytest.mark.slow
def test_public_n_keeps_coverage_when_the_part_is_larger_or_smaller():
    """Subsample-or-pad: calibration parts of 150 or 450 records calibrated at the public n = 300 cover at 1 - alpha
    (binomial SE, 3 SE tolerance); padding only adds coverage."""
    X1, y1, _, _ = _split_data()
    model = LinearRegression().fit(X1, y1)
    rng = np.random.default_rng(11)
    reps = 600
    for size in (280, 450):
        covered = 0
        for _ in range(reps):
            X, y = make_heteroscedastic_regression(size + 1, rng=rng)
            with warnings.catch_warnings():     # padded parts can release the whole line (which covers)
                warnings.simplefilter("ignore", ReleaseWarning)
                est = PrivateSplitConformalRegressor(model, alpha=ALPHA, epsilon=2.0, bound=5.0, bins=200, n=300,
                                                     prefit=True, rng=rng).calibrate(X[:-1], y[:-1])
            covered += interval_coverage(y[-1:], est.predict_interval(X[-1:]))
        assert covered / reps >= 1 - ALPHA - 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_account_of_a_dp_trainer_and_the_calibration_composes_in_parallel():
    X1, y1, X2, y2 = _split_data()
    trainer = DPRidgeRegression(epsilon=0.5, x_bound=3.0, y_bound=6.0, rng=0)
    est = PrivateSplitConformalRegressor(trainer, epsilon=1.0, bound=6.0, n=2000, rng=1).fit(X1, y1).calibrate(X2, y2)
    acc = est.privacy_
    assert acc.relation == "add/remove" and acc.chapter == "chapter 4"
    assert acc.add_remove == (1.0, 1e-6)                           # max(0.5, 1): parallel, not 1.5
    assert acc.replace_one[0] == pytest.approx(1.5)                # a record that moves parts: 0.5 + 1
    assert [p.part for p in acc.parts] == ["training", "calibration"]
    assert any("n = 2000" in p for p in acc.public) and "parallel" in acc.composition


def test_n_none_reports_the_recomputed_level_bound():
    """With n=None the level is recomputed from the part's size; at N = 206 the add/remove
    loss is 1.023 epsilon (above epsilon), and the account says so."""
    X1, y1, X2, y2 = _split_data()
    est = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, rng=0)
    est.fit(X1, y1).calibrate(X2[:206], y2[:206])
    expected = max(private_quantile_privacy_loss(ALPHA, k, 1.0, 1000, relation="add/remove", public_n=False)
                   for k in (205, 206))
    assert est.privacy_.add_remove[0] == pytest.approx(expected) and expected == pytest.approx(1.0229, abs=1e-4)
    assert est.privacy_.replace_one == (1.0, 0.0) and any("n=None" in note for note in est.privacy_.notes)


def test_pps_with_n_none_reports_the_recomputed_bound_or_not_covered():
    X1, y1, X2, y2 = _split_data(1500)
    est = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, calibrator="pps",
                                         m=500, rng=0).fit(X1, y1).calibrate(X2, y2)
    recomputed = lambda m: max(pps_privacy_loss(k, ALPHA, 1.0, m, relation="add/remove", public_n=False)
                               for k in (999, 1000))
    assert est.privacy_.add_remove[0] == pytest.approx(recomputed(500))
    # m="auto" is deterministic: the same grid at N - 1, N, N + 1 here, so the same bound applies
    auto = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, calibrator="pps",
                                          m="auto", rng=0).fit(X1, y1).calibrate(X2, y2)
    assert all(pps_choose_m(k, ALPHA, 1.0)[0] == auto.m_ for k in (999, 1000, 1001))
    assert auto.privacy_.add_remove[0] == pytest.approx(recomputed(auto.m_))
    # the authors' random scan can choose another grid for a neighbour: not covered
    scan = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, calibrator="pps",
                                          m="reference", rng=0).fit(X1, y1).calibrate(X2, y2)
    assert scan.privacy_.add_remove is None and scan.privacy_.relation == "replace-one"
    assert any("m='reference'" in note for note in scan.privacy_.notes)


@pytest.mark.parametrize("m", ["auto", pytest.param("reference", marks=pytest.mark.slow)])
def test_grid_choice_never_reads_the_data(m):
    """The grid size depends on the public n, alpha, epsilon and the seed only: calibration sets of the same size
    with other values (extreme ones included) get the same m_, and pps_choose_m takes no data argument."""
    assert "scores" not in pps_choose_m.__code__.co_varnames[:pps_choose_m.__code__.co_argcount]
    X1, y1, X2, y2 = _split_data(1500)
    chosen = set()
    for y_cal in (y2, -y2, np.zeros_like(y2), 1e6 * np.sign(y2)):
        est = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=5.0, calibrator="pps", m=m,
                                             n=1000, rng=5).fit(X1, y1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseWarning)
            chosen.add(est.calibrate(X2, y_cal).m_)
    assert len(chosen) == 1


def test_top_edge_release_warns_and_the_warning_reads_only_the_release():
    X1, y1, X2, y2 = _split_data()
    est = PrivateSplitConformalRegressor(LinearRegression(), epsilon=1.0, bound=1e-3, bins=100, rng=0).fit(X1, y1)
    with pytest.warns(ReleaseWarning, match=r"qhat = 1.*\(-inf, inf\)"):
        est.calibrate(X2, y2)
    assert np.isinf(est.predict_interval(X2[:3])).all()


@pytest.mark.parametrize("output", [np.nan, np.inf, -np.inf, 1e300])
def test_model_outputs_never_make_calibration_fail(output):
    """A model's prediction on one private record (NaN, inf, 1e300) must not turn a release
    into an error; the neighbour without that record releases too."""
    class Wild(LinearRegression):
        def predict(self, X):
            out = super().predict(X)
            out[0] = output
            return out

    X1, y1, X2, y2 = _split_data()
    for X_cal, y_cal in ((X2, y2), (X2[1:], y2[1:])):
        est = PrivateSplitConformalRegressor(Wild(), epsilon=1.0, bound=5.0, n=1000, rng=0).fit(X1, y1)
        est.calibrate(X_cal, y_cal)
        assert 0 < est.qhat_ < 1


def test_classifier_default_and_account_with_a_dp_trainer():
    rng = np.random.default_rng(5)
    X, y = _three_class_data(2400, rng)
    trainer = DPLogisticRegression(epsilon=1.0, l2=300.0, x_bound=4.0, classes=[0, 1, 2], rng=0)
    est = PrivateSplitConformalClassifier(trainer, alpha=ALPHA, epsilon=1.0, n=1200, rng=2)
    est.fit(X[:1200], y[:1200]).calibrate(X[1200:], y[1200:])
    assert 0 < est.qhat_ < 1 and est.privacy_.add_remove == (1.0, 1e-6)
    sets = est.predict_set(X[:50])
    assert sets.shape == (50, 3) and sets.any(axis=1).all()


@pytest.mark.parametrize("kwargs, exc, phrase", [
    (dict(calibrator="exact"), ValueError, "calibrator"), (dict(m=1), ValueError, "m=1"),
    (dict(gamma=2.0), ValueError, "gamma"), (dict(variant="fast"), ValueError, "variant"),
    (dict(bins=0), ValueError, "bins"), (dict(n=0), ValueError, "n=0"), (dict(n=10.5), TypeError, "n must"),
])
def test_settings_are_validated_in_every_mode(kwargs, exc, phrase):
    """Parameters of the calibrator that is not used are validated too."""
    X1, y1, X2, y2 = _split_data(900)
    for calibrator in ("quantile", "pps"):
        est = PrivateSplitConformalRegressor(LinearRegression(), bound=5.0, rng=0, **{"calibrator": calibrator,
                                                                                      **kwargs}).fit(X1, y1)
        with pytest.raises(exc, match=phrase):
            est.calibrate(X2, y2)


def test_recomputed_level_bound_of_pps_is_an_exact_upper_bound():
    """pps_privacy_loss(public_n=False) bounds the exact log-ratio between every data set of n rounded scores and
    every one with a record added (level and gamma recomputed from each size), on a small grid."""
    m, alpha, eps = 5, 0.3, 20.0
    grid = pps_grid(m)
    for n in (7, 8, 9):
        bound = pps_privacy_loss(n, alpha, eps, m, relation="add/remove", public_n=False)
        assert np.isfinite(bound)
        worst = max_add_one_log_ratio(lambda d: pps_quantile_probabilities(d, alpha, eps, m, log=True)[1], grid, n)
        assert worst <= bound + 1e-9
        assert worst >= 0.5 * bound          # and not vacuous


# ---------------------------------------------------------------------------
# OpenDP's exact sampler through the split estimators
# ---------------------------------------------------------------------------

def _opendp_law_check(draws, edges, probabilities):
    """Frequencies of ``draws`` over ``edges`` within 5 binomial standard errors of ``probabilities``."""
    counts = np.array([np.sum(np.isclose(draws, e)) for e in edges])
    assert counts.sum() == len(draws)               # every release is an edge
    expected = len(draws) * probabilities
    se = np.sqrt(len(draws) * probabilities * (1 - probabilities))
    assert np.all(np.abs(counts - expected) <= 5 * se + 1), (counts, expected)


@pytest.mark.slow
def test_split_estimators_release_with_the_opendp_sampler_from_its_law():
    from dpcp_tutorial import private_quantile_probabilities
    from sklearn.dummy import DummyRegressor

    rng = np.random.default_rng(30)
    X, y = rng.normal(size=(60, 1)), rng.normal(size=60)
    model = DummyRegressor().fit(X, y)                 # a public model: the scores are |y - mean|
    scores = normalized_residual_score(y, model.predict(X), 3.0)
    edges, law = private_quantile_probabilities(scores, 0.2, 2.0, bins=5, sampler="opendp")
    est = PrivateSplitConformalRegressor(model, alpha=0.2, epsilon=2.0, bound=3.0, bins=5, prefit=True,
                                         sampler="opendp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseWarning)
        draws = [est.calibrate(X, y).qhat_ for _ in range(1500)]
    _opendp_law_check(draws, edges, law)
    assert "OpenDP sampler" in est.privacy_.parts[-1].label
    assert est.privacy_.replace_one == (2.0, 0.0)      # the same guarantee as with NumPy's sampler


@pytest.mark.parametrize("make", [
    lambda **kw: PrivateSplitConformalRegressor(DPRidgeRegression(epsilon=1.0, x_bound=2.0, y_bound=4.0),
                                                bound=4.0, n=200, **kw),
    lambda **kw: PrivateSplitConformalClassifier(DPLogisticRegression(epsilon=1.0, x_bound=2.0, classes=[0, 1]),
                                                 n=200, **kw)])
def test_split_estimators_opendp_sampler_needs_rng_none(make):
    rng = np.random.default_rng(31)
    X = rng.normal(size=(400, 2))
    y = X[:, 0] + 0.3 * rng.normal(size=400)
    if isinstance(make(), PrivateSplitConformalClassifier):
        y = (y > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseWarning)
        fitted = make(sampler="opendp").fit(X[:200], y[:200]).calibrate(X[200:], y[200:])
    assert 0.0 < fitted.qhat_ <= 1.0
    with pytest.raises(ValueError, match="cannot be seeded; pass rng=None"):   # as private_quantile says it
        make(sampler="opendp", rng=1).fit(X[:200], y[:200]).calibrate(X[200:], y[200:])
    with pytest.raises(ValueError, match="calibrator='quantile'"):
        make(sampler="opendp", calibrator="pps").fit(X[:200], y[:200]).calibrate(X[200:], y[200:])
    with pytest.raises(ValueError, match="sampler"):                            # checked in the pps mode too
        make(sampler="exact", calibrator="pps").fit(X[:200], y[:200]).calibrate(X[200:], y[200:])


# ---------------------------------------------------------------------------
# bad public inputs named and explained (the sweep covers every parameter)
# ---------------------------------------------------------------------------

def test_infeasible_alpha_is_refused_under_the_estimators_own_name():
    rng = np.random.default_rng(32)
    X, y = rng.normal(size=(80, 1)), rng.normal(size=80)
    est = PrivateSplitConformalRegressor(LinearRegression(), alpha=1e-6, epsilon=1.0, bound=3.0, bins=50)
    with pytest.raises(ValueError, match=r"alpha=1e-06 is infeasible for this calibration"):
        est.fit(X[:40], y[:40]).calibrate(X[40:], y[40:])
    with pytest.raises(ValueError, match="n=.* must be <= 1000000000"):
        PrivateSplitConformalRegressor(LinearRegression(), bound=3.0, n=10**12).fit(X[:40], y[:40]) \
            .calibrate(X[40:], y[40:])
    with pytest.raises(TypeError, match="estimator must be an estimator instance, got the class"):
        PrivateSplitConformalRegressor(LinearRegression, bound=3.0).fit(X[:40], y[:40])


def test_pps_grid_sizes_and_candidates_are_named():
    with pytest.raises(ValueError, match="m=.* must be <= 100000000"):
        pps_grid(10**30)
    with pytest.raises(TypeError, match="candidates must be a 1-D list"):
        pps_choose_m(500, 0.1, 1.0, candidates=50)
    with pytest.raises(TypeError, match="candidates must be an integer"):
        pps_choose_m(500, 0.1, 1.0, candidates=[10.5, 50.0])
    assert pps_choose_m(500, 0.1, 1.0, candidates=(10, 50))[0] in (10, 50)


def test_normalised_residual_score_is_a_deprecated_alias():
    import dpcp_tutorial
    from dpcp_tutorial.private_split import normalised_residual_score

    y, pred = np.array([1.0, 2.0, 5.0]), np.array([1.5, np.nan, 0.0])
    with pytest.warns(FutureWarning, match="renamed normalized_residual_score"):
        old = normalised_residual_score(y, pred, 2.0)
    np.testing.assert_array_equal(old, normalized_residual_score(y, pred, 2.0))
    with pytest.warns(FutureWarning):
        np.testing.assert_array_equal(dpcp_tutorial.normalised_residual_score(y, pred, bound=2.0), old)
    assert "normalised_residual_score" not in dpcp_tutorial.__all__
    assert "normalized_residual_score" in dpcp_tutorial.__all__
