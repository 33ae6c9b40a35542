"""DPCP against private split CP and the non-private oracle (chapter 6).

Besides the runner, this module holds the data sets and the one-repetition
functions that chapters 6 and 8 run live at reduced size, so the figures of
the book and of the full-size run come from the same code.

Data (no downloads):

* ``make_synthetic``: a linear model in 5 dimensions with bounded features and
  noise; every bound is known by design, hence public.
* ``load_diabetes_public``: scikit-learn's diabetes data (n = 442, 10 features).
* ``load_breast_cancer_public``: scikit-learn's breast-cancer data (n = 569,
  binary), the 10 "mean" features.

For the two real data sets the scaling constants are fixed by us, rounded
outward from plausible ranges. Strictly they were chosen after looking at the
documentation of the data, so they stand in for the domain knowledge a real
deployment must have *before* seeing the data (chapter 8; DPCP write-up error D6
in the book appendix "Errors in the source write-ups").

Widths are reported for the intervals intersected with the public response
range, so that an infinite interval counts as the whole range (the least
informative answer) and means stay finite.

Every method runs with the package defaults: private split CP with the tight
private quantile (``calibrator="quantile"``, chapter 4) and DPCP with the tight
private quantile at level :math:`\\alpha_1` (chapter 6). Angelopoulos et al.'s
calibrator (``calibrator="pps"``) is available through the ``pps`` argument of
the one-repetition functions, for reproduction. A release on the public bound
(:math:`\\hat q = 1`, an infinite interval) is counted in ``"infinite"``; its
:class:`~dpcp_tutorial.ReleaseWarning` is silenced inside these loops.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from tqdm import tqdm
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LogisticRegression, Ridge

from .._validation import check_random_state
from ..accounting import ReleaseWarning
from ..conformal import lac_score, set_coverage, set_size
from ..dpcp import DPCPClassifier, DPCPRegressor, dpcp_levels
from ..private_split import (
    PrivateSplitConformalClassifier,
    PrivateSplitConformalRegressor,
    pps_choose_m,
)
from ..quantile import private_quantile_level
from ..training import DPLogisticRegression, DPRidgeRegression

DESCRIPTION = "DPCP vs private split CP vs the oracle across epsilon, n, the split, M; real data (chapter 6)"

ALPHA = 0.1
DELTA = 1e-6
TRAINING_FRACTION = 0.3      # epsilon1 = 0.3 epsilon in the comparisons (a fixed choice, not tuned)
BINS = 1000                  # the package default M of the tight private quantile
M_CANDIDATES = np.unique(np.logspace(1, 6, 51).astype(int))   # grid sizes scanned for private split CP

# --------------------------------------------------------------------------- data

SYNTHETIC_DIM = 5
SYNTHETIC_NOISE = 0.25
_BETA = np.sqrt(3.0) / 2.0 * np.array([1.0, -1.0, 1.0, -1.0, 1.0])
SYNTHETIC = {
    "y_bound": 1.5,          # DP ridge clips labels (and predictions) to [-1.5, 1.5]
    "score_bound": 2.0,      # public B of the scores min(|y - mu(x)| / B, 1)
    "l2": 10.0,              # public ridge penalty of the DP trainer
    "response_range": float(np.abs(_BETA).sum() / np.sqrt(SYNTHETIC_DIM) + 3 * SYNTHETIC_NOISE),
}


def make_synthetic(n: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic linear regression with public bounds (chapter 6).

    .. math:: X \\sim U([-1, 1]^5)/\\sqrt 5, \\qquad Y = X^\\top\\beta + 0.25\\,[Z]_{-3}^{3},
              \\quad Z \\sim N(0, 1),

    with :math:`\\beta = \\tfrac{\\sqrt 3}{2}(1, -1, 1, -1, 1)`, so that
    :math:`\\|X\\| \\le 1`, :math:`\\mathrm{sd}(X^\\top\\beta) = 1/2` and
    :math:`|Y| \\le` ``SYNTHETIC["response_range"]``.
    """
    rng = check_random_state(rng)
    X = rng.uniform(-1.0, 1.0, size=(n, SYNTHETIC_DIM)) / np.sqrt(SYNTHETIC_DIM)
    y = X @ _BETA + SYNTHETIC_NOISE * np.clip(rng.standard_normal(n), -3.0, 3.0)
    return X, y


