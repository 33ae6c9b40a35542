"""The checker protocol every exercise checker follows.

A checker is

* a **set of cases**: plain-data inputs made by a function ``cases(rng) -> list[Case]`` from a random
  generator. In a notebook the generator is seeded from a public constant, so every reader sees the same
  *public* cases; a graded run (``secret=...``, or the batch grader's ``--secret``) seeds it from the
  instructor's secret, which the package does not contain, so the graded cases are of the same kinds
  (ties, floating-point traps, small n, ...) but with values nobody can read off the package;
* a **body** ``body(ctx, case)`` that asks for calls of the reader's function(s) through ``ctx.call`` /
  ``ctx.map`` / ``ctx.call_raises`` and compares the returned plain data with the expected answer. The
  comparison runs only in the checking process: the reader's function receives copies of the inputs and
  its outputs come back converted to plain data (:mod:`._runtime`), so it never sees an expected value, and
  in a batch run it executes in a separate process;
* a **verdict per case**: each case passes, or fails with a message that names the mistake (and, in a
  notebook only, a detail with the values involved). Every case is run, and the result counts the cases
  passed out of the total.

``@checker(...)`` turns a body into the public ``check_<name>(fn, *, time_limit=10.0, quiet=False,
secret=None) -> ExerciseResult``; an exercise that asks for several functions gets one positional parameter
per function (``check_x(f1, f2, ..., *, time_limit=..., quiet=..., secret=...)``) and is one exercise with
one result. ``None``, any exception (``NotImplementedError`` and ``SystemExit`` included), a value of the
wrong type, shape or dtype, NaN, and a call that runs past the time limit fail the case with a specific
message; a checker can neither crash nor pass by accident: an error inside a body fails the case, and a
case without a valid call fails.

Graded feedback (``secret`` given) never prints an expected value or a case's parameters: it says which
kind of case failed and what the mistake is, so that feedback cannot be turned into hard-coded answers.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import inspect
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ._runtime import (  # noqa: F401 - the specs are part of this module's API
    Call,
    Reply,
    Rng,
    anything,
    array,
    binary_array,
    describe,
    describe_exception,
    execute,
    integer,
    number,
    plain_copy,
    sequence,
    short,
)

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "SECRET_ENVIRONMENT_VARIABLE",
    "Case",
    "CheckContext",
    "ExerciseResult",
    "Rng",
    "anything",
    "array",
    "binary_array",
    "checker",
    "integer",
    "number",
    "sequence",
]

DEFAULT_TIME_LIMIT = 10.0
"""Seconds one call of the reader's function may take."""

SECRET_ENVIRONMENT_VARIABLE = "DPCP_GRADING_SECRET"
"""Where ``secret=True`` (and the batch grader, without ``--secret``) reads the instructor's secret."""

_PUBLIC_KEY = b"dpcp_tutorial public exercise cases"


# --------------------------------------------------------------------------------------------------------------
# Cases and results


class Case:
    """One case of a checker: what it tests (``kind``), its parameters for display, and its plain data.

    ``kind`` is shown in every feedback and must not contain values drawn from the generator (a graded case
    has a secret's values); ``params`` (e.g. ``"n=9, alpha=0.7"``) is shown only in a notebook. The data are
    available as attributes: ``Case("ties", "n=6", scores=s, alpha=0.4).scores``.
    """

    def __init__(self, kind: str, params: str = "", **data: Any):
        self.kind, self.params, self._values = str(kind), str(params), data

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    def has(self, name: str) -> bool:
        """Whether the case has the data item ``name``."""
        return name in self._values

    def __repr__(self) -> str:
        return f"Case({self.kind!r}, {self.params!r})"


@dataclass
class CaseVerdict:
    """The outcome of one case: ``passed``, and the messages (graded-safe) and details (notebook only)."""

    index: int
    kind: str
    params: str
    passed: bool
    messages: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)   # the functions this case called


