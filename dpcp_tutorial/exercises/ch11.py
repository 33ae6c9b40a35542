"""Checkers for the coding exercises of chapter 11 (heavy tails)."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from ._common import ExerciseResult, run_safely

__all__ = ["check_interval_log_probabilities"]


def _interval_logits(data: np.ndarray, epsilon: float, lower: float, upper: float, beta_factor: float = 0.5,
                     lengths: bool = True, clip: bool = True) -> np.ndarray:
    """Unnormalised log-masses of the n+1 intervals; the defaults give the correct mechanism."""
    x = np.clip(data, lower, upper) if clip else data
    x = np.sort(x)
    n = x.size
    k = np.arange(n + 1)
    logits = beta_factor * epsilon * np.minimum(k, n - k)
    if lengths:
        gaps = np.diff(np.concatenate([[lower], x, [upper]]))
        with np.errstate(divide="ignore", invalid="ignore"):
            logits = logits + np.log(np.maximum(gaps, 0.0))
    return logits


def reference_interval_log_probabilities(data, epsilon: float, lower: float, upper: float) -> np.ndarray:
    """Exact 1-D private median law: interval :math:`k` has mass :math:`\\propto |I_k|\\,e^{\\varepsilon\\min(k, n-k)/2}`."""
    logits = _interval_logits(np.asarray(data, dtype=float), epsilon, lower, upper)
    return logits - logsumexp(logits)


def _normalised(logits: np.ndarray) -> np.ndarray:
    return logits - logsumexp(logits)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    fin = np.isfinite(b)
    return bool(np.array_equal(np.isfinite(a), fin) and np.all(a[~fin] == b[~fin])
                and np.allclose(a[fin], b[fin], rtol=1e-7, atol=1e-9))


def check_interval_log_probabilities(fn) -> ExerciseResult:
    """Check a reader's ``fn(data, epsilon, lower, upper) -> array of n+1 log-probabilities`` (chapter 11).

    The exact continuous exponential mechanism in one dimension with a uniform prior on
    :math:`[a, b]` and utility the halfspace depth: after clipping the data to
    :math:`[a, b]` and sorting, interval :math:`k` (:math:`k = 0, \\dots, n`, between
    the :math:`k`-th and :math:`(k+1)`-th order statistics) has probability proportional
    to its length times :math:`e^{\\varepsilon \\min(k, n-k)/2}`. Empty intervals (ties)
    get :math:`-\\infty`. Hidden cases include unsorted data, data outside
    :math:`[a, b]`, ties, and :math:`\\varepsilon n` large enough that a naive ``exp`` overflows.
    """
    result = ExerciseResult("check_interval_log_probabilities")
    rng = np.random.default_rng(1111)
    cases = [
        (np.array([0.3, -0.2, 0.1]), 1.0, -1.0, 1.0),
        (rng.standard_cauchy(25), 2.0, -5.0, 5.0),                 # some points outside [a, b]
        (np.array([0.0, 0.5, 0.5, 0.5, 1.0, -0.4]), 3.0, -1.0, 2.0),  # ties
        (rng.standard_cauchy(4000), 1.0, -10.0, 10.0),             # eps*n/4 = 1000: exp would overflow
    ]
    for data, epsilon, lower, upper in cases:
        got = run_safely(result, fn, data.copy(), epsilon, lower, upper)
        if got is None:
            break
        try:
            got = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            result.fail(f"expected an array of {data.size + 1} log-probabilities, got {type(got).__name__}")
            break
        expected = reference_interval_log_probabilities(data, epsilon, lower, upper)
        if got.shape != expected.shape:
            result.fail(f"with n={data.size} points there are n+1={data.size + 1} intervals; your output has shape "
                        f"{got.shape}")
            break
        d = np.asarray(data, dtype=float)
        if np.isnan(got).any():
            outside = np.any((d < lower) | (d > upper))
            if outside:
                result.fail(f"n={data.size}, epsilon={epsilon}: your output contains NaN and some data lie outside "
                            f"[{lower}, {upper}]: clip the data to [lower, upper] first (otherwise interval lengths "
                            "can be negative)")
            else:
                result.fail(f"n={data.size}, epsilon={epsilon}: your output contains NaN. Work in log space (add "
                            "the log-lengths to the logits and subtract logsumexp) so that nothing overflows, and "
                            "use -inf for empty intervals")
            break
        if _same(got, expected):
            continue
        diagnoses = [
            (_normalised(_interval_logits(d, epsilon, lower, upper, lengths=False)),
             "you left out the interval lengths: with a uniform prior the mass of an interval is its length times "
             "exp(beta * depth), not exp(beta * depth) alone"),
            (_normalised(_interval_logits(d, epsilon, lower, upper, beta_factor=1.0)),
             "your exponent is epsilon*min(k, n-k), i.e. beta = epsilon*n; the halfspace depth has sensitivity 1/n, "
             "so beta = epsilon*n/2 and the exponent is epsilon*min(k, n-k)/2"),
            (_normalised(_interval_logits(d, epsilon, lower, upper, clip=False)),
             "you did not clip the data to [lower, upper]; points outside the prior's support give negative "
             "interval lengths"),
        ]
        for candidate, message in diagnoses:
            if _same(got, candidate):
                result.fail(f"n={data.size}, epsilon={epsilon}: {message}")
                break
        else:
            if np.all(np.isfinite(got)) and not np.isclose(logsumexp(got), 0.0):
                result.fail(f"n={data.size}, epsilon={epsilon}: your log-probabilities do not sum to 1 "
                            f"(logsumexp = {logsumexp(got):.4g}); subtract logsumexp of the logits")
            elif np.all(np.isfinite(got)) and not np.all(np.isfinite(expected)):
                result.fail(f"n={data.size}, epsilon={epsilon}: tied data points make some intervals empty; they "
                            "must get probability 0 (log-probability -inf)")
            else:
                k = int(np.argmax(~np.isclose(got, expected, rtol=1e-7, atol=1e-9)))
                result.fail(f"n={data.size}, epsilon={epsilon}, [lower, upper]=[{lower}, {upper}]: interval {k} "
                            f"should have log-probability {expected[k]:.6g}, got {got[k]:.6g}")
        break
    return result.report()
