"""PipelineDP (and Tumult Analytics, Apache Beam) against the tight private quantile, timed in one run (chapter 14).

Times one private percentile release at equal privacy (:math:`\\varepsilon = 1` under add/remove, the record count
private: PipelineDP's and Tumult's relation; the tight quantile at the parameter whose exact add/remove loss is 1,
see :mod:`dpcp_tutorial.experiments.peers`) on :math:`N \\in \\{10^5, 10^6\\}` uniform scores:

* ``ours in memory``: :func:`dpcp_tutorial.private_quantile` on a NumPy array (best of 5);
* ``ours on Dask``: :func:`dpcp_tutorial.scale.private_quantile` on the same scores resident on a 2-worker
  ``LocalCluster`` (best of 3; the releases are checked equal to the in-memory ones);
* ``PipelineDP local``: ``DPEngine.aggregate`` with ``Metrics.PERCENTILE`` on its LocalBackend, from a list of
  ``(privacy id, score)`` records (one run);
* Apache Beam's DirectRunner and Tumult Analytics on Spark when the interpreters named by
  ``$DPCP_PEERS_BEAM_PYTHON`` / ``$DPCP_PEERS_TUMULT_PYTHON`` (or this one) have them.

Prints the same-run ratios. Needs ``pip install "dpcp_tutorial[peers,scale]"``. The coverage study (and
:math:`N = 10^7`) is the runner ``python -m dpcp_tutorial.experiments peers`` (committed result
``dpcp_tutorial/data/peers.json``, read by chapter 14); ``--save`` here rewrites
``dpcp_tutorial/data/bench_peers.json``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

from benchmarks._timing import print_table, save_result

OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_peers.json"
SIZES = (10**5, 10**6)


def main(save: bool = False) -> None:
    try:
        import pipeline_dp  # noqa: F401
    except ImportError:
        print('PipelineDP is not installed: pip install "dpcp_tutorial[peers]" (nothing measured)')
        return
    from tqdm import tqdm

    from dpcp_tutorial.experiments import peers

    args = argparse.Namespace(beta=0.1, seed=2026, sizes=list(SIZES), time_sizes=list(SIZES), dask_workers=2,
                              epsilons=[1.0], tumult_n=SIZES[0], tumult_reps=0, tumult_sizes=list(SIZES),
                              beam_sizes=list(SIZES), worker_timeout=3600.0)
    with tqdm(total=len(SIZES), desc="bench peers", file=sys.stderr) as bar:
        timing = peers._timing_block(args, bar)
    result = {"timing": timing}
    ours = {row["n"]: row["ours_memory_s"] for row in timing["rows"]}
    for name, env, module, task in (("beam", "DPCP_PEERS_BEAM_PYTHON", "apache_beam", "beam_time"),
                                    ("tumult", "DPCP_PEERS_TUMULT_PYTHON", "tmlt.analytics", "tumult_time")):
        python = os.environ.get(env) or (sys.executable if peers._interpreter_has(sys.executable, module) else None)
        if python is None:
            result[name] = {"ok": False, "stopped_by": f"no interpreter with {module} (set ${env})"}
            continue
        spec = {"task": task, "law": "uniform", "key": [args.seed, 0], "epsilon": 1.0, "percentile": 90.0,
                "level": 0.9, "sizes": list(SIZES)}
        result[name] = peers._run_worker(python, spec, args.worker_timeout)
    rows = []
    for row in timing["rows"]:
        cpu = row["pipeline_dp_local_cpu_s"]
        rows.append([f"{row['n']:.0e}", f"{1e3 * row['ours_memory_s']:.2f}", f"{1e3 * row['ours_dask_s']:.0f}",
                     f"{cpu:.1f}", f"{row['pipeline_dp_local_s']:.1f}", f"{cpu / row['ours_memory_s']:.0f}",
                     f"{cpu / row['ours_dask_s']:.0f}", str(row["dask_equal_releases"])])
    print("PipelineDP's local pipeline runs in this process: its CPU time is the fair measure on a loaded machine")
    print_table(["N", "ours ms", "ours Dask ms", "PipelineDP CPU s", "(wall s)", "CPU/ours", "CPU/ours Dask",
                 "Dask = memory"], rows)
    for name in ("beam", "tumult"):
        res = result[name]
        if not res.get("ok"):
            print(f"{name}: not run ({res['stopped_by']})")
            continue
        for r in res["results"]:
            print(f"{name}: N={r['n']:.0e} {r['seconds']:.1f} s = {r['seconds'] / ours[r['n']]:.0f} x ours")
    result["meta"] = {"command": "python -m benchmarks peers --save", "cpus": os.cpu_count(),
                      "load_average": [round(x, 2) for x in os.getloadavg()]}
    save_result(OUTPUT, result, save)


if __name__ == "__main__":
    main(save="--save" in sys.argv[1:])
