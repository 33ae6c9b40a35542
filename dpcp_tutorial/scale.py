"""Private calibration and private medians on data that do not fit one process, with Dask (chapter 14).

The releases covered here look at the data only through **counts** (or sums)
over public cells: the histogram of the scores over the public edges for the
private quantile (:func:`private_quantile`), private split conformal
(:func:`pps_private_quantile`) and the DPCP threshold (:func:`dpcp_quantile`);
per-(candidate, direction) counts for the candidate depth median with
halfspace depth over public directions or integrated dual depth; per-candidate
sums of unit vectors for spatial depth (:func:`private_depth_median`). Such
statistics *add* across disjoint partitions, so they are computed where the
data live (map), summed in a tree on the workers (reduce), and only the
combined statistic is gathered on the client, where the in-memory mechanism
runs once on it:

.. math:: h(D) = \\sum_{p=1}^P h(D_p) \\quad\\Longrightarrow\\quad
          \\mathcal M_{\\text{scale}}(D_1, \\dots, D_P) = \\mathcal M(h(D)).

Other releases of the package are **not** functions of such a statistic and
have no distributed version here: the exact Tukey median (chapter 15), the
Langevin sampler of the depth median, DP training (chapter 7), OpenDP's
quantile and P-COQS as implemented (chapter 16; the latter is an adaptive
binary search, one noisy count per step).

Each function here returns **exactly** what the in-memory function returns
for the same data and the same ``rng`` (for spatial depth up to the rounding of
a float sum in another order), whatever the number of partitions, their sizes
or the number of workers, and its privacy guarantee is the in-memory one:

* only the combined statistic reaches the mechanism; no per-partition count,
  sum or score is released, returned or logged;
* the noise (the Gumbel draws, and every other use of ``rng``) is drawn once, on
  the client, after the reduction. Counting tasks are deterministic functions of
  their partition, so a task retried after a lost worker recomputes the same
  counts and never re-draws noise;
* the partitioning must not depend on private values: split by a function of
  each record alone (its day, its file of origin, its user id), never by a
  score. The release does not depend on the partitioning, but a partitioning
  chosen from the data is itself a computation on the data, and partition
  sizes are counts: they are public only if they are declared so.

Errors depend only on public inputs (the schema and dtypes of the collection,
the parameters) or say, with one fixed message, that some record lies outside
the mechanism's domain, exactly as the in-memory functions do.

The functions run on the current Dask scheduler (a :class:`distributed.Client`
set as default) or on the one passed as ``client``: a ``Client`` (for example
the one :func:`local_cluster` returns) or a scheduler address such as
``"tcp://10.0.0.5:8786"``. A **script** that starts a local cluster must do so
under ``if __name__ == "__main__":`` (the worker processes re-import the main
module; without the guard they fail with ``RuntimeError: Nanny failed to
start``). Requires the optional dependencies ``dask[array,dataframe]`` and
``distributed`` (``pip install "dpcp_tutorial[scale]"``).

Every partition is one task (the counting is fused with the step that makes
the partition), and every task costs a few milliseconds of the scheduler's
time beyond its work, on one scheduler for all workers (chapter 14, "What it
costs"). Give the functions partitions of a tenth of a second of work or more
(millions of scores; thousands of points for a depth median with a thousand
candidates), a number of them that is a multiple of the number of workers or
many times it, e.g. ``frame.repartition(npartitions=...)``, by row positions,
never by values.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import warnings

import numpy as np

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("dpcp_tutorial.scale needs Dask: pip install \"dpcp_tutorial[scale]\" "
                      "(dask[array,dataframe], distributed, pyarrow)") from exc

from . import _counts
from . import unbounded as _unbounded
from ._validation import (
    MAX_MAGNITUDE,
    RandomLike,
    check_1d,
    check_2d,
    check_bool,
    check_choice,
    check_epsilon,
    check_estimator,
    check_positive_int,
    check_random_state,
    model_outputs,
    silenced_model,
)
from ._depth_core import project, resolve_directions
from ._median_core import (
    DEFAULT_DIRECTIONS,
    MAX_CANDIDATES,
    check_box,
    check_candidates_in_box,
    check_direction_settings,
    check_candidate_memory,
    check_prior_setting,
    draw_candidates,
    prior_from_localization,
    warn_far_tail,
)
from .depth import check_depth_name
from .dpcp import dpcp_quantile as _dpcp_quantile
from .median import GaussianPrior, mechanism_eta
from .mechanisms import gumbel_max_sample
from .private_split import pps_choose_m, pps_grid
from .private_split import pps_private_quantile as _pps_private_quantile
from .quantile import private_quantile as _private_quantile
from .quantile import quantile_edges

__all__ = [
    "local_cluster",
    "simulated_scores",
    "model_scores",
    "score_histogram",
    "private_quantile",
    "pps_private_quantile",
    "dpcp_quantile",
    "unbounded_private_quantile",
    "private_depth_median",
]

# Task sizes (chapter 14, "What it costs"). Every task costs a few milliseconds of scheduler and worker time beyond
# its work, and the scheduler is one process: tasks must be large for many workers to pay off, and numerous enough
# to keep every worker busy to the end.
_FAN_IN = 16                    # partial results added per reduction task (a tree of depth log_16 of the partitions)
_REDUCE_BYTES = 2**27           # ... fewer when the partial results are large: at most this many bytes per task
_AUTO_CHUNKS = 128              # simulated_scores(chunk_size="auto"): this many chunks (a multiple of 2, 4, ..., 128)
_AUTO_MIN_CHUNK = 2**20         # ... of at least ~10^6 scores (~10 ms of counting, several times the task overhead)
_AUTO_MAX_CHUNK = 2**24         # ... and at most ~1.7 * 10^7 scores (134 MB of float64 per chunk)
_MAX_SIMULATED = 2**53          # simulated_scores: at most this many scores (exact in float64 indices)
_MAX_CHUNKS = 10**7             # ... in at most this many chunks (the task graph lives on the client)
# local_cluster: distributed's own instrumentation, which runs on the cores the workers count with (the scheduler,
# the client and the nannies share them too): the statistical profiler samples every thread 100 times a second and
# each event loop checks its health every 20 ms; idle, they cost a two-worker cluster about 7% of a core, about
# 1% with these settings. And a worker reuses the memory of a freed chunk for the next one (glibc's malloc
# thresholds; distributed's default returns it to the system at once): no page faults and no page zeroing for every
# new chunk, which cost about 20% of the counting and load the memory bus that the workers share; a worker then
# keeps freed chunks resident (peak RSS at 10^9 scores in 128 chunks: 350-400 MB against 285 MB, one or two chunks
# more). The thresholds alone do not reach chunks over 64 MB: a worker runs its tasks in a thread, glibc gives such
# a thread an arena of its own whose heaps hold at most 64 MB, and it maps every larger block afresh; with one
# arena (the main one, which grows without that bound) those are reused too (10^9 scores in chunks of 2^24, 134 MB:
# 7.5 -> 5.9 s on one worker, 4.5 -> 3.2 s on two). A setting the user has changed from distributed's default is
# kept.
_LEAN_CLUSTER = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                 "distributed.admin.system-monitor.interval": "2s",
                 "distributed.worker.memory.monitor-interval": "500ms",
                 "distributed.nanny.pre-spawn-environ": {
                     "MALLOC_MMAP_THRESHOLD_": 2**28, "MALLOC_TRIM_THRESHOLD_": 2**28, "MALLOC_ARENA_MAX": 1,
                     "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}}


# --------------------------------------------------------------------------- engine

def local_cluster(n_workers: int | None = None, threads_per_worker: int = 1, quiet: bool = True, **kwargs):
    """Start a :class:`distributed.LocalCluster` (one worker process per core) and return its ``Client``.

    The client becomes the default Dask scheduler, so every function of this
    module (and any ``.compute()``) runs on it. It can be used in two ways:

    * as a context manager, which closes the client and the cluster on exit::

          with scale.local_cluster(n_workers=2) as client:
              qhat = scale.private_quantile(scores, 0.1, 1.0, rng=1)

    * or kept, and passed as ``client=`` to the functions of this module; call
      ``client.close()`` when done (this also stops the cluster it started)::

          client = scale.local_cluster()
          qhat = scale.private_quantile(scores, 0.1, 1.0, rng=1, client=client)
          client.close()

    The worker processes re-import the main module, so a **script** must create
    the cluster under ``if __name__ == "__main__":`` (otherwise every worker
    fails with ``RuntimeError: Nanny failed to start``). In a notebook or an
    interactive session nothing is needed. On an existing cluster use
    ``distributed.Client("tcp://scheduler:8786")`` instead; nothing else changes.

    Parameters
    ----------
    n_workers : int, default=None
        Number of worker processes (``None``: the number of cores).
    threads_per_worker : int, default=1
        Threads per worker (1: the counting is single-threaded NumPy).
    quiet : bool, default=True
        Silence distributed's logging and put the dashboard on a free port.
    **kwargs
        Passed to :class:`distributed.LocalCluster` (e.g. ``memory_limit``).

    Returns
    -------
    distributed.Client

    Raises
    ------
    RuntimeError
        When called while a worker process imports the main module (the
        missing ``if __name__ == "__main__":`` guard), with that advice.

    Examples
    --------
    One worker in this process (``processes=False``: threads, started in a
    fraction of a second), closed on leaving the ``with`` block:

    >>> import dask.array as da
    >>> with local_cluster(n_workers=1, processes=False) as client:
    ...     x = da.from_array(np.linspace(0.0, 1.0, 101), chunks=50)
    ...     h = score_histogram(x, [0.5, 1.0], client=client)
    >>> h.counts
    array([50,  1, 49,  1,  0])
    """
    from distributed import Client

    threads_per_worker = check_positive_int(threads_per_worker, "threads_per_worker")
    n_workers = (os.cpu_count() or 1) if n_workers is None else check_positive_int(n_workers, "n_workers")
    # a spawned worker process that is still importing the main module (multiprocessing's bootstrapping phase)
    if getattr(multiprocessing.current_process(), "_inheriting", False) and kwargs.get("processes", True):
        raise RuntimeError("scale.local_cluster() was called while a worker process was importing the main module: "
                           "in a script, start the cluster under `if __name__ == \"__main__\":`")
    if quiet:
        for name in ("distributed", "bokeh", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        kwargs.setdefault("dashboard_address", ":0")     # a free port: no clash with another cluster
        kwargs.setdefault("silence_logs", logging.CRITICAL)
    kwargs.setdefault("processes", True)
    # a Client that starts its own LocalCluster also closes it on close() / on leaving a with block; the nannies
    # hand the configuration to the worker processes they start
    try:
        with dask.config.set(_lean_settings()):
            return Client(n_workers=n_workers, threads_per_worker=threads_per_worker, **kwargs)
    except RuntimeError as exc:
        if "failed to start" not in str(exc):
            raise
        raise RuntimeError("the local cluster's worker processes failed to start. In a script, create the cluster "
                           "under `if __name__ == \"__main__\":` (each worker process re-imports the main module); "
                           "otherwise see the worker's traceback above") from exc


def _lean_settings() -> dict:
    """The entries of ``_LEAN_CLUSTER`` whose current value is still distributed's default."""
    import distributed  # noqa: F401  (registers distributed's defaults before they are read)

    defaults = dask.config.merge(*dask.config.defaults)
    return {key: value for key, value in _LEAN_CLUSTER.items()
            if dask.config.get(key, None) == dask.config.get(key, None, config=defaults)}


