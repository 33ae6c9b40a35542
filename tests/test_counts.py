"""The counting core shared by the in-memory and the distributed releases (dpcp_tutorial._counts)."""

import numpy as np
import pytest

from dpcp_tutorial import pps_grid, quantile_edges
from dpcp_tutorial._counts import (
    EdgeHistogram,
    below_above,
    edge_histogram,
    halfspace_from_counts,
    idd_from_counts,
    merge_histograms,
    projection_counts,
    round_up_counts,
    spatial_from_sums,
    spatial_sums,
)
from dpcp_tutorial._depth_core import project
from dpcp_tutorial.depth import halfspace_depth, integrated_dual_depth, random_directions, spatial_depth

EDGES = [quantile_edges(1000), quantile_edges(100), quantile_edges(7), quantile_edges(3), pps_grid(11), pps_grid(101),
         pps_grid(1001), pps_grid(2),
         np.array([0.1, 0.35, 1.0]), np.array([0.0, 1e-300, 0.5, 1.0])]


def reference_codes(values, edges):
    """Cell code 2 #{e < s} + [s == some e], by brute force."""
    below = (edges[None, :] < values[:, None]).sum(axis=1)
    equal = (edges[None, :] == values[:, None]).any(axis=1)
    return 2 * below + equal


def hard_scores(edges, rng):
    near = np.concatenate([edges, np.nextafter(edges, 0.0), np.nextafter(edges, 2.0)])
    return np.clip(np.concatenate([near, [0.0, 1.0, 5e-324], rng.uniform(size=3000),
                                   rng.integers(0, 41, size=2000) / 40]), 0.0, 1.0)


@pytest.mark.parametrize("edges", EDGES, ids=lambda e: f"L={e.size}")
def test_histogram_is_exact_on_edges_ties_and_neighbours(edges):
    rng = np.random.default_rng(edges.size)
    s = hard_scores(edges, rng)
    h = edge_histogram(s, edges)
    assert np.array_equal(h.counts, np.bincount(reference_codes(s, edges), minlength=2 * edges.size + 1))
    assert h.size == s.size
    below, above = below_above(h)
    assert np.array_equal(below, (s[None, :] < edges[:, None]).sum(axis=1))
    assert np.array_equal(above, (s[None, :] > edges[:, None]).sum(axis=1))
    # rounding up to the smallest edge strictly above, capped at the top edge (chapter 4)
    rounded = np.minimum(np.searchsorted(edges, s, side="right"), edges.size - 1)
    assert np.array_equal(round_up_counts(h), np.bincount(rounded, minlength=edges.size))


def test_histograms_of_partitions_add_up_whatever_the_split():
    edges = quantile_edges(50)
    s = hard_scores(edges, np.random.default_rng(1))
    whole = edge_histogram(s, edges).counts
    for cuts in ([1], [10, 11, 3000], [len(s) // 2], list(range(0, len(s), 333))):
        parts = [edge_histogram(p, edges) for p in np.split(s, cuts) if p.size]
        assert np.array_equal(merge_histograms(parts).counts, whole)


def test_histogram_passes_through_and_refuses_other_edges():
    h = edge_histogram(np.array([0.2, 0.5]), quantile_edges(10))
    assert edge_histogram(h, quantile_edges(10)) is h
    with pytest.raises(ValueError, match="other edges"):
        edge_histogram(h, quantile_edges(20))
    with pytest.raises(ValueError, match="different edges"):
        merge_histograms([h, edge_histogram(np.array([0.2]), quantile_edges(20))])
    assert isinstance(h, EdgeHistogram) and h.size == 2


@pytest.mark.parametrize("bad", [[0.1, np.nan], [-0.1, 0.5], [0.2, 1.5], [], [[0.1, 0.2]]])
def test_histogram_validates_scores(bad):
    for edges in (quantile_edges(10), np.array([0.3, 1.0])):
        with pytest.raises(ValueError):
            edge_histogram(bad, edges)


def test_depth_statistics_give_the_in_memory_depths():
    rng = np.random.default_rng(3)
    data = np.round(rng.standard_normal((300, 3)), 1)          # ties on purpose
    cand = np.concatenate([rng.standard_normal((40, 3)), data[:5]])
    u = random_directions(50, 3, rng=rng)
    t = project(cand, u)
    parts = np.array_split(data, [7, 8, 150])
    counts = sum(projection_counts(p, t, u) for p in parts)
    assert np.array_equal(halfspace_from_counts(counts, 300),
                          halfspace_depth(cand, data, method="directions", directions=u))
    assert np.array_equal(idd_from_counts(counts, 300), integrated_dual_depth(cand, data, directions=u))
    sums = sum(spatial_sums(p, cand) for p in parts)
    np.testing.assert_allclose(spatial_from_sums(sums, 300), spatial_depth(cand, data), rtol=0, atol=1e-12)
