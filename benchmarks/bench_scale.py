"""Private releases on Dask against the in-memory releases (chapter 14).

Timings of the distributed path are wall-clock (the Dask work happens in other processes), best of a few runs, in
one run of this script, on a ``LocalCluster`` of single-threaded worker processes started here:

* ``count vs sort``: the in-memory ``private_quantile`` (one counting pass, :mod:`dpcp_tutorial._counts`) over
  ``np.sort`` of the same 10^6 scores, CPU time of this process, best of 15 (target <= 0.5);
* ``dask vs in-memory, 10^7``: ``scale.private_quantile`` on scores resident on 2 workers over
  ``private_quantile`` on the same scores in this process (the releases must be equal for the same ``rng``);
* ``overhead, 1 worker, 10^7``: the same on one worker (target <= 1.5);
* ``10^8`` (and ``10^9``): scores generated on the workers chunk by chunk (10^6 per chunk) and counted where
  they are generated: wall time, scores per second, peak memory of the client (sampled RSS above its level before
  the run) and of every worker (RSS sampled every 5 ms during the run, and its RSS after start-up);
* ``1 vs 2 workers``: speed-up of the 10^8 run (target >= 1.6 on 2 cores).

The machine's load average (``os.getloadavg``) is printed with the numbers: on a shared machine other jobs take
cores away from the workers. Run: ``.venv/bin/python -m benchmarks scale`` (``--save`` rewrites
``dpcp_tutorial/data/bench_scale.json``, read by chapter 14).
"""

from __future__ import annotations

import os
import pathlib
import platform
import threading
import time

import numpy as np

from benchmarks._timing import print_table, save_result
from dpcp_tutorial import private_quantile
from dpcp_tutorial import scale

OUTPUT = pathlib.Path(__file__).resolve().parents[1] / "dpcp_tutorial" / "data" / "bench_scale.json"
CHUNK, BETA, EPSILON, SEED = 10**6, 0.1, 1.0, 2026


def best_wall(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


class PeakRSS:
    """Sample this process's resident memory every 5 ms while the block runs."""

    def __enter__(self):
        import psutil

        self._proc = psutil.Process()
        self.start = self.peak = self._proc.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss)
            time.sleep(0.005)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._proc.memory_info().rss)

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / 2**20


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def _worker_samplers():
    """Functions for ``client.run``: start a 5 ms RSS sampler in every worker, and read its peak (MB).

    Defined as closures so that they are shipped by value (the workers need not import the benchmarks).
    ``ru_maxrss`` is no use here: a spawned worker inherits the parent's peak at fork time.
    """

    def start(dask_worker):
        import threading as _threading
        import time as _time

        import psutil

        proc = psutil.Process()
        state = {"peak": proc.memory_info().rss, "stop": False}

        def loop():
            while not state["stop"]:
                state["peak"] = max(state["peak"], proc.memory_info().rss)
                _time.sleep(0.005)

        _threading.Thread(target=loop, daemon=True).start()
        dask_worker.dpcp_rss_sampler = state

    def stop(dask_worker):
        state = dask_worker.dpcp_rss_sampler
        state["stop"] = True
        return state["peak"] / 2**20

    return start, stop


