"""The exact private Tukey median in 2D: accuracy against n and epsilon, and the distance of the approximations (chapter 15).

Data: ``n`` i.i.d. standard normal points in the plane (target: the centre 0); public box
``[-B, B]^2`` with ``B = --box`` (uniform prior).

* ``accuracy``: for every ``n`` and ``--runs`` data sets, the non-private Tukey median
  (:func:`~dpcp_tutorial.tukey_median_2d`) and, for every epsilon, ``--draws`` independent
  releases of :func:`~dpcp_tutorial.private_tukey_median_2d` (exact, replace-one eps-DP). Reported:
  root mean squared errors from 0 of both, and the root mean squared distance between the private and
  the non-private median (the price of privacy), averaged over data sets and releases.
* ``grid``: the total-variation distance of the candidate mechanism over the ``K x K`` cell centres of
  the box from the exact law, computed exactly (:func:`~dpcp_tutorial.total_variation_on_cells`), both
  rounded to the cells and for the grid law spread uniformly over its cells.
* ``langevin``: ``--langevin-draws`` releases of the Langevin median (smoothed IDD, ``--directions``
  fixed public directions, default prior, steps and step size) on one data set per ``n``; the distance
  of the law of their depth level (levels grouped into 10 bins of equal exact mass, plus "outside the
  box") from the exact law, estimated by the plug-in total variation (a lower bound on the distance of the
  laws of the outputs, up to Monte Carlo error), with the same estimator on as many exact draws as its
  noise floor (mean over 200 repetitions). The Langevin median targets a different utility (smoothed
  integrated dual depth, Gaussian prior), so this distance is *not* its own sampling error.
"""

from __future__ import annotations

import argparse

import numpy as np
from tqdm import tqdm

from .._validation import renamed_keywords
from ..depth import random_directions
from ..median import GaussianPrior, depth_median_log_probabilities, private_depth_median
from ..tukey_exact import private_tukey_median_2d, total_variation_on_cells, tukey_depth_regions

