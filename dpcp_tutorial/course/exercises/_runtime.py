"""Calling a reader's function: output specifications, plain data, time limits (the calling side only).

This module is everything that runs next to the reader's code. It holds no case, no expected answer and no
verdict: it receives a :class:`Call` (the name of a reader's function, plain-data arguments and what the
function must return), calls the function with a time limit and answers with a :class:`Reply` (the outputs
converted to plain data, or what went wrong, plus what the call did to numpy's global random state and to its
own inputs). The checkers (:mod:`._common`) build the calls and judge the replies. In a notebook both sides run
in one process; the batch grader (:mod:`dpcp_tutorial.course.grading`) runs this side in a separate, isolated process
and sends calls and replies between the two as JSON (:func:`encode`, :func:`decode`), never as pickles.

Plain data are ``None``, ``bool``, ``int``, ``float``, ``str``, tuples and lists of plain data, string-keyed
dicts of plain data, numpy arrays of dtype ``bool``, ``int64`` or ``float64``, and :class:`Rng` markers (a
seed that the calling side turns into one ``numpy.random.Generator`` per call).

Time limits. Each call of the reader's function runs in a daemon worker thread and may take ``time_limit``
seconds of the worker's own CPU time, and ``wall_limit`` seconds of wall-clock time *not counting the time
it waited for a CPU* (Linux reports that wait in ``/proc/self/task/TID/schedstat``; elsewhere plain wall-clock
time counts). ``wall_limit`` is ``time_limit`` by default; the batch grader allows more. So other processes
on the machine cannot make a call time out, while a call that only waits (``sleep``, a blocked read) still
ends. On a time-out the thread is asked to raise an exception (``PyThreadState_SetAsyncExc``), which stops a
loop in Python code. A call blocked inside compiled code keeps running in the background (a Python thread
cannot be killed); the batch grader ends the whole process instead.
"""

from __future__ import annotations

import abc
import base64
import contextlib
import ctypes
import json
import math
import numbers
import os
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["Call", "Reply", "Rng", "anything", "array", "binary_array", "decode", "encode", "execute", "integer",
           "number", "sequence", "spec_from_plain"]

_MAX_MESSAGE = 300


def short(text: Any, limit: int = _MAX_MESSAGE) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(value: Any) -> str:
    """A short description of a value of unknown type (never runs code of the value's own class)."""
    if value is None:
        return "None"
    if isinstance(value, (bool, np.bool_)):
        return f"the bool {bool(value)}"
    if type(value) is str:
        return f"the string {short(repr(value), 40)}"
    if type(value) is np.ndarray:
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if type(value) in (list, tuple):
        return f"a {type(value).__name__} of length {len(value)}"
    if type(value) in (int, float) or (isinstance(value, (np.integer, np.floating)) and type(value).__module__ == "numpy"):
        return f"the number {value!r}"
    return f"a {type(value).__name__}"


