"""Shared input checks and random-number handling.

Every public function of :mod:`dpcp_tutorial` validates its arguments through the
helpers below, so that bad input fails early with one consistent, actionable
message instead of a silent ``nan`` deep inside a computation.

Types are strict: numbers must be real numbers (``bool``, numeric strings such
as ``"0.1"`` and complex numbers are refused with ``TypeError``, never cut or
converted), flags must be real ``bool`` values (:func:`check_bool`; the string
``"False"`` is not false), arrays must hold real numbers.

Errors in private paths
-----------------------
A raise that depends on private data is part of the output. The validators
below are therefore split into two kinds:

* checks of **public** inputs (privacy parameters, levels, bounds, bins, the
  data's type and shape, whose schema and record count are declared public in
  the function's docstring) -- their messages may quote the offending value,
  which the caller chose;
* checks of the **data domain** (``check_1d``/``check_2d``/``check_array``:
  NaN, infinite values, values beyond :data:`MAX_MAGNITUDE` = 1e100 in
  magnitude, scores outside ``[0, 1]``). Each private mechanism is stated for
  data sets inside its domain (reals of magnitude at most 1e100, where no
  internal product overflows; scores in ``[0, 1]``; a mechanism that handles
  every finite value, such as the exact Tukey median with its public box,
  passes ``max_magnitude=None``),
  and its guarantee compares two neighbouring data sets *of that domain*: a
  domain check raises for neither of them, so it never distinguishes two
  neighbours the guarantee is about. A data set outside the domain is a
  programming error (an unnormalised score, a missing value), and refusing it
  is the only safe answer: clipping NaN has no meaning, and silently clipping
  an unnormalised score hides a bound that was chosen wrongly. To keep the
  refusal from publishing anything beyond "this input is not in the domain",
  the messages are **the same for every invalid data set**: they never quote a
  count, a range, a value or the position of a bad entry
  (tests/test_private_errors.py checks this). Normalise with a public bound and
  clip *before* calling (``np.minimum(residuals / B, 1)``), and the domain
  check never fires.

Features that a *model* receives are not domain-checked: they go to the
model as they are (DataFrames matched by column name, missing values
included) and the model decides (:func:`check_features`); a record it
refuses, or whose score comes out NaN or infinite, gets the worst score
(:func:`model_outputs`), in memory as on Dask.

Kinds of values
---------------
NumPy scalars of every dtype are read as the Python ``int`` or ``float`` they
equal (so that sizes never wrap around in a NumPy integer), and so is a
``Fraction`` where a real number is expected; 0-d arrays, ``Decimal``,
``pd.NA``, ``NaT`` and NumPy bools are refused as numbers. Arrays may be lists, read-only, non-contiguous, float16 to longdouble,
pandas columns (nullable ones without ``<NA>``); a masked array, an iterator,
a ragged sequence or a missing value is refused by name (:func:`as_array`).
``rng`` may also be a ``SeedSequence`` or a bit generator, never NumPy's
legacy ``RandomState``.

Models on private records
-------------------------
A model evaluated on private records (a calibration step, a one-call release,
the partition scores at scale) runs inside :func:`silenced_model`: its own
warnings are dropped, since one record could trigger them, and its outputs are
mapped to public bounds by the caller.
"""

from __future__ import annotations

import collections.abc
import contextlib
import functools
import math
import numbers
import threading
import warnings
from typing import Union

import numpy as np

RandomLike = Union[None, int, np.integer, np.random.Generator, np.random.SeedSequence, np.random.BitGenerator]

#: Largest magnitude accepted for a number or a data value. Beyond it squares and
#: products (sensitivities, Gram matrices, exponents) overflow; no realistic input
#: comes near it, so such a value is refused with a message instead of a silent inf/NaN.
MAX_MAGNITUDE = 1e100

#: Largest public record count (a public calibration size ``n``, a class's public size) the package accepts:
#: a data set may be padded to it, and 10**9 float64 values are 8 GB.
MAX_RECORDS = 10**9

#: Largest public grid of a release (the tight quantile's edges, the PPS grid): every release costs O(M)
#: memory and time.
MAX_BINS = 10**8

#: The variants of the private quantile (Algorithm 1): ``"tight"`` and the DPCP write-up's ``"original"``.
QUANTILE_VARIANTS = ("tight", "original")


