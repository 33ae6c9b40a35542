"""Private calibration and private medians on data that do not fit one process, with Dask (chapter 14).

Every release of the book looks at the data only through **counts** (or sums)
over public cells: the histogram of the scores over the public edges for
Algorithm 1, private split conformal and DPCP; per-(candidate, direction)
counts for halfspace and integrated dual depth over public directions;
per-candidate sums of unit vectors for spatial depth. Such statistics *add*
across disjoint partitions, so they are computed where the data live (map),
summed in a tree on the workers (reduce), and only the combined statistic is
gathered on the client, where the in-memory mechanism runs once on it:

.. math:: h(D) = \\sum_{p=1}^P h(D_p) \\quad\\Longrightarrow\\quad
          \\mathcal M_{\\text{scale}}(D_1, \\dots, D_P) = \\mathcal M(h(D)).

Hence each function here returns **exactly** what the in-memory function returns
for the same data and the same ``rng`` (for spatial depth up to the rounding of
a float sum in another order), whatever the number of partitions, their sizes
or the number of workers, and its privacy guarantee is the in-memory one:

* only the combined statistic reaches the mechanism; no per-partition count,
  sum or score is released, returned or logged;
* the noise (the Gumbel draws, and every other use of ``rng``) is drawn once, on
  the client, after the reduction. Counting tasks are deterministic functions of
  their partition, so a task retried after a lost worker recomputes the same
  counts and never re-draws noise;
* the partitioning must not depend on private values (split by row position,
  file or time, never by score): the release does not depend on it, but a
  partitioning chosen from the data is itself a computation on the data.

The functions run on the current Dask scheduler: a :class:`distributed.Client`
set as default (e.g. by :func:`local_cluster`), or the one passed as ``client``
(a ``Client`` or a scheduler address such as ``"tcp://10.0.0.5:8786"``).
Requires the optional dependencies ``dask[array,dataframe]`` and ``distributed``
(``pip install "dpcp_tutorial[scale]"``).
"""

from __future__ import annotations

import contextlib
import logging
import os

import numpy as np

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("dpcp_tutorial.scale needs Dask: pip install \"dpcp_tutorial[scale]\" "
                      "(dask[array,dataframe], distributed, pyarrow)") from exc

from . import _counts
from ._validation import RandomLike, check_epsilon, check_positive_int, check_random_state
from .depth import _resolve_directions, _project, check_depth_name
from .dpcp import dpcp_quantile as _dpcp_quantile
from .median import _DEFAULT_DIRECTIONS, GaussianPrior, mechanism_beta
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
    "private_depth_median",
]

_FAN_IN = 8      # partial results added per reduction task


# --------------------------------------------------------------------------- engine

@contextlib.contextmanager
def local_cluster(n_workers: int | None = None, threads_per_worker: int = 1, quiet: bool = True, **kwargs):
    """A :class:`distributed.LocalCluster` (one worker process per core) and its ``Client``, closed on exit.

    The client becomes the default scheduler inside the ``with`` block, so
    every function of this module (and any ``.compute()``) runs on it.
    ``quiet=True`` silences distributed's logging and puts the dashboard on a free port.
    On an existing cluster, use ``distributed.Client("tcp://scheduler:8786")``
    instead; nothing else changes.

    Yields
    ------
    distributed.Client
    """
    from distributed import Client, LocalCluster

    if quiet:
        for name in ("distributed", "bokeh", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        kwargs.setdefault("dashboard_address", ":0")     # a free port: no clash with another cluster
        kwargs.setdefault("silence_logs", logging.CRITICAL)
    n_workers = (os.cpu_count() or 1) if n_workers is None else check_positive_int(n_workers, "n_workers")
    kwargs.setdefault("processes", True)
    with LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, **kwargs) as cluster, \
            Client(cluster) as client:
        yield client


@contextlib.contextmanager
def _using(client):
    """Run on ``client`` (a Client or a scheduler address), or on the current default scheduler."""
    if client is None:
        yield None
        return
    if isinstance(client, str):
        from distributed import Client

        with Client(client) as connected, dask.config.set(scheduler=connected):
            yield connected
        return
    with dask.config.set(scheduler=client):
        yield client


def _compute(value, client, progress: bool):
    with _using(client) as active:
        if progress:
            from distributed import get_client, progress as show_progress

            active = active or get_client()
            future = active.compute(value)
            show_progress(future)
            return future.result()
        return dask.compute(value)[0]


