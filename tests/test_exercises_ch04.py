"""The chapter-4 checkers accept a correct solution and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.exercises import check_pps_level, check_pps_round_up


def _edges(m):
    return np.arange(m) / (m - 1)


def correct_round_up(scores, m):
    return _edges(m)[np.minimum(np.searchsorted(_edges(m), scores, side="right"), m - 1)]


def keeps_edges(scores, m):
    return _edges(m)[np.minimum(np.searchsorted(_edges(m), scores, side="left"), m - 1)]


def nearest(scores, m):
    return _edges(m)[np.argmin(np.abs(np.asarray(scores)[:, None] - _edges(m)[None, :]), axis=1)]


def rounds_down(scores, m):
    return _edges(m)[np.maximum(np.searchsorted(_edges(m), scores, side="right") - 1, 0)]


def correct_level(n, alpha, eps, m, gamma):
    return (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 2 / (eps * n) * math.log(m / (gamma * alpha))


def no_finite_sample(n, alpha, eps, m, gamma):
    return (1 - alpha) / (1 - gamma * alpha) + 2 / (eps * n) * math.log(m / (gamma * alpha))


def half_privacy_term(n, alpha, eps, m, gamma):
    return (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 1 / (eps * n) * math.log(m / (gamma * alpha))


def capped(n, alpha, eps, m, gamma):
    return min(correct_level(n, alpha, eps, m, gamma), 1 - 1e-12)


def test_round_up_checker(capsys):
    assert check_pps_round_up(correct_round_up)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_pps_round_up(keeps_edges)
    assert "next* edge" in capsys.readouterr().out
    assert not check_pps_round_up(nearest)
    assert "nearest edge" in capsys.readouterr().out
    assert not check_pps_round_up(rounds_down)
    assert "round down" in capsys.readouterr().out


def test_level_checker(capsys):
    assert check_pps_level(correct_level)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_pps_level(no_finite_sample)
    assert "(n+1)(1-alpha)/n" in capsys.readouterr().out
    assert not check_pps_level(half_privacy_term)
    assert "2/(eps n)" in capsys.readouterr().out
    assert not check_pps_level(capped)
    assert "raw value" in capsys.readouterr().out
    assert not check_pps_level(lambda *args: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
