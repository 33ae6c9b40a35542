"""The chapter-2 checkers accept correct releases and diagnose typical wrong ones, public and graded cases."""

import numpy as np
import pytest

from dpcp_tutorial.course.exercises import check_private_mean, check_randomized_response

from _checking import run, text

SECRETS = [None, "a course secret"]


# ------------------------------------------------------------------------------------------- private mean

def correct_mean(x, lower, upper, epsilon, rng):
    clipped = np.clip(x, lower, upper)
    return float(clipped.mean() + rng.laplace(0.0, (upper - lower) / (len(x) * epsilon)))


def no_clipping(x, lower, upper, epsilon, rng):
    return float(np.mean(x) + rng.laplace(0.0, (upper - lower) / (len(x) * epsilon)))


def sensitivity_without_n(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean() + rng.laplace(0.0, (upper - lower) / epsilon))


def half_epsilon(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean() + rng.laplace(0.0, 2 * (upper - lower) / (len(x) * epsilon)))


def n_plus_one(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean() + rng.laplace(0.0, (upper - lower) / ((len(x) + 1) * epsilon)))


def gaussian_noise(x, lower, upper, epsilon, rng):
    b = (upper - lower) / (len(x) * epsilon)
    return float(np.clip(x, lower, upper).mean() + rng.normal(0.0, b * np.sqrt(np.pi / 2)))  # same E|Z| as Laplace


def fresh_generator(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean() + np.random.default_rng().laplace(0.0, (upper - lower)
                                                                                    / (len(x) * epsilon)))


def reseeds_global_state(x, lower, upper, epsilon, rng):
    np.random.seed(int(rng.integers(2**31)))
    return float(np.clip(x, lower, upper).mean() + np.random.laplace(0.0, (upper - lower) / (len(x) * epsilon)))


def no_noise(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean())


@pytest.mark.slow
def test_correct_private_mean_passes(capsys):
    result = check_private_mean(correct_mean)
    assert result and result.cases_passed == result.cases_total == 5
    assert "all checks passed (5 of 5 cases)" in capsys.readouterr().out


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("fn,phrase,kinds", [
    (no_clipping, "unclipped mean", ["outliers"]),
    (sensitivity_without_n, "n times too large", ["data inside"]),
    (half_epsilon, "twice too large", ["data inside"]),
    (n_plus_one, "divide by n + 1", ["small n"]),
    (gaussian_noise, "Laplace law", ["data inside"]),
    (fresh_generator, "same seed", ["the same seed"]),
    (reseeds_global_state, "global random state", ["data inside"]),
    (no_noise, "do not vary", ["data inside"]),
], ids=lambda v: getattr(v, "__name__", None))
def test_wrong_private_means_get_specific_feedback(fn, phrase, kinds, secret):
    result = run(check_private_mean, fn, kinds=kinds, secret=secret)
    assert not result and result.cases_passed == 0, (fn.__name__, result.feedback)
    assert phrase in text(result), (fn.__name__, result.feedback)


def test_n_plus_one_passes_only_where_n_is_large():
    """The (n+1)/n slip is invisible at n = 500 and caught at small n: partial credit, counted."""
    result = check_private_mean(n_plus_one, quiet=True)
    assert 0 < result.cases_passed < result.cases_total
    assert all("small n" in line or "n = 10" in line for line in result.feedback)


def test_exceptions_and_bad_return_types_become_feedback(capsys):
    def broken(x, lower, upper, epsilon, rng):
        raise ValueError("boom")

    assert not check_private_mean(broken)
    assert "ValueError: boom" in capsys.readouterr().out
    assert not check_private_mean(lambda x, lower, upper, epsilon, rng: [1.0, 2.0])
    assert "expected a number" in capsys.readouterr().out


# ------------------------------------------------------------------------------------- randomised response

def correct_rr(bits, epsilon, rng):
    keep = rng.random(bits.shape) < 1 / (1 + np.exp(-epsilon))
    return np.where(keep, bits, 1 - bits)


def rr_binomial(bits, epsilon, rng):
    flips = rng.binomial(1, 1 / (1 + np.exp(epsilon)), size=bits.shape)
    return (bits ^ flips).astype(bool)          # another correct sampler, returning booleans


def keep_two_plus(bits, epsilon, rng):
    keep = rng.random(bits.shape) < np.exp(epsilon) / (2 + np.exp(epsilon))
    return np.where(keep, bits, 1 - bits)


def linear(bits, epsilon, rng):
    keep = rng.random(bits.shape) < 0.5 + epsilon / 4
    return np.where(keep, bits, 1 - bits)


def swapped(bits, epsilon, rng):
    keep = rng.random(bits.shape) < 1 / (1 + np.exp(epsilon))
    return np.where(keep, bits, 1 - bits)


