"""Tests for dpcp_tutorial.quantile: both private quantiles, their exact laws, privacy, coverage and extremes.

The first part tests the DPCP write-up's Algorithm 1 (``variant="original"``, through the wrappers below); the
section *the tight variant* tests the package default.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpcp_tutorial import (
    algorithm1_add_remove_loss,
    algorithm1_level,
    private_quantile_level,
    private_quantile_miscoverage_bound,
    private_quantile_privacy_loss,
    quantile_edges,
)
from dpcp_tutorial import private_quantile as _private_quantile
from dpcp_tutorial._counts import edge_histogram
from dpcp_tutorial.quantile import at_public_size
from dpcp_tutorial import private_quantile_probabilities as _private_quantile_probabilities


def private_quantile(*args, variant="original", **kwargs):
    """The write-up's Algorithm 1 unless a test asks for another variant."""
    return _private_quantile(*args, variant=variant, **kwargs)


def private_quantile_probabilities(*args, variant="original", **kwargs):
    return _private_quantile_probabilities(*args, variant=variant, **kwargs)

CHI2_LEVEL = 1e-3  # goodness-of-fit tests reject at this level


def reference_log_probabilities(scores, beta, epsilon, edges, n=None):
    """Algorithm 1 written out directly, O(N*M): explicit comparisons for every (score, edge) pair."""
    scores, edges = np.asarray(scores, float), np.asarray(edges, float)
    n = scores.size if n is None else n
    alpha0 = beta - 2.0 / (n * epsilon)
    a = (scores[None, :] < edges[:, None]).sum(axis=1)
    b = (scores[None, :] > edges[:, None]).sum(axis=1)
    w = np.maximum(a / (1 - alpha0), b / alpha0)
    delta = max(1 / (1 - alpha0), 1 / alpha0)
    exponent = -epsilon * w / (2 * delta)
    return exponent - np.logaddexp.reduce(exponent)


def _random_scores(rng, n, m):
    """Scores with the awkward cases mixed in: ties, values exactly on bin edges, 0 and 1."""
    kind = rng.integers(4)
    if kind == 0:
        return rng.uniform(size=n)
    if kind == 1:
        return rng.integers(0, m + 1, size=n) / m  # every score on an edge (or at 0)
    if kind == 2:
        return rng.choice([0.0, 1.0, 0.5, rng.uniform()], size=n)  # heavy ties and the two ends
    return rng.beta(0.5, 3.0, size=n)


def _random_record(rng, m):
    return float(rng.choice([rng.uniform(), 0.0, 1.0, rng.integers(0, m + 1) / m]))


# ---------------------------------------------------------------------------
# the law: reference implementation and sampling
# ---------------------------------------------------------------------------

def test_probabilities_match_direct_reference():
    """150 random cases (int M and custom edges, ties, edges, 0/1): log-probabilities agree to 1e-9."""
    rng = np.random.default_rng(0)
    for _ in range(150):
        n, m = int(rng.integers(1, 300)), int(rng.integers(1, 200))
        epsilon = float(np.exp(rng.uniform(np.log(0.05), np.log(50))))
        beta = float(rng.uniform(2.0 / (n * epsilon), 1.0)) if 2.0 / (n * epsilon) < 1 else None
        if beta is None or beta - 2.0 / (n * epsilon) <= 1e-6:
            continue
        scores = _random_scores(rng, n, m)
        bins = m if rng.uniform() < 0.5 else np.r_[np.sort(rng.choice(np.arange(1, 400) / 400, m - 1, replace=False))
                                                   if m > 1 else [], 1.0]
        edges, logp = private_quantile_probabilities(scores, beta, epsilon, bins, log=True)
        np.testing.assert_array_equal(edges, quantile_edges(bins))
        np.testing.assert_allclose(logp, reference_log_probabilities(scores, beta, epsilon, edges), rtol=1e-12,
                                   atol=1e-9)
        _, p = private_quantile_probabilities(scores, beta, epsilon, bins)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_public_n_changes_only_alpha0():
    scores = np.random.default_rng(1).uniform(size=50)
    _, logp = private_quantile_probabilities(scores, 0.1, 1.0, 40, log=True, n=80)
    np.testing.assert_allclose(logp, reference_log_probabilities(scores, 0.1, 1.0, quantile_edges(40), n=80),
                               rtol=1e-12, atol=1e-12)


