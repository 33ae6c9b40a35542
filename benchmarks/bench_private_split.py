"""The private split calibrators: Angelopoulos et al.'s mechanism with ``m="auto"`` against the tight quantile (ch. 4).

For N uniform scores in {1e3, 1e4, 1e5}, alpha = 0.1, eps = 1, in one run and interleaved:

* ``tight``: ``private_quantile(scores, 0.1, 1.0, bins=1000)``, chapter 3's tight private quantile, the default
  calibrator of the private split estimators (the baseline);
* ``pps auto``: ``pps_private_quantile(scores, 0.1, 1.0, m="auto")``: the grid size chosen by the deterministic
  analytic rule of ``pps_choose_m`` (a vectorised formula, no data), then one release;
* ``pps reference``: ``m="reference"``, the authors' random scan (50 simulated releases on grids of 1e4 to 1e6
  edges), timed once per size (it takes seconds).

Printed: seconds per call and the same-run ratios to ``tight``. Second table: the quality of the two grid rules,
the exact expected threshold E[s] (``pps_quantile_probabilities``) on one sample of N uniform scores, for the
analytic choice and for the reference scan's choice (mean over five seeds); smaller is better (the target is
1 - alpha = 0.9).

Run: ``.venv/bin/python -m benchmarks private_split`` (``--save`` rewrites
``dpcp_tutorial/data/bench_private_split.json``).
"""

from __future__ import annotations

import pathlib
import platform
import time

import numpy as np

from benchmarks._timing import best_time, print_table, save_result
from dpcp_tutorial import pps_choose_m, pps_private_quantile, pps_quantile_probabilities, private_quantile

SIZES = (10**3, 10**4, 10**5)
ALPHA, EPSILON, BINS = 0.1, 1.0, 1000
QUALITY = ((200, 4.0), (500, 1.0), (1000, 0.5), (2000, 2.0), (10_000, 1.0), (30_000, 5.0))
OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_private_split.json"


def _timings() -> list[dict]:
    rows = []
    for n in SIZES:
        scores = np.random.default_rng(n).uniform(size=n)
        tight = auto = np.inf
        for _ in range(3):   # interleaved rounds: both methods see the same machine load
            tight = min(tight, best_time(lambda: private_quantile(scores, ALPHA, EPSILON, BINS, rng=1), repeat=1))
            auto = min(auto, best_time(lambda: pps_private_quantile(scores, ALPHA, EPSILON, m="auto", rng=1),
                                       repeat=1))
        start = time.perf_counter()
        pps_private_quantile(scores, ALPHA, EPSILON, m="reference", rng=1)
        reference = time.perf_counter() - start
        rows.append({"n": n, "tight_s": tight, "pps_auto_s": auto, "pps_reference_s": reference,
                     "auto_over_tight": auto / tight, "reference_over_tight": reference / tight})
    return rows


def _expected_threshold(scores, epsilon: float, m: int) -> float:
    edges, p = pps_quantile_probabilities(scores, ALPHA, epsilon, m)
    return float(edges @ p)


def _quality() -> list[dict]:
    rows = []
    for n, eps in QUALITY:
        scores = np.random.default_rng([n, 7]).uniform(size=n)
        m_auto = pps_choose_m(n, ALPHA, eps)[0]
        m_ref = [pps_choose_m(n, ALPHA, eps, rule="reference", rng=seed)[0] for seed in range(5)]
        rows.append({"n": n, "epsilon": eps, "m_auto": m_auto,
                     "expected_auto": _expected_threshold(scores, eps, m_auto), "m_reference": m_ref,
                     "expected_reference": float(np.mean([_expected_threshold(scores, eps, m) for m in m_ref]))})
    return rows


def main(save: bool = False) -> None:
    timings = _timings()
    print_table(["N", "tight (s)", "pps auto (s)", "auto / tight", "pps reference (s)", "reference / tight"],
                [[r["n"], f"{r['tight_s']:.2e}", f"{r['pps_auto_s']:.2e}", f"{r['auto_over_tight']:.1f}",
                  f"{r['pps_reference_s']:.2f}", f"{r['reference_over_tight']:.0f}"] for r in timings])
    quality = _quality()
    print()
    print_table(["N", "eps", "m auto", "E[s] auto", "m reference (5 seeds)", "E[s] reference"],
                [[r["n"], r["epsilon"], r["m_auto"], f"{r['expected_auto']:.4f}",
                  " ".join(str(m) for m in r["m_reference"]), f"{r['expected_reference']:.4f}"] for r in quality])
    payload = {"meta": {"python": platform.python_version(), "machine": platform.machine(),
                        "alpha": ALPHA, "epsilon": EPSILON, "bins": BINS},
               "timings": timings, "quality": quality}
    save_result(OUTPUT, payload, save)


if __name__ == "__main__":
    main()
