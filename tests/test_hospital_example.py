"""The running example is the introduction's data, split by a coin per patient."""

import numpy as np

from dpcp_tutorial import make_heteroscedastic_regression
from dpcp_tutorial.experiments.hospital import NEW_PATIENTS, PATIENTS, hospital_data


def test_hospital_data_is_the_introductions():
    data = hospital_data()
    X, y = make_heteroscedastic_regression(26_000, rng=0)
    assert np.array_equal(data["y"], y) and np.array_equal(data["x"], X[:, 0])
    assert np.array_equal(data["features"], np.column_stack([X[:, 0] / 3, np.sin(X[:, 0])]))
    coin = np.random.default_rng(3).uniform(size=6000) < 0.5
    assert np.array_equal(data["train"], np.flatnonzero(coin)) and np.array_equal(data["cal"], np.flatnonzero(~coin))
    parts = np.concatenate([data["train"], data["cal"], data["test"]])
    assert np.array_equal(np.sort(parts), np.arange(PATIENTS + NEW_PATIENTS))


def test_hospital_data_is_the_same_every_call():
    a, b = hospital_data(), hospital_data()
    assert all(np.array_equal(a[k], b[k]) for k in a)
