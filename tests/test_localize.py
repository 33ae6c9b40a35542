"""Private localisation and the depth median's private prior: exact audits, edges, rng, the account."""

import itertools
import warnings

import numpy as np
import pytest

from dpcp_tutorial.localize import (LOCALIZATION_SPLIT, _above_threshold, above_threshold_log_probabilities,
                                    localization_grids, localization_log_probabilities, private_localization,
                                    radius_counts, radius_grid)
from dpcp_tutorial.median import GaussianPrior, depth_median_account, private_depth_median, private_prior

EPS = 1.0
# a small lattice with ties, zero, a sign change and the largest accepted magnitude
LATTICE = (-3.0, 0.0, 0.0, 1.0, 2.5, 1e100)


def _neighbours(data):
    """Every add/remove and replace-one neighbour of ``data`` over the lattice values (1-D records)."""
    n = len(data)
    add = [data + [v] for v in sorted(set(LATTICE))]
    remove = [data[:i] + data[i + 1:] for i in range(n)] if n > 2 else []
    replace = [data[:i] + [v] + data[i + 1:] for i in range(n) for v in sorted(set(LATTICE))]
    return add + remove, replace


def _max_log_ratio(lp, lq):
    finite = np.isfinite(lp) | np.isfinite(lq)
    assert np.array_equal(np.isfinite(lp), np.isfinite(lq))
    return float(np.max(np.abs(lp[finite] - lq[finite])))


def _sets():
    """Small 1-D data sets on the lattice: ties, extremes, n = 2 and 3."""
    values = sorted(set(LATTICE))
    return [list(c) for n in (2, 3) for c in itertools.combinations_with_replacement(values, n)][::3]


@pytest.mark.parametrize("step", ["radius", "centre", "scale"])
def test_each_step_is_exactly_epsilon_dp_on_a_lattice_under_both_relations(step):
    """Max log-ratio of each step's exact law over all neighbours (both relations), at fixed earlier releases."""
    share = dict(zip(("radius", "centre", "scale"), LOCALIZATION_SPLIT))[step]
    worst = 0.0
    for data in (_sets()[::4] if step == "radius" else _sets()):     # the radius law is a quadrature: fewer sets
        x = np.array(data)[:, None]
        kw = {} if step == "radius" else dict(radius=4.0, centre=[0.5])
        lp = localization_log_probabilities(x, EPS, step, **kw)
        for group in _neighbours(data):
            for other in group:
                lq = localization_log_probabilities(np.array(other)[:, None], EPS, step, **kw)
                worst = max(worst, _max_log_ratio(lp, lq))
    assert worst <= share * EPS + 1e-9
    assert worst > 0.5 * share * EPS          # the audit is not vacuous: some neighbour comes close


def test_the_radius_audit_covers_the_grid_extremes():
    """Records at 0 and at the largest magnitude: counts at the bottom and at the top of the grid change."""
    lp = localization_log_probabilities(np.array([[0.0], [1e100]]), EPS, "radius")
    lq = localization_log_probabilities(np.array([[0.0], [0.0]]), EPS, "radius")
    assert _max_log_ratio(lp, lq) <= LOCALIZATION_SPLIT[0] * EPS + 1e-9
    assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-9)
    assert radius_grid()[-1] > 1e100 and radius_grid()[0] < 1e-30


def test_above_threshold_law_matches_its_sampler():
    queries = np.array([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0])
    counts, target = queries + 3.0, 3.0
    p = np.exp(above_threshold_log_probabilities(queries, EPS))
    rng = np.random.default_rng(0)
    draws = 20000
    freq = np.bincount([_above_threshold(counts, target, EPS, rng) for _ in range(draws)], minlength=6) / draws
    se = np.sqrt(p * (1 - p) / draws)
    assert np.all(np.abs(freq - p) < 5 * se)


def test_above_threshold_quadrature_agrees_with_a_fine_rule():
    queries = np.array([-1.0, 0.0, 0.5, 2.0])
    coarse = above_threshold_log_probabilities(queries, 0.7)
    fine = above_threshold_log_probabilities(queries, 0.7, nodes=200)
    np.testing.assert_allclose(coarse, fine, atol=1e-10)


def test_the_release_depends_on_the_data_only_through_counts():
    """Permuting rows, or adding rows whose counts are those of another set, gives the same release."""
    rng = np.random.default_rng(3)
    x = rng.normal(1000.0, 1.0, size=(500, 3))
    a = private_localization(x, 1.0, rng=5)
    b = private_localization(x[::-1], 1.0, rng=5)
    np.testing.assert_array_equal(a.centre, b.centre)
    assert (a.scale, a.radius) == (b.scale, b.radius)


def test_localization_finds_uncentred_data_without_a_bound():
    rng = np.random.default_rng(0)
    for mean, spread in ((1000.0, 1.0), (1000.0, 100.0), (-2e4, 3.0), (0.0, 1.0)):
        x = mean + spread * rng.standard_normal((20000, 3))
        loc = private_localization(x, 1.0, rng=1)
        assert np.all(np.abs(loc.centre - mean) < 0.5 * spread + 2 * loc.radius / 2 ** 16)
        assert 0.5 * spread < loc.scale < 3 * spread + loc.radius / 1000


def test_grids_are_public_functions_of_the_radius():
    centres, scales = localization_grids(4.0, 3)
    assert centres.size == 2 ** 16 and centres[0] > -4.0 and centres[-1] < 4.0
    assert np.all(np.diff(scales) > 0) and scales[-1] == 8.0 and scales[0] == pytest.approx(8.0 / 2 ** 16)