def check_random_state(rng: RandomLike) -> np.random.Generator:
    """Turn ``rng`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    rng : None, int, numpy.random.Generator, SeedSequence or BitGenerator
        ``None`` gives a fresh, unseeded generator; an int seeds a new
        ``numpy.random.default_rng``; a ``Generator`` is returned unchanged (so
        consecutive calls sharing it draw different numbers). A
        ``SeedSequence`` or a bit generator (``PCG64(seed)``, ...) is wrapped by
        ``numpy.random.default_rng``, as NumPy does: ``SeedSequence(s)`` and
        ``PCG64(s)`` give the same draws as the seed ``s``.

    Notes
    -----
    NumPy's legacy global state (``np.random.seed``) is never read or written;
    a legacy ``RandomState`` is refused (it is not a ``Generator``).
    """
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if int(rng) < 0:
            raise ValueError(f"rng={rng} must be a non-negative integer seed")
        return np.random.default_rng(int(rng))
    if isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    raise TypeError(
        f"rng must be None, an int seed, a numpy.random.Generator, a SeedSequence or a bit generator, got "
        f"{type(rng).__name__}; create one with numpy.random.default_rng(seed)"
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
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a real number (not a string, bool or complex), got {type(value).__name__}")
    suffix = f"; {hint}" if hint else ""
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large to be represented as a float{suffix}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name}={value} must be finite{suffix}")
    if abs(value) > MAX_MAGNITUDE:
        raise ValueError(f"{name}={value:g} is too large in magnitude (the package accepts at most "
                         f"{MAX_MAGNITUDE:g}; rescale the problem){suffix}")
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


def check_positive_int(value, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """Check that ``value`` is an integer in ``[minimum, maximum]`` and return it as ``int``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer (not a float, string or bool), got {type(value).__name__}")
    if int(value) < minimum:
        raise ValueError(f"{name}={value} must be >= {minimum}")
    if maximum is not None and int(value) > maximum:
        raise ValueError(f"{name}={value} must be <= {maximum}")
    return int(value)


def check_bool(value, name: str) -> bool:
    """Check that ``value`` is a real boolean (``True``/``False`` or a NumPy bool) and return it.

    Flags are never read by truthiness: the string ``"False"``, ``0`` or
    ``None`` would silently act as a boolean of the wrong kind.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def as_array(values, name: str) -> np.ndarray:
    """``np.asarray(values)`` for any kind of values (numbers, labels), refusing what it would misread (TypeError).

    A masked array is refused: ``np.asarray`` would drop its mask and count the
    masked entries as data. An iterator or generator is refused (``np.asarray``
    would wrap it as one opaque object), and so is a ragged sequence (rows of
    different lengths), each with a message that names ``name``.
    """
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array: its masked entries would be counted as data; pass "
                        f"{name}.compressed() (the unmasked entries) or {name}.filled(value) explicitly")
    if isinstance(values, collections.abc.Iterator):
        raise TypeError(f"{name} must be an array, got an iterator or generator; pass a list or an array "
                        "(e.g. np.fromiter(...))")
    try:
        return np.asarray(values)
    except (TypeError, ValueError) as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise TypeError(f"{name} must be an array with rows of equal length (got a ragged sequence); pad or "
                            "split it first") from None
        raise TypeError(f"{name} must be an array of real numbers ({exc})") from None


def real_array(values, name: str) -> np.ndarray:
    """``values`` as a float array, refusing strings, complex numbers and other non-real entries (TypeError).

    The refusals of :func:`as_array` apply (masked arrays, iterators, ragged
    sequences); missing values of pandas (``pd.NA``, ``NaT``, a nullable
    column holding ``<NA>``) are refused like ``None``.
    """
    raw = as_array(values, name)
    kind = raw.dtype.kind
    if kind == "c":
        raise TypeError(f"{name} must hold real numbers, got complex values; take .real or abs() explicitly")
    if kind == "b" and raw.ndim == 0:
        raise TypeError(f"{name} must be a real number, got a bool")
    if kind in "USaV":
        raise TypeError(f"{name} must hold real numbers, got strings or raw bytes; convert them with float() "
                        "yourself if that is intended")
    if kind in "mM":
        raise TypeError(f"{name} must hold real numbers, got dates or time deltas")
    if kind == "O":
        if not all(_is_real_entry(v) for v in raw.ravel()):
            raise TypeError(f"{name} must be an array of real numbers (found an entry that is not a real "
                            "number -- a missing value such as None, pd.NA or NaT, a string, a nested sequence "
                            "-- or rows of different lengths); drop or impute missing values first")
    try:
        return raw.astype(float, copy=False)
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(f"{name} must be an array of real numbers ({exc})") from None


