"""Split-conformal quantile (Vovk et al. 2005; Lei et al. 2018; chapter 1).

Copy-ready: needs only NumPy and the standard library. Not private: it
reads the calibration scores exactly, so it may refuse bad scores freely.
"""
import math
import numbers
from fractions import Fraction

import numpy as np


def _as_array(values, name):
    """``np.asarray(values)``, refusing what it would misread (TypeError).

    A masked array would lose its mask (the masked entries would count as
    data); a ragged sequence (rows of different lengths) has no shape.
    """
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array; pass {name}.compressed() "
                        f"or {name}.filled(value) explicitly")
    try:
        return np.asarray(values)
    except ValueError:
        raise TypeError(f"{name} must be an array of real numbers with rows "
                        "of equal length (got a ragged sequence)") from None


def conformal_quantile(scores, alpha):
    """Finite-sample conformal quantile of calibration scores.

    Returns the k-th smallest of the n scores, where

        k = ceil((n + 1) * (1 - alpha)),

    and ``math.inf`` when k > n (too few scores for this level). With
    exchangeable calibration and test points, the set
    {y : s(x, y) <= q} then covers the test label with probability at
    least 1 - alpha.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Non-conformity scores of the calibration points: real and finite
        (no NaN, no inf), n >= 1.
    alpha : float
        Miscoverage level in (0, 1), e.g. 0.1 for 90% coverage.

    Returns
    -------
    float
        The quantile, or ``math.inf``.

    Raises
    ------
    TypeError
        If ``scores`` is not an array of real numbers, or ``alpha`` is not
        a real number.
    ValueError
        If ``scores`` is not 1-D, is empty or has a non-finite value, or
        ``alpha`` is outside (0, 1).

    Notes
    -----
    Not a private release: no neighbour relation applies, and the checks
    may depend on the scores. The level is turned into a fraction before
    the product, because in floating point 10 * (1 - 0.7) is
    3.0000000000000004, whose ceiling would be one rank too high.

    Examples
    --------
    >>> conformal_quantile([0.3, 0.1, 0.2, 0.5], alpha=0.5)
    0.3
    >>> conformal_quantile([0.3, 0.1], alpha=0.1)
    inf
    """
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(
            alpha, numbers.Real):
        raise TypeError(
            f"alpha must be a real number, got {type(alpha).__name__}")
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha={alpha} must lie strictly between 0 and 1 "
                         "(a miscoverage level, e.g. 0.1 for 90% coverage)")
    scores = _as_array(scores, "scores")
    if scores.dtype.kind not in "iuf":
        raise TypeError("scores must be an array of real numbers, got "
                        f"dtype {scores.dtype}")
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("scores must be a non-empty 1-D array, got shape "
                         f"{scores.shape}; use .ravel() if intended")
    scores = scores.astype(float)
    if not np.isfinite(scores).all():
        raise ValueError("scores contain NaN or infinite values; remove or "
                         "repair them first")
    n = scores.size
    k = math.ceil((n + 1) * (1 - Fraction(alpha).limit_denominator(10**12)))
    if k > n:
        return math.inf
    return float(np.partition(scores, k - 1)[k - 1])
