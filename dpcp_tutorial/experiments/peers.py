"""PipelineDP and Tumult Analytics as conformal calibrators at scale, against the tight private quantile (chapter 14).

Both engines release a private percentile of a column; used as a conformal
threshold, the release :math:`\\hat q` covers a new score with probability
:math:`F(\\hat q)` given the release, where :math:`F` is the score law. The
runner draws calibration sets of :math:`N \\in \\{10^5, 10^6, 10^7\\}` scores in
[0, 1] from two known continuous laws (``uniform``; ``halfnormal``,
:math:`\\min(|Z|/4, 1)`), so the coverage of every release is exact given the
release, and the marginal coverage :math:`E[F(\\hat q)]` is a Monte Carlo mean
over independent data sets (binomial-free: the standard error is that of the
per-data-set means).

**The mechanisms.**

* *PipelineDP* (``pipeline_dp.Metrics.PERCENTILE``): Google's quantile tree
  (height :math:`h = 4`, branching :math:`b = 16`, :math:`16^4` leaves over
  [0, 1]); every node count gets Laplace noise of scale
  :math:`h\\,\\ell_0\\,\\ell_\\infty/\\varepsilon` (here :math:`\\ell_0 = \\ell_\\infty = 1`:
  one record per privacy unit, one public partition), and a top-down search
  follows the noisy fractions to the requested rank :math:`pN` (no
  :math:`(n+1)` correction), ignoring at each node the children whose noisy
  count is below :math:`0.5\\%` of the siblings' total, and interpolates inside
  the final leaf. The coverage Monte Carlo calls the engine's own
  ``pipeline_dp.dp_computations.compute_dp_quantiles`` on the engine's tree
  (``pydp`` ``QuantileTree``, built as PipelineDP's ``QuantileCombiner`` builds
  it); the timings run the full ``DPEngine.aggregate`` pipeline on the
  LocalBackend and, in another interpreter, on Apache Beam's DirectRunner.
  Its noise is drawn by the C++ library and cannot be seeded.
* *Tumult Analytics* (``QueryBuilder.quantile`` in a ``Session`` with
  ``AddOneRow``): the continuous exponential mechanism over the intervals
  between sorted scores, density :math:`\\propto \\exp(-\\varepsilon\\,|r - pN|/(2\\max(p, 1-p)))`
  with :math:`r` the rank of the interval; the Monte Carlo calls the
  measurement the query compiles into (``tmlt.core`` ``NoisyQuantile`` on a
  pandas Series), the timing runs the Session on a local Spark. Its noise
  cannot be seeded either.
* *Ours*: :func:`dpcp_tutorial.private_quantile` (tight), with ``bins=1000``
  (the default) and ``bins=65536`` (the resolution of PipelineDP's leaves);
  its coverage given the data is exact over the mechanism's law
  (:func:`dpcp_tutorial.private_quantile_probabilities`). On Dask
  (:func:`dpcp_tutorial.scale.private_quantile`) the release is identical for
  the same ``rng`` (checked here), so only its time is measured separately.

**Equal privacy.** PipelineDP bounds contributions per *privacy unit*; with one
record per unit its guarantee is :math:`\\varepsilon`-DP for adding or removing
one record, with the record count private. Tumult's ``AddOneRow`` is the same
relation. Under ``relation="add/remove"`` (the engines' own) every method gets
the same :math:`\\varepsilon`: PipelineDP and Tumult their nominal
:math:`\\varepsilon`; ours the parameter :math:`\\varepsilon'` at which its exact
add/remove loss with the level recomputed from the data's own size
(:func:`dpcp_tutorial.private_quantile_privacy_loss` with ``public_n=False``,
between sizes :math:`N-1, N, N+1`) equals :math:`\\varepsilon`. Under
``relation="replace-one"`` (:math:`N` public): ours at :math:`\\varepsilon`;
PipelineDP at :math:`\\varepsilon/2` (replacing a record moves one count down
and one up on each of :math:`h` levels, :math:`\\ell_1` distance :math:`2h`
against noise scaled for :math:`h`: loss :math:`2\\times` its parameter);
Tumult at :math:`\\varepsilon\\max(p, 1-p)` (a replacement moves every rank by at
most 1 with :math:`pN` fixed: loss :math:`\\varepsilon/\\max(p, 1-p)`).

**Level shift.** PipelineDP's release at :math:`p = 1-\\beta` is not a
calibrator with a guarantee. Two parts of a shift are reported: the
*noise-free* part, derived from its search on the exact leaf probabilities of
the law (no noise; :func:`noiseless_tree_quantile`, checked against the engine
at a huge :math:`\\varepsilon` in the tests), i.e. the smallest :math:`p` with
:math:`F(\\hat q_\\infty(p)) \\ge 1-\\beta`; and the *empirical* shift: the
smallest :math:`s` on a grid with Monte Carlo coverage at :math:`p = 1-\\beta+s`
at least :math:`1-\\beta` (point estimate) and at least :math:`1-\\beta` minus
two standard errors never failing. Neither is a guarantee for other laws: the
runner also evaluates a constructed law on which the tree's 99.5th percentile
(the largest level it answers) covers less than :math:`1-\\beta`, so no shift
guarantees coverage for every law.

The result is committed as ``dpcp_tutorial/data/peers.json`` and read by
chapter 14; ``python -m benchmarks peers`` prints the same-run ratios.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import platform
import subprocess
import sys
import time
import warnings

import numpy as np
from tqdm import tqdm

from ._peer_workers import HALFNORMAL_BOUND, LAWS, draw_scores, pipeline_dp_local
from ._timing import best_time

DESCRIPTION = ("PipelineDP and Tumult Analytics private percentiles as conformal thresholds vs the tight "
               "private quantile (in memory and on Dask), N = 1e5..1e7, eps 0.3/1/3 (chapter 14)")

RELATIONS = ("add/remove", "replace-one")
TREE_HEIGHT, BRANCHING, FILTER, TOLERANCE, CLAMP = 4, 16, 0.005, 1e-6, (0.005, 0.995)
SHIFTS = (0.0, 0.00025, 0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.0075, 0.01, 0.015, 0.02, 0.03,
          0.05, 0.0949)
WORKERS_FILE = pathlib.Path(__file__).with_name("_peer_workers.py")


# --------------------------------------------------------------------------- score laws

def law_cdf(law: str, x):
    """The score law's CDF :math:`F(x)` (exact coverage of a threshold ``x``)."""
    from scipy.special import erf

    x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    if law == "uniform":
        return x
    if law == "halfnormal":
        return np.where(x >= 1.0, 1.0, erf(HALFNORMAL_BOUND * x / math.sqrt(2.0)))
    if law == "adversarial":
        return _adversarial_cdf(x)
    raise ValueError(f"unknown law {law!r}")


