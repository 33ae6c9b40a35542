"""Monte Carlo coverage of Differential CP with and without the level shift (chapter 5).

Three trainers, all symmetric and :math:`\\varepsilon`-DP under add/remove:

* ``"regressogram-10"`` and ``"regressogram-50"``: the DP regressogram
  (:class:`dpcp_tutorial.DPRegressogram`) with 10 and 50 bins on the
  heteroscedastic data of chapter 1; with 50 bins it overfits, so in-sample
  residuals understate fresh ones;
* ``"memoriser"``: :class:`dpcp_tutorial.experiments.dpcp_coverage.MembershipMemoriser`
  on :func:`~dpcp_tutorial.experiments.dpcp_coverage.make_membership_data`, the
  worst case of the stability argument (it attains the floor
  :math:`1 - e^{\\varepsilon}\\alpha`).

Each repetition draws :math:`n + 1` points, fits on the first :math:`n`, and
checks whether the last one is covered by the in-sample quantile at level
:math:`\\alpha` (uncorrected) and at :math:`\\alpha_1 = e^{-\\varepsilon}(\\alpha - \\delta)`
(Differential CP).
"""

from __future__ import annotations

import math

import numpy as np
from tqdm import tqdm

from ..datasets import make_heteroscedastic_regression
from ..dpcp import differential_cp_coverage_floor, differential_cp_quantile
from ..training import DPRegressogram
from .dpcp_coverage import MembershipMemoriser, make_membership_data

DESCRIPTION = "Differential CP coverage vs epsilon, corrected and uncorrected, three trainers (chapter 5)"

ALPHA = 0.1
DELTA = 1e-6
# public bounds of the heteroscedastic data of chapter 1 (feature range and response clipping)
REGRESSOGRAM_BOUNDS = {"low": -3.0, "high": 3.0, "y_bound": 3.0}
GRID = {"epsilons": [0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0], "trainers": ["regressogram-10", "regressogram-50",
                                                                       "memoriser"], "n": 200}


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=20000, help="repetitions per (epsilon, trainer)")
    parser.add_argument("--seed", type=int, default=20260603)


def _trainer_and_data(trainer: str, epsilon: float, rng):
    if trainer == "memoriser":
        return MembershipMemoriser(epsilon=epsilon, rng=rng), make_membership_data
    kind, _, bins = trainer.partition("-")
    if kind != "regressogram" or not bins.isdigit():
        raise ValueError(f"trainer={trainer!r} is not supported; choose 'memoriser' or 'regressogram-<bins>'")
    return DPRegressogram(epsilon=epsilon, bins=int(bins), rng=rng, **REGRESSOGRAM_BOUNDS), \
        (lambda size, generator: make_heteroscedastic_regression(size, rng=generator))


def coverage_setting(n: int, epsilon: float, trainer: str, reps: int, rng) -> dict:
    """Coverage (and median width) of uncorrected and corrected in-sample calibration (used live by chapter 5)."""
    rng = np.random.default_rng(rng)
    covered = {"uncorrected": 0, "corrected": 0}
    widths = {"uncorrected": [], "corrected": []}
    for _ in range(reps):
        model, make = _trainer_and_data(trainer, epsilon, rng)
        X, y = make(n + 1, rng)
        model.fit(X[:n], y[:n])
        scores = np.abs(y[:n] - model.predict(X[:n]))
        test = abs(y[n] - model.predict(X[n:])[0])
        for name, corrected in (("uncorrected", False), ("corrected", True)):
            q = differential_cp_quantile(scores, ALPHA, epsilon, DELTA, corrected=corrected)
            covered[name] += test <= q
            widths[name].append(2 * q)
    out = {"n": n, "epsilon": epsilon, "trainer": trainer, "reps": reps,
           "floor": differential_cp_coverage_floor(ALPHA, epsilon, DELTA)}
    for name in covered:
        out[name] = float(covered[name] / reps)
        out[name + "_se"] = math.sqrt(out[name] * (1 - out[name]) / reps)
        out[name + "_median_width"] = float(np.median(widths[name]))
    return out


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    jobs = [(eps, trainer) for trainer in GRID["trainers"] for eps in GRID["epsilons"]]
    results = [coverage_setting(GRID["n"], eps, trainer, args.reps, rng)
               for eps, trainer in tqdm(jobs, desc="dpcp_differential", disable=getattr(args, "quiet", False))]
    return {"grid": GRID, "alpha": ALPHA, "delta": DELTA, "reps": args.reps, "seed": args.seed, "results": results}
