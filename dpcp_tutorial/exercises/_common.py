"""The shared harness every exercise checker goes through.

A checker is written as a function of a :class:`CheckContext` and decorated
with :func:`checker`; the decorator turns it into the public
``check_<name>(fn, *, time_limit=10.0, quiet=False) -> ExerciseResult``.
Inside, the checker calls the reader's function only through
:meth:`CheckContext.call` (or :meth:`~CheckContext.repeat`,
:meth:`~CheckContext.call_raises`), which

* runs the call in a daemon worker thread and waits at most ``time_limit``
  seconds for it;
* turns ``None``, any exception (``NotImplementedError`` and ``SystemExit``
  included), a value of the wrong type, shape or dtype, NaN, and a call that
  runs past the time limit into a failed check with a specific message and
  ends the check;
* converts the output to plain Python / NumPy types (``float``, ``int``,
  a base-class ``float64``/``bool`` ndarray, a tuple of those), so that the
  checker's comparisons never run code of the reader's objects.

Any exception inside the checker itself also becomes a failed check, and a
check that never got a valid answer from the reader's function fails: a
checker can neither crash nor pass by accident.

Why a thread: it works for lambdas and closures defined in a notebook (no
pickling), inside a Jupyter kernel and on every operating system. A Python
thread cannot be killed, so on a time-out the harness asks the interpreter to
raise an exception inside the worker (``PyThreadState_SetAsyncExc``), which
stops a call that loops in Python code; a call blocked inside compiled code
keeps running in the background until it returns (the thread is a daemon, so
it never keeps the interpreter alive) and the feedback says so. The batch
grader (:mod:`dpcp_tutorial.grading`) adds a hard limit on top: each
submission runs in its own process, which is killed when it overruns.
"""

from __future__ import annotations

import abc
import ctypes
import functools
import inspect
import math
import numbers
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "CheckContext",
    "ExerciseResult",
    "anything",
    "array",
    "checker",
    "integer",
    "number",
    "sequence",
]

DEFAULT_TIME_LIMIT = 10.0
"""Seconds one call of the reader's function may take."""

_MAX_MESSAGE = 300


@dataclass
class ExerciseResult:
    """Outcome of a checker: ``passed`` plus the feedback lines printed to the reader.

    ``bool(result)`` is ``result.passed``, so ``assert check_x(fn)`` works.
    """

    name: str
    passed: bool = True
    feedback: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        """Record a failed case with a specific hint."""
        self.passed = False
        self.feedback.append(message)

    def report(self) -> "ExerciseResult":
        """Print the feedback (or a success line) and return ``self``."""
        if self.passed:
            print(f"{self.name}: all checks passed.")
        else:
            print(f"{self.name}: {len(self.feedback)} problem(s) found:")
            for line in self.feedback:
                print(f"  - {line}")
        return self

    def __bool__(self) -> bool:
        return self.passed

    def _repr_pretty_(self, printer, cycle) -> None:  # keep notebook output to the printed report
        printer.text(f"ExerciseResult(passed={self.passed})")


class _Stop(Exception):
    """Ends a check after a failure was recorded (internal to the harness)."""


class _CallAbandoned(BaseException):
    """Raised inside a worker thread that ran past its time limit."""


class _BadOutput(Exception):
    """The reader's output has the wrong type, shape, dtype or contains NaN."""