def private_responses(y, name: str = "y", *, allow_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Private calibration responses read record by record: ``(values, usable)``, 1-D.

    Only the dtype and shape (the schema) can be refused. An entry that is not a
    finite real number within :data:`MAX_MAGNITUDE` -- NaN, an infinity, 1e300,
    ``None``, ``pd.NA`` (a missing response turns a column into objects), a
    string in an object column -- is unusable: its value is 0 and the caller
    gives its record the worst score, whatever the other records are. The
    messages quote no value and no size.
    """
    if text_column(y):
        raise TypeError(f"{name} must hold real numbers, got a column of text, categories or dates (its dtype); "
                        "convert it with a public rule first")
    raw = as_array(y, name)
    if raw.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got a {raw.ndim}-D array; use .ravel() if that is "
                         "intended")
    if raw.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty; at least one value is needed")
    if raw.dtype.kind == "O":
        values = np.array([_real_or_nan(v) for v in raw.tolist()], dtype=float)
    else:
        values = real_array(raw, name)                      # a numeric dtype, or the schema's TypeError
    with np.errstate(invalid="ignore"):
        usable = np.isfinite(values) & (np.abs(values) <= MAX_MAGNITUDE)
    return np.where(usable, values, 0.0), usable


def text_column(values) -> bool:
    """True for a pandas column whose dtype holds text, categories or dates: the schema, public.

    Converted to NumPy such a column becomes an object array, like a numeric column
    with a missing value; its pandas dtype tells them apart without reading a value.
    """
    if not _from_pandas(values):
        return False
    dtype = getattr(values, "dtype", None)
    return type(dtype).__name__ in ("StringDtype", "CategoricalDtype") or getattr(dtype, "kind", "") in "mM"


def _is_real_entry(value) -> bool:
    """Whether one entry of an object array is a real number (a bool counts, a string does not)."""
    return isinstance(value, (numbers.Real, np.floating, np.integer, np.bool_)) and not isinstance(value, str)


def _real_or_nan(value) -> float:
    if not _is_real_entry(value):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):       # an int beyond the float range, an odd Real subclass
        return math.nan


def check_array(values, name: str, *, max_ndim: int = 2) -> np.ndarray:
    """Return ``values`` as a finite float array with at most ``max_ndim`` dimensions (a scalar is 0-D)."""
    arr = real_array(values, name)
    if arr.ndim > max_ndim:
        raise ValueError(f"{name} must have at most {max_ndim} dimension(s), got {arr.ndim}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first")
    _check_magnitude(arr, name)
    return arr


_DOT_SIZE = 4096
"""Up to this many entries :func:`_surely_bounded` uses one BLAS dot (single-threaded at this size)."""


def _surely_bounded(arr: np.ndarray, limit: float) -> bool:
    """True when every entry is finite with magnitude at most ``limit``; one cheap pass, no temporary.

    Small arrays: :math:`\\sum_i x_i^2 \\le \\text{limit}^2` implies :math:`|x_i| \\le \\text{limit}`
    for every :math:`i`, and a NaN or infinite entry makes the sum NaN or infinite (one
    BLAS call, which warns about nothing). Large arrays: the minimum and the maximum, where a NaN propagates (two SIMD
    reductions, no BLAS threads). ``False`` proves nothing (a sum of squares may
    overflow for valid data): the caller then runs the entry-wise checks, which raise
    their usual messages or accept.
    """
    if arr.size == 0:      # no entry to check (BLAS and the reductions refuse empty input)
        return True
    if arr.size <= _DOT_SIZE and limit * limit <= np.finfo(float).max and arr.dtype == np.float64:
        flat = arr.ravel()
        return bool(_blas_dot()(flat, flat) <= limit * limit)
    return bool(-limit <= arr.min() and arr.max() <= limit)


_DDOT = []


def _blas_dot():
    """SciPy's BLAS ``ddot``, imported once: unlike ``numpy.dot`` it raises no overflow warning (an overflowing
    sum of squares is an answer here, not an error)."""
    if not _DDOT:
        from scipy.linalg.blas import ddot

        _DDOT.append(ddot)
    return _DDOT[0]


def _check_magnitude(arr: np.ndarray, name: str, limit: float = MAX_MAGNITUDE) -> None:
    """Refuse values beyond ``limit`` (same message for every such data set)."""
    if arr.size and not np.abs(arr).max() <= limit:
        raise ValueError(f"{name} contains values larger than {limit:g} in magnitude, where products "
                         "overflow; rescale the data")


def check_1d(values, name: str = "scores", *, unit_interval: bool = False, allow_inf: bool = False,
             max_magnitude: float | None = MAX_MAGNITUDE, allow_empty: bool = False) -> np.ndarray:
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
    max_magnitude : float or None
        Finite values beyond it are rejected (default :data:`MAX_MAGNITUDE`);
        ``None`` accepts every finite value.
    allow_empty : bool
        Accept an empty array (a private part whose size is not public, e.g.
        a calibration set subsampled or padded to a public size).
    """
    arr = real_array(values, name)
    if arr.ndim != 1:
        # the number of dimensions only: a shape would quote the (possibly private) record count
        raise ValueError(f"{name} must be one-dimensional, got a {arr.ndim}-D array; use .ravel() if that is "
                         "intended")
    if arr.size == 0:
        if allow_empty:
            return arr
        raise ValueError(f"{name} is empty; at least one value is needed")
    if not unit_interval and max_magnitude is not None and _surely_bounded(arr, max_magnitude):
        return arr                  # finite and within max_magnitude (one pass); otherwise diagnose below
    if not np.isfinite(arr).all():  # one pass in the common case; diagnose only on failure
        # data-domain errors: the same message for every invalid data set (no counts, no values)
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN values; remove or impute them first")
        if not allow_inf:
            raise ValueError(f"{name} contains infinite values; only finite values are allowed")
    if unit_interval and not (arr.min() >= 0.0 and arr.max() <= 1.0):
        raise ValueError(unit_interval_message(name))
    if not unit_interval and max_magnitude is not None and np.isfinite(arr).all():
        _check_magnitude(arr, name, max_magnitude)
    return arr