# The constructed law: at the first two levels of the tree, 15 of the 16 children each hold a mass just
# below the search's 0.5 % filter (4.5 per mille of their parent), the first child the rest; uniform inside.
_ADV_SMALL = 0.0045


def _adversarial_cells():
    """(left, right, mass) of the constructed law's pieces of constant density, left to right."""
    cells = []
    inner_mass = 1.0 - 15 * _ADV_SMALL
    w1, w2 = 1.0 / 16, 1.0 / 256
    cells.append((0.0, w2, inner_mass * inner_mass))
    for k in range(1, 16):
        cells.append((k * w2, (k + 1) * w2, inner_mass * _ADV_SMALL))
    for k in range(1, 16):
        cells.append((k * w1, (k + 1) * w1, _ADV_SMALL))
    return cells


def _adversarial_cdf(x):
    out = np.zeros_like(x)
    for left, right, mass in _adversarial_cells():
        out += mass * np.clip((x - left) / (right - left), 0.0, 1.0)
    return out


def _adversarial_sample(n: int, key) -> np.ndarray:
    gen = np.random.default_rng(key)
    cells = _adversarial_cells()
    masses = np.array([c[2] for c in cells])
    which = gen.choice(len(cells), size=n, p=masses / masses.sum())
    left = np.array([c[0] for c in cells])[which]
    right = np.array([c[1] for c in cells])[which]
    return left + gen.uniform(size=n) * (right - left)


# --------------------------------------------------------------------------- PipelineDP's quantile tree

