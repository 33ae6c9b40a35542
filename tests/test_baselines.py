"""Tests for dpcp_tutorial.baselines and the contamination model they are compared on."""

import numpy as np
import pytest

import dpcp_tutorial.baselines as baselines_module
from dpcp_tutorial import (
    coinpress_mean,
    make_cauchy,
    coordinatewise_private_median,
    gumbel_max_sample,
    make_contaminated_gaussian,
    private_quantile_probabilities,
    pure_dp_to_zcdp,
    zcdp_to_approx_dp,
)


# --------------------------------------------------------------------------- the contamination model

@pytest.mark.parametrize("d", [2, 10, 100])
def test_sample_mean_error_under_contamination_is_1_25_sqrt_d(d):
    """0.75 N(0, I) + 0.25 N(5 1, I) with deterministic labels: mean = 1.25 * 1 + N(0, I/n), so
    ||mean||^2 has expectation 1.5625 d + d/n and standard deviation sqrt(6.25 d/n + 2 d/n^2); the norm's
    SD is about that divided by 2 * 1.25 sqrt(d). Each of 5 data sets must be within 5 SD."""
    n = 10_000
    target = np.sqrt(1.5625 * d + d / n)
    sd = np.sqrt(6.25 * d / n + 2 * d / n ** 2) / (2 * target)
    for seed in range(5):
        err = np.linalg.norm(make_contaminated_gaussian(n, d, rng=seed).mean(axis=0))
        assert abs(err - target) < 5 * sd, (err, target, sd)
    assert target == pytest.approx(1.25 * np.sqrt(d), rel=1e-4)


def test_contamination_labels_are_deterministic():
    clean = make_contaminated_gaussian(400, 3, fraction=0.0, rng=7)
    dirty = make_contaminated_gaussian(400, 3, rng=7)
    np.testing.assert_allclose(dirty[:100] - 5.0, clean[:100], rtol=0, atol=1e-14)   # the first quarter is shifted
    np.testing.assert_array_equal(dirty[100:], clean[100:])


def test_cauchy_marginals_centred_at_zero():
    """The sample median of n = 10^4 standard Cauchy values has SE pi / (2 sqrt n) = 0.016; allow 5 SE."""
    x = make_cauchy(10_000, 4, rng=8)
    assert x.shape == (10_000, 4)
    np.testing.assert_array_equal(x, make_cauchy(10_000, 4, rng=8))
    assert np.all(np.abs(np.median(x, axis=0)) < 5 * np.pi / (2 * 100))
    assert np.abs(x).max() > 1e3                                          # heavy tails: no moments


# --------------------------------------------------------------------------- coordinate-wise median

def _coordinate_logp(data, epsilon, bounds, bins):
    n, d = data.shape
    lo, hi = bounds
    scaled = np.clip((data - lo) / (hi - lo), 0, 1)
    level = 0.5 + 2 * d / (n * epsilon)
    return [private_quantile_probabilities(scaled[:, k], level, epsilon / d, bins, log=True, variant="original")
            for k in range(d)]


def test_coordinatewise_median_exact_privacy_audit():
    """The output vector's log-probability is the sum over coordinates of exact quantile log-laws; the
    worst log-ratio over all outputs is the sum of the per-coordinate worst cases and must be <= epsilon."""
    rng = np.random.default_rng(0)
    d, n, eps, bounds, bins = 3, 60, 1.0, (-4.0, 4.0), 50
    for trial in range(4):
        data = rng.standard_normal((n, d))
        base = _coordinate_logp(data, eps, bounds, bins)
        for new in (np.full(d, 100.0), -data[0], np.zeros(d), rng.standard_normal(d)):
            other = data.copy()
            other[int(rng.integers(n))] = new
            worst = sum(np.max(np.abs(a[1] - b[1])) for a, b in zip(base, _coordinate_logp(other, eps, bounds, bins)))
            assert worst <= eps + 1e-9
            assert worst > 0.1 * eps


