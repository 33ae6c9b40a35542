"""Training models with differential privacy under add/remove neighbours (chapters 5, 7 and 17).

Differential CP and DPCP compare a model fitted on :math:`D_n` with one fitted on
:math:`D_n` plus one point, and the size :math:`n` is not public. A trainer used
there must therefore be :math:`(\\varepsilon, \\delta)`-DP under the **add/remove**
neighbour relation, for data sets of every size, and symmetric in its input.
Every estimator below satisfies this; one module per model family:

* :mod:`~dpcp_tutorial.training.ridge` -- :class:`DPRidgeRegression`,
  *sufficient-statistics perturbation*: the upper triangle of :math:`X^\\top X`
  and :math:`X^\\top y` are released once with the analytic Gaussian mechanism
  (the L2-Laplace mechanism when :math:`\\delta = 0`); adding a point changes
  them by :math:`x x^\\top` and :math:`x y`, whose norms are bounded by the
  public bounds alone.
* :mod:`~dpcp_tutorial.training.logistic` -- :class:`DPLogisticRegression`,
  *output perturbation* of the minimiser of a sum-form objective with a fixed
  ridge term :math:`\\lambda`; adding a point moves the minimiser by at most
  :math:`c_K B / \\lambda`, whatever :math:`n` is.
* :mod:`~dpcp_tutorial.training.dpsgd` -- :class:`DPSGDRegressor`,
  :class:`DPSGDClassifier`, :class:`DPSGDQuantileRegressor`: DP-SGD with Poisson
  subsampling, per-example clipping and Gaussian noise, accounted with Google's
  ``dp_accounting`` (its Poisson-subsampled Gaussian accountants are stated for
  add/remove).
* :mod:`~dpcp_tutorial.training.regressogram` -- :class:`DPRegressogram`, noisy
  bin means of one feature (Laplace noise), the smallest such trainer.

What they share (public bounds, row clipping, noise, labels, the privacy
account) lives in the internal module ``_common``.

Public bounds: each feature row is clipped to Euclidean norm ``x_bound`` and
each label to ``[-y_bound, y_bound]``. Both are **required** arguments (no
default): choose them from public knowledge -- the units of the features and of
the response, a physical, clinical or codebook range -- never from the data. With ``fit_intercept=True`` a constant
column of ones is appended *after* clipping, so an augmented row has norm at
most :math:`B = \\sqrt{x_{\\max}^2 + 1}` (``fit_intercept=False``:
:math:`B = x_{\\max}`); the intercept is penalised like every other coefficient.
"""

from ._common import Y_BOUND_ADVICE, check_classes, trainer_privacy_account  # used by adaptive, dpcp, private_split
from .dpsgd import DPSGDClassifier, DPSGDQuantileRegressor, DPSGDRegressor, dp_sgd_epsilon, dp_sgd_noise_multiplier
from .logistic import DPLogisticRegression, output_perturbation_sensitivity
from .regressogram import DPRegressogram
from .ridge import DPRidgeRegression, private_sufficient_statistics, ssp_sensitivity

__all__ = [
    "ssp_sensitivity",
    "output_perturbation_sensitivity",
    "private_sufficient_statistics",
    "DPRidgeRegression",
    "DPLogisticRegression",
    "dp_sgd_epsilon",
    "dp_sgd_noise_multiplier",
    "DPSGDRegressor",
    "DPSGDClassifier",
    "DPSGDQuantileRegressor",
    "DPRegressogram",
]
