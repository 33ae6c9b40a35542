"""Tests for dpcp_tutorial.accounting: the basic-composition privacy ledger."""

import pytest

from dpcp_tutorial import PrivacyBudget, Spend


def test_spends_add_up_under_basic_composition():
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
    budget.spend(0.5, 4e-7, "model")
    budget.spend(1.0, 0.0, "quantile")
    assert budget.spent_epsilon == pytest.approx(1.5)
    assert budget.spent_delta == pytest.approx(4e-7)
    assert budget.remaining_epsilon == pytest.approx(0.5)
    assert budget.remaining_delta == pytest.approx(6e-7)
    assert budget.ledger == (Spend("model", 0.5, 4e-7), Spend("quantile", 1.0, 0.0))


def test_floating_point_slack_allows_exact_exhaustion():
    """0.1 added ten times is 0.9999999999999999 in floating point; a budget of 1.0 must accept all ten spends
    and then refuse any further positive spend."""
    budget = PrivacyBudget(1.0)
    for i in range(10):
        budget.spend(0.1, label=f"query {i}")
    assert budget.remaining_epsilon == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="exceed the budget"):
        budget.spend(1e-6, label="one more")
    budget.spend(0.0, label="free post-processing")  # zero-cost entries are allowed
    assert len(budget.ledger) == 11


def test_overspend_epsilon_raises_and_records_nothing():
    budget = PrivacyBudget(1.0)
    budget.spend(0.7, label="model")
    with pytest.raises(ValueError, match=r"'quantile'.*0\.7 of 1 already spent.*0\.3 left"):
        budget.spend(0.31, label="quantile")
    assert len(budget.ledger) == 1 and budget.spent_epsilon == pytest.approx(0.7)


def test_overspend_delta_raises_and_records_nothing():
    budget = PrivacyBudget(10.0, delta=1e-6)
    budget.spend(1.0, 8e-7, "first")
    with pytest.raises(ValueError, match="delta"):
        budget.spend(1.0, 3e-7, "second")
    assert budget.spent_delta == pytest.approx(8e-7) and len(budget.ledger) == 1
    pure = PrivacyBudget(1.0)  # delta = 0: any positive delta is an overspend
    with pytest.raises(ValueError, match="delta"):
        pure.spend(0.1, 1e-12, "gaussian")


@pytest.mark.parametrize("epsilon, delta", [(0.0, 0.0), (-1.0, 0.0), (float("inf"), 0.0), (1.0, 1.0),
                                            (1.0, -1e-9), (1.0, 2.0)])
def test_bad_total_budget(epsilon, delta):
    with pytest.raises(ValueError):
        PrivacyBudget(epsilon, delta)


@pytest.mark.parametrize("epsilon, delta", [(-0.1, 0.0), (float("nan"), 0.0), (0.1, -1e-9), (0.1, 1.0)])
def test_bad_spend(epsilon, delta):
    budget = PrivacyBudget(1.0, 0.5)
    with pytest.raises(ValueError):
        budget.spend(epsilon, delta, "bad")
    assert budget.ledger == ()


def test_ledger_is_read_only_and_repr_summarises():
    budget = PrivacyBudget(1.0, 1e-6)
    budget.spend(0.25, 0.0, "a")
    with pytest.raises(AttributeError):
        budget.ledger.append(Spend("b", 0.1, 0.0))
    with pytest.raises(AttributeError):
        budget.ledger[0].epsilon = 0.0  # entries are frozen
    assert repr(budget) == "PrivacyBudget(epsilon=1, delta=1e-06; spent epsilon=0.25, delta=0 in 1 release(s))"
