"""The calibrator grid runner (chapter 16): equal privacy, tiny runs, JSON schema, determinism, merging, coverage,
bad arguments."""

import argparse
import copy
import json
import math
from importlib import resources

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from dpcp_tutorial.experiments import calibrator_grid as grid

ROW_KEYS = {"law", "n", "epsilon", "rho", "method", "reps", "coverage", "coverage_se", "mean_threshold",
            "threshold_sd", "relative_threshold", "oracle_threshold", "frac_trivial", "infeasible",
            "privacy_loss", "public_parameter", "seconds_per_release"}


# --- equal privacy: the tight pure-DP -> zCDP conversion --------------------------------------------------------

ORDERS = 1.0 + np.concatenate([np.geomspace(1e-12, 1.0, 4000), np.linspace(1.0, 50.0, 4000)[1:],
                               np.geomspace(50.0, 1e5, 500)[1:]])


@pytest.mark.parametrize("epsilon", [1e-3, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0])
def test_randomised_response_reaches_its_sup_over_orders_as_the_order_tends_to_one(epsilon):
    """sup over lambda > 1 of D_lambda(RR_eps) / lambda = KL(RR_eps) = eps tanh(eps/2), approached as lambda -> 1."""
    rho = grid.zcdp_of_pure_dp(epsilon)
    ratio = grid.renyi_divergence_rr(epsilon, ORDERS) / ORDERS
    assert ratio.max() <= rho * (1 + 1e-9)
    assert math.isclose(ratio[0], rho, rel_tol=1e-9)              # lambda = 1 + 1e-12
    assert np.all(ratio[ORDERS > 1.001] < rho)                     # strictly below once away from 1
    q = 1 / (1 + math.exp(epsilon))                    # P(the other answer); p = 1 - q
    p = 1 - q
    kl = p * math.log(p / q) + q * math.log(q / p)      # KL(RR) = (p - q) eps
    assert math.isclose(rho, kl, rel_tol=1e-9)
    assert rho <= epsilon ** 2 / 2
    # the divergence itself, against the textbook formula at orders where that formula is accurate
    lam = np.array([1.5, 2.0, 5.0])
    direct = np.logaddexp(lam * math.log(p) + (1 - lam) * math.log(q),
                          lam * math.log(q) + (1 - lam) * math.log(p)) / (lam - 1)
    assert np.allclose(grid.renyi_divergence_rr(epsilon, lam), direct, rtol=1e-10)


def test_the_conversion_holds_for_random_pure_dp_pairs_and_is_looser_by_the_stated_factors():
    """Every eps-DP pair of laws has D_lambda <= rho lambda with rho = eps tanh(eps/2); eps^2/2 over-grants."""
    gen = np.random.default_rng(1616)
    tested = 0
    for _ in range(300):
        epsilon = float(gen.choice([0.1, 0.5, 1.0, 2.0, 5.0]))
        k = int(gen.integers(2, 8))
        p = gen.dirichlet(np.ones(k))
        q = p * np.exp(gen.uniform(-epsilon, epsilon, size=k))   # log-ratios within +-eps before renormalising
        q /= q.sum()
        if np.max(np.abs(np.log(p / q))) > epsilon:               # renormalising can push a ratio out: skip it
            continue
        lam = ORDERS[::50]
        d = logsumexp(lam[:, None] * np.log(p)[None, :] + (1 - lam[:, None]) * np.log(q)[None, :],
                      axis=1) / (lam - 1)
        assert np.all(d <= grid.zcdp_of_pure_dp(epsilon) * lam * (1 + 1e-7) + 1e-12)
        tested += 1
    assert tested > 100
    factors = {e: (e ** 2 / 2) / grid.zcdp_of_pure_dp(e) for e in (1.0, 3.0, 10.0)}
    assert round(factors[1.0], 2) == 1.08 and round(factors[3.0], 2) == 1.66 and round(factors[10.0], 1) == 5.0


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan")])
def test_conversion_refuses_bad_budgets(bad):
    with pytest.raises(ValueError):
        grid.zcdp_of_pure_dp(bad)
    with pytest.raises(ValueError):
        grid.renyi_divergence_rr(bad if bad != 0.0 else -1.0, 2.0)
    with pytest.raises(TypeError):
        grid.zcdp_of_pure_dp("1.0")
    with pytest.raises(ValueError):
        grid.renyi_divergence_rr(1.0, [2.0, 1.0])                 # order 1 is the limit, not an order


