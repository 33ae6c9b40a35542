"""Generate an nbgrader course from the book's chapter notebooks (``make nbgrader``).

Usage::

    python -m dpcp_tutorial.course.make_nbgrader [--out _build_nbgrader] [--secret-file FILE] [--sets ps1,ps3]
                                                 [--six-weeks] [--no-release]

One assignment per problem set of ``book/for_instructors.md`` (``ps1``, ``ps2``, ... and ``advanced``), holding
that set's coding exercises and nothing else (so that the maximum score is the set's): with ``--six-weeks`` the
items marked *(8 weeks)* are left out. For each set it writes ``<out>/course/source/<set>/<set>.ipynb``, an
nbgrader source notebook read from the chapters *at generation time* (the exercises are found by their labels,
so rewording a chapter or the course plan changes the course the next time it is generated):

* a read-only setup cell with the imports the answers need (only the names they read, so that it never hands
  out the package's implementation of an exercise);
* per coding exercise: the exercise's text (from the chapter's ``{exercise}`` block, its MyST references
  written out as text: "the section *Reproducing the sources* of chapter 4", "Theorem *...* (chapter 15)");
  an answer cell with every function the exercise asks for (several for the assembly exercises), each body a
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` region holding the instructor edition's solution (the
  chapter's cells tagged ``solution``; ``tests/exercise_solutions.py`` for an exercise whose chapter does not
  define its functions yet), the solution's helper functions nested into the function that uses them, so that
  the student version has one stub per function; a cell that runs the checker(s) on the public cases (what a
  student sees in the book); and a locked autograder test cell worth the exercise's points
  (the checker's ``points``, :data:`dpcp_tutorial.course.grading.points.POINTS`) whose body is a
  ``### BEGIN HIDDEN TESTS`` region holding the
  graded cases **as fixed data**, drawn now from the instructor's secret (``--secret-file`` or the
  environment variable ``DPCP_GRADING_SECRET`` of the machine that runs this tool; none equals a public case)
  and run with :func:`dpcp_tutorial.course.exercises.grade_fixed_cases`; it returns the points earned,
  ``points * cases passed / cases``, which nbgrader records as partial credit. The secret itself is never
  written anywhere and is not needed by ``nbgrader autograde``: nothing a student's code can read holds it.

It also writes ``<out>/course/nbgrader_config.py`` and, unless ``--no-release``, runs ``nbgrader
generate_assignment`` once for all the assignments written (the student versions, without the hidden tests,
land in ``<out>/course/release``). Then, in ``<out>/course``::

    nbgrader autograde ps1 --create         # after copying submissions to submitted/<student>/ps1/ps1.ipynb
    nbgrader export                         # grades.csv

all offline. nbgrader comes from PyPI with the package's ``[course]`` extra. nbgrader runs the students' code
and the hidden tests in one kernel, so a submission can read the hidden cases while it is graded (not the
secret): use ``python -m dpcp_tutorial.course.grading`` for marks that count (``book/grading.md``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# the repository (the tool reads the book's sources: it runs from a clone, as `make` does)
ROOT = Path(__file__).resolve().parents[2]

from .grading import _source, grading_table

EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n:label: *(?P<label>[\w-]+)[ \t]*\n"
                      r"(?P<options>(?::[\w-]+:[^\n]*\n)*)(?P<body>.*?)^\1[ \t]*$", re.S | re.M)
ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<text>[^`<]*?)\s*(?:<(?P<target>[^`>]*)>)?`")
SETUP_STATEMENTS = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)
HEADING_LABEL = re.compile(r"^\((?P<label>[\w-]+)\)=[ \t]*\n+#+ +(?P<title>.+?)[ \t]*$", re.M)
PRF_LABEL = re.compile(r"^(`{3,}|:{3,})\{prf:(?P<kind>\w+)\}(?P<title>[^\n]*)\n(?:(?::[\w-]+:[^\n]*\n)*?)"
                       r":label: *(?P<label>[\w-]+)", re.M)


def _source_of(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _where(stem: str) -> str:
    return f"chapter {int(stem[:2])}" if re.match(r"\d\d_", stem) else f"the page *{stem}*"


def references() -> dict[tuple[str, str], str]:
    """How a MyST reference reads in a plain notebook: ``(role, target) -> text``, from every page of the book.

    A section label reads as its heading and chapter, a theorem-like box as its kind and title, an exercise as
    its number, a document as its title (Jupyter renders none of ``{ref}``, ``{prf:ref}`` and ``{doc}``).
    """
    out: dict[tuple[str, str], str] = {}
    pages = sorted((ROOT / "book").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.md"))
    for path in pages:
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            text = "\n\n".join(_source_of(c) for c in cells if c["cell_type"] == "markdown")
        else:
            text = path.read_text(encoding="utf-8")
        where = _where(path.stem)
        title = re.search(r"^# +(.+?)[ \t]*$", text, re.M)
        if title:
            out[("doc", path.stem)] = (f"chapter {int(path.stem[:2])} (*{title.group(1)}*)"
                                       if re.match(r"\d\d_", path.stem) else f"*{title.group(1)}*")
        for match in HEADING_LABEL.finditer(text):
            out[("ref", match.group("label"))] = f"the section *{match.group('title')}* of {where}"
        for match in PRF_LABEL.finditer(text):
            name = match.group("kind").capitalize()
            heading = match.group("title").strip()
            out[("prf:ref", match.group("label"))] = f"{name} *{heading}* ({where})" if heading else \
                f"the {name.lower()} {match.group('label')} ({where})"
        if re.match(r"\d\d_", path.stem):
            for number, match in enumerate(EXERCISE.finditer(text), 1):
                out[("ref", match.group("label"))] = f"exercise {int(path.stem[:2])}.{number}"
    return out


def _markdown(text: str, refs: dict | None = None) -> str:
    """MyST roles as plain text: an explicit text is kept, a bare reference reads as :func:`references` says."""
    refs = refs or {}

    def plain(match: re.Match) -> str:
        if match.group("target"):
            return match.group("text")
        target = match.group("text")
        return refs.get((match.group("role"), target), refs.get(("ref", target), target))

    return ROLE.sub(plain, text).strip()


def exercise_texts(notebook: dict, refs: dict | None = None) -> dict[str, str]:
    out = {}
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for match in EXERCISE.finditer(_source_of(cell)):
            out[match.group("label")] = _markdown(match.group("body"), refs)
    return out


def _units(notebook: dict, chapter: str) -> list:
    cells = [_source.Cell(f"{chapter}, cell {i + 1}", _source_of(c), frozenset(c.get("metadata", {}).get("tags", [])))
             for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code"]
    return _source.units_of(cells, chapter)[0]


def _solution_units(units: list, functions) -> list:
    """The closure of the functions when they are defined in solution cells; [] otherwise."""
    defining = [u for u in units if set(functions) & u.defines]
    if not defining or not all("solution" in u.tags for u in defining):
        return []
    return _source.needed_units(units, functions)


def _fallback_units(functions) -> list:
    text = (ROOT / "tests" / "exercise_solutions.py").read_text(encoding="utf-8")
    units, _ = _source.units_of([_source.Cell("exercise_solutions.py", text, frozenset({"solution"}))], "solutions")
    return _source.needed_units(units, functions)


def _setup_source(unit, needed: set[str]) -> str | None:
    """A setup statement for the notebook: an import keeps only the names the answers read (so that the setup
    never hands the student the package's implementation of an exercise); ``None`` when nothing is left."""
    node = ast.parse(unit.source).body[0]
    if not isinstance(node, (ast.Import, ast.ImportFrom)):
        return unit.source
    kept = [a for a in node.names if (a.asname or a.name.split(".")[0]) in needed or a.name == "*"]
    if not kept:
        return None
    if len(kept) == len(node.names):
        return unit.source
    node.names = kept
    return ast.unparse(node)


def _with_regions(unit, functions, helpers: tuple = ()) -> str:
    """A function definition whose body is one solution region (its signature and docstring stay); ``helpers``
    (the solution's own helper functions that only this function uses) go into the region, nested, so that the
    student version holds one stub per function the exercise asks for and no stub that raises when the cell
    runs."""
    tree = ast.parse(unit.source)
    node = tree.body[0]
    lines = unit.source.splitlines()
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name not in functions:
        return "### BEGIN SOLUTION\n" + unit.source + "\n### END SOLUTION"
    body = node.body
    first = body[0]
    keep_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) and \
        isinstance(first.value.value, str) and len(body) > 1
    start = (body[1] if keep_doc else first).lineno - 1
    indent = re.match(r"\s*", lines[start]).group(0)
    head, rest = lines[:start], lines[start:]
    nested = []
    for helper in helpers:
        nested += [(indent + line) if line.strip() else "" for line in helper.source.splitlines()] + [""]
    return "\n".join(head + [indent + "### BEGIN SOLUTION"] + nested + rest + [indent + "### END SOLUTION"])


