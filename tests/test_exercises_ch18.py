"""The chapter-18 checkers accept correct solutions and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.course.exercises import check_first_passing, check_stop_probability, check_unbounded_add_remove_loss
from exercise_solutions import add_remove_loss, first_passing, stop_probability


def test_first_passing_checker(capsys):
    assert check_first_passing(first_passing)
    assert "all checks passed" in capsys.readouterr().out

    def strict(counts, target, rho, nu):
        passed = np.asarray(counts) + np.asarray(nu) < target + rho
        return int(np.argmax(passed)) if passed.any() else len(counts)

    def exact(counts, target, rho, nu):
        passed = np.asarray(counts) <= target
        return int(np.argmax(passed)) if passed.any() else len(counts)

    def last(counts, target, rho, nu):
        passed = np.flatnonzero(np.asarray(counts) + np.asarray(nu) <= target + rho)
        return int(passed[-1]) if passed.size else len(counts)

    def minus_one(counts, target, rho, nu):
        out = first_passing(counts, target, rho, nu)
        return -1 if out == len(counts) else out

    for wrong, phrase in [(strict, "<=, not <"), (exact, "noisy count"), (last, "first candidate"),
                          (minus_one, "len(counts_above)")]:
        assert not check_first_passing(wrong)
        assert phrase in capsys.readouterr().out


def test_add_remove_loss_checker(capsys):
    assert check_unbounded_add_remove_loss(add_remove_loss)
    assert "all checks passed" in capsys.readouterr().out

    def always_epsilon(epsilon, share, m_n, m_n1):
        return epsilon

    def swapped(epsilon, share, m_n, m_n1):
        d = m_n1 - m_n
        return share * epsilon + (1 - share) * epsilon * max(abs(d), abs(1 - d))

    def one_direction(epsilon, share, m_n, m_n1):
        return (1 - share) * epsilon + share * epsilon * abs(m_n1 - m_n)

    for wrong, phrase in [(always_epsilon, "moving target"), (swapped, "threshold's noise"),
                          (one_direction, "both directions")]:
        assert not check_unbounded_add_remove_loss(wrong)
        assert phrase in capsys.readouterr().out


def test_stop_probability_checker(capsys):
    assert check_stop_probability(stop_probability)
    assert "all checks passed" in capsys.readouterr().out

    def no_rho(x, eps1, eps2, steps):
        b2 = 1 / eps2
        f = 0.5 * math.exp(x / b2) if x < 0 else 1 - 0.5 * math.exp(-x / b2)
        return 1 - (1 - f) ** steps

    def swapped(x, eps1, eps2, steps):
        return stop_probability(x, eps2, eps1, steps)

    def union(x, eps1, eps2, steps):
        return min(1.0, steps * stop_probability(x, eps1, eps2, 1))

    for wrong, phrase in [(no_rho, "shared by all"), (swapped, "swapped"), (union, "union bound")]:
        assert not check_stop_probability(wrong)
        assert phrase in capsys.readouterr().out
