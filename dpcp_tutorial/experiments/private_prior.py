"""The depth median with a private prior against hand-placed priors (chapter 19).

Data (per run, seeded): ``n`` rows of :math:`N(\\mu\\mathbf 1, \\sigma^2 I_d)` with
``(mu, sigma)`` = (1000, 1) and (1000, 100) ("uncentred") and (0, 1)
("standardised"); with 25 % contamination the first quarter of the rows is
shifted by :math:`5\\sigma` in every coordinate (the medians paper's model). The
target is the centre :math:`\\mu\\mathbf 1` of the clean part; the error of a
release is :math:`\\|\\tilde\\theta - \\mu\\mathbf 1\\|/\\sigma`, reported as the root mean
square over runs. Priors (spatial depth, candidate method, 1000 candidates):

* ``private``: ``prior="private"`` (share 0.2 of epsilon locates the data);
* ``well-placed``: :math:`N(\\mu\\mathbf 1, \\sigma^2 I)`, an oracle no real user has;
* ``misplaced``: :math:`N((\\mu + 5\\sigma)\\mathbf 1, \\sigma^2 I)`, a centre five spreads off;
* ``docstring``: :math:`N(0, 25d\\,I)`, the authors' prior for standardised data.

RAND HIE: (visits ``mdvis``, chronic-disease score ``disea``), in their units,
``n = 20190``; target and error: the non-private spatial median and the
Euclidean distance to it. Priors: ``private``; ``well-placed``: centred on the
non-private median, scale 5 (an oracle); ``misplaced``: centred on the middle of
the public box [0, 365] x [0, 100], scale a quarter of its width, as a user
reading only the codebook might; ``docstring``: :math:`N(0, 50 I)`.

Dask: for every synthetic setting at ``d <= 5``, the private-prior release of
:func:`dpcp_tutorial.scale.private_depth_median` on the same data in
``--chunks`` partitions, with the same seed, is compared with the in-memory one
(the largest absolute difference over runs is reported; the releases are equal).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from tqdm import tqdm

from ..median import GaussianPrior, private_depth_median, spatial_median

DESCRIPTION = "depth median with prior='private' vs well-placed, misplaced and docstring priors (chapter 19)"
PRIORS = ("private", "well-placed", "misplaced", "docstring")
SETTINGS = (("uncentred", 1000.0, 1.0), ("uncentred", 1000.0, 100.0), ("standardised", 0.0, 1.0))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, default=10_000, help="rows per synthetic data set (default: %(default)s)")
    parser.add_argument("--d", type=int, nargs="+", default=[2, 5, 20], help="dimensions (default: %(default)s)")
    parser.add_argument("--contamination", type=float, nargs="+", default=[0.0, 0.25],
                        help="contaminated fractions (default: %(default)s)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="total budget (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=10, help="data sets per setting (default: %(default)s)")
    parser.add_argument("--candidates", type=int, default=1000, help="candidates (default: %(default)s)")
    parser.add_argument("--rand-runs", type=int, default=20, help="releases on RAND HIE (default: %(default)s)")
    parser.add_argument("--dask-runs", type=int, default=2,
                        help="runs per setting compared on Dask (default: %(default)s; 0 skips Dask)")
    parser.add_argument("--chunks", type=int, default=4, help="Dask partitions (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=19, help="random seed (default: %(default)s)")


def _prior(name: str, centre, spread: float, d: int):
    if name == "private":
        return "private"
    if name == "well-placed":
        return GaussianPrior(tuple(centre), spread)
    if name == "misplaced":
        return GaussianPrior(tuple(np.asarray(centre) + 5.0 * spread), spread)
    return GaussianPrior(0.0, 5.0 * math.sqrt(d))


def _data(rng, n: int, d: int, mu: float, sigma: float, fraction: float) -> np.ndarray:
    x = mu + sigma * rng.standard_normal((n, d))
    x[: int(round(fraction * n))] += 5.0 * sigma
    return x


def synthetic_study(n: int, ds, fractions, epsilon: float, runs: int, n_candidates: int, seed: int,
                    progress: bool = True) -> list[dict]:
    """RMS error (in spreads) of every prior, per setting; see the module docstring."""
    rows = []
    bar = tqdm(total=len(SETTINGS) * len(ds) * len(fractions) * runs, desc="synthetic", disable=not progress)
    for (label, mu, sigma), d, fraction in ((s, d, f) for s in SETTINGS for d in ds for f in fractions):
        sq = {p: [] for p in PRIORS}
        for r in range(runs):
            rng = np.random.default_rng([seed, d, int(100 * fraction), int(mu), int(sigma), r])
            x = _data(rng, n, d, mu, sigma, fraction)
            target = np.full(d, mu)
            for name in PRIORS:
                release = private_depth_median(x, epsilon, prior=_prior(name, target, sigma, d),
                                               n_candidates=n_candidates, rng=rng)
                sq[name].append(float(np.sum((release - target) ** 2)) / sigma ** 2)
            bar.update()
        rows.append({"data": label, "mu": mu, "sigma": sigma, "d": d, "contamination": fraction, "n": n,
                     "rmse": {p: math.sqrt(float(np.mean(v))) for p, v in sq.items()}})
    bar.close()
    return rows


def rand_hie_study(epsilon: float, runs: int, n_candidates: int, seed: int, progress: bool = True) -> dict:
    """Distance of each prior's release to the non-private spatial median on RAND HIE (visits, disease score)."""
    from ..datasets import load_rand_hie

    X, y, info = load_rand_hie("regression")
    data = np.column_stack([y, X[:, info["feature_names"].index("disea")]])
    median = spatial_median(data)
    priors = {"private": "private", "well-placed": GaussianPrior(tuple(median), 5.0),
              "misplaced": GaussianPrior((182.5, 50.0), 365.0 / 4), "docstring": GaussianPrior(0.0, 5.0 * math.sqrt(2))}
    dist = {p: [] for p in priors}
    rng = np.random.default_rng([seed, 20190])
    for _ in tqdm(range(runs), desc="RAND HIE", disable=not progress):
        for name, prior in priors.items():
            release = private_depth_median(data, epsilon, prior=prior, n_candidates=n_candidates, rng=rng)
            dist[name].append(float(np.linalg.norm(release - median)))
    return {"n": int(data.shape[0]), "median": median.tolist(),
            "rms_distance": {p: math.sqrt(float(np.mean(np.square(v)))) for p, v in dist.items()}}