def pipeline_dp_tree(scores: np.ndarray):
    """The engine's quantile tree of ``scores``, built as PipelineDP's ``QuantileCombiner`` builds it."""
    from pipeline_dp.combiners import QuantileAccumulator
    from pydp.algorithms.quantile_tree import QuantileTree

    assert (QuantileAccumulator.TREE_HEIGHT, QuantileAccumulator.BRANCHING_FACTOR) == (TREE_HEIGHT, BRANCHING)
    tree = QuantileTree(0.0, 1.0, TREE_HEIGHT, BRANCHING)
    add = tree.add_entry
    for value in scores.tolist():
        add(value)
    return tree


def pipeline_dp_releases(tree, epsilon: float, levels) -> list[float]:
    """One draw of PipelineDP's private quantiles at ``levels`` (one noisy tree shared by all levels)."""
    from pipeline_dp import aggregate_params, budget_accounting, dp_computations

    spec = budget_accounting.MechanismSpec(aggregate_params.MechanismType.LAPLACE, _eps=float(epsilon), _delta=0.0)
    return dp_computations.compute_dp_quantiles(tree, spec, [float(p) for p in levels], 1, 1)


def leaf_counts(scores: np.ndarray) -> np.ndarray:
    """Leaf counts of the tree: a value :math:`x` goes to leaf :math:`\\lfloor x(L-1) \\rfloor`, :math:`L = 16^4`."""
    leaves = BRANCHING ** TREE_HEIGHT
    return np.bincount(np.floor(np.clip(scores, 0.0, 1.0) * (leaves - 1)).astype(np.int64), minlength=leaves)


def leaf_masses(law: str) -> np.ndarray:
    """Exact leaf probabilities of a law (the noise-free, :math:`N \\to \\infty` tree).

    Leaf :math:`k < L-1` holds :math:`[k/(L-1), (k+1)/(L-1))`, the last leaf the scores equal to 1.
    """
    leaves = BRANCHING ** TREE_HEIGHT
    cdf = law_cdf(law, np.arange(leaves, dtype=float) / (leaves - 1))
    below_one = float(law_cdf(law, np.nextafter(1.0, 0.0)))      # F(1-): without an atom at 1
    masses = np.diff(cdf)                                          # leaves 0 .. L-2
    masses[-1] = below_one - cdf[-2]
    return np.concatenate([masses, [1.0 - below_one]])


def noiseless_tree_quantile(counts: np.ndarray, level: float) -> float:
    """PipelineDP's (Google's) quantile-tree search on exact counts: the release without noise.

    Mirrors the search of ``QuantileTree::Privatized::GetQuantile``: clamp the
    level to [0.005, 0.995]; at each node, drop the children whose count is
    below 0.5 % of the siblings' total, walk the kept children until the
    cumulative fraction reaches the level (tolerance 1e-6), rescale the level
    inside the chosen child; interpolate linearly inside the final leaf,
    whose range is :math:`[k/L, (k+1)/L]`.
    """
    leaves = counts.size
    level = min(max(float(level), CLAMP[0]), CLAMP[1])
    low, width = 0, leaves
    for _ in range(TREE_HEIGHT):
        step = width // BRANCHING
        children = counts[low:low + width].reshape(BRANCHING, step).sum(axis=1).astype(float)
        total = children.sum()
        if total <= 0:
            break
        kept = np.where(children >= total * FILTER, children, 0.0)
        corrected = kept.sum()
        if corrected <= 0:
            break
        partial = 0.0
        for i, count in enumerate(children):
            partial += count if count >= total * FILTER else 0.0
            if partial / corrected >= level - TOLERANCE:
                level = min(max((level - (partial - count) / corrected) / (count / corrected), 0.0), 1.0)
                low, width = low + i * step, step
                break
    return (1.0 - level) * low / leaves + level * (low + width) / leaves


def _noise_free_level(law: str, beta: float) -> dict:
    """Derived (noise-free) part of the level shift: the smallest p with F(q_inf(p)) >= 1 - beta."""
    masses = leaf_masses(law)
    at_nominal = float(law_cdf(law, noiseless_tree_quantile(masses, 1.0 - beta)))
    lo, hi = 1.0 - beta, CLAMP[1]
    if float(law_cdf(law, noiseless_tree_quantile(masses, hi))) < 1.0 - beta:
        return {"coverage_at_nominal": at_nominal, "level_needed": None,
                "coverage_at_top_level": float(law_cdf(law, noiseless_tree_quantile(masses, hi)))}
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if float(law_cdf(law, noiseless_tree_quantile(masses, mid))) >= 1.0 - beta:
            hi = mid
        else:
            lo = mid
    return {"coverage_at_nominal": at_nominal, "level_needed": hi, "shift_needed": hi - (1.0 - beta)}