@dataclass
class ExerciseResult:
    """Outcome of a checker: ``passed``, the number of cases passed out of the total, and the feedback lines.

    ``bool(result)`` is ``result.passed``, so ``assert check_x(fn)`` works. ``score(points)`` is the share
    of ``points`` earned (cases passed / total).
    """

    name: str
    passed: bool = True
    feedback: list[str] = field(default_factory=list)
    cases_passed: int = 0
    cases_total: int = 0
    verdicts: list[CaseVerdict] = field(default_factory=list)
    graded: bool = False
    not_graded: str = ""   # non-empty: the reason the submission cannot be graded (e.g. uses the package's code)

    def fail(self, message: str) -> None:
        """Record a problem that concerns the whole check (not one case)."""
        self.passed = False
        self.feedback.append(message)

    def score(self, points: float) -> float:
        """``points`` times the share of cases passed (0 when nothing could be graded)."""
        if self.not_graded or not self.cases_total:
            return 0.0
        return float(points) * self.cases_passed / self.cases_total

    def report(self) -> "ExerciseResult":
        """Print the feedback (or a success line) and return ``self``."""
        counted = f" ({self.cases_passed} of {self.cases_total} cases)" if self.cases_total else ""
        if self.passed:
            print(f"{self.name}: all checks passed{counted}.")
        else:
            print(f"{self.name}: {len(self.feedback)} problem(s) found{counted}:")
            for line in self.feedback:
                print(f"  - {line}")
        return self

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return (f"ExerciseResult({self.name!r}, passed={self.passed}, cases_passed={self.cases_passed}, "
                f"cases_total={self.cases_total})")

    def _repr_pretty_(self, printer, cycle) -> None:  # keep notebook output to the printed report
        printer.text(f"ExerciseResult(passed={self.passed}, cases={self.cases_passed}/{self.cases_total})")


class _CaseOver(Exception):
    """Ends the current case after a failure was recorded (internal)."""


_Stop = _CaseOver   # the name older checker bodies knew


class _CheckOver(Exception):
    """Ends the whole check: the remaining cases are not run (after a call that could not be stopped)."""


# --------------------------------------------------------------------------------------------------------------
# Where calls go: in the notebook, to the reader's functions in this process; in a batch run, to a runner
# process (dpcp_tutorial.course.grading) -- both answer a Call with a Reply.


class LocalExecutor:
    """Runs calls on functions of this process, each in a worker thread with a time limit.

    ``trusts_reports``: whether what the calling side reports about a call (inputs modified, numpy's global
    random state changed) may fail a case. In a notebook it may (the reader's own process checks itself);
    the batch grader's executor does not trust its sandbox, asks for a *recheck* instead (a second call on
    the same argument objects, under another global seed; see :class:`Reply`) and turns the reports into
    feedback without points.
    """

    trusts_reports = True
    recheck = False

    def __init__(self, functions: dict[str, Callable], time_limit: float):
        self.functions, self.time_limit = dict(functions), float(time_limit)

    def run(self, call: Call) -> Reply:
        return execute(self.functions, call, self.time_limit)


# --------------------------------------------------------------------------------------------------------------
# The context handed to a checker body.