def _blocks(collection, ndim: int) -> list:
    """The partitions of a Dask collection as delayed NumPy arrays (rows never split across columns)."""
    if isinstance(collection, (dd.Series, dd.DataFrame)):
        parts = collection.to_delayed()
        return [dask.delayed(np.asarray)(p, dtype=float) for p in parts]
    if not isinstance(collection, da.Array):
        raise TypeError(f"expected a dask.array.Array or a Dask DataFrame/Series, got {type(collection).__name__}; "
                        "for in-memory data use the functions of dpcp_tutorial directly")
    if collection.ndim != ndim:
        shape = "(n,)" if ndim == 1 else "(n, d)"
        raise ValueError(f"expected a {ndim}-D Dask array of shape {shape}, got {collection.ndim} dimensions")
    if ndim == 2:
        collection = collection.rechunk({1: -1})
    return list(collection.to_delayed().ravel())


def _tree_sum(parts: list):
    """Add partial results on the workers, ``_FAN_IN`` at a time (a tree reduction)."""
    if not parts:
        raise ValueError("the collection has no partitions")
    while len(parts) > 1:
        parts = [dask.delayed(_add)(*parts[i:i + _FAN_IN]) for i in range(0, len(parts), _FAN_IN)]
    return parts[0]


def _add(*arrays):
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    return total


# --------------------------------------------------------------------------- scores

