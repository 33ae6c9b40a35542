"""OpenDP's make_private_quantile as a conformal calibrator (dpcp_tutorial.calibrators.opendp_quantile)."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcp_tutorial._calibrator_core import opendp_bound, opendp_gap
from dpcp_tutorial.calibrators import (
    _opendp_release,
    _report_noisy_max_log_law,
    opendp_quantile,
    opendp_quantile_level,
    opendp_quantile_probabilities,
)

odp = pytest.importorskip("opendp.prelude")     # pinned in requirements.txt: never skipped in CI
odp.enable_features("contrib")


def _their_measurement(n, candidates, a, scale, relation):
    atom = odp.atom_domain(T=float, nan=False)
    domain = odp.vector_domain(atom, size=n) if relation == "replace-one" else odp.vector_domain(atom)
    return odp.m.make_private_quantile(domain, odp.symmetric_distance(), odp.max_divergence(), candidates, a,
                                       scale)


def _utilities(data, candidates, a):
    """OpenDP's score in real units, written out: |(1-a) #{x < c} - a #{x > c}|."""
    data = np.asarray(data)
    return np.array([abs((1 - a) * np.sum(data < c) - a * np.sum(data > c)) for c in candidates])


def test_scores_are_opendps_and_the_level_is_its_rational():
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
    for relation in ("replace-one", "add/remove"):
        cand, util, scale, a, _, _ = _opendp_release(scores, 0.25, 1.0, 4, 0.0, 1.0, "raw", relation, None)
        assert a == 0.75
        expected = _utilities(scores, cand, 0.75)
        assert np.allclose(util, expected - expected.min())
    # the coordinator's example: 8 points, candidates 0, .25, .5, .75, 1 -> integer scores [24, 16, 8, 0, 8], D = 4
    assert np.allclose(_utilities(scores, [0, .25, .5, .75, 1], 0.75) * 4, [24, 16, 8, 0, 8])


@pytest.mark.parametrize("relation,d_in", [("replace-one", 2), ("add/remove", 1)])
@pytest.mark.parametrize("level", ["corrected", "raw"])
def test_opendps_privacy_map_reports_our_epsilon(relation, d_in, level):
    gen = np.random.default_rng(3)
    for n, epsilon in [(300, 1.0), (1000, 0.3), (5000, 2.0)]:
        scores = gen.uniform(size=n)
        _, util, scale, a, meas, _ = _opendp_release(scores, 0.1, epsilon, 50, 0.0, 1.0, level, relation, None)
        assert util is not None
        assert meas.map(d_in) == pytest.approx(epsilon, rel=1e-12)
        if relation == "add/remove":      # the crude map for replace-one neighbours (d_in = 2)
            assert meas.map(2) == pytest.approx(2 * epsilon, rel=1e-12)


def _chi_square_p(draws, candidates, probs):
    observed = np.array([np.sum(np.isclose(draws, c)) for c in candidates])
    assert observed.sum() == len(draws)
    keep = probs * len(draws) >= 5                 # pool the rare cells
    obs = np.r_[observed[keep], observed[~keep].sum()]
    exp = np.r_[probs[keep], probs[~keep].sum()] * len(draws)
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("relation", ["replace-one", "add/remove"])
def test_our_sampler_and_opendps_follow_the_same_exact_law(relation):
    """Chi-square of both samplers against the exact permute-and-flip law at the matching scale."""
    scores = np.array([0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.6, 0.62, 0.8, 0.9, 0.95, 0.97])
    epsilon, bins = 1.0, 8
    cand, util, scale, a, meas, _ = _opendp_release(scores, 0.25, epsilon, bins, 0.0, 1.0, "raw", relation, None)
    _, probs = opendp_quantile_probabilities(scores, 0.25, epsilon, bins=bins, variant="raw", relation=relation)
    assert probs.max() < 0.6 and np.sum(probs > 0.02) >= 4       # a law with spread: the test has power
    gen = np.random.default_rng(5)
    ours = [opendp_quantile(scores, 0.25, epsilon, bins=bins, variant="raw", relation=relation, rng=gen)
            for _ in range(1200)]
    theirs = [meas([float(s) for s in scores]) for _ in range(1200)]
    p_ours, p_theirs = _chi_square_p(ours, cand, probs), _chi_square_p(theirs, cand, probs)
    print(f"chi-square p-values ({relation}): ours {p_ours:.3f}, OpenDP {p_theirs:.3f}")
    # ours is seeded (deterministic); OpenDP's sampler cannot be seeded, so its threshold keeps flakes below 1e-6
    assert p_ours > 1e-3 and p_theirs > 1e-6


