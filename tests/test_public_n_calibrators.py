"""A public n means exactly n scores in every calibrator that takes one (subsample or pad), with exact checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpcp_tutorial import (
    laplace_histogram_quantile,
    opendp_quantile,
    pcoqs_quantile,
    pps_choose_m,
    pps_privacy_loss,
    pps_private_quantile,
    pps_quantile_probabilities,
)
from dpcp_tutorial._counts import EdgeHistogram, edge_histogram
from dpcp_tutorial.private_split import pps_corrected_level, pps_grid, pps_optimal_gamma

SCORES = np.random.default_rng(11).uniform(0.0, 1.0, 20)

CALIBRATORS = {
    "pcoqs": lambda s, **kw: pcoqs_quantile(s, 0.2, 2.0, **kw),
    "laplace_histogram": lambda s, **kw: laplace_histogram_quantile(s, 0.2, 2.0, bins=10, **kw),
    "opendp": lambda s, **kw: opendp_quantile(s, 0.2, 2.0, bins=10, **kw),
}


@pytest.mark.parametrize("name", CALIBRATORS)
def test_padding_and_subsampling_are_the_documented_rule(name):
    release = CALIBRATORS[name]
    # fewer scores than n: padded with the top of the public range (nothing is drawn)
    assert release(SCORES[:5], n=8, rng=3) == release(np.r_[SCORES[:5], np.ones(3)], rng=3)
    assert release(np.empty(0), n=4, rng=3) == release(np.ones(4), rng=3)
    assert release(SCORES[:5] * 4, n=8, rng=3, upper=4.0) == release(np.r_[SCORES[:5] * 4, np.full(3, 4.0)],
                                                                       rng=3, upper=4.0)
    # more scores than n: a uniform n-subset drawn from rng, then the mechanism's own draws from the same rng
    gen = np.random.default_rng(3)
    subset = SCORES[gen.permutation(SCORES.size)[:8]]
    assert release(SCORES, n=8, rng=3) == release(subset, rng=gen)
    # exactly n scores: nothing is drawn, the release is that of n=None
    assert release(SCORES, n=SCORES.size, rng=3) == release(SCORES, rng=3)


def test_pps_subsamples_from_the_counts_and_pads_with_one():
    m, _ = pps_choose_m(8, 0.2, 20.0)
    assert pps_private_quantile(SCORES[:5], 0.2, 20.0, n=8, rng=4) == \
        pps_private_quantile(np.r_[SCORES[:5], np.ones(3)], 0.2, 20.0, rng=4)
    assert pps_private_quantile([], 0.2, 20.0, n=8, rng=4) == pps_private_quantile(np.ones(8), 0.2, 20.0, rng=4)
    gen = np.random.default_rng(4)
    hist = edge_histogram(SCORES, pps_grid(m))
    subset = EdgeHistogram(hist.edges, gen.multivariate_hypergeometric(hist.counts, 8).astype(np.int64))
    assert pps_private_quantile(SCORES, 0.2, 20.0, n=8, rng=4) == \
        pps_private_quantile(subset, 0.2, 20.0, m=m, n=8, rng=gen)


def test_pps_on_dask_is_the_in_memory_release():
    da = pytest.importorskip("dask.array")
    from dpcp_tutorial import scale

    for n in (8, 20, 30):
        expected = pps_private_quantile(SCORES, 0.2, 20.0, n=n, rng=5)
        with_dask = scale.pps_private_quantile(da.from_array(SCORES, chunks=7), 0.2, 20.0, n=n, rng=5)
        assert with_dask == expected


ALPHA, EPS, M, N_PUBLIC = 0.4, 50.0, 4, 6
LATTICE = (0.0, 0.3, 0.6, 1.0)


def _law(data, n=N_PUBLIC):
    """Exact law of pps_private_quantile(data, n=n) for the grid M: padded, or averaged over the n-subsets."""
    data = np.asarray(data, dtype=float)
    if data.size <= n:
        padded = np.r_[data, np.ones(n - data.size)]
        return pps_quantile_probabilities(padded, ALPHA, EPS, M, n=n)[1]
    laws = [pps_quantile_probabilities(data[list(keep)], ALPHA, EPS, M, n=n)[1]
            for keep in itertools.combinations(range(data.size), n)]
    return np.mean(laws, axis=0)


def test_pps_add_remove_loss_with_a_public_n_is_the_replace_one_loss():
    """Exhaustive over lattice data sets of sizes n - 1, n, n + 1: every add/remove pair's log-ratio is within
    pps_privacy_loss(relation='add/remove'), which equals the replace-one loss epsilon."""
    bound = pps_privacy_loss(N_PUBLIC, ALPHA, EPS, M, relation="add/remove")
    assert bound == pps_privacy_loss(N_PUBLIC, ALPHA, EPS, M) == EPS
    gamma = pps_optimal_gamma(N_PUBLIC, ALPHA, EPS)
    qtilde = pps_corrected_level(N_PUBLIC, ALPHA, EPS, M, gamma)
    assert qtilde < 1.0                                                     # an informative release
    worst = 0.0
    for size in (N_PUBLIC - 1, N_PUBLIC):
        for base in itertools.combinations_with_replacement(LATTICE, size):
            law = _law(base)
            for extra in LATTICE:
                other = _law(base + (extra,))
                with np.errstate(divide="ignore"):
                    worst = max(worst, float(np.max(np.abs(np.log(law) - np.log(other)))))
    assert worst <= bound + 1e-9
    # sharp: padding D (n - 1 records) with a 1 and adding r instead is a replacement, so the mechanism's own
    # add/remove loss at a fixed level, eps max(qtilde, 1 - qtilde), is exceeded
    assert worst > EPS * max(qtilde, 1 - qtilde) + 1e-6
    assert worst == pytest.approx(EPS, rel=1e-9)


def test_pps_with_a_public_n_covers_on_fewer_scores():
    """Exact miss rate, lattice scores uniform on four values, n = 6 public and only 3 real scores (padded with
    1): the release still covers at 1 - alpha."""
    values = np.array([0.1, 0.35, 0.6, 0.85])
    edges = pps_grid(M)
    above = np.array([np.mean(values > e) for e in edges])      # P(test score > edge)
    miss = 0.0
    for data in itertools.product(values, repeat=3):            # each ordered data set has probability 4^-3
        law = pps_quantile_probabilities(np.r_[data, np.ones(N_PUBLIC - 3)], ALPHA, EPS, M, n=N_PUBLIC)[1]
        assert np.array_equal(law, _law(data))
        miss += float(law @ above) / 64
    assert miss <= ALPHA
