"""Algorithm 1 (``private_quantile``) against the sort floor and OpenDP's private quantile (chapter 3).

For N in {1e4, 1e5, 1e6, 1e7} uniform scores, M = 1000 edges j/M, beta = 0.1, eps = 1:

* ``sort``: ``np.sort`` of the same array, the floor of any sort-based method;
* ``ours``: ``dpcp_tutorial.private_quantile(..., variant="original")``, the DPCP write-up's Algorithm 1 (one
  counting pass over the edges, no sort, + Gumbel-max; the default tight variant costs the same time, but targets
  a lower level, so its rank error from the write-up's target would mix accuracy with the deliberate shift);
* ``opendp``: ``opendp.measurements.make_private_quantile`` on the same candidates, the same target level
  :math:`1-\\alpha_0` and the same guarantee: calibrated so that replace-one is eps-DP (symmetric distance 2),
  which makes add/remove eps/2-DP, exactly the guarantees of Algorithm 1 with ``beta <= 1/2``. The measurement is
  built once, outside the timing; it is called on the NumPy array (its fastest input).

Timings are CPU time of this process (``time.process_time``), best of several interleaved rounds (one round of each
method in turn): all three methods are single-threaded and run in this process (OpenDP through its FFI), and on a
shared machine CPU time is far less disturbed by other jobs than wall-clock time. Accuracy, over independent data
sets: the mean absolute rank error
:math:`N\\,|F_N(\\hat q) - (1-\\alpha_0)|` from the empirical quantile both methods target, and the mean test
coverage :math:`E[F(\\hat q)] = E[\\hat q]` (uniform scores) against the nominal :math:`1-\\beta`.

Run: ``.venv/bin/python -m benchmarks quantile``. Prints the ratios and writes them to
``dpcp_tutorial/data/bench_quantile.json`` (read by chapter 3).
"""

from __future__ import annotations

import pathlib
import platform
import time

import numpy as np

from benchmarks._timing import print_table, save_result
from dpcp_tutorial import algorithm1_level, private_quantile, quantile_edges

SIZES = (10**4, 10**5, 10**6, 10**7)
ACCURACY_REPEATS = {10**4: 200, 10**5: 50, 10**6: 10, 10**7: 3}
BINS, BETA, EPSILON = 1000, 0.1, 1.0
OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_quantile.json"


def best_cpu_time(fn, min_total: float = 0.2) -> float:
    """CPU seconds per call of ``fn()``, from one round that loops until ``min_total`` CPU seconds have passed."""
    loops, start = 0, time.process_time()
    while True:
        fn()
        loops += 1
        elapsed = time.process_time() - start
        if elapsed >= min_total:
            return elapsed / loops


def opendp_quantile(n: int):
    """OpenDP's private quantile with Algorithm 1's target, candidates and privacy guarantee."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    alpha0 = algorithm1_level(BETA, n, EPSILON)
    candidates = quantile_edges(BINS).tolist()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    return dp.binary_search_chain(
        lambda scale: dp.m.make_private_quantile(domain, dp.symmetric_distance(), dp.max_divergence(),
                                                 candidates=candidates, alpha=1.0 - alpha0, scale=scale),
        d_in=2, d_out=EPSILON)


def accuracy(release, n: int, repeats: int, seed: int) -> tuple[float, float]:
    """Mean absolute rank error from the 1 - alpha0 quantile, and the mean test coverage of the threshold."""
    rng = np.random.default_rng(seed)
    target = 1.0 - algorithm1_level(BETA, n, EPSILON)
    errors, coverage = [], []
    for _ in range(repeats):
        scores = rng.uniform(size=n)
        qhat = release(scores, rng)
        errors.append(abs(np.searchsorted(np.sort(scores), qhat, side="right") - n * target))
        coverage.append(qhat)  # uniform scores: the test coverage of the threshold is qhat itself
    return float(np.mean(errors)), float(np.mean(coverage))


def main(save: bool = False) -> None:
    rows, results = [], []
    for n in SIZES:
        scores = np.random.default_rng(n).uniform(size=n)
        measurement = opendp_quantile(n)
        methods = {"sort": lambda: np.sort(scores),
                   "ours": lambda: private_quantile(scores, BETA, EPSILON, BINS, rng=0, variant="original"),
                   "opendp": lambda: measurement(scores)}
        best = dict.fromkeys(methods, float("inf"))
        for _ in range({10**4: 15, 10**5: 15, 10**6: 9, 10**7: 5}[n]):  # interleaved rounds, best of each
            for name, fn in methods.items():
                best[name] = min(best[name], best_cpu_time(fn))
        t_sort, t_ours, t_opendp = best["sort"], best["ours"], best["opendp"]
        err_ours, cov_ours = accuracy(lambda s, g: private_quantile(s, BETA, EPSILON, BINS, rng=g, variant="original"), n,
                                      ACCURACY_REPEATS[n], seed=1)
        err_odp, cov_odp = accuracy(lambda s, g: measurement(s), n, ACCURACY_REPEATS[n], seed=1)
        results.append(dict(n=n, sort_s=t_sort, ours_s=t_ours, opendp_s=t_opendp,
                            ours_over_sort=t_ours / t_sort, opendp_over_ours=t_opendp / t_ours,
                            ours_rank_error=err_ours, opendp_rank_error=err_odp,
                            ours_coverage=cov_ours, opendp_coverage=cov_odp,
                            accuracy_repeats=ACCURACY_REPEATS[n]))
        rows.append([f"{n:.0e}", f"{1e3 * t_sort:.2f}", f"{1e3 * t_ours:.2f}", f"{1e3 * t_opendp:.2f}",
                     f"{t_ours / t_sort:.2f}x", f"{t_opendp / t_ours:.1f}x",
                     f"{err_ours:.1f} / {err_odp:.1f}", f"{cov_ours:.4f} / {cov_odp:.4f}"])
    print(f"private quantile, M={BINS}, beta={BETA}, eps={EPSILON} (Algorithm 1 as written; replace-one eps, add/remove eps/2 for both); "
          "CPU time, best of interleaved rounds")
    print_table(["N", "sort ms", "ours ms", "OpenDP ms", "ours/sort", "OpenDP/ours",
                 "rank err ours/OpenDP", f"coverage (nominal {1 - BETA:g}) ours/OpenDP"], rows)
    payload = dict(command=".venv/bin/python -m benchmarks quantile --save", clock="process_time", bins=BINS, beta=BETA,
                   epsilon=EPSILON,
                   machine=platform.machine(), numpy=np.__version__, results=results)
    save_result(OUTPUT, payload, save)


if __name__ == "__main__":
    import sys

    main(save="--save" in sys.argv[1:])
