"""Tests for dpcp_tutorial.median: exact privacy audits, the Langevin sampler, non-private medians."""

import numpy as np
import pytest
from scipy import stats

from dpcp_tutorial import (
    GaussianPrior,
    gumbel_max_sample,
    depth_median,
    depth_median_log_probabilities,
    halfspace_depth,
    integrated_dual_depth,
    langevin_step_size,
    mechanism_eta,
    private_depth_median,
    public_grid,
    random_directions,
    spatial_depth,
    spatial_median,
)
from dpcp_tutorial.accounting import ReleaseWarning
from dpcp_tutorial._depth_core import project

DEPTHS = ("halfspace", "spatial", "idd", "smoothed_idd")

GAUSS_2D = GaussianPrior(0.0, 5.0 * np.sqrt(2))   # the authors' prior N(0, 25 d I) in d = 2


def _neighbours(data, rng):
    """Replace-one neighbours of ``data``: random, far outlier, mirrored point, a duplicate, a candidate-like point."""
    n = len(data)
    out = []
    for new in (rng.standard_normal(data.shape[1]) * 2, np.full(data.shape[1], 1e3), -data[0], data[1], np.zeros(data.shape[1])):
        other = data.copy()
        other[int(rng.integers(n))] = new
        out.append(other)
    return out


# --------------------------------------------------------------------------- exact privacy audit

@pytest.mark.parametrize("depth, with_directions", [("halfspace", False), ("halfspace", True), ("spatial", False),
                                                   ("idd", True), ("smoothed_idd", True)])
@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 10.0, 1e3])
def test_candidate_mechanism_privacy_audit(depth, with_directions, epsilon):
    """Exact audit: max_k |log P_D(c_k) - log P_D'(c_k)| <= epsilon on replace-one neighbours (2D halfspace
    depth both exact and over public directions)."""
    rng = np.random.default_rng(0)
    cand = public_grid(-2.5, 2.5, 15, 2)     # public grid; some points coincide with the integer data
    u = random_directions(40, 2, rng=1) if with_directions else None
    worst = 0.0
    for trial in range(3):
        data = rng.standard_normal((30, 2)) if trial else rng.integers(-2, 3, (30, 2)).astype(float)
        base = depth_median_log_probabilities(data, epsilon, cand, depth, directions=u)
        np.testing.assert_allclose(np.exp(base).sum(), 1.0)
        for other in _neighbours(data, rng):
            logp = depth_median_log_probabilities(other, epsilon, cand, depth, directions=u)
            worst = max(worst, np.max(np.abs(logp - base)))
    assert worst <= epsilon + 1e-9
    if epsilon <= 1.0:
        assert worst > 0.2 * epsilon          # the audit is not vacuous


def test_privacy_audit_in_higher_dimension_with_directions():
    rng = np.random.default_rng(2)
    d = 6
    data = rng.standard_normal((50, d))
    cand = GaussianPrior(0.0, scale=1.0).sample(200, d, rng=3)
    u = random_directions(100, d, rng=4)
    for depth in DEPTHS:
        base = depth_median_log_probabilities(data, 2.0, cand, depth, directions=u)
        for other in _neighbours(data, rng):
            logp = depth_median_log_probabilities(other, 2.0, cand, depth, directions=u)
            assert np.max(np.abs(logp - base)) <= 2.0 + 1e-9


def test_log_probabilities_no_overflow_for_huge_epsilon_n():
    """beta * depth ~ epsilon * n / 4 = 1.25e7 would overflow exp(); log space stays exact."""
    rng = np.random.default_rng(5)
    data = rng.standard_normal((5000, 2))
    cand = public_grid(-1, 1, 21, 2)
    logp = depth_median_log_probabilities(data, 1e4, cand, "halfspace")
    assert np.all(np.isfinite(logp[logp > -np.inf])) and logp.max() == pytest.approx(0.0, abs=1e-12)
    values = halfspace_depth(cand, data)
    assert np.argmax(logp) == np.argmax(values)


