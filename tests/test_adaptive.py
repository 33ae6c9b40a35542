"""Adaptive private regression intervals (dpcp_tutorial.adaptive, chapter 17)."""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpcp_tutorial import DPRidgeRegression, PrivacyAccount, interval_coverage, make_heteroscedastic_regression
from dpcp_tutorial.adaptive import (
    PrivateNormalizedConformalRegressor,
    adaptive_privacy_account,
    normalized_interval,
    normalized_score,
)
from _audit import max_add_one_log_ratio
from dpcp_tutorial.accounting import ReleaseWarning
from dpcp_tutorial.quantile import (
    private_quantile_level,
    private_quantile_privacy_loss,
    private_quantile_probabilities,
)

KNOTS = np.linspace(-3, 3, 7)
Y_BOUND = 6.0


def hats(X):
    """Piecewise-linear hat basis on public knots (rows of norm <= 1)."""
    x = np.clip(X[:, :1], -3, 3)
    return np.maximum(0.0, 1.0 - np.abs(x - KNOTS) / (KNOTS[1] - KNOTS[0]))


def _dp_model(y_bound, eps=2.0, rng=None):
    return make_pipeline(FunctionTransformer(hats), DPRidgeRegression(epsilon=eps, delta=1e-6, l2=1.0, x_bound=1.0,
                                                                      y_bound=y_bound, fit_intercept=False, rng=rng))


def _estimator(scale=True, rng=0, **kw):
    params = dict(alpha=0.1, epsilon=2.0, y_bound=Y_BOUND, sigma_min=0.05, score_bound=5.0, bins=200, rng=rng)
    params.update(kw)
    return PrivateNormalizedConformalRegressor(_dp_model(Y_BOUND, rng=101), _dp_model(3.0, rng=102) if scale else None,
                                               **params)


# --------------------------------------------------------------------------- the score and the interval

def test_score_is_bounded_and_interval_is_its_sublevel_set():
    gen = np.random.default_rng(0)
    y = gen.normal(size=2000) * 50
    mu = gen.normal(size=2000)
    scale = gen.uniform(0.05, 2.0, size=2000)
    s = normalized_score(y, mu, scale, 4.0)
    assert s.min() >= 0 and s.max() <= 1 and np.any(s == 1.0)
    for q in (0.0, 0.1, 0.37, 0.999, 1.0):
        iv = normalized_interval(mu, scale, q, 4.0)
        inside = (iv[:, 0] <= y) & (y <= iv[:, 1])
        np.testing.assert_array_equal(inside, s <= q)
    assert np.all(np.isinf(normalized_interval(mu, scale, 1.0, 4.0)))
    np.testing.assert_allclose(normalized_interval([1.0], [2.0], 0.25, 4.0), [[-1.0, 3.0]])


@pytest.mark.parametrize("call, exc, phrase", [
    (lambda: normalized_score([1.0], [0.0], [0.0], 1.0), ValueError, "sigma_min"),
    (lambda: normalized_score([1.0], [0.0], [1.0], 0.0), ValueError, "score_bound"),
    (lambda: normalized_score([1.0, 2.0], [0.0], [1.0], 1.0), ValueError, "different numbers"),
    (lambda: normalized_score([np.nan], [0.0], [1.0], 1.0), ValueError, "NaN"),
    (lambda: normalized_interval([0.0], [1.0], 1.5, 1.0), ValueError, "qhat"),
    (lambda: normalized_interval([0.0], [1.0], "0.5", 1.0), TypeError, "qhat"),
])
def test_bad_scores_and_intervals(call, exc, phrase):
    with pytest.raises(exc, match=phrase):
        call()


def test_domain_errors_quote_no_data():
    """Invalid data sets that differ in their values give the same message (no values, counts or positions)."""
    messages = set()
    for y in ([np.nan, 1.0], [2.0, np.nan, 5.0, 7.0]):
        with pytest.raises(ValueError) as err:
            normalized_score(y, np.zeros(len(y)), np.ones(len(y)), 1.0)
        messages.add(str(err.value))
    assert len(messages) == 1


# --------------------------------------------------------------------------- privacy account

def _recomputed(alpha, n, eps, bins):
    """The add/remove loss of the tight quantile whose level is recomputed from each neighbour's size."""
    return max(private_quantile_privacy_loss(alpha, k, eps, bins, relation="add/remove", public_n=False)
               for k in (n - 1, n))


