"""Runners of chapters 11 and 12 (dpcp_tutorial.experiments.heavy_tails and .depth_scaling), run tiny."""

import argparse
import json
from importlib import resources

import numpy as np
import pytest

from dpcp_tutorial import halfspace_depth, make_cauchy, random_directions
from dpcp_tutorial.experiments import depth_scaling, heavy_tails
from dpcp_tutorial.experiments.heavy_tails import (
    GridHalfspaceDepth,
    equally_spaced_directions,
    public_square_grid,
    simulate,
    summarise,
)


@pytest.mark.parametrize("kind", ["cauchy", "lattice", "d3"])
def test_grid_depth_equals_package_depth(kind):
    rng = np.random.default_rng(0)
    if kind == "cauchy":
        cand, data, u = public_square_grid(2.0, 0.1), make_cauchy(300, 2, rng=rng), equally_spaced_directions(16)
    elif kind == "lattice":   # exact ties between data and candidate projections
        # (directions whose projections of the lattice are exact in floating point; for other directions a tie
        # is decided by the rounding of u'x in both implementations)
        cand = np.round(public_square_grid(2.0, 0.25) * 4) / 4
        data = rng.integers(-4, 5, size=(80, 2)) / 2.0
        u = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]])
    else:
        cand, data, u = rng.normal(size=(500, 3)), rng.normal(size=(60, 3)), random_directions(20, 3, rng=1)
    expected = halfspace_depth(cand, data, method="directions", directions=u)
    assert np.array_equal(GridHalfspaceDepth(cand, u)(data), expected)


def test_public_grid_and_directions():
    grid = public_square_grid(1.0, 0.5)
    assert grid.shape == (16, 2) and not np.any(np.all(grid == 0, axis=1))
    assert np.allclose(np.unique(grid[:, 0]), [-0.75, -0.25, 0.25, 0.75])
    u = equally_spaced_directions(4)
    assert np.allclose(np.linalg.norm(u, axis=1), 1) and np.allclose(u[2], [0, 1])
    with pytest.raises(ValueError):
        public_square_grid(1.0, 2.0)


def test_public_box_grid_does_not_know_the_centre(monkeypatch):
    """The default grid fills the public box [-3, 5]^2, not a box centred on the true centre 0; CoinPress starts
    at the box centre and the coordinate-wise median is bounded by the box."""
    grid = heavy_tails.public_box_grid(-3.0, 5.0, 0.5)
    assert grid.shape == (256, 2) and np.allclose(grid.min(axis=0), -2.75) and np.allclose(grid.max(axis=0), 4.75)
    assert np.allclose(grid.mean(axis=0), 1.0)                      # the box centre is (1, 1), not 0
    np.testing.assert_array_equal(public_square_grid(1.0, 0.5), heavy_tails.public_box_grid(-1.0, 1.0, 0.5))
    with pytest.raises(ValueError, match="empty"):
        heavy_tails.public_box_grid(1.0, -1.0, 0.1)
    seen = {}
    real_cp, real_cw = heavy_tails.coinpress_mean, heavy_tails.coordinatewise_private_median

    def cp(x, rho, radius, center=0.0, **kw):
        seen["center"] = center
        return real_cp(x, rho, radius, center=center, **kw)

    def cw(x, eps, bounds, **kw):
        seen["bounds"] = bounds
        return real_cw(x, eps, bounds, **kw)

    monkeypatch.setattr(heavy_tails, "coinpress_mean", cp)
    monkeypatch.setattr(heavy_tails, "coordinatewise_private_median", cw)
    depth = GridHalfspaceDepth(grid, equally_spaced_directions(8))
    errors = simulate("gaussian", 100, [0.1], 2, grid_step=0.5, depth=depth, rng=0)
    assert seen["center"] == pytest.approx(1.0) and seen["bounds"] == pytest.approx((-3.0, 5.0))
    # at a small budget (beta = 5) the release is nearly uniform on the box: its error is not capped by a
    # box built around the answer
    far = simulate("gaussian", 100, [0.1], 100, grid_step=0.5, depth=depth, rng=1)["private_tukey_median"]
    assert far.max() > 5.0 and errors["private_tukey_median"].shape == (1, 2)


def test_simulate_shapes_and_reproducibility():
    depth = GridHalfspaceDepth(public_square_grid(2.5, 0.1), equally_spaced_directions(16))
    a = simulate("cauchy", 200, [0.5, 50.0], 3, depth=depth, rng=5)
    b = simulate("cauchy", 200, [0.5, 50.0], 3, depth=depth, rng=5)
    assert set(a) == set(heavy_tails.ESTIMATORS)
    assert a["mean"].shape == (3,) and a["private_tukey_median"].shape == (2, 3)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    # with eps * n = 10^4 the private median sits on (or next to) the deepest grid points
    assert np.all(np.abs(a["private_tukey_median"][1] - a["tukey_median"]) < 0.3)
    s = summarise(a["private_tukey_median"])
    assert len(s["median"]) == 2 and s["rmse"][1] > 0
    with pytest.raises(ValueError):
        simulate("laplace", 50, [1.0], 1, depth=depth)