def test_sampler_uses_the_exact_law():
    """The sampler is Gumbel-max on the audited log-probabilities: with the same seed it picks the same
    candidate as gumbel_max_sample(log P), and 1000 draws pass a chi-square test (p > 1e-4)."""
    rng = np.random.default_rng(6)
    data = rng.standard_normal((40, 2))
    cand = np.array([[0.05, 0.02], [0.6, -0.4], [-1.1, 0.3], [2.0, 2.0]])
    for depth in ("halfspace", "spatial"):          # no directions drawn: rng only feeds the Gumbel noise
        logp = depth_median_log_probabilities(data, 0.4, cand, depth)
        for seed in range(20):
            got = private_depth_median(data, 0.4, depth, candidates=cand, rng=seed)
            np.testing.assert_array_equal(got, cand[gumbel_max_sample(logp, rng=seed)])
    u = random_directions(30, 2, rng=7)
    probs = np.exp(depth_median_log_probabilities(data, 0.4, cand, "idd", directions=u))
    gen = np.random.default_rng(8)
    draws = [private_depth_median(data, 0.4, "idd", candidates=cand, directions=u, rng=gen) for _ in range(1000)]
    idx = [int(np.flatnonzero((cand == x).all(axis=1))[0]) for x in draws]
    assert stats.chisquare(np.bincount(idx, minlength=4), probs * 1000).pvalue > 1e-4


def test_candidates_from_prior_and_reproducibility():
    rng = np.random.default_rng(9)
    data = rng.standard_normal((200, 3)) + 1.0
    a = private_depth_median(data, 5.0, "spatial", prior=GaussianPrior(0.0, scale=2.0), n_candidates=300, rng=11)
    b = private_depth_median(data, 5.0, "spatial", prior=GaussianPrior(0.0, scale=2.0), n_candidates=300, rng=11)
    c = private_depth_median(data, 5.0, "spatial", prior=GaussianPrior(0.0, scale=2.0), n_candidates=300, rng=12)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # the release is one of the prior draws made inside the function (directions are not drawn for spatial)
    draws = GaussianPrior(0.0, scale=2.0).sample(300, 3, np.random.default_rng(11))
    assert any(np.array_equal(a, row) for row in draws)


def test_prior_draws_stay_in_the_data_domain():
    """Data at the edge of the domain (1e100): the private prior is centred there, and its draws beyond
    1e100 are clipped to it (post-processing), so the release is a candidate, not the data-domain error."""
    data = np.full((50, 2), 1e100)
    for seed in range(3):
        m = private_depth_median(data, 200.0, prior="private", n_candidates=200, rng=seed)
        assert np.all(np.abs(m) <= 1e100)
    near_edge = GaussianPrior((1e100, -1e100), scale=1e99)
    m = private_depth_median(data, 1.0, prior=near_edge, n_candidates=50, rng=0)
    assert np.all(np.abs(m) <= 1e100)


def test_candidate_median_is_accurate_for_large_epsilon():
    rng = np.random.default_rng(13)
    data = rng.standard_normal((1000, 2)) + np.array([0.5, -0.5])
    grid = public_grid(-2, 2, 41, 2)
    for depth in ("halfspace", "spatial"):
        est = private_depth_median(data, 50.0, depth, candidates=grid, rng=14)
        assert np.linalg.norm(est - [0.5, -0.5]) < 0.2


# --------------------------------------------------------------------------- Langevin

def _symmetric_data(n_half, d, centre, rng):
    half = rng.standard_normal((n_half, d))
    return np.vstack([centre + half, centre - half])


def test_smoothed_idd_optimum_closed_form_non_private():
    """Centrally symmetric data: F_{s,j}(u_j'c) = 1/2 in every direction, so c maximises IDD_s."""
    rng = np.random.default_rng(15)
    centre = np.array([1.0, -2.0, 0.5])
    data = _symmetric_data(300, 3, centre, rng)
    u = random_directions(60, 3, rng=16)
    est = depth_median(data, "smoothed_idd", directions=u, start=np.zeros(3))
    np.testing.assert_allclose(est, centre, atol=1e-6)
    value = integrated_dual_depth(centre[None], data, directions=u, smoothing=10.0)[0]
    assert value == pytest.approx(0.25, abs=1e-15)