def _answer_code(code: list, functions) -> str:
    """The answer cell: every function the exercise asks for, each with its region; a helper function of the
    solution is nested into the one function that uses it (it stays a region of its own when several do)."""
    asked = [u for u in code if set(functions) & u.defines]
    helpers = [u for u in code if u not in asked]
    helper_names = {name for u in helpers for name in u.defines}

    def closure(unit) -> set:
        seen, todo = set(), set(unit.reads) & helper_names
        while todo:
            name = todo.pop()
            seen.add(name)
            todo |= {r for h in helpers if name in h.defines for r in h.reads & helper_names} - seen
        return seen

    users = {id(h): [a for a in asked if h.defines & closure(a)] for h in helpers}
    nested = {id(a): tuple(h for h in helpers if users[id(h)] == [a] and
                           isinstance(ast.parse(h.source).body[0], (ast.FunctionDef, ast.AsyncFunctionDef)))
              for a in asked}
    placed = {id(h) for hs in nested.values() for h in hs}
    parts = [_with_regions(u, functions) for u in helpers if id(u) not in placed]
    parts += [_with_regions(u, functions, nested[id(u)]) for u in asked]
    return "\n\n\n".join(parts)


def _cell(kind: str, source: str, nbgrader: dict | None = None) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if nbgrader is not None:
        cell["metadata"]["nbgrader"] = dict(nbgrader, schema_version=3)
    return cell


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


