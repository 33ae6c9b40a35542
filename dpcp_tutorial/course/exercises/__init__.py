"""Checkers for the coding exercises at the end of each chapter.

Each ``check_<name>(fn, *, time_limit=10.0, quiet=False, secret=None)`` runs a
reader's function on every one of its cases and prints specific feedback; it
returns an :class:`ExerciseResult` that counts the cases passed and is truthy
exactly when every case passes. Each call of ``fn`` may take ``time_limit``
seconds; ``None``, exceptions, wrong types, shapes or NaN, and calls that run
too long fail a case with a message (the protocol in ``_common.py``). An
exercise with several functions takes one per function. Usage in a chapter::

    from dpcp_tutorial.course.exercises import check_conformal_quantile
    assert check_conformal_quantile(my_quantile)

``python -m dpcp_tutorial.course.grading`` runs every checker over a folder of
submissions (:mod:`dpcp_tutorial.course.grading`).

The module is imported lazily: a checker's chapter module is loaded when the
checker is first used (so the grader's sandbox, which needs only
``_runtime``, loads none of them).
"""

import importlib
import sys



#: public name -> the chapter module that defines it
_EXPORTS = {
    "ExerciseResult": "_common", "fixed_cases": "_fixed", "grade_fixed_cases": "_fixed",
    "check_aps_prediction_set": "ch01", "check_conformal_quantile": "ch01",
    "check_private_mean": "ch02", "check_randomized_response": "ch02",
    "check_algorithm1_loss": "ch03", "check_miscoverage_bound": "ch03", "check_release_log_probabilities": "ch03",
    "check_stable_probabilities": "ch03",
    "check_pps_level": "ch04", "check_pps_round_up": "ch04", "check_private_split_assembly": "ch04",
    "check_coin_split": "ch04", "check_subsample_or_pad": "ch04",
    "check_differential_cp_quantile": "ch05",
    "check_dpcp_assembly": "ch06", "check_dpcp_levels": "ch06", "check_dpcp_level": "ch06",
    "check_dpcp_miss_bound": "ch06",
    "check_clip_gradients": "ch07", "check_ssp_sensitivity": "ch07",
    "check_bounded_interval": "ch08", "check_smallest_n": "ch08",
    "check_integrated_dual_depth": "ch09", "check_spatial_depth": "ch09",
    "check_langevin_step": "ch10", "check_spatial_worst_case": "ch10",
    "check_interval_log_probabilities": "ch11",
    "check_halfspace_depth_directions": "ch12", "check_whitening_counterexample": "ch12",
    "check_clipped_mean": "ch13", "check_tukey_safe_attackers": "ch13",
    "check_leaked_quantile": "ch14", "check_partition_counts": "ch14",
    "check_annulus_area": "ch15", "check_tukey_level_probabilities": "ch15",
    "check_pcoqs_noise_sd": "ch16", "check_pool_coverage": "ch16",
    "check_bounded_normalized_score": "ch17", "check_mondrian_thresholds": "ch17", "check_pipeline_privacy": "ch17",
    "check_first_passing": "ch18", "check_stop_probability": "ch18", "check_unbounded_add_remove_loss": "ch18",
    "check_centre_rank_error": "ch19", "check_private_prior_epsilon": "ch19",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(_EXPORTS)


def all_checkers() -> dict:
    """Every checker, by name, in chapter order (loads every chapter module)."""
    module = sys.modules[__name__]
    found = {name: getattr(module, name) for name in _EXPORTS if name.startswith("check_")}
    return dict(sorted(found.items(), key=lambda item: (_EXPORTS[item[0]], item[0])))