def test_samples_match_probabilities():
    """Chi-square goodness of fit of 20000 draws (one shared Generator) against the exact law, at level 1e-3;
    cells with expected count below 5 are pooled. A law with a doubled epsilon is rejected by the same data."""
    scores = np.random.default_rng(2).uniform(size=60)
    beta, epsilon, m = 0.2, 1.0, 25
    edges, p = private_quantile_probabilities(scores, beta, epsilon, m)
    rng = np.random.default_rng(3)
    draws = np.array([private_quantile(scores, beta, epsilon, m, rng=rng) for _ in range(20_000)])
    observed = np.array([(draws == e).sum() for e in edges])
    assert observed.sum() == draws.size  # every draw is an edge

    def pooled_pvalue(probabilities):
        expected = draws.size * probabilities
        keep = expected >= 5
        obs = np.r_[observed[keep], observed[~keep].sum()]
        exp = np.r_[expected[keep], expected[~keep].sum()]
        return stats.chisquare(obs, exp).pvalue

    assert pooled_pvalue(p) > CHI2_LEVEL
    assert pooled_pvalue(private_quantile_probabilities(scores, beta, 2 * epsilon, m)[1]) < CHI2_LEVEL


def test_same_seed_same_release():
    scores = np.random.default_rng(4).uniform(size=1000)
    q = [private_quantile(scores, 0.1, 0.5, 1000, rng=11) for _ in range(3)]
    assert q[0] == q[1] == q[2]
    assert len({private_quantile(scores, 0.1, 0.5, 1000, rng=s) for s in range(20)}) > 1


def test_concentrates_near_the_shifted_quantile():
    """With N eps large the release is within one bin of the (1 - alpha0) empirical quantile."""
    scores = np.random.default_rng(5).uniform(size=100_000)
    alpha0 = algorithm1_level(0.1, scores.size, 10.0)
    target = np.quantile(scores, 1 - alpha0)
    assert abs(private_quantile(scores, 0.1, 10.0, 1000, rng=0) - target) <= 2e-3


# ---------------------------------------------------------------------------
# exact privacy audit
# ---------------------------------------------------------------------------

def _audit_cases(rng, count, beta_range):
    """Random (scores, beta, epsilon, bins) with N small enough that one record matters."""
    cases = []
    while len(cases) < count:
        n, m = int(rng.integers(2, 80)), int(rng.choice([1, 2, 7, 20, 100]))
        epsilon = float(np.exp(rng.uniform(np.log(0.05), np.log(30))))
        low = max(beta_range[0], 2.0 / ((n - 1) * epsilon) + 1e-9)  # feasible for the remove-one neighbour too
        if low >= beta_range[1]:
            continue
        cases.append((_random_scores(rng, n, m), float(rng.uniform(low, beta_range[1])), epsilon, m))
    return cases


def _log_ratio(a, b, beta, epsilon, m, n=None):
    la = private_quantile_probabilities(a, beta, epsilon, m, log=True, n=n)[1]
    lb = private_quantile_probabilities(b, beta, epsilon, m, log=True, n=n)[1]
    assert np.isfinite(la).all() and np.isfinite(lb).all()
    return float(np.max(np.abs(la - lb)))


def test_privacy_audit_replace_one():
    """Replace-one (N public and fixed): 400 random pairs, max |log-ratio| <= eps / (2 max(alpha0, 1 - alpha0))
    (the exact loss, never more than eps) for every beta in (0, 1); the exact loss is nearly attained."""
    rng = np.random.default_rng(10)
    worst = 0.0
    for scores, beta, epsilon, m in _audit_cases(rng, 400, (0.0, 1.0)):
        other = scores.copy()
        other[rng.integers(scores.size)] = _random_record(rng, m)
        ratio = _log_ratio(scores, other, beta, epsilon, m)
        exact = private_quantile_privacy_loss(beta, scores.size, epsilon, m, "original")
        alpha0 = algorithm1_level(beta, scores.size, epsilon)
        assert exact == pytest.approx(epsilon / (2 * max(alpha0, 1 - alpha0)), rel=1e-12) and exact <= epsilon
        assert ratio <= exact + 1e-9
        worst = max(worst, ratio / exact)
    assert worst > 0.95


def test_privacy_audit_add_remove_public_n():
    """Add one / remove one with alpha0 computed from a fixed public n: the loss is monotone, so the release
    is eps/2-DP (<= eps/2 + 1e-9 on 2 x 300 random pairs, any beta), and eps/2 is attained."""
    rng = np.random.default_rng(11)
    worst = 0.0
    for scores, beta, epsilon, m in _audit_cases(rng, 300, (0.0, 1.0)):
        n_public = scores.size
        for other in (np.append(scores, _random_record(rng, m)), np.delete(scores, rng.integers(scores.size))):
            ratio = _log_ratio(scores, other, beta, epsilon, m, n=n_public)
            assert ratio <= epsilon / 2 + 1e-9
            worst = max(worst, ratio / epsilon)
    assert worst > 0.49