class CheckContext:
    """What a checker body uses to call the reader's function(s) and record the verdict of the current case.

    Attributes: ``graded`` (feedback must not show expected values), ``time_limit`` (seconds per call),
    ``calls`` (valid calls in the current case), ``case`` (the current :class:`Case`), ``last`` (the
    :class:`Reply` of the last call).
    """

    def __init__(self, executor, functions: Sequence[str], time_limit: float, graded: bool = False):
        self._executor = executor
        self.functions = tuple(functions)
        self.time_limit = float(time_limit)
        self.graded = bool(graded)
        self.case: Case | None = None
        self.calls = 0
        self.last: Reply | None = None
        self._messages: list[str] = []
        self._notes: list[str] = []
        self._details: list[str] = []
        self._used: list[str] = []
        self.result: ExerciseResult | None = None   # kept for older bodies; use fail()/stop()

    # recording -------------------------------------------------------------------------------------------
    def fail(self, message: str, detail: str | None = None) -> None:
        """Record that the current case fails; ``message`` names the mistake without expected values,
        ``detail`` (shown only in a notebook) may show them. The case goes on."""
        self._messages.append(short(message, 500))
        if detail:
            self._details.append(short(detail, 500))

    def stop(self, message: str, detail: str | None = None):
        """Record that the current case fails and end it."""
        self.fail(message, detail)
        raise _CaseOver

    # calling ---------------------------------------------------------------------------------------------
    def _which(self, function: str | None) -> str:
        if function is None:
            if len(self.functions) != 1:
                raise ValueError("this exercise has several functions: say which one to call")
            return self.functions[0]
        if function not in self.functions:
            raise ValueError(f"{function!r} is not a function of this exercise")
        return function

    def _name(self, function: str) -> str:
        return "your function" if len(self.functions) == 1 else f"your {function}"

    def note(self, message: str) -> None:
        """Feedback for the current case that does not fail it."""
        self._notes.append(short(message, 500))

    def _run(self, call: Call, *, rng_state: bool, inputs: bool) -> Reply:
        if call.function not in self._used:
            self._used.append(call.function)
        trusted = getattr(self._executor, "trusts_reports", True)
        if (rng_state or inputs) and getattr(self._executor, "recheck", False):
            call.recheck = True
            first = int(np.random.default_rng().integers(2**32))
            call.global_seeds = (first, (first + 1 + int(np.random.default_rng().integers(2**31))) % 2**32)
        reply = self._executor.run(call)
        self.last = reply
        who = self._name(call.function)
        where = f" (call {reply.index + 1} of {call.count})" if call.count > 1 and trusted else ""
        if reply.status == "missing":
            self.stop(f"not submitted: no function named {call.function}")
        if reply.status == "timeout":
            tail = ("the check gave up and stopped it" if reply.stopped else
                    "the check gave up, but the call goes on running in the background (compiled code cannot be "
                    "interrupted): restart the kernel if your notebook becomes slow")
            self.fail(f"{'one call of ' + who if call.count > 1 else who} took longer than {self.time_limit:g} s; "
                      f"{tail}. Look for a loop that never ends or work that grows too fast with the input size")
            raise _CheckOver
        if reply.status == "raised":
            if "NotImplementedError" in reply.exception:
                self.stop(f"{who} raised NotImplementedError{where}: replace the stub with your implementation")
            self.stop(f"{who} raised {reply.message if trusted else _exception_name(reply)}{where}")
        if reply.status == "none":
            self.stop(f"{who} returned None{where}: did you forget a `return` statement?")
        if reply.status == "bad":
            self.stop(f"{who}{where}: {reply.message}" if trusted else _UNTRUSTED_BAD.format(who=who))
        in_place = f"{who} modified its input arrays in place; work on a copy and return a new array"
        global_state = (f"{who} changed numpy's global random state (np.random.seed or np.random.* draws); draw "
                        "every random number from the rng argument, so that a seed reproduces the release and "
                        "nothing else in the program is affected")
        if call.recheck and reply.recheck and reply.values and not _same_output(reply.values[0], reply.recheck[0]):
            causes = [text for flag, text in ((inputs, "modifies its inputs in place"),
                                              (rng_state, "draws from numpy's global random state instead of the "
                                                          "rng argument")) if flag]
            self.stop(f"{who} returned a different result when called again on the same input arrays with the same "
                      f"seed: it {' or '.join(causes)}; work on copies and draw every random number from the rng "
                      "argument")
        for flag, reported, text in ((inputs, reply.inputs_modified, in_place),
                                     (rng_state, reply.global_state_changed, global_state)):
            if flag and reported:
                if trusted:
                    self.stop(text)
                self.note(f"(no points deducted) {text}")
        self.calls += call.count
        return reply

    def call(self, *args: Any, returns=None, function: str | None = None, kwargs: dict | None = None,
             repeat: int = 1, rng_state: bool = False, inputs: bool = False, case: str | None = None) -> Any:
        """Call a reader's function once (or ``repeat`` times with the same arguments) and return its output.

        Arguments are plain data; ``Rng(seed)`` stands for ``numpy.random.default_rng(seed)``, one Generator
        shared by the repeated calls. With ``repeat > 1`` a list of outputs is returned. ``rng_state=True``
        fails the case when the call changes numpy's global random state, ``inputs=True`` when it modifies
        its inputs. On ``None``, an exception, a time-out or an output ``returns`` refuses, the case fails
        with a specific message and ends. (``case`` is accepted for older bodies and ignored.)
        """
        call = Call(self._which(function), tuple(args), dict(kwargs or {}), returns or anything(), int(repeat))
        reply = self._run(call, rng_state=rng_state, inputs=inputs)
        return reply.values if repeat > 1 else reply.values[0]

    def map(self, arg_tuples: Sequence[tuple], *, kwargs_list: Sequence[dict] | None = None, returns=None,
            function: str | None = None, rng_state: bool = False, inputs: bool = False) -> list:
        """Call a reader's function once per tuple of positional arguments (and dict of keyword arguments,
        ``kwargs_list``); ``Rng`` markers with the same seed are one Generator across the calls."""
        call = Call(self._which(function), (), {}, returns or anything(), 1, [tuple(a) for a in arg_tuples],
                    None if kwargs_list is None else [dict(k) for k in kwargs_list])
        return self._run(call, rng_state=rng_state, inputs=inputs).values

    def call_raises(self, error: type[BaseException], *args: Any, function: str | None = None,
                    kwargs: dict | None = None, case: str | None = None, message: str | None = None) -> None:
        """Require a reader's function to raise ``error`` (e.g. ``ValueError`` for infeasible input).

        Returning a value, raising something else, or timing out fails the case (``message`` replaces the
        default text for a returned value).
        """
        name = self._which(function)
        call = Call(name, tuple(args), dict(kwargs or {}), anything())
        if name not in self._used:
            self._used.append(name)
        reply = self._executor.run(call)
        self.last = reply
        who = self._name(name)
        if reply.status == "missing":
            self.stop(f"not submitted: no function named {name}")
        if reply.status == "timeout":
            self.fail(f"{who} took longer than {self.time_limit:g} s")
            raise _CheckOver
        if reply.status == "raised":
            if error.__name__ in reply.exception:
                self.calls += 1
                return
            if "NotImplementedError" in reply.exception:
                self.stop(f"{who} raised NotImplementedError: replace the stub with your implementation")
            trusted = getattr(self._executor, "trusts_reports", True)
            self.stop(f"raise {error.__name__} here, not {reply.message if trusted else _exception_name(reply)}")
        self.calls += 1   # the function answered; the case fails below
        self.stop(message or f"this input must make {who} raise {error.__name__}, but it returned a value")

    # the driver ------------------------------------------------------------------------------------------
    def _begin(self, case: Case) -> None:
        self.case, self.calls, self.last = case, 0, None
        self._messages, self._notes, self._details, self._used = [], [], [], []