# --------------------------------------------------------------------------- our side

def ours_add_remove_epsilon(beta: float, n: int, target: float, bins: int) -> float:
    """Parameter of the tight quantile whose exact add/remove loss (size private) is ``target`` (sizes n-1..n+1)."""
    from ..quantile import private_quantile_privacy_loss

    def loss(e):
        return max(private_quantile_privacy_loss(beta, m, e, bins, relation="add/remove", public_n=False)
                   for m in (n - 1, n))

    lo, hi = 0.5 * target, 2.0 * target
    while loss(lo) > target:          # near the feasibility limit the recomputed level costs more than eps
        lo *= 0.5
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if loss(mid) <= target:
            lo = mid
        else:
            hi = mid
    return lo


def parameters(relation: str, epsilon: float, beta: float, n: int, bins: int) -> dict:
    """The parameter each method runs at so that all are ``epsilon``-DP under ``relation``."""
    p = 1.0 - beta
    if relation == "add/remove":
        return {"pipeline_dp": epsilon, "tumult": epsilon, "ours": ours_add_remove_epsilon(beta, n, epsilon, bins)}
    return {"pipeline_dp": epsilon / 2.0, "tumult": epsilon * max(p, 1.0 - p), "ours": epsilon}


def ours_exact(scores: np.ndarray, law: str, beta: float, epsilon: float, bins: int, relation: str):
    """Exact coverage E[F(q)] and mean threshold E[q] of the tight quantile given the data (over its noise)."""
    from ..quantile import private_quantile_probabilities

    n = scores.size if relation == "replace-one" else None       # add/remove: the level from the data's size
    edges, prob = private_quantile_probabilities(scores, beta, epsilon, bins, n=n)
    return float(prob @ law_cdf(law, edges)), float(prob @ edges)


# --------------------------------------------------------------------------- helpers

def _mean_se(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")


def _parse_counts(text: str) -> dict[int, int]:
    out = {}
    for item in text.split(","):
        n, r = item.split(":")
        out[int(float(n))] = int(r)
    return out


def _interpreter_has(python: str, module: str) -> bool:
    try:
        return subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=300).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _run_worker(python: str, spec: dict, timeout: float) -> dict:
    """Run one task of ``_peer_workers.py`` in ``python``; the result, or what stopped it."""
    start = time.perf_counter()
    try:
        proc = subprocess.run([python, str(WORKERS_FILE), json.dumps(spec)], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    except subprocess.TimeoutExpired:
        return {"ok": False, "stopped_by": f"timeout after {timeout:.0f} s", "seconds": time.perf_counter() - start}
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or "").strip().splitlines()[-5:]
        return {"ok": False, "stopped_by": f"exit code {proc.returncode}: " + " | ".join(tail),
                "seconds": time.perf_counter() - start}
    result = json.loads(lines[-1])
    result.update(ok=True, seconds=time.perf_counter() - start)
    return result


# --------------------------------------------------------------------------- the runner