def describe_exception(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a hostile __str__
        text = ""
    name = type(exc).__name__
    return f"{name}: {short(text)}" if text else name


# --------------------------------------------------------------------------------------------------------------
# Output specifications: each converts a reader's value to plain data or raises BadOutput with the reason.
# They are plain data themselves (to_plain / spec_from_plain), so the grader can send them to the calling side.


class BadOutput(Exception):
    """The reader's output has the wrong type, shape, dtype or contains NaN."""


class Spec(abc.ABC):
    """What the reader's function must return."""

    kind = ""

    @abc.abstractmethod
    def convert(self, value: Any) -> Any:
        """Return ``value`` as plain data, or raise :class:`BadOutput` saying what is wrong."""

    def to_plain(self) -> dict:
        return {"kind": self.kind, **{k: v for k, v in vars(self).items()}}


class _Anything(Spec):
    kind = "anything"

    def convert(self, value):
        if _is_plain(value):
            return value
        raise BadOutput(f"expected plain data (numbers, strings, arrays, tuples), got {describe(value)}")


class _Number(Spec):
    kind = "number"

    def __init__(self, allow_inf: bool = False, integral: bool = False):
        self.allow_inf, self.integral = bool(allow_inf), bool(integral)

    def convert(self, value):
        kind = "an integer" if self.integral else "a number"
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
            value = value[()]
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
            if isinstance(value, (np.ndarray, list, tuple)):
                raise BadOutput(f"expected {kind}, got {describe(value)}; return one value, not a collection")
            raise BadOutput(f"expected {kind}, got {describe(value)}")
        if self.integral:
            if isinstance(value, (numbers.Integral, np.integer)):
                return int(value)
            number = float(value)
            if not number.is_integer():
                raise BadOutput(f"expected an integer, got the non-integer {number!r}")
            return int(number)
        number = float(value)
        if math.isnan(number):
            raise BadOutput("your function returned NaN")
        if not self.allow_inf and number in (math.inf, -math.inf):
            raise BadOutput(f"your function returned {number}; a finite number is expected here")
        return number


class _Array(Spec):
    kind = "array"

    def __init__(self, shape=None, dtype="float", allow_inf: bool = False, nan_hint: str | None = None,
                 what: str | None = None):
        self.shape = None if shape is None else [int(s) for s in shape]
        self.dtype = {"float": "float", float: "float", "bool": "bool", bool: "bool", "binary": "binary",
                      "int": "int", int: "int"}[dtype]
        self.allow_inf, self.nan_hint, self.what = bool(allow_inf), nan_hint, what

    def _expected(self) -> str:
        kind = {"bool": "a boolean array", "binary": "an array of 0s and 1s", "int": "an integer array"}.get(
            self.dtype, "an array")
        shape = f" of shape {tuple(self.shape)}" if self.shape is not None else ""
        what = f" ({self.what})" if self.what else ""
        return f"{kind}{shape}{what}"

    def convert(self, value):
        if not isinstance(value, np.ndarray):
            hint = ""
            if isinstance(value, (list, tuple)):
                hint = ("; convert it with np.asarray(..., dtype=bool)" if self.dtype == "bool"
                        else "; convert it with np.asarray(...)")
            raise BadOutput(f"expected {self._expected()}, got {describe(value)}{hint}")
        kind = value.dtype.kind
        if self.dtype == "bool":
            if kind != "b":
                raise BadOutput(f"expected {self._expected()}, got dtype {value.dtype}; return True/False entries "
                                "(e.g. the result of a comparison)")
            out = np.array(value, dtype=bool)
        elif self.dtype == "binary":
            if kind not in "biuf":
                raise BadOutput(f"expected {self._expected()}, got dtype {value.dtype}")
            as_float = np.array(value, dtype=np.float64)
            if np.isnan(as_float).any() or not np.isin(as_float, (0.0, 1.0)).all():
                raise BadOutput(f"expected {self._expected()}, but some entries are neither 0 nor 1")
            out = as_float.astype(np.int64)
        elif self.dtype == "int":
            if kind not in "iub":
                if kind == "f":
                    as_float = np.array(value, dtype=np.float64)
                    if np.isfinite(as_float).all() and np.all(as_float == np.round(as_float)):
                        out = as_float.astype(np.int64)
                    else:
                        raise BadOutput(f"expected {self._expected()}, got non-integer entries")
                else:
                    raise BadOutput(f"expected {self._expected()}, got dtype {value.dtype}")
            else:
                out = np.array(value, dtype=np.int64)
        else:
            if kind not in "iuf":
                raise BadOutput(f"expected {self._expected()} of numbers, got dtype {value.dtype}")
            out = np.array(value, dtype=np.float64)
        if self.shape is not None and list(out.shape) != self.shape:
            raise BadOutput(f"expected {self._expected()}, got shape {out.shape}")
        if out.dtype == np.float64:
            if np.isnan(out).any():
                raise BadOutput(self.nan_hint or "your output contains NaN")
            if not self.allow_inf and np.isinf(out).any():
                raise BadOutput("your output contains infinite values; finite numbers are expected here")
        return out


class _Sequence(Spec):
    kind = "sequence"

    def __init__(self, specs, names=None):
        self.specs, self.names = list(specs), names

    def to_plain(self) -> dict:
        return {"kind": self.kind, "specs": [s.to_plain() for s in self.specs], "names": self.names}

    def convert(self, value):
        label = self.names or f"a tuple of {len(self.specs)} values"
        if not isinstance(value, (tuple, list)) or len(value) != len(self.specs):
            raise BadOutput(f"return {label}, got {describe(value)}")
        out = []
        for position, (spec, item) in enumerate(zip(self.specs, value)):
            try:
                out.append(spec.convert(item))
            except BadOutput as exc:
                raise BadOutput(f"item {position} of {label}: {exc}") from None
        return tuple(out)


def anything() -> Spec:
    """Accept any plain-data value unchanged."""
    return _Anything()


def number(*, allow_inf: bool = False) -> Spec:
    """A real number (Python or NumPy scalar, or a 0-d array), returned as ``float``; NaN and bools fail."""
    return _Number(allow_inf, integral=False)


def integer() -> Spec:
    """An integer (Python, NumPy or an integer-valued float), returned as ``int``."""
    return _Number(False, integral=True)


def array(shape=None, *, dtype=float, allow_inf: bool = False, nan_hint: str | None = None,
          what: str | None = None) -> Spec:
    """A NumPy array of the given ``shape``; returned as a new base-class ``float64`` (or ``bool``) array.

    Lists are refused (the feedback says to use ``np.asarray``); integer arrays are accepted where floats are
    asked for; ``nan_hint`` replaces the generic message when the array contains NaN.
    """
    return _Array(shape, dtype, allow_inf, nan_hint, what)


def binary_array(shape=None, *, what: str | None = None) -> Spec:
    """An array of 0s and 1s (any integer, float or bool dtype), returned as ``int64``."""
    return _Array(shape, "binary", False, None, what)


def sequence(*specs: Spec, names: str | None = None) -> Spec:
    """A tuple (or list) with exactly one item per spec, each converted; ``names`` e.g. ``"(X, X_prime, theta)"``."""
    return _Sequence(specs, names)


def spec_from_plain(plain: dict) -> Spec:
    """Rebuild a :class:`Spec` from :meth:`Spec.to_plain` (refuses anything else)."""
    if not isinstance(plain, dict):
        raise ValueError("a spec must be a dict")
    kind = plain.get("kind")
    if kind == "anything":
        return _Anything()
    if kind == "number":
        return _Number(bool(plain["allow_inf"]), bool(plain["integral"]))
    if kind == "array":
        return _Array(plain["shape"], plain["dtype"], bool(plain["allow_inf"]), plain["nan_hint"], plain["what"])
    if kind == "sequence":
        return _Sequence([spec_from_plain(s) for s in plain["specs"]], plain["names"])
    raise ValueError(f"unknown spec kind {kind!r}")


# --------------------------------------------------------------------------------------------------------------
# Plain data and its JSON encoding.


@dataclass(frozen=True)
class Rng:
    """An ``rng`` argument: the calling side passes ``numpy.random.default_rng(seed)``.

    Within one :class:`Call` every marker with the same seed is one Generator, shared by the repeated calls,
    so they draw different numbers; two calls with the same seed start from the same state.
    """

    seed: int


_ARRAY_DTYPES = {"b1": np.bool_, "i8": np.int64, "f8": np.float64}


def _is_plain(value: Any) -> bool:
    if value is None or type(value) in (bool, int, float, str, Rng):
        return True
    if type(value) in (list, tuple):
        return all(_is_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _is_plain(v) for k, v in value.items())
    if type(value) is np.ndarray:
        return value.dtype in (np.bool_, np.int64, np.float64)
    return False


def plain_copy(value: Any) -> Any:
    """A deep copy of plain data (arrays copied, NumPy scalars made Python numbers)."""
    if isinstance(value, np.ndarray):
        kind = value.dtype.kind
        dtype = np.bool_ if kind == "b" else np.int64 if kind in "iu" else np.float64
        return np.array(value, dtype=dtype)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, tuple):
        return tuple(plain_copy(v) for v in value)
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain_copy(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str, Rng)):
        return value
    raise TypeError(f"not plain data: {type(value).__name__}")


