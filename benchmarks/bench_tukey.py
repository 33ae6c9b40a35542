"""The exact private Tukey median in 2D against the two approximate samplers of chapter 10 (chapter 15).

On the same data (n standard normal points, box [-5, 5]^2, eps = 1):

1. ``private_tukey_median_2d`` (exact continuous mechanism; it computes only the depth levels that matter);
2. the candidate mechanism over a public 100 x 100 grid of the box (10^4 candidates, exact 2D depth at
   every candidate): ``private_depth_median(..., candidates=grid)``;
3. the Langevin median (smoothed IDD, 500 public directions, default steps):
   ``private_depth_median(..., method="langevin")``.

Each is timed for one release: the best CPU time of a few runs (one run above 10 s). Also: ``tukey_depth_regions`` with all
levels. Ratios are baseline time / exact-sampler time (> 1: the exact sampler is faster). Goal: n = 1000 in a
few seconds on one core. Run: ``.venv/bin/python -m benchmarks tukey``; ``--save`` rewrites
``dpcp_tutorial/data/bench_tukey.json``.
"""

from __future__ import annotations

import os
import pathlib
import platform
import sys
import time

import numpy as np

from benchmarks._timing import print_table, save_result
from dpcp_tutorial import GaussianPrior, private_depth_median, private_tukey_median_2d, tukey_depth_regions

SIZES = (250, 500, 1000)
BOX = ((-5.0, -5.0), (5.0, 5.0))
EPSILON = 1.0
OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_tukey.json"


def _time(fn, repeat: int = 3) -> float:
    """Best CPU time of the process (``time.process_time``) over ``repeat`` calls (one call if it exceeds 10 s).

    CPU time rather than wall-clock time, so that a machine shared with other jobs still gives comparable
    numbers; BLAS threads would add up, so run with ``OMP_NUM_THREADS=1`` for one-core numbers.
    """
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
        if best > 10.0:
            break
    return best


def main(save: bool = False) -> None:
    g = (np.arange(100) + 0.5) / 100 * 10.0 - 5.0
    grid = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
    rows, records = [], []
    for n in SIZES:
        data = np.random.default_rng(n).standard_normal((n, 2))
        t_exact = _time(lambda: private_tukey_median_2d(data, EPSILON, BOX, rng=0))
        t_all = _time(lambda: tukey_depth_regions(data, BOX), repeat=1)
        t_grid = _time(lambda: private_depth_median(data, EPSILON, "halfspace", candidates=grid, rng=0))
        t_lang = _time(lambda: private_depth_median(data, EPSILON, "smoothed_idd", method="langevin",
                                                    prior=GaussianPrior(0.0, 5.0 * np.sqrt(2)), rng=0),
                       repeat=1)
        rows.append([n, f"{t_exact:.2f}", f"{t_all:.2f}", f"{t_grid:.2f}", f"{t_grid / t_exact:.2f}",
                     f"{t_lang:.2f}", f"{t_lang / t_exact:.2f}"])
        records.append({"n": n, "exact_s": t_exact, "all_levels_s": t_all, "grid_1e4_s": t_grid,
                        "langevin_s": t_lang})
    print(f"eps = {EPSILON}, box {BOX}; CPU seconds (one release)")
    print_table(["n", "exact", "all levels", "grid 10^4", "grid/exact", "Langevin", "Langevin/exact"], rows)
    goal = next(r for r in records if r["n"] == 1000)["exact_s"]
    print(f"goal: n = 1000 in a few seconds on one core -> {goal:.2f} s "
          f"({'met' if goal < 5 else 'NOT met'})")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average (1 min) at the end: {load:.1f} on {os.cpu_count()} cores")
    save_result(OUTPUT, {"machine": platform.platform(), "python": platform.python_version(),
                         "load_average_1min": round(load, 2), "epsilon": EPSILON, "results": records}, save)


if __name__ == "__main__":
    main(save="--save" in sys.argv[1:])
