"""Checkers for the coding exercises of chapter 9 (data depth)."""

from __future__ import annotations

import numpy as np

from ._common import Case, array, checker

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


def _spatial_cases(rng: np.random.Generator) -> list[Case]:
    data2 = rng.standard_normal((40, 2))
    data5 = np.vstack([rng.standard_normal((30, 5)), np.zeros((4, 5))])   # a point of multiplicity 4
    return [
        Case("random points in 2D", "n=40", points=rng.standard_normal((10, 2)) * 2, data=data2),
        Case("queries equal to data points", "n=40", points=data2[:6].copy(), data=data2),
        Case("d = 5 with a repeated data point, queried there", "n=34", points=np.vstack([np.zeros((1, 5)), data5[:3]]),
             data=data5),
        Case("a single data point", "n=1", points=rng.standard_normal((3, 2)), data=rng.standard_normal((1, 2))),
    ]


@checker(function="my_spatial_depth", exercise="ex-09-spatial", cases=_spatial_cases,
         implements=("dpcp_tutorial.depth.spatial_depth",))
def check_spatial_depth(ctx, case) -> None:
    """Check a reader's ``my_spatial_depth(points, data) -> array`` of sample spatial depths (chapter 9).

    Expected: :math:`1 - \\lVert \\frac1n\\sum_i S(x - X_i)\\rVert` with :math:`S(0) = 0`, one depth per query
    point; cases include queries equal to (repeated) data points, d = 5 and a single data point.
    """
    points, data = case.points, case.data
    nan_hint = ("NaN depth: a query equal to a data point gives x - X_i = 0, and the definition says what S(0) is; "
                "do not divide by a zero norm")
    got = ctx.call(points, data, inputs=True, returns=array((len(points),), nan_hint=nan_hint, what="one depth per point"))
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
        hint = next((h for h, w in variants.items()
                     if np.allclose(got, w, rtol=0, atol=1e-10) and not np.allclose(w, want, rtol=0, atol=1e-10)),
                    "some depths differ from the sample spatial depth")
        k = int(np.argmax(np.abs(got - want)))
        ctx.fail(hint, f"at point {k} expected {want[k]:.6f}, got {got[k]:.6f}")


def _idd(points, data, directions, univariate="ff", strict=False, reduce="mean"):
    proj, t = data @ directions.T, points @ directions.T
    n = len(data)
    f = np.array([[np.sum(proj[:, j] < t[k, j]) if strict else np.sum(proj[:, j] <= t[k, j])
                   for j in range(len(directions))] for k in range(len(points))]) / n
    term = {"ff": f * (1 - f), "2ff": 2 * f * (1 - f), "min": np.minimum(f, 1 - f)}[univariate]
    return term.mean(axis=1) if reduce == "mean" else term.sum(axis=1)


def _idd_cases(rng: np.random.Generator) -> list[Case]:
    axes = np.eye(3)           # projections are exact coordinates (no -e_k: it would mirror strict ties)
    lattice = rng.integers(-2, 3, (25, 3)).astype(float)
    u = rng.standard_normal((40, 2))
    u /= np.linalg.norm(u, axis=1)[:, None]
    data = rng.standard_normal((60, 2))
    return [
        Case("random data, random directions", "n=60, 40 directions", points=rng.standard_normal((8, 2)), data=data,
             directions=u),
        Case("queries at lattice data points (ties), coordinate directions", "n=25", points=lattice[:6].copy(),
             data=lattice, directions=axes),
        Case("a query far outside the data", "n=60", points=np.array([[50.0, -50.0], [0.0, 0.0]]), data=data,
             directions=u),
    ]


@checker(function="my_idd", exercise="ex-09-idd", cases=_idd_cases,
         implements=("dpcp_tutorial.depth.integrated_dual_depth",))
def check_integrated_dual_depth(ctx, case) -> None:
    """Check a reader's ``my_idd(points, data, directions) -> array`` of Monte Carlo integrated dual depths (chapter 9).

    Expected: the average over the directions of :math:`F(1-F)`, :math:`F` the fraction of data with
    :math:`u^\\top X_i \\le u^\\top x`; one depth per query point; cases include queries tied with data points
    and far outside the data.
    """
    points, data, u = case.points, case.data, case.directions
    got = ctx.call(points, data, u, inputs=True, returns=array((len(points),), what="one depth per point"))
    want = _idd(points, data, u)
    if not np.allclose(got, want, rtol=0, atol=1e-12):
        variants = {
            "you count the data strictly below the query; check the inequality in the definition of F":
                _idd(points, data, u, strict=True),
            "your univariate depth is twice too large (its maximum must be 1/4)": _idd(points, data, u, "2ff"),
            "you used min(F, 1 - F) as the univariate depth; compare with the definition of the IDD":
                _idd(points, data, u, "min"),
            "average over the directions (divide by L, the number of directions), do not sum":
                _idd(points, data, u, reduce="sum"),
        }
        hint = next((h for h, w in variants.items()
                     if np.allclose(got, w, rtol=0, atol=1e-12) and not np.allclose(w, want, rtol=0, atol=1e-12)),
                    "some depths differ from the Monte Carlo integrated dual depth")
        k = int(np.argmax(np.abs(got - want)))
        ctx.fail(hint, f"at point {k} expected {want[k]:.6f}, got {got[k]:.6f}")