def _to_json(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        value = plain_copy(value)
        code = {np.dtype(np.bool_): "b1", np.dtype(np.int64): "i8", np.dtype(np.float64): "f8"}[value.dtype]
        data = base64.b64encode(np.ascontiguousarray(value).astype("<" + code if code != "b1" else "b1").tobytes())
        return {"$nd": code, "shape": list(value.shape), "data": data.decode("ascii")}
    if isinstance(value, Rng):
        return {"$rng": int(value.seed)}
    if isinstance(value, tuple):
        return {"$tuple": [_to_json(v) for v in value]}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {"$dict": {str(k): _to_json(v) for k, v in value.items()}}
    if isinstance(value, (np.bool_, np.integer, np.floating)):
        return _to_json(plain_copy(value))
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"not plain data: {type(value).__name__}")


_MAX_ITEMS = 50_000_000


def _from_json(value: Any, depth: int = 0) -> Any:
    if depth > 50:
        raise ValueError("plain data nested too deeply")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list:
        return [_from_json(v, depth + 1) for v in value]
    if type(value) is dict:
        if set(value) == {"$nd", "shape", "data"}:
            code = value["$nd"]
            if code not in _ARRAY_DTYPES:
                raise ValueError(f"array dtype {code!r} is not allowed")
            shape = value["shape"]
            if type(shape) is not list or not all(type(s) is int and 0 <= s for s in shape):
                raise ValueError("bad array shape")
            size = math.prod(shape)
            if size > _MAX_ITEMS:
                raise ValueError("array too large")
            raw = base64.b64decode(value["data"].encode("ascii"), validate=True)
            dtype = np.dtype("b1" if code == "b1" else "<" + code)
            if len(raw) != size * dtype.itemsize:
                raise ValueError("array data does not match its shape")
            out = np.frombuffer(raw, dtype=dtype).reshape(shape).astype(_ARRAY_DTYPES[code])
            return out
        if set(value) == {"$rng"} and type(value["$rng"]) is int:
            return Rng(value["$rng"])
        if set(value) == {"$tuple"} and type(value["$tuple"]) is list:
            return tuple(_from_json(v, depth + 1) for v in value["$tuple"])
        if set(value) == {"$dict"} and type(value["$dict"]) is dict:
            return {str(k): _from_json(v, depth + 1) for k, v in value["$dict"].items()}
    raise ValueError("not plain data")


