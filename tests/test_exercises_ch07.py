"""The chapter-7 checkers accept a correct solution and diagnose typical wrong ones."""

import math

import numpy as np

from dpcp_tutorial.course.exercises import check_clip_gradients, check_ssp_sensitivity


def correct_sensitivity(x_bound, y_bound, fit_intercept):
    b2 = x_bound**2 + (1.0 if fit_intercept else 0.0)
    return math.sqrt(b2**2 + b2 * y_bound**2)


def no_intercept(x_bound, y_bound, fit_intercept):
    return x_bound * math.sqrt(x_bound**2 + y_bound**2)


def replace_one(x_bound, y_bound, fit_intercept):
    return 2 * correct_sensitivity(x_bound, y_bound, fit_intercept)


def gram_only(x_bound, y_bound, fit_intercept):
    return x_bound**2 + (1.0 if fit_intercept else 0.0)


def summed_norms(x_bound, y_bound, fit_intercept):
    b = math.sqrt(x_bound**2 + (1.0 if fit_intercept else 0.0))
    return b**2 + b * y_bound


def test_sensitivity_checker_accepts_correct(capsys):
    assert check_ssp_sensitivity(correct_sensitivity)
    assert "all checks passed" in capsys.readouterr().out


def test_sensitivity_checker_diagnoses_mistakes(capsys):
    for wrong, phrase in [(no_intercept, "forgot the intercept"), (replace_one, "replace-one"),
                          (gram_only, "only counted the Gram"), (summed_norms, "added the two norms")]:
        assert not check_ssp_sensitivity(wrong)
        assert phrase in capsys.readouterr().out


def test_sensitivity_checker_reports_bad_types(capsys):
    assert not check_ssp_sensitivity(lambda *a: "big")
    assert "expected a number" in capsys.readouterr().out
    assert not check_ssp_sensitivity(lambda *a: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out


def correct_clip(G, clip_norm):
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))


def batch_clip(G, clip_norm):
    return G * min(1.0, clip_norm / np.linalg.norm(G))


def coordinate_clip(G, clip_norm):
    return np.clip(G, -clip_norm, clip_norm)


def normalise_all(G, clip_norm):
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G * clip_norm / np.maximum(norms, 1e-300)


def nan_on_zero(G, clip_norm):
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return G * np.minimum(1.0, clip_norm / norms) * (norms / norms)


def in_place(G, clip_norm):
    G *= np.minimum(1.0, clip_norm / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-300))
    return G


def test_clip_checker_accepts_correct(capsys):
    assert check_clip_gradients(correct_clip)
    assert "all checks passed" in capsys.readouterr().out


def test_clip_checker_diagnoses_mistakes(capsys):
    for wrong, phrase in [(batch_clip, "whole batch"), (coordinate_clip, "each coordinate"),
                          (normalise_all, "normalised every row"), (nan_on_zero, "NaN"), (in_place, "in place")]:
        assert not check_clip_gradients(wrong)
        assert phrase in capsys.readouterr().out


def test_clip_checker_reports_shape_errors(capsys):
    assert not check_clip_gradients(lambda G, c: correct_clip(G, c).ravel())
    assert "shape" in capsys.readouterr().out