def test_privacy_audit_add_remove_recomputed_n_conformal_levels():
    """Add one / remove one with alpha0 recomputed from each data set's size (the default), beta <= 1/2 (every
    conformal use): the chapter-3 theorem says eps/2; checked on 2 x 300 random pairs with ties, edges, 0 and 1."""
    rng = np.random.default_rng(12)
    for scores, beta, epsilon, m in _audit_cases(rng, 300, (0.0, 0.5)):
        n = scores.size
        add = np.append(scores, _random_record(rng, m))
        remove = np.delete(scores, rng.integers(n))
        assert _log_ratio(scores, add, beta, epsilon, m) <= epsilon / 2 + 1e-9
        assert _log_ratio(scores, remove, beta, epsilon, m) <= epsilon / 2 + 1e-9
        assert algorithm1_add_remove_loss(beta, n, epsilon) == pytest.approx(epsilon / 2, rel=1e-12)


def test_privacy_audit_add_remove_recomputed_n_any_level():
    """For beta > 1/2 the loss with a recomputed alpha0 can exceed eps; it never exceeds the derived bound
    algorithm1_add_remove_loss (2 x 300 random pairs)."""
    rng = np.random.default_rng(13)
    for scores, beta, epsilon, m in _audit_cases(rng, 300, (0.5, 1.0)):
        n = scores.size
        add = np.append(scores, _random_record(rng, m))
        remove = np.delete(scores, rng.integers(n))
        assert _log_ratio(scores, add, beta, epsilon, m) <= algorithm1_add_remove_loss(beta, n, epsilon) + 1e-9
        assert _log_ratio(scores, remove, beta, epsilon, m) <= algorithm1_add_remove_loss(beta, n - 1, epsilon) + 1e-9


def test_add_remove_counterexample_above_one_half():
    """The documented counterexample of chapter 3: beta = 0.99, N = 50, N eps = 4.08 (feasible: > 2/beta),
    50 scores at 0.99, add a record at 0. The log-ratio exceeds eps by 40%, close to the derived bound."""
    beta, n, m = 0.99, 50, 50
    epsilon = 4.08 / n
    scores = np.full(n, 0.99)
    ratio = _log_ratio(scores, np.append(scores, 0.0), beta, epsilon, m)
    bound = algorithm1_add_remove_loss(beta, n, epsilon)
    assert 1.4 * epsilon < ratio <= bound + 1e-12
    assert ratio / bound > 0.97
    # with n fixed as a public constant, the same pair is within eps/2
    assert _log_ratio(scores, np.append(scores, 0.0), beta, epsilon, m, n=n) <= epsilon / 2 + 1e-12


def test_add_remove_loss_matches_direct_formula():
    """The closed form (no cancellation) agrees with the formula evaluated by plain subtraction for moderate n."""
    def a_fn(t):
        return min(t, 1 - t) / (1 - t)

    def b_fn(t):
        return min(t, 1 - t) / t

    rng = np.random.default_rng(14)
    for _ in range(200):
        n, beta = int(rng.integers(1, 200)), float(rng.uniform(0.01, 0.99))
        epsilon = 2.0 / (n * beta) * float(rng.uniform(1.001, 20))
        lo, hi = algorithm1_level(beta, n, epsilon), algorithm1_level(beta, n + 1, epsilon)
        direct = epsilon / 2 * (max(a_fn(hi) + n * (a_fn(hi) - a_fn(lo)), b_fn(hi)) + n * (b_fn(lo) - b_fn(hi)))
        assert algorithm1_add_remove_loss(beta, n, epsilon) == pytest.approx(direct, rel=1e-7, abs=1e-12)


# ---------------------------------------------------------------------------
# extremes and numerics
# ---------------------------------------------------------------------------

def _assert_valid_release(q, edges):
    assert isinstance(q, float) and math.isfinite(q) and bool(np.any(edges == q))


def test_naive_formula_underflows_but_ours_does_not():
    """Reference note section 8: N = 50000, eps = 1, alpha0 = 0.03. exp(-eps w/(2 Delta)) is 0 for every edge, so
    the naive normalisation gives 0/0; our law is finite and sums to 1."""
    n, epsilon = 50_000, 1.0
    beta = 0.03 + 2.0 / (n * epsilon)
    scores = np.random.default_rng(20).uniform(size=n)
    edges, logp = private_quantile_probabilities(scores, beta, epsilon, 1000, log=True)
    alpha0 = algorithm1_level(beta, n, epsilon)
    a = np.searchsorted(np.sort(scores), edges, "left")
    b = n - np.searchsorted(np.sort(scores), edges, "right")
    naive_weights = np.exp(-epsilon * np.maximum(a / (1 - alpha0), b / alpha0) / (2 / min(alpha0, 1 - alpha0)))
    assert naive_weights.max() == 0.0
    assert np.isfinite(logp).all() and np.exp(logp).sum() == pytest.approx(1.0)
    _assert_valid_release(private_quantile(scores, beta, epsilon, 1000, rng=0), edges)


