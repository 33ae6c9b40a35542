"""Tests for dpcp_tutorial.accounting: the privacy account, sequential and parallel composition.

The composition rules are audited exactly: small exponential mechanisms on tiny data sets whose records carry a
part key, the joint output law enumerated, and the largest log-ratio over every pair of neighbouring data sets
(add/remove, replace-one) compared with what ``compose`` reports.
"""

import itertools
import math

import numpy as np
import pytest

from dpcp_tutorial import PrivacyAccount, PrivacyBudget, ReleaseWarning, Spend
from dpcp_tutorial.accounting import compose, group_privacy, make_account

# --------------------------------------------------------------------------- exact audit machinery

RECORDS = [(key, value) for key in "AB" for value in (0, 1)]
OUTPUTS = np.arange(-12, 13)   # a window of the integers: the laws below are exact on it


def _datasets(max_size=3):
    for size in range(max_size + 1):
        yield from itertools.combinations_with_replacement(RECORDS, size)


def _mechanism(epsilon, statistic):
    """Discrete Laplace (two-sided geometric) release of an integer statistic, log P(o) for o in OUTPUTS.

    P(o) = exp(-eps |o - s|) / Z on all integers, Z = (1 + e^-eps) / (1 - e^-eps) for every s, so the window's
    log-probabilities are exact; a unit shift of s moves every log-probability by +-eps, both signs attained.
    """
    log_z = math.log((1 + math.exp(-epsilon)) / (1 - math.exp(-epsilon)))

    def law(data):
        return -epsilon * np.abs(OUTPUTS - statistic(data)) - log_z
    return law


def _count(part, value=None):
    return lambda data: sum(1 for k, v in data if (part is None or k == part) and (value is None or v == value))


def _signed(part):
    """ones minus zeros of one part: moves by 1 under add/remove, by 2 when a value flips."""
    return lambda data: _count(part, 1)(data) - _count(part, 0)(data)


def _joint(mechanisms, data):
    out = np.zeros(())
    for law in mechanisms:
        out = np.add.outer(out, law(data))
    return out


def _exact_loss(mechanisms, relation, same_part=False):
    """max |log P(D) - log P(D')| over neighbouring data sets of at most three records."""
    worst = 0.0
    for data in _datasets(2):
        data = list(data)
        if relation == "add/remove":
            pairs = [(data, data + [r]) for r in RECORDS]
        else:
            pairs = [(data[:i] + [r] + data[i + 1:], data[:i] + [s] + data[i + 1:])
                     for i in range(len(data)) for r in RECORDS for s in RECORDS
                     if r != s and (not same_part or r[0] == s[0])]
        for a, b in pairs:
            worst = max(worst, float(np.max(np.abs(_joint(mechanisms, a) - _joint(mechanisms, b)))))
    return worst


def _single_loss(law, relation, same_part=False):
    return _exact_loss([law], relation, same_part)


# --------------------------------------------------------------------------- the audits


def test_parallel_composition_per_record_rule_matches_the_exact_audit():
    """Part A: a count (its replace-one loss is 0 once the key is fixed), part B: ones minus zeros, and a
    count of every record on top. The composed totals equal the exact worst case under both relations:
    add/remove = AR(*) + max AR(A); replace-one = RO(*) + max(max RO, AR(A) + AR(B))."""
    mech_a, mech_b, mech_all = _mechanism(0.7, _count("A")), _mechanism(0.4, _signed("B")), _mechanism(0.2, _count(None))
    spends = []
    for label, law, part in (("A", mech_a, "A"), ("B", mech_b, "B"), ("all", mech_all, "all")):
        ar, ro = _single_loss(law, "add/remove"), _single_loss(law, "replace-one", same_part=part != "all")
        spends.append(Spend(label, (ar, 0.0), (ro, 0.0), part=part))
    totals = compose(spends)
    assert totals["add/remove"][0] == pytest.approx(_exact_loss([mech_a, mech_b, mech_all], "add/remove"))
    assert totals["replace-one"][0] == pytest.approx(_exact_loss([mech_a, mech_b, mech_all], "replace-one"))
    # the cross term is what binds here: a record that moves from A to B is a removal plus an addition
    ar_a, ar_b = spends[0].add_remove[0], spends[1].add_remove[0]
    ro_b, ro_all = spends[1].replace_one[0], spends[2].replace_one[0]
    assert ar_a + ar_b > max(spends[0].replace_one[0], ro_b)
    assert totals["replace-one"][0] == pytest.approx(ro_all + ar_a + ar_b)


