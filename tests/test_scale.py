"""dpcp_tutorial.scale on a 2-worker LocalCluster (processes): releases equal the in-memory ones (chapter 14).

One cluster is started for the whole module (its startup dominates the cost of these tests).
"""

import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from dpcp_tutorial import GaussianPrior  # noqa: E402
from dpcp_tutorial import (  # noqa: E402
    GaussianPrior,
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

    from dpcp_tutorial import normalized_residual_score

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
    s = normalized_residual_score(y, model.predict(X), 6.0)
    assert scale.private_quantile(scores, 0.1, 1.0, rng=7) == private_quantile(s, 0.1, 1.0, rng=7)
    assert scale.pps_private_quantile(scores, 0.1, 1.0, m=1000, rng=7) == \
        pps_private_quantile(s, 0.1, 1.0, m=1000, rng=7)


@pytest.mark.parametrize("depth", ["halfspace", "idd", "spatial"])
def test_depth_median_equals_in_memory(client, depth):
    rng = np.random.default_rng(4)
    data = np.round(rng.standard_normal((3_000, 3)), 2)
    x = da.from_array(data, chunks=(450, 3))
    prior = GaussianPrior(scale=2.0, mean=0.1)
    for seed in range(2):
        got = scale.private_depth_median(x, 2.0, depth, prior, n_candidates=200, n_directions=60, rng=seed)
        want = private_depth_median(data, 2.0, depth, prior=prior, n_candidates=200, n_directions=60, rng=seed)
        assert np.array_equal(got, want)
    u = random_directions(40, 2, rng=1)
    grid = public_grid(-1.5, 1.5, 15, 2)
    plane = rng.standard_normal((2_000, 2))
    got = scale.private_depth_median(da.from_array(plane, chunks=(300, 2)), 1.0, depth, candidates=grid,
                                     directions=u, rng=8)
    assert np.array_equal(got, private_depth_median(plane, 1.0, depth, candidates=grid, directions=u, rng=8))


@pytest.mark.parametrize("kwargs", [dict(box=([990.0] * 3, [1010.0] * 3)),
                                    dict(prior=GaussianPrior(1000.0, 2.0), box=([995.0] * 3, [1005.0] * 3)),
                                    dict(prior="private"), dict(prior="private", localize_share=0.4, depth="idd"),
                                    dict(prior="private", box=([990.0] * 3, [1010.0] * 3))])
def test_depth_median_box_and_private_prior_equal_in_memory(client, kwargs):
    data = 1000.0 + np.random.default_rng(6).standard_normal((2_000, 3))
    x = da.from_array(data, chunks=(450, 3))
    kw = dict(n_candidates=200, n_directions=40, **kwargs)
    for seed in range(2):
        got = scale.private_depth_median(x, 1.0, rng=seed, **kw)
        assert np.array_equal(got, private_depth_median(data, 1.0, rng=seed, **kw))
    if "box" in kwargs:
        assert np.all((got >= kwargs["box"][0]) & (got <= kwargs["box"][1]))


def test_depth_median_private_prior_refuses_like_in_memory(client):
    data = np.random.default_rng(5).standard_normal((500, 2))
    for bad in (np.vstack([data, [[np.nan, 0.0]]]), np.vstack([data, [[1e300, 0.0]]])):
        with pytest.raises(ValueError) as got:
            scale.private_depth_median(da.from_array(bad, chunks=(100, 2)), 1.0, prior="private", rng=0)
        with pytest.raises(ValueError) as want:
            private_depth_median(bad, 1.0, prior="private", rng=0)
        assert str(got.value) == str(want.value) and "300" not in str(got.value)
    x = da.from_array(data, chunks=(100, 2))
    with pytest.raises(ValueError, match="outside the public box"):
        scale.private_depth_median(x, 1.0, candidates=[[0.0, 5.0]], box=([-1.0, -1.0], [1.0, 1.0]), rng=0)
    with pytest.raises(ValueError, match="not combined with explicit candidates"):
        scale.private_depth_median(x, 1.0, prior="private", candidates=[[0.0, 0.0]], rng=0)
    with pytest.raises(ValueError, match="only used with prior='private'"):
        scale.private_depth_median(x, 1.0, box=([-1.0, -1.0], [1.0, 1.0]), localize_share=0.3, rng=0)
    with pytest.raises(TypeError, match="prior='private'"):
        scale.private_depth_median(x, 1.0, rng=0)


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


def test_simulated_scores_auto_chunking_makes_128_chunks_of_bounded_size():
    assert scale.simulated_scores(10**9).chunks[0] == (7_812_500,) * 128
    assert scale.simulated_scores(3 * 10**6).chunks[0] == (2**20, 2**20, 3 * 10**6 - 2**21)   # at least 2^20
    assert scale.simulated_scores(10**10).chunks[0][0] == 2**24                               # at most 2^24
    assert scale.simulated_scores(1_000).chunks[0] == (1_000,)
    with pytest.raises(ValueError, match="chunk_size"):
        scale.simulated_scores(1_000, chunk_size="big")


def test_counting_is_fused_with_the_chunks_and_summed_in_a_shallow_tree():
    """One task per chunk (generation and counting fused), then adds of at most _FAN_IN partial results."""
    edges = quantile_edges(1000)
    x = scale.simulated_scores(100 * 1_000, chunk_size=1_000, seed=2)
    parts = scale._histogram_parts(x, edges)
    graph = dict(scale._tree_sum(parts, 8 * 2004).__dask_graph__())
    adds = [key for key in graph if str(key).startswith("_add")]
    assert len(parts) == 100
    assert len(adds) == 7 + 1                           # 100 -> 7 -> 1 with a fan-in of 16
    assert len(graph) <= 100 + len(adds) + 1            # the fused chunks, the adds and the public edges
    total = np.ravel(scale._tree_sum(parts, 8 * 2004).compute(scheduler="sync"))
    assert np.array_equal(total[:-3], edge_histogram(x.compute(scheduler="sync"), edges).counts)
    assert scale._fan_in(8 * 2004) == scale._FAN_IN
    assert scale._fan_in(2**26) == 2 and scale._fan_in(2**30) == 2     # large results: two at a time


@pytest.mark.slow
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


# --------------------------------------------------------------------------- the Dask path

@pytest.mark.slow
def test_local_cluster_passed_as_client_and_closed_with_it(client):
    s = lattice_scores(8_000, 21)
    x = da.from_array(s, chunks=1_000)
    own = scale.local_cluster(n_workers=1)           # kept, not a with block
    try:
        assert scale.private_quantile(x, 0.1, 1.0, rng=3, client=own) == private_quantile(s, 0.1, 1.0, rng=3)
        assert scale.pps_private_quantile(x, 0.1, 1.0, m=200, rng=3, client=own) == \
            pps_private_quantile(s, 0.1, 1.0, m=200, rng=3)
    finally:
        own.close()
    assert own.status == "closed" and own.cluster.status.name == "closed"   # the cluster went with its client
    with pytest.raises(ValueError, match="closed"):                          # early, with what to do
        scale.private_quantile(x, 0.1, 1.0, rng=3, client=own)
    with pytest.raises(TypeError, match="local_cluster"):
        scale.private_quantile(x, 0.1, 1.0, rng=3, client=object())
    with scale.local_cluster(n_workers=1) as managed:                       # the with form still works
        assert scale.private_quantile(x, 0.1, 1.0, rng=4, client=managed) == private_quantile(s, 0.1, 1.0, rng=4)
    assert scale.private_quantile(x, 0.1, 1.0, rng=5) == private_quantile(s, 0.1, 1.0, rng=5)  # default again


def _frame(rng, rows):
    import pandas as pd

    X = rng.standard_normal((rows, 2))
    city = rng.choice(["a", "b", "c"], size=rows)
    y = X @ np.array([1.0, -2.0]) + (city == "b") * 1.5 + rng.standard_normal(rows)
    return pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "city": city, "y": y})


