"""OpenDP's exact samplers against NumPy's: same release laws.

``sampler="opendp"`` is offered where OpenDP's exact samplers produce the law of
the NumPy path: the Laplace mechanism, the exponential mechanism, the private
quantile (on integer utilities, level on the grid A / 2**32), the coordinate-wise
median, CoinPress and the peers' calibrators. OpenDP's samplers cannot be seeded,
so every law test here allows a false alarm with probability at most 1e-6:

* continuous laws: the Dvoretzky-Kiefer-Wolfowitz bound,
  ``P(sup |F_n - F| > t) <= 2 exp(-2 n t^2)``, so the tolerance is
  ``t = sqrt(log(2 / 1e-6) / (2 n))`` for ``n`` draws;
* laws on finitely many outputs: every count within ``5.33`` binomial standard
  deviations (two-sided 1e-7 per cell) and the chi-square p-value above 1e-6;
* two samplers of the same release: Pearson's two-sample chi-square, p > 1e-6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpcp_tutorial as dp
from dpcp_tutorial._mechanism_core import opendp_additive, opendp_additive_measurement, opendp_noisy_max_measurement

FALSE_ALARM = 1e-6
Z = stats.norm.isf(FALSE_ALARM / 20)      # per-cell bound for up to 10 cells, two-sided


def _dkw(n: int) -> float:
    return math.sqrt(math.log(2.0 / FALSE_ALARM) / (2.0 * n))


def _check_finite_law(draws, support, probs):
    draws = np.asarray(draws)
    counts = np.array([np.sum(draws == s) for s in support])
    n = counts.sum()
    assert n == len(draws), "a draw outside the support"
    se = np.sqrt(n * probs * (1.0 - probs))
    assert np.all(np.abs(counts - n * probs) <= Z * se + 1e-9), (counts, n * probs)
    keep = n * probs >= 5
    obs = np.r_[counts[keep], counts[~keep].sum()]
    exp = np.r_[n * probs[keep], n * probs[~keep].sum()]
    if exp[-1] < 1e-9:
        obs, exp = obs[:-1], exp[:-1]
    if obs.size > 1:
        assert stats.chisquare(obs, exp).pvalue > FALSE_ALARM


def _two_sample(a, b):
    values = np.union1d(a, b)
    table = np.array([[np.sum(np.asarray(a) == v) for v in values], [np.sum(np.asarray(b) == v) for v in values]])
    table = table[:, table.sum(axis=0) >= 5]
    if table.shape[1] > 1:
        assert stats.chi2_contingency(table).pvalue > FALSE_ALARM


# --------------------------------------------------------------------------- additive noise

def test_laplace_mechanism_opendp_has_the_laplace_law_and_opendps_map_is_epsilon():
    b = dp.laplace_scale(2.0, 0.5)                 # sensitivity 2, epsilon 0.5: scale 4
    n = 3000
    noise = dp.laplace_mechanism(np.zeros(n), 2.0, 0.5, sampler="opendp")
    assert stats.kstest(noise, stats.laplace(scale=b).cdf).statistic <= _dkw(n)
    ours = dp.laplace_mechanism(np.zeros(n), 2.0, 0.5, rng=1)
    assert stats.kstest(ours, stats.laplace(scale=b).cdf).statistic <= _dkw(n)
    scalar = np.array([dp.laplace_mechanism(3.0, 2.0, 0.5, sampler="opendp") for _ in range(300)]) - 3.0
    assert stats.kstest(scalar, stats.laplace(scale=b).cdf).statistic <= _dkw(300)
    for scalar_space in (True, False):
        assert opendp_additive_measurement("laplace", b, scalar_space).map(2.0) == pytest.approx(0.5, rel=1e-12)


def test_opendps_gaussian_noise_has_the_normal_law_and_its_zcdp_map():
    sigma, n = 1.7, 2000
    noise = opendp_additive(np.zeros(n), sigma, "gaussian")
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).statistic <= _dkw(n)
    rho = opendp_additive_measurement("gaussian", sigma, False).map(1.0)
    assert rho == pytest.approx(1.0 / (2.0 * sigma ** 2), rel=1e-12)


# --------------------------------------------------------------------------- selection

def test_exponential_mechanism_opendp_follows_the_exact_law():
    utilities, sensitivity, epsilon = np.array([0.0, 0.5, 1.0, 1.5, 2.0, -1e9]), 1.0, 2.0
    probs = dp.exponential_mechanism_probabilities(utilities, sensitivity, epsilon)
    draws = [dp.exponential_mechanism(utilities, sensitivity, epsilon, sampler="opendp") for _ in range(1500)]
    _check_finite_law(draws, np.arange(utilities.size), probs)
    # OpenDP's own map at the sensitivity: the bounded-range zCDP of an epsilon-DP exponential mechanism
    scale = dp.mechanisms.rounded_up(2.0 * sensitivity / epsilon)
    assert scale >= 2.0 * sensitivity / epsilon
    assert opendp_noisy_max_measurement(scale, False, False).map(sensitivity) == pytest.approx(epsilon ** 2 / 8)


def _spread_scores():
    return np.random.default_rng(3).uniform(size=40) ** 0.7


@pytest.mark.parametrize("variant, beta, epsilon, bins", [("tight", 0.5, 0.3, 4), ("original", 0.45, 0.6, 6)])
def test_private_quantile_opendp_follows_its_exact_law_close_to_numpys(variant, beta, epsilon, bins):
    scores = _spread_scores()
    edges, law = dp.private_quantile_probabilities(scores, beta, epsilon, bins=bins, variant=variant,
                                                   sampler="opendp")
    assert law.max() < 0.8 and np.sum(law > 0.01) >= 3      # a law with spread: the test has power
    draws = [dp.private_quantile(scores, beta, epsilon, bins=bins, variant=variant, sampler="opendp")
             for _ in range(1500)]
    _check_finite_law(draws, edges, law)
    # the grid level A / 2**32 <= alpha0 moves every log-probability by at most 2 (tight) or 4 (original)
    # times eps N / 2**32 (the docstring's bound)
    _, numpy_law = dp.private_quantile_probabilities(scores, beta, epsilon, bins=bins, variant=variant, log=True)
    _, grid_law = dp.private_quantile_probabilities(scores, beta, epsilon, bins=bins, variant=variant, log=True,
                                                    sampler="opendp")
    factor = 2 if variant == "tight" else 4
    assert np.max(np.abs(numpy_law - grid_law)) <= factor * epsilon * scores.size / 2 ** 32 + 1e-12


def test_the_opendp_level_keeps_the_proven_coverage_bound():
    for n, epsilon, beta, bins in [(500, 1.0, 0.1, 100), (40, 0.6, 0.3, 6), (10 ** 5, 0.1, 0.05, 1000)]:
        alpha0 = dp.private_quantile_level(beta, n, epsilon, bins)
        grid = math.floor(alpha0 * 2 ** 32) / 2 ** 32
        assert grid <= alpha0 and alpha0 - grid < 2 ** -32
        assert dp.private_quantile_miscoverage_bound(grid, n, epsilon, bins) <= beta


def test_opendp_quantile_with_opendps_own_sampler_follows_the_exact_law():
    scores = np.array([0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.6, 0.62, 0.8, 0.9, 0.95, 0.97])
    cand, law = dp.opendp_quantile_probabilities(scores, 0.25, 1.0, bins=8, variant="raw")
    draws = [dp.opendp_quantile(scores, 0.25, 1.0, bins=8, variant="raw", sampler="opendp") for _ in range(1200)]
    _check_finite_law(draws, cand, law)


# --------------------------------------------------------------------------- whole releases, both samplers

def test_laplace_histogram_quantile_samplers_give_the_same_release_law():
    scores = np.random.default_rng(4).uniform(size=60)
    gen = np.random.default_rng(5)
    ours = [dp.laplace_histogram_quantile(scores, 0.2, 0.5, bins=5, variant="paper", rng=gen) for _ in range(600)]
    theirs = [dp.laplace_histogram_quantile(scores, 0.2, 0.5, bins=5, variant="paper", sampler="opendp")
              for _ in range(600)]
    _two_sample(np.round(ours, 1), np.round(theirs, 1))


def test_pcoqs_samplers_give_the_same_release_law():
    scores = np.random.default_rng(6).uniform(size=50)
    gen = np.random.default_rng(7)
    kwargs = dict(alpha=0.2, rho=0.05, tol=1e-3, decimals=1)
    ours = [dp.pcoqs_quantile(scores, rng=gen, **kwargs) for _ in range(300)]
    theirs = [dp.pcoqs_quantile(scores, sampler="opendp", **kwargs) for _ in range(300)]
    assert len(set(ours)) >= 3
    _two_sample(ours, theirs)


def test_coordinatewise_median_and_coinpress_run_with_opendp():
    data = np.random.default_rng(8).normal(size=(300, 2))
    out = dp.coordinatewise_private_median(data, 2.0, (-5.0, 5.0), bins=50, sampler="opendp")
    assert out.shape == (2,) and np.all(np.abs(out) < 1.5)
    mean = dp.coinpress_mean(data, 0.5, 10.0, sampler="opendp")
    assert mean.shape == (2,) and np.all(np.abs(mean) < 1.5)


# --------------------------------------------------------------------------- what rng means with OpenDP

_OPENDP_CALLS = {
    "laplace_mechanism": lambda **kw: dp.laplace_mechanism(1.0, 1.0, 1.0, **kw),
    "exponential_mechanism": lambda **kw: dp.exponential_mechanism(np.arange(3.0), 1.0, 1.0, **kw),
    "private_quantile": lambda **kw: dp.private_quantile(_spread_scores(), 0.3, 0.6, bins=6, **kw),
    "pcoqs_quantile": lambda **kw: dp.pcoqs_quantile(_spread_scores(), 0.2, 1.0, tol=1e-3, **kw),
    "laplace_histogram_quantile": lambda **kw: dp.laplace_histogram_quantile(_spread_scores(), 0.2, 1.0, bins=5,
                                                                             **kw),
    "opendp_quantile": lambda **kw: dp.opendp_quantile(_spread_scores(), 0.2, 1.0, bins=5, variant="raw", **kw),
    "coordinatewise_private_median": lambda **kw: dp.coordinatewise_private_median(
        np.random.default_rng(0).normal(size=(100, 2)), 2.0, (-5.0, 5.0), bins=20, **kw),
    "coinpress_mean": lambda **kw: dp.coinpress_mean(np.random.default_rng(0).normal(size=(100, 2)), 0.5, 10.0,
                                                     **kw),
}


@pytest.mark.parametrize("name", sorted(_OPENDP_CALLS))
def test_opendp_cannot_be_seeded_so_a_seed_is_refused(name):
    call = _OPENDP_CALLS[name]
    call(sampler="opendp")                                     # rng=None: a release from fresh entropy
    for rng in (0, np.random.default_rng(0)):
        with pytest.raises(ValueError, match="cannot be seeded"):
            call(sampler="opendp", rng=rng)
    with pytest.raises(TypeError, match="rng"):
        call(sampler="opendp", rng="seed")
    with pytest.raises(ValueError, match="sampler"):
        call(sampler="OpenDP")
    with pytest.raises(TypeError, match="sampler"):
        call(sampler=None)


@pytest.mark.parametrize("name", sorted(_OPENDP_CALLS))
def test_the_numpy_sampler_is_the_default_and_seeded_draws_repeat(name):
    call = _OPENDP_CALLS[name]
    np.testing.assert_array_equal(call(rng=3), call(rng=3, sampler="numpy"))
