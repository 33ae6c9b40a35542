"""The book's running example: the introduction's hospital data.

6,000 patients with one covariate :math:`x`, a heteroscedastic response
(:func:`dpcp_tutorial.make_heteroscedastic_regression`) and the public feature map :math:`(x/3, \\sin x)`; each patient is sent to the training or the calibration part by a
coin of its own; 20,000 new patients are held out to test on. Chapter 1 builds the split-conformal band on it,
chapter 4 the private split-conformal band and chapter 6 DPCP's, and chapter 6 sets the three side by side.
"""

from __future__ import annotations

import numpy as np

from ..datasets import make_heteroscedastic_regression

__all__ = ["PATIENTS", "NEW_PATIENTS", "BOUNDS", "hospital_data"]

PATIENTS = 6000
"""Patients whose records are released from (public)."""

NEW_PATIENTS = 20_000
"""New patients, to test on."""

BOUNDS = {"x_bound": 1.5, "y_bound": 4.0, "score_bound": 4.0}
"""Public bounds: the feature norm, the response and the residual (the introduction's private band)."""


def hospital_data() -> dict[str, np.ndarray]:
    """The introduction's data: ``features``, ``y``, ``x`` (the raw covariate) and the index arrays ``train``,
    ``cal`` (a coin per patient, probability 1/2 each) and ``test`` (the new patients)."""
    X, y = make_heteroscedastic_regression(PATIENTS + NEW_PATIENTS, rng=0)
    features = np.column_stack([X[:, 0] / 3, np.sin(X[:, 0])])
    coin = np.random.default_rng(3).uniform(size=PATIENTS) < 0.5
    return {"features": features, "y": y, "x": X[:, 0], "train": np.flatnonzero(coin),
            "cal": np.flatnonzero(~coin), "test": np.arange(PATIENTS, PATIENTS + NEW_PATIENTS)}
