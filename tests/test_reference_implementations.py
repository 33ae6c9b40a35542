"""The copy-ready reference implementations (book/reference/*.py).

* Each file imports only NumPy and the standard library (checked by parsing).
* Each gives exactly the package's output for the same seed on many random
  inputs.
* Each public function has a numpydoc docstring whose examples run (doctest).
* Bad public parameters and data outside the declared domain raise a clear
  TypeError/ValueError; domain errors quote no data value.
* Refusals of the private releases depend on public inputs only: neighbouring
  data sets inside the domain either both release or both raise the same
  error.
* The private median's privacy statement is audited exactly (replace-one:
  epsilon; add/remove with n private: epsilon / 2), lattice data included.
"""

import ast
import doctest
import importlib.util
import math
import pathlib
import re
import sys

import numpy as np
import pytest

import dpcp_tutorial as dt
import dpcp_tutorial.quantile as quantile_module

REFERENCE = pathlib.Path(__file__).resolve().parent.parent / "book" / "reference"
NAMES = ["conformal_quantile", "private_quantile", "private_split_conformal", "dpcp", "private_median",
         "unbounded_quantile", "private_localization"]
PRIVATE = {  # file -> the private release it defines
    "unbounded_quantile": "unbounded_private_quantile",
    "private_quantile": "private_quantile",
    "private_split_conformal": "private_split_quantile",
    "dpcp": "dpcp_intervals",
    "private_median": "private_spatial_median",
    "private_localization": "private_localization",
}


def _load(name):
    spec = importlib.util.spec_from_file_location(f"reference_{name}", REFERENCE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODULES = {name: _load(name) for name in NAMES}


def _public_functions(module):
    return [obj for key, obj in vars(module).items()
            if callable(obj) and not key.startswith("_") and getattr(obj, "__module__", None) == module.__name__]


def test_the_reference_files_are_the_ones_tested():
    assert sorted(p.stem for p in REFERENCE.glob("*.py")) == sorted(NAMES)


@pytest.mark.parametrize("path", sorted(REFERENCE.glob("*.py")), ids=lambda p: p.name)
def test_reference_files_import_only_numpy_and_stdlib(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module.split(".")[0]]
        else:
            continue
        for name in names:
            assert name == "numpy" or name in sys.stdlib_module_names, \
                f"{path.name} imports {name}; references must be numpy-only"


# ---------------------------------------------------------------------------
# documentation: full numpydoc docstrings whose examples run
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_doctests_of_the_reference_files_pass(name):
    module = MODULES[name]
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = set()
    for test in doctest.DocTestFinder().find(module):
        if runner.run(test, out=report.append).attempted:
            ran.add(test.name.rsplit(".", 1)[-1])
    assert runner.failures == 0, "".join(report)
    assert {fn.__name__ for fn in _public_functions(module)} <= ran, "a public function has no example"


@pytest.mark.parametrize("name", NAMES)
def test_public_functions_have_full_docstrings(name):
    functions = _public_functions(MODULES[name])
    assert functions
    for fn in functions:
        doc = fn.__doc__ or ""
        for section in ("Parameters", "Returns", "Examples"):
            assert f"\n    {section}\n    {'-' * len(section)}\n" in doc, f"{fn.__name__}: no {section} section"
        assert ">>> " in doc
    if name in PRIVATE:
        doc = getattr(MODULES[name], PRIVATE[name]).__doc__
        text = " ".join(doc.lower().split())
        for words in ("privacy.", "refusals.", "raises", "replace-one neighbours", "add/remove neighbours",
                      "public", "domain"):
            assert words in text, f"{PRIVATE[name]}: the docstring does not state {words!r}"


# ---------------------------------------------------------------------------
# identical to the package for the same seed
# ---------------------------------------------------------------------------

def test_conformal_quantile():
    ref = MODULES["conformal_quantile"].conformal_quantile
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 500))
        alpha = float(rng.choice([0.01, 0.05, 0.1, 0.2, 0.7, 1 / 3, float(rng.uniform(0.001, 0.999))]))
        scores = rng.exponential(size=n)
        assert ref(scores, alpha) == dt.conformal_quantile(scores, alpha)
    assert ref(np.ones(9), 0.7) == 1.0 and ref([0.5], 0.1) == math.inf