def unit_interval_message(name: str = "scores") -> str:
    """The one message for scores outside [0, 1] (identical for every data set: it quotes no data value)."""
    return (f"{name} must lie in [0, 1]; normalise by a public bound B and clip, "
            "e.g. scores = np.minimum(residuals / B, 1)")


def check_2d(values, name: str = "X", *, min_rows: int = 1,
             max_magnitude: float | None = MAX_MAGNITUDE) -> np.ndarray:
    """Return ``values`` as a finite 2-D float array with at least ``min_rows`` rows.

    A 1-D input is rejected (not silently reshaped) because it is ambiguous
    between one point and many one-dimensional points.
    """
    arr = real_array(values, name)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be two-dimensional (n_samples, n_features), got a {arr.ndim}-D array; "
            "use x.reshape(-1, 1) for one feature or x.reshape(1, -1) for one point"
        )
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} has too few rows: at least {min_rows} are needed")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no columns")
    if max_magnitude is not None and _surely_bounded(arr, max_magnitude):
        return arr                  # finite and within max_magnitude (one pass); otherwise diagnose below
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first")
    if max_magnitude is not None:
        _check_magnitude(arr, name, max_magnitude)
    return arr


class _Required:
    """Sentinel default of a public bound or prior that the caller must choose (never a silent default)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<required>"

    def __reduce__(self):
        return (_Required, ())


#: Default of every required public input (bounds, priors): refused by :func:`require` with advice.
REQUIRED = _Required()


def require(value, name: str, owner: str, advice: str):
    """Refuse a missing public input with a ``TypeError`` that says how to choose it from public knowledge.

    Public bounds and priors are part of the mechanism: a default (e.g. 1.0 on
    unscaled data) silently clips everything and releases a trivial set, so
    they are required arguments. ``advice`` explains how
    to pick the value without looking at the private data.
    """
    if value is REQUIRED:
        raise TypeError(f"{owner} needs the public {name}: pass {name}=... explicitly. {advice} Choose it before "
                        "seeing the data (never from the data's own range, which leaks).")
    return value


def check_same_length(*pairs: tuple[str, np.ndarray]) -> None:
    """Raise ``ValueError`` unless all named arrays have the same first dimension."""
    lengths = {name: len(arr) for name, arr in pairs}
    if len(set(lengths.values())) > 1:
        # no lengths in the message: in a private path the record count may be private
        names = " and ".join(lengths)
        raise ValueError(f"{names} have different numbers of samples; they must describe the same records, "
                         "one row each")


def check_estimator(estimator, name: str, methods=("fit", "predict")):
    """Check that ``estimator`` is an estimator *instance* with the given methods and return it.

    A class (``Ridge`` instead of ``Ridge()``), ``None``, a string or a number
    is refused with a ``TypeError`` that names the parameter, before
    ``sklearn.base.clone`` or a fit fails with a message about something else.
    """
    if isinstance(estimator, type):
        raise TypeError(f"{name} must be an estimator instance, got the class {estimator.__name__}; pass "
                        f"{estimator.__name__}(...) instead")
    missing = [m for m in methods if not callable(getattr(estimator, m, None))]
    if missing:
        raise TypeError(f"{name} must be a scikit-learn estimator (an instance with method(s) {', '.join(methods)}), "
                        f"got {type(estimator).__name__} (no {', '.join(missing)})")
    return estimator


def check_choice(value, name: str, choices, hint: str = "") -> str:
    """Check that ``value`` is one of the strings ``choices`` and return it.

    Anything else (another string, a number, ``None``, an array) is refused with
    the list of choices: ``TypeError`` for a non-string, ``ValueError`` for an
    unknown name. ``hint`` (what each choice means) is appended to the message.
    """
    choices = tuple(choices)
    suffix = f"; {hint}" if hint else ""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {choices}, got {type(value).__name__}{suffix}")
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not supported; choose one of {choices}{suffix}")
    return value


def check_quantile_variant(variant) -> str:
    """The private quantile's ``variant``, one of :data:`QUANTILE_VARIANTS` (refused by name otherwise)."""
    return check_choice(variant, "variant", QUANTILE_VARIANTS, "'tight' is the package default (exactly "
                        "epsilon-DP, finite-sample coverage), 'original' the DPCP write-up's Algorithm 1")