@pytest.mark.parametrize("relation", ["replace-one", "add/remove"])
def test_opendps_law_is_permute_and_flip_not_the_softmax(relation):
    """Two candidates with score gap d: P(best) = 1 - exp(-d/s)/2 (exponential noise), not 1/(1 + exp(-d/s))."""
    scores = np.r_[np.full(9, 0.2), np.full(3, 0.8)]          # u(0.5) = 0, u(1) = 3 at a = 0.75
    cand, util, scale, a, meas, _ = _opendp_release(scores, 0.25, 1.0, 2, 0.0, 1.0, "raw", relation, None)
    assert a == 0.75 and np.allclose(util, [0.0, 3.0])
    pf, softmax = 1 - math.exp(-3.0 / scale) / 2, 1 / (1 + math.exp(-3.0 / scale))
    _, probs = opendp_quantile_probabilities(scores, 0.25, 1.0, bins=2, variant="raw", relation=relation)
    assert probs[0] == pytest.approx(pf, abs=1e-12)
    draws = 1500
    best = sum(meas([float(v) for v in scores]) == 0.5 for _ in range(draws)) / draws
    se = math.sqrt(pf * (1 - pf) / draws)
    print(f"OpenDP P(best) {best:.4f}; permute-and-flip {pf:.4f} +- {se:.4f}; softmax {softmax:.4f}")
    assert abs(best - pf) < 4 * se
    assert abs(best - softmax) > 4 * se


def test_exact_law_matches_brute_force_integration():
    util = np.array([0.0, 0.3, 1.7, 0.1, 5.0])
    scale = 0.8
    law = np.exp(_report_noisy_max_log_law(util, scale))
    gen = np.random.default_rng(0)
    draws = np.argmin(util / scale - gen.standard_exponential((200000, util.size)), axis=1)
    freq = np.bincount(draws, minlength=util.size) / draws.size
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(freq, law, atol=4e-3)


def _neighbours(scores, gen, relation, grid):
    out = []
    for _ in range(6):
        i = int(gen.integers(scores.size))
        new = float(gen.choice(np.r_[0.0, 1.0, grid, gen.uniform()]))
        if relation == "replace-one":
            other = scores.copy()
            other[i] = new
            out.append(other)
        else:
            out += [np.delete(scores, i), np.append(scores, new)]
    return out


@pytest.mark.parametrize("relation", ["replace-one", "add/remove"])
def test_exact_privacy_audit_of_the_corrected_release(relation):
    """Max log-ratio of the exact law over neighbours (ties, lattice, extreme scores) <= epsilon,
    and the stated loss under the other relation (level fixed from the public n)."""
    epsilon, bins, n = 1.0, 10, 300
    _, _, scale, a, _, _ = _opendp_release(np.full(n, 0.5), 0.1, epsilon, bins, 0.0, 1.0, "corrected", relation,
                                        None)
    other_relation = "add/remove" if relation == "replace-one" else "replace-one"
    other_bound = epsilon * max(a, 1 - a) if relation == "replace-one" else epsilon / max(a, 1 - a)
    cand = np.linspace(0, 1, bins + 1)[1:]
    gen = np.random.default_rng(8)
    worst = {relation: 0.0, other_relation: 0.0}
    for trial in range(20):
        pool = [gen.uniform(size=n), gen.choice(cand, n), np.round(gen.beta(8, 1, size=n), 1), np.ones(n),
                np.zeros(n)]
        scores = pool[trial % len(pool)]
        rounded = lambda s: cand[np.minimum(np.searchsorted(cand, s, side="left"), bins - 1)]   # noqa: E731
        base = _report_noisy_max_log_law(_utilities(rounded(scores), cand, a), scale)
        for rel in worst:
            for other in _neighbours(scores, gen, rel, cand):
                law = _report_noisy_max_log_law(_utilities(rounded(other), cand, a), scale)
                worst[rel] = max(worst[rel], np.max(np.abs(law - base)))
    print(f"exact audit ({relation} scale): worst log-ratio {worst[relation]:.4f} <= epsilon {epsilon}; "
          f"under {other_relation} {worst[other_relation]:.4f} <= {other_bound:.4f}")
    assert worst[relation] <= epsilon + 1e-9
    assert worst[relation] > 0.3 * epsilon          # not vacuous
    assert worst[other_relation] <= other_bound + 1e-9


