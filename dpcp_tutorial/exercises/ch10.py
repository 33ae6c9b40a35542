"""Checkers for the coding exercises of chapter 10 (private medians)."""

from __future__ import annotations

import numpy as np

from ..depth import spatial_depth
from ._common import array, checker, sequence

__all__ = ["check_spatial_worst_case", "check_langevin_step"]


@checker(function="worst_case", exercise="ex-10-worst-case")
def check_spatial_worst_case(ctx) -> None:
    """Check a reader's ``worst_case(n, d) -> (data, other, x)`` (chapter 10).

    For three (n, d) pairs from d = 1 to d = 50: ``data`` and ``other`` must be
    finite ``(n, d)`` arrays that are neighbours (replace-one), ``x`` a finite
    point of shape ``(d,)``, and the spatial depths of ``x`` in the two data sets
    must differ by the global sensitivity 2/n.
    """
    for n, d in [(10, 1), (25, 3), (40, 50)]:
        data, other, x = ctx.call(n, d, returns=sequence(array((n, d)), array((n, d)), array((d,)),
                                                         names="a tuple (data, other, x)"), case=f"n={n}, d={d}")
        changed = int(np.sum(np.any(data != other, axis=1)))
        if changed != 1:
            ctx.fail(f"n={n}, d={d}: your data sets differ in {changed} rows; neighbours differ in exactly one")
            break
        delta = abs(spatial_depth(x[None], data)[0] - spatial_depth(x[None], other)[0])
        if not np.isclose(delta, 2.0 / n, rtol=0, atol=1e-9):
            ctx.fail(f"n={n}, d={d}: SD(x) changes by {delta * n:.4g}/n, not by 2/n. Which arrangement of the "
                     "other points lets one replaced point move the average unit vector the most?")
            break


@checker(function="langevin_step", exercise="ex-10-langevin")
def check_langevin_step(ctx) -> None:
    """Check a reader's ``langevin_step(theta, depth_gradient, beta, prior_mean, prior_scale, step_size, noise)`` (chapter 10).

    The output is compared with one unadjusted Langevin step of the chapter's
    algorithm for the Gaussian prior, in d = 1, 3 and 20.
    """
    rng = np.random.default_rng(11)
    for d in (1, 3, 20):
        theta, grad, mu, xi = (rng.standard_normal(d) for _ in range(4))
        beta, tau, h = 50.0, 2.5, 1e-3
        got = ctx.call(theta.copy(), grad.copy(), beta, mu.copy(), tau, h, xi.copy(),
                       returns=array((d,), what="the new point"), case=f"d={d}")
        drift = beta * grad - (theta - mu) / tau ** 2
        want = theta + h * drift + np.sqrt(2 * h) * xi
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            variants = {
                "the noise term has the wrong scale (sqrt(h) * xi)": theta + h * drift + np.sqrt(h) * xi,
                "the noise term has the wrong scale (h * xi)": theta + h * drift + h * xi,
                "the drift misses the prior's gradient": theta + h * beta * grad + np.sqrt(2 * h) * xi,
                "the prior's gradient has the wrong sign: the prior pulls towards its mean":
                    theta + h * (beta * grad + (theta - mu) / tau ** 2) + np.sqrt(2 * h) * xi,
                "the prior's gradient has the wrong power of tau":
                    theta + h * (beta * grad - (theta - mu) / tau) + np.sqrt(2 * h) * xi,
                "the depth gradient is not multiplied by beta (the target is exp(beta D) pi)":
                    theta + h * (grad - (theta - mu) / tau ** 2) + np.sqrt(2 * h) * xi,
            }
            hint = next((k for k, w in variants.items() if np.allclose(got, w, rtol=1e-12, atol=1e-12)), None)
            ctx.fail(f"d={d}: " + (hint or f"expected {np.round(want[:3], 6)}..., got {np.round(got[:3], 6)}..."))
            break
