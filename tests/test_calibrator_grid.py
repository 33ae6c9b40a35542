"""The calibrator grid runner (chapter 16): tiny runs, JSON schema, determinism, coverage, bad arguments."""

import argparse
import json
import math
from importlib import resources

import numpy as np
import pytest
from scipy import stats

from dpcp_tutorial.experiments import calibrator_grid as grid

ROW_KEYS = {"law", "n", "epsilon", "rho", "method", "reps", "coverage", "coverage_se", "mean_threshold",
            "threshold_sd", "relative_threshold", "oracle_threshold", "frac_trivial", "infeasible",
            "privacy_loss", "public_parameter", "seconds_per_release"}


def _tiny(**kw):
    args = dict(laws=["beta25"], ns=[150], epsilons=[1.0, 3.0], reps=12, seed=3, show_progress=False)
    args.update(kw)
    return grid.run_grid(**args)


def _without_time(rows):
    return [{k: v for k, v in r.items() if k != "seconds_per_release"} for r in rows]


def test_tiny_grid_runs_and_is_json_able():
    out = _tiny()
    json.dumps(out)
    assert set(out) == {"config", "laws", "methods", "rows", "meta"}
    assert out["meta"]["complete"] and out["meta"]["cells"] == 2
    assert len(out["rows"]) == 2 * len(grid.METHODS)
    for row in out["rows"]:
        assert set(row) == ROW_KEYS
        assert 0.0 <= row["coverage"] <= 1.0 and row["coverage_se"] >= 0.0
        assert 0.0 <= row["mean_threshold"] <= 1.0 and row["reps"] == 12
        assert math.isclose(row["rho"], row["epsilon"] ** 2 / 2)
        if row["infeasible"]:
            assert row["frac_trivial"] == 1.0 and row["coverage"] == 1.0


def test_same_seed_same_result_in_any_order_and_with_workers():
    a = _tiny()
    b = _tiny(epsilons=[3.0, 1.0])               # cells in another order
    key = lambda r: (r["epsilon"], r["method"])   # noqa: E731
    assert _without_time(sorted(a["rows"], key=key)) == _without_time(sorted(b["rows"], key=key))
    c = _tiny(workers=2)
    assert _without_time(a["rows"]) == _without_time(c["rows"])
    d = _tiny(seed=4)
    assert _without_time(a["rows"]) != _without_time(d["rows"])
    # one cell run alone equals its rows in the grid
    alone = grid.run_cell(grid.ScoreLaw("beta25"), 150, 3.0, 12, list(grid.METHODS), 3)
    assert _without_time(alone) == _without_time([r for r in a["rows"] if r["epsilon"] == 3.0])


def test_proven_methods_do_not_undercover_on_a_small_grid():
    out = grid.run_grid(laws=["beta25"], ns=[300], epsilons=[1.0, 3.0], reps=400, seed=11,
                        methods=list(grid.PROVED), show_progress=False)
    for row in out["rows"]:
        assert row["coverage"] + 3 * row["coverage_se"] >= 1 - grid.ALPHA, row


def test_score_laws_have_exact_cdfs():
    law = grid.ScoreLaw("beta25")
    assert math.isclose(law.quantile(0.9), stats.beta(2, 5).ppf(0.9))
    assert math.isclose(float(law.cdf(law.quantile(0.9))), 0.9)
    pool_law = grid.ScoreLaw("rand_hie")
    pool = pool_law.pool
    assert pool.size == 20190 - 20190 // 2 and np.all(np.diff(pool) >= 0)
    assert 0.0 <= pool[0] and pool[-1] <= 1.0
    q = pool_law.quantile(0.9)
    assert pool_law.cdf(q) >= 0.9 and pool_law.cdf(np.nextafter(q, 0)) < 0.9
    t = np.array([0.0, q, 1.0])
    assert np.allclose(pool_law.cdf(t), [(pool <= v).mean() for v in t])
    draws = pool_law.sample(50, np.random.default_rng(0))
    assert np.all(np.isin(draws, pool))


def test_corrected_pcoqs_target():
    n, rho = 10_000, 0.5
    level = grid.pcoqs_corrected_alpha(0.1, n, rho)
    target = math.ceil((1 - level) * (n + 1) - 1e-9 * (n + 1))
    assert target > math.ceil(0.9 * (n + 1))                 # the corrected rank is higher
    sigma = math.sqrt(grid.PCOQS_STEPS / (2 * rho))
    assert target - math.ceil(0.9 * (n + 1)) > sigma          # and the correction is of the order of the noise
    assert grid.pcoqs_corrected_alpha(0.1, 100, 0.005) is None   # nothing can be certified: trivial release
    with pytest.raises(ValueError):
        grid.pcoqs_corrected_alpha(0.0, 100, 1.0)
    with pytest.raises(ValueError):
        grid.pcoqs_corrected_alpha(0.1, 100, -1.0)


@pytest.mark.parametrize("kw", [dict(reps=1), dict(laws=["nope"]), dict(ns=[0]), dict(ns=[]),
                                dict(epsilons=[-1.0]), dict(epsilons=[float("inf")]), dict(methods=["x"]),
                                dict(workers=0), dict(slow_reps=1), dict(reps=2.5)])
def test_bad_arguments_raise(kw):
    with pytest.raises(ValueError):
        _tiny(**kw)


def test_committed_results_have_the_full_configuration():
    path = resources.files("dpcp_tutorial").joinpath("data/calibrator_grid.json")
    result = json.loads(path.read_text())
    parser = argparse.ArgumentParser()
    grid.add_arguments(parser)
    defaults = vars(parser.parse_args([]))
    assert result["meta"]["command"].startswith("python -m dpcp_tutorial.experiments calibrator_grid")
    assert "--out dpcp_tutorial/data/calibrator_grid.json" in result["meta"]["command"]
    assert result["meta"]["complete"]
    config = result["config"]
    assert config["n"] == defaults["n"] and config["epsilons"] == defaults["epsilons"]
    assert config["reps"] == defaults["reps"] >= 1000 and config["laws"] == defaults["laws"]
    assert config["methods"] == defaults["methods"]
    cells = {(r["law"], r["n"], r["epsilon"], r["method"]) for r in result["rows"]}
    assert len(cells) == len(result["rows"]) == (len(config["laws"]) * len(config["n"]) * len(config["epsilons"])
                                                 * len(config["methods"]))
    for row in result["rows"]:
        assert set(row) == ROW_KEYS
        slow = row["method"] in config["slow_methods"] and row["n"] >= config["slow_from_n"]
        assert row["reps"] == (config["slow_reps"] if slow else config["reps"])