def test_coordinatewise_median_samples_that_law():
    """Same seed: each coordinate is the Gumbel-max draw from its exact law, in coordinate order."""
    rng = np.random.default_rng(1)
    data = rng.standard_normal((80, 4)) + 1.0
    bounds, bins = (-5.0, 5.0), 40
    laws = _coordinate_logp(data, 2.0, bounds, bins)
    for seed in range(10):
        got = coordinatewise_private_median(data, 2.0, bounds, bins=bins, rng=seed)
        gen = np.random.default_rng(seed)
        want = [bounds[0] + 10.0 * edges[gumbel_max_sample(logp, gen)] for edges, logp in laws]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_coordinatewise_median_accuracy_and_level():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((5000, 3)) + np.array([1.0, -2.0, 0.0])
    est = coordinatewise_private_median(data, 5.0, (-10, 10), bins=2000, rng=3)
    np.testing.assert_allclose(est, [1.0, -2.0, 0.0], atol=0.1)
    # the law peaks at the sample median (level exactly 1/2 after the shift)
    edges, logp = _coordinate_logp(data[:, :1], 1e3, (-10, 10), 2000)[0]
    assert abs(-10 + 20 * edges[np.argmax(logp)] - np.median(data[:, 0])) <= 20 / 2000 + 1e-12


def test_coordinatewise_median_bad_input():
    data = np.random.default_rng(0).standard_normal((50, 2))
    with pytest.raises(ValueError, match="upper bound must exceed"):
        coordinatewise_private_median(data, 1.0, (1.0, -1.0))
    with pytest.raises(ValueError, match="must exceed 4"):
        coordinatewise_private_median(data, 0.1, (-3, 3))
    with pytest.raises(TypeError, match="pair"):
        coordinatewise_private_median(data, 1.0, 3.0)
    with pytest.raises(ValueError, match="epsilon"):
        coordinatewise_private_median(data, 0.0, (-3, 3))
    with pytest.raises(ValueError, match="NaN"):
        coordinatewise_private_median(np.r_[data, [[np.nan, 0]]], 1.0, (-3, 3))


# --------------------------------------------------------------------------- CoinPress

def test_clipped_mean_sensitivity_is_two_r_over_n():
    """Audit of the Gaussian mechanism's input: on random and adversarial neighbours the clipped mean
    moves by at most 2R/n, and the noise scale then gives exactly rho_t-zCDP: (2R/n)^2 / (2 sigma^2) = rho_t."""
    rng = np.random.default_rng(4)
    n, d = 50, 5
    worst = 0.0
    for _ in range(20):
        data = rng.standard_normal((n, d)) * 3
        centre, clip = rng.standard_normal(d), float(rng.uniform(0.5, 4))
        base = baselines_module._clipped_mean(data, centre, clip)
        for new in (centre + 1e6, centre - 1e6, centre, rng.standard_normal(d)):
            other = data.copy()
            i = int(np.argmax(np.linalg.norm(data - centre, axis=1)))
            other[i] = new
            worst = max(worst, np.linalg.norm(baselines_module._clipped_mean(other, centre, clip) - base) / (2 * clip / n))
    assert worst <= 1 + 1e-12 and worst > 0.9
    _, _, clip, sigma = baselines_module._coinpress_step(rng.standard_normal((n, d)), np.zeros(d), 3.0, 0.7, 2.0, rng)
    assert (2 * clip / n) ** 2 / (2 * sigma ** 2) == pytest.approx(0.7)


def test_coinpress_budget_split(monkeypatch):
    spent = []
    real = baselines_module._coinpress_step

    def spy(data, center, radius, rho, gamma, rng):
        spent.append(rho)
        return real(data, center, radius, rho, gamma, rng)

    monkeypatch.setattr(baselines_module, "_coinpress_step", spy)
    data = np.random.default_rng(5).standard_normal((100, 2))
    coinpress_mean(data, 12.0, radius=10.0, rng=0)
    np.testing.assert_allclose(spent, [1.0, 1.0, 1.0, 9.0])        # [1/12, 1/12, 1/12, 3/4] * rho
    spent.clear()
    coinpress_mean(data, 2.0, radius=10.0, n_iter=2, split=[0.5, 0.5], rng=0)
    np.testing.assert_allclose(spent, [1.0, 1.0])


