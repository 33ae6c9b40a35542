"""PublicScaler: public feature ranges to [-1, 1], learning nothing from the data (chapter 7)."""

import math

import numpy as np
import pytest
from sklearn.base import clone

from dpcp_tutorial import PublicScaler


def test_maps_public_ranges_and_clips():
    scaler = PublicScaler(low=[0.0, 18.0], high=[10.0, 90.0]).fit(np.zeros((1, 2)))
    out = scaler.transform(np.array([[0.0, 18.0], [10.0, 90.0], [5.0, 54.0], [-3.0, 200.0]]))
    assert out.tolist() == [[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0], [-1.0, 1.0]]
    assert scaler.row_norm_bound_ == math.sqrt(2)
    assert np.linalg.norm(out, axis=1).max() <= scaler.row_norm_bound_
    assert np.allclose(scaler.inverse_transform(out[:3]), [[0, 18], [10, 90], [5, 54]])
    assert scaler.get_feature_names_out(["a", "b"]).tolist() == ["a", "b"]


def test_fit_learns_nothing_from_the_values():
    gen = np.random.default_rng(0)
    a = PublicScaler(-2.0, 2.0).fit(gen.normal(size=(100, 3)))
    b = PublicScaler(-2.0, 2.0).fit(1e6 * gen.normal(size=(5, 3)))
    test = gen.normal(size=(20, 3))
    assert np.array_equal(a.transform(test), b.transform(test))
    assert a.n_features_in_ == 3 and a.row_norm_bound_ == math.sqrt(3)
    assert clone(a).get_params() == {"low": -2.0, "high": 2.0}
    assert PublicScaler.learns_from_data is False


@pytest.mark.parametrize("low, high, match", [
    (None, 1.0, "real numbers"), (1.0, 1.0, "below its high"), ([0.0, 1.0, 2.0], 3.0, "3 entries"),
    ([[0.0]], 1.0, "1-D"), (np.nan, 1.0, "finite"),
])
def test_bad_ranges(low, high, match):
    with pytest.raises((ValueError, TypeError), match=match):
        PublicScaler(low, high).fit(np.zeros((2, 2)))


def test_required_and_shape_checks():
    with pytest.raises(TypeError, match="low"):
        PublicScaler()
    scaler = PublicScaler(0.0, 1.0).fit(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="features"):
        scaler.transform(np.zeros((2, 3)))