def add_arguments(parser) -> None:
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e5, 1e6, 1e7], help="calibration sizes N")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    parser.add_argument("--beta", type=float, default=0.1, help="miscoverage level passed to every method")
    parser.add_argument("--laws", nargs="+", default=list(LAWS), choices=list(LAWS))
    parser.add_argument("--datasets", default="100000:40,1000000:16,10000000:5",
                        help="independent calibration sets per size, N:count,...")
    parser.add_argument("--noise-draws", type=int, default=40, help="PipelineDP releases per data set")
    parser.add_argument("--bins", type=int, nargs="+", default=[1000, 65536], help="grids of the tight quantile")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--time-sizes", type=float, nargs="+", default=None,
                        help="sizes for the timings (default: --sizes)")
    parser.add_argument("--dask-workers", type=int, default=2)
    parser.add_argument("--beam-python", default=os.environ.get("DPCP_PEERS_BEAM_PYTHON"),
                        help="a Python with apache-beam and pipeline-dp (default: $DPCP_PEERS_BEAM_PYTHON, else "
                             "this one if it has them; 'none' skips Beam)")
    parser.add_argument("--beam-sizes", type=float, nargs="+", default=[1e5, 1e6])
    parser.add_argument("--tumult-python", default=os.environ.get("DPCP_PEERS_TUMULT_PYTHON"),
                        help="a Python with tmlt.analytics (default: $DPCP_PEERS_TUMULT_PYTHON, else this one if "
                             "it has it; 'none' skips Tumult)")
    parser.add_argument("--tumult-n", type=float, default=1e5, help="size of the Tumult coverage Monte Carlo")
    parser.add_argument("--tumult-reps", type=int, default=8)
    parser.add_argument("--tumult-sizes", type=float, nargs="*", default=[1e5, 1e6],
                        help="Tumult Session timing sizes (none: no timing)")
    parser.add_argument("--worker-timeout", type=float, default=3600.0, help="seconds per Beam/Tumult task")
    parser.add_argument("--only", nargs="*", choices=PHASES, default=None,
                        help="run only these phases (default: all); with --merge, the others come from earlier results")
    parser.add_argument("--merge", nargs="*", type=pathlib.Path, default=None,
                        help="start from these earlier results of this runner (each phase keeps the command that "
                             "produced it in meta.phases)")


def _coverage_block(args, bar) -> dict:
    beta = args.beta
    sizes = [int(n) for n in args.sizes]
    counts = _parse_counts(args.datasets)
    levels = [1.0 - beta + s for s in SHIFTS]
    out = {}
    for law in args.laws:
        for n in sizes:
            reps = counts.get(n, 4)
            cells = {(rel, eps): {"pdp": [], "pdp_q": [], "ours": {m: ([], []) for m in args.bins}}
                     for rel in RELATIONS for eps in args.epsilons}
            params = {(rel, eps, m): parameters(rel, eps, beta, n, m)
                      for rel in RELATIONS for eps in args.epsilons for m in args.bins}
            for r in range(reps):
                scores = draw_scores(law, n, [args.seed, LAWS.index(law), n, r])
                tree = pipeline_dp_tree(scores)
                for (rel, eps), cell in cells.items():
                    pdp_eps = params[(rel, eps, args.bins[0])]["pipeline_dp"]
                    draws = np.array([pipeline_dp_releases(tree, pdp_eps, levels) for _ in range(args.noise_draws)])
                    cell["pdp"].append(law_cdf(law, draws).mean(axis=0))       # per level
                    cell["pdp_q"].append(draws[:, 0].mean())
                    for m in args.bins:
                        cov, q = ours_exact(scores, law, beta, params[(rel, eps, m)]["ours"], m, rel)
                        cell["ours"][m][0].append(cov)
                        cell["ours"][m][1].append(q)
                bar.update(1)
            for (rel, eps), cell in cells.items():
                pdp = np.array(cell["pdp"])                      # (reps, levels)
                means = pdp.mean(axis=0)
                ses = pdp.std(axis=0, ddof=1) / math.sqrt(reps) if reps > 1 else np.full(len(levels), np.nan)
                point = next((s for s, m in zip(SHIFTS, means) if m >= 1.0 - beta), None)
                lower = next((s for s, m, e in zip(SHIFTS, means, ses) if m - 2 * e >= 1.0 - beta), None)
                q_mean, q_se = _mean_se(cell["pdp_q"])
                row = {"law": law, "n": n, "relation": rel, "epsilon": eps, "datasets": reps,
                       "noise_draws": args.noise_draws,
                       "pipeline_dp": {"parameter": params[(rel, eps, args.bins[0])]["pipeline_dp"],
                                       "coverage": float(means[0]), "coverage_se": float(ses[0]),
                                       "excess_coverage": float(means[0] - (1 - beta)),
                                       "threshold": q_mean, "threshold_se": q_se,
                                       "coverage_by_shift": {f"{s:g}": [float(m), float(e)]
                                                             for s, m, e in zip(SHIFTS, means, ses)},
                                       "empirical_shift": point, "empirical_shift_2se": lower},
                       "ours": {}}
                for m in args.bins:
                    cov, cov_se = _mean_se(cell["ours"][m][0])
                    q, q_se = _mean_se(cell["ours"][m][1])
                    row["ours"][str(m)] = {"parameter": params[(rel, eps, m)]["ours"], "coverage": cov,
                                           "coverage_se": cov_se, "excess_coverage": cov - (1 - beta),
                                           "threshold": q, "threshold_se": q_se}
                out.setdefault("rows", []).append(row)
    return out


