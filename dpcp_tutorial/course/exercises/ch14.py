"""Checkers for the coding exercises of chapter 14 (at scale)."""

from __future__ import annotations

import numpy as np

from ._common import Case, array, checker, number

__all__ = ["check_partition_counts", "check_leaked_quantile"]


def _strict_counts(scores: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.stack([(scores[None, :] < edges[:, None]).sum(axis=1),
                     (scores[None, :] > edges[:, None]).sum(axis=1)])


def _count_cases(rng: np.random.Generator) -> list[Case]:
    lattice = rng.integers(0, 11, size=300) / 10
    whole = np.concatenate([rng.uniform(size=500), lattice, [0.0, 1.0, 1.0]])
    return [
        Case("uniform scores, 10 equal bins", "N=200", scores=rng.uniform(size=200), edges=np.arange(1, 11) / 10),
        Case("scores on the edges", "N=300", scores=lattice, edges=np.arange(1, 11) / 10),
        Case("unequal edges", "N=803", scores=whole, edges=np.array([0.05, 0.2, 0.5, 0.55, 0.9, 1.0])),
        Case("an empty partition", "N=0", scores=np.zeros(0),
             edges=np.r_[np.unique(np.round(rng.uniform(0.05, 0.95, size=int(rng.integers(3, 12))), 2)), 1.0]),
        Case("the partitions of one data set add up", "4 partitions", scores=whole,
             parts=tuple(np.array_split(rng.permutation(whole), [0, 37, 38, 400])), edges=np.linspace(0.1, 1.0, 10)),
    ]


@checker(function="partition_counts", exercise="ex-14-counts", cases=_count_cases,
         implements=("dpcp_tutorial._counts.edge_histogram", "dpcp_tutorial._counts.below_above",
                     "dpcp_tutorial.scale.partition_counts"))
def check_partition_counts(ctx, case) -> None:
    """Check a reader's ``partition_counts(scores, edges) -> counts`` (chapter 14).

    ``counts`` must be an array of counts of shape ``(2, M)`` for the ``M`` public edges, computed from this
    partition alone (strict counts below and above each edge, :math:`\\#\\{R_i < e_j\\}` and
    :math:`\\#\\{R_i > e_j\\}`), whose sum over the partitions of a data set gives the same counts for the whole
    data set (from which the private quantile's :math:`a_j, b_j` follow). Cases include scores
    equal to edges, scores of exactly 0 and 1, unequal edges and an empty partition.
    """
    edges = case.edges
    spec = array((2, edges.size), what="two rows of counts")
    if case.has("parts"):
        total = np.zeros((2, edges.size))
        for part in case.parts:
            total += ctx.call(part, edges, returns=spec, inputs=True)
        if not np.array_equal(total, _strict_counts(case.scores, edges)):
            ctx.fail("summed over the partitions of one data set, your counts differ from the counts of the whole "
                     "data set")
        return
    scores = case.scores
    expected = _strict_counts(scores, edges)
    got = ctx.call(scores, edges, returns=spec, inputs=True)
    if np.array_equal(got, expected):
        return
    if scores.size == 0:
        ctx.stop("an empty partition holds no score, so every count is 0")
    le = np.stack([(scores[None, :] <= edges[:, None]).sum(axis=1), (scores[None, :] >= edges[:, None]).sum(axis=1)])
    if np.array_equal(got, expected[::-1]):
        ctx.stop("your two rows are in the wrong order")
    if np.array_equal(got, le):
        ctx.stop("a score equal to an edge is counted on one side; check which comparisons are strict")
    if np.allclose(got, expected / scores.size):
        ctx.stop("return counts, not fractions: fractions of different partitions do not add up")
    ctx.fail("the counts differ from the strict counts below and above each edge",
             f"{int(np.sum(got != expected))} of the {expected.size} entries differ")


def _leaked(boundaries: np.ndarray, sizes: np.ndarray, beta: float) -> float:
    below = np.cumsum(sizes)                    # #{s < b_k} for k = 1..P (the last one holds s = 1 too)
    k = int(np.argmax(below >= (1.0 - beta) * sizes.sum()))
    return float(boundaries[k + 1])


def _leak_cases(rng: np.random.Generator) -> list[Case]:
    total = 5 * int(rng.integers(10, 40))             # (1 - 0.2) N is an integer: the first j parts hold it
    j = int(rng.integers(1, 4))
    exact = np.r_[rng.multinomial(4 * total // 5, np.full(j, 1 / j)),
                  rng.multinomial(total // 5, np.full(4 - j, 1 / (4 - j)))]
    while True:
        inner = np.unique(np.round(rng.uniform(0.02, 0.98, size=4), 2))
        if inner.size == 4:
            break
    unequal = np.r_[0.0, inner, 1.0]
    some_empty = rng.integers(1, 100, size=5)
    some_empty[rng.choice(5, size=2, replace=False)] = 0
    return [
        Case("ten partitions", "beta=0.1", boundaries=np.linspace(0.0, 1.0, 11), sizes=rng.integers(0, 50, size=10),
             beta=0.1),
        Case("the level reached exactly at a boundary", "beta=0.2", boundaries=np.linspace(0.0, 1.0, 5),
             sizes=exact, beta=0.2),
        Case("unequal partitions, some empty", "beta=0.05", boundaries=unequal, sizes=some_empty, beta=0.05),
        Case("a hundred partitions", "beta=0.3", boundaries=np.linspace(0.0, 1.0, 101),
             sizes=rng.integers(0, 9, size=100), beta=0.3),
    ]


@checker(function="leaked_quantile", exercise="ex-14-leak", cases=_leak_cases)
def check_leaked_quantile(ctx, case) -> None:
    """Check a reader's ``leaked_quantile(boundaries, sizes, beta) -> float`` (chapter 14).

    Partition ``i`` holds the scores in ``[b_i, b_{i+1})`` (the last one also 1);
    from the public partition sizes alone the function must return the smallest
    boundary ``b_k`` with at least :math:`(1-\\beta)N` scores below it. Cases
    include empty partitions and a level reached exactly at a boundary.
    """
    boundaries, sizes, beta = case.boundaries, case.sizes, case.beta
    expected = _leaked(boundaries, sizes, beta)
    got = ctx.call(boundaries, sizes, beta, returns=number(), inputs=True)
    if got == expected:
        return
    below = np.cumsum(sizes)
    strict = float(boundaries[int(np.argmax(below > (1.0 - beta) * sizes.sum())) + 1])
    left = float(boundaries[int(np.argmax(below >= (1.0 - beta) * sizes.sum()))])
    detail = f"expected {expected}, got {got}"
    if got == left and left != expected:
        ctx.stop("you returned the lower boundary of the partition where the level is reached; the scores below a "
                 "boundary are those of the partitions to its left", detail)
    if got == strict and strict != expected:
        ctx.stop("when the count reaches the level exactly at a boundary, that boundary already qualifies", detail)
    ctx.fail("expected the smallest boundary with at least (1 - beta) N scores below it", detail)
