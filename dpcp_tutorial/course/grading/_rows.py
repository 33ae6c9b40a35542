"""The grader's rows and the files written from them: the grades CSV, the totals CSV and the feedback files."""

from __future__ import annotations

import csv
import dataclasses
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import _isolation
from ._table import Exercise

STATUSES = ("passed", "failed", "not submitted", "not graded", "error")
COLUMNS = ["student", "exercise", "function", "passed", "status", "cases_passed", "cases_total", "points",
           "max_points", "feedback", "isolation"]


@dataclass(frozen=True)
class Row:
    """One line of the grades CSV (the first five fields are required, the others have defaults)."""

    student: str
    exercise: str
    function: str
    passed: bool
    feedback: str
    status: str = "failed"
    cases_passed: int = 0
    cases_total: int = 0
    points: float = 0.0
    max_points: float = 0.0
    isolation: str = ""


def make_row(student: str, exercise: Exercise, status: str, feedback: list[str], passed_cases: int = 0,
             total_cases: int = 0) -> Row:
    """The row of one exercise: ``max_points * passed_cases / total_cases`` points when its functions ran
    (``passed`` or ``failed``), 0 otherwise; the feedback lines joined by `` | ``."""
    points = 0.0
    if status in ("passed", "failed") and total_cases:
        points = round(exercise.max_points * passed_cases / total_cases, 2)
    return Row(student, exercise.label, exercise.function, status == "passed", " | ".join(feedback), status,
               passed_cases, total_cases, points, exercise.max_points)


def labelled(rows: list[Row], sandboxed: bool) -> list[Row]:
    """The rows with the isolation they were graded under (the ``isolation`` column)."""
    label = _isolation.label(sandboxed)
    return [dataclasses.replace(row, isolation=label) for row in rows]


def _safe_cell(text: str) -> str:
    """Defuse spreadsheet formulas in text that comes from submissions."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _write_atomically(path: Path, write) -> None:
    """Write ``path`` through a temporary file in its folder and an atomic rename (a planted symlink is replaced,
    never followed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", newline="", encoding="utf-8") as out:
            write(out)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def default_paths(out: Path) -> tuple[Path, Path]:
    """The totals CSV and the feedback folder next to the grades CSV ``out``."""
    stem = out.with_suffix("") if out.suffix else out
    return Path(f"{stem}_totals.csv"), Path(f"{stem}_feedback")


def _safe_name(student: str) -> str:
    """A file name for a student's feedback (letters, digits, ``-_.``; never hidden, never empty)."""
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in student).strip(".")
    return keep or "student"


def write_outputs(rows: list[Row], out: Path, totals: Path, feedback_dir: Path, stdout: dict[str, list[str]],
                  secret_used: bool) -> None:
    """The grades CSV, the totals CSV and one feedback file per student."""
    def grades(handle):
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([_safe_cell(row.student), row.exercise, row.function, int(row.passed), row.status,
                             row.cases_passed, row.cases_total, f"{row.points:g}", f"{row.max_points:g}",
                             _safe_cell(row.feedback), row.isolation])

    _write_atomically(out, grades)
    students = sorted({row.student for row in rows})

    def total(handle):
        writer = csv.writer(handle)
        writer.writerow(["student", "points", "max_points"])
        for student in students:
            mine = [row for row in rows if row.student == student]
            writer.writerow([_safe_cell(student), f"{round(sum(r.points for r in mine), 2):g}",
                             f"{sum(r.max_points for r in mine):g}"])

    _write_atomically(totals, total)
    feedback_dir = Path(feedback_dir)
    feedback_dir.mkdir(parents=True, exist_ok=True)
    for student in students:
        mine = [row for row in rows if row.student == student]

        def text(handle, mine=mine, student=student):
            handle.write(f"Feedback for {student}\n")
            handle.write(("Graded with the instructor's cases.\n" if secret_used else
                          "Graded with the public cases (no grading secret was given).\n"))
            handle.write(f"Total: {round(sum(r.points for r in mine), 2):g} of {sum(r.max_points for r in mine):g} "
                         "automatic points\n\n")
            for row in mine:
                handle.write(f"{row.exercise} ({row.function}): {row.status}, {row.cases_passed} of "
                             f"{row.cases_total} cases, {row.points:g} of {row.max_points:g} points\n")
                for line in row.feedback.split(" | ") if row.feedback else []:
                    handle.write(f"  - {line}\n")
            if secret_used:
                handle.write("\nWhat your code printed while it was graded is not kept: it would show the "
                             "instructor's cases. Run the exercises' checks in your notebook to see your output.\n")
                return
            lines = stdout.get(student, [])
            handle.write("\nThe first lines your code printed while it was checked"
                         f" ({len(lines)} shown):\n")
            for line in lines:
                handle.write(f"  | {line}\n")

        _write_atomically(feedback_dir / f"{_safe_name(student)}.txt", text)