def test_private_quantile():
    """The package's default variant (tight), with and without a public n."""
    ref = MODULES["private_quantile"].private_quantile
    rng = np.random.default_rng(1)
    checked = refused = 0
    for seed in range(240):
        n = int(rng.integers(2, 3000)) if seed % 5 else int(rng.integers(2, 60))
        scores = rng.beta(2, 5, size=n)
        if seed % 4 == 0:   # ties and the ends of [0, 1]
            scores = np.round(scores * 20) / 20
            scores[:2] = [0.0, 1.0]
        beta, eps, bins = float(rng.uniform(0.05, 0.3)), float(rng.choice([0.1, 1.0, 10.0])), int(
            rng.choice([1, 2, 10, 1000]))
        kwargs = {"n": max(1, n + int(rng.integers(-3, 4)))} if seed % 3 == 0 else {}
        try:
            expected = dt.private_quantile(scores, beta, eps, bins=bins, rng=seed, **kwargs)
        except ValueError:
            with pytest.raises(ValueError, match="infeasible"):
                ref(scores, beta, eps, bins, rng=seed, **kwargs)
            refused += 1
            continue
        assert ref(scores, beta, eps, bins, rng=seed, **kwargs) == expected
        checked += 1
    assert checked > 120 and refused > 10


def test_private_quantile_level_equals_the_package():
    level = MODULES["private_quantile"]._tight_level
    for n in (1, 5, 30, 100, 1000, 10**6):
        for eps in (0.05, 1.0, 50.0):
            for beta in (0.01, 0.1, 0.5, 0.9):
                for bins in (1, 2, 100, 1000):
                    try:
                        expected = quantile_module.private_quantile_level(beta, n, eps, bins)
                    except ValueError:
                        with pytest.raises(ValueError, match="infeasible"):
                            level(beta, n, eps, bins)
                        continue
                    assert level(beta, n, eps, bins) == expected


def test_private_split_conformal():
    """The package's default variant (tight exponent), with and without a public n."""
    ref = MODULES["private_split_conformal"].private_split_quantile
    rng = np.random.default_rng(2)
    checked = trivial = 0
    for seed in range(200):
        n = int(rng.integers(1, 5000))
        alpha = float(rng.choice([0.05, 0.1, 0.2, 0.5, 0.8]))
        eps, m = float(rng.choice([0.5, 1.0, 5.0, 10.0])), int(rng.choice([2, 50, 1000, 20000]))
        scores = rng.uniform(size=n) ** 2
        if seed % 4 == 0:   # ties, the ends of [0, 1] and scores on the edges
            scores = np.round(scores * (m - 1)) / (m - 1)
            scores[:1] = 1.0
        kwargs = {"n": max(1, n + int(rng.integers(-3, 4)))} if seed % 3 == 0 else {}
        expected = dt.pps_private_quantile(scores, alpha, eps, m=m, rng=seed, **kwargs)
        assert ref(scores, alpha, eps, m, rng=seed, **kwargs) == expected
        trivial += expected == 1.0
        checked += 1
    assert trivial < checked / 2