def test_privacy_account_arithmetic():
    acc = adaptive_privacy_account((1.0, 1e-6), (0.5, 1e-7), 0.8)
    assert isinstance(acc, PrivacyAccount) and acc.relation == "add/remove" and acc.chapter == "chapter 17"
    assert acc.add_remove == (1.0, 1e-6)
    assert acc.replace_one == (2.0, pytest.approx((1 + math.e) * 1e-6))
    acc = adaptive_privacy_account((0.2, 1e-6), (0.3, 2e-6), 1.0)
    assert acc.add_remove == (1.0, 2e-6)
    # a replaced record may move from the calibration part to the scale part: 1.0 + 0.3 (per-record rule)
    assert acc.replace_one[0] == pytest.approx(1.3)
    assert acc.replace_one[1] == pytest.approx((1 + math.exp(0.3)) * 2e-6)
    seq = adaptive_privacy_account((1.0, 1e-6), (0.5, 1e-7), 0.8, disjoint=False)
    assert seq.add_remove == pytest.approx((2.3, 1.1e-6))
    assert seq.replace_one == pytest.approx((2.0 + 1.0 + 0.8, (1 + math.e) * 1e-6 + (1 + math.exp(0.5)) * 1e-7))
    const = adaptive_privacy_account((0.5, 1e-6), None, 1.0)
    assert const.add_remove == (1.0, 1e-6)
    account = DPRidgeRegression(epsilon=0.5, x_bound=1.0, y_bound=1.0, rng=0).fit(np.ones((5, 1)), np.ones(5)).privacy_
    assert adaptive_privacy_account(account, None, 1.0).parts[0].replace_one == account.replace_one


def test_privacy_account_with_a_recomputed_level():
    """With n=None the level follows the part's own size; near feasibility the add/remove
    loss exceeds epsilon (1.023 at n = 206, alpha = 0.1, 1000 bins); replace-one stays epsilon."""
    acc = adaptive_privacy_account(None, None, 1.0, alpha=0.1, n=206, bins=1000, public_n=False)
    assert acc.add_remove[0] == pytest.approx(_recomputed(0.1, 206, 1.0, 1000)) == pytest.approx(1.0229, abs=1e-4)
    assert acc.replace_one == (1.0, 0.0)
    assert any("206 is treated as public" in note for note in acc.notes)
    infeasible = adaptive_privacy_account(None, None, 1.0, alpha=0.1, n=84, bins=1000, public_n=False)
    assert infeasible.add_remove is None and infeasible.relation == "replace-one"   # n - 1 cannot release
    fixed = adaptive_privacy_account(None, None, 1.0)                               # subsample-or-pad to a public n
    assert fixed.add_remove == fixed.replace_one == (1.0, 0.0)


def test_recomputed_level_bound_is_an_exact_upper_bound_of_the_released_law():
    """The recomputed-level bound is checked against the exact laws of neighbouring data sets of sizes n, n + 1
    (the level of each from its own size) at the smallest feasible sizes, where it is largest."""
    eps, bins, alpha = 4.0, 4, 0.3
    edges = np.arange(1, bins + 1) / bins
    for n in (6, 7, 8):
        try:
            bound = _recomputed(alpha, n + 1, eps, bins)
        except ValueError:
            continue
        worst = max_add_one_log_ratio(lambda d: private_quantile_probabilities(d, alpha, eps, bins, log=True)[1],
                                      edges, n)
        assert worst <= bound + 1e-9


@pytest.mark.parametrize("kwargs, exc, phrase", [
    (dict(mean_privacy=1.0, scale_privacy=None, calibration_epsilon=1.0), TypeError, "pair"),
    (dict(mean_privacy=(0.0, 1e-6), scale_privacy=None, calibration_epsilon=1.0), ValueError, "epsilon"),
    (dict(mean_privacy=(1.0, 1.5), scale_privacy=None, calibration_epsilon=1.0), ValueError, "delta"),
    (dict(mean_privacy=None, scale_privacy=None, calibration_epsilon=-1.0), ValueError, "calibration_epsilon"),
    (dict(mean_privacy=None, scale_privacy=None, calibration_epsilon=1.0, public_n=False), TypeError,
     "needs alpha and n"),
    (dict(mean_privacy=None, scale_privacy=None, calibration_epsilon=1.0, public_n="no"), TypeError, "public_n"),
    (dict(mean_privacy=None, scale_privacy=None, calibration_epsilon=1.0, disjoint="yes"), TypeError, "disjoint"),
])
def test_privacy_account_bad_input(kwargs, exc, phrase):
    with pytest.raises(exc, match=phrase):
        adaptive_privacy_account(**kwargs)


