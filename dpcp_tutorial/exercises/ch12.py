"""Checkers for the coding exercises of chapter 12 (high dimensions and scale)."""

from __future__ import annotations

import numpy as np

from ..depth import halfspace_depth, spatial_depth
from ._common import array, checker, sequence

__all__ = ["check_halfspace_depth_directions", "check_whitening_counterexample", "whitened_spatial_depth"]


def _counts(points: np.ndarray, data: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per direction: #{u'X >= u'x} and #{u'X <= u'x}, shapes (q, K)."""
    u = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    proj, t = data @ u.T, points @ u.T
    at_least = (proj[None, :, :] >= t[:, None, :]).sum(axis=1)
    at_most = (proj[None, :, :] <= t[:, None, :]).sum(axis=1)
    return at_least, at_most


def _diagnose_depth(points, data, directions, got) -> str:
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
    for message, value in wrong.items():
        if np.allclose(got, value) and not np.allclose(value, expected):
            return message
    bad = int(np.argmax(~np.isclose(got, expected)))
    return f"at point {np.round(points[bad], 3).tolist()} expected depth {expected[bad]:.4f}, got {got[bad]:.4f}"


@checker(function="my_halfspace_depth", exercise="ex-12-hdk")
def check_halfspace_depth_directions(ctx) -> None:
    """Check a reader's ``my_halfspace_depth(points, data, directions) -> depths`` (chapter 12).

    The expected value is :func:`dpcp_tutorial.halfspace_depth` with
    ``method="directions"``, one depth per point. Hidden cases include lattice
    data with many ties, query points equal to data points, unnormalised
    directions and d = 5.
    """
    rng = np.random.default_rng(1212)
    lattice = rng.integers(-3, 4, size=(60, 2)).astype(float)
    cases = [
        (rng.standard_normal((7, 2)), rng.standard_normal((40, 2)), rng.standard_normal((5, 2))),
        (lattice[:10].copy(), lattice, np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])),   # ties, x = data points
        (rng.standard_normal((6, 5)), rng.standard_normal((80, 5)), 3.0 * rng.standard_normal((50, 5))),
    ]
    for points, data, directions in cases:
        got = ctx.call(points.copy(), data.copy(), directions.copy(),
                       returns=array((len(points),), what="one depth per point"),
                       case=f"d={points.shape[1]}, {len(directions)} directions")
        expected = halfspace_depth(points, data, method="directions", directions=directions)
        if not np.allclose(got, expected, rtol=0, atol=1e-12):
            ctx.fail(_diagnose_depth(points, data, directions, got))
            break


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


@checker(function="make_pair", exercise="ex-12-counterexample")
def check_whitening_counterexample(ctx) -> None:
    """Check a reader's ``make_pair(n) -> (X, X_prime, theta)`` (chapter 12).

    For ``n`` in (50, 400) the two data sets must have shape ``(n, 2)``, be finite,
    differ in exactly one row, and the whitened spatial depth
    (:func:`whitened_spatial_depth`) at ``theta`` must change by at least 0.25. The
    checker also confirms that the plain spatial depth moved by at most 2/n.
    """
    for n in (50, 400):
        x, x_prime, theta = ctx.call(n, returns=sequence(array((n, 2)), array((n, 2)), array((2,)),
                                                         names="a tuple (X, X_prime, theta)"), case=f"n={n}")
        theta = theta.reshape(1, 2)
        differing = int(np.any(x != x_prime, axis=1).sum())
        if differing != 1:
            ctx.fail(f"n={n}: X and X_prime differ in {differing} rows; neighbours differ in exactly one row "
                     "(same n, one record replaced)")
            break
        try:
            change = float(abs(whitened_spatial_depth(theta, x)[0] - whitened_spatial_depth(theta, x_prime)[0]))
        except ValueError as exc:
            ctx.fail(f"n={n}: {exc}; use data that span the plane")
            break
        plain = float(abs(spatial_depth(theta, x)[0] - spatial_depth(theta, x_prime)[0]))
        if plain > 2.0 / n + 1e-12:   # cannot happen; guards the checker itself
            ctx.fail(f"n={n}: plain spatial depth moved by {plain:.4g} > 2/n, which contradicts its sensitivity")
            break
        if change < 0.25:
            ctx.fail(f"n={n}: the whitened spatial depth at theta changes by only {change:.4f} (need >= 0.25). "
                     "Which part of the whitened depth can one record change without bound, and where must "
                     "theta be for that change to matter?")
            break
