"""Checkers for the coding exercises of chapter 18 (conformal thresholds without a score bound)."""

from __future__ import annotations

import math

import numpy as np

from ._common import Case, checker, integer, number

__all__ = ["check_first_passing", "check_unbounded_add_remove_loss", "check_stop_probability"]


# --------------------------------------------------------------------------- AboveThreshold's stopping rule

def _first(counts, target, rho, nu) -> int:
    passed = np.asarray(counts) + np.asarray(nu) <= target + rho
    return int(np.argmax(passed)) if passed.any() else len(counts)


def _first_cases(rng: np.random.Generator) -> list[Case]:
    cases = []
    k = int(rng.integers(30, 60))
    counts = np.sort(rng.integers(0, 500, size=k))[::-1].astype(float)
    target = float(rng.integers(40, 120))
    nu = np.round(rng.laplace(scale=4.0, size=k), 3)
    rho = float(np.round(rng.laplace(scale=4.0), 3))
    cases.append(Case("a typical walk up the grid", f"K={k}", counts=counts, target=target, rho=rho, nu=nu))
    small = np.sort(rng.integers(500, 900, size=12))[::-1].astype(float)
    cases.append(Case("no candidate passes", "K=12", counts=small, target=10.0, rho=float(rng.uniform(-2, 2)),
                      nu=np.round(rng.laplace(size=12), 3)))
    first = np.zeros(8)
    cases.append(Case("the first candidate passes", "K=8", counts=first, target=5.0, rho=0.5,
                      nu=np.round(rng.uniform(-1, 1, size=8), 3)))
    c = np.sort(rng.integers(0, 200, size=6))[::-1].astype(float)
    target = float(rng.integers(20, 40))
    j = int(rng.integers(1, 5))
    nu_tie = np.full(6, 500.0)
    nu_tie[j] = float(rng.integers(-20, 20))
    rho_tie = nu_tie[j] + c[j] - target        # c_j + nu_j == target + rho exactly: the candidate passes
    cases.append(Case("a noisy count exactly equal to the noisy target", "K=6", counts=c, target=target,
                      rho=rho_tie, nu=nu_tie))
    k = int(rng.integers(10, 20))
    first, second = sorted(rng.choice(np.arange(1, k), size=2, replace=False))
    nu_dip = np.full(k, 1000.0)
    nu_dip[[first, second]] = -1000.0
    cases.append(Case("two candidates pass; the first one is released", f"K={k}",
                      counts=np.sort(rng.integers(0, 300, size=k))[::-1].astype(float),
                      target=float(rng.integers(1, 5)), rho=float(np.round(rng.uniform(-1, 1), 3)), nu=nu_dip))
    return cases


@checker(function="first_passing", exercise="ex-18-first", cases=_first_cases,
         implements=("dpcp_tutorial.unbounded.unbounded_private_quantile",))
def check_first_passing(ctx, case):
    """Check a reader's ``first_passing(counts_above, target, rho, nu) -> int`` (chapter 18).

    The index of the first candidate :math:`k` with
    :math:`a_k + \\nu_k \\le m + \\rho` (``counts_above[k] + nu[k] <= target + rho``),
    or ``len(counts_above)`` when none passes. Cases include exact ties between
    a noisy count and the noisy target, no candidate passing, and several passing.
    """
    counts, target, rho, nu = case.counts, case.target, case.rho, case.nu
    expected = _first(counts, target, rho, nu)
    got = ctx.call(counts, target, rho, nu, inputs=True, returns=integer())
    if got == expected:
        return
    detail = f"expected {expected}, got {got}"
    if got == -1 and expected == len(counts):
        ctx.stop("when no candidate passes, return len(counts_above) (the release is then +inf)", detail)
    strict = np.asarray(counts) + np.asarray(nu) < target + rho
    if got == (int(np.argmax(strict)) if strict.any() else len(counts)):
        ctx.stop("a noisy count equal to the noisy target passes: the comparison is <=, not <", detail)
    plain = np.asarray(counts) <= target
    if got == (int(np.argmax(plain)) if plain.any() else len(counts)):
        ctx.stop("the comparison must use the noisy count and the noisy target, not the exact ones", detail)
    passed = np.flatnonzero(np.asarray(counts) + np.asarray(nu) <= target + rho)
    if passed.size > 1 and got == int(passed[-1]):
        ctx.stop("AboveThreshold stops at the first candidate that passes, not the last", detail)
    ctx.fail("the index differs from the first candidate whose noisy count is at most the noisy target", detail)


# --------------------------------------------------------------------------- privacy loss with a private size

def _loss(epsilon, share, m_n, m_n1):
    d = m_n1 - m_n
    return (1 - share) * epsilon + share * epsilon * max(abs(d), abs(1 - d))


def _loss_cases(rng: np.random.Generator) -> list[Case]:
    eps = float(rng.choice([0.5, 0.8, 2.0]))
    base = float(rng.uniform(50, 150))
    return [Case(kind, f"epsilon={e}, share={s}", epsilon=e, share=s, m_n=m, m_n1=m + d) for kind, e, s, m, d in [
        ("a typical step of the target", 1.0, 0.25, base, 0.1 + 0.01 * float(rng.integers(0, 10))),
        ("a step of one half", eps, 0.5, base, 0.5),
        ("a target that does not move", eps, 0.3, base, 0.0),
        ("a step of exactly one", 1.5, 0.2, base, 1.0),
        ("a target that moves down", eps, 0.25, base, -0.05 - 0.01 * float(rng.integers(0, 5))),
        ("a target that jumps by more than one", 1.0, 0.4, base, 1.3 + 0.1 * float(rng.integers(0, 3))),
    ]]