def encode(value: Any) -> str:
    """Plain data as one line of JSON (arrays base64-encoded; infinities and NaN kept)."""
    return json.dumps(_to_json(value), separators=(",", ":"))


def decode(text: str | bytes) -> Any:
    """The inverse of :func:`encode`; refuses anything that is not plain data (it never unpickles)."""
    return _from_json(json.loads(text))


# --------------------------------------------------------------------------------------------------------------
# Calls and replies.


@dataclass
class Call:
    """One request: call the reader's function ``function`` on plain-data arguments.

    ``args``/``kwargs`` are used ``repeat`` times (fresh copies each time, ``Rng`` markers shared), or, when
    ``args_list`` is given, once per entry of ``args_list`` (tuples of positional arguments), with the
    keyword arguments of the same entry of ``kwargs_list`` (if given).
    """

    function: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    returns: Spec = field(default_factory=_Anything)
    repeat: int = 1
    args_list: list | None = None
    kwargs_list: list | None = None
    recheck: bool = False
    global_seeds: tuple | None = None

    def to_plain(self) -> dict:
        return {"function": self.function, "args": tuple(self.args), "kwargs": dict(self.kwargs),
                "returns": self.returns.to_plain(), "repeat": int(self.repeat), "args_list": self.args_list,
                "kwargs_list": self.kwargs_list, "recheck": bool(self.recheck),
                "global_seeds": None if self.global_seeds is None else tuple(int(s) for s in self.global_seeds)}

    @classmethod
    def from_plain(cls, plain: dict) -> "Call":
        if not isinstance(plain, dict) or type(plain.get("function")) is not str:
            raise ValueError("bad call")
        args_list = plain.get("args_list")
        if args_list is not None and not (type(args_list) is list and all(type(a) is tuple for a in args_list)):
            raise ValueError("bad args_list")
        kwargs_list = plain.get("kwargs_list")
        if kwargs_list is not None and not (args_list is not None and type(kwargs_list) is list
                                            and len(kwargs_list) == len(args_list)
                                            and all(type(k) is dict for k in kwargs_list)):
            raise ValueError("bad kwargs_list")
        repeat = plain.get("repeat", 1)
        if type(repeat) is not int or not 1 <= repeat <= 10_000_000:
            raise ValueError("bad repeat")
        if type(plain.get("args")) is not tuple or type(plain.get("kwargs")) is not dict:
            raise ValueError("bad arguments")
        recheck = plain.get("recheck", False)
        seeds = plain.get("global_seeds")
        if type(recheck) is not bool or not (seeds is None or (type(seeds) is tuple and len(seeds) == 2 and all(
                type(s) is int and 0 <= s < 2**32 for s in seeds))):
            raise ValueError("bad recheck")
        return cls(plain["function"], plain["args"], plain["kwargs"], spec_from_plain(plain["returns"]), repeat,
                   args_list, kwargs_list, recheck, seeds)

    @property
    def count(self) -> int:
        return len(self.args_list) if self.args_list is not None else self.repeat


