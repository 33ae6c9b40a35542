"""The exact private Tukey median on near-duplicate, collinear, denormal and lattice data (chapter 15).

The law of ``private_tukey_median_2d`` is checked against an independent exact computation: the records are
rounded to the documented public grid with ``fractions.Fraction``, the box is cut into the cells of the
arrangement of all lines through two records, and the depth count of every cell is computed by brute force at
an interior point, all in rational arithmetic. Privacy is audited exactly on the law (the cells where the two
neighbours' counts differ, areas by exact polygon intersection), and by sampling.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import logsumexp

from dpcp_tutorial import halfspace_depth, private_tukey_median_2d, tukey_depth_regions
from dpcp_tutorial.tukey_exact import _clip_exact

BOX = ((-3.0, -3.0), (3.0, 3.0))
BOX4 = ((-4.0, -4.0), (4.0, 4.0))
UP = np.nextafter(2.0, 3.0)


# --------------------------------------------------------------------------- the independent exact reference

def _ref_step(lo: float, hi: float) -> Fraction:
    """The documented grid step of an axis: 2^(floor(log2 width) - 28)."""
    w = Fraction(hi) - Fraction(lo)
    e = w.numerator.bit_length() - w.denominator.bit_length()
    if Fraction(2) ** e > w:
        e -= 1
    return Fraction(2) ** (e - 28)


def _ref_snap(data, box):
    step = [_ref_step(box[0][a], box[1][a]) for a in range(2)]
    return [tuple(round(Fraction(float(p[a])) / step[a]) * step[a] for a in range(2)) for p in data], step


def _ref_count(p, pts) -> int:
    """Exact halfspace count at ``p``: the fewest points in a closed halfplane through ``p``, from the generic
    directions next to every critical one (a normal of the line through p and a point, turned slightly).

    The rationals are scaled by their common denominator first (a positive scaling keeps every sign), so the
    quadratic part runs on Python integers."""
    scale = math.lcm(*(c.denominator for c in p), *(c.denominator for q in pts for c in q))
    origin = (int(p[0] * scale), int(p[1] * scale))
    vs = [(int(q[0] * scale) - origin[0], int(q[1] * scale) - origin[1]) for q in pts]
    zero = sum(1 for v in vs if v == (0, 0))
    nz = [v for v in vs if v != (0, 0)]
    best = len(pts)
    for v in nz:
        for s in (1, -1):
            u = (-s * v[1], s * v[0])
            w = (-u[1], u[0])
            pos = sum(1 for q in nz if u[0] * q[0] + u[1] * q[1] > 0)
            on = [q for q in nz if u[0] * q[0] + u[1] * q[1] == 0]
            for r in (1, -1):
                best = min(best, pos + zero + sum(1 for q in on if r * (w[0] * q[0] + w[1] * q[1]) > 0))
    return best


def _ref_area(poly) -> Fraction:
    if len(poly) < 3:
        return Fraction(0)
    return abs(sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(poly, poly[1:] + poly[:1]))) / 2


def _ref_split(poly, a, b, c):
    s = [a * x + b * y - c for x, y in poly]
    parts = []
    for sign in (1, -1):
        out = []
        for i in range(len(poly)):
            j = (i + 1) % len(poly)
            si, sj = sign * s[i], sign * s[j]
            if si <= 0:
                out.append(poly[i])
            if (si < 0 < sj) or (sj < 0 < si):
                t = s[i] / (s[i] - s[j])
                out.append((poly[i][0] + t * (poly[j][0] - poly[i][0]), poly[i][1] + t * (poly[j][1] - poly[i][1])))
        parts.append(out)
    return parts


def _ref_level_areas(data, box) -> dict:
    """{k: exact area of the points of the box with count k} for the records rounded to the public grid."""
    pts, _ = _ref_snap(data, box)
    (x0, y0), (x1, y1) = [tuple(Fraction(float(v)) for v in corner) for corner in box]
    cells = [[(x0, y0), (x1, y0), (x1, y1), (x0, y1)]]
    lines = set()
    for i, p in enumerate(pts):
        for q in pts[i + 1:]:
            if p != q:
                a, b = -(q[1] - p[1]), q[0] - p[0]
                g = a if a != 0 else b
                lines.add((a / g, b / g, (a * p[0] + b * p[1]) / g))
    for a, b, c in sorted(lines):
        cells = [part for cell in cells for part in _ref_split(cell, a, b, c) if _ref_area(part) > 0]
    out = {}
    for cell in cells:
        centre = (sum(v[0] for v in cell) / len(cell), sum(v[1] for v in cell) / len(cell))
        k = _ref_count(centre, pts)
        out[k] = out.get(k, 0) + _ref_area(cell)
    return out


def _module_level_areas(reg) -> dict:
    """The module's exact annulus areas in data units, as rationals."""
    grid = reg._exact["grid"]
    jac = Fraction(float(grid.step[0])) * Fraction(float(grid.step[1]))
    return {int(k): a / 2 * jac for k, a in zip(reg.levels, reg._exact["annuli2"]) if a > 0}