def test_ten_million_scores():
    scores = np.random.default_rng(21).uniform(size=10_000_000)
    q = private_quantile(scores, 0.1, 1.0, 1000, rng=0)
    _assert_valid_release(q, quantile_edges(1000))
    assert abs(q - 0.9) <= 2e-3


@pytest.mark.parametrize("epsilon, n", [(1e-3, 100_000), (1e3, 1000)])
def test_extreme_epsilon(epsilon, n):
    scores = np.random.default_rng(22).uniform(size=n)
    edges, p = private_quantile_probabilities(scores, 0.1, epsilon, 1000)
    assert np.isfinite(p).all() and p.sum() == pytest.approx(1.0)
    _assert_valid_release(private_quantile(scores, 0.1, epsilon, 1000, rng=0), edges)
    if epsilon == 1e3:  # essentially deterministic: all mass on the edges that minimise the loss
        reference = reference_log_probabilities(scores, 0.1, epsilon, edges)
        best = reference >= reference.max() - 1e-9
        assert p[best].sum() > 0.99


@pytest.mark.parametrize("value", [0.0, 1.0, 0.5, 0.123])
@pytest.mark.parametrize("bins", [1, 2, 1000, 1_000_000])
def test_all_scores_equal_and_extreme_bin_counts(value, bins):
    """All-equal scores (at 0, at 1, exactly on an edge, between edges) with M from 1 to 1e6."""
    scores = np.full(500, value)
    edges, logp = private_quantile_probabilities(scores, 0.1, 1.0, bins, log=True)
    assert np.isfinite(logp).all()
    if bins <= 1000:  # the O(N*M) reference is too big beyond that
        np.testing.assert_allclose(logp, reference_log_probabilities(scores, 0.1, 1.0, edges), rtol=1e-12, atol=1e-9)
    _assert_valid_release(private_quantile(scores, 0.1, 1.0, bins, rng=0), edges)


def test_one_bin_always_releases_one():
    scores = np.random.default_rng(23).uniform(size=100)
    assert private_quantile(scores, 0.1, 1.0, bins=1, rng=0) == 1.0
    assert private_quantile_probabilities(scores, 0.1, 1.0, bins=1)[1].tolist() == [1.0]


def test_custom_edges_including_zero():
    scores = np.array([0.0, 0.0, 0.3, 0.7, 1.0] * 20)
    edges = np.array([0.0, 0.3, 0.5, 1.0])
    got, logp = private_quantile_probabilities(scores, 0.2, 2.0, edges, log=True)
    np.testing.assert_array_equal(got, edges)
    np.testing.assert_allclose(logp, reference_log_probabilities(scores, 0.2, 2.0, edges), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------

def test_infeasible_level_message_states_bound_and_fix():
    scores = np.random.default_rng(24).uniform(size=100)
    with pytest.raises(ValueError, match=r"must exceed 2/\(N\*epsilon\)=0\.04 .*increase epsilon above 0\.666667 "
                                         r"or use at least N=134 scores"):
        private_quantile(scores, beta=0.03, epsilon=0.5, rng=0)
    with pytest.raises(ValueError, match="2/\\(N\\*epsilon\\)"):
        private_quantile_probabilities(scores, beta=0.04, epsilon=0.5)  # equality is infeasible too
    with pytest.raises(ValueError, match="2/\\(N\\*epsilon\\)"):
        private_quantile(scores, beta=0.1, epsilon=1.0, n=10)  # the public n decides


@pytest.mark.parametrize("scores, match", [
    ([0.1, 1.2], r"\[0, 1\]"),
    ([-0.1, 0.5], r"\[0, 1\]"),
    ([0.1, np.nan], "NaN"),
    ([np.nan, np.nan], "NaN"),
    ([0.1, np.inf], "infinite"),
    ([], "empty"),
    ([[0.1, 0.2]], "one-dimensional"),
])
def test_bad_scores(scores, match):
    with pytest.raises(ValueError, match=match):
        private_quantile(scores, 0.5, 100.0, rng=0)
    with pytest.raises(ValueError, match=match):
        private_quantile_probabilities(scores, 0.5, 100.0)


def test_non_numeric_scores():
    with pytest.raises(TypeError, match="real numbers"):
        private_quantile(["a", "b"], 0.5, 100.0, rng=0)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, np.inf, np.nan])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        private_quantile([0.1, 0.2], 0.5, epsilon, rng=0)


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.1, 1.5])
def test_bad_beta(beta):
    with pytest.raises(ValueError, match="beta"):
        private_quantile([0.1, 0.2], beta, 100.0, rng=0)