@dataclass
class Reply:
    """What happened: ``status`` is ``"ok"`` (``values`` holds one converted output per call), ``"none"``,
    ``"raised"``, ``"bad"`` (an output the spec refused; ``message`` says why), ``"timeout"`` or
    ``"missing"`` (no such function). ``index`` is the call (0-based) that went wrong.

    ``recheck`` (asked for by ``Call.recheck``): the output of one more call on the *same* argument objects
    as the first call (after it ran), with fresh generators of the same seeds and numpy's global random
    state re-seeded differently: the checking side compares it with the first output, which shows whether
    the function's result depends on what it did to its inputs or on the global random state.
    ``inputs_modified`` and ``global_state_changed`` are reported by the calling side itself."""

    status: str
    values: list = field(default_factory=list)
    index: int = 0
    message: str = ""
    exception: list = field(default_factory=list)   # the exception's class names along its MRO
    stopped: bool = True                             # timeouts: was the worker stopped?
    global_state_changed: bool = False
    inputs_modified: bool = False
    warnings: int = 0
    seconds: float = 0.0
    recheck: list = field(default_factory=list)

    def to_plain(self) -> dict:
        return dict(vars(self))

    @classmethod
    def from_plain(cls, plain: dict, returns: Spec) -> "Reply":
        """Rebuild and **re-validate** a reply received from the calling side (types, shapes, finiteness)."""
        if not isinstance(plain, dict):
            raise ValueError("bad reply")
        status = plain.get("status")
        if status not in ("ok", "none", "raised", "bad", "timeout", "missing"):
            raise ValueError("bad reply status")
        values = plain.get("values", [])
        if type(values) is not list:
            raise ValueError("bad reply values")
        checked = []
        recheck = plain.get("recheck", [])
        if type(recheck) is not list or len(recheck) > 1:
            raise ValueError("bad reply recheck")
        for value in values + recheck:
            try:
                checked.append(returns.convert(value))
            except BadOutput as exc:
                raise ValueError(f"reply value refused: {exc}") from None
        checked, rechecked = checked[:len(values)], checked[len(values):]
        exception = plain.get("exception", [])
        if type(exception) is not list or not all(type(e) is str for e in exception):
            raise ValueError("bad exception names")
        fields = {"index": int, "message": str, "stopped": bool, "global_state_changed": bool,
                  "inputs_modified": bool, "warnings": int, "seconds": float}
        out = {}
        for name, kind in fields.items():
            value = plain.get(name, Reply.__dataclass_fields__[name].default)
            if kind is float and type(value) is int:
                value = float(value)
            if type(value) is not kind:
                raise ValueError(f"bad reply field {name}")
            out[name] = value
        out["message"] = short(out["message"], 2 * _MAX_MESSAGE)
        return cls(status=status, values=checked, exception=[short(e, 80) for e in exception[:20]],
                   recheck=rechecked, **out)


