"""Errors in private paths depend only on public inputs.

A raise in a private release is part of its output: a data set that releases
and a neighbour that raises is an infinite privacy loss. This module

1. audits the depth mechanisms exactly on **lattice data**, where public
   candidates coincide with records (the package used to refuse such
   candidates, which was itself a data-dependent refusal), under replace-one
   and add/remove neighbours;
2. checks that a Byzantine client that submits a public candidate cannot
   abort an aggregation round;
3. lists every private entry point with the errors it can raise on *data*
   (``ERROR_TABLE``) and runs each on two invalid data sets that differ in
   their values, positions and counts: the exception type and the message must
   be identical (so the message carries no data-derived number), and valid
   neighbours never raise.

Why each remaining raise depends only on public inputs
------------------------------------------------------
* Parameters (epsilon, delta, levels, bins, bounds, candidates' shape, public
  ``n``, public ``classes``) are public: their checks and messages may quote
  them.
* Shapes: the schema (number of columns) is public; the number of rows is
  public where the docstring says so (replace-one releases, and the
  ``n=None`` defaults of private_quantile/dpcp_quantile/DPCP, whose
  infeasibility message quotes it); where a public ``n=`` is given the data's
  size is never used (tests/test_dpcp.py::test_public_n_...).
* Data-domain checks (NaN, inf, scores outside [0, 1], labels outside the
  public label set, values beyond 1e100): every guarantee is stated for data
  sets inside the domain, and a domain check raises for *neither* member of a
  neighbouring pair inside it; for data outside the domain the message is the
  same whatever the data (checked below). Policy and argument:
  :mod:`dpcp_tutorial._validation`.
* Solver certificates (DPLogisticRegression's Newton solver must certify its
  minimiser): the objective is strongly convex with bounded rows, so damped
  Newton certifies within its iteration budget for every data set in the
  domain; the error exists to fail loudly on a numerical breakdown rather than
  release an uncertified minimiser.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpcp_tutorial as dp
from dpcp_tutorial import (
    aggregation_log_probabilities,
    depth_median_log_probabilities,
    private_depth_median,
    private_median_aggregate,
    public_grid,
    random_directions,
)

DEPTHS = [("halfspace", False), ("halfspace", True), ("spatial", False), ("idd", True), ("smoothed_idd", True)]


# --------------------------------------------------------------------------- 1. lattice audits

def _lattice(rng, n):
    return rng.integers(-2, 3, size=(n, 2)).astype(float)


@pytest.mark.slow
@pytest.mark.parametrize("depth, with_directions", DEPTHS)
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_lattice_replace_one_audit(depth, with_directions, epsilon):
    """One record moved onto a public candidate (or off it): exact max |log-ratio| <= epsilon."""
    rng = np.random.default_rng(1)
    grid = public_grid(-2, 2, 5, 2)                # every lattice point is a candidate
    u = random_directions(30, 2, rng=2) if with_directions else None
    worst = 0.0
    for _ in range(4):
        data = _lattice(rng, 25)
        base = depth_median_log_probabilities(data, epsilon, grid, depth, directions=u)
        for i in range(0, 25, 6):
            for c in grid:
                other = data.copy()
                other[i] = c                       # the moved record now sits on candidate c
                logp = depth_median_log_probabilities(other, epsilon, grid, depth, directions=u)
                worst = max(worst, float(np.max(np.abs(logp - base))))
    assert worst <= epsilon + 1e-9
    assert worst > 0.05 * epsilon                 # not vacuous


@pytest.mark.slow
@pytest.mark.parametrize("depth, with_directions", DEPTHS)
def test_lattice_add_remove_audit(depth, with_directions):
    """Adding a record on a candidate / removing one (beta from each data set's own size): loss <= epsilon / 2.

    With beta = epsilon / (2 GS_n) the exponent beta * D is epsilon/2 times an
    unnormalised count (halfspace), epsilon/4 times a norm of a sum of unit
    vectors (spatial) or epsilon/2 times a mean of c(n - c)/n (IDD); adding one
    record moves each by at most one unit, so the exact loss is <= epsilon/2 for
    all four depths (and <= epsilon, the claim of the chapters, a fortiori).
    """
    rng = np.random.default_rng(3)
    grid = public_grid(-2, 2, 5, 2)
    u = random_directions(30, 2, rng=4) if with_directions else None
    for epsilon in (0.1, 1.0, 10.0):
        worst = 0.0
        for _ in range(4):
            data = _lattice(rng, int(rng.integers(3, 30)))
            base = depth_median_log_probabilities(data, epsilon, grid, depth, directions=u)
            for c in grid[::2]:
                added = np.r_[data, c[None]]
                logp = depth_median_log_probabilities(added, epsilon, grid, depth, directions=u)
                worst = max(worst, float(np.max(np.abs(logp - base))))
            for i in range(len(data)):
                if len(data) > 2:
                    logp = depth_median_log_probabilities(np.delete(data, i, 0), epsilon, grid, depth, directions=u)
                    worst = max(worst, float(np.max(np.abs(logp - base))))
        assert worst <= epsilon / 2 + 1e-9


@pytest.mark.slow
def test_candidates_on_records_release_and_sampler_agrees_with_the_law():
    data = _lattice(np.random.default_rng(5), 40)
    grid = public_grid(-2, 2, 5, 2)
    logp = depth_median_log_probabilities(data, 2.0, grid, "halfspace")
    draws = [tuple(private_depth_median(data, 2.0, "halfspace", candidates=grid, rng=s)) for s in range(3000)]
    freq = np.array([draws.count(tuple(c)) for c in grid]) / len(draws)
    p = np.exp(logp)
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / len(draws)) + 1e-3)


# --------------------------------------------------------------------------- 2. Byzantine client

def test_a_byzantine_client_sending_a_public_candidate_cannot_abort_the_round():
    rng = np.random.default_rng(6)
    updates = rng.normal(size=(30, 2))
    cand = dp.ball_candidates(200, 2, 4.0, rng=7)
    attacked = updates.copy()
    attacked[-1] = cand[0]                                      # exactly a public candidate
    out = private_median_aggregate(attacked, 1.0, cand, rng=8)  # no error
    assert any(np.array_equal(out, c) for c in cand)
    loss = np.max(np.abs(aggregation_log_probabilities(updates, 1.0, cand)
                         - aggregation_log_probabilities(attacked, 1.0, cand)))
    assert loss <= 1.0 + 1e-9


# --------------------------------------------------------------------------- 3. the error table

_R = np.random.default_rng(10)
_X = _R.normal(size=(200, 2)) * 0.4
_Y = _X @ np.array([1.0, -0.5]) + 0.1 * _R.normal(size=200)
_YC = (_X[:, 0] > 0).astype(int)
_S = _R.uniform(size=300)
_D = _R.normal(size=(60, 2))
_GRID = public_grid(-2, 2, 7, 2)


def _nan_at(arr, where):
    out = np.array(arr, dtype=float, copy=True)
    out.flat[list(where)] = np.nan
    return out


def _set(arr, where, values):
    out = np.array(arr, dtype=float, copy=True)
    out.flat[list(where)] = values
    return out


def _missing_at(arr, where):
    """An object array with pandas' missing value at ``where`` (what ``np.asarray`` of a nullable column gives)."""
    import pandas as pd

    out = np.array(arr, dtype=object, copy=True)
    out.flat[list(where)] = pd.NA
    return out


# entry point -> (function of one private argument, valid data, [(what, invalid A, invalid B), ...])
def _padded(fit):
    """A DPCP fit with a public n above the data size: the scores are padded with 1, so the release is the top
    edge (a ReleaseWarning, which is not what these tests check)."""
    def run(data):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dp.ReleaseWarning)
            return fit(data)
    return run