def test_estimator_account_reads_the_trainers():
    X, y = make_heteroscedastic_regression(3000, rng=1)
    est = _estimator().fit(X[:1000], y[:1000]).fit_scale(X[1000:2000], y[1000:2000]).calibrate(X[2000:], y[2000:])
    level = private_quantile_level(0.1, 1000, 2.0, 200)
    assert est.level_ == level and est.n_ == 1000
    acc = est.privacy_
    assert [p.part for p in acc.parts] == ["part 1", "part 2", "calibration"]
    assert acc.parts[2].add_remove[0] == pytest.approx(_recomputed(0.1, 1000, 2.0, 200))   # n=None
    assert acc.add_remove == (2.0, 1e-6)
    assert acc.replace_one == (4.0, pytest.approx((1 + math.exp(2.0)) * 1e-6))
    public = _estimator(n=1000).fit(X[:1000], y[:1000]).fit_scale(X[1000:2000], y[1000:2000])
    assert public.calibrate(X[2000:], y[2000:]).privacy_.parts[2].add_remove == (2.0, 0.0)   # subsample-or-pad
    plain = PrivateNormalizedConformalRegressor(LinearRegression(), None, epsilon=1.0, y_bound=6.0, bins=100)
    plain.fit(X[:1000], y[:1000]).calibrate(X[2000:], y[2000:])
    assert [p.label for p in plain.privacy_.parts] == ["private quantile (tight, M = 100 edges)"]
    assert any("mean model" in p and "treated as public" in p for p in plain.privacy_.public)


@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_calibration_release_is_the_audited_mechanism_on_per_record_scores():
    """The release is the tight private quantile of per-record scores: replacing one calibration record (any
    value, extreme ones included) changes the law of qhat by at most epsilon (exact log-ratio)."""
    X, y = make_heteroscedastic_regression(1300, rng=2)
    est = _estimator(bins=50).fit(X[:500], y[:500]).fit_scale(X[500:1000], y[500:1000])
    Xc, yc = X[1000:], y[1000:].copy()
    scores = normalized_score(yc, est.predict(Xc), est.predict_scale(Xc), 5.0)
    _, logp = private_quantile_probabilities(scores, 0.1, 2.0, 50, log=True, n=300)
    worst = 0.0
    for value in (-1e6, -3.0, 0.0, 0.3, 2.5, 1e6):
        y2 = yc.copy()
        y2[7] = value
        s2 = normalized_score(y2, est.predict(Xc), est.predict_scale(Xc), 5.0)
        _, logq = private_quantile_probabilities(s2, 0.1, 2.0, 50, log=True, n=300)
        worst = max(worst, float(np.max(np.abs(logp - logq))))
    assert worst <= 2.0 + 1e-9
    # and the estimator samples exactly that law: same rng, same draw as private_quantile
    from dpcp_tutorial.quantile import private_quantile
    gen = np.random.default_rng(5)
    gen.integers(2**63)              # the estimator's child seed for the subsampling, drawn for every data set
    assert est.set_params(rng=5).calibrate(Xc, yc).qhat_ == private_quantile(scores, 0.1, 2.0, 50, rng=gen, n=300)


# --------------------------------------------------------------------------- coverage