def test_langevin_reaches_the_optimum_with_the_laplace_spread():
    """Symmetric data, optimum c known. Near c the target is ~ N(c, (beta*A + I/tau^2)^-1) with
    A = (2/m) sum_j F_j'(t_j)^2 u_j u_j' (exact Hessian at c, since 1 - 2F_j = 0 there). Over R = 100
    chains the mean squared Mahalanobis distance is ~ d = 2 (chi^2_{2R}/R; 4 SE = 0.8) and the mean
    error is within 4 SE of 0."""
    rng = np.random.default_rng(17)
    centre = np.array([0.7, -0.3])
    data = _symmetric_data(100, 2, centre, rng)
    u = random_directions(50, 2, rng=18)
    eps = 60.0
    beta = mechanism_eta(eps, "smoothed_idd", len(data))
    tc = project(centre[None], u)[0]
    proj = project(data, u)
    sig = 1 / (1 + np.exp(-10 * (tc - proj)))
    fprime = 10 * np.mean(sig * (1 - sig), axis=0)
    prec = beta * (2 / len(u)) * (u.T * fprime ** 2) @ u + np.eye(2) / (5 * np.sqrt(2)) ** 2
    h = 0.2 / np.linalg.eigvalsh(prec)[-1]    # ULA inflates the variance by 1/(1 - h*lambda/2) <= 1.11
    gen = np.random.default_rng(19)
    out = np.array([private_depth_median(data, eps, "smoothed_idd", "langevin", GAUSS_2D, directions=u,
                                         n_steps=150, step_size=h, rng=gen) for _ in range(100)])
    err = out - centre
    maha = np.einsum("ri,ij,rj->r", err, prec, err)
    assert abs(maha.mean() - 2.0) < 0.8, maha.mean()
    se = err.std(axis=0, ddof=1) / np.sqrt(len(err))
    assert np.all(np.abs(err.mean(axis=0)) < 4 * se + 1e-12)


def test_langevin_with_negligible_beta_samples_the_prior_exactly():
    """With beta ~ 0 the chain is ULA on N(mu, tau^2 I), whose stationary law is exactly
    N(mu, tau^2/(1 - h/(2 tau^2)) I). 300 chains x 2 coordinates: mean within 4 SE, variance within
    4 SE (SE of a variance estimate = v sqrt(2/600)); a noise scale sqrt(h) instead of sqrt(2h) halves it."""
    rng = np.random.default_rng(20)
    data = rng.standard_normal((10, 2))
    prior = GaussianPrior(mean=(3.0, -1.0), scale=2.0)
    h = 1.0
    gen = np.random.default_rng(21)
    out = np.array([private_depth_median(data, 1e-12, "smoothed_idd", "langevin", prior, directions=np.eye(2),
                                         n_steps=100, step_size=h, start=np.zeros(2), rng=gen) for _ in range(300)])
    v = 4.0 / (1 - h / (2 * 4.0))
    assert np.all(np.abs(out.mean(axis=0) - [3.0, -1.0]) < 4 * np.sqrt(v / 300))
    assert abs(out.var(axis=0, ddof=1).mean() - v) < 4 * v * np.sqrt(2 / 600)


def test_langevin_same_seed_same_output_and_a_start_on_a_data_row_is_allowed():
    rng = np.random.default_rng(22)
    data = rng.standard_normal((100, 3))
    kw = dict(depth="smoothed_idd", method="langevin", n_directions=20, n_steps=50,
              prior=GaussianPrior(0.0, 5.0 * np.sqrt(3)))
    a = private_depth_median(data, 1.0, rng=23, **kw)
    np.testing.assert_array_equal(a, private_depth_median(data, 1.0, rng=23, **kw))
    assert not np.array_equal(a, private_depth_median(data, 1.0, rng=24, **kw))
    # a public start that happens to equal a record is not refused (a refusal would depend on the data)
    assert np.all(np.isfinite(private_depth_median(data, 1.0, start=data[3], rng=23, **kw)))


def test_langevin_unstable_settings_are_refused_from_public_inputs_only():
    data = np.random.default_rng(25).standard_normal((20, 2))
    kw = dict(n_directions=5, n_steps=500, rng=0)
    # a step of 2 tau^2 or more is unstable for every data set: refused before the data are read
    with pytest.raises(ValueError, match="step_size"):
        private_depth_median(data, 1.0, "smoothed_idd", "langevin", GaussianPrior(0.0, scale=1e-3), step_size=1.0, **kw)
    # the same refusal for any data, including data far away or on a lattice
    for other in (data * 1e6, np.round(data)):
        with pytest.raises(ValueError, match="step_size"):
            private_depth_median(other, 1.0, "smoothed_idd", "langevin", GaussianPrior(0.0, scale=1e-3),
                                 step_size=1.0, **kw)
    # a huge beta times a large step: refused by the public a-priori bound, for any data
    for other in (data, data * 1e6):
        with pytest.raises(ValueError, match="not bounded"):
            private_depth_median(other, 1e90, "smoothed_idd", "langevin", GaussianPrior(0.0, scale=1e30),
                                 step_size=1.0, **kw)


