"""DPCP fit + calibration against non-private split conformal, in the same run (chapter 6).

For n in {1e3, 1e5, 1e6} points of the chapter-6 synthetic data (5 features):

* ``DPCP``: ``DPCPRegressor(DPRidgeRegression)``.fit on all n points: the DP ridge fit
  (sufficient statistics + noise + eigen-solve), scores on all n points and Algorithm 1
  (M = 1000) -- everything a release costs;
* ``split CP``: ``SplitConformalRegressor(LinearRegression)`` (chapter 1's
  estimator): fit on n/2 points, calibrate on the other n/2 -- the non-private baseline;
* ``DPCP calibration``: the calibration step alone on an already fitted DP ridge (scores on all
  n points + Algorithm 1), i.e. the part implemented in ``dpcp.py``; the rest is the trainer;
* ``private split``: ``PrivateSplitConformalRegressor(DPRidgeRegression)`` with a fixed
  m = 10 000 and the default (tight) exponent (the data-independent choice of m is excluded).

Timings are interleaved (one round of each method in turn, best of the rounds). Run:
``.venv/bin/python -m benchmarks dpcp``. Prints the ratios and writes them to
``dpcp_tutorial/data/bench_dpcp.json``.
"""

from __future__ import annotations

import pathlib
import platform
import time

import numpy as np
from sklearn.linear_model import LinearRegression

from benchmarks._timing import print_table, save_result
from dpcp_tutorial import (
    DPCPRegressor,
    DPRidgeRegression,
    PrivateSplitConformalRegressor,
    SplitConformalRegressor,
    normalized_residual_score,
    private_quantile,
)
from dpcp_tutorial.experiments.dpcp_compare import SYNTHETIC, make_synthetic

SIZES = (10**3, 10**5, 10**6)
ROUNDS = {10**3: 30, 10**5: 7, 10**6: 3}
OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_dpcp.json"


def _methods(X, y):
    half = len(y) // 2
    trainer = DPRidgeRegression(l2=SYNTHETIC["l2"], y_bound=SYNTHETIC["y_bound"], rng=0, x_bound=1.0)

    def dpcp():
        return DPCPRegressor(trainer, epsilon=1.0, training_share=0.3, bound=SYNTHETIC["score_bound"], rng=1).fit(X, y)

    def split():
        return SplitConformalRegressor(LinearRegression(), alpha=0.1).fit(X[:half], y[:half]).calibrate(
            X[half:], y[half:])

    fitted = DPRidgeRegression(epsilon=0.3, l2=SYNTHETIC["l2"], y_bound=SYNTHETIC["y_bound"], rng=4, x_bound=1.0).fit(X, y)

    def dpcp_calibration():
        scores = normalized_residual_score(y, fitted.predict(X), SYNTHETIC["score_bound"])
        return private_quantile(scores, 0.07, 0.7, bins=1000, rng=3)

    def private_split():
        model = PrivateSplitConformalRegressor(trainer, epsilon=1.0, bound=SYNTHETIC["score_bound"], calibrator="pps",
                                               m=10_000, rng=2)
        return model.fit(X[:half], y[:half]).calibrate(X[half:], y[half:])

    return {"DPCP": dpcp, "DPCP calibration": dpcp_calibration, "split CP": split, "private split": private_split}


def main(save: bool = False) -> None:
    rows, records = [], []
    for n in SIZES:
        X, y = make_synthetic(n, np.random.default_rng(n))
        methods = _methods(X, y)
        best = {name: float("inf") for name in methods}
        for _ in range(ROUNDS[n]):
            for name, fn in methods.items():
                start = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - start)
        ratio = best["DPCP"] / best["split CP"]
        rows.append([f"{n:.0e}", f"{best['DPCP'] * 1e3:.2f}", f"{best['DPCP calibration'] * 1e3:.2f}",
                     f"{best['split CP'] * 1e3:.2f}", f"{best['private split'] * 1e3:.2f}", f"{ratio:.2f}"])
        records.append({"n": n, "seconds": best, "dpcp_over_split": ratio})
    print("fit + calibration, best of interleaved rounds (DPCP: DP ridge on all n + Algorithm 1, M=1000)")
    print_table(["n", "DPCP ms", "of which calibration ms", "split CP ms", "private split ms", "DPCP/split"], rows)
    save_result(OUTPUT, {"results": records, "machine": platform.machine(),
                         "python": platform.python_version()}, save)


if __name__ == "__main__":
    import sys

    main(save="--save" in sys.argv[1:])
