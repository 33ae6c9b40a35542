"""Tests of the peers' private calibrators (dpcp_tutorial.calibrators)."""

import math

import numpy as np
import pytest

from dpcp_tutorial.calibrators import (
    laplace_histogram_quantile,
    laplace_prefix_tail,
    pcoqs_quantile,
    pcoqs_steps,
)


def _pcoqs_transcription(scores, alpha, rho, noise_rng, lower=0.0, upper=1.0, tol=1e-10):
    """A line-by-line transcription of the published search (O(nT) range counts), unrounded."""
    n = len(scores)
    steps = math.ceil(math.log2((upper - lower) / tol))
    sigma = math.sqrt(steps / (2 * rho))
    noise = sigma * noise_rng.standard_normal(steps)
    m = math.ceil((1 - alpha) * (n + 1) - 1e-9 * (n + 1))
    left, right = lower, upper
    for i in range(steps):
        mid = (left + right) / 2
        count = sum(1 for s in scores if lower <= s <= mid)
        c = max(0, math.floor(count + noise[i]))
        if c < m:
            left = mid + tol
        else:
            right = mid
    return (left + right) / 2


def test_pcoqs_steps_matches_the_paper_defaults():
    assert pcoqs_steps() == 34
    assert pcoqs_steps(0.0, 10.0, 1e-3) == math.ceil(math.log2(1e4))


@pytest.mark.parametrize("seed", range(12))
def test_pcoqs_equals_the_transcription_for_the_same_noise(seed):
    gen = np.random.default_rng(seed)
    n = int(gen.integers(5, 300))
    scores = gen.uniform(size=n)
    if seed % 3 == 0:
        scores = np.round(scores, 1)          # ties and lattice scores
    alpha = float(gen.choice([0.05, 0.1, 0.2, 0.5]))
    rho = float(gen.choice([0.01, 0.5, 5.0]))
    ours = pcoqs_quantile(scores, alpha, rho, decimals=None, rng=seed + 100)
    ref = _pcoqs_transcription(list(scores), alpha, rho, np.random.default_rng(seed + 100))
    assert ours == ref
    rounded = pcoqs_quantile(scores, alpha, rho, rng=seed + 100)
    assert rounded == round(ref, 2)
    up = pcoqs_quantile(scores, alpha, rho, rounding="up", rng=seed + 100)
    assert up >= ref and up - ref < 0.01 + 1e-12


def test_pcoqs_without_noise_lands_between_the_two_order_statistics():
    gen = np.random.default_rng(3)
    scores = gen.uniform(size=999)
    ordered = np.sort(scores)
    m = math.ceil(0.9 * 1000)
    out = pcoqs_quantile(scores, 0.1, 1e12, decimals=None, rng=0)
    # floor(count + tiny noise) is count - 1 for negative noise: the search may stop at the next statistic
    assert ordered[m - 1] - 1e-9 <= out <= ordered[m] + 1e-9


def test_pcoqs_per_step_counts_have_sensitivity_one():
    """Each step's range count differs by at most one between neighbours, at every midpoint (both relations)."""
    gen = np.random.default_rng(5)
    scores = np.round(gen.uniform(size=60), 2)
    mids = np.concatenate([np.linspace(0, 1, 2001), scores, [0.0, 1.0]])
    counts = lambda s: np.searchsorted(np.sort(s), mids, side="right")   # noqa: E731
    base = counts(scores)
    for i in range(scores.size):
        for new in (0.0, 1.0, 0.5, float(scores[(i + 1) % scores.size])):
            replaced = scores.copy()
            replaced[i] = new
            assert np.abs(counts(replaced) - base).max() <= 1
        assert np.abs(counts(np.delete(scores, i)) - base).max() <= 1


def test_pcoqs_same_seed_same_result_and_generator_advances():
    scores = np.random.default_rng(0).uniform(size=200)
    assert pcoqs_quantile(scores, 0.1, 0.1, rng=7) == pcoqs_quantile(scores, 0.1, 0.1, rng=7)
    gen = np.random.default_rng(7)
    draws = {pcoqs_quantile(scores, 0.1, 0.01, decimals=None, rng=gen) for _ in range(5)}
    assert len(draws) > 1


@pytest.mark.parametrize("bins,failure", [(1, 0.05), (10, 0.01), (100, 0.05),
                                          pytest.param(1000, 0.01, marks=pytest.mark.slow)])
def test_laplace_prefix_tail_bounds_the_running_maximum(bins, failure):
    tau = laplace_prefix_tail(bins, 2.0, failure)
    gen = np.random.default_rng(bins)
    reps = 20000
    running_max = gen.laplace(0.0, 2.0, size=(reps, bins)).cumsum(axis=1).max(axis=1)
    rate = float((running_max >= tau).mean())
    assert rate <= failure + 3 * math.sqrt(failure * (1 - failure) / reps)
    # and it is not absurdly loose: a quarter of tau is exceeded far more often
    assert float((running_max >= tau / 4).mean()) > failure