def check_coverage_alpha(alpha, allow_low_coverage=False) -> float:
    """An estimator's miscoverage level: in (0, 1), and at most 1/2 unless ``allow_low_coverage=True``.

    ``alpha`` is the **miscoverage**, ``alpha = 1 - confidence_level``: MAPIE's
    ``confidence_level=0.9`` is ``alpha=0.1``. An ``alpha`` above 1/2 (sets that
    miss more often than they cover) is almost always that confusion, so it is
    refused unless asked for. (No ``confidence_level=`` alias: a scikit-learn
    estimator has one parameter per setting, so that ``get_params``, ``clone``
    and grid searches see one value.)
    """
    allow = check_bool(allow_low_coverage, "allow_low_coverage")
    alpha = check_alpha(alpha)
    if alpha > 0.5 and not allow:
        raise ValueError(f"alpha={alpha:g} is the miscoverage level: the sets would cover only "
                         f"{100 * (1 - alpha):.4g}% of the time. alpha = 1 - confidence_level here (MAPIE's "
                         f"confidence_level={alpha:g} is alpha={1 - alpha:.4g}); pass alpha={1 - alpha:.4g}, or "
                         "allow_low_coverage=True if coverage below 50% is really meant")
    return alpha


# ---------------------------------------------------------------------------
# models on private records
# ---------------------------------------------------------------------------

#: Serialises the model calls on private records: ``warnings.catch_warnings`` edits the process-wide filter list, so
#: two threads (Dask's threaded scheduler scores partitions in parallel) entering it at once could leave a filter
#: behind when they leave in the other order.
_MODEL_LOCK = threading.RLock()


@contextlib.contextmanager
def silenced_model():
    """Context for every call of a model on private records: the model cannot speak.

    A warning that a model emits while it scores private records (an overflow
    in ``exp``, a convergence or feature-name warning, a deprecation ...) is
    triggered by those records, so it is an output: one data set warns and its
    neighbour does not. Inside this context every warning is dropped and NumPy
    floating-point errors neither warn nor raise (``np.errstate(all="ignore")``);
    nothing is said in their place, which is the data-independent choice. The
    caller then maps the outputs to public bounds (NaN and infinite outputs
    included), so that no later step can fail on them.

    Used by every private path that evaluates a model on private records: the
    ``calibrate`` step of the private estimators, the one-call releases that
    fit and score a trainer, and the partition scores of
    :func:`dpcp_tutorial.scale.model_scores`. Errors raised by the model are not
    caught here: each caller states its own rule for them.
    """
    with _MODEL_LOCK, warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


