"""Robust private aggregation of client updates (dpcp_tutorial.aggregation, chapter 13).

Privacy is audited exactly: the candidate mechanism has a computable output law, so for
neighbouring client sets (one client's update replaced) we compare log-probabilities.
"""

import numpy as np
import pytest
from scipy.special import logsumexp

from dpcp_tutorial import (
    aggregation_log_probabilities,
    ball_candidates,
    byzantine_updates,
    clipped_mean_sensitivity,
    dp_clipped_mean_aggregate,
    gaussian_sigma,
    halfspace_depth,
    mechanism_eta,
    private_median_aggregate,
    random_directions,
    robust_aggregate,
)


def _clients(n, d, seed, centre=(1.0, -0.5)):
    rng = np.random.default_rng(seed)
    g = np.r_[np.asarray(centre, dtype=float), np.zeros(max(d - 2, 0))][:d]
    return g + 0.5 * rng.standard_normal((n, d))


def _neighbours(updates, rng):
    """Replace-one neighbours: every client's update swapped for far, near and random vectors."""
    d = updates.shape[1]
    replacements = [np.full(d, 50.0), np.full(d, -50.0), updates.mean(axis=0) + 1e-3, np.zeros(d)]
    replacements += list(rng.uniform(-4, 4, size=(4, d)))
    for i in range(updates.shape[0]):
        for v in replacements:
            other = updates.copy()
            other[i] = v
            yield other


@pytest.mark.parametrize("depth, d", [("halfspace", 2), ("halfspace", 3), ("spatial", 2), ("idd", 3)])
@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 2.0, 1e3])
def test_exact_log_ratio_audit_on_neighbouring_client_sets(depth, d, epsilon):
    """max |log P(D) - log P(D')| <= eps over replace-one neighbours, computed from the exact law."""
    updates = _clients(12, d, seed=1)
    cand = ball_candidates(150, d, 4.0, rng=2)
    directions = None if (depth == "halfspace" and d == 2) or depth == "spatial" else random_directions(40, d, rng=3)
    base = aggregation_log_probabilities(updates, epsilon, cand, depth=depth, directions=directions)
    assert np.isclose(logsumexp(base), 0.0)
    worst = 0.0
    for other in _neighbours(updates, np.random.default_rng(4)):
        logp = aggregation_log_probabilities(other, epsilon, cand, depth=depth, directions=directions)
        worst = max(worst, float(np.max(np.abs(base - logp))))
    assert worst <= epsilon + 1e-9
    if depth == "halfspace" and 0.1 <= epsilon <= 10:
        # the audit is sharp enough to catch a beta twice too large
        assert worst > 0.5 * epsilon


def test_log_probabilities_are_the_exponential_mechanism():
    updates = _clients(20, 2, seed=5)
    cand = ball_candidates(500, 2, 4.0, rng=6)
    values = halfspace_depth(cand, updates)
    expected = mechanism_eta(1.5, "halfspace", 20) * values
    expected -= logsumexp(expected)
    assert np.allclose(aggregation_log_probabilities(updates, 1.5, cand), expected, atol=1e-10)


def test_huge_beta_stays_finite():
    """eps * n = 10^7: exp(beta * depth) would overflow; the law is computed in log space."""
    updates = _clients(10_000, 2, seed=7)
    cand = ball_candidates(50, 2, 4.0, rng=8)
    logp = aggregation_log_probabilities(updates, 1e3, cand, depth="halfspace",
                                         directions=random_directions(64, 2, rng=9))
    assert np.all(~np.isnan(logp)) and np.isclose(logsumexp(logp), 0.0)
    out = private_median_aggregate(updates, 1e3, cand, directions=random_directions(64, 2, rng=9), rng=10)
    assert np.any(np.all(cand == out, axis=1))


def test_sampler_follows_the_exact_law():
    """Frequencies of 2000 seeded draws over 4 candidates agree with the law within 4.5 binomial SE."""
    updates = _clients(8, 2, seed=11)
    cand = np.array([[1.0, -0.5], [0.5, 0.0], [2.0, -1.0], [-1.0, 1.0]])
    p = np.exp(aggregation_log_probabilities(updates, 0.8, cand))
    rng = np.random.default_rng(12)
    draws = np.array([private_median_aggregate(updates, 0.8, cand, rng=rng) for _ in range(2000)])
    freq = np.array([np.mean(np.all(draws == c, axis=1)) for c in cand])
    se = np.sqrt(p * (1 - p) / 2000)
    assert np.all(np.abs(freq - p) <= 4.5 * se + 1e-12)


