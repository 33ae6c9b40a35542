"""dpcp_tutorial: reference implementations for the book *Differentially Private
Conformal Prediction and Private Multivariate Medians*.

Every algorithm of the book lives here once; each chapter imports it. Module map:

============================  ===========================================  ========
module                        topic                                        chapter
============================  ===========================================  ========
``conformal``                 split conformal prediction                   1
``mechanisms``                Laplace, Gaussian, exponential mechanisms    2, 3
``accounting``                privacy budget ledger                        2
``quantile``                  private quantile (Algorithm 1)               3
``private_split``             private split conformal (Angelopoulos)       4
``calibrators``               peers' calibrators (P-COQS, Lap., OpenDP)    --
``mondrian``                  class-conditional private CP                 17
``adaptive``                  adaptive private intervals (normalised, CQR) 17
``dpcp``                      Differential CP and DPCP (Algorithm 2)       5, 6
``training``                  DP training: ridge, logistic, DP-SGD         7
``depth``                     halfspace, spatial, integrated dual depth    9
``median``                    private and non-private depth medians        10
``tukey_exact``               exact private Tukey median in 2D             15
``baselines``                 coordinate-wise private median, CoinPress    10
``aggregation``               robust private aggregation of updates        13
``scale``                     the releases on Dask (optional extra)        14
``_counts``                   the one counting core of the score releases  3, 4, 14
``datasets``                  simulated data sets, RAND HIE loader         all
``experiments``               full-size runners (``python -m ...``)        4–13
``exercises``                 checkers for the coding exercises            all
============================  ===========================================  ========
"""

from .conformal import (
    SplitConformalClassifier,
    SplitConformalRegressor,
    absolute_residual_score,
    aps_prediction_set,
    aps_score,
    conformal_quantile,
    conformal_rank,
    full_conformal_interval,
    interval_coverage,
    interval_width,
    lac_prediction_set,
    lac_score,
    set_coverage,
    set_size,
)
from .accounting import PrivacyBudget, Spend
from .datasets import (
    RAND_HIE_VISITS_BOUND,
    load_rand_hie,
    make_cauchy,
    make_contaminated_gaussian,
    make_heteroscedastic_regression,
)
from .mechanisms import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian_mechanism,
    gaussian_sigma,
    gumbel_max_sample,
    laplace_mechanism,
    laplace_scale,
)
from .quantile import (
    algorithm1_add_remove_loss,
    algorithm1_level,
    private_quantile,
    private_quantile_level,
    private_quantile_miscoverage_bound,
    private_quantile_privacy_loss,
    private_quantile_probabilities,
    quantile_edges,
)
from .private_split import (
    PrivateSplitConformalClassifier,
    PrivateSplitConformalRegressor,
    bounded_interval,
    normalised_residual_score,
    pps_choose_m,
    pps_corrected_level,
    pps_grid,
    pps_optimal_gamma,
    pps_private_quantile,
    pps_privacy_loss,
    pps_quantile_probabilities,
    pps_round_up,
)
from .calibrators import (
    laplace_histogram_quantile,
    laplace_prefix_tail,
    opendp_quantile,
    opendp_quantile_level,
    opendp_quantile_probabilities,
    pcoqs_corrected_level,
    pcoqs_quantile,
    pcoqs_steps,
)
from .mondrian import (
    MONDRIAN_CALIBRATORS,
    MondrianPrivateConformalClassifier,
    count_lower_margin,
    mondrian_privacy_loss,
    noisy_class_counts,
)
from .adaptive import (
    DPSGDQuantileRegressor,
    PrivateConformalizedQuantileRegressor,
    PrivateNormalizedConformalRegressor,
    adaptive_privacy_account,
    cqr_interval,
    cqr_score,
    normalized_interval,
    normalized_score,
)
from .dpcp import (
    DPCPClassifier,
    DPCPRegressor,
    DPRegressogram,
    check_dp_trainer,
    differential_cp_coverage_floor,
    differential_cp_interval,
    differential_cp_level,
    differential_cp_quantile,
    differential_cp_set,
    dpcp_interval,
    dpcp_levels,
    dpcp_quantile,
    dpcp_set,
)
from .training import (
    DPLogisticRegression,
    DPRidgeRegression,
    DPSGDClassifier,
    DPSGDRegressor,
    dp_sgd_epsilon,
    dp_sgd_noise_multiplier,
    output_perturbation_sensitivity,
    private_sufficient_statistics,
    ssp_sensitivity,
)
from .depth import (
    HALFSPACE_SENSITIVITY,
    IDD_SENSITIVITY,
    SPATIAL_SENSITIVITY,
    depth_sensitivity,
    halfspace_depth,
    integrated_dual_depth,
    integrated_dual_depth_gradient,
    random_directions,
    spatial_depth,
)
from .median import (
    GaussianPrior,
    depth_median,
    depth_median_log_probabilities,
    langevin_step_size,
    mechanism_beta,
    private_depth_median,
    public_grid,
    spatial_median,
)
from .tukey_exact import (
    TukeyDepthRegions,
    exact_cell_probabilities,
    polygon_area,
    private_tukey_median_2d,
    total_variation_on_cells,
    tukey_depth_regions,
    tukey_median_2d,
)
from .baselines import coinpress_mean, coordinatewise_private_median, pure_dp_to_zcdp, zcdp_to_approx_dp
from .aggregation import (
    aggregation_log_probabilities,
    ball_candidates,
    byzantine_updates,
    clipped_mean_sensitivity,
    dp_clipped_mean_aggregate,
    private_median_aggregate,
    robust_aggregate,
)

__version__ = "0.1.0"


def __getattr__(name):
    # ``dpcp_tutorial.scale`` needs the optional Dask extra, so it is imported on first use only.
    if name == "scale":
        import importlib

        return importlib.import_module(".scale", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
