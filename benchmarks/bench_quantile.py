"""Private quantiles as conformal calibrators: time, excess coverage and width at equal privacy (chapters 3, 16).

What a conformal user needs from a private quantile is a threshold :math:`\\hat q` whose coverage
:math:`P(S \\le \\hat q) = F(\\hat q)` is at least :math:`1-\\beta` (and not much more), fast. This benchmark reports,
in one run:

* **time** (CPU time of this process, best of interleaved rounds; all methods are single-threaded here) of one
  release on :math:`N \\in \\{10^4, \\dots, 10^7\\}` uniform scores at :math:`M = 1000`, and its ratio to the
  package default (the tight ``private_quantile``) and of the default to ``np.sort`` (the floor of sort-based
  methods). Each call is the package's function as a user calls it (for OpenDP this includes building its
  measurement and its integer scores, as ``opendp_quantile`` does on every call);
* **accuracy** on scores :math:`\\min(|Z|/4, 1)` (a residual score with a public bound of four standard
  deviations), for which the coverage of a release is exact given the release: :math:`F(q) = \\mathrm{erf}(4q/\\sqrt2)`.
  The excess coverage :math:`E[F(\\hat q)] - (1-\\beta)` (negative = under-coverage) and the mean threshold
  :math:`E[\\hat q]` (the interval half-width in units of the public bound :math:`B`) are Monte Carlo means over
  independent calibration sets (one release each; standard errors printed), with the share of trivial releases
  (:math:`\\hat q = 1`: infinite intervals).

Every method runs at **equal privacy**: :math:`\\varepsilon`-DP under replace-one with :math:`N` public (the book's
primary relation for the tight quantile). Conversions: the write-up's Algorithm 1 (``variant="original"``) is
:math:`\\varepsilon'/(2\\max(\\alpha_0, 1-\\alpha_0))`-DP at parameter :math:`\\varepsilon'`, so it runs at the
:math:`\\varepsilon'` that makes this :math:`\\varepsilon`; OpenDP and the Laplace histogram take
``relation="replace-one"``; P-COQS is zCDP and runs at :math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)`, the
tightest zCDP level an :math:`\\varepsilon`-DP mechanism has, so it receives only the weaker zCDP guarantee
(flagged).

Methods **with** a finite-sample coverage guarantee: ``tight`` (default), ``pps`` (private split CP, tight
exponent, chapter 4), ``opendp_corrected``, ``laplace_corrected``, ``pcoqs_corrected`` (zCDP), and ``unbounded``
(chapter 18: no score bound and no grid size; it ignores :math:`M`, and its time ratio to ``tight`` at
:math:`N = 10^7` is printed on its own line). **Without**
(flagged ``guarantee: false``): ``original`` (the write-up's Algorithm 1), ``opendp_raw`` (OpenDP at level
:math:`1-\\beta`), ``laplace_paper`` (the P-COQS paper's Lap_Hist), ``pcoqs_paper`` (P-COQS as published).

Grids: **equal** (:math:`M = 1000` cells or edges for every method with a grid; P-COQS rounds to
:math:`10^{-3}`), and **each method's best grid**, a data-independent choice: among
:math:`M \\in \\{100, 1000, 10^4, 10^5\\}` (OpenDP: up to :math:`10^4`) the one with the smallest excess coverage
(methods with a guarantee) or the smallest absolute coverage error (the others) on *uniform* pilot scores of the
same :math:`N` (public simulated data, never the evaluated scores); private split CP uses its own
``m="auto"`` rule.

Run: ``.venv/bin/python -m benchmarks quantile`` (``--save`` rewrites ``dpcp_tutorial/data/bench_quantile.json``).
"""

from __future__ import annotations

import math
import pathlib
import platform
import time

import numpy as np

from benchmarks._timing import print_table, save_result
from dpcp_tutorial import (
    laplace_histogram_quantile,
    opendp_quantile,
    pcoqs_corrected_level,
    pcoqs_quantile,
    pps_private_quantile,
    private_quantile,
    private_quantile_level,
    private_quantile_privacy_loss,
    unbounded_private_quantile,
)
from dpcp_tutorial.experiments._peer_workers import draw_scores

OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_quantile.json"
BETA, EPSILON = 0.1, 1.0
TIME_SIZES = (10**4, 10**5, 10**6, 10**7)
TIME_ROUNDS = {10**4: 9, 10**5: 7, 10**6: 5, 10**7: 3}
ACCURACY_SIZES = (10**3, 10**4, 10**5, 10**6)
REPEATS = {10**3: 200, 10**4: 100, 10**5: 30, 10**6: 8}
PILOT = {10**3: 60, 10**4: 30, 10**5: 10, 10**6: 4}
GRIDS = (100, 1000, 10**4, 10**5)
EQUAL_GRID = 1000
LAW = "halfnormal"        # evaluation law; the pilot (grid choice) uses "uniform"


def coverage_of(law: str, q: float) -> float:
    """Exact coverage :math:`F(q)` of a threshold for the benchmark's score laws."""
    q = min(max(q, 0.0), 1.0)
    if law == "uniform":
        return q
    return 1.0 if q >= 1.0 else math.erf(4.0 * q / math.sqrt(2.0))