@pytest.mark.parametrize("bins, match", [
    ([0.2, 0.2, 1.0], "strictly increasing"),
    ([0.5, 0.3, 1.0], "strictly increasing"),
    ([0.2, 0.5, 0.9], "end exactly at 1"),
    ([-0.1, 0.5, 1.0], r"\[0, 1\]"),
    ([0.5, 1.0, 1.5], r"\[0, 1\]"),
    ([0.5, np.nan, 1.0], "NaN"),
    (0, ">= 1"),
])
def test_bad_edges(bins, match):
    with pytest.raises(ValueError, match=match):
        private_quantile([0.1, 0.2], 0.5, 100.0, bins=bins, rng=0)


def test_bins_must_be_integer_or_array():
    with pytest.raises(TypeError, match="integer"):
        quantile_edges(10.0)


# ---------------------------------------------------------------------------
# the tight variant (the package default)
# ---------------------------------------------------------------------------

def tight_reference_log_probabilities(scores, beta, epsilon, edges, n=None):
    """The tight variant written out, O(N*M): scores rounded up to the edges, exponent eps*alpha0*(1-alpha0)*w."""
    scores, edges = np.asarray(scores, float), np.asarray(edges, float)
    n = scores.size if n is None else n
    alpha0 = private_quantile_level(beta, n, epsilon, edges)
    rounded = np.array([edges[np.argmax(edges >= s)] for s in scores])   # smallest edge at or above the score
    a = (rounded[None, :] < edges[:, None]).sum(axis=1)
    b = (rounded[None, :] > edges[:, None]).sum(axis=1)
    w = np.maximum(a / (1 - alpha0), b / alpha0)
    exponent = -epsilon * alpha0 * (1 - alpha0) * w
    return exponent - np.logaddexp.reduce(exponent)


def _tight_cases(rng, count, beta_range=(0.02, 0.5), n_range=(3, 120)):
    cases = []
    while len(cases) < count:
        n, m = int(rng.integers(*n_range)), int(rng.choice([1, 2, 7, 20, 100]))
        epsilon = float(np.exp(rng.uniform(np.log(0.5), np.log(80))))
        beta = float(rng.uniform(*beta_range))
        try:
            for size in (n - 1, n, n + 1):
                private_quantile_level(beta, size, epsilon, m)
        except ValueError:
            continue
        cases.append((_random_scores(rng, n, m), beta, epsilon, m))
    return cases


def test_default_is_tight():
    scores = np.random.default_rng(30).uniform(size=400)
    assert _private_quantile(scores, 0.1, 2.0, 100, rng=3) == private_quantile(scores, 0.1, 2.0, 100, rng=3,
                                                                               variant="tight")
    np.testing.assert_array_equal(_private_quantile_probabilities(scores, 0.1, 2.0, 100)[1],
                                  private_quantile_probabilities(scores, 0.1, 2.0, 100, variant="tight")[1])
    with pytest.raises(ValueError, match="variant"):
        _private_quantile(scores, 0.1, 2.0, 100, variant="strict")


def test_tight_law_matches_direct_reference():
    """150 random cases (ties, scores on edges, 0 and 1, custom edges): the law agrees with the O(N*M) version."""
    rng = np.random.default_rng(31)
    for scores, beta, epsilon, m in _tight_cases(rng, 150):
        bins = m if rng.uniform() < 0.5 else np.r_[np.sort(rng.choice(np.arange(1, 400) / 400, m - 1, replace=False))
                                                   if m > 1 else [], 1.0]
        edges, logp = _private_quantile_probabilities(scores, beta, epsilon, bins, log=True)
        np.testing.assert_allclose(logp, tight_reference_log_probabilities(scores, beta, epsilon, edges),
                                   rtol=1e-12, atol=1e-9)


def test_tight_level_and_bound():
    """alpha0 is the largest level whose bound is <= beta; the closed-form bound equals the plain sum."""
    rng = np.random.default_rng(32)
    checked = 0
    while checked < 200:
        n, m = int(rng.integers(1, 3000)), int(rng.choice([2, 10, 1000, 100_000]))
        epsilon, beta = float(np.exp(rng.uniform(np.log(0.1), np.log(100)))), float(rng.uniform(0.01, 0.6))
        alpha0_try = float(rng.uniform(0, 0.9))
        c = epsilon * (1 - alpha0_try)
        k = np.arange(n + 1)
        terms = np.exp(np.minimum(0.0, np.log(m - 1) - c * (k - alpha0_try * n))) / (n + 1)
        assert private_quantile_miscoverage_bound(alpha0_try, n, epsilon, m) == pytest.approx(
            min(1.0, terms.sum()), rel=1e-9, abs=1e-12)
        try:
            alpha0 = private_quantile_level(beta, n, epsilon, m)
        except ValueError as error:
            assert private_quantile_miscoverage_bound(0.0, n, epsilon, m) > beta
            assert "at least N=" in str(error) and "variant='original'" not in str(error)
            continue
        assert 0 < alpha0 < beta * (n + 1) / n   # the bound is >= (floor(alpha0 N) + 1) / (N + 1)
        assert private_quantile_miscoverage_bound(alpha0, n, epsilon, m) <= beta
        assert private_quantile_miscoverage_bound(min(alpha0 * (1 + 1e-9) + 1e-15, 0.999), n, epsilon, m) > beta
        checked += 1


