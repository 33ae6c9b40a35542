"""Tests for dpcp_tutorial.depth: exactness against brute force, sensitivity audits, bad input."""

import warnings

import numpy as np
import pytest
from scipy.special import expit

import dpcp_tutorial._counts as counts_module
import dpcp_tutorial._depth_core as depth_core
import dpcp_tutorial.depth as depth_module
from dpcp_tutorial import (
    HALFSPACE_SENSITIVITY,
    IDD_SENSITIVITY,
    SPATIAL_SENSITIVITY,
    depth_sensitivity,
    halfspace_depth,
    integrated_dual_depth,
    integrated_dual_depth_gradient,
    random_directions,
    spatial_depth,
)

# --------------------------------------------------------------------------- brute-force references


def brute_halfspace_2d(x, data):
    """min over all directions of the closed-halfplane count, by enumerating the critical directions.

    The count #{i : u'(X_i - x) >= 0} is constant on the open arcs between the directions
    perpendicular to some X_i - x, and the minimum is attained on an open arc, so evaluating
    the definition at the midpoint of every arc is exact.
    """
    v = data - x
    n = len(data)
    nonzero = np.any(v != 0, axis=1)
    if not nonzero.any():
        return 1.0
    ang = np.arctan2(v[nonzero, 1], v[nonzero, 0])
    crit = np.unique(np.mod(np.concatenate([ang + np.pi / 2, ang - np.pi / 2]), 2 * np.pi))
    nxt = np.r_[crit[1:], crit[0] + 2 * np.pi]
    mids = (crit + nxt) / 2
    u = np.stack([np.cos(mids), np.sin(mids)], axis=1)
    counts = (v @ u.T >= 0).sum(axis=0)
    return counts.min() / n


def brute_halfspace_1d(x, data):
    return min(np.sum(data >= x), np.sum(data <= x)) / len(data)


def brute_spatial(x, data):
    total = np.zeros(data.shape[1])
    for xi in data:
        v = x - xi
        r = np.sqrt(np.sum(v ** 2))
        if r > 0:
            total += v / r
    return 1.0 - np.sqrt(np.sum((total / len(data)) ** 2))


# The direction-based references take their projections from the package's row-consistent
# ``project`` (BLAS matmul may round the same row differently depending on the matrix shape, which
# would turn a query at a data point into a spurious non-tie) and count by the definition.

def brute_idd(x, data, u, smoothing=None):
    proj, tx = depth_core.project(data, u), depth_core.project(x[None, :], u)[0]
    total = 0.0
    for j in range(len(u)):
        t, p = tx[j], proj[:, j]
        f = np.mean(p <= t) if smoothing is None else np.mean(expit(smoothing * (t - p)))
        total += f * (1 - f)
    return total / len(u)


def brute_halfspace_directions(x, data, u):
    proj, tx = depth_core.project(data, u), depth_core.project(x[None, :], u)[0]
    best = len(data)
    for j in range(len(u)):
        p, t = proj[:, j], tx[j]
        best = min(best, np.sum(p >= t), np.sum(p <= t))
    return best / len(data)


def test_projections_round_every_row_the_same_way():
    rng = np.random.default_rng(20)
    data, u = rng.standard_normal((300, 40)), rng.standard_normal((70, 40))
    full = depth_core.project(data, u)
    for q in (1, 3, 7, 64):
        np.testing.assert_array_equal(depth_core.project(data[5:5 + q], u), full[5:5 + q])
    # a data point queried on its own counts itself: IDD at X_i uses F >= 1/n in every direction
    f_self = integrated_dual_depth(data[:1], data, directions=u)[0]
    assert f_self >= (1 / 300) * (1 - 1 / 300) - 1e-15


