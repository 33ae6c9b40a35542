"""The chapter-10 checkers accept correct solutions and diagnose typical wrong ones."""

import numpy as np

from dpcp_tutorial.course.exercises import check_langevin_step, check_spatial_worst_case


def worst_case(n, d):
    v = np.zeros(d)
    v[0] = 1.0
    data = np.outer(np.arange(1.0, n + 1), v)
    data[-1] = -v
    other = data.copy()
    other[-1] = 2 * v
    return data, other, np.zeros(d)


def one_over_n(n, d):
    # moves a point from direction v to the orthogonal-ish... here to the same side: change is 0
    data, other, x = worst_case(n, d)
    other = data.copy()
    other[-1] = -3 * np.eye(d)[0]
    return data, other, x


def two_rows(n, d):
    data, other, x = worst_case(n, d)
    other[0] = other[0] + 1
    return data, other, x


def test_worst_case_checker(capsys):
    assert check_spatial_worst_case(worst_case)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_spatial_worst_case(one_over_n)
    assert "does not change by 2/n" in capsys.readouterr().out
    assert not check_spatial_worst_case(two_rows)
    assert "exactly one" in capsys.readouterr().out
    assert not check_spatial_worst_case(lambda n, d: (np.zeros((n, d)), np.zeros((n, d))))
    assert "tuple" in capsys.readouterr().out


def ula(theta, grad, eta, mu, tau, h, xi):
    return theta + h * (eta * grad - (theta - mu) / tau ** 2) + np.sqrt(2 * h) * xi


def test_langevin_step_checker(capsys):
    assert check_langevin_step(ula)
    assert "all checks passed" in capsys.readouterr().out
    wrong = {
        "wrong scale (sqrt(h) * xi)": lambda t, g, b, m, s, h, x: t + h * (b * g - (t - m) / s ** 2) + np.sqrt(h) * x,
        "misses the prior's gradient": lambda t, g, b, m, s, h, x: t + h * b * g + np.sqrt(2 * h) * x,
        "wrong sign": lambda t, g, b, m, s, h, x: t + h * (b * g + (t - m) / s ** 2) + np.sqrt(2 * h) * x,
        "not multiplied by eta": lambda t, g, b, m, s, h, x: t + h * (g - (t - m) / s ** 2)
        + np.sqrt(2 * h) * x,
    }
    for phrase, fn in wrong.items():
        assert not check_langevin_step(fn)
        assert phrase in capsys.readouterr().out, phrase
