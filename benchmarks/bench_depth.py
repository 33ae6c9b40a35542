"""Data depths and the private median sampler against direct implementations (chapters 9 and 10).

1. Depth of ``n`` points with respect to the same ``n`` points, for n in {500, 2000, 1e4} and
   d in {2, 5, 20, 100}: exact 2D halfspace depth (angular sweep), halfspace depth over 1000 public
   directions, spatial depth, and integrated dual depth over 500 directions. Baselines, timed in the same
   run where they finish in reasonable time: the brute-force halfspace depth over all critical directions
   (n = 500), spatial depth with a Python loop over the points (n <= 2000), IDD with a loop over directions
   and points counting ``p <= t`` directly (n = 500).
2. One gradient of the smoothed IDD (n = 1e4, m = 200 directions, d = 100): the package's
   ``b / (b + e^{s(p - c)})`` form (float64, and float32 as in the Langevin sampler) against
   ``scipy.special.expit`` on the n x m matrix.
3. The Langevin median (n = 1e4, m = 200, eps = 10, default step and number of steps) against d.

Goals (2 cores): exact 2D halfspace depth of 2000 points < 1 s; spatial depth of 2000 points in d = 20
< 1 s; the full d = 100 Langevin median < 30 s. Writes ``dpcp_tutorial/data/bench_depth.json``.
Run: ``.venv/bin/python -m benchmarks depth``.
"""

from __future__ import annotations

import os
import pathlib
import platform
import time

import numpy as np
from scipy.special import expit

from benchmarks._timing import best_time, print_table, save_result
from dpcp_tutorial import (
    GaussianPrior,
    halfspace_depth,
    integrated_dual_depth,
    integrated_dual_depth_gradient,
    make_contaminated_gaussian,
    private_depth_median,
    random_directions,
    spatial_depth,
)

SIZES = (500, 2000, 10_000)
DIMS = (2, 5, 20, 100)
OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_depth.json"


def brute_halfspace(points, data):
    """Definition evaluated at the midpoint of every arc between critical directions: O(n^2) per point."""
    out = np.empty(len(points))
    for k, x in enumerate(points):
        v = data - x
        ang = np.arctan2(v[:, 1], v[:, 0])
        crit = np.unique(np.mod(np.r_[ang + np.pi / 2, ang - np.pi / 2], 2 * np.pi))
        mids = (crit + np.r_[crit[1:], crit[0] + 2 * np.pi]) / 2
        counts = (v @ np.stack([np.cos(mids), np.sin(mids)]) >= 0).sum(axis=0)
        out[k] = counts.min() / len(data)
    return out


def loop_spatial(points, data):
    out = np.empty(len(points))
    for k, x in enumerate(points):
        v = x - data
        r = np.linalg.norm(v, axis=1)
        s = np.divide(v, r[:, None], out=np.zeros_like(v), where=r[:, None] > 0).mean(axis=0)
        out[k] = 1 - np.linalg.norm(s)
    return out


def loop_idd(points, data, u):
    proj, t = data @ u.T, points @ u.T
    out = np.zeros(len(points))
    for j in range(u.shape[0]):
        for k in range(len(points)):
            f = np.mean(proj[:, j] <= t[k, j])
            out[k] += f * (1 - f)
    return out / u.shape[0]


