"""The chapter-1 checkers accept a correct solution and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.course.exercises import check_aps_prediction_set, check_conformal_quantile


def correct_quantile(scores, alpha):
    n = len(scores)
    k = math.ceil(round((n + 1) * (1 - alpha), 9))
    return math.inf if k > n else float(np.sort(scores)[k - 1])


def rank_without_plus_one(scores, alpha):
    n = len(scores)
    k = math.ceil(n * (1 - alpha))
    return float(np.sort(scores)[k - 1])


def float_trap(scores, alpha):
    n = len(scores)
    k = math.ceil((n + 1) * (1 - alpha))
    return math.inf if k > n else float(np.sort(scores)[k - 1])


def interpolating(scores, alpha):
    return float(np.quantile(scores, 1 - alpha))


def test_quantile_checker(capsys):
    assert check_conformal_quantile(correct_quantile)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_conformal_quantile(rank_without_plus_one)
    assert "ceil(n(1-alpha))" in capsys.readouterr().out
    assert not check_conformal_quantile(float_trap)
    assert "floating point" in capsys.readouterr().out
    assert not check_conformal_quantile(interpolating)
    out = capsys.readouterr().out
    assert "interpolate" in out or "infinite" in out


def test_quantile_checker_reports_exceptions(capsys):
    def broken(scores, alpha):
        raise RuntimeError("oops")

    assert not check_conformal_quantile(broken)
    assert "RuntimeError: oops" in capsys.readouterr().out


def correct_aps(proba, qhat):
    order = np.argsort(-proba, axis=1, kind="stable")
    cum = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    out = np.zeros(proba.shape, dtype=bool)
    np.put_along_axis(out, order, cum <= qhat, axis=1)
    return out


def aps_one_too_many(proba, qhat):
    order = np.argsort(-proba, axis=1, kind="stable")
    cum = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    keep = np.concatenate([np.ones((len(proba), 1), bool), cum[:, :-1] <= qhat], axis=1)
    out = np.zeros(proba.shape, dtype=bool)
    np.put_along_axis(out, order, keep, axis=1)
    return out


def lac_instead(proba, qhat):
    return 1 - proba <= qhat


def test_aps_checker(capsys):
    assert check_aps_prediction_set(correct_aps)
    capsys.readouterr()
    assert not check_aps_prediction_set(aps_one_too_many)
    assert "one class too many" in capsys.readouterr().out
    assert not check_aps_prediction_set(lac_instead)
    assert "LAC" in capsys.readouterr().out


def zero_based_slip(scores, alpha):
    n = len(scores)
    k = math.ceil(round((n + 1) * (1 - alpha), 9))
    return math.inf if k > n else float(np.sort(scores)[min(k, n - 1)])     # sorted[k] instead of sorted[k - 1]


def aps_strict(proba, qhat):
    order = np.argsort(-proba, axis=1, kind="stable")
    cum = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    out = np.zeros(proba.shape, dtype=bool)
    np.put_along_axis(out, order, cum < qhat, axis=1)
    return out


def test_zero_based_slip_is_not_called_a_floating_point_problem():
    result = check_conformal_quantile(zero_based_slip, quiet=True)
    assert not result and result.cases_passed < result.cases_total
    typical = [line for line in result.feedback if "a typical case" in line]
    assert typical and "Python indexes from 0" in typical[0] and "floating point" not in typical[0]


def aps_default_sort(proba, qhat):
    order = np.argsort(-proba, axis=1)              # quicksort: not stable beyond 16 elements
    cum = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    out = np.zeros(proba.shape, dtype=bool)
    np.put_along_axis(out, order, cum <= qhat, axis=1)
    return out


def test_aps_with_an_unstable_sort_fails_on_many_tied_classes():
    result = check_aps_prediction_set(aps_default_sort, quiet=True)
    assert not result
    assert any("many tied classes" in line and "kind='stable'" in line for line in result.feedback), result.feedback


def test_aps_with_strict_inequality_fails_where_a_mass_equals_qhat():
    result = check_aps_prediction_set(aps_strict, quiet=True)
    assert not result
    assert any("cumulative mass exactly equal" in line and "<=" in line for line in result.feedback)
    graded = check_aps_prediction_set(aps_strict, quiet=True, secret="a course secret")
    assert not graded and not any("row " in line for line in graded.feedback)
