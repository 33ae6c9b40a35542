"""The chapter-8 checkers accept a correct solution and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.course.exercises import check_bounded_interval, check_smallest_n


def correct_interval(y_pred, qhat, bound):
    half = math.inf if qhat >= 1 else bound * qhat
    return np.column_stack([y_pred - half, y_pred + half])


def unscaled(y_pred, qhat, bound):
    return np.column_stack([y_pred - qhat, y_pred + qhat])


def finite_at_top(y_pred, qhat, bound):
    return np.column_stack([y_pred - bound * qhat, y_pred + bound * qhat])


def correct_n(alpha, eps1, eps2, delta):
    return math.floor(2 / (math.exp(-eps1) * (alpha - delta) * eps2)) + 1


def total_budget(alpha, eps1, eps2, delta):
    return math.floor(2 / (math.exp(-eps1) * (alpha - delta) * (eps1 + eps2))) + 1


def without_delta(alpha, eps1, eps2, delta):
    return math.floor(2 / (math.exp(-eps1) * alpha * eps2)) + 1


def off_by_one(alpha, eps1, eps2, delta):
    return correct_n(alpha, eps1, eps2, delta) - 1


def test_bounded_interval_checker(capsys):
    assert check_bounded_interval(correct_interval)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_bounded_interval(unscaled)
    assert "qhat itself as the half-width" in capsys.readouterr().out
    assert not check_bounded_interval(finite_at_top)
    assert "finite interval is wrong" in capsys.readouterr().out


def test_smallest_n_checker(capsys):
    assert check_smallest_n(correct_n)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_smallest_n(total_budget)
    assert "do not mix in the total" in capsys.readouterr().out
    assert not check_smallest_n(without_delta)
    assert "delta is missing" in capsys.readouterr().out
    assert not check_smallest_n(off_by_one)
    assert "off by one" in capsys.readouterr().out
