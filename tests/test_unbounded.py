"""The unbounded private quantile: grid, counting, exact law, privacy audits, coverage, rng and bad input."""

import functools
import itertools
import math
import warnings

import numpy as np
import pytest

from dpcp_tutorial import unbounded as ub
from dpcp_tutorial._counts import BAD_GRID_SCORES
from dpcp_tutorial.unbounded import (
    GridHistogram,
    unbounded_grid,
    unbounded_histogram,
    unbounded_private_quantile,
    unbounded_quantile_miscoverage_bound,
    unbounded_quantile_privacy_loss,
    unbounded_quantile_probabilities,
    unbounded_quantile_target,
)

SMALL = dict(growth=2.0, max_steps=4)          # candidates 0, 1, 3, 7


def test_grid_is_the_formula_and_strictly_increasing():
    grid = unbounded_grid(0.5, 2.0, 1.5, 30)
    np.testing.assert_allclose(grid, 0.5 + 2.0 * (1.5 ** np.arange(30) - 1), rtol=1e-13)
    assert np.all(np.diff(grid) > 0)
    assert unbounded_grid(**SMALL).tolist() == [0.0, 1.0, 3.0, 7.0]


@pytest.mark.parametrize("kwargs, kind", [
    (dict(growth=1.0), ValueError), (dict(growth=0.5), ValueError), (dict(unit=0.0), ValueError),
    (dict(unit=-1.0), ValueError), (dict(max_steps=0), ValueError), (dict(max_steps=2.5), TypeError),
    (dict(max_steps=10 ** 7), ValueError), (dict(growth=2.0, max_steps=2000), ValueError),
    (dict(lower=1e20, unit=1.0, growth=1.01), ValueError), (dict(lower=float("nan")), ValueError),
    (dict(lower="0"), TypeError), (dict(growth=True), TypeError),
])
def test_bad_grid_parameters_are_refused(kwargs, kind):
    with pytest.raises(kind):
        unbounded_grid(**kwargs)


def test_histogram_cells_equal_a_binary_search():
    rng = np.random.default_rng(0)
    grid = unbounded_grid()
    values = np.concatenate([
        rng.exponential(size=5000), rng.lognormal(3, 4, size=5000), grid[::37], np.nextafter(grid[::41], np.inf),
        np.nextafter(grid[1::43], -np.inf), [0.0, np.inf, 1e300, grid[-1]], np.zeros(7),
    ])
    rng.shuffle(values)
    hist = unbounded_histogram(values)
    expected = np.bincount(np.searchsorted(grid, values, side="left"), minlength=grid.size + 1)
    np.testing.assert_array_equal(hist.counts, expected)
    parts = unbounded_histogram(values[:3000]) + unbounded_histogram(values[3000:])
    np.testing.assert_array_equal(parts.counts, hist.counts)
    assert unbounded_histogram(hist) is hist


@pytest.mark.parametrize("bad", [[0.1, np.nan], [0.1, -1e-300], [-np.inf, 1.0]])
def test_invalid_scores_get_one_fixed_message(bad):
    with pytest.raises(ValueError) as first:
        unbounded_private_quantile(np.array(bad * 20), 0.2, 1.0, rng=0)
    with pytest.raises(ValueError) as second:
        unbounded_private_quantile(np.array([0.3, np.nan, -5.0] * 3), 0.2, 1.0, rng=0)
    assert str(first.value) == str(second.value) == BAD_GRID_SCORES


def test_scores_below_a_positive_lower_are_refused_and_inf_is_a_score():
    with pytest.raises(ValueError, match="at or above `lower`"):
        unbounded_private_quantile([1.0, 2.0, 0.5], 0.4, 1.0, lower=1.0, n=50, rng=0)
    q = unbounded_private_quantile(np.full(100, np.inf), 0.2, 2.0, rng=0)
    assert q == math.inf


def test_exact_law_matches_the_sampler():
    scores = np.array([0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 5.0, 6.0, 9.0, np.inf] * 2)
    outcomes, p = unbounded_quantile_probabilities(scores, 0.3, 1.0, **SMALL)
    assert outcomes.tolist() == [0.0, 1.0, 3.0, 7.0, math.inf]
    assert abs(p.sum() - 1.0) < 1e-12
    rng = np.random.default_rng(5)
    draws = 20000
    sample = np.array([unbounded_private_quantile(scores, 0.3, 1.0, rng=rng, **SMALL) for _ in range(draws)])
    freq = np.array([np.mean(sample == o) for o in outcomes])
    se = np.sqrt(p * (1 - p) / draws)
    assert np.all(np.abs(freq - p) <= 5 * se + 1e-4)