def test_laplace_prefix_tail_is_monotone():
    assert laplace_prefix_tail(100, 1.0, 0.01) > laplace_prefix_tail(100, 1.0, 0.1)
    assert laplace_prefix_tail(200, 1.0, 0.01) > laplace_prefix_tail(100, 1.0, 0.01)
    assert laplace_prefix_tail(100, 2.0, 0.01) == pytest.approx(2 * laplace_prefix_tail(100, 1.0, 0.01))


def _histogram(scores, bins):
    edges = np.linspace(0.0, 1.0, bins + 1)
    cell = np.clip(np.searchsorted(edges, scores, side="left") - 1, 0, bins - 1)
    return np.bincount(cell, minlength=bins)


@pytest.mark.parametrize("relation,factor", [("replace-one", 2.0), ("add/remove", 1.0)])
def test_laplace_histogram_exact_privacy_audit(relation, factor):
    """The released noisy histogram's log density ratio is sum_j |h_j - h'_j| / b; audit it on neighbours."""
    epsilon, bins = 0.7, 20
    scale = factor / epsilon
    gen = np.random.default_rng(11)
    edge_values = np.linspace(0, 1, bins + 1)
    worst = 0.0
    for trial in range(200):
        n = int(gen.integers(1, 40))
        pool = [gen.uniform(size=n), np.round(gen.uniform(size=n), 1), gen.choice(edge_values, n),
                np.zeros(n), np.ones(n)]
        scores = pool[trial % len(pool)]
        h = _histogram(scores, bins)
        i = int(gen.integers(n))
        new = float(gen.choice([0.0, 1.0, gen.uniform(), gen.choice(edge_values)]))
        neighbours = []
        if relation == "replace-one":
            replaced = scores.copy()
            replaced[i] = new
            neighbours.append(replaced)
        else:
            neighbours += [np.delete(scores, i), np.append(scores, new)]
        for other in neighbours:
            worst = max(worst, np.abs(_histogram(other, bins) - h).sum() / scale)
    assert worst <= epsilon + 1e-12
    assert worst == pytest.approx(epsilon)      # attained: the bound is tight


def test_laplace_histogram_uses_the_same_cells_as_the_audit():
    scores = np.array([0.0, 0.05, 0.051, 0.5, 1.0])
    out = laplace_histogram_quantile(scores, 0.5, 1e9, bins=20, variant="corrected", rng=0)
    # no noise to speak of: k = 4, cells (e_{j-1}, e_j] put 0.05 in the first cell and 0.051 in the second,
    # so the first edge with >= 4 scores at or below it is 0.5 = the 4th smallest score
    assert out == pytest.approx(0.5)
    assert laplace_histogram_quantile(scores, 0.5, 1e9, bins=20, rng=0, n=5) == out


@pytest.mark.parametrize("lattice", [False, True])
def test_corrected_laplace_histogram_covers(lattice):
    """Monte Carlo with binomial standard errors: coverage >= 1 - alpha (exact given each threshold)."""
    alpha, n, reps = 0.1, 2000, 400
    gen = np.random.default_rng(21 + lattice)
    grid = np.linspace(0, 1, 41)
    covered = []
    for _ in range(reps):
        if lattice:
            scores = gen.choice(grid, size=n)
            t = laplace_histogram_quantile(scores, alpha, 1.0, bins=50, rng=gen)
            covered.append(np.mean(grid <= t + 1e-12))      # P(S <= t) for S uniform on the lattice
        else:
            scores = gen.uniform(size=n)
            t = laplace_histogram_quantile(scores, alpha, 1.0, bins=50, rng=gen)
            covered.append(min(t, 1.0))                    # P(U <= t)
    covered = np.array(covered)
    se = covered.std(ddof=1) / math.sqrt(reps)
    assert covered.mean() >= 1 - alpha - 3 * se
    assert covered.mean() < 0.999          # informative, not the trivial threshold


def test_paper_variant_is_the_interpolated_noisy_cdf():
    gen = np.random.default_rng(2)
    scores = gen.uniform(size=500)
    out = laplace_histogram_quantile(scores, 0.1, 1.0, bins=10, variant="paper", relation="add/remove", rng=9)
    noise = np.random.default_rng(9).laplace(0.0, 1.0, size=10)
    noisy = np.maximum(_histogram(scores, 10) + noise, 0.0)
    cdf = np.concatenate([[0.0], np.cumsum(noisy)]) / noisy.sum()
    expected = float(np.interp(0.9, cdf, np.linspace(0, 1, 11)))
    assert out == pytest.approx(expected, abs=1e-12)