def _datasets_2d():
    rng = np.random.default_rng(0)
    lattice = rng.integers(-3, 4, size=(120, 2)).astype(float)      # many ties, collinear triples
    line = np.c_[np.arange(30.0), 2 * np.arange(30.0) + 1]           # all collinear
    ties = np.repeat(rng.standard_normal((10, 2)), 5, axis=0)        # every point 5 times
    cross = np.array([[1, 0], [-1, 0], [0, 1], [0, -1], [2, 0], [-2, 0], [0, 0], [1, 1], [-1, -1.0]])
    return {
        "random": rng.standard_normal((150, 2)),
        "lattice": lattice,
        "collinear": line,
        "ties": ties,
        "opposite": cross,
        "negative-zero": np.array([[-0.0, 1.0], [0.0, -1.0], [1.0, -0.0], [-1.0, 0.0], [0.5, 0.5]]),
    }


@pytest.mark.parametrize("name", list(_datasets_2d()))
def test_exact_halfspace_2d_equals_brute_force(name):
    data = _datasets_2d()[name]
    rng = np.random.default_rng(1)
    lo, hi = data.min(axis=0) - 1, data.max(axis=0) + 1
    queries = np.vstack([
        data[:40],                                       # queries at data points (n0 > 0)
        rng.uniform(lo, hi, size=(40, 2)),               # inside and outside the hull
        np.round(rng.uniform(lo, hi, size=(20, 2))),     # lattice queries: collinear with data
        data.mean(axis=0, keepdims=True),
    ])
    got = halfspace_depth(queries, data)
    want = np.array([brute_halfspace_2d(q, data) for q in queries])
    np.testing.assert_array_equal(got, want)


def test_exact_halfspace_1d_equals_brute_force():
    rng = np.random.default_rng(2)
    data = rng.integers(0, 10, size=(50, 1)).astype(float)
    queries = np.r_[data[:10, 0], np.linspace(-1, 11, 25)][:, None]
    got = halfspace_depth(queries, data)
    want = [brute_halfspace_1d(q[0], data[:, 0]) for q in queries]
    np.testing.assert_array_equal(got, want)


def test_exact_halfspace_known_values_and_chunking(monkeypatch):
    # the 4 corners of a square and its centre: the centre has depth 3/5 (2 corners + itself),
    # a corner 1/5, a point outside the hull 0
    data = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0.5]])
    np.testing.assert_array_equal(halfspace_depth(np.array([[0.5, 0.5], [0, 0], [3, 3]]), data), [0.6, 0.2, 0.0])
    # a tiny block size forces several chunks: same answer
    rng = np.random.default_rng(3)
    x = rng.standard_normal((60, 2))
    full = halfspace_depth(x, x)
    monkeypatch.setattr(depth_module, "CHUNK", 7 * 60)
    np.testing.assert_array_equal(halfspace_depth(x, x), full)


@pytest.mark.parametrize("batch", [1, 50, 2 ** 30])
@pytest.mark.parametrize("row_search", [0, 2 ** 30])
@pytest.mark.parametrize("name", ["lattice", "random"])
def test_exact_halfspace_2d_any_batch_and_search(monkeypatch, batch, row_search, name):
    # the points near the arcs' ends are classified in batches over the query points (one pair per batch, a few
    # rows per batch, or the whole block at once), and the angles are searched row by row or in one array of
    # complex keys for all rows: every way gives the brute-force depths, with queries at data points and not
    monkeypatch.setattr(depth_module, "_PAIR_BATCH", batch)
    monkeypatch.setattr(depth_module, "_ROW_SEARCH", row_search)
    data = _datasets_2d()[name]
    rng = np.random.default_rng(5)
    off = np.vstack([rng.uniform(-3, 3, size=(15, 2)), rng.integers(-3, 3, size=(15, 2)) + 0.5, [[10.0, 0.0]]])
    queries = np.vstack([data[:25], off])
    want = np.array([brute_halfspace_2d(q, data) for q in queries])
    np.testing.assert_array_equal(halfspace_depth(queries, data), want)
    np.testing.assert_array_equal(halfspace_depth(off, data), want[25:])    # no query at a data point


