"""The chapter-15 checkers accept correct solutions and diagnose typical wrong ones."""

import numpy as np

from dpcp_tutorial import polygon_area
from dpcp_tutorial.course.exercises import check_annulus_area, check_tukey_level_probabilities
from dpcp_tutorial.tukey_exact import _clip


def _region(data, box, k):
    """R_k clipped to the box, from the halfplanes of the lines through two points (brute force)."""
    (x0, y0), (x1, y1) = box
    poly = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float)
    n = len(data)
    if k == 0:
        return poly
    for i in range(n):
        for j in range(n):
            d = data[j] - data[i]
            if not d.any():
                continue
            u = np.array([-d[1], d[0]]) / np.hypot(*d)
            s = (data - data[i]) @ u
            above, on = np.sum(s > 1e-12), np.sum(np.abs(s) <= 1e-12)
            if above < k <= above + on:
                poly = _clip(poly, u[0], u[1], u @ data[i])
    for u in np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]]):
        poly = _clip(poly, u[0], u[1], np.sort(data @ u)[::-1][k - 1])
    return poly


def annulus_area(data, box, k):
    return polygon_area(_region(data, box, k)) - polygon_area(_region(data, box, k + 1))


def region_area(data, box, k):
    return polygon_area(_region(data, box, k))


def unclipped(data, box, k):
    big = ((-100.0, -100.0), (100.0, 100.0))
    return annulus_area(data, big, k)


def test_annulus_checker(capsys):
    assert check_annulus_area(annulus_area)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_annulus_area(region_area)
    assert "exactly k" in capsys.readouterr().out
    assert not check_annulus_area(unclipped)
    assert "clipped" in capsys.readouterr().out


def level_probabilities(levels, areas, epsilon):
    with np.errstate(divide="ignore"):
        logw = 0.5 * epsilon * np.asarray(levels) + np.log(areas)
    return np.exp(logw - np.logaddexp.reduce(logw))


def naive(levels, areas, epsilon):
    w = np.exp(0.5 * epsilon * np.asarray(levels)) * areas
    return w / w.sum()


def doubled(levels, areas, epsilon):
    return level_probabilities(levels, areas, 2 * epsilon)


def no_areas(levels, areas, epsilon):
    w = np.exp(0.5 * epsilon * (levels - np.max(levels)))
    return w / w.sum()


def test_law_checker(capsys):
    assert check_tukey_level_probabilities(level_probabilities)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_tukey_level_probabilities(naive)
    assert "logarithms" in capsys.readouterr().out
    assert not check_tukey_level_probabilities(doubled)
    assert "factor 2" in capsys.readouterr().out
    assert not check_tukey_level_probabilities(no_areas)
    assert "room" in capsys.readouterr().out
