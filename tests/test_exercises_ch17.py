"""The chapter-17 checkers accept correct solutions and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.course.exercises import (
    check_bounded_normalized_score,
    check_mondrian_thresholds,
    check_pipeline_privacy,
)
from exercise_solutions import bounded_normalized_score, mondrian_thresholds, pipeline_privacy


def test_mondrian_thresholds_checker(capsys):
    assert check_mondrian_thresholds(mondrian_thresholds)
    assert "all checks passed" in capsys.readouterr().out

    def pooled(scores, y, n_classes, alpha):
        k = math.ceil((scores.size + 1) * (1 - alpha))
        return np.full(n_classes, np.sort(scores)[k - 1])

    def naive_rank(scores, y, n_classes, alpha):
        out = np.full(n_classes, np.inf)
        for c in range(n_classes):
            s = np.sort(scores[y == c])
            r = math.ceil(s.size * (1 - alpha))
            if 1 <= r <= s.size:
                out[c] = s[r - 1]
        return out

    def capped(scores, y, n_classes, alpha):
        out = mondrian_thresholds(scores, y, n_classes, alpha)
        return np.where(np.isinf(out), 1.0, out)

    for wrong, phrase in [(pooled, "same threshold"), (naive_rank, "n + 1"), (capped, "np.inf")]:
        assert not check_mondrian_thresholds(wrong)
        assert phrase in capsys.readouterr().out


def test_bounded_normalized_score_checker(capsys):
    assert check_bounded_normalized_score(bounded_normalized_score)
    assert "all checks passed" in capsys.readouterr().out

    def unclipped(y, mu, g, sigma_min, score_bound):
        return np.abs(y - mu) / (score_bound * np.maximum(g, sigma_min))

    def no_bound(y, mu, g, sigma_min, score_bound):
        return np.minimum(np.abs(y - mu) / np.maximum(g, sigma_min), 1.0)

    def floor_after(y, mu, g, sigma_min, score_bound):
        return np.minimum(np.abs(y - mu) / (score_bound * (np.abs(g) + sigma_min)), 1.0)

    for wrong, phrase in [(unclipped, "outside [0, 1]"), (no_bound, "score bound"), (floor_after, "differ")]:
        assert not check_bounded_normalized_score(wrong)
        assert phrase in capsys.readouterr().out


def test_pipeline_privacy_checker(capsys):
    assert check_pipeline_privacy(pipeline_privacy)
    assert "all checks passed" in capsys.readouterr().out

    def same_relation(parts, disjoint):
        eps_ar, d_ar, _, _ = pipeline_privacy(parts, disjoint)
        return eps_ar, d_ar, eps_ar, d_ar

    def group_after(parts, disjoint):
        eps_ar, d_ar, eps_ro, d_ro = pipeline_privacy(parts, disjoint)
        if not disjoint:
            eps_ro, d_ro = 2 * eps_ar, (1 + math.exp(eps_ar)) * d_ar
        return eps_ar, d_ar, eps_ro, d_ro

    def always_sum(parts, disjoint):
        return pipeline_privacy(parts, False)

    for wrong, phrase in [(same_relation, "not automatically private"), (group_after, "composed pipeline"),
                          (always_sum, "other value of disjoint")]:
        assert not check_pipeline_privacy(wrong)
        assert phrase in capsys.readouterr().out