# --------------------------------------------------------------------------- exact privacy audit on the law

def _exact_inter_area2(p, q) -> Fraction:
    """Twice the area of the intersection of two exact polygons (the second clipped by every edge of the first)."""
    if len(p.verts) < 3 or len(q.verts) < 3:
        return Fraction(0)
    r = q
    for line in p.edges:
        r = _clip_exact(r, line)
        if len(r.verts) < 3:
            return Fraction(0)
    return r.area2()


def _exact_loss(x, y, eps, box=BOX) -> float:
    """sup over the box of |log q_x - log q_y| for the module's law: cells {level_x = i, level_y = j} of positive
    exact area (inclusion-exclusion of exact intersections of the two nested families of polygons)."""
    rx, ry = tukey_depth_regions(x, box), tukey_depth_regions(y, box)
    log_zx, log_zy = logsumexp(rx.log_level_weights(eps)), logsumexp(ry.log_level_weights(eps))
    px, py = rx._exact["polygons"], ry._exact["polygons"]
    kx, ky = list(rx.levels), list(ry.levels)
    memo = {}

    def inter(i, j):
        if i >= len(px) or j >= len(py):
            return Fraction(0)
        if (i, j) not in memo:
            memo[i, j] = _exact_inter_area2(px[i], py[j])
        return memo[i, j]

    worst = 0.0
    for i in range(len(px)):
        for j in range(len(py)):
            if inter(i, j) - inter(i + 1, j) - inter(i, j + 1) + inter(i + 1, j + 1) > 0:
                worst = max(worst, abs(0.5 * eps * (int(kx[i]) - int(ky[j])) - log_zx + log_zy))
    return worst


# --------------------------------------------------------------------------- the families of the audit

def _near_duplicates():
    """Eight points, two of them 1-2 ulps from (2, -1)."""
    rng = np.random.default_rng(4)
    base = rng.uniform(-2.5, 2.5, (6, 2))
    return np.r_[base, [[2.0, -1.0], [UP, np.nextafter(-1.0, 0.0)]]]


def _collinear_denormal():
    """Twelve collinear points plus the point (5e-324, 5e-324)."""
    t = np.arange(12) * 0.5 - 2.75
    return np.r_[np.c_[t, t + 1.0], [[5e-324, 5e-324]]]


def _lattice_near_duplicate():
    lattice = np.array([[i, j] for i in range(-1, 2) for j in range(-1, 2)], float)
    return np.r_[lattice, lattice[:3], [[np.nextafter(1.0, 2.0), 0.0]]]


def _gaussian_near_duplicates():
    g = np.random.default_rng(9).standard_normal((6, 2))
    return np.r_[g, [np.nextafter(g[0], 9.0), g[1] + 2e-16, np.nextafter(g[2], -9.0)]]


FAMILIES = {
    "near_duplicates": _near_duplicates,
    "collinear_denormal": _collinear_denormal,
    "lattice_near_duplicate": _lattice_near_duplicate,
    "gaussian_near_duplicates": _gaussian_near_duplicates,
    "denormals": lambda: np.array([[5e-324, 0.0], [0.0, -5e-324], [1.0, 1.0], [-1.0, 0.5], [0.5, -1.0],
                                   [1e-320, 1e-310], [-5e-324, 5e-324]]),
}
SLOW_FAMILIES = {"near_duplicates", "lattice_near_duplicate", "gaussian_near_duplicates"}   # seconds of CPU each


def _neighbours(x):
    """Add/remove and replace-one neighbours that stress ties and extremes: a near-duplicate, a denormal, an
    exact copy, a far point and a box corner."""
    extra = [np.nextafter(x[0], 9.0), np.array([5e-324, -5e-324]), x[1], np.array([1e6, -1e6]), np.array([3.0, 3.0])]
    added = [x[1:], x[:-1]] + [np.r_[x, [e]] for e in extra]
    replaced = []
    for i, e in zip((0, 1, len(x) - 1, 2, 3), extra):
        y = x.copy()
        y[i] = e
        replaced.append(y)
    return added, replaced