def test_same_seed_same_release():
    updates = _clients(30, 2, seed=13)
    cand = ball_candidates(1000, 2, 4.0, rng=14)
    a = private_median_aggregate(updates, 2.0, cand, rng=15)
    b = private_median_aggregate(updates, 2.0, cand, rng=15)
    assert np.array_equal(a, b)


def test_minority_of_attackers_cannot_pull_it_away():
    """40 clients, 8 colluding at -10 x the honest mean, eps = 5: the release stays within 1.0 of the
    honest mean in a seeded run, and the exact probability of a larger distance is below 1e-3."""
    rng = np.random.default_rng(16)
    honest = _clients(32, 2, seed=17)
    updates = byzantine_updates(honest, 8, "collude", scale=10.0, rng=rng)
    centre = honest.mean(axis=0)
    cand = ball_candidates(5000, 2, 4.0, rng=rng)
    u = random_directions(90, 2, rng=18)
    release = private_median_aggregate(updates, 5.0, cand, directions=u, rng=rng)
    assert np.linalg.norm(release - centre) < 1.0
    p = np.exp(aggregation_log_probabilities(updates, 5.0, cand, directions=u))
    assert p[np.linalg.norm(cand - centre, axis=1) > 1.0].sum() < 1e-3
    assert np.linalg.norm(robust_aggregate(updates, "mean") - centre) > 2.0   # the mean is pulled away


@pytest.mark.parametrize("seed", [19, 20, 21])
def test_robustness_theorem_bound_holds(seed):
    """P(release outside P(H)) <= K_out / K_t * exp(-beta (t - m/n)) (chapter 13), exactly."""
    rng = np.random.default_rng(seed)
    honest = _clients(30, 2, seed=seed)
    updates = byzantine_updates(honest, 6, "collude", scale=8.0, rng=rng)
    cand = ball_candidates(3000, 2, 4.0, rng=rng)
    u = random_directions(60, 2, rng=rng)
    values = halfspace_depth(cand, updates, method="directions", directions=u)
    proj_h, proj_c = honest @ u.T, cand @ u.T
    out = np.any((proj_c > proj_h.max(axis=0)) | (proj_c < proj_h.min(axis=0)), axis=1)
    assert np.all(values[out] <= 6 / 36 + 1e-12)
    for epsilon in (1.0, 3.0, 6.0):
        p = np.exp(aggregation_log_probabilities(updates, epsilon, cand, directions=u))
        t = values.max()
        bound = out.sum() / np.sum(values >= t) * np.exp(-mechanism_eta(epsilon, "halfspace", 36) * (t - 6 / 36))
        assert p[out].sum() <= bound + 1e-12


def test_ball_candidates_are_uniform_in_the_ball():
    """Inside B(c, R); the fraction within R/2 is 2^-d within 4.5 binomial SE (20000 draws)."""
    for d in (1, 2, 5):
        c = np.arange(d, dtype=float)
        pts = ball_candidates(20_000, d, 3.0, center=c, rng=22)
        r = np.linalg.norm(pts - c, axis=1)
        assert pts.shape == (20_000, d) and r.max() <= 3.0 + 1e-12
        p = 0.5 ** d
        assert abs(np.mean(r <= 1.5) - p) <= 4.5 * np.sqrt(p * (1 - p) / 20_000)
    assert np.array_equal(ball_candidates(10, 3, 1.0, rng=23), ball_candidates(10, 3, 1.0, rng=23))


