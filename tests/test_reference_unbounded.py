"""book/reference/unbounded_quantile.py gives exactly the package's release for the same seed."""

import importlib.util
import math
import pathlib

import numpy as np
import pytest

from dpcp_tutorial import unbounded_private_quantile

PATH = pathlib.Path(__file__).resolve().parent.parent / "book" / "reference" / "unbounded_quantile.py"
spec = importlib.util.spec_from_file_location("reference_unbounded_quantile", PATH)
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)


def cases():
    rng = np.random.default_rng(2026)
    for i in range(16):
        size = int(rng.integers(30, 3000))
        kind = i % 4
        if kind == 0:
            s = rng.exponential(size=size)
        elif kind == 1:
            s = rng.integers(0, 5, size=size).astype(float)            # ties on candidates and at 0
        elif kind == 2:
            s = rng.lognormal(3.0, 3.0, size=size)
            s[:3] = [np.inf, 1e90, 0.0]
        else:
            s = np.abs(rng.standard_t(1.5, size=size)) * 1e-3
        kwargs = {}
        if i % 3 == 0:
            kwargs["n"] = int(rng.integers(100, 4000))
        if i % 5 == 1:
            kwargs.update(growth=1.05, max_steps=900, unit=0.01, threshold_share=0.5)
        yield s, float(rng.choice([0.05, 0.1, 0.2])), float(rng.choice([0.5, 1.0, 3.0])), kwargs, i


@pytest.mark.parametrize("s, beta, eps, kwargs, seed", list(cases()))
def test_same_release_as_the_package(s, beta, eps, kwargs, seed):
    try:
        expected = unbounded_private_quantile(s, beta, eps, rng=seed, **kwargs)
    except ValueError as err:
        with pytest.raises(ValueError):
            ref.unbounded_private_quantile(s, beta, eps, rng=seed, **kwargs)
        assert "n=" in str(err)
        return
    got = ref.unbounded_private_quantile(s, beta, eps, rng=seed, **kwargs)
    assert got == expected or (math.isinf(got) and math.isinf(expected))


def test_empty_scores_with_public_n_and_domain_errors():
    assert ref.unbounded_private_quantile([], 0.2, 1.0, n=50, rng=0) == unbounded_private_quantile(
        [], 0.2, 1.0, n=50, rng=0)
    for bad in ([0.1, np.nan], [0.5, -1.0]):
        with pytest.raises(ValueError) as err:
            ref.unbounded_private_quantile(bad * 30, 0.2, 1.0, rng=0)
        assert str(err.value) == ref._BAD_SCORES


@pytest.mark.parametrize("param, value, exc", [
    ("beta", 0.0, ValueError), ("beta", "0.1", TypeError), ("epsilon", -1.0, ValueError),
    ("growth", 1.0, ValueError), ("max_steps", 0, ValueError), ("max_steps", 2.0, TypeError),
    ("threshold_share", 1.0, ValueError), ("n", 0, ValueError), ("rng", "x", TypeError), ("unit", 0.0, ValueError),
])
def test_bad_parameters(param, value, exc):
    args = dict(beta=0.1, epsilon=1.0)
    args[param] = value
    beta, eps = args.pop("beta"), args.pop("epsilon")
    with pytest.raises(exc):
        ref.unbounded_private_quantile(np.ones(100), beta, eps, **args)