ERROR_TABLE = {
    "private_quantile": (lambda s: dp.private_quantile(s, 0.1, 1.0, bins=50, rng=0), _S, [
        ("NaN score", _nan_at(_S, [3]), _nan_at(_S, [0, 7, 100, 101, 250])),
        ("score above 1", _set(_S, [5], [1.5]), _set(_S, [1, 2], [3.0, 77.0])),
        ("score below 0", _set(_S, [5], [-0.1]), _set(_S, [9, 10, 11], [-4.0, -5.0, -6.0])),
        ("infinite score", _set(_S, [5], [np.inf]), _set(_S, [0, 1], [-np.inf, np.inf])),
    ]),
    "private_quantile (missing values)": (lambda s: dp.private_quantile(s, 0.1, 1.0, bins=50, rng=0), _S, [
        ("pd.NA score", _missing_at(_S, [3]), _missing_at(_S, [0, 7, 100])),
    ]),
    "private_quantile(n=public)": (lambda s: dp.private_quantile(s, 0.1, 1.0, bins=50, rng=0, n=1000), _S, [
        ("NaN score", _nan_at(_S, [3]), _nan_at(_S, [0, 7])),
        ("score above 1", _set(_S, [5], [1.5]), _set(_S, [1, 2], [3.0, 77.0])),
    ]),
    "private_quantile_probabilities": (lambda s: dp.private_quantile_probabilities(s, 0.1, 1.0, bins=50), _S, [
        ("score above 1", _set(_S, [5], [1.0001]), _set(_S, [6], [1e6])),
    ]),
    "pps_private_quantile": (lambda s: dp.pps_private_quantile(s, 0.1, 1.0, m=50, rng=0), _S, [
        ("NaN score", _nan_at(_S, [3]), _nan_at(_S, [0, 7, 8])),
        ("score above 1", _set(_S, [5], [1.5]), _set(_S, [1, 2], [3.0, 77.0])),
    ]),
    "dpcp_quantile": (lambda s: dp.dpcp_quantile(s, 0.1, 0.3, 0.7, 1e-6, bins=50, rng=0, n=5000), _S, [
        ("NaN score", _nan_at(_S, [3]), _nan_at(_S, [0, 7, 8])),
        ("score above 1", _set(_S, [5], [1.5]), _set(_S, [1, 2], [3.0, 77.0])),
    ]),
    "laplace_histogram_quantile": (lambda s: dp.laplace_histogram_quantile(s, 0.1, 1.0, bins=20, rng=0), _S, [
        ("NaN score", _nan_at(_S, [3]), _nan_at(_S, [0, 7, 8])),
    ]),
    "DPCPRegressor.fit (X)": (
        _padded(lambda x: dp.DPCPRegressor(dp.DPRidgeRegression(x_bound=1.0, y_bound=1.0), epsilon=4.0, training_share=0.25, bound=3.0, bins=50, rng=0,
                                   n=5000).fit(x, _Y)), _X, [
            ("NaN feature", _nan_at(_X, [3]), _nan_at(_X, [0, 9, 40])),
            ("infinite feature", _set(_X, [3], [np.inf]), _set(_X, [5, 6], [-np.inf, np.inf])),
            ("huge feature", _set(_X, [3], [1e200]), _set(_X, [5], [-1e150])),
        ]),
    "DPCPRegressor.fit (y)": (
        _padded(lambda y: dp.DPCPRegressor(dp.DPRidgeRegression(x_bound=1.0, y_bound=1.0), epsilon=4.0, training_share=0.25, bound=3.0, bins=50, rng=0,
                                   n=5000).fit(_X, y)), _Y, [
            ("NaN target", _nan_at(_Y, [3]), _nan_at(_Y, [0, 9, 40])),
        ]),
    "DPLogisticRegression.fit (y)": (lambda y: dp.DPLogisticRegression(classes=[0, 1], rng=0, x_bound=1.0).fit(_X, y), _YC, [
        ("label outside the label set", np.where(np.arange(200) == 3, 2, _YC), np.where(np.arange(200) < 9, 99, _YC)),
    ]),
    "DPSGDClassifier.fit (y)": (
        lambda y: dp.DPSGDClassifier(steps=3, classes=[0, 1], expected_batch_size=2.0, rng=0, x_bound=1.0).fit(_X, y), _YC, [
            ("label outside the label set", np.where(np.arange(200) == 3, 2, _YC),
             np.where(np.arange(200) < 9, 99, _YC)),
        ]),
    "DPRidgeRegression.fit (y)": (lambda y: dp.DPRidgeRegression(rng=0, x_bound=1.0, y_bound=1.0).fit(_X, y), _Y, [
        ("NaN target", _nan_at(_Y, [3]), _nan_at(_Y, [0, 9, 40])),
    ]),
    "private_sufficient_statistics (X)": (lambda x: dp.private_sufficient_statistics(x, _Y, rng=0, x_bound=1.0, y_bound=1.0), _X, [
        ("NaN feature", _nan_at(_X, [3]), _nan_at(_X, [0, 9, 40])),
    ]),
    "laplace_mechanism (value)": (lambda v: dp.laplace_mechanism(v, 1.0, 1.0, rng=0), np.arange(4.0), [
        ("NaN answer", _nan_at(np.arange(4.0), [1]), _nan_at(np.arange(4.0), [0, 2, 3])),
        ("huge answer", _set(np.arange(4.0), [1], [1e200]), _set(np.arange(4.0), [2], [-1e120])),
    ]),
    "gaussian_mechanism (value)": (lambda v: dp.gaussian_mechanism(v, 1.0, 1.0, 1e-5, rng=0), np.arange(4.0), [
        ("NaN answer", _nan_at(np.arange(4.0), [1]), _nan_at(np.arange(4.0), [0, 2, 3])),
    ]),
    "private_depth_median (data)": (lambda d: dp.private_depth_median(d, 1.0, candidates=_GRID, rng=0), _D, [
        ("NaN row", _nan_at(_D, [3]), _nan_at(_D, [0, 9, 40])),
        ("infinite row", _set(_D, [3], [np.inf]), _set(_D, [0, 9], [-np.inf, np.inf])),
    ]),
    "private_depth_median langevin (data)": (
        lambda d: dp.private_depth_median(d, 1.0, "smoothed_idd", "langevin", dp.GaussianPrior(0.0, 5.0),
                                         n_directions=10, n_steps=20, rng=0),
        _D, [("NaN row", _nan_at(_D, [3]), _nan_at(_D, [0, 9, 40]))]),
    "private_median_aggregate (updates)": (lambda u: dp.private_median_aggregate(u, 1.0, _GRID, rng=0), _D, [
        ("NaN update", _nan_at(_D, [3]), _nan_at(_D, [0, 9, 40])),
    ]),
    "dp_clipped_mean_aggregate (updates)": (lambda u: dp.dp_clipped_mean_aggregate(u, 1.0, 1.0, 1e-5, rng=0), _D, [
        ("NaN update", _nan_at(_D, [3]), _nan_at(_D, [0, 9, 40])),
    ]),
    "coordinatewise_private_median (data)": (
        lambda d: dp.coordinatewise_private_median(d, 1.0, (-5.0, 5.0), bins=50, rng=0), _D, [
            ("NaN value", _nan_at(_D, [3]), _nan_at(_D, [0, 9, 40])),
        ]),
    "coinpress_mean (data)": (lambda d: dp.coinpress_mean(d, 0.5, 10.0, rng=0), _D, [
        ("NaN value", _nan_at(_D, [3]), _nan_at(_D, [0, 9, 40])),
    ]),
}


