"""Checkers for the coding exercises of chapter 4 (private split conformal prediction)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ...private_split import pps_corrected_level, pps_grid, pps_round_up
from ...quantile import private_quantile_level, private_quantile_probabilities
from . import _stats
from ._common import Case, Rng, array, binary_array, checker, integer, number

__all__ = ["check_pps_round_up", "check_pps_level", "check_coin_split", "check_subsample_or_pad",
           "check_private_split_assembly"]


def _diagnose_round_up(scores: np.ndarray, m: int, got: np.ndarray) -> tuple[str, str]:
    edges = pps_grid(m)
    expected = pps_round_up(scores, m)
    index = np.clip(np.searchsorted(edges, scores, side="left"), 0, m - 1)
    nearest = edges[np.argmin(np.abs(scores[:, None] - edges[None, :]), axis=1)]
    down = edges[np.maximum(np.searchsorted(edges, scores, side="right") - 1, 0)]
    bad = int(np.flatnonzero(got != expected)[0])
    detail = f"for m={m}, score {scores[bad]!r} should round to {expected[bad]!r}, got {got[bad]!r}"
    if np.array_equal(got, edges[index]):
        return ("a score exactly on an edge must move to the *next* edge (the smallest edge strictly above it); "
                "you kept it in place", detail)
    if np.array_equal(got, nearest):
        return "you round to the nearest edge; round *up*, to the smallest edge strictly above the score", detail
    if np.array_equal(got, down):
        return "you round down; the method rounds up, which can only make the set larger (conservative)", detail
    if np.any(got > 1):
        return "the rounded score must be capped at 1 (the top edge)", detail
    if not np.all(np.isin(got, edges)):
        return "outputs must be grid edges k/(m-1), k = 0..m-1 (m edges, both 0 and 1 included)", detail
    return "some scores are rounded to the wrong edge", detail


def _round_up_cases(rng: np.random.Generator) -> list[Case]:
    m = int(rng.choice([5, 9, 11]))
    return [
        Case("interior scores", "m=11, N=200", scores=rng.uniform(size=200), m=11),
        Case("scores exactly on the edges, 0 and 1", f"m={m}", scores=rng.permutation(np.arange(m) / (m - 1)), m=m),
        Case("two edges only", "m=2", scores=np.array([0.0, 1.0, 0.999999, float(rng.uniform())]), m=2),
        Case("a fine grid", "m=10001", scores=rng.uniform(size=1000), m=10_001),
    ]


@checker(function="my_round_up", exercise="ex-04-code", cases=_round_up_cases,
         implements=("dpcp_tutorial.private_split.pps_round_up", "dpcp_tutorial.private_split._round_up_index"))
def check_pps_round_up(ctx, case) -> None:
    """Check a reader's ``my_round_up(scores, m) -> array`` rounding scores up to the grid ``k/(m-1)`` (chapter 4).

    Expected: the smallest grid edge strictly above each score, capped at 1. Cases: interior scores, scores
    exactly on edges, 0 and 1, two edges and a fine grid.
    """
    got = ctx.call(case.scores, case.m, returns=array(case.scores.shape, what="one rounded score per score"),
                   inputs=True)
    if not np.array_equal(got, pps_round_up(case.scores, case.m)):
        ctx.fail(*_diagnose_round_up(case.scores, case.m, got))


def _level_variants(n, alpha, eps, m, gamma) -> dict[str, float]:
    log_term = 2.0 / (eps * n) * math.log(m / (gamma * alpha))
    return {
        "the finite-sample part uses (1 - alpha) instead of (n+1)(1-alpha)/n":
            (1 - alpha) / (1 - gamma * alpha) + log_term,
        "the finite-sample part is not divided by (1 - gamma*alpha)": (n + 1) * (1 - alpha) / n + log_term,
        "the privacy term uses log(m/alpha) without gamma": (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha))
        + 2.0 / (eps * n) * math.log(m / alpha),
        "the privacy term has 1/(eps n) instead of 2/(eps n)": (n + 1) * (1 - alpha) / (n * (1 - gamma * alpha))
        + log_term / 2,
        "you capped qtilde at 1 - 1e-12; return the raw value (>= 1 means the trivial set)":
            min((n + 1) * (1 - alpha) / (n * (1 - gamma * alpha)) + log_term, 1 - 1e-12),
        "the finite-sample part uses n/(n+1) instead of (n+1)/n":
            n * (1 - alpha) / ((n + 1) * (1 - gamma * alpha)) + log_term,
    }


def _level_cases(rng: np.random.Generator) -> list[Case]:
    n = int(rng.integers(150, 400))
    large = (int(rng.integers(3000, 8000)), 0.1, float(rng.uniform(5.0, 10.0)), int(rng.integers(20000, 40000)),
             float(rng.uniform(2e-4, 1e-3)))
    typical = (int(rng.integers(800, 1500)), float(rng.choice([0.05, 0.1, 0.2])), float(rng.uniform(0.5, 2.0)),
               int(rng.integers(10000, 50000)), float(rng.uniform(0.005, 0.05)))
    while True:   # small n and epsilon: the corrected level exceeds 1
        over = (int(rng.integers(50, 150)), 0.1, float(rng.uniform(0.5, 1.5)), 10**4, float(rng.uniform(0.1, 0.3)))
        if pps_corrected_level(*over) > 1.0:
            break
    tiny = (int(rng.integers(10, 30)), 0.2, float(rng.uniform(30.0, 80.0)), int(rng.integers(5, 20)), 0.05)
    return [
        Case("a large n and epsilon", f"n={large[0]}, eps={large[2]:.3g}", args=large),
        Case("a typical case", f"n={typical[0]}, eps={typical[2]:.3g}", args=typical),
        Case("small n: the corrected level exceeds 1", f"n={over[0]}, eps={over[2]:.3g}", args=over),
        Case("another level", f"n={n}, alpha=0.05", args=(n, 0.05, 2.0, 500, 0.3)),
        Case("small n where (n+1)/n matters", f"n={tiny[0]}", args=tiny),
    ]


@checker(function="my_qtilde", exercise="ex-04-code", cases=_level_cases,
         implements=("dpcp_tutorial.private_split.pps_corrected_level",))
def check_pps_level(ctx, case) -> None:
    """Check a reader's ``my_qtilde(n, alpha, epsilon, m, gamma) -> float``: Angelopoulos et al.'s corrected level (chapter 4, *Reproducing the sources*).

    Expected: :math:`\\tilde q = (n+1)(1-\\alpha)/(n(1-\\gamma\\alpha)) + 2\\log(m/(\\gamma\\alpha))/(\\varepsilon n)`,
    uncapped. Five cases, one where the level exceeds 1 and one at small n.
    """
    got = ctx.call(*case.args, returns=number(allow_inf=True))
    expected = pps_corrected_level(*case.args)
    if not math.isclose(got, expected, rel_tol=1e-9):
        hint = next((msg for msg, value in _level_variants(*case.args).items()
                     if math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, expected, rel_tol=1e-9)),
                    "your level differs from the corrected level of the chapter")
        ctx.fail(hint, f"expected {expected:.6f}, got {got:.6f}")


# ----------------------------------------------------------------------------------------------------------
# ex-04-coin: each record's part decided by a coin of its own


def _coin_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case("an even split", "share=0.5", n=int(rng.integers(300, 700)), share=0.5,
             seed=int(rng.integers(2**31)), draws=200),
        Case("a smaller calibration share", "", n=int(rng.integers(900, 1500)),
             share=round(float(rng.uniform(0.2, 0.4)), 3), seed=int(rng.integers(2**31)), draws=100),
        Case("a few records", "", n=int(rng.integers(9, 25)), share=round(float(rng.uniform(0.55, 0.8)), 3),
             seed=int(rng.integers(2**31)), draws=2000),
    ]


@checker(function="my_coin_split", exercise="ex-04-coin", cases=_coin_cases,
         implements=())
def check_coin_split(ctx, case) -> None:
    """Check a reader's ``my_coin_split(n_records, share, rng) -> array`` (chapter 4).

    Expected: one independent coin per record, drawn from ``rng`` only: entry ``i`` is 1 (calibration) with
    probability ``share`` and 0 (training) otherwise. The same seed gives the same split; the number of
    calibration records is Binomial(n, share), not fixed; neither the position of a record nor numpy's
    global state enters.
    """
    n, share = case.n, case.share
    spec = binary_array((n,), what="one 0/1 entry per record (1: calibration)")
    first = ctx.call(n, share, Rng(case.seed), returns=spec, rng_state=True)
    again = ctx.call(n, share, Rng(case.seed), returns=spec)
    if not np.array_equal(first, again):
        ctx.stop("the same seed gave two different splits: draw every coin from the rng argument")
    draws = np.array(ctx.call(n, share, Rng(case.seed + 1), returns=spec, repeat=case.draws))
    if np.all(draws == draws[0]):
        ctx.stop("every call returned the same split: a split by row position (or any fixed pattern) is not a "
                 "coin per record; draw the coins from rng")
    counts = draws.sum(axis=1)
    if np.all(counts == counts[0]):
        ctx.stop("every split sends exactly the same number of records to calibration: that is a shuffle cut at "
                 "a fixed size, where one record added moves others between the parts; flip one coin per "
                 "record (the count is then Binomial(n, share))")
    total = draws.size
    p_hat = draws.mean()
    if abs(p_hat - share) > _stats.Z * math.sqrt(share * (1 - share) / total):
        if abs(p_hat - (1 - share)) <= _stats.Z * math.sqrt(share * (1 - share) / total):
            ctx.stop("1 must mark the calibration records, chosen with probability share; yours marks the "
                     "training records")
        ctx.stop("the share of records sent to calibration is not share: a record goes to calibration with "
                 "probability share", f"expected about {share:.3f}, got {p_hat:.3f}")
    # independent coins: the counts have the binomial variance n share (1 - share)
    statistic = float(np.sum((counts - n * share) ** 2) / (n * share * (1 - share)))
    p_value = 2 * min(stats.chi2.cdf(statistic, case.draws), stats.chi2.sf(statistic, case.draws))
    if p_value < _stats.P_MIN:
        ctx.stop("the number of calibration records does not vary like Binomial(n, share): the coins of the "
                 "records must be independent (one coin each, not one coin for a block of records)")
    half = n // 2
    front, back = draws[:, :half].mean(), draws[:, half:].mean()
    spread = _stats.Z * math.sqrt(share * (1 - share) * (1 / (case.draws * half) + 1 / (case.draws * (n - half))))
    if abs(front - back) > spread:
        ctx.fail("records early in the data go to calibration more (or less) often than late ones: a record's "
                 "part must not depend on its position")


# ----------------------------------------------------------------------------------------------------------
# ex-04-pad: the public calibration size n


def _pad_cases(rng: np.random.Generator) -> list[Case]:
    n_big = int(rng.integers(12, 20))
    n_small = int(rng.integers(30, 60))
    return [
        Case("more scores than n: a uniform subset", "", scores=rng.beta(2, 5, size=n_big), n=int(rng.integers(4, 9)),
             seed=int(rng.integers(2**31)), draws=3000),
        Case("fewer scores than n: padding", "", scores=rng.uniform(0.05, 0.6, size=n_small),
             n=n_small + int(rng.integers(3, 12)), seed=int(rng.integers(2**31)), draws=1),
        Case("exactly n scores", "", scores=rng.uniform(size=int(rng.integers(10, 30))), n=None,
             seed=int(rng.integers(2**31)), draws=1),
        Case("no score at all", "", scores=np.zeros(0), n=int(rng.integers(3, 400)), seed=int(rng.integers(2**31)),
             draws=1),
    ]


@checker(function="my_subsample_or_pad", exercise="ex-04-pad", cases=_pad_cases,
         implements=("dpcp_tutorial._counts.subsample_or_pad",))
def check_subsample_or_pad(ctx, case) -> None:
    """Check a reader's ``my_subsample_or_pad(scores, n, rng) -> array`` (chapter 4).

    Expected: exactly ``n`` scores: the scores themselves when there are ``n``; all of them and ``n - len``
    pads equal to 1 (the largest possible score, a public value) when there are fewer; a uniform subset of
    ``n`` distinct records, drawn from ``rng``, when there are more. The same seed gives the same output.
    """
    scores = case.scores
    n = scores.size if case.n is None else case.n
    spec = array((n,), what=f"exactly n = {n} scores")
    got = ctx.call(scores, n, Rng(case.seed), returns=spec, rng_state=True, inputs=True)
    if scores.size == n:
        if not np.array_equal(np.sort(got), np.sort(scores)):
            ctx.fail("with exactly n scores, return them unchanged")
        return
    if scores.size < n:
        k = n - scores.size
        if np.array_equal(np.sort(got), np.sort(np.concatenate([scores, np.ones(k)]))):
            return
        if scores.size and np.array_equal(np.sort(got), np.sort(np.concatenate([scores, np.full(k, scores.max())]))):
            ctx.stop("you pad with the largest score of the data: that value is private (one record moves it); "
                     "pad with the public maximum 1")
        rest = list(np.sort(got))
        for value in scores:
            if value not in rest:
                ctx.stop("with fewer than n scores, keep every score (once each) and add pads")
            rest.remove(value)
        ctx.stop("pad with the largest possible score, 1: a pad then never lowers the threshold, which keeps "
                 "the coverage proof; 0 or another value does not")
    again = ctx.call(scores, n, Rng(case.seed), returns=spec)
    if not np.array_equal(got, again):
        ctx.stop("the same seed gave two different subsets: draw the subset from the rng argument")
    draws = np.array(ctx.call(scores, n, Rng(case.seed + 1), returns=spec, repeat=case.draws))
    index = {float(s): i for i, s in enumerate(scores)}
    if not all(float(v) in index for v in draws.ravel()):
        ctx.stop("a subsample must consist of the given scores")
    picked = np.vectorize(index.get)(draws)
    if any(np.unique(row).size < n for row in picked):
        ctx.stop("some score was drawn twice: draw n *distinct* records (without replacement)")
    if np.all(picked == picked[0]):
        ctx.stop("every call returned the same subset (the first, the largest or the smallest n?): draw a uniform "
                 "subset with rng")
    freq = np.bincount(picked.ravel(), minlength=scores.size) / case.draws
    p = n / scores.size
    limit = _stats.Z * math.sqrt(p * (1 - p) / case.draws)
    if np.max(np.abs(freq - p)) > limit:
        ctx.fail("some records are chosen more often than others: every score must be in the subset with the "
                 "same probability n / len(scores) (a uniform subset, e.g. rng.choice(..., replace=False))")


# ----------------------------------------------------------------------------------------------------------
# ex-04-assemble: private split conformal prediction from the reader's own pieces (chapter 3's tight quantile
# on held-out calibration scores)

_ASSEMBLY = ("my_round_up_to_edges", "my_utilities", "my_log_probabilities", "my_gumbel_max", "my_private_threshold")


def _edges(m: int) -> np.ndarray:
    return np.arange(1, m + 1, dtype=float) / m


def _round_up(scores: np.ndarray, m: int) -> np.ndarray:
    edges = _edges(m)
    return edges[np.minimum(np.searchsorted(edges, scores, side="left"), m - 1)]


def _counts(scores: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """a_j = #{R <= e_(j-1)} (a_1 = 0) and b_j = #{R > e_j}."""
    through = np.searchsorted(np.sort(scores), _edges(m), side="right")
    return np.concatenate(([0], through[:-1])), scores.size - through


