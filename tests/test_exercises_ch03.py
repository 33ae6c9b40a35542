"""The chapter-3 checkers accept correct solutions and diagnose typical wrong ones."""

import numpy as np
from scipy.special import log_softmax, softmax

from dpcp_tutorial.course.exercises import (
    check_algorithm1_loss,
    check_miscoverage_bound,
    check_release_log_probabilities,
    check_stable_probabilities,
)


def correct_loss(scores, edges, alpha0):
    a = np.array([(scores < e).sum() for e in edges])
    b = np.array([(scores > e).sum() for e in edges])
    return np.maximum(a / (1 - alpha0), b / alpha0)


def non_strict_below(scores, edges, alpha0):
    a = np.array([(scores <= e).sum() for e in edges])
    b = np.array([(scores > e).sum() for e in edges])
    return np.maximum(a / (1 - alpha0), b / alpha0)


def swapped_denominators(scores, edges, alpha0):
    a = np.array([(scores < e).sum() for e in edges])
    b = np.array([(scores > e).sum() for e in edges])
    return np.maximum(a / alpha0, b / (1 - alpha0))


def summed_terms(scores, edges, alpha0):
    a = np.array([(scores < e).sum() for e in edges])
    b = np.array([(scores > e).sum() for e in edges])
    return a / (1 - alpha0) + b / alpha0


def test_loss_checker(capsys):
    assert check_algorithm1_loss(correct_loss)
    assert "all checks passed" in capsys.readouterr().out
    for fn, phrase in [(non_strict_below, "equal to an edge in a_j"), (swapped_denominators, "swapped"),
                       (summed_terms, "sum of the two terms")]:
        assert not check_algorithm1_loss(fn), fn.__name__
        assert phrase in capsys.readouterr().out, fn.__name__
    assert not check_algorithm1_loss(lambda scores, edges, alpha0: np.zeros(3))
    assert "one loss per edge" in capsys.readouterr().out


def stable(losses, epsilon, sensitivity):
    return softmax(-epsilon * losses / (2 * sensitivity))


def naive(losses, epsilon, sensitivity):
    weights = np.exp(-epsilon * losses / (2 * sensitivity))
    return weights / weights.sum()


def missing_two(losses, epsilon, sensitivity):
    return softmax(-epsilon * losses / sensitivity)


def wrong_sign(losses, epsilon, sensitivity):
    return softmax(epsilon * losses / (2 * sensitivity))


def test_probability_checker(capsys):
    assert check_stable_probabilities(stable)
    assert "all checks passed" in capsys.readouterr().out
    for fn, phrase in [(naive, "underflows"), (missing_two, "twice too large"),
                       (wrong_sign, "favour the largest loss")]:
        assert not check_stable_probabilities(fn), fn.__name__
        assert phrase in capsys.readouterr().out, fn.__name__


def bound(alpha0, n, epsilon, m):
    k = np.arange(1, n + 1)
    return (1 + np.minimum(1, (m - 1) * np.exp(-epsilon * (1 - alpha0) * (k - alpha0 * n))).sum()) / (n + 1)


def bound_over_n(alpha0, n, epsilon, m):
    return bound(alpha0, n, epsilon, m) * (n + 1) / n


def bound_without_rank_zero(alpha0, n, epsilon, m):
    return bound(alpha0, n, epsilon, m) - 1 / (n + 1)


def bound_with_m_edges(alpha0, n, epsilon, m):
    return bound(alpha0, n, epsilon, m + 1)


def bound_uncapped(alpha0, n, epsilon, m):
    k = np.arange(1, n + 1)
    return (1 + ((m - 1) * np.exp(-epsilon * (1 - alpha0) * (k - alpha0 * n))).sum()) / (n + 1)


def test_bound_checker(capsys):
    assert check_miscoverage_bound(bound)
    assert "all checks passed" in capsys.readouterr().out
    for fn, phrase in [(bound_over_n, "n + 1"), (bound_without_rank_zero, "k = 0"),
                       (bound_with_m_edges, "M - 1"), (bound_uncapped, "cap it at 1")]:
        assert not check_miscoverage_bound(fn), fn.__name__
        assert phrase in capsys.readouterr().out, fn.__name__


def _law(scores, edges, alpha0, epsilon, rounded=True, factor=1.0, log=True):
    values = edges[np.searchsorted(edges, scores)] if rounded else np.asarray(scores)
    a = np.array([(values < e).sum() for e in edges])
    b = np.array([(values > e).sum() for e in edges])
    logits = -factor * epsilon * np.maximum(alpha0 * a, (1 - alpha0) * b)
    out = log_softmax(logits)
    return out if log else np.exp(out)


def release(scores, edges, alpha0, epsilon):
    return _law(scores, edges, alpha0, epsilon)


def release_unrounded(scores, edges, alpha0, epsilon):
    return _law(scores, edges, alpha0, epsilon, rounded=False)


def release_half(scores, edges, alpha0, epsilon):
    return _law(scores, edges, alpha0, epsilon, factor=0.5)


def release_probabilities(scores, edges, alpha0, epsilon):
    return _law(scores, edges, alpha0, epsilon, log=False)


def release_log_of_underflow(scores, edges, alpha0, epsilon):
    with np.errstate(divide="ignore"):
        return np.log(np.exp(_law(scores, edges, alpha0, epsilon)))


def test_release_checker(capsys):
    assert check_release_log_probabilities(release)
    assert "all checks passed" in capsys.readouterr().out
    for fn, phrase in [(release_unrounded, "round every score up"), (release_half, "factor 1/2"),
                       (release_probabilities, "not probabilities"), (release_log_of_underflow, "-inf")]:
        assert not check_release_log_probabilities(fn), fn.__name__
        assert phrase in capsys.readouterr().out, fn.__name__
