"""Tests for dpcp_tutorial.tukey_exact: regions against brute-force depth, the sampler against the exact law,
an exact privacy audit of the law, degenerate data and bad input (chapter 15)."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from dpcp_tutorial import (
    exact_cell_probabilities,
    halfspace_depth,
    polygon_area,
    private_tukey_median_2d,
    tukey_depth_regions,
    tukey_median_2d,
)
from dpcp_tutorial.tukey_exact import _clip_exact

BOX = ((-3.0, -3.0), (3.0, 3.0))


def _datasets():
    rng = np.random.default_rng(7)
    lattice = np.array([[i, j] for i in range(-2, 3) for j in range(-2, 3)], float) * 0.5
    return {
        "gaussian": rng.standard_normal((40, 2)),
        "lattice": lattice,
        "lattice_ties": np.r_[lattice, lattice[:7]],
        "collinear": np.c_[np.arange(-3, 4) * 0.25, np.arange(-3, 4) * 0.125],      # exactly on y = x / 2
        # 0.3 * x rounds: the same line up to ~1e-17, so the points are in general position (slivers of area)
        "nearly_collinear": np.c_[np.linspace(-1, 1, 7), 0.3 * np.linspace(-1, 1, 7)],
        "ties": np.repeat(rng.standard_normal((6, 2)), 3, axis=0),
        "four_corners": np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], float),   # deepest region is a point
        "outside_box": np.r_[rng.standard_normal((20, 2)), [[10, 10], [-20, 5], [4, -4]]],
        "integers": rng.integers(-2, 3, (30, 2)).astype(float),
        "one_point": np.array([[0.3, 0.2]]),
        "all_equal": np.zeros((5, 2)),
        "far_away": rng.standard_normal((10, 2)) + 50.0,
    }


def _chisquare_p(observed, expected):
    """Pearson chi-square p-value, pooling cells with expected count below 5."""
    observed, expected = np.asarray(observed, float).ravel(), np.asarray(expected, float).ravel()
    keep = expected >= 5
    ob, ex = np.r_[observed[keep], observed[~keep].sum()], np.r_[expected[keep], expected[~keep].sum()]
    if ex[-1] < 1e-9:
        assert ob[-1] == 0
        ob, ex = ob[:-1], ex[:-1]
    return stats.chisquare(ob, ex * ob.sum() / ex.sum()).pvalue


def _brute_count(points, data):
    if len(data) == 1:
        return np.all(points == data[0], axis=1).astype(int)
    return np.rint(halfspace_depth(points, data) * len(data)).astype(int)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(_datasets()))
def test_regions_equal_brute_force_depth_on_a_fine_grid(name):
    """On a 161 x 161 grid (which hits lattice points and region boundaries) the level read off the exact
    polygons equals the exact depth count of the records on the public grid (``reg.data``), capped at the
    deepest level with area, at every grid point: no tolerance, boundaries included."""
    data = _datasets()[name]
    reg = tukey_depth_regions(data, BOX)
    g = np.linspace(-3, 3, 161)
    grid = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    count = _brute_count(grid, reg.data)
    with_area = [k for k, p in zip(reg.levels, reg.polygons) if p.shape[0] >= 3]
    k_area = max(with_area, default=0)
    np.testing.assert_array_equal(reg.level_of(grid), np.minimum(count, k_area))
    assert reg.complete and reg.levels[0] == 0
    assert reg.max_depth >= count.max()                  # no grid point is deeper than the deepest region
    if np.all(np.abs(reg.deepest_point) < 3):
        assert _brute_count(reg.deepest_point[None], reg.data)[0] == reg.max_depth
    np.testing.assert_allclose(reg.annulus_areas.sum(), 36.0)
    assert np.all(reg.annulus_areas >= 0)
    for p, a in zip(reg.polygons, reg.areas):
        assert np.isclose(polygon_area(p), a)


def test_records_are_rounded_to_the_public_grid():
    """The grid of [-3, 3]^2 has step 2^-26 on both axes: dyadic data are unchanged, others move by at most half a
    step, near-duplicates closer than that merge, and a denormal becomes 0."""
    step = 2.0 ** -26
    data = np.array([[0.5, -1.25], [0.1, 0.3], [2.0, -1.0], [np.nextafter(2.0, 3.0), -1.0], [5e-324, -5e-324]])
    reg = tukey_depth_regions(data, BOX)
    np.testing.assert_array_equal(reg.data, np.rint(data / step) * step)
    assert np.all(np.abs(reg.data - data) <= step / 2)
    np.testing.assert_array_equal(reg.data[[0, 2, 3, 4]], [[0.5, -1.25], [2.0, -1.0], [2.0, -1.0], [0.0, 0.0]])
    far = tukey_depth_regions(np.array([[10.0, 0.1], [-7.0, 3.3]]), ((0.0, 0.0), (1.5, 100.0)))
    np.testing.assert_array_equal(far.data, np.rint(far.data / [2.0 ** -28, 2.0 ** -22]) * [2.0 ** -28, 2.0 ** -22])


def test_regions_match_depth_at_random_points_and_areas_by_monte_carlo():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((60, 2)) @ np.array([[1.0, 0.4], [0.0, 0.5]])
    reg = tukey_depth_regions(data, BOX)
    pts = rng.uniform(-3, 3, (20000, 2))
    count = _brute_count(pts, data)
    np.testing.assert_array_equal(reg.level_of(pts), np.minimum(count, reg.levels[-1]))
    freq = np.bincount(np.minimum(count, reg.levels[-1]), minlength=len(reg.levels)) / len(pts)
    np.testing.assert_allclose(freq, reg.annulus_areas / 36.0, atol=4 * np.sqrt(0.25 / len(pts)))


def test_deepest_region_and_median():
    data = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], float)
    reg = tukey_depth_regions(data, BOX)
    assert reg.max_depth == 2                       # the crossing of the diagonals
    np.testing.assert_allclose(reg.deepest_point, [0, 0], atol=1e-9)
    np.testing.assert_allclose(reg.annulus_areas, [34.0, 2.0])
    tri = np.array([[0, 0], [2, 0], [0, 2]], float)
    np.testing.assert_allclose(tukey_median_2d(tri, BOX), [2 / 3, 2 / 3], atol=1e-12)


def test_depth_regions_are_affine_equivariant():
    rng = np.random.default_rng(5)
    data = rng.standard_normal((30, 2))
    a = np.array([[2.0, 0.5], [0.0, 1.5]])
    reg = tukey_depth_regions(data, ((-8, -8), (8, 8)))
    reg2 = tukey_depth_regions(data @ a.T + 1.0, ((-30, -30), (30, 30)))
    inside = reg.levels[1:]
    # every region lies well inside both boxes, so the areas scale by det(a)
    # up to the rounding of the records to the public grids (steps 2^-25 and 2^-23: relative 1e-7)
    np.testing.assert_allclose(reg2.areas[1:], reg.areas[1:] * np.linalg.det(a), rtol=1e-5)
    np.testing.assert_array_equal(reg2.levels[1:], inside)


# --------------------------------------------------------------------------- the law and the sampler

def test_level_probabilities_are_the_exponential_mechanism():
    data = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], float)
    reg = tukey_depth_regions(data, BOX)
    eps = 0.7
    w = np.array([34.0, 2.0 * np.exp(eps / 2)])
    np.testing.assert_allclose(reg.level_probabilities(eps), w / w.sum())
    pts = np.array([[0.1, 0.1], [2.0, 2.0], [5.0, 0.0]])
    np.testing.assert_allclose(reg.density(pts, eps), [w[1] / w.sum() / 2, w[0] / w.sum() / 34, 0.0])


@pytest.mark.slow
@pytest.mark.parametrize("tail_mass", [0.0, 1e-12, 0.3])
def test_sampler_levels_match_the_exact_law(tail_mass):
    """Chi-square over depth levels; tail_mass=0.3 forces the slow path (the tail token) often."""
    rng = np.random.default_rng(11)
    data = rng.standard_normal((50, 2))
    eps = 0.5
    reg = tukey_depth_regions(data, BOX)
    p = reg.level_probabilities(eps)
    draws = private_tukey_median_2d(data, eps, BOX, size=20000, tail_mass=tail_mass, rng=1)
    lv = np.minimum(_brute_count(draws, data), reg.levels[-1])
    obs = np.bincount(lv, minlength=len(p))
    assert _chisquare_p(obs, p * len(draws)) > 1e-3
    assert np.all((draws >= -3) & (draws <= 3))


def test_sampler_cells_match_exact_cell_probabilities_and_annulus_is_uniform():
    rng = np.random.default_rng(12)
    data = rng.standard_normal((30, 2)) * 0.8
    eps = 1.0
    reg = tukey_depth_regions(data, BOX)
    edges = np.linspace(-3, 3, 9)
    cells = exact_cell_probabilities(reg, eps, edges, edges)
    np.testing.assert_allclose(cells.sum(), 1.0)
    draws = private_tukey_median_2d(data, eps, BOX, size=30000, rng=2)
    obs, _, _ = np.histogram2d(draws[:, 0], draws[:, 1], [edges, edges])
    assert _chisquare_p(obs, cells * len(draws)) > 1e-3
    # uniformity within one annulus: x-coordinate quantiles of the draws on level k against area fractions
    k = int(reg.levels[len(reg.levels) // 2])
    on = draws[_brute_count(draws, data) == k]
    fine = np.linspace(-3, 3, 13)
    outer, inner = reg.polygons[list(reg.levels).index(k)], reg.polygons[list(reg.levels).index(k) + 1]
    from dpcp_tutorial.tukey_exact import _cell_areas
    ann = _cell_areas(outer, fine, np.array([-3.0, 3.0]))[:, 0] - _cell_areas(inner, fine, np.array([-3.0, 3.0]))[:, 0]
    counts = np.histogram(on[:, 0], fine)[0]
    assert counts.sum() > 500
    assert _chisquare_p(counts, ann / ann.sum() * counts.sum()) > 1e-3


@pytest.mark.slow
def test_sampler_agrees_with_rejection_from_the_prior():
    """An independent exact sampler: uniform on the box, accept with probability exp(eps (c - n)/2)."""
    rng = np.random.default_rng(21)
    data = rng.integers(-1, 2, (12, 2)).astype(float) * 0.7      # lattice with ties
    eps = 0.8
    prop = rng.uniform(-3, 3, (200000, 2))
    acc = prop[rng.random(len(prop)) < np.exp(0.5 * eps * (_brute_count(prop, data) - 12))]
    ours = private_tukey_median_2d(data, eps, BOX, size=len(acc), rng=4)
    edges = np.linspace(-3, 3, 7)
    a = np.histogram2d(acc[:, 0], acc[:, 1], [edges, edges])[0].ravel()
    b = np.histogram2d(ours[:, 0], ours[:, 1], [edges, edges])[0].ravel()
    keep = a + b > 10
    assert stats.chi2_contingency(np.stack([a[keep], b[keep]])).pvalue > 1e-3


def test_same_seed_same_draws_and_generator_advances():
    data = np.random.default_rng(0).standard_normal((25, 2))
    a = private_tukey_median_2d(data, 1.0, BOX, size=5, rng=3)
    b = private_tukey_median_2d(data, 1.0, BOX, size=5, rng=3)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(3)
    assert not np.array_equal(private_tukey_median_2d(data, 1.0, BOX, rng=g),
                              private_tukey_median_2d(data, 1.0, BOX, rng=g))
    assert private_tukey_median_2d(data, 1.0, BOX, rng=0).shape == (2,)


def test_truncated_regions_are_the_deepest_levels_of_the_full_ones():
    data = np.random.default_rng(8).standard_normal((300, 2))
    full = tukey_depth_regions(data, BOX)
    part = tukey_depth_regions(data, BOX, epsilon=2.0, tail_mass=1e-12)
    assert not part.complete and part.levels[0] > 0
    i = np.searchsorted(full.levels, part.levels)
    np.testing.assert_allclose(part.areas, full.areas[i], rtol=1e-9)
    # the neglected levels really carry less than 1e-12 of the mass
    p = full.level_probabilities(2.0)
    assert p[full.levels < part.levels[0]].sum() <= 1e-12
    with pytest.raises(ValueError, match="truncated"):
        part.level_probabilities(2.0)


# --------------------------------------------------------------------------- exact privacy audit

def _exact_inter_area2(p, q):
    """Twice the area of the intersection of two exact polygons (the second clipped by every edge of the first)."""
    if len(p.verts) < 3 or len(q.verts) < 3:
        return 0
    r = q
    for line in p.edges:
        r = _clip_exact(r, line)
        if len(r.verts) < 3:
            return 0
    return r.area2()


def _privacy_loss(x, y, eps):
    """Exact sup over the box of |log q_x - log q_y| for the laws the module computes.

    The box is cut into the cells {level_x = i, level_y = j} of the two depth functions (their exact polygons;
    exact areas by inclusion-exclusion of the exact intersections R^x_i and R^y_j); on a cell of positive area
    the log-ratio is eps (i - j) / 2 - log(Z_x / Z_y). No assumption |c_x - c_y| <= 1 is made: the audit checks
    it for the computed regions.
    """
    rx, ry = tukey_depth_regions(x, BOX), tukey_depth_regions(y, BOX)
    log_zx = logsumexp(rx.log_level_weights(eps))
    log_zy = logsumexp(ry.log_level_weights(eps))
    px, py = rx._exact["polygons"], ry._exact["polygons"]
    kx, ky = list(rx.levels), list(ry.levels)
    memo = {}

    def inter(i, j):            # twice the area of R^x_{kx[i]} and R^y_{ky[j]} (index past the end: empty)
        if i >= len(px) or j >= len(py):
            return 0
        if (i, j) not in memo:
            memo[i, j] = _exact_inter_area2(px[i], py[j])
        return memo[i, j]

    worst = 0.0
    for i in range(len(px)):
        for j in range(len(py)):
            if inter(i, j) - inter(i + 1, j) - inter(i, j + 1) + inter(i + 1, j + 1) > 0:
                worst = max(worst, abs(0.5 * eps * (int(kx[i]) - int(ky[j])) - log_zx + log_zy))
    return worst


def _replace_neighbours(x, reg):
    out = []
    poly = [p for p in reg.polygons if p.shape[0] >= 3][-1]
    for i, new in [(0, x[1]), (1, np.array([40.0, -40.0])), (2, -x[2]), (3, poly[0]), (4, reg.deepest_point),
                   (5, np.array([0.0, 0.0])), (0, np.array([2.9, 2.9]))]:
        y = x.copy()
        y[i] = new
        out.append(y)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_exact_privacy_audit_replace_one_and_add_remove(eps):
    """max |log q_X - log q_X'| <= eps (replace-one) and <= eps/2 (add/remove), on Gaussian, lattice and tied data
    with a point moved onto another point, onto a region vertex, onto the median and far away."""
    rng = np.random.default_rng(5)
    worst_replace = worst_add = 0.0
    for x in (rng.standard_normal((15, 2)), rng.integers(-1, 2, (15, 2)).astype(float),
              np.repeat(rng.standard_normal((5, 2)), 3, axis=0)):
        reg = tukey_depth_regions(x, BOX)
        for y in _replace_neighbours(x, reg):
            worst_replace = max(worst_replace, _privacy_loss(x, y, eps))
        for y in (x[1:], np.r_[x, x[:1]], np.r_[x, [reg.deepest_point]], np.r_[x, [[10.0, 0.0]]]):
            worst_add = max(worst_add, _privacy_loss(x, y, eps))
    assert worst_replace <= eps + 1e-9
    assert worst_add <= eps / 2 + 1e-9
    assert worst_replace > 0.5 * eps                 # the audit is not vacuous
    assert worst_add > 0.25 * eps


# --------------------------------------------------------------------------- degenerate data never raise

@pytest.mark.parametrize("name", list(_datasets()))
def test_degenerate_data_are_sampled_without_error(name):
    data = _datasets()[name]
    out = private_tukey_median_2d(data, 1.0, BOX, size=200, rng=0)
    assert out.shape == (200, 2) and np.all((out >= -3) & (out <= 3))
    huge = np.r_[data, [[1e200, -1e200]]]
    assert private_tukey_median_2d(huge, 1.0, BOX, rng=0).shape == (2,)
    assert private_tukey_median_2d(data, 1e4, BOX, rng=0).shape == (2,)     # very large epsilon
    assert private_tukey_median_2d(data, 1e-6, BOX, rng=0).shape == (2,)


def test_data_far_outside_the_box_gives_the_uniform_law():
    data = np.random.default_rng(0).standard_normal((20, 2)) + 100.0
    reg = tukey_depth_regions(data, BOX)
    np.testing.assert_array_equal(reg.levels, [0])
    np.testing.assert_allclose(reg.level_probabilities(3.0), [1.0])


# --------------------------------------------------------------------------- bad (public) input

@pytest.mark.parametrize("kwargs, error, match", [
    ({"box": ((0, 0), (0, 1))}, ValueError, "x_max > x_min"),
    ({"box": (0, 1, 2, 3)}, ValueError, "shape"),
    ({"box": ((0, np.nan), (1, 1))}, ValueError, "NaN"),
    ({"box": "abc"}, TypeError, "real numbers"),
    ({"epsilon": 0.0}, ValueError, "positive"),
    ({"epsilon": np.inf}, ValueError, "epsilon"),
    ({"size": 0}, ValueError, "size"),
    ({"size": 2.5}, TypeError, "size"),
    ({"rng": "seed"}, TypeError, "rng"),
    ({"tail_mass": 1.0}, ValueError, "tail_mass"),
    ({"data": np.zeros((5, 3))}, ValueError, "2 columns"),
    ({"data": np.array([[0.0, np.nan]])}, ValueError, "NaN"),
    ({"data": np.zeros(4)}, ValueError, "two-dimensional"),
    ({"data": np.zeros((0, 2))}, ValueError, "row"),
])
def test_bad_input(kwargs, error, match):
    args = {"data": np.zeros((4, 2)), "epsilon": 1.0, "box": BOX, "size": None, "rng": 0}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        private_tukey_median_2d(**args)


def test_bad_input_regions_and_cells():
    with pytest.raises(ValueError, match="needs epsilon"):
        tukey_depth_regions(np.zeros((3, 2)), BOX, tail_mass=1e-3)
    reg = tukey_depth_regions(np.random.default_rng(0).standard_normal((10, 2)), BOX)
    with pytest.raises(ValueError, match="span the box"):
        exact_cell_probabilities(reg, 1.0, np.linspace(-2, 3, 4), np.linspace(-3, 3, 4))
    with pytest.raises(ValueError, match="increasing"):
        exact_cell_probabilities(reg, 1.0, np.array([3.0, -3.0]), np.linspace(-3, 3, 4))


# --------------------------------------------------------------------------- near-degenerate data

_A, _B, _C = np.array([-1.0, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 1.5])
_STEP = 2.0 ** -26          # the public grid step of BOX


def _thin_annulus(h):
    """Triangle vertices doubled and one point at distance h below the edge AB: R_1 minus R_2 is a sliver of
    area h (|AB| = 2), which an area tolerance used to drop."""
    return np.array([_A, _A, _B, _B, _C, _C, [0.0, -h]])


@pytest.mark.parametrize("h", [_STEP, 3 * _STEP, 64 * _STEP])
def test_thin_annulus_pair_both_release_with_the_exact_density(h):
    """A neighbouring pair: X has the sliver at level 1, its neighbour X' (the point moved onto
    C) has it at level 0. Both densities are positive there and their ratio is within e^eps."""
    x = _thin_annulus(h)
    y = x.copy()
    y[-1] = _C
    eps = 1.0
    rx, ry = tukey_depth_regions(x, BOX), tukey_depth_regions(y, BOX)
    k1 = list(rx.levels).index(1)
    assert rx.annulus_areas[k1] == h                                     # the sliver keeps its exact area
    point = np.array([[0.0, -h / 2]])
    assert rx.level_of(point)[0] == 1 and ry.level_of(point)[0] == 0
    dx, dy = rx.density(point, eps)[0], ry.density(point, eps)[0]
    assert dx > 0 and dy > 0
    assert abs(np.log(dx / dy)) <= eps + 1e-9
    assert _privacy_loss(x, y, eps) <= eps + 1e-9
    for data in (x, y):                                                  # and both sample
        assert private_tukey_median_2d(data, eps, BOX, size=50, rng=0).shape == (50, 2)


def _near_degenerate_cases():
    """(data, replace-one neighbours, add/remove neighbours) in configurations a tolerance would blur."""
    rng = np.random.default_rng(31)
    cases = []
    for h in (_STEP, 5 * _STEP):                                          # a thin annulus
        x = _thin_annulus(h)
        cases.append((x, [np.r_[x[:-1], [_C]], np.r_[x[:-1], [[0.0, h]]], np.r_[x[:-1], [[0.0, -2 * h]]]],
                      [x[:-1], np.r_[x, [[0.0, -h / 2]]]]))
    base = rng.standard_normal((10, 2))
    for delta in (_STEP, 2 * _STEP):                                      # a nearly collinear triple
        x = np.r_[base, [[-1.0, 0.2], [1.0, 0.2], [0.0, 0.2 + delta]]]
        cases.append((x, [np.r_[x[:-1], [[0.0, 0.2 - delta]]], np.r_[x[:-1], [[0.0, 0.2]]],
                          np.r_[x[:-1], [[5.0, 5.0]]]],
                      [x[:-1], np.r_[x, [[0.5, 0.2]]]]))
    p = base[3]
    x = np.r_[base, [p + np.array([_STEP, 0.0])]]                         # two points one grid step apart
    cases.append((x, [np.r_[x[:-1], [p]], np.r_[x[:-1], [p - np.array([_STEP, 0.0])]]], [x[:-1], np.r_[x, [p]]]))
    x = _datasets()["nearly_collinear"]                                   # seven points in general position by 1e-17
    cases.append((x, [np.r_[x[:-1], [[0.5, 0.15]]], np.r_[x[:-1], [[2.0, -2.0]]]], [x[:-1], np.r_[x, [[0.0, 0.0]]]]))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("eps", [1.0, 5.0])
def test_exact_privacy_audit_on_near_degenerate_data(eps):
    """max |log q_X - log q_X'| <= eps (replace-one) and <= eps/2 (add/remove) when points are nearly collinear,
    nearly coincident or cut thin annuli (1e-9 to 1e-15 apart), where collinearity or area tolerances would give
    one neighbour a density that the other does not have."""
    worst_replace = worst_add = 0.0
    for x, replaced, added in _near_degenerate_cases():
        for y in replaced:
            worst_replace = max(worst_replace, _privacy_loss(x, y, eps))
        for y in added:
            worst_add = max(worst_add, _privacy_loss(x, y, eps))
    assert worst_replace <= eps + 1e-9
    assert worst_add <= eps / 2 + 1e-9
    assert worst_replace > 0.25 * eps and worst_add > 0.1 * eps          # the audit is not vacuous


def test_nearly_collinear_points_are_classified_exactly():
    """A record one grid step off the line through two others is strictly on one side, exactly as the
    orientation predicate says for the rounded records; one closer than half a step is rounded onto the line."""
    from dpcp_tutorial.depth import orientation

    a, b = np.array([-1.0, 0.2]), np.array([1.0, 0.2])
    for c, off_line in ((np.array([0.0, 0.2 + _STEP]), True), (np.array([0.3, 0.2 - 2 * _STEP]), True),
                        (np.array([0.0, 0.2 + 1e-15]), False), (np.array([0.0, 0.2]), False)):
        reg = tukey_depth_regions(np.array([a, b, c]), BOX)
        p, q, r = reg.data
        assert (orientation(p[0], p[1], q[0], q[1], r[0], r[1]) != 0) == off_line
        # three points in general position span a triangle (level 1 with area); collinear ones do not
        assert (1 in reg.levels) == off_line


@pytest.mark.parametrize("vertices, error", [
    (np.array([[0.0, 0.0], [1.0, 0.0], [0.0, np.inf]]), ValueError),
    (np.array([[0.0, 0.0], [1.0, 0.0], [0.0, np.nan]]), ValueError),
    (np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1j]]), TypeError),
    (np.array([["0", "0"], ["1", "0"], ["0", "1"]]), TypeError),
    (np.zeros((3, 3)), ValueError),
    (np.zeros(5), ValueError),
    (np.array([[0.0, 0.0], [1e300, 0.0], [0.0, 1e300]]), ValueError),
])
def test_geometry_helpers_refuse_non_finite_complex_and_misshapen_vertices(vertices, error):
    with pytest.raises(error, match="vertices"):
        polygon_area(vertices)


def test_cell_helpers_refuse_bad_edges_and_regions():
    reg = tukey_depth_regions(np.random.default_rng(0).standard_normal((10, 2)), BOX)
    for edges in (np.array([-3.0, np.nan, 3.0]), np.array([-3.0, 1j, 3.0])):
        with pytest.raises((ValueError, TypeError), match="edges"):
            exact_cell_probabilities(reg, 1.0, edges, np.linspace(-3, 3, 4))
    with pytest.raises(TypeError, match="regions"):
        exact_cell_probabilities("regions", 1.0, np.linspace(-3, 3, 4), np.linspace(-3, 3, 4))
    assert polygon_area(np.empty((0, 2))) == 0.0 and polygon_area([[0, 0], [1, 1]]) == 0.0


def test_level_bins_n_bins_is_a_deprecated_alias_of_bins():
    from dpcp_tutorial.experiments.tukey_exact import level_bins

    p = np.random.default_rng(0).uniform(size=40)
    with pytest.warns(FutureWarning, match="renamed bins="):
        old = level_bins(p, n_bins=4)
    np.testing.assert_array_equal(old, level_bins(p, bins=4))
    assert set(old.tolist()) == {0, 1, 2, 3}
    with pytest.raises(TypeError, match="bins= only"):
        level_bins(p, bins=4, n_bins=4)
