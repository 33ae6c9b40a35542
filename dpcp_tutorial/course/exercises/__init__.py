"""Checkers for the coding exercises at the end of each chapter.

Each ``check_<name>(fn, *, time_limit=10.0, quiet=False, secret=None)`` runs a
reader's function on every one of its cases and prints specific feedback; it
returns an :class:`ExerciseResult` that counts the cases passed and is truthy
exactly when every case passes. Each call of ``fn`` may take ``time_limit``
seconds; ``None``, exceptions, wrong types, shapes or NaN, and calls that run
too long fail a case with a message (the protocol in ``_common.py``). An
exercise with several functions takes one per function. Usage in a chapter::

    from dpcp_tutorial.course.exercises import check_conformal_quantile
    assert check_conformal_quantile(my_quantile)

``python -m dpcp_tutorial.course.grading`` runs every checker over a folder of
submissions (:mod:`dpcp_tutorial.course.grading`).

The module is imported lazily: a checker's chapter module is loaded when the
checker is first used (so the grader's sandbox, which needs only
``_runtime``, loads none of them).
"""

import importlib
import re
import sys
from pathlib import Path

#: the public names that are not checkers -> the module that defines each
_HELPERS = {"ExerciseResult": "_common", "fixed_cases": "_fixed", "grade_fixed_cases": "_fixed"}


def _checker_modules() -> dict:
    """Each checker's name -> the chapter module that defines it, read from the chapter modules' sources (a
    checker is a module-level ``def check_...`` of ``chNN.py``), so that no second list of them is kept and no
    chapter module is imported to find them."""
    found = {}
    for path in sorted(Path(__file__).parent.glob("ch[0-9][0-9].py")):
        for name in re.findall(r"^def (check_\w+)\(", path.read_text(encoding="utf-8"), re.M):
            found[name] = path.stem
    return found


#: public name -> the module that defines it
_EXPORTS = {**_HELPERS, **_checker_modules()}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(_EXPORTS)


def all_checkers() -> dict:
    """Every checker, by name, in chapter order (loads every chapter module)."""
    module = sys.modules[__name__]
    found = {name: getattr(module, name) for name in _EXPORTS if name.startswith("check_")}
    return dict(sorted(found.items(), key=lambda item: (_EXPORTS[item[0]], item[0])))
