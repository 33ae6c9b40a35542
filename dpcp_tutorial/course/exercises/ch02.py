"""Checkers for the coding exercises of chapter 2 (differential privacy).

Both exercises are randomised releases, so each case draws many releases from one seeded Generator and
compares them with the exact law of the correct mechanism, with a tolerance of about 5.5 standard errors
(a correct release fails a case with probability below one in ten million) that separates the correct
noise from the wrong ones the feedback names.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from scipy.special import expit

from ._common import Case, Rng, array, binary_array, checker, number

__all__ = ["check_private_mean", "check_randomized_response"]

_Z = 5.5            # standard errors of tolerance in every statistical test
_P_MIN = 1e-7       # p-value below which a goodness-of-fit test fails


# ------------------------------------------------------------------------------------------- private mean

def _mean_cases(rng: np.random.Generator) -> list[Case]:
    eps_small = float(rng.choice([1.0, 2.0, 4.0]))
    n_small = int(rng.choice([5, 6, 8]))
    lo, hi = float(rng.choice([-1.0, 0.0])), float(rng.choice([1.0, 2.0]))
    outliers = rng.choice([1000.0, -50.0, 500.0, 80.0, 12.0, -300.0], size=5, replace=False)
    return [
        Case("data inside the bounds", "n=500, [0, 1], epsilon=1", x=rng.uniform(0, 1, size=500), lower=0.0,
             upper=1.0, epsilon=1.0, draws=4000, seed=int(rng.integers(2**31))),
        Case("outliers far outside [lower, upper]", "n=200, [0, 10], epsilon=0.5",
             x=np.r_[rng.uniform(0, 10, size=195), outliers], lower=0.0, upper=10.0, epsilon=0.5, draws=4000,
             seed=int(rng.integers(2**31))),
        Case("small n, where a constant factor in the noise scale shows", f"n={n_small}, epsilon={eps_small}",
             x=rng.uniform(lo, hi, size=n_small), lower=lo, upper=hi, epsilon=eps_small, draws=12000,
             seed=int(rng.integers(2**31))),
        Case("n = 10", "n=10, [-1, 5], epsilon=0.8", x=rng.normal(2.0, 2.0, size=10), lower=-1.0, upper=5.0,
             epsilon=0.8, draws=12000, seed=int(rng.integers(2**31))),
        Case("the same seed gives the same release", "n=40", x=rng.normal(size=40), lower=-2.0, upper=2.0,
             epsilon=1.0, draws=0, seed=int(rng.integers(2**31))),
    ]


def _diagnose_scale(ratio: float, n: int) -> str:
    """Name the mistake behind a noise scale that is ``ratio`` times the correct one."""
    if abs(ratio / n - 1) < 0.1:
        return ("your noise is about n times too large: how much can the mean of n clipped values change when "
                "one value is replaced?")
    for factor, hint in [(n / (n + 1), "n/(n + 1) times the required one (did you divide by n + 1?): the mean of "
                                       "n values moves by at most (upper - lower)/n when one value is replaced"),
                         (2.0, "twice too large (did you use 2 * sensitivity / epsilon, or epsilon / 2?)"),
                         (0.5, "half the required scale: that release is only 2*epsilon-DP"),
                         (math.sqrt(2.0), "sqrt(2) times too large: numpy's laplace takes the scale b, not the "
                                          "standard deviation"),
                         (1 / math.sqrt(2.0), "1/sqrt(2) times the required scale: numpy's laplace takes the scale "
                                              "b, not the standard deviation")]:
        if abs(ratio / factor - 1) < 0.025 and abs(factor - 1) > 0.05:
            return f"your noise scale is {hint}"
    return ("your noise scale is " + ("smaller" if ratio < 1 else "larger") + " than the one an epsilon-DP "
            "release of the clipped mean needs")


@checker(function="private_mean", exercise="ex-02-private-mean", cases=_mean_cases,
         implements=("dpcp_tutorial.mechanisms.laplace_mechanism",))
def check_private_mean(ctx, case) -> None:
    """Check a reader's ``private_mean(x, lower, upper, epsilon, rng) -> float``: an epsilon-DP mean (chapter 2).

    Expected: the mean of ``x`` clipped to ``[lower, upper]`` plus Laplace noise of scale
    :math:`(u - l)/(n\\varepsilon)` (replace-one, :math:`n` public), drawn from ``rng``. Each statistical case
    draws 4,000 or 12,000 releases from one Generator and tests their centre, their noise scale (to a few
    percent, so :math:`n` and :math:`n+1` differ at small :math:`n`) and the exact Laplace law
    (Kolmogorov-Smirnov); every call must leave numpy's global random state untouched, and the same seed must
    give the same release. Cases include outliers far outside the bounds and :math:`n` = 5 to 10.
    """
    x, lower, upper, epsilon = case.x, case.lower, case.upper, case.epsilon
    n = x.size
    target = float(np.mean(np.clip(x, lower, upper)))
    scale = (upper - lower) / (n * epsilon)
    if case.draws == 0:
        first, second = ctx.call(x, lower, upper, epsilon, Rng(case.seed), returns=number(), rng_state=True), \
            ctx.call(x, lower, upper, epsilon, Rng(case.seed), returns=number(), rng_state=True)
        other = ctx.call(x, lower, upper, epsilon, Rng(case.seed + 1), returns=number(), rng_state=True)
        if first != second:
            ctx.fail("two calls with the same seed gave different releases: draw the noise from the rng argument, "
                     "not from np.random or a new generator")
        elif first == other:
            ctx.fail("two different seeds gave the same release: the noise must come from the rng argument")
        return
    releases = np.array(ctx.call(x, lower, upper, epsilon, Rng(case.seed), returns=number(), repeat=case.draws,
                                 rng_state=True))
    draws = releases.size
    if np.ptp(releases) == 0:
        ctx.stop("your releases do not vary: the exact mean is not private; add noise drawn from the rng argument")
    if len(np.unique(releases)) < draws / 2:
        ctx.stop("your releases repeat from call to call: draw fresh noise from the rng argument at every call "
                 "(do not create a new generator with a fixed seed inside the function)")
    centre = float(np.median(releases))
    spread = max(scale, float(np.mean(np.abs(releases - centre))))   # the median's sd is b/sqrt(K) for Laplace(b)
    centre_tolerance = _Z * spread / math.sqrt(draws) + 1e-12 * (1 + abs(target))
    raw = float(np.mean(x))
    if abs(centre - raw) < centre_tolerance < abs(raw - target) / 2:
        ctx.stop("your releases centre on the unclipped mean; without clipping, one outlier can move the mean "
                 "arbitrarily far, so no finite noise is enough", f"unclipped mean {raw:.6g}, clipped {target:.6g}")
    if abs(centre - target) > centre_tolerance:
        ctx.stop("your releases are not centred on the mean of the clipped data",
                 f"they centre on {centre:.6g}, the clipped mean is {target:.6g}")
    ratio = float(np.mean(np.abs(releases - target)) / scale)    # E|Z| = b for Laplace(b); sd of the mean 1/sqrt(K)
    if abs(ratio - 1) > _Z / math.sqrt(draws):
        ctx.stop(_diagnose_scale(ratio, n), f"n={n}, epsilon={epsilon}: your scale is {ratio:.4f} times the "
                                            f"required {scale:.4g}")
    p_value = stats.kstest(releases - target, stats.laplace(scale=scale).cdf).pvalue
    if p_value < _P_MIN:
        shape = np.mean(np.abs(releases - target)) / math.sqrt(np.mean((releases - target) ** 2))
        ctx.fail("your noise has the right scale but not the Laplace law (E|Z|/sqrt(E Z^2) is 0.707 for Laplace "
                 "noise, 0.798 for normal noise)", f"yours: {shape:.3f}; Kolmogorov-Smirnov p = {p_value:.2g}")


# -------------------------------------------------------------------------------------- randomised response

def _keep_probability(epsilon: float) -> float:
    return float(expit(epsilon))         # e^eps / (1 + e^eps), without overflow


def _rr_cases(rng: np.random.Generator) -> list[Case]:
    eps_a = float(rng.choice([0.9, 1.0, 1.2]))
    eps_b = float(rng.choice([2.0, 2.5, 3.0]))
    eps_c = float(rng.choice([0.4, 0.5, 0.6]))
    shape2 = (int(rng.integers(10, 30)), int(rng.integers(30, 60)))
    return [
        Case("epsilon near 1, bits of both values", f"epsilon={eps_a}, 2000 bits, 100 calls",
             bits=rng.integers(0, 2, size=2000), epsilon=eps_a, repeat=100, seed=int(rng.integers(2**31))),
        Case("a larger epsilon", f"epsilon={eps_b}, 2000 bits, 100 calls", bits=rng.integers(0, 2, size=2000),
             epsilon=eps_b, repeat=100, seed=int(rng.integers(2**31))),
        Case("a small epsilon", f"epsilon={eps_c}, 5000 bits, 200 calls", bits=rng.integers(0, 2, size=5000),
             epsilon=eps_c, repeat=200, seed=int(rng.integers(2**31))),
        Case("a two-dimensional array of bits", f"shape {shape2}, epsilon=1.5", bits=rng.integers(0, 2, size=shape2),
             epsilon=1.5, repeat=100, seed=int(rng.integers(2**31))),
        Case("a huge epsilon, where e^epsilon overflows", "epsilon=1000", bits=rng.integers(0, 2, size=500),
             epsilon=1000.0, repeat=3, seed=int(rng.integers(2**31))),
        Case("the same seed gives the same release", "epsilon=1", bits=rng.integers(0, 2, size=300), epsilon=1.0,
             repeat=0, seed=int(rng.integers(2**31))),
    ]


def _rr_diagnosis(p_hat: float, p: float, epsilon: float, tolerance: float) -> str:
    """Name the formula behind an observed keep probability ``p_hat``.

    A fixed keep probability of 3/4 and the first-order approximation 1/2 + epsilon/4 coincide at epsilon = 1;
    there the hint names both, elsewhere each its own.
    """
    first_order = min(0.5 + epsilon / 4, 1.0)
    if abs(first_order - 0.75) <= tolerance:
        fixed = ("you keep each bit with probability 3/4 at this epsilon: a fixed 3/4, or 1/2 + epsilon/4 (the "
                 "first-order approximation of e^epsilon/(1+e^epsilon)), which equal 3/4 at epsilon = 1; the keep "
                 "probability must be e^epsilon/(1+e^epsilon), and 3/4 exceeds it, so the release is no longer "
                 "epsilon-DP")
    else:
        fixed = ("you keep each bit with probability 3/4 whatever epsilon: the keep probability must follow "
                 "epsilon, as e^epsilon/(1+e^epsilon)")
    candidates = [
        (0.75, fixed),
        (1 - p, "you keep each bit with probability 1/(1+e^epsilon) and flip it with e^epsilon/(1+e^epsilon): "
                "keep and flip are swapped"),
        (math.exp(epsilon) / (2 + math.exp(epsilon)) if epsilon < 700 else 1.0,
         "you keep each bit with probability e^epsilon/(2+e^epsilon): the denominator is 1 + e^epsilon (the "
         "two outcomes' weights e^epsilon and 1, normalised)"),
        (first_order, "you keep each bit with probability 1/2 + epsilon/4, the first-order "
                                      "approximation of e^epsilon/(1+e^epsilon); it is too large for epsilon near "
                                      "1 and above, where the release is no longer epsilon-DP"),
        (_keep_probability(epsilon / 2), "you keep each bit with probability e^(epsilon/2)/(1+e^(epsilon/2)): "
                                         "that is epsilon/2 randomised response, private but needlessly noisy"),
        (1.0, "you release the bits unchanged (or almost): no randomisation, no privacy"),
        (0.5, "your output is independent of the bits (keep probability 1/2): private but useless"),
    ]
    for value, hint in candidates:
        if abs(p_hat - value) <= tolerance and abs(value - p) > 2 * tolerance:
            return hint
    if p_hat > p:
        return ("you keep the bits too often: an attacker who sees the output guesses a bit with probability "
                "above e^epsilon/(1+e^epsilon), the likelihood ratio exceeds e^epsilon, so the release is not "
                "epsilon-DP")
    return ("you keep the bits less often than e^epsilon/(1+e^epsilon): private, but more noise than epsilon-DP "
            "needs")


@checker(function="randomized_response", exercise="ex-02-attacker", cases=_rr_cases)
def check_randomized_response(ctx, case) -> None:
    """Check a reader's ``randomized_response(bits, epsilon, rng) -> ndarray`` (chapter 2).

    ``bits`` is an integer array of 0s and 1s of any shape; the function returns an array of the same shape
    in which each bit is kept with probability :math:`e^\\varepsilon/(1+e^\\varepsilon)` and flipped otherwise,
    independently, drawing only from ``rng`` (a ``numpy.random.Generator``), without changing ``bits``.
    That is the largest keep probability that is :math:`\\varepsilon`-DP: the likelihood ratio of an output
    bit under the two values of the input bit is exactly :math:`e^\\varepsilon` (the attacker bound of the
    chapter). Each case releases 200,000 to 1,000,000 bits from one seeded Generator and tests, separately
    for input 0 and 1, the keep probability to about 5.5 standard errors (which separates it from
    :math:`e^\\varepsilon/(2+e^\\varepsilon)`, :math:`1/2+\\varepsilon/4` and the swapped rule), the
    attacker's likelihood ratio, the independence of the bits (the spread of the per-call counts), a huge
    :math:`\\varepsilon` where :math:`e^\\varepsilon` overflows, determinism under a seed, and that numpy's
    global random state is untouched.
    """
    bits, epsilon = case.bits, case.epsilon
    spec = binary_array(bits.shape, what="one released bit per input bit")
    if case.repeat == 0:
        first = ctx.call(bits, epsilon, Rng(case.seed), returns=spec, rng_state=True, inputs=True)
        second = ctx.call(bits, epsilon, Rng(case.seed), returns=spec, rng_state=True, inputs=True)
        other = ctx.call(bits, epsilon, Rng(case.seed + 1), returns=spec, rng_state=True, inputs=True)
        if not np.array_equal(first, second):
            ctx.fail("two calls with the same seed gave different releases: draw from the rng argument only")
        elif np.array_equal(first, other):
            ctx.fail("two different seeds gave the same release: the randomness must come from the rng argument")
        return
    outputs = np.array(ctx.call(bits, epsilon, Rng(case.seed), returns=spec, repeat=case.repeat, rng_state=True,
                                inputs=True))
    kept = outputs == bits[None]
    p = _keep_probability(epsilon)
    if epsilon > 700:
        if not kept.all():
            ctx.fail("with epsilon = 1000 every bit must be kept (the flip probability is e^-1000): compute "
                     "e^epsilon/(1+e^epsilon) as 1/(1+e^-epsilon) (scipy.special.expit) so that it does not "
                     "overflow to inf/inf = NaN")
        return
    # independence: each call's number of kept bits is Binomial(size, p)
    per_call = kept.reshape(kept.shape[0], -1).sum(axis=1)
    size = kept[0].size
    p_all = float(kept.mean())
    spread = size * p_all * (1 - p_all)
    dispersion = float(np.sum((per_call - per_call.mean()) ** 2) / spread) if spread > 0 else 0.0
    calls = per_call.size
    low, high = stats.chi2.ppf(_P_MIN / 2, calls - 1), stats.chi2.ppf(1 - _P_MIN / 2, calls - 1)
    if np.all(per_call == per_call[0]) and calls > 1 and np.all(kept == kept[0]):
        ctx.stop("every call flips the same bits: draw fresh randomness from the rng argument at every call "
                 "(do not create a new generator with a fixed seed inside the function)")
    if spread > 0 and not low <= dispersion <= high:
        ctx.stop("the bits are not flipped independently: the number of kept bits varies from call to call "
                 + ("more" if dispersion > high else "less") + " than independent flips allow (flip each bit with "
                 "its own random draw)", f"dispersion {dispersion:.1f} for {calls} calls, expected about {calls}")
    results = {}
    for value in (0, 1):
        mask = np.broadcast_to(bits[None] == value, kept.shape)
        total = int(mask.sum())
        p_hat = float(kept[mask].mean())
        results[value] = (p_hat, _Z * math.sqrt(p * (1 - p) / total))
    (p0, t0), (p1, t1) = results[0], results[1]
    detail = f"epsilon={epsilon}: keep probability {p:.5f}; yours {p0:.5f} for 0s and {p1:.5f} for 1s"
    bad0, bad1 = abs(p0 - p) > t0, abs(p1 - p) > t1
    if bad0 and bad1:
        ctx.stop(_rr_diagnosis((p0 + p1) / 2, p, epsilon, max(t0, t1)), detail)
    if bad0 or bad1:
        ctx.stop("a 0 and a 1 must be kept with the same probability e^epsilon/(1+e^epsilon); yours treats one "
                 "value differently, so the likelihood ratio of some output exceeds e^epsilon", detail)
    # the attacker bound: P(out = b | bit = b) / P(out = b | bit = 1 - b) <= e^epsilon (with sampling error)
    ratio = max(p0 / max(1 - p1, 1e-300), p1 / max(1 - p0, 1e-300))
    if math.log(ratio) > epsilon + 2 * _Z * math.sqrt(1 / (p * (1 - p) * kept.size)):
        ctx.stop("the attacker's likelihood ratio exceeds e^epsilon: the release is not epsilon-DP", detail)