def test_default_step_size_formula():
    u = np.eye(3)
    # lambda_max(U'U/m) = 1/3; L = beta * c * s^2 / 3 + 1/tau^2 with c = 1/(6 sqrt 3) + 1/8
    c = 1 / (6 * np.sqrt(3)) + 0.125
    assert langevin_step_size(600.0, u, 10.0, 2.0) == pytest.approx(1 / (600 * c * 100 / 3 + 0.25))


# --------------------------------------------------------------------------- non-private medians and helpers

def test_spatial_median_optimality():
    rng = np.random.default_rng(26)
    data = rng.standard_cauchy((500, 3))
    m = spatial_median(data)
    diff = data - m
    grad = (diff / np.linalg.norm(diff, axis=1)[:, None]).sum(axis=0)
    assert np.linalg.norm(grad) < 1e-6 * len(data)
    assert spatial_depth(m[None], data)[0] > 1 - 1e-8
    obj = lambda t: np.linalg.norm(data - t, axis=1).sum()                     # noqa: E731
    for step in rng.standard_normal((20, 3)) * 1e-3:
        assert obj(m) <= obj(m + step)


def test_spatial_median_at_a_data_point():
    """A point of multiplicity 3 whose other unit vectors sum to norm < 3 is the spatial median (Vardi-Zhang)."""
    data = np.array([[0, 0], [0, 0], [0, 0], [1, 0], [0, 1], [-1, 0.2], [0.3, -1], [5, 5.0]])
    s = sum(v / np.linalg.norm(v) for v in data[3:])
    assert np.linalg.norm(s) < 3
    # the iteration starts at the coordinate-wise median, which is that point; the Vardi-Zhang step keeps it
    # exactly (plain Weiszfeld would step away and only creep back)
    np.testing.assert_array_equal(spatial_median(data + [10.0, 0.0]), [10.0, 0.0])


def test_depth_median_variants():
    rng = np.random.default_rng(27)
    data = rng.standard_normal((300, 2))
    deepest = depth_median(data, "halfspace")
    assert halfspace_depth(deepest[None], data)[0] == halfspace_depth(data, data).max()
    grid = public_grid(-1, 1, 5, 2)
    best = depth_median(data, "spatial", candidates=grid)
    assert spatial_depth(best[None], data)[0] == spatial_depth(grid, data).max()
    np.testing.assert_allclose(depth_median(data, "spatial"), spatial_median(data))


def test_mechanism_beta_and_grid():
    assert mechanism_eta(10.0, "halfspace", 10_000) == pytest.approx(50_000)
    assert mechanism_eta(10.0, "spatial", 10_000) == pytest.approx(25_000)
    assert mechanism_eta(10.0, "smoothed_idd", 10_000) == pytest.approx(50_000)
    g = public_grid(0, 1, 3, 2)
    assert g.shape == (9, 2) and set(g[:, 0]) == {0.0, 0.5, 1.0}


# --------------------------------------------------------------------------- bad input

