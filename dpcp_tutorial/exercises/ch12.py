"""Checkers for the coding exercises of chapter 12 (high dimensions and scale)."""

from __future__ import annotations

import numpy as np

from ..depth import halfspace_depth, spatial_depth
from ._common import ExerciseResult, run_safely

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
        "u'X_i = u'x count (searchsorted side='left' for >=, side='right' for <=)":
            np.minimum(strict_above, strict_below).min(axis=1) / n,
        "you only use the halfspaces {u'X >= u'x} for the given u; each direction also gives the opposite "
        "halfspace {u'X <= u'x} (take the minimum over +u and -u)": at_least.min(axis=1) / n,
        "you average over the directions; halfspace (Tukey) depth is the MINIMUM over directions (an average "
        "gives a different, integrated depth)": np.minimum(at_least, at_most).mean(axis=1) / n,
        "you returned counts; divide by n to get a depth in [0, 1]": np.minimum(at_least, at_most).min(axis=1),
    }
    expected = np.minimum(at_least, at_most).min(axis=1) / n
    for message, value in wrong.items():
        if np.allclose(got, value) and not np.allclose(value, expected):
            return message
    bad = int(np.argmax(~np.isclose(got, expected)))
    return f"at point {np.round(points[bad], 3).tolist()} expected depth {expected[bad]:.4f}, got {got[bad]:.4f}"


def check_halfspace_depth_directions(fn) -> ExerciseResult:
    """Check a reader's ``fn(points, data, directions) -> depths`` (chapter 12).

    The expected value is :func:`dpcp_tutorial.halfspace_depth` with
    ``method="directions"``: for every point the minimum over the directions
    :math:`\\pm u_k` of the fraction of the sample in the closed halfspace
    :math:`\\{y: u^\\top y \\ge u^\\top x\\}`. Hidden cases include lattice data
    with many ties, query points equal to data points, unnormalised directions and
    :math:`d = 5`.
    """
    result = ExerciseResult("check_halfspace_depth_directions")
    rng = np.random.default_rng(1212)
    lattice = rng.integers(-3, 4, size=(60, 2)).astype(float)
    cases = [
        (rng.standard_normal((7, 2)), rng.standard_normal((40, 2)), rng.standard_normal((5, 2))),
        (lattice[:10].copy(), lattice, np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])),   # ties, x = data points
        (rng.standard_normal((6, 5)), rng.standard_normal((80, 5)), 3.0 * rng.standard_normal((50, 5))),
    ]
    for points, data, directions in cases:
        got = run_safely(result, fn, points.copy(), data.copy(), directions.copy())
        if got is None:
            break
        try:
            got = np.asarray(got, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            result.fail(f"expected an array of {len(points)} depths, got {type(got).__name__}")
            break
        if got.shape != (len(points),):
            result.fail(f"expected one depth per point, shape ({len(points)},), got shape {got.shape}")
            break
        expected = halfspace_depth(points, data, method="directions", directions=directions)
        if not np.allclose(got, expected, rtol=0, atol=1e-12):
            result.fail(_diagnose_depth(points, data, directions, got))
            break
    return result.report()


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


def check_whitening_counterexample(fn) -> ExerciseResult:
    """Check a reader's ``fn(n) -> (X, X_prime, theta)`` (chapter 12).

    For ``n`` in (50, 400) the two data sets must have shape ``(n, 2)``, be finite,
    differ in exactly one row, and the whitened spatial depth
    (:func:`whitened_spatial_depth`) at ``theta`` must change by at least 0.25. The
    checker also confirms that the plain spatial depth moved by at most :math:`2/n`
    (it always does).
    """
    result = ExerciseResult("check_whitening_counterexample")
    for n in (50, 400):
        out = run_safely(result, fn, n)
        if out is None:
            break
        try:
            x, x_prime, theta = out
            x = np.asarray(x, dtype=float)
            x_prime = np.asarray(x_prime, dtype=float)
            theta = np.asarray(theta, dtype=float).reshape(1, -1)
        except (TypeError, ValueError):
            result.fail("return a tuple (X, X_prime, theta) of arrays")
            break
        if x.shape != (n, 2) or x_prime.shape != (n, 2) or theta.shape != (1, 2):
            result.fail(f"with n={n} expected X and X_prime of shape ({n}, 2) and theta of shape (2,), got "
                        f"{x.shape}, {x_prime.shape} and {theta.shape[1:]}")
            break
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(x_prime)) and np.all(np.isfinite(theta))):
            result.fail(f"n={n}: the data and theta must be finite numbers")
            break
        differing = int(np.any(x != x_prime, axis=1).sum())
        if differing != 1:
            result.fail(f"n={n}: X and X_prime differ in {differing} rows; neighbours differ in exactly one row "
                        "(same n, one record replaced)")
            break
        try:
            change = float(abs(whitened_spatial_depth(theta, x)[0] - whitened_spatial_depth(theta, x_prime)[0]))
        except ValueError as exc:
            result.fail(f"n={n}: {exc}; use data that span the plane (e.g. Gaussian points)")
            break
        plain = float(abs(spatial_depth(theta, x)[0] - spatial_depth(theta, x_prime)[0]))
        if plain > 2.0 / n + 1e-12:   # cannot happen; guards the checker itself
            result.fail(f"n={n}: plain spatial depth moved by {plain:.4g} > 2/n, which contradicts its sensitivity")
            break
        if change < 0.25:
            result.fail(f"n={n}: the whitened spatial depth at theta changes by only {change:.4f} (need >= 0.25). "
                        "Move the replaced record very far along one axis (e.g. to (10n, 0)) so that the sample "
                        "covariance inflates along it, and pick theta outlying along that axis, e.g. (2.5, 0)")
            break
    return result.report()