def test_runners_run_tiny(tmp_path):
    ht = heavy_tails.run(argparse.Namespace(n=[60], epsilons=[1.0], reps=2, box=[-2.0, 3.0], grid_step=0.2,
                                            directions=8, seed=1))
    assert set(ht["results"]) == {"cauchy", "gaussian"} and "60" in ht["results"]["cauchy"]
    ds = depth_scaling.run(argparse.Namespace(n=[50], d=[2], kinds=list(depth_scaling.KINDS), directions=20,
                                              idd_directions=10, candidates=20, repeats=1, min_seconds=0.001,
                                              max_units=50, seed=2))
    assert {r["kind"] for r in ds["rows"]} == set(depth_scaling.KINDS)
    assert all(r["seconds_per_unit"] >= 0 and r["setup_seconds"] >= 0 for r in ds["rows"])
    assert "processor" in ds["machine"]
    json.dumps(ht), json.dumps(ds)      # JSON-able


@pytest.mark.parametrize("name", ["heavy_tails", "depth_scaling"])
def test_committed_results_have_the_full_configuration(name):
    path = resources.files("dpcp_tutorial").joinpath(f"data/{name}.json")
    result = json.loads(path.read_text())
    parser = argparse.ArgumentParser()
    getattr({"heavy_tails": heavy_tails, "depth_scaling": depth_scaling}[name], "add_arguments")(parser)
    defaults = vars(parser.parse_args([]))
    full_commands = (f"python -m dpcp_tutorial.experiments {name}",
                     f"python -m dpcp_tutorial.experiments {name} --out dpcp_tutorial/data/{name}.json")
    runs = result["meta"].get("runs") or [{"command": result["meta"]["command"]}]
    shown = " ".join(t for t in runs[0]["command"].split() if t != "--quiet")    # --quiet only hides the bar
    assert shown in full_commands                               # the full run ...
    for later in runs[1:]:                                      # ... then only merges of some estimators into it
        assert f"--merge dpcp_tutorial/data/{name}.json" in later["command"] and "--only" in later["command"]
    assert result["meta"]["command"] == runs[-1]["command"]
    if name == "heavy_tails":
        assert result["config"]["coinpress_conversion"] == "tight"
    for key in ("n", "reps", "epsilons", "d", "repeats"):
        if key in defaults:
            assert result["config"][key] == defaults[key], key


def _tiny_heavy_tails(**kw):
    args = dict(n=[60], epsilons=[1.0, 10.0], reps=2, box=[-2.0, 3.0], grid_step=0.2, directions=8, seed=1,
                quiet=True)
    args.update(kw)
    return heavy_tails.run(argparse.Namespace(**args))


def test_heavy_tails_merge_replaces_only_the_named_estimator(tmp_path, monkeypatch):
    """--only coinpress --merge: CoinPress's rows are recomputed (here at another conversion), the rest kept."""
    fresh = _tiny_heavy_tails()
    assert fresh["config"]["coinpress_conversion"] == "tight"
    monkeypatch.setattr(heavy_tails, "COINPRESS_CONVERSION", "bun-steinke")
    old = _tiny_heavy_tails()
    old["meta"] = {"command": "old", "seconds": 1.0}
    monkeypatch.setattr(heavy_tails, "COINPRESS_CONVERSION", "tight")
    path = tmp_path / "base.json"
    path.write_text(json.dumps(old))
    merged = _tiny_heavy_tails(merge=path, only=["coinpress"])
    assert merged["results"] == fresh["results"] != old["results"]   # equals a full run with the current code
    for dist, by_n in old["results"].items():
        for name in heavy_tails.ESTIMATORS:
            same = merged["results"][dist]["60"][name] == by_n["60"][name]
            assert same == (name != "coinpress"), (dist, name)
    assert merged["config"]["coinpress_conversion"] == "tight"
    assert [r["estimators"] for r in merged["meta"]["runs"]] == [list(heavy_tails.ESTIMATORS), ["coinpress"]]
    assert merged["meta"]["runs"][0]["command"] == "old"


def test_heavy_tails_merge_refuses_a_stream_that_does_not_reproduce(tmp_path):
    base = _tiny_heavy_tails()
    base["results"]["cauchy"]["60"]["private_tukey_median"]["median"][0] += 1e-12
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    with pytest.raises(ValueError, match="not reproduced exactly"):
        _tiny_heavy_tails(merge=path, only=["coinpress"])
    with pytest.raises(ValueError, match="differ from the configuration"):
        _tiny_heavy_tails(merge=path, only=["coinpress"], reps=3)
    with pytest.raises(SystemExit, match="go together"):
        _tiny_heavy_tails(merge=path)
    with pytest.raises(ValueError, match="choose among"):
        heavy_tails.merge_estimators(base, base, ["median"])
