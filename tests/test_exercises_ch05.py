"""The chapter-5 checker accepts a correct solution and diagnoses typical wrong ones."""

import math
from fractions import Fraction

import numpy as np

from dpcp_tutorial.course.exercises import check_differential_cp_quantile


def _quantile(scores, level, plus_one=True):
    n = len(scores)
    k = math.ceil(((n + 1) if plus_one else n) * (1 - Fraction(level).limit_denominator(10**12)))
    return math.inf if k > n else float(np.sort(scores)[max(k, 1) - 1])


def correct(scores, alpha, eps, delta):
    return _quantile(scores, math.exp(-eps) * (alpha - delta))


def uncorrected(scores, alpha, eps, delta):
    return _quantile(scores, alpha)


def delta_outside(scores, alpha, eps, delta):
    return _quantile(scores, math.exp(-eps) * alpha - delta)


def rank_without_plus_one(scores, alpha, eps, delta):
    return _quantile(scores, math.exp(-eps) * (alpha - delta), plus_one=False)


def test_differential_cp_checker(capsys):
    assert check_differential_cp_quantile(correct)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_differential_cp_quantile(uncorrected)
    assert "shifted level alpha1" in capsys.readouterr().out
    assert not check_differential_cp_quantile(delta_outside)
    assert "subtracted after the exponential" in capsys.readouterr().out
    assert not check_differential_cp_quantile(rank_without_plus_one)
    assert "ceil((n+1)(1 - alpha1))" in capsys.readouterr().out