@pytest.mark.slow
@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_marginal_coverage_monte_carlo(scale):
    """Fresh data per repetition; coverage averaged over a test set per repetition (i.i.d. across repetitions):
    the mean must be >= 1 - alpha within 3 standard errors."""
    alpha, reps, part, n_test = 0.1, 300, 1000, 300
    gen = np.random.default_rng(11 if scale else 12)
    cov = np.empty(reps)
    for r in range(reps):
        X, y = make_heteroscedastic_regression(3 * part + n_test, rng=gen)
        est = _estimator(scale=scale, rng=gen, alpha=alpha)
        est.set_params(mean_estimator=_dp_model(Y_BOUND, rng=gen),
                       scale_estimator=_dp_model(3.0, rng=gen) if scale else None)
        est.fit(X[:part], y[:part]).fit_scale(X[part:2 * part], y[part:2 * part])
        est.calibrate(X[2 * part:3 * part], y[2 * part:3 * part])
        iv = est.predict_interval(X[3 * part:])
        yt = y[3 * part:]
        cov[r] = interval_coverage(yt, iv)
    se = cov.std(ddof=1) / math.sqrt(reps)
    assert cov.mean() >= 1 - alpha - 3 * se, (cov.mean(), se)
    assert cov.mean() < 0.95         # informative, not the whole line


def test_adaptive_intervals_adapt():
    """With enough data the normalised interval is narrower where the noise is small and covers the noisy
    region far better than the constant-width one (the chapter's claim, on fresh data)."""
    X, y = make_heteroscedastic_regression(40_000, rng=3)
    cut = [10_000, 20_000, 30_000]
    results = {}
    for scale in (True, False):
        est = _estimator(scale=scale, rng=4, epsilon=1.0, bins=1000,
                         score_bound=5.0 if scale else 2 * Y_BOUND)
        est.fit(X[:cut[0]], y[:cut[0]]).fit_scale(X[cut[0]:cut[1]], y[cut[0]:cut[1]])
        est.calibrate(X[cut[1]:cut[2]], y[cut[1]:cut[2]])
        iv = est.predict_interval(X[cut[2]:])
        yt, ax = y[cut[2]:], np.abs(X[cut[2]:, 0])
        inside = (iv[:, 0] <= yt) & (yt <= iv[:, 1])
        width = iv[:, 1] - iv[:, 0]
        results[scale] = (inside[ax > 2.5].mean(), width[ax < 0.5].mean())
    assert results[True][0] > results[False][0] + 0.05
    assert results[True][1] < 0.8 * results[False][1]


# --------------------------------------------------------------------------- estimator conventions

@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_determinism_and_clone():
    X, y = make_heteroscedastic_regression(1500, rng=5)

    def run(est):
        est.fit(X[:500], y[:500]).fit_scale(X[500:1000], y[500:1000]).calibrate(X[1000:], y[1000:])
        return est.qhat_, est.predict_interval(X[:20])

    a = _estimator(rng=3)
    q1, iv1 = run(_estimator(rng=3))
    q2, iv2 = run(clone(a))
    assert q1 == q2
    np.testing.assert_array_equal(iv1, iv2)
    params = a.get_params()
    assert params["rng"] == 3 and params["sigma_min"] == 0.05 and params["scale_target"] == "abs"
    assert "scale_estimator__dpridgeregression__epsilon" in params
    gen_a, gen_b = np.random.default_rng(9), np.random.default_rng(9)
    assert run(_estimator(rng=gen_a))[0] == run(_estimator(rng=gen_b))[0]


def test_log_target_and_prefit():
    X, y = make_heteroscedastic_regression(3000, rng=6)
    est = _estimator(scale_target="log").fit(X[:1000], y[:1000]).fit_scale(X[1000:2000], y[1000:2000])
    s = est.predict_scale(X[:50])
    assert np.all(s >= 0.05) and np.all(np.isfinite(s))
    pre = PrivateNormalizedConformalRegressor(est.mean_estimator_, est.scale_estimator_, epsilon=2.0,
                                              y_bound=Y_BOUND, sigma_min=0.05, score_bound=5.0, bins=200,
                                              scale_target="log", prefit=True, rng=1).calibrate(X[2000:], y[2000:])
    assert 0 < pre.qhat_ < 1
    with pytest.raises(ValueError, match="prefit=True"):
        pre.fit(X, y)