DESCRIPTION = "exact private Tukey median in 2D: accuracy vs n and epsilon, TV of grid and Langevin (chapter 15)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, nargs="+", default=[100, 250, 500, 1000],
                        help="sample sizes (default: %(default)s)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0],
                        help="privacy budgets (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=10, help="data sets per n (default: %(default)s)")
    parser.add_argument("--draws", type=int, default=50,
                        help="private releases per data set and epsilon (default: %(default)s)")
    parser.add_argument("--box", type=float, default=5.0, help="half-width B of the public box (default: %(default)s)")
    parser.add_argument("--grid", type=int, nargs="+", default=[30, 100],
                        help="K of the K x K candidate grids (default: %(default)s)")
    parser.add_argument("--tv-n", type=int, nargs="+", default=[100, 200],
                        help="sample sizes of the distance study (default: %(default)s)")
    parser.add_argument("--tv-epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0],
                        help="budgets of the distance study (default: %(default)s)")
    parser.add_argument("--langevin-draws", type=int, default=100,
                        help="Langevin releases per (n, epsilon) (default: %(default)s; 0 skips Langevin)")
    parser.add_argument("--directions", type=int, default=500,
                        help="public directions of the Langevin median (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=15, help="random seed (default: %(default)s)")


def accuracy_study(ns, epsilons, runs: int, draws: int, box_half: float, seed: int,
                   progress: bool = True) -> list[dict]:
    """Root mean squared errors of the exact private and the non-private Tukey median (see the module docstring)."""
    box = ((-box_half, -box_half), (box_half, box_half))
    rows = []
    bar = tqdm(total=len(ns) * runs, desc="accuracy", disable=not progress)
    for n in ns:
        sq_np = []
        sq_priv = {e: [] for e in epsilons}
        sq_gap = {e: [] for e in epsilons}
        for r in range(runs):
            rng = np.random.default_rng([seed, n, r])
            data = rng.standard_normal((n, 2))
            reg = tukey_depth_regions(data, box)
            med = reg.deepest_point
            sq_np.append(float(med @ med))
            for e in epsilons:
                out = private_tukey_median_2d(data, e, box, size=draws, rng=rng)
                sq_priv[e].extend(np.sum(out ** 2, axis=1).tolist())
                sq_gap[e].extend(np.sum((out - med) ** 2, axis=1).tolist())
            bar.update()
        for e in epsilons:
            rows.append({"n": n, "epsilon": e, "rmse_private": float(np.sqrt(np.mean(sq_priv[e]))),
                         "rmse_nonprivate": float(np.sqrt(np.mean(sq_np))),
                         "rms_private_minus_nonprivate": float(np.sqrt(np.mean(sq_gap[e]))),
                         "runs": runs, "draws": draws})
    bar.close()
    return rows


def cell_centres(box_half: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Edges of the ``k x k`` partition of ``[-B, B]^2`` and its cell centres (row-major over x, then y)."""
    edges = np.linspace(-box_half, box_half, k + 1)
    mid = (edges[:-1] + edges[1:]) / 2
    return edges, np.stack(np.meshgrid(mid, mid, indexing="ij"), -1).reshape(-1, 2)


def grid_distance(data: np.ndarray, epsilon: float, box_half: float, k: int, regions=None) -> dict:
    """Exact total-variation distances of the ``k x k`` candidate mechanism from the exact law."""
    box = ((-box_half, -box_half), (box_half, box_half))
    reg = tukey_depth_regions(data, box) if regions is None else regions
    edges, centres = cell_centres(box_half, k)
    p = np.exp(depth_median_log_probabilities(data, epsilon, centres, "halfspace")).reshape(k, k)
    tv_cells, tv_spread = total_variation_on_cells(reg, epsilon, edges, edges, p / p.sum())
    return {"tv_cells": tv_cells, "tv_spread": tv_spread}


@renamed_keywords(n_bins="bins")
def level_bins(probabilities: np.ndarray, bins: int = 10) -> np.ndarray:
    """Bin index of every level: consecutive levels grouped into about ``bins`` bins of equal exact mass."""
    cdf = np.cumsum(probabilities) / np.sum(probabilities)
    return np.minimum((cdf * bins - 1e-9).astype(int).clip(0), bins - 1)


def binned_distance(levels_drawn: np.ndarray, probabilities: np.ndarray, bins: np.ndarray) -> float:
    """Plug-in total variation between the empirical law of the binned ``levels_drawn`` (indices into
    ``probabilities``; ``len(probabilities)`` means outside the box) and the binned exact law.

    By the data-processing inequality the binned distance is a lower bound on the distance between the
    two laws of the outputs (up to the Monte Carlo error measured by the noise floor).
    """
    nb = int(bins.max()) + 2                          # last bin: outside the box
    lab = np.append(bins, nb - 1)[levels_drawn]
    emp = np.bincount(lab, minlength=nb) / len(levels_drawn)
    exact = np.append(np.bincount(bins, weights=probabilities, minlength=nb - 1), 0.0)
    return 0.5 * float(np.abs(emp - exact).sum())


def langevin_distance(data: np.ndarray, epsilon: float, box_half: float, draws: int, directions: np.ndarray,
                      seed: int, regions=None, progress: bool = True) -> dict:
    """Estimated distance of the Langevin median's depth-level law from the exact law (module docstring)."""
    box = ((-box_half, -box_half), (box_half, box_half))
    reg = tukey_depth_regions(data, box) if regions is None else regions
    prob = reg.level_probabilities(epsilon)
    rng = np.random.default_rng(seed)
    prior = GaussianPrior(0.0, 5.0 * np.sqrt(data.shape[1]))      # the authors' prior on standardised data
    out = np.array([private_depth_median(data, epsilon, "smoothed_idd", method="langevin", prior=prior,
                                         directions=directions, rng=rng) for _ in tqdm(range(draws), desc="Langevin", leave=False,
                                                                disable=not progress)])
    inside = np.all(np.abs(out) <= box_half, axis=1)
    idx = np.full(draws, len(prob))
    idx[inside] = np.searchsorted(reg.levels, reg.level_of(out[inside]))
    bins = level_bins(prob)
    floor = [binned_distance(rng.choice(len(prob), size=draws, p=prob / prob.sum()), prob, bins)
             for _ in range(200)]
    return {"tv_levels": binned_distance(idx, prob, bins), "noise_floor": float(np.mean(floor)),
            "outside_box": float(1 - inside.mean()), "draws": draws,
            "mean_distance_from_tukey_median": float(np.mean(np.linalg.norm(out - reg.deepest_point, axis=1)))}


def run(args: argparse.Namespace) -> dict:
    progress = not getattr(args, "quiet", False)
    acc = accuracy_study(args.n, args.epsilons, args.runs, args.draws, args.box, args.seed, progress=progress)
    box = ((-args.box, -args.box), (args.box, args.box))
    dist = []
    u = random_directions(args.directions, 2, rng=np.random.default_rng([args.seed, 1]))
    for n in tqdm(args.tv_n, desc="distances", disable=not progress):
        data = np.random.default_rng([args.seed, n, 99]).standard_normal((n, 2))
        reg = tukey_depth_regions(data, box)
        for e in args.tv_epsilons:
            row = {"n": n, "epsilon": e}
            for k in args.grid:
                row[f"grid_{k}"] = grid_distance(data, e, args.box, k, regions=reg)
            if args.langevin_draws:
                row["langevin"] = langevin_distance(data, e, args.box, args.langevin_draws, u,
                                                    seed=args.seed + n, regions=reg, progress=progress)
            dist.append(row)
    return {"accuracy": acc, "distances": dist,
            "meta": {"n": args.n, "epsilons": args.epsilons, "runs": args.runs, "draws": args.draws,
                     "box": args.box, "grid": args.grid, "tv_n": args.tv_n, "tv_epsilons": args.tv_epsilons,
                     "langevin_draws": args.langevin_draws, "directions": args.directions, "seed": args.seed}}