def test_tight_level_needs_log_m_and_n_plus_one():
    """At eps -> infinity at most floor(beta (N+1)) - 1 scores may lie above the threshold (the conformal (N+1)
    rank): alpha0 N tends to floor(beta (N+1)) from below. Finite eps costs about log(N (M-1)) / eps ranks."""
    n, beta = 99, 0.1
    assert private_quantile_level(beta, n, 1e9, 1000) == pytest.approx(math.floor(beta * (n + 1)) / n, abs=1e-6)
    assert private_quantile_level(beta, n, 1e9, 1000) < math.floor(beta * (n + 1)) / n
    assert private_quantile_level(beta, n, 50.0, 1000) < private_quantile_level(beta, n, 50.0, 10)


def test_tight_privacy_audit_replace_one():
    """Replace-one, N public: 400 random pairs with ties, lattice scores, 0 and 1: max |log-ratio| <= eps."""
    rng = np.random.default_rng(33)
    worst = 0.0
    for scores, beta, epsilon, m in _tight_cases(rng, 400):
        other = scores.copy()
        other[rng.integers(scores.size)] = _random_record(rng, m)
        ratio = float(np.max(np.abs(_private_quantile_probabilities(scores, beta, epsilon, m, log=True)[1]
                                    - _private_quantile_probabilities(other, beta, epsilon, m, log=True)[1])))
        assert ratio <= epsilon + 1e-9
        assert private_quantile_privacy_loss(beta, scores.size, epsilon, m) == epsilon
        worst = max(worst, ratio / epsilon)
    assert worst > 0.9


def test_tight_replace_one_loss_is_attained():
    """Two edges, scores split around the quantile, one record moved across the grid: the log-ratio reaches eps
    (> 0.999 eps), so the exponent cannot be raised without breaking replace-one privacy."""
    n, beta, epsilon, m = 2000, 0.1, 20.0, 2
    alpha0 = private_quantile_level(beta, n, epsilon, m)
    worst = 0.0
    for k in range(int(alpha0 * n) - 3, int(alpha0 * n) + 4):
        scores = np.r_[np.full(n - k, 0.2), np.full(k, 0.9)]
        for index, value in [(0, 1.0), (n - 1, 0.0), (0, 0.9), (n - 1, 0.2)]:
            other = scores.copy()
            other[index] = value
            la = _private_quantile_probabilities(scores, beta, epsilon, m, log=True)[1]
            lb = _private_quantile_probabilities(other, beta, epsilon, m, log=True)[1]
            worst = max(worst, float(np.max(np.abs(la - lb))))
    assert 0.999 * epsilon < worst <= epsilon + 1e-9


def test_tight_privacy_audit_add_remove():
    """Add one / remove one, 2 x 300 random pairs: the mechanism on N +- 1 scores at a level fixed by n moves by at
    most eps max(alpha0, 1 - alpha0); with alpha0 recomputed from each size, at most the derived bound. (The
    release with a public n subsamples or pads first: its loss is the replace-one eps, audited below.)"""
    rng = np.random.default_rng(34)
    worst_public = 0.0
    for scores, beta, epsilon, m in _tight_cases(rng, 300):
        n = scores.size

        def ratio(a, b, n_public=None):
            la = _private_quantile_probabilities(a, beta, epsilon, m, log=True, n=n_public)[1]
            lb = _private_quantile_probabilities(b, beta, epsilon, m, log=True, n=n_public)[1]
            return float(np.max(np.abs(la - lb)))

        add, remove = np.append(scores, _random_record(rng, m)), np.delete(scores, rng.integers(n))
        alpha0 = private_quantile_level(beta, n, epsilon, m)
        public = epsilon * max(alpha0, 1 - alpha0)
        assert private_quantile_privacy_loss(beta, n, epsilon, m, relation="add/remove") == epsilon
        for other in (add, remove):
            r = ratio(scores, other, n)
            assert r <= public + 1e-9
            worst_public = max(worst_public, r / public)
        assert ratio(scores, add) <= private_quantile_privacy_loss(beta, n, epsilon, m, relation="add/remove",
                                                                   public_n=False) + 1e-9
        assert ratio(scores, remove) <= private_quantile_privacy_loss(beta, n - 1, epsilon, m, relation="add/remove",
                                                                      public_n=False) + 1e-9
    assert worst_public > 0.9