def _adversarial_block(args) -> dict:
    """The constructed law: noise-free and engine releases at the top level 0.995 and at 1 - beta."""
    beta = args.beta
    masses = leaf_masses("adversarial")
    scores = _adversarial_sample(10**6, [args.seed, 99])
    tree = pipeline_dp_tree(scores)
    draws = np.array([pipeline_dp_releases(tree, 1.0, [1.0 - beta, CLAMP[1]]) for _ in range(50)])
    return {"n": 10**6, "epsilon": 1.0, "small_cell_mass": _ADV_SMALL,
            "noise_free": {f"{p:g}": float(law_cdf("adversarial", noiseless_tree_quantile(masses, p)))
                           for p in (1.0 - beta, CLAMP[1])},
            "engine_coverage": {f"{1 - beta:g}": float(law_cdf("adversarial", draws[:, 0]).mean()),
                                f"{CLAMP[1]:g}": float(law_cdf("adversarial", draws[:, 1]).mean())},
            "engine_requested_100": float(law_cdf("adversarial", np.array(
                pipeline_dp_releases(tree, 1.0, [1.0])))[0])}


def _timing_block(args, bar) -> dict:
    from .. import private_quantile, scale

    beta, eps, law = args.beta, 1.0, "uniform"
    sizes = [int(n) for n in (args.time_sizes or args.sizes)]
    rows = []
    client = scale.local_cluster(n_workers=args.dask_workers)
    try:
        for n in sizes:
            scores = draw_scores(law, n, [args.seed, 0, n, 10**6])
            ours_eps = ours_add_remove_epsilon(beta, n, eps, 1000)
            t_memory = best_time(lambda: private_quantile(scores, beta, ours_eps, rng=1), 5)
            import dask.array as da

            with warnings.catch_warnings():       # the in-memory scores travel once, in the graph
                warnings.filterwarnings("ignore", message="Sending large graph of size", category=UserWarning)
                resident = client.persist(da.from_array(scores, chunks=10**6))
            equal = all(scale.private_quantile(resident, beta, ours_eps, rng=r, client=client)
                        == private_quantile(scores, beta, ours_eps, rng=r) for r in range(3))
            t_dask = best_time(lambda: scale.private_quantile(resident, beta, ours_eps, rng=1, client=client), 3)
            del resident
            start_cpu, start = time.process_time(), time.perf_counter()
            q_local = pipeline_dp_local(scores, eps, 100.0 * (1.0 - beta))
            t_local, cpu_local = time.perf_counter() - start, time.process_time() - start_cpu
            rows.append({"n": n, "ours_memory_s": t_memory, "ours_dask_s": t_dask, "dask_equal_releases": equal,
                         "pipeline_dp_local_s": t_local, "pipeline_dp_local_cpu_s": cpu_local,
                         "pipeline_dp_local_release": q_local,
                         "local_over_ours_memory": t_local / t_memory, "local_over_ours_dask": t_local / t_dask})
            bar.update(1)
    finally:
        client.close()
    return {"law": law, "epsilon": eps, "relation": "add/remove", "rows": rows}


PHASES = ("coverage", "timing", "beam", "tumult")


def _ours_times(args, sizes) -> dict:
    """In-memory time of the tight quantile (equal add/remove privacy), measured in the calling process."""
    from .. import private_quantile

    out = {}
    for n in sizes:
        scores = draw_scores("uniform", n, [args.seed, 0, n, 10**6])
        eps = ours_add_remove_epsilon(args.beta, n, 1.0, 1000)
        out[n] = best_time(lambda: private_quantile(scores, args.beta, eps, rng=1), 5)
    return out


def _phase_ran(phase: str, value: dict) -> bool:
    """Whether a phase of an earlier result produced anything (a killed or skipped peer did not)."""
    if phase == "beam":
        return bool(value.get("ok"))
    if phase == "tumult":
        return any(r.get("ok") for r in value.get("rows", [])) or bool(value.get("timing", {}).get("ok"))
    return True