def in_memory_scores(n: int) -> np.ndarray:
    """The same scores as ``scale.simulated_scores(n, CHUNK, SEED)``, built in this process."""
    return np.concatenate([np.random.default_rng([SEED, i]).uniform(size=min(CHUNK, n - i * CHUNK))
                           for i in range(-(-n // CHUNK))])


def best_cpu(fn, repeat: int = 15) -> float:
    """Best CPU time of this process (both sides are single-threaded here; CPU time is far less disturbed by
    other jobs on a shared machine than wall-clock time)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def count_vs_sort() -> dict:
    s = np.random.default_rng(1).uniform(size=10**6)
    t_sort = best_cpu(lambda: np.sort(s))
    t_ours = best_cpu(lambda: private_quantile(s, BETA, EPSILON, rng=0))
    return {"n": 10**6, "sort_s": t_sort, "private_quantile_s": t_ours, "ratio": t_ours / t_sort}


def resident_release(n_workers: int, s_memory: np.ndarray) -> dict:
    n = s_memory.size
    t_memory = best_wall(lambda: private_quantile(s_memory, BETA, EPSILON, rng=1))
    with scale.local_cluster(n_workers=n_workers) as client:
        x = client.persist(scale.simulated_scores(n, CHUNK, SEED))
        client.wait_for_workers(n_workers)
        scale.private_quantile(x, BETA, EPSILON, rng=1)                  # warm-up (imports on the workers)
        t_dask = best_wall(lambda: scale.private_quantile(x, BETA, EPSILON, rng=1))
        equal = all(scale.private_quantile(x, BETA, EPSILON, rng=r) == private_quantile(s_memory, BETA, EPSILON,
                                                                                        rng=r) for r in range(3))
    return {"n": n, "workers": n_workers, "in_memory_s": t_memory, "dask_s": t_dask, "ratio": t_dask / t_memory,
            "equal_outputs": bool(equal)}


def generated_release(n_workers: int, n: int, repeat: int = 2) -> dict:
    with scale.local_cluster(n_workers=n_workers) as client:
        client.wait_for_workers(n_workers)
        scale.private_quantile(scale.simulated_scores(4 * CHUNK, CHUNK, SEED + 1), BETA, EPSILON, rng=0)  # warm-up
        after_start = client.run(_rss_mb)
        start_sampler, stop_sampler = _worker_samplers()
        client.run(start_sampler)
        best, q = float("inf"), None
        with PeakRSS() as client_memory:
            for _ in range(repeat):
                start = time.perf_counter()
                q = scale.private_quantile(scale.simulated_scores(n, CHUNK, SEED), BETA, EPSILON, rng=0)
                best = min(best, time.perf_counter() - start)
        peaks = client.run(stop_sampler)
    return {"n": n, "workers": n_workers, "chunk": CHUNK, "wall_s": best, "scores_per_s": n / best,
            "client_peak_growth_mb": client_memory.growth_mb,
            "worker_rss_after_start_mb": sorted(after_start.values()),
            "worker_peak_rss_mb": sorted(peaks.values()), "release": q}


def main(save: bool = False) -> None:
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"load average before: {load} (2 cores: anything above ~1 takes time away from the workers)")
    sort = count_vs_sort()
    s7 = in_memory_scores(10**7)
    two = resident_release(2, s7)
    one = resident_release(1, s7)
    del s7
    g8_two = generated_release(2, 10**8)
    g8_one = generated_release(1, 10**8)
    g9_two = generated_release(2, 10**9, repeat=1)
    speedup = g8_one["wall_s"] / g8_two["wall_s"]
    load_after = [round(x, 2) for x in os.getloadavg()]
    print()
    print_table(["measurement", "value", "target"], [
        ["in-memory private_quantile / np.sort, N=10^6", f"{sort['ratio']:.2f}", "<= 0.5"],
        ["  (times)", f"{sort['private_quantile_s'] * 1e3:.1f} ms / {sort['sort_s'] * 1e3:.1f} ms", ""],
        ["Dask (2 workers) / in-memory, N=10^7 resident", f"{two['ratio']:.2f}", ""],
        ["  equal releases (3 seeds)", str(two["equal_outputs"] and one["equal_outputs"]), "True"],
        ["Dask (1 worker) / in-memory, N=10^7 (overhead)", f"{one['ratio']:.2f}", "<= 1.5"],
        ["  (times)", f"{one['dask_s'] * 1e3:.0f} ms / {one['in_memory_s'] * 1e3:.0f} ms", ""],
        ["N=10^8 generated on 2 workers: wall", f"{g8_two['wall_s']:.2f} s", ""],
        ["  scores per second", f"{g8_two['scores_per_s']:.3g}", ""],
        ["  client peak RSS growth", f"{g8_two['client_peak_growth_mb']:.0f} MB", ""],
        ["  worker RSS after start / peak", f"{g8_two['worker_rss_after_start_mb']} / "
                                           f"{[round(x) for x in g8_two['worker_peak_rss_mb']]} MB", ""],
        ["N=10^8 on 1 worker: wall", f"{g8_one['wall_s']:.2f} s", ""],
        ["speed-up 1 -> 2 workers, N=10^8", f"{speedup:.2f}", ">= 1.6"],
        ["N=10^9 generated on 2 workers: wall", f"{g9_two['wall_s']:.1f} s", ""],
        ["  scores per second", f"{g9_two['scores_per_s']:.3g}", ""],
        ["  worker peak RSS", f"{[round(x) for x in g9_two['worker_peak_rss_mb']]} MB", ""],
    ])
    print(f"load average after: {load_after}")
    payload = {
        "command": "python -m benchmarks scale --save",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": load,
                    "load_after": load_after},
        "count_vs_sort": sort, "resident_two_workers": two, "resident_one_worker": one,
        "generated_1e8_two_workers": g8_two, "generated_1e8_one_worker": g8_one,
        "generated_1e9_two_workers": g9_two, "speedup_1e8": speedup,
    }
    save_result(OUTPUT, payload, save)
