"""Reading submissions: the folder's entries, one :class:`Submission` per student; no student code runs here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import _source


@dataclass
class Submission:
    """A submission as read by the grader: its statements and what went wrong reading it."""

    student: str
    files: list[Path]
    units: list = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    refusal: str = ""                # non-empty: nothing of it is graded (duplicate, unreadable)
    folder: Path | None = None       # copied into the private scratch folder
    defined: set = field(default_factory=set)


def load_submission(paths: list[Path], student: str = "submission") -> Submission:
    """Read a submission's files into statements (:class:`Submission`); nothing of it is executed."""
    paths = [Path(p) for p in paths]
    cells, problems = _source.read_files(paths, student)
    units, more = _source.units_of(cells, student)
    submission = Submission(student, paths, units, problems + more)
    submission.defined = set().union(*(u.defines for u in units)) if units else set()
    if not units and problems:
        submission.refusal = "; ".join(problems)
    return submission


def _entries(folder: Path) -> list[tuple[str, list[Path], Path]]:
    """``(student, files, file or folder)`` for every entry of ``folder`` that holds a submission."""
    out = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix in _source.SUFFIXES:
            out.append((entry.stem, [entry], entry))
        elif entry.is_dir():
            files = sorted(p for p in entry.rglob("*") if p.suffix in _source.SUFFIXES and p.is_file()
                           and ".ipynb_checkpoints" not in p.parts and not any(part.startswith(".") for part in
                                                                              p.relative_to(entry).parts))
            if files:
                out.append((entry.name, files, entry))
    return out


def find_submissions(folder: Path) -> dict[str, list[Path]]:
    """Map student -> files (see the module docstring); a student with two entries gets all their files."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder of submissions")
    found: dict[str, list[Path]] = {}
    for student, files, _ in _entries(folder):
        found.setdefault(student, []).extend(files)
    return found


def read_all(folder: Path) -> list[Submission]:
    """Every submission of ``folder``, read into memory before any student code runs."""
    entries = _entries(folder)
    count: dict[str, int] = {}
    for student, _, _ in entries:
        count[student] = count.get(student, 0) + 1
    out = []
    for student in sorted(count):
        mine = [(files, where) for s, files, where in entries if s == student]
        if len(mine) > 1:
            names = ", ".join(sorted(where.name for _, where in mine))
            out.append(Submission(student, [f for files, _ in mine for f in files],
                                  refusal=f"two submissions for the student {student} ({names}); hand in one"))
            continue
        files, where = mine[0]
        submission = load_submission(files, student)
        submission.folder = where if where.is_dir() else None
        out.append(submission)
    return out

