"""Every private conformal calibrator at equal privacy (chapter 16): a Monte Carlo grid over (n, epsilon).

For each score law, sample size ``n`` and budget ``epsilon`` the runner draws
``reps`` calibration sets of ``n`` scores in [0, 1], releases one threshold
:math:`t` per set with every calibrator and records the **exact** coverage of
that threshold given :math:`t`, :math:`F(t) = P(S \\le t)` for a fresh score
:math:`S` from the law:

* ``beta25`` -- scores from Beta(2, 5) (continuous, known CDF; its
  0.9-quantile is about 0.510);
* ``rand_hie`` -- real scores: an ordinary least-squares model of
  ``log1p(mdvis)`` fitted (non-privately: it stands for a public or separately
  paid-for model) on one half of the RAND HIE rows
  (:func:`~dpcp_tutorial.datasets.load_rand_hie`), scores
  :math:`|\\log(1+y) - \\mu(x)| / \\log(1 + 365)` on the other half (the
  *pool*), with :math:`\\mu` clipped to :math:`[0, \\log 366]` so that every
  score lies in [0, 1]; 365 visits a year is the public bound from the
  variable's definition. Calibration sets are drawn from the pool **with
  replacement**, so the population is the pool's empirical law (this is what
  makes ``n = 10**5`` > pool size meaningful) and :math:`F` is the pool's
  empirical CDF.

The Monte Carlo estimate of coverage is the mean of :math:`F(t)` over the
repetitions, with standard error :math:`\\mathrm{sd}(F(t))/\\sqrt{R}`
(conditioning on :math:`t` removes the Bernoulli noise of a test point).

The calibrators (all at ``alpha = 0.1``, replace-one neighbours, ``n`` public;
:data:`METHODS` records the guarantee of each):

=====================  ============================================================
``alg1_tight``         chapter 3's tight :func:`~dpcp_tutorial.private_quantile` (default, 1000 bins): the
                       calibrator of private split CP, ``PrivateSplitConformalRegressor(calibrator="quantile")``
``alg1_original``      the same, ``variant="original"`` (the DPCP write-up's Algorithm 1)
``pps_tight``          Angelopoulos et al.'s :func:`~dpcp_tutorial.pps_private_quantile` (``calibrator="pps"``),
                       tight exponent
``pps_reference``      the same, ``variant="reference"`` (the exponent of Angelopoulos et al.'s code)
``pcoqs``              :func:`~dpcp_tutorial.pcoqs_quantile` as the authors ship it (rank :math:`\\lceil(1-\\alpha)(n+1)\\rceil`, rounded to 2 decimals)
``pcoqs_up``           the same target, rounded *up* to 2 decimals
``pcoqs_corrected``    a corrected target (:func:`pcoqs_corrected_alpha`), rounded up
``laplace_paper``      :func:`~dpcp_tutorial.laplace_histogram_quantile`, ``variant="paper"``
``laplace_corrected``  the same, ``variant="corrected"`` (100 bins)
``opendp_corrected``   :func:`~dpcp_tutorial.opendp_quantile` (OpenDP 0.16, corrected level)
``opendp_raw``         the same at ``variant="raw"`` (OpenDP at the empirical 0.9-quantile)
=====================  ============================================================

**Equal privacy.** The pure-DP methods get ``epsilon`` (replace-one, ``n``
public); P-COQS, which is :math:`\\rho`-zCDP, gets
:math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2)` (:func:`zcdp_of_pure_dp`), the
smallest :math:`\\rho` such that *every* :math:`\\varepsilon`-DP mechanism is
:math:`\\rho`-zCDP. The conversion does not go back (:math:`\\rho`-zCDP does not
imply :math:`\\varepsilon`-DP), so P-COQS still holds the *weaker* guarantee. The
looser :math:`\\varepsilon^2/2` of Bun & Steinke (2016, Prop. 1.4) would give it
1.08 times that budget at :math:`\\varepsilon = 1`, 1.66 times at 3 and 5 times at
10. The exact replace-one loss of each release is recorded (``privacy_loss``):
``alg1_original`` spends less than ``epsilon`` and ``pps_reference`` can spend
more.

**Recomputing some methods.** ``--only METHOD ... --merge PATH`` reruns only the
named methods on the grid of the result at ``PATH`` and replaces their rows
there (:func:`merge_methods`). Because every method's noise has its own seed
and the calibration sets are shared, the merged result equals a full run with
the current code, timings apart; ``meta["runs"]`` records each run's command,
methods and seconds.

Seeds: the calibration sets of a cell (law, n, epsilon) come from one
generator seeded by (seed, law, n, epsilon) and are shared by all methods
(common random numbers); each method's noise comes from its own generator
seeded by (seed, law, n, epsilon, method). Results therefore do not depend on
the order of the cells or on ``--workers``. Timings (seconds per release,
amortised over the repetitions, including the once-per-cell public
computations such as levels) depend on the machine and its load.

Each row of the result holds, for one (law, n, epsilon, method): ``reps``,
``coverage`` and ``coverage_se``, ``mean_threshold``, ``threshold_sd``,
``relative_threshold`` (mean threshold over the oracle quantile
:math:`F^{-1}(1-\alpha)`), ``frac_trivial`` (share of releases at the top of
the range, i.e. the whole score space), ``infeasible`` (the method cannot
certify anything at this public (n, epsilon) and releases the trivial threshold
without looking at the data), ``privacy_loss`` (exact replace-one loss in the
method's own currency: epsilon for the pure-DP methods, rho for P-COQS; 0 for
a constant release), ``public_parameter`` (:data:`PARAMETERS`) and
``seconds_per_release``.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np
from scipy import stats
from tqdm import tqdm

from .. import calibrators as cal
from ..baselines import pure_dp_to_zcdp
from .._calibrator_core import laplace_corrected_rank, opendp_level, pcoqs_corrected_rank
from ..private_split import pps_choose_m, pps_corrected_level, pps_privacy_loss, pps_private_quantile
from ..quantile import private_quantile, private_quantile_level, private_quantile_privacy_loss

ALPHA = 0.1
LAWS = ("beta25", "rand_hie")
NS = (100, 300, 1000, 10_000, 100_000)
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
ALG1_BINS = 1000
HIST_BINS = 100
OPENDP_BINS = 100
PPS_CANDIDATES = tuple(int(m) for m in np.unique(np.logspace(1, 6, 61).astype(int)))
PCOQS_STEPS = cal.pcoqs_steps()
# OpenDP's scoring (the real library, called on every release) costs about 0.4-0.65 s per release at
# n = 10**5 on our machine: the full grid caps its repetitions there (documented in the JSON's config)
SLOW_METHODS = ("opendp_corrected", "opendp_raw")

METHODS = {
    "alg1_tight": dict(label="tight private quantile (private split CP's default calibrator)", privacy="epsilon-DP",
                       coverage="proved",
                       other_relation="add/remove: epsilon*max(a0, 1-a0) with n public"),
    "alg1_original": dict(label="the write-up's Algorithm 1", privacy="epsilon/(2 max(a0,1-a0))-DP (below epsilon)",
                          coverage="none", other_relation="add/remove: epsilon/2 with n public"),
    "pps_tight": dict(label="Angelopoulos et al., tight exponent", privacy="epsilon-DP", coverage="proved",
                      other_relation="add/remove: epsilon*max(q, 1-q)"),
    "pps_reference": dict(label="Angelopoulos et al., reference exponent", privacy="c(1/q + 1/(1-q)), can exceed epsilon",
                          coverage="proved", other_relation="add/remove: c/min(q, 1-q)"),
    "pcoqs": dict(label="P-COQS (as shipped)", privacy="rho-zCDP, rho = epsilon*tanh(epsilon/2)",
                  coverage="paper's claim (approximate)",
                  other_relation="same (counts have sensitivity 1 under both)"),
    "pcoqs_up": dict(label="P-COQS, rounded up", privacy="rho-zCDP, rho = epsilon*tanh(epsilon/2)", coverage="none",
                     other_relation="same"),
    "pcoqs_corrected": dict(label="P-COQS, corrected target", privacy="rho-zCDP, rho = epsilon*tanh(epsilon/2)",
                            coverage="proved (up to the search tolerance)", other_relation="same"),
    "laplace_paper": dict(label="Laplace histogram (paper)", privacy="epsilon-DP", coverage="none",
                          other_relation="add/remove: epsilon/2"),
    "laplace_corrected": dict(label="Laplace histogram, corrected", privacy="epsilon-DP", coverage="proved",
                              other_relation="add/remove: epsilon/2"),
    "opendp_corrected": dict(label="OpenDP, corrected level", privacy="epsilon-DP", coverage="proved",
                             other_relation="add/remove: epsilon*max(a, 1-a)"),
    "opendp_raw": dict(label="OpenDP, raw level", privacy="epsilon-DP", coverage="none",
                       other_relation="add/remove: epsilon*max(a, 1-a)"),
}
PARAMETERS = {
    "alg1_tight": "level alpha0 of the exponential mechanism", "alg1_original": "level alpha0",
    "pps_tight": "grid size m", "pps_reference": "grid size m",
    "pcoqs": "target rank", "pcoqs_up": "target rank", "pcoqs_corrected": "corrected target rank m'",
    "laplace_paper": "none", "laplace_corrected": "noisy count to reach, (k - 1) + tau",
    "opendp_corrected": "level a' (before OpenDP's rational rounding)", "opendp_raw": "level 1 - alpha",
}
PROVED = tuple(name for name, info in METHODS.items() if info["coverage"].startswith("proved"))

DESCRIPTION = "chapter 16: every private conformal calibrator at equal privacy, exact coverage given the threshold"


ZCDP_CONVERSION = "rho = epsilon * tanh(epsilon / 2)"


# ---------------------------------------------------------------------------
# equal privacy: the tight pure-DP -> zCDP conversion
# ---------------------------------------------------------------------------

def zcdp_of_pure_dp(epsilon: float) -> float:
    """The smallest :math:`\\rho` such that every :math:`\\varepsilon`-DP mechanism is :math:`\\rho`-zCDP (chapter 16).

    :math:`\\rho = \\varepsilon\\tanh(\\varepsilon/2) \\le \\varepsilon^2/2`: the package's
    :func:`~dpcp_tutorial.pure_dp_to_zcdp` with its default ``conversion="tight"``
    (formula, proof and neighbour relation there); kept under this name for
    the grid and chapter 16. Randomised response attains it
    (:func:`renyi_divergence_rr`); ``tests/test_calibrator_grid.py`` checks the
    supremum over a fine grid of orders.
    """
    return pure_dp_to_zcdp(epsilon, conversion="tight")


def renyi_divergence_rr(epsilon: float, order) -> np.ndarray:
    """Rényi divergence :math:`D_\\lambda` of binary randomised response at :math:`\\varepsilon` (chapter 16).

    :math:`P = (p, 1-p)`, :math:`Q = (1-p, p)`, :math:`p = e^{\\varepsilon}/(1+e^{\\varepsilon})`:

    .. math:: D_\\lambda(P\\|Q) = \\frac{1}{\\lambda-1}
              \\log\\big(p\\,e^{(\\lambda-1)\\varepsilon} + (1-p)\\,e^{-(\\lambda-1)\\varepsilon}\\big),
              \\qquad \\lambda > 1,

    computed as :math:`\\varepsilon + \\log\\big(1 + (1-p)(e^{-2\\varepsilon t} - 1)\\big)/t` with
    :math:`t = \\lambda - 1` (``log1p``/``expm1``: accurate for orders close to 1,
    where the supremum of :math:`D_\\lambda/\\lambda` lies; ``order`` may be an array of orders > 1).
    """
    epsilon = float(epsilon)
    order = np.asarray(order, dtype=float)
    if not (math.isfinite(epsilon) and epsilon > 0.0):
        raise ValueError(f"epsilon={epsilon!r} must be a positive finite pure-DP budget")
    if not np.all(np.isfinite(order)) or not np.all(order > 1.0):
        raise ValueError("every Rényi order must be a finite number > 1")
    t = order - 1.0
    q = 1.0 / (1.0 + math.exp(epsilon))          # 1 - p, the probability of the other answer
    return epsilon + np.log1p(q * np.expm1(-2.0 * epsilon * t)) / t


# ---------------------------------------------------------------------------
# score laws
# ---------------------------------------------------------------------------

def rand_hie_score_pool(rng=0) -> np.ndarray:
    """Sorted pool of RAND HIE regression scores in [0, 1] (see the module docstring).

    A seeded random half of the 20,190 rows trains an ordinary least-squares
    model of :math:`\\log(1 + \\text{mdvis})` on the nine covariates (with an
    intercept); the other half's scores :math:`|\\log(1+y) - \\mu(x)|/\\log 366`
    form the pool (about 10,095 scores), with :math:`\\mu` clipped to
    :math:`[0, \\log 366]` and :math:`y` to the public bound 365.
    """
    from ..datasets import RAND_HIE_VISITS_BOUND, load_rand_hie

    X, y, _ = load_rand_hie("regression")
    gen = np.random.default_rng(rng)
    order = gen.permutation(len(y))
    train, pool = order[: len(y) // 2], order[len(y) // 2:]
    top = math.log1p(RAND_HIE_VISITS_BOUND)
    target = np.log1p(np.clip(y, 0, RAND_HIE_VISITS_BOUND))
    design = np.column_stack([np.ones(len(y)), X])
    coef, *_ = np.linalg.lstsq(design[train], target[train], rcond=None)
    mu = np.clip(design[pool] @ coef, 0.0, top)
    return np.sort(np.abs(target[pool] - mu) / top)


class ScoreLaw:
    """A score law on [0, 1] with an exact CDF: ``sample(n, gen)``, ``cdf(t)``, ``quantile(p)``."""

    def __init__(self, name: str, pool_seed: int = 0):
        if name not in LAWS:
            raise ValueError(f"law={name!r} must be one of {LAWS}")
        self.name = name
        if name == "beta25":
            self._dist = stats.beta(2, 5)
            self.pool = None
            self.description = "Beta(2, 5) scores (continuous)"
        else:
            self._dist = None
            self.pool = rand_hie_score_pool(pool_seed)
            self.description = ("RAND HIE |log1p(mdvis) - OLS fit| / log1p(365), pool of "
                                f"{self.pool.size} held-out rows, drawn with replacement")

    def sample(self, n: int, gen: np.random.Generator) -> np.ndarray:
        if self.pool is None:
            return gen.beta(2.0, 5.0, size=n)
        return self.pool[gen.integers(0, self.pool.size, size=n)]

    def cdf(self, t) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        if self.pool is None:
            return self._dist.cdf(t)
        return np.searchsorted(self.pool, t, side="right") / self.pool.size

    def quantile(self, p: float) -> float:
        """Smallest t with cdf(t) >= p (the oracle threshold)."""
        if self.pool is None:
            return float(self._dist.ppf(p))
        return float(self.pool[max(0, math.ceil(p * self.pool.size - 1e-9) - 1)])


# ---------------------------------------------------------------------------
# P-COQS with a corrected target
# ---------------------------------------------------------------------------

def pcoqs_corrected_alpha(alpha: float, n: int, rho: float, steps: int = PCOQS_STEPS) -> float | None:
    """The level to pass to :func:`~dpcp_tutorial.pcoqs_quantile` so that its target rank is corrected.

    :func:`~dpcp_tutorial.pcoqs_corrected_level` with the search's step count
    ``steps`` given directly. Our derivation (not the paper's). Let :math:`\\sigma = \\sqrt{T/(2\\rho)}`,
    :math:`\\tau = \\sigma\\,\\Phi^{-1}(1 - \\zeta/T)`, so that all :math:`T`
    Gaussian noises are below :math:`\\tau` with probability :math:`\\ge 1-\\zeta`
    (union bound), and :math:`k = \\lceil(1-\\alpha+\\zeta)(n+1)\\rceil`. With the
    target rank :math:`m' = \\lceil k - 1 + \\tau\\rceil`, on that event every
    step that moves left has a true count :math:`\\ge k`, so the right end of
    the search interval stays :math:`\\ge s_{(k)}` and the output is
    :math:`\\ge s_{(k)} - \\kappa/2`, with :math:`\\kappa = 10^{-10}` the search tolerance;
    rounding *up* to the hundredths keeps it :math:`\\ge s_{(k)}` unless
    :math:`s_{(k)}` lies within :math:`\\kappa/2` *above* a multiple of 0.01
    (probability zero for the continuous law here). Coverage is then
    :math:`\\ge k/(n+1) - \\zeta \\ge 1-\\alpha`. :math:`\\zeta` minimises
    :math:`m'` over a public grid (chapter 16 writes :math:`\\zeta` for the
    failure share that :func:`~dpcp_tutorial.pcoqs_corrected_level` calls :math:`\\gamma`).

    Returns the level :math:`\\alpha' = 1 - m'/(n+1)` (so that
    :math:`\\lceil(1-\\alpha')(n+1)\\rceil = m'`), or ``None`` when :math:`m' > n`:
    no rank can be certified and the release is the trivial threshold.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha={alpha!r} must lie in (0, 1)")
    if int(n) != n or n < 1:
        raise ValueError(f"n={n!r} must be a positive integer")
    if not rho > 0.0 or not math.isfinite(rho):
        raise ValueError(f"rho={rho!r} must be a positive finite number")
    best = pcoqs_corrected_rank(float(alpha), int(n), float(rho), int(steps))
    if best > n:
        return None
    return (n + 1 - best) / (n + 1)


# ---------------------------------------------------------------------------
# one cell
# ---------------------------------------------------------------------------

def _cell_seed(seed: int, law: str, n: int, epsilon: float, method_index: int | None = None):
    """A seed from the cell's values (not its position in the grid): (seed, law, n, epsilon in 1e-6 units)."""
    key = [int(seed), LAWS.index(law), int(n), int(round(epsilon * 10**6))]
    if method_index is not None:
        key.append(1000 + int(method_index))
    return np.random.SeedSequence(key)


def _releasers(n: int, epsilon: float, methods) -> dict:
    """Per method: (release(scores, gen) -> t, infeasible flag, exact replace-one privacy loss, public parameter).

    The public parameter is the method's data-independent setting in this cell (:data:`PARAMETERS`).
    """
    rho = zcdp_of_pure_dp(epsilon)
    out = {}
    for name in methods:
        if name in ("alg1_tight", "alg1_original"):
            variant = "tight" if name == "alg1_tight" else "original"
            try:
                level = private_quantile_level(ALPHA, n, epsilon, ALG1_BINS, variant)
                loss = private_quantile_privacy_loss(ALPHA, n, epsilon, ALG1_BINS, variant)
                out[name] = (lambda s, g, v=variant: private_quantile(s, ALPHA, epsilon, ALG1_BINS, g, variant=v),
                             False, loss, level)
            except ValueError:        # infeasible at this public (n, epsilon): release the trivial threshold
                out[name] = (lambda s, g: 1.0, True, 0.0, None)
        elif name in ("pps_tight", "pps_reference"):
            variant = "tight" if name == "pps_tight" else "reference"
            m, gamma = pps_choose_m(n, ALPHA, epsilon, candidates=PPS_CANDIDATES, rule="analytic")
            trivial = pps_corrected_level(n, ALPHA, epsilon, m, gamma) >= 1.0
            loss = pps_privacy_loss(n, ALPHA, epsilon, m, gamma, variant)
            out[name] = (lambda s, g, v=variant, m=m, gm=gamma:
                         pps_private_quantile(s, ALPHA, epsilon, m=m, gamma=gm, variant=v, rng=g), trivial, loss,
                         float(m))
        elif name in ("pcoqs", "pcoqs_up"):
            rounding = "nearest" if name == "pcoqs" else "up"
            out[name] = (lambda s, g, r=rounding: cal.pcoqs_quantile(s, ALPHA, rho, rounding=r, rng=g),
                         False, rho, float(math.ceil((1 - ALPHA) * (n + 1) - 1e-9 * (n + 1))))
        elif name == "pcoqs_corrected":
            level = pcoqs_corrected_alpha(ALPHA, n, rho)
            if level is None:
                out[name] = (lambda s, g: 1.0, True, 0.0, None)
            else:
                out[name] = (lambda s, g, a=level: cal.pcoqs_quantile(s, a, rho, rounding="up", rng=g), False, rho,
                             float(math.ceil((1 - level) * (n + 1) - 1e-9 * (n + 1))))
        elif name in ("laplace_paper", "laplace_corrected"):
            variant = name.split("_")[1]
            k, _, tau = laplace_corrected_rank(ALPHA, n, HIST_BINS, 2.0 / epsilon)
            infeasible = variant == "corrected" and k > n
            out[name] = (lambda s, g, v=variant: cal.laplace_histogram_quantile(s, ALPHA, epsilon, bins=HIST_BINS,
                                                                                variant=v, rng=g),
                         infeasible, 0.0 if infeasible else epsilon,
                         float(k - 1 + tau) if variant == "corrected" else None)
        elif name in ("opendp_corrected", "opendp_raw"):
            level = name.split("_")[1]
            a_level, rank = opendp_level(ALPHA, n, epsilon, OPENDP_BINS, "replace-one")
            infeasible = level == "corrected" and rank == 0
            out[name] = (lambda s, g, lv=level: cal.opendp_quantile(s, ALPHA, epsilon, bins=OPENDP_BINS, variant=lv,
                                                                    rng=g),
                         infeasible, 0.0 if infeasible else epsilon,
                         (None if infeasible else a_level) if level == "corrected"
                         else 1.0 - ALPHA)
        else:
            raise ValueError(f"unknown method {name!r}; choose from {sorted(METHODS)}")
    return out


def run_cell(law: ScoreLaw, n: int, epsilon: float, reps: int, methods, seed: int,
             slow_reps: int | None = None) -> list[dict]:
    """All methods on ``reps`` shared calibration sets of one cell; one summary row per method."""
    methods = list(methods)
    releasers = _releasers(n, epsilon, methods)
    data_gen = np.random.default_rng(_cell_seed(seed, law.name, n, epsilon))
    noise = {name: np.random.default_rng(_cell_seed(seed, law.name, n, epsilon, list(METHODS).index(name)))
             for name in methods}
    reps_of = {name: (min(reps, slow_reps) if slow_reps and name in SLOW_METHODS else reps) for name in methods}
    thresholds = {name: np.empty(reps_of[name]) for name in methods}
    seconds = dict.fromkeys(methods, 0.0)
    for r in range(reps):
        scores = law.sample(n, data_gen)
        for name in methods:
            if r >= reps_of[name]:
                continue
            release = releasers[name][0]
            start = time.perf_counter()
            thresholds[name][r] = release(scores, noise[name])
            seconds[name] += time.perf_counter() - start
    oracle = law.quantile(1.0 - ALPHA)
    rows = []
    for name in methods:
        t = thresholds[name]
        cov = law.cdf(t)
        _, infeasible, loss, parameter = releasers[name]
        rows.append({
            "law": law.name, "n": int(n), "epsilon": float(epsilon), "rho": zcdp_of_pure_dp(epsilon),
            "method": name, "reps": int(t.size),
            "coverage": float(cov.mean()), "coverage_se": float(cov.std(ddof=1) / math.sqrt(t.size)),
            "mean_threshold": float(t.mean()), "threshold_sd": float(t.std(ddof=1)),
            "relative_threshold": float(t.mean() / oracle), "oracle_threshold": float(oracle),
            "frac_trivial": float(np.mean(t >= 1.0 - 1e-12)), "infeasible": bool(infeasible),
            "privacy_loss": float(loss), "public_parameter": parameter,
            "seconds_per_release": float(seconds[name] / t.size),
        })
    return rows


def _cell_job(args):
    law_name, n, epsilon, reps, methods, seed, slow_reps = args
    return run_cell(ScoreLaw(law_name), n, epsilon, reps, methods, seed, slow_reps)


# ---------------------------------------------------------------------------
# the grid
# ---------------------------------------------------------------------------

def _check_config(laws, ns, epsilons, reps, methods, workers, slow_reps):
    laws, ns, epsilons, methods = list(laws), list(ns), list(epsilons), list(methods)
    if not laws or any(law not in LAWS for law in laws):
        raise ValueError(f"laws={laws!r}: choose one or more of {LAWS}")
    if not ns or any(int(n) != n or n < 2 for n in ns):
        raise ValueError(f"ns={ns!r}: give sample sizes that are integers >= 2")
    if not epsilons or any(not (math.isfinite(e) and e > 0) for e in epsilons):
        raise ValueError(f"epsilons={epsilons!r}: give positive finite budgets")
    if int(reps) != reps or reps < 2:
        raise ValueError(f"reps={reps!r} must be an integer >= 2 (a standard error needs two repetitions)")
    if not methods or any(m not in METHODS for m in methods):
        raise ValueError(f"methods={methods!r}: choose from {sorted(METHODS)}")
    if int(workers) != workers or workers < 1:
        raise ValueError(f"workers={workers!r} must be a positive integer")
    if slow_reps is not None and (int(slow_reps) != slow_reps or slow_reps < 2):
        raise ValueError(f"slow_reps={slow_reps!r} must be None or an integer >= 2")
    return laws, [int(n) for n in ns], [float(e) for e in epsilons], int(reps), methods


def run_grid(laws=LAWS, ns=NS, epsilons=EPSILONS, reps: int = 1000, methods=tuple(METHODS), seed: int = 16,
             workers: int = 1, slow_reps: int | None = None, slow_from_n: int = 100_000, checkpoint=None,
             command: str | None = None, show_progress: bool = True) -> dict:
    """Run the grid; return ``{"config", "laws", "methods", "rows", "meta"}`` (JSON-able).

    ``slow_reps`` caps the repetitions of the OpenDP methods (:data:`SLOW_METHODS`)
    in cells with ``n >= slow_from_n``. With ``checkpoint`` (a path) the
    partial result is written after every cell (``meta.complete`` false).
    """
    laws, ns, epsilons, reps, methods = _check_config(laws, ns, epsilons, reps, methods, workers, slow_reps)
    law_objects = {name: ScoreLaw(name) for name in laws}
    config = {"alpha": ALPHA, "laws": laws, "n": ns, "epsilons": epsilons, "reps": reps, "methods": methods,
              "seed": int(seed), "slow_methods": list(SLOW_METHODS), "slow_reps": slow_reps,
              "slow_from_n": int(slow_from_n), "alg1_bins": ALG1_BINS, "histogram_bins": HIST_BINS,
              "opendp_bins": OPENDP_BINS, "pps_m_rule": "analytic over 10..10**6", "pcoqs_steps": PCOQS_STEPS,
              "relation": "replace-one, n public", "zcdp_conversion": ZCDP_CONVERSION}
    laws_info = {name: {"description": law.description, "oracle_threshold": law.quantile(1.0 - ALPHA),
                        "pool_size": None if law.pool is None else int(law.pool.size)}
                 for name, law in law_objects.items()}
    jobs = [(law, n, eps, reps, methods, seed, slow_reps if n >= slow_from_n else None)
            for n in ns for law in laws for eps in epsilons]
    rows: list[dict] = []

    def result(complete: bool) -> dict:
        ordered = sorted(rows, key=lambda r: (laws.index(r["law"]), r["n"], r["epsilon"], methods.index(r["method"])))
        meta = {"complete": complete, "cells_completed": len(rows) // len(methods), "cells": len(jobs)}
        if command is not None:
            meta["command"] = command
        return {"config": config, "laws": laws_info,
                "methods": {m: {**METHODS[m], "public_parameter": PARAMETERS[m]} for m in methods},
                "rows": ordered, "meta": meta}

    def record(cell_rows):
        rows.extend(cell_rows)
        if checkpoint is not None:
            tmp = f"{checkpoint}.partial"
            with open(tmp, "w") as fh:
                fh.write(json.dumps(result(False), indent=1, sort_keys=True) + "\n")
            os.replace(tmp, checkpoint)

    if workers == 1:
        for law, n, eps, r, m, s, sr in tqdm(jobs, desc="calibrator cells", disable=not show_progress):
            record(run_cell(law_objects[law], n, eps, r, m, s, sr))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(_cell_job, job) for job in jobs]
            for future in tqdm(as_completed(futures), total=len(futures), desc="calibrator cells",
                               disable=not show_progress):
                record(future.result())
    return result(True)


#: the methods whose budget is a zCDP rho (converted from epsilon by :func:`zcdp_of_pure_dp`)
ZCDP_METHODS = tuple(name for name in METHODS if name.startswith("pcoqs"))
_GRID_KEYS = ("laws", "n", "epsilons", "reps", "seed", "slow_reps", "slow_from_n")


def merge_methods(base: dict, methods, workers: int = 1, command: str | None = None,
                  show_progress: bool = True) -> dict:
    """Recompute ``methods`` on the grid of the result ``base`` and replace their rows there.

    ``base`` is a complete result of :func:`run_grid` (e.g. the committed JSON,
    parsed). The grid (laws, sizes, budgets, repetitions, seed, OpenDP caps) is
    read from ``base["config"]``; every other method's rows are kept as they
    are. Since the calibration sets of a cell are shared by all methods and
    each method's noise has its own seed, the merged rows equal those of a full
    run with the current code (timings apart). When the zCDP conversion of
    ``base`` differs from :data:`ZCDP_CONVERSION`, every zCDP method
    (:data:`ZCDP_METHODS`) must be recomputed, so that no row keeps the old
    budget. ``meta["runs"]`` lists every run that produced rows of the result
    (command, methods, seconds); ``meta["seconds"]`` is this run's.
    """
    if not isinstance(base, dict) or not {"config", "rows", "meta"} <= set(base):
        raise ValueError("base must be a result of run_grid (a dict with config, rows and meta)")
    if not base["meta"].get("complete"):
        raise ValueError("base is an incomplete run: finish it (or rerun it in full) before merging methods into it")
    config = dict(base["config"])
    methods = list(methods)
    if not methods or any(m not in config["methods"] for m in methods):
        raise ValueError(f"methods={methods!r}: choose among the methods of the base result, {config['methods']}")
    if config.get("zcdp_conversion") != ZCDP_CONVERSION and not set(ZCDP_METHODS) <= set(methods):
        raise ValueError(f"the base result converts epsilon to zCDP by {config.get('zcdp_conversion')!r}, this "
                         f"code by {ZCDP_CONVERSION!r}: recompute every zCDP method {list(ZCDP_METHODS)} together")
    start = time.perf_counter()
    fresh = run_grid(laws=config["laws"], ns=config["n"], epsilons=config["epsilons"], reps=config["reps"],
                     methods=methods, seed=config["seed"], workers=workers, slow_reps=config["slow_reps"],
                     slow_from_n=config["slow_from_n"], show_progress=show_progress)
    seconds = round(time.perf_counter() - start, 1)
    new_rows = {(r["law"], r["n"], r["epsilon"], r["method"]): r for r in fresh["rows"]}
    rows = [new_rows.get((r["law"], r["n"], r["epsilon"], r["method"]), r) for r in base["rows"]]
    # the cell's zCDP budget is recorded on every row (a label of the cell, not a measurement)
    rows = [{**r, "rho": zcdp_of_pure_dp(r["epsilon"])} for r in rows]
    if sum(1 for r in rows if r["method"] in methods) != len(new_rows):
        raise ValueError("the base result does not hold one row per cell and method of its own grid")
    config["zcdp_conversion"] = ZCDP_CONVERSION
    meta = {k: v for k, v in base["meta"].items() if k not in ("runs", "seconds", "command", "experiment")}
    runs = list(base["meta"].get("runs") or [{"command": base["meta"].get("command"),
                                             "methods": list(base["config"]["methods"]),
                                             "seconds": base["meta"].get("seconds")}])
    runs.append({"command": command, "methods": methods, "seconds": seconds})
    meta.update({"runs": runs, "seconds": seconds})
    if command is not None:
        meta["command"] = command
    # the methods' descriptions are this code's (they describe the rows, all of which equal this code's)
    methods_info = {m: {**METHODS[m], "public_parameter": PARAMETERS[m]} for m in config["methods"]}
    return {"config": config, "laws": base["laws"], "methods": methods_info, "rows": rows, "meta": meta}


def add_arguments(parser) -> None:
    parser.add_argument("--laws", nargs="+", default=list(LAWS), choices=LAWS, help="score laws")
    parser.add_argument("--n", type=int, nargs="+", default=list(NS), help="calibration sizes")
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS),
                        help="pure-DP budgets (P-COQS gets rho = epsilon*tanh(epsilon/2))")
    parser.add_argument("--reps", type=int, default=1000, help="repetitions per cell (default: %(default)s)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--slow-reps", type=int, default=100,
                        help="repetitions of the OpenDP methods at n >= --slow-from-n (default: %(default)s)")
    parser.add_argument("--slow-from-n", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=1, help="parallel processes (results do not depend on it)")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--merge", type=pathlib.Path, default=None, metavar="PATH",
                        help="recompute only --methods on the grid of the result at PATH and replace their rows "
                             "(the other grid options must equal that result's configuration)")


def run(args) -> dict:
    out = getattr(args, "out", None)
    command = "python -m dpcp_tutorial.experiments " + " ".join(sys.argv[1:])
    if getattr(args, "merge", None) is not None:
        base = json.loads(pathlib.Path(args.merge).read_text())
        given = {"laws": list(args.laws), "n": list(args.n), "epsilons": [float(e) for e in args.epsilons],
                 "reps": args.reps, "seed": args.seed, "slow_reps": args.slow_reps, "slow_from_n": args.slow_from_n}
        differ = [k for k in _GRID_KEYS if base["config"].get(k) != given[k]]
        if differ:
            raise ValueError(f"--merge: the options {differ} differ from the configuration of {args.merge}; "
                             "leave them at that result's values (the defaults give the full grid)")
        return merge_methods(base, args.methods, workers=args.workers, command=command,
                             show_progress=not getattr(args, "quiet", False))
    return run_grid(laws=args.laws, ns=args.n, epsilons=args.epsilons, reps=args.reps, methods=args.methods,
                    seed=args.seed, workers=args.workers, slow_reps=args.slow_reps, slow_from_n=args.slow_from_n,
                    checkpoint=out, show_progress=not getattr(args, "quiet", False),
                    command=command)