def test_parallel_composition_when_replacement_within_a_part_binds():
    mech_a, mech_b = _mechanism(1.0, _signed("A")), _mechanism(0.3, _count("B"))
    spends = [Spend("A", (_single_loss(mech_a, "add/remove"), 0.0), (_single_loss(mech_a, "replace-one", True), 0.0),
                    part="A"),
              Spend("B", (_single_loss(mech_b, "add/remove"), 0.0), (_single_loss(mech_b, "replace-one", True), 0.0),
                    part="B")]
    totals = compose(spends)
    assert totals["replace-one"][0] == pytest.approx(_exact_loss([mech_a, mech_b], "replace-one"))
    assert totals["replace-one"][0] == pytest.approx(spends[0].replace_one[0])   # max RO(A) binds
    assert totals["add/remove"][0] == pytest.approx(_exact_loss([mech_a, mech_b], "add/remove"))


def test_positional_split_covers_replace_one_within_parts_only():
    """Fixed row ranges: a replacement keeps its part (max RO over parts); add/remove is not covered."""
    mech_a, mech_b = _mechanism(0.7, _signed("A")), _mechanism(0.4, _signed("B"))
    spends = [Spend(p, (_single_loss(m, "add/remove"), 0.0), (_single_loss(m, "replace-one", True), 0.0), part=p)
              for p, m in (("A", mech_a), ("B", mech_b))]
    totals = compose(spends, "positional")
    assert totals["add/remove"] is None and "shifts every later row" in totals["reasons"]["add/remove"]
    assert totals["replace-one"][0] == pytest.approx(_exact_loss([mech_a, mech_b], "replace-one", same_part=True))


def test_sequential_composition_on_the_same_records_adds_up():
    mechs = [_mechanism(0.5, _count(None)), _mechanism(0.25, _signed(None))]
    spends = [Spend(str(i), (_single_loss(m, "add/remove"), 1e-7), (_single_loss(m, "replace-one"), 2e-7))
              for i, m in enumerate(mechs)]
    totals = compose(spends)
    assert totals["add/remove"] == pytest.approx((sum(s.add_remove[0] for s in spends), 2e-7))
    assert totals["replace-one"] == pytest.approx((sum(s.replace_one[0] for s in spends), 4e-7))
    assert totals["add/remove"][0] >= _exact_loss(mechs, "add/remove") - 1e-12     # basic composition is an upper bound


def test_group_privacy_is_the_replace_one_bound_of_an_add_remove_guarantee():
    law = _mechanism(0.6, _count(None))
    assert _single_loss(law, "replace-one") <= group_privacy(_single_loss(law, "add/remove"))[0] + 1e-12
    assert group_privacy(1.0, 1e-6) == (2.0, pytest.approx((1 + math.e) * 1e-6))
    assert group_privacy(800.0, 1e-9) == (1600.0, 1.0)          # no overflow: a vacuous delta
    assert group_privacy(math.inf, 0.0) == (math.inf, 0.0)


# --------------------------------------------------------------------------- the budget


def test_train_on_one_part_calibrate_on_another_is_not_overspent():
    """A valid split pipeline composes in parallel; the same spends on shared records do not."""
    budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    budget.spend(1.0, 1e-6, "model training", part="training")
    budget.spend(0.9, 0.0, "private quantile", part="calibration", other=(1.0, 0.0))
    assert budget.spent_epsilon == pytest.approx(1.0) and budget.spent_delta == pytest.approx(1e-6)
    account = budget.account(chapter="chapter 4")
    assert account.add_remove == (1.0, 1e-6)
    assert account.replace_one == (pytest.approx(2.0), pytest.approx((1 + math.e) * 1e-6))  # group privacy of training
    shared = PrivacyBudget(epsilon=1.0, delta=1e-6)
    shared.spend(1.0, 1e-6, "model training")
    with pytest.raises(ValueError, match="exceed the budget.*disjoint part"):
        shared.spend(0.9, 0.0, "private quantile")


