"""The exercises the grader knows: one entry per exercise label, with its functions, checkers and points."""

from __future__ import annotations

from dataclasses import dataclass

from .points import exercise_points


def checkers() -> dict:
    """Every exercise checker, keyed by checker name, in chapter order."""
    from .. import exercises

    return exercises.all_checkers()


def exercise_table() -> list[tuple[str, str, str, str]]:
    """``(chapter module, exercise label, function name(s), checker name)`` for every checker."""
    return [(check.__module__.rsplit(".", 1)[-1], check.exercise, check.function, name)
            for name, check in checkers().items()]


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: its label, chapter, functions, checkers and points."""

    label: str
    chapter: str
    functions: tuple[str, ...]
    checkers: tuple[str, ...]
    max_points: float
    implements: tuple[str, ...]

    @property
    def function(self) -> str:
        return " + ".join(self.functions)


def grading_table() -> list[Exercise]:
    """One entry per exercise label (an exercise with several checkers or functions is one entry)."""
    groups: dict[str, list] = {}
    for name, check in checkers().items():
        groups.setdefault(check.exercise, []).append((name, check))
    points = exercise_points()
    table = []
    for label, members in groups.items():
        functions = tuple(f for _, check in members for f in check.functions)
        implements = tuple(sorted({i for _, check in members for i in check.implements}))
        table.append(Exercise(label, members[0][1].__module__.rsplit(".", 1)[-1], functions,
                              tuple(name for name, _ in members), points[label], implements))
    return table


def select(selection: str | None) -> list[Exercise]:
    """Exercises matching a comma-separated list of chapters (``ch01``/``1``), labels, functions or checkers."""
    table = grading_table()
    if not selection:
        return table
    chosen: list[Exercise] = []
    for token in (t.strip() for t in selection.split(",")):
        if not token:
            continue
        chapter = f"ch{int(token):02d}" if token.isdigit() else token
        matches = [e for e in table if token == e.label or token in e.functions or token in e.checkers
                   or chapter == e.chapter]
        if not matches:
            raise ValueError(f"--exercises: {token!r} matches no exercise; run with --list to see the exercises")
        chosen += [m for m in matches if m not in chosen]
    return chosen