def _check_address(address: str) -> str:
    """A scheduler address such as ``"tcp://10.0.0.5:8786"``, checked by its syntax (no connection is made).

    A malformed address is refused here, before a ``distributed.Client`` is
    built: a Client that fails in its constructor stays half-open and blocks
    the process when it is garbage-collected.
    """
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"client={address!r} is not a scheduler address ({exc}); pass an address with a port such "
                         "as 'tcp://10.0.0.5:8786', a distributed.Client (e.g. scale.local_cluster()) or None for "
                         "the current Dask scheduler") from None
    return address


def _connect(address: str):
    """A ``distributed.Client`` on ``address`` that is not set as default; closed again if connecting fails."""
    from distributed import Client

    client = Client.__new__(Client)
    try:
        client.__init__(address, set_as_default=False)
    except BaseException as exc:
        with contextlib.suppress(Exception):      # never leave a half-open client behind (its __del__ blocks)
            client.close(timeout=5)
        if isinstance(exc, (OSError, TimeoutError)):
            raise ValueError(f"could not connect to the scheduler at client={address!r} ({exc}); check the "
                             "address and that the scheduler is running") from exc
        raise
    return client


def _check_client(client):
    """``client`` must be None, a distributed.Client or a scheduler address (checked before any work)."""
    if client is None:
        return client
    if isinstance(client, str):
        return _check_address(client)
    from distributed import Client

    if isinstance(client, Client):
        if client.status not in ("running", "connecting", "newly-created"):
            raise ValueError(f"the Client passed as client= is {client.status!r}; pass a running client "
                             "(e.g. scale.local_cluster() or distributed.Client(address))")
        return client
    raise TypeError(f"client must be a distributed.Client, a scheduler address such as 'tcp://host:8786' or None, "
                    f"got {type(client).__name__}; for a local cluster pass client=scale.local_cluster() or use "
                    "`with scale.local_cluster() as client:`")


@contextlib.contextmanager
def _using(client):
    """Run on ``client`` (a Client or a scheduler address), or on the current default scheduler."""
    client = _check_client(client)
    if client is None:
        yield None
        return
    with contextlib.ExitStack() as stack:
        if isinstance(client, str):
            client = stack.enter_context(_connect(client))
        stack.enter_context(dask.config.set(scheduler=client))
        yield client


def _compute(value, client, progress: bool):
    with _using(client) as active, warnings.catch_warnings():
        # distributed warns when a graph is large (data embedded with from_array); the graph size is the
        # caller's layout choice, not a problem of the release, and the warning fires once per call
        warnings.filterwarnings("ignore", message="Sending large graph of size", category=UserWarning)
        if progress:
            from distributed import get_client, progress as show_progress

            if active is None:
                try:
                    active = get_client()
                except ValueError:       # no distributed client: the local scheduler's own progress bar
                    from dask.diagnostics import ProgressBar

                    with ProgressBar():
                        return dask.compute(value)[0]
            future = active.compute(value)
            show_progress(future)
            return future.result()
        return dask.compute(value)[0]