@pytest.mark.parametrize("data", [np.zeros((2, 1)), np.full((5, 2), 1e100), np.full((5, 2), -1e100),
                                  np.array([[0.0, 1e100], [5e-324, -1e100], [1.0, 1.0]]),
                                  np.repeat([[3.0, 3.0]], 50, axis=0)])
def test_extreme_and_tied_data_release_without_error_or_warning(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loc = private_localization(data, 1.0, rng=0)
        prior = private_prior(data, 1.0, rng=0)
        release = private_depth_median(data, 1.0, prior="private", n_candidates=50, rng=0)
    assert np.all(np.isfinite(loc.centre)) and loc.scale > 0 and np.all(np.abs(loc.centre) <= loc.radius)
    assert isinstance(prior, GaussianPrior) and np.all(np.isfinite(release))


def test_rng_threading():
    x = np.random.default_rng(1).normal(size=(300, 2))
    state = np.random.get_state()
    a = private_depth_median(x, 1.0, prior="private", rng=11)
    np.testing.assert_array_equal(a, private_depth_median(x, 1.0, prior="private", rng=11))
    np.testing.assert_array_equal(a, private_depth_median(x, 1.0, prior="private",
                                                          rng=np.random.default_rng(11)))
    assert not np.array_equal(a, private_depth_median(x, 1.0, prior="private", rng=12))
    assert np.all(np.isfinite(private_depth_median(x, 1.0, prior="private", rng=None)))
    new_state = np.random.get_state()
    assert new_state[0] == state[0] and np.array_equal(new_state[1], state[1])


def test_the_private_prior_is_the_localisation_then_the_depth_mechanism():
    """Same generator: the localisation consumes it first, then the candidates are drawn from its prior."""
    x = np.random.default_rng(2).normal(50.0, 2.0, size=(400, 2))
    gen = np.random.default_rng(4)
    prior = private_prior(x, 0.3, gen)
    expected = private_depth_median(x, 0.7, prior=prior, rng=gen)
    np.testing.assert_array_equal(private_depth_median(x, 1.0, prior="private", localize_share=0.3, rng=4), expected)


def test_private_prior_with_box_and_langevin():
    x = np.random.default_rng(2).normal(size=(300, 2))
    box = ([-3.0, -3.0], [3.0, 3.0])
    inside = private_depth_median(x, 1.0, prior="private", box=box, n_candidates=100, rng=1)
    assert np.all((inside >= -3.0) & (inside <= 3.0))
    chain = private_depth_median(x, 1.0, "smoothed_idd", "langevin", prior="private", n_directions=10,
                                 n_steps=30, rng=1)
    assert chain.shape == (2,)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(prior="private", localize_share=0.0), ValueError, "localize_share"),
    (dict(prior="private", localize_share=1.0), ValueError, "localize_share"),
    (dict(prior="private", localize_share=-0.1), ValueError, "localize_share"),
    (dict(prior="private", localize_share=float("nan")), ValueError, "localize_share"),
    (dict(prior="private", localize_share="half"), TypeError, "localize_share"),
    (dict(prior=GaussianPrior(0.0, 1.0), localize_share=0.2), ValueError, "only used with prior='private'"),
    (dict(box=([0.0, 0.0], [1.0, 1.0]), localize_share=0.2), ValueError, "only used with prior='private'"),
    (dict(prior="private", candidates=np.zeros((3, 2))), ValueError, "not combined with explicit candidates"),
    (dict(prior="Private"), ValueError, "GaussianPrior or 'private'"),
    (dict(prior="private", n_candidates=10 ** 8), ValueError, "would not fit in memory"),
])
def test_public_only_edges_of_the_private_prior(kwargs, error, match):
    """Refused from public inputs alone: the same message on a data set and on its neighbour."""
    x = np.random.default_rng(0).normal(size=(20, 2))
    for data in (x, np.vstack([x, [[1e100, -1e100]]])):
        with pytest.raises(error, match=match):
            private_depth_median(data, 1.0, **kwargs)


def test_sampler_is_a_deprecated_alias_of_method():
    x = np.random.default_rng(0).normal(size=(50, 2))
    prior = GaussianPrior(0.0, 1.0)
    with pytest.warns(FutureWarning, match="renamed method="):
        old = private_depth_median(x, 1.0, sampler="candidates", prior=prior, rng=3)
    np.testing.assert_array_equal(old, private_depth_median(x, 1.0, method="candidates", prior=prior, rng=3))
    np.testing.assert_array_equal(old, private_depth_median(x, 1.0, "spatial", "candidates", prior, rng=3))
    with pytest.raises(TypeError, match="method= only"):
        private_depth_median(x, 1.0, method="candidates", sampler="candidates", prior=prior)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        private_depth_median(x, 1.0, prior=prior, rng=3)


def test_account_composes_both_parts_under_both_relations():
    acc = depth_median_account(2.0, "private", localize_share=0.25)
    assert acc.relation == "replace-one" and acc.epsilon == pytest.approx(2.0)
    assert acc.replace_one == pytest.approx((2.0, 0.0))
    assert acc.add_remove == pytest.approx((0.5 + 0.75, 0.0))
    public = depth_median_account(2.0)
    assert public.replace_one == pytest.approx((2.0, 0.0)) and public.add_remove == pytest.approx((1.0, 0.0))
    assert depth_median_account(1.0, "private").add_remove == pytest.approx((0.2 + 0.4, 0.0))
    with pytest.raises(ValueError, match="only used with prior='private'"):
        depth_median_account(1.0, localize_share=0.3)


def test_radius_counts_add_across_parts():
    x = np.random.default_rng(0).normal(size=(100, 3)) * 10
    np.testing.assert_array_equal(radius_counts(x), radius_counts(x[:37]) + radius_counts(x[37:]))