def half_epsilon_rr(bits, epsilon, rng):
    keep = rng.random(bits.shape) < 1 / (1 + np.exp(-epsilon / 2))
    return np.where(keep, bits, 1 - bits)


def overflows(bits, epsilon, rng):
    keep = rng.random(bits.shape) < np.exp(epsilon) / (1 + np.exp(epsilon))
    return np.where(keep, bits, 1 - bits)


def one_coin(bits, epsilon, rng):
    return bits.copy() if rng.random() < 1 / (1 + np.exp(-epsilon)) else 1 - bits


def only_ones_flipped(bits, epsilon, rng):
    keep = rng.random(bits.shape) < 1 / (1 + np.exp(-epsilon))
    return np.where((bits == 0) | keep, bits, 0)


def global_state(bits, epsilon, rng):
    np.random.seed(int(rng.integers(2**31)))
    keep = np.random.random(bits.shape) < 1 / (1 + np.exp(-epsilon))
    return np.where(keep, bits, 1 - bits)


def fixed_seed_inside(bits, epsilon, rng):
    keep = np.random.default_rng(0).random(bits.shape) < 1 / (1 + np.exp(-epsilon))
    return np.where(keep, bits, 1 - bits)


def in_place(bits, epsilon, rng):
    keep = rng.random(bits.shape) < 1 / (1 + np.exp(-epsilon))
    bits[~keep] = 1 - bits[~keep]
    return bits


def flattens(bits, epsilon, rng):
    return correct_rr(bits, epsilon, rng).ravel()


@pytest.mark.parametrize("fn", [correct_rr, rr_binomial])
def test_correct_randomized_response_passes(fn, capsys):
    result = check_randomized_response(fn)
    assert result and result.cases_passed == result.cases_total == 6
    assert "all checks passed (6 of 6 cases)" in capsys.readouterr().out
    assert check_randomized_response(fn, secret="a course secret", quiet=True)


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("fn,phrase,kinds", [
    (keep_two_plus, "e^epsilon/(2+e^epsilon)", ["epsilon near 1"]),
    (linear, "1/2 + epsilon/4", ["epsilon near 1"]),
    (swapped, "swapped", ["epsilon near 1", "a small epsilon"]),
    (half_epsilon_rr, "e^(epsilon/2)", ["a larger epsilon"]),
    (overflows, "overflow", ["a huge epsilon"]),
    (one_coin, "not flipped independently", ["epsilon near 1"]),
    (only_ones_flipped, "same probability", ["epsilon near 1"]),
    (global_state, "global random state", ["epsilon near 1", "the same seed"]),
    (fixed_seed_inside, "every call flips the same bits", ["epsilon near 1"]),
    (in_place, "in place", ["epsilon near 1"]),
    (flattens, "shape", ["a two-dimensional"]),
], ids=lambda v: getattr(v, "__name__", None))
def test_wrong_randomized_responses_get_the_right_diagnosis(fn, phrase, kinds, secret):
    result = run(check_randomized_response, fn, kinds=kinds, secret=secret)
    assert not result and result.cases_passed == 0, (fn.__name__, result.feedback)
    assert phrase in text(result), (fn.__name__, result.feedback)


def fixed_three_quarters(bits, epsilon, rng):
    keep = rng.random(bits.shape) < 0.75
    return np.where(keep, bits, 1 - bits)


def test_fixed_keep_probability_is_not_called_the_first_order_approximation():
    """A fixed 3/4 is named as such; at epsilon = 1, where it equals 1/2 + epsilon/4, the hint names both."""
    away = run(check_randomized_response, fixed_three_quarters, kinds=["a larger epsilon", "a small epsilon"])
    assert "3/4 whatever epsilon" in text(away) and "first-order" not in text(away), away.feedback
    for secret in SECRETS:                  # epsilon near 1 is 0.9, 1 or 1.2, by the secret
        near = text(run(check_randomized_response, fixed_three_quarters, kinds=["epsilon near 1"], secret=secret))
        assert "3/4 whatever epsilon" in near or "a fixed 3/4, or 1/2 + epsilon/4" in near, near


def test_linear_approximation_is_not_epsilon_dp_above_one():
    """1/2 + eps/4 exceeds e^eps/(1+e^eps) for eps > 0: the attacker's ratio is above e^eps at eps near 1."""
    result = run(check_randomized_response, linear, kinds=["epsilon near 1"])
    assert "no longer epsilon-DP" in text(result)


def test_graded_feedback_shows_no_values():
    notebook = run(check_randomized_response, keep_two_plus, kinds=["epsilon near 1"])
    graded = run(check_randomized_response, keep_two_plus, kinds=["epsilon near 1"], secret="s")
    assert "yours 0." in text(notebook)                 # the notebook shows the observed and exact probabilities
    assert "yours" not in text(graded) and "epsilon=" not in text(graded)
    assert "keep probability" not in text(graded)
