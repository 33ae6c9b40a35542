"""Where is DPCP narrower than private split CP? A map over (n, epsilon1, epsilon2) (chapter 6).

For every cell, DPCP spends :math:`(\\varepsilon_1, \\delta)` on the DP ridge
trained on all :math:`n` points and :math:`\\varepsilon_2` on the tight private
quantile at level :math:`\\alpha_1`; private split CP gets the same total
:math:`\\varepsilon = \\varepsilon_1 + \\varepsilon_2` for both halves (parallel
composition) and calibrates with the tight private quantile at level
:math:`\\alpha` (package defaults, chapters 4 and 6). Both run on the same
synthetic data in every repetition (paired), and the cell records the mean
widths, their ratio and the standard error of the paired difference. A cell
where either method's level does not exist (public inputs only) is marked
infeasible.
"""

from __future__ import annotations

import math

import numpy as np
from tqdm import tqdm

from .dpcp_compare import (
    ALPHA,
    DELTA,
    SYNTHETIC,
    feasible_dpcp,
    feasible_split,
    make_synthetic,
    regression_repetition,
)

DESCRIPTION = "map of the (n, epsilon1, epsilon2) region where DPCP is narrower than private split CP (chapter 6)"

GRID = {
    "ns": [250, 500, 1000, 2000, 5000, 10000, 20000],
    "epsilon1s": [0.1, 0.2, 0.4, 0.8, 1.6],
    "epsilon2s": [0.25, 0.5, 1.0, 2.0, 4.0],
}


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=40, help="paired repetitions per cell")
    parser.add_argument("--n-test", type=int, default=1000, help="test points per repetition")
    parser.add_argument("--seed", type=int, default=20260602)


def map_cell(n: int, epsilon1: float, epsilon2: float, reps: int, rng, n_test: int = 1000, pps=None,
             dpcp_variant: str = "tight") -> dict:
    """Paired comparison of DPCP and private split CP in one cell (used live by chapter 6).

    Package defaults; ``dpcp_variant="original"`` (the DPCP write-up's quantile)
    and ``pps`` (Angelopoulos et al.'s calibrator for private split CP, from
    :func:`~dpcp_tutorial.experiments.dpcp_compare.pps_tuning`) reproduce the
    sources.
    """
    rng = np.random.default_rng(rng)
    epsilon = epsilon1 + epsilon2
    ok_dpcp = feasible_dpcp(n, epsilon, epsilon1, variant=dpcp_variant)
    ok_split = pps is not None or feasible_split(n - n // 2, epsilon)
    cell = {"n": n, "epsilon1": epsilon1, "epsilon2": epsilon2, "feasible_dpcp": ok_dpcp,
            "feasible_split": ok_split, "feasible": ok_dpcp and ok_split}
    if not cell["feasible"]:
        return cell
    split, dpcp = [], []
    for _ in range(reps):
        X, y = make_synthetic(n, rng)
        X_test, y_test = make_synthetic(n_test, rng)
        out = regression_repetition(X, y, X_test, y_test, epsilon=epsilon, epsilon1=epsilon1, config=SYNTHETIC,
                                    pps=pps, rng=rng, methods=("private_split", "dpcp"), dpcp_variant=dpcp_variant)
        split.append(out["private_split"]["width"])
        dpcp.append(out["dpcp"]["width"])
    split, dpcp = np.array(split), np.array(dpcp)
    gap = split - dpcp
    cell.update({"width_split": float(split.mean()), "width_dpcp": float(dpcp.mean()),
                 "ratio": float(dpcp.mean() / split.mean()), "gap": float(gap.mean()),
                 "gap_se": float(gap.std(ddof=1) / math.sqrt(reps)) if reps > 1 else 0.0})
    return cell


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    cells = [(n, e1, e2) for n in GRID["ns"] for e1 in GRID["epsilon1s"] for e2 in GRID["epsilon2s"]]
    results = [map_cell(n, e1, e2, args.reps, rng, n_test=args.n_test)
               for n, e1, e2 in tqdm(cells, desc="dpcp_map", disable=getattr(args, "quiet", False))]
    return {"grid": GRID, "reps": args.reps, "seed": args.seed, "cells": results,
            "alpha": ALPHA, "delta": DELTA}