def original_epsilon(n: int) -> float:
    """Parameter of the write-up's Algorithm 1 whose exact replace-one loss is ``EPSILON`` (fixed point)."""
    e = EPSILON
    for _ in range(100):
        e = EPSILON * 2.0 * max(private_quantile_level(BETA, n, e, variant="original"),
                                1.0 - private_quantile_level(BETA, n, e, variant="original"))
    assert abs(private_quantile_privacy_loss(BETA, n, e, variant="original") - EPSILON) < 1e-9
    return e


RHO = EPSILON * math.tanh(EPSILON / 2.0)


def _pcoqs_corrected(s, grid, rng):
    level = pcoqs_corrected_level(BETA, s.size, RHO)
    if level is None:
        return 1.0
    return pcoqs_quantile(s, level, RHO, decimals=_decimals(grid), rounding="up", n=s.size, rng=rng)


def _decimals(grid: int) -> int:
    return int(round(math.log10(grid)))


# name -> (has a coverage guarantee, grids it can use, release(scores, grid, rng))
METHODS = {
    "tight": (True, GRIDS, lambda s, m, g: private_quantile(s, BETA, EPSILON, bins=m, rng=g, n=s.size)),
    "pps": (True, GRIDS, lambda s, m, g: pps_private_quantile(s, BETA, EPSILON, m=m, rng=g, n=s.size)),
    "opendp_corrected": (True, GRIDS[:3], lambda s, m, g: opendp_quantile(
        s, BETA, EPSILON, bins=m, variant="corrected", relation="replace-one", n=s.size, rng=g)),
    "laplace_corrected": (True, GRIDS, lambda s, m, g: laplace_histogram_quantile(
        s, BETA, EPSILON, bins=m, variant="corrected", relation="replace-one", n=s.size, rng=g)),
    "pcoqs_corrected": (True, GRIDS, _pcoqs_corrected),
    "unbounded": (True, (EQUAL_GRID,), lambda s, m, g: unbounded_private_quantile(s, BETA, EPSILON, rng=g, n=s.size)),
    "original": (False, GRIDS, lambda s, m, g: private_quantile(
        s, BETA, original_epsilon(s.size), bins=m, rng=g, n=s.size, variant="original")),
    "opendp_raw": (False, GRIDS[:3], lambda s, m, g: opendp_quantile(
        s, BETA, EPSILON, bins=m, variant="raw", relation="replace-one", n=s.size, rng=g)),
    "laplace_paper": (False, GRIDS, lambda s, m, g: laplace_histogram_quantile(
        s, BETA, EPSILON, bins=m, variant="paper", relation="replace-one", n=s.size, rng=g)),
    "pcoqs_paper": (False, GRIDS, lambda s, m, g: pcoqs_quantile(
        s, BETA, RHO, decimals=_decimals(m), rounding="nearest", n=s.size, rng=g)),
}
PRIVACY = {"tight": "eps-DP, replace-one, N public", "pps": "eps-DP, replace-one, N public",
           "opendp_corrected": "eps-DP, replace-one (OpenDP's map, d_in = 2)",
           "laplace_corrected": "eps-DP, replace-one (Laplace scale 2/eps)",
           "pcoqs_corrected": "rho-zCDP with rho = eps tanh(eps/2) only (weaker than eps-DP)",
           "unbounded": "eps-DP, replace-one and add/remove (n public); no score bound, no grid",
           "original": "eps-DP, replace-one (run at eps' = 2 eps max(a0, 1 - a0))",
           "opendp_raw": "eps-DP, replace-one", "laplace_paper": "eps-DP, replace-one",
           "pcoqs_paper": "rho-zCDP with rho = eps tanh(eps/2) only (weaker than eps-DP)"}


def best_cpu_time(fn, min_total: float = 0.2) -> float:
    """CPU seconds per call of ``fn()``, from one round that loops until ``min_total`` CPU seconds have passed."""
    loops, start = 0, time.process_time()
    while True:
        fn()
        loops += 1
        elapsed = time.process_time() - start
        if elapsed >= min_total:
            return elapsed / loops


def timings() -> list[dict]:
    rows = []
    for n in TIME_SIZES:
        scores = draw_scores("uniform", n, [2026, n])
        fns = {"sort": lambda: np.sort(scores)}
        for name, (_, _, release) in METHODS.items():
            fns[name] = (lambda r=release: r(scores, EQUAL_GRID, 0))
        best = dict.fromkeys(fns, float("inf"))
        for _ in range(TIME_ROUNDS[n]):            # interleaved rounds: each method in turn, best of each
            for name, fn in fns.items():
                best[name] = min(best[name], best_cpu_time(fn))
        row = {"n": n, "bins": EQUAL_GRID, "seconds": best, "tight_over_sort": best["tight"] / best["sort"],
               "over_tight": {k: v / best["tight"] for k, v in best.items() if k not in ("sort", "tight")}}
        rows.append(row)
    return rows