def _worst_case_miscoverage(n, beta, epsilon, m, variant):
    """Largest miscoverage over every exchangeable score law, computed exactly.

    An exchangeable law of N + 1 scores is a mixture of uniformly shuffled multisets, and the mechanism only sees
    which cell of the grid (an edge, or the open interval below it) each score is in. For every multiset S of
    N + 1 cells, P(test > qhat) = sum over the cells c in S of count(c) / (N + 1) * P_{S - c}(qhat < c)."""
    edges = quantile_edges(m)
    cells = sorted(set(np.r_[edges, (np.r_[0.0, edges[:-1]] + edges) / 2]))
    worst = 0.0
    for multiset in itertools.combinations_with_replacement(range(len(cells)), n + 1):
        values = np.array([cells[i] for i in multiset])
        miss = 0.0
        for c in sorted(set(multiset)):
            rest = np.delete(values, multiset.index(c))
            _, p = _private_quantile_probabilities(rest, beta, epsilon, m, variant=variant)
            miss += multiset.count(c) / (n + 1) * float(p[edges < cells[c]].sum())
        worst = max(worst, miss)
    return worst


@pytest.mark.parametrize("n, beta, epsilon, m", [(6, 0.3, 50.0, 3), (7, 0.25, 20.0, 2), (5, 0.4, 8.0, 3)])
def test_tight_coverage_holds_for_every_exchangeable_law(n, beta, epsilon, m):
    """The coverage theorem checked exactly over ALL exchangeable laws on small grids (ties and edges included);
    the write-up's Algorithm 1 fails the same check."""
    assert _worst_case_miscoverage(n, beta, epsilon, m, "tight") <= beta + 1e-12
    assert _worst_case_miscoverage(n, beta, epsilon, m, "original") > beta


@pytest.mark.parametrize("n, epsilon", [(20, 50.0), (50, 50.0), (200, 5.0)])
def test_tight_coverage_uniform_and_lattice_scores(n, epsilon):
    """Coverage E[F(qhat)] computed from the exact law, averaged over 300 calibration sets (mean - 3 SE >= 1 - beta)
    for uniform and for lattice scores (ties). (The original's under-coverage needs more calibration sets to
    resolve; chapter 3 computes it, and the exhaustive test above shows its worst case.)"""
    beta, m = 0.1, 1000
    laws = {"uniform": (lambda r: r.uniform(size=n), lambda e: e),
            "lattice": (lambda r: r.integers(0, 11, size=n) / 10,
                        lambda e: (np.floor(e * 10 + 1e-9) + 1) / 11)}
    for name, (draw, cdf) in laws.items():
        rng = np.random.default_rng(35)
        values = []
        for _ in range(300):
            edges, p = _private_quantile_probabilities(draw(rng), beta, epsilon, m)
            values.append(float(p @ cdf(edges)))
        mean, se = np.mean(values), np.std(values, ddof=1) / math.sqrt(len(values))
        assert mean - 3 * se >= 1 - beta, (name, mean, se)


# ---------------------------------------------------------------------------
# a public n means exactly n scores: subsample or pad (exact checks)
# ---------------------------------------------------------------------------

def _release_law_at_public_n(values, beta, epsilon, m, n):
    """Exact law of private_quantile(values, n=n): the padded scores' law, or the average over uniform n-subsets
    (multivariate hypergeometric weights over the distinct values)."""
    if values.size <= n:
        return _private_quantile_probabilities(np.r_[values, np.ones(n - values.size)], beta, epsilon, m, n=n)[1]
    keys, counts = np.unique(values, return_counts=True)
    total = 0.0
    for sub in itertools.product(*[range(min(int(c), n) + 1) for c in counts]):
        if sum(sub) == n:
            weight = math.prod(math.comb(int(c), j) for c, j in zip(counts, sub)) / math.comb(values.size, n)
            total = total + weight * _private_quantile_probabilities(np.repeat(keys, sub), beta, epsilon, m, n=n)[1]
    return total


def _worst_miscoverage_at_public_n(size, n, beta, epsilon, m, law):
    """Largest miscoverage over every exchangeable law of size + 1 scores (as _worst_case_miscoverage), for a
    release that sees ``size`` scores and the public ``n``."""
    edges = quantile_edges(m)
    cells = sorted(set(np.r_[edges, (np.r_[0.0, edges[:-1]] + edges) / 2]))
    worst = 0.0
    for multiset in itertools.combinations_with_replacement(range(len(cells)), size + 1):
        values = np.array([cells[i] for i in multiset])
        miss = sum(multiset.count(c) / (size + 1)
                   * float(law(np.delete(values, multiset.index(c)))[edges < cells[c]].sum())
                   for c in sorted(set(multiset)))
        worst = max(worst, miss)
    return worst


@pytest.mark.parametrize("size, n, beta, epsilon, m", [(5, 8, 0.3, 50.0, 3), (3, 6, 0.3, 50.0, 3),
                                                        (9, 6, 0.25, 20.0, 2), (6, 4, 0.4, 8.0, 2)])