DIABETES = {"y_bound": 1.0, "score_bound": 2.0, "l2": 5.0, "response_range": 1.0}


def load_diabetes_public() -> tuple[np.ndarray, np.ndarray]:
    """Diabetes data on public scales: features times 3 (rows of norm at most 1), target (y - 200)/200.

    The features ship centred with unit column norms; the target (disease
    progression, 25 to 346 here) is mapped with the range [0, 400], which we
    treat as known in advance, so :math:`|y'| \\le 1`.
    """
    data = load_diabetes()
    return np.clip(3.0 * data.data, -1.0, 1.0), (data.target - 200.0) / 200.0


# plausible ranges of the ten "mean" features, rounded outward (treated as public)
_CANCER_RANGES = np.array([[0, 30], [0, 40], [0, 200], [0, 2600], [0, 0.2], [0, 0.4], [0, 0.5], [0, 0.25],
                           [0, 0.35], [0, 0.1]], dtype=float)
BREAST_CANCER = {"l2": 5.0}


def load_breast_cancer_public() -> tuple[np.ndarray, np.ndarray]:
    """Breast-cancer data (binary): the 10 "mean" features mapped to [-1, 1] by public ranges, over sqrt(10)."""
    data = load_breast_cancer()
    low, high = _CANCER_RANGES[:, 0], _CANCER_RANGES[:, 1]
    X = (2.0 * (data.data[:, :10] - low) / (high - low) - 1.0) / np.sqrt(10.0)
    return np.clip(X, -1.0, 1.0), data.target


# --------------------------------------------------------------------------- one repetition

def pps_tuning(n: int, epsilon: float, alpha: float = ALPHA, variant: str = "tight") -> tuple[int, str]:
    """Data-independent ``(m, variant)`` for Angelopoulos et al.'s calibrator with ``n`` calibration points.

    :func:`pps_choose_m` with the deterministic ``rule="analytic"`` over a scan
    widened from :math:`[10^4, 10^6]` to :math:`[10, 10^6]` (``M_CANDIDATES``), so
    that this baseline is not handicapped by a noisy search or, where
    :math:`n\\varepsilon` is small, by too fine a grid. ``variant`` is the
    exponent of :func:`pps_private_quantile` (default ``"tight"``, exactly
    :math:`\\varepsilon`-DP at every :math:`n`; chapter 4). Used only when a
    one-repetition function is asked for ``calibrator="pps"`` (pass
    ``pps=pps_tuning(...)``); the runners use the package default.
    """
    m, _ = pps_choose_m(n, alpha, epsilon, candidates=M_CANDIDATES, variant=variant, rule="analytic")
    return m, variant


def _seed(rng: np.random.Generator) -> int:
    """A fresh seed for an estimator that is cloned (cloning copies a Generator's state)."""
    return int(rng.integers(2**63))


def clipped_width(intervals: np.ndarray, response_range: float) -> np.ndarray:
    """Width of each interval intersected with ``[-response_range, response_range]``."""
    lower = np.maximum(intervals[:, 0], -response_range)
    upper = np.minimum(intervals[:, 1], response_range)
    return np.maximum(upper - lower, 0.0)


def _interval_summary(intervals, y_test, response_range) -> dict:
    inside = (intervals[:, 0] <= y_test) & (y_test <= intervals[:, 1])
    return {"coverage": float(inside.mean()),
            "width": float(clipped_width(intervals, response_range).mean()),
            "infinite": bool(np.isinf(intervals).any())}


