"""The chapter-6 checker accepts a correct solution and diagnoses typical wrong ones."""

import math

from dpcp_tutorial.exercises import check_dpcp_levels


def correct(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-eps1) * (alpha - delta)
    alpha0 = alpha1 - 2 / (n * eps2)
    if alpha0 <= 0:
        raise ValueError("infeasible")
    return alpha1, alpha0


def total_epsilon_in_alpha1(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-(eps1 + eps2)) * (alpha - delta)
    return alpha1, alpha1 - 2 / (n * eps2)


def shift_with_epsilon1(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-eps1) * (alpha - delta)
    return alpha1, alpha1 - 2 / (n * eps1)


def never_raises(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-eps1) * (alpha - delta)
    return alpha1, alpha1 - 2 / (n * eps2)


def test_dpcp_levels_checker(capsys):
    assert check_dpcp_levels(correct)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_dpcp_levels(total_epsilon_in_alpha1)
    assert "epsilon1 only" in capsys.readouterr().out
    assert not check_dpcp_levels(shift_with_epsilon1)
    assert "quantile's budget epsilon2" in capsys.readouterr().out
    assert not check_dpcp_levels(never_raises)
    assert "raise ValueError" in capsys.readouterr().out