def _merge(files) -> dict:
    """A result assembled from earlier results: for each phase, the last file whose phase ran to the end."""
    result = {}
    for path in files or []:
        earlier = json.loads(pathlib.Path(path).read_text())
        if "phases" not in earlier.get("meta", {}):          # one invocation ran every phase in the file
            earlier.setdefault("meta", {})["phases"] = {
                phase: [{"command": earlier["meta"].get("command"), "seconds_of_the_whole_run":
                         earlier["meta"].get("seconds")}] for phase in PHASES if phase in earlier}
        for key, value in earlier.items():
            if key == "meta":
                phases = result.setdefault("meta", {}).setdefault("phases", {})
                for phase, entries in value.get("phases", {}).items():
                    ok = _phase_ran(phase, earlier.get(phase, {}))
                    if ok:
                        phases[phase] = phases.get(phase, []) + ([entries] if isinstance(entries, dict)
                                                                 else list(entries))
            elif key in ("beam", "tumult") and not value.get("ok", True) and key in result:
                continue
            elif key == "tumult" and key in result and "rows" in value:
                # Monte Carlo rows of other budgets are added; a timing that ran replaces one that did not
                rows = {r["epsilon"]: r for r in result[key].get("rows", [])}
                rows.update({r["epsilon"]: r for r in value["rows"] if r.get("ok") or r["epsilon"] not in rows})
                merged = {**result[key], **{k: v for k, v in value.items() if k not in ("rows", "timing")},
                          "rows": [rows[e] for e in sorted(rows)]}
                if value.get("timing", {}).get("ok") or "timing" not in merged:
                    merged["timing"] = value.get("timing", {"ok": False, "stopped_by": "not run"})
                    if "ours_memory_s" in value:
                        merged["ours_memory_s"] = value["ours_memory_s"]
                result[key] = merged
            else:
                result[key] = value
    return result


def run(args) -> dict:
    quiet = getattr(args, "quiet", False)
    try:
        import pipeline_dp
    except ImportError as exc:
        raise SystemExit(f"the peers runner needs PipelineDP: pip install 'dpcp_tutorial[peers]' ({exc})")
    phases = PHASES if args.only is None else tuple(args.only)
    command = "python -m dpcp_tutorial.experiments " + " ".join(sys.argv[1:])
    result = _merge(args.merge)
    result.update({"beta": args.beta, "epsilons": args.epsilons, "laws": list(args.laws), "bins": args.bins,
                   "seed": args.seed, "shifts": list(SHIFTS),
                   "tree": {"height": TREE_HEIGHT, "branching": BRANCHING, "filter": FILTER,
                            "clamp": list(CLAMP)}})
    meta = result.setdefault("meta", {})
    meta.setdefault("phases", {})
    counts = _parse_counts(args.datasets)
    total = (sum(counts.get(int(n), 4) for n in args.sizes) * len(args.laws) if "coverage" in phases else 0) \
        + (len(args.time_sizes or args.sizes) if "timing" in phases else 0)

    def done(phase, start):
        meta["phases"][phase] = meta["phases"].get(phase, []) + [
            {"command": command, "seconds": round(time.perf_counter() - start, 1),
             "load_average": [round(x, 2) for x in os.getloadavg()]}]

    with tqdm(total=total, desc="peers", disable=quiet or not total) as bar:
        if "coverage" in phases:
            start = time.perf_counter()
            result["coverage"] = _coverage_block(args, bar)
            result["noise_free"] = {law: _noise_free_level(law, args.beta) for law in args.laws}
            result["adversarial"] = _adversarial_block(args)
            done("coverage", start)
        if "timing" in phases:
            start = time.perf_counter()
            result["timing"] = _timing_block(args, bar)
            done("timing", start)

    beam_python = args.beam_python or (sys.executable if _interpreter_has(sys.executable, "apache_beam") else None)
    if "beam" in phases:
        start = time.perf_counter()
        if beam_python in (None, "none"):
            result["beam"] = {"ok": False, "stopped_by": "no interpreter with apache-beam given (--beam-python)"}
        else:
            spec = {"task": "beam_time", "law": "uniform", "key": [args.seed, 0], "epsilon": 1.0,
                    "percentile": 100.0 * (1.0 - args.beta), "sizes": [int(n) for n in args.beam_sizes]}
            result["beam"] = _run_worker(beam_python, spec, args.worker_timeout)
            result["beam"]["ours_memory_s"] = {str(n): t for n, t in _ours_times(args, spec["sizes"]).items()}
            result["beam"]["interpreter"] = _which(beam_python)
        done("beam", start)
    tumult_python = args.tumult_python or (sys.executable if _interpreter_has(sys.executable, "tmlt.analytics")
                                           else None)
    if "tumult" in phases:
        start = time.perf_counter()
        if tumult_python in (None, "none"):
            result["tumult"] = {"ok": False,
                                "stopped_by": "no interpreter with tmlt.analytics given (--tumult-python)"}
        else:
            result["tumult"] = _tumult_block(args, tumult_python, quiet)
            result["tumult"]["interpreter"] = _which(tumult_python)
        done("tumult", start)
    if "timing" in result:
        result["same_run_ratios"] = _ratios(result)
    meta.update({"versions": {"pipeline-dp": pipeline_dp.__version__, "numpy": np.__version__,
                              "python": platform.python_version()}, "cpus": os.cpu_count()})
    return result


