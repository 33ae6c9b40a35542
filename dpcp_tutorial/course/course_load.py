"""The weekly load of the course plan in ``book/for_instructors.md``, recomputed from the book.

Usage::

    python -m dpcp_tutorial.course.course_load            # print each module's weeks with the computed hours
    python -m dpcp_tutorial.course.course_load --write    # also write the computed hours into the page's tables

Basis (stated on the page): independent work only, class time not counted.

* Reading: the words of a chapter as the student edition shows it (prose and visible code; without the
  solutions and without the exercises' statements, which count as exercise time) at :data:`WORDS_PER_MINUTE`.
* Exercises: :data:`HOURS_PER_STAR` hours by the difficulty an exercise states (★, ★★, ★★★), the project
  :data:`PROJECT_HOURS`; a problem set's (or the project's) hours are spread evenly over the weeks whose
  *Work on* cell names it.

``tests/test_course_plan.py`` checks the page's numbers against these, that no week goes over
:data:`WEEKLY_LIMIT` hours, and that no problem set is due in the week its ★★★ exercise's chapter is taught.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import make_nbgrader, student_edition

# the repository (the tool reads the book's sources: it runs from a clone, as `make` does)
ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "for_instructors.md"

WORDS_PER_MINUTE = 100    # half the 200 words per minute of ordinary reading: formulas, and code to run
HOURS_PER_STAR = {1: 0.5, 2: 1.5, 3: 4.0}
PROJECT_HOURS = 12.0
WEEKLY_LIMIT = 12.0

STARS = re.compile(r"\((?:By hand|Conceptual|Derivation|Coding|Project)[^)]*?(★+)\)")
CHAPTERS_IN = re.compile(r"(\d+)(?:\s*[–-]\s*(\d+))?")
WEEK_ROW = re.compile(r"^\|\s*(?P<week>\d+)\s*\|(?P<cells>.*)\|\s*$")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def chapter_path(number: int) -> Path:
    paths = sorted((ROOT / "book").glob(f"{number:02d}_*.ipynb"))
    if not paths:
        raise ValueError(f"no chapter {number} in book/")
    return paths[0]


def reading_hours(number: int) -> float:
    """Hours to read chapter ``number`` as the student edition shows it, at :data:`WORDS_PER_MINUTE`."""
    student, exercise = student_edition, make_nbgrader.EXERCISE
    notebook = student.strip_notebook(json.loads(chapter_path(number).read_text(encoding="utf-8")))
    words = 0
    for cell in notebook["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "markdown":
            words += len(exercise.sub("", _source(cell)).split())
        elif "remove-cell" not in tags and "remove-input" not in tags:
            words += len(_source(cell).split())
    return words / WORDS_PER_MINUTE / 60


def exercise_stars() -> dict[str, tuple[int, int]]:
    """``label -> (chapter, stars)`` for every exercise of every chapter."""
    generator = make_nbgrader
    out = {}
    pages = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    pages += [ROOT / "book" / page for page in generator.REFERENCE_PAGES]
    for path in pages:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for match in generator.EXERCISE.finditer(_source(cell)):
                label = match.group("label")
                stars = STARS.search(match.group("body"))
                if stars is None:
                    raise ValueError(f"{label} states no difficulty (★)")
                # an exercise on a reference page belongs to the chapter its label names (ex-03-loss: 3)
                out[label] = (int(label.split("-")[1]), len(stars.group(1)))
    return out


def set_hours(six_weeks: bool) -> dict[str, float]:
    """Hours of each problem set of the page (``ps1``, ...; ``project``)."""
    stars = exercise_stars()
    hours = {name: sum(HOURS_PER_STAR[stars[label][1]] for label in labels)
             for name, _, labels in make_nbgrader.problem_sets(six_weeks)}
    hours["project"] = PROJECT_HOURS
    return hours


def three_star_chapters(six_weeks: bool) -> dict[str, set[int]]:
    stars = exercise_stars()
    return {name: {stars[label][0] for label in labels if stars[label][1] == 3}
            for name, _, labels in make_nbgrader.problem_sets(six_weeks)}


def _chapters(cell: str) -> list[int]:
    out = []
    for low, high in CHAPTERS_IN.findall(cell):
        out += list(range(int(low), int(high or low) + 1))
    return out


def _sets(cell: str) -> list[str]:
    found = [f"ps{n}" for n in re.findall(r"PS\s*(\d+)", cell)]
    return found + (["project"] if "project" in cell.lower() else [])


@dataclass
class Week:
    number: int
    taught: list[int]
    read: list[int]
    work: list[str]
    due: list[str]
    stated: tuple[float, float, float]          # reading, exercises, total as the page states them
    reading: float = 0.0
    exercises: float = 0.0
    shares: dict = field(default_factory=dict)

    @property
    def total(self) -> float:
        return self.reading + self.exercises


def modules() -> dict[str, list[Week]]:
    """The page's module tables (``### ... module`` headings followed by a table of weeks), with computed hours."""
    text = PAGE.read_text(encoding="utf-8")
    out: dict[str, list[Week]] = {}
    for heading in re.finditer(r"^### (?P<title>[^\n]*module[^\n]*)\n(?P<body>.*?)(?=^#|\Z)", text, re.S | re.M):
        weeks = []
        for line in heading.group("body").splitlines():
            row = WEEK_ROW.match(line)
            if not row:
                continue
            cells = [c.strip() for c in row.group("cells").split("|")]
            if len(cells) != 7:
                raise ValueError(f"a week row has 8 columns: {line}")
            taught, read, work, due, *numbers = cells
            stated = tuple(float(re.sub(r"[^\d.]", "", n) or "nan") for n in numbers)
            weeks.append(Week(int(row.group("week")), _chapters(taught), _chapters(read), _sets(work), _sets(due),
                              stated))
        if weeks:
            out[heading.group("title").strip()] = weeks
    for title, weeks in out.items():
        six = "six" in title.lower()
        hours = set_hours(six)
        spread = {name: sum(name in w.work for w in weeks) for name in hours}
        for week in weeks:
            week.reading = sum(reading_hours(c) for c in week.taught + week.read)
            week.shares = {name: hours[name] / spread[name] for name in week.work}
            week.exercises = sum(week.shares.values())
    return out


