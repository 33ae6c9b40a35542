"""Monte Carlo check of DPCP's coverage theorem, including a trainer that makes it tight (chapters 5 and 6).

Chapter 6 proves that DPCP with the tight private quantile misses with
probability at most :math:`e^{\\varepsilon_1}\\mathcal B(\\alpha_0) + \\delta \\le \\alpha`
when the trainer is symmetric and :math:`(\\varepsilon_1, \\delta)`-DP under
add/remove neighbours. This runner estimates the miscoverage of
:class:`dpcp_tutorial.DPCPRegressor` (package defaults: the tight quantile) at
small ``n`` and large budgets, for two trainers:

* :class:`MembershipMemoriser`, a pure :math:`\\varepsilon`-DP regressor built to
  be as unstable as its budget allows (randomised response on membership): for
  it DPCP's miscoverage is *exactly* :math:`e^{\\varepsilon_1}` times the oracle's,
  so the theorem's factor is attained, and with a large :math:`\\varepsilon_2`
  the whole bound is nearly attained;
* :class:`dpcp_tutorial.DPRidgeRegression` on the synthetic data of chapter 6,
  a typical trainer, far more stable than its budget certifies.

Each repetition draws :math:`n + 1` fresh points; DPCP is fitted on the first
:math:`n` and checked on the last one; the *oracle* (the same pipeline with the
model trained on all :math:`n + 1` points and the quantile taken over the
first :math:`n` scores, as in the proof) is checked on the same point.
Miscoverage is a binomial proportion over repetitions (standard error
:math:`\\sqrt{p(1-p)/R}`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted
from tqdm import tqdm

from .._validation import check_2d, check_1d, check_delta, check_epsilon, check_random_state, check_same_length
from ..accounting import ReleaseWarning
from ..dpcp import DPCPRegressor, dpcp_levels
from ..private_split import normalized_residual_score
from ..quantile import private_quantile, private_quantile_miscoverage_bound
from ..training import DPRidgeRegression, trainer_privacy_account
from .dpcp_compare import SYNTHETIC, make_synthetic

DESCRIPTION = "Monte Carlo check of DPCP's coverage theorem, with a trainer that attains it (chapters 5 and 6)"

ALPHA = 0.1
DELTA = 1e-6
BINS = 1000

# --------------------------------------------------------------------------- the worst-case trainer

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _hash_uniform(x: np.ndarray, salt: int) -> np.ndarray:
    """A uniform number in [0, 1) for every float in ``x`` (SplitMix64 of its bits and ``salt``)."""
    z = x.astype(np.float64).view(np.uint64) ^ np.uint64(salt)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) / float(2 ** 53)


class MembershipMemoriser(RegressorMixin, BaseEstimator):
    """A regressor that remembers its training points as much as :math:`\\varepsilon`-DP allows (chapters 5, 6).

    The model is a random function :math:`b(x) \\in \\{0, 1\\}` of the first
    feature: independently for every value :math:`x`,

    .. math:: P(b(x) = 1) = \\frac{e^{\\varepsilon}}{1 + e^{\\varepsilon}}
              \\text{ if some training record has first feature } x,
              \\qquad \\frac{1}{1 + e^{\\varepsilon}} \\text{ otherwise}

    (randomised response on membership), and it predicts :math:`0` where
    :math:`b = 1` and :math:`1` where :math:`b = 0`. Adding or removing one
    record changes the law of :math:`b` at one value only, by a factor at most
    :math:`e^{\\varepsilon}`: the release is :math:`\\varepsilon`-DP under
    add/remove at every size (so :math:`(\\varepsilon, \\delta)`-DP for every
    ``delta``), and symmetric. With the data of :func:`make_membership_data`
    (:math:`y \\in [0, 1/2]`) a remembered point has residual :math:`y \\le 1/2`
    and a forgotten one :math:`1 - y \\ge 1/2`: every stability argument's
    worst case. Bits at values that are not training points come from a
    hash of the value and a random salt (so a value gets the same bit every
    time it is predicted).

    Parameters
    ----------
    epsilon : float
    delta : float
        Accepted for the trainer contract (the mechanism is pure DP).
    rng : None, int or numpy.random.Generator

    Attributes
    ----------
    privacy_ : PrivacyAccount
        :math:`(\\varepsilon, 0)` under add/remove (primary) and
        :math:`2\\varepsilon` under replace-one (a replacement changes the law at
        two values).
    """

    relation = "add/remove"

    def __init__(self, epsilon: float = 1.0, delta: float = 0.0, rng=None):
        self.epsilon = epsilon
        self.delta = delta
        self.rng = rng

    def fit(self, X, y):
        """Draw the bits of the training values (and the salt for the others)."""
        epsilon = check_epsilon(self.epsilon)
        check_delta(self.delta)
        X = check_2d(X, "X")
        y = check_1d(y, "y")
        check_same_length(("X", X), ("y", y))
        rng = check_random_state(self.rng)
        self.keys_ = np.unique(X[:, 0])
        self.remember_ = 1.0 / (1.0 + math.exp(-epsilon))          # e^eps / (1 + e^eps)
        self.bits_ = rng.random(self.keys_.size) < self.remember_
        self.salt_ = int(rng.integers(2 ** 63))
        self.privacy_ = trainer_privacy_account("membership memoriser (randomised response on membership)",
                                                epsilon, 0.0, ("the record count is not used",))
        return self

    def recognised(self, X) -> np.ndarray:
        """The bit :math:`b(x)` of every row."""
        check_is_fitted(self, "bits_")
        x = check_2d(X, "X")[:, 0]
        idx = np.minimum(np.searchsorted(self.keys_, x), max(self.keys_.size - 1, 0))
        present = self.keys_[idx] == x if self.keys_.size else np.zeros(x.size, dtype=bool)
        other = _hash_uniform(x, self.salt_) < 1.0 - self.remember_
        return np.where(present, self.bits_[idx] if self.keys_.size else False, other)

    def predict(self, X) -> np.ndarray:
        """0 where the point is recognised, 1 elsewhere."""
        return np.where(self.recognised(X), 0.0, 1.0)


def make_membership_data(n: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Data for :class:`MembershipMemoriser`: :math:`X \\sim U(0, 1)` (one column), :math:`Y \\sim U(0, 1/2)`.

    Scores :math:`|y - \\mu(x)|` with the public bound :math:`B = 1` are
    uniform on :math:`[0, 1/2]` for recognised points and on :math:`[1/2, 1]`
    for the others; the values of :math:`X` are distinct almost surely.
    """
    rng = check_random_state(rng)
    return rng.uniform(size=(n, 1)), rng.uniform(0.0, 0.5, size=n)


