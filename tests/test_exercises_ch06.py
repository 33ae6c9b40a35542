"""The chapter-6 checker accepts a correct solution and diagnoses typical wrong ones."""

import math

from dpcp_tutorial.course.exercises import check_dpcp_levels


def correct(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-eps1) * (alpha - delta)
    alpha0 = alpha1 - 2 / (n * eps2)
    if alpha0 <= 0:
        raise ValueError("infeasible")
    return alpha1, alpha0


def total_epsilon_in_alpha1(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-(eps1 + eps2)) * (alpha - delta)
    return alpha1, alpha1 - 2 / (n * eps2)


def shift_with_epsilon1(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-eps1) * (alpha - delta)
    return alpha1, alpha1 - 2 / (n * eps1)


def never_raises(n, alpha, eps1, eps2, delta):
    alpha1 = math.exp(-eps1) * (alpha - delta)
    return alpha1, alpha1 - 2 / (n * eps2)


def test_dpcp_levels_checker(capsys):
    assert check_dpcp_levels(correct)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_dpcp_levels(total_epsilon_in_alpha1)
    assert "epsilon1 only" in capsys.readouterr().out
    assert not check_dpcp_levels(shift_with_epsilon1)
    assert "quantile's budget epsilon2" in capsys.readouterr().out
    assert not check_dpcp_levels(never_raises)
    assert "raise ValueError" in capsys.readouterr().out


# ---------------------------------------------------------------------------------- ex-06-assemble

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import exercise_solutions as S  # noqa: E402
from dpcp_tutorial import DPRidgeRegression, private_quantile  # noqa: E402
from dpcp_tutorial.course.exercises import check_dpcp_assembly  # noqa: E402

from _checking import run, text  # noqa: E402

PIECES = [S.my_dpcp_budget, S.my_dpcp_scores, S.my_dpcp_interval]


