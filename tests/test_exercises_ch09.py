"""The chapter-9 checkers accept correct solutions and diagnose typical wrong ones."""

import numpy as np

from dpcp_tutorial.course.exercises import check_integrated_dual_depth, check_spatial_depth


def spatial_correct(points, data):
    out = []
    for x in points:
        v = x - data
        r = np.linalg.norm(v, axis=1)
        s = np.zeros_like(v)
        s[r > 0] = v[r > 0] / r[r > 0, None]
        out.append(1 - np.linalg.norm(s.mean(axis=0)))
    return np.array(out)


def spatial_nan_at_data(points, data):
    return np.array([1 - np.linalg.norm(((x - data) / np.linalg.norm(x - data, axis=1)[:, None]).mean(axis=0))
                     for x in points])


def spatial_divides_by_nonzero(points, data):
    out = []
    for x in points:
        v = x - data
        r = np.linalg.norm(v, axis=1)
        keep = r > 0
        out.append(1 - np.linalg.norm((v[keep] / r[keep, None]).mean(axis=0)))
    return np.array(out)


def spatial_unnormalised(points, data):
    return np.array([1 - np.linalg.norm((x - data).mean(axis=0)) for x in points])


def test_spatial_depth_checker(capsys):
    with np.errstate(invalid="ignore", divide="ignore"):
        assert check_spatial_depth(spatial_correct)
        assert "all checks passed" in capsys.readouterr().out
        for fn, phrase in [(spatial_nan_at_data, "what S(0) is"), (spatial_divides_by_nonzero, "divide the sum"),
                           (spatial_unnormalised, "unit length")]:
            assert not check_spatial_depth(fn), fn.__name__
            assert phrase in capsys.readouterr().out, fn.__name__
    assert not check_spatial_depth(lambda p, d: np.zeros(2))
    assert "one depth per point" in capsys.readouterr().out
    assert not check_spatial_depth(lambda p, d: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def idd(points, data, directions, strict=False, factor=1.0):
    proj, t = data @ directions.T, points @ directions.T
    cmp = np.less if strict else np.less_equal
    f = cmp(proj[None, :, :], t[:, None, :]).mean(axis=1)
    return factor * (f * (1 - f)).mean(axis=1)


def test_idd_checker(capsys):
    assert check_integrated_dual_depth(idd)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_integrated_dual_depth(lambda p, d, u: idd(p, d, u, strict=True))
    assert "strictly below" in capsys.readouterr().out
    assert not check_integrated_dual_depth(lambda p, d, u: idd(p, d, u, factor=2.0))
    assert "twice too large" in capsys.readouterr().out
    assert not check_integrated_dual_depth(lambda p, d, u: idd(p, d, u) * len(u))
    assert "divide by L" in capsys.readouterr().out