def _evaluate(name: str, n: int, grid, law: str, repeats: int, seed: int) -> dict | None:
    """Mean coverage, excess, threshold and trivial share of one method on ``repeats`` calibration sets."""
    _, _, release = METHODS[name]
    gen = np.random.default_rng([seed, n])
    cover, thresholds = [], []
    for r in range(repeats):
        scores = draw_scores(law, n, [seed, n, r])
        try:
            q = release(scores, grid, gen)
        except ValueError:                         # infeasible at these public parameters (e.g. tiny N, huge M)
            return None
        cover.append(coverage_of(law, q))
        thresholds.append(q)
    cover, thresholds = np.array(cover), np.array(thresholds)
    se = float(cover.std(ddof=1) / math.sqrt(repeats))
    return {"grid": grid, "coverage": float(cover.mean()), "coverage_se": se,
            "excess_coverage": float(cover.mean() - (1 - BETA)), "threshold": float(thresholds.mean()),
            "threshold_se": float(thresholds.std(ddof=1) / math.sqrt(repeats)),
            "trivial_share": float(np.mean(thresholds >= 1.0)), "repeats": repeats}


def accuracy() -> list[dict]:
    rows = []
    for n in ACCURACY_SIZES:
        for name, (guarantee, grids, _) in METHODS.items():
            # best grid: chosen on uniform pilot scores (public simulated data), never on the evaluated scores
            if name == "pps":
                best_grid, pilot = "auto", None
            else:
                pilot = {}
                for m in grids:
                    res = _evaluate(name, n, m, "uniform", PILOT[n], seed=7)
                    if res is not None:
                        pilot[m] = res["excess_coverage"]
                score = (lambda m: pilot[m]) if guarantee else (lambda m: abs(pilot[m]))
                best_grid = min(pilot, key=score) if pilot else None
            equal = _evaluate(name, n, EQUAL_GRID, LAW, REPEATS[n], seed=11)
            best = None if best_grid is None else _evaluate(name, n, best_grid, LAW, REPEATS[n], seed=11)
            rows.append({"n": n, "method": name, "guarantee": guarantee, "privacy": PRIVACY[name],
                         "equal_grid": equal, "best_grid": best,
                         "pilot_excess_by_grid": None if pilot is None else {str(k): v for k, v in pilot.items()}})
    return rows


def _fmt(res: dict | None) -> str:
    if res is None:
        return "infeasible"
    return f"{res['excess_coverage']:+.4f}±{res['coverage_se']:.4f} q={res['threshold']:.4f}"


def main(save: bool = False) -> None:
    start = time.perf_counter()
    t_rows = timings()
    names = [k for k in METHODS if k != "tight"]
    print(f"time of one release, M={EQUAL_GRID}, beta={BETA}, eps={EPSILON} (equal privacy, see the module "
          "docstring); CPU time, best of interleaved rounds")
    print_table(["N", "tight ms", "tight/sort"] + [f"{k}/tight" for k in names],
                [[f"{r['n']:.0e}", f"{1e3 * r['seconds']['tight']:.2f}", f"{r['tight_over_sort']:.2f}"]
                 + [f"{r['over_tight'][k]:.1f}" for k in names] for r in t_rows])
    top = t_rows[-1]
    print(f"unbounded (no score bound) / bounded tight at N={top['n']:.0e}: {top['over_tight']['unbounded']:.2f} "
          "(target <= 2)")
    a_rows = accuracy()
    for label in ("equal_grid", "best_grid"):
        print(f"\nexcess coverage E[F(q)] - {1 - BETA:g} ± SE and mean threshold q, scores min(|Z|/4, 1), "
              f"{label.replace('_', ' ')}; * = no coverage guarantee")
        rows = []
        for name in METHODS:
            rows.append([("" if METHODS[name][0] else "*") + name]
                        + [_fmt(r[label]) + ("" if label == "equal_grid" or r[label] is None
                                             else f" M={r[label]['grid']}")
                           for n in ACCURACY_SIZES for r in a_rows if r["n"] == n and r["method"] == name])
        print_table(["method"] + [f"N={n:.0e}" for n in ACCURACY_SIZES], rows)
    width = {}
    for n in ACCURACY_SIZES:
        base = next(r for r in a_rows if r["n"] == n and r["method"] == "tight")["best_grid"]
        width[str(n)] = {r["method"]: (r["best_grid"]["threshold"] / base["threshold"]
                                       if r["best_grid"] and base else None)
                         for r in a_rows if r["n"] == n}
    payload = dict(command=".venv/bin/python -m benchmarks quantile --save", clock="process_time", beta=BETA,
                   epsilon=EPSILON, relation="replace-one, N public", rho_for_zcdp=RHO, equal_grid=EQUAL_GRID,
                   grids=list(GRIDS), accuracy_law="min(|Z|/4, 1)", pilot_law="uniform",
                   machine=platform.machine(), numpy=np.__version__, timing=t_rows, accuracy=a_rows,
                   threshold_over_tight_best_grid=width, seconds=round(time.perf_counter() - start, 1))
    save_result(OUTPUT, payload, save)


if __name__ == "__main__":
    import sys

    main(save="--save" in sys.argv[1:])
