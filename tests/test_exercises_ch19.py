"""The chapter-19 checkers accept correct solutions and diagnose typical wrong ones."""

import math

from dpcp_tutorial import depth_median_account
from dpcp_tutorial.course.exercises import check_centre_rank_error, check_private_prior_epsilon
from exercise_solutions import centre_rank_error, private_prior_epsilon


def test_private_prior_epsilon_checker(capsys):
    assert check_private_prior_epsilon(private_prior_epsilon)
    assert "all checks passed" in capsys.readouterr().out

    def stub(epsilon, share):
        return None

    def swapped(epsilon, share):
        return private_prior_epsilon(epsilon, share)[::-1]

    def all_halved(epsilon, share):
        return epsilon / 2, epsilon

    def maximum(epsilon, share):
        return max(share * epsilon, (1 - share) * epsilon / 2), epsilon

    def localisation_halved(epsilon, share):
        return share * epsilon / 2 + (1 - share) * epsilon, epsilon

    for wrong, phrase in [(stub, "None"), (swapped, "swapped"), (all_halved, "full share"),
                          (maximum, "add up"), (localisation_halved, "not to the localisation")]:
        assert not check_private_prior_epsilon(wrong)
        assert phrase in capsys.readouterr().out


def test_the_account_exercise_matches_the_package():
    for epsilon, share in [(1.0, 0.2), (3.0, 0.45)]:
        account = depth_median_account(epsilon, "private", localize_share=share)
        ar, ro = private_prior_epsilon(epsilon, share)
        assert math.isclose(account.add_remove[0], ar) and math.isclose(account.replace_one[0], ro)


def test_centre_rank_error_checker(capsys):
    assert check_centre_rank_error(centre_rank_error)
    assert "all checks passed" in capsys.readouterr().out

    def stub(epsilon_loc, d, bins, eta):
        raise NotImplementedError

    def no_split(epsilon_loc, d, bins, eta):
        return 2 * math.log(bins / eta) / (0.6 * epsilon_loc)

    def whole_budget(epsilon_loc, d, bins, eta):
        return 2 * math.log(bins / eta) * d / epsilon_loc

    def no_two(epsilon_loc, d, bins, eta):
        return centre_rank_error(epsilon_loc, d, bins, eta) / 2

    def no_bins(epsilon_loc, d, bins, eta):
        return 2 * math.log(1 / eta) / (0.6 * epsilon_loc / d)

    for wrong, phrase in [(stub, "NotImplementedError"), (no_split, "split over the d coordinates"),
                          (whole_budget, "0.6 epsilon / d"), (no_two, "factor 2"), (no_bins, "number of bins")]:
        assert not check_centre_rank_error(wrong)
        assert phrase in capsys.readouterr().out