@pytest.mark.parametrize("fsum_slice", [7, 4096])
def test_orientation_on_lattice_and_near_lattice_triples_equals_rational_arithmetic(monkeypatch, fsum_slice):
    # lattice triples (exact differences and products: many exactly collinear) and lattice points moved by one
    # unit in the last place (inexact products: the error-free sums decide, in slices of fsum_slice rows)
    from fractions import Fraction

    monkeypatch.setattr(depth_module, "_FSUM_SLICE", fsum_slice)
    rng = np.random.default_rng(4)
    size = 16_000
    c = rng.integers(-4, 5, size=(size, 6)).astype(float)
    on_line = rng.random(size) < 0.8                  # c = a + t (b - a): collinear
    t = rng.integers(-2, 3, size=(size, 1))
    c[on_line, 4:] = (c[:, :2] + t * (c[:, 2:4] - c[:, :2]))[on_line]
    nudge = rng.random((size, 6)) < np.where(np.arange(size) < size // 2, 0.5, 0.0)[:, None]
    c[nudge] = np.nextafter(c[nudge], np.where(rng.random(nudge.sum()) < 0.5, -np.inf, np.inf))
    got = depth_module.orientation(*c.T)
    want = []
    for ax, ay, bx, by, cx, cy in (map(Fraction, row) for row in c.tolist()):
        det = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        want.append((det > 0) - (det < 0))
    np.testing.assert_array_equal(got, want)
    assert np.mean(np.asarray(want) == 0) > 0.3         # collinear triples are common here


def test_halfspace_directions_equals_loop_and_bounds_exact():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((200, 2))
    queries = rng.standard_normal((30, 2)) * 1.5
    u = random_directions(25, 2, rng=5)
    got = halfspace_depth(queries, data, method="directions", directions=u)
    want = [brute_halfspace_directions(q, data, u) for q in queries]
    np.testing.assert_array_equal(got, want)
    exact = halfspace_depth(queries, data)
    assert np.all(got >= exact)                         # a minimum over fewer directions: upper bound
    many = halfspace_depth(queries, data, method="directions", n_directions=20000, rng=6)
    assert np.max(many - exact) <= 2 / 200              # close to exact with many directions (2D)


def test_halfspace_directions_any_dimension():
    rng = np.random.default_rng(7)
    data = rng.standard_normal((150, 6))
    queries = rng.standard_normal((10, 6))
    u = random_directions(40, 6, rng=8)
    got = halfspace_depth(queries, data, method="directions", directions=u * 3.0)   # rows get normalised
    np.testing.assert_array_equal(got, [brute_halfspace_directions(q, data, u) for q in queries])


def test_spatial_equals_loop_with_ties_and_data_points(monkeypatch):
    rng = np.random.default_rng(9)
    data = np.vstack([rng.standard_normal((80, 3)), np.zeros((5, 3)), rng.integers(-2, 3, (20, 3))])
    queries = np.vstack([data[:30], np.zeros((1, 3)), rng.standard_normal((20, 3)) * 3])
    want = np.array([brute_spatial(q, data) for q in queries])
    np.testing.assert_allclose(spatial_depth(queries, data), want, rtol=0, atol=1e-12)
    for block in (4 * 40, 4 * len(data) * 3):        # passes of 40 records; one pass, blocks of 3 candidates
        monkeypatch.setattr(counts_module, "_SPATIAL_BLOCK", block)
        np.testing.assert_allclose(spatial_depth(queries, data), want, rtol=0, atol=1e-12)


def test_spatial_depth_far_from_origin_is_accurate():
    rng = np.random.default_rng(10)
    data = rng.standard_normal((100, 2)) + 1e6
    queries = data[:5] + 1e-3
    want = np.array([brute_spatial(q, data) for q in queries])
    np.testing.assert_allclose(spatial_depth(queries, data), want, atol=1e-8)


def test_idd_exact_and_smoothed_equal_loops():
    rng = np.random.default_rng(11)
    data = np.vstack([rng.standard_normal((120, 4)), np.ones((10, 4))])
    queries = np.vstack([data[:10], rng.standard_normal((15, 4))])
    u = random_directions(30, 4, rng=12)
    exact = integrated_dual_depth(queries, data, directions=u)
    np.testing.assert_allclose(exact, [brute_idd(q, data, u) for q in queries], atol=1e-15)
    smooth = integrated_dual_depth(queries, data, directions=u, smoothing=10.0)
    np.testing.assert_allclose(smooth, [brute_idd(q, data, u, 10.0) for q in queries], atol=1e-14)
    assert np.all(exact <= 0.25) and np.all(smooth <= 0.25)


def test_smoothed_idd_far_points_use_the_stable_path():
    # projections of size ~100 with s = 10 put s*t beyond the fast path's range (600)
    rng = np.random.default_rng(13)
    data = rng.standard_normal((60, 2)) * 30 + np.array([100.0, -80.0])
    queries = np.vstack([data[:5], [[100.0, -80.0], [0.0, 0.0], [500.0, 500.0]]])
    u = random_directions(12, 2, rng=14)
    got = integrated_dual_depth(queries, data, directions=u, smoothing=10.0)
    np.testing.assert_allclose(got, [brute_idd(q, data, u, 10.0) for q in queries], atol=1e-14)


def test_float32_drift_matches_float64():
    """The Langevin sampler evaluates the smoothed CDFs in float32: F and G agree with float64 to ~1e-6,
    also for shifted, heavy-tailed data and for queries outside the float32 fast range."""
    rng = np.random.default_rng(21)
    for data in (rng.standard_normal((3000, 5)) + 40.0, rng.standard_cauchy((3000, 5))):
        u = random_directions(50, 5, rng=22)
        proj = depth_core.project(data, u)
        exact = depth_core.SmoothedCDFs(proj, 10.0)
        fast = depth_core.SmoothedCDFs(proj, 10.0, dtype=np.float32)
        for x in (np.median(data, axis=0), np.median(data, axis=0) + 3.0, np.full(5, 500.0)):
            t = depth_core.project(x[None], u)[0]
            (f64, g64), (f32, g32) = exact(t), fast(t)
            np.testing.assert_allclose(f32, f64, rtol=0, atol=2e-6)
            np.testing.assert_allclose(g32, g64, rtol=0, atol=2e-6)
            want = np.array([np.mean(expit(10.0 * (t[j] - proj[:, j]))) for j in range(len(u))])
            np.testing.assert_allclose(f64, want, rtol=0, atol=1e-13)


def test_smoothed_idd_gradient_matches_finite_differences():
    rng = np.random.default_rng(15)
    data = rng.standard_normal((150, 3))
    u = random_directions(20, 3, rng=16)
    queries = rng.standard_normal((4, 3)) * 0.7
    grad = integrated_dual_depth_gradient(queries, data, directions=u, smoothing=5.0)
    step = 1e-6
    for q, g in zip(queries, grad):
        fd = [(brute_idd(q + step * e, data, u, 5.0) - brute_idd(q - step * e, data, u, 5.0)) / (2 * step)
              for e in np.eye(3)]
        np.testing.assert_allclose(g, fd, atol=1e-8)


def test_depth_ranges_and_hull():
    rng = np.random.default_rng(17)
    data = rng.standard_normal((100, 2))
    far = np.array([[50.0, 50.0]])
    assert halfspace_depth(far, data)[0] == 0.0                      # outside the convex hull
    assert spatial_depth(far, data)[0] < 0.01                        # all unit vectors agree
    assert integrated_dual_depth(far, data, n_directions=50, rng=0)[0] < 0.02
    grid = rng.uniform(-3, 3, size=(200, 2))
    for values in (halfspace_depth(grid, data), spatial_depth(grid, data)):
        assert values.min() >= 0 and values.max() <= 1


def test_random_directions_are_public_unit_vectors():
    a = random_directions(50, 7, rng=3)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0)
    np.testing.assert_array_equal(a, random_directions(50, 7, rng=3))
    assert not np.array_equal(a, random_directions(50, 7, rng=4))