_DATA = np.random.default_rng(0).standard_normal((20, 2))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(data=np.r_[_DATA, [[np.nan, 1]]], epsilon=1.0), ValueError, "NaN"),
    (dict(data=_DATA[:1], epsilon=1.0), ValueError, "at least 2"),
    (dict(data=_DATA, epsilon=0.0), ValueError, "epsilon"),
    (dict(data=_DATA, epsilon=-1.0), ValueError, "epsilon"),
    (dict(data=_DATA, epsilon=1.0, candidates=np.zeros((3, 3))), ValueError, "columns"),
    (dict(data=_DATA, epsilon=1.0, depth="tukey"), ValueError, "not supported"),
    (dict(data=_DATA, epsilon=1.0, method="mcmc"), ValueError, "method"),
    (dict(data=_DATA, epsilon=1.0, depth="spatial", method="langevin"), ValueError, "differentiable"),
    (dict(data=_DATA, epsilon=1.0, start=np.zeros(2), prior=GaussianPrior(0.0, 1.0)), ValueError, "Langevin options"),
    (dict(data=_DATA, epsilon=1.0, depth="smoothed_idd", method="langevin", start=np.zeros(3),
          prior=GaussianPrior(0.0, 1.0)), ValueError, "shape"),
    (dict(data=_DATA, epsilon=1.0, prior="normal"), ValueError, "GaussianPrior or 'private'"),
    (dict(data=_DATA, epsilon=1.0, prior=3.0), TypeError, "GaussianPrior or 'private'"),
    (dict(data=_DATA, epsilon=1.0, rng="seed", prior=GaussianPrior(0.0, 1.0)), TypeError, "rng"),
    (dict(data=_DATA, epsilon=1.0), TypeError, "needs a base measure.*box=.*prior='private'.*codebook"),
    (dict(data=_DATA, epsilon=1.0, box=[[0.0, 0.0]]), ValueError, "box must be"),
    (dict(data=_DATA, epsilon=1.0, box=[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), ValueError, r"shape \(2, 2\)"),
    (dict(data=_DATA, epsilon=1.0, box=[[0.0, 1.0], [1.0, 1.0]]), ValueError, "high > low"),
    (dict(data=_DATA, epsilon=1.0, box=[[0.0, np.nan], [1.0, 1.0]]), ValueError, "NaN"),
    (dict(data=_DATA, epsilon=1.0, box="wide"), TypeError, "box"),
    (dict(data=_DATA, epsilon=1.0, box=[[0.0, 0.0], [1.0, 1.0]], candidates=[[0.5, 2.0]]), ValueError,
     "outside the public box"),
    (dict(data=_DATA, epsilon=1.0, box=[[0.0, 0.0], [1.0, 1.0]], progress="yes"), TypeError, "progress"),
    (dict(data=_DATA, epsilon=1.0, box=[[0.0, 0.0], [1.0, 1.0]], depth="smoothed_idd", method="langevin"),
     TypeError, "needs a prior"),
    (dict(data=_DATA, epsilon=1.0, depth="smoothed_idd", method="langevin"), TypeError, "needs a prior"),
])
def test_private_median_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        private_depth_median(**kwargs)


def test_candidates_equal_to_data_rows_are_not_refused():
    """Lattice data on a public grid: candidates may coincide with records."""
    data = np.array([[0.0, 1.0], [2.0, 3.0], [1.0, 1.0]])
    logp = depth_median_log_probabilities(data, 1.0, np.array([[-0.0, 1.0], [2.0, 3.0], [5.0, 5.0]]), "spatial")
    assert np.all(np.isfinite(logp)) and abs(np.exp(logp).sum() - 1) < 1e-12
    out = private_depth_median(data, 1.0, "halfspace", candidates=data, rng=0)
    assert any(np.array_equal(out, row) for row in data)


def test_log_probabilities_need_directions_where_undefined_otherwise():
    with pytest.raises(ValueError, match="directions"):
        depth_median_log_probabilities(_DATA, 1.0, np.ones((2, 2)), "idd")
    with pytest.raises(ValueError, match="directions"):
        depth_median_log_probabilities(np.ones((5, 3)) * np.arange(5)[:, None], 1.0, np.full((2, 3), 0.5), "halfspace")


def test_prior_and_grid_validation():
    with pytest.raises(ValueError, match="scale"):
        GaussianPrior(0.0, scale=0.0)
    for bad in (1e-300, 1e300, np.inf, -1.0):
        with pytest.raises(ValueError, match="scale"):
            GaussianPrior(0.0, scale=bad)
    with pytest.raises(TypeError):
        GaussianPrior(0.0, scale="1.0")
    for size, d in ((0, 2), (-1, 2), (3, 0)):
        with pytest.raises(ValueError):
            GaussianPrior(0.0, 1.0).sample(size, d, rng=0)
    with pytest.raises(TypeError):
        GaussianPrior(0.0, 1.0).sample(2.5, 2, rng=0)
    with pytest.raises(ValueError, match="prior_scale"):
        langevin_step_size(1.0, np.eye(2), prior_scale=0.0)
    with pytest.raises(ValueError, match="prior_scale"):
        langevin_step_size(1.0, np.eye(2), prior_scale=-1.0)
    assert langevin_step_size(1.0, np.eye(2)) > 0      # prior_scale=inf: no prior curvature
    with pytest.raises(ValueError, match="length"):
        GaussianPrior(mean=(1.0, 2.0), scale=1.0).mean_vector(3)
    with pytest.raises(ValueError, match="too large"):
        public_grid(0, 1, 100, 4)
    with pytest.raises(ValueError, match="exceed"):
        public_grid(1, 0, 3, 2)