@pytest.mark.parametrize("params, step, exc, phrase", [
    (dict(sigma_min=0.0), "fit", ValueError, "sigma_min"),
    (dict(y_bound=-1.0), "fit", ValueError, "y_bound"),
    (dict(score_bound="5"), "fit", TypeError, "score_bound"),
    (dict(scale_target="sqrt"), "fit", ValueError, "scale_target"),
    (dict(alpha=1.5), "calibrate", ValueError, "alpha"),
    (dict(epsilon=0.0), "calibrate", ValueError, "epsilon"),
    (dict(bins=1), "calibrate", ValueError, "bins"),
    (dict(n=10), "calibrate", ValueError, "at least N="),
    (dict(prefit="no"), "fit", TypeError, "prefit"),
])
def test_bad_settings(params, step, exc, phrase):
    X, y = make_heteroscedastic_regression(900, rng=7)
    est = _estimator(**params)
    with pytest.raises(exc, match=phrase):
        est.fit(X[:300], y[:300])
        est.fit_scale(X[300:600], y[300:600])
        est.calibrate(X[600:], y[600:])
    del step


def test_order_of_steps_is_enforced():
    X, y = make_heteroscedastic_regression(900, rng=8)
    est = _estimator()
    with pytest.raises(ValueError, match="fit\\(X1, y1\\)"):
        est.fit_scale(X, y)
    est.fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="fit_scale"):
        est.calibrate(X[600:], y[600:])
    with pytest.raises(ValueError, match="not calibrated"):
        est.fit_scale(X[300:600], y[300:600]).predict_interval(X[:3])
    with pytest.raises(ValueError, match="different numbers"):
        est.calibrate(X[600:], y[600:-1])


def test_an_unusable_response_gets_the_worst_score_and_never_stops_a_release():
    """A missing, non-finite or huge response (NaN, inf, 1e300, None, pd.NA) is read record by record: the
    release is that of the same data with the worst score for the record, never an error or a warning."""
    pd = pytest.importorskip("pandas")
    X, y = make_heteroscedastic_regression(3000, rng=6)
    est = _estimator(n=1000, scale_target="log").fit(X[:1000], y[:1000]).fit_scale(X[1000:2000], y[1000:2000])
    X, yc = X[1000:], y[2000:]
    far = yc.copy()
    far[:5] = 1e90                  # in the domain, and far from every interval: the worst score
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ReleaseWarning)           # depends on the release only
        want = est.calibrate(X[1000:], far).qhat_
        assert want < 1.0 and est.calibrate(X[1000:], yc).qhat_ != want       # the worst score moved it
        for bad in (np.nan, np.inf, 1e300):
            odd = yc.copy()
            odd[:5] = bad
            assert est.calibrate(X[1000:], odd).qhat_ == want
        for bad in (None, pd.NA):
            odd = yc.astype(object)
            odd[:5] = bad
            assert est.calibrate(X[1000:], odd).qhat_ == want
        assert est.calibrate(X[1000:], pd.Series(yc).astype("Float64").mask(np.arange(1000) < 5)).qhat_ == want
    with pytest.raises(TypeError, match="strings"):                 # the dtype is the schema: refused
        est.calibrate(X[1000:], yc.astype(str))


# --------------------------------------------------------------------------- private CQR

from dpcp_tutorial.adaptive import (  # noqa: E402
    PrivateConformalizedQuantileRegressor,
    cqr_interval,
    cqr_score,
)
from dpcp_tutorial.training import DPSGDQuantileRegressor  # noqa: E402


def test_cqr_score_is_bounded_and_interval_is_its_sublevel_set():
    gen = np.random.default_rng(20)
    y = gen.normal(size=3000) * 20
    lo = gen.normal(size=3000) - 1
    hi = lo + gen.uniform(0, 3, size=3000)
    s = cqr_score(y, lo, hi, 0.5)
    assert s.min() >= 0 and s.max() <= 1 and np.any(s == 0) and np.any(s == 1)
    for q in (0.0, 0.2, 0.5, 0.77, 0.999, 1.0):
        iv = cqr_interval(lo, hi, q, 0.5)
        inside = (iv[:, 0] <= y) & (y <= iv[:, 1])
        np.testing.assert_array_equal(inside, s <= q)
    np.testing.assert_allclose(cqr_interval([0.0], [1.0], 0.75, 2.0), [[-1.0, 2.0]])
    np.testing.assert_allclose(cqr_interval([0.0], [1.0], 0.25, 2.0), [[1.0, 0.0]])   # empty set
    with pytest.raises(ValueError, match="score_bound"):
        cqr_score([1.0], [0.0], [2.0], -1.0)