def _quiet(fn, *args, **kwargs):
    """Call ``fn`` turning every warning into an error (a warning on private data is an output)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


# --------------------------------------------------------------------------- the failures, reproduced

def test_near_duplicates_release_like_their_neighbours():
    """The eight points with two near-duplicates of (2, -1), and their neighbours, all release, without a warning."""
    x = _near_duplicates()
    added, replaced = _neighbours(x)
    for data in [x] + added + replaced:
        out = _quiet(private_tukey_median_2d, data, 1.0, BOX, size=20, rng=0)
        assert out.shape == (20, 2) and np.all(np.abs(out) <= 3.0)


def test_collinear_plus_denormal_has_the_exact_law():
    """The denormal point rounds onto the grid point (0, 0), off the line y = x + 1: the depth-1 region is the
    exact triangle spanned by the segment and (0, 0), and the law equals the reference's."""
    x = _collinear_denormal()
    reg = _quiet(tukey_depth_regions, x, BOX4)
    np.testing.assert_array_equal(reg.data[-1], [0.0, 0.0])
    assert _module_level_areas(reg) == _ref_level_areas(x, BOX4)
    # the triangle (-2.75, -1.75), (2.75, 3.75), (0, 0): area |(5.5)(1.75) - (5.5)(2.75)| / 2 = 2.75
    assert _module_level_areas(reg)[1] == Fraction(11, 4)
    # no point of the box gets a level its exact depth does not have
    g = np.linspace(-4, 4, 97)
    grid = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    count = np.rint(halfspace_depth(grid, reg.data) * len(x)).astype(int)
    np.testing.assert_array_equal(reg.level_of(grid), np.minimum(count, reg.levels[-1]))


def test_density_integrates_to_one_on_degenerate_regions():
    """Collinear data (every region of positive depth is a segment), a single point, ties and a thin triangle:
    the density is e^(eps k / 2) / Z on the annulus of level k and integrates to 1 (exact sum over levels,
    and a Riemann sum on a fine grid)."""
    t = np.arange(7) * 0.5 - 1.5
    cases = [np.c_[t, 2 * t], np.array([[0.3, 0.2]]), np.repeat([[0.0, 0.0], [1.0, 1.0]], 3, axis=0),
             _collinear_denormal()]
    eps = 2.0
    g = (np.arange(400) + 0.5) / 400 * 8 - 4
    grid = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    for x in cases:
        reg = tukey_depth_regions(x, BOX4)
        z = np.exp(logsumexp(reg.log_level_weights(eps)))
        per_level = np.exp(0.5 * eps * reg.levels) / z
        np.testing.assert_allclose(np.sum(per_level * reg.annulus_areas), 1.0, rtol=1e-12)
        dens = reg.density(grid, eps)
        assert np.all(dens > 0)
        np.testing.assert_allclose(dens.mean() * 64.0, 1.0, rtol=2e-2)


@pytest.mark.slow
def test_halfspace_depth_at_denormal_points_is_exact():
    """The exact 2-D depth at denormal points equals the brute-force count in rational arithmetic."""
    rng = np.random.default_rng(1)
    for t in range(60):
        n = int(rng.integers(3, 8))
        if t % 3 == 0:
            d = np.r_[np.c_[np.arange(n) * 0.25 - 1, np.arange(n) * 0.25 - 1], [[5e-324, 5e-324]]]
        elif t % 3 == 1:
            d = rng.integers(-2, 3, (n, 2)).astype(float) * 0.5
            d[0], d[1] = [5e-324, 0.0], [0.0, -5e-324]
        else:
            d = rng.standard_normal((n, 2))
            d[1], d[2] = np.nextafter(d[0], 5.0), [1e-320, 2e-320]
        pts = np.r_[d, [[5e-324, 5e-324], [0.0, 0.0], [1e-323, 5e-324], [-5e-324, 1e-323]]]
        frac = [(Fraction(float(a)), Fraction(float(b))) for a, b in d]
        want = [_ref_count((Fraction(float(a)), Fraction(float(b))), frac) for a, b in pts]
        np.testing.assert_array_equal(np.rint(halfspace_depth(pts, d) * len(d)).astype(int), want)