# --------------------------------------------------------------------------- sensitivity audits

def _depths(queries, data, u):
    return {
        "halfspace": halfspace_depth(queries, data),
        "halfspace_dir": halfspace_depth(queries, data, method="directions", directions=u),
        "spatial": spatial_depth(queries, data),
        "idd": integrated_dual_depth(queries, data, directions=u),
        "smoothed_idd": integrated_dual_depth(queries, data, directions=u, smoothing=10.0),
    }


_CONSTANT = {"halfspace": HALFSPACE_SENSITIVITY, "halfspace_dir": HALFSPACE_SENSITIVITY,
             "spatial": SPATIAL_SENSITIVITY, "idd": IDD_SENSITIVITY, "smoothed_idd": IDD_SENSITIVITY}


def test_sensitivity_audit_random_and_adversarial_neighbours():
    """Replace one record (randomly, by a far outlier, by a query point, by its mirror image):
    no depth moves by more than its constant / n at any query point."""
    rng = np.random.default_rng(18)
    n = 40
    u = random_directions(30, 2, rng=19)
    worst = dict.fromkeys(_CONSTANT, 0.0)
    for trial in range(12):
        data = rng.standard_normal((n, 2)) if trial % 2 else rng.integers(-2, 3, (n, 2)).astype(float)
        queries = np.vstack([data, rng.uniform(-3, 3, (40, 2)), np.round(rng.uniform(-3, 3, (10, 2)))])
        i = int(rng.integers(n))
        replacements = [rng.standard_normal(2) * 3, np.array([1e3, -1e3]), queries[-1], -data[i], data[(i + 1) % n]]
        base = _depths(queries, data, u)
        for new in replacements:
            other = data.copy()
            other[i] = new
            for name, values in _depths(queries, other, u).items():
                worst[name] = max(worst[name], np.max(np.abs(values - base[name])) * n)
    for name, c in _CONSTANT.items():
        assert worst[name] <= c + 1e-9, (name, worst[name])
    assert worst["spatial"] > 1.5          # the audit is not vacuous: spatial moves by more than 1/n


