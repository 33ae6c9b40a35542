"""Shared input checks and random-number handling.

Every public function of :mod:`dpcp_tutorial` validates its arguments through the
helpers below, so that bad input fails early with one consistent, actionable
message instead of a silent ``nan`` deep inside a computation.
"""

from __future__ import annotations

import math
import numbers
from typing import Union

import numpy as np

RandomLike = Union[None, int, np.integer, np.random.Generator]


def check_random_state(rng: RandomLike) -> np.random.Generator:
    """Turn ``rng`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
        ``None`` gives a fresh, unseeded generator; an int seeds a new
        ``numpy.random.default_rng``; a ``Generator`` is returned unchanged (so
        consecutive calls sharing it draw different numbers).

    Notes
    -----
    NumPy's legacy global state (``np.random.seed``) is never read or written.
    """
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"rng={rng} must be a non-negative integer seed")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}; "
        "create one with numpy.random.default_rng(seed)"
    )


def check_scalar(
    value,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = False,
    high_inclusive: bool = False,
    hint: str = "",
) -> float:
    """Check that ``value`` is a finite real number inside an interval.

    Returns it as a Python ``float``. Bounds are open unless the matching
    ``*_inclusive`` flag is set. ``hint`` is appended to the error message.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    suffix = f"; {hint}" if hint else ""
    if not math.isfinite(value):
        raise ValueError(f"{name}={value} must be finite{suffix}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name}={value} must be {op} {low}{suffix}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name}={value} must be {op} {high}{suffix}")
    return value


def check_alpha(alpha, name: str = "alpha") -> float:
    """Check a miscoverage level: a float strictly inside (0, 1)."""
    return check_scalar(alpha, name, low=0.0, high=1.0, hint="it is a miscoverage level, e.g. 0.1 for 90% coverage")


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Check a privacy parameter epsilon: finite and strictly positive."""
    return check_scalar(epsilon, name, low=0.0, hint="the privacy loss must be a positive number")


def check_delta(delta, name: str = "delta") -> float:
    """Check a privacy parameter delta: a float in [0, 1)."""
    return check_scalar(delta, name, low=0.0, high=1.0, low_inclusive=True,
                        hint="delta is a probability and should be far below 1/n")


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    """Check that ``value`` is an integer ``>= minimum`` and return it as ``int``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if int(value) < minimum:
        raise ValueError(f"{name}={value} must be >= {minimum}")
    return int(value)


def check_1d(values, name: str = "scores", *, unit_interval: bool = False, allow_inf: bool = False) -> np.ndarray:
    """Return ``values`` as a non-empty 1-D float array without NaN.

    Parameters
    ----------
    values : array-like
        The values to check.
    name : str
        Used in error messages.
    unit_interval : bool
        If true, require every value to lie in [0, 1] (normalised scores).
    allow_inf : bool
        If false (default), infinite values are rejected too.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}; use .ravel() if that is intended")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; at least one value is needed")
    if not np.isfinite(arr).all():  # one pass in the common case; diagnose only on failure
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains {int(np.isnan(arr).sum())} NaN value(s); remove or impute them first")
        if not allow_inf:
            raise ValueError(f"{name} contains infinite values")
    if unit_interval and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(
            f"{name} must lie in [0, 1], got range [{arr.min():.4g}, {arr.max():.4g}]; "
            "normalise by a public bound B, e.g. scores = np.minimum(residuals / B, 1)"
        )
    return arr


def check_2d(values, name: str = "X", *, min_rows: int = 1) -> np.ndarray:
    """Return ``values`` as a finite 2-D float array with at least ``min_rows`` rows.

    A 1-D input is rejected (not silently reshaped) because it is ambiguous
    between one point and many one-dimensional points.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers ({exc})") from None
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be two-dimensional (n_samples, n_features), got shape {arr.shape}; "
            "use x.reshape(-1, 1) for one feature or x.reshape(1, -1) for one point"
        )
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} has {arr.shape[0]} row(s); at least {min_rows} are needed")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no columns")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first")
    return arr


def check_same_length(*pairs: tuple[str, np.ndarray]) -> None:
    """Raise ``ValueError`` unless all named arrays have the same first dimension."""
    lengths = {name: len(arr) for name, arr in pairs}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"inconsistent numbers of samples: {desc}")