def _message(fn, data):
    with pytest.raises((ValueError, TypeError)) as info:
        fn(data)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("entry", sorted(ERROR_TABLE))
def test_data_errors_are_the_same_for_every_invalid_data_set(entry):
    fn, valid, cases = ERROR_TABLE[entry]
    fn(valid)                                              # the valid data set releases
    for what, first, second in cases:
        a, b = _message(fn, first), _message(fn, second)
        assert a == b, f"{entry}, {what}: the message depends on the data:\n  {a}\n  {b}"


def test_messages_quote_no_score_range_count_or_label():
    _, msg = _message(ERROR_TABLE["private_quantile"][0], _set(_S, [5], [1.2345]))
    assert "1.2345" not in msg and "1.234" not in msg
    _, msg = _message(ERROR_TABLE["private_quantile"][0], _nan_at(_S, [1, 2, 3]))
    assert "3" not in msg
    _, msg = _message(ERROR_TABLE["DPLogisticRegression.fit (y)"][0], np.where(np.arange(200) == 3, 12345, _YC))
    assert "12345" not in msg


def test_valid_neighbours_never_raise_with_a_public_n():
    """With a public n, neighbouring data sets of every size release (no size-dependent refusal)."""
    for size in (5, 19, 20, 21, 38, 39, 300):
        assert 0 < dp.private_quantile(_S[:size], 0.1, 1.0, bins=50, rng=0, n=1000) <= 1
        assert 0 < dp.dpcp_quantile(_S[:size], 0.1, 0.3, 0.7, 1e-6, bins=50, rng=0, n=5000) <= 1


