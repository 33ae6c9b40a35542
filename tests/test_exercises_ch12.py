"""The chapter-12 checkers accept correct solutions and diagnose typical wrong ones."""

import numpy as np

from dpcp_tutorial.course.exercises import check_halfspace_depth_directions, check_whitening_counterexample


def _counts(points, data, directions):
    u = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    proj, t = np.sort(data @ u.T, axis=0), points @ u.T
    n = len(data)
    at_least = np.stack([n - np.searchsorted(proj[:, k], t[:, k], side="left") for k in range(u.shape[0])], 1)
    at_most = np.stack([np.searchsorted(proj[:, k], t[:, k], side="right") for k in range(u.shape[0])], 1)
    strictly_above = np.stack([n - np.searchsorted(proj[:, k], t[:, k], side="right") for k in range(u.shape[0])], 1)
    strictly_below = np.stack([np.searchsorted(proj[:, k], t[:, k], side="left") for k in range(u.shape[0])], 1)
    return at_least, at_most, strictly_above, strictly_below, n


def correct_depth(points, data, directions):
    at_least, at_most, _, _, n = _counts(points, data, directions)
    return np.minimum(at_least, at_most).min(axis=1) / n


def open_halfspaces(points, data, directions):
    _, _, above, below, n = _counts(points, data, directions)
    return np.minimum(above, below).min(axis=1) / n


def one_sided(points, data, directions):
    at_least, _, _, _, n = _counts(points, data, directions)
    return at_least.min(axis=1) / n


def averaged(points, data, directions):
    at_least, at_most, _, _, n = _counts(points, data, directions)
    return np.minimum(at_least, at_most).mean(axis=1) / n


def test_depth_checker_accepts_correct(capsys):
    assert check_halfspace_depth_directions(correct_depth)
    assert "all checks passed" in capsys.readouterr().out


def test_depth_checker_diagnoses_mistakes(capsys):
    for wrong, phrase in [(open_halfspaces, "strictly"), (one_sided, "opposite halfspace"),
                          (averaged, "integrated depth"),
                          (lambda p, x, u: correct_depth(p, x, u) * len(x), "divide by n")]:
        assert not check_halfspace_depth_directions(wrong)
        assert phrase in capsys.readouterr().out


def good_pair(n):
    x = np.random.default_rng(0).standard_normal((n, 2))
    x_prime = x.copy()
    x_prime[-1] = [10.0 * n, 0.0]
    return x, x_prime, np.array([2.5, 0.0])


def two_rows_changed(n):
    x, x_prime, theta = good_pair(n)
    x_prime[0] = [5.0, 5.0]
    return x, x_prime, theta


def weak_pair(n):
    x, x_prime, theta = good_pair(n)
    x_prime[-1] = x[-1] + 0.1
    return x, x_prime, theta


def degenerate_pair(n):
    x = np.zeros((n, 2))
    x[:, 0] = np.arange(n)
    x_prime = x.copy()
    x_prime[-1, 0] = 10.0 * n
    return x, x_prime, np.array([1.0, 0.0])


def test_counterexample_checker_accepts_correct(capsys):
    assert check_whitening_counterexample(good_pair)
    assert "all checks passed" in capsys.readouterr().out


def test_counterexample_checker_diagnoses_mistakes(capsys):
    for wrong, phrase in [(two_rows_changed, "differ in 2 rows"), (weak_pair, "changes by less than 0.25"),
                          (degenerate_pair, "singular"), (lambda n: good_pair(n)[:2], "tuple")]:
        assert not check_whitening_counterexample(wrong)
        assert phrase in capsys.readouterr().out
