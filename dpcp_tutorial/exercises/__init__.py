"""Checkers for the coding exercises at the end of each chapter.

Each ``check_<name>(fn, *, time_limit=10.0, quiet=False)`` runs a reader's
function on hidden cases and prints specific feedback; it returns an
:class:`ExerciseResult`, truthy exactly when every case passes. Each call of
``fn`` may take ``time_limit`` seconds; ``None``, exceptions, wrong types,
shapes or NaN, and calls that run too long fail the check with a message
(the shared harness in ``_common.py``). Usage in a chapter::

    from dpcp_tutorial.exercises import check_conformal_quantile
    assert check_conformal_quantile(my_quantile)

``python -m dpcp_tutorial.grading`` runs every checker over a folder of
submissions (:mod:`dpcp_tutorial.grading`).
"""

from ._common import ExerciseResult  # noqa: F401
from .ch01 import check_aps_prediction_set, check_conformal_quantile  # noqa: F401
from .ch02 import check_private_mean, check_randomized_response  # noqa: F401
from .ch03 import check_algorithm1_loss, check_stable_probabilities  # noqa: F401
from .ch04 import check_pps_level, check_pps_round_up, check_private_split_assembly  # noqa: F401
from .ch05 import check_differential_cp_quantile  # noqa: F401
from .ch06 import check_dpcp_assembly, check_dpcp_levels  # noqa: F401
from .ch07 import check_clip_gradients, check_ssp_sensitivity  # noqa: F401
from .ch08 import check_bounded_interval, check_smallest_n  # noqa: F401
from .ch09 import check_integrated_dual_depth, check_spatial_depth  # noqa: F401
from .ch10 import check_langevin_step, check_spatial_worst_case  # noqa: F401
from .ch11 import check_interval_log_probabilities  # noqa: F401
from .ch12 import check_halfspace_depth_directions, check_whitening_counterexample  # noqa: F401
from .ch13 import check_clipped_mean, check_tukey_safe_attackers  # noqa: F401
from .ch14 import check_leaked_quantile, check_partition_counts  # noqa: F401
from .ch15 import check_annulus_area, check_tukey_level_probabilities  # noqa: F401
from .ch16 import check_pcoqs_noise_sd, check_pool_coverage  # noqa: F401
from .ch17 import check_bounded_normalized_score, check_mondrian_thresholds, check_pipeline_privacy  # noqa: F401