def interval(level="alpha1", model_epsilon="epsilon1", fit="all", half="B q", whole_line=True, rng_use="given"):
    """my_dpcp_interval with one deliberate mistake."""
    def my_dpcp_interval(X, y, X_test, *, alpha, epsilon, share, delta, x_bound, y_bound, bound, bins, rng):
        epsilon1, epsilon2, alpha1 = S.my_dpcp_budget(alpha, epsilon, share, delta)
        r = rng if rng_use == "given" else np.random.default_rng(0)
        if rng_use == "global":
            np.random.seed(int(rng.integers(2**31)))
        n = len(X)
        train = slice(None) if fit == "all" else slice(0, n // 2)
        calib = slice(None) if fit == "all" else slice(n // 2, None)
        model = DPRidgeRegression(epsilon={"epsilon1": epsilon1, "epsilon": epsilon}[model_epsilon], delta=delta,
                                  x_bound=x_bound, y_bound=y_bound, rng=r).fit(X[train], y[train])
        scores = S.my_dpcp_scores(y[calib], model.predict(X[calib]), bound)
        qhat = private_quantile(scores, {"alpha1": alpha1, "alpha": alpha}[level], epsilon2, bins=bins, rng=r)
        centre = model.predict(X_test)
        if half == "q":
            h = qhat
        else:
            h = np.inf if qhat >= 1 and whole_line else bound * qhat
        return np.column_stack([centre - h, centre + h])
    return my_dpcp_interval


def budget_total(alpha, epsilon, share, delta):
    return share * epsilon, (1 - share) * epsilon, math.exp(-epsilon) * (alpha - delta)


def budget_swapped(alpha, epsilon, share, delta):
    e1 = (1 - share) * epsilon
    return e1, share * epsilon, math.exp(-e1) * (alpha - delta)


def budget_delta_outside(alpha, epsilon, share, delta):
    e1 = share * epsilon
    return e1, epsilon - e1, math.exp(-e1) * alpha - delta


def scores_unclipped(y, y_pred, bound):
    return np.abs(y - y_pred) / bound


def scores_data_bound(y, y_pred, bound):
    r = np.abs(y - y_pred)
    return r / r.max()


def test_dpcp_assembly_solution_passes(capsys):
    result = check_dpcp_assembly(*PIECES)
    assert result and result.cases_passed == result.cases_total == 11
    assert "all checks passed (11 of 11 cases)" in capsys.readouterr().out
    assert check_dpcp_assembly(*PIECES, secret="a course secret", quiet=True)


@pytest.mark.parametrize("secret", [None, "a course secret"])
@pytest.mark.parametrize("pieces,phrase,kinds", [
    ([budget_total, S.my_dpcp_scores, S.my_dpcp_interval], "not the total epsilon", ["the budget split"]),
    ([budget_swapped, S.my_dpcp_scores, S.my_dpcp_interval], "swapped", ["the budget split"]),
    ([budget_delta_outside, S.my_dpcp_scores, S.my_dpcp_interval], "subtracted inside", ["the budget split"]),
    ([S.my_dpcp_budget, scores_unclipped, S.my_dpcp_interval], "clip the scores at 1", ["scores"]),
    ([S.my_dpcp_budget, scores_data_bound, S.my_dpcp_interval], "largest residual", ["scores"]),
    ([S.my_dpcp_budget, S.my_dpcp_scores, interval(level="alpha")], "must refuse", ["a budget where"]),
    ([S.my_dpcp_budget, S.my_dpcp_scores, interval(level="alpha")], "thresholds q_hat are smaller", ["the law"]),
    ([S.my_dpcp_budget, S.my_dpcp_scores, interval(model_epsilon="epsilon")], "predictions vary less", ["the law"]),
    ([S.my_dpcp_budget, S.my_dpcp_scores, interval(half="q")], "multiply the released threshold", ["the released"]),
    ([S.my_dpcp_budget, S.my_dpcp_scores, interval(whole_line=False)], "whole line", ["every score clipped"]),
    ([S.my_dpcp_budget, S.my_dpcp_scores, interval(rng_use="fixed")], "different seeds", ["the same seed"]),
    ([S.my_dpcp_budget, S.my_dpcp_scores, interval(rng_use="global")], "global random state", ["the same seed"]),
], ids=["total", "swapped", "delta", "unclipped", "data-bound", "alpha-refuse", "alpha-law", "model-eps", "half-q",
        "no-whole-line", "fixed-rng", "global"])
def test_wrong_dpcp_pieces_fail_with_the_right_diagnosis(pieces, phrase, kinds, secret):
    result = run(check_dpcp_assembly, *pieces, kinds=kinds, secret=secret)
    assert not result and result.cases_passed < result.cases_total, result.feedback
    assert phrase in text(result), result.feedback


def test_fitting_on_half_the_data_is_caught():
    """Private split CP is not DPCP: half the data cannot reach the level alpha1 at these n, or its law differs."""
    result = run(check_dpcp_assembly, S.my_dpcp_budget, S.my_dpcp_scores, interval(fit="half"),
                 kinds=["the law", "the released"])
    assert not result


# ---------------------------------------------------------------------------------- ex-06-level, ex-06-bound

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dpcp_tutorial import private_quantile_miscoverage_bound  # noqa: E402
from dpcp_tutorial.course.exercises import check_dpcp_level, check_dpcp_miss_bound  # noqa: E402
from dpcp_tutorial.course.exercises._common import resolve_secret  # noqa: E402

from _checking import run, text  # noqa: E402


def level(alpha, epsilon1, delta):
    if alpha <= delta:
        raise ValueError("delta must be below alpha")
    return math.exp(-epsilon1) * (alpha - delta)


def level_no_refusal(alpha, epsilon1, delta):
    return math.exp(-epsilon1) * (alpha - delta)


def level_plus(alpha, epsilon1, delta):
    return level(alpha, epsilon1, 0.0) * math.exp(2 * epsilon1) if alpha > delta else level(alpha, epsilon1, delta)


def level_delta_outside(alpha, epsilon1, delta):
    if alpha <= delta:
        raise ValueError("delta must be below alpha")
    return math.exp(-epsilon1) * alpha - delta


def level_linear(alpha, epsilon1, delta):
    if alpha <= delta:
        raise ValueError("delta must be below alpha")
    return (1 - epsilon1) * (alpha - delta)


@pytest.mark.parametrize("secret", [None, "a course secret"])
def test_dpcp_level_checker(secret):
    assert run(check_dpcp_level, level, secret=secret).passed
    for wrong, phrase in [(level_no_refusal, "raise ValueError"), (level_delta_outside, "subtracted inside"),
                          (level_linear, "exponential"), (lambda a, e, d: None, "None")]:
        result = run(check_dpcp_level, wrong, secret=secret)
        assert not result.passed, wrong
        assert phrase in text(result), (wrong, text(result))


def miss_bound(alpha0, n, epsilon1, epsilon2, delta, bins):
    return math.exp(epsilon1) * private_quantile_miscoverage_bound(alpha0, n, epsilon2, bins) + delta


def no_factor(alpha0, n, epsilon1, epsilon2, delta, bins):
    return private_quantile_miscoverage_bound(alpha0, n, epsilon2, bins) + delta


def total_budget(alpha0, n, epsilon1, epsilon2, delta, bins):
    return math.exp(epsilon1) * private_quantile_miscoverage_bound(alpha0, n, epsilon1 + epsilon2, bins) + delta


def level_not_bound(alpha0, n, epsilon1, epsilon2, delta, bins):
    return math.exp(epsilon1) * alpha0 + delta


def delta_inside(alpha0, n, epsilon1, epsilon2, delta, bins):
    return math.exp(epsilon1) * (private_quantile_miscoverage_bound(alpha0, n, epsilon2, bins) + delta)


@pytest.mark.parametrize("secret", [None, "a course secret"])
def test_dpcp_miss_bound_checker(secret):
    assert run(check_dpcp_miss_bound, miss_bound, secret=secret).passed
    for wrong, phrase in [(no_factor, "e^eps1 is missing"), (total_budget, "not epsilon1 + epsilon2"),
                          (level_not_bound, "is not its miss bound"), (delta_inside, "added once")]:
        result = run(check_dpcp_miss_bound, wrong, secret=secret)
        assert not result.passed, wrong
        assert phrase in text(result), (wrong, text(result))


def test_new_chapter6_graded_cases_differ_from_public():
    for check in (check_dpcp_level, check_dpcp_miss_bound):
        public = check.spec.cases(None)
        graded = check.spec.cases(resolve_secret("a course secret"))
        for a, b in zip(public, graded):
            assert a.args != b.args
