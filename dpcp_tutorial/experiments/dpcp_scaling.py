"""Run time of Algorithm 1's loss: a loop over the edges against sort + searchsorted (chapter 8).

The DPCP write-up's troubleshooting section blames slowness at large ``N`` and ``M`` on
computing each :math:`w_j` by a pass over all scores, :math:`O(NM)`. The
package's private quantile (the tight default, whose loss needs the same two
counts per edge) sorts once and counts with two ``searchsorted`` calls,
:math:`O(N\\log N + M\\log N)`. This runner times the write-up's loop against
:func:`~dpcp_tutorial.quantile.private_quantile` (best of a few runs) on uniform
scores; the chapter plots the committed result.
"""

from __future__ import annotations


import numpy as np
from tqdm import tqdm

from ._timing import best_time
from ..quantile import private_quantile, quantile_edges

DESCRIPTION = "time of the write-up's O(NM) loop vs the package's sort + searchsorted private quantile (chapter 8)"

GRID = {"ns": [1000, 10000, 100000, 1000000], "bins": [100, 1000, 10000]}
MAX_LOOP_WORK = 2e9   # skip loop runs with N * M above this (they take minutes)


def loop_quantile(scores, beta: float, epsilon: float, bins: int, rng) -> float:
    """Algorithm 1 as the DPCP write-up describes it: one pass over the scores per edge (:math:`O(NM)`), log-space sampling."""
    edges = quantile_edges(bins)
    n = scores.size
    alpha0 = beta - 2.0 / (n * epsilon)
    loss = np.empty(edges.size)
    for j, e in enumerate(edges):
        loss[j] = max(np.sum(scores < e) / (1 - alpha0), np.sum(scores > e) / alpha0)
    logits = -epsilon * min(alpha0, 1 - alpha0) / 2 * (loss - loss.min())
    return float(edges[np.argmax(logits + rng.gumbel(size=edges.size))])


def add_arguments(parser) -> None:
    parser.add_argument("--repeat", type=int, default=3, help="timing rounds (the best is kept)")
    parser.add_argument("--seed", type=int, default=20260605)


def run(args) -> dict:
    rng = np.random.default_rng(args.seed)
    jobs = [(n, m) for n in GRID["ns"] for m in GRID["bins"]]
    results = []
    for n, m in tqdm(jobs, desc="dpcp_scaling", disable=getattr(args, "quiet", False)):
        scores = rng.uniform(size=n)
        row = {"n": n, "bins": m,
               "package_seconds": best_time(lambda: private_quantile(scores, 0.05, 1.0, bins=m, rng=rng),
                                             args.repeat)}
        if n * m <= MAX_LOOP_WORK:
            row["loop_seconds"] = best_time(lambda: loop_quantile(scores, 0.05, 1.0, m, rng), args.repeat)
        results.append(row)
    return {"grid": GRID, "repeat": args.repeat, "seed": args.seed, "results": results}