def test_dpcp_intervals():
    """The package's default (tight private quantile), with and without a public n."""
    ref = MODULES["dpcp"].dpcp_intervals
    rng = np.random.default_rng(3)
    checked = refused = 0
    for seed in range(100):
        n = int(rng.integers(300, 3000)) if seed % 4 else int(rng.integers(5, 300))
        X, y = dt.make_heteroscedastic_regression(n + 50, rng=seed)
        model = dt.DPRidgeRegression(epsilon=0.5, delta=1e-6, x_bound=3.0, y_bound=5.0, rng=seed).fit(X[:n], y[:n])
        bound, eps1, eps2 = 4.0, float(rng.choice([0.1, 0.5])), float(rng.choice([0.5, 2.0]))
        bins = int(rng.choice([1, 10, 1000]))
        kwargs = {"n": max(1, n + int(rng.integers(-3, 4)))} if seed % 3 == 0 else {}
        scores = np.minimum(np.abs(y[:n] - model.predict(X[:n])) / bound, 1.0)
        args = (y[:n], model.predict(X[:n]), model.predict(X[n:]), bound, 0.1, 1e-6, eps1, eps2, bins)
        try:
            qhat = dt.dpcp_quantile(scores, 0.1, eps1, eps2, 1e-6, bins=bins, rng=seed, **kwargs)
        except ValueError:
            with pytest.raises(ValueError, match="infeasible"):
                ref(*args, rng=seed, **kwargs)
            refused += 1
            continue
        expected = dt.bounded_interval(model.predict(X[n:]), qhat, bound)
        np.testing.assert_array_equal(ref(*args, rng=seed, **kwargs), expected)
        checked += 1
    assert checked > 60 and refused > 3


def test_private_spatial_median():
    ref = MODULES["private_median"].private_spatial_median
    for seed in range(30):
        d = 1 + seed % 5
        data = dt.make_contaminated_gaussian(300, d, rng=seed)
        if seed % 2:    # the prior as the package's GaussianPrior(scale, mean)
            centre, scale = np.linspace(90.0, 110.0, d), 3.0
            data = data + centre
        else:
            centre, scale = 0.0, 5.0 * math.sqrt(d)
        prior = dt.GaussianPrior(scale=scale, mean=centre if np.ndim(centre) == 0 else tuple(centre))
        expected = dt.private_depth_median(data, 1.0, depth="spatial", method="candidates", prior=prior,
                                           n_candidates=500, rng=seed)
        np.testing.assert_array_equal(ref(data, 1.0, centre, scale, n_candidates=500, rng=seed), expected)


def test_private_median_needs_its_prior_and_finds_an_off_centre_median():
    ref = MODULES["private_median"].private_spatial_median
    data = np.random.default_rng(4).normal(100.0, 1.0, size=(400, 2))
    with pytest.raises(TypeError):
        ref(data, 1.0)      # prior centre and scale are required
    for seed in range(3):
        assert np.abs(ref(data, 1.0, [100.0, 100.0], 5.0, rng=seed) - 100.0).max() < 1.0


# ---------------------------------------------------------------------------
# bad input: a clear TypeError / ValueError for every parameter
# ---------------------------------------------------------------------------

_SCORES = np.linspace(0.0, 1.0, 400)
_Y = np.linspace(-2.0, 2.0, 400)
_DATA = np.random.default_rng(5).normal(size=(50, 2))
VALID = {
    "conformal_quantile": dict(scores=_SCORES, alpha=0.1),
    "private_quantile": dict(scores=_SCORES, beta=0.1, epsilon=1.0, bins=100, rng=0),
    "private_split_quantile": dict(scores=_SCORES, alpha=0.1, epsilon=5.0, m=50, rng=0),
    "dpcp_intervals": dict(y=_Y, pred_train=np.zeros(400), pred_test=np.zeros(3), bound=4.0, alpha=0.1,
                           delta=1e-6, epsilon1=0.5, epsilon2=1.0, bins=100, rng=0),
    "private_spatial_median": dict(data=_DATA, epsilon=1.0, prior_mean=0.0, prior_scale=3.0, n_candidates=50,
                                   rng=0),
}
FUNCTIONS = {"conformal_quantile": MODULES["conformal_quantile"].conformal_quantile,
             **{fn: getattr(MODULES[file], fn) for file, fn in PRIVATE.items()}}

NOT_REAL = [("1.0", TypeError), (True, TypeError), (None, TypeError), (1 + 0j, TypeError), ([1.0], TypeError),
            (float("nan"), ValueError), (float("inf"), ValueError), (-float("inf"), ValueError)]