@checker(function="add_remove_loss", exercise="ex-18-loss", cases=_loss_cases,
         implements=("dpcp_tutorial.unbounded.unbounded_quantile_privacy_loss",))
def check_unbounded_add_remove_loss(ctx, case):
    """Check a reader's ``add_remove_loss(epsilon, threshold_share, m_n, m_n1) -> float`` (chapter 18).

    The privacy loss of the unbounded quantile under add/remove when the target
    is recomputed from each data set's own size: ``m_n`` and ``m_n1`` are the
    targets at sizes :math:`n` and :math:`n+1`, ``threshold_share`` the share of
    ``epsilon`` spent on the noisy target. Cases include targets that move by 0,
    by one half, by exactly one, downwards and by more than one.
    """
    e, s, m0, m1 = case.epsilon, case.share, case.m_n, case.m_n1
    expected = _loss(e, s, m0, m1)
    got = ctx.call(e, s, m0, m1, returns=number())
    if math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12):
        return
    d = m1 - m0
    detail = f"expected {expected:.6g}, got {got:.6g}"
    if math.isclose(got, e, rel_tol=1e-9) and not math.isclose(expected, e, rel_tol=1e-9):
        ctx.stop("the moving target changes the loss: it is epsilon only when the target moves by exactly 0 or 1",
                 detail)
    if math.isclose(got, s * e + (1 - s) * e * max(abs(d), abs(1 - d)), rel_tol=1e-9):
        ctx.stop("the shift of the target is paid by the threshold's noise (share threshold_share of epsilon), "
                 "the last comparison by the queries' noise", detail)
    if math.isclose(got, (1 - s) * e + s * e * abs(d), rel_tol=1e-9):
        ctx.stop("both directions count: adding a record and removing it shift the threshold noise by d and by "
                 "1 - d", detail)
    ctx.fail("the loss differs from the lemma's bound for a target that moves by d = m_n1 - m_n", detail)


# --------------------------------------------------------------------------- the worst-case stopping probability

def _stop_probability(x: float, eps1: float, eps2: float, steps: int) -> float:
    from scipy import integrate

    b1, b2 = 1.0 / eps1, 1.0 / eps2

    def integrand(r):
        y = r + x
        log_survival = math.log1p(-0.5 * math.exp(y / b2)) if y < 0 else math.log(0.5) - y / b2
        return math.exp(-abs(r) / b1) / (2 * b1) * -math.expm1(steps * log_survival)

    points = sorted({0.0, -x})
    edges = [-math.inf, *points, math.inf]
    return sum(integrate.quad(integrand, lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
               for lo, hi in zip(edges[:-1], edges[1:]))


def _stop_cases(rng: np.random.Generator) -> list[Case]:
    shift = float(rng.uniform(-1.0, 1.0))
    return [Case(kind, f"x={x:.3g}, K={k}", x=x, eps1=e1, eps2=e2, steps=k) for kind, x, e1, e2, k in [
        ("a typical target below the noise", -8.0 + shift, 0.25, 0.75, 1000),
        ("one candidate", -2.0 + shift, 0.5, 0.5, 1),
        ("a positive gap", 3.0 + shift, 0.3, 0.7, 50),
        ("a far tail", -25.0 + shift, 0.25, 0.75, 20000),
        ("unequal noise scales", -5.0 + shift, 1.0, 0.2, 200),
    ]]


@checker(function="stop_probability", exercise="ex-18-stop", cases=_stop_cases,
         implements=("dpcp_tutorial.unbounded.unbounded_quantile_miscoverage_bound",))
def check_stop_probability(ctx, case):
    """Check a reader's ``stop_probability(x, eps1, eps2, steps) -> float`` (chapter 18).

    :math:`P(\\min_{k<K} \\nu_k - \\rho \\le x)` for :math:`\\nu_k \\sim \\mathrm{Lap}(1/\\varepsilon_2)`
    i.i.d. and :math:`\\rho \\sim \\mathrm{Lap}(1/\\varepsilon_1)` (``steps`` :math:`= K`): the
    probability that AboveThreshold stops somewhere when every candidate has
    the same count, :math:`x = m - j`. Answers within a relative error of
    :math:`10^{-6}` pass. Cases include one candidate, far tails and unequal scales.
    """
    x, e1, e2, k = case.x, case.eps1, case.eps2, case.steps
    expected = _stop_probability(x, e1, e2, k)
    got = ctx.call(x, e1, e2, k, returns=number())
    if math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-15):
        return
    detail = f"expected {expected:.8g}, got {got:.8g}"
    if not 0.0 <= got <= 1.0:
        ctx.stop("a probability lies in [0, 1]", detail)
    b2 = 1.0 / e2
    no_rho = -math.expm1(k * (math.log1p(-0.5 * math.exp(x / b2)) if x < 0 else math.log(0.5) - x / b2))
    if math.isclose(got, no_rho, rel_tol=1e-4):
        ctx.stop("the threshold's noise rho is shared by all comparisons: average over it", detail)
    if math.isclose(got, _stop_probability(x, e2, e1, k), rel_tol=1e-4):
        ctx.stop("the scales are swapped: rho has scale 1/eps1, each nu_k scale 1/eps2", detail)
    if got > expected * (1 + 1e-4):
        ctx.stop("your value is too large: a union bound over the candidates is an upper bound, not the "
                 "probability (the candidates share rho)", detail)
    ctx.fail("the probability differs from P(min_k nu_k - rho <= x)", detail)