def test_coinpress_accuracy_and_reproducibility():
    rng = np.random.default_rng(6)
    mu = np.linspace(-3, 3, 10)
    data = rng.standard_normal((5000, 10)) + mu
    est = coinpress_mean(data, 0.5, radius=10 * np.sqrt(10), rng=7)
    assert np.linalg.norm(est - mu) < 0.15                  # sampling error sqrt(d/n) = 0.045 plus noise
    np.testing.assert_array_equal(est, coinpress_mean(data, 0.5, radius=10 * np.sqrt(10), rng=7))
    far = coinpress_mean(data + 40.0, 0.5, radius=10 * np.sqrt(10) + 40 * np.sqrt(10), center=0.0, rng=7)
    assert np.linalg.norm(far - mu - 40.0) < 0.3             # recovers from a loose initial ball


def test_coinpress_bad_input():
    data = np.random.default_rng(0).standard_normal((50, 2))
    with pytest.raises(ValueError, match="rho"):
        coinpress_mean(data, 0.0, radius=1.0)
    with pytest.raises(ValueError, match="radius"):
        coinpress_mean(data, 1.0, radius=-1.0)
    with pytest.raises(ValueError, match="split"):
        coinpress_mean(data, 1.0, radius=1.0, split=[0.5, 0.6, 0.1, 0.1])
    with pytest.raises(ValueError, match="center"):
        coinpress_mean(data, 1.0, radius=1.0, center=np.zeros(3))
    with pytest.raises(ValueError, match="at least 2"):
        coinpress_mean(data[:1], 1.0, radius=1.0)


def test_privacy_conversions():
    assert pure_dp_to_zcdp(10.0, "bun-steinke") == 50.0
    assert zcdp_to_approx_dp(50.0, 1e-5) == pytest.approx(50 + 2 * np.sqrt(50 * np.log(1e5)))
    assert 97 < zcdp_to_approx_dp(50.0, 1e-5) < 99


# --------------------------------------------------------------------------- pure DP -> zCDP

EPS_GRID = np.geomspace(1e-6, 1e3, 400)
# orders lambda = 1 + t: very close to 1 (where randomised response attains the sup), then up to 1e4
ORDERS = 1.0 + np.concatenate([np.geomspace(1e-10, 1.0, 300), np.linspace(1.0, 100.0, 300)[1:],
                               np.geomspace(100.0, 1e4, 50)[1:]])


def _renyi_two_point(p_laws, q_laws, order):
    """D_lambda(P || Q) of laws on a finite set from the definition, (1/t) log E_P[(P/Q)^t] with t = lambda - 1:
    as log1p(sum_i P_i expm1(t log(P_i/Q_i))) / t for t <= 1 (accurate for orders close to 1), by log-sum-exp
    above (no overflow)."""
    from scipy.special import logsumexp

    t = (order - 1.0)[:, None]
    log_ratio = np.log(p_laws) - np.log(q_laws)
    near = np.log1p(np.sum(p_laws[None, :] * np.expm1(np.minimum(t, 1.0) * log_ratio[None, :]), axis=1))
    far = logsumexp(np.log(p_laws)[None, :] + t * log_ratio[None, :], axis=1)
    return np.where(t[:, 0] <= 1.0, near, far) / t[:, 0]


def test_pure_dp_to_zcdp_exact_values():
    import math

    assert pure_dp_to_zcdp(10.0) == 10.0 * math.tanh(5.0)              # tight is the default
    assert pure_dp_to_zcdp(10.0, conversion="tight") == pytest.approx(9.999092042625952, rel=1e-15)
    assert pure_dp_to_zcdp(1.0) == pytest.approx((math.e - 1) / (math.e + 1), rel=1e-15)
    assert pure_dp_to_zcdp(2.0) == pytest.approx(2.0 * (math.e ** 2 - 1) / (math.e ** 2 + 1), rel=1e-15)
    assert pure_dp_to_zcdp(1.0, "bun-steinke") == 0.5 and pure_dp_to_zcdp(3, "bun-steinke") == 4.5
    # the factor eps / (2 tanh(eps/2)) between the two: 1.0008 at 0.1, 1.08 at 1, 1.66 at 3, 5.0 at 10
    factors = {e: pure_dp_to_zcdp(e, "bun-steinke") / pure_dp_to_zcdp(e) for e in (0.1, 1.0, 3.0, 10.0)}
    assert [round(factors[0.1], 4), round(factors[1.0], 2), round(factors[3.0], 2), round(factors[10.0], 1)] == [
        1.0008, 1.08, 1.66, 5.0]
    # the package's one implementation: chapter 16's runner calls it
    from dpcp_tutorial.experiments.calibrator_grid import zcdp_of_pure_dp
    assert all(zcdp_of_pure_dp(e) == pure_dp_to_zcdp(e) for e in (0.1, 1.0, 10.0))


