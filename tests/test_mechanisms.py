"""Tests for dpcp_tutorial.mechanisms: Laplace, Gaussian (classical and analytic), exponential mechanism."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq
from scipy.special import ndtr

from dpcp_tutorial import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian_mechanism,
    gaussian_sigma,
    gumbel_max_sample,
    laplace_mechanism,
    laplace_scale,
)

CHI2_LEVEL = 1e-3  # goodness-of-fit tests reject at this level (false alarm 1 in 1000 per seeded run)


# ---------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("sensitivity, epsilon", [(1.0, 1.0), (0.01, 0.1), (3.0, 1e-3), (2.0, 1e3)])
def test_laplace_scale_formula(sensitivity, epsilon):
    assert laplace_scale(sensitivity, epsilon) == sensitivity / epsilon


def test_laplace_noise_has_the_stated_law():
    """20000 draws around 3.0 pass a KS test against Laplace(3, Delta/eps) at level 1e-3, and fail it
    against half or double the scale (so the test can tell a wrong scale)."""
    b = laplace_scale(0.5, 0.8)
    draws = laplace_mechanism(np.full(20_000, 3.0), 0.5, 0.8, rng=0)
    assert stats.kstest(draws, stats.laplace(loc=3.0, scale=b).cdf).pvalue > CHI2_LEVEL
    for wrong in (b / 2, 2 * b):
        assert stats.kstest(draws, stats.laplace(loc=3.0, scale=wrong).cdf).pvalue < CHI2_LEVEL


def test_laplace_shapes_and_determinism():
    out = laplace_mechanism(1.5, 1.0, 1.0, rng=3)
    assert isinstance(out, float)
    assert out == laplace_mechanism(1.5, 1.0, 1.0, rng=3)
    assert out != laplace_mechanism(1.5, 1.0, 1.0, rng=4)
    vec = laplace_mechanism([[1.0, 2.0], [3.0, 4.0]], 1.0, 1.0, rng=np.random.default_rng(0))
    assert vec.shape == (2, 2)


def test_laplace_privacy_ratio_is_exact():
    """The Laplace density ratio between answers that differ by Delta is at most e^eps, with equality in the tails."""
    b = laplace_scale(2.0, 0.7)
    x = np.linspace(-50, 50, 2001)
    log_ratio = stats.laplace(0.0, b).logpdf(x) - stats.laplace(2.0, b).logpdf(x)
    assert np.max(np.abs(log_ratio)) == pytest.approx(0.7, abs=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(sensitivity=1.0, epsilon=0.0), "epsilon"),
    (dict(sensitivity=1.0, epsilon=-1.0), "epsilon"),
    (dict(sensitivity=0.0, epsilon=1.0), "sensitivity"),
    (dict(sensitivity=float("nan"), epsilon=1.0), "sensitivity"),
])
def test_laplace_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        laplace_mechanism(1.0, rng=0, **kwargs)


def test_laplace_rejects_nan_value():
    with pytest.raises(ValueError, match="finite"):
        laplace_mechanism([1.0, float("nan")], 1.0, 1.0, rng=0)


# ---------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------

def _privacy_profile(sigma, epsilon, delta_sens=1.0):
    """delta(eps) of the Gaussian mechanism, written out independently of the package (Balle & Wang, Thm 8)."""
    a, b = delta_sens / (2 * sigma), epsilon * sigma / delta_sens
    return ndtr(a - b) - math.exp(epsilon) * ndtr(-a - b)


@pytest.mark.parametrize("epsilon, delta", [(0.05, 1e-5), (0.5, 1e-10), (1.0, 1e-5), (2.0, 1e-6),
                                            (8.0, 1e-5), (20.0, 1e-9), (1e-3, 0.1), (3.0, 0.4)])
def test_analytic_sigma_solves_its_defining_equation(epsilon, delta):
    """Independent check: brentq on the privacy-profile equation in sigma, and the profile at the answer is delta."""
    sigma = gaussian_sigma(1.0, epsilon, delta)
    reference = brentq(lambda s: _privacy_profile(s, epsilon) - delta, 1e-8, 1e8, xtol=1e-15, rtol=1e-14)
    assert sigma == pytest.approx(reference, rel=1e-9)
    assert _privacy_profile(sigma, epsilon) == pytest.approx(delta, rel=1e-6)
    # scaling: sigma is linear in the sensitivity
    assert gaussian_sigma(2.5, epsilon, delta) == pytest.approx(2.5 * sigma, rel=1e-12)


@pytest.mark.parametrize("epsilon, delta", [(0.3, 1e-6), (1.0, 1e-5), (4.0, 1e-8)])
def test_analytic_sigma_matches_dp_accounting(epsilon, delta):
    """Google's dp-accounting computes the delta of a Gaussian mechanism with a given sigma: it must return ours."""
    from dp_accounting.pld import privacy_loss_distribution as pld
    sigma = gaussian_sigma(1.0, epsilon, delta)
    dist = pld.from_gaussian_mechanism(standard_deviation=sigma, sensitivity=1.0, value_discretization_interval=1e-4)
    assert dist.get_delta_for_epsilon(epsilon) == pytest.approx(delta, rel=1e-6)


