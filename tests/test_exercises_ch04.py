"""The chapter-4 checkers accept a correct solution and diagnose typical wrong ones."""

import math

import numpy as np
import pytest

from dpcp_tutorial.course.exercises import check_pps_level, check_pps_round_up


def _edges(m):
    return np.arange(m) / (m - 1)


def correct_round_up(scores, m):
    return _edges(m)[np.minimum(np.searchsorted(_edges(m), scores, side="right"), m - 1)]


def keeps_edges(scores, m):
    return _edges(m)[np.minimum(np.searchsorted(_edges(m), scores, side="left"), m - 1)]


def nearest(scores, m):
    return _edges(m)[np.argmin(np.abs(np.asarray(scores)[:, None] - _edges(m)[None, :]), axis=1)]


def rounds_down(scores, m):
    return _edges(m)[np.maximum(np.searchsorted(_edges(m), scores, side="right") - 1, 0)]


def correct_level(n, alpha, eps, m, gamma):
    return (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 2 / (eps * n) * math.log(m / (gamma * alpha))


def no_finite_sample(n, alpha, eps, m, gamma):
    return (1 - alpha) / (1 - gamma * alpha) + 2 / (eps * n) * math.log(m / (gamma * alpha))


def half_privacy_term(n, alpha, eps, m, gamma):
    return (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + 1 / (eps * n) * math.log(m / (gamma * alpha))


def capped(n, alpha, eps, m, gamma):
    return min(correct_level(n, alpha, eps, m, gamma), 1 - 1e-12)


@pytest.mark.slow
def test_round_up_checker(capsys):
    assert check_pps_round_up(correct_round_up)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_pps_round_up(keeps_edges)
    assert "next* edge" in capsys.readouterr().out
    assert not check_pps_round_up(nearest)
    assert "nearest edge" in capsys.readouterr().out
    assert not check_pps_round_up(rounds_down)
    assert "round down" in capsys.readouterr().out


def test_level_checker(capsys):
    assert check_pps_level(correct_level)
    assert "all checks passed" in capsys.readouterr().out
    assert not check_pps_level(no_finite_sample)
    assert "(n+1)(1-alpha)/n" in capsys.readouterr().out
    assert not check_pps_level(half_privacy_term)
    assert "2/(eps n)" in capsys.readouterr().out
    assert not check_pps_level(capped)
    assert "raw value" in capsys.readouterr().out
    assert not check_pps_level(lambda *args: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


# ---------------------------------------------------------------------------------- ex-04-assemble

import pytest  # noqa: E402

import exercise_solutions as S  # noqa: E402
from dpcp_tutorial import private_quantile_level  # noqa: E402
from dpcp_tutorial.course.exercises import check_private_split_assembly  # noqa: E402

from _checking import run, text  # noqa: E402

PIECES = [S.my_round_up_to_edges, S.my_utilities, S.my_log_probabilities, S.my_gumbel_max, S.my_private_threshold]


def _with(**replaced):
    names = ["round", "utilities", "logp", "gumbel", "threshold"]
    return [replaced.get(n, f) for n, f in zip(names, PIECES)]


def _assembled(utilities=None, logp=None, gumbel=None, level=None):
    """my_private_threshold built from (possibly wrong) pieces."""
    def threshold(scores, beta, epsilon, M, rng):
        alpha0 = level(beta, len(scores), epsilon, M) if level else private_quantile_level(beta, len(scores),
                                                                                            epsilon, bins=M)
        u = (utilities or S.my_utilities)(scores, M, alpha0)
        j = (gumbel or S.my_gumbel_max)((logp or S.my_log_probabilities)(u, epsilon), rng)
        return (j + 1) / M
    return threshold


def _right_edges(m):
    return np.arange(1, m + 1) / m


def strict_round(scores, M):
    return _right_edges(M)[np.minimum(np.searchsorted(_right_edges(M), scores, side="right"), M - 1)]


def ceil_round(scores, M):
    return np.maximum(np.ceil(np.asarray(scores) * M), 1) / M


def ceil_round_zero(scores, M):
    return np.ceil(np.asarray(scores) * M) / M


def utilities_lt(scores, M, alpha0):
    o = np.sort(scores)
    a = np.searchsorted(o, _right_edges(M), side="left")
    b = len(o) - np.searchsorted(o, _right_edges(M), side="right")
    return np.maximum(alpha0 * a, (1 - alpha0) * b)


def utilities_swapped(scores, M, alpha0):
    return S.my_utilities(scores, M, 1 - alpha0)


def utilities_sum(scores, M, alpha0):
    u_a = S.my_utilities(scores, M, 1.0)         # alpha0 = 1: u = a_j
    u_b = S.my_utilities(scores, M, 0.0)         # alpha0 = 0: u = b_j
    return alpha0 * u_a + (1 - alpha0) * u_b


def logp_naive(utilities, epsilon):
    w = np.exp(-epsilon * np.asarray(utilities))
    return np.log(w / w.sum())


def logp_half(utilities, epsilon):
    return S.my_log_probabilities(utilities, epsilon / 2)


def logp_unnormalised(utilities, epsilon):
    return -epsilon * (np.asarray(utilities) - np.min(utilities))


def gumbel_argmax(logp, rng):
    return int(np.argmax(logp))


def gumbel_normal(logp, rng):
    return int(np.argmax(logp + rng.normal(size=len(logp))))


def gumbel_on_probabilities(logp, rng):
    return int(np.argmax(np.exp(logp) + rng.gumbel(size=len(logp))))


def gumbel_one_based(logp, rng):
    return S.my_gumbel_max(logp, rng) + 1


def gumbel_global(logp, rng):
    return int(np.argmax(logp + np.random.gumbel(size=len(logp))))


def inverse_cdf(logp, rng):
    """Another correct sampler (not Gumbel-max): the law is what is checked."""
    return int(np.searchsorted(np.cumsum(np.exp(logp)), rng.random() * np.exp(logp).sum()))


@pytest.mark.slow
def test_assembly_solution_passes(capsys):
    result = check_private_split_assembly(*PIECES)
    assert result and result.cases_passed == result.cases_total == 14
    assert "all checks passed (14 of 14 cases)" in capsys.readouterr().out
    assert check_private_split_assembly(*PIECES, secret="a course secret", quiet=True)


def test_another_correct_sampler_passes():
    result = run(check_private_split_assembly, *_with(gumbel=inverse_cdf), kinds=["Gumbel-max"])
    assert result, result.feedback


@pytest.mark.slow
@pytest.mark.parametrize("secret", [None, "a course secret"])
@pytest.mark.parametrize("pieces,phrase,kinds", [
    (_with(round=strict_round), "stays there", ["rounding scores that lie"]),
    (_with(round=ceil_round), "floating point", ["rounding scores that lie"]),
    (_with(round=ceil_round_zero), "score of 0", ["rounding scores that lie"]),
    (_with(utilities=utilities_lt), "previous edge", ["utilities"]),
    (_with(utilities=utilities_swapped), "swapped", ["utilities"]),
    (_with(utilities=utilities_sum), "add the two terms", ["utilities"]),
    (_with(logp=logp_naive), "underflow", ["log-probabilities where"]),
    (_with(logp=logp_half), "half of epsilon", ["log-probabilities of a small"]),
    (_with(logp=logp_unnormalised), "not normalised", ["log-probabilities of a small"]),
    (_with(gumbel=gumbel_argmax), "every draw is the same", ["Gumbel-max"]),
    (_with(gumbel=gumbel_normal), "do not follow", ["Gumbel-max"]),
    (_with(gumbel=gumbel_on_probabilities), "do not follow", ["Gumbel-max"]),
    (_with(gumbel=gumbel_one_based), "0-based", ["Gumbel-max"]),
    (_with(gumbel=gumbel_global), "global random state", ["Gumbel-max"]),
    (_with(threshold=_assembled(level=lambda beta, n, eps, m: beta)), "tight quantile's law",
     ["the released threshold"]),
    (_with(threshold=_assembled(utilities=utilities_swapped)), "tight quantile's law", ["the released threshold"]),
    (_with(threshold=_assembled(utilities=utilities_swapped)), "miss more often than beta", ["coverage"]),
    (_with(threshold=_assembled(logp=logp_half)), "tight quantile's law", ["the released threshold"]),
    (_with(threshold=_assembled(gumbel=gumbel_argmax)), "every release is the same", ["the released threshold"]),
    (_with(threshold=_assembled(logp=logp_naive)), "log space", ["many scores"]),
    (_with(threshold=_assembled(gumbel=gumbel_global)), "global random state", ["the same seed"]),
], ids=["strict", "ceil", "ceil0", "lt", "swap", "sum", "naive", "half", "unnorm", "argmax", "normal", "probs",
        "onebased", "global", "level-beta", "t-swap", "t-swap-coverage", "t-half", "t-argmax", "t-naive", "t-global"])
def test_wrong_pieces_fail_with_the_right_diagnosis(pieces, phrase, kinds, secret):
    result = run(check_private_split_assembly, *pieces, kinds=kinds, secret=secret)
    assert not result and result.cases_passed < result.cases_total, result.feedback
    assert phrase in text(result), result.feedback


def test_level_beta_releases_where_no_level_works():
    pieces = _with(threshold=_assembled(level=lambda beta, n, eps, m: beta))
    result = run(check_private_split_assembly, *pieces, kinds=["too few scores"])
    assert not result and "must not happen" in text(result)


def test_partial_submission_counts_cases():
    """Only the round-up is written: its cases pass, the others fail and are counted."""
    def missing(*args):
        raise NotImplementedError

    result = check_private_split_assembly(S.my_round_up_to_edges, missing, missing, missing, missing, quiet=True)
    assert result.cases_passed == 2 and result.cases_total == 14
    assert "NotImplementedError" in text(result)


# ---------------------------------------------------------------------------------- ex-04-coin, ex-04-pad

from dpcp_tutorial.course.exercises import check_coin_split, check_subsample_or_pad  # noqa: E402


def coin(n_records, share, rng):
    return (rng.random(n_records) < share).astype(int)


def coin_training_marked(n_records, share, rng):
    return (rng.random(n_records) >= share).astype(int)


def row_position(n_records, share, rng):
    return (np.arange(n_records) >= (1 - share) * n_records).astype(int)


def shuffle_and_cut(n_records, share, rng):
    out = np.zeros(n_records, dtype=int)
    out[rng.permutation(n_records)[:round(share * n_records)]] = 1
    return out


def global_state(n_records, share, rng):
    return (np.random.random(n_records) < share).astype(int)


def one_coin_for_all(n_records, share, rng):
    return np.full(n_records, int(rng.random() < share))


def fair_coin(n_records, share, rng):
    return rng.integers(0, 2, size=n_records)


@pytest.mark.parametrize("secret", [None, "a course secret"])
def test_coin_split_checker(secret):
    assert run(check_coin_split, coin, secret=secret).passed
    for wrong, phrase in [(row_position, "row position"), (shuffle_and_cut, "fixed size"),
                          (global_state, "global random state"), (one_coin_for_all, "independent"),
                          (coin_training_marked, "training records"), (fair_coin, "probability share"),
                          (lambda n, s, rng: None, "None")]:
        result = run(check_coin_split, wrong, secret=secret)
        assert not result.passed, wrong
        assert phrase in text(result), (wrong, text(result))


def pad(scores, n, rng):
    scores = np.asarray(scores, dtype=float)
    if scores.size > n:
        return rng.choice(scores, size=n, replace=False)
    return np.concatenate([scores, np.ones(n - scores.size)])


def pad_with_max(scores, n, rng):
    scores = np.asarray(scores, dtype=float)
    if scores.size > n:
        return rng.choice(scores, size=n, replace=False)
    return np.concatenate([scores, np.full(n - scores.size, scores.max() if scores.size else 1.0)])


def pad_with_zero(scores, n, rng):
    scores = np.asarray(scores, dtype=float)
    if scores.size > n:
        return rng.choice(scores, size=n, replace=False)
    return np.concatenate([scores, np.zeros(n - scores.size)])


def first_n(scores, n, rng):
    return pad(scores, n, rng) if len(scores) <= n else np.asarray(scores, dtype=float)[:n]


def with_replacement(scores, n, rng):
    return pad(scores, n, rng) if len(scores) <= n else rng.choice(np.asarray(scores, dtype=float), size=n)


def resample_up(scores, n, rng):
    scores = np.asarray(scores, dtype=float)
    if scores.size == 0:
        return np.ones(n)
    return rng.choice(scores, size=n, replace=scores.size < n)


@pytest.mark.parametrize("secret", [None, "a course secret"])
def test_subsample_or_pad_checker(secret):
    assert run(check_subsample_or_pad, pad, secret=secret).passed
    for wrong, phrase in [(pad_with_max, "private"), (pad_with_zero, "largest possible score"),
                          (first_n, "same subset"), (with_replacement, "twice"),
                          (resample_up, "keep every score")]:
        result = run(check_subsample_or_pad, wrong, secret=secret)
        assert not result.passed, wrong
        assert phrase in text(result), (wrong, text(result))


def test_new_chapter4_graded_cases_differ_from_public():
    from dpcp_tutorial.course.exercises._common import resolve_secret  # noqa: F401
    for check in (check_coin_split, check_subsample_or_pad):
        public = check.spec.cases(None)
        graded = check.spec.cases(resolve_secret("a course secret"))
        for a, b in zip(public, graded):
            assert a.kind == b.kind
            assert any(not np.array_equal(np.asarray(a._values[k]), np.asarray(b._values[k]))
                       for k in a._values if k not in ("draws", "share") or a.kind != "an even split")