class _CallAbandoned(BaseException):
    """Raised inside a worker thread that ran past its time limit."""


def _interrupt(thread: threading.Thread) -> bool:
    """Ask ``thread`` to raise :class:`_CallAbandoned`; return whether it ended within a quarter of a second."""
    try:
        set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc
        changed = set_async(ctypes.c_ulong(thread.ident), ctypes.py_object(_CallAbandoned))
        if changed > 1:  # must not happen; undo rather than hit another thread
            set_async(ctypes.c_ulong(thread.ident), None)
    except (AttributeError, TypeError, ValueError):  # not CPython
        pass
    thread.join(0.25)
    return not thread.is_alive()


def _materialise(value: Any, generators: dict) -> Any:
    """A fresh copy of plain-data arguments, with ``Rng`` markers replaced by (shared) Generators."""
    if isinstance(value, Rng):
        if value.seed not in generators:
            generators[value.seed] = np.random.default_rng(value.seed)
        return generators[value.seed]
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_materialise(v, generators) for v in value)
    if isinstance(value, list):
        return [_materialise(v, generators) for v in value]
    if isinstance(value, dict):
        return {k: _materialise(v, generators) for k, v in value.items()}
    return value


def _reuse(plain: Any, used: Any, generators: dict) -> Any:
    """The argument objects of an earlier call (as that call left them), with fresh ``Rng`` generators."""
    if isinstance(plain, Rng):
        return _materialise(plain, generators)
    if isinstance(plain, (tuple, list)) and type(used) is type(plain) and len(used) == len(plain) and \
            _has_rng(plain):
        return type(plain)(_reuse(p, u, generators) for p, u in zip(plain, used))
    if isinstance(plain, dict) and type(used) is dict and used.keys() == plain.keys() and _has_rng(plain):
        return {k: _reuse(plain[k], used[k], generators) for k in plain}
    return used


def _has_rng(value: Any) -> bool:
    if isinstance(value, Rng):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_rng(v) for v in value)
    if isinstance(value, dict):
        return any(_has_rng(v) for v in value.values())
    return False


def _same(a: Any, b: Any) -> bool:
    """Whether an argument still equals the copy it was made from (arrays compared exactly, NaN included)."""
    if isinstance(b, np.ndarray):
        if not (type(a) is np.ndarray and a.shape == b.shape and a.dtype == b.dtype):
            return False
        # the same bytes are the same numbers (NaN included) for booleans, integers and reals, and much faster
        # to compare than np.array_equal on the small arrays a checker passes many times
        if b.dtype.kind in "biuf" and a.tobytes() == b.tobytes():
            return True
        return bool(np.array_equal(a, b, equal_nan=b.dtype.kind == "f"))
    if isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(b, dict):
        return type(a) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in b)
    return True


def _global_state() -> tuple:
    state = np.random.get_state()
    return (state[0], state[1].tobytes(), state[2], state[3], state[4])