# ---------------------------------------------------------------------------
# features as the model receives them (DataFrames, column names, missing values)
# ---------------------------------------------------------------------------

def is_frame(X) -> bool:
    """True for an in-memory pandas ``DataFrame`` (checked without importing pandas)."""
    return _from_pandas(X) and hasattr(X, "columns") and hasattr(X, "iloc")


def _from_pandas(obj) -> bool:
    """True for an object of a pandas type (checked without importing pandas)."""
    return type(obj).__module__.split(".")[0] == "pandas"


def _frame_names(X):
    """The column names of a frame as scikit-learn reads them: all strings, else ``None`` (positional)."""
    columns = list(X.columns)
    if columns and all(isinstance(c, str) for c in columns):
        return np.asarray(columns, dtype=object)
    return None


def adopt_schema(owner, model) -> bool:
    """Copy a prefit model's public schema (``feature_names_in_``, ``n_features_in_``) onto ``owner``.

    Returns ``False`` when the model records no schema (the calibration data's
    columns then define it). The model object is public; its schema is the one
    the calibration and test features must follow.
    """
    names = getattr(model, "feature_names_in_", None)
    n_in = getattr(model, "n_features_in_", None)
    if names is not None:
        owner.feature_names_in_ = np.asarray(names, dtype=object)
        owner.n_features_in_ = len(names)
        return True
    if n_in is not None:
        if hasattr(owner, "feature_names_in_"):
            del owner.feature_names_in_
        owner.n_features_in_ = int(n_in)
        return True
    return False