def test_prior_is_required_and_far_tail_releases_warn():
    """No default prior; a release in the prior's far tail (Mahalanobis radius beyond the
    1 - 1e-6 quantile of chi_d) warns, and the warning depends only on the release and the prior."""
    rng = np.random.default_rng(40)
    data = rng.normal([125.0, 80.0], [15.0, 10.0], size=(300, 2))           # blood pressures, mmHg
    assert GaussianPrior(0.0, 1.0).far_tail_radius(1) == pytest.approx(4.8916, abs=1e-3)
    assert GaussianPrior(0.0, 1.0).far_tail_radius(5) == pytest.approx(5.9907, abs=1e-3)
    good = private_depth_median(data, 1.0, "smoothed_idd", "langevin", GaussianPrior([120.0, 80.0], 20.0),
                                n_directions=50, rng=1)
    assert np.linalg.norm(good - [125.0, 80.0]) < 10
    narrow = GaussianPrior(0.0, 0.5)                   # data near (3, 3): a chain started there stays near them
    near = rng.normal(3.0, 1.0, size=(300, 2))
    with pytest.warns(ReleaseWarning, match="far-tail radius"):
        out = private_depth_median(near, 5.0, "smoothed_idd", "langevin", narrow, n_directions=50,
                                   start=np.array([3.0, 3.0]), rng=1)
    assert narrow.mahalanobis_radius(out) > narrow.far_tail_radius(2)
    wrong = GaussianPrior(0.0, 5.0 * np.sqrt(2))       # the standardised-data choice on data in mmHg
    # explicit candidates need no prior; with one, the same post-processing check applies
    cand = public_grid(0.0, 200.0, 41, 2)
    private_depth_median(data, 1.0, "halfspace", candidates=cand, rng=0)
    with pytest.warns(ReleaseWarning):
        private_depth_median(data, 50.0, "halfspace", prior=wrong, candidates=cand, rng=0)


def test_unused_settings_are_validated_without_changing_the_release():
    """Parameters a mode does not use are checked but never drawn from rng: the seeded
    release is the same with or without them."""
    data = np.random.default_rng(60).normal(size=(40, 2))
    base = private_depth_median(data, 1.0, depth="spatial", prior=GAUSS_2D, rng=7)
    same = private_depth_median(data, 1.0, depth="spatial", prior=GAUSS_2D, n_directions=7,
                                directions=random_directions(5, 2, rng=1), smoothing=3.0, rng=7)
    np.testing.assert_array_equal(base, same)
    grid = public_grid(-1, 1, 5, 2)
    np.testing.assert_array_equal(private_depth_median(data, 1.0, candidates=grid, rng=2),
                                  private_depth_median(data, 1.0, candidates=grid, n_candidates=3, rng=2))
    for kwargs, match in [(dict(n_directions=2.5), "n_directions must be an integer"),
                          (dict(smoothing=-1.0), "smoothing"), (dict(n_candidates=0), "n_candidates"),
                          (dict(method=["candidates"]), "method must be one of"),
                          (dict(directions=np.zeros((3, 2))), "zero vector")]:
        with pytest.raises((TypeError, ValueError), match=match):
            private_depth_median(data, 1.0, depth="spatial", prior=GAUSS_2D, **{**dict(rng=7), **kwargs})
    np.testing.assert_array_equal(depth_median(data, "spatial"), depth_median(data, "spatial", start=[0.0, 0.0],
                                                                             n_directions=3))
    with pytest.raises(ValueError, match="start"):
        depth_median(data, "spatial", start=[0.0, np.nan])
    with pytest.raises(ValueError, match="n_steps=.* needs n_steps \\* d > 1e8"):
        private_depth_median(data, 1.0, depth="smoothed_idd", method="langevin", prior=GAUSS_2D,
                             n_directions=10, n_steps=10**8, rng=0)
    with pytest.raises(ValueError, match="smoothing=1e-300"):
        langevin_step_size(10.0, random_directions(8, 2, rng=1), smoothing=1e-300)


# ----------------------------------------------------------------------------- public box and progress bar

_BOX = np.array([[-1.0, -2.0], [3.0, 1.0]])