def test_spends_add_up_under_basic_composition():
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
    budget.spend(0.5, 4e-7, "model")
    budget.spend(1.0, 0.0, "quantile")
    assert budget.spent_epsilon == pytest.approx(1.5)
    assert budget.spent_delta == pytest.approx(4e-7)
    assert budget.remaining_epsilon == pytest.approx(0.5)
    assert budget.remaining_delta == pytest.approx(6e-7)
    assert [(s.label, s.add_remove, s.part) for s in budget.ledger] == [("model", (0.5, 4e-7), "all"),
                                                                        ("quantile", (1.0, 0.0), "all")]
    assert budget.ledger[0].replace_one == group_privacy(0.5, 4e-7)


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


def test_overspend_raises_and_records_nothing():
    budget = PrivacyBudget(1.0)
    budget.spend(0.7, label="model")
    with pytest.raises(ValueError, match=r"'quantile'.*1\.01 of 1 \(0\.7 spent, 0\.3 left\)"):
        budget.spend(0.31, label="quantile")
    assert len(budget.ledger) == 1 and budget.spent_epsilon == pytest.approx(0.7)
    budget = PrivacyBudget(10.0, delta=1e-6)
    budget.spend(1.0, 8e-7, "first")
    with pytest.raises(ValueError, match="delta"):
        budget.spend(1.0, 3e-7, "second")
    assert budget.spent_delta == pytest.approx(8e-7) and len(budget.ledger) == 1
    pure = PrivacyBudget(1.0)  # delta = 0: any positive delta is an overspend
    with pytest.raises(ValueError, match="delta"):
        pure.spend(0.1, 1e-12, "gaussian")


def test_replace_one_budget_and_positional_split():
    budget = PrivacyBudget(1.0, relation="replace-one", partition="positional")
    budget.spend(1.0, 0.0, "model", part="first 1000 rows")
    budget.spend(1.0, 0.0, "quantile", part="next 1000 rows")
    account = budget.account()
    assert account.replace_one == (1.0, 0.0) and account.add_remove is None
    assert any("add/remove" in note and "not covered" in note for note in account.notes)
    assert "fixed public row ranges" in account.composition
    with pytest.raises(ValueError, match="positional split does not compose in parallel under add/remove"):
        PrivacyBudget(1.0, partition="positional")


@pytest.mark.parametrize("epsilon, delta", [(0.0, 0.0), (-1.0, 0.0), (float("inf"), 0.0), (1.0, 1.0),
                                            (1.0, -1e-9), (1.0, 2.0)])
def test_bad_total_budget(epsilon, delta):
    with pytest.raises(ValueError):
        PrivacyBudget(epsilon, delta)


@pytest.mark.parametrize("kwargs, exc", [(dict(relation="both"), ValueError), (dict(partition="random"), ValueError),
                                         (dict(relation=None), TypeError), (dict(partition=["x"]), TypeError)])
def test_bad_budget_options(kwargs, exc):
    with pytest.raises(exc):
        PrivacyBudget(1.0, **kwargs)


@pytest.mark.parametrize("epsilon, delta", [(-0.1, 0.0), (float("nan"), 0.0), (0.1, -1e-9), (0.1, 1.0)])
def test_bad_spend(epsilon, delta):
    budget = PrivacyBudget(1.0, 0.5)
    with pytest.raises(ValueError):
        budget.spend(epsilon, delta, "bad")
    assert budget.ledger == ()