def test_spatial_sensitivity_two_over_n_is_attained_in_every_dimension():
    """n-1 points in direction v from x and one in direction -v; moving it to +v changes SD(x) by 2/n."""
    for d in (1, 2, 5, 50):
        n = 25
        v = np.zeros(d)
        v[0] = 1.0
        data = np.outer(np.arange(1, n + 1), v)
        data[-1] = -v
        other = data.copy()
        other[-1] = 3 * v
        x = np.zeros((1, d))
        before, after = spatial_depth(x, data)[0], spatial_depth(x, other)[0]
        assert before == pytest.approx(2 / n, abs=1e-14) and after == pytest.approx(0.0, abs=1e-14)
        assert abs(before - after) == pytest.approx(SPATIAL_SENSITIVITY / n, abs=1e-14)


def test_spatial_sensitivity_holds_for_records_a_few_ulps_from_a_candidate():
    """A record one or two units in the last place from a candidate (its neighbour sits exactly on it, or
    far away): each unit vector is computed from its own record, so the depth moves by at most 2/n, in
    memory and in the per-partition sums of the Dask path (a closed form that sums weights 1/r ~ 1e16
    and cancels them moved it by 11/n here)."""
    from dpcp_tutorial._counts import spatial_from_sums, spatial_sums
    from dpcp_tutorial.median import public_grid

    rng = np.random.default_rng(0)
    n = 50
    grid = public_grid(-2.0, 2.0, 41, 2)
    worst = 0.0
    for _ in range(40):
        data = rng.normal(size=(n, 2)) * rng.choice([1.0, 10.0])
        for c in grid[rng.choice(len(grid), 3, replace=False)]:
            for new in (np.nextafter(c, np.inf), np.nextafter(c, -np.inf), c, np.array([1e6, -1e6])):
                other = data.copy()
                other[0] = new
                x = c[None]
                change = abs(spatial_depth(x, data)[0] - spatial_depth(x, other)[0]) * n
                split = spatial_sums(other[:20], x) + spatial_sums(other[20:], x)        # two partitions
                assert spatial_from_sums(split, n)[0] == pytest.approx(spatial_depth(x, other)[0], abs=1e-14)
                worst = max(worst, change)
    assert 1.9 < worst <= SPATIAL_SENSITIVITY + 1e-9
    # 99 records within 1e-18 of the candidate 0 and one far away, against the same with the far record
    # moved next to the others: the true depths at 0 are 0 and 0
    small = np.arange(1, 100)[:, None] * 1e-20
    far, near = np.vstack([small, [[1e6]]]), np.vstack([small, [[2e-18]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [spatial_depth(np.zeros((1, 1)), x)[0] for x in (far, near)]
    assert got == [0.0, 0.0]


def test_spatial_depth_of_points_on_tiny_and_huge_scales():
    """Differences of 1e-300 (their squares underflow) and of 1e100 (theirs overflow) give unit vectors;
    a record equal to the point gives the zero vector, without a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scale in (1e-300, 1e-160, 1.0, 1e100):
            data = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]) * scale
            x = np.zeros((1, 2))
            np.testing.assert_allclose(spatial_depth(x, data), [1.0 - 1.0 / 4], rtol=0, atol=1e-15)
            np.testing.assert_allclose(spatial_depth(x, data), [brute_spatial(x[0], data / scale)], atol=1e-15)


def test_halfspace_sensitivity_one_over_n_is_attained():
    # x = 0 with 3 points to its right and 2 to its left: HD = 2/5; moving a left point to the
    # right leaves 1 on the left: HD = 1/5
    data = np.array([[1.0, 0.1], [2, -0.2], [3, 0.3], [-1, 0.2], [-2, -0.1]])
    other = data.copy()
    other[4] = [4.0, 0.1]
    x = np.array([[0.0, 0.0]])
    before, after = halfspace_depth(x, data)[0], halfspace_depth(x, other)[0]
    assert (before, after) == (brute_halfspace_2d(x[0], data), brute_halfspace_2d(x[0], other))
    assert before - after == pytest.approx(HALFSPACE_SENSITIVITY / len(data))


def test_depth_sensitivity_constants():
    assert depth_sensitivity("halfspace", 100) == 0.01
    assert depth_sensitivity("spatial", 100) == 0.02
    assert depth_sensitivity("idd", 100) == depth_sensitivity("smoothed_idd", 100) == 0.01


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, match", [
    (lambda d: halfspace_depth(d[:1], np.r_[d[:3], [[np.nan, 0]]]), "NaN"),
    (lambda d: spatial_depth(d[:1, :1], d), "columns"),
    (lambda d: integrated_dual_depth(d[:1], d[:1], n_directions=5, rng=0), "at least 2"),
    (lambda d: halfspace_depth(d[0], d), "two-dimensional"),
    (lambda d: halfspace_depth(np.zeros((1, 3)), np.zeros((5, 3))), "method='directions'"),
    (lambda d: halfspace_depth(d[:1], d, method="fast"), "method"),
    (lambda d: halfspace_depth(d[:1], d, directions=np.eye(2)), "only used"),
    (lambda d: integrated_dual_depth(d[:1], d, directions=np.zeros((2, 2))), "zero vector"),
    (lambda d: integrated_dual_depth(d[:1], d, directions=np.eye(3)), "columns"),
    (lambda d: integrated_dual_depth(d[:1], d, smoothing=0.0, rng=0), "smoothing"),
    (lambda d: depth_sensitivity("tukey", 10), "not supported"),
    (lambda d: random_directions(0, 2), ">= 1"),
])
def test_bad_input_raises_clear_errors(call, match):
    data = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match=match):
        call(data)