def test_tight_conversion_is_below_bun_steinke_monotone_and_equal_to_first_order():
    tight = np.array([pure_dp_to_zcdp(e) for e in EPS_GRID])
    bs = np.array([pure_dp_to_zcdp(e, "bun-steinke") for e in EPS_GRID])
    assert np.all(tight <= bs) and np.all(tight > 0)
    assert np.all(np.diff(tight) > 0) and np.all(np.diff(bs) > 0)       # both increase with epsilon
    small = EPS_GRID < 1e-3
    assert np.allclose(tight[small] / bs[small], 1.0, rtol=1e-6)        # eps^2/2 is the first-order term
    big = EPS_GRID > 100
    assert np.allclose(tight[big], EPS_GRID[big], rtol=1e-12)           # tanh -> 1: rho ~ eps


@pytest.mark.parametrize("epsilon", [1e-3, 0.1, 0.5, 1.0, 3.0, 10.0, 30.0])
def test_the_tight_rho_holds_for_and_is_attained_by_randomised_response(epsilon):
    """The worst pair of a 2-point eps-DP mechanism (randomised response) has D_lambda <= rho lambda for
    every order, with equality approached as lambda -> 1; eps^2/2 is far from attained at large eps."""
    q = 1 / (1 + np.exp(epsilon))                  # the other answer's probability; p = 1 - q
    p = 1 - q
    P, Q = np.array([p, q]), np.array([q, p])
    assert abs(np.log(P / Q)).max() == pytest.approx(epsilon, rel=1e-12)   # exactly eps-DP
    rho = pure_dp_to_zcdp(epsilon)
    ratio = np.concatenate([_renyi_two_point(P, Q, ORDERS), _renyi_two_point(Q, P, ORDERS)]) / np.tile(ORDERS, 2)
    assert ratio.max() <= rho * (1 + 1e-9)
    assert ratio.max() >= rho * (1 - 1e-6)                                # attained at the edge lambda -> 1
    kl = p * np.log(p / q) + q * np.log(q / p)
    assert kl == pytest.approx(rho, rel=1e-9)
    if epsilon >= 3:
        assert ratio.max() < 0.7 * pure_dp_to_zcdp(epsilon, "bun-steinke")
    # every other 2-point eps-DP pair is below it too (the convexity argument)
    for a in np.linspace(0.01, 0.99, 25):
        b = a * np.exp(np.linspace(-epsilon, epsilon, 9))
        b = b[b < 1]
        for bb in b[np.abs(np.log((1 - b) / (1 - a))) <= epsilon]:      # both ratios within e^(+-eps)
            d = _renyi_two_point(np.array([a, 1 - a]), np.array([bb, 1 - bb]), ORDERS[::7])
            assert np.all(d <= rho * ORDERS[::7] * (1 + 1e-9) + 1e-15)


@pytest.mark.parametrize("bad, error", [(0.0, ValueError), (-1.0, ValueError), (float("inf"), ValueError),
                                        (float("nan"), ValueError), ("1.0", TypeError), (True, TypeError),
                                        (1 + 0j, TypeError), (None, TypeError)])
def test_pure_dp_to_zcdp_refuses_bad_budgets(bad, error):
    with pytest.raises(error, match="epsilon"):
        pure_dp_to_zcdp(bad)


@pytest.mark.parametrize("bad, error", [("eps^2/2", ValueError), ("Tight", ValueError), (None, TypeError),
                                        (1, TypeError)])
def test_pure_dp_to_zcdp_refuses_unknown_conversions(bad, error):
    with pytest.raises(error, match="conversion.*tight.*bun-steinke"):
        pure_dp_to_zcdp(1.0, conversion=bad)
