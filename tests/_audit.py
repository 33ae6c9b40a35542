"""Exact privacy audits shared by the tests: the largest log-ratio between neighbouring data sets."""

import itertools

import numpy as np


def max_add_one_log_ratio(log_law, support, n: int) -> float:
    """max over data sets of ``n`` values from ``support`` and one added value of ``|log P(D) - log P(D + r)|``.

    ``log_law(data)`` returns the log-probabilities of every output for the data set ``data`` (a 1-D array);
    the audit is exact over the finite support (ties, the ends and repeated values included).
    """
    worst = 0.0
    for data in itertools.combinations_with_replacement(support, n):
        p = log_law(np.array(data))
        for extra in support:
            worst = max(worst, float(np.max(np.abs(p - log_law(np.array(data + (extra,)))))))
    return worst