def check_features(X, owner, *, reset: bool, name: str = "X", min_rows: int = 1, numeric: bool = False,
                   allow_nan: bool = True, owner_name: str | None = None):
    """Features checked against ``owner``'s schema, as the model receives them (scikit-learn's name rules).

    One rule for every estimator of the package, in memory as on Dask
    (:func:`dpcp_tutorial.scale.model_scores`):

    * **DataFrames keep their names and dtypes.** With ``reset=True`` (``fit``)
      ``owner`` records ``n_features_in_`` and, for a frame whose column
      names are all strings, ``feature_names_in_``. Later calls (``reset=False``)
      match a frame's columns **by name**: missing or unexpected columns raise
      ``ValueError`` (naming them: the schema is public), reordered columns are
      put back in the fitted order, and the frame itself (categorical columns
      included) is what the model receives, so a prefit ``ColumnTransformer``
      that selects columns by name works and scikit-learn never warns about
      feature names. A frame given to an estimator fitted without names (on an
      array) is refused: its columns could only be read by position.
    * **Arrays are positional.** An array given to an estimator fitted on a
      frame is read in the fitted column order and handed to the model as a
      frame with the fitted names. An object array (``df.to_numpy()`` of
      mixed columns) reaches the model unconverted, like a frame: a ``None``
      in it is the model's to handle, as a NaN is.
    * **Missing values** (``allow_nan=True``, the default): NaN and infinite
      features go to the model as they are, and the model decides (a
      ``HistGradientBoosting`` model handles them; a linear model's NaN output
      becomes the worst score at calibration and the whole public range at
      prediction). ``allow_nan=False`` is the data-domain check of the
      package's DP trainers (one fixed message for every invalid data set).
    * ``numeric=True`` returns a float array (the package's own models):
      a frame's columns must then be real numbers.

    ``owner`` is the object that carries the schema (an estimator, or a plain
    namespace for a one-call function, then named by ``owner_name``).

    Only the schema (column names and count, public) appears in messages;
    never a value or a row count.
    """
    owner_name = type(owner).__name__ if owner_name is None else owner_name
    names_in = getattr(owner, "feature_names_in_", None) if not reset else None
    n_in = getattr(owner, "n_features_in_", None) if not reset else None
    if is_frame(X):
        given = _frame_names(X)
        if names_in is not None:
            if given is None:
                raise ValueError(f"{name} is a DataFrame whose column names are not all strings, but {owner_name} "
                                 f"was fitted on the named columns {list(names_in)}; pass a DataFrame with these "
                                 "columns")
            have, want = set(given.tolist()), set(names_in.tolist())
            missing = [c for c in names_in.tolist() if c not in have]
            extra = [c for c in given.tolist() if c not in want]
            if missing or extra:
                raise ValueError(f"{name} does not have the columns {owner_name} was fitted on: missing {missing}, "
                                 f"unexpected {extra}; pass exactly the columns {list(names_in)} (in any order: "
                                 "they are matched by name)")
            if given.tolist() != names_in.tolist():
                X = X[names_in.tolist()]                   # reordered columns: read by name
        elif given is not None and n_in is not None:
            raise ValueError(f"{name} is a DataFrame with named columns, but {owner_name} was fitted without "
                             "feature names (on an array), so its columns could only be read by position; pass "
                             f"{name}.to_numpy() with the columns in the fitted order, or fit on a DataFrame")
        if X.ndim != 2 or X.shape[1] == 0:
            raise ValueError(f"{name} has no columns")
        if X.shape[0] < min_rows:
            raise ValueError(f"{name} has too few rows: at least {min_rows} are needed")
        if n_in is not None and X.shape[1] != n_in:
            raise ValueError(f"{name} has {X.shape[1]} features, but {owner_name} was fitted on {n_in}; pass the "
                             "same columns")
        if reset:
            owner.n_features_in_ = X.shape[1]
            if given is not None:
                owner.feature_names_in_ = given
            elif hasattr(owner, "feature_names_in_"):
                del owner.feature_names_in_
        if not numeric:
            return X
        values = real_array(X.to_numpy(), name)
    else:
        raw = as_array(X, name)
        # an object array (df.to_numpy() of mixed columns, a missing value as None) goes to the model as it is, as
        # a frame does: whether a record holds None or NaN is data, not schema, and the model decides per record
        values = raw if raw.dtype.kind == "O" and not numeric and allow_nan else real_array(raw, name)
        if values.ndim != 2:
            raise ValueError(f"{name} must be two-dimensional (n_samples, n_features), got a {values.ndim}-D "
                             "array; use x.reshape(-1, 1) for one feature or x.reshape(1, -1) for one point")
        if values.shape[1] == 0:
            raise ValueError(f"{name} has no columns")
        if values.shape[0] < min_rows:
            raise ValueError(f"{name} has too few rows: at least {min_rows} are needed")
        if n_in is not None and values.shape[1] != n_in:
            raise ValueError(f"{name} has {values.shape[1]} features, but {owner_name} was fitted on {n_in}; pass "
                             "the same columns")
        if reset:
            owner.n_features_in_ = values.shape[1]
            if hasattr(owner, "feature_names_in_"):
                del owner.feature_names_in_
    if not allow_nan:
        values = check_2d(values, name, min_rows=min_rows)
    if numeric or names_in is None:
        return values
    import pandas as pd

    return pd.DataFrame(values, columns=names_in.tolist())       # positional, under the fitted names


def take_rows(X, start: int, stop: int):
    """Rows ``start:stop`` of an array or a DataFrame (by position)."""
    return X.iloc[start:stop] if is_frame(X) else X[start:stop]


def _finite_rows(X):
    """Records whose numeric features are all finite (a nullable column's ``<NA>`` is missing); None if unknown."""
    if is_frame(X):
        ok = np.ones(len(X), dtype=bool)
        for name in X.columns:
            column = X[name]
            if getattr(column.dtype, "kind", "O") in "biuf":
                ok &= np.isfinite(column.to_numpy(dtype=float, na_value=np.nan))
        return ok
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "biuf":
        return np.isfinite(X).all(axis=1)
    return None


