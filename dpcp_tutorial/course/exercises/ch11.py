"""Checkers for the coding exercises of chapter 11 (heavy tails)."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from ._common import Case, array, checker

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


def _reference_interval_log_probabilities(data, epsilon: float, lower: float, upper: float) -> np.ndarray:
    """The exact law the checker compares with (not part of the public API)."""
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


def _interval_cases(rng: np.random.Generator) -> list[Case]:
    three = np.round(rng.uniform(-0.9, 0.9, size=3), 2)
    tied = np.round(rng.uniform(-0.9, 1.9, size=3), 1)
    ties = rng.permutation(np.r_[tied[:2], np.full(3, tied[2]), np.round(rng.uniform(-0.9, 1.9), 1)])
    lower, upper = -float(rng.integers(1, 4)), float(rng.integers(1, 4))
    on_bound = rng.permutation(np.r_[lower, np.round(rng.uniform(lower, upper, size=3), 2), upper])
    return [
        Case("three points", "n=3, epsilon=1", data=three, epsilon=1.0, lower=-1.0, upper=1.0),
        Case("heavy-tailed data, some outside [lower, upper]", "n=25, epsilon=2", data=rng.standard_cauchy(25),
             epsilon=2.0, lower=-5.0, upper=5.0),
        Case("ties", "n=6, epsilon=3", data=ties, epsilon=3.0, lower=-1.0, upper=2.0),
        Case("epsilon n large enough that exp overflows", "n=4000, epsilon=1", data=rng.standard_cauchy(4000),
             epsilon=1.0, lower=-10.0, upper=10.0),
        Case("a point on each bound", f"n=5, epsilon=1, [{lower:g}, {upper:g}]", data=on_bound, epsilon=1.0,
             lower=lower, upper=upper),
    ]


@checker(function="interval_log_probabilities", exercise="ex-11-exact-1d", cases=_interval_cases)
def check_interval_log_probabilities(ctx, case) -> None:
    """Check a reader's ``interval_log_probabilities(data, epsilon, lower, upper) -> array of n+1 log-probabilities`` (chapter 11).

    The output is compared with the exact law of the one-dimensional continuous
    exponential mechanism of the exercise over the n+1 intervals. Cases include unsorted data, data outside
    ``[lower, upper]``, ties, a point on the bound, and :math:`\\varepsilon n` large enough that a naive
    ``exp`` overflows.
    """
    data, epsilon, lower, upper = case.data, case.epsilon, case.lower, case.upper
    if np.any((data < lower) | (data > upper)):
        nan_hint = ("your output contains NaN and some data lie outside [lower, upper]: what does the exercise do "
                    "with them before sorting?")
    else:
        nan_hint = "your output contains NaN. Work in log space so that nothing overflows, and use -inf for empty intervals"
    got = ctx.call(data, epsilon, lower, upper, inputs=True,
                   returns=array((data.size + 1,), allow_inf=True, nan_hint=nan_hint,
                                 what="n+1 log-probabilities, one per interval"))
    expected = _reference_interval_log_probabilities(data, epsilon, lower, upper)
    if _same(got, expected):
        return
    d = np.asarray(data, dtype=float)
    k = int(np.argmax(~np.isclose(np.where(np.isfinite(got), got, 0), np.where(np.isfinite(expected), expected, 0),
                                  rtol=1e-7, atol=1e-9)))
    detail = f"interval {k} should have log-probability {expected[k]:.6g}, got {got[k]:.6g}"
    diagnoses = [
        (_normalised(_interval_logits(d, epsilon, lower, upper, lengths=False)),
         "you left out the interval lengths: with a uniform prior the mass of an interval is not exp(beta * depth) "
         "alone"),
        (_normalised(_interval_logits(d, epsilon, lower, upper, beta_factor=1.0)),
         "your exponent is twice too large: check beta against the sensitivity of the halfspace depth"),
        (_normalised(_interval_logits(d, epsilon, lower, upper, clip=False)),
         "you did not clip the data to [lower, upper]; points outside the prior's support give negative interval "
         "lengths"),
    ]
    for candidate, message in diagnoses:
        if _same(got, candidate):
            ctx.stop(message, detail)
    if np.all(np.isfinite(got)) and not np.isclose(logsumexp(got), 0.0):
        ctx.fail("your log-probabilities do not sum to 1", f"logsumexp = {logsumexp(got):.4g}")
    elif np.all(np.isfinite(got)) and not np.all(np.isfinite(expected)):
        ctx.fail("tied data points make some intervals empty; they must get probability 0 (log-probability -inf)",
                 detail)
    else:
        ctx.fail("your log-probabilities differ from the exact law", detail)