def _utilities(scores: np.ndarray, m: int, alpha0: float) -> np.ndarray:
    a, b = _counts(scores, m)
    return np.maximum(alpha0 * a, (1.0 - alpha0) * b)


def _law(scores: np.ndarray, beta: float, epsilon: float, m: int, log: bool = False) -> np.ndarray:
    """The exact law of the tight private quantile (the package's, which the reader's pieces must rebuild)."""
    return private_quantile_probabilities(scores, beta, epsilon, bins=m, log=log)[1]


def _assembly_cases(rng: np.random.Generator) -> list[Case]:
    m_edge = int(rng.choice([50, 100]))    # grids where ceil(e_j * M) != j for some edges (floating point)
    on_edges = np.concatenate([_edges(m_edge), _edges(m_edge)[rng.integers(0, m_edge, size=60)], [0.0, 1.0, 0.0]])
    rng.shuffle(on_edges)
    m_in = int(rng.choice([7, 50, 1000]))
    lattice = rng.integers(0, 21, size=80) / 20
    a0 = float(rng.uniform(0.05, 0.3))
    n_big, m_big = 2000, 1000
    big = rng.beta(2, 5, size=n_big)
    a0_big = private_quantile_level(0.1, n_big, 1.0, bins=m_big)
    small = rng.beta(2, 3, size=30)
    huge = rng.beta(2, 5, size=5000)
    law_small = _law(small, 0.2, 1.0, 10, log=True)
    law_many = _law(rng.beta(2, 5, size=200), 0.1, 1.0, 200)
    with np.errstate(divide="ignore"):
        law_gumbel = np.log(np.array([0.3, 0.25, 0.2, 0.15, 0.1, 0.0]))
    perm = rng.permutation(6)
    return [
        Case("rounding scores that lie exactly on edges, 0 and 1", f"M={m_edge}", function=_ASSEMBLY[0],
             scores=on_edges, m=m_edge),
        Case("rounding scores between the edges", f"M={m_in}, N=500", function=_ASSEMBLY[0],
             scores=rng.uniform(size=500), m=m_in),
        Case("utilities with ties and scores on the edges", f"M=20, N=80, alpha0={a0:.3f}", function=_ASSEMBLY[1],
             scores=lattice, m=20, alpha0=a0),
        Case("utilities on a fine grid", f"M={m_big}, N={n_big}", function=_ASSEMBLY[1], scores=big, m=m_big,
             alpha0=a0_big),
        Case("log-probabilities of a small case", "N=30, M=10, beta=0.2, epsilon=1", function=_ASSEMBLY[2],
             scores=small, beta=0.2, epsilon=1.0, m=10, expected=law_small),
        Case("log-probabilities where every weight exp(-epsilon u_j) underflows", "N=5000, M=1000, epsilon=50",
             function=_ASSEMBLY[2], scores=huge, beta=0.1, epsilon=50.0, m=1000,
             expected=_law(huge, 0.1, 50.0, 1000, log=True)),
        Case("Gumbel-max: the law of the draws, with an impossible candidate", "6 candidates, 10000 draws",
             function=_ASSEMBLY[3], logp=law_gumbel[perm], probabilities=np.exp(law_gumbel[perm]), draws=10000,
             seed=int(rng.integers(2**31))),
        Case("Gumbel-max: the law of the draws over many candidates", "200 candidates, 10000 draws",
             function=_ASSEMBLY[3], logp=np.log(law_many), probabilities=law_many, draws=10000,
             seed=int(rng.integers(2**31))),
        Case("the released threshold: its exact law", "N=30, M=10, beta=0.2, epsilon=1", function=_ASSEMBLY[4],
             scores=small, beta=0.2, epsilon=1.0, m=10, draws=4000, seed=int(rng.integers(2**31))),
        Case("the released threshold: its exact law with scores on the edges", "N=80, M=20, beta=0.2, epsilon=2",
             function=_ASSEMBLY[4], scores=lattice, beta=0.2, epsilon=2.0, m=20, draws=4000,
             seed=int(rng.integers(2**31))),
        Case("coverage of the private split-conformal interval", "N=100, M=50, beta=0.1, epsilon=1, 400 data sets",
             function=_ASSEMBLY[4], n=100, beta=0.1, epsilon=1.0, m=50, reps=400, seed=int(rng.integers(2**31))),
        Case("too few scores for the level: the private quantile must refuse", "N=10, beta=0.1, epsilon=0.5",
             function=_ASSEMBLY[4], scores=rng.uniform(size=10), beta=0.1, epsilon=0.5, m=10),
        Case("many scores and a large epsilon (log space)", "N=5000, M=1000, epsilon=50", function=_ASSEMBLY[4],
             scores=huge, beta=0.1, epsilon=50.0, m=1000, draws=40, seed=int(rng.integers(2**31))),
        Case("the same seed gives the same threshold", "N=30, M=10", function=_ASSEMBLY[4], scores=small,
             beta=0.2, epsilon=1.0, m=10, draws=0, seed=int(rng.integers(2**31))),
    ]


