"""The chapter-14 checkers accept correct solutions and diagnose typical wrong ones."""

import numpy as np

from dpcp_tutorial.course.exercises import check_leaked_quantile, check_partition_counts
from exercise_solutions import leaked_quantile, partition_counts


def test_partition_counts_checker(capsys):
    assert check_partition_counts(partition_counts)
    assert "all checks passed" in capsys.readouterr().out

    def non_strict(scores, edges):
        return np.stack([(scores[None, :] <= edges[:, None]).sum(axis=1),
                         (scores[None, :] >= edges[:, None]).sum(axis=1)])

    def fractions(scores, edges):
        return partition_counts(scores, edges) / len(scores)

    for wrong, phrase in [(non_strict, "strict"), (lambda s, e: partition_counts(s, e)[::-1], "wrong order"),
                          (fractions, "fractions")]:
        assert not check_partition_counts(wrong)
        assert phrase in capsys.readouterr().out


def test_leaked_quantile_checker(capsys):
    assert check_leaked_quantile(leaked_quantile)
    assert "all checks passed" in capsys.readouterr().out

    def lower(boundaries, sizes, beta):
        below = np.cumsum(sizes)
        return float(boundaries[int(np.argmax(below >= (1 - beta) * np.sum(sizes)))])

    def strict(boundaries, sizes, beta):
        below = np.cumsum(sizes)
        return float(boundaries[int(np.argmax(below > (1 - beta) * np.sum(sizes))) + 1])

    for wrong, phrase in [(lower, "lower boundary"), (strict, "already qualifies")]:
        assert not check_leaked_quantile(wrong)
        assert phrase in capsys.readouterr().out