def test_dp_quantile_regressor_learns_quantiles_and_reports_its_budget():
    gen = np.random.default_rng(21)
    X = gen.uniform(0, 1, size=(20000, 1))
    y = 2 * X[:, 0] + gen.exponential(size=20000) * (0.5 + X[:, 0])
    est = DPSGDQuantileRegressor(quantile=0.9, noise_multiplier=0.0, sampling_rate=0.05, steps=2000,
                                 learning_rate=0.5, expected_batch_size=1000.0, x_bound=1.0, rng=1).fit(X, y)
    frac = np.mean(y <= est.predict(X))
    assert abs(frac - 0.9) < 0.03
    dp = DPSGDQuantileRegressor(quantile=0.9, epsilon=1.0, expected_batch_size=1000.0, rng=2, x_bound=1.0).fit(X, y)
    assert dp.privacy_.add_remove[0] <= 1.0 + 1e-6 and dp.privacy_.add_remove[1] == 1e-6
    with pytest.raises(ValueError, match="quantile"):
        DPSGDQuantileRegressor(quantile=1.0, x_bound=1.0).fit(X, y)


def _cqr(gen, alpha=0.1):
    def q(tau):
        return make_pipeline(FunctionTransformer(hats), DPSGDQuantileRegressor(
            quantile=tau, noise_multiplier=2.0, sampling_rate=0.05, steps=200, learning_rate=5.0,
            expected_batch_size=50.0, fit_intercept=False, rng=gen, x_bound=1.0))
    return PrivateConformalizedQuantileRegressor(q(alpha / 2), q(1 - alpha / 2), alpha=alpha, epsilon=2.0,
                                                 score_bound=5.0, bins=200, rng=gen)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpcp_tutorial.accounting.ReleaseWarning")
def test_cqr_marginal_coverage_monte_carlo():
    alpha, reps, part, n_test = 0.1, 200, 1000, 300
    gen = np.random.default_rng(22)
    cov = np.empty(reps)
    for r in range(reps):
        X, y = make_heteroscedastic_regression(3 * part + n_test, rng=gen)
        est = _cqr(gen, alpha)
        est.fit_lower(X[:part], y[:part]).fit_upper(X[part:2 * part], y[part:2 * part])
        est.calibrate(X[2 * part:3 * part], y[2 * part:3 * part])
        iv = est.predict_interval(X[3 * part:])
        yt = y[3 * part:]
        cov[r] = interval_coverage(yt, iv)
    se = cov.std(ddof=1) / math.sqrt(reps)
    assert cov.mean() >= 1 - alpha - 3 * se, (cov.mean(), se)
    assert cov.mean() < 0.97


def test_cqr_account_determinism_and_errors():
    X, y = make_heteroscedastic_regression(3000, rng=23)

    def run(seed):
        est = _cqr(np.random.default_rng(seed))
        return est.fit_lower(X[:1000], y[:1000]).fit_upper(X[1000:2000], y[1000:2000]).calibrate(X[2000:], y[2000:])

    a, b = run(5), run(5)
    assert a.qhat_ == b.qhat_
    np.testing.assert_array_equal(a.predict_interval(X[:10]), b.predict_interval(X[:10]))
    eps_lo = a.lower_estimator_[-1].privacy_.epsilon
    eps_up = a.upper_estimator_[-1].privacy_.epsilon
    acc = a.privacy_
    assert acc.add_remove[0] == pytest.approx(max(eps_lo, eps_up, _recomputed(0.1, 1000, 2.0, 200)))
    assert len({p.part for p in acc.parts}) == 3
    shared = _cqr(np.random.default_rng(5)).fit(X[:1000], y[:1000]).calibrate(X[2000:], y[2000:]).privacy_
    assert shared.parts[0].part == shared.parts[1].part == "model part"      # both models read one part
    assert shared.add_remove[0] == pytest.approx(max(eps_lo + eps_up, _recomputed(0.1, 1000, 2.0, 200)))
    assert "lower_estimator__dpsgdquantileregressor__quantile" in clone(a).get_params()
    fresh = _cqr(np.random.default_rng(0))
    with pytest.raises(ValueError, match="not fitted"):
        fresh.calibrate(X, y)
    with pytest.raises(ValueError, match="not calibrated"):
        fresh.fit(X[:100], y[:100]).predict_interval(X[:3])
    with pytest.raises(ValueError, match="at least N="):
        fresh.set_params(n=5).calibrate(X[:100], y[:100])


