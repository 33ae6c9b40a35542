"""The chapter-2 checker accepts a correct private mean and diagnoses typical wrong ones."""

import numpy as np

from dpcp_tutorial.exercises import check_private_mean


def correct_mean(x, lower, upper, epsilon, rng):
    clipped = np.clip(x, lower, upper)
    return float(clipped.mean() + rng.laplace(0.0, (upper - lower) / (len(x) * epsilon)))


def no_clipping(x, lower, upper, epsilon, rng):
    return float(np.mean(x) + rng.laplace(0.0, (upper - lower) / (len(x) * epsilon)))


def sensitivity_without_n(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean() + rng.laplace(0.0, (upper - lower) / epsilon))


def half_epsilon(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean() + rng.laplace(0.0, 2 * (upper - lower) / (len(x) * epsilon)))


def gaussian_noise(x, lower, upper, epsilon, rng):
    b = (upper - lower) / (len(x) * epsilon)
    return float(np.clip(x, lower, upper).mean() + rng.normal(0.0, b * np.sqrt(np.pi / 2)))  # same E|Z| as Laplace


def global_state(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean() + np.random.default_rng().laplace(0.0, (upper - lower)
                                                                                    / (len(x) * epsilon)))


def no_noise(x, lower, upper, epsilon, rng):
    return float(np.clip(x, lower, upper).mean())


def test_correct_solution_passes(capsys):
    assert check_private_mean(correct_mean)
    assert "all checks passed" in capsys.readouterr().out


def test_wrong_solutions_get_specific_feedback(capsys):
    for fn, phrase in [(no_clipping, "unclipped mean"), (sensitivity_without_n, "n=500 times too large"),
                       (half_epsilon, "twice too large"), (gaussian_noise, "Laplace shape"),
                       (global_state, "same seed"), (no_noise, "do not vary")]:
        assert not check_private_mean(fn), fn.__name__
        assert phrase in capsys.readouterr().out, fn.__name__


def test_exceptions_and_bad_return_types_become_feedback(capsys):
    def broken(x, lower, upper, epsilon, rng):
        raise ValueError("boom")

    assert not check_private_mean(broken)
    assert "ValueError: boom" in capsys.readouterr().out
    assert not check_private_mean(lambda x, lower, upper, epsilon, rng: [1.0, 2.0])
    assert "expected a number" in capsys.readouterr().out
