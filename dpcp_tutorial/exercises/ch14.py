"""Checkers for the coding exercises of chapter 14 (at scale)."""

from __future__ import annotations

import numpy as np

from ._common import array, checker, number

__all__ = ["check_partition_counts", "check_leaked_quantile"]


def _strict_counts(scores: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.stack([(scores[None, :] < edges[:, None]).sum(axis=1),
                     (scores[None, :] > edges[:, None]).sum(axis=1)])


@checker(function="partition_counts", exercise="ex-14-counts")
def check_partition_counts(ctx) -> None:
    """Check a reader's ``partition_counts(scores, edges) -> counts`` (chapter 14).

    ``counts`` must be an array of shape ``(2, L)`` for the ``L`` edges, computed
    from this partition alone, whose sum over the partitions of a data set gives
    the counts of Algorithm 1 on the whole data set. Hidden cases include scores
    equal to edges, scores of exactly 0 and 1, unequal edges and an empty partition.
    """
    rng = np.random.default_rng(1414)
    lattice = rng.integers(0, 11, size=300) / 10
    whole = np.concatenate([rng.uniform(size=500), lattice, [0.0, 1.0, 1.0]])
    cases = [
        ("uniform scores, 10 equal bins", rng.uniform(size=200), np.arange(1, 11) / 10),
        ("scores on the edges", lattice, np.arange(1, 11) / 10),
        ("unequal edges", whole, np.array([0.05, 0.2, 0.5, 0.55, 0.9, 1.0])),
    ]
    for label, scores, edges in cases:
        expected = _strict_counts(scores, edges)
        got = ctx.call(scores.copy(), edges.copy(), returns=array((2, edges.size), what="two rows of counts"),
                       case=label)
        if np.array_equal(got, expected):
            continue
        le = np.stack([(scores[None, :] <= edges[:, None]).sum(axis=1),
                       (scores[None, :] >= edges[:, None]).sum(axis=1)])
        if np.array_equal(got, expected[::-1]):
            ctx.stop(f"{label}: your two rows are in the wrong order")
        if np.array_equal(got, le):
            ctx.stop(f"{label}: a score equal to an edge is counted on one side; check which comparisons are "
                     "strict")
        if np.allclose(got, expected / scores.size):
            ctx.stop(f"{label}: return counts, not fractions: fractions of different partitions do not add up")
        ctx.stop(f"{label}: the counts differ from the expected ones at "
                 f"{int(np.sum(got != expected))} of the {expected.size} entries")
    got = ctx.call(np.zeros(0), np.arange(1, 6) / 5, returns=array((2, 5), what="two rows of counts"),
                   case="an empty partition")
    if np.any(got != 0):
        ctx.stop("an empty partition: it holds no score, so every count is 0")
    parts = np.array_split(rng.permutation(whole), [0, 37, 38, 400])
    edges = np.linspace(0.1, 1.0, 10)
    total = np.zeros((2, edges.size))
    for part in parts:
        total += ctx.call(part.copy(), edges.copy(), returns=array((2, edges.size), what="two rows of counts"),
                          case=f"a partition of {part.size} scores")
    if not np.array_equal(total, _strict_counts(whole, edges)):
        ctx.fail("summed over the partitions of one data set, your counts differ from the counts of the whole "
                 "data set")


def _leaked(boundaries: np.ndarray, sizes: np.ndarray, beta: float) -> float:
    below = np.cumsum(sizes)                    # #{s < b_k} for k = 1..P (the last one holds s = 1 too)
    k = int(np.argmax(below >= (1.0 - beta) * sizes.sum()))
    return float(boundaries[k + 1])


@checker(function="leaked_quantile", exercise="ex-14-leak")
def check_leaked_quantile(ctx) -> None:
    """Check a reader's ``leaked_quantile(boundaries, sizes, beta) -> float`` (chapter 14).

    Partition ``i`` holds the scores in ``[b_i, b_{i+1})`` (the last one also 1);
    from the public partition sizes alone the function must return the smallest
    boundary ``b_k`` with at least :math:`(1-\\beta)N` scores below it. Hidden
    cases include empty partitions and a level reached exactly at a boundary.
    """
    rng = np.random.default_rng(1415)
    cases = [
        (np.linspace(0.0, 1.0, 11), rng.integers(0, 50, size=10), 0.1),
        (np.linspace(0.0, 1.0, 5), np.array([10, 0, 80, 10]), 0.2),          # exactly at a boundary
        (np.array([0.0, 0.1, 0.15, 0.5, 0.7, 1.0]), np.array([5, 0, 0, 90, 5]), 0.05),
        (np.linspace(0.0, 1.0, 101), rng.integers(0, 9, size=100), 0.3),
    ]
    for boundaries, sizes, beta in cases:
        expected = _leaked(boundaries, sizes, beta)
        got = ctx.call(boundaries.copy(), sizes.copy(), beta, returns=number(),
                       case=f"{sizes.size} partitions, beta={beta}")
        if got == expected:
            continue
        below = np.cumsum(sizes)
        strict = float(boundaries[int(np.argmax(below > (1.0 - beta) * sizes.sum())) + 1])
        left = float(boundaries[int(np.argmax(below >= (1.0 - beta) * sizes.sum()))])
        if got == left and left != expected:
            ctx.stop(f"{sizes.size} partitions, beta={beta}: you returned the lower boundary of the partition "
                     "where the level is reached; the scores below a boundary are those of the partitions "
                     "to its left")
        if got == strict and strict != expected:
            ctx.stop(f"{sizes.size} partitions, beta={beta}: when the count reaches the level exactly at a "
                     "boundary, that boundary already qualifies")
        ctx.stop(f"{sizes.size} partitions, beta={beta}: expected a boundary with at least (1 - beta) N scores "
                 f"below it, the smallest one; got {got}")