def write_page() -> None:
    """Write the computed hours into the last three columns of every week row of the page's module tables."""
    computed = modules()
    lines, title, index = PAGE.read_text(encoding="utf-8").splitlines(keepends=True), None, 0
    for i, line in enumerate(lines):
        heading = re.match(r"^### (.*module.*)$", line.rstrip("\n"))
        if heading or line.startswith("#"):
            title, index = (heading.group(1).strip() if heading else None), 0
            continue
        row = WEEK_ROW.match(line.rstrip("\n"))
        if row and title in computed:
            week = computed[title][index]
            index += 1
            cells = line.rstrip("\n").split("|")
            cells[-4:-1] = [f" {week.reading:.1f} h ", f" {week.exercises:.1f} h ", f" {week.total:.1f} h "]
            lines[i] = "|".join(cells) + "\n"
    PAGE.write_text("".join(lines), encoding="utf-8")


def main(argv: list[str]) -> int:
    if "--write" in argv:
        write_page()
    for title, weeks in modules().items():
        print(f"{title}:")
        for w in weeks:
            print(f"  week {w.number}: reading {w.reading:.1f} h, exercises {w.exercises:.1f} h "
                  f"({', '.join(f'{k} {v:.1f}' for k, v in w.shares.items())}), total {w.total:.1f} h; "
                  f"stated {w.stated}")
        print(f"  most in one week: {max(w.total for w in weeks):.1f} h (limit {WEEKLY_LIMIT:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
