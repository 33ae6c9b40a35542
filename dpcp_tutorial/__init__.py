"""dpcp_tutorial: reference implementations for the book *Differentially Private
Conformal Prediction and Private Multivariate Medians*.

Every algorithm of the book lives here once; each chapter imports it. The package has
three layers, one folder each:

1. **The library** (the modules directly in ``dpcp_tutorial/`` and their sub-packages):
   what an engineer imports. Every public name is exported here (``from dpcp_tutorial
   import private_quantile``).
2. **The course tooling** (``dpcp_tutorial/course/``): the exercises' checkers, the batch
   grader, the student edition and the nbgrader course (see :mod:`dpcp_tutorial.course`).
3. **The experiments and benchmarks** (``dpcp_tutorial/experiments/`` and ``benchmarks/``
   at the repository's root): the full-size runs that the book's figures and tables are
   made with, and the timings against baselines.

The rule: the library is built on nothing of the other two layers, and the experiments
and benchmarks on nothing of the course tooling. So no library module imports
``dpcp_tutorial.course`` or ``dpcp_tutorial.experiments`` (nor ``benchmarks``), and no
experiment or benchmark imports ``dpcp_tutorial.course`` (``tests/test_layers.py``).
The library's modules:

============================  ===========================================  ========
module                        topic                                        chapter
============================  ===========================================  ========
``conformal``                 split conformal prediction                   1
``mechanisms``                Laplace, Gaussian, exponential mechanisms    2, 3
``accounting``                privacy budget ledger                        2
``quantile``                  private quantile (Algorithm 1)               3
``unbounded``                 private quantile without a score bound       18
``private_split``             private split conformal (Angelopoulos)       4
``calibrators``               peers' calibrators (P-COQS, Lap., OpenDP)    --
``mondrian``                  class-conditional private CP                 17
``adaptive``                  adaptive private intervals (normalised, CQR) 17
``dpcp``                      Differential CP and DPCP (Algorithm 2)       5, 6
``training``                  DP training: ridge, logistic, DP-SGD         5, 7, 17
``preprocessing``             scaling from public ranges (PublicScaler)    7
``depth``                     halfspace, spatial, integrated dual depth    9
``median``                    private and non-private depth medians        10
``localize``                  private centre and scale without bounds      19
``tukey_exact``               exact private Tukey median in 2D             15
``baselines``                 coordinate-wise private median, CoinPress    10
``aggregation``               robust private aggregation of updates        13
``scale``                     the releases on Dask (optional extra)        14
``_counts``                   the one counting core of the score releases  3, 4, 14
``_split_core``               the split estimators' release core           1, 4, 6, 17
``_mechanism_core``           OpenDP samplers, AboveThreshold              2, 3, 18, 19
``_depth_core``               depths over public directions                9, 10, 14
``_median_core``              the depth median's public checks             10, 14, 19
``_calibrator_core``          the peers' calibrators' rank corrections     16
``datasets``                  simulated data sets, RAND HIE loader         all
============================  ===========================================  ========

The other two layers:

============================  ===========================================  ========
module                        topic                                        chapter
============================  ===========================================  ========
``course.exercises``          checkers for the coding exercises            all
``course.grading``            batch grading of submissions in a sandbox    --
``course.student_edition``    the student edition (``make student``)       --
``course.make_nbgrader``      an nbgrader course (``make nbgrader``)       --
``experiments``               full-size runners (``python -m ...``)        4–13
============================  ===========================================  ========

``dpcp_tutorial.exercises`` and ``dpcp_tutorial.grading``, the course tooling's names from
before it had a folder of its own, still import: they are the same module objects as
``dpcp_tutorial.course.exercises`` and ``dpcp_tutorial.course.grading`` (and so are their
modules, ``dpcp_tutorial.exercises.ch03`` ...), and ``python -m dpcp_tutorial.grading``
runs the grader.
"""

# The package is imported lazily (PEP 562): ``import dpcp_tutorial`` loads none of its
# modules, and ``from dpcp_tutorial import NAME`` (or ``dpcp_tutorial.NAME``) imports only the
# module that defines NAME, with what it needs (numpy, scipy, scikit-learn ...). The names,
# ``__all__`` and ``dir(dpcp_tutorial)`` are those of an eager import (tests/test_hygiene.py).

import importlib
import sys

__version__ = "0.1.0"

