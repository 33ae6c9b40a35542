"""The chapter-11 checker accepts a correct solution and diagnoses typical wrong ones."""

import numpy as np
from scipy.special import logsumexp

from dpcp_tutorial.course.exercises import check_interval_log_probabilities


def correct(data, epsilon, lower, upper):
    x = np.sort(np.clip(np.asarray(data, dtype=float), lower, upper))
    n = x.size
    with np.errstate(divide="ignore"):
        log_len = np.log(np.diff(np.concatenate([[lower], x, [upper]])))
    k = np.arange(n + 1)
    logits = log_len + epsilon * np.minimum(k, n - k) / 2
    return logits - logsumexp(logits)


def no_lengths(data, epsilon, lower, upper):
    n = len(data)
    k = np.arange(n + 1)
    logits = epsilon * np.minimum(k, n - k) / 2
    return logits - logsumexp(logits)


def beta_too_large(data, epsilon, lower, upper):
    return correct(data, 2 * epsilon, lower, upper)


def no_clipping(data, epsilon, lower, upper):
    x = np.sort(np.asarray(data, dtype=float))
    n = x.size
    with np.errstate(divide="ignore", invalid="ignore"):
        log_len = np.log(np.diff(np.concatenate([[lower], x, [upper]])))
    k = np.arange(n + 1)
    logits = log_len + epsilon * np.minimum(k, n - k) / 2
    return logits - logsumexp(logits)


def unnormalised(data, epsilon, lower, upper):
    return correct(data, epsilon, lower, upper) + 1.0


def test_accepts_correct(capsys):
    assert check_interval_log_probabilities(correct)
    assert "all checks passed" in capsys.readouterr().out


def test_diagnoses_mistakes(capsys):
    for wrong, phrase in [(no_lengths, "interval lengths"), (beta_too_large, "twice too large"),
                          (no_clipping, "lie outside"), (unnormalised, "do not sum to 1")]:
        assert not check_interval_log_probabilities(wrong)
        assert phrase in capsys.readouterr().out


def test_reports_crashes_and_shapes(capsys):
    assert not check_interval_log_probabilities(lambda *a: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert not check_interval_log_probabilities(lambda data, *a: np.zeros(len(data)))
    assert "n+1" in capsys.readouterr().out
