"""Monte Carlo coverage of Differential CP with and without the level shift (chapter 5).

The trainer is the DP regressogram (:class:`dpcp_tutorial.DPRegressogram`) on the
heteroscedastic data of chapter 1; with many bins it overfits, so in-sample
residuals understate fresh ones. Each repetition draws :math:`n + 1` points,
fits on the first :math:`n`, and checks whether the last one is covered by the
in-sample quantile at level :math:`\\alpha` (uncorrected) and at
:math:`\\alpha_1 = e^{-\\varepsilon}(\\alpha - \\delta)` (Differential CP).
"""

from __future__ import annotations

import math

import numpy as np
from tqdm import tqdm

from ..datasets import make_heteroscedastic_regression
from ..dpcp import DPRegressogram, differential_cp_coverage_floor, differential_cp_quantile

DESCRIPTION = "Differential CP coverage vs epsilon, corrected and uncorrected (chapter 5)"

ALPHA = 0.1
DELTA = 1e-6
GRID = {"epsilons": [0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0], "n_bins": [10, 50], "n": 200}


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=20000, help="repetitions per (epsilon, bins)")
    parser.add_argument("--seed", type=int, default=20260603)


def coverage_setting(n: int, epsilon: float, n_bins: int, reps: int, rng) -> dict:
    """Coverage (and median width) of uncorrected and corrected in-sample calibration (used live by chapter 5)."""
    rng = np.random.default_rng(rng)
    covered = {"uncorrected": 0, "corrected": 0}
    widths = {"uncorrected": [], "corrected": []}
    for _ in range(reps):
        X, y = make_heteroscedastic_regression(n + 1, rng=rng)
        model = DPRegressogram(epsilon=epsilon, n_bins=n_bins, rng=rng, low=-3.0, high=3.0, y_bound=3.0).fit(X[:n], y[:n])
        scores = np.abs(y[:n] - model.predict(X[:n]))
        test = abs(y[n] - model.predict(X[n:])[0])
        for name, corrected in (("uncorrected", False), ("corrected", True)):
            q = differential_cp_quantile(scores, ALPHA, epsilon, DELTA, corrected=corrected)
            covered[name] += test <= q
            widths[name].append(2 * q)
    out = {"n": n, "epsilon": epsilon, "n_bins": n_bins, "reps": reps,
           "floor": differential_cp_coverage_floor(ALPHA, epsilon, DELTA)}
    for name in covered:
        out[name] = float(covered[name] / reps)
        out[name + "_se"] = math.sqrt(out[name] * (1 - out[name]) / reps)
        out[name + "_median_width"] = float(np.median(widths[name]))
    return out


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    jobs = [(eps, bins) for bins in GRID["n_bins"] for eps in GRID["epsilons"]]
    results = [coverage_setting(GRID["n"], eps, bins, args.reps, rng)
               for eps, bins in tqdm(jobs, desc="dpcp_differential", disable=getattr(args, "quiet", False))]
    return {"grid": GRID, "alpha": ALPHA, "delta": DELTA, "reps": args.reps, "seed": args.seed, "results": results}