def _diagnose_round_up_edges(scores, m, got):
    edges = _edges(m)
    expected = _round_up(scores, m)
    detail_at = int(np.flatnonzero(got != expected)[0])
    detail = f"M={m}: score {scores[detail_at]!r} should become {expected[detail_at]!r}, got {got[detail_at]!r}"
    strict = edges[np.minimum(np.searchsorted(edges, scores, side="right"), m - 1)]
    down = np.concatenate(([0.0], edges))[np.searchsorted(edges, scores, side="right")]
    nearest = edges[np.argmin(np.abs(scores[:, None] - edges[None, :]), axis=1)]
    ceil = np.ceil(scores * m) / m
    on_edge = np.isin(scores, edges)
    if np.array_equal(got, strict):
        return ("a score exactly on an edge stays there: the cell of e_j is (e_(j-1), e_j], so round up to the "
                "smallest edge at or above the score", detail)
    if np.array_equal(got, ceil) or np.array_equal(got[scores > 0], ceil[scores > 0]):
        if np.any(got[scores == 0] == 0):
            return ("a score of 0 must become the first edge e_1 = 1/M: 0 is not an edge, and the first cell is "
                    "[0, e_1]", detail)
        return ("ceil(score * M) / M moves some scores that lie exactly on an edge to the next edge (in floating "
                "point, e.g. 0.3 * 10 = 3.0000000000000004); compare the scores with the edges themselves, e.g. "
                "np.searchsorted(edges, scores)", detail)
    if np.any(got[scores == 0] != edges[0]) and np.array_equal(got[scores > 0], expected[scores > 0]):
        return "a score of 0 must become the first edge e_1 = 1/M", detail
    if np.array_equal(got, nearest):
        return "you round to the nearest edge; round up, to the smallest edge at or above the score", detail
    if np.array_equal(got, down) or np.array_equal(got[~on_edge], down[~on_edge]):
        return "you round down; the mechanism rounds up (to the right end of each cell)", detail
    if not np.all(np.isin(got, edges)):
        return "the rounded scores must be edges j/M, j = 1, ..., M", detail
    return "some scores are rounded to the wrong edge", detail