def _all_utils(counts, a):
    """u_j for data given as counts per candidate (already on the grid)."""
    n = counts.sum()
    through = np.cumsum(counts)
    below = np.r_[0, through[:-1]]
    return np.abs((1 - a) * below - a * (n - through)), through


@pytest.mark.parametrize("a", [0.9, 0.95, 0.97, 0.99])
def test_gap_bound_holds_on_random_lattice_data_and_is_attained(a):
    gen = np.random.default_rng(int(a * 100))
    n, k, bins = 200, 181, 12
    for trial in range(1500):
        weights = gen.dirichlet(np.full(bins, gen.choice([0.05, 0.3, 2.0])))
        counts = gen.multinomial(n, weights)
        util, through = _all_utils(counts, a)
        J = int(np.searchsorted(through, k))          # c_J = s_(k)
        if J == 0:
            continue
        gap = util[:J].min() - util[J:].min()
        assert gap >= opendp_gap(a, n, k) - 1e-9
    # the worst case of the Notes: k-1 low scores, a tie block, the rest one cell higher
    y = int(round(a * n - (1 - a) * (k - 1)))
    if k <= y <= n:
        counts = np.zeros(bins, int)
        counts[0] = k - 1
        counts[5] = y - (k - 1)
        counts[6] = n - y
        util, through = _all_utils(counts, a)
        J = int(np.searchsorted(through, k))
        assert util[:J].min() - util[J:].min() == pytest.approx(opendp_gap(a, n, k), abs=1.0)


def test_level_bound_at_most_alpha_and_monotone_in_n():
    levels = [opendp_quantile_level(0.1, n, 1.0, bins=100) for n in (300, 1000, 10**4)]
    assert levels[0] > levels[1] > levels[2] > 0.9
    assert opendp_quantile_level(0.1, 100, 0.1) == 1.0          # infeasible: trivial release
    assert opendp_bound(0.9, 1000, 901, 100, 1.0, "replace-one") == 1.0   # no gap at the raw level


def _coverage_reps(sample, truth_cdf, n, alpha, epsilon, bins, relation, reps, seed):
    gen = np.random.default_rng(seed)
    cov = []
    for _ in range(reps):
        scores = sample(gen, n)
        cand, probs = opendp_quantile_probabilities(scores, alpha, epsilon, bins=bins, relation=relation)
        cov.append(float(probs @ truth_cdf(cand)))       # exact coverage given the calibration set
    cov = np.array(cov)
    return cov.mean(), cov.std(ddof=1) / math.sqrt(reps)


@pytest.mark.parametrize("relation", ["replace-one", "add/remove"])
def test_corrected_level_covers_on_continuous_and_worst_case_lattice_data(relation):
    alpha, n, epsilon, bins = 0.1, 300, 1.0, 20
    cand = np.linspace(0, 1, bins + 1)[1:]
    mean, se = _coverage_reps(lambda g, m: g.uniform(size=m), lambda c: np.minimum(c, 1.0), n, alpha, epsilon,
                              bins, relation, 30, 1)
    print(f"uniform scores ({relation}): coverage {mean:.4f} +- {se:.4f}")
    assert mean >= 1 - alpha - 3 * se
    # lattice law shaped like the worst case: 89% spread low, a thin cell at 0.8, the rest at 0.85
    values = np.r_[cand[:10], 0.8, 0.85]
    weights = np.r_[np.full(10, 0.089), 0.02, 0.09]
    cdf = lambda c: np.array([weights[values <= x + 1e-12].sum() for x in c])   # noqa: E731
    mean, se = _coverage_reps(lambda g, m: g.choice(values, m, p=weights), cdf, n, alpha, epsilon, bins,
                              relation, 30, 2)
    print(f"worst-case lattice ({relation}): coverage {mean:.4f} +- {se:.4f}")
    assert mean >= 1 - alpha - 3 * se


