"""The unbounded private quantile on Dask: the same release as in memory for the same seed (chapters 14, 18)."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from dpcp_tutorial import scale, unbounded_private_quantile  # noqa: E402
from dpcp_tutorial._counts import BAD_GRID_SCORES  # noqa: E402


def skewed_scores(n, seed):
    rng = np.random.default_rng(seed)
    s = rng.lognormal(1.0, 2.0, size=n)
    s[: n // 10] = 0.0
    s[-2:] = [np.inf, 1e200]
    return rng.permutation(s)


def test_equal_release_for_every_chunking_and_public_n():
    s = skewed_scores(30_000, 0)
    for chunks in (30_000, 7_001, (1, 14_999, 0, 15_000)):
        x = da.from_array(s, chunks=chunks)
        for seed, kwargs in enumerate(({}, {"n": 20_000}, {"n": 50_000, "threshold_share": 0.5},
                                       {"growth": 1.02, "max_steps": 3_000, "unit": 0.1})):
            g_scale, g_memory = np.random.default_rng(seed), np.random.default_rng(seed)
            assert scale.unbounded_private_quantile(x, 0.1, 1.0, rng=g_scale, **kwargs) == \
                unbounded_private_quantile(s, 0.1, 1.0, rng=g_memory, **kwargs)
            assert g_scale.bit_generator.state == g_memory.bit_generator.state


def test_dask_series_and_bad_scores():
    s = skewed_scores(5_000, 1)
    series = dd.from_pandas(pd.Series(s), npartitions=3)
    assert scale.unbounded_private_quantile(series, 0.2, 2.0, rng=3) == unbounded_private_quantile(s, 0.2, 2.0, rng=3)
    for bad in (np.nan, -1.0):
        t = s.copy()
        t[4_321] = bad
        with pytest.raises(ValueError) as err:
            scale.unbounded_private_quantile(da.from_array(t, chunks=1_000), 0.2, 2.0, rng=3)
        assert str(err.value) == BAD_GRID_SCORES
    empty = da.from_array(np.empty(0), chunks=1)
    assert scale.unbounded_private_quantile(empty, 0.2, 2.0, n=100, rng=0) == np.inf
    with pytest.raises(ValueError, match="empty"):
        scale.unbounded_private_quantile(empty, 0.2, 2.0, rng=0)