def _collinear_plus(slope, intercept, step=0.5):
    t = np.arange(-6, 6) * step
    return np.r_[np.c_[t, slope * t + intercept], [[5e-324, 5e-324]]]


@pytest.mark.parametrize("data", [_collinear_plus(2.0, 0.0, 0.25), _collinear_plus(0.0, 0.0), _collinear_plus(-1.0, 0.0),
                                  _collinear_plus(3.0, 0.25), _collinear_plus(1.0, 2.0 ** -30)],
                         ids=["y=2x", "x-axis", "y=-x", "y=3x+1/4", "y=x+2^-30"])
def test_collinear_points_and_a_denormal_point(data):
    """Twelve collinear points and (5e-324, 5e-324) in [-4, 4]^2, where floating-point geometry divides by zero or
    makes levels of area 1e-16 that the exact depth does not have: the law is the reference's, with no warning."""
    reg = _quiet(tukey_depth_regions, data, BOX4)
    assert _module_level_areas(reg) == _ref_level_areas(data, BOX4)
    assert _quiet(private_tukey_median_2d, data, 1.0, BOX4, size=50, rng=0).shape == (50, 2)


# --------------------------------------------------------------------------- the law against the reference

def _check_against_reference(data):
    reg = _quiet(tukey_depth_regions, data, BOX)
    assert _module_level_areas(reg) == _ref_level_areas(data, BOX)
    assert _quiet(private_tukey_median_2d, data, 0.7, BOX, rng=1).shape == (2,)


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_FAMILIES else name
                                  for name in FAMILIES])
def test_families_have_the_reference_law_and_never_raise_or_warn(name):
    """The data set, a near-duplicate added and a point replaced by a denormal: the exact law equals the
    reference's, and nothing raises or warns."""
    x = FAMILIES[name]()
    added, replaced = _neighbours(x)
    for data in (x, added[2], replaced[1]):
        _check_against_reference(data)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_neighbour_has_the_reference_law(name):
    added, replaced = _neighbours(FAMILIES[name]())
    for data in added + replaced:
        _check_against_reference(data)


def _random_configuration(rng):
    """A small data set with near-duplicates, collinear runs, denormals or lattice ties (n <= 8)."""
    kind = int(rng.integers(5))
    n = int(rng.integers(3, 6))
    if kind == 0:                                              # near-duplicates, 1 to 2 ulps or a grid step apart
        x = rng.uniform(-2.5, 2.5, (n, 2))
        i = int(rng.integers(n))
        x = np.r_[x, [np.nextafter(x[i], 9.0), np.nextafter(np.nextafter(x[i], -9.0), -9.0),
                      x[i] + np.array([2.0 ** -26, 0.0])]]
    elif kind == 1:                                            # collinear run plus a point near the line
        t = rng.uniform(-2, 2, n)
        slope, icept = rng.choice([0.0, 0.5, 1.0, -2.0]), rng.choice([0.0, 0.25, 1e-300])
        x = np.r_[np.c_[t, slope * t + icept], [[rng.uniform(-1, 1), 1e-15]]]
    elif kind == 2:                                            # denormals
        x = np.r_[rng.uniform(-2, 2, (n, 2)), [[5e-324, 5e-324], [-1e-320, 5e-324]]]
    elif kind == 3:                                            # lattice with ties
        x = rng.integers(-2, 3, (n + 2, 2)).astype(float) * 0.75
    else:                                                      # lattice plus one near-duplicate
        x = rng.integers(-1, 2, (n + 1, 2)).astype(float)
        x = np.r_[x, [np.nextafter(x[0], 2.0)]]
    return x


@pytest.mark.slow
def test_randomised_search_against_the_rational_reference():
    """Seeded search over near-duplicate, collinear, denormal and lattice configurations: the module's exact
    annulus areas equal the reference's as rationals, and so do the level probabilities (to rounding)."""
    rng = np.random.default_rng(2024)
    eps = 1.3
    for _ in range(30):
        x = _random_configuration(rng)
        reg = _quiet(tukey_depth_regions, x, BOX)
        ref = _ref_level_areas(x, BOX)
        assert _module_level_areas(reg) == ref
        levels = np.array(sorted(ref))
        logw = 0.5 * eps * levels + np.array([math.log(ref[k]) for k in levels])
        prob = dict(zip(levels.tolist(), np.exp(logw - logsumexp(logw))))
        got = reg.level_probabilities(eps)
        np.testing.assert_allclose(got, [prob.get(int(k), 0.0) for k in reg.levels], rtol=1e-12, atol=1e-300)