def _check_dtype(dtype, name: str) -> None:
    """A collection's dtype is public metadata: refuse what the in-memory path refuses (TypeError), never cast."""
    from ._validation import real_array

    dtype = np.dtype(dtype) if not isinstance(dtype, np.dtype) and not hasattr(dtype, "kind") else dtype
    if getattr(dtype, "kind", "O") not in "biuf":
        real_array(np.empty(0, dtype=dtype if isinstance(dtype, np.dtype) else object), name)  # its messages
        raise TypeError(f"{name} must have a numeric dtype (bool, integer or float), got {dtype}; convert the "
                        "columns with .astype(float) first")


def _partition_values(part) -> np.ndarray:
    """A pandas partition as a float array; a missing value of a nullable column (``pd.NA``) is read as NaN.

    The missing value then meets the data-domain check of the release like any NaN (one fixed message), instead
    of failing inside the conversion on the partitions that happen to hold one.
    """
    return part.to_numpy(dtype=float, na_value=np.nan)


def _blocks(collection, ndim: int, name: str) -> list:
    """The partitions of a Dask collection as delayed NumPy arrays (rows never split across columns)."""
    if isinstance(collection, (dd.Series, dd.DataFrame)):
        dtypes = [collection.dtype] if isinstance(collection, dd.Series) else list(collection.dtypes)
        for dtype in dtypes:
            _check_dtype(dtype, name)
        if ndim == 1 and isinstance(collection, dd.DataFrame):
            raise ValueError(f"{name} must be a Dask Series or a 1-D Dask array, got a DataFrame; select a column")
        parts = collection.to_delayed()
        return [dask.delayed(_partition_values)(p) for p in parts]
    if not isinstance(collection, da.Array):
        raise TypeError(f"{name} must be a dask.array.Array or a Dask DataFrame/Series, got "
                        f"{type(collection).__name__}; for in-memory data use the functions of dpcp_tutorial "
                        "directly (or wrap the array with dask.array.from_array)")
    _check_dtype(collection.dtype, name)
    if isinstance(getattr(collection, "_meta", None), np.ma.MaskedArray):      # public: the array's type
        raise TypeError(f"{name} is a masked Dask array: its masked entries would be counted as data; pass "
                        f"{name}[~da.ma.getmaskarray({name})] or da.ma.filled({name}, value) explicitly")
    if collection.ndim != ndim:
        shape = "(n,)" if ndim == 1 else "(n, d)"
        raise ValueError(f"{name} must be a {ndim}-D Dask array of shape {shape}, got {collection.ndim} "
                         "dimensions")
    if ndim == 2:
        collection = collection.rechunk({1: -1})
    return list(collection.to_delayed().ravel())


