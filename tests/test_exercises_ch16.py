"""The chapter-16 checkers accept correct solutions and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.course.exercises import check_pcoqs_noise_sd, check_pool_coverage
from exercise_solutions import pcoqs_noise_sd, pool_coverage


def test_pcoqs_noise_sd_checker(capsys):
    assert check_pcoqs_noise_sd(pcoqs_noise_sd)
    assert "all checks passed" in capsys.readouterr().out

    def rho_is_epsilon(epsilon, steps):
        return math.sqrt(steps / (2 * epsilon))

    def no_split(epsilon, steps):
        return math.sqrt(1 / (2 * epsilon * math.tanh(epsilon / 2)))

    def variance(epsilon, steps):
        return steps / (2 * epsilon * math.tanh(epsilon / 2))

    def rho_is_epsilon_squared(epsilon, steps):
        return math.sqrt(steps / (2 * epsilon ** 2))

    def loose_conversion(epsilon, steps):
        return math.sqrt(steps) / epsilon          # rho = epsilon^2 / 2

    for wrong, phrase in [(rho_is_epsilon, "convert"), (no_split, "split over the steps"),
                          (variance, "not a variance"), (rho_is_epsilon_squared, "differs from the one"),
                          (loose_conversion, "tanh")]:
        assert not check_pcoqs_noise_sd(wrong)
        assert phrase in capsys.readouterr().out


def test_pool_coverage_checker(capsys):
    assert check_pool_coverage(pool_coverage)
    assert "all checks passed" in capsys.readouterr().out

    def strict(pool, thresholds):
        return (np.asarray(pool)[None, :] < np.asarray(thresholds)[:, None]).mean(axis=1)

    def conformal(pool, thresholds):
        return (np.asarray(pool)[None, :] <= np.asarray(thresholds)[:, None]).sum(axis=1) / (len(pool) + 1)

    def assumes_sorted(pool, thresholds):
        return np.searchsorted(pool, thresholds, side="right") / len(pool)

    def miscoverage(pool, thresholds):
        return 1 - pool_coverage(pool, thresholds)

    for wrong, phrase in [(strict, "equal to the threshold"), (conformal, "finite-sample"),
                          (assumes_sorted, "differs"), (miscoverage, "miscoverage")]:
        assert not check_pool_coverage(wrong)
        assert phrase in capsys.readouterr().out


def test_pcoqs_noise_sd_uses_the_conversion_of_chapter_16():
    """The checker's expected noise is the one at the budget the chapter and its runner use,
    rho = eps tanh(eps/2) (``calibrator_grid.zcdp_of_pure_dp``), not the looser eps^2/2."""
    from dpcp_tutorial.experiments.calibrator_grid import zcdp_of_pure_dp

    def from_the_runner(epsilon, steps):
        return math.sqrt(steps / (2 * zcdp_of_pure_dp(epsilon)))

    assert check_pcoqs_noise_sd(from_the_runner, quiet=True, secret="a course secret")
    for epsilon in (0.1, 1.0, 10.0):
        assert math.isclose(from_the_runner(epsilon, 34), pcoqs_noise_sd(epsilon, 34), rel_tol=1e-12)
    assert math.isclose(zcdp_of_pure_dp(1.0), math.tanh(0.5), rel_tol=1e-12)