def _time(fn) -> float:
    """One call if it takes over a second, else the best of three."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    return first if first > 1.0 else min(first, best_time(fn, repeat=3, min_total=0.0))


def depth_table() -> list[dict]:
    rows = []
    for n in SIZES:
        for d in DIMS:
            x = np.random.default_rng([n, d]).standard_normal((n, d))
            u_h, u_i = random_directions(1000, d, rng=1), random_directions(500, d, rng=2)
            row = {"n": n, "d": d}
            if d == 2:
                row["halfspace_exact"] = _time(lambda: halfspace_depth(x, x))
                if n <= 500:
                    row["halfspace_brute"] = _time(lambda: brute_halfspace(x, x))
            row["halfspace_directions"] = _time(lambda: halfspace_depth(x, x, "directions", directions=u_h))
            row["spatial"] = _time(lambda: spatial_depth(x, x))
            if n <= 2000:
                row["spatial_loop"] = _time(lambda: loop_spatial(x, x))
            row["idd"] = _time(lambda: integrated_dual_depth(x, x, directions=u_i))
            if n <= 500:
                row["idd_loop"] = _time(lambda: loop_idd(x, x, u_i))
            rows.append(row)
            print(f"  n={n:>6} d={d:>3} done", flush=True)
    return rows


def gradient_timing() -> dict:
    data = make_contaminated_gaussian(10_000, 100, rng=0)
    u = random_directions(200, 100, rng=1)
    theta = np.zeros((1, 100))
    proj = data @ u.T

    def direct():
        sig = expit(10.0 * (theta[0] @ u.T - proj))
        f, g = sig.mean(axis=0), (sig * (1 - sig)).mean(axis=0)
        return u.T @ ((1 - 2 * f) * g) * (10.0 / 200)

    np.testing.assert_allclose(integrated_dual_depth_gradient(theta, data, directions=u)[0], direct(), atol=1e-12)
    # the package's per-step cost, without the one-off set-up (exp of the n x m projections): float64 (depth
    # values, gradients) and float32 (the Langevin sampler's drift)
    from dpcp_tutorial._depth_core import smoothed_cdfs, smoothed_gradient
    cdfs64 = smoothed_cdfs(data, u, 10.0)
    cdfs32 = smoothed_cdfs(data, u, 10.0, dtype=np.float32)
    return {"package": best_time(lambda: smoothed_gradient(cdfs64, u, u @ theta[0])),
            "package_float32": best_time(lambda: smoothed_gradient(cdfs32, u, u @ theta[0])),
            "expit": best_time(direct)}


def langevin_timing() -> list[dict]:
    rows = []
    full = make_contaminated_gaussian(10_000, 100, rng=421)
    for d in (2, 10, 20, 50, 100):
        u = random_directions(200, d, rng=np.random.default_rng([422, d]))
        start = time.perf_counter()
        est = private_depth_median(full[:, :d], 10.0, "smoothed_idd", "langevin", GaussianPrior(0.0, 5.0 * np.sqrt(d)),
                                   directions=u,
                                   rng=np.random.default_rng([423, d]))
        rows.append({"d": d, "steps": max(1000, 80 * d), "seconds": time.perf_counter() - start,
                     "error": float(np.linalg.norm(est))})
        print(f"  Langevin d={d} done", flush=True)
    return rows


def main(save: bool = False) -> None:
    print("depth of n points w.r.t. the same n points (seconds; ratio = baseline / package)")
    rows = depth_table()
    header = ["n", "d", "HD exact", "HD brute", "ratio", "HD 1000 dirs", "spatial", "spatial loop", "ratio",
              "IDD 500 dirs", "IDD loop", "ratio"]

    def fmt(r, key):
        return f"{r[key]:.3g}" if key in r else "-"

    def ratio(r, base, ours):
        return f"{r[base] / r[ours]:.0f}x" if base in r else "-"

    print_table(header, [[r["n"], r["d"], fmt(r, "halfspace_exact"), fmt(r, "halfspace_brute"),
                          ratio(r, "halfspace_brute", "halfspace_exact"), fmt(r, "halfspace_directions"),
                          fmt(r, "spatial"), fmt(r, "spatial_loop"), ratio(r, "spatial_loop", "spatial"),
                          fmt(r, "idd"), fmt(r, "idd_loop"), ratio(r, "idd_loop", "idd")] for r in rows])
    grad = gradient_timing()
    print(f"\nsmoothed-IDD gradient, n=1e4, m=200, d=100: package {grad['package'] * 1e3:.2f} ms (float64), "
          f"{grad['package_float32'] * 1e3:.2f} ms (float32, the sampler's drift); expit on the n x m matrix "
          f"{grad['expit'] * 1e3:.2f} ms ({grad['expit'] / grad['package']:.1f}x, "
          f"{grad['expit'] / grad['package_float32']:.1f}x)")
    print("\nLangevin median (n=1e4, m=200, eps=10, default step, max(1000, 80 d) steps), contaminated data:")
    lang = langevin_timing()
    print_table(["d", "steps", "seconds", "ms/step", "error"],
                [[r["d"], r["steps"], f"{r['seconds']:.1f}", f"{1e3 * r['seconds'] / r['steps']:.2f}",
                  f"{r['error']:.2f}"] for r in lang])
    hd2000 = next(r["halfspace_exact"] for r in rows if r["n"] == 2000 and r["d"] == 2)
    sd2000 = next(r["spatial"] for r in rows if r["n"] == 2000 and r["d"] == 20)
    l100 = next(r["seconds"] for r in lang if r["d"] == 100)
    goals = [("exact 2D halfspace depth, 2000 points", hd2000, 1.0),
             ("spatial depth, 2000 points, d = 20", sd2000, 1.0),
             ("Langevin median, d = 100, n = 1e4", l100, 30.0)]
    print("\ngoals:")
    for name, value, limit in goals:
        print(f"  {name}: {value:.2f} s (goal < {limit:g} s) {'OK' if value < limit else 'MISSED'}")
    save_result(OUTPUT, {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
                    "load_average": list(os.getloadavg())},
        "depth": rows, "gradient": grad, "langevin": lang,
    }, save)


if __name__ == "__main__":
    import sys

    main(save="--save" in sys.argv[1:])