def test_model_fitted_on_a_dataframe_gets_dataframes_without_warnings(client):
    import warnings

    from sklearn.linear_model import LinearRegression

    from dpcp_tutorial import normalized_residual_score

    rng = np.random.default_rng(22)
    train, cal = _frame(rng, 300), _frame(rng, 4_000)
    model = LinearRegression().fit(train[["x0", "x1"]], train["y"])        # remembers feature names
    ddf = dd.from_pandas(cal, npartitions=5)
    scores = scale.model_scores(ddf, model, ["x0", "x1"], "y", bound=6.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # in-process run: any sklearn warning would raise here
        local = scores.compute(scheduler="sync").to_numpy()
    expected = normalized_residual_score(cal["y"].to_numpy(), model.predict(cal[["x0", "x1"]]), 6.0)
    assert np.array_equal(local, expected)
    assert scale.private_quantile(scores, 0.1, 1.0, rng=2) == private_quantile(expected, 0.1, 1.0, rng=2)
    # a model fitted on a NumPy array gets NumPy arrays (no "X has feature names" warning either)
    plain = LinearRegression().fit(train[["x0", "x1"]].to_numpy(), train["y"].to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scale.model_scores(ddf, plain, ["x0", "x1"], "y", bound=6.0).compute(scheduler="sync")


def test_column_transformer_selecting_columns_by_name(client):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from dpcp_tutorial import normalized_residual_score

    rng = np.random.default_rng(23)
    train, cal = _frame(rng, 300), _frame(rng, 3_000)
    columns = ColumnTransformer([("num", StandardScaler(), ["x1", "x0"]), ("cat", OneHotEncoder(), ["city"])])
    model = make_pipeline(columns, LinearRegression()).fit(train[["city", "x0", "x1"]], train["y"])
    scores = scale.model_scores(dd.from_pandas(cal, npartitions=4), model, ["city", "x0", "x1"], "y", bound=6.0)
    expected = normalized_residual_score(cal["y"].to_numpy(), model.predict(cal[["city", "x0", "x1"]]), 6.0)
    assert np.array_equal(scores.compute().to_numpy(), expected)
    assert scale.private_quantile(scores, 0.1, 1.0, rng=6) == private_quantile(expected, 0.1, 1.0, rng=6)


# --------------------------------------------------------------------------- data-dependent edges

def test_classification_scores_quote_no_label_and_never_fail(client):
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    from dpcp_tutorial import aps_score, lac_score

    rng = np.random.default_rng(24)
    X = rng.standard_normal((600, 2))
    labels = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    model = LogisticRegression().fit(X, labels)
    cal = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "label": labels})
    neighbour = cal.copy()
    neighbour.loc[17, "label"] = 7345                  # one record with a label the model does not know
    for kind, score in (("lac", lac_score), ("aps", aps_score)):
        ours = scale.model_scores(dd.from_pandas(cal, npartitions=3), model, ["x0", "x1"], "label", kind=kind)
        expected = score(model.predict_proba(X), labels)
        assert np.allclose(ours.compute().to_numpy(), expected, rtol=0, atol=1e-15)
        theirs = scale.model_scores(dd.from_pandas(neighbour, npartitions=3), model, ["x0", "x1"], "label",
                                    kind=kind)
        got = theirs.compute().to_numpy()           # both neighbours release; the unknown label scores 1
        assert got[17] == 1.0 and np.array_equal(np.delete(got, 17), np.delete(ours.compute().to_numpy(), 17))
        q = scale.private_quantile(theirs, 0.1, 1.0, rng=1)
        assert 0.0 < q <= 1.0
    with pytest.raises(TypeError, match="predict_proba"):
        scale.model_scores(dd.from_pandas(cal, npartitions=2), object(), ["x0", "x1"], "label", kind="lac")