def test_dp_clipped_mean_noise_and_bias():
    """Noise sd = analytic Gaussian sigma for sensitivity 2C/n (within 5%, 4000 draws); mean within 4.5 SE."""
    updates = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [-6.0, 8.0]])
    clipped = np.array([[0.6, 0.8], [0.3, 0.4], [0.0, 0.0], [-0.6, 0.8]]).mean(axis=0)
    assert clipped_mean_sensitivity(4, 1.0) == 0.5
    sigma = gaussian_sigma(0.5, 1.0, 1e-5)
    rng = np.random.default_rng(24)
    draws = np.array([dp_clipped_mean_aggregate(updates, 1.0, 1.0, 1e-5, rng=rng) for _ in range(4000)])
    assert np.all(np.abs(draws.mean(axis=0) - clipped) <= 4.5 * sigma / np.sqrt(4000))
    assert np.all(np.abs(draws.std(axis=0) / sigma - 1) < 0.05)


def test_robust_aggregate_values():
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [100.0, 100.0]])
    assert np.allclose(robust_aggregate(x, "mean"), [20.4, 20.4])
    assert np.allclose(robust_aggregate(x, "coordinate_median"), [1.0, 1.0])
    assert np.linalg.norm(robust_aggregate(x, "spatial_median") - [0.5, 0.5]) < 1.0
    tukey = robust_aggregate(x, "tukey_median")
    assert np.any(np.all(x[:4] == tukey, axis=1))
    x3 = np.random.default_rng(25).standard_normal((30, 3))
    assert robust_aggregate(x3, "tukey_median", directions=random_directions(50, 3, rng=26)).shape == (3,)


def test_byzantine_updates_attacks():
    honest = np.array([[1.0, 2.0], [3.0, 2.0]])
    coll = byzantine_updates(honest, 3, "collude", scale=2.0, rng=0)
    assert coll.shape == (5, 2) and np.allclose(coll[2:], [-4.0, -4.0])
    flip = byzantine_updates(honest, 2, "sign_flip", scale=1.0, rng=0)
    assert all(any(np.allclose(row, -h) for h in honest) for row in flip[2:])
    noise = byzantine_updates(honest, 500, "noise", scale=10.0, rng=0)
    assert abs(noise[2:].std() / 10.0 - 1) < 0.1
    assert byzantine_updates(honest, 0, rng=0).shape == (2, 2)


@pytest.mark.parametrize("call, match", [
    (lambda: private_median_aggregate(np.ones(5), 1.0, np.zeros((3, 5))), "two-dimensional"),
    (lambda: private_median_aggregate(np.ones((1, 2)), 1.0, np.zeros((3, 2))), "at least 2"),
    (lambda: private_median_aggregate(np.array([[np.nan, 0.0], [1.0, 1.0]]), 1.0, np.zeros((3, 2)) + 5), "NaN"),
    (lambda: private_median_aggregate(np.eye(2), 0.0, np.zeros((3, 2)) + 5), "epsilon"),
    (lambda: private_median_aggregate(np.eye(2), 1.0, np.zeros((3, 3)) + 5), "columns"),
    (lambda: private_median_aggregate(np.eye(3), 1.0, np.zeros((3, 3)) + 5), "directions"),
    (lambda: private_median_aggregate(np.eye(2), 1.0, np.zeros((3, 2)) + 5, depth="smoothed_idd"), "Langevin"),
    (lambda: private_median_aggregate(np.eye(2), 1.0, np.zeros((3, 2)) + 5, depth="tukey"), "not supported"),
    (lambda: ball_candidates(10, 2, 0.0), "radius"),
    (lambda: ball_candidates(10, 2, 1.0, center=[0.0, 1.0, 2.0]), "center"),
    (lambda: dp_clipped_mean_aggregate(np.eye(2), 1.0, 1.0, 0.0), "delta > 0"),
    (lambda: dp_clipped_mean_aggregate(np.eye(2), -1.0, 1.0, 1e-5), "clip_norm"),
    (lambda: robust_aggregate(np.eye(2), "median"), "choose one of"),
    (lambda: robust_aggregate(np.eye(3), "tukey_median"), "directions"),
    (lambda: byzantine_updates(np.eye(2), 2, "lie"), "choose one of"),
    (lambda: byzantine_updates(np.eye(2), -1), ">= 0"),
])
def test_bad_input_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_type_errors():
    with pytest.raises(TypeError):
        ball_candidates(10.5, 2, 1.0)
    with pytest.raises(TypeError):
        private_median_aggregate(np.eye(2), 1.0, np.zeros((3, 2)) + 5, rng="seed")