def composite_steps(model):
    """``(name, step)`` of a composite scikit-learn model (Pipeline, ColumnTransformer, FeatureUnion), else None."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline

    if isinstance(model, Pipeline):
        return [(name, step) for name, step in model.steps]
    if isinstance(model, ColumnTransformer):
        fitted = getattr(model, "transformers_", None)
        steps = [(name, step) for name, step, _ in (fitted if fitted is not None else model.transformers)]
        if fitted is None:
            steps.append(("remainder", model.remainder))
        return steps
    if isinstance(model, FeatureUnion):
        return [(name, step) for name, step in model.transformer_list]
    return None


def format_pair(pair) -> str:
    """A guarantee ``(epsilon, delta)`` as text at 4 significant digits, or ``"not covered"`` for ``None``."""
    return "not covered" if pair is None else f"({pair[0]:.4g}, {pair[1]:.4g})"


def model_outputs(method, X, width: int | None = None) -> np.ndarray:
    """``method(X)`` as floats, with the outputs of a record the model refuses set to NaN (a per-record rule).

    The one rule, in memory and on Dask (:func:`dpcp_tutorial.scale.model_scores`):
    the model sees the features as they are; when it refuses a batch (it
    raises: an unknown category, a missing value it cannot handle), the batch
    is halved and each half evaluated again, down to single records, and a
    record the model refuses alone gets NaN outputs, which the caller maps to
    the worst score. (A refused batch is first split into the records with a
    missing or infinite numeric feature and the others, a per-record split
    that spares the halving when the model refuses only the former.) So a record's output is the model's output on it, or NaN,
    a function of the record only, whatever the other records are. ``width``:
    ``None`` for one output per record (``predict``), else the number of
    columns (``predict_proba``). Call it inside :func:`silenced_model` on private
    records; the model's exception is never quoted.
    """
    n = X.shape[0]
    shape = (n,) if width is None else (n, width)
    try:
        out = np.asarray(method(X))
    except Exception:                              # noqa: BLE001 - any refusal of the model, never quoted
        if n <= 1:
            return np.full(shape, np.nan)
        finite = _finite_rows(X)
        if finite is not None and 0 < finite.sum() < n:
            # a per-record split first (the records with a missing or infinite numeric feature apart): a model
            # that refuses only those then needs one call for all the others
            out = np.empty(shape)
            for rows in (np.flatnonzero(finite), np.flatnonzero(~finite)):
                out[rows] = model_outputs(method, X.iloc[rows] if is_frame(X) else X[rows], width)
            return out
        half = n // 2
        return np.concatenate([model_outputs(method, take_rows(X, 0, half), width),
                               model_outputs(method, take_rows(X, half, n), width)])
    if width is None and out.shape == (n, 1):
        out = out[:, 0]
    if out.shape != shape or out.dtype.kind not in "biuf":
        # the model object decides this (public): no record can change an output's shape or type
        raise ValueError("the model must return " + ("one real number per record" if width is None else
                         f"one row of {width} real numbers per record (one per class)"))
    return out.astype(float, copy=False)


def renamed_keywords(**renames: str):
    """Decorator: accept the old names of renamed keyword arguments, with a FutureWarning.

    ``@renamed_keywords(mechanism_beta="eta")`` lets callers still write ``mechanism_beta=...``: the value
    goes to ``eta`` and a :class:`FutureWarning` names the new keyword. Passing both names is a
    ``TypeError``. The decorated function's signature (``inspect.signature``, ``help``) shows the new
    names only, and scikit-learn's ``get_params`` sees only them when ``__init__`` is decorated.
    Whether an old name was used depends only on the call, never on data, so the warning is public.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keywords(old="new")
    ... def f(*, new=1):
    ...     return new
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     f(old=3), caught[0].category.__name__
    (3, 'FutureWarning')
    """
    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{function.__name__}: pass {new}= only ({old}= is its deprecated "
                                        "old name)")
                    warnings.warn(f"{function.__qualname__}'s {old}= is renamed {new}=; pass {new}= (the old "
                                  "name will be removed)", FutureWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)
        return wrapper
    return decorate


def deprecated_alias(function, old_name: str):
    """``function`` under its deprecated old name ``old_name``: calling it warns (FutureWarning), then calls.

    Examples
    --------
    >>> import warnings
    >>> def new_name(x):
    ...     return 2 * x
    >>> old = deprecated_alias(new_name, "old_name")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old(2), str(caught[0].message)
    (4, 'old_name is renamed new_name; call new_name (the old name will be removed)')
    """
    @functools.wraps(function)
    def alias(*args, **kwargs):
        warnings.warn(f"{old_name} is renamed {function.__name__}; call {function.__name__} (the old name "
                      "will be removed)", FutureWarning, stacklevel=2)
        return function(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = old_name
    alias.__doc__ = f"Deprecated alias of :func:`{function.__name__}` (FutureWarning); call that instead."
    return alias