def test_residual_scores_of_unusable_records_are_one(client):
    import pandas as pd
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(25)
    X = rng.standard_normal((500, 2))
    y = X.sum(axis=1)
    model = LinearRegression().fit(X, y)
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "y": y})
    frame.loc[3, "x1"] = np.nan                         # the model would raise on this row
    frame.loc[4, "y"] = np.nan
    frame.loc[5, "x0"] = np.inf
    s = scale.model_scores(dd.from_pandas(frame, npartitions=2), model, ["x0", "x1"], "y", bound=2.0)
    got = s.compute().to_numpy()
    assert np.array_equal(got[3:6], [1.0, 1.0, 1.0]) and np.all((got >= 0) & (got <= 1))


def test_depth_median_refuses_nonfinite_rows_like_in_memory(client):
    data = np.random.default_rng(26).standard_normal((800, 2))
    u = random_directions(30, 2, rng=0)
    grid = public_grid(-1.5, 1.5, 7, 2)
    for value in (np.nan, np.inf, -np.inf, 1e150):
        bad = data.copy()
        bad[611, 1] = value
        with pytest.raises(ValueError) as at_scale:
            scale.private_depth_median(da.from_array(bad, chunks=(100, 2)), 1.0, "idd", candidates=grid,
                                       directions=u, rng=0)
        with pytest.raises(ValueError) as in_memory:
            private_depth_median(bad, 1.0, "idd", candidates=grid, directions=u, rng=0)
        assert str(at_scale.value) == str(in_memory.value)
        assert "611" not in str(at_scale.value) and "150" not in str(at_scale.value)
    with pytest.raises(TypeError, match="prior"):            # no silent default prior (D2)
        scale.private_depth_median(da.from_array(data, chunks=(100, 2)), 1.0, "spatial", rng=0)
    with pytest.raises(TypeError, match="complex"):
        scale.private_depth_median(da.from_array(data.astype(complex), chunks=(100, 2)), 1.0, "spatial",
                                   candidates=grid, rng=0)