def test_box_without_prior_draws_the_candidates_uniformly_in_the_box():
    data = np.random.default_rng(40).standard_normal((50, 2))
    rng = np.random.default_rng(41)
    cand = _BOX[0] + (_BOX[1] - _BOX[0]) * rng.random((300, 2))       # the documented base measure
    want = private_depth_median(data, 1.0, candidates=cand, rng=rng)  # the finite mechanism over them
    got = private_depth_median(data, 1.0, box=_BOX, n_candidates=300, rng=41)
    np.testing.assert_array_equal(got, want)
    assert np.all((got >= _BOX[0]) & (got <= _BOX[1]))


def test_prior_restricted_to_the_box_is_the_truncated_normal():
    prior = GaussianPrior(mean=[2.5, 0.0], scale=1.5)
    draws = prior.sample_in_box(4000, _BOX, rng=42)
    assert draws.shape == (4000, 2) and np.all((draws >= _BOX[0]) & (draws <= _BOX[1]))
    for k, mean in enumerate((2.5, 0.0)):
        law = stats.truncnorm((_BOX[0, k] - mean) / 1.5, (_BOX[1, k] - mean) / 1.5, loc=mean, scale=1.5)
        assert stats.kstest(draws[:, k], law.cdf).pvalue > 1e-3
    # a box in the prior's far tail still gives draws inside it
    far = GaussianPrior(0.0, 1.0).sample_in_box(200, [[40.0, -41.0], [41.0, -40.0]], rng=43)
    assert np.all((far >= [40.0, -41.0]) & (far <= [41.0, -40.0]))
    data = np.random.default_rng(44).standard_normal((30, 2))
    rng = np.random.default_rng(45)
    cand = prior.sample_in_box(200, _BOX, rng)
    np.testing.assert_array_equal(private_depth_median(data, 1.0, prior=prior, box=_BOX, n_candidates=200, rng=45),
                                  private_depth_median(data, 1.0, candidates=cand, rng=rng))


def test_every_release_lies_in_the_box_even_when_the_data_do_not():
    data = np.random.default_rng(46).standard_normal((40, 2)) + [10.0, 10.0]     # the median is outside the box
    for depth in DEPTHS:
        got = private_depth_median(data, 5.0, depth, box=_BOX, n_candidates=200, n_directions=30, rng=47)
        assert np.all((got >= _BOX[0]) & (got <= _BOX[1])), depth
    got = private_depth_median(data, 5.0, "smoothed_idd", "langevin", prior=GaussianPrior(0.0, 5.0), box=_BOX,
                               n_directions=30, n_steps=300, rng=48)
    assert np.all((got >= _BOX[0]) & (got <= _BOX[1]))
    far_box = [[30.0, 30.0], [31.0, 31.0]]            # the chain ends near the prior, far from this box
    with pytest.warns(ReleaseWarning, match="far-tail"):     # a box in the prior's far tail: a bad prior
        got = private_depth_median(data, 5.0, "smoothed_idd", "langevin", prior=GaussianPrior(0.0, 1.0),
                                   box=far_box, n_directions=30, n_steps=300, rng=48)
    np.testing.assert_array_equal(got, [30.0, 30.0])  # clipped to the box (post-processing)
    inside = public_grid(-1.0, 1.0, 5, 2)
    assert np.any(np.all(private_depth_median(data, 1.0, box=_BOX, candidates=inside, rng=49) == inside, axis=1))


def test_box_on_standardised_data_is_far_more_accurate_than_the_wide_prior():
    x = np.random.default_rng(50).standard_normal((2000, 3))
    truth = spatial_median(x)
    wide = [np.linalg.norm(private_depth_median(x, 1.0, prior=GaussianPrior(0.0, 5 * np.sqrt(3)), rng=s) - truth)
            for s in range(4)]
    boxed = [np.linalg.norm(private_depth_median(x, 1.0, prior=GaussianPrior(0.0, 1.0), box=([-3] * 3, [3] * 3),
                                                 rng=s) - truth) for s in range(4)]
    assert np.mean(boxed) < 0.3 < 0.6 < np.mean(wide)


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_progress_bar_does_not_change_the_release(depth, capsys):
    data = np.random.default_rng(51).standard_normal((300, 2))
    kw = dict(box=_BOX, n_candidates=250, n_directions=40, rng=52)
    quiet = private_depth_median(data, 1.0, depth, **kw)
    np.testing.assert_array_equal(private_depth_median(data, 1.0, depth, progress=True, **kw), quiet)
    assert "candidates" in capsys.readouterr().err
    if depth == "halfspace":   # the direction-based path in d = 3
        x3 = np.random.default_rng(53).standard_normal((300, 3))
        kw3 = dict(prior=GaussianPrior(0.0, 1.0), n_candidates=100, n_directions=50, rng=54)
        np.testing.assert_array_equal(private_depth_median(x3, 1.0, depth, progress=True, **kw3),
                                      private_depth_median(x3, 1.0, depth, **kw3))
    if depth == "smoothed_idd":
        kw = dict(prior=GaussianPrior(0.0, 1.0), n_directions=20, n_steps=200, rng=55)
        np.testing.assert_array_equal(private_depth_median(data, 1.0, depth, "langevin", progress=True, **kw),
                                      private_depth_median(data, 1.0, depth, "langevin", **kw))
        assert "Langevin" in capsys.readouterr().err