def _diagnose_utilities(scores, m, alpha0, got):
    expected = _utilities(scores, m, alpha0)
    edges = _edges(m)
    ordered = np.sort(scores)
    n = scores.size
    lt = np.searchsorted(ordered, edges, side="left")           # #{R < e_j}
    le = np.searchsorted(ordered, edges, side="right")          # #{R <= e_j}
    a, b = _counts(scores, m)
    bad = int(np.argmax(~np.isclose(got, expected, rtol=1e-12, atol=1e-12)))
    detail = f"at edge e_{bad + 1} = {edges[bad]:.6g} expected u = {expected[bad]:.6g}, got {got[bad]:.6g}"
    variants = {
        "a_j counts the scores strictly below e_j; in the tight quantile the scores are rounded up first, so a_j "
        "counts the scores at or below the previous edge e_(j-1)": np.maximum(alpha0 * lt, (1 - alpha0) * b),
        "a_j counts the scores at or below e_j itself; it counts those at or below the previous edge e_(j-1) "
        "(a score in the cell (e_(j-1), e_j] is neither below nor above e_j)": np.maximum(alpha0 * le, (1 - alpha0) * b),
        "b_j counts the scores strictly above e_j, not those at or above it": np.maximum(alpha0 * a, (1 - alpha0) * (n - lt)),
        "the weights alpha0 and 1 - alpha0 are swapped: a_j (below) is weighted by alpha0": np.maximum((1 - alpha0) * a, alpha0 * b),
        "you add the two terms; u_j is their maximum": alpha0 * a + (1 - alpha0) * b,
        "you take the minimum of the two terms; u_j is their maximum": np.minimum(alpha0 * a, (1 - alpha0) * b),
        "that is the write-up's loss max(a_j/(1-alpha0), b_j/alpha0); the tight utility is max(alpha0 a_j, "
        "(1-alpha0) b_j)": np.maximum(lt / (1 - alpha0), (n - le) / alpha0),
    }
    for hint, wrong in variants.items():
        if np.allclose(got, wrong, rtol=1e-12, atol=1e-12):
            return hint, detail
    if np.allclose(got, expected / n, rtol=1e-12, atol=1e-12):
        return "return counts, not fractions: u_j uses the numbers of scores a_j and b_j", detail
    return "some utilities differ from max(alpha0 a_j, (1 - alpha0) b_j)", detail


