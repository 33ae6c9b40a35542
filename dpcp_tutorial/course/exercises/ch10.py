"""Checkers for the coding exercises of chapter 10 (private medians)."""

from __future__ import annotations

import numpy as np

from ...depth import spatial_depth
from ._common import Case, array, checker, sequence

__all__ = ["check_spatial_worst_case", "check_langevin_step"]


def _worst_cases(rng: np.random.Generator) -> list[Case]:
    d3 = int(rng.integers(2, 6))
    n1, n50, d50, d2 = (int(rng.integers(low, high)) for low, high in [(5, 21), (20, 61), (40, 61), (2, 7)])
    return [Case(kind, f"n={n}, d={d}", n=n, d=d) for kind, n, d in [
        ("one dimension", n1, 1), ("a few dimensions", 25, d3), ("forty to sixty dimensions", n50, d50),
        ("n = 2", 2, d2)]]


@checker(function="worst_case", exercise="ex-10-worst-case", cases=_worst_cases)
def check_spatial_worst_case(ctx, case) -> None:
    """Check a reader's ``worst_case(n, d) -> (data, other, x)`` (chapter 10).

    For four (n, d) pairs from d = 1 to d = 60 and n = 2: ``data`` and ``other`` must be
    finite ``(n, d)`` arrays that are neighbours (replace-one), ``x`` a finite
    point of shape ``(d,)``, and the spatial depths of ``x`` in the two data sets
    must differ by the global sensitivity 2/n.
    """
    n, d = case.n, case.d
    data, other, x = ctx.call(n, d, returns=sequence(array((n, d)), array((n, d)), array((d,)),
                                                     names="a tuple (data, other, x)"))
    changed = int(np.sum(np.any(data != other, axis=1)))
    if changed != 1:
        ctx.stop(f"your data sets differ in {changed} rows; neighbours differ in exactly one")
    delta = abs(spatial_depth(x[None], data)[0] - spatial_depth(x[None], other)[0])
    if not np.isclose(delta, 2.0 / n, rtol=0, atol=1e-9):
        ctx.fail("the spatial depth at x does not change by 2/n. Which arrangement of the other points lets one "
                 "replaced point move the average unit vector the most?", f"it changes by {delta * n:.4g}/n")


def _langevin_cases(rng: np.random.Generator) -> list[Case]:
    out = []
    for d in (1, 3, 20):
        theta, grad, mu, xi = (rng.standard_normal(d) for _ in range(4))
        out.append(Case(f"d = {d}", "eta=50, tau=2.5, h=1e-3", theta=theta, grad=grad, mu=mu, xi=xi, eta=50.0,
                        tau=2.5, h=1e-3))
    theta, grad, mu, xi = (rng.standard_normal(4) for _ in range(4))
    out.append(Case("a large step and a small prior scale", "eta=3, tau=0.5, h=0.1", theta=theta, grad=grad, mu=mu,
                    xi=xi, eta=3.0, tau=0.5, h=0.1))
    return out


@checker(function="langevin_step", exercise="ex-10-langevin", cases=_langevin_cases)
def check_langevin_step(ctx, case) -> None:
    """Check a reader's ``langevin_step(theta, depth_gradient, eta, prior_mean, prior_scale, step_size, noise)`` (chapter 10).

    Expected: one unadjusted Langevin step of the chapter's algorithm for the Gaussian prior,
    :math:`\\theta + h(\\eta\\nabla D - (\\theta-\\mu)/\\tau^2) + \\sqrt{2h}\\,\\xi`, in d = 1, 3, 4 and 20.
    """
    theta, grad, mu, xi, eta, tau, h = case.theta, case.grad, case.mu, case.xi, case.eta, case.tau, case.h
    got = ctx.call(theta, grad, eta, mu, tau, h, xi, returns=array(theta.shape, what="the new point"), inputs=True)
    drift = eta * grad - (theta - mu) / tau ** 2
    want = theta + h * drift + np.sqrt(2 * h) * xi
    if np.allclose(got, want, rtol=1e-12, atol=1e-12):
        return
    variants = {
        "the noise term has the wrong scale (sqrt(h) * xi)": theta + h * drift + np.sqrt(h) * xi,
        "the noise term has the wrong scale (h * xi)": theta + h * drift + h * xi,
        "the drift misses the prior's gradient": theta + h * eta * grad + np.sqrt(2 * h) * xi,
        "the prior's gradient has the wrong sign: the prior pulls towards its mean":
            theta + h * (eta * grad + (theta - mu) / tau ** 2) + np.sqrt(2 * h) * xi,
        "the prior's gradient has the wrong power of tau":
            theta + h * (eta * grad - (theta - mu) / tau) + np.sqrt(2 * h) * xi,
        "the depth gradient is not multiplied by eta (the target is exp(eta D) pi)":
            theta + h * (grad - (theta - mu) / tau ** 2) + np.sqrt(2 * h) * xi,
    }
    hint = next((k for k, w in variants.items() if np.allclose(got, w, rtol=1e-12, atol=1e-12)),
                "your step differs from the unadjusted Langevin step")
    ctx.fail(hint, f"expected {np.round(want[:3], 6)}..., got {np.round(got[:3], 6)}...")