@pytest.mark.parametrize("make", [lambda s: s.astype(complex), lambda s: s.astype(str),
                                  lambda s: s.astype(object)])
def test_scores_are_never_cast(client, make):
    s = lattice_scores(2_000, 27)
    with pytest.raises(TypeError):
        scale.private_quantile(da.from_array(make(s), chunks=500), 0.1, 1.0, rng=0)
    with pytest.raises(TypeError):
        scale.score_histogram(dd.from_array(make(s), chunksize=500), quantile_edges(100))
    if make(s).dtype.kind != "O":
        with pytest.raises(TypeError):                     # in memory too
            private_quantile(make(s), 0.1, 1.0, rng=0)


@pytest.mark.parametrize("edges", [[0.5, np.nan, 1.0], ["0.5", "1.0"], [], [0.2, np.inf], [0.5, 0.2, 1.0]])
def test_bad_edges_are_refused_like_in_memory(client, edges):
    x = da.from_array(lattice_scores(1_000, 28), chunks=250)
    edges = np.array(edges)
    expected = TypeError if edges.dtype.kind == "U" else ValueError
    with pytest.raises(expected):
        scale.score_histogram(x, edges)
    with pytest.raises(expected):
        scale.private_quantile(x, 0.1, 1.0, bins=edges, rng=0)
    with pytest.raises(expected):
        private_quantile(lattice_scores(1_000, 28), 0.1, 1.0, bins=edges, rng=0)


@pytest.mark.parametrize("scores, message", [([0.1, np.nan], "NaN"), ([0.1, np.inf], "infinite"),
                                              ([0.1, 1.5], r"\[0, 1\]")])
def test_score_domain_messages_equal_in_memory(client, scores, message):
    scores = np.array(scores * 50)
    with pytest.raises(ValueError, match=message) as at_scale:
        scale.private_quantile(da.from_array(scores, chunks=7), 0.1, 1.0, rng=0)
    with pytest.raises(ValueError) as in_memory:
        private_quantile(scores, 0.1, 1.0, rng=0)
    assert str(at_scale.value) == str(in_memory.value)


