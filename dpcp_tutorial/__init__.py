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
``datasets``                  simulated data sets                          all
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
from .datasets import make_cauchy, make_contaminated_gaussian, make_heteroscedastic_regression
from .mechanisms import exponential_mechanism, exponential_mechanism_probabilities, gumbel_max_sample
from .quantile import algorithm1_level, private_quantile, private_quantile_probabilities, quantile_edges

__version__ = "0.1.0"