def _fan_in(nbytes: int) -> int:
    """Partial results per reduction task: ``_FAN_IN``, fewer for large results (at most ``_REDUCE_BYTES`` in)."""
    return int(max(2, min(_FAN_IN, _REDUCE_BYTES // max(int(nbytes), 1))))


def _tree_sum(parts: list, nbytes: int = 0):
    """Add partial results (``nbytes`` each) on the workers, :func:`_fan_in` at a time (a tree reduction)."""
    if not parts:
        raise ValueError("the collection has no partitions")
    fan_in = _fan_in(nbytes)
    while len(parts) > 1:
        parts = [dask.delayed(_add)(*parts[i:i + fan_in]) for i in range(0, len(parts), fan_in)]
    return parts[0]


def _add(*arrays):
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    return total


# --------------------------------------------------------------------------- scores

# flags appended to each partition's histogram: the in-memory checks of check_1d(..., unit_interval=True), in order
_NAN, _INF, _OUTSIDE = range(3)
_FLAGS = 3


def _block_histogram(block: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Map step: the cell histogram of one partition, plus three entries flagging NaN, inf and out-of-range."""
    block = np.asarray(block, dtype=float).ravel()
    out = np.zeros(2 * edges.size + 1 + _FLAGS, dtype=np.int64)
    if block.size == 0:
        return out
    try:        # checks [0, 1] block by block while counting: one pass over the chunk in memory, not three
        out[:-_FLAGS] = _counts.edge_histogram(block, edges).counts
    except ValueError:                  # NaN, inf or outside [0, 1]: flags only, no count
        flags = out[-_FLAGS:]
        flags[_NAN] = int(np.isnan(block).any())
        flags[_INF] = int(np.isinf(block).any())
        flags[_OUTSIDE] = int(not flags[_NAN] and not flags[_INF])
    return out


def _block_histogram_row(block: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return _block_histogram(block, edges)[None, :]


def _histogram_parts(scores, edges: np.ndarray) -> list:
    """One delayed histogram per partition.

    For a Dask array the counting is a ``map_blocks`` step, which Dask fuses
    with the step that produces each chunk (generating, reading, scoring): one
    task per chunk instead of two, so half the scheduling and no chunk held
    between tasks.
    """
    blocks = _blocks(scores, 1, "scores")          # type, dtype and shape checks (public metadata)
    if not isinstance(scores, da.Array):
        shared = dask.delayed(edges, pure=True)
        return [dask.delayed(_block_histogram, pure=True)(b, shared) for b in blocks]
    size = 2 * edges.size + 1 + _FLAGS
    rows = scores.map_blocks(_block_histogram_row, dask.delayed(edges, pure=True), new_axis=1,
                             chunks=((1,) * scores.numblocks[0], (size,)), dtype=np.int64,
                             meta=np.empty((0, 0), dtype=np.int64))
    return list(rows.to_delayed().ravel())         # rows of shape (1, size): summed, then flattened


def _raise_domain_error(flags: np.ndarray) -> None:
    """Raise the in-memory message for the first failing check (fixed messages: no value, count or position)."""
    canonical = {_NAN: [np.nan], _INF: [np.inf], _OUTSIDE: [2.0]}
    for flag in (_NAN, _INF, _OUTSIDE):
        if flags[flag]:
            check_1d(np.array(canonical[flag]), "scores", unit_interval=True)
    raise AssertionError("unreachable: a domain flag without a failing check")  # pragma: no cover


def _check_edges(edges) -> np.ndarray:
    """Public edges: a non-empty, finite, strictly increasing 1-D array of reals (as in memory)."""
    edges = check_1d(edges, "edges")
    if np.any(np.diff(edges) <= 0):
        raise ValueError("edges must be strictly increasing; sort them and drop duplicates (np.unique)")
    return edges


def score_histogram(scores, edges, client=None, progress: bool = False) -> _counts.EdgeHistogram:
    """Cell histogram of distributed scores over public edges: counted per partition, summed on the workers.

    This is the only statistic the score releases use (:mod:`dpcp_tutorial._counts`).

    Parameters
    ----------
    scores : dask.array.Array of shape (N,) or dask.dataframe.Series
        Scores in [0, 1], of a real dtype (complex, string and object dtypes
        are refused with ``TypeError``, as in memory; they are never cast).
    edges : array-like of shape (L,)
        Public, finite, strictly increasing edges.
    client : distributed.Client or str, default=None
        Where to run (``None``: the current Dask scheduler). An address string
        is checked by its syntax before anything runs; the connection made for
        it is closed afterwards (and at once if it fails), and it never
        becomes the default client.
    progress : bool, default=False
        Show a progress bar: distributed's, or ``dask.diagnostics.ProgressBar``
        on the local scheduler.

    Returns
    -------
    EdgeHistogram

    Raises
    ------
    TypeError
        For a non-numeric dtype or a wrong collection type (public metadata).
    ValueError
        If some score is NaN, infinite or outside [0, 1]: the in-memory
        function's fixed message, naming no value and no partition.

    Examples
    --------
    ``counts`` alternates open cells and edges: 231 scores below 0.25, none
    at 0.25, 242 between 0.25 and 0.5, ...

    >>> import dask.array as da
    >>> x = da.from_array(np.random.default_rng(0).uniform(size=1000), chunks=250)
    >>> h = score_histogram(x, [0.25, 0.5, 0.75, 1.0])
    >>> h.counts
    array([231,   0, 242,   0, 260,   0, 267,   0,   0])
    """
    edges = _check_edges(edges)
    progress = check_bool(progress, "progress")
    _check_client(client)
    parts = _histogram_parts(scores, edges)
    total = np.ravel(_compute(_tree_sum(parts, 8 * (2 * edges.size + 1 + _FLAGS)), client, progress))
    if total[-_FLAGS:].any():
        _raise_domain_error(total[-_FLAGS:])
    # no scores at all: an empty histogram, which a release with a public n pads to that size and one without
    # refuses (its size is then public), as in memory
    return _counts.EdgeHistogram(edges, total[:-_FLAGS])


def private_quantile(scores, beta: float, epsilon: float, bins=1000, rng: RandomLike = None, *,
                     client=None, progress: bool = False, **kwargs) -> float:
    """The tight private quantile (:func:`dpcp_tutorial.private_quantile`) on distributed scores (chapter 14).

    Counts the scores over the edges per partition, sums the histograms on the
    workers and runs :func:`dpcp_tutorial.private_quantile` once, on the client,
    on the combined histogram. Same arguments (every further keyword, e.g. the
    public ``n`` or ``variant``, is forwarded), same privacy, and the same release
    for the same ``rng``.

    Parameters
    ----------
    scores : dask.array.Array of shape (N,) or dask.dataframe.Series
        Scores in [0, 1], partitioned.
    beta : float
        Miscoverage level, as in :func:`dpcp_tutorial.private_quantile`.
    epsilon : float
        Privacy budget of the release.
    bins : int or array-like, default=1000
        The public edges, as in :func:`dpcp_tutorial.private_quantile`.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise, drawn on the client; ``None`` for a real release
        (:term:`Seed`).
    client : distributed.Client or str, default=None
        Where to run (:func:`score_histogram`).
    progress : bool, default=False
        Show a progress bar.
    **kwargs
        Forwarded to :func:`dpcp_tutorial.private_quantile`.

    Returns
    -------
    float
        The release of :func:`dpcp_tutorial.private_quantile` on the same scores.

    Examples
    --------
    >>> import dask.array as da
    >>> import dpcp_tutorial
    >>> s = np.random.default_rng(0).uniform(size=1000)
    >>> q = private_quantile(da.from_array(s, chunks=250), 0.1, 1.0, bins=100, rng=1)
    >>> q, q == dpcp_tutorial.private_quantile(s, 0.1, 1.0, bins=100, rng=1)
    (0.94, True)
    """
    hist = score_histogram(scores, quantile_edges(bins), client, progress)
    return _private_quantile(hist, beta, epsilon, bins=bins, rng=rng, **kwargs)


def pps_private_quantile(scores, alpha: float, epsilon: float, m="auto", gamma="auto", variant: str = "tight",
                         n: int | None = None, rng: RandomLike = None, *, client=None, progress: bool = False,
                         **kwargs) -> float:
    """Private split conformal threshold (:func:`dpcp_tutorial.pps_private_quantile`) on distributed scores.

    With ``m="auto"`` the grid size is chosen exactly as in memory (from the
    public ``n`` and ``rng``, before any counting; ``n`` defaults to the number
    of scores, counted first, and then declared public). Then the scores are
    counted on the grid per partition, and the in-memory function runs once on
    the combined histogram.

    Parameters
    ----------
    scores : dask.array.Array of shape (N,) or dask.dataframe.Series
        Scores in [0, 1], partitioned.
    alpha : float
        Miscoverage level.
    epsilon : float
        Privacy budget of the release.
    m : int or "auto", default="auto"
        Number of grid edges, as in :func:`dpcp_tutorial.pps_private_quantile`.
    gamma : float or "auto", default="auto"
        Split of ``alpha``, as in memory.
    variant : {"tight", "reference"}, default="tight"
        As in memory.
    n : int, default=None
        Public calibration size, as in memory.
    rng : None, int or numpy.random.Generator, default=None
        Source of the ``m`` choice and of the noise; ``None`` for a real
        release (:term:`Seed`).
    client : distributed.Client or str, default=None
        Where to run (:func:`score_histogram`).
    progress : bool, default=False
        Show a progress bar.
    **kwargs
        Forwarded to :func:`dpcp_tutorial.pps_private_quantile`.

    Returns
    -------
    float
        The release of the in-memory function on the same scores.

    Examples
    --------
    >>> import dask.array as da
    >>> import dpcp_tutorial
    >>> s = np.random.default_rng(0).uniform(size=1000)
    >>> q = pps_private_quantile(da.from_array(s, chunks=250), 0.1, 1.0, rng=1)
    >>> round(q, 4), q == dpcp_tutorial.pps_private_quantile(s, 0.1, 1.0, rng=1)
    (0.9308, True)
    """
    rng = check_random_state(rng)
    progress = check_bool(progress, "progress")
    _check_client(client)
    if isinstance(m, str):
        if m != "auto":
            raise ValueError(f"m={m!r}: pass an integer >= 2 or 'auto'")
        n_public = _count(scores, client) if n is None else check_positive_int(n, "n")
        if n_public == 0:                 # no n: the number of scores is public
            raise ValueError(_counts.EMPTY_SCORES)
        m, _ = pps_choose_m(n_public, alpha, epsilon, variant=variant, rng=rng)
    hist = score_histogram(scores, pps_grid(m), client, progress)
    return _pps_private_quantile(hist, alpha, epsilon, m=m, gamma=gamma, variant=variant, n=n, rng=rng, **kwargs)


def _count(scores, client) -> int:
    parts = [dask.delayed(np.size)(b) for b in _blocks(scores, 1, "scores")]
    return int(_compute(dask.delayed(sum)(parts), client, False))


def dpcp_quantile(scores, alpha: float, epsilon1: float, epsilon2: float, delta: float, bins=1000,
                  rng: RandomLike = None, *, client=None, progress: bool = False, **kwargs) -> float:
    """The DPCP threshold (:func:`dpcp_tutorial.dpcp_quantile`) on distributed scores (chapter 14).

    The histogram of the scores over the public edges is counted per
    partition and summed on the workers; the in-memory function runs once on
    it, on the client: the same release for the same ``rng``.

    Parameters
    ----------
    scores : dask.array.Array of shape (N,) or dask.dataframe.Series
        Scores in [0, 1], partitioned.
    alpha : float
        Miscoverage level.
    epsilon1 : float
        Budget of the first stage, as in :func:`dpcp_tutorial.dpcp_quantile`.
    epsilon2 : float
        Budget of the second stage, as in memory.
    delta : float
        As in memory.
    bins : int or array-like, default=1000
        The public edges.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise; ``None`` for a real release (:term:`Seed`).
    client : distributed.Client or str, default=None
        Where to run (:func:`score_histogram`).
    progress : bool, default=False
        Show a progress bar.
    **kwargs
        Forwarded to :func:`dpcp_tutorial.dpcp_quantile`.

    Returns
    -------
    float
        The release of the in-memory function on the same scores.

    Examples
    --------
    >>> import dask.array as da
    >>> import dpcp_tutorial
    >>> s = np.random.default_rng(0).uniform(size=1000)
    >>> q = dpcp_quantile(da.from_array(s, chunks=250), 0.1, 0.5, 0.5, 1e-5, bins=100, rng=1)
    >>> q, q == dpcp_tutorial.dpcp_quantile(s, 0.1, 0.5, 0.5, 1e-5, bins=100, rng=1)
    (0.97, True)
    """
    hist = score_histogram(scores, quantile_edges(bins), client, progress)
    return _dpcp_quantile(hist, alpha, epsilon1, epsilon2, delta, bins=bins, rng=rng, **kwargs)


def _block_grid_counts(block, grid: np.ndarray, lower: float, unit: float, growth: float) -> np.ndarray:
    """Map step of the unbounded quantile: one partition's grid counts, plus a last entry flagging bad scores."""
    block = np.asarray(block, dtype=float).ravel()
    out = np.zeros(grid.size + 2, dtype=np.int64)
    counts = _counts.grid_counts(block, grid, lower, unit, growth) if block.size else None
    if counts is None:
        out[-1] = int(block.size > 0)
    else:
        out[:-1] = counts
    return out


def unbounded_private_quantile(scores, beta: float, epsilon: float, *, lower: float = 0.0, unit: float = 1.0,
                               growth: float = _unbounded.GROWTH, max_steps: int = _unbounded.MAX_STEPS,
                               rng: RandomLike = None, client=None, progress: bool = False, **kwargs) -> float:
    """The unbounded private quantile (:func:`dpcp_tutorial.unbounded_private_quantile`) on distributed scores.

    Each partition is counted on the public geometric grid, the counts are
    summed on the workers (counts of disjoint parts add up), and the in-memory
    function runs once on the total: same arguments (further keywords such as
    the public ``n`` or ``threshold_share`` are forwarded), same privacy, and
    the same release for the same ``rng`` (chapters 14 and 18). A NaN or a score
    below ``lower`` in any partition raises the in-memory function's one fixed
    message, naming no value and no partition.

    Parameters
    ----------
    scores : dask.array.Array of shape (N,) or dask.dataframe.Series
        Scores at or above ``lower`` (``inf`` allowed), partitioned.
    beta : float
        Miscoverage level.
    epsilon : float
        Privacy budget of the release.
    lower : float, default=0.0
        Public lower end of the scores (:func:`dpcp_tutorial.unbounded_grid`).
    unit : float, default=1.0
        Public scale of the grid's first steps.
    growth : float, default=1.005
        Ratio of the grid.
    max_steps : int, default=20000
        Number of candidates.
    rng : None, int or numpy.random.Generator, default=None
        Source of the noise; ``None`` for a real release (:term:`Seed`).
    client : distributed.Client or str, default=None
        Where to run (:func:`score_histogram`).
    progress : bool, default=False
        Show a progress bar.
    **kwargs
        Forwarded to :func:`dpcp_tutorial.unbounded_private_quantile`.

    Returns
    -------
    float
        The release of the in-memory function on the same scores.

    Examples
    --------
    >>> import dask.array as da
    >>> import dpcp_tutorial
    >>> s = np.random.default_rng(0).uniform(size=1000)
    >>> q = unbounded_private_quantile(da.from_array(s, chunks=250), 0.1, 1.0, rng=1)
    >>> round(q, 4), q == dpcp_tutorial.unbounded_private_quantile(s, 0.1, 1.0, rng=1)
    (0.922, True)
    """
    grid = _unbounded.unbounded_grid(lower, unit, growth, max_steps)
    progress = check_bool(progress, "progress")
    _check_client(client)
    blocks = _blocks(scores, 1, "scores")
    shared = dask.delayed(grid, pure=True)
    parts = [dask.delayed(_block_grid_counts, pure=True)(b, shared, float(lower), float(unit), float(growth))
             for b in blocks]
    total = np.ravel(_compute(_tree_sum(parts, 8 * (grid.size + 2)), client, progress))
    if total[-1]:
        raise ValueError(_counts.BAD_GRID_SCORES)
    hist = _unbounded.GridHistogram(grid, total[:-1])
    return _unbounded.unbounded_private_quantile(hist, beta, epsilon, lower=lower, unit=unit, growth=growth,
                                                 max_steps=max_steps, rng=rng, **kwargs)


# --------------------------------------------------------------------------- scores where the data live

def _model_input(frame, features, model):
    """The partition's feature columns as the model saw them when fitted: a DataFrame if it was fitted on one."""
    X = frame[list(features)]
    return X if hasattr(model, "feature_names_in_") else X.to_numpy()


def _batch_scores(rows, model, features, target, kind, bound) -> np.ndarray:
    """The scores of ``rows``, by the in-memory rule: a record's model output, or NaN where the model refuses it
    alone (:func:`~dpcp_tutorial._validation.model_outputs`); a NaN or infinite score is the worst score 1."""
    from ._split_core import clipped_residual_scores, private_classification_scores

    X = _model_input(rows, features, model)
    if kind == "residual":
        y = rows[target].to_numpy(dtype=float, na_value=np.nan)
        return clipped_residual_scores(y, model_outputs(model.predict, X), bound)
    y = rows[target].to_numpy()
    classes = np.asarray(model.classes_)
    # labels the model does not know (or cannot compare: a missing value, another type) get probability 0, i.e.
    # the index -1 and the score 1 for LAC and APS
    try:
        position = np.searchsorted(classes, y)
        inside = position < classes.size
        known = np.zeros(y.size, dtype=bool)
        known[inside] = np.asarray(classes[position[inside]] == y[inside], dtype=bool)
        index = np.where(known, position, -1)
    except (TypeError, ValueError):             # labels not comparable with the classes as a whole: one by one
        index = np.array([_label_index(classes, label) for label in y], dtype=np.intp)
    return private_classification_scores(kind, model_outputs(model.predict_proba, X, classes.size), index)


def _label_index(classes, label) -> int:
    """The column of one label in ``classes``; -1 when it is not there or cannot be compared with them."""
    try:
        hits = np.asarray(classes == label)
        if hits.dtype != bool or hits.shape != classes.shape:
            return -1
        found = np.flatnonzero(hits)
    except (TypeError, ValueError):
        return -1
    return int(found[0]) if found.size else -1


def _partition_scores(frame, model, features, target, kind, bound):
    """Map step: the conformal scores of one partition; a score that cannot be computed is 1 (never an error).

    The features go to the model as they are (missing values included: the model decides), inside
    :func:`~dpcp_tutorial._validation.silenced_model` (its warnings are dropped). When it refuses a batch of
    records (it raises: an unknown category of a one-hot encoder, a missing value it cannot handle), the batch is
    halved and each half scored again, down to single records; a record that the model refuses alone gets the
    worst score 1 (:func:`~dpcp_tutorial._validation.model_outputs`, the rule of the in-memory estimators). The
    score of a record is thus a function of the record only, whatever the other records are (a row-wise model
    gives a record the same output in any batch, up to the summation order of its floating-point kernels).
    """
    series = type(frame[target])                # pandas.Series, without importing pandas here
    if not len(frame):
        return series(np.ones(0), index=frame.index, name=target + "_score")
    with silenced_model():
        scores = _batch_scores(frame, model, features, target, kind, bound)
    return series(scores, index=frame.index, name=target + "_score")


def model_scores(frame, model, features, target: str, kind: str = "residual", bound: float | None = None):
    """Normalised conformal scores of a fitted, public model, computed partition by partition (chapter 14).

    Each partition's feature columns are passed to the model as a pandas
    DataFrame when the model was fitted on one (it has ``feature_names_in_``:
    no feature-name warning, and a ``ColumnTransformer`` that selects columns
    by name works), and as a NumPy array otherwise.

    The scores are computed so that no record can make the step fail or
    speak, by the rule of the in-memory estimators: features go to the model
    as they are (a model that handles missing values, e.g.
    ``HistGradientBoostingRegressor``, scores a record with NaN features as
    it does in memory); a record whose score cannot be computed -- a missing
    label, a NaN or infinite model output, a label the classifier does not
    know (not in ``model.classes_``), a record the model refuses (a category a
    one-hot encoder has not seen, a missing value it cannot handle) -- gets
    the largest score, 1, which can only raise the threshold. The rule is per record: when the model refuses a batch of
    records, the batch is halved and each half scored again, down to single
    records, and a record the model refuses alone gets 1. The model's own warnings (overflow, convergence,
    feature names ...) are dropped (:func:`~dpcp_tutorial._validation.silenced_model`).
    No message ever quotes a label, a category, a value or a count.

    The feature list is checked against the model's public schema
    (``n_features_in_`` and ``feature_names_in_``, when it has them) before any
    record is read, so that a wrong column list is refused instead of giving
    every record the score 1.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        Features and labels, e.g. ``dask.dataframe.read_parquet(path)``.
    model : fitted scikit-learn estimator
        Trained on data disjoint from ``frame`` (public to the calibration step).
    features : list of str
        Feature columns, in the order the model expects.
    target : str
        Label column (the classifier's labels, ``model.classes_``, for ``"lac"``/``"aps"``).
    kind : {"residual", "lac", "aps"}, default="residual"
        ``"residual"``: :math:`\\min(|y - \\hat\\mu(x)|/B, 1)` with the public ``bound``
        :math:`B`; ``"lac"``/``"aps"``: the classification scores of chapter 1.
    bound : float, default=None
        Public residual bound (required with ``kind="residual"``, unset otherwise).

    Returns
    -------
    dask.dataframe.Series
        The scores, partitioned like ``frame``; nothing is collected.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> import pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x0": rng.normal(size=8), "x1": rng.normal(size=8)})
    >>> df["y"] = df.x0 - df.x1 + 0.1 * rng.normal(size=8)
    >>> model = LinearRegression().fit(df[["x0", "x1"]], df.y)   # public data in practice
    >>> scores = model_scores(dd.from_pandas(df, npartitions=2), model, ["x0", "x1"], "y",
    ...                       bound=1.0)
    >>> np.round(scores.compute().to_numpy(), 2)
    array([0.1 , 0.04, 0.01, 0.01, 0.04, 0.07, 0.02, 0.03])
    """
    from ._split_core import check_bound

    if not isinstance(frame, dd.DataFrame):
        raise TypeError(f"frame must be a dask.dataframe.DataFrame, got {type(frame).__name__}")
    kind = check_choice(kind, "kind", ("residual", "lac", "aps"))
    if not isinstance(features, (list, tuple)) or not all(isinstance(f, str) for f in features):
        raise TypeError("features must be a list of column names (strings)")
    if not features:
        raise ValueError("features is empty; give the model's feature columns, in the order it expects")
    if not isinstance(target, str):
        raise TypeError(f"target must be a column name (a string), got {type(target).__name__}")
    missing = sorted((set(features) | {target}) - set(frame.columns))
    if missing:
        raise ValueError(f"columns {missing} are not in the frame")
    n_in = getattr(model, "n_features_in_", None)
    names_in = getattr(model, "feature_names_in_", None)
    if names_in is not None and [str(n) for n in names_in] != list(features):
        raise ValueError(f"features={list(features)} differ from the columns the model was fitted on "
                         f"({[str(n) for n in names_in]}); pass those, in that order")
    if n_in is not None and int(n_in) != len(features):
        raise ValueError(f"features has {len(features)} columns but the model was fitted on {int(n_in)}")
    if kind == "residual":
        if bound is None:
            raise ValueError("kind='residual' needs the public residual bound `bound` (chosen without the data)")
        bound = check_bound(bound)
        _check_dtype(frame[target].dtype, f"target column {target!r}")
        check_estimator(model, "model", ("predict",))
    else:
        if bound is not None:
            raise ValueError(f"bound is used only with kind='residual'; leave it unset for kind={kind!r}")
        check_estimator(model, "model", ("predict_proba",))
        if not hasattr(model, "classes_"):
            raise TypeError(f"kind={kind!r} needs a fitted classifier (model has no classes_)")
    return frame.map_partitions(_partition_scores, model, list(features), target, kind, bound,
                                meta=(target + "_score", float))


def simulated_scores(n: int, chunk_size: int | str = "auto", seed: int = 0, distribution: str = "uniform"):
    """``n`` simulated scores in [0, 1], generated on the workers chunk by chunk (benchmarks, chapter 14).

    Chunk ``i`` is drawn from ``numpy.random.default_rng([seed, i])``, so the
    array is reproducible and no process ever holds more than one chunk. The
    chunking depends on ``n`` and ``chunk_size`` only (the scores themselves
    depend on the chunking too: fix ``chunk_size`` to compare runs of
    different ``n``).

    Chunks are tasks, and a task costs a few milliseconds of scheduling beyond
    its work, on a scheduler that serves all the workers: at :math:`10^6`
    scores per chunk sixteen workers wait on the scheduler. The default
    ``"auto"`` makes 128 chunks (every power-of-two number of workers up to
    128 gets equal shares) of between :math:`2^{20}` and :math:`2^{24}`
    scores (8 to 134 MB): at :math:`N = 10^9`, 128 chunks of about
    :math:`7.8 \\cdot 10^6` scores.

    Parameters
    ----------
    n : int
        Number of scores, at most :math:`2^{53}`.
    chunk_size : int or "auto", default="auto"
        Scores per chunk; at most :math:`10^7` chunks (the task graph is built
        on the client). ``"auto"``: :math:`\\lceil N/128 \\rceil` clipped to
        :math:`[2^{20}, 2^{24}]` (and at most :math:`N`).
    seed : int, default=0
        Non-negative integer seed.
    distribution : {"uniform", "beta"}, default="uniform"
        Uniform scores, or Beta(2, 5) scores (a skewed score law).

    Returns
    -------
    dask.array.Array of shape (n,)

    Examples
    --------
    >>> x = simulated_scores(1000, chunk_size=250, seed=0)
    >>> x.chunks, np.round(x[:3].compute(), 3)
    (((250, 250, 250, 250),), array([0.637, 0.27 , 0.041]))
    """
    seed = check_positive_int(seed, "seed", minimum=0)
    n = check_positive_int(n, "n", maximum=_MAX_SIMULATED)
    if isinstance(chunk_size, str):
        check_choice(chunk_size, "chunk_size", ("auto",))
        chunk_size = min(n, max(_AUTO_MIN_CHUNK, min(_AUTO_MAX_CHUNK, -(-n // _AUTO_CHUNKS))))
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    distribution = check_choice(distribution, "distribution", ("uniform", "beta"))
    n_chunks = -(-n // chunk_size)
    if n_chunks > _MAX_CHUNKS:
        raise ValueError(f"n={n} in chunks of {chunk_size} gives {n_chunks} chunks, more than {_MAX_CHUNKS}; "
                         "use a larger chunk_size")
    sizes = (chunk_size,) * (n // chunk_size) + ((n % chunk_size,) if n % chunk_size else ())

    return da.map_blocks(_simulated_chunk, chunks=(sizes,), dtype=float, meta=np.empty(0), seed=seed,
                         distribution=distribution)


def _simulated_chunk(seed: int, distribution: str, block_info=None) -> np.ndarray:
    """One chunk of :func:`simulated_scores`, from its own stream ``[seed, index]``.

    A module-level function, so that a task refers to it by name: a closure would be pickled by value with
    every task (its code and globals), which cost the client and the worker about a millisecond per task.
    """
    info = block_info[None]
    index, (size,) = info["chunk-location"][0], info["chunk-shape"]
    gen = np.random.default_rng([seed, index])
    # random() is uniform(0, 1) to the bit (0 + 1 * u), in numpy's fill loop: a quarter of uniform's time
    return gen.random(size=size) if distribution == "uniform" else gen.beta(2.0, 5.0, size=size)


# --------------------------------------------------------------------------- private depth medians

def _data_flags(block: np.ndarray) -> list[float]:
    """[row count, non-finite flag, too-large flag] of one partition (the flags add up across partitions)."""
    head = [float(block.shape[0]), 0.0, 0.0]
    if block.shape[0] and not np.isfinite(block).all():
        head[1] = 1.0
    elif block.shape[0] and not np.abs(block).max() <= MAX_MAGNITUDE:
        head[2] = 1.0
    return head


def _block_depth_stats(block, kind, cand, cand_proj, u):
    """Map step for the depth median: [row count, non-finite flag, too-large flag, statistic...] of one partition."""
    block = np.asarray(block, dtype=float)
    if block.ndim != 2:
        block = block.reshape(-1, cand.shape[1])
    size = (2,) + cand_proj.shape if kind != "spatial" else cand.shape
    head = _data_flags(block)
    if head[1] or head[2] or not block.shape[0]:
        return np.concatenate([head, np.zeros(int(np.prod(size)))])
    if kind == "spatial":
        stat = _counts.spatial_sums(block, cand)
    else:
        stat = _counts.projection_counts(block, cand_proj, u).astype(float)
    return np.concatenate([head, stat.ravel()])


def _block_radius_stats(block, d):
    """First localisation pass: [row count, non-finite flag, too-large flag, radius counts...] of one partition."""
    from .localize import radius_counts, radius_grid

    block = np.asarray(block, dtype=float).reshape(-1, d)
    head = _data_flags(block)
    if head[1] or head[2] or not block.shape[0]:
        return np.concatenate([head, np.zeros(radius_grid().size)])
    return np.concatenate([head, radius_counts(block).astype(float)])


def _block_centre_counts(block, d, radius):
    from .localize import centre_counts

    return centre_counts(np.asarray(block, dtype=float).reshape(-1, d), radius).astype(float)


def _block_scale_counts(block, d, radius, centre):
    from .localize import scale_counts

    return scale_counts(np.asarray(block, dtype=float).reshape(-1, d), radius, centre).astype(float)


def _raise_data_flags(total) -> None:
    """The in-memory messages for non-finite or too-large values (one fixed message, no position or value)."""
    if total[1]:
        check_2d(np.array([[np.nan], [0.0]]), "data", min_rows=2)
    if total[2]:
        check_2d(np.array([[1e300], [0.0]]), "data", min_rows=2)
    if int(round(total[0])) < 2:
        raise ValueError("data has too few rows: at least 2 are needed")


def _private_prior_dask(blocks, d, epsilon, rng, client, progress) -> GaussianPrior:
    """:func:`dpcp_tutorial.private_prior` on partitions: the same counts, hence the same release."""
    from .localize import localize_from_counts

    def total(parts, nbytes):
        return np.rint(_compute(_tree_sum(parts, nbytes), client, progress)).astype(np.int64)

    first = _compute(_tree_sum([dask.delayed(_block_radius_stats, pure=True)(b, d) for b in blocks]),
                     client, progress)
    _raise_data_flags(first)
    n = int(round(first[0]))
    radius_counts = np.rint(first[3:]).astype(np.int64)

    def centre_counts(radius):
        return total([dask.delayed(_block_centre_counts, pure=True)(b, d, radius) for b in blocks], 8 * d * 65537)

    def scale_counts(radius, centre):
        return total([dask.delayed(_block_scale_counts, pure=True)(b, d, radius, centre) for b in blocks], 8 * 65)

    loc = localize_from_counts(lambda: radius_counts, centre_counts, scale_counts, (n, d), epsilon, rng)
    return prior_from_localization(loc)


def private_depth_median(data, epsilon: float, depth: str = "spatial", prior: GaussianPrior | str | None = None, *,
                         localize_share: float | None = None, box=None,
                         candidates=None, n_candidates: int = 1000, directions=None,
                         n_directions: int | None = None, rng: RandomLike = None, client=None,
                         progress: bool = False) -> np.ndarray:
    """The exact candidate mechanism of chapter 10 on a distributed data set (chapter 14).

    Same as ``dpcp_tutorial.private_depth_median(data, epsilon, depth,
    method="candidates", ...)``, with the same ``rng`` consumption (the
    localisation with ``prior="private"``, directions, then candidates, then
    the Gumbel draws) and hence the same release: the
    depth of every public candidate is computed from statistics that add across
    partitions (counts per candidate and direction for ``"halfspace"`` and
    ``"idd"``; sums of unit vectors for ``"spatial"``), combined on the workers,
    and the mechanism runs once on the client. Rows with NaN or infinite
    values, or values beyond 1e100, are refused with the in-memory message
    (one fixed message, no position or value), never silently counted.

    Parameters
    ----------
    data : dask.array.Array of shape (n, d) or dask.dataframe.DataFrame
        The private sample (``n`` public, ``n >= 2``), of a real dtype. Its
        shape must be known (``d`` from the columns).
    epsilon : float
        Budget (replace-one neighbours), as in memory.
    depth : {"spatial", "halfspace", "idd"}, default="spatial"
        As in memory. Halfspace depth always uses public directions here (the exact
        angular sweep of ``d <= 2`` does not decompose into partition counts).
    prior : GaussianPrior or "private", default=None
        The public prior the candidates are drawn from; required unless
        explicit ``candidates`` or a ``box`` are given (choose its centre and
        scale from public knowledge of the data's units, never from the
        data). ``"private"``: the prior is released from a share
        ``localize_share`` of ``epsilon`` as in memory; the localisation's
        counts (sup norms on the radius grid, clipped coordinates on the
        centre grid, distances on the scale grid) add across partitions, so
        the release equals the in-memory one (three passes over the data
        before the depth pass).
    localize_share : float, default=None
        As in memory (``None``: 0.2 with ``prior="private"``).
    box : array-like of shape (2, d), default=None
        Public box that contains the median, as in memory: candidates are
        drawn uniformly in it, or from the prior restricted to it; explicit
        candidates must lie in it.
    candidates : array-like of shape (k, d), default=None
        Public candidates, as in :func:`dpcp_tutorial.private_depth_median`.
    n_candidates : int, default=1000
        Number of candidates drawn when none are given.
    directions : array-like of shape (m, d), default=None
        Public directions (``"halfspace"``, ``"idd"``), as in memory.
    n_directions : int, default=None
        Number of directions drawn when none are given (``None``: the depth's
        default, as in memory).
    rng : None, int or numpy.random.Generator, default=None
        Source of the localisation, directions, candidates and Gumbel draws;
        ``None`` for a real release (:term:`Seed`).
    client : distributed.Client or str, default=None
        Where to run (:func:`score_histogram`).
    progress : bool, default=False
        Show a progress bar.

    Returns
    -------
    ndarray of shape (d,)
        One of the candidates.

    Warns
    -----
    ReleaseWarning
        As in memory, when a prior is given and the release lies in its far
        tail (a function of the release and the public prior: free). As there,
        **it cannot detect a misplaced prior when the candidates are drawn from
        that prior**: the release is then one of the prior's own draws, inside
        the prior's bulk however far the data are. Choose the prior from public
        knowledge, and standardise the data by public constants first if the
        prior is the authors' one for standardised data, ``GaussianPrior(0.0,
        5 * sqrt(d))`` (:func:`dpcp_tutorial.private_depth_median`, Notes).

    Examples
    --------
    >>> import dask.array as da
    >>> import dpcp_tutorial
    >>> X = np.random.default_rng(0).normal(loc=1.0, size=(200, 2))
    >>> prior = GaussianPrior(0.0, 5.0)
    >>> m = private_depth_median(da.from_array(X, chunks=(50, 2)), 1.0, prior=prior,
    ...                          n_candidates=200, rng=0)
    >>> in_memory = dpcp_tutorial.private_depth_median(X, 1.0, method="candidates", prior=prior,
    ...                                                n_candidates=200, rng=0)
    >>> np.round(m, 3), np.allclose(m, in_memory)
    (array([1.073, 1.777]), True)
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth_name(depth)
    progress = check_bool(progress, "progress")
    n_candidates = check_positive_int(n_candidates, "n_candidates", maximum=MAX_CANDIDATES)  # in every mode
    _check_client(client)
    if depth == "smoothed_idd":
        raise ValueError("depth='smoothed_idd' is not supported at scale (its numerically stable evaluation "
                         "centres every direction at a data median); use 'idd', 'halfspace' or 'spatial'")
    if isinstance(data, dd.DataFrame):
        d = len(data.columns)
    elif isinstance(data, da.Array) and data.ndim == 2 and not np.isnan(data.shape[1]):
        d = int(data.shape[1])
    else:
        raise TypeError("data must be a 2-D dask.array.Array with a known number of columns or a Dask DataFrame")
    blocks = _blocks(data, 2, "data")       # dtype checks first: public metadata
    if depth == "halfspace" and d <= 2 and directions is None:
        raise ValueError("in d <= 2 the in-memory default is the exact halfspace depth, which does not decompose "
                         "into per-partition counts; pass public `directions` (e.g. random_directions(1000, d))")
    if d == 0:
        raise ValueError("data has no columns")
    private, share = check_prior_setting(prior, localize_share, candidates)
    box = None if box is None else check_box(box, d)
    if candidates is None and prior is None and box is None:
        raise TypeError("private_depth_median needs a base measure when no candidates are given: pass "
                        "box=(low, high), the public box that contains the median, or "
                        "prior=GaussianPrior(mean, scale) with a centre and a scale chosen from public knowledge "
                        "of the data's units (e.g. a reference range), never from the data, or prior='private' "
                        "(a share of epsilon locates the data; chapter 19)")
    if prior is not None and not private and not isinstance(prior, GaussianPrior):
        raise TypeError(f"prior must be a GaussianPrior or 'private', got {type(prior).__name__}")
    rng = check_random_state(rng)
    if private:
        check_candidate_memory(n_candidates, d)
        prior = _private_prior_dask(blocks, d, share * epsilon, rng, client, progress)
    u = None
    if depth != "spatial":
        m = DEFAULT_DIRECTIONS[depth] if n_directions is None else n_directions
        u = resolve_directions(directions, m, d, rng)
    else:
        check_direction_settings(directions, n_directions, d)     # unused by spatial depth; checked, no draw
    if candidates is None:
        cand = draw_candidates(prior, box, n_candidates, d, rng)
    else:
        cand = check_2d(candidates, "candidates")
        if cand.shape[1] != d:
            raise ValueError(f"candidates have {cand.shape[1]} columns but data have {d}")
        check_candidates_in_box(cand, box)
    cand_proj = None if u is None else project(cand, u)
    shared = [dask.delayed(x, pure=True) for x in (cand, cand_proj, u)]
    parts = [dask.delayed(_block_depth_stats, pure=True)(b, depth, *shared) for b in blocks]
    total = _compute(_tree_sum(parts, 8 * (3 + (cand.size if depth == "spatial" else 2 * cand_proj.size))),
                     client, progress)
    if total[1]:
        check_2d(np.array([[np.nan], [0.0]]), "data", min_rows=2)      # the in-memory message
    if total[2]:
        check_2d(np.array([[1e300], [0.0]]), "data", min_rows=2)
    n = int(round(total[0]))
    if n < 2:
        raise ValueError("data has too few rows: at least 2 are needed")
    stat = total[3:]
    if depth == "spatial":
        values = _counts.spatial_from_sums(stat.reshape(cand.shape), n)
    else:
        counts = np.rint(stat).astype(np.int64).reshape((2,) + cand_proj.shape)
        values = (_counts.halfspace_from_counts if depth == "halfspace" else _counts.idd_from_counts)(counts, n)
    eta = mechanism_eta((1.0 - share) * epsilon, depth, n)
    release = cand[gumbel_max_sample(eta * (values - values.max()), rng)].copy()
    if prior is not None:
        warn_far_tail(release, prior)         # as in memory: the release and the public prior only
    return release