def _diagnose_log_probabilities(utilities, epsilon, expected, got):
    from scipy.special import log_softmax

    bad = int(np.argmax(np.abs(np.where(np.isfinite(got), got, 1e300) - expected)))
    detail = f"candidate {bad}: expected {expected[bad]:.6g}, got {got[bad]:.6g}"
    if np.any(np.isinf(got)) or np.any(got < -1e300):
        return ("some log-probabilities are -inf although every candidate has a positive probability: "
                "exp(-epsilon u_j) underflowed; compute -epsilon u_j minus its logsumexp, never the weights "
                "themselves", detail)
    variants = {
        "your exponent is half of epsilon u_j (the exponential mechanism's epsilon/(2 Delta) of a generic utility);"
        " the tight quantile's weights are exp(-epsilon u_j)": log_softmax(-epsilon * utilities / 2),
        "your log-probabilities favour the largest u_j: the weights are exp(-epsilon u_j), with a minus sign":
            log_softmax(epsilon * utilities),
        "you returned probabilities, not their logarithms": np.exp(log_softmax(-epsilon * utilities)),
        "your log-probabilities are not normalised: subtract the logsumexp of -epsilon u so that the "
        "probabilities sum to 1": -epsilon * utilities,
        "your log-probabilities are not normalised: subtracting the largest -epsilon u_j makes them finite but "
        "not a distribution; subtract their logsumexp": -epsilon * (utilities - utilities.min()),
    }
    for hint, wrong in variants.items():
        if np.allclose(got, wrong, rtol=1e-9, atol=1e-9):
            return hint, detail
    return "your log-probabilities differ from -epsilon u_j - logsumexp(-epsilon u)", detail


