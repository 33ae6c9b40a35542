"""Checkers for the coding exercises of chapter 9 (data depth)."""

from __future__ import annotations

import numpy as np

from ._common import ExerciseResult, run_safely

__all__ = ["check_spatial_depth", "check_integrated_dual_depth"]


def _unit_sum(points, data, divide_by_nonzero=False, normalise=True):
    out = []
    for x in points:
        v = x - data
        r = np.linalg.norm(v, axis=1)
        keep = r > 0
        s = (v[keep] / r[keep, None]) if normalise else v
        total = s.sum(axis=0) / (keep.sum() if divide_by_nonzero else len(data))
        out.append(np.linalg.norm(total))
    return np.array(out)


def _spatial_cases():
    rng = np.random.default_rng(9)
    data2 = rng.standard_normal((40, 2))
    data5 = np.vstack([rng.standard_normal((30, 5)), np.zeros((4, 5))])   # a point of multiplicity 4
    return [
        ("random points in 2D", rng.standard_normal((10, 2)) * 2, data2),
        ("queries equal to data points", data2[:6].copy(), data2),
        ("d = 5 with a repeated data point, queried there", np.vstack([np.zeros((1, 5)), data5[:3]]), data5),
    ]


def check_spatial_depth(fn) -> ExerciseResult:
    """Check a reader's ``fn(points, data) -> array`` of spatial depths (chapter 9).

    Expected :math:`SD(x) = 1 - \\|\\frac1n \\sum_i S(x - X_i)\\|` with
    :math:`S(v) = v/\\|v\\|` and :math:`S(0) = 0`. Hidden cases include queries
    equal to (repeated) data points.
    """
    result = ExerciseResult("check_spatial_depth")
    for name, points, data in _spatial_cases():
        got = run_safely(result, fn, points.copy(), data.copy())
        if got is None:
            break
        got = np.asarray(got, dtype=float)
        if got.shape != (len(points),):
            result.fail(f"{name}: expected one depth per point, shape ({len(points)},); got shape {got.shape}")
            break
        want = 1.0 - _unit_sum(points, data)
        if np.any(np.isnan(got)):
            result.fail(f"{name}: NaN depth. A query equal to a data point gives x - X_i = 0; "
                        "define S(0) = 0 (skip that term) instead of dividing by a zero norm")
            break
        if not np.allclose(got, want, rtol=0, atol=1e-10):
            variants = {
                "divide the sum of unit vectors by n (all points), not by the number of points different from x":
                    1.0 - _unit_sum(points, data, divide_by_nonzero=True),
                "normalise each difference x - X_i to unit length before averaging":
                    1.0 - _unit_sum(points, data, normalise=False),
                "the depth is 1 minus the norm of the average unit vector (you returned the norm itself)":
                    _unit_sum(points, data),
            }
            hint = next((h for h, w in variants.items() if np.allclose(got, w, rtol=0, atol=1e-10)), None)
            k = int(np.argmax(np.abs(got - want)))
            result.fail(f"{name}: " + (hint or f"at point {k} expected {want[k]:.6f}, got {got[k]:.6f}"))
            break
    return result.report()


def _idd(points, data, directions, univariate="ff", strict=False, reduce="mean"):
    proj, t = data @ directions.T, points @ directions.T
    n = len(data)
    f = np.array([[np.sum(proj[:, j] < t[k, j]) if strict else np.sum(proj[:, j] <= t[k, j])
                   for j in range(len(directions))] for k in range(len(points))]) / n
    term = {"ff": f * (1 - f), "2ff": 2 * f * (1 - f), "min": np.minimum(f, 1 - f)}[univariate]
    return term.mean(axis=1) if reduce == "mean" else term.sum(axis=1)


def _idd_cases():
    rng = np.random.default_rng(10)
    axes = np.eye(3)           # projections are exact coordinates (no -e_k: it would mirror strict ties)
    lattice = rng.integers(-2, 3, (25, 3)).astype(float)
    u = rng.standard_normal((40, 2))
    u /= np.linalg.norm(u, axis=1)[:, None]
    data = rng.standard_normal((60, 2))
    return [
        ("random data, random directions", rng.standard_normal((8, 2)), data, u),
        ("queries at lattice data points (ties), coordinate directions", lattice[:6].copy(), lattice, axes),
    ]


def check_integrated_dual_depth(fn) -> ExerciseResult:
    """Check a reader's ``fn(points, data, directions) -> array`` of Monte Carlo IDDs (chapter 9).

    Expected :math:`\\frac1m \\sum_j F_j(1 - F_j)` with
    :math:`F_j = \\frac1n\\#\\{i : u_j^\\top X_i \\le u_j^\\top x\\}`. Hidden cases
    include queries tied with data points.
    """
    result = ExerciseResult("check_integrated_dual_depth")
    for name, points, data, u in _idd_cases():
        got = run_safely(result, fn, points.copy(), data.copy(), u.copy())
        if got is None:
            break
        got = np.asarray(got, dtype=float)
        if got.shape != (len(points),):
            result.fail(f"{name}: expected one depth per point, shape ({len(points)},); got shape {got.shape}")
            break
        want = _idd(points, data, u)
        if not np.allclose(got, want, rtol=0, atol=1e-12):
            variants = {
                "count the data with u'X_i <= u'x (a non-strict inequality): the point itself belongs to F":
                    _idd(points, data, u, strict=True),
                "the univariate depth is F(1 - F) (maximum 1/4), not 2F(1 - F)": _idd(points, data, u, "2ff"),
                "the univariate depth here is F(1 - F), not min(F, 1 - F)": _idd(points, data, u, "min"),
                "average over the directions (divide by m), do not sum": _idd(points, data, u, reduce="sum"),
            }
            hint = next((h for h, w in variants.items() if np.allclose(got, w, rtol=0, atol=1e-12)), None)
            k = int(np.argmax(np.abs(got - want)))
            result.fail(f"{name}: " + (hint or f"at point {k} expected {want[k]:.6f}, got {got[k]:.6f}"))
            break
    return result.report()