def test_label_set_is_never_read_from_the_data():
    """Removing the only record of a class changes nothing about what is released (shape, classes, no error)."""
    y = _YC.copy()
    y[0] = 2                                        # the only record of class 2
    a = dp.DPLogisticRegression(classes=[0, 1, 2], rng=0, x_bound=1.0).fit(_X, y)
    b = dp.DPLogisticRegression(classes=[0, 1, 2], rng=0, x_bound=1.0).fit(_X[1:], y[1:])
    assert a.coef_.shape == b.coef_.shape and list(a.classes_) == list(b.classes_) == [0, 1, 2]
    for estimator in (dp.DPLogisticRegression(x_bound=1.0), dp.DPSGDClassifier(steps=3, expected_batch_size=2.0, x_bound=1.0),
                      dp.DPCPClassifier(dp.DPLogisticRegression(x_bound=1.0))):
        msgs = {_message(lambda yy: estimator.fit(_X[:len(yy)], yy), yy) for yy in (y, y[1:])}
        assert len(msgs) == 1                       # the same refusal with or without the rare class


# --------------------------------------------------------------------------- 4. neighbouring pairs

_CALIBRATORS = {
    "pcoqs_quantile": lambda s, **kw: dp.pcoqs_quantile(s, 0.1, 0.5, **kw),
    "laplace_histogram_quantile": lambda s, **kw: dp.laplace_histogram_quantile(s, 0.1, 1.0, bins=20, **kw),
    "laplace_histogram_quantile(paper)": lambda s, **kw: dp.laplace_histogram_quantile(s, 0.1, 1.0, bins=20,
                                                                                        variant="paper", **kw),
    "opendp_quantile": lambda s, **kw: dp.opendp_quantile(s, 0.1, 1.0, bins=20, **kw),
    "opendp_quantile(raw)": lambda s, **kw: dp.opendp_quantile(s, 0.1, 1.0, bins=20, variant="raw", **kw),
}


