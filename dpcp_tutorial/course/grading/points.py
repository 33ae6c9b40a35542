"""Points of the automatically graded part of every coding exercise, collected from the checkers.

The rubric of the instructors' page gives each coding exercise 10 points: 6 for the checker, 2 for readable
code and 2 for clear errors on bad public input and no data-dependent output (marked by hand, with the first
lines each submission printed in its feedback file). The two assembly exercises, which build a whole private
release, are worth twice as much (12 + 4 + 4). Each checker declares its exercise's automatic points
(``@checker(..., points=12)``; 6 when it says nothing), so that an exercise's label, functions, cases and
points live in one place; :data:`POINTS` is the table the grader, the nbgrader course and the tests read.
The grader awards ``points * cases_passed / cases_total`` for a submission whose function(s) ran, and 0 for
one that is not submitted or not graded. An exercise with several checkers (``ex-04-code``) or several
functions (``ex-04-assemble``) is one row and one entry.
"""

from __future__ import annotations


def exercise_points() -> dict[str, float]:
    """Exercise label -> automatic points, in chapter order, from the checkers (loads every chapter's
    checkers); raises ``ValueError`` if two checkers of one exercise declare different points."""
    from .. import exercises

    points: dict[str, float] = {}
    for name, check in exercises.all_checkers().items():
        if points.setdefault(check.exercise, check.points) != check.points:
            raise ValueError(f"the checkers of {check.exercise} declare different points ({name}: {check.points:g}, "
                             f"before: {points[check.exercise]:g})")
    return points


def __getattr__(name):
    # POINTS: the table, computed from the checkers when first read (importing this module loads no checker)
    if name == "POINTS":
        globals()["POINTS"] = value = exercise_points()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
