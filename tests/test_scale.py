"""dpcp_tutorial.scale on a 2-worker LocalCluster (processes): releases equal the in-memory ones (chapter 14).

One cluster is started for the whole module (its startup dominates the cost of these tests).
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from dpcp_tutorial import GaussianPrior  # noqa: E402
from dpcp_tutorial import (  # noqa: E402
    dpcp_quantile,
    pps_private_quantile,
    private_depth_median,
    private_quantile,
    public_grid,
    quantile_edges,
    random_directions,
)
from dpcp_tutorial import scale  # noqa: E402
from dpcp_tutorial._counts import edge_histogram  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with scale.local_cluster(n_workers=2, threads_per_worker=1) as c:
        yield c


def lattice_scores(n, seed):
    """Skewed scores with many exact ties on the edges j/1000 and a few exact 0s and 1s."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 5.0, size=n)
    s[: n // 5] = rng.integers(0, 1001, size=n // 5) / 1000
    s[-3:] = [0.0, 1.0, 1.0]
    return rng.permutation(s)


def test_histogram_and_algorithm1_equal_in_memory_for_every_chunking(client):
    s = lattice_scores(60_000, 0)
    edges = quantile_edges(1000)
    expected = edge_histogram(s, edges).counts
    for chunks in (60_000, 7_001, (1, 29_999, 0, 30_000)):     # the partitioning does not matter
        x = da.from_array(s, chunks=chunks)
        assert np.array_equal(scale.score_histogram(x, edges).counts, expected)
    for seed, variant in enumerate(("tight", "original")):
        assert scale.private_quantile(x, 0.1, 1.0, rng=seed, variant=variant) == \
            private_quantile(s, 0.1, 1.0, rng=seed, variant=variant)
    x = da.from_array(s, chunks=9_000)
    grid = np.sort(np.r_[np.random.default_rng(1).uniform(size=30), 1.0])
    assert scale.private_quantile(x, 0.2, 0.5, bins=grid, rng=4, n=70_000) == \
        private_quantile(s, 0.2, 0.5, bins=grid, rng=4, n=70_000)


def test_noise_is_drawn_once_on_the_client(client):
    s = lattice_scores(20_000, 1)
    x = da.from_array(s, chunks=3_000)
    g_scale, g_memory = np.random.default_rng(9), np.random.default_rng(9)
    assert scale.private_quantile(x, 0.1, 1.0, rng=g_scale) == private_quantile(s, 0.1, 1.0, rng=g_memory)
    # the client's generator advanced exactly as in memory: one set of Gumbel draws, nothing on the workers
    assert g_scale.bit_generator.state == g_memory.bit_generator.state


def test_private_split_and_dpcp_equal_in_memory(client):
    s = lattice_scores(40_000, 2)
    x = da.from_array(s, chunks=6_000)
    for kwargs in ({"m": "auto"}, {"m": 300, "n": 50_000, "variant": "reference"}):
        assert scale.pps_private_quantile(x, 0.1, 1.0, rng=5, **kwargs) == \
            pps_private_quantile(s, 0.1, 1.0, rng=5, **kwargs)
    assert scale.dpcp_quantile(x, 0.1, 0.3, 0.7, 1e-6, bins=500, rng=6) == \
        dpcp_quantile(s, 0.1, 0.3, 0.7, 1e-6, bins=500, rng=6)


def test_parquet_to_threshold_without_collecting(client, tmp_path):
    from sklearn.linear_model import LinearRegression

    from dpcp_tutorial import normalised_residual_score

    rng = np.random.default_rng(3)
    model = LinearRegression().fit(rng.standard_normal((200, 2)), rng.standard_normal(200))
    frames = []
    for part in range(4):                        # written chunk by chunk, partitioned by row position
        X = rng.standard_normal((2_500, 2))
        y = X @ np.array([1.0, -2.0]) + rng.standard_normal(2_500)
        frame = dd.from_dict({"x0": X[:, 0], "x1": X[:, 1], "y": y}, npartitions=1).compute()
        frame.to_parquet(tmp_path / f"part-{part:03d}.parquet")
        frames.append((X, y))
    ddf = dd.read_parquet(str(tmp_path))
    scores = scale.model_scores(ddf, model, ["x0", "x1"], "y", bound=6.0)
    X = np.concatenate([f[0] for f in frames])
    y = np.concatenate([f[1] for f in frames])
    s = normalised_residual_score(y, model.predict(X), 6.0)
    assert scale.private_quantile(scores, 0.1, 1.0, rng=7) == private_quantile(s, 0.1, 1.0, rng=7)
    assert scale.pps_private_quantile(scores, 0.1, 1.0, m=1000, rng=7) == \
        pps_private_quantile(s, 0.1, 1.0, m=1000, rng=7)


@pytest.mark.parametrize("depth", ["halfspace", "idd", "spatial"])
def test_depth_median_equals_in_memory(client, depth):
    rng = np.random.default_rng(4)
    data = np.round(rng.standard_normal((3_000, 3)), 2)
    x = da.from_array(data, chunks=(450, 3))
    for seed in range(2):
        prior = GaussianPrior(0.0, 5.0 * np.sqrt(3))
        got = scale.private_depth_median(x, 2.0, depth, prior, n_candidates=200, n_directions=60, rng=seed)
        want = private_depth_median(data, 2.0, depth, prior=prior, n_candidates=200, n_directions=60, rng=seed)
        assert np.array_equal(got, want)
    u = random_directions(40, 2, rng=1)
    grid = public_grid(-1.5, 1.5, 15, 2)
    plane = rng.standard_normal((2_000, 2))
    got = scale.private_depth_median(da.from_array(plane, chunks=(300, 2)), 1.0, depth, candidates=grid,
                                     directions=u, rng=8)
    assert np.array_equal(got, private_depth_median(plane, 1.0, depth, candidates=grid, directions=u, rng=8))


def test_refusals_match_and_name_no_value(client):
    bad = np.array([0.3, 0.5, 1.7, 0.2])
    with pytest.raises(ValueError) as info:
        scale.private_quantile(da.from_array(bad, chunks=2), 0.1, 1.0, rng=0)
    assert "1.7" not in str(info.value)
    with pytest.raises(ValueError):
        private_quantile(bad, 0.1, 1.0, rng=0)
    data = np.random.default_rng(5).standard_normal((500, 2))
    cand = np.concatenate([public_grid(-1, 1, 5, 2), data[17:18]])     # candidates may coincide with data rows
    u = random_directions(20, 2, rng=0)
    assert np.array_equal(
        scale.private_depth_median(da.from_array(data, chunks=(100, 2)), 1.0, "idd", candidates=cand,
                                   directions=u, rng=0),
        private_depth_median(data, 1.0, "idd", candidates=cand, directions=u, rng=0))
    with pytest.raises(ValueError, match="directions"):
        scale.private_depth_median(da.from_array(data, chunks=(100, 2)), 1.0, "halfspace", rng=0)
    with pytest.raises(ValueError, match="smoothed_idd"):
        scale.private_depth_median(da.from_array(data, chunks=(100, 2)), 1.0, "smoothed_idd", rng=0)
    with pytest.raises(TypeError):
        scale.private_quantile(bad, 0.1, 1.0)


def test_simulated_scores_are_reproducible_and_chunked_by_size_only():
    x = scale.simulated_scores(2_500, chunk_size=1_000, seed=3)
    assert x.chunks == ((1_000, 1_000, 500),)
    a = x.compute(scheduler="sync")
    assert np.array_equal(a, scale.simulated_scores(2_500, chunk_size=1_000, seed=3).compute(scheduler="sync"))
    assert np.array_equal(a[:1_000], np.random.default_rng([3, 0]).uniform(size=1_000))


def test_killing_a_worker_mid_reduction_gives_the_same_release(client):
    n_blocks, size = 24, 20_000

    def slow_chunk(block_info=None):
        index = block_info[None]["chunk-location"][0]
        time.sleep(0.15)                                  # long enough to kill a worker in the middle
        return np.random.default_rng([11, index]).uniform(size=size)

    x = da.map_blocks(slow_chunk, chunks=((size,) * n_blocks,), dtype=float, meta=np.empty(0))
    s = np.concatenate([np.random.default_rng([11, i]).uniform(size=size) for i in range(n_blocks)])
    expected = private_quantile(s, 0.1, 1.0, rng=12)
    pids = client.run(os.getpid)
    result, state = {}, {}

    def release():
        result["q"] = scale.private_quantile(x, 0.1, 1.0, rng=12, client=client)

    worker = threading.Thread(target=release)
    worker.start()

    def done_tasks(dask_scheduler):
        return sum(ts.state == "memory" for ts in dask_scheduler.tasks.values())

    deadline = time.time() + 30
    while client.run_on_scheduler(done_tasks) < 4 and time.time() < deadline:
        time.sleep(0.02)
    state["alive_at_kill"] = worker.is_alive()
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    worker.join(timeout=120)
    assert state["alive_at_kill"], "the reduction finished before the worker was killed"
    assert result["q"] == expected
    with pytest.raises(ProcessLookupError):          # the worker process is really gone
        os.kill(pids[victim], 0)