#: the computed pages beside the chapters (reference pages, section pages such as the case study): a chapter's
#: exercise on a source variant or on a worked example lives there, under the chapter's label ``ex-NN-...``
REFERENCE_PAGES = tuple(sorted(p.name for p in (ROOT / "book").glob("[a-z]*.ipynb")))


class _Chapter:
    """What the generator reads from one chapter: its title, its exercises' texts and its code units."""

    def __init__(self, chapter: str, refs: dict):
        number = int(chapter[2:])
        paths = sorted((ROOT / "book").glob(f"{number:02d}_*.ipynb"))
        self.path = paths[0] if paths else None
        self.texts, self.units = {}, []
        if self.path is not None:
            notebook = json.loads(self.path.read_text(encoding="utf-8"))
            self.texts = exercise_texts(notebook, refs)
            self.units = _units(notebook, self.path.name)
        prefix = f"ex-{number:02d}-"
        for page in REFERENCE_PAGES:   # the exercises on a chapter's source variants live on its reference page
            reference = json.loads((ROOT / "book" / page).read_text(encoding="utf-8"))
            found = {label: text for label, text in exercise_texts(reference, refs).items()
                     if label.startswith(prefix) and label not in self.texts}
            if found:
                self.texts = {**found, **self.texts}
                self.units = self.units + _units(reference, page)


def hidden_test(exercise, checks, secret: str) -> str:
    """The hidden-test region of one exercise: its graded cases as fixed data drawn now from ``secret`` (never
    the secret itself), the checkers run on them, and the points earned as the cell's value."""
    from dpcp_tutorial.course.exercises import fixed_cases

    lines = ["### BEGIN HIDDEN TESTS",
             "# graded cases drawn by `make nbgrader` from the instructor's secret (fixed data)",
             "from dpcp_tutorial.course.exercises import grade_fixed_cases, " + ", ".join(c.__name__ for c in checks)]
    calls = []
    for index, check in enumerate(checks):
        data = fixed_cases(check, secret)
        lines.append(f"_cases_{index} = (")
        lines += [f'    "{line}"' for line in data.splitlines()]
        lines.append(")")
        calls.append(f"grade_fixed_cases({check.__name__}, {', '.join(check.functions)}, cases=_cases_{index})")
    lines.append("_results = [" + ", ".join(calls) + "]")
    lines += ["for _line in (line for r in _results for line in r.feedback):",
              "    print(_line)",
              f"round({exercise.max_points:g} * sum(r.cases_passed for r in _results if not r.not_graded)"
              " / max(1, sum(r.cases_total for r in _results)), 2)",
              "### END HIDDEN TESTS"]
    return "\n".join(lines)