def test_raw_level_is_opendp_as_is_and_can_under_cover():
    """Raw OpenDP at a = 1 - alpha on tied data: coverage well below 1 - alpha (exact law, no Monte Carlo)."""
    values = np.array([0.1, 0.5, 0.6])
    scores = np.r_[np.full(88, 0.1), np.full(4, 0.5), np.full(8, 0.6)]    # P(S <= 0.5) = 0.92
    cand, probs = opendp_quantile_probabilities(scores, 0.1, 2.0, bins=10, variant="raw")
    cdf = np.array([np.sum(scores <= c + 1e-12) / scores.size for c in cand])
    print(f"raw OpenDP on tied data: coverage {probs @ cdf:.3f}")
    assert probs @ cdf < 0.9
    cand, probs = opendp_quantile_probabilities(scores, 0.1, 2.0, bins=10)
    assert probs @ cdf >= 0.9
    assert values.size == 3


def test_same_seed_same_result_and_trivial_release_reads_no_scores():
    scores = np.random.default_rng(0).uniform(size=500)
    assert opendp_quantile(scores, 0.1, 1.0, rng=4) == opendp_quantile(scores, 0.1, 1.0, rng=4)
    assert opendp_quantile(scores[:50], 0.1, 0.5, rng=0) == 1.0
    assert opendp_quantile(scores[:50] * 0, 0.1, 0.5, rng=0) == 1.0
    gen = np.random.default_rng(1)
    assert len({opendp_quantile(scores, 0.1, 0.3, variant="raw", rng=gen) for _ in range(10)}) > 1


@pytest.mark.parametrize("call", [
    lambda: opendp_quantile([0.1, 0.2], 0.0, 1.0),
    lambda: opendp_quantile([0.1, 0.2], 0.1, 0.0),
    lambda: opendp_quantile([0.1, 0.2], 0.1, 1.0, variant="exact"),
    lambda: opendp_quantile([0.1, 0.2], 0.1, 1.0, relation="swap"),
    lambda: opendp_quantile([0.1, 0.2], 0.1, 1.0, n=0),
    lambda: opendp_quantile([0.1, np.nan], 0.1, 1.0),
    lambda: opendp_quantile([0.1, 0.2], 0.1, 1.0, bins=0),
    lambda: opendp_quantile([0.1, 0.2], 0.1, 1.0, lower=1.0, upper=0.0),
    lambda: opendp_quantile_level(0.1, 0, 1.0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("call", [
    lambda: opendp_quantile(["a"], 0.1, 1.0),
    lambda: opendp_quantile([0.1], 0.1, 1.0, bins=2.5),
    lambda: opendp_quantile([0.1], 0.1, 1.0, rng="seed"),
])
def test_bad_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_opendp_contrib_is_enabled_only_while_the_package_builds_a_measurement():
    """sampler='opendp' and opendp_quantile leave OpenDP's global feature flags as the caller set them."""
    from opendp.mod import GLOBAL_FEATURES

    from dpcp_tutorial import laplace_mechanism, opendp_quantile

    saved = set(GLOBAL_FEATURES)
    try:
        GLOBAL_FEATURES.discard("contrib")
        laplace_mechanism(np.zeros(3), 1.0, 1.0, sampler="opendp")
        opendp_quantile(np.linspace(0.05, 0.95, 50), 0.1, 1.0, bins=20)
        assert "contrib" not in GLOBAL_FEATURES
        GLOBAL_FEATURES.add("contrib")                 # a caller who enabled it keeps it
        laplace_mechanism(np.zeros(3), 2.0, 1.0, sampler="opendp")
        assert "contrib" in GLOBAL_FEATURES
    finally:
        GLOBAL_FEATURES.clear()
        GLOBAL_FEATURES.update(saved)


def test_level_is_the_deprecated_name_of_variant():
    scores = np.random.default_rng(4).uniform(size=300)
    new = opendp_quantile(scores, 0.1, 1.0, bins=20, variant="raw", rng=5)
    with pytest.warns(FutureWarning, match="level= is renamed variant="):
        assert opendp_quantile(scores, 0.1, 1.0, bins=20, level="raw", rng=5) == new
    _, law = opendp_quantile_probabilities(scores, 0.1, 1.0, bins=20, variant="raw")
    with pytest.warns(FutureWarning, match="level= is renamed variant="):
        _, old_law = opendp_quantile_probabilities(scores, 0.1, 1.0, bins=20, level="raw")
    np.testing.assert_array_equal(old_law, law)
    for fn in (opendp_quantile, opendp_quantile_probabilities):
        with pytest.raises(TypeError, match="pass variant= only"):
            fn(scores, 0.1, 1.0, bins=20, variant="raw", level="raw")
