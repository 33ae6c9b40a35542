"""Graded cases as fixed data: drawn once from the instructor's secret, written into a notebook, run later.

The nbgrader course (``make nbgrader``) runs its hidden tests in the student's own kernel, where any secret
would be readable by the student's code. So the secret never goes there: ``make nbgrader`` draws each checker's
graded cases from the secret on the instructor's machine (:meth:`CheckerSpec.cases`, none equal to a public
case) and writes them into the hidden-test region as text (:func:`encode_cases`); the hidden test runs the
checker on exactly those cases (:func:`grade_fixed_cases`), with graded feedback (no values, no parameters).
"""

from __future__ import annotations

import base64
import json
import textwrap
import zlib
from typing import Any, Callable

import numpy as np

from ._common import DEFAULT_TIME_LIMIT, Case, ExerciseResult, LocalExecutor

__all__ = ["decode_cases", "encode_cases", "fixed_cases", "grade_fixed_cases"]

_FORMAT = "dpcp-cases-1"


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        if data.dtype == object:
            raise TypeError("object arrays cannot be fixed case data")
        return {"~array": [data.dtype.str, list(data.shape), base64.b64encode(data.tobytes()).decode("ascii")]}
    if isinstance(value, tuple):
        return {"~tuple": [_plain(v) for v in value]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("dict keys of case data must be strings")
        return {"~dict": {k: _plain(v) for k, v in value.items()}}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if np.isfinite(number) else {"~float": repr(number)}
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{type(value).__name__} cannot be fixed case data")


def _value(plain: Any) -> Any:
    if isinstance(plain, list):
        return [_value(v) for v in plain]
    if isinstance(plain, dict):
        if "~array" in plain:
            dtype, shape, data = plain["~array"]
            return np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype)).reshape(shape).copy()
        if "~tuple" in plain:
            return tuple(_value(v) for v in plain["~tuple"])
        if "~dict" in plain:
            return {k: _value(v) for k, v in plain["~dict"].items()}
        if "~float" in plain:
            return float(plain["~float"])
        raise ValueError("unknown entry in fixed case data")
    return plain


def encode_cases(cases: list[Case], width: int = 76) -> str:
    """The cases as compact text (compressed JSON in base64, lines of ``width``), exact to the last bit."""
    document = {"format": _FORMAT,
                "cases": [{"kind": c.kind, "params": c.params, "data": {k: _plain(v) for k, v in c._values.items()}}
                          for c in cases]}
    packed = base64.b64encode(zlib.compress(json.dumps(document, separators=(",", ":")).encode("utf-8"), 9))
    return "\n".join(textwrap.wrap(packed.decode("ascii"), width))


def decode_cases(text: str) -> list[Case]:
    """The cases :func:`encode_cases` wrote."""
    if not isinstance(text, str):
        raise TypeError(f"cases must be the text fixed_cases() wrote, not {type(text).__name__}")
    try:
        document = json.loads(zlib.decompress(base64.b64decode("".join(text.split()), validate=True)).decode("utf-8"))
    except (ValueError, zlib.error) as exc:     # binascii.Error and JSONDecodeError are ValueErrors
        raise ValueError("cases is not the text fixed_cases() wrote (it may have been cut or edited)") from exc
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        raise ValueError("cases is not the text fixed_cases() wrote (unknown format)")
    return [Case(c["kind"], c["params"], **{k: _value(v) for k, v in c["data"].items()}) for c in document["cases"]]


def fixed_cases(check: Callable, secret: str, *, salt: str | None = None) -> str:
    """The graded cases of the checker ``check`` for ``secret`` (and ``salt``) as text for a hidden test.

    Run it on the instructor's machine; the text holds the cases, not the secret, and
    :func:`grade_fixed_cases` runs the checker on them. None of the cases equals a public case.
    """
    spec = getattr(check, "spec", None)
    if spec is None or not getattr(check, "is_exercise_checker", False):
        raise TypeError("check must be one of the exercise checkers (dpcp_tutorial.course.exercises.check_*)")
    if not isinstance(secret, str) or not secret:
        raise ValueError("secret must be a non-empty string (the instructor's secret)")
    return encode_cases(spec.cases(secret, salt=salt))


def grade_fixed_cases(check: Callable, *functions: Callable, cases: str,
                      time_limit: float = DEFAULT_TIME_LIMIT) -> ExerciseResult:
    """Run the checker ``check`` (e.g. ``check_conformal_quantile``) on fixed graded cases (:func:`encode_cases`).

    The result is graded (feedback without values or parameters) and counts the cases passed, as
    ``check(..., secret=...)`` does; the package's own implementation is refused as there.
    """
    spec = getattr(check, "spec", None)
    if spec is None or not getattr(check, "is_exercise_checker", False):
        raise TypeError("check must be one of the exercise checkers (dpcp_tutorial.course.exercises.check_*)")
    if len(functions) != len(spec.functions):
        raise TypeError(f"{spec.name} takes {len(spec.functions)} function(s), got {len(functions)}")
    fixed = decode_cases(cases)
    from ._common import package_origin

    result = ExerciseResult(spec.name, graded=True, cases_total=len(fixed))
    for given, wanted in zip(functions, spec.functions):
        if not callable(given):
            result.fail(f"{wanted}: pass your function itself")
        elif package_origin(given):
            result.fail(f"{wanted}: you passed the package's own implementation; the exercise asks for yours")
            result.not_graded = "uses the package's implementation"
    if result.feedback:
        return result
    executor = LocalExecutor(dict(zip(spec.functions, functions)), time_limit)
    return spec.run(executor, time_limit=time_limit, fixed_cases=fixed)
