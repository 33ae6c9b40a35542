"""The chapter-13 checkers accept correct solutions and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.course.exercises import check_clipped_mean, check_tukey_safe_attackers


def correct_clip(updates, clip_norm):
    norms = np.linalg.norm(updates, axis=1, keepdims=True)
    return (updates * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))).mean(axis=0), 2 * clip_norm / len(updates)


def coordinate_clip(updates, clip_norm):
    return np.clip(updates, -clip_norm, clip_norm).mean(axis=0), 2 * clip_norm / len(updates)


def clip_after_mean(updates, clip_norm):
    m = updates.mean(axis=0)
    return m * min(1.0, clip_norm / np.linalg.norm(m)), 2 * clip_norm / len(updates)


def half_sensitivity(updates, clip_norm):
    return correct_clip(updates, clip_norm)[0], clip_norm / len(updates)


def sum_sensitivity(updates, clip_norm):
    return correct_clip(updates, clip_norm)[0], 2 * clip_norm


def in_place(updates, clip_norm):
    updates *= np.minimum(1.0, clip_norm / np.maximum(np.linalg.norm(updates, axis=1, keepdims=True), 1e-300))
    return updates.mean(axis=0), 2 * clip_norm / len(updates)


def test_clip_checker_accepts_correct(capsys):
    assert check_clipped_mean(correct_clip)
    assert "all checks passed" in capsys.readouterr().out


def test_clip_checker_diagnoses_mistakes(capsys):
    for wrong, phrase in [(coordinate_clip, "each coordinate"), (clip_after_mean, "after averaging"),
                          (half_sensitivity, "too small"), (sum_sensitivity, "sensitivity of the sum"),
                          (in_place, "in place"), (lambda u, c: correct_clip(u, c)[0], "pair")]:
        assert not check_clipped_mean(wrong)
        assert phrase in capsys.readouterr().out


def test_safe_attackers_checker(capsys):
    assert check_tukey_safe_attackers(lambda n, d: -(-n // (d + 1)) - 1)
    assert "all checks passed" in capsys.readouterr().out
    for wrong, phrase in [(lambda n, d: n // (d + 1) - 1, "floor"), (lambda n, d: -(-n // (d + 1)), "tie"),
                          (lambda n, d: math.ceil(n / 3) - 1, "1/3"),
                          (lambda n, d: math.ceil(n / (d + 1)) - 1, "integer arithmetic"),
                          (lambda n, d: "two", "expected an integer")]:
        assert not check_tukey_safe_attackers(wrong)
        assert phrase in capsys.readouterr().out
