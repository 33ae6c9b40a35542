"""Basic differentially private mechanisms (chapters 2 and 3).

All samplers work in log space: the exponential mechanism never exponentiates
a large number, so utilities of size 1e9 with epsilon up to 1e3 are handled
exactly (chapter 3, *The naive formula underflows*).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax

from ._validation import RandomLike, check_1d, check_epsilon, check_random_state, check_scalar

__all__ = [
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gumbel_max_sample",
]


def _exponential_logits(utilities, sensitivity: float, epsilon: float) -> np.ndarray:
    """Logits :math:`\\varepsilon u_j / (2\\Delta)`, shifted so the largest is 0."""
    u = check_1d(utilities, "utilities")
    epsilon = check_epsilon(epsilon)
    sensitivity = check_scalar(sensitivity, "sensitivity", low=0.0,
                               hint="the utility's sensitivity must be positive")
    # subtract the max *before* scaling so huge utilities keep their differences
    return (epsilon / (2.0 * sensitivity)) * (u - u.max())


def gumbel_max_sample(logits: np.ndarray, rng: RandomLike = None) -> int:
    """Draw index ``j`` with probability ``softmax(logits)[j]`` by the Gumbel-max trick.

    .. math:: J = \\arg\\max_j \\,(\\ell_j + G_j), \\qquad G_j \\overset{iid}{\\sim} \\mathrm{Gumbel}(0, 1).

    Exact for any finite logits (no exponentials are formed). Entries equal to
    ``-inf`` are never chosen.
    """
    logits = np.asarray(logits, dtype=float)
    if logits.ndim != 1 or logits.size == 0:
        raise ValueError(f"logits must be a non-empty 1-D array, got shape {logits.shape}")
    if np.isnan(logits).any() or not np.isfinite(logits.max()):
        raise ValueError("logits must not contain NaN and must have a finite maximum")
    rng = check_random_state(rng)
    return int(np.argmax(logits + rng.gumbel(size=logits.size)))


def exponential_mechanism_probabilities(utilities, sensitivity: float, epsilon: float,
                                        log: bool = False) -> np.ndarray:
    """Exact output law of the exponential mechanism over a finite candidate set.

    .. math:: P(J = j) = \\frac{\\exp(\\varepsilon u_j / (2\\Delta))}
                                {\\sum_k \\exp(\\varepsilon u_k / (2\\Delta))},

    which is :math:`\\varepsilon`-DP when every utility changes by at most
    :math:`\\Delta` between neighbouring data sets (McSherry & Talwar, 2007).
    Computed as a log-softmax, so no term overflows or underflows to ``nan``.

    Parameters
    ----------
    utilities : array-like of shape (K,)
        Utility of each candidate (higher is better).
    sensitivity : float
        :math:`\\Delta`, the largest change of any utility between neighbours.
    epsilon : float
        Privacy parameter.
    log : bool
        Return log-probabilities instead (exact even where probabilities
        underflow to 0; used by the privacy audits).

    Returns
    -------
    ndarray of shape (K,)
    """
    return _normalise(_exponential_logits(utilities, sensitivity, epsilon), log)


def exponential_mechanism(utilities, sensitivity: float, epsilon: float, rng: RandomLike = None) -> int:
    """Sample a candidate index from the exponential mechanism (chapter 3).

    Same law as :func:`exponential_mechanism_probabilities`, drawn with the
    Gumbel-max trick.

    Returns
    -------
    int
        The index of the chosen candidate.
    """
    return gumbel_max_sample(_exponential_logits(utilities, sensitivity, epsilon), rng)


def _normalise(logits: np.ndarray, log: bool) -> np.ndarray:
    logp = log_softmax(logits)
    return logp if log else np.exp(logp)
