"""Runners of chapters 4-6 (dpcp_tutorial.experiments.dpcp_*), run tiny, and the memoriser's privacy audit."""

import math

import numpy as np
import pytest

from dpcp_tutorial.experiments import dpcp_compare, dpcp_coverage, dpcp_differential, dpcp_map, dpcp_private_split
from dpcp_tutorial.experiments.dpcp_coverage import MembershipMemoriser, make_membership_data


# --------------------------------------------------------------------------- the memoriser


def _recognition_rates(train_x, probe_x, eps, fits=4000, seed=0):
    """Frequency, over independent fits, with which each probe value is recognised."""
    rng = np.random.default_rng(seed)
    X = np.asarray(train_x, dtype=float).reshape(-1, 1)
    y = np.zeros(len(X))
    probes = np.asarray(probe_x, dtype=float).reshape(-1, 1)
    hits = np.zeros(len(probes))
    for _ in range(fits):
        hits += MembershipMemoriser(epsilon=eps, rng=rng).fit(X, y).recognised(probes)
    return hits / fits


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_memoriser_randomised_response_law(eps):
    """Training values are recognised with probability e^eps/(1+e^eps), others with 1/(1+e^eps) (4 SE)."""
    p = 1 / (1 + math.exp(-eps))
    fits = 4000
    rates = _recognition_rates([0.1, 0.2, 0.3], [0.1, 0.3, 0.55, 0.9], eps, fits)
    se = math.sqrt(p * (1 - p) / fits)
    assert np.all(np.abs(rates[:2] - p) < 4 * se)
    assert np.all(np.abs(rates[2:] - (1 - p)) < 4 * se)


def test_memoriser_privacy_is_exactly_epsilon_under_add_remove():
    """Exact audit: the output is a product of independent bits; adding a record changes one bit's law, by
    p/(1-p) = e^eps in the worst case; a duplicate value changes nothing; replace-one changes two bits (2 eps)."""
    eps = 0.7
    p = 1 / (1 + math.exp(-eps))

    def law(present: bool):
        return np.array([1 - p, p]) if present else np.array([p, 1 - p])   # P(b = 0), P(b = 1)

    # data sets on the values {a, b}; the output is (b(a), b(b), b(c)) for probe values a, b, c
    def joint(members):
        laws = [law(v in members) for v in ("a", "b", "c")]
        return np.einsum("i,j,k->ijk", *laws)

    base = joint({"a"})
    added = joint({"a", "b"})
    replaced = joint({"b"})
    duplicate = joint({"a"})          # adding a second record with value a: the same set of values
    assert np.max(np.abs(np.log(base / added))) == pytest.approx(eps)
    assert np.max(np.abs(np.log(base / replaced))) == pytest.approx(2 * eps)
    assert np.max(np.abs(np.log(base / duplicate))) == 0.0
    model = MembershipMemoriser(epsilon=eps, rng=1).fit(np.array([[0.25]]), np.array([0.0]))
    assert model.privacy_.add_remove == (pytest.approx(eps), 0.0)
    assert model.privacy_.replace_one[0] == pytest.approx(2 * eps)


def test_memoriser_is_deterministic_per_fit_and_symmetric_in_law():
    X, y = make_membership_data(50, rng=3)
    model = MembershipMemoriser(epsilon=1.0, rng=7).fit(X, y)
    probes = np.random.default_rng(4).uniform(size=(20, 1))
    assert np.array_equal(model.predict(probes), model.predict(probes))     # a value keeps its bit
    assert set(np.unique(model.predict(np.vstack([X, probes])))) <= {0.0, 1.0}
    # the law does not depend on the order of the records: the fraction of recognised training points
    # under a permutation has the same mean (binomial, 4 SE)
    fractions = {order: np.mean([MembershipMemoriser(epsilon=1.0, rng=s).fit(X[idx], y[idx]).recognised(X).mean()
                                 for s in range(400)])
                 for order, idx in (("as is", np.arange(50)), ("reversed", np.arange(50)[::-1]))}
    se = math.sqrt(0.25 / (400 * 50))
    assert abs(fractions["as is"] - fractions["reversed"]) < 4 * math.sqrt(2) * se


def test_memoriser_scores_split_at_one_half():
    X, y = make_membership_data(200, rng=5)
    model = MembershipMemoriser(epsilon=1.0, rng=6).fit(X, y)
    scores = np.abs(y - model.predict(X))
    recognised = model.recognised(X)
    assert np.all(scores[recognised] <= 0.5) and np.all(scores[~recognised] >= 0.5)


# --------------------------------------------------------------------------- runners, tiny


def test_dpcp_coverage_setting_tiny_and_infeasible():
    row = dpcp_coverage.coverage_setting("memoriser", 200, 1.0, 20.0, 30, rng=1)
    assert row["feasible"] and 0.0 <= row["dpcp"] <= 1.0 and 0.0 <= row["oracle"] <= 1.0
    assert row["bound"] <= dpcp_coverage.ALPHA + 1e-12 and row["oracle_bound"] <= row["alpha1"] + 1e-12
    again = dpcp_coverage.coverage_setting("memoriser", 200, 1.0, 20.0, 30, rng=1)
    assert again == row                                                        # seeded: reproducible
    assert dpcp_coverage.coverage_setting("ridge", 100, 2.0, 5.0, 5, rng=1)["feasible"] is False


@pytest.mark.slow
def test_dpcp_coverage_memoriser_misses_e_eps_times_the_oracle():
    """For the memoriser the in-sample miss rate is e^eps1 times the oracle's (pooled over two settings, 4 SE)."""
    row = dpcp_coverage.coverage_setting("memoriser", 300, 1.0, 20.0, 1500, rng=2)
    ratio = row["dpcp"] / row["oracle"]
    se = ratio * math.hypot(row["dpcp_se"] / row["dpcp"], row["oracle_se"] / row["oracle"])
    assert abs(ratio - math.e) < 4 * se
    assert row["dpcp"] <= row["bound"] + 3 * row["dpcp_se"]


def test_dpcp_differential_setting_tiny():
    for trainer in ("regressogram-10", "memoriser"):
        row = dpcp_differential.coverage_setting(100, 1.0, trainer, 20, rng=3)
        # the corrected threshold is never below the uncorrected one on the same data, so neither is its coverage
        assert row["trainer"] == trainer and row["uncorrected"] <= row["corrected"] <= 1.0
        assert row["floor"] == pytest.approx(1 - math.e * 0.1 - dpcp_differential.DELTA)
    with pytest.raises(ValueError, match="trainer="):
        dpcp_differential.coverage_setting(100, 1.0, "regressogram", 2, rng=3)


def test_compare_map_and_private_split_tiny():
    summary = dpcp_compare.synthetic_setting(400, 2.0, 0.6, 2, rng=4, n_test=200)
    assert set(summary) == {"oracle", "private_split", "dpcp"}
    cell = dpcp_map.map_cell(400, 0.4, 1.6, 2, rng=5, n_test=200)
    assert cell["feasible"] and cell["ratio"] > 0
    assert dpcp_map.map_cell(250, 1.6, 0.25, 2, rng=5)["feasible"] is False          # DPCP's level does not exist
    row = dpcp_private_split.coverage_setting(300, 1.0, 5, rng=6)
    assert row["calibrator"] == "quantile" and 0 <= row["trivial"] <= 1
    pps = dpcp_private_split.coverage_setting(300, 1.0, 5, rng=6, tuning=dpcp_compare.pps_tuning(300, 1.0))
    assert pps["calibrator"] == "pps"