def test_no_scores_at_all_release_with_a_public_n_and_are_refused_without_one():
    """With a public n the number of scores is private: none at all is padded to n, in memory and on Dask,
    like one score (an add/remove neighbour); without n it is refused alike, with the in-memory message."""
    import dpcp_tutorial

    none, one = np.empty(0), np.array([0.3])
    releases = {
        "private_quantile": (lambda s, **kw: dpcp_tutorial.private_quantile(s, 0.1, 1.0, bins=100, rng=0, **kw),
                             lambda s, **kw: scale.private_quantile(s, 0.1, 1.0, bins=100, rng=0, **kw)),
        "dpcp_quantile": (lambda s, **kw: dpcp_tutorial.dpcp_quantile(s, 0.1, 1.0, 1.0, 1e-5, bins=100, rng=0, **kw),
                          lambda s, **kw: scale.dpcp_quantile(s, 0.1, 1.0, 1.0, 1e-5, bins=100, rng=0, **kw)),
        "pps_private_quantile": (lambda s, **kw: dpcp_tutorial.pps_private_quantile(s, 0.1, 1.0, rng=0, **kw),
                                 lambda s, **kw: scale.pps_private_quantile(s, 0.1, 1.0, rng=0, **kw)),
    }
    with dask.config.set(scheduler="synchronous"):
        for name, (in_memory, on_dask) in releases.items():
            for scores in (none, one):
                want = in_memory(scores, n=1000)
                assert on_dask(da.from_array(scores, chunks=10), n=1000) == want, name
            with pytest.raises(ValueError) as memory_error:
                in_memory(none)
            with pytest.raises(ValueError) as dask_error:
                on_dask(da.from_array(none, chunks=10))
            assert str(dask_error.value) == str(memory_error.value) == "scores is empty; at least one value is needed"


def test_simulated_scores_refuses_bad_seeds_and_sizes():
    with pytest.raises(TypeError, match="seed"):
        scale.simulated_scores(seed="10", n=10**30)
    with pytest.raises(ValueError, match="n="):
        scale.simulated_scores(10**30)
    with pytest.raises(ValueError, match="chunk"):
        scale.simulated_scores(10**15, chunk_size=10)
    with pytest.raises(ValueError, match="seed"):
        scale.simulated_scores(10, seed=-1)
    with pytest.raises(ValueError, match="distribution"):
        scale.simulated_scores(10, distribution="normal")


# --------------------------------------------------------------------------- client addresses

def _io_loops():
    return sum(t.name == "IO loop" and t.is_alive() for t in threading.enumerate())


def _default_client():
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        return None


def test_malformed_address_is_refused_before_any_client_and_later_work_runs():
    """client="abc" used to build a distributed.Client that failed in its constructor, stayed half-open (its
    IO loop running) and blocked the process when it was garbage-collected; now the address is checked by
    its syntax first: no Client, no thread, no default client, and the next computation runs."""
    import gc

    s = lattice_scores(2_000, 23)
    x = da.from_array(s, chunks=500)
    loops, default = _io_loops(), _default_client()
    for address in ("abc", "tcp://10.0.0.5", "tcp://host:port"):
        with pytest.raises(ValueError, match="is not a scheduler address"):
            scale.private_quantile(x, 0.1, 1.0, rng=1, client=address)
    gc.collect()
    assert _io_loops() == loops and _default_client() is default
    start = time.time()
    assert scale.private_quantile(x, 0.1, 1.0, rng=1) == private_quantile(s, 0.1, 1.0, rng=1)
    assert time.time() - start < 30


def test_unreachable_address_is_refused_and_its_client_closed():
    import gc

    import dask
    import distributed  # noqa: F401  (its config must be loaded before it is overridden)

    s = lattice_scores(2_000, 24)
    x = da.from_array(s, chunks=500)
    default = _default_client()
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(ValueError, match="could not connect to the scheduler"):
            scale.private_quantile(x, 0.1, 1.0, rng=2, client="tcp://127.0.0.1:1")
    start = time.time()
    gc.collect()                                 # a half-open client would block here (its __del__ closes it)
    assert time.time() - start < 5 and _default_client() is default
    assert scale.private_quantile(x, 0.1, 1.0, rng=2) == private_quantile(s, 0.1, 1.0, rng=2)