@pytest.mark.parametrize("name", sorted(_CALIBRATORS))
def test_one_infinite_or_huge_score_releases_like_a_score_beyond_the_range(name):
    """Neighbours that differ in one score: 0.5 against +inf, 1e101, 1e300 and 2.0 (all above the public range),
    -inf against -5. Every data set releases; the calibrators clip to (or never count outside) [lower, upper], so
    the scores beyond the same end give the same release for the same noise."""
    release = _CALIBRATORS[name]
    base = _S[:2000].copy()

    def with_first(value):
        s = base.copy()
        s[0] = value
        return s

    assert 0.0 <= release(with_first(0.5), rng=3) <= 1.0
    above = {release(with_first(v), rng=3) for v in (np.inf, 1e101, 1e300, 2.0)}
    below = {release(with_first(v), rng=3) for v in (-np.inf, -1e101, -5.0)}
    assert len(above) == 1 and len(below) == 1
    assert all(0.0 <= q <= 1.0 for q in above | below)


def test_opendp_law_is_the_same_for_scores_beyond_the_range():
    base = _S[:500].copy()
    laws = []
    for v in (1.0, 7.0, np.inf, 1e200):
        s = base.copy()
        s[0] = v
        laws.append(dp.opendp_quantile_probabilities(s, 0.1, 1.0, bins=20)[1])
    for law in laws[1:]:
        np.testing.assert_array_equal(law, laws[0])


