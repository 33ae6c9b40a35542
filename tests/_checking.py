"""Helpers for the checker tests: run selected cases of a checker quickly, in this process."""

from __future__ import annotations

from dpcp_tutorial.course.exercises._common import LocalExecutor


def run(check, *functions, kinds=None, secret=None, time_limit=10.0):
    """Run the cases of ``check`` whose kind starts with one of ``kinds`` (all when None); return the result."""
    executor = LocalExecutor(dict(zip(check.functions, functions)), time_limit)
    only = None if kinds is None else (lambda case: case.kind.startswith(tuple(kinds)))
    return check.spec.run(executor, time_limit=time_limit, secret=secret, only=only)


def text(result) -> str:
    return " ".join(result.feedback)