def test_direction_blocks_give_the_same_depths(monkeypatch):
    import dpcp_tutorial._depth_core as depth_core

    data = np.random.default_rng(56).standard_normal((200, 3))
    points = np.vstack([data[:20], np.random.default_rng(57).standard_normal((30, 3))])
    u = random_directions(37, 3, rng=58)
    whole_hd = halfspace_depth(points, data, "directions", directions=u)
    whole_idd = integrated_dual_depth(points, data, directions=u)
    proj, t = np.sort(project(data, u), axis=0), project(points, u)
    worst = np.max([np.maximum(np.searchsorted(proj[:, k], t[:, k], "left"),
                               200 - np.searchsorted(proj[:, k], t[:, k], "right")) for k in range(37)], axis=0)
    np.testing.assert_array_equal(whole_hd, (200 - worst) / 200)
    monkeypatch.setattr(depth_core, "CHUNK", 200 * 4)          # blocks of 4 directions
    np.testing.assert_array_equal(halfspace_depth(points, data, "directions", directions=u), whole_hd)
    np.testing.assert_array_equal(integrated_dual_depth(points, data, directions=u), whole_idd)


def test_the_readme_median_example_runs_alone_and_stays_in_the_box(capsys):
    pytest.importorskip("statsmodels")
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if "private_depth_median(" in b)
    assert "rng=" not in block
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)      # noqa: S102 - a fresh namespace: it runs alone
    m, D = namespace["m"], namespace["D"]
    assert 'prior="private"' in block and np.all((m >= 0) & (m <= [365, 100]))      # inside the public box
    truth = spatial_median(D)
    assert np.all(np.abs(m - truth) < [1.0, 2.0])      # visits and score points (measured error about 0.1)
    assert "private median:" in capsys.readouterr().out


def test_depth_median_progress_bar_gives_the_same_median(capsys):
    data = np.random.default_rng(59).standard_normal((150, 2))
    for depth in ("halfspace", "idd", "spatial"):
        np.testing.assert_array_equal(depth_median(data, depth, n_directions=20, rng=3, progress=True),
                                      depth_median(data, depth, n_directions=20, rng=3))
    grid = public_grid(-1.0, 1.0, 7, 2)
    np.testing.assert_array_equal(depth_median(data, "spatial", candidates=grid, progress=True),
                                  depth_median(data, "spatial", candidates=grid))
    assert "depth of" in capsys.readouterr().err


def test_old_names_of_the_inverse_temperature_warn_and_give_the_same_result():
    """``mechanism_beta`` and ``langevin_step_size(beta=)`` are deprecated spellings of ``mechanism_eta``, ``eta=``."""
    import dpcp_tutorial
    from dpcp_tutorial.median import mechanism_beta

    assert "mechanism_beta" not in dpcp_tutorial.__all__ and dpcp_tutorial.mechanism_beta is mechanism_beta
    with pytest.warns(FutureWarning, match="mechanism_beta is renamed mechanism_eta"):
        assert mechanism_beta(2.0, "spatial", 100) == mechanism_eta(2.0, "spatial", 100)
    u = np.eye(2)
    with pytest.warns(FutureWarning, match="beta= is renamed eta="):
        old = langevin_step_size(beta=50.0, directions=u)
    assert old == langevin_step_size(eta=50.0, directions=u)
    with pytest.raises(TypeError, match="pass eta= only"):
        langevin_step_size(eta=50.0, beta=50.0, directions=u)