# --- the grid ------------------------------------------------------------------------------------------------

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
        assert math.isclose(row["rho"], row["epsilon"] * math.tanh(row["epsilon"] / 2))
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


def _old_base(full):
    """``full`` as if made by a run with the old conversion: zCDP rows spoiled, conversion string changed."""
    base = copy.deepcopy(full)
    base["config"]["zcdp_conversion"] = "rho = epsilon**2 / 2"
    for row in base["rows"]:
        row["rho"] = row["epsilon"] ** 2 / 2
        if row["method"] in grid.ZCDP_METHODS:
            row["coverage"] = -1.0
    base["meta"].update(command="python -m dpcp_tutorial.experiments calibrator_grid --workers 2", seconds=12.5)
    return base


def test_merging_recomputed_methods_equals_a_full_run():
    full = _tiny()
    merged = grid.merge_methods(_old_base(full), grid.ZCDP_METHODS, command="merge", show_progress=False)
    assert _without_time(merged["rows"]) == _without_time(full["rows"])
    assert merged["config"] == full["config"] and merged["config"]["zcdp_conversion"] == grid.ZCDP_CONVERSION
    assert merged["methods"] == full["methods"] and merged["laws"] == full["laws"]
    runs = merged["meta"]["runs"]
    assert [r["command"] for r in runs] == ["python -m dpcp_tutorial.experiments calibrator_grid --workers 2", "merge"]
    assert runs[0]["seconds"] == 12.5 and runs[1]["methods"] == list(grid.ZCDP_METHODS)
    assert merged["meta"]["seconds"] == runs[1]["seconds"] and merged["meta"]["command"] == "merge"
    assert merged["meta"]["complete"]
    # merging again keeps the history and appends
    again = grid.merge_methods(merged, ["alg1_tight"], command="again", show_progress=False)
    assert [r["command"] for r in again["meta"]["runs"]][-1] == "again" and len(again["meta"]["runs"]) == 3
    assert _without_time(again["rows"]) == _without_time(full["rows"])


def test_merging_refuses_what_would_leave_mixed_budgets_or_is_not_a_result():
    full = _tiny()
    with pytest.raises(ValueError, match="zCDP"):
        grid.merge_methods(_old_base(full), ["pcoqs"], show_progress=False)
    with pytest.raises(ValueError):
        grid.merge_methods(full, ["nope"], show_progress=False)
    with pytest.raises(ValueError):
        grid.merge_methods(full, [], show_progress=False)
    partial = copy.deepcopy(full)
    partial["meta"]["complete"] = False
    with pytest.raises(ValueError, match="incomplete"):
        grid.merge_methods(partial, ["pcoqs"], show_progress=False)
    with pytest.raises(ValueError):
        grid.merge_methods({"rows": []}, ["pcoqs"], show_progress=False)


def test_command_line_merge_reads_the_grid_from_the_file(tmp_path):
    full = _tiny(slow_reps=100)
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(_old_base(full)))
    parser = argparse.ArgumentParser()
    grid.add_arguments(parser)
    options = ["--laws", "beta25", "--n", "150", "--epsilons", "1", "3", "--reps", "12", "--seed", "3"]
    args = parser.parse_args(options + ["--methods", *grid.ZCDP_METHODS, "--merge", str(path)])
    args.quiet = True
    merged = grid.run(args)
    assert _without_time(merged["rows"]) == _without_time(full["rows"])
    args = parser.parse_args(["--methods", *grid.ZCDP_METHODS, "--merge", str(path)])   # the full-grid defaults
    args.quiet = True
    with pytest.raises(ValueError, match="differ from the configuration"):
        grid.run(args)


@pytest.mark.slow
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
    for run in result["meta"].get("runs", []):        # every run that produced rows of the file
        assert run["command"].startswith("python -m dpcp_tutorial.experiments calibrator_grid")
        assert run["seconds"] > 0 and set(run["methods"]) <= set(grid.METHODS)
    config = result["config"]
    assert config["zcdp_conversion"] == grid.ZCDP_CONVERSION
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
        assert math.isclose(row["rho"], grid.zcdp_of_pure_dp(row["epsilon"]))