@pytest.mark.parametrize("epsilon", [1e2, 1e3])
def test_analytic_sigma_large_epsilon(epsilon):
    """e^eps overflows a double for eps > 709; the calibration works in log space and stays exact."""
    sigma = gaussian_sigma(1.0, epsilon, 1e-5)
    assert 0 < sigma < 1 and math.isfinite(sigma)
    # log-space check of the defining equation: log Phi(a-b) vs log(delta + e^eps Phi(-a-b))
    from scipy.special import log_ndtr
    a, b = 1 / (2 * sigma), epsilon * sigma
    lhs = float(log_ndtr(a - b))
    rhs = float(np.logaddexp(math.log(1e-5), epsilon + log_ndtr(-a - b)))
    assert lhs == pytest.approx(rhs, abs=1e-9)


@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-5), (0.5, 1e-8), (0.9, 1e-3)])
def test_classical_sigma_formula_and_saving(epsilon, delta):
    classical = gaussian_sigma(1.5, epsilon, delta, analytic=False)
    assert classical == pytest.approx(1.5 * math.sqrt(2 * math.log(1.25 / delta)) / epsilon, rel=1e-15)
    assert gaussian_sigma(1.5, epsilon, delta) < classical  # the analytic calibration is never worse


def test_gaussian_noise_has_the_stated_law():
    sigma = gaussian_sigma(1.0, 1.0, 1e-5)
    draws = gaussian_mechanism(np.zeros(20_000), 1.0, 1.0, 1e-5, rng=1)
    assert stats.kstest(draws, stats.norm(0.0, sigma).cdf).pvalue > CHI2_LEVEL
    assert stats.kstest(draws, stats.norm(0.0, 0.8 * sigma).cdf).pvalue < CHI2_LEVEL
    classical = gaussian_mechanism(np.zeros(20_000), 1.0, 0.5, 1e-5, rng=1, analytic=False)
    assert stats.kstest(classical, stats.norm(0.0, gaussian_sigma(1.0, 0.5, 1e-5, analytic=False)).cdf).pvalue \
        > CHI2_LEVEL
    assert isinstance(gaussian_mechanism(2.0, 1.0, 1.0, 1e-5, rng=0), float)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=1.0, delta=0.0), "delta > 0"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(epsilon=1.0, delta=-1e-9), "delta"),
    (dict(epsilon=1.0, delta=1.5), "delta"),
    (dict(epsilon=0.0, delta=1e-5), "epsilon"),
    (dict(epsilon=1.0, delta=1e-5, analytic=False), "epsilon < 1"),
    (dict(epsilon=2.0, delta=1e-5, analytic=False), "analytic=True"),
])
def test_gaussian_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gaussian_mechanism(0.0, 1.0, rng=0, **kwargs)


# ---------------------------------------------------------------------------
# exponential mechanism
# ---------------------------------------------------------------------------

def _histogram_utilities(records, k):
    """Utility u_j = number of records equal to j: sensitivity 1 under add/remove and replace-one."""
    return np.bincount(records, minlength=k).astype(float)


def _neighbours(records, k, rng):
    """One add-one, one remove-one and one replace-one neighbour of an integer data set."""
    i = rng.integers(records.size)
    return {
        "add": np.append(records, rng.integers(k)),
        "remove": np.delete(records, i),
        "replace": np.where(np.arange(records.size) == i, rng.integers(k), records),
    }