def _which(python):
    """Which interpreter ran a peer (no machine path in the result)."""
    if python in (None, "none"):
        return None
    return "this interpreter" if python == sys.executable else "a separate environment (see the versions reported)"


def _tumult_block(args, python: str, quiet: bool) -> dict:
    beta, n = args.beta, int(args.tumult_n)
    out = {"n": n, "relation": "add/remove", "rows": []}
    for eps in tqdm(args.epsilons, desc="tumult", disable=quiet):
        spec = {"task": "tumult_release", "law": "uniform", "n": n, "epsilon": eps, "levels": [1.0 - beta],
                "reps": args.tumult_reps, "key": [args.seed, 0, n, int(round(eps * 1000))]}
        res = _run_worker(python, spec, args.worker_timeout)
        if not res["ok"]:
            out["rows"].append({"epsilon": eps, **res})
            continue
        cover = law_cdf("uniform", np.array(res["releases"][0]))
        mean, se = _mean_se(cover)
        ours = ours_exact(draw_scores("uniform", n, spec["key"] + [0]), "uniform", beta,
                          ours_add_remove_epsilon(beta, n, eps, 1000), 1000, "add/remove")
        out["rows"].append({"epsilon": eps, "ok": True, "reps": args.tumult_reps, "coverage": mean,
                            "coverage_se": se, "excess_coverage": mean - (1 - beta),
                            "threshold": float(np.mean(res["releases"][0])),
                            "privacy_map_d_in_1": res["privacy_map_d_in_1"],
                            "seconds_per_release": res["seconds"] / args.tumult_reps,
                            "ours_one_dataset_coverage": ours[0]})
    if not args.tumult_sizes:
        out["timing"] = {"ok": False, "stopped_by": "not requested (--tumult-sizes)"}
        return out
    spec = {"task": "tumult_time", "law": "uniform", "key": [args.seed, 0], "epsilon": 1.0, "level": 1.0 - beta,
            "sizes": [int(x) for x in args.tumult_sizes]}
    out["timing"] = _run_worker(python, spec, args.worker_timeout)
    out["ours_memory_s"] = {str(n): t for n, t in _ours_times(args, spec["sizes"]).items()}
    return out


def _ratios(result: dict) -> dict:
    """Time ratios, each between measurements made in the same process (the same run of a phase)."""
    ratios = {"pipeline_dp_local_over_ours_memory": {}, "pipeline_dp_local_over_ours_dask": {}}
    for row in result["timing"]["rows"]:
        ratios["pipeline_dp_local_over_ours_memory"][str(row["n"])] = row["local_over_ours_memory"]
        ratios["pipeline_dp_local_over_ours_dask"][str(row["n"])] = row["local_over_ours_dask"]
    beam = result.get("beam", {})
    if beam.get("ok") and "ours_memory_s" in beam:
        ratios["pipeline_dp_beam_over_ours_memory"] = {str(r["n"]): r["seconds"] / beam["ours_memory_s"][str(r["n"])]
                                                       for r in beam["results"]}
    tumult = result.get("tumult", {})
    timing = tumult.get("timing", {})
    if timing.get("ok") and "ours_memory_s" in tumult:
        ratios["tumult_session_over_ours_memory"] = {str(r["n"]): r["seconds"] / tumult["ours_memory_s"][str(r["n"])]
                                                     for r in timing["results"]}
    return ratios