def test_bad_spend_records():
    with pytest.raises(TypeError, match="label"):
        Spend(3, (1.0, 0.0), None)
    with pytest.raises(TypeError, match="part"):
        Spend("x", (1.0, 0.0), None, part="")
    with pytest.raises(TypeError, match="pair"):
        Spend("x", 1.0, None)
    with pytest.raises(ValueError, match="delta"):
        Spend("x", (1.0, 2.0), None)
    with pytest.raises(TypeError, match="string"):
        PrivacyBudget(1.0).spend(0.1, 0.0, label=None)


def test_account_is_frozen_and_prints_a_table():
    budget = PrivacyBudget(1.0, 1e-6)
    budget.spend(0.25, 0.0, "a", part="p")
    with pytest.raises(AttributeError):
        budget.ledger.append(Spend("b", (0.1, 0.0), None))
    with pytest.raises(AttributeError):
        budget.ledger[0].label = "c"  # entries are frozen
    account = budget.account(public=("n = 10",), chapter="chapter 2")
    assert isinstance(account, PrivacyAccount)
    with pytest.raises(AttributeError):
        account.epsilon = 2.0
    text = str(account)
    for piece in ("chapter 2", "add/remove *", "replace-one", "0.25", "public: n = 10", "parallel over the disjoint"):
        assert piece in text
    assert repr(budget).startswith("PrivacyBudget(epsilon=1, delta=1e-06, relation='add/remove'; spent epsilon=0.25")
    assert account.under("replace-one") == (0.5, 0.0)
    with pytest.raises(ValueError, match="relation"):
        account.under("add-remove")


def test_uncovered_relation_is_reported_with_its_reason():
    account = make_account([Spend("replace-one mechanism", None, (1.0, 0.0))], relation="replace-one")
    assert account.add_remove is None and account.epsilon == 1.0
    assert any("states no add/remove guarantee" in note for note in account.notes)
    assert "not covered" in str(account)


def test_release_warning_is_a_user_warning():
    assert issubclass(ReleaseWarning, UserWarning)


def test_a_delta_of_one_is_no_guarantee():
    """(eps, 1) holds for every mechanism: a pair with delta = 1 is refused (pass None: not covered), and a
    composition whose delta reaches 1 reports the relation as not covered, with the reason."""
    with pytest.raises(ValueError, match="a delta of 1 is no guarantee"):
        Spend("x", (1.0, 1.0))
    with pytest.raises(ValueError, match="a delta of 1 is no guarantee"):
        PrivacyAccount(1.0, 0.0, "add/remove", (1.0, 0.0), (2.0, 1.0))
    spends = [Spend("a", (1.0, 0.6), (2.0, 0.6)), Spend("b", (1.0, 0.5), (2.0, 0.5))]
    totals = compose(spends)
    assert totals["add/remove"] is None and totals["replace-one"] is None
    assert "reaches 1" in totals["reasons"]["add/remove"]
    budget = PrivacyBudget(2000.0, 0.5)
    budget.spend(800.0, 1e-9, "huge epsilon")            # group privacy of it is vacuous: replace-one not covered
    assert budget.ledger[0].replace_one is None and budget.account().replace_one is None


def test_account_pairs_default_to_not_covered_and_must_match_the_primary():
    spend = Spend("replace-one only", replace_one=(1.0, 0.0))
    assert spend.add_remove is None and spend.part == "all"
    account = PrivacyAccount(1.0, 1e-6, "add/remove")    # the primary pair is (epsilon, delta); the other: None
    assert account.add_remove == (1.0, 1e-6) and account.replace_one is None
    uncovered = PrivacyAccount(math.inf, 1.0, "replace-one", add_remove=(1.0, 0.0))
    assert uncovered.replace_one is None
    with pytest.raises(ValueError, match="contradicts the primary guarantee"):
        PrivacyAccount(1.0, 0.0, "add/remove", (2.0, 0.0), (2.0, 0.0))
    for name in ("parts", "public", "notes"):
        with pytest.raises(TypeError, match=f"{name} must be a tuple"):
            PrivacyAccount(1.0, 0.0, "add/remove", **{name: 1.0})
    with pytest.raises(TypeError, match="public and notes must hold strings"):
        PrivacyAccount(1.0, 0.0, "add/remove", public=(1.0,))