def _short(text: str, limit: int = _MAX_MESSAGE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(value: Any) -> str:
    """A short description of a value of unknown type (never runs code of the value's own class)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return f"the bool {value}"
    if type(value) is str:
        return f"the string {_short(repr(value), 40)}"
    if type(value) is np.ndarray:
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if type(value) in (list, tuple):
        return f"a {type(value).__name__} of length {len(value)}"
    if type(value) in (int, float) or (isinstance(value, (np.integer, np.floating))
                                       and type(value).__module__ == "numpy"):
        return f"the number {value!r}"
    return f"a {type(value).__name__}"


def _describe_exception(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # a hostile __str__
        text = ""
    name = type(exc).__name__
    return f"{name}: {_short(text)}" if text else name


# --------------------------------------------------------------------------------------------------------------
# Output specifications: each converts the reader's value to plain types or raises _BadOutput with the reason.


class _Spec(abc.ABC):
    """What the reader's function must return."""

    @abc.abstractmethod
    def convert(self, value: Any) -> Any:
        """Return ``value`` as plain Python/NumPy types, or raise :class:`_BadOutput` saying what is wrong."""


class _Anything(_Spec):
    def convert(self, value):
        return value


class _Number(_Spec):
    def __init__(self, allow_inf: bool, integral: bool):
        self.allow_inf, self.integral = allow_inf, integral

    def convert(self, value):
        kind = "an integer" if self.integral else "a number"
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
            value = value[()]
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
            if isinstance(value, (np.ndarray, list, tuple)):
                raise _BadOutput(f"expected {kind}, got {_describe(value)}; return one value, not a collection")
            raise _BadOutput(f"expected {kind}, got {_describe(value)}")
        if self.integral:
            if isinstance(value, (numbers.Integral, np.integer)):
                return int(value)
            number = float(value)
            if not number.is_integer():
                raise _BadOutput(f"expected an integer, got the non-integer {number!r}")
            return int(number)
        number = float(value)
        if math.isnan(number):
            raise _BadOutput("your function returned NaN")
        if not self.allow_inf and number in (np.inf, -np.inf):
            raise _BadOutput(f"your function returned {number}; a finite number is expected here")
        return number


class _Array(_Spec):
    def __init__(self, shape, dtype, allow_inf, nan_hint, what):
        self.shape = None if shape is None else tuple(shape)
        self.dtype = np.dtype(dtype)
        self.allow_inf, self.nan_hint, self.what = allow_inf, nan_hint, what

    def _expected(self) -> str:
        kind = "a boolean array" if self.dtype == bool else "an array"
        shape = f" of shape {self.shape}" if self.shape is not None else ""
        what = f" ({self.what})" if self.what else ""
        return f"{kind}{shape}{what}"

    def convert(self, value):
        if not isinstance(value, np.ndarray):
            hint = ""
            if isinstance(value, (list, tuple)):
                hint = "; convert it with np.asarray(...)" if self.dtype != bool else \
                    "; convert it with np.asarray(..., dtype=bool)"
            raise _BadOutput(f"expected {self._expected()}, got {_describe(value)}{hint}")
        kind = value.dtype.kind
        if self.dtype == bool:
            if kind != "b":
                raise _BadOutput(f"expected {self._expected()}, got dtype {value.dtype}; return True/False entries "
                                 "(e.g. the result of a comparison)")
            out = np.array(value, dtype=bool)
        else:
            if kind not in "iuf":
                raise _BadOutput(f"expected {self._expected()} of numbers, got dtype {value.dtype}")
            out = np.array(value, dtype=np.float64)
        if self.shape is not None and out.shape != self.shape:
            raise _BadOutput(f"expected {self._expected()}, got shape {out.shape}")
        if out.dtype != bool:
            if np.isnan(out).any():
                raise _BadOutput(self.nan_hint or "your output contains NaN")
            if not self.allow_inf and np.isinf(out).any():
                raise _BadOutput("your output contains infinite values; finite numbers are expected here")
        return out


class _Sequence(_Spec):
    def __init__(self, specs, names):
        self.specs, self.names = tuple(specs), names

    def convert(self, value):
        label = self.names or f"a tuple of {len(self.specs)} values"
        if not isinstance(value, (tuple, list)) or len(value) != len(self.specs):
            raise _BadOutput(f"return {label}, got {_describe(value)}")
        out = []
        for position, (spec, item) in enumerate(zip(self.specs, value)):
            try:
                out.append(spec.convert(item))
            except _BadOutput as exc:
                raise _BadOutput(f"item {position} of {label}: {exc}") from None
        return tuple(out)


def anything() -> _Spec:
    """Accept any value unchanged (the checker must then be careful with it)."""
    return _Anything()


def number(*, allow_inf: bool = False) -> _Spec:
    """A real number (Python or NumPy scalar, or a 0-d array), returned as ``float``; NaN and bools fail."""
    return _Number(allow_inf, integral=False)


def integer() -> _Spec:
    """An integer (Python, NumPy or an integer-valued float), returned as ``int``."""
    return _Number(False, integral=True)


def array(shape=None, *, dtype=float, allow_inf: bool = False, nan_hint: str | None = None,
          what: str | None = None) -> _Spec:
    """A NumPy array of the given ``shape``; returned as a new base-class ``float64`` (or ``bool``) array.

    Lists are refused (the feedback says to use ``np.asarray``); integer arrays are accepted where floats are
    asked for; ``nan_hint`` replaces the generic message when the array contains NaN.
    """
    return _Array(shape, dtype, allow_inf, nan_hint, what)


def sequence(*specs: _Spec, names: str | None = None) -> _Spec:
    """A tuple (or list) with exactly one item per spec, each converted; ``names`` e.g. ``"(X, X_prime, theta)"``."""
    return _Sequence(specs, names)


def _convert_in_worker(spec: _Spec, value: Any) -> tuple[str, Any]:
    """``("converted", plain value)`` or ``("bad", message)``; runs in the worker thread, under the time limit."""
    try:
        return ("converted", spec.convert(value))
    except _BadOutput as exc:
        return ("bad", _short(exc))
    except Exception as exc:  # noqa: BLE001 - a hostile __float__, __array__, __len__ ...
        return ("bad", f"your output could not be read ({_describe_exception(exc)}); it is {_describe(value)}")


# --------------------------------------------------------------------------------------------------------------
# Running a call with a time limit.


@dataclass
class _Outcome:
    status: str            # "ok", "raised", "timeout"
    value: Any = None
    error: BaseException | None = None
    text: str = ""          # description of ``error``, made in the worker thread
    stopped: bool = True   # for timeouts: did the worker stop?


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


def _run_timed(job: Callable[[dict], Any], limit: float) -> _Outcome:
    """Run ``job(clock)`` in a daemon thread; time out when one call has run ``limit`` seconds.

    ``clock["started"]`` is when the current call began; a job that makes many calls resets it before each.
    """
    box: dict[str, Any] = {}
    clock = {"started": time.monotonic()}

    def target() -> None:
        try:
            with np.errstate(all="ignore"):  # the checker diagnoses NaN and overflow itself
                box["value"] = job(clock)
            box["status"] = "ok"
        except _CallAbandoned:
            box["status"] = "abandoned"
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt of the reader's code too
            box["error"] = exc
            try:  # the text is made here, under the time limit: a hostile __str__ cannot hang the checker
                box["text"] = _describe_exception(exc)
            except BaseException:  # noqa: BLE001
                box["text"] = type(exc).__name__
            box["status"] = "raised"

    worker = threading.Thread(target=target, name="dpcp-exercise-call", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            left = clock["started"] + limit - time.monotonic()
            if left <= 0:
                break
            worker.join(min(left, 0.5))
    except BaseException:  # e.g. the reader interrupts the kernel while waiting: stop the worker, re-raise
        _interrupt(worker)
        raise
    if worker.is_alive():
        return _Outcome("timeout", stopped=_interrupt(worker))
    if box.get("status") == "ok":
        return _Outcome("ok", value=box["value"])
    if box.get("status") == "raised":
        return _Outcome("raised", error=box["error"], text=box["text"])
    return _Outcome("timeout", stopped=True)


# --------------------------------------------------------------------------------------------------------------
# The context handed to a checker body.


class CheckContext:
    """What a checker body uses to call the reader's function and record feedback.

    Attributes: ``result`` (the :class:`ExerciseResult`), ``time_limit`` (seconds per call), ``calls`` (the
    number of calls that produced a valid value).
    """

    def __init__(self, fn: Callable, result: ExerciseResult, time_limit: float):
        self._fn, self.result, self.time_limit, self.calls = fn, result, float(time_limit), 0

    def fail(self, message: str) -> None:
        """Record a failed case (the check goes on; ``break``/``return`` to end it)."""
        self.result.fail(message)

    def stop(self, message: str):
        """Record a failed case and end the check."""
        self.result.fail(message)
        raise _Stop

    def _prefix(self, case: str | None) -> str:
        return f"{case}: " if case else ""

    def _timeout_message(self, case, what: str, stopped: bool) -> str:
        tail = ("the check gave up and stopped it" if stopped else
                "the check gave up, but the call goes on running in the background (compiled code cannot be "
                "interrupted): restart the kernel if your notebook becomes slow")
        return (f"{self._prefix(case)}{what} took longer than {self.time_limit:g} s; {tail}. Look for a loop that "
                "never ends or work that grows too fast with the input size")

    def _raised_message(self, case, outcome: _Outcome) -> str:
        if isinstance(outcome.error, NotImplementedError):
            return (f"{self._prefix(case)}your function raised NotImplementedError: replace the stub with your "
                    "implementation")
        return f"{self._prefix(case)}your function raised {outcome.text}"

    def call(self, *args: Any, returns: _Spec | None = None, case: str | None = None, **kwargs: Any) -> Any:
        """Call the reader's function once with a time limit and return its output converted by ``returns``.

        On ``None``, an exception, a time-out or an output ``returns`` refuses, record a specific failure and
        end the check.
        """
        spec = returns or _Anything()

        def job(clock):
            value = self._fn(*args, **kwargs)
            if value is None:
                return None
            return _convert_in_worker(spec, value)

        outcome = _run_timed(job, self.time_limit)
        if outcome.status == "timeout":
            self.stop(self._timeout_message(case, "your function", outcome.stopped))
        if outcome.status == "raised":
            self.stop(self._raised_message(case, outcome))
        packed = outcome.value
        if packed is None:
            self.stop(f"{self._prefix(case)}your function returned None: did you forget a `return` statement?")
        if packed[0] == "bad":
            self.stop(f"{self._prefix(case)}{packed[1]}")
        self.calls += 1
        return packed[1]

    def repeat(self, count: int, make_args: Callable[[], tuple], *, returns: _Spec | None = None,
               case: str | None = None) -> list:
        """Call the reader's function ``count`` times (arguments from ``make_args()``) in one worker thread.

        The time limit applies to each call. Returns the converted outputs.
        """
        spec = returns or _Anything()
        fn = self._fn

        def job(clock):
            out = []
            for _ in range(count):
                clock["started"] = time.monotonic()
                value = fn(*make_args())
                if value is None:
                    return ("none", len(out))
                packed = _convert_in_worker(spec, value)
                if packed[0] == "bad":
                    return ("bad", packed[1], len(out))
                out.append(packed[1])
            return ("ok", out)

        outcome = _run_timed(job, self.time_limit)
        if outcome.status == "timeout":
            self.stop(self._timeout_message(case, "one call of your function", outcome.stopped))
        if outcome.status == "raised":
            self.stop(self._raised_message(case, outcome))
        packed = outcome.value
        if packed[0] == "none":
            self.stop(f"{self._prefix(case)}your function returned None (call {packed[1] + 1} of {count}): did you "
                      "forget a `return` statement?")
        if packed[0] == "bad":
            self.stop(f"{self._prefix(case)}call {packed[2] + 1} of {count}: {packed[1]}")
        self.calls += count
        return packed[1]

    def call_raises(self, error: type[BaseException], *args: Any, case: str | None = None,
                    message: str | None = None, **kwargs: Any) -> None:
        """Require the reader's function to raise ``error`` (e.g. ``ValueError`` for infeasible input).

        Returning a value, raising something else, or timing out records a failure (``message`` replaces the
        default text for a returned value) and ends the check.
        """
        outcome = _run_timed(lambda clock: _describe(self._fn(*args, **kwargs)), self.time_limit)
        if outcome.status == "timeout":
            self.stop(self._timeout_message(case, "your function", outcome.stopped))
        if outcome.status == "raised":
            if isinstance(outcome.error, error):
                self.calls += 1
                return
            if isinstance(outcome.error, NotImplementedError):
                self.stop(self._raised_message(case, outcome))
            self.stop(f"{self._prefix(case)}raise {error.__name__} here, not {outcome.text}")
        self.stop(f"{self._prefix(case)}" + (message or f"this input must make your function raise "
                                                          f"{error.__name__}, but it returned {outcome.value}"))


# --------------------------------------------------------------------------------------------------------------
# The decorator.


def checker(*, function: str, exercise: str) -> Callable[[Callable[[CheckContext], None]], Callable]:
    """Make a public checker ``check_x(fn, *, time_limit=DEFAULT_TIME_LIMIT, quiet=False)`` from a body.

    Parameters
    ----------
    function : str
        The name the exercise asks the reader to give the function (e.g. ``"my_quantile"``); the batch grader
        (:mod:`dpcp_tutorial.grading`) grades a submission's function of that name with this checker.
    exercise : str
        The label of the exercise in the chapter (e.g. ``"ex-01-code-quantile"``).
    """

    def decorate(body: Callable[[CheckContext], None]) -> Callable:
        name = body.__name__

        @functools.wraps(body)
        def check(fn: Callable, *, time_limit: float = DEFAULT_TIME_LIMIT, quiet: bool = False) -> ExerciseResult:
            result = ExerciseResult(name)
            if not callable(fn):
                result.fail(f"pass your function itself (e.g. {name}({function})), not {_describe(fn)}")
            elif not (isinstance(time_limit, (int, float)) and time_limit > 0):
                raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
            else:
                ctx = CheckContext(fn, result, time_limit)
                try:
                    body(ctx)
                except _Stop:
                    pass
                except Exception as exc:  # noqa: BLE001 - a checker must never crash on a reader's output
                    result.fail(f"the checker could not evaluate your function's output ({_describe_exception(exc)})"
                                f"; check that it returns what the exercise asks for")
                if result.passed and ctx.calls == 0:
                    result.fail("no case could be checked")
            return result if quiet else result.report()

        del check.__wrapped__  # the public signature is check's, not the body's
        check.__signature__ = inspect.signature(check)
        check.function = function
        check.exercise = exercise
        check.is_exercise_checker = True
        return check

    return decorate


