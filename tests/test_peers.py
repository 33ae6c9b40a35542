"""The ``peers`` runner (chapter 14): equal-privacy conversions, the noise-free quantile tree, PipelineDP's law.

Tests that run a peer import it with ``pytest.importorskip``: PipelineDP (``pip install "dpcp_tutorial[peers]"``)
and Tumult Analytics are optional and never dependencies of the package.
"""

import json
from importlib import resources

import numpy as np
import pytest

from dpcp_tutorial import private_quantile_privacy_loss
from dpcp_tutorial.experiments import peers
from dpcp_tutorial.experiments._peer_workers import draw_scores


@pytest.mark.parametrize("n", [1_000, 100_000])
@pytest.mark.parametrize("target", [0.3, 1.0, 3.0])
def test_add_remove_parameter_has_exactly_the_target_loss(n, target):
    e = peers.ours_add_remove_epsilon(0.1, n, target, 1000)
    losses = [private_quantile_privacy_loss(0.1, m, e, 1000, relation="add/remove", public_n=False)
              for m in (n - 1, n)]
    assert max(losses) <= target and max(losses) > target - 1e-9


def test_relation_conversions():
    ar = peers.parameters("add/remove", 1.0, 0.1, 10_000, 1000)
    assert ar["pipeline_dp"] == ar["tumult"] == 1.0 and ar["ours"] > 1.0
    ro = peers.parameters("replace-one", 1.0, 0.1, 10_000, 1000)
    assert ro == {"pipeline_dp": 0.5, "tumult": 0.9, "ours": 1.0}


@pytest.mark.parametrize("law", ["uniform", "halfnormal"])
def test_laws_match_their_samples(law):
    s = draw_scores(law, 200_000, [1, 2])
    grid = np.linspace(0.0, 1.0, 41)
    empirical = (s[:, None] <= grid[None, :]).mean(axis=0)
    assert np.max(np.abs(empirical - peers.law_cdf(law, grid))) < 5e-3
    masses = peers.leaf_masses(law)
    assert masses.size == 16**4 and abs(masses.sum() - 1.0) < 1e-12 and masses.min() >= 0.0


def test_noise_free_tree_of_a_uniform_law_is_the_quantile():
    masses = peers.leaf_masses("uniform")
    for level in (0.1, 0.5, 0.9, 0.99):
        assert abs(peers.noiseless_tree_quantile(masses, level) - level) < 3 / 16**4


def test_constructed_law_defeats_every_level():
    """On the constructed law even the tree's top level (0.995) covers less than 0.9, without noise."""
    masses = peers.leaf_masses("adversarial")
    top = peers.law_cdf("adversarial", peers.noiseless_tree_quantile(masses, 0.995))
    assert top < 0.9
    small = peers._ADV_SMALL
    assert abs(top - 0.995 * (1 - 15 * small) ** 2) < 1e-3       # the two filtered levels, as derived
    s = peers._adversarial_sample(100_000, [3])
    assert abs((s <= 0.5).mean() - peers.law_cdf("adversarial", 0.5)) < 5e-3


def test_halfnormal_noise_free_shift_is_the_filtered_tail():
    out = peers._noise_free_level("halfnormal", 0.1)
    assert out["coverage_at_nominal"] < 0.9 - 0.004        # the tail children below 0.5 % are ignored
    assert 0.004 < out["shift_needed"] < 0.01
    assert abs(peers._noise_free_level("uniform", 0.1)["shift_needed"]) < 1e-4


# --------------------------------------------------------------------------- PipelineDP itself

def test_mirror_equals_the_engine_at_a_huge_epsilon():
    pytest.importorskip("pipeline_dp")
    for law in ("uniform", "halfnormal"):
        s = draw_scores(law, 30_000, [4, 5])
        tree = peers.pipeline_dp_tree(s)
        levels = [0.05, 0.5, 0.9, 0.95, 0.999]
        engine = peers.pipeline_dp_releases(tree, 1e9, levels)
        mirror = [peers.noiseless_tree_quantile(peers.leaf_counts(s), p) for p in levels]
        assert np.max(np.abs(np.array(engine) - mirror)) < 1e-9


def test_pipeline_equals_the_direct_tree_in_law():
    pytest.importorskip("pipeline_dp")
    from scipy import stats

    from dpcp_tutorial.experiments._peer_workers import pipeline_dp_local

    s = draw_scores("uniform", 1_500, [6])
    tree = peers.pipeline_dp_tree(s)
    direct = [peers.pipeline_dp_releases(tree, 0.5, [0.9])[0] for _ in range(80)]
    pipeline = [pipeline_dp_local(s, 0.5, 90.0) for _ in range(80)]
    assert np.std(direct) > 0 and np.std(pipeline) > 0          # the noise is real
    assert stats.ks_2samp(direct, pipeline).pvalue > 1e-3


def test_tumult_measurement_is_epsilon_dp_under_add_one_row():
    pytest.importorskip("tmlt.analytics")
    from dpcp_tutorial.experiments._peer_workers import _tumult_measurement

    m = _tumult_measurement(1.0, 0.9)
    assert m.privacy_function(1).to_float(round_up=True) == 1.0


# --------------------------------------------------------------------------- the committed result

def test_committed_result_is_complete_and_consistent():
    path = resources.files("dpcp_tutorial").joinpath("data/peers.json")
    if not path.is_file():
        pytest.skip("no committed peers.json")
    r = json.loads(path.read_text())
    assert r["meta"]["command"].startswith("python -m dpcp_tutorial.experiments peers")
    assert "/" not in (r["meta"].get("beam_interpreter") or "") + (r["meta"].get("tumult_interpreter") or "")
    rows = r["coverage"]["rows"]
    assert {row["relation"] for row in rows} == {"add/remove", "replace-one"}
    for row in rows:
        for res in row["ours"].values():       # the tight quantile keeps its guarantee (3 SE of slack)
            assert res["coverage"] >= 0.9 - 3 * res["coverage_se"]
    assert all(t["dask_equal_releases"] for t in r["timing"]["rows"])
    assert r["adversarial"]["engine_coverage"]["0.995"] < 0.9
