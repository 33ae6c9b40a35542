"""Checkers for the coding exercises of chapter 12 (high dimensions and scale)."""

from __future__ import annotations

import numpy as np

from ...depth import halfspace_depth, spatial_depth
from ._common import Case, array, checker, sequence

__all__ = ["check_halfspace_depth_directions", "check_whitening_counterexample", "whitened_spatial_depth"]


def _counts(points: np.ndarray, data: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per direction: #{u'X >= u'x} and #{u'X <= u'x}, shapes (q, K)."""
    u = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    proj, t = data @ u.T, points @ u.T
    at_least = (proj[None, :, :] >= t[:, None, :]).sum(axis=1)
    at_most = (proj[None, :, :] <= t[:, None, :]).sum(axis=1)
    return at_least, at_most


def _diagnose_depth(points, data, directions, got) -> tuple[str, str]:
    n = data.shape[0]
    u = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    proj, t = data @ u.T, points @ u.T
    at_least, at_most = _counts(points, data, directions)
    strict_above = (proj[None, :, :] > t[:, None, :]).sum(axis=1)
    strict_below = (proj[None, :, :] < t[:, None, :]).sum(axis=1)
    wrong = {
        "you count points strictly beyond x (open halfspaces); the halfspaces are closed, so points with "
        "u'X_i = u'x count":
            np.minimum(strict_above, strict_below).min(axis=1) / n,
        "you only use the halfspaces {u'X >= u'x} for the given u; each direction also gives the opposite "
        "halfspace {u'X <= u'x} (take the minimum over +u and -u)": at_least.min(axis=1) / n,
        "you average over the directions; an average gives a different, integrated depth":
            np.minimum(at_least, at_most).mean(axis=1) / n,
        "you returned counts; divide by n to get a depth in [0, 1]": np.minimum(at_least, at_most).min(axis=1),
    }
    expected = np.minimum(at_least, at_most).min(axis=1) / n
    bad = int(np.argmax(~np.isclose(got, expected)))
    detail = f"at point {np.round(points[bad], 3).tolist()} expected depth {expected[bad]:.4f}, got {got[bad]:.4f}"
    for message, value in wrong.items():
        if np.allclose(got, value) and not np.allclose(value, expected):
            return message, detail
    return "some depths differ from the halfspace depth over the given directions", detail


def _hdk_cases(rng: np.random.Generator) -> list[Case]:
    lattice = rng.integers(-3, 4, size=(60, 2)).astype(float)
    return [
        Case("random points and directions in 2D", "n=40, 5 directions", points=rng.standard_normal((7, 2)),
             data=rng.standard_normal((40, 2)), directions=rng.standard_normal((5, 2))),
        Case("lattice data with ties, queries at data points", "n=60", points=lattice[:10].copy(), data=lattice,
             directions=np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])),
        Case("unnormalised directions in d = 5", "n=80, 50 directions", points=rng.standard_normal((6, 5)),
             data=rng.standard_normal((80, 5)), directions=3.0 * rng.standard_normal((50, 5))),
        Case("a query outside the data's hull", "n=30", points=np.array([[100.0, 100.0]]),
             data=rng.standard_normal((30, 2)), directions=rng.standard_normal((8, 2))),
    ]


@checker(function="my_halfspace_depth", exercise="ex-12-hdk", cases=_hdk_cases,
         implements=("dpcp_tutorial.depth.halfspace_depth",))
def check_halfspace_depth_directions(ctx, case) -> None:
    """Check a reader's ``my_halfspace_depth(points, data, directions) -> depths`` (chapter 12).

    The expected value is :func:`dpcp_tutorial.halfspace_depth` with
    ``method="directions"``, one depth per point. Cases include lattice
    data with many ties, query points equal to data points, unnormalised
    directions, d = 5 and a query outside the data.
    """
    points, data, directions = case.points, case.data, case.directions
    got = ctx.call(points, data, directions, inputs=True, returns=array((len(points),), what="one depth per point"))
    expected = halfspace_depth(points, data, method="directions", directions=directions)
    if not np.allclose(got, expected, rtol=0, atol=1e-12):
        ctx.fail(*_diagnose_depth(points, data, directions, got))


def whitened_spatial_depth(points, data) -> np.ndarray:
    """Spatial depth after whitening by the sample covariance, :math:`SD(\\hat\\Sigma^{-1/2}x; \\hat\\Sigma^{-1/2}X)`.

    Affine invariant but **not** of sensitivity :math:`2/n` (chapter 12): one
    record changes :math:`\\hat\\Sigma` and with it every term of the depth.
    """
    data = np.asarray(data, dtype=float)
    eigval, eigvec = np.linalg.eigh(np.cov(data.T))
    if eigval.min() <= 1e-12 * max(eigval.max(), 1e-300):
        raise ValueError("the sample covariance is singular; whitening is undefined for this data set")
    w = eigvec @ np.diag(eigval ** -0.5) @ eigvec.T
    return spatial_depth(np.asarray(points, dtype=float) @ w, data @ w)


def _pair_cases(rng: np.random.Generator) -> list[Case]:
    sizes = (int(rng.integers(30, 100)), int(rng.integers(300, 500)), int(rng.integers(100, 200)))
    return [Case(kind, f"n = {n}", n=n) for kind, n in zip(("small n", "large n", "medium n"), sizes)]


@checker(function="make_pair", exercise="ex-12-counterexample", cases=_pair_cases)
def check_whitening_counterexample(ctx, case) -> None:
    """Check a reader's ``make_pair(n) -> (X, X_prime, theta)`` (chapter 12).

    For three values of ``n`` the two data sets must have shape ``(n, 2)``, be finite,
    differ in exactly one row, and the whitened spatial depth
    (:func:`whitened_spatial_depth`) at ``theta`` must change by at least 0.25. The
    checker also confirms that the plain spatial depth moved by at most 2/n.
    """
    n = case.n
    x, x_prime, theta = ctx.call(n, returns=sequence(array((n, 2)), array((n, 2)), array((2,)),
                                                     names="a tuple (X, X_prime, theta)"))
    theta = theta.reshape(1, 2)
    differing = int(np.any(x != x_prime, axis=1).sum())
    if differing != 1:
        ctx.stop("X and X_prime must differ in exactly one row (same n, one record replaced)",
                 f"they differ in {differing} rows")
    try:
        change = float(abs(whitened_spatial_depth(theta, x)[0] - whitened_spatial_depth(theta, x_prime)[0]))
    except ValueError as exc:
        ctx.stop(f"{exc}; use data that span the plane")
    plain = float(abs(spatial_depth(theta, x)[0] - spatial_depth(theta, x_prime)[0]))
    if plain > 2.0 / n + 1e-12:   # cannot happen; guards the checker itself
        ctx.stop("the plain spatial depth moved by more than 2/n, which contradicts its sensitivity")
    if change < 0.25:
        ctx.fail("the whitened spatial depth at theta changes by less than 0.25. Which part of the whitened depth "
                 "can one record change without bound, and where must theta be for that change to matter?",
                 f"it changes by {change:.4f}")
