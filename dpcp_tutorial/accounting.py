"""A privacy budget ledger under basic composition (chapter 2).

Sequential use of the same data composes additively: mechanisms that are
:math:`(\\varepsilon_i, \\delta_i)`-DP together are
:math:`(\\sum_i \\varepsilon_i, \\sum_i \\delta_i)`-DP. The ledger records every
spend with a label and refuses a spend that would exceed the total.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._validation import check_delta, check_epsilon, check_scalar

__all__ = ["PrivacyBudget", "Spend"]

_TOL = 1e-12  # floating slack so that e.g. 0.7 + 0.3 spends a budget of exactly 1.0


@dataclass(frozen=True)
class Spend:
    """One entry of a :class:`PrivacyBudget` ledger."""

    label: str
    epsilon: float
    delta: float

    def __post_init__(self):
        if not isinstance(self.label, str):
            raise TypeError(f"label must be a string, got {type(self.label).__name__}")
        check_scalar(self.epsilon, "epsilon", low=0.0, low_inclusive=True)
        check_delta(self.delta)


class PrivacyBudget:
    """Ledger of :math:`(\\varepsilon, \\delta)` spends under basic composition.

    Parameters
    ----------
    epsilon : float
        Total :math:`\\varepsilon` available (positive).
    delta : float
        Total :math:`\\delta` available, in [0, 1).

    Examples
    --------
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    >>> budget.spend(0.7, 1e-6, "model training")
    >>> budget.spend(0.3, 0.0, "private quantile")
    >>> budget.spent_epsilon, budget.remaining_epsilon
    (1.0, 0.0)
    """

    def __init__(self, epsilon: float, delta: float = 0.0):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self._ledger: list[Spend] = []

    @property
    def ledger(self) -> tuple[Spend, ...]:
        """All spends so far, in order."""
        return tuple(self._ledger)

    @property
    def spent_epsilon(self) -> float:
        """Sum of the spent epsilons."""
        return float(sum(s.epsilon for s in self._ledger))

    @property
    def spent_delta(self) -> float:
        """Sum of the spent deltas."""
        return float(sum(s.delta for s in self._ledger))

    @property
    def remaining_epsilon(self) -> float:
        """Epsilon still available (never negative)."""
        return max(self.epsilon - self.spent_epsilon, 0.0)

    @property
    def remaining_delta(self) -> float:
        """Delta still available (never negative)."""
        return max(self.delta - self.spent_delta, 0.0)

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "") -> None:
        """Record a spend of ``(epsilon, delta)``.

        Raises
        ------
        ValueError
            If the spend would take the total beyond the budget; nothing is
            recorded in that case.
        """
        epsilon = check_scalar(epsilon, "epsilon", low=0.0, low_inclusive=True)
        delta = check_delta(delta)
        if self.spent_epsilon + epsilon > self.epsilon + _TOL:
            raise ValueError(
                f"spending epsilon={epsilon:.6g} for {label or 'this release'!r} would exceed the budget: "
                f"{self.spent_epsilon:.6g} of {self.epsilon:.6g} already spent, "
                f"{self.remaining_epsilon:.6g} left; lower this spend or raise the total budget"
            )
        if self.spent_delta + delta > self.delta + _TOL * max(self.delta, 1e-300):
            raise ValueError(
                f"spending delta={delta:.3g} for {label or 'this release'!r} would exceed the budget: "
                f"{self.spent_delta:.3g} of {self.delta:.3g} already spent"
            )
        self._ledger.append(Spend(label, epsilon, delta))

    def __repr__(self) -> str:
        return (f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}; spent "
                f"epsilon={self.spent_epsilon:g}, delta={self.spent_delta:g} in {len(self._ledger)} release(s))")