def test_progress_is_a_flag_and_works_on_the_local_scheduler(capsys):
    s = lattice_scores(2_000, 25)
    x = da.from_array(s, chunks=500)
    with pytest.raises(TypeError, match="progress must be True or False"):
        scale.private_quantile(x, 0.1, 1.0, rng=3, progress="False")
    if _default_client() is None:                # the local scheduler: dask's own progress bar
        assert scale.private_quantile(x, 0.1, 1.0, rng=3, progress=True) == private_quantile(s, 0.1, 1.0, rng=3)
        assert "Completed" in capsys.readouterr().out


def test_depth_median_warns_on_a_far_tail_release_like_in_memory():
    from dpcp_tutorial import ReleaseWarning

    rng = np.random.default_rng(26)
    data = rng.normal(1000.0, 1.0, size=(200, 2))          # data in their own units, prior for standardised data
    grid = public_grid(995.0, 1005.0, 5, 2)
    prior = GaussianPrior(0.0, 5.0 * np.sqrt(2))
    dirs = random_directions(50, 2, rng=1)
    with pytest.warns(ReleaseWarning, match="far-tail radius"):
        expected = private_depth_median(data, 1.0, candidates=grid, prior=prior, directions=dirs, rng=4)
    with pytest.warns(ReleaseWarning, match="far-tail radius"):
        got = scale.private_depth_median(da.from_array(data, chunks=(50, 2)), 1.0, candidates=grid, prior=prior,
                                         directions=dirs, rng=4)
    np.testing.assert_array_equal(got, expected)


def test_local_cluster_runs_without_distributed_instrumentation_unless_the_user_set_it(client):
    settings = client.run(lambda: (dask.config.get("distributed.worker.profile.enabled"),
                                   os.environ.get("MALLOC_MMAP_THRESHOLD_"), os.environ.get("MALLOC_ARENA_MAX")))
    assert set(settings.values()) == {(False, str(2**28), "1")}
    assert scale._lean_settings()["distributed.admin.tick.interval"] == "1s"
    with dask.config.set({"distributed.admin.tick.interval": "50ms"}):      # the user's own value is kept
        assert "distributed.admin.tick.interval" not in scale._lean_settings()


def _faults_of_a_second_chunk(size: int) -> int:
    """Minor page faults of this thread while it fills and frees a second array of ``size`` floats."""
    import resource

    np.ones(size).sum()                        # the first chunk: the allocator grows to hold it
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    np.ones(size).sum()                        # the next one: the freed memory again, or fresh pages
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator and per-thread fault counts")
def test_a_local_worker_reuses_the_memory_of_a_freed_chunk_of_any_size(client):
    """A worker runs its tasks in a thread: without one malloc arena, a chunk of over 64 MB (the largest block a
    thread's own arena holds) is mapped afresh, page faults and zeroing included, at every task."""
    for size in (2**20, 2**23 - 2**10, 2**24):               # 8 MB, just under 64 MB, 128 MB
        assert client.submit(_faults_of_a_second_chunk, size, pure=False).result() < 8, size


def test_block_histogram_flags_out_of_range_blocks_without_counting():
    edges = quantile_edges(10)
    good = np.array([0.0, 0.25, 0.25, 1.0])
    np.testing.assert_array_equal(scale._block_histogram(good, edges)[:-3], edge_histogram(good, edges).counts)
    for bad, flag in (([0.5, np.nan], 0), ([0.5, np.inf], 1), ([0.5, 1.5], 2), ([-0.1, 0.5], 2)):
        out = scale._block_histogram(np.array(bad), edges)
        assert not out[:-3].any() and out[-3:].tolist() == [int(i == flag) for i in range(3)]