def assignment_notebook(name: str, title: str, exercises: list, notes: list[str], secret: str,
                        chapters: dict | None = None) -> dict | None:
    """The nbgrader source notebook of one assignment (``name`` e.g. ``"ps1"``) holding ``exercises``."""
    from dpcp_tutorial import exercises as checkers_module

    refs = references()
    chapters = {} if chapters is None else chapters
    setup, answers = [], []
    for exercise in exercises:
        if exercise.chapter not in chapters:
            chapters[exercise.chapter] = _Chapter(exercise.chapter, refs)
        chapter = chapters[exercise.chapter]
        if exercise.label not in chapter.texts:
            notes.append(f"{name}: {exercise.label} is not in its chapter yet; left out")
            continue
        chosen = _solution_units(chapter.units, exercise.functions)
        if not chosen:
            chosen = _fallback_units(exercise.functions)
            notes.append(f"{name}: {exercise.label}'s solution taken from tests/exercise_solutions.py")
        code = [u for u in chosen if not (isinstance(ast.parse(u.source).body[0], SETUP_STATEMENTS))]
        needed = set().union(*(u.reads for u in chosen if not isinstance(ast.parse(u.source).body[0],
                                                                         (ast.Import, ast.ImportFrom))))
        for unit in chosen:
            statement = None if unit in code else _setup_source(unit, needed)
            if statement is not None and statement not in setup:
                setup.append(statement)
        answers.append((exercise, chapter.texts[exercise.label], code))
    if not answers:
        return None
    cells = [_cell("markdown", f"# {title} — graded exercises\n\nWrite each function in its answer cell. The "
                               "cell after it runs the book's checker on the public cases; the grader uses other "
                               "cases of the same kinds.")]
    cells.append(_cell("code", "\n".join(dict.fromkeys(setup)) or "import numpy as np",
                       _meta(f"{name}-setup", locked=True)))
    for exercise, text, code in answers:
        checks = [getattr(checkers_module, c) for c in exercise.checkers]
        number = int(exercise.chapter[2:])
        cells.append(_cell("markdown", f"## {exercise.label} ({exercise.max_points:g} points, chapter {number})"
                                       f"\n\n{text}"))
        body = _answer_code(code, exercise.functions)
        cells.append(_cell("code", body, _meta(f"{exercise.label}-answer", solution=True)))
        calls = "\n".join(f"{c.__name__}({', '.join(c.functions)})" for c in checks)
        cells.append(_cell("code", "from dpcp_tutorial.course.exercises import " + ", ".join(c.__name__ for c in checks)
                           + "\n\n" + calls))
        cells.append(_cell("code", hidden_test(exercise, checks, secret),
                           _meta(f"{exercise.label}-tests", grade=True, locked=True, points=exercise.max_points)))
    for index, cell in enumerate(cells):
        cell["id"] = f"{name}-{index:02d}"
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}}


PROBLEM_SET = re.compile(r"^\*\*(?P<title>(?:Problem set (?P<number>\d+)|Optional advanced set)[^*]*?)\.?\*\*"
                         r"(?P<body>.*?)(?=\n\s*\n|\Z)", re.S | re.M)
EIGHT_WEEKS = "(8 weeks"


