"""Heavy tails (chapter 11): private and non-private medians against the mean and CoinPress.

Data: ``n`` points in :math:`d = 2` with independent standard Cauchy marginals
(:func:`~dpcp_tutorial.make_cauchy`) or standard normal marginals; the centre
is 0. For every data set the runner computes

* ``mean`` -- the sample mean (non-private);
* ``spatial_median`` -- the spatial median (non-private);
* ``tukey_median`` -- the Tukey median on the public grid: the centroid of the
  grid points of largest halfspace depth (non-private);
* ``private_tukey_median`` -- the exponential mechanism over the same public
  grid with the same depth, :math:`\\beta = \\varepsilon n/2`: exactly
  :math:`\\varepsilon`-DP;
* ``coinpress`` -- CoinPress with :math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)`, the
  sharp zCDP conversion of :math:`\\varepsilon`-DP
  (:func:`~dpcp_tutorial.pure_dp_to_zcdp`; equal privacy, though zCDP is still
  the weaker guarantee), initial ball of radius :math:`10\\sqrt d` around the
  centre of the public box;
* ``private_coordinate_median`` -- the coordinate-wise private median with the
  grid's public box as bounds, :math:`\\varepsilon/2` per coordinate.

The halfspace depth uses public, equally spaced directions (an upper bound on
the exact depth with the same sensitivity :math:`1/n`), evaluated at every grid
point by :class:`GridHalfspaceDepth`. The grid fills a fixed **public box**
:math:`[a, b]^2` (default :math:`[-3, 5]^2`, spacing 0.025) that stands for
domain knowledge ("the centre lies somewhere in this box"): it is not centred
on the true centre 0, so neither the private median nor CoinPress's starting
ball knows where the truth is, and a release far from the data is not capped
by a box built around the answer.

Errors are Euclidean distances to the centre 0, summarised over repetitions by
their median and quartiles (the mean's error under Cauchy data has no finite
moments, so no RMSE is reported for it) and, for the other estimators, also by
the root mean squared error.

**Recomputing some estimators.** ``--only NAME ... --merge PATH`` reruns the
grid of the result at ``PATH`` and replaces only the named estimators' rows
there (:func:`merge_estimators`). All estimators draw from one random stream
(data, then per budget the private Tukey median, CoinPress and the
coordinate-wise median), and no estimator's number of draws depends on its
budget or result, so the rerun repeats everything; the merge refuses unless
every other estimator's rows come out bit-identical to the base's, which shows
that the recomputed rows are those of a full run with the current code.
``meta["runs"]`` records each run's command, estimators and seconds.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np
from tqdm import tqdm

from .._validation import RandomLike, check_2d, check_positive_int, check_random_state, check_scalar
from ..baselines import coinpress_mean, coordinatewise_private_median, pure_dp_to_zcdp
from ..datasets import make_cauchy
from ..median import spatial_median
from ..mechanisms import gumbel_max_sample

DESCRIPTION = "medians (private and not), the mean and CoinPress under Cauchy vs Gaussian data, d = 2 (chapter 11)"

DISTRIBUTIONS = ("cauchy", "gaussian")
ESTIMATORS = ("mean", "spatial_median", "tukey_median", "private_tukey_median", "coinpress",
              "private_coordinate_median")
PRIVATE = ("private_tukey_median", "coinpress", "private_coordinate_median")
#: how CoinPress's zCDP budget is obtained from epsilon (:func:`~dpcp_tutorial.pure_dp_to_zcdp`)
COINPRESS_CONVERSION = "tight"


def equally_spaced_directions(n_directions: int) -> np.ndarray:
    """Unit vectors at angles :math:`k\\pi/K`, :math:`k = 0, \\dots, K-1` (public; with :math:`\\pm u` they cover the circle)."""
    k = check_positive_int(n_directions, "n_directions")
    angles = np.pi * np.arange(k) / k
    return np.column_stack([np.cos(angles), np.sin(angles)])


def public_square_grid(half_width: float, step: float) -> np.ndarray:
    """Grid points at odd multiples of ``step/2`` inside :math:`[-h, h]^2` (public; 0 is not a grid point).

    Returns
    -------
    ndarray of shape (K, 2)
    """
    half_width = check_scalar(half_width, "half_width", low=0.0)
    step = check_scalar(step, "step", low=0.0, high=half_width)
    return public_box_grid(-half_width, half_width, step)


def public_box_grid(lower: float, upper: float, step: float) -> np.ndarray:
    """Cell centres :math:`a + (k + 1/2)\\,\\delta` of a grid of spacing :math:`\\delta` in the public box :math:`[a, b]^2`.

    The box must come from public knowledge, not from the data (chapter 11
    uses :math:`[-3, 5]^2`, which contains the true centre 0 without being
    centred on it).

    Returns
    -------
    ndarray of shape (K, 2)
    """
    lower = check_scalar(lower, "lower")
    upper = check_scalar(upper, "upper")
    if upper <= lower:
        raise ValueError(f"the box [{lower}, {upper}] is empty: upper must exceed lower")
    step = check_scalar(step, "step", low=0.0, high=(upper - lower) / 2)
    axis = lower + step / 2 + step * np.arange(int(np.floor((upper - lower) / step + 1e-9)))
    gx, gy = np.meshgrid(axis, axis, indexing="ij")
    return np.column_stack([gx.ravel(), gy.ravel()])


class GridHalfspaceDepth:
    """Halfspace depth with public directions at every point of a fixed public set of candidates.

    Computes, for every candidate :math:`c_j` and data set :math:`X`,

    .. math:: HD_U(c_j) = \\min_k \\frac{\\min\\big(\\#\\{i: u_k^\\top X_i \\ge u_k^\\top c_j\\},\\,
              \\#\\{i: u_k^\\top X_i \\le u_k^\\top c_j\\}\\big)}{n},

    the value of ``halfspace_depth(candidates, X, method="directions",
    directions=U)`` (projections are computed the same way, so the two agree
    exactly, except that a tie between projections that are equal only in exact
    arithmetic is decided by floating-point rounding in both). Because the candidates and directions are fixed, their
    projections are sorted once at construction; each data set then costs
    :math:`O(K(n \\log M + M))` for :math:`K` directions and :math:`M` candidates
    (counts by ``searchsorted`` of the data into the sorted candidate projections
    and a cumulative sum), instead of :math:`O(KM \\log n)`.

    Parameters
    ----------
    candidates : array-like of shape (M, d)
    directions : array-like of shape (K, d)
        Public directions (normalised here).
    """

    def __init__(self, candidates, directions):
        self.candidates = check_2d(candidates, "candidates")
        u = check_2d(directions, "directions")
        if u.shape[1] != self.candidates.shape[1]:
            raise ValueError("candidates and directions must have the same number of columns")
        norms = np.linalg.norm(u, axis=1)
        if np.any(norms == 0):
            raise ValueError("directions contain a zero vector")
        self.directions = u / norms[:, None]
        # projected as in dpcp_tutorial.depth (points @ u.T), so that ties round identically
        proj = np.ascontiguousarray((self.candidates @ self.directions.T).T)   # (K, M), one row per direction
        self._order = np.argsort(proj, axis=1)
        self._sorted = np.take_along_axis(proj, self._order, axis=1)

    def __call__(self, data) -> np.ndarray:
        data = check_2d(data, "data", min_rows=2)
        if data.shape[1] != self.candidates.shape[1]:
            raise ValueError("data and candidates must have the same number of columns")
        n = data.shape[0]
        m = self.candidates.shape[0]
        t = np.ascontiguousarray((data @ self.directions.T).T)     # (K, n)
        worst = np.zeros(m, dtype=np.int64)
        scratch = np.empty(m, dtype=np.int64)
        for k in range(self.directions.shape[0]):
            sp = self._sorted[k]
            # below[j] = #{i : t_i < sp_j} = #{i : #{sp <= t_i} <= j}
            below = np.cumsum(np.bincount(np.searchsorted(sp, t[k], side="right"), minlength=m + 1))[:m]
            # above[j] = #{i : t_i > sp_j} = n - #{i : #{sp < t_i} <= j}
            above = n - np.cumsum(np.bincount(np.searchsorted(sp, t[k], side="left"), minlength=m + 1))[:m]
            scratch[self._order[k]] = np.maximum(below, above)
            np.maximum(worst, scratch, out=worst)
        return (n - worst) / n


def _sample(distribution: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if distribution == "cauchy":
        return make_cauchy(n, 2, rng=rng)
    if distribution == "gaussian":
        return rng.standard_normal((n, 2))
    raise ValueError(f"distribution={distribution!r} must be one of {DISTRIBUTIONS}")


def simulate(distribution: str, n: int, epsilons, reps: int, *, box: tuple[float, float] = (-3.0, 5.0),
             grid_step: float = 0.025, n_directions: int = 64, depth: GridHalfspaceDepth | None = None,
             rng: RandomLike = None) -> dict[str, np.ndarray]:
    """Errors :math:`\\|\\hat\\theta - 0\\|` of every estimator on ``reps`` data sets of size ``n`` (chapter 11).

    Parameters
    ----------
    distribution : {"cauchy", "gaussian"}
    n : int
    epsilons : sequence of float
        Budgets of the private estimators (the same data sets serve every budget).
    reps : int
    box : (float, float)
        The public box :math:`[a, b]^2` of the grid; it bounds the private
        coordinate-wise median and CoinPress starts from the ball of radius
        :math:`10\\sqrt 2` around its centre.
    grid_step : float
        Spacing of the grid (the candidates of the private Tukey median).
    n_directions : int
        Equally spaced public directions of the halfspace depth.
    depth : GridHalfspaceDepth, optional
        A precomputed depth on a grid of cell centres (saves its set-up across
        calls); the box, its spacing and the CoinPress centre are then read
        off its candidates and ``box``, ``grid_step`` are ignored.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    dict
        ``errors[name]`` has shape ``(reps,)`` for the non-private estimators and
        ``(len(epsilons), reps)`` for the private ones.
    """
    n = check_positive_int(n, "n", minimum=2)
    reps = check_positive_int(reps, "reps")
    eps = np.asarray(epsilons, dtype=float)
    if eps.ndim != 1 or eps.size == 0 or np.any(eps <= 0):
        raise ValueError("epsilons must be a non-empty list of positive budgets")
    rng = check_random_state(rng)
    if depth is None:
        depth = GridHalfspaceDepth(public_box_grid(box[0], box[1], grid_step), equally_spaced_directions(n_directions))
    grid = depth.candidates
    axis = np.unique(grid[:, 0])
    if axis.size > 1:                      # the spacing of the grid actually used (cell centres)
        grid_step = float(axis[1] - axis[0])
    lower, upper = float(grid.min() - grid_step / 2), float(grid.max() + grid_step / 2)
    bins = max(2, int(round((upper - lower) / grid_step)))
    radius, centre = 10.0 * np.sqrt(2.0), 0.5 * (lower + upper)
    errors = {name: np.empty(reps) for name in ESTIMATORS if name not in PRIVATE}
    errors.update({name: np.empty((eps.size, reps)) for name in PRIVATE})
    for r in range(reps):
        x = _sample(distribution, n, rng)
        errors["mean"][r] = np.linalg.norm(x.mean(axis=0))
        errors["spatial_median"][r] = np.linalg.norm(spatial_median(x))
        values = depth(x)
        deepest = grid[values == values.max()]
        errors["tukey_median"][r] = np.linalg.norm(deepest.mean(axis=0))
        for e, epsilon in enumerate(eps):
            logits = (epsilon * n / 2.0) * (values - values.max())
            errors["private_tukey_median"][e, r] = np.linalg.norm(grid[gumbel_max_sample(logits, rng)])
            errors["coinpress"][e, r] = np.linalg.norm(
                coinpress_mean(x, pure_dp_to_zcdp(epsilon, COINPRESS_CONVERSION), radius=radius, center=centre,
                              rng=rng))
            errors["private_coordinate_median"][e, r] = np.linalg.norm(
                coordinatewise_private_median(x, epsilon, (lower, upper), bins=bins, rng=rng))
    return errors


def summarise(errors: np.ndarray) -> dict[str, list[float] | float]:
    """Median, quartiles and root mean square of errors over the last axis."""
    q25, q50, q75 = np.quantile(errors, [0.25, 0.5, 0.75], axis=-1)
    rmse = np.sqrt(np.mean(errors ** 2, axis=-1))
    as_list = (lambda a: a.tolist()) if errors.ndim > 1 else float
    return {"median": as_list(q50), "q25": as_list(q25), "q75": as_list(q75), "rmse": as_list(rmse)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, nargs="+", default=[100, 200, 500, 1000, 2000, 5000],
                        help="sample sizes (default: %(default)s)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0],
                        help="privacy budgets (default: %(default)s)")
    parser.add_argument("--reps", type=int, default=100, help="data sets per (distribution, n) (default: %(default)s)")
    parser.add_argument("--box", type=float, nargs=2, default=[-3.0, 5.0], metavar=("LOWER", "UPPER"),
                        help="public box [LOWER, UPPER]^2 of the grid (default: %(default)s)")
    parser.add_argument("--grid-step", type=float, default=0.025, help="public grid spacing (default: %(default)s)")
    parser.add_argument("--directions", type=int, default=64, help="equally spaced directions (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default: %(default)s)")
    parser.add_argument("--only", nargs="+", choices=list(ESTIMATORS), default=None, metavar="NAME",
                        help="with --merge: the estimators whose rows are replaced (e.g. coinpress)")
    parser.add_argument("--merge", type=pathlib.Path, default=None, metavar="PATH",
                        help="rerun the grid of the result at PATH and replace only the --only estimators' rows, "
                             "after checking that every other row is reproduced exactly (the other options must "
                             "equal that result's configuration; the defaults give the committed grid)")


def _config(args: argparse.Namespace, depth: GridHalfspaceDepth) -> dict:
    return {"n": list(args.n), "epsilons": list(args.epsilons), "reps": args.reps, "box": list(args.box),
            "grid_step": args.grid_step, "directions": args.directions, "seed": args.seed, "d": 2,
            "candidates": int(depth.candidates.shape[0]), "coinpress_conversion": COINPRESS_CONVERSION}


def merge_estimators(base: dict, fresh: dict, only, command: str | None = None,
                     seconds: float | None = None) -> dict:
    """``base`` with the rows of the estimators ``only`` replaced by those of ``fresh``.

    ``fresh`` is a complete rerun of ``base``'s grid (same sizes, budgets,
    repetitions, box, grid, directions and seed). Every other estimator's
    summary in ``fresh`` must equal ``base``'s exactly: the estimators share one
    random stream, so this equality shows that the replaced rows are the ones a
    full run with the current code gives. ``config`` becomes ``fresh``'s (it
    records the current CoinPress conversion); ``meta["runs"]`` lists every run
    that produced rows of the result.
    """
    only = list(only)
    if not only or any(name not in ESTIMATORS for name in only):
        raise ValueError(f"only={only!r}: choose among the estimators {list(ESTIMATORS)}")
    if not isinstance(base, dict) or not {"config", "results"} <= set(base):
        raise ValueError("base must be a result of this runner (a dict with config and results)")
    grid_keys = ("n", "epsilons", "reps", "box", "grid_step", "directions", "seed", "d", "candidates")
    if any(base["config"].get(k) != fresh["config"].get(k) for k in grid_keys):
        raise ValueError("the rerun's grid differs from the base result's; rerun with the base's options")
    results = json.loads(json.dumps(base["results"]))
    for dist, by_n in fresh["results"].items():
        for n, by_name in by_n.items():
            for name, summary in by_name.items():
                if name in only:
                    results[dist][n][name] = summary
                elif results[dist][n][name] != summary:
                    raise ValueError(f"{name} at {dist}, n = {n} is not reproduced exactly by the rerun, so the "
                                     "random stream differs from the base's: rerun every estimator instead")
    runs = list(base.get("meta", {}).get("runs") or [{"command": base.get("meta", {}).get("command"),
                                                      "estimators": list(ESTIMATORS),
                                                      "seconds": base.get("meta", {}).get("seconds")}])
    runs.append({"command": command, "estimators": only, "seconds": seconds})
    meta = {"runs": runs}
    if seconds is not None:
        meta["seconds"] = seconds
    return {"config": fresh["config"], "results": results, "meta": meta}


def run(args: argparse.Namespace) -> dict:
    """Run every (distribution, n) cell; returns summaries keyed by distribution, then n, then estimator.

    With ``--merge PATH --only NAME ...`` the grid options must equal the
    configuration of the result at ``PATH``; only the named estimators' rows
    are replaced (:func:`merge_estimators`).
    """
    base = None
    only = getattr(args, "only", None)
    merge = getattr(args, "merge", None)
    if (only is None) != (merge is None):
        raise SystemExit("--only and --merge go together: --merge PATH --only coinpress")
    if merge is not None:
        base = json.loads(pathlib.Path(merge).read_text())
        given = {"n": list(args.n), "epsilons": [float(e) for e in args.epsilons], "reps": args.reps,
                 "box": [float(b) for b in args.box], "grid_step": args.grid_step, "directions": args.directions,
                 "seed": args.seed}
        differ = [k for k, v in given.items() if base.get("config", {}).get(k) != v]
        if differ:
            raise ValueError(f"--merge: the options {differ} differ from the configuration of {merge}; "
                             "leave them at that result's values (the defaults give the committed grid)")
    start = time.perf_counter()
    depth = GridHalfspaceDepth(public_box_grid(args.box[0], args.box[1], args.grid_step),
                               equally_spaced_directions(args.directions))
    rng = np.random.default_rng(args.seed)
    cells = [(dist, n) for dist in DISTRIBUTIONS for n in args.n]
    results: dict = {dist: {} for dist in DISTRIBUTIONS}
    for dist, n in tqdm(cells, desc="heavy_tails", disable=getattr(args, "quiet", False)):
        errors = simulate(dist, n, args.epsilons, args.reps, box=tuple(args.box), grid_step=args.grid_step,
                          depth=depth, rng=rng)
        results[dist][str(n)] = {name: summarise(err) for name, err in errors.items()}
    fresh = {"config": _config(args, depth), "results": results}
    if base is None:
        return fresh
    return merge_estimators(base, fresh, only, command="python -m dpcp_tutorial.experiments " + " ".join(sys.argv[1:]),
                            seconds=round(time.perf_counter() - start, 1))