#: public name -> the module that defines it
_EXPORTS = {
    # conformal
    "SplitConformalClassifier": "conformal",
    "SplitConformalRegressor": "conformal",
    "absolute_residual_score": "conformal",
    "aps_prediction_set": "conformal",
    "aps_score": "conformal",
    "conformal_quantile": "conformal",
    "conformal_rank": "conformal",
    "full_conformal_interval": "conformal",
    "interval_coverage": "conformal",
    "interval_width": "conformal",
    "lac_prediction_set": "conformal",
    "lac_score": "conformal",
    "set_coverage": "conformal",
    "set_size": "conformal",
    # accounting
    "PrivacyAccount": "accounting",
    "PrivacyBudget": "accounting",
    "ReleaseWarning": "accounting",
    "Spend": "accounting",
    # datasets
    "RAND_HIE_VISITS_BOUND": "datasets",
    "load_rand_hie": "datasets",
    "make_cauchy": "datasets",
    "make_contaminated_gaussian": "datasets",
    "make_heteroscedastic_regression": "datasets",
    # mechanisms
    "exponential_mechanism": "mechanisms",
    "exponential_mechanism_probabilities": "mechanisms",
    "gaussian_mechanism": "mechanisms",
    "gaussian_sigma": "mechanisms",
    "gumbel_max_sample": "mechanisms",
    "laplace_mechanism": "mechanisms",
    "laplace_scale": "mechanisms",
    # unbounded
    "GridHistogram": "unbounded",
    "unbounded_grid": "unbounded",
    "unbounded_histogram": "unbounded",
    "unbounded_private_quantile": "unbounded",
    "unbounded_quantile_miscoverage_bound": "unbounded",
    "unbounded_quantile_privacy_loss": "unbounded",
    "unbounded_quantile_probabilities": "unbounded",
    "unbounded_quantile_target": "unbounded",
    # quantile
    "algorithm1_add_remove_loss": "quantile",
    "algorithm1_level": "quantile",
    "private_quantile": "quantile",
    "private_quantile_level": "quantile",
    "private_quantile_miscoverage_bound": "quantile",
    "private_quantile_privacy_loss": "quantile",
    "private_quantile_probabilities": "quantile",
    "quantile_edges": "quantile",
    # private_split
    "PrivateSplitConformalClassifier": "private_split",
    "PrivateSplitConformalRegressor": "private_split",
    "bounded_interval": "private_split",
    "normalized_residual_score": "private_split",
    "pps_choose_m": "private_split",
    "pps_corrected_level": "private_split",
    "pps_grid": "private_split",
    "pps_optimal_gamma": "private_split",
    "pps_private_quantile": "private_split",
    "pps_privacy_loss": "private_split",
    "pps_quantile_probabilities": "private_split",
    "pps_round_up": "private_split",
    # calibrators
    "laplace_histogram_quantile": "calibrators",
    "laplace_prefix_tail": "calibrators",
    "opendp_quantile": "calibrators",
    "opendp_quantile_level": "calibrators",
    "opendp_quantile_probabilities": "calibrators",
    "pcoqs_corrected_level": "calibrators",
    "pcoqs_quantile": "calibrators",
    "pcoqs_steps": "calibrators",
    # mondrian
    "MONDRIAN_CALIBRATORS": "mondrian",
    "MondrianPrivateConformalClassifier": "mondrian",
    "count_lower_margin": "mondrian",
    "mondrian_privacy_loss": "mondrian",
    "noisy_class_counts": "mondrian",
    # adaptive
    "PrivateConformalizedQuantileRegressor": "adaptive",
    "PrivateNormalizedConformalRegressor": "adaptive",
    "adaptive_privacy_account": "adaptive",
    "cqr_interval": "adaptive",
    "cqr_score": "adaptive",
    "normalized_interval": "adaptive",
    "normalized_score": "adaptive",
    # dpcp
    "DPCPClassifier": "dpcp",
    "DPCPRegressor": "dpcp",
    "check_dp_trainer": "dpcp",
    "differential_cp_coverage_floor": "dpcp",
    "differential_cp_interval": "dpcp",
    "differential_cp_level": "dpcp",
    "differential_cp_quantile": "dpcp",
    "differential_cp_set": "dpcp",
    "dpcp_interval": "dpcp",
    "dpcp_levels": "dpcp",
    "dpcp_quantile": "dpcp",
    "dpcp_set": "dpcp",
    # preprocessing
    "PublicScaler": "preprocessing",
    # training
    "DPLogisticRegression": "training",
    "DPRidgeRegression": "training",
    "DPRegressogram": "training",
    "DPSGDClassifier": "training",
    "DPSGDQuantileRegressor": "training",
    "DPSGDRegressor": "training",
    "dp_sgd_epsilon": "training",
    "dp_sgd_noise_multiplier": "training",
    "output_perturbation_sensitivity": "training",
    "private_sufficient_statistics": "training",
    "ssp_sensitivity": "training",
    # depth
    "HALFSPACE_SENSITIVITY": "depth",
    "IDD_SENSITIVITY": "depth",
    "SPATIAL_SENSITIVITY": "depth",
    "depth_sensitivity": "depth",
    "halfspace_depth": "depth",
    "integrated_dual_depth": "depth",
    "integrated_dual_depth_gradient": "depth",
    "random_directions": "depth",
    "spatial_depth": "depth",
    # median
    "GaussianPrior": "median",
    "depth_median": "median",
    "depth_median_account": "median",
    "depth_median_log_probabilities": "median",
    "langevin_step_size": "median",
    "mechanism_eta": "median",
    "private_depth_median": "median",
    "private_prior": "median",
    "public_grid": "median",
    # localize
    "private_localization": "localize",
    "spatial_median": "median",
    # tukey_exact
    "TukeyDepthRegions": "tukey_exact",
    "exact_cell_probabilities": "tukey_exact",
    "polygon_area": "tukey_exact",
    "private_tukey_median_2d": "tukey_exact",
    "total_variation_on_cells": "tukey_exact",
    "tukey_depth_regions": "tukey_exact",
    "tukey_median_2d": "tukey_exact",
    # baselines
    "coinpress_mean": "baselines",
    "coordinatewise_private_median": "baselines",
    "pure_dp_to_zcdp": "baselines",
    "zcdp_to_approx_dp": "baselines",
    # aggregation
    "aggregation_log_probabilities": "aggregation",
    "ball_candidates": "aggregation",
    "byzantine_updates": "aggregation",
    "clipped_mean_sensitivity": "aggregation",
    "dp_clipped_mean_aggregate": "aggregation",
    "private_median_aggregate": "aggregation",
    "robust_aggregate": "aggregation",
}

