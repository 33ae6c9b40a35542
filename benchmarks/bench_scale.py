"""Private releases on Dask against the in-memory releases (chapter 14).

Timings of the distributed path are wall-clock (the Dask work happens in other processes), best of a few runs
(the 10^9 runs: the median of 5), in one run of this script, on ``scale.local_cluster``'s single-threaded worker
processes (its settings: no statistical profiler, slow health ticks, freed chunks reused) started here:

* ``count vs sort``: the in-memory ``private_quantile`` (one counting pass, :mod:`dpcp_tutorial._counts`) over
  ``np.sort`` of the same 10^6 scores, CPU time of this process, best of 15 (target <= 0.5);
* ``dask vs in-memory, 10^7``: ``scale.private_quantile`` on scores resident on 2 workers over
  ``private_quantile`` on the same scores in this process (the releases must be equal for the same ``rng``);
* ``overhead, 1 worker, 10^7``: the same on one worker;
* per-task overhead: 10^8 scores generated and counted on one worker in chunks of 10^5, 10^6 and 10^7 (1000, 100
  and 10 tasks), and 10^6 scores in 1000 chunks of 10^3. From the CPU time of the worker and of this process (the
  client, and the local scheduler, which runs in a thread of it) it gives ``a`` (the worker's CPU per task beyond
  the work: the tiny tasks), ``s`` (CPU of the client and the scheduler per chunk: one process for all workers)
  and ``b`` (CPU per score generated and counted, at 10^9 in the default chunking); CPU time, because on a shared
  machine wall time includes waiting for a core;
* ``10^9``: scores generated on the workers in the default chunking of ``scale.simulated_scores`` (128 chunks) and
  counted where they are generated, on 1 and 2 workers (after a first release of the same size, 5 runs each; the
  median): wall time, CPU time, scores per second, peak memory of the client (sampled RSS above its level before
  the run) and of every worker (RSS sampled every 5 ms during the first run, and its RSS after start-up);
* the speed-up 1 -> 2 workers at 10^9 (target >= 1.9 on 2 cores at low load) beside the machine's own ceiling,
  the same generating and counting in 1 and 2 plain processes without Dask, measured in alternation
  (:func:`paired_speedup`: 7 rounds of the four runs; medians of the speed-ups and of their quotient);
* the spatial-depth median of 2 * 10^5 points in d = 5 (16 partitions, 1000 candidates) on 1 and 2 workers;
* the overhead model (:func:`predict_wall`), fitted on this machine, predicts the wall time and speed-up of 10^9
  scores on 1 to 16 workers (as many cores) for chunks of 10^6, the default and 10^7 (target: >= 12 at 16
  workers), and of the depth median of 2 * 10^6 points in 20 or 128 partitions (target: >= 10).

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


def generated_release(n_workers: int, n: int, chunk, repeat: int = 5) -> dict:
    """``scale.private_quantile`` on ``n`` scores generated on ``n_workers`` workers: wall time (the median of
    ``repeat`` runs, and every run's), CPU time of the workers and of this process (the client, the local
    scheduler and the nannies) in the median run, memory.

    The timed runs follow a first release of the same size (its wall time is reported as ``first_wall_s``): in
    the first one each worker's memory allocator grows to hold a chunk, page by page, and the imports happen;
    the timed runs measure the steady state of a cluster that has released before. Memory is sampled (every
    5 ms, in the client and in every worker) during the first release only, so that the samplers do not take CPU
    time from the timed runs; a worker keeps its grown memory, so the timed runs reach no higher (its resident
    memory after them is included in its peak).
    """
    with scale.local_cluster(n_workers=n_workers) as client:
        client.wait_for_workers(n_workers)
        pids = list(client.run(os.getpid).values())
        after_start = client.run(_rss_mb)
        start_sampler, stop_sampler = _worker_samplers()
        client.run(start_sampler)
        with PeakRSS() as client_memory:
            start = time.perf_counter()
            scale.private_quantile(scale.simulated_scores(n, chunk, SEED + 1), BETA, EPSILON, rng=0)
            first = time.perf_counter() - start
        peaks = client.run(stop_sampler)
        runs, q = [], None
        for _ in range(repeat):
            w0, c0, start = _cpu(pids), _cpu([os.getpid()]), time.perf_counter()
            x = scale.simulated_scores(n, chunk, SEED)
            q = scale.private_quantile(x, BETA, EPSILON, rng=0)
            wall = time.perf_counter() - start
            runs.append((wall, _cpu(pids) - w0, _cpu([os.getpid()]) - c0))
        after = client.run(_rss_mb)
        peaks = {w: max(peaks[w], after[w]) for w in peaks}
    wall, worker_cpu, client_cpu = sorted(runs)[(len(runs) - 1) // 2]         # the median run (lower median)
    return {"n": n, "workers": n_workers, "chunk": int(x.chunks[0][0]), "chunks": len(x.chunks[0]), "wall_s": wall,
            "walls_s": [r[0] for r in runs], "first_wall_s": first, "scores_per_s": n / wall, "worker_cpu_s": worker_cpu,
            "client_cpu_s": client_cpu,
            "client_peak_growth_mb": client_memory.growth_mb,
            "worker_rss_after_start_mb": sorted(after_start.values()),
            "worker_peak_rss_mb": sorted(peaks.values()), "release": q}


def _chunk_work(args) -> float:
    """CPU seconds to generate and count the chunks ``indices`` as ``scale.simulated_scores`` does, without Dask.

    The counting is the in-memory ``private_quantile`` on each chunk: the same one counting pass (its mechanism
    on 1000 cells takes microseconds).
    """
    indices, size = args
    start = time.process_time()
    for index in indices:
        private_quantile(np.random.default_rng([SEED, index]).random(size=size), BETA, EPSILON, rng=0)
    return time.process_time() - start


def paired_speedup(n: int, rounds: int = 7) -> dict:
    """The speed-up 1 -> 2 workers of ``scale.private_quantile`` on ``n`` generated scores, and the machine's own
    ceiling for it: the same chunk work in 1 and 2 plain processes without Dask (shared memory bus and caches),
    measured in alternation.

    A one-worker and a two-worker cluster (``scale.local_cluster``) and a pool of two processes (with the
    allocator settings of the cluster's workers: a freed chunk's memory is reused) stay up; each round times a
    release on one worker, a release on two, the chunk work in one process and in two, one after the other. On a
    shared machine the cores' speed drifts from minute to minute, so a speed-up taken from runs minutes apart
    measures the drift too; within a round the four runs see the same machine. Reported: the median over rounds
    of each wall time, of each speed-up and of their quotient (Dask's share of the ceiling), after a first round
    that is not counted (imports, the allocators' growth). The chunking is ``simulated_scores``'s default for
    ``n``; the releases of every round are checked equal.
    """
    import multiprocessing

    size = _auto_chunk(n)
    indices = list(range(-(-n // size)))
    allocator = {key: str(value) for key, value in scale._LEAN_CLUSTER["distributed.nanny.pre-spawn-environ"].items()
                 if key.startswith("MALLOC_")}
    saved = {key: os.environ.get(key) for key in allocator}
    os.environ.update(allocator)                                        # read by the spawned processes at start
    try:
        with scale.local_cluster(n_workers=1) as one, scale.local_cluster(n_workers=2) as two, \
                multiprocessing.get_context("spawn").Pool(2) as pool:
            one.wait_for_workers(1)
            two.wait_for_workers(2)
            releases = set()

            def release(client) -> float:
                start = time.perf_counter()
                releases.add(scale.private_quantile(scale.simulated_scores(n, "auto", SEED), BETA, EPSILON, rng=0,
                                                    client=client))
                return time.perf_counter() - start

            def processes(parts) -> float:
                start = time.perf_counter()
                pool.map(_chunk_work, [(part, size) for part in parts])
                return time.perf_counter() - start

            runs = []
            for _ in range(rounds + 1):
                runs.append((release(one), release(two), processes([indices]),
                             processes([indices[0::2], indices[1::2]])))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    runs = runs[1:]

    def median(values) -> float:
        return float(np.median(list(values)))

    speedups = [d1 / d2 for d1, d2, _, _ in runs]
    ceilings = [p1 / p2 for _, _, p1, p2 in runs]
    return {"n": n, "chunk": size, "rounds": [list(r) for r in runs], "dask_one_worker_s": median(r[0] for r in runs),
            "dask_two_workers_s": median(r[1] for r in runs), "one_process_s": median(r[2] for r in runs),
            "two_processes_s": median(r[3] for r in runs), "speedup": median(speedups), "ceiling": median(ceilings),
            "share_of_ceiling": median(a / b for a, b in zip(speedups, ceilings)), "equal_releases": len(releases) == 1}


def _cpu(pids) -> float:
    """User + system CPU seconds of the processes ``pids`` (this process includes the local scheduler's thread)."""
    import psutil

    return sum(sum(psutil.Process(p).cpu_times()[:2]) for p in pids)


# --------------------------------------------------------------------------- the task-overhead model

OVERHEAD_N = 10**8
OVERHEAD_CHUNKS = (10**5, 10**6, 10**7)          # 1000, 100 and 10 tasks for the same 10^8 scores
TINY_N, TINY_CHUNK = 10**6, 10**3                # 1000 tasks of almost no work: the cost of a task itself


def overhead(n: int = OVERHEAD_N) -> dict:
    """Per-task overhead on one worker, from CPU time (on a shared machine the wall time of a task includes
    waiting for a core).

    * ``a``, the worker's cost per task beyond its work: the worker CPU per task of 1000 tasks of 1000 scores
      (microseconds of work each);
    * ``s0 + s * chunks``, the CPU time of the client and the scheduler (one process for all workers), fitted on
      the same ``n`` scores in chunks of 10^5, 10^6 and 10^7 and on the tiny tasks;
    * ``b``, generating and counting one score, is the worker CPU per score of the 10^7-score chunks less ``a``;
      :func:`main` replaces it by the value measured at 10^9 in the default chunking, whose chunks fit the
      caches differently (the cost per score depends on the chunk size through them, which a linear fit of
      CPU per task against chunk size would fold into ``a``).
    """
    runs = [generated_release(1, n, c, repeat=1) for c in OVERHEAD_CHUNKS]
    tiny = generated_release(1, TINY_N, TINY_CHUNK, repeat=1)
    a = tiny["worker_cpu_s"] / tiny["chunks"]
    largest = runs[-1]
    b = (largest["worker_cpu_s"] / largest["chunks"] - a) / largest["chunk"]
    k = np.array([r["chunks"] for r in runs + [tiny]], dtype=float)
    (s0, s), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(k), k]),
                                  np.array([r["client_cpu_s"] for r in runs + [tiny]]), rcond=None)
    with scale.local_cluster(n_workers=1) as client:       # T0: the wall time of a release of one small chunk
        client.wait_for_workers(1)
        x = scale.simulated_scores(1000, 1000, SEED)
        scale.private_quantile(x, BETA, EPSILON, rng=0)
        t0 = best_wall(lambda: scale.private_quantile(x, BETA, EPSILON, rng=0), repeat=5)
    return {"n": n, "runs": [{key: r[key] for key in ("chunk", "chunks", "wall_s", "worker_cpu_s", "client_cpu_s")}
                             for r in runs + [tiny]],
            "a_worker_s_per_task": float(max(a, 0.0)), "b_s_per_score": float(b),
            "s_scheduler_s_per_task": float(max(s, 0.0)), "s0_client_s_per_release": float(max(s0, 0.0)),
            "t0_release_s": t0}