def test_a_nan_score_raises_the_same_for_every_calibrator_and_data_set():
    for name, release in _CALIBRATORS.items():
        a, b = _message(release, _nan_at(_S, [0])), _message(release, _nan_at(_S, [3, 9, 200]))
        assert a == b, name


@pytest.mark.parametrize("rounding", ["nearest", "up"])
@pytest.mark.parametrize("lower, upper", [(0.0, 1.0), (0.003, 0.997), (-1.0, 2.5)])
def test_pcoqs_release_never_leaves_the_public_range(rounding, lower, upper):
    """The first case found, pcoqs_quantile(np.full(10, 1.), .5, 1e6, rounding="up") = 1.01, and its relatives: the
    last step can leave the search interval's midpoint above upper, and rounding can pass either end."""
    assert dp.pcoqs_quantile(np.full(10, 1.0), 0.5, 1e6, rounding="up", rng=0) <= 1.0
    gen = np.random.default_rng(4)
    for seed in range(40):
        scores = gen.choice([lower, upper, (lower + upper) / 2], size=int(gen.integers(1, 30)))
        for rho in (1e-3, 1.0, 1e6):
            q = dp.pcoqs_quantile(scores, float(gen.choice([0.05, 0.5, 0.9])), rho, lower=lower, upper=upper,
                                  rounding=rounding, rng=seed)
            assert lower <= q <= upper


def test_object_dtype_scores_follow_the_shared_rule():
    """Object arrays: real entries are converted like everywhere in the package (same release as the float
    array), any other entry is a TypeError with one fixed message (never an AssertionError from the counting)."""
    scores = _S[:200]
    for fn in (lambda s: dp.private_quantile(s, 0.1, 1.0, bins=50, rng=0),
               lambda s: dp.private_quantile(s, 0.1, 1.0, bins=dp.quantile_edges(50) ** 2, rng=0),
               lambda s: dp.pps_private_quantile(s, 0.2, 5.0, m=20, rng=0)):
        assert fn(scores.astype(object)) == fn(scores)
        with_none = scores.astype(object)
        with_none[5] = None
        with_text = scores.astype(object)
        with_text[50] = "0.5"
        a, b = _message(fn, with_none), _message(fn, with_text)
        assert a == b and a[0] is TypeError


@pytest.mark.parametrize("call", [
    lambda v: dp.private_quantile_privacy_loss(0.1, 1000, 1.0, relation="add/remove", public_n=v),
    lambda v: dp._counts.edge_histogram(np.array([2.0]), dp.quantile_edges(10), validated=v),
    lambda v: dp.opendp_quantile_probabilities(_S, 0.1, 1.0, bins=20, log=v),
    lambda v: dp.private_quantile_probabilities(_S, 0.1, 1.0, bins=20, log=v),
    lambda v: dp.exponential_mechanism_probabilities(np.arange(3.0), 1.0, 1.0, log=v),
])
@pytest.mark.parametrize("value", ["False", "True", 0, 1, None])
def test_flags_are_real_booleans(call, value):
    """A flag read by truthiness turns the string "False" into True: private_quantile_privacy_loss(public_n="False")
    under-reported the loss, edge_histogram(validated="False") skipped the [0, 1] check."""
    with pytest.raises(TypeError, match="True or False"):
        call(value)