LEVEL = NOT_REAL + [(0.0, ValueError), (1.0, ValueError), (-0.1, ValueError), (10.0, ValueError)]
EPSILON = NOT_REAL + [(0.0, ValueError), (-1.0, ValueError), (-1e-300, ValueError)]
BOUND = NOT_REAL + [(0.0, ValueError), (-4.0, ValueError)]
COUNT = [(0, ValueError), (-3, ValueError), (10.0, TypeError), ("10", TypeError), (True, TypeError),
         (None, TypeError)]
RNG = [(-1, ValueError), ("1", TypeError), (1.5, TypeError), (True, TypeError),
       (np.random.RandomState(0), TypeError)]
SCORES = [([], ValueError), ([[0.5, 0.5]], ValueError), (0.5, ValueError), ([0.5, 1.5], ValueError),
          ([0.5, -0.25], ValueError), ([0.5, float("nan")], ValueError), ([0.5, float("inf")], ValueError),
          (["a", "b"], TypeError), ([0.5 + 0j], TypeError), (None, TypeError), ([0.5, None], TypeError)]
DATA = [(np.zeros(4), ValueError), (np.zeros((4, 0)), ValueError), ([[0.0, float("nan")]] * 3, ValueError),
        ([[0.0, float("inf")]] * 3, ValueError), ([[0.0, 1e200]] * 3, ValueError), ([[1 + 0j, 0]] * 3, TypeError),
        ([["a", "b"]] * 3, TypeError)]

BAD = {
    "conformal_quantile": {
        "alpha": LEVEL,
        "scores": [s for s in SCORES if s[0] not in ([0.5, 1.5], [0.5, -0.25])],
    },
    "private_quantile": {"scores": SCORES, "beta": LEVEL, "epsilon": EPSILON, "bins": COUNT, "rng": RNG},
    "private_split_quantile": {"scores": SCORES, "alpha": LEVEL, "epsilon": EPSILON, "rng": RNG,
                               "m": COUNT + [(1, ValueError)]},
    "dpcp_intervals": {
        "y": [(np.zeros(399), ValueError), (np.zeros((400, 1)), ValueError), (np.full(400, np.nan), ValueError),
              (np.r_[np.zeros(399), np.inf], ValueError), (np.array(["a"] * 400), TypeError),
              (np.zeros(400) + 0j, TypeError), ([], ValueError)],
        "pred_train": [(np.zeros(3), ValueError), (np.zeros((400, 1)), ValueError), (np.array(["a"] * 400), TypeError)],
        "pred_test": [(np.zeros((3, 1)), ValueError), (np.array([0.0, np.nan]), ValueError),
                      (np.array(["x"]), TypeError)],
        "bound": BOUND, "alpha": LEVEL, "epsilon1": EPSILON, "epsilon2": EPSILON, "bins": COUNT, "rng": RNG,
        "delta": NOT_REAL + [(-0.1, ValueError), (1.0, ValueError), (0.1, ValueError), (0.5, ValueError)],
    },
    "private_spatial_median": {
        "data": DATA, "epsilon": EPSILON, "prior_scale": BOUND + [(1e200, ValueError), (1e-200, ValueError)],
        "n_candidates": COUNT, "rng": RNG,
        "prior_mean": [([0.0, 0.0, 0.0], ValueError), ([[0.0, 0.0]], ValueError), ([0.0, np.nan], ValueError),
                       (np.inf, ValueError), (1e200, ValueError), ("a", TypeError), ([0.0, 1j], TypeError)],
    },
}
CASES = [(fn, param, value, exc) for fn, params in BAD.items() for param, values in params.items()
         for value, exc in values]


@pytest.mark.parametrize("fn", sorted(VALID))
def test_the_valid_baseline_calls_release(fn):
    FUNCTIONS[fn](**VALID[fn])


