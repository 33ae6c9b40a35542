"""Checkers for the coding exercises of chapter 6 (DPCP)."""

from __future__ import annotations

import math

from ..dpcp import dpcp_levels
from ._common import checker, number, sequence

__all__ = ["check_dpcp_levels"]


def _variants(n, alpha, eps1, eps2, delta) -> dict[str, tuple[float, float]]:
    def pair(alpha1, shift_eps):
        return alpha1, alpha1 - 2.0 / (n * shift_eps)

    good = math.exp(-eps1) * (alpha - delta)
    return {
        "alpha1 must use the training budget epsilon1 only, not epsilon1 + epsilon2":
            pair(math.exp(-(eps1 + eps2)) * (alpha - delta), eps2),
        "the shift 2/(n eps) of Algorithm 1 uses the quantile's budget epsilon2, not epsilon1": pair(good, eps1),
        "the shift 2/(n eps) uses epsilon2 only, not the total budget": pair(good, eps1 + eps2),
        "delta is missing from alpha1 = e^-eps1 (alpha - delta)": pair(math.exp(-eps1) * alpha, eps2),
        "delta must be subtracted inside: e^-eps1 (alpha - delta), not e^-eps1 alpha - delta":
            pair(math.exp(-eps1) * alpha - delta, eps2),
    }


@checker(function="my_levels", exercise="ex-06-code")
def check_dpcp_levels(ctx) -> None:
    """Check a reader's ``fn(n, alpha, epsilon1, epsilon2, delta) -> (alpha1, alpha0)`` (chapter 6).

    Three feasible cases are compared with the levels of DPCP; two infeasible ones
    (alpha0 <= 0) must raise ``ValueError``.
    """
    feasible = [(1000, 0.1, 0.5, 0.5, 1e-5), (5000, 0.1, 1.0, 2.0, 1e-6), (200, 0.2, 0.25, 1.0, 0.0)]
    for case in feasible:
        label = f"(n, alpha, eps1, eps2, delta)={case}"
        got = ctx.call(*case, returns=sequence(number(), number(), names="a pair (alpha1, alpha0)"), case=label)
        expected = dpcp_levels(*case, variant="original")  # the exercise asks for the shift 2/(n eps2)
        if not all(math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-15) for g, e in zip(got, expected)):
            hint = next((msg for msg, value in _variants(*case).items()
                         if all(math.isclose(g, v, rel_tol=1e-9) for g, v in zip(got, value))),
                        f"expected {expected}, got {got}")
            ctx.stop(f"{label}: {hint}")
    for case in [(1000, 0.1, 4.0, 1.0, 1e-5), (20, 0.1, 0.5, 0.5, 1e-5)]:
        ctx.call_raises(ValueError, *case, case=f"(n, alpha, eps1, eps2, delta)={case}",
                        message="this input is infeasible (alpha0 <= 0), but your function returned a value; "
                                "raise ValueError and say which n or epsilon2 would work")