def _exact_log_law(data, n=None, beta=0.3, epsilon=1.0):
    return unbounded_quantile_probabilities(np.asarray(data, dtype=float), beta, epsilon, n=n, log=True,
                                            threshold_share=0.4, **SMALL)[1]


@functools.lru_cache(maxsize=None)
def _law_of_multiset(data: tuple, n=None) -> np.ndarray:
    return _exact_log_law(data, n)


def _log_law(data, n=None):
    """The exact law of the release on ``data``, computed once per multiset: the release counts the scores below
    each candidate, so it depends on the data only through their multiset (tested below on every multiset of
    sizes 4 and 5 on the support)."""
    return _law_of_multiset(tuple(sorted(float(v) for v in data)), n)


SUPPORT = (0.0, 0.5, 1.0, 3.0, 7.0, 8.0, np.inf)      # the lower end, cell interiors, candidates, beyond, +inf


@pytest.mark.slow                        # the audits below rely on it, and they are slow too
@pytest.mark.parametrize("size", [4, 5])
def test_the_law_depends_on_the_multiset_only(size):
    """Every data set of the audits' sizes on the support, shuffled (and reversed, at a public n), has the law of
    its sorted multiset, to the last bit."""
    rng = np.random.default_rng(size)
    for data in itertools.combinations_with_replacement(SUPPORT, size):
        np.testing.assert_array_equal(_exact_log_law(rng.permutation(data)), _log_law(data))
        np.testing.assert_array_equal(_exact_log_law(data[::-1], n=size), _log_law(data, n=size))


@pytest.mark.slow
def test_exact_audit_replace_one():
    worst = 0.0
    for data in itertools.combinations_with_replacement(SUPPORT, 4):
        base = _log_law(data)
        for i, new in itertools.product(range(4), SUPPORT):
            other = list(data)
            other[i] = new
            worst = max(worst, float(np.max(np.abs(base - _log_law(other)))))
    bound = unbounded_quantile_privacy_loss(0.3, 4, 1.0, 4, 0.4)
    assert bound == 1.0
    assert worst <= bound * (1 + 1e-9)
    assert worst > 0.5 * bound             # the audit sees a real loss


@pytest.mark.slow
def test_exact_audit_add_remove_with_private_size():
    worst = 0.0
    for size in (4, 5):
        for data in itertools.combinations_with_replacement(SUPPORT, size):
            base = _log_law(data)
            for extra in SUPPORT:
                worst = max(worst, float(np.max(np.abs(base - _log_law(data + (extra,))))))
        bound = unbounded_quantile_privacy_loss(0.3, size, 1.0, 4, 0.4, relation="add/remove", public_n=False)
        assert worst <= bound * (1 + 1e-9)
    assert worst > 0.5


@pytest.mark.slow
def test_add_remove_with_public_n_is_a_replacement():
    """At a public n the counts are padded with +inf: D and D + r at size n - 1 and n are a replacement."""
    n = 5
    worst = 0.0
    for data in itertools.combinations_with_replacement(SUPPORT, 4):
        padded = list(data) + [np.inf]
        for extra in SUPPORT:
            worst = max(worst, float(np.max(np.abs(_log_law(padded, n=n) - _log_law(list(data) + [extra], n=n)))))
    assert worst <= unbounded_quantile_privacy_loss(0.3, n, 1.0, 4, 0.4, relation="add/remove") * (1 + 1e-9)


def test_worst_case_stop_probability_is_bounded_by_the_lattice_law():
    """j scores at +inf and the rest at the lower end: P(stop anywhere) = P(W <= m - j) exactly."""
    n, beta, eps = 40, 0.3, 2.0
    m = unbounded_quantile_target(beta, n, eps, 4, 0.5)
    w, pmf, p_low = ub._w_lattice(1.0, 1.0, 4)
    for j in range(0, n + 1, 3):
        scores = np.r_[np.zeros(n - j), np.full(j, np.inf)]
        p = unbounded_quantile_probabilities(scores, beta, eps, threshold_share=0.5, **SMALL)[1]
        exact = 1.0 - p[-1]
        bound = p_low + pmf[w <= m - j].sum()
        assert exact <= bound + 1e-12
        assert bound <= exact + 2e-3


