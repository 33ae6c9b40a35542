"""Split-conformal quantile (Vovk et al. 2005; Lei et al. 2018). Copy-ready: numpy only."""
import math
from fractions import Fraction

import numpy as np


def conformal_quantile(scores, alpha):
    """The ceil((n+1)(1-alpha))-th smallest score, or inf when that rank exceeds n."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0 or np.isnan(scores).any():
        raise ValueError("scores must be a non-empty 1-D array without NaN")
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie in (0, 1)")
    n = scores.size
    # exact rational arithmetic: in floating point 10 * (1 - 0.7) is 3.0000000000000004
    k = math.ceil((n + 1) * (1 - Fraction(alpha).limit_denominator(10**12)))
    if k > n:
        return math.inf
    return float(np.partition(scores, k - 1)[k - 1])
