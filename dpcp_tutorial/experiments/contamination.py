"""Depth medians against the mean under 25% Gaussian contamination (chapter 10).

The setting of Ramsay, Jagannath & Chenouri's simulations: per run one
:math:`n \\times 100` sample of :math:`0.75\\,N(0, I) + 0.25\\,N(5\\mathbf 1, I)` (the
first quarter of the rows shifted), of which the first :math:`d` columns are
used for each :math:`d`; the target is 0, the centre of the clean part; the
error of a run is :math:`\\|\\hat\\theta\\|` and the summary
:math:`\\mathrm{ERMSE} = \\sqrt{\\text{mean}_r \\|\\hat\\theta_r\\|^2}`.

Estimators (all pure :math:`\\varepsilon`-DP unless noted; :math:`\\varepsilon = 10`):

* ``private_idd`` -- :func:`~dpcp_tutorial.private_depth_median` with the
  smoothed IDD (:math:`s = 10`, :math:`m = 200` public directions),
  :math:`\\beta = \\varepsilon n/2`, prior :math:`N(0, 25d\\,I)`, a public
  :math:`N(0, I)` start and the default step and number of steps; the output
  of the Langevin chain is only **approximately** :math:`\\varepsilon`-DP;
* ``nonprivate_idd`` -- the maximiser of the same smoothed IDD (L-BFGS);
* ``spatial_median`` -- the non-private spatial median;
* ``coordinatewise`` -- :func:`~dpcp_tutorial.coordinatewise_private_median`
  with public bounds [-20, 20] and 4000 bins per coordinate;
* ``coinpress`` -- :func:`~dpcp_tutorial.coinpress_mean` with
  :math:`\\rho = \\varepsilon^2/2` (zCDP, a weaker guarantee than
  :math:`\\varepsilon`-DP), 4 steps, initial ball :math:`B(0, 10\\sqrt d)`;
* ``sample_mean`` -- non-private; its error is :math:`\\approx 1.25\\sqrt d` here.

Differences from the authors' notebook: the gradient is divided by the number
of directions actually used (their notebook divided a sum over 500 loaded
directions by 200), and :math:`\\beta = \\varepsilon n/2` uses the sensitivity
:math:`1/n` proved in chapter 10 instead of their conservative :math:`3/n`.
"""

from __future__ import annotations

import time

import numpy as np

from .._progress import progress
from ..baselines import coinpress_mean, coordinatewise_private_median, pure_dp_to_zcdp
from ..datasets import make_contaminated_gaussian
from ..depth import random_directions
from ..median import GaussianPrior, depth_median, private_depth_median, spatial_median

DESCRIPTION = "depth medians vs CoinPress vs the mean under 25% contamination, error against d (chapter 10)"

METHODS = ("private_idd", "nonprivate_idd", "spatial_median", "coordinatewise", "coinpress", "sample_mean")


def estimate_all(data: np.ndarray, epsilon: float, directions: np.ndarray, smoothing: float,
                 rng: np.random.Generator) -> dict[str, tuple[np.ndarray, float]]:
    """Every estimator on one data set: ``{method: (estimate, seconds)}``.

    ``rng`` feeds, in order, the Langevin chain (start and noise), the
    coordinate-wise median and CoinPress.
    """
    d = data.shape[1]
    out = {}
    start = time.perf_counter()
    out["private_idd"] = private_depth_median(data, epsilon, "smoothed_idd", "langevin",
                                              GaussianPrior(scale=5.0 * np.sqrt(d)), directions=directions,
                                              smoothing=smoothing, rng=rng)
    timed = {"private_idd": time.perf_counter() - start}
    start = time.perf_counter()
    out["nonprivate_idd"] = depth_median(data, "smoothed_idd", directions=directions, smoothing=smoothing)
    timed["nonprivate_idd"] = time.perf_counter() - start
    out["spatial_median"] = spatial_median(data)
    out["coordinatewise"] = coordinatewise_private_median(data, epsilon, (-20.0, 20.0), bins=4000, rng=rng)
    out["coinpress"] = coinpress_mean(data, pure_dp_to_zcdp(epsilon), radius=10.0 * np.sqrt(d), rng=rng)
    out["sample_mean"] = data.mean(axis=0)
    return {k: (v, timed.get(k, float("nan"))) for k, v in out.items()}