# --------------------------------------------------------------------------- privacy: exact and sampled

@pytest.mark.parametrize("name", list(FAMILIES))
def test_exact_log_ratios_within_the_claims(name):
    """max over the box of |log q_X - log q_X'| <= eps/2 (add/remove) and <= eps (replace-one), computed exactly
    on the law, for a near-duplicate, a denormal, an exact copy, a far point and a box corner."""
    eps = 1.0
    x = FAMILIES[name]()
    added, replaced = _neighbours(x)
    worst_add = max(_exact_loss(x, y, eps) for y in added)
    worst_replace = max(_exact_loss(x, y, eps) for y in replaced)
    assert worst_add <= eps / 2 + 1e-9
    assert worst_replace <= eps + 1e-9
    assert worst_add > 0.02 and worst_replace > 0.02              # the audit is not vacuous


def _sampled_loss(x, y, eps, draws, seed):
    """Largest |log ratio| of the frequencies of the cells {(level under x, level under y)} over draws from
    the two laws, cells with at least 500 draws on both sides; and its standard error allowance."""
    rx, ry = tukey_depth_regions(x, BOX), tukey_depth_regions(y, BOX)
    sx = private_tukey_median_2d(x, eps, BOX, size=draws, rng=seed)
    sy = private_tukey_median_2d(y, eps, BOX, size=draws, rng=seed + 1)

    def cells(s):
        return rx.level_of(s) * (len(y) + 2) + ry.level_of(s)
    cx, cy = np.unique(cells(sx), return_counts=True), np.unique(cells(sy), return_counts=True)
    fx, fy = dict(zip(*cx)), dict(zip(*cy))
    worst, slack = 0.0, 0.0
    for c in set(fx) & set(fy):
        if fx[c] >= 500 and fy[c] >= 500:
            r = abs(math.log(fx[c] / fy[c]))
            if r > worst:
                worst, slack = r, 4 * math.sqrt(1 / fx[c] + 1 / fy[c])
    return worst, slack


@pytest.mark.parametrize("name, relation", [("lattice_near_duplicate", "add"), ("gaussian_near_duplicates", "add"),
                                            ("collinear_denormal", "replace")])
def test_sampled_log_ratios_within_the_claims(name, relation):
    """Measured with the sampler itself: 40,000 draws per data set, the log ratio of cell
    frequencies (cells of the two neighbours' level sets) within the claim up to 4 standard errors."""
    eps = 1.0
    x = FAMILIES[name]()
    if relation == "add":
        y, claim = np.r_[x, [np.nextafter(x[3], -9.0)]], eps / 2
    else:
        y, claim = x.copy(), eps
        y[-1] = [-5e-324, 5e-324]
        y[0] = [2.0 ** -26, 2.0 ** -26]
    exact = _exact_loss(x, y, eps)
    assert 0.3 * claim < exact <= claim + 1e-9                     # a pair where the loss is large
    worst, slack = _sampled_loss(x, y, eps, 40_000, seed=3)
    assert worst <= claim + slack
    assert worst <= exact + slack


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FAMILIES))
def test_sampled_log_ratios_with_many_draws(name):
    """As above with 10^5 draws per data set and every neighbour of the family (slow)."""
    eps = 1.0
    x = FAMILIES[name]()
    added, replaced = _neighbours(x)
    for ys, claim in ((added, eps / 2), (replaced, eps)):
        for i, y in enumerate(ys):
            worst, slack = _sampled_loss(x, y, eps, 100_000, seed=10 + i)
            assert worst <= claim + slack


def test_orientation_is_exact_with_denormals_and_mixed_magnitudes():
    """The orientation predicate against rational arithmetic on triples mixing denormals, tiny, unit and huge
    coordinates (where products underflow or a power-of-two scaling loses bits)."""
    from dpcp_tutorial.depth import orientation

    rng = np.random.default_rng(0)
    values = np.array([0.0, 5e-324, 1e-323, 1e-310, 2.5e-308, 2.0 ** -1000, 2.0 ** -600, 1e-300, 1e-200, 0.75, 1.0,
                       UP, 3.0, 1e300])
    c = rng.choice(values, (4000, 6)) * rng.choice([-1.0, 1.0], (4000, 6))
    got = orientation(*c.T)
    for row, s in zip(c, got):
        ax, ay, bx, by, cx, cy = (Fraction(float(v)) for v in row)
        det = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        assert s == (det > 0) - (det < 0)
