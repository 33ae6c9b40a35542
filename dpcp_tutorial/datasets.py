"""Data generators used throughout the book (no downloads: everything is simulated
or ships with scikit-learn).
"""

from __future__ import annotations

import numpy as np

from ._validation import RandomLike, check_positive_int, check_random_state, check_scalar

__all__ = [
    "make_heteroscedastic_regression",
    "make_contaminated_gaussian",
    "make_cauchy",
]


def make_heteroscedastic_regression(n: int, rng: RandomLike = None, noise: float = 0.5):
    """One-feature regression with noise that grows with ``|x|`` (chapters 1, 4–6).

    .. math:: X \\sim U(-3, 3), \\qquad Y = \\sin(X) + X/2 + \\sigma\\,(0.2 + |X|/3)\\, \\varepsilon,
              \\quad \\varepsilon \\sim N(0, 1).

    Parameters
    ----------
    n : int
        Number of samples.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    noise : float
        Noise scale :math:`\\sigma`.

    Returns
    -------
    X : ndarray of shape (n, 1)
    y : ndarray of shape (n,)
    """
    n = check_positive_int(n, "n")
    noise = check_scalar(noise, "noise", low=0.0, low_inclusive=True)
    rng = check_random_state(rng)
    x = rng.uniform(-3.0, 3.0, size=n)
    y = np.sin(x) + x / 2 + noise * (0.2 + np.abs(x) / 3) * rng.standard_normal(n)
    return x[:, None], y


def make_contaminated_gaussian(n: int, d: int, fraction: float = 0.25, shift: float = 5.0,
                               rng: RandomLike = None) -> np.ndarray:
    """Gaussian contamination model :math:`(1-\\eta)N(0, I_d) + \\eta N(s\\mathbf 1_d, I_d)` (chapter 10).

    As in the authors' simulations, the first :math:`\\lfloor \\eta n \\rfloor` rows
    are the contaminated ones (deterministic labels); the target location is 0.
    The sample mean is then biased by :math:`\\eta s \\sqrt d` in norm
    (:math:`1.25\\sqrt d` for the defaults).

    Parameters
    ----------
    n, d : int
        Sample size and dimension.
    fraction : float
        Contaminated fraction :math:`\\eta` in [0, 1).
    shift : float
        Shift :math:`s` of every coordinate of the contaminated rows.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of shape (n, d)
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    fraction = check_scalar(fraction, "fraction", low=0.0, high=1.0, low_inclusive=True)
    shift = check_scalar(shift, "shift")
    rng = check_random_state(rng)
    data = rng.standard_normal((n, d))
    data[: int(np.floor(fraction * n))] += shift
    return data


def make_cauchy(n: int, d: int, rng: RandomLike = None) -> np.ndarray:
    """Independent standard Cauchy marginals centred at 0 (chapter 11).

    No moments exist, so the sample mean does not converge; every depth median
    targets the centre 0.
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    rng = check_random_state(rng)
    return rng.standard_cauchy((n, d))
