"""Checkers for the coding exercises of chapter 9 (data depth)."""

from __future__ import annotations

import numpy as np

from ._common import array, checker

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


@checker(function="my_spatial_depth", exercise="ex-09-spatial")
def check_spatial_depth(ctx) -> None:
    """Check a reader's ``my_spatial_depth(points, data) -> array`` of sample spatial depths (chapter 9).

    One depth per query point; hidden cases include queries equal to (repeated)
    data points and d = 5.
    """
    nan_hint = ("NaN depth: a query equal to a data point gives x - X_i = 0, and the definition says what S(0) is; "
                "do not divide by a zero norm")
    for name, points, data in _spatial_cases():
        got = ctx.call(points.copy(), data.copy(), returns=array((len(points),), nan_hint=nan_hint,
                                                                 what="one depth per point"), case=name)
        want = 1.0 - _unit_sum(points, data)
        if not np.allclose(got, want, rtol=0, atol=1e-10):
            variants = {
                "divide the sum of unit vectors by n (all points), not by the number of points different from x":
                    1.0 - _unit_sum(points, data, divide_by_nonzero=True),
                "normalise each difference x - X_i to unit length before averaging":
                    1.0 - _unit_sum(points, data, normalise=False),
                "you returned the norm of the average unit vector itself; compare with the definition":
                    _unit_sum(points, data),
            }
            hint = next((h for h, w in variants.items() if np.allclose(got, w, rtol=0, atol=1e-10)), None)
            k = int(np.argmax(np.abs(got - want)))
            ctx.fail(f"{name}: " + (hint or f"at point {k} expected {want[k]:.6f}, got {got[k]:.6f}"))
            break


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


@checker(function="my_idd", exercise="ex-09-idd")
def check_integrated_dual_depth(ctx) -> None:
    """Check a reader's ``my_idd(points, data, directions) -> array`` of Monte Carlo integrated dual depths (chapter 9).

    One depth per query point; hidden cases include queries tied with data points.
    """
    for name, points, data, u in _idd_cases():
        got = ctx.call(points.copy(), data.copy(), u.copy(), returns=array((len(points),), what="one depth per point"),
                       case=name)
        want = _idd(points, data, u)
        if not np.allclose(got, want, rtol=0, atol=1e-12):
            variants = {
                "you count the data strictly below the query; check the inequality in the definition of F":
                    _idd(points, data, u, strict=True),
                "your univariate depth is twice too large (its maximum must be 1/4)": _idd(points, data, u, "2ff"),
                "you used min(F, 1 - F) as the univariate depth; compare with the definition of the IDD":
                    _idd(points, data, u, "min"),
                "average over the directions (divide by m), do not sum": _idd(points, data, u, reduce="sum"),
            }
            hint = next((h for h, w in variants.items() if np.allclose(got, w, rtol=0, atol=1e-12)), None)
            k = int(np.argmax(np.abs(got - want)))
            ctx.fail(f"{name}: " + (hint or f"at point {k} expected {want[k]:.6f}, got {got[k]:.6f}"))
            break
