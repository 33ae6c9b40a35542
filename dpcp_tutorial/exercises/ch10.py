"""Checkers for the coding exercises of chapter 10 (private medians)."""

from __future__ import annotations

import numpy as np

from ..depth import spatial_depth
from ._common import ExerciseResult, run_safely

__all__ = ["check_spatial_worst_case", "check_langevin_step"]


def check_spatial_worst_case(fn) -> ExerciseResult:
    """Check a reader's ``fn(n, d) -> (data, other, x)`` (chapter 10).

    ``data`` and ``other`` must be ``(n, d)`` arrays differing in exactly one
    row, and the spatial depth at the point ``x`` (shape ``(d,)``) must change
    by exactly :math:`2/n`, the global sensitivity, in every dimension.
    """
    result = ExerciseResult("check_spatial_worst_case")
    for n, d in [(10, 1), (25, 3), (40, 50)]:
        out = run_safely(result, fn, n, d)
        if out is None:
            break
        try:
            data, other, x = (np.asarray(a, dtype=float) for a in out)
        except (TypeError, ValueError):
            result.fail("return a tuple (data, other, x) of arrays")
            break
        if data.shape != (n, d) or other.shape != (n, d) or x.shape != (d,):
            result.fail(f"n={n}, d={d}: expected shapes ({n}, {d}), ({n}, {d}) and ({d},); "
                        f"got {data.shape}, {other.shape} and {x.shape}")
            break
        if not (np.all(np.isfinite(data)) and np.all(np.isfinite(other)) and np.all(np.isfinite(x))):
            result.fail(f"n={n}, d={d}: the arrays must be finite")
            break
        changed = int(np.sum(np.any(data != other, axis=1)))
        if changed != 1:
            result.fail(f"n={n}, d={d}: your data sets differ in {changed} rows; neighbours differ in exactly one")
            break
        delta = abs(spatial_depth(x[None], data)[0] - spatial_depth(x[None], other)[0])
        if not np.isclose(delta, 2.0 / n, rtol=0, atol=1e-9):
            result.fail(f"n={n}, d={d}: SD(x) changes by {delta * n:.4g}/n; the worst case is 2/n. Put n - 1 points "
                        "in one direction v from x and the last one in direction -v, then move it to +v")
            break
    return result.report()


def check_langevin_step(fn) -> ExerciseResult:
    """Check a reader's ``fn(theta, depth_gradient, beta, prior_mean, prior_scale, step_size, noise)`` (chapter 10).

    Expected one unadjusted Langevin step on :math:`\\beta D + \\log\\pi` with
    :math:`\\pi = N(\\mu, \\tau^2 I)`:
    :math:`\\theta + h(\\beta\\nabla D(\\theta) - (\\theta - \\mu)/\\tau^2) + \\sqrt{2h}\\,\\xi`,
    where ``noise`` is the standard normal vector :math:`\\xi`.
    """
    result = ExerciseResult("check_langevin_step")
    rng = np.random.default_rng(11)
    for d in (1, 3, 20):
        theta, grad, mu, xi = (rng.standard_normal(d) for _ in range(4))
        beta, tau, h = 50.0, 2.5, 1e-3
        got = run_safely(result, fn, theta.copy(), grad.copy(), beta, mu.copy(), tau, h, xi.copy())
        if got is None:
            break
        got = np.asarray(got, dtype=float)
        if got.shape != (d,):
            result.fail(f"d={d}: expected the new point, shape ({d},); got shape {got.shape}")
            break
        drift = beta * grad - (theta - mu) / tau ** 2
        want = theta + h * drift + np.sqrt(2 * h) * xi
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            variants = {
                "the noise is sqrt(2h) * xi, not sqrt(h) * xi": theta + h * drift + np.sqrt(h) * xi,
                "the noise is sqrt(2h) * xi, not h * xi": theta + h * drift + h * xi,
                "add the prior's gradient -(theta - mu) / tau^2 to the drift": theta + h * beta * grad
                + np.sqrt(2 * h) * xi,
                "the prior pulls towards its mean: its gradient is -(theta - mu) / tau^2":
                    theta + h * (beta * grad + (theta - mu) / tau ** 2) + np.sqrt(2 * h) * xi,
                "the prior's gradient divides by the variance tau^2, not by tau":
                    theta + h * (beta * grad - (theta - mu) / tau) + np.sqrt(2 * h) * xi,
                "multiply the depth gradient by beta (the target is exp(beta D) pi)":
                    theta + h * (grad - (theta - mu) / tau ** 2) + np.sqrt(2 * h) * xi,
            }
            hint = next((k for k, w in variants.items() if np.allclose(got, w, rtol=1e-12, atol=1e-12)), None)
            result.fail(f"d={d}: " + (hint or f"expected {np.round(want[:3], 6)}..., got {np.round(got[:3], 6)}..."))
            break
    return result.report()
