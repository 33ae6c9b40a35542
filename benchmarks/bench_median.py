"""The default private depth median at large n against the spatial-depth median, in the same run (chapter 10).

On ``n`` standard normal points in d = 2 with the public box [-4, 4]^2 and eps = 1, one release each (CPU time of
the process; run with ``OMP_NUM_THREADS=1`` for one-core numbers):

1. the default median, ``private_depth_median(x, 1.0, box=BOX)`` (1000 candidates drawn uniformly in the box);
2. the spatial-depth median, ``private_depth_median(x, 1.0, "spatial", box=BOX)`` -- the reference;
3. the exact 2-D halfspace-depth median (the angular sweep around every candidate, O(n log n) each) at
   ``min(n, HALFSPACE_N)`` points, and its time scaled linearly to ``n`` (a lower bound: the sweep is
   O(n log n));
4. the halfspace-depth median over 1000 public directions (one sort of the data per direction).

Goal: the default median at n = 10^6 within 3x the spatial-depth median. Option: ``--n=N`` (default 10^6; e.g.
``--n=1e5`` for a quick run). Run: ``.venv/bin/python -m benchmarks median [--n=N]``; ``--save`` rewrites
``dpcp_tutorial/data/bench_median.json``.
"""

from __future__ import annotations

import os
import pathlib
import platform
import time

import numpy as np

from benchmarks._timing import print_table, save_result
from dpcp_tutorial import private_depth_median, random_directions

N = 10 ** 6
HALFSPACE_N = 10 ** 5
BOX = ((-4.0, -4.0), (4.0, 4.0))
OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_median.json"


def _once(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _size(options) -> int:
    """The data size from ``--n=N`` (N may be written 1e5), else the default."""
    n = N
    for option in options:
        if not option.startswith("--n="):
            raise SystemExit(f"bench_median: unknown option {option!r}; the only option is --n=N (e.g. --n=1e5)")
        try:
            n = int(float(option[len("--n="):]))
        except ValueError:
            raise SystemExit(f"bench_median: {option!r} needs a number of rows, e.g. --n=1e5") from None
        if n < 1000:
            raise SystemExit("bench_median: --n must be at least 1000")
    return n


def main(save: bool = False, options=()) -> None:
    n = _size(options)
    x = np.random.default_rng(0).standard_normal((n, 2))
    u = random_directions(1000, 2, rng=1)
    m = min(n, HALFSPACE_N)
    private_depth_median(x[:1000], 1.0, box=BOX, rng=2)      # warm-up (imports, first allocations)
    rows = [
        ("default (spatial depth)", n, _once(lambda: private_depth_median(x, 1.0, box=BOX, rng=2))),
        ("spatial depth", n, _once(lambda: private_depth_median(x, 1.0, "spatial", box=BOX, rng=2))),
        ("exact 2-D halfspace depth", m, _once(lambda: private_depth_median(x[:m], 1.0, "halfspace", box=BOX,
                                                                            rng=2))),
        ("halfspace depth, 1000 directions", n, _once(lambda: private_depth_median(x, 1.0, "halfspace", box=BOX,
                                                                                   directions=u, rng=2))),
    ]
    spatial = rows[1][2]
    print(f"one private median, d = 2, 1000 candidates in the box (CPU seconds; ratio = time / spatial at n = {n})")
    table = []
    for name, size, seconds in rows:
        at_n = seconds * n / size
        table.append([name, size, f"{seconds:.2f}", f"{at_n:.1f}" + ("" if size == n else " (scaled)"),
                      f"{at_n / spatial:.2f}"])
    print_table(["median", "n", "seconds", f"at n = {n}", "ratio"], table)
    ratio = rows[0][2] / spatial
    print(f"\ngoal: default median within 3x the spatial-depth median at n = {n}: ratio {ratio:.2f} "
          f"{'OK' if ratio <= 3 else 'MISSED'}")
    save_result(OUTPUT, {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
                    "load_average": list(os.getloadavg())},
        "n": n, "rows": [{"median": a, "n": b, "seconds": c} for a, b, c in rows], "default_vs_spatial": ratio,
    }, save)


if __name__ == "__main__":
    import sys

    main(save="--save" in sys.argv[1:], options=[a for a in sys.argv[1:] if a != "--save"])
