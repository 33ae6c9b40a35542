"""Wall-clock cost of the depths and of the private median samplers against n and d (chapter 12).

For every depth of :mod:`dpcp_tutorial.depth` and every ``(n, d)`` of the grid
the runner draws standard normal data and times (best of ``--repeats``) one
call with 1 query point and one with ``q`` query points, ``q`` grown until the
difference clearly exceeds the timing noise. The difference divided by
``q - 1`` is the marginal cost of a query (``seconds_per_unit``); the rest of
the one-point call is the set-up (projecting and sorting the data,
``setup_seconds``). It also times the two samplers of
:func:`~dpcp_tutorial.private_depth_median` in the same way: the exact
candidate mechanism on the integrated dual depth (marginal cost of
``--candidates`` more candidates, i.e. per release of that size) and unadjusted
Langevin on the smoothed integrated dual depth (per step).

Wall-clock numbers depend on the machine and on its load; the result records
the processor, the NumPy version and the load average so that readers can judge
them. The chapter loads the committed JSON instead of timing anything itself.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
from tqdm import tqdm

from ._timing import best_time
from ..depth import halfspace_depth, integrated_dual_depth, integrated_dual_depth_gradient, random_directions
from ..depth import spatial_depth
from ..median import GaussianPrior, private_depth_median

DESCRIPTION = "seconds per query of each depth and per step of the private median samplers vs n and d (chapter 12)"

KINDS = ("halfspace_exact", "halfspace_directions", "spatial", "idd", "smoothed_idd", "smoothed_idd_gradient",
         "private_median_candidates", "private_median_langevin")


def _work(kind: str, data: np.ndarray, args: argparse.Namespace, rng: np.random.Generator):
    """Return ``fn(units)`` performing ``units`` queries (or Langevin steps; one release for the candidates)."""
    d = data.shape[1]
    if kind == "halfspace_exact":
        return lambda q: halfspace_depth(_queries(q, d), data)
    if kind == "halfspace_directions":
        u = random_directions(args.directions, d, rng)
        return lambda q: halfspace_depth(_queries(q, d), data, method="directions", directions=u)
    if kind == "spatial":
        return lambda q: spatial_depth(_queries(q, d), data)
    u = random_directions(args.idd_directions, d, rng)
    prior = GaussianPrior(0.0, 5.0 * np.sqrt(d))       # the authors' prior for standardised data
    if kind == "idd":
        return lambda q: integrated_dual_depth(_queries(q, d), data, directions=u)
    if kind == "smoothed_idd":
        return lambda q: integrated_dual_depth(_queries(q, d), data, directions=u, smoothing=10.0)
    if kind == "smoothed_idd_gradient":
        return lambda q: integrated_dual_depth_gradient(_queries(q, d), data, directions=u, smoothing=10.0)
    if kind == "private_median_candidates":
        return lambda q: private_depth_median(data, 1.0, depth="idd", method="candidates", prior=prior,
                                              n_candidates=args.candidates * q, directions=u, rng=0)
    if kind == "private_median_langevin":
        return lambda q: private_depth_median(data, 1.0, depth="smoothed_idd", method="langevin", n_steps=q,
                                              prior=prior, directions=u, rng=0)
    raise ValueError(f"unknown kind {kind!r}")


def _queries(q: int, d: int) -> np.ndarray:
    return 0.1 * np.random.default_rng(q).standard_normal((q, d))


def _initial_units(kind: str, n: int, d: int, args: argparse.Namespace) -> int:
    """A first guess of the number of queries (steps) that takes about a tenth of a second."""
    if kind == "private_median_candidates":
        return 4                      # 1 versus 4 times --candidates candidates, grown as needed
    cost = {"halfspace_exact": n * np.log2(n), "halfspace_directions": args.directions * (d + np.log2(n)),
            "spatial": n * d, "idd": args.idd_directions * (d + np.log2(n)),
            "smoothed_idd": args.idd_directions * n, "smoothed_idd_gradient": args.idd_directions * n,
            "private_median_langevin": args.idd_directions * n}[kind]
    return int(np.clip(3e7 / cost, 16, 4000))


def _marginal(fn, kind: str, n: int, d: int, args: argparse.Namespace) -> dict:
    """Time ``fn(1)`` and ``fn(q)``, growing ``q`` until the difference is well above the noise.

    ``q`` (at least 16, or 4 for the candidate mechanism) is multiplied by 4 until ``t(q) - t(1)``
    exceeds both ``--min-seconds`` and ``t(1)`` itself, or ``q`` reaches ``--max-units``; each
    time is the best of ``--repeats`` calls (two for calls slower than 5 s).
    """
    t_one = best_time(lambda: fn(1), args.repeats)
    repeats = args.repeats if t_one < 5.0 else min(args.repeats, 2)
    q = _initial_units(kind, n, d, args)
    limit = 16 if kind == "private_median_candidates" else args.max_units   # q multiplies the candidates
    while True:
        t_many = best_time(lambda: fn(q), repeats)
        if t_many - t_one >= max(args.min_seconds, t_one) or q >= limit:
            break
        q = min(4 * q, limit)
    marginal = max(t_many - t_one, 0.0) / (q - 1)
    return {"units": q, "seconds_one": t_one, "seconds_many": t_many, "seconds_per_unit": marginal,
            "setup_seconds": max(t_one - marginal, 0.0)}


def machine_info() -> dict:
    """Processor, core count, NumPy version and load average at the time of the run."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {"processor": model, "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "system": platform.system(), "load_average_1min": round(load[0], 2),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10000, 100000],
                        help="sample sizes (default: %(default)s)")
    parser.add_argument("--d", type=int, nargs="+", default=[2, 10, 100], help="dimensions (default: %(default)s)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS, help="what to time")
    parser.add_argument("--directions", type=int, default=1000,
                        help="public directions of the approximate halfspace depth (default: %(default)s)")
    parser.add_argument("--idd-directions", type=int, default=500,
                        help="public directions of the integrated dual depth (default: %(default)s)")
    parser.add_argument("--candidates", type=int, default=1000,
                        help="candidates of the exact sampler (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per cell; the best is kept (default: %(default)s)")
    parser.add_argument("--min-seconds", type=float, default=0.3,
                        help="smallest time difference between the two calls of a cell (default: %(default)s)")
    parser.add_argument("--max-units", type=int, default=20000,
                        help="largest number of queries (steps) per call (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=12, help="random seed (default: %(default)s)")


def run(args: argparse.Namespace) -> dict:
    """Time every (kind, n, d) cell; ``rows`` hold the marginal seconds per query point (per step for
    Langevin, per ``--candidates`` candidates for the candidate mechanism) and the set-up time."""
    rng = np.random.default_rng(args.seed)
    info = machine_info()
    cells = [(kind, n, d) for kind in args.kinds for n in args.n for d in args.d
             if not (kind == "halfspace_exact" and d > 2)]
    rows = []
    for kind, n, d in tqdm(cells, desc="depth_scaling", disable=getattr(args, "quiet", False)):
        data = rng.standard_normal((n, d))
        fn = _work(kind, data, args, rng)
        rows.append({"kind": kind, "n": n, "d": d, **_marginal(fn, kind, n, d, args)})
    info["load_average_1min_end"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    return {"config": {"n": list(args.n), "d": list(args.d), "kinds": list(args.kinds),
                       "directions": args.directions, "idd_directions": args.idd_directions,
                       "candidates": args.candidates, "repeats": args.repeats, "min_seconds": args.min_seconds,
                       "max_units": args.max_units,
                       "seed": args.seed},
            "machine": info, "rows": rows}