def _block_histogram(block: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Map step: the cell histogram of one partition, plus one entry flagging invalid scores."""
    block = np.asarray(block, dtype=float).ravel()
    out = np.zeros(2 * edges.size + 2, dtype=np.int64)
    if block.size == 0:
        return out
    if not (block.min() >= 0.0 and block.max() <= 1.0):      # NaN fails both comparisons
        out[-1] = 1
        return out
    out[:-1] = _counts.edge_histogram(block, edges, validated=True).counts
    return out


def score_histogram(scores, edges, client=None, progress: bool = False) -> _counts.EdgeHistogram:
    """Cell histogram of distributed scores over public edges: counted per partition, summed on the workers.

    This is the only statistic the score releases use (:mod:`dpcp_tutorial._counts`).

    Parameters
    ----------
    scores : dask.array.Array of shape (N,) or dask.dataframe.Series
        Scores in [0, 1].
    edges : array-like of shape (L,)
        Public, strictly increasing edges.
    client : distributed.Client or str, optional
        Where to run (default: the current Dask scheduler).
    progress : bool
        Show Dask's progress bar (distributed scheduler).

    Returns
    -------
    EdgeHistogram

    Raises
    ------
    ValueError
        If some score is outside [0, 1] or NaN (the message names no value and no partition).
    """
    edges = np.asarray(edges, dtype=float)
    shared = dask.delayed(edges, pure=True)
    parts = [dask.delayed(_block_histogram, pure=True)(b, shared) for b in _blocks(scores, 1)]
    total = _compute(_tree_sum(parts), client, progress)
    if total[-1]:
        raise ValueError("scores must lie in [0, 1] and contain no NaN; normalise them by a public bound B "
                         "(scores = min(residual / B, 1)) in the scoring step")
    if total[:-1].sum() == 0:
        raise ValueError("scores is empty; the releases need at least one score")
    return _counts.EdgeHistogram(edges, total[:-1])


def private_quantile(scores, beta: float, epsilon: float, bins=1000, rng: RandomLike = None, *,
                     client=None, progress: bool = False, **kwargs) -> float:
    """Algorithm 1 (:func:`dpcp_tutorial.private_quantile`) on distributed scores (chapter 14).

    Counts the scores over the edges per partition, sums the histograms on the
    workers and runs :func:`dpcp_tutorial.private_quantile` once, on the client,
    on the combined histogram. Same arguments (every further keyword, e.g. the
    public ``n``, is forwarded), same privacy, and the same release for the same
    ``rng``.

    Parameters
    ----------
    scores : dask.array.Array of shape (N,) or dask.dataframe.Series
    beta, epsilon, bins, rng, **kwargs
        As in :func:`dpcp_tutorial.private_quantile`.
    client : distributed.Client or str, optional
    progress : bool
    """
    hist = score_histogram(scores, quantile_edges(bins), client, progress)
    return _private_quantile(hist, beta, epsilon, bins=bins, rng=rng, **kwargs)


def pps_private_quantile(scores, alpha: float, epsilon: float, m="auto", gamma="auto", variant: str = "tight",
                         n: int | None = None, rng: RandomLike = None, *, client=None, progress: bool = False,
                         **kwargs) -> float:
    """Private split conformal threshold (:func:`dpcp_tutorial.pps_private_quantile`) on distributed scores.

    With ``m="auto"`` the grid size is chosen exactly as in memory (from the
    public ``n`` and ``rng``, before any counting; ``n`` defaults to the number
    of scores, counted first). Then the scores are counted on the grid per
    partition, and the in-memory function runs once on the combined histogram.
    """
    rng = check_random_state(rng)
    if isinstance(m, str):
        if m != "auto":
            raise ValueError(f"m={m!r}: pass an integer >= 2 or 'auto'")
        n_public = _count(scores, client) if n is None else check_positive_int(n, "n")
        m, _ = pps_choose_m(n_public, alpha, epsilon, variant=variant, rng=rng)
    hist = score_histogram(scores, pps_grid(m), client, progress)
    return _pps_private_quantile(hist, alpha, epsilon, m=m, gamma=gamma, variant=variant, n=n, rng=rng, **kwargs)


def _count(scores, client) -> int:
    parts = [dask.delayed(np.size)(b) for b in _blocks(scores, 1)]
    return int(_compute(dask.delayed(sum)(parts), client, False))


def dpcp_quantile(scores, alpha: float, epsilon1: float, epsilon2: float, delta: float, bins=1000,
                  rng: RandomLike = None, *, client=None, progress: bool = False, **kwargs) -> float:
    """The DPCP threshold (:func:`dpcp_tutorial.dpcp_quantile`) on distributed scores (chapter 14)."""
    hist = score_histogram(scores, quantile_edges(bins), client, progress)
    return _dpcp_quantile(hist, alpha, epsilon1, epsilon2, delta, bins=bins, rng=rng, **kwargs)


# --------------------------------------------------------------------------- scores where the data live

def _partition_scores(frame, model, features, target, kind, bound):
    from .conformal import aps_score, lac_score
    from .private_split import normalised_residual_score

    X = frame[list(features)].to_numpy(dtype=float)
    y = frame[target].to_numpy()
    if len(frame) == 0:
        return np.zeros(0)
    if kind == "residual":
        return normalised_residual_score(y.astype(float), model.predict(X), bound)
    score = lac_score if kind == "lac" else aps_score
    return np.clip(score(model.predict_proba(X), y.astype(int)), 0.0, 1.0)


def model_scores(frame, model, features, target: str, kind: str = "residual", bound: float | None = None):
    """Normalised conformal scores of a fitted, public model, computed partition by partition (chapter 14).

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        Features and labels, e.g. ``dask.dataframe.read_parquet(path)``.
    model : fitted scikit-learn estimator
        Trained on data disjoint from ``frame`` (public to the calibration step).
    features : list of str
        Feature columns, in the order the model expects.
    target : str
        Label column (integers 0..K-1 for classification).
    kind : {"residual", "lac", "aps"}
        ``"residual"``: :math:`\\min(|y - \\hat\\mu(x)|/B, 1)` with the public ``bound``
        :math:`B`; ``"lac"``/``"aps"``: the classification scores of chapter 1.
    bound : float
        Public residual bound (``kind="residual"`` only).

    Returns
    -------
    dask.dataframe.Series
        The scores, partitioned like ``frame``; nothing is collected.
    """
    if not isinstance(frame, dd.DataFrame):
        raise TypeError(f"frame must be a dask.dataframe.DataFrame, got {type(frame).__name__}")
    if kind not in ("residual", "lac", "aps"):
        raise ValueError(f"kind={kind!r} is not supported; choose 'residual', 'lac' or 'aps'")
    if kind == "residual" and bound is None:
        raise ValueError("kind='residual' needs the public residual bound `bound` (chosen without the data)")
    missing = sorted((set(features) | {target}) - set(frame.columns))
    if missing:
        raise ValueError(f"columns {missing} are not in the frame")
    return frame.map_partitions(_partition_scores, model, list(features), target, kind, bound,
                                meta=(target + "_score", float))


def simulated_scores(n: int, chunk_size: int = 10**6, seed: int = 0, distribution: str = "uniform"):
    """``n`` simulated scores in [0, 1], generated on the workers chunk by chunk (benchmarks, chapter 14).

    Chunk ``i`` is drawn from ``numpy.random.default_rng([seed, i])``, so the
    array is reproducible and no process ever holds more than one chunk. The
    chunking depends on ``n`` and ``chunk_size`` only.

    Parameters
    ----------
    n, chunk_size, seed : int
    distribution : {"uniform", "beta"}
        Uniform scores, or Beta(2, 5) scores (a skewed score law).

    Returns
    -------
    dask.array.Array of shape (n,)
    """
    n = check_positive_int(n, "n")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    if distribution not in ("uniform", "beta"):
        raise ValueError(f"distribution={distribution!r} must be 'uniform' or 'beta'")
    sizes = (chunk_size,) * (n // chunk_size) + ((n % chunk_size,) if n % chunk_size else ())

    def chunk(block_info=None):
        info = block_info[None]
        index, (size,) = info["chunk-location"][0], info["chunk-shape"]
        gen = np.random.default_rng([seed, index])
        return gen.uniform(size=size) if distribution == "uniform" else gen.beta(2.0, 5.0, size=size)

    return da.map_blocks(chunk, chunks=(sizes,), dtype=float, meta=np.empty(0))


# --------------------------------------------------------------------------- private depth medians

def _block_depth_stats(block, kind, cand, cand_proj, u):
    """Map step for the depth median: [row count, statistic...] of one partition."""
    block = np.asarray(block, dtype=float)
    if block.ndim != 2:
        block = block.reshape(-1, cand.shape[1])
    if kind == "spatial":
        stat = _counts.spatial_sums(block, cand) if block.shape[0] else np.zeros(cand.shape)
    else:
        stat = (_counts.projection_counts(block, cand_proj, u) if block.shape[0]
                else np.zeros((2,) + cand_proj.shape, dtype=np.int64)).astype(float)
    return np.concatenate([[float(block.shape[0])], stat.ravel()])


def private_depth_median(data, epsilon: float, depth: str = "halfspace", prior: GaussianPrior | None = None, *,
                         candidates=None, n_candidates: int = 1000, directions=None,
                         n_directions: int | None = None, rng: RandomLike = None, client=None,
                         progress: bool = False) -> np.ndarray:
    """The exact candidate mechanism of chapter 10 on a distributed data set (chapter 14).

    Same as ``dpcp_tutorial.private_depth_median(data, epsilon, depth,
    sampler="candidates", ...)``, with the same ``rng`` consumption (directions,
    then candidates, then the Gumbel draws) and hence the same release: the
    depth of every public candidate is computed from statistics that add across
    partitions (counts per candidate and direction for ``"halfspace"`` and
    ``"idd"``; sums of unit vectors for ``"spatial"``), combined on the workers,
    and the mechanism runs once on the client.

    Parameters
    ----------
    data : dask.array.Array of shape (n, d) or dask.dataframe.DataFrame
        The private sample (``n`` public, ``n >= 2``). Its shape must be known
        (``d`` from the columns).
    epsilon : float
        Budget (replace-one neighbours), as in memory.
    depth : {"halfspace", "spatial", "idd"}
        Halfspace depth always uses public directions here (the exact
        angular sweep of ``d <= 2`` does not decompose into partition counts).
    prior, candidates, n_candidates, directions, n_directions, rng
        As in :func:`dpcp_tutorial.private_depth_median`.
    client : distributed.Client or str, optional
    progress : bool

    Returns
    -------
    ndarray of shape (d,)
        One of the candidates.
    """
    epsilon = check_epsilon(epsilon)
    depth = check_depth_name(depth)
    if depth == "smoothed_idd":
        raise ValueError("depth='smoothed_idd' is not supported at scale (its numerically stable evaluation "
                         "centres every direction at a data median); use 'idd', 'halfspace' or 'spatial'")
    if isinstance(data, dd.DataFrame):
        d = len(data.columns)
    elif isinstance(data, da.Array) and data.ndim == 2 and not np.isnan(data.shape[1]):
        d = int(data.shape[1])
    else:
        raise TypeError("data must be a 2-D dask.array.Array with a known number of columns or a Dask DataFrame")
    if depth == "halfspace" and d <= 2 and directions is None:
        raise ValueError("in d <= 2 the in-memory default is the exact halfspace depth, which does not decompose "
                         "into per-partition counts; pass public `directions` (e.g. random_directions(1000, d))")
    prior = GaussianPrior(0.0, 5.0 * np.sqrt(d)) if prior is None else prior
    if not isinstance(prior, GaussianPrior):
        raise TypeError(f"prior must be a GaussianPrior, got {type(prior).__name__}")
    rng = check_random_state(rng)
    u = None
    if depth != "spatial":
        m = _DEFAULT_DIRECTIONS[depth] if n_directions is None else n_directions
        u = _resolve_directions(directions, m, d, rng)
    if candidates is None:
        cand = prior.sample(check_positive_int(n_candidates, "n_candidates"), d, rng)
    else:
        from ._validation import check_2d

        cand = check_2d(candidates, "candidates")
        if cand.shape[1] != d:
            raise ValueError(f"candidates have {cand.shape[1]} columns but data have {d}")
    cand_proj = None if u is None else _project(cand, u)
    shared = [dask.delayed(x, pure=True) for x in (cand, cand_proj, u)]
    parts = [dask.delayed(_block_depth_stats, pure=True)(b, depth, *shared) for b in _blocks(data, 2)]
    total = _compute(_tree_sum(parts), client, progress)
    n = int(round(total[0]))
    if n < 2:
        raise ValueError("data must have at least 2 rows")
    stat = total[1:]
    if depth == "spatial":
        values = _counts.spatial_from_sums(stat.reshape(cand.shape), n)
    else:
        counts = np.rint(stat).astype(np.int64).reshape((2,) + cand_proj.shape)
        values = (_counts.halfspace_from_counts if depth == "halfspace" else _counts.idd_from_counts)(counts, n)
    beta = mechanism_beta(epsilon, depth, n)
    return cand[gumbel_max_sample(beta * (values - values.max()), rng)].copy()