@pytest.mark.parametrize("fn, param, value, exc", CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_bad_input_raises_a_clear_error(fn, param, value, exc):
    kwargs = {**VALID[fn], param: value}
    with pytest.raises(exc) as info:
        FUNCTIONS[fn](**kwargs)
    message = str(info.value)
    assert len(message) > 20, f"unhelpful message {message!r}"


DOMAIN = {  # private data outside the declared domain, with values and counts a message could quote
    "private_quantile": ("scores", [np.r_[_SCORES[:-3], 1.2345, 0.5, 0.5], np.r_[_SCORES[:-1], -0.6789],
                                    np.r_[_SCORES[:-7], [np.nan] * 7], np.r_[_SCORES[:-1], np.inf]]),
    "dpcp_intervals": ("y", [np.r_[_Y[:-7], [np.nan] * 7], np.r_[_Y[:-3], [np.inf] * 3]]),
    "private_spatial_median": ("data", [np.r_[_DATA[:-7], np.full((7, 2), np.nan)],
                                        np.r_[_DATA[:-3], np.full((3, 2), 1.2345e200)]]),
}
DOMAIN["private_split_quantile"] = DOMAIN["private_quantile"]
_ALLOWED_NUMBERS = {"0", "1", "0.0", "1.0", "1e150"}


@pytest.mark.parametrize("fn", sorted(DOMAIN))
def test_domain_errors_quote_no_data_value_or_count(fn):
    param, bad_values = DOMAIN[fn]
    for value in bad_values:
        with pytest.raises(ValueError) as info:
            FUNCTIONS[fn](**{**VALID[fn], param: value})
        message = str(info.value)
        numbers = set(re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", message))
        assert numbers <= _ALLOWED_NUMBERS, message
        assert "1.2345" not in message and "6789" not in message


def test_spatial_depth_refuses_bad_arrays():
    depth = MODULES["private_median"].spatial_depth
    good = np.zeros((3, 2))
    for points, data, exc in [(good, np.zeros((0, 2)), ValueError), (np.zeros((3, 3)), good, ValueError),
                              ([[0.0, np.nan]], good, ValueError), (good, [[np.inf, 0.0]], ValueError),
                              (np.zeros(2), good, ValueError), ([["a", "b"]], good, TypeError),
                              (good, [[1j, 0]], TypeError)]:
        with pytest.raises(exc):
            depth(points, data)
    np.testing.assert_allclose(depth(good + 1.0, good), [0.0, 0.0, 0.0], atol=1e-12)


def test_reference_spatial_depth_moves_by_at_most_two_over_n_for_near_duplicate_records():
    """A record one unit in the last place from a candidate against its neighbour on the candidate or far
    away: each unit vector comes from its own record, so the depth moves by at most 2/n (a closed form with
    weights 1/r ~ 1e16 moved it by 11/n here), and it agrees with the package's."""
    depth = MODULES["private_median"].spatial_depth
    rng = np.random.default_rng(0)
    n, worst = 50, 0.0
    grid = dt.public_grid(-2.0, 2.0, 41, 2)
    for _ in range(30):
        data = rng.normal(size=(n, 2))
        for c in grid[rng.choice(len(grid), 3, replace=False)]:
            for new in (np.nextafter(c, np.inf), np.nextafter(c, -np.inf), c, np.array([1e6, -1e6])):
                other = data.copy()
                other[0] = new
                a, b = depth(c[None], data)[0], depth(c[None], other)[0]
                worst = max(worst, abs(a - b) * n)
                assert b == pytest.approx(dt.spatial_depth(c[None], other)[0], abs=1e-14)
    assert 1.9 < worst <= 2.0 + 1e-9
    small = np.arange(1, 100)[:, None] * 1e-20
    assert depth(np.zeros((1, 1)), np.vstack([small, [[1e6]]]))[0] == 0.0


def test_non_private_conformal_quantile_accepts_any_finite_scores():
    ref = MODULES["conformal_quantile"].conformal_quantile
    assert ref([-3.0, 5.0, 7.0, 1e300], 0.5) == 7.0
    assert ref(np.arange(10, dtype=np.int64), 0.5) == 5.0


def test_extreme_valid_inputs_release_without_warnings_or_nan():
    # pytest turns every warning into an error (pyproject.toml)
    f = FUNCTIONS
    assert f["private_quantile"](_SCORES, 0.1, 1e300, bins=1000, rng=0) == pytest.approx(0.9, abs=0.01)
    assert f["private_quantile"](_SCORES, 0.1, 1.7e308, bins=1000, rng=0) == pytest.approx(0.9, abs=0.01)
    assert f["private_split_quantile"](_SCORES, 0.1, 1.7e308, 1000, rng=0) <= 1.0
    assert f["private_split_quantile"](_SCORES, 0.1, 1e-300, 1000, rng=0) == 1.0
    assert f["private_split_quantile"](_SCORES, 1e-300, 1.0, 1000, rng=0) == 1.0
    y = np.r_[np.full(200, 1e308), np.full(200, -1e308)]
    iv = f["dpcp_intervals"](y, -y, np.zeros(2), 1e-300, 0.1, 0.0, 1e-300, 1.7e308, rng=0)
    assert np.all(np.isinf(iv)) and np.all(iv[:, 0] < iv[:, 1])
    with pytest.raises(ValueError, match="infeasible"):
        f["dpcp_intervals"](_Y, np.zeros(400), np.zeros(2), 4.0, 0.1, 0.0, 1000.0, 1.0, rng=0)
    med = f["private_spatial_median"](_DATA * 1e149, 1.7e308, 0.0, 1e99, n_candidates=20, rng=0)
    assert np.all(np.isfinite(med))
    med = f["private_spatial_median"](_DATA, 1e-300, [1e100, -1e100], 1e-100, n_candidates=20, rng=0)
    assert np.all(np.isfinite(med))


# ---------------------------------------------------------------------------
# refusals depend on public inputs only
# ---------------------------------------------------------------------------

def _outcome(fn, *args, **kwargs):
    try:
        return "release", fn(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc).__name__, str(exc)


def _neighbours_1d(rng, n):
    """Score vectors in [0, 1]^n with ties, lattice values and both ends, and their replace-one neighbours."""
    base = rng.choice([rng.uniform(size=n), np.round(rng.uniform(size=n) * 4) / 4, np.zeros(n), np.ones(n)])
    for value in (0.0, 1.0, 0.5, float(rng.uniform())):
        other = base.copy()
        other[int(rng.integers(n))] = value
        yield base, other


@pytest.mark.parametrize("fn", ["private_quantile", "private_split_quantile"])
def test_private_quantile_refusals_do_not_depend_on_the_scores(fn):
    f = FUNCTIONS[fn]
    rng = np.random.default_rng(6)
    raised = released = 0
    for n in (1, 2, 5, 19, 20, 21, 40, 200):
        for eps in (0.1, 1.0, 10.0):
            for level in (0.05, 0.1, 0.5, 0.9):
                for a, b in _neighbours_1d(rng, n):
                    args = (level, eps, 30)
                    kinds = [_outcome(f, s, *args, rng=0)[0] for s in (a, b)]
                    assert kinds[0] == kinds[1], (fn, n, eps, level, kinds)
                    raised += kinds[0] != "release"
                    released += kinds[0] == "release"
    assert released
    if fn == "private_quantile":
        assert raised       # too few scores for the level: a refusal that depends on n only
    else:
        assert not raised   # no refusal window: a small n or epsilon releases the trivial threshold 1


def test_dpcp_refusals_do_not_depend_on_the_data():
    f = FUNCTIONS["dpcp_intervals"]
    rng = np.random.default_rng(7)
    raised = released = 0
    for n in (1, 10, 39, 40, 100, 400):
        for eps1, eps2 in ((0.5, 0.5), (0.5, 2.0), (2.0, 1.0)):
            y = rng.choice([rng.normal(size=n), np.zeros(n), np.full(n, 1e300)])
            pred = rng.normal(size=n)
            for value in (0.0, -1e308, 1e308, 3.0):
                y2 = y.copy()
                y2[int(rng.integers(n))] = value
                kinds = [_outcome(f, yy, pred, np.zeros(2), 4.0, 0.1, 1e-6, eps1, eps2, rng=0) for yy in (y, y2)]
                assert kinds[0][0] == kinds[1][0]
                if kinds[0][0] != "release":
                    assert kinds[0] == kinds[1]     # the same message too
                raised += kinds[0][0] != "release"
                released += kinds[0][0] == "release"
    assert raised and released


@pytest.mark.parametrize("fn", ["private_quantile", "private_split_quantile", "dpcp_intervals"])
def test_a_public_n_removes_every_size_dependent_refusal(fn):
    """With n given, data sets of every size (0 included) are treated alike: add/remove neighbours too."""
    f = FUNCTIONS[fn]
    rng = np.random.default_rng(11)
    kinds_seen = set()
    for n in (1, 3, 20, 60, 400):
        for eps in (0.1, 1.0, 10.0):
            outcomes = set()
            for size in {0, 1, max(n - 1, 0), n, n + 1}:
                if fn == "dpcp_intervals":
                    y = rng.normal(size=size)
                    outcome = _outcome(f, y, np.zeros(size), np.zeros(2), 4.0, 0.1, 1e-6, 0.5, eps, 100, rng=0, n=n)
                else:
                    outcome = _outcome(f, rng.uniform(size=size), 0.1, eps, 100, rng=0, n=n)
                outcomes.add(outcome[0] if outcome[0] == "release" else outcome)
            assert len(outcomes) == 1, (fn, n, eps, outcomes)
            kinds_seen |= outcomes
    assert "release" in kinds_seen


def test_private_median_never_refuses_data_inside_the_domain():
    f = FUNCTIONS["private_spatial_median"]
    rng = np.random.default_rng(8)
    for d in (1, 2, 3):     # the domain is non-empty data sets: the empty one is refused alike for every d
        with pytest.raises(ValueError, match="data is empty"):
            f(np.zeros((0, d)), 1.0, 0.0, 1.0, n_candidates=7, rng=0)
    for n in (1, 2, 3, 10):
        for d in (1, 2, 3):
            data = np.round(rng.normal(size=(n, d)))
            out = f(data, 1.0, 0.0, 1.0, n_candidates=7, rng=0)
            assert out.shape == (d,) and np.all(np.isfinite(out))
            if n:   # a record moved onto the prior centre, a duplicate, a far point
                for row in (np.zeros(d), data[0], np.full(d, 1e149)):
                    other = data.copy()
                    other[-1] = row
                    assert np.all(np.isfinite(f(other, 1.0, 0.0, 1.0, n_candidates=7, rng=0)))


# ---------------------------------------------------------------------------
# the median's privacy statement, audited exactly over fixed candidates
# ---------------------------------------------------------------------------

def _median_log_law(module, data, epsilon, candidates):
    """The exact output law of private_spatial_median given its candidates (the code's own formula)."""
    n = len(data)
    values = module.spatial_depth(candidates, data)
    logits = min(epsilon / (2.0 * (2.0 / n)), 1e300) * (values - values.max())
    return logits - np.logaddexp.reduce(logits)


def test_private_median_samples_its_stated_law():
    module = MODULES["private_median"]
    data = np.random.default_rng(9).normal(size=(12, 2))
    mean, scale, k, eps, draws = np.array([0.5, -0.5]), 1.0, 4, 3.0, 1500
    counts = np.zeros(k)
    for seed in range(draws):
        cand = mean + scale * np.random.default_rng(seed).standard_normal((k, 2))
        out = module.private_spatial_median(data, eps, mean, scale, n_candidates=k, rng=seed)
        counts += np.all(cand == out, axis=1)
        expected = np.exp(_median_log_law(module, data, eps, cand))
        if seed == 0:
            total = expected.copy()
        else:
            total += expected
    assert counts.sum() == draws
    se = np.sqrt(total * (1 - total / draws))
    assert np.all(np.abs(counts - total) < 5 * se + 1)


@pytest.mark.parametrize("lattice", [False, True])
def test_private_median_exact_audit_replace_one_and_add_remove(lattice):
    module = MODULES["private_median"]
    rng = np.random.default_rng(10 + lattice)
    worst_replace = worst_add = 0.0
    for trial in range(150):
        d = 1 + trial % 3
        n = int(rng.integers(1, 8))
        eps = float(rng.choice([0.5, 1.0, 4.0]))
        if lattice:     # integer data, candidates on the same integer grid (rows equal to data rows)
            data = rng.integers(-2, 3, size=(n, d)).astype(float)
            cand = rng.integers(-2, 3, size=(12, d)).astype(float)
            cand[:2] = data[:2] if n >= 2 else data[0]
        else:
            data = rng.normal(size=(n, d))
            cand = rng.normal(size=(12, d))
        new = cand[int(rng.integers(len(cand)))] if lattice else rng.normal(size=d)
        law = _median_log_law(module, data, eps, cand)
        replaced = data.copy()
        replaced[int(rng.integers(n))] = new
        worst_replace = max(worst_replace, np.abs(law - _median_log_law(module, replaced, eps, cand)).max() / eps)
        added = np.vstack([data, new])
        worst_add = max(worst_add, np.abs(law - _median_log_law(module, added, eps, cand)).max() / eps)
        if n >= 2:      # add/remove within the domain of non-empty data sets
            removed = data[1:]
            worst_add = max(worst_add, np.abs(law - _median_log_law(module, removed, eps, cand)).max() / eps)
    assert worst_replace <= 1.0 + 1e-9
    assert worst_add <= 0.5 + 1e-9
    assert worst_replace > 0.3 and worst_add > 0.15     # the audit is not vacuous


@pytest.mark.parametrize("output", [np.nan, np.inf, -np.inf, 1e300])
def test_dpcp_model_outputs_are_never_refused_and_match_the_package(output):
    """A training prediction is derived from private records; one NaN, infinite or huge
    prediction must not turn a release into an error. The copy releases as the package does (NaN read as 0,
    predictions clipped to +-1e100)."""
    ref = MODULES["dpcp"].dpcp_intervals
    rng = np.random.default_rng(9)
    y = rng.normal(size=600)
    pred = np.zeros(600)
    pred[0] = output
    got = ref(y, pred, np.zeros(2), 4.0, 0.1, 1e-6, 0.5, 1.0, bins=100, rng=3)
    scores = dt.normalized_residual_score(y, pred, 4.0)
    qhat = dt.dpcp_quantile(scores, 0.1, 0.5, 1.0, 1e-6, bins=100, rng=3)
    np.testing.assert_array_equal(got, dt.bounded_interval(np.zeros(2), qhat, 4.0))


def test_private_localization_is_bit_identical_to_the_package():
    ref = MODULES["private_localization"].private_localization
    rng = np.random.default_rng(19)
    for seed in range(40):
        n, d = int(rng.integers(2, 2000)), int(rng.integers(1, 6))
        x = rng.normal(rng.normal(0.0, 1e3), 10 ** rng.uniform(-3, 3), size=(n, d))
        if seed % 4 == 0:
            x = np.round(x)                       # ties on a lattice
        if seed % 7 == 0:
            x[0] = 1e100                          # the largest accepted magnitude
        epsilon = float(rng.choice([0.05, 1.0, 7.5]))
        centre, scale, radius = ref(x, epsilon, rng=seed)
        want = dt.private_localization(x, epsilon, rng=seed)
        assert np.array_equal(centre, want.centre) and scale == want.scale and radius == want.radius


def test_private_localization_reference_refuses_only_outside_its_domain():
    ref = MODULES["private_localization"].private_localization
    for data in (np.zeros((2, 1)), np.full((3, 2), -1e100), [[0, 1], [2, 3]], np.array([[5e-324], [0.0]])):
        centre, scale, radius = ref(data, 1.0, rng=0)
        assert np.all(np.isfinite(centre)) and scale > 0 and radius > 0
    for data, error in (([[1.0]], ValueError), ([[np.nan], [0.0]], ValueError), ([[1e101], [0.0]], ValueError),
                        ([["a"], ["b"]], TypeError), ([1.0, 2.0], ValueError)):
        with pytest.raises(error):
            ref(data, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        ref(np.zeros((3, 1)), 0.0)
    with pytest.raises(TypeError, match="rng"):
        ref(np.zeros((3, 1)), 1.0, rng="seed")
