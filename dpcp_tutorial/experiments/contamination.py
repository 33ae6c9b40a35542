"""Depth medians against the mean under 25% Gaussian contamination (chapter 10).

The setting of Ramsay, Jagannath & Chenouri's simulations: per run one
:math:`n \\times 100` sample of :math:`0.75\\,N(0, I) + 0.25\\,N(5\\mathbf 1, I)` (the
first quarter of the rows shifted), of which the first :math:`d` columns are
used for each :math:`d`; the target is 0, the centre of the clean part; the
error of a run is :math:`\\|\\hat\\theta\\|` and the summary
:math:`\\mathrm{ERMSE} = \\sqrt{\\text{mean}_r \\|\\hat\\theta_r\\|^2}`, reported
with its standard error over runs (delta method, :func:`ermse_and_se`).

Estimators of the corrected run (all pure :math:`\\varepsilon`-DP for
replace-one neighbours with :math:`n` public, unless noted):

* ``private_idd`` -- :func:`~dpcp_tutorial.private_depth_median` with the
  smoothed IDD (:math:`s = 10`, :math:`m = 500` public directions, the number
  in the authors' direction files), :math:`\\beta = \\varepsilon n/2` (the tight
  sensitivity :math:`1/n`), prior :math:`N(0, 25d\\,I)`, a public
  :math:`N(0, I)` start and the default step and number of steps; the output
  of the Langevin chain is only **approximately** :math:`\\varepsilon`-DP;
* ``nonprivate_idd`` -- the maximiser of the same smoothed IDD (L-BFGS);
* ``nonprivate_idd_m200`` -- the same with only the first 200 of the
  directions (the sensitivity of the median to :math:`m`);
* ``spatial_median`` -- the non-private spatial median;
* ``coordinatewise`` -- :func:`~dpcp_tutorial.coordinatewise_private_median`
  with public bounds [-20, 20] and 4000 bins per coordinate;
* ``coinpress`` -- :func:`~dpcp_tutorial.coinpress_mean` as specified
  (every step clips the original data),
  :math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)`, the sharp zCDP conversion of
  :math:`\\varepsilon`-DP (:func:`~dpcp_tutorial.pure_dp_to_zcdp`: equal privacy,
  though zCDP is still the weaker guarantee), 4 steps, initial ball
  :math:`B(0, 10\\sqrt d)`;
* ``sample_mean`` -- non-private; its error is :math:`\\approx 1.25\\sqrt d` here.

The **authors' settings** (``authors=True``, option ``--authors``) add

* ``private_idd_authors`` -- the same chain with the authors' calibration
  :math:`\\beta = \\varepsilon n/6` (their conservative sensitivity :math:`3/n`)
  and their :math:`m = 500` directions, i.e. ``private_depth_median`` at
  budget :math:`\\varepsilon/3`; with a consistent :math:`m` (their notebook
  divided the sum over 500 loaded directions by 200, which multiplied the
  gradient by 2.5; that is not reproduced);
* ``coinpress_in_place`` -- CoinPress as in the reference code the authors
  called, which overwrites the data with the clipped points
  (``variant="in_place"``), same budget and ball.

The non-private and non-CoinPress estimators do not depend on these settings
and are shared by both runs.

**Small budgets** (``small_epsilons``, option ``--small-epsilons``): at the
dimensions ``small_dims`` the private estimators ``private_idd``,
``coordinatewise``, ``coinpress`` and ``coinpress_in_place`` are run again at
each of these :math:`\\varepsilon` (CoinPress at :math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)`),
on the same contaminated data sets.

**Recomputing some estimators.** ``--only METHOD ... --merge PATH`` reruns only
the named estimators without a Langevin chain (:data:`MERGEABLE`) on the runs
and settings of the result at ``PATH`` and replaces their rows there
(:func:`merge_methods`); every other row stays as it is. Every estimator has
its own seed and the data sets depend only on the run index, so the merged
rows equal those of a full run with the current code. ``meta["merges"]``
records each merge's command, estimators and seconds.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np
from tqdm import tqdm

from ..baselines import coinpress_mean, coordinatewise_private_median, pure_dp_to_zcdp
from ..datasets import make_contaminated_gaussian
from ..depth import random_directions
from ..median import GaussianPrior, depth_median, private_depth_median, spatial_median

DESCRIPTION = "depth medians vs CoinPress vs the mean under 25% contamination, error against d (chapter 10)"

# the method keys of the results (plus ``nonprivate_idd_m{k}`` with ``compare_directions=k``)
METHODS = ("private_idd", "nonprivate_idd", "spatial_median", "coordinatewise", "coinpress", "sample_mean")
AUTHORS_METHODS = ("private_idd_authors", "coinpress_in_place")
SMALL_EPSILON_METHODS = ("private_idd", "coordinatewise", "coinpress", "coinpress_in_place")
#: the estimators that :func:`merge_methods` can recompute (no Langevin chain, no recorded time)
MERGEABLE = ("spatial_median", "coordinatewise", "coinpress", "coinpress_in_place", "sample_mean")
COINPRESS_METHODS = ("coinpress", "coinpress_in_place")
#: how CoinPress's zCDP budget is obtained from epsilon (:func:`~dpcp_tutorial.pure_dp_to_zcdp`)
COINPRESS_CONVERSION = "tight"


def ermse_and_se(errors) -> tuple[float, float]:
    """:math:`\\mathrm{ERMSE} = \\sqrt{\\bar{e^2}}` over runs and its delta-method standard error.

    With :math:`R` runs, :math:`\\mathrm{se}(\\bar{e^2}) = \\mathrm{sd}(e^2)/\\sqrt R`
    and :math:`\\mathrm{se}(\\mathrm{ERMSE}) \\approx \\mathrm{se}(\\bar{e^2}) / (2\\,\\mathrm{ERMSE})`
    (NaN-free: one run gives a standard error of 0).
    """
    sq = np.square(np.asarray(errors, dtype=float))
    value = float(np.sqrt(sq.mean()))
    if sq.size < 2 or value == 0.0:
        return value, 0.0
    return value, float(sq.std(ddof=1) / np.sqrt(sq.size) / (2.0 * value))


def _chain(data: np.ndarray, epsilon: float, directions: np.ndarray, smoothing: float,
           rng: np.random.Generator) -> np.ndarray:
    """The Langevin IDD median of the experiment (prior :math:`N(0, 25d\\,I)`, default step and steps)."""
    d = data.shape[1]
    return private_depth_median(data, epsilon, "smoothed_idd", "langevin", GaussianPrior(0.0, 5.0 * np.sqrt(d)),
                                directions=directions, smoothing=smoothing, rng=rng)


def _job(kind: str, run: int, config: dict) -> dict:
    """One unit of work on the data sets of run ``run``.

    ``kind`` is ``"cheap"`` (every estimator without a Langevin chain, at
    every budget), ``"chains"`` (``private_idd``), ``"authors"``
    (``private_idd_authors``) or ``"small"`` (``private_idd`` at the small
    budgets). Every estimator has its own seed, so results do not depend on
    how the work is split or scheduled.
    """
    dims, seed, n, eps = config["dims"], config["seed"], config["n"], config["epsilon"]
    smoothing, compare = config["smoothing"], config["compare_directions"]
    conversion = config.get("coinpress_conversion", COINPRESS_CONVERSION)
    rho = pure_dp_to_zcdp(eps, conversion)
    only = config.get("only")                 # merge_methods: compute only these cheap estimators
    errors, seconds, small = {}, {}, {}

    def want(method):
        return only is None or method in only

    def put(setting, method, k, estimate, table=errors, size=len(dims)):
        table.setdefault(setting, {}).setdefault(method, [None] * size)[k] = float(np.linalg.norm(estimate))

    for setting in config["settings"]:
        fraction = 0.25 if setting == "contaminated" else 0.0
        full = make_contaminated_gaussian(n, max(dims), fraction=fraction, rng=np.random.default_rng([seed, run]))
        for k, d in enumerate(dims):
            data = full[:, :d]
            u = random_directions(config["n_directions"], d, rng=np.random.default_rng([seed + 1, run, d]))
            ball = 10.0 * np.sqrt(d)
            if kind == "cheap":
                if only is None:
                    start = time.perf_counter()
                    put(setting, "nonprivate_idd", k,
                        depth_median(data, "smoothed_idd", directions=u, smoothing=smoothing))
                    if setting == "contaminated":
                        seconds.setdefault("nonprivate_idd", [None] * len(dims))[k] = time.perf_counter() - start
                    if compare:
                        put(setting, f"nonprivate_idd_m{compare}", k,
                            depth_median(data, "smoothed_idd", directions=u[:compare], smoothing=smoothing))
                if want("spatial_median"):
                    put(setting, "spatial_median", k, spatial_median(data))
                if want("coordinatewise"):
                    put(setting, "coordinatewise", k, coordinatewise_private_median(
                        data, eps, (-20.0, 20.0), bins=4000, rng=np.random.default_rng([seed + 5, run, d])))
                # both CoinPress variants get the same noise (a paired comparison)
                if want("coinpress"):
                    put(setting, "coinpress", k, coinpress_mean(data, rho, radius=ball,
                                                                rng=np.random.default_rng([seed + 6, run, d])))
                if config["authors"] and want("coinpress_in_place"):
                    put(setting, "coinpress_in_place", k, coinpress_mean(
                        data, rho, radius=ball, variant="in_place", rng=np.random.default_rng([seed + 6, run, d])))
                if want("sample_mean"):
                    put(setting, "sample_mean", k, data.mean(axis=0))
            elif kind in ("chains", "authors"):
                method = "private_idd" if kind == "chains" else "private_idd_authors"
                budget = eps if kind == "chains" else eps / 3.0        # eps/3: beta = eps n / 6
                start = time.perf_counter()
                put(setting, method, k, _chain(data, budget, u, smoothing,
                                               np.random.default_rng([seed + (2 if kind == "chains" else 3), run, d])))
                if setting == "contaminated":
                    seconds.setdefault(method, [None] * len(dims))[k] = time.perf_counter() - start
        if setting != "contaminated" or kind not in ("cheap", "small"):
            continue
        for k, d in enumerate(config["small_dims"]):
            data = full[:, :d]
            u = random_directions(config["n_directions"], d, rng=np.random.default_rng([seed + 1, run, d]))
            for j, e in enumerate(config["small_epsilons"]):
                key, size = str(e), len(config["small_dims"])
                if kind == "small":
                    put(key, "private_idd", k, _chain(data, e, u, smoothing,
                                                      np.random.default_rng([seed + 4, run, d, j])), small, size)
                    continue
                if want("coordinatewise"):
                    put(key, "coordinatewise", k, coordinatewise_private_median(
                        data, e, (-20.0, 20.0), bins=4000, rng=np.random.default_rng([seed + 7, run, d, j])),
                        small, size)
                for variant, method in (("specified", "coinpress"), ("in_place", "coinpress_in_place")):
                    if not want(method):
                        continue
                    put(key, method, k, coinpress_mean(data, pure_dp_to_zcdp(e, conversion), radius=10.0 * np.sqrt(d),
                                                       variant=variant,
                                                       rng=np.random.default_rng([seed + 8, run, d, j])),
                        small, size)
    return {"kind": kind, "run": run, "errors": errors, "seconds": seconds, "small": small}


def _collect(done: list[dict], part: str) -> dict:
    """``{group: {method: {run: values}}}`` from the finished jobs (``part`` is "errors" or "small")."""
    out: dict = {}
    for job in done:
        for group, by_method in job[part].items():
            for method, values in by_method.items():
                out.setdefault(group, {}).setdefault(method, {})[job["run"]] = values
    return out


def _tabulate(by_run: dict, size: int) -> tuple[list, list, list, list]:
    """Errors (list over positions of lists over runs), ERMSE, its standard error, and the run indices."""
    runs = sorted(by_run)
    errors = [[by_run[r][k] for r in runs] for k in range(size)]
    stats = [ermse_and_se(e) for e in errors]
    return errors, [v for v, _ in stats], [se for _, se in stats], runs


def _summarise(config: dict, done: list[dict]) -> dict:
    """The JSON-able result from the finished jobs."""
    dims, n, eps = config["dims"], config["n"], config["epsilon"]
    collected = _collect(done, "errors")
    result = {"errors": {}, "ermse": {}, "ermse_se": {}, "runs_per_method": {}}
    for setting, by_method in collected.items():
        for method, by_run in sorted(by_method.items()):
            errors, value, se, runs = _tabulate(by_run, len(dims))
            result["errors"].setdefault(setting, {})[method] = errors
            result["ermse"].setdefault(setting, {})[method] = value
            result["ermse_se"].setdefault(setting, {})[method] = se
            if setting == "contaminated":
                result["runs_per_method"][method] = runs
    result["seconds"] = {}
    for method in ("private_idd", "nonprivate_idd", "private_idd_authors"):
        times = [job["seconds"][method] for job in done if method in job["seconds"]]
        if times:
            result["seconds"][method] = [float(np.mean([t[k] for t in times])) for k in range(len(dims))]
    result["settings"] = {
        "n": n, "dims": dims, "runs": config["runs"], "chain_runs": config["chain_runs"], "epsilon": eps,
        "n_directions": config["n_directions"], "smoothing": config["smoothing"], "beta": eps * n / 2,
        "prior": "N(0, 25 d I)", "langevin_steps": [max(1000, 80 * d) for d in dims], "seed": config["seed"],
        "coinpress_rho": pure_dp_to_zcdp(eps, config.get("coinpress_conversion", COINPRESS_CONVERSION)),
        "coinpress_conversion": config.get("coinpress_conversion", COINPRESS_CONVERSION),
        "coinpress_variant": "specified",
        "coordinatewise_bounds": [-20.0, 20.0], "authors": config["authors"],
        "compare_directions": config["compare_directions"]}
    if config["authors"]:
        result["settings"]["authors_settings"] = {
            "beta": eps * n / 6, "n_directions": config["n_directions"], "coinpress_variant": "in_place",
            "note": "beta = eps n / 6 (sensitivity 3/n) with a consistent m; the notebook's 500/200 factor "
                    "on the gradient is not reproduced"}
    if config["small_epsilons"]:
        small = _collect(done, "small")
        size = len(config["small_dims"])
        block = {"epsilons": list(config["small_epsilons"]), "dims": list(config["small_dims"]),
                 "errors": {}, "ermse": {}, "ermse_se": {}, "runs_per_method": {}}
        for key, by_method in small.items():
            for method, by_run in sorted(by_method.items()):
                errors, value, se, runs = _tabulate(by_run, size)
                block["errors"].setdefault(key, {})[method] = errors
                block["ermse"].setdefault(key, {})[method] = value
                block["ermse_se"].setdefault(key, {})[method] = se
                block["runs_per_method"][method] = runs
        result["small_epsilon"] = block
    return result


def _timing(earlier: list[float], start: float) -> dict:
    """Wall-clock seconds of every invocation so far (a resumed run adds one) and their sum."""
    times = [round(t, 1) for t in earlier] + [round(time.perf_counter() - start, 1)]
    return {"seconds": round(sum(times), 1), "seconds_by_invocation": times}


def jobs_from_checkpoint(result: dict) -> list[dict]:
    """The finished jobs recorded in a checkpoint written by :func:`run_experiment`.

    Inverse of the summary for the ``contaminated`` setting: every run listed
    in ``runs_per_method`` becomes the job that produced it (``cheap`` for the
    estimators without a chain, ``chains``/``authors``/``small`` for the
    Langevin medians). Per-job times are not stored, so each restored job
    carries the recorded mean time, which leaves the mean over all jobs
    unchanged. Used by ``--resume``.
    """
    errors = result.get("errors", {}).get("contaminated", {})
    runs = result.get("runs_per_method", {})
    small = result.get("small_epsilon") or {}
    seconds = result.get("seconds", {})
    jobs: dict[tuple[str, int], dict] = {}

    def job(kind, run):
        return jobs.setdefault((kind, run), {"kind": kind, "run": run, "errors": {}, "seconds": {}, "small": {}})

    for method, by_pos in errors.items():
        kind = {"private_idd": "chains", "private_idd_authors": "authors"}.get(method, "cheap")
        for i, run in enumerate(runs[method]):
            entry = job(kind, run)
            entry["errors"].setdefault("contaminated", {})[method] = [column[i] for column in by_pos]
            timed = "nonprivate_idd" if kind == "cheap" else method
            if timed in seconds:
                entry["seconds"][timed] = list(seconds[timed])
    for key, by_method in small.get("errors", {}).items():
        for method, by_pos in by_method.items():
            kind = "small" if method == "private_idd" else "cheap"
            for i, run in enumerate(small["runs_per_method"][method]):
                job(kind, run)["small"].setdefault(key, {})[method] = [column[i] for column in by_pos]
    return list(jobs.values())


def run_experiment(n: int = 10_000, dims=(2, 10, 20, 50, 100), runs: int = 50, epsilon: float = 10.0,
                   n_directions: int = 500, smoothing: float = 10.0, clean: bool = False, seed: int = 421,
                   authors: bool = False, compare_directions: int | None = None, small_epsilons=(),
                   small_dims=(2, 10), chain_runs: int | None = None, workers: int = 1, checkpoint=None,
                   command: str | None = None, show_progress: bool = True, resume: dict | None = None,
                   coinpress_conversion: str = COINPRESS_CONVERSION) -> dict:
    """Run the experiment and return a JSON-able dict (chapter 10 runs a reduced version live).

    The estimators without a Langevin chain run on ``runs`` data sets; the
    Langevin medians (the expensive part) on the first ``chain_runs`` of
    them (default: all). Work is scheduled as: every cheap job first, then,
    run by run, the chains. Seeds: data ``[seed, run]``, directions
    ``[seed + 1, run, d]``, chains ``[seed + 2, run, d]`` (authors' settings
    ``seed + 3``, small budgets ``[seed + 4, run, d, j]``), coordinate-wise
    median ``seed + 5`` (small budgets ``seed + 7``), CoinPress ``seed + 6``
    (both variants the same stream; small budgets ``seed + 8``). Results do
    not depend on ``workers``.

    Parameters
    ----------
    authors : bool
        Also run the authors' settings (``private_idd_authors``, ``coinpress_in_place``).
    compare_directions : int, optional
        Also compute the non-private IDD median with only the first this many
        directions (``nonprivate_idd_m{k}``).
    small_epsilons : sequence of float
        Extra budgets for the private estimators at ``small_dims`` (contaminated data).
    chain_runs : int, optional
        Number of runs (the first ones) with the Langevin medians.
    workers : int
        Processes running independent jobs in parallel.
    checkpoint : path, optional
        After every finished job the summary so far is written there
        (``meta.complete`` false), so an interrupted run leaves a consistent
        result; ``runs_per_method`` says which runs each ERMSE uses.
    command : str, optional
        The command line, recorded in the checkpoint's ``meta``.
    resume : dict, optional
        A checkpoint of an interrupted run with the same settings: its
        finished jobs are kept (see :func:`jobs_from_checkpoint`) and only the
        others run. Seeds are per estimator, so the result equals an
        uninterrupted run's (up to the recorded times).
    coinpress_conversion : {"tight", "bun-steinke"}
        CoinPress's budget :math:`\\rho` from :math:`\\varepsilon`
        (:func:`~dpcp_tutorial.pure_dp_to_zcdp`): the sharp
        :math:`\\varepsilon\\tanh(\\varepsilon/2)` (equal privacy) or the looser
        :math:`\\varepsilon^2/2`, which hands CoinPress more privacy loss.

    Returns
    -------
    dict
        ``settings``; ``errors[setting][method]`` = list over ``dims`` of lists
        over runs of :math:`\\|\\hat\\theta\\|`; ``ermse`` and ``ermse_se``
        ``[setting][method]`` = lists over ``dims``; ``runs_per_method``;
        ``seconds[method]`` = mean time per run for each ``d``; with
        ``small_epsilons`` also ``small_epsilon`` (the same per budget, keyed
        by ``str(epsilon)``).
    """
    dims = [int(d) for d in dims]
    if compare_directions is not None and not 0 < compare_directions < n_directions:
        raise ValueError(f"compare_directions={compare_directions} must be between 1 and "
                         f"n_directions - 1 = {n_directions - 1}")
    chain_runs = runs if chain_runs is None else int(chain_runs)
    if not 0 <= chain_runs <= runs:
        raise ValueError(f"chain_runs={chain_runs} must be between 0 and runs={runs}")
    small_epsilons = [float(e) for e in small_epsilons]
    small_dims = [int(d) for d in small_dims] if small_epsilons else []
    if any(d > max(dims) for d in small_dims):
        raise ValueError(f"small_dims={small_dims} must not exceed the largest dimension {max(dims)}")
    config = {"n": n, "dims": dims, "runs": runs, "chain_runs": chain_runs, "epsilon": epsilon,
              "n_directions": n_directions, "smoothing": smoothing,
              "settings": ["contaminated", "clean"] if clean else ["contaminated"], "seed": seed,
              "authors": authors, "compare_directions": compare_directions, "small_epsilons": small_epsilons,
              "small_dims": small_dims, "coinpress_conversion": coinpress_conversion}
    pure_dp_to_zcdp(epsilon, coinpress_conversion)          # validates the conversion before any work
    jobs = [("cheap", r) for r in range(runs)]
    for r in range(chain_runs):
        jobs += [("chains", r)] + ([("authors", r)] if authors else []) + ([("small", r)] if small_epsilons else [])
    start = time.perf_counter()
    done, earlier, commands = [], [], []
    if resume is not None:
        def comparable(settings):
            # runs and chain_runs may grow: every job is seeded by its run index alone
            return {k: v for k, v in settings.items() if k not in ("authors_settings", "runs", "chain_runs")}

        small = resume.get("small_epsilon") or {}
        if (comparable(resume.get("settings", {})) != comparable(_summarise(config, [])["settings"])
                or [float(e) for e in small.get("epsilons", [])] != small_epsilons
                or [int(d) for d in small.get("dims", [])] != small_dims):
            raise ValueError("resume: the checkpoint was written with different settings; "
                             "use the same options as the interrupted run (only --runs and --chain-runs may grow)")
        done = jobs_from_checkpoint(resume)
        finished = {(job["kind"], job["run"]) for job in done}
        if not finished <= set(jobs):
            raise ValueError("resume: the checkpoint has runs beyond --runs/--chain-runs; they may only grow")
        jobs = [job for job in jobs if job not in finished] + [job for job in jobs if job in finished]
        meta = resume.get("meta", {})
        earlier = [float(t) for t in meta.get("seconds_by_invocation", [meta.get("seconds", 0.0)])]
        commands = list(meta.get("commands", [meta["command"]] if "command" in meta else []))
    todo = jobs[:len(jobs) - len(done)]

    def record(result):
        done.append(result)
        if checkpoint is not None:
            partial = _summarise(config, done)
            partial["meta"] = {"complete": False, "jobs_completed": len(done), "jobs": len(jobs),
                               "experiment": "contamination",
                               **_timing(earlier, start)}
            if command is not None:
                partial["meta"]["command"] = command
                partial["meta"]["commands"] = commands + [command]
            tmp = f"{checkpoint}.partial"
            with open(tmp, "w") as fh:
                fh.write(json.dumps(partial, indent=1, sort_keys=True) + "\n")
            os.replace(tmp, checkpoint)

    if workers <= 1:
        for kind, r in tqdm(todo, desc="contamination jobs", disable=not show_progress):
            record(_job(kind, r, config))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_job, kind, r, config) for kind, r in todo]
            for future in tqdm(as_completed(futures), total=len(futures), desc="contamination jobs",
                               disable=not show_progress):
                record(future.result())
    result = _summarise(config, done)
    result["meta"] = {"complete": True, "jobs_completed": len(done), "jobs": len(jobs), **_timing(earlier, start)}
    if commands:
        result["meta"]["commands"] = commands + ([command] if command is not None else [])
    return result


def merge_methods(base: dict, methods, command: str | None = None, show_progress: bool = True) -> dict:
    """Recompute the estimators ``methods`` on the runs and settings of the result ``base`` and replace their rows.

    ``base`` is a complete result of :func:`run_experiment` (e.g. a committed
    JSON, parsed). Only estimators without a Langevin chain can be recomputed
    (:data:`MERGEABLE`); their errors, ERMSE and standard errors are replaced
    in every setting and, with small budgets, in ``small_epsilon``; every other
    row is kept as it is. Each estimator's noise has its own seed and the data
    sets depend only on the run index, so the merged rows equal those of a
    full run with the current code. When ``base``'s CoinPress conversion
    differs from :data:`COINPRESS_CONVERSION`, every CoinPress estimator of
    ``base`` must be recomputed, so that no row keeps the old budget; the
    settings then record the current conversion and :math:`\\rho`.
    ``meta["merges"]`` lists every merge (command, estimators, seconds); the
    rest of ``base``'s meta describes the run that produced the other rows.
    """
    if not isinstance(base, dict) or not {"settings", "errors", "ermse", "meta"} <= set(base):
        raise ValueError("base must be a result of run_experiment (a dict with settings, errors, ermse and meta)")
    if base["meta"].get("complete") is False:
        raise ValueError("base is an incomplete run: finish it (--resume) before merging estimators into it")
    present = base["errors"].get("contaminated", {})
    methods = list(methods)
    if not methods or any(m not in MERGEABLE or m not in present for m in methods):
        raise ValueError(f"methods={methods!r}: choose among the estimators without a chain that the base result "
                         f"holds, {[m for m in MERGEABLE if m in present]}")
    settings = base["settings"]
    old_conversion = settings.get("coinpress_conversion", "bun-steinke")
    stale = [m for m in COINPRESS_METHODS if m in present and m not in methods]
    if old_conversion != COINPRESS_CONVERSION and stale:
        raise ValueError(f"the base result gives CoinPress rho by the {old_conversion!r} conversion, this code by "
                         f"{COINPRESS_CONVERSION!r}: recompute every CoinPress estimator {stale + methods} together")
    run_sets = {m: list(base.get("runs_per_method", {}).get(m, range(len(present[m][0])))) for m in methods}
    runs = sorted(next(iter(run_sets.values())))
    if any(sorted(r) != runs for r in run_sets.values()):
        raise ValueError(f"methods={methods!r} were computed on different runs in the base result; merge them "
                         "one at a time")
    small = base.get("small_epsilon") or {}
    config = {"n": settings["n"], "dims": list(settings["dims"]), "runs": settings["runs"],
              "chain_runs": settings.get("chain_runs", settings["runs"]), "epsilon": settings["epsilon"],
              "n_directions": settings["n_directions"], "smoothing": settings["smoothing"],
              "settings": [s for s in ("contaminated", "clean") if s in base["errors"]], "seed": settings["seed"],
              "authors": settings.get("authors", False), "compare_directions": settings.get("compare_directions"),
              "small_epsilons": [float(e) for e in small.get("epsilons", [])],
              "small_dims": [int(d) for d in small.get("dims", [])],
              "coinpress_conversion": COINPRESS_CONVERSION, "only": frozenset(methods)}
    start = time.perf_counter()
    done = [_job("cheap", r, config) for r in tqdm(runs, desc="contamination merge", disable=not show_progress)]
    seconds = round(time.perf_counter() - start, 1)
    out = json.loads(json.dumps(base))
    for setting, by_method in _collect(done, "errors").items():
        for method, by_run in by_method.items():
            errors, value, se, _ = _tabulate(by_run, len(config["dims"]))
            out["errors"][setting][method] = errors
            out["ermse"][setting][method] = value
            if "ermse_se" in out:
                out["ermse_se"][setting][method] = se
    if small:
        for key, by_method in _collect(done, "small").items():
            for method, by_run in by_method.items():
                errors, value, se, _ = _tabulate(by_run, len(config["small_dims"]))
                block = out["small_epsilon"]
                block["errors"][key][method] = errors
                block["ermse"][key][method] = value
                block["ermse_se"][key][method] = se
    if any(m in COINPRESS_METHODS for m in methods):
        out["settings"]["coinpress_rho"] = pure_dp_to_zcdp(settings["epsilon"], COINPRESS_CONVERSION)
        out["settings"]["coinpress_conversion"] = COINPRESS_CONVERSION
    out["meta"]["merges"] = list(base["meta"].get("merges", [])) + [
        {"command": command, "methods": methods, "seconds": seconds}]
    return out


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=10_000, help="sample size (default: %(default)s)")
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 10, 20, 50, 100], help="dimensions")
    parser.add_argument("--runs", type=int, default=50, help="independent data sets (default: %(default)s)")
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--directions", type=int, default=500, help="public directions for the smoothed IDD")
    parser.add_argument("--smoothing", type=float, default=10.0, help="logistic slope s")
    parser.add_argument("--clean", action="store_true", help="also run the uncontaminated copy of each data set")
    parser.add_argument("--authors", action="store_true",
                        help="also run the authors' settings (beta = eps n / 6, in-place CoinPress)")
    parser.add_argument("--compare-directions", type=int, default=None,
                        help="also the non-private IDD median with only this many of the directions")
    parser.add_argument("--small-epsilons", type=float, nargs="*", default=[],
                        help="extra budgets for the private estimators at --small-dims")
    parser.add_argument("--small-dims", type=int, nargs="+", default=[2, 10])
    parser.add_argument("--chain-runs", type=int, default=None,
                        help="runs (the first ones) with the Langevin medians (default: all)")
    parser.add_argument("--workers", type=int, default=1, help="parallel processes (results do not depend on it)")
    parser.add_argument("--seed", type=int, default=421)
    parser.add_argument("--resume", action="store_true",
                        help="keep the finished jobs of the checkpoint at --out (same options) and run the rest")
    parser.add_argument("--only", nargs="+", choices=list(MERGEABLE), default=None, metavar="METHOD",
                        help="with --merge: the estimators (without a chain) to recompute, e.g. coinpress "
                             "coinpress_in_place")
    parser.add_argument("--merge", type=pathlib.Path, default=None, metavar="PATH",
                        help="recompute only --only on the runs and settings of the result at PATH and replace "
                             "their rows (the settings are read from that result; other options are ignored)")


def run(args) -> dict:
    only, merge = getattr(args, "only", None), getattr(args, "merge", None)
    if (only is None) != (merge is None):
        raise SystemExit("--only and --merge go together, e.g. --merge PATH --only coinpress coinpress_in_place")
    if merge is not None:
        return merge_methods(json.loads(pathlib.Path(merge).read_text()), only,
                             command="python -m dpcp_tutorial.experiments " + " ".join(sys.argv[1:]),
                             show_progress=not getattr(args, "quiet", False))
    resume = None
    if getattr(args, "resume", False):
        if not args.out.exists():
            raise SystemExit(f"--resume: no checkpoint at {args.out}")
        resume = json.loads(args.out.read_text())
    return run_experiment(n=args.n, dims=args.dims, runs=args.runs, epsilon=args.epsilon,
                          n_directions=args.directions, smoothing=args.smoothing, clean=args.clean,
                          seed=args.seed, authors=args.authors, compare_directions=args.compare_directions,
                          small_epsilons=args.small_epsilons, small_dims=args.small_dims, chain_runs=args.chain_runs,
                          workers=args.workers,
                          checkpoint=args.out,
                          show_progress=not getattr(args, "quiet", False), resume=resume,
                          command="python -m dpcp_tutorial.experiments " + " ".join(sys.argv[1:]))
