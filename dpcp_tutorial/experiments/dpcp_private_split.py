"""Monte Carlo coverage and width of private split conformal prediction (chapter 4).

Each repetition draws fresh synthetic data (the linear model of chapter 6):
``n`` training points for a DP ridge with budget :math:`\\varepsilon`, ``n``
disjoint calibration points for the private threshold with the same
:math:`\\varepsilon` (parallel composition), and one test point. Coverage is a
binomial proportion over repetitions. The calibrator is the package default,
chapter 3's tight private quantile at level :math:`\\alpha`
(``calibrator="quantile"``, ``bins=1000``); ``tuning=(m, variant)`` from
:func:`~dpcp_tutorial.experiments.dpcp_compare.pps_tuning` runs Angelopoulos et
al.'s calibrator instead, for reproduction.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from tqdm import tqdm

from ..accounting import ReleaseWarning
from ..private_split import PrivateSplitConformalRegressor
from ..training import DPRidgeRegression
from .dpcp_compare import ALPHA, BINS, DELTA, SYNTHETIC, make_synthetic

DESCRIPTION = "private split CP: Monte Carlo coverage and width across (n, epsilon) (chapter 4)"

GRID = {"ns": [250, 1000, 5000, 20000], "epsilons": [0.5, 1.0, 2.0, 8.0]}


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=2000, help="repetitions per (n, epsilon)")
    parser.add_argument("--seed", type=int, default=20260604)


def coverage_setting(n: int, epsilon: float, reps: int, rng, tuning=None) -> dict:
    """Coverage, mean width and trivial-set rate at calibration size ``n`` (used live by chapter 4).

    Trivial releases (:math:`\\hat q = 1`) are counted in ``"trivial"``; their
    :class:`~dpcp_tutorial.ReleaseWarning` is silenced inside the loop.
    """
    rng = np.random.default_rng(rng)
    calibrator = {"calibrator": "quantile", "bins": BINS} if tuning is None else \
        {"calibrator": "pps", "m": int(tuning[0]), "variant": tuning[1]}
    covered, widths, trivial = 0, [], 0
    for _ in range(reps):
        X, y = make_synthetic(2 * n + 1, rng)
        trainer = DPRidgeRegression(epsilon=epsilon, delta=DELTA, l2=SYNTHETIC["l2"], x_bound=1.0,
                                    y_bound=SYNTHETIC["y_bound"], rng=int(rng.integers(2**63)))
        model = PrivateSplitConformalRegressor(trainer, alpha=ALPHA, epsilon=epsilon, bound=SYNTHETIC["score_bound"],
                                               rng=rng, **calibrator)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseWarning)
            model.fit(X[:n], y[:n]).calibrate(X[n:2 * n], y[n:2 * n])
        lower, upper = model.predict_interval(X[2 * n:])[0]
        covered += lower <= y[2 * n] <= upper
        trivial += model.qhat_ >= 1.0
        widths.append(min(upper, SYNTHETIC["response_range"]) - max(lower, -SYNTHETIC["response_range"]))
    coverage = float(covered / reps)
    return {"n": n, "epsilon": epsilon, **calibrator, "reps": reps,
            "coverage": coverage, "coverage_se": math.sqrt(ALPHA * (1 - ALPHA) / reps),
            "width": float(np.mean(widths)), "width_se": float(np.std(widths, ddof=1) / math.sqrt(reps)),
            "trivial": float(trivial / reps)}


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    jobs = [(n, eps) for n in GRID["ns"] for eps in GRID["epsilons"]]
    results = [coverage_setting(n, eps, args.reps, rng) for n, eps in tqdm(jobs, desc="dpcp_private_split", disable=getattr(args, "quiet", False))]
    return {"grid": GRID, "alpha": ALPHA, "delta": DELTA, "reps": args.reps, "seed": args.seed, "results": results}