def feasible_split(n_cal: int, epsilon: float, bins=BINS) -> bool:
    """Whether the tight private quantile can reach level alpha on ``n_cal`` scores (public inputs only)."""
    try:
        private_quantile_level(ALPHA, n_cal, epsilon, bins)
    except ValueError:
        return False
    return True


def feasible_dpcp(n: int, epsilon: float, epsilon1: float, bins=BINS, variant: str = "tight") -> bool:
    """Whether DPCP's levels exist at size ``n`` (public inputs only)."""
    try:
        dpcp_levels(n, ALPHA, epsilon1, epsilon - epsilon1, DELTA, bins, variant)
    except ValueError:
        return False
    return True


def _split_kwargs(pps) -> dict:
    """Calibrator arguments of private split CP: the default tight quantile, or Angelopoulos et al.'s with ``pps``."""
    return {} if pps is None else {"calibrator": "pps", "m": pps[0], "variant": pps[1]}


def regression_repetition(X, y, X_test, y_test, *, epsilon: float, epsilon1: float, config: dict, pps=None,
                          bins=BINS, rng=None, methods=("oracle", "private_split", "dpcp"),
                          dpcp_variant: str = "tight") -> dict:
    """One repetition of the regression comparison on ``(X, y)`` (chapter 6).

    * ``oracle``: non-private ridge on all :math:`n` points, half-width the
      :math:`(1-\\alpha)` quantile of its *test* residuals (the ideal interval of
      the form :math:`\\mu(x) \\pm t`; not a method anyone can run).
    * ``private_split``: DP ridge with :math:`\\varepsilon` on a random half, the
      tight private quantile at level :math:`\\alpha` with :math:`\\varepsilon` on the
      other half (parallel composition: :math:`\\varepsilon` in total); with
      ``pps=(m, variant)`` from :func:`pps_tuning`, Angelopoulos et al.'s
      calibrator instead.
    * ``dpcp``: DP ridge with :math:`\\varepsilon_1` on all points, the private
      quantile at level :math:`\\alpha_1` with :math:`\\varepsilon_2 = \\varepsilon - \\varepsilon_1`
      (:class:`DPCPRegressor` with ``training_share = epsilon1 / epsilon`` and
      ``variant=dpcp_variant``; default the tight quantile).

    A method whose levels do not exist at this size is skipped. Returns
    ``{method: {"coverage", "width", "infinite", "qhat"}}``.
    """
    rng = check_random_state(rng)
    n, out = len(X), {}
    trainer = DPRidgeRegression(delta=DELTA, l2=config["l2"], x_bound=1.0, y_bound=config["y_bound"])
    if "oracle" in methods:
        mu = Ridge(alpha=1e-3).fit(X, y).predict(X_test)
        half = float(np.quantile(np.abs(y_test - mu), 1 - ALPHA))
        out["oracle"] = _interval_summary(np.column_stack([mu - half, mu + half]), y_test, config["response_range"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseWarning)     # trivial releases are counted in "infinite"
        if "private_split" in methods and (pps is not None or feasible_split(n - n // 2, epsilon, bins)):
            perm = rng.permutation(n)
            train, cal = perm[: n // 2], perm[n // 2:]
            model = PrivateSplitConformalRegressor(trainer.set_params(epsilon=epsilon, rng=_seed(rng)),
                                                   alpha=ALPHA, epsilon=epsilon, bound=config["score_bound"],
                                                   bins=bins, rng=rng, **_split_kwargs(pps))
            model.fit(X[train], y[train]).calibrate(X[cal], y[cal])
            out["private_split"] = _interval_summary(model.predict_interval(X_test), y_test,
                                                     config["response_range"])
            out["private_split"]["qhat"] = model.qhat_
        if "dpcp" in methods and feasible_dpcp(n, epsilon, epsilon1, bins, dpcp_variant):
            model = DPCPRegressor(trainer, alpha=ALPHA, epsilon=epsilon, training_share=epsilon1 / epsilon,
                                  delta=DELTA, bound=config["score_bound"], bins=bins, rng=rng,
                                  variant=dpcp_variant).fit(X, y)
            out["dpcp"] = _interval_summary(model.predict_interval(X_test), y_test, config["response_range"])
            out["dpcp"]["qhat"] = model.qhat_
    return out


def classification_repetition(X, y, X_test, y_test, *, epsilon: float, epsilon1: float, pps=None,
                              l2: float = BREAST_CANCER["l2"], bins=BINS, rng=None,
                              dpcp_variant: str = "tight") -> dict:
    """One repetition of the classification comparison (LAC score; chapter 6).

    Same three methods as :func:`regression_repetition` with logistic
    regression (non-private for the oracle, :class:`DPLogisticRegression`
    otherwise; features in the unit ball, ``x_bound=1``). Returns
    ``{method: {"coverage", "size"}}`` (mean set size).
    """
    rng = check_random_state(rng)
    n, out = len(X), {}
    classes = np.unique(y)
    proba = LogisticRegression(C=1e4, max_iter=1000).fit(X, y).predict_proba(X_test)
    threshold = float(np.quantile(lac_score(proba, np.searchsorted(classes, y_test)), 1 - ALPHA))
    sets = (1.0 - proba) <= threshold
    out["oracle"] = {"coverage": set_coverage(np.searchsorted(classes, y_test), sets),
                     "size": float(set_size(sets).mean())}
    trainer = DPLogisticRegression(delta=DELTA, l2=l2, x_bound=1.0, classes=classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseWarning)     # trivial sets are all classes: counted in "size"
        perm = rng.permutation(n)
        train, cal = perm[: n // 2], perm[n // 2:]
        split = PrivateSplitConformalClassifier(trainer.set_params(epsilon=epsilon, rng=_seed(rng)), alpha=ALPHA,
                                                epsilon=epsilon, bins=bins, rng=rng, **_split_kwargs(pps))
        split.fit(X[train], np.searchsorted(classes, y[train])).calibrate(X[cal], np.searchsorted(classes, y[cal]))
        sets = split.predict_set(X_test)
        out["private_split"] = {"coverage": set_coverage(np.searchsorted(classes, y_test), sets),
                                "size": float(set_size(sets).mean())}
        dpcp = DPCPClassifier(trainer, alpha=ALPHA, epsilon=epsilon, training_share=epsilon1 / epsilon,
                              delta=DELTA, bins=bins, rng=rng, variant=dpcp_variant).fit(X, y)
        sets = dpcp.predict_set(X_test)
    out["dpcp"] = {"coverage": set_coverage(np.searchsorted(classes, y_test), sets),
                   "size": float(set_size(sets).mean())}
    return out


def summarise(reps: list[dict]) -> dict:
    """Mean and standard error over repetitions of every ``method -> metric``."""
    summary = {}
    for method in reps[0]:
        summary[method] = {}
        for key, value in reps[0][method].items():
            values = np.array([r[method][key] for r in reps], dtype=float)
            summary[method][key] = float(values.mean())
            summary[method][key + "_se"] = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 \
                else 0.0
    return summary


def synthetic_setting(n: int, epsilon: float, epsilon1: float, reps: int, rng, *, bins=BINS, n_test: int = 2000,
                      methods=("oracle", "private_split", "dpcp"), dpcp_variant: str = "tight", pps=None) -> dict:
    """``reps`` repetitions on fresh synthetic data of size ``n``; see :func:`summarise`.

    Package defaults unless ``pps`` (Angelopoulos et al.'s calibrator for
    private split CP, from :func:`pps_tuning`) or ``dpcp_variant`` say otherwise.
    """
    rng = check_random_state(rng)
    out = []
    for _ in range(reps):
        X, y = make_synthetic(n, rng)
        X_test, y_test = make_synthetic(n_test, rng)
        out.append(regression_repetition(X, y, X_test, y_test, epsilon=epsilon, epsilon1=epsilon1,
                                         config=SYNTHETIC, pps=pps, bins=bins, rng=rng, methods=methods,
                                         dpcp_variant=dpcp_variant))
    return summarise(out)


def real_setting(kind: str, epsilon: float, epsilon1: float, reps: int, rng, test_fraction: float = 0.25) -> dict:
    """``reps`` random train/test splits of a real data set (``"diabetes"`` or ``"breast_cancer"``)."""
    rng = check_random_state(rng)
    X, y = load_diabetes_public() if kind == "diabetes" else load_breast_cancer_public()
    n_test = int(round(test_fraction * len(y)))
    out = []
    for _ in range(reps):
        perm = rng.permutation(len(y))
        test, fit = perm[:n_test], perm[n_test:]
        if kind == "diabetes":
            out.append(regression_repetition(X[fit], y[fit], X[test], y[test], epsilon=epsilon, epsilon1=epsilon1,
                                             config=DIABETES, rng=rng))
        else:
            out.append(classification_repetition(X[fit], y[fit], X[test], y[test], epsilon=epsilon,
                                                 epsilon1=epsilon1, rng=rng))
    return summarise(out)


# --------------------------------------------------------------------------- runner

GRID = {
    "epsilons": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
    "n_for_epsilon": 2000,
    "ns": [250, 500, 1000, 2000, 5000, 10000, 20000],
    "epsilon_for_n": 1.0,
    "fractions": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    "split_settings": [[1000, 1.0], [10000, 4.0]],
    "bins": [10, 30, 100, 300, 1000, 3000, 10000, 100000],
    "bins_setting": [2000, 1.0],
    "real_epsilons": [1.0, 2.0, 4.0, 8.0],
}


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=200, help="repetitions per synthetic setting")
    parser.add_argument("--real-reps", type=int, default=200, help="random splits per real-data setting")
    parser.add_argument("--seed", type=int, default=20260601)


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    jobs = []
    for eps in GRID["epsilons"]:
        jobs.append(("epsilon", dict(n=GRID["n_for_epsilon"], epsilon=eps, epsilon1=TRAINING_FRACTION * eps)))
    for n in GRID["ns"]:
        eps = GRID["epsilon_for_n"]
        jobs.append(("n", dict(n=n, epsilon=eps, epsilon1=TRAINING_FRACTION * eps)))
    for n, eps in GRID["split_settings"]:
        for f in GRID["fractions"]:
            jobs.append(("split", dict(n=n, epsilon=eps, epsilon1=f * eps)))
    n, eps = GRID["bins_setting"]
    for bins in GRID["bins"]:
        jobs.append(("bins", dict(n=n, epsilon=eps, epsilon1=TRAINING_FRACTION * eps, bins=bins)))
    for kind in ("diabetes", "breast_cancer"):
        for eps in GRID["real_epsilons"]:
            jobs.append((kind, dict(epsilon=eps, epsilon1=TRAINING_FRACTION * eps)))
    results = {key: [] for key in ("epsilon", "n", "split", "bins", "diabetes", "breast_cancer")}
    for key, job in tqdm(jobs, desc="dpcp_compare", disable=getattr(args, "quiet", False)):
        if key in ("diabetes", "breast_cancer"):
            summary = real_setting(key, job["epsilon"], job["epsilon1"], args.real_reps, rng)
        elif not feasible_dpcp(job["n"], job["epsilon"], job["epsilon1"], job.get("bins", BINS)):
            summary = {"infeasible": True}
        else:
            methods = ("dpcp",) if key == "bins" else ("oracle", "private_split", "dpcp")
            summary = synthetic_setting(job["n"], job["epsilon"], job["epsilon1"], args.reps, rng,
                                        bins=job.get("bins", BINS), methods=methods)
        results[key].append({**job, **summary})
    return {"grid": GRID, "alpha": ALPHA, "delta": DELTA, "training_fraction": TRAINING_FRACTION,
            "reps": args.reps, "real_reps": args.real_reps, "seed": args.seed, "results": results}