def _exact_miscoverage(values, probs, n, beta, eps, **kw):
    """P(test > release) for n i.i.d. scores on ``values`` with probabilities ``probs`` (exact, all multisets)."""
    values = np.asarray(values, dtype=float)
    total = 0.0
    for counts in itertools.product(range(n + 1), repeat=len(values) - 1):
        if sum(counts) > n:
            continue
        full = np.array(list(counts) + [n - sum(counts)])
        weight = math.factorial(n) / np.prod([math.factorial(int(c)) for c in full]) * np.prod(probs ** full)
        outcomes, p = unbounded_quantile_probabilities(np.repeat(values, full), beta, eps, **kw)
        miss = np.array([probs[values > o].sum() for o in outcomes])
        total += weight * float(p @ miss)
    return total


@pytest.mark.slow
@pytest.mark.parametrize("n, beta, eps", [(12, 0.3, 4.0), (20, 0.25, 8.0)])
def test_exact_coverage_on_a_lattice_with_ties(n, beta, eps):
    values, probs = [0.0, 1.0, 2.0, 5.0], np.array([0.4, 0.3, 0.2, 0.1])
    miss = _exact_miscoverage(values, probs, n, beta, eps, **SMALL)
    assert miss <= beta
    assert miss >= 0.05               # not the trivial release


@pytest.mark.slow
def test_monte_carlo_coverage_with_standard_errors():
    rng = np.random.default_rng(11)
    n, beta, eps, reps = 200, 0.1, 1.0, 4000
    misses = 0
    for _ in range(reps):
        s = rng.lognormal(size=n + 1)
        misses += s[-1] > unbounded_private_quantile(s[:-1], beta, eps, rng=rng)
    rate = misses / reps
    assert rate <= beta + 3 * math.sqrt(beta * (1 - beta) / reps)
    assert rate >= 0.03


def test_miscoverage_bound_of_the_target_is_beta_and_monotone():
    for n in (50, 1000, 100000):
        m = unbounded_quantile_target(0.1, n, 1.0)
        assert unbounded_quantile_miscoverage_bound(m, n, 1.0) <= 0.1
        assert unbounded_quantile_miscoverage_bound(m + 0.01, n, 1.0) > 0.1 - 1e-3
    assert unbounded_quantile_miscoverage_bound(5.0, 100, 1.0) <= unbounded_quantile_miscoverage_bound(6.0, 100, 1.0)
    # the price of the steps: about log(K)/eps2 scores
    gap = unbounded_quantile_target(0.1, 10000, 1.0, 100) - unbounded_quantile_target(0.1, 10000, 1.0, 10000)
    b2 = 1.0 / (1.0 - ub.THRESHOLD_SHARE)
    assert 0.8 * b2 * math.log(100) < gap < 1.2 * b2 * math.log(100)


def test_infeasible_sizes_are_refused_by_public_inputs():
    with pytest.raises(ValueError, match="use at least n="):
        unbounded_quantile_target(0.1, 5, 1.0)
    with pytest.raises(ValueError, match="use at least n="):
        unbounded_private_quantile(np.ones(100), 0.1, 1.0, n=5, rng=0)


def test_public_n_subsamples_or_pads_and_allows_empty_scores():
    assert unbounded_private_quantile([], 0.2, 1.0, n=50, rng=0) == math.inf
    s = np.random.default_rng(0).exponential(size=3000)
    a = unbounded_private_quantile(s, 0.1, 1.0, n=1000, rng=3)
    hist = unbounded_histogram(s)
    assert a == unbounded_private_quantile(hist, 0.1, 1.0, n=1000, rng=3)
    assert 1.5 < a < 3.5


def test_rng_threading_and_no_global_state():
    s = np.random.default_rng(1).exponential(size=500)
    assert unbounded_private_quantile(s, 0.1, 0.5, rng=7) == unbounded_private_quantile(s, 0.1, 0.5, rng=7)
    gen = np.random.default_rng(7)
    first = [unbounded_private_quantile(s, 0.1, 0.5, rng=gen) for _ in range(20)]
    assert len(set(first)) > 1
    state = np.random.get_state()[1].copy()
    unbounded_private_quantile(s, 0.1, 0.5, rng=None)
    assert np.array_equal(state, np.random.get_state()[1])
    with pytest.raises(ValueError, match="cannot be seeded"):
        unbounded_private_quantile(s, 0.1, 0.5, rng=1, sampler="opendp")