def run_experiment(n: int = 10_000, dims=(2, 10, 20, 50, 100), runs: int = 50, epsilon: float = 10.0,
                   n_directions: int = 200, smoothing: float = 10.0, clean: bool = False, seed: int = 421,
                   show_progress: bool = True) -> dict:
    """Run the experiment and return a JSON-able dict (chapter 10 runs a reduced version live).

    Seeds: data ``[seed, run]``, directions ``[seed + 1, run, d]``, estimators
    ``[seed + 2, run, d]`` (the authors used 421, 422, 423).

    Returns
    -------
    dict
        ``settings``; ``errors[setting][method]`` = list over ``dims`` of lists
        over runs of :math:`\\|\\hat\\theta\\|`; ``ermse[setting][method]`` = list
        over ``dims``; ``seconds[method]`` = mean time per run for each ``d``.
    """
    dims = [int(d) for d in dims]
    settings = ["contaminated", "clean"] if clean else ["contaminated"]
    errors = {s: {m: [[] for _ in dims] for m in METHODS} for s in settings}
    seconds = {m: [[] for _ in dims] for m in ("private_idd", "nonprivate_idd")}
    jobs = [(r, s) for r in range(runs) for s in settings]
    for run, setting in progress(jobs, label="contamination", enabled=show_progress):
        fraction = 0.25 if setting == "contaminated" else 0.0
        full = make_contaminated_gaussian(n, max(dims), fraction=fraction, rng=np.random.default_rng([seed, run]))
        for k, d in enumerate(dims):
            directions = random_directions(n_directions, d, rng=np.random.default_rng([seed + 1, run, d]))
            results = estimate_all(full[:, :d], epsilon, directions, smoothing,
                                   np.random.default_rng([seed + 2, run, d]))
            for method, (estimate, secs) in results.items():
                errors[setting][method][k].append(float(np.linalg.norm(estimate)))
                if method in seconds and setting == "contaminated":
                    seconds[method][k].append(secs)
    ermse = {s: {m: [float(np.sqrt(np.mean(np.square(e)))) for e in errors[s][m]] for m in METHODS}
             for s in settings}
    return {
        "settings": {"n": n, "dims": dims, "runs": runs, "epsilon": epsilon, "n_directions": n_directions,
                     "smoothing": smoothing, "beta": epsilon * n / 2, "prior": "N(0, 25 d I)",
                     "langevin_steps": [max(1000, 80 * d) for d in dims], "seed": seed,
                     "coinpress_rho": pure_dp_to_zcdp(epsilon), "coordinatewise_bounds": [-20.0, 20.0]},
        "errors": errors,
        "ermse": ermse,
        "seconds": {m: [float(np.mean(v)) if v else None for v in secs] for m, secs in seconds.items()},
    }


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=10_000, help="sample size (default: %(default)s)")
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 10, 20, 50, 100], help="dimensions")
    parser.add_argument("--runs", type=int, default=50, help="independent data sets (default: %(default)s)")
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--directions", type=int, default=200, help="public directions for the smoothed IDD")
    parser.add_argument("--smoothing", type=float, default=10.0, help="logistic slope s")
    parser.add_argument("--clean", action="store_true", help="also run the uncontaminated copy of each data set")
    parser.add_argument("--seed", type=int, default=421)


def run(args) -> dict:
    return run_experiment(n=args.n, dims=args.dims, runs=args.runs, epsilon=args.epsilon,
                          n_directions=args.directions, smoothing=args.smoothing, clean=args.clean,
                          seed=args.seed)
