"""Checkers for the coding exercises at the end of each chapter.

Each ``check_<name>(fn)`` runs a reader's function on hidden cases and prints
specific feedback; it returns ``True`` when every case passes. Usage in a
chapter::

    from dpcp_tutorial.exercises import check_conformal_quantile
    check_conformal_quantile(my_quantile)
"""

from ._common import ExerciseResult  # noqa: F401
from .ch01 import check_aps_prediction_set, check_conformal_quantile  # noqa: F401