def test_opendp_sampler_releases_a_candidate():
    pytest.importorskip("opendp")
    s = np.random.default_rng(1).exponential(size=500)
    q = unbounded_private_quantile(s, 0.1, 2.0, sampler="opendp", max_steps=500)
    assert q in set(unbounded_grid(max_steps=500).tolist()) and 1.5 < q < 4.0


def test_privacy_loss_with_private_size_is_close_to_epsilon():
    loss = unbounded_quantile_privacy_loss(0.1, 1000, 1.0, relation="add/remove", public_n=False)
    assert 0.5 < loss <= 1.0 + 1e-9
    assert unbounded_quantile_privacy_loss(0.1, 1000, 1.0) == 1.0


@pytest.mark.parametrize("kwargs, kind", [
    (dict(beta=0.0), ValueError), (dict(beta=1.0), ValueError), (dict(epsilon=0.0), ValueError),
    (dict(epsilon=-1.0), ValueError), (dict(threshold_share=0.0), ValueError),
    (dict(threshold_share=1.0), ValueError), (dict(n=0), ValueError), (dict(n=1.5), TypeError),
    (dict(method="bogus"), ValueError), (dict(sampler="bogus"), ValueError), (dict(rng="a"), TypeError),
    (dict(lower=np.inf), ValueError),
])
def test_bad_parameters(kwargs, kind):
    args = dict(beta=0.1, epsilon=1.0)
    args.update(kwargs)
    beta, eps = args.pop("beta"), args.pop("epsilon")
    with pytest.raises(kind):
        unbounded_private_quantile(np.ones(100), beta, eps, **args)


def test_dataframe_columns_and_numpy_scalars():
    pd = pytest.importorskip("pandas")
    s = pd.Series(np.random.default_rng(2).exponential(size=400), name="score")
    assert unbounded_private_quantile(s, np.float32(0.1), np.float64(1.0), n=np.int64(400), rng=0) == \
        unbounded_private_quantile(s.to_numpy(), 0.1, 1.0, n=400, rng=0)
    assert isinstance(unbounded_histogram(s), GridHistogram)


def test_two_stage_is_the_tight_quantile_below_a_private_bound():
    s = np.random.default_rng(4).exponential(size=20_000)
    q = unbounded_private_quantile(s, 0.1, 1.0, method="two_stage", rng=2)
    assert 2.1 < q < 2.6
    gen = np.random.default_rng(2)
    bound = unbounded_private_quantile(s, 0.05, 0.2, rng=gen)
    from dpcp_tutorial import private_quantile
    inner = private_quantile(np.minimum(s / bound, 1.0), 0.1, 0.8, bins=1000, rng=gen)
    assert q == bound * inner
    with pytest.raises(TypeError, match="array, not a histogram"):
        unbounded_private_quantile(unbounded_histogram(s), 0.1, 1.0, method="two_stage", rng=2)
    assert unbounded_private_quantile([], 0.1, 1.0, method="two_stage", n=2000, rng=0) == math.inf


def test_two_stage_says_nothing_about_a_huge_score():
    """A score of 1e308 (valid: any real at or above lower) is clipped to the bound without an overflow
    warning; its neighbour without it releases the same, silently too."""
    s = np.random.default_rng(0).uniform(0.0, 0.5, 2000)
    huge = s.copy()
    huge[0] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        releases = {unbounded_private_quantile(x, 0.1, 1.0, method="two_stage", n=2000, rng=7) for x in (s, huge)}
    assert len(releases) == 1


@pytest.mark.slow
def test_two_stage_monte_carlo_coverage():
    rng = np.random.default_rng(12)
    n, beta, eps, reps = 2000, 0.1, 1.0, 1500
    misses = 0
    for _ in range(reps):
        s = rng.lognormal(size=n + 1)
        misses += s[-1] > unbounded_private_quantile(s[:-1], beta, eps, method="two_stage", rng=rng)
    assert misses / reps <= beta + 3 * math.sqrt(beta * (1 - beta) / reps)


@pytest.mark.slow
def test_opendp_sampler_has_the_exact_law():
    pytest.importorskip("opendp")
    scores = np.array([0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 5.0, 6.0, 9.0, np.inf] * 2)
    _, p = unbounded_quantile_probabilities(scores, 0.3, 1.0, **SMALL)
    draws = 3000
    sample = np.array([unbounded_private_quantile(scores, 0.3, 1.0, sampler="opendp", **SMALL) for _ in range(draws)])
    freq = np.array([np.mean(sample == o) for o in [0.0, 1.0, 3.0, 7.0, math.inf]])
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / draws) + 1e-3)
