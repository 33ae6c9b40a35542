"""Checkers for the coding exercises of chapter 6 (DPCP)."""

from __future__ import annotations

import math

from ..dpcp import dpcp_levels
from ._common import ExerciseResult

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


def check_dpcp_levels(fn) -> ExerciseResult:
    """Check a reader's ``fn(n, alpha, epsilon1, epsilon2, delta) -> (alpha1, alpha0)``.

    It must raise ``ValueError`` when Algorithm 1 is infeasible (alpha0 <= 0).
    """
    result = ExerciseResult("check_dpcp_levels")
    feasible = [(1000, 0.1, 0.5, 0.5, 1e-5), (5000, 0.1, 1.0, 2.0, 1e-6), (200, 0.2, 0.25, 1.0, 0.0)]
    for case in feasible:
        try:
            got = fn(*case)
            got = (float(got[0]), float(got[1]))
        except Exception as exc:  # a reader's bug must become feedback
            result.fail(f"for (n, alpha, eps1, eps2, delta)={case} your function raised {type(exc).__name__}: {exc}")
            return result.report()
        expected = dpcp_levels(*case)
        if not all(math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-15) for g, e in zip(got, expected)):
            hint = next((msg for msg, value in _variants(*case).items()
                         if all(math.isclose(g, v, rel_tol=1e-9) for g, v in zip(got, value))),
                        f"for (n, alpha, eps1, eps2, delta)={case} expected {expected}, got {got}")
            result.fail(hint)
            return result.report()
    for case in [(1000, 0.1, 4.0, 1.0, 1e-5), (20, 0.1, 0.5, 0.5, 1e-5)]:
        try:
            got = fn(*case)
        except ValueError:
            continue
        except Exception as exc:
            result.fail(f"for the infeasible {case} raise ValueError, not {type(exc).__name__}")
            break
        result.fail(f"(n, alpha, eps1, eps2, delta)={case} is infeasible (alpha0 <= 0), but you returned {got}; "
                    "raise ValueError and say which n or epsilon2 would work")
        break
    return result.report()