def test_account_reads_a_bare_dp_sgd_trainer():
    """A DP-SGD trainer has an integer ``steps`` attribute: it must not be mistaken for a pipeline."""
    X, y = make_heteroscedastic_regression(3000, rng=24)

    def q(tau):
        return DPSGDQuantileRegressor(quantile=tau, noise_multiplier=2.0, steps=50, expected_batch_size=50.0,
                                      x_bound=3.0, rng=3)

    est = PrivateConformalizedQuantileRegressor(q(0.05), q(0.95), epsilon=2.0, score_bound=5.0, bins=200, rng=4)
    est.fit(X[:1000], y[:1000]).calibrate(X[1000:], y[1000:])
    eps_q = est.lower_estimator_.privacy_.epsilon
    assert est.privacy_.add_remove[0] == pytest.approx(max(2 * eps_q, _recomputed(0.1, 2000, 2.0, 200)))


# --------------------------------------------------------------------------- neighbours alike


class _PublicModel(RegressorMixin, BaseEstimator):
    """A public, already fitted model: ``predict`` returns a fixed function of x (no training data)."""

    def __init__(self, fn=None):
        self.fn = fn
        self.fitted_ = True

    def fit(self, X, y):
        return self

    def predict(self, X):
        return self.fn(np.asarray(X, dtype=float))


def _release_both(make, X, y, i):
    """Calibrate on D and on D minus record i; both must release (no error, no warning) and return qhat."""
    out = []
    for keep in (np.ones(len(y), bool), np.arange(len(y)) != i):
        est = make()
        with warnings.catch_warnings():
            warnings.simplefilter("error")                      # an overflow warning would be a release too
            warnings.simplefilter("ignore", ReleaseWarning)     # (a trivial release is allowed, on both sides)
            est.calibrate(X[keep], y[keep])
        assert 0.0 <= est.qhat_ <= 1.0 and np.isfinite(est.privacy_.replace_one[0])
        out.append(est)
    return out


def test_a_huge_log_scale_on_one_record_does_not_raise():
    """Under a public log-scale model, one record at x = 300 has scale e^300 (beyond the 1e100 domain of data):
    the scale is a model output, clipped to the public cap, so the data set and its neighbour both release."""
    X, y = make_heteroscedastic_regression(600, rng=30)
    X[7, 0] = 300.0
    make = lambda: PrivateNormalizedConformalRegressor(
        _PublicModel(lambda Z: np.zeros(len(Z))), _PublicModel(lambda Z: Z[:, 0]), alpha=0.1, epsilon=2.0,
        y_bound=Y_BOUND, sigma_min=0.05, score_bound=5.0, bins=100, scale_target="log", n=600, prefit=True, rng=0)
    with_record, without = _release_both(make, X, y, 7)
    assert np.isfinite(with_record.predict_scale(X[7:8])).all()


def test_tiny_public_bounds_never_give_nan_scores():
    """sigma_min = score_bound = 1e-200 and a response equal to its prediction: |y - mu| / (K sigma) would be 0/0
    if K sigma underflowed; the score is computed so that it cannot fail."""
    X, y = make_heteroscedastic_regression(400, rng=31)
    y[5] = 0.0                                                  # equal to the public model's prediction
    make = lambda: PrivateNormalizedConformalRegressor(
        _PublicModel(lambda Z: np.zeros(len(Z))), _PublicModel(lambda Z: np.zeros(len(Z))), alpha=0.1, epsilon=2.0,
        y_bound=Y_BOUND, sigma_min=1e-200, score_bound=1e-200, bins=100, n=400, prefit=True, rng=0)
    _release_both(make, X, y, 5)
    s = normalized_score([0.0, 1.0], [0.0, 0.0], [1e-200, 1e-200], 1e-200)
    assert s.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("output", [1e300, -1e300, np.inf, np.nan])