#: deprecated old name -> the module that keeps it (importable, warns when called; not in ``__all__``)
_DEPRECATED = {
    "mechanism_beta": "median",
    "normalised_residual_score": "private_split",
}

#: submodules bound as attributes after an eager import (and those imported on first use:
#: ``scale`` needs the optional Dask extra; ``experiments``, ``course`` and the course tooling's
#: former names ``exercises``, ``grading``)
_SUBMODULES = ("conformal", "accounting", "datasets", "mechanisms", "quantile", "private_split", "calibrators", "mondrian", "adaptive", "dpcp", "preprocessing", "training", "depth", "localize", "median", "tukey_exact", "baselines", "aggregation", "_counts", "_validation")
_ON_DEMAND = ("scale", "experiments", "course", "exercises", "grading")

__all__ = sorted(_EXPORTS) + sorted(m for m in _SUBMODULES if not m.startswith("_"))


def __getattr__(name):
    if name in _DEPRECATED:   # not cached: a deprecated name never joins the module's namespace
        return getattr(importlib.import_module(f".{_DEPRECATED[name]}", __name__), name)
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
    elif name in _SUBMODULES or name in _ON_DEMAND:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


#: the course tooling's former names -> the modules of ``course/`` they name
_MOVED = {"exercises": "course.exercises", "grading": "course.grading"}


class _MovedModules:
    """Import ``dpcp_tutorial.exercises[.x]`` and ``dpcp_tutorial.grading[.x]`` as the very module objects
    ``dpcp_tutorial.course.exercises[.x]`` and ``dpcp_tutorial.course.grading[.x]`` (a meta path finder
    and loader, first on ``sys.meta_path`` so that no other finder loads a second copy from the folder).
    ``get_code`` is what ``python -m dpcp_tutorial.grading`` runs: the moved package's ``__main__``."""

    @staticmethod
    def target(fullname):
        """The module of ``course/`` that ``fullname`` names, or ``None`` if it names none."""
        first, _, rest = fullname.removeprefix(__name__ + ".").partition(".")
        if not fullname.startswith(__name__ + ".") or first not in _MOVED:
            return None
        return f"{__name__}.{_MOVED[first]}" + (f".{rest}" if rest else "")

    def find_spec(self, fullname, path=None, target=None):
        import importlib.machinery
        import importlib.util

        moved = self.target(fullname)
        spec = importlib.util.find_spec(moved) if moved else None
        if spec is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=spec.origin,
                                              is_package=spec.submodule_search_locations is not None)

    def create_module(self, spec):
        module = importlib.import_module(self.target(spec.name))
        spec.loader_state = module.__spec__     # the import system sets __spec__ to ``spec`` next
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state      # the module ran when it was first imported

    def get_code(self, fullname):
        import importlib.util

        moved = self.target(fullname)
        return importlib.util.find_spec(moved).loader.get_code(moved)


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())

_INTERNAL = {"importlib", "sys", "_EXPORTS", "_SUBMODULES", "_ON_DEMAND", "_DEPRECATED", "_MOVED",
             "_MovedModules", "_INTERNAL", "__all__", "__dir__"}


def __dir__():
    return sorted((set(globals()) - _INTERNAL) | set(_EXPORTS) | set(_SUBMODULES))