@contextlib.contextmanager
def _quiet_warnings(counter: list):
    """Record (and count) the warnings a reader's call emits instead of printing or raising them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            counter[0] += len(caught)


def _reseed_global(seed: int) -> None:
    import random

    np.random.seed(seed)
    random.seed(seed)


def _thread_cpu(thread: threading.Thread) -> float | None:
    """CPU seconds used by ``thread`` so far (``None`` where the platform cannot tell)."""
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    except (AttributeError, OSError, TypeError, ValueError):
        return None


class _RunQueueWait:
    """Seconds the thread ``native_id`` of this process has waited for a CPU while runnable (0 where the kernel
    does not say), read again and again from one open ``schedstat`` file: a checker may call a reader's function
    hundreds of thousands of times, and each call starts its clocks afresh (reading the open file costs about a
    microsecond; opening it costs over ten)."""

    def __init__(self, native_id: int | None):
        self._fd = None
        if native_id is not None:
            try:
                self._fd = os.open(f"/proc/self/task/{native_id}/schedstat", os.O_RDONLY)
            except OSError:
                pass

    def __call__(self) -> float:
        if self._fd is None:
            return 0.0
        try:
            return int(os.pread(self._fd, 256, 0).split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            return 0.0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _run_queue_wait(native_id: int | None) -> float:
    """:class:`_RunQueueWait` read once."""
    reader = _RunQueueWait(native_id)
    try:
        return reader()
    finally:
        reader.close()


_NO_THREAD = ("RuntimeError: the call could not start: no thread could be created, because processes or threads "
              "that your code started and left running use up the limit on them")


def _start_worker(target: Callable[[], None], patience: float) -> threading.Thread | None:
    """Start ``target`` in a fresh daemon thread, or return None where none could be created within ``patience``
    seconds. Under a limit on processes and threads (the grader's sandbox) that a reader's code has used up, the
    slot of the previous call's thread comes free only once that thread has left the kernel, shortly *after*
    ``join`` returned; so a refused start is retried, with growing pauses, until the limit leaves room."""
    deadline = time.monotonic() + patience
    pause = 0.0005
    while True:
        worker = threading.Thread(target=target, name="dpcp-exercise-call", daemon=True)
        try:
            worker.start()
            return worker
        except RuntimeError:     # "can't start new thread": the kernel refused (EAGAIN)
            if time.monotonic() + pause > deadline:
                return None
            time.sleep(pause)
            pause = min(2 * pause, 0.05)


def execute(functions: dict[str, Callable], call: Call, time_limit: float, wall_limit: float | None = None) -> Reply:
    """Run ``call`` against ``functions`` (name -> the reader's callable) and describe what happened.

    Each call of the reader's function may take ``time_limit`` seconds of its thread's CPU time and
    ``wall_limit`` (default ``time_limit``) seconds of wall-clock time. Outputs are converted by
    ``call.returns`` inside the worker thread (a hostile ``__float__`` is under the time limit too).
    """
    wall_limit = float(time_limit if wall_limit is None else max(wall_limit, time_limit))
    fn = functions.get(call.function)
    if fn is None or not callable(fn):
        return Reply("missing", message=f"no function named {call.function}")
    if call.args_list is not None:
        keywords = call.kwargs_list if call.kwargs_list is not None else [{}] * len(call.args_list)
        argument_sets = [(tuple(a), dict(k)) for a, k in zip(call.args_list, keywords)]
    else:
        argument_sets = [(tuple(call.args), dict(call.kwargs))] * call.repeat
    box: dict[str, Any] = {"values": [], "index": 0, "modified": False, "state_changed": False, "recheck": []}
    clock = {"started": time.monotonic(), "cpu": 0.0, "wait": 0.0, "tid": None}
    counter = [0]

    def start_clock(waited: _RunQueueWait) -> None:
        clock["started"], clock["cpu"] = time.monotonic(), time.thread_time()
        clock["wait"] = waited()

    def target() -> None:
        generators: dict = {}
        clock["tid"] = threading.get_native_id()
        waited = _RunQueueWait(clock["tid"])
        try:
            with np.errstate(all="ignore"), _quiet_warnings(counter):
                if call.global_seeds is not None:
                    _reseed_global(call.global_seeds[0])
                before = _global_state()
                first = None
                for index, (args, kwargs) in enumerate(argument_sets):
                    box["index"] = index
                    given_args, given_kwargs = _materialise(args, generators), _materialise(kwargs, generators)
                    if first is None:
                        first = (given_args, given_kwargs)
                    start_clock(waited)
                    value = fn(*given_args, **given_kwargs)
                    if not (_same(given_args, args) and _same(given_kwargs, kwargs)):
                        box["modified"] = True
                    if value is None:
                        box["status"] = "none"
                        return
                    try:
                        box["values"].append(call.returns.convert(value))
                    except BadOutput as exc:
                        box["status"], box["message"] = "bad", short(exc)
                        return
                    except Exception as exc:  # noqa: BLE001 - a hostile __float__, __array__, __len__ ...
                        box["status"] = "bad"
                        box["message"] = (f"your output could not be read ({describe_exception(exc)}); it is "
                                          f"{describe(value)}")
                        return
                box["state_changed"] = _global_state() != before
                if call.recheck and first is not None:
                    fresh: dict = {}
                    args, kwargs = argument_sets[0]
                    again_args, again_kwargs = _reuse(args, first[0], fresh), _reuse(kwargs, first[1], fresh)
                    if call.global_seeds is not None:
                        _reseed_global(call.global_seeds[1])
                    box["index"] = len(argument_sets)
                    start_clock(waited)
                    again = fn(*again_args, **again_kwargs)
                    if again is None:
                        box["status"] = "none"
                        return
                    try:
                        box["recheck"].append(call.returns.convert(again))
                    except BadOutput as exc:
                        box["status"], box["message"] = "bad", short(exc)
                        return
                    except Exception as exc:  # noqa: BLE001 - a hostile __float__, __array__, __len__ ...
                        box["status"] = "bad"
                        box["message"] = f"your output could not be read ({describe_exception(exc)})"
                        return
                box["status"] = "ok"
        except _CallAbandoned:
            box["status"] = "abandoned"
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt of the reader's code too
            try:  # the text is made here, under the time limit: a hostile __str__ cannot hang the checker
                box["message"] = describe_exception(exc)
            except BaseException:  # noqa: BLE001
                box["message"] = type(exc).__name__
            box["exception"] = [k.__name__ for k in type(exc).__mro__]
            box["status"] = "raised"
        finally:
            waited.close()

    started = time.monotonic()
    worker = _start_worker(target, wall_limit)
    if worker is None:
        return Reply("raised", message=_NO_THREAD, exception=[k.__name__ for k in RuntimeError.__mro__],
                     seconds=time.monotonic() - started)
    try:
        while worker.is_alive():
            waited = _run_queue_wait(clock["tid"]) - clock["wait"]
            wall_left = clock["started"] + wall_limit + max(0.0, waited) - time.monotonic()
            used = _thread_cpu(worker)
            cpu_left = time_limit - (used - clock["cpu"]) if used is not None else \
                clock["started"] + time_limit - time.monotonic()
            if wall_left <= 0 or cpu_left <= 0:
                break
            worker.join(min(wall_left, cpu_left, 0.5))
    except BaseException:  # e.g. the reader interrupts the kernel while waiting: stop the worker, re-raise
        _interrupt(worker)
        raise
    seconds = time.monotonic() - started
    common = {"values": box["values"], "index": box["index"], "inputs_modified": box["modified"],
              "warnings": counter[0], "seconds": seconds}
    if worker.is_alive():
        return Reply("timeout", stopped=_interrupt(worker), **common)
    status = box.get("status", "abandoned")
    if status == "abandoned":
        return Reply("timeout", stopped=True, **common)
    if status == "ok":
        return Reply("ok", global_state_changed=box["state_changed"], recheck=box["recheck"], **common)
    return Reply(status, message=box.get("message", ""), exception=box.get("exception", []), **common)
