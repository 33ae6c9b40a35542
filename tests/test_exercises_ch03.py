"""The chapter-3 checkers accept correct solutions and diagnose typical wrong ones."""

import numpy as np
from scipy.special import softmax

from dpcp_tutorial.exercises import check_algorithm1_loss, check_stable_probabilities


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