def test_exponential_mechanism_exact_privacy_audit():
    """For 300 random data sets x 3 neighbour kinds, max |log P(D) - log P(D')| <= eps + 1e-9.

    The data sets are lopsided (a dominant category) so that the bound is nearly attained: the audit also
    asserts a ratio above 0.9 eps somewhere, so a mechanism with the wrong constant (e.g. eps/Delta instead of
    eps/(2 Delta), or eps/(4 Delta)) fails one of the two asserts.
    """
    rng = np.random.default_rng(2024)
    worst = 0.0
    for _ in range(300):
        k = int(rng.integers(2, 30))
        epsilon = float(np.exp(rng.uniform(np.log(1e-3), np.log(1e3))))
        n = int(rng.integers(1, 200))
        records = np.where(rng.uniform(size=n) < 0.7, 0, rng.integers(k, size=n))  # ties: category 0 dominates
        offset = float(rng.choice([0.0, 1e9]))  # utilities of size 1e9 must not matter
        logp = exponential_mechanism_probabilities(_histogram_utilities(records, k) + offset, 1.0, epsilon, log=True)
        for other in _neighbours(records, k, rng).values():
            logq = exponential_mechanism_probabilities(_histogram_utilities(other, k) + offset, 1.0, epsilon,
                                                       log=True)
            assert np.isfinite(logp).all() and np.isfinite(logq).all()
            ratio = np.max(np.abs(logp - logq))
            assert ratio <= epsilon + 1e-9
            worst = max(worst, ratio / epsilon)
    assert worst > 0.9


def test_exponential_probabilities_formula():
    """Direct formula on a small case, and shift invariance of the utilities."""
    u = np.array([0.0, 1.0, 3.0])
    p = exponential_mechanism_probabilities(u, 2.0, 1.5)
    expected = np.exp(1.5 * u / 4.0) / np.exp(1.5 * u / 4.0).sum()
    np.testing.assert_allclose(p, expected, rtol=1e-14)
    np.testing.assert_allclose(exponential_mechanism_probabilities(u + 1e9, 2.0, 1.5), expected, rtol=1e-9)
    np.testing.assert_allclose(exponential_mechanism_probabilities(u, 2.0, 1.5, log=True), np.log(expected),
                               rtol=1e-13)


def test_exponential_huge_utilities_and_epsilon():
    """Utilities of size 1e9 with eps = 1e3: the naive exp overflows, ours gives exact log-probabilities."""
    u = np.array([1e9, 1e9 - 1.0, 1e9 - 1e6, 0.0])
    logp = exponential_mechanism_probabilities(u, 1.0, 1e3, log=True)
    # the gap between the two best candidates is 1, i.e. a log-odds of eps/2 = 500
    assert logp[0] - logp[1] == pytest.approx(500.0, abs=1e-9)
    assert logp[3] == pytest.approx(-1e3 * 1e9 / 2, rel=1e-12)
    p = exponential_mechanism_probabilities(u, 1.0, 1e3)
    assert np.isfinite(p).all() and p.sum() == pytest.approx(1.0) and p[0] == 1.0
    assert exponential_mechanism(u, 1.0, 1e3, rng=0) == 0


def test_exponential_mechanism_samples_match_probabilities():
    """Chi-square goodness of fit of 20000 Gumbel-max draws against the exact law, at level 1e-3."""
    u = np.array([0.0, 0.5, 1.0, 2.0, 2.5, 1.0])
    p = exponential_mechanism_probabilities(u, 1.0, 1.2)
    rng = np.random.default_rng(7)
    draws = np.array([exponential_mechanism(u, 1.0, 1.2, rng=rng) for _ in range(20_000)])
    observed = np.bincount(draws, minlength=u.size)
    assert stats.chisquare(observed, 20_000 * p).pvalue > CHI2_LEVEL
    # and a law with the wrong constant is rejected
    wrong = exponential_mechanism_probabilities(u, 0.5, 1.2)
    assert stats.chisquare(observed, 20_000 * wrong).pvalue < CHI2_LEVEL


def test_gumbel_max_never_picks_minus_inf_and_validates():
    logits = np.array([-np.inf, 0.0, -np.inf])
    assert all(gumbel_max_sample(logits, rng=s) == 1 for s in range(50))
    with pytest.raises(ValueError, match="NaN"):
        gumbel_max_sample(np.array([0.0, np.nan]), rng=0)
    with pytest.raises(ValueError, match="non-empty"):
        gumbel_max_sample(np.array([]), rng=0)


@pytest.mark.parametrize("kwargs, err", [
    (dict(utilities=[1.0, 2.0], sensitivity=1.0, epsilon=0.0), ValueError),
    (dict(utilities=[1.0, 2.0], sensitivity=0.0, epsilon=1.0), ValueError),
    (dict(utilities=[1.0, np.nan], sensitivity=1.0, epsilon=1.0), ValueError),
    (dict(utilities=[], sensitivity=1.0, epsilon=1.0), ValueError),
    (dict(utilities=[1.0, 2.0], sensitivity=1.0, epsilon=1.0, rng="seed"), TypeError),
])
def test_exponential_bad_input(kwargs, err):
    with pytest.raises(err):
        exponential_mechanism(**kwargs)