def _reduction(k: int, fan_in: int) -> tuple[int, int]:
    """Number of reduction tasks and depth of the tree that adds ``k`` partial results ``fan_in`` at a time."""
    tasks = depth = 0
    while k > 1:
        k = -(-k // fan_in)
        tasks += k
        depth += 1
    return tasks, depth


def predict_wall(model: dict, n: int, chunk: int, workers: int, fan_in: int = scale._FAN_IN) -> float:
    """Predicted wall time of a release on ``workers`` single-threaded workers with as many cores.

    ``t = a + b * chunk`` per chunk, ``K`` chunks, a reduction tree of ``R`` tasks and depth ``D``:
    ``T = T0 + max(ceil(K / W) * t, (K + R) * s, (K * t + (K + R) * s) / W) + D * (a + s)`` -- the workers' rounds
    of tasks, or the scheduler's serial work, or all the CPU work shared by W cores (the client and the
    scheduler compete with the workers), whichever is longest; then the levels of the reduction one after the other.
    """
    a, b, s, t0 = (model[key] for key in ("a_worker_s_per_task", "b_s_per_score", "s_scheduler_s_per_task",
                                          "t0_release_s"))
    k = -(-n // chunk)
    tasks, depth = _reduction(k, fan_in)
    t = a + b * chunk
    return t0 + max(-(-k // workers) * t, (k + tasks) * s, (k * t + (k + tasks) * s) / workers) + depth * (a + s)


def predictions(model: dict, n: int, chunks: dict, workers=(1, 2, 4, 8, 16)) -> list[dict]:
    rows = []
    for label, chunk in chunks.items():
        one = predict_wall(model, n, chunk, 1)
        for w in workers:
            wall = predict_wall(model, n, chunk, w)
            rows.append({"chunking": label, "chunk": int(chunk), "workers": w, "wall_s": wall, "speedup": one / wall})
    return rows


def depth_scaling(n: int = 2 * 10**5, d: int = 5, partitions: int = 16) -> dict:
    """The spatial-depth median of ``n`` points generated on the workers in ``partitions`` chunks, on 1 and 2
    workers (1000 candidates): wall and CPU time, and the CPU cost per point and candidate."""
    import dask.array as da

    from dpcp_tutorial import GaussianPrior

    out = {"n": n, "d": d, "partitions": partitions, "candidates": 1000}
    for workers in (1, 2):
        with scale.local_cluster(n_workers=workers) as client:
            client.wait_for_workers(workers)
            pids = list(client.run(os.getpid).values())
            points = da.random.default_rng(SEED).standard_normal((n, d), chunks=(-(-n // partitions), d))
            release = lambda: scale.private_depth_median(points, 1.0, "spatial", GaussianPrior(0.0, 5.0), rng=0)
            release()
            w0 = _cpu(pids)
            out[f"wall_{workers}_s"] = best_wall(release, repeat=2)
            out[f"worker_cpu_{workers}_s"] = (_cpu(pids) - w0) / 2
    out["speedup"] = out["wall_1_s"] / out["wall_2_s"]
    out["cpu_s_per_point_candidate"] = out["worker_cpu_1_s"] / (n * out["candidates"])
    return out


def _cpu_name() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _auto_chunk(n: int) -> int:
    return int(scale.simulated_scores(n).chunks[0][0])


def main(save: bool = False) -> None:
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"load average before: {load} (2 cores: anything above ~1 takes time away from the workers)")
    sort = count_vs_sort()
    s7 = in_memory_scores(10**7)
    two = resident_release(2, s7)
    one = resident_release(1, s7)
    del s7
    model = overhead()
    g9_one = generated_release(1, 10**9, "auto")
    g9_two = generated_release(2, 10**9, "auto")
    paired = paired_speedup(10**9)
    speedup = paired["speedup"]
    # b at the chunk size the predictions are for: the worker CPU per score at 10^9 in the default chunking
    model["b_s_per_score"] = (g9_one["worker_cpu_s"] / g9_one["chunks"] - model["a_worker_s_per_task"]) / g9_one["chunk"]
    depth = depth_scaling()
    chunkings = {"10^6 per chunk": 10**6, "auto (128 chunks)": _auto_chunk(10**9), "10^7 per chunk": 10**7}
    predicted = predictions(model, 10**9, chunkings)
    # the depth median of 2 * 10^6 points in d = 5 (1000 candidates): the same model, a task's work being
    # rows * candidates * (CPU per point and candidate)
    depth_model = dict(model, b_s_per_score=depth["cpu_s_per_point_candidate"] * depth["candidates"])
    depth_predicted = predictions(depth_model, 2 * 10**6, {"20 partitions": 10**5, "128 partitions": 15_625})
    load_after = [round(x, 2) for x in os.getloadavg()]
    print()
    print("per-task overhead (one worker, 10^8 scores in chunks of 10^5, 10^6, 10^7, and 10^6 in chunks of 10^3):")
    print_table(["chunk", "chunks", "wall s", "worker CPU s", "client+scheduler CPU s"], [
        [f"{r['chunk']:.0e}", r["chunks"], f"{r['wall_s']:.2f}", f"{r['worker_cpu_s']:.2f}", f"{r['client_cpu_s']:.2f}"]
        for r in model["runs"]])
    print(f"  worker, per task beyond its work: a = {model['a_worker_s_per_task'] * 1e3:.2f} ms; generating and "
          f"counting: b = {model['b_s_per_score'] * 1e9:.2f} ns per score (at 10^9 in the default chunks)")
    print(f"  client and scheduler, per chunk: s = {model['s_scheduler_s_per_task'] * 1e3:.2f} ms (one process for all "
          f"workers); a release of one small chunk: T0 = {model['t0_release_s'] * 1e3:.0f} ms wall")
    print()
    print_table(["measurement", "value", "target"], [
        ["in-memory private_quantile / np.sort, N=10^6", f"{sort['ratio']:.2f}", "<= 0.5"],
        ["  (times)", f"{sort['private_quantile_s'] * 1e3:.1f} ms / {sort['sort_s'] * 1e3:.1f} ms", ""],
        ["Dask (2 workers) / in-memory, N=10^7 resident", f"{two['ratio']:.2f}", ""],
        ["  equal releases (3 seeds)", str(two["equal_outputs"] and one["equal_outputs"]), "True"],
        ["Dask (1 worker) / in-memory, N=10^7 (overhead)", f"{one['ratio']:.2f}", ""],
        ["  (times)", f"{one['dask_s'] * 1e3:.0f} ms / {one['in_memory_s'] * 1e3:.0f} ms", ""],
        [f"N=10^9 generated, {g9_one['chunks']} chunks, 1 worker: wall (median of 5 after the first)", f"{g9_one['wall_s']:.1f} s", ""],
        ["  worker CPU / client+scheduler CPU", f"{g9_one['worker_cpu_s']:.1f} s / {g9_one['client_cpu_s']:.1f} s", ""],
        ["N=10^9 generated, 2 workers: wall (median of 5 after the first)", f"{g9_two['wall_s']:.1f} s", ""],
        ["  worker CPU / client+scheduler CPU", f"{g9_two['worker_cpu_s']:.1f} s / {g9_two['client_cpu_s']:.1f} s", ""],
        ["  scores per second", f"{g9_two['scores_per_s']:.3g}", ""],
        ["  client peak RSS growth", f"{g9_two['client_peak_growth_mb']:.0f} MB", ""],
        ["  worker RSS after start / peak", f"{[round(x) for x in g9_two['worker_rss_after_start_mb']]} / "
                                           f"{[round(x) for x in g9_two['worker_peak_rss_mb']]} MB", ""],
        ["  first release on a new cluster: 1 / 2 workers",
         f"{g9_one['first_wall_s']:.1f} s / {g9_two['first_wall_s']:.1f} s", ""],
        [f"in {len(paired['rounds'])} rounds of 4 runs each (medians): Dask, 1 / 2 workers",
         f"{paired['dask_one_worker_s']:.1f} s / {paired['dask_two_workers_s']:.1f} s", ""],
        ["  the same chunk work without Dask: 1 / 2 processes",
         f"{paired['one_process_s']:.1f} s / {paired['two_processes_s']:.1f} s", ""],
        ["  speed-up 1 -> 2 workers, N=10^9", f"{speedup:.2f}", ">= 1.9"],
        ["  speed-up without Dask (the machine's ceiling)", f"{paired['ceiling']:.2f}", ""],
        ["  Dask's share of the ceiling", f"{paired['share_of_ceiling']:.3f}", ""],
        ["  equal releases in every round", str(paired["equal_releases"]), "True"],
        [f"spatial depth median, n={depth['n']}, d={depth['d']}, {depth['partitions']} partitions: 1 / 2 workers",
         f"{depth['wall_1_s']:.2f} s / {depth['wall_2_s']:.2f} s", ""],
        ["  speed-up 1 -> 2 workers", f"{depth['speedup']:.2f}", ""],
    ])
    print()
    print("predicted by the overhead model (workers = cores), N = 10^9 scores:")
    print_table(["chunking", "chunk", "workers", "wall s", "speed-up"], [
        [r["chunking"], f"{r['chunk']:.3g}", r["workers"], f"{r['wall_s']:.2f}", f"{r['speedup']:.1f}"]
        for r in predicted])
    print("target: >= 12 at 16 workers with the default chunking")
    print()
    print("predicted, spatial depth median of 2 * 10^6 points, d = 5, 1000 candidates:")
    print_table(["partitioning", "rows", "workers", "wall s", "speed-up"], [
        [r["chunking"], r["chunk"], r["workers"], f"{r['wall_s']:.2f}", f"{r['speedup']:.1f}"]
        for r in depth_predicted])
    print("target: >= 10 at 16 workers")
    print(f"load average after: {load_after}")
    payload = {
        "command": "python -m benchmarks scale --save",
        "machine": {"cpus": os.cpu_count(), "cpu": _cpu_name(),
                    "python": platform.python_version(), "load_before": load, "load_after": load_after},
        "count_vs_sort": sort, "resident_two_workers": two, "resident_one_worker": one,
        "overhead_model": model, "generated_1e9_one_worker": g9_one, "generated_1e9_two_workers": g9_two,
        "speedup_1e9": speedup, "paired_1e9": paired, "depth_median": depth, "predicted_1e9": predicted,
        "predicted_depth_median_2e6": depth_predicted,
    }
    save_result(OUTPUT, payload, save)
