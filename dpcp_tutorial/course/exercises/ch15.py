"""Checkers for the coding exercises of chapter 15 (the exact private Tukey median in 2D)."""

from __future__ import annotations

import numpy as np

from ...tukey_exact import tukey_depth_regions
from ._common import Case, array, checker, number

__all__ = ["check_annulus_area", "check_tukey_level_probabilities"]


def _cases(rng: np.random.Generator):
    spacing = round(float(rng.uniform(0.4, 0.7)), 2)
    lattice = np.array([[i, j] for i in range(-2, 3) for j in range(-1, 2)], float) * spacing
    repeated = np.r_[lattice, lattice[rng.choice(len(lattice), size=4, replace=False)]]
    angle, radii = rng.uniform(0.0, np.pi / 2), rng.uniform(0.9, 1.1, size=4)   # a convex quadrilateral
    turns = angle + np.arange(4) * np.pi / 2
    convex = np.round(np.column_stack([radii * np.cos(turns), radii * np.sin(turns)]), 2)
    return [
        ("8 Gaussian points", rng.standard_normal((8, 2)), ((-3.0, -3.0), (3.0, 3.0))),
        ("a 5 x 3 lattice with repeated points", repeated[rng.permutation(len(repeated))], ((-2.0, -2.0), (2.0, 2.0))),
        ("points partly outside a small box", rng.standard_normal((9, 2)) * 2.0, ((-1.0, -0.5), (1.5, 1.0))),
        ("four points in convex position", convex, ((-2.0, -2.0), (2.0, 2.0))),
    ]


def _annulus_cases(rng: np.random.Generator) -> list[Case]:
    return [Case(label, "", points=data, box=box) for label, data, box in _cases(rng)]


@checker(function="annulus_area", exercise="ex-15-annulus", cases=_annulus_cases,
         implements=("dpcp_tutorial.tukey_exact.tukey_depth_regions", "dpcp_tutorial.tukey_exact._compute",
                     "dpcp_tutorial.tukey_exact._annuli"))
def check_annulus_area(ctx, case):
    """Check a reader's ``annulus_area(data, box, k) -> float`` (chapter 15).

    Expected: the area of the set of points of the box whose halfspace count
    (``n`` times the depth) is exactly ``k``, on several small data sets
    (random, lattice with ties, points outside the box, a deepest region that
    is a single point) and every level ``k`` from 0 to the deepest one (one case per data set).
    """
    data, box = case.points, case.box
    reg = tukey_depth_regions(data, box)
    want = dict(zip(reg.levels.tolist(), reg.annulus_areas.tolist()))
    box_area = (box[1][0] - box[0][0]) * (box[1][1] - box[0][1])
    for k in range(0, reg.max_depth + 1):
        got = ctx.call(data, box, k, returns=number(), inputs=True)
        expected = want.get(k, 0.0)
        if abs(got - expected) <= 1e-7 * box_area:
            continue
        detail = f"k={k}: expected {expected:.6g}, got {got:.6g}"
        region = sum(a for level, a in want.items() if level >= k)
        if abs(got - region) <= 1e-7 * box_area and abs(region - expected) > 1e-7 * box_area:
            ctx.stop("your value is the area of the whole region of depth count >= k; the annulus keeps only the "
                     "points whose count is exactly k", detail)
        if got > box_area * (1 + 1e-9):
            ctx.stop("your area exceeds the area of the box; the regions must be clipped to the box", detail)
        ctx.stop("an area is wrong. Check which lines through two data points bound the level k region, and how "
                 "points on a line (ties) are counted", detail)


def _law_cases(rng: np.random.Generator) -> list[Case]:
    start = int(rng.integers(0, 4))
    without = np.round(rng.uniform(0.5, 6.0, size=3), 2)
    without[1] = 0.0
    top = int(rng.integers(30, 50))
    return [
        Case("four levels", "epsilon=1", levels=np.arange(start, start + 4),
             areas=np.sort(np.round(rng.uniform(0.2, 20.0, size=4), 2))[::-1], epsilon=1.0),
        Case("a level without area", "epsilon=0.3", levels=np.arange(3), areas=without, epsilon=0.3),
        Case("levels so high that exponentials overflow", f"levels up to {50 * top}, epsilon=2",
             levels=np.arange(0, 50 * top + 1, 50), areas=np.sort(rng.uniform(0.01, 4.0, size=top + 1))[::-1],
             epsilon=2.0),
        Case("a tiny epsilon", "epsilon=1e-3", levels=np.array([3, 4, 5, 6]), areas=rng.uniform(0.5, 2.0, size=4),
             epsilon=1e-3),
    ]


@checker(function="tukey_level_probabilities", exercise="ex-15-law", cases=_law_cases,
         implements=("dpcp_tutorial.tukey_exact.tukey_depth_regions",))
def check_tukey_level_probabilities(ctx, case):
    """Check a reader's ``tukey_level_probabilities(levels, annulus_areas, epsilon) -> ndarray`` (chapter 15).

    Expected: the law of the depth count of the exact private Tukey median
    (replace-one :math:`\\varepsilon`-DP, :math:`\\beta = \\varepsilon n/2`) over the given
    levels, :math:`\\propto v_k e^{\\varepsilon k/2}` (:math:`v_k` the area of annulus :math:`k`), including cases where naive exponentials overflow and
    levels whose annulus has no area.
    """
    levels, areas, eps = case.levels, case.areas, case.epsilon
    got = ctx.call(levels, areas, eps, inputs=True, returns=array(shape=levels.shape, nan_hint=(
        "your output contains NaN: exponentials of large numbers overflow; work with logarithms")))
    with np.errstate(divide="ignore"):
        logw = 0.5 * eps * levels + np.log(areas)
    want = np.exp(logw - np.logaddexp.reduce(logw))
    if np.allclose(got, want, rtol=1e-9, atol=1e-12):
        return
    detail = f"largest difference from the exact law {np.abs(got - want).max():.3g}"
    if not np.isclose(got.sum(), 1.0):
        ctx.stop("your probabilities do not sum to 1", f"they sum to {got.sum():.6g}")
    for factor, hint in [(2.0, "the exponent is too large by a factor 2: recall how beta and the depth k/n "
                               "combine, and which sensitivity the halfspace count has"),
                         (0.5, "the exponent is too small by a factor 2: the depth enters as k/n and beta "
                               "as epsilon n / 2")]:
        lw = factor * 0.5 * eps * levels + np.log(np.where(areas > 0, areas, 1.0))
        lw = np.where(areas > 0, lw, -np.inf)
        alt = np.exp(lw - np.logaddexp.reduce(lw))
        if np.allclose(got, alt, rtol=1e-9, atol=1e-12):
            ctx.stop(hint, detail)
    no_area = np.exp(0.5 * eps * (levels - levels.max()))
    if np.allclose(got, no_area / no_area.sum(), rtol=1e-9, atol=1e-12):
        ctx.stop("each level's weight must account for how much room it has in the plane", detail)
    ctx.fail("your probabilities differ from the exact law", detail)
