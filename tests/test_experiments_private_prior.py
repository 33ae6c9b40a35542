"""The chapter-19 runner (dpcp_tutorial.experiments.private_prior), run tiny, and its committed result."""

import argparse
import json
from importlib import resources

from dpcp_tutorial.experiments import __main__ as cli
from dpcp_tutorial.experiments import private_prior


def test_runner_runs_tiny(tmp_path):
    out = tmp_path / "private_prior.json"
    assert cli.main(["private_prior", "--n", "300", "--d", "2", "--contamination", "0.0", "--runs", "1",
                     "--rand-runs", "1", "--dask-runs", "1", "--candidates", "50", "--out", str(out),
                     "--quiet"]) == 0
    result = json.loads(out.read_text())
    assert len(result["synthetic"]) == len(private_prior.SETTINGS)
    assert set(result["synthetic"][0]["rmse"]) == set(private_prior.PRIORS)
    assert set(result["rand_hie"]["rms_distance"]) == set(private_prior.PRIORS)
    assert all(row["max_abs_difference"] == 0.0 for row in result["dask"])
    assert result["meta"]["experiment"] == "private_prior"


def test_committed_result_has_the_full_grid():
    result = json.loads(resources.files("dpcp_tutorial").joinpath("data/private_prior.json").read_text())
    parser = argparse.ArgumentParser()
    private_prior.add_arguments(parser)
    defaults = parser.parse_args([])
    assert result["settings"]["n"] == defaults.n and result["settings"]["d"] == defaults.d
    assert len(result["synthetic"]) == len(private_prior.SETTINGS) * len(defaults.d) * len(defaults.contamination)
    for row in result["synthetic"]:
        assert row["rmse"]["private"] < min(row["rmse"]["misplaced"], row["rmse"]["docstring"])
    assert result["rand_hie"]["rms_distance"]["private"] < result["rand_hie"]["rms_distance"]["misplaced"]