def problem_sets(six_weeks: bool = False) -> list[tuple[str, str, list[str]]]:
    """The problem sets of ``book/for_instructors.md``: ``(name, title, exercise labels)`` in page order.

    ``name`` is ``ps1``, ``ps2``, ... and ``advanced``; with ``six_weeks`` the items marked *(8 weeks)* are
    left out, as the six-week module does.
    """
    text = (ROOT / "book" / "for_instructors.md").read_text(encoding="utf-8")
    out = []
    for match in PROBLEM_SET.finditer(text):
        items = re.split(r"(?<=[`)])\s*,\s*", match.group("body"))
        labels = []
        for item in items:
            if six_weeks and EIGHT_WEEKS in item:
                continue
            labels += re.findall(r"\{ref\}`[^`<]*<([\w-]+)>`", item)
        name = f"ps{match.group('number')}" if match.group("number") else "advanced"
        out.append((name, match.group("title").strip(), labels))
    return out


CONFIG = '''c = get_config()  # noqa: F821 - nbgrader's configuration object
c.CourseDirectory.course_id = "dpcp-tutorial"
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}
c.ExecutePreprocessor.timeout = 600
'''


def run_nbgrader(arguments: list[str], course: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGUMENTS`` in ``course`` with this interpreter's scripts first on the PATH (nbgrader calls
    ``alembic`` and starts kernels by name)."""
    bin_dir = str(Path(sys.executable).parent)
    environment = dict(os.environ if env is None else env)
    environment["PATH"] = bin_dir + os.pathsep + environment.get("PATH", "")
    return subprocess.run([str(Path(bin_dir) / "nbgrader")] + arguments, cwd=course, env=environment, check=True,
                          capture_output=True, text=True)


def generate(out: Path, secret: str, only: set[str] | None = None, release: bool = True,
             six_weeks: bool = False) -> list[str]:
    """Write the course, one assignment per problem set of ``book/for_instructors.md`` (its coding exercises),
    with each hidden test's cases drawn from ``secret``; return the assignment names (and print what was left
    out)."""
    if not isinstance(secret, str) or not secret:
        raise ValueError("the hidden tests need the instructor's secret: --secret-file FILE or the environment "
                         "variable DPCP_GRADING_SECRET")
    course = out / "course"
    source = course / "source"
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    table = {exercise.label: exercise for exercise in grading_table()}
    notes: list[str] = []
    names = []
    chapters: dict = {}
    for name, title, labels in problem_sets(six_weeks):
        if only and name not in only:
            continue
        exercises = [table[label] for label in dict.fromkeys(labels) if label in table]
        notebook = assignment_notebook(name, title, exercises, notes, secret, chapters) if exercises else None
        if notebook is None:
            continue
        folder = source / name
        folder.mkdir()
        (folder / f"{name}.ipynb").write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
        names.append(name)
    for note in notes:
        print(note)
    if release and names:
        # one nbgrader process for every assignment: its id is a glob over source/, which holds exactly the
        # assignments written above (one process per assignment costs seconds each)
        run_nbgrader(["generate_assignment", "*", "--force", "--create"], course)
    print(f"nbgrader course with {len(names)} assignments in {course}")
    return names


def _secret(secret_file: str | None) -> str:
    if secret_file:
        value = Path(secret_file).read_text(encoding="utf-8").strip()
        if not value:
            raise SystemExit(f"the secret file {secret_file} is empty")
        return value
    value = os.environ.get("DPCP_GRADING_SECRET", "")
    if not value:
        raise SystemExit("make nbgrader draws the hidden tests' cases from the instructor's secret: give "
                         "--secret-file FILE (make nbgrader SECRET_FILE=FILE) or set DPCP_GRADING_SECRET")
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="_build_nbgrader", help="output directory (default: _build_nbgrader)")
    parser.add_argument("--secret-file", help="a file holding the instructor's secret (default: the environment "
                                              "variable DPCP_GRADING_SECRET)")
    parser.add_argument("--sets", help="comma-separated assignments, e.g. ps1,ps3 (default: every problem set)")
    parser.add_argument("--six-weeks", action="store_true", help="leave out the items marked (8 weeks)")
    parser.add_argument("--no-release", action="store_true", help="write the source notebooks only")
    args = parser.parse_args(argv)
    only = set(args.sets.split(",")) if args.sets else None
    generate(Path(args.out).resolve(), _secret(args.secret_file), only, release=not args.no_release,
             six_weeks=args.six_weeks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