def test_small_n_gives_the_trivial_threshold_not_an_error():
    assert laplace_histogram_quantile([0.2, 0.3], 0.1, 1.0, rng=0) == 1.0
    assert 0.0 <= pcoqs_quantile([0.2, 0.3], 0.1, 1.0, rng=0) <= 1.0


@pytest.mark.parametrize("call", [
    lambda: pcoqs_quantile([0.1, 0.2], 0.0, 1.0),
    lambda: pcoqs_quantile([0.1, 0.2], 0.1, -1.0),
    lambda: pcoqs_quantile([0.1, 0.2], 0.1, 1.0, lower=1.0, upper=0.0),
    lambda: pcoqs_quantile([0.1, 0.2], 0.1, 1.0, tol=0.0),
    lambda: pcoqs_quantile([0.1, 0.2], 0.1, 1.0, rounding="down"),
    lambda: pcoqs_quantile([0.1, 0.2], 0.1, 1.0, n=0),
    lambda: pcoqs_quantile([0.1, np.nan], 0.1, 1.0),
    lambda: laplace_histogram_quantile([0.1], 0.1, 0.0),
    lambda: laplace_histogram_quantile([0.1], 0.1, 1.0, bins=0),
    lambda: laplace_histogram_quantile([0.1], 0.1, 1.0, variant="exact"),
    lambda: laplace_histogram_quantile([0.1], 0.1, 1.0, relation="swap"),
    lambda: laplace_prefix_tail(10, 1.0, 1.5),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("call", [
    lambda: pcoqs_quantile([0.1, 0.2], "0.1", 1.0),
    lambda: pcoqs_quantile([0.1, 0.2], 0.1, 1.0, decimals=2.0),
    lambda: pcoqs_quantile([0.1, 0.2], 0.1, 1.0, rng="seed"),
    lambda: laplace_histogram_quantile(["a"], 0.1, 1.0),
    lambda: laplace_histogram_quantile([0.1], 0.1, 1.0, bins=10.5),
])
def test_bad_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


# --------------------------------------------------------------------------- P-COQS, corrected level
def test_pcoqs_corrected_level_matches_the_grid_runner_and_is_public():
    from dpcp_tutorial import pcoqs_corrected_level
    from dpcp_tutorial.experiments import calibrator_grid as grid

    for alpha, n, rho in [(0.1, 1000, 0.5), (0.1, 10**4, 0.045), (0.05, 300, 4.5), (0.1, 100, 0.005)]:
        assert pcoqs_corrected_level(alpha, n, rho) == grid.pcoqs_corrected_alpha(alpha, n, rho)
    level = pcoqs_corrected_level(0.1, 1000, 0.5)
    assert 0.0 < level < 0.1                          # a higher target rank than the authors'
    assert pcoqs_corrected_level(0.1, 100, 0.005) is None
    # more budget or more data: a level closer to alpha
    assert pcoqs_corrected_level(0.1, 1000, 5.0) > level
    assert pcoqs_corrected_level(0.1, 10**5, 0.5) > level


def test_pcoqs_at_the_corrected_level_covers_uniform_scores():
    """Monte Carlo: coverage given t is t for uniform scores; mean over 400 releases >= 0.9 - 3 SE."""
    from dpcp_tutorial import pcoqs_corrected_level, pcoqs_quantile

    n, rho = 300, 0.5
    level = pcoqs_corrected_level(0.1, n, rho)
    gen = np.random.default_rng(1616)
    cover = np.array([pcoqs_quantile(gen.uniform(size=n), level, rho, rounding="up", rng=gen)
                      for _ in range(400)])
    cover = np.minimum(cover, 1.0)
    assert cover.mean() + 3 * cover.std(ddof=1) / np.sqrt(cover.size) >= 0.9
    # the shipped target under-covers measurably more often (sanity check of the test's power)
    shipped = np.array([pcoqs_quantile(gen.uniform(size=n), 0.1, rho, rng=gen) for _ in range(400)])
    assert shipped.mean() < cover.mean()


def test_pcoqs_corrected_level_rejects_bad_input():
    from dpcp_tutorial import pcoqs_corrected_level

    for kwargs in (dict(alpha=0.0, n=100, rho=1.0), dict(alpha=0.1, n=0, rho=1.0), dict(alpha=0.1, n=100, rho=-1.0),
                   dict(alpha=0.1, n=100, rho=1.0, lower=1.0, upper=0.0)):
        with pytest.raises(ValueError):
            pcoqs_corrected_level(**kwargs)