def dask_study(n: int, ds, fractions, epsilon: float, runs: int, n_candidates: int, chunks: int, seed: int,
               progress: bool = True) -> list[dict]:
    """Largest difference between the Dask and the in-memory private-prior release, same data and seed."""
    import dask.array as da

    from .. import scale

    rows = []
    settings = [(s, d, f) for s in SETTINGS for d in ds if d <= 5 for f in fractions]
    for (label, mu, sigma), d, fraction in tqdm(settings, desc="Dask", disable=not progress):
        worst = 0.0
        for r in range(runs):
            rng = np.random.default_rng([seed, d, int(100 * fraction), int(mu), int(sigma), r, 1])
            x = _data(rng, n, d, mu, sigma, fraction)
            a = private_depth_median(x, epsilon, prior="private", n_candidates=n_candidates, rng=r)
            b = scale.private_depth_median(da.from_array(x, chunks=(-(-n // chunks), d)), epsilon, prior="private",
                                           n_candidates=n_candidates, rng=r)
            worst = max(worst, float(np.max(np.abs(a - b))))
        rows.append({"data": label, "mu": mu, "sigma": sigma, "d": d, "contamination": fraction,
                     "runs": runs, "max_abs_difference": worst})
    return rows


def run(args) -> dict:
    progress = not getattr(args, "quiet", False)
    out = {"synthetic": synthetic_study(args.n, args.d, args.contamination, args.epsilon, args.runs,
                                        args.candidates, args.seed, progress),
           "rand_hie": rand_hie_study(args.epsilon, args.rand_runs, args.candidates, args.seed, progress)}
    if args.dask_runs:
        out["dask"] = dask_study(args.n, args.d, args.contamination, args.epsilon, args.dask_runs,
                                 args.candidates, args.chunks, args.seed, progress)
    out["settings"] = {"n": args.n, "d": list(args.d), "contamination": list(args.contamination),
                       "epsilon": args.epsilon, "runs": args.runs, "candidates": args.candidates,
                       "depth": "spatial", "method": "candidates", "localize_share": 0.2, "seed": args.seed}
    return out
