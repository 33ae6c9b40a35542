"""The RAND HIE loader (statsmodels is pinned in requirements.txt, so this is tested, not skipped)."""

import builtins

import numpy as np
import pytest

from dpcp_tutorial.datasets import RAND_HIE_VISITS_BOUND, load_rand_hie


def test_regression_task_shape_target_and_public_bound():
    X, y, info = load_rand_hie()
    assert X.shape == (20190, 9) and y.shape == (20190,)
    assert X.dtype == float and np.all(np.isfinite(X))
    assert "mdvis" not in info["feature_names"] and len(info["feature_names"]) == 9
    assert np.all(y >= 0) and np.all(y == np.round(y))           # visit counts
    assert info["y_bound"] == RAND_HIE_VISITS_BOUND == 365.0     # from the definition: at most one visit a day
    assert y.max() <= info["y_bound"]


def test_classification_task_is_the_imbalanced_health_label():
    X, y, info = load_rand_hie("classification")
    assert X.shape == (20190, 7) and info["feature_names"][0] == "mdvis"
    assert info["classes"] == [0, 1, 2, 3] and info["class_names"] == ["excellent", "good", "fair", "poor"]
    share = np.bincount(y, minlength=4) / y.size
    assert np.allclose(share, [0.5458, 0.3620, 0.0773, 0.0150], atol=5e-4)
    assert not set(info["feature_names"]) & {"hlthg", "hlthf", "hlthp"}


def test_bad_task_raises():
    with pytest.raises(ValueError, match="task"):
        load_rand_hie("clustering")


def test_missing_statsmodels_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("statsmodels"):
            raise ImportError("No module named 'statsmodels'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"dpcp_tutorial\[data\]"):
        load_rand_hie()