MEMORISER = {"bound": 1.0, "make": make_membership_data,
             "trainer": lambda: MembershipMemoriser(delta=0.0), "delta": 0.0}
RIDGE = {"bound": SYNTHETIC["score_bound"], "make": make_synthetic, "delta": DELTA,
         "trainer": lambda: DPRidgeRegression(l2=SYNTHETIC["l2"], x_bound=1.0, y_bound=SYNTHETIC["y_bound"])}
TRAINERS = {"memoriser": MEMORISER, "ridge": RIDGE}


# --------------------------------------------------------------------------- one setting

def coverage_setting(trainer: str, n: int, epsilon1: float, epsilon2: float, reps: int, rng,
                     bins=BINS) -> dict:
    """Miscoverage of DPCP and of its oracle over ``reps`` repetitions (used live by chapter 6).

    ``trainer`` is ``"memoriser"`` or ``"ridge"`` (see the module docstring).
    Returns the two miss rates with their binomial standard errors, the
    theorem's bound :math:`e^{\\varepsilon_1}\\mathcal B(\\alpha_0) + \\delta`, the levels
    :math:`\\alpha_1`, :math:`\\alpha_0` and :math:`\\mathcal B(\\alpha_0)` (the bound on the
    oracle), and the rate of trivial releases (:math:`\\hat q = 1`, whose
    :class:`~dpcp_tutorial.ReleaseWarning` is silenced here). A setting whose
    levels do not exist (public inputs only) returns ``feasible=False``.
    Since :math:`\\alpha_0` is the largest level with
    :math:`\\mathcal B(\\alpha_0) \\le \\alpha_1`, the theorem's bound equals
    :math:`\\alpha` up to the level search's rounding; ``oracle_bound`` is the
    part that differs between settings.
    """
    config = TRAINERS[trainer]
    rng = np.random.default_rng(rng)
    delta = config["delta"]
    out = {"trainer": trainer, "n": n, "epsilon1": epsilon1, "epsilon2": epsilon2, "delta": delta, "reps": reps}
    try:
        alpha1, alpha0 = dpcp_levels(n, ALPHA, epsilon1, epsilon2, delta, bins)
    except ValueError:
        return {**out, "feasible": False}
    bound_oracle = private_quantile_miscoverage_bound(alpha0, n, epsilon2, bins)
    epsilon = epsilon1 + epsilon2
    miss = {"dpcp": 0, "oracle": 0}
    trivial = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReleaseWarning)
        for _ in range(reps):
            X, y = config["make"](n + 1, rng)
            model = DPCPRegressor(config["trainer"](), alpha=ALPHA, epsilon=epsilon,
                                  training_share=epsilon1 / epsilon, delta=delta, bound=config["bound"], bins=bins,
                                  rng=rng).fit(X[:n], y[:n])
            lower, upper = model.predict_interval(X[n:])[0]
            miss["dpcp"] += not lower <= y[n] <= upper
            trivial += model.qhat_ >= 1.0
            # the oracle of the proof: the model has seen the test point; the quantile reads the first n scores
            oracle = config["trainer"]().set_params(epsilon=epsilon1, delta=delta, rng=int(rng.integers(2 ** 63)))
            oracle.fit(X, y)
            scores = normalized_residual_score(y, oracle.predict(X), config["bound"])
            qhat = private_quantile(scores[:n], alpha1, epsilon2, bins=bins, rng=rng)
            miss["oracle"] += scores[n] > qhat
    out.update({"feasible": True, "alpha1": alpha1, "alpha0": alpha0, "oracle_bound": bound_oracle,
                "bound": math.exp(epsilon1) * bound_oracle + delta, "trivial": trivial / reps})
    for name, count in miss.items():
        rate = float(count / reps)
        out[name] = rate
        out[name + "_se"] = math.sqrt(rate * (1 - rate) / reps)
    return out


# --------------------------------------------------------------------------- runner

GRID = {
    "memoriser": {"ns": [100, 1000], "epsilon1s": [0.5, 1.0, 2.0], "epsilon2s": [5.0, 50.0]},
    "ridge": {"ns": [100, 1000], "epsilon1s": [0.5, 1.0], "epsilon2s": [5.0, 50.0]},
}


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=20000, help="repetitions per setting")
    parser.add_argument("--seed", type=int, default=20260606)


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    jobs = [(trainer, n, e1, e2) for trainer, grid in GRID.items() for n in grid["ns"]
            for e1 in grid["epsilon1s"] for e2 in grid["epsilon2s"]]
    results = [coverage_setting(*job, args.reps, rng)
               for job in tqdm(jobs, desc="dpcp_coverage", disable=getattr(args, "quiet", False))]
    return {"grid": GRID, "alpha": ALPHA, "bins": BINS, "reps": args.reps, "seed": args.seed, "results": results}