def test_cqr_extreme_model_outputs_warn_on_neither_neighbour(output):
    """A quantile model's output on one private record (1e300, inf, NaN) made `lower - y` overflow and warn for
    that data set only; outputs are clipped to +-1e100 first, so both neighbours release silently."""
    X, y = make_heteroscedastic_regression(500, rng=32)
    X[3, 0] = 99.0

    def extreme(shift):
        return lambda Z: np.where(Z[:, 0] == 99.0, output, shift)

    make = lambda: PrivateConformalizedQuantileRegressor(
        _PublicModel(extreme(-2.0)), _PublicModel(extreme(2.0)), alpha=0.1, epsilon=2.0, score_bound=1e-300,
        bins=100, n=500, prefit=True, rng=0)
    _release_both(make, X, y, 3)


@pytest.mark.parametrize("bad", ["2-D y", "1-D X"])
def test_shape_errors_quote_no_record_count(bad):
    X, y = make_heteroscedastic_regression(300, rng=33)
    est = PrivateNormalizedConformalRegressor(_PublicModel(lambda Z: np.zeros(len(Z))), None, y_bound=Y_BOUND,
                                              bins=100, prefit=True)
    args = (X, y[:, None]) if bad == "2-D y" else (X[:, 0], y)
    with pytest.raises(ValueError) as err:
        est.calibrate(*args)
    assert "300" not in str(err.value)
    cqr = PrivateConformalizedQuantileRegressor(_PublicModel(lambda Z: Z[:, 0] - 1), _PublicModel(lambda Z: Z[:, 0] + 1),
                                                score_bound=2.0, prefit=True)
    with pytest.raises(ValueError) as err:
        cqr.calibrate(*args)
    assert "300" not in str(err.value)


def test_adaptive_estimators_forward_the_opendp_sampler():
    from dpcp_tutorial.adaptive import DPSGDQuantileRegressor, PrivateConformalizedQuantileRegressor

    X, y = make_heteroscedastic_regression(3000, rng=5)
    plain = PrivateNormalizedConformalRegressor(LinearRegression(), None, epsilon=2.0, y_bound=6.0, bins=100,
                                                sampler="opendp")
    plain.fit(X[:1000], y[:1000]).calibrate(X[2000:], y[2000:])
    assert 0.0 < plain.qhat_ < 1.0
    assert plain.privacy_.parts[-1].label == "private quantile (tight, M = 100 edges, OpenDP sampler)"
    with pytest.raises(ValueError, match="cannot be seeded"):
        PrivateNormalizedConformalRegressor(LinearRegression(), None, y_bound=6.0, sampler="opendp", rng=3) \
            .fit(X[:1000], y[:1000]).calibrate(X[2000:], y[2000:])
    quantiles = [DPSGDQuantileRegressor(quantile=q, steps=20, x_bound=3.0, expected_batch_size=50.0, rng=1)
                 for q in (0.1, 0.9)]
    cqr = PrivateConformalizedQuantileRegressor(*quantiles, epsilon=2.0, score_bound=6.0, bins=100,
                                                sampler="opendp")
    cqr.fit_lower(X[:1000], y[:1000]).fit_upper(X[1000:2000], y[1000:2000]).calibrate(X[2000:], y[2000:])
    assert 0.0 < cqr.qhat_ <= 1.0
    with pytest.raises(TypeError, match="sampler must be one of"):
        PrivateConformalizedQuantileRegressor(*quantiles, score_bound=6.0, sampler=None) \
            .fit(X[:1000], y[:1000]).calibrate(X[2000:], y[2000:])


def test_adaptive_estimators_name_their_models_and_check_unused_settings():
    X, y = make_heteroscedastic_regression(600, rng=6)
    with pytest.raises(TypeError, match="mean_estimator must be an estimator instance, got the class"):
        PrivateNormalizedConformalRegressor(LinearRegression, None, y_bound=6.0).fit(X, y)
    with pytest.raises(TypeError, match="scale_estimator must be a scikit-learn estimator"):
        PrivateNormalizedConformalRegressor(LinearRegression(), "abc", y_bound=6.0, sigma_min=0.1).fit(X, y)
    with pytest.raises(TypeError, match="scale_target must be one of"):
        PrivateNormalizedConformalRegressor(LinearRegression(), None, y_bound=6.0, scale_target=["abs"]).fit(X, y)
    # alpha and n are validated even when public_n=True does not use them
    with pytest.raises(ValueError, match="alpha"):
        adaptive_privacy_account(None, None, 1.0, alpha=1.5)
    with pytest.raises(TypeError, match="n must be an integer"):
        adaptive_privacy_account(None, None, 1.0, n=2.0)