_UNTRUSTED_BAD = ("{who} returned an output of the wrong type, shape or dtype, or with NaN or infinite values; run "
                  "the exercise's check in your notebook to see what is wrong")


def _exception_name(reply: Reply) -> str:
    """The class of an exception a sandboxed call raised, for graded feedback: a built-in exception's name,
    nothing the submission wrote (an exception's text, or a class it named, could carry the graded inputs)."""
    import builtins

    for name in reply.exception:
        kind = getattr(builtins, name, None)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            return name if name == reply.exception[0] else f"an exception derived from {name}"
    return "an exception"


def _same_output(a: Any, b: Any) -> bool:
    """Whether two outputs of the same call agree (floats to 1e-9 relative, everything else exactly)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same_output(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return type(a) is type(b) and a.keys() == b.keys() and all(_same_output(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        try:
            return bool(np.isclose(float(a), float(b), rtol=1e-9, atol=1e-12, equal_nan=True))
        except (TypeError, ValueError):
            return False
    return a == b


def _verdict(index: int, case: Case, ctx: CheckContext) -> CaseVerdict:
    passed = not ctx._messages and ctx.calls > 0
    messages = list(ctx._messages) or ([] if passed else ["no call of your function could be checked"])
    if passed and ctx._notes:
        messages = list(dict.fromkeys(ctx._notes))
    return CaseVerdict(index, case.kind, case.params, passed, messages, list(ctx._details), list(ctx._used))


def _case_line(verdict: CaseVerdict, total: int, graded: bool, single: bool) -> str:
    text = "; ".join(dict.fromkeys(verdict.messages))
    if not graded and verdict.details:
        text += " (" + "; ".join(dict.fromkeys(verdict.details)) + ")"
    if single:
        return text
    label = verdict.kind
    if not graded and verdict.params:
        label = f"{label}; {verdict.params}" if label else verdict.params
    return f"case {verdict.index + 1} of {total} ({label}): {text}" if label else \
        f"case {verdict.index + 1} of {total}: {text}"


def case_rng(name: str, secret: str | bytes | None, *, salt: str | None = None,
             draw: int = 0) -> np.random.Generator:
    """The generator a checker's cases are drawn from: public (``secret=None``) or from the instructor's secret.

    ``salt`` (e.g. a student's identifier) gives each student their own graded cases; ``draw`` numbers the
    redraws that replace graded cases equal to a public one (:meth:`CheckerSpec.cases`).
    """
    key = _PUBLIC_KEY if secret is None else (secret.encode("utf-8") if isinstance(secret, str) else bytes(secret))
    message = name.encode("utf-8")
    if salt is not None:
        message += b"\x00salt:" + str(salt).encode("utf-8")
    if draw:
        message += b"\x00draw:" + str(int(draw)).encode("ascii")
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _fingerprint_into(h, value: Any) -> None:
    if isinstance(value, np.ndarray):
        array_value = np.ascontiguousarray(value)
        h.update(b"A" + str(array_value.dtype).encode() + str(array_value.shape).encode())
        if array_value.dtype == object:
            for item in array_value.ravel():
                _fingerprint_into(h, item)
        else:
            h.update(array_value.tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(b"L%d" % len(value))
        for item in value:
            _fingerprint_into(h, item)
    elif isinstance(value, dict):
        h.update(b"D%d" % len(value))
        for key in sorted(value, key=repr):
            _fingerprint_into(h, key)
            _fingerprint_into(h, value[key])
    elif isinstance(value, (bool, np.bool_)):
        h.update(b"B" + (b"1" if value else b"0"))
    elif isinstance(value, (int, np.integer)):
        h.update(b"N" + repr(int(value)).encode())       # 3 and np.int64(3) are the same input
    elif isinstance(value, (float, np.floating)):
        h.update(b"N" + (repr(int(value)) if float(value).is_integer() else repr(float(value))).encode())
    else:
        h.update(b"O" + type(value).__name__.encode() + repr(value).encode())


def case_fingerprint(case: "Case") -> str:
    """A digest of a case's data (not its ``kind`` or ``params``): two cases with equal inputs share it.

    Integers and floats of equal value, and numpy scalars and Python numbers, count as the same input, since
    the reader's function receives them alike.
    """
    h = hashlib.sha256()
    values = case._values
    for key in sorted(values):
        h.update(key.encode("utf-8") + b"=")
        _fingerprint_into(h, values[key])
    return h.hexdigest()


MAX_REDRAWS = 200
"""How many fresh draws :meth:`CheckerSpec.cases` makes to replace graded cases equal to a public one."""


def draw_graded_cases(name: str, make_cases: Callable, secret: str, *, salt: str | None = None,
                      public: Sequence["Case"] | None = None) -> list["Case"]:
    """The graded cases of a checker: drawn from the secret (and ``salt``), none equal to a public case.

    ``make_cases`` draws one list of cases from a generator; the graded list has the public list's length and
    the same kind at every position. A graded case whose data equal those of any public case (or of an earlier
    graded case) is replaced by the case at the same position of a fresh draw (``draw=1, 2, ...`` of
    :func:`case_rng`), so that a table of the public answers (they can be read off the notebook) answers no
    graded case. A position that stays equal to a public case over :data:`MAX_REDRAWS` draws is a case that
    does not depend on the generator: the checker must draw it, and a ``RuntimeError`` says so.
    """
    if public is None:
        public = list(make_cases(case_rng(name, None)))
    taken = {case_fingerprint(c) for c in public}
    slots: list[Case | None] = [None] * len(public)
    for draw in range(MAX_REDRAWS + 1):
        drawn = list(make_cases(case_rng(name, secret, salt=salt, draw=draw)))
        for index, case in enumerate(drawn[:len(slots)]):
            if slots[index] is not None:
                continue
            digest = case_fingerprint(case)
            if digest not in taken:
                slots[index] = case
                taken.add(digest)
        if all(slot is not None for slot in slots):
            return list(slots)
    stuck = sorted({public[i].kind or f"case {i + 1}" for i, slot in enumerate(slots) if slot is None})
    raise RuntimeError(f"{name}: the case(s) {stuck} do not depend on the generator, so their graded version "
                       "would equal the public one; draw their values from the rng given to cases()")


def resolve_secret(secret) -> str | None:
    """``None`` (public cases), a string, or ``True`` (read :data:`SECRET_ENVIRONMENT_VARIABLE`)."""
    if secret is None or secret is False:
        return None
    if secret is True:
        value = os.environ.get(SECRET_ENVIRONMENT_VARIABLE)
        if not value:
            raise ValueError(f"secret=True reads the instructor's secret from the environment variable "
                             f"{SECRET_ENVIRONMENT_VARIABLE}, which is not set")
        return value
    if isinstance(secret, (str, bytes)) and len(secret) > 0:
        return secret.decode("utf-8") if isinstance(secret, bytes) else secret
    raise ValueError("secret must be None, True (read it from the environment) or a non-empty string")


@dataclass
class CheckerSpec:
    """Everything the batch grader needs to know about a checker besides calling it."""

    name: str
    exercise: str
    functions: tuple[str, ...]
    body: Callable
    make_cases: Callable | None
    implements: tuple[str, ...]

    def cases(self, secret: str | None = None, *, salt: str | None = None) -> list[Case]:
        """The public cases (``secret=None``) or the graded ones, which never equal a public case
        (:func:`draw_graded_cases`); ``salt`` (graded only) gives each student their own cases."""
        if self.make_cases is None:
            return [Case("")]
        public = list(self.make_cases(case_rng(self.name, None)))
        if not public or not all(isinstance(c, Case) for c in public):
            raise TypeError(f"{self.name}: cases() must return a non-empty list of Case")
        if secret is None:
            return public
        cases = draw_graded_cases(self.name, self.make_cases, secret, salt=salt, public=public)
        if not all(isinstance(c, Case) for c in cases):
            raise TypeError(f"{self.name}: cases() must return a non-empty list of Case")
        return cases

    def run(self, executor, *, time_limit: float, secret: str | None = None, salt: str | None = None,
            only: Callable[[Case], bool] | None = None, fixed_cases: list[Case] | None = None) -> ExerciseResult:
        """Run every case (or those ``only`` selects) through ``executor``; return the counted result.

        ``fixed_cases`` (graded cases drawn earlier, e.g. written into an nbgrader notebook) replace the draw.
        """
        graded = secret is not None or fixed_cases is not None
        result = ExerciseResult(self.name, graded=graded)
        cases = list(fixed_cases) if fixed_cases is not None else self.cases(secret, salt=salt)
        if only is not None:
            cases = [c for c in cases if only(c)]
        single = self.make_cases is None
        ctx = CheckContext(executor, self.functions, time_limit, graded)
        ctx.result = result
        abandoned = False
        for index, case in enumerate(cases):
            ctx._begin(case)
            if abandoned:
                verdict = CaseVerdict(index, case.kind, case.params, False,
                                      ["not run: an earlier call took longer than the time limit"])
                result.verdicts.append(verdict)
                continue
            try:
                if single:
                    self.body(ctx)
                else:
                    self.body(ctx, case)
            except _CaseOver:
                pass
            except _CheckOver:
                abandoned = True
            except Exception as exc:  # noqa: BLE001 - a checker must never crash on a reader's output
                ctx.fail(f"the checker could not evaluate your function's output ({describe_exception(exc)}); "
                         "check that it returns what the exercise asks for")
            result.verdicts.append(_verdict(index, case, ctx))
        result.cases_total = len(result.verdicts)
        result.cases_passed = sum(v.passed for v in result.verdicts)
        result.passed = result.cases_passed == result.cases_total and result.cases_total > 0
        result.feedback = [_case_line(v, result.cases_total, graded, single) for v in result.verdicts
                           if not v.passed or v.messages]
        return result


def package_origin(fn: Any) -> str | None:
    """The qualified name of ``fn`` when it is one of this package's own functions (not the reader's)."""
    module = getattr(fn, "__module__", None) or ""
    target = getattr(fn, "func", fn)            # functools.partial
    module = module or getattr(target, "__module__", "") or ""
    if not module and isinstance(target, functools.partial):
        module = getattr(target.func, "__module__", "") or ""
    if isinstance(module, str) and (module == "dpcp_tutorial" or module.startswith("dpcp_tutorial.")):
        return f"{module}.{getattr(target, '__qualname__', getattr(target, '__name__', '?'))}"
    return None


REGISTRY: dict[str, Callable] = {}
"""Every public checker, by name (filled by :func:`checker`)."""


def checker(*, exercise: str, function: str | None = None, functions: Sequence[str] | None = None,
            cases: Callable[[np.random.Generator], list] | None = None,
            implements: Sequence[str] = (), points: float = 6) -> Callable[[Callable], Callable]:
    """Make a public checker from a body.

    Parameters
    ----------
    exercise : str
        The label of the exercise in the chapter (e.g. ``"ex-01-code-quantile"``).
    function, functions : str or sequence of str
        The name(s) the exercise asks the reader to give the function(s) (e.g. ``"my_quantile"``); the batch
        grader (:mod:`dpcp_tutorial.course.grading`) grades a submission's functions of those names with this checker.
        With several names the public checker takes one function per name, in this order.
    cases : callable
        ``cases(rng) -> list[Case]``; the body is then called as ``body(ctx, case)`` once per case. Without
        it (older checkers) the body is ``body(ctx)`` and the whole check is one case.
    implements : sequence of str
        Dotted names of the package's own implementations of what the exercise asks for (e.g.
        ``"dpcp_tutorial.conformal.conformal_quantile"``); a submission that uses them is not graded.
    points : float, default=6
        The exercise's automatic points (the checker's part of the rubric: 6, 12 for an assembly exercise);
        the grader and the nbgrader course read them from here (:mod:`dpcp_tutorial.course.grading.points`).
        The checkers of one exercise declare the same points.
    """
    names = tuple(functions) if functions is not None else ((function,) if function else ())
    if not names or len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
        raise ValueError("give the exercise's function name(s) as distinct identifiers")
    if not (isinstance(points, (int, float)) and not isinstance(points, bool) and points > 0):
        raise ValueError(f"points must be a positive number, got {points!r}")

    def decorate(body: Callable) -> Callable:
        name = body.__name__
        spec = CheckerSpec(name, exercise, names, body, cases, tuple(implements))

        def check(*fns: Callable, time_limit: float = DEFAULT_TIME_LIMIT, quiet: bool = False,
                  secret=None) -> ExerciseResult:
            result = ExerciseResult(name)
            if not (isinstance(time_limit, (int, float)) and not isinstance(time_limit, bool) and time_limit > 0):
                raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
            secret_value = resolve_secret(secret)
            if len(fns) != len(names):
                wanted = ", ".join(names)
                raise TypeError(f"{name}() takes {len(names)} function(s) ({wanted}), got {len(fns)}")
            problems = []
            for given, wanted in zip(fns, names):
                if not callable(given):
                    problems.append(f"pass your function itself (e.g. {name}({', '.join(names)})), not "
                                    f"{describe(given)}")
                elif package_origin(given):
                    problems.append(f"{wanted}: you passed the package's own {package_origin(given)}; the "
                                    "exercise asks for your implementation")
            if problems:
                result.graded = secret_value is not None
                for problem in problems:
                    result.fail(problem)
                result.cases_total = len(spec.cases(secret_value))
                if any("package's own" in p for p in problems):
                    result.not_graded = "uses the package's implementation"
            else:
                executor = LocalExecutor(dict(zip(names, fns)), time_limit)
                result = spec.run(executor, time_limit=time_limit, secret=secret_value)
            return result if quiet else result.report()

        params = [inspect.Parameter("fn" if len(names) == 1 else n, inspect.Parameter.POSITIONAL_ONLY)
                  for n in names]
        params += [inspect.Parameter("time_limit", inspect.Parameter.KEYWORD_ONLY, default=DEFAULT_TIME_LIMIT),
                   inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, default=False),
                   inspect.Parameter("secret", inspect.Parameter.KEYWORD_ONLY, default=None)]
        check.__signature__ = inspect.Signature(params, return_annotation=ExerciseResult)
        check.__name__ = check.__qualname__ = name
        check.__doc__ = body.__doc__
        check.__module__ = body.__module__
        check.function = names[0] if len(names) == 1 else ", ".join(names)
        check.functions = names
        check.exercise = exercise
        check.implements = tuple(implements)
        check.points = float(points)
        check.spec = spec
        check.is_exercise_checker = True
        REGISTRY[name] = check
        return check

    return decorate
