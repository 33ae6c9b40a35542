"""Tests of the shared validation helpers."""

import numpy as np
import pytest

from dpcp_tutorial._validation import (
    check_1d,
    check_2d,
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
)


def test_random_state_seed_is_reproducible_and_global_state_untouched():
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    a = check_random_state(7).uniform(size=5)
    b = check_random_state(7).uniform(size=5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


def test_random_state_generator_is_shared_not_copied():
    gen = np.random.default_rng(0)
    assert check_random_state(gen) is gen
    assert isinstance(check_random_state(None), np.random.Generator)


@pytest.mark.parametrize("bad", [1.5, "seed", np.random.RandomState(0), True])
def test_random_state_rejects_other_types(bad):
    with pytest.raises(TypeError, match="rng"):
        check_random_state(bad)


def test_random_state_rejects_negative_seed():
    with pytest.raises(ValueError, match="non-negative"):
        check_random_state(-1)


def test_epsilon_delta_and_ints():
    assert check_epsilon(1e-3) == 1e-3 and check_epsilon(1e3) == 1e3
    for bad in [0, -1, float("inf"), float("nan")]:
        with pytest.raises(ValueError, match="epsilon"):
            check_epsilon(bad)
    assert check_delta(0) == 0.0
    for bad in [1, -1e-9, 2]:
        with pytest.raises(ValueError, match="delta"):
            check_delta(bad)
    with pytest.raises(TypeError):
        check_positive_int(2.0, "bins")
    with pytest.raises(ValueError, match=">= 2"):
        check_positive_int(1, "n", minimum=2)


def test_arrays():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        check_1d([0.5, 1.2], unit_interval=True)
    with pytest.raises(ValueError, match="infinite"):
        check_1d([0.5, np.inf])
    assert check_1d([np.inf], allow_inf=True)[0] == np.inf
    with pytest.raises(ValueError, match="reshape"):
        check_2d([1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        check_2d([[1.0, np.nan]])
    with pytest.raises(ValueError, match="at least 2"):
        check_2d([[1.0, 2.0]], min_rows=2)


@pytest.mark.parametrize("n", [5, 5000])        # the one-dot path and the min/max path
def test_array_checks_fast_path_accepts_and_refuses_as_the_entrywise_checks(n):
    from dpcp_tutorial._validation import MAX_MAGNITUDE

    base = np.linspace(-1.0, 1.0, n)
    assert check_1d(base) is not None and check_2d(base.reshape(-1, 1)).shape == (n, 1)
    # valid values whose squares sum past the float range: the cheap test proves nothing, the entry-wise accept
    near = np.full(n, 0.9 * MAX_MAGNITUDE)
    assert np.array_equal(check_1d(near), near)
    assert np.array_equal(check_2d(near.reshape(-1, 1)), near.reshape(-1, 1))
    strided = np.column_stack([near, base])[:, ::-1]        # not contiguous
    assert np.array_equal(check_2d(strided), strided)
    for bad, message in ((np.nan, "NaN"), (np.inf, "infinite"), (-np.inf, "infinite"),
                         (2 * MAX_MAGNITUDE, "larger than"), (-2 * MAX_MAGNITUDE, "larger than")):
        values = base.copy()
        values[n // 2] = bad
        with pytest.raises(ValueError, match=message):
            check_1d(values)
        with pytest.raises(ValueError, match="NaN or infinite" if not np.isfinite(bad) else message):
            check_2d(values.reshape(-1, 1))
    assert check_1d(np.append(base, np.inf), allow_inf=True)[-1] == np.inf
    assert np.array_equal(check_1d(np.append(base, 1e200), max_magnitude=None)[-1:], [1e200])


def test_empty_arrays_pass_the_fast_accept_path():
    """An empty part (no calibration record at all) is a size, not an error: the checks accept it when allowed."""
    from dpcp_tutorial._validation import check_1d, check_2d

    assert check_1d(np.empty(0), "scores", allow_empty=True).size == 0
    assert check_2d(np.empty((0, 3)), "X", min_rows=0).shape == (0, 3)