def _interval_data(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Covariates and responses of the coverage case; the (public, pre-trained) model is mu(x) = 2x."""
    x = rng.uniform(size=size)
    return x, 2.0 * x + rng.normal(size=size) * (0.3 + x)


@checker(functions=_ASSEMBLY, exercise="ex-04-assemble", cases=_assembly_cases, points=12,
         implements=("dpcp_tutorial.quantile.private_quantile", "dpcp_tutorial.quantile.private_quantile_probabilities",
                     "dpcp_tutorial.quantile._algorithm1_logits", "dpcp_tutorial.mechanisms.gumbel_max_sample",
                     "dpcp_tutorial.mechanisms.exponential_mechanism",
                     "dpcp_tutorial.mechanisms.exponential_mechanism_probabilities",
                     "dpcp_tutorial._mechanism_core.normalise", "dpcp_tutorial._counts.edge_histogram",
                     "dpcp_tutorial._counts.below_above", "dpcp_tutorial.quantile.quantile_edges",
                     "dpcp_tutorial.private_split.PrivateSplitConformalRegressor",
                     "dpcp_tutorial.private_split.PrivateSplitConformalClassifier",
                     "dpcp_tutorial.dpcp.dpcp_quantile"))
def check_private_split_assembly(ctx, case) -> None:
    """Check a reader's private split conformal prediction assembled from five functions (chapter 4).

    Call ``check_private_split_assembly(my_round_up_to_edges, my_utilities, my_log_probabilities,
    my_gumbel_max, my_private_threshold)``. The grid has the :math:`M` right edges
    :math:`e_j = j/M`, :math:`j = 1, \\dots, M`; scores lie in :math:`[0, 1]`.

    * ``my_round_up_to_edges(scores, M) -> ndarray``: each score replaced by the smallest edge at or above it
      (a score in :math:`(e_{j-1}, e_j]` becomes :math:`e_j`; 0 becomes :math:`e_1`).
    * ``my_utilities(scores, M, alpha0) -> ndarray (M,)``: :math:`u_j = \\max(\\alpha_0 a_j, (1-\\alpha_0) b_j)`
      with :math:`a_j = \\#\\{R_i \\le e_{j-1}\\}` (:math:`a_1 = 0`) and :math:`b_j = \\#\\{R_i > e_j\\}`.
    * ``my_log_probabilities(utilities, epsilon) -> ndarray (M,)``: :math:`\\log P(\\hat q = e_j) =
      -\\varepsilon u_j - \\log\\sum_k e^{-\\varepsilon u_k}`, finite even where every weight underflows.
    * ``my_gumbel_max(log_probabilities, rng) -> int``: a 0-based index :math:`j` drawn with probability
      :math:`e^{\\text{log\\_probabilities}[j]}` by the Gumbel-max trick, from ``rng`` only.
    * ``my_private_threshold(scores, beta, epsilon, M, rng) -> float``: the released threshold
      :math:`\\hat q = e_J`, with :math:`\\alpha_0` = ``dpcp_tutorial.private_quantile_level(beta, len(scores),
      epsilon, bins=M)`` (which raises ``ValueError`` when no level works; let it propagate) and the four
      functions above.

    Cases: rounding on and between edges, utilities with ties and on a fine grid, log-probabilities compared
    exactly with the package's law (also where every weight underflows), the Gumbel-max law by a
    goodness-of-fit test, the released threshold's exact law by a goodness-of-fit test (4,000 draws), the
    simulated coverage of the resulting split-conformal interval (400 data sets, binomial standard error),
    the refusal when no level works, many scores with a large epsilon, and determinism under a seed. No call
    may change numpy's global random state.
    """
    fn = case.function
    if fn == _ASSEMBLY[0]:
        got = ctx.call(case.scores, case.m, function=fn, returns=array(case.scores.shape, what="one edge per score"),
                       inputs=True)
        if not np.array_equal(got, _round_up(case.scores, case.m)):
            ctx.fail(*_diagnose_round_up_edges(case.scores, case.m, got))
        return
    if fn == _ASSEMBLY[1]:
        got = ctx.call(case.scores, case.m, case.alpha0, function=fn, returns=array((case.m,), what="one u_j per edge"),
                       inputs=True)
        if not np.allclose(got, _utilities(case.scores, case.m, case.alpha0), rtol=1e-12, atol=1e-12):
            ctx.fail(*_diagnose_utilities(case.scores, case.m, case.alpha0, got))
        return
    if fn == _ASSEMBLY[2]:
        alpha0 = private_quantile_level(case.beta, case.scores.size, case.epsilon, bins=case.m)
        utilities = _utilities(case.scores, case.m, alpha0)
        got = ctx.call(utilities, case.epsilon, function=fn, inputs=True,
                       returns=array((case.m,), allow_inf=True, what="one log-probability per edge"))
        if not np.allclose(got, case.expected, rtol=1e-9, atol=1e-9):
            ctx.fail(*_diagnose_log_probabilities(utilities, case.epsilon, case.expected, got))
        return
    if fn == _ASSEMBLY[3]:
        draws = np.array(ctx.call(case.logp, Rng(case.seed), function=fn, returns=integer(), repeat=case.draws,
                                  rng_state=True, inputs=True))
        _judge_draws(ctx, draws, case.probabilities, "index")
        return
    _check_threshold(ctx, case)


def _judge_draws(ctx, draws: np.ndarray, probabilities: np.ndarray, what: str) -> None:
    k = probabilities.size
    if draws.min() < 0 or draws.max() >= k:
        if draws.min() >= 1 and draws.max() <= k:
            ctx.stop("return a 0-based index (0 to M - 1), as numpy does; yours look 1-based")
        ctx.stop(f"some {what}es are outside 0..M-1")
    if np.all(draws == draws[0]):
        ctx.stop("every draw is the same: the Gumbel-max trick adds independent Gumbel(0, 1) noise "
                 "(rng.gumbel) to the log-probabilities before taking the argmax")
    p_value, problem = _stats.goodness_of_fit(draws, probabilities)
    if problem == "impossible":
        ctx.stop("you drew a candidate of probability 0 (log-probability -inf)")
    if p_value < _stats.P_MIN:
        ctx.fail("the frequencies of your draws do not follow the given probabilities (a chi-square test "
                 "rejects them): argmax(log_probabilities + Gumbel(0, 1) noise) draws index j with probability "
                 "exp(log_probabilities[j]); other noise (normal, uniform) or adding it to the probabilities "
                 "gives another law", f"p-value {p_value:.2g} over {draws.size} draws")


def _check_threshold(ctx, case) -> None:
    fn = case.function
    if case.kind.startswith("too few scores"):
        ctx.call_raises(ValueError, case.scores, case.beta, case.epsilon, case.m, Rng(1), function=fn,
                        message="no level alpha0 works for these N, beta and epsilon, so "
                                "private_quantile_level raises ValueError; your function returned a threshold "
                                "instead (let the error propagate: a release without the coverage guarantee "
                                "must not happen)")
        return
    edges = _edges(case.m)
    if case.kind.startswith("coverage"):
        data = np.random.default_rng(case.seed)
        sets = [_interval_data(data, case.n) for _ in range(case.reps)]
        tests = [_interval_data(data, 200) for _ in range(case.reps)]
        bound = 3.0
        scores = [np.minimum(np.abs(y - 2.0 * x) / bound, 1.0) for x, y in sets]
        released = np.array(ctx.map([(s, case.beta, case.epsilon, case.m, Rng(case.seed + 1)) for s in scores],
                                    function=fn, returns=number(), rng_state=True, inputs=True))
        if not np.all(np.isin(released, edges)):
            ctx.stop("the released thresholds must be edges j/M")
        misses = []
        for q, (x, y) in zip(released, tests):
            half = np.inf if q >= 1.0 else bound * q
            lower, upper = 2.0 * x - half, 2.0 * x + half
            misses.append(np.mean((y < lower) | (y > upper)))
        misses = np.array(misses)
        miscoverage = float(misses.mean())
        se = float(misses.std(ddof=1) / np.sqrt(misses.size)) if misses.size > 1 else 0.0
        if miscoverage > case.beta + _stats.Z * max(se, 1e-3):
            ctx.fail("the intervals mu(x) +/- B q_hat built from your thresholds miss more often than beta: the "
                     "threshold is too small (check which count is weighted by alpha0 and the sign of the "
                     "exponent)", f"miscoverage {miscoverage:.4f} +/- {se:.4f} (one standard error), "
                                  f"beta = {case.beta}")
        return
    spec = number()
    if case.draws == 0:
        first = ctx.call(case.scores, case.beta, case.epsilon, case.m, Rng(case.seed), function=fn, returns=spec,
                         rng_state=True, inputs=True)
        second = ctx.call(case.scores, case.beta, case.epsilon, case.m, Rng(case.seed), function=fn, returns=spec,
                          rng_state=True, inputs=True)
        if first != second:
            ctx.fail("two calls with the same seed released different thresholds: draw only from the rng argument")
        return
    released = np.array(ctx.call(case.scores, case.beta, case.epsilon, case.m, Rng(case.seed), function=fn,
                                 returns=spec, repeat=case.draws, rng_state=True, inputs=True))
    index = np.searchsorted(edges, released)
    index = np.minimum(index, case.m - 1)
    if not np.allclose(edges[index], released, rtol=0, atol=1e-12):
        ctx.stop("the released thresholds must be edges j/M (j = 1, ..., M): return edges[J] for the drawn index J")
    law = _law(case.scores, case.beta, case.epsilon, case.m)
    if case.kind.startswith("many scores"):
        if np.any(law[index] < 1e-12):
            ctx.fail("some released thresholds have (almost) zero probability under the tight quantile's law: "
                     "check the pieces in log space for large N epsilon")
        return
    if np.all(released == released[0]):
        ctx.stop("every release is the same threshold: the mechanism must draw at random (Gumbel-max on the "
                 "log-probabilities)")
    p_value, problem = _stats.goodness_of_fit(index, law)
    if problem == "impossible":
        ctx.stop("you released a threshold of probability 0 under the tight quantile's law")
    if p_value < _stats.P_MIN:
        mean_law = float(np.dot(law, edges))
        mean_got = float(released.mean())
        direction = "smaller" if mean_got < mean_law else "larger"
        ctx.fail(f"your thresholds do not follow the tight quantile's law (a chi-square test rejects them; they "
                 f"are {direction} on average): check alpha0 (private_quantile_level(beta, N, epsilon, bins=M)), "
                 "the utilities and the log-probabilities one by one (the other cases test each piece)",
                 f"p-value {p_value:.2g}; mean threshold {mean_got:.4f}, expected {mean_law:.4f}")