def test_public_n_coverage_holds_at_every_size_exactly(size, n, beta, epsilon, m):
    """Padded (size < n) or subsampled (size > n) to the public n, the release covers at level beta over ALL
    exchangeable laws; the level of n applied to fewer scores (the mechanism without the step) does not always."""
    padded = _worst_miscoverage_at_public_n(
        size, n, beta, epsilon, m, lambda v: _release_law_at_public_n(v, beta, epsilon, m, n))
    assert padded <= beta + 1e-12
    if (size, n) == (5, 8):
        unpadded = _worst_miscoverage_at_public_n(
            size, n, beta, epsilon, m, lambda v: _private_quantile_probabilities(v, beta, epsilon, m, n=n)[1])
        assert unpadded > beta + 0.03             # 0.333 > 0.3


def test_private_quantile_runs_on_exactly_n_scores():
    """The release with n=1000 on 38 scores is the release on the 38 scores padded with 962 pads of 1 (same seed:
    padding draws nothing), and its exact miss rate on uniform scores is at most alpha; subsampling a histogram
    keeps its total at n; no scores at all are padded."""
    gen = np.random.default_rng(3)
    for seed in range(5):
        s = gen.uniform(size=38)
        padded = np.r_[s, np.ones(962)]
        assert _private_quantile(s, 0.1, 50.0, rng=seed, n=1000) == _private_quantile(padded, 0.1, 50.0, rng=seed,
                                                                                        n=1000)
        edges, p = _private_quantile_probabilities(padded, 0.1, 50.0, n=1000)
        assert 1.0 - float(p @ edges) <= 0.1       # E[1 - qhat] = P(uniform test score > qhat)
    # more scores than n: a uniform n-subset (an exact draw of the same law as from the histogram)
    big = gen.uniform(size=5000)
    assert 0 < _private_quantile(big, 0.1, 1.0, rng=1, n=1000) <= 1
    hist = edge_histogram(big, quantile_edges(1000))
    assert at_public_size(hist, 1000, np.random.default_rng(0)).size == 1000
    padded_hist = at_public_size(edge_histogram(big[:10], quantile_edges(1000)), 1000, None)
    assert padded_hist.size == 1000 and padded_hist.counts[-2] >= 990      # the pads sit on the edge 1
    assert _private_quantile([], 0.1, 1.0, rng=0, n=1000) == 1.0


def test_public_n_add_remove_is_replace_one_at_size_n_exactly():
    """Exact audit of the release with a public n under add/remove: padding (N < n) and subsampling (N >= n) make
    every neighbour pair a replace-one pair at size n, so the log-ratio never exceeds eps (tight) and comes close."""
    beta, epsilon, m, n = 0.3, 3.0, 3, 6
    worst = 0.0
    cells = [0.1, 0.5, 0.9, 1.0]
    for size in (4, 5, 6, 7):
        for base in itertools.combinations_with_replacement(cells, size):
            base = np.array(base)
            la = np.log(_release_law_at_public_n(base, beta, epsilon, m, n))
            for extra in (0.1, 1.0):
                lb = np.log(_release_law_at_public_n(np.append(base, extra), beta, epsilon, m, n))
                worst = max(worst, float(np.max(np.abs(la - lb))))
    assert worst <= private_quantile_privacy_loss(beta, n, epsilon, m, relation="add/remove") + 1e-12
    assert worst > 0.6 * epsilon


def test_subsampling_an_array_equals_subsampling_its_histogram():
    """More scores than n: the array and its merged histogram (the distributed path) give the same release."""
    s = np.random.default_rng(8).uniform(size=5000)
    hist = edge_histogram(s, quantile_edges(200))
    for seed in range(3):
        assert _private_quantile(s, 0.1, 1.0, bins=200, rng=seed, n=1200) == \
            _private_quantile(hist, 0.1, 1.0, bins=200, rng=seed, n=1200)


@pytest.mark.parametrize("epsilon, ratio", [(0.216, 0.982), (1.0, 0.9999997)])
def test_docstring_example_of_the_loss_below_the_sharp_bound(epsilon, ratio):
    """The largest replace-one log-ratio at M = 2, N = 20, beta = 0.3 (private_quantile_privacy_loss docstring)."""
    worst = 0.0
    laws = []
    for k in range(21):
        scores = np.array([0.25] * k + [0.75] * (20 - k))
        laws.append(_private_quantile_probabilities(scores, 0.3, epsilon, 2, log=True, variant="tight")[1])
    for left, right in zip(laws, laws[1:]):
        worst = max(worst, float(np.max(np.abs(left - right))))
    assert worst / epsilon == pytest.approx(ratio, abs=5e-4 if ratio < 0.99 else 5e-8)
