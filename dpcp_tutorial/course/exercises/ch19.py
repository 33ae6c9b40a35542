"""Checkers for the coding exercises of chapter 19 (private medians without a hand-placed prior)."""

from __future__ import annotations

import math

import numpy as np

from ._common import Case, checker, number, sequence

__all__ = ["check_private_prior_epsilon", "check_centre_rank_error"]


def _account_cases(rng: np.random.Generator) -> list[Case]:
    def pick(low, high):
        return round(float(rng.uniform(low, high)), 3)

    return [Case(kind, f"epsilon={e}, share={a}", epsilon=e, share=a) for kind, e, a in [
        ("the default share", pick(0.5, 2.0), 0.2), ("another share", pick(0.5, 5.0), pick(0.1, 0.5)),
        ("a small share", pick(1.0, 4.0), pick(0.01, 0.08)), ("a large share", pick(0.2, 1.0), pick(0.8, 0.95)),
        ("a large budget", pick(8.0, 12.0), pick(0.15, 0.3))]]


@checker(function="private_prior_epsilon", exercise="ex-19-account", cases=_account_cases,
         implements=("dpcp_tutorial.median.depth_median_account",))
def check_private_prior_epsilon(ctx, case) -> None:
    """Check a reader's ``private_prior_epsilon(epsilon, share) -> (add_remove, replace_one)`` (chapter 19).

    The total privacy loss of ``private_depth_median(X, epsilon, prior="private",
    localize_share=share)`` under add/remove (``n`` private) and under
    replace-one (``n`` public): the localisation is ``share * epsilon``-DP under
    both relations, the depth mechanism with the remaining budget is
    :math:`(1-a)\\varepsilon`-DP under replace-one and half that under add/remove, and the two
    compose sequentially.
    """
    eps, share = case.epsilon, case.share
    add_remove, replace_one = ctx.call(eps, share, returns=sequence(number(), number(),
                                                                     names="a pair (add_remove, replace_one)"))
    want_ar, want_ro = share * eps + (1 - share) * eps / 2, eps
    if math.isclose(add_remove, want_ar, rel_tol=1e-9) and math.isclose(replace_one, want_ro, rel_tol=1e-9):
        return
    detail = f"expected ({want_ar:.6g}, {want_ro:.6g}), got ({add_remove:.6g}, {replace_one:.6g})"
    if math.isclose(add_remove, want_ro, rel_tol=1e-9) and math.isclose(replace_one, want_ar, rel_tol=1e-9):
        ctx.stop("the two relations are swapped: the depth mechanism is cheaper under add/remove", detail)
    if math.isclose(add_remove, eps / 2, rel_tol=1e-9):
        ctx.stop("under add/remove only the depth mechanism's part is halved; the localisation costs its full "
                 "share under both relations", detail)
    if math.isclose(add_remove, share * eps / 2 + (1 - share) * eps, rel_tol=1e-9):
        ctx.stop("the halving applies to the depth mechanism (its utility only grows when a record is added), not "
                 "to the localisation", detail)
    if math.isclose(add_remove, max(share * eps, (1 - share) * eps / 2), rel_tol=1e-9):
        ctx.stop("both parts read every record: their losses add up (sequential composition), they do not take "
                 "a maximum", detail)
    if not math.isclose(replace_one, want_ro, rel_tol=1e-9):
        ctx.stop("under replace-one the two parts together spend exactly epsilon", detail)
    ctx.fail("your add/remove loss differs from the composed one", detail)


def _rank_cases(rng: np.random.Generator) -> list[Case]:
    def pick(low, high):
        return round(float(rng.uniform(low, high)), 3)

    d = int(rng.integers(3, 9))
    return [Case(kind, f"epsilon={e}, d={dd}, bins={b}, eta={h}", epsilon=e, d=dd, bins=b, eta=h)
            for kind, e, dd, b, h in [
                ("the chapter's grid", pick(0.5, 2.0), 2, 2 ** 16, pick(0.01, 0.1)),
                ("more dimensions", pick(0.2, 1.0), d, 2 ** 16, pick(0.005, 0.05)),
                ("twenty dimensions", pick(0.5, 2.0), 20, 2 ** 16, 0.05),
                ("a coarse grid", pick(1.0, 3.0), 1, 16, pick(0.05, 0.2)),
                ("a tiny failure probability", pick(0.5, 2.0), 5, 4096, 1e-9)]]


@checker(function="centre_rank_error", exercise="ex-19-rank", cases=_rank_cases)
def check_centre_rank_error(ctx, case) -> None:
    """Check a reader's ``centre_rank_error(epsilon_loc, d, bins, eta) -> float`` (chapter 19).

    The rank distance :math:`t` such that the centre step of the
    localisation (the exponential mechanism over ``bins`` bins with budget
    :math:`\\varepsilon_c = 0.6\\,\\varepsilon_{\\rm loc}/d` and a utility whose best value is 0) releases a bin
    more than :math:`t` ranks from the median with probability at most ``eta``:
    :math:`t = 2\\log(\\text{bins}/\\eta)/\\varepsilon_c`.
    """
    eps, d, bins, eta = case.epsilon, case.d, case.bins, case.eta
    eps_c = 0.6 * eps / d
    want = 2 * math.log(bins / eta) / eps_c
    got = ctx.call(eps, d, bins, eta, returns=number())
    if math.isclose(got, want, rel_tol=1e-9):
        return
    detail = f"expected {want:.6g}, got {got:.6g}"
    variants = {
        "the centre step spends 0.6 of the localisation budget, split over the d coordinates":
            2 * math.log(bins / eta) / (0.6 * eps),
        "each coordinate gets 0.6 epsilon / d, not epsilon / d": 2 * math.log(bins / eta) * d / eps,
        "the exponential mechanism's weights are exp(epsilon u / 2): the bound has a factor 2":
            math.log(bins / eta) / eps_c,
        "the number of bins enters the bound: the bad bins together, each at most exp(-epsilon t / 2) times "
        "the best one": 2 * math.log(1 / eta) / eps_c,
    }
    for hint, value in variants.items():
        if math.isclose(got, value, rel_tol=1e-9) and not math.isclose(value, want, rel_tol=1e-9):
            ctx.stop(hint, detail)
    ctx.fail("your rank distance differs from the exponential mechanism's utility bound", detail)
