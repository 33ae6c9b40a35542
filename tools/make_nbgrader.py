"""Generate an nbgrader course from the book's chapter notebooks (``make nbgrader``).

Usage::

    python tools/make_nbgrader.py [--out _build_nbgrader] [--chapters 1,8] [--no-release]

For every chapter with coding exercises it writes ``<out>/course/source/chNN/chNN.ipynb``, an nbgrader source
notebook read from the chapter *at generation time* (the exercises are found by their labels, so rewording a
chapter changes the course the next time it is generated):

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
  (:data:`dpcp_tutorial.grading.points.POINTS`) whose body is a ``### BEGIN HIDDEN TESTS`` region: it runs
  the checker in graded mode (``secret=True``: the cases come from the environment variable
  ``DPCP_GRADING_SECRET`` of the machine that runs ``nbgrader autograde``) and returns the points earned,
  ``points * cases passed / cases``, which nbgrader records as partial credit.

It also writes ``<out>/course/nbgrader_config.py`` and, unless ``--no-release``, runs ``nbgrader
generate_assignment`` once for all the chapters written (the student versions land in
``<out>/course/release``). Then, in ``<out>/course``::

    nbgrader autograde chNN --create        # after copying submissions to submitted/<student>/chNN/chNN.ipynb
    nbgrader export                         # grades.csv

all offline. nbgrader comes from PyPI with the package's ``[course]`` extra. The nbgrader path runs the
students' code in the grading kernel, next to the checkers: use ``python -m dpcp_tutorial.grading`` where the
integrity of marks matters (``book/grading.md``).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcp_tutorial.grading import _source, grading_table  # noqa: E402

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


def chapter_notebook(chapter: str, exercises: list, notes: list[str]) -> dict | None:
    """The nbgrader source notebook of one chapter (``chapter`` is e.g. ``"ch01"``)."""
    from dpcp_tutorial import exercises as checkers_module

    number = int(chapter[2:])
    paths = sorted((ROOT / "book").glob(f"{number:02d}_*.ipynb"))
    if not paths:
        return None
    notebook = json.loads(paths[0].read_text(encoding="utf-8"))
    title = next((line[2:].strip() for c in notebook["cells"] if c["cell_type"] == "markdown"
                  for line in _source_of(c).splitlines() if line.startswith("# ")), paths[0].stem)
    refs = references()
    texts = exercise_texts(notebook, refs)
    units = _units(notebook, paths[0].name)
    # a source variant's exercise lives on a reference page (book/[a-z]*.ipynb) that the chapter links to
    pages = [(json.loads(p.read_text(encoding="utf-8")), p.name) for p in sorted((ROOT / "book").glob("[a-z]*.ipynb"))]
    setup, answers = [], []
    for exercise in exercises:
        where = units
        if exercise.label not in texts:
            page = next((pg for pg in pages if exercise.label in exercise_texts(pg[0])), None)
            if page is None:
                notes.append(f"{chapter}: {exercise.label} is not in {paths[0].name} yet; left out")
                continue
            texts[exercise.label] = exercise_texts(page[0], refs)[exercise.label]
            where = _units(page[0], page[1])
        chosen = _solution_units(where, exercise.functions)
        if not chosen:
            chosen = _fallback_units(exercise.functions)
            notes.append(f"{chapter}: {exercise.label}'s solution taken from tests/exercise_solutions.py")
        code = [u for u in chosen if not (isinstance(ast.parse(u.source).body[0], SETUP_STATEMENTS))]
        needed = set().union(*(u.reads for u in chosen if not isinstance(ast.parse(u.source).body[0],
                                                                         (ast.Import, ast.ImportFrom))))
        for unit in chosen:
            statement = None if unit in code else _setup_source(unit, needed)
            if statement is not None and statement not in setup:
                setup.append(statement)
        answers.append((exercise, texts[exercise.label], code))
    if not answers:
        return None
    cells = [_cell("markdown", f"# Chapter {number}: {title} — graded exercises\n\nWrite each function in its "
                               "answer cell. The cell after it runs the book's checker on the public cases; the "
                               "grader uses other cases of the same kinds.")]
    cells.append(_cell("code", "\n".join(dict.fromkeys(setup)) or "import numpy as np",
                       _meta(f"{chapter}-setup", locked=True)))
    for exercise, text, code in answers:
        checks = [getattr(checkers_module, name) for name in exercise.checkers]
        cells.append(_cell("markdown", f"## {exercise.label} ({exercise.max_points:g} points)\n\n{text}"))
        body = _answer_code(code, exercise.functions)
        cells.append(_cell("code", body, _meta(f"{exercise.label}-answer", solution=True)))
        calls = "\n".join(f"{c.__name__}({', '.join(c.functions)})" for c in checks)
        cells.append(_cell("code", "from dpcp_tutorial.exercises import " + ", ".join(c.__name__ for c in checks)
                           + "\n\n" + calls))
        graded = ", ".join(f"{c.__name__}({', '.join(c.functions)}, secret=True, quiet=True)" for c in checks)
        test = ("### BEGIN HIDDEN TESTS\n"
                "# graded cases from the instructor's secret (environment variable DPCP_GRADING_SECRET)\n"
                f"from dpcp_tutorial.exercises import {', '.join(c.__name__ for c in checks)}\n"
                f"_results = [{graded}]\n"
                "for _line in (line for r in _results for line in r.feedback):\n"
                "    print(_line)\n"
                f"round({exercise.max_points:g} * sum(r.cases_passed for r in _results if not r.not_graded)"
                " / max(1, sum(r.cases_total for r in _results)), 2)\n"
                "### END HIDDEN TESTS")
        cells.append(_cell("code", test, _meta(f"{exercise.label}-tests", grade=True, locked=True,
                                                points=exercise.max_points)))
    for index, cell in enumerate(cells):
        cell["id"] = f"{chapter}-{index:02d}"
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}}


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


def generate(out: Path, chapters: set[int] | None = None, release: bool = True) -> list[str]:
    """Write the course; return the assignment names (and print what was left out)."""
    course = out / "course"
    source = course / "source"
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    by_chapter: dict[str, list] = {}
    for exercise in grading_table():
        by_chapter.setdefault(exercise.chapter, []).append(exercise)
    notes: list[str] = []
    names = []
    for chapter, exercises in sorted(by_chapter.items()):
        if chapters and int(chapter[2:]) not in chapters:
            continue
        notebook = chapter_notebook(chapter, exercises, notes)
        if notebook is None:
            continue
        folder = source / chapter
        folder.mkdir()
        (folder / f"{chapter}.ipynb").write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                                                 encoding="utf-8")
        names.append(chapter)
    for note in notes:
        print(note)
    if release and names:
        # one nbgrader process for every assignment: its id is a glob over source/, which holds exactly the
        # chapters written above (one process per chapter costs seconds each)
        run_nbgrader(["generate_assignment", "ch[0-9][0-9]", "--force", "--create"], course)
    print(f"nbgrader course with {len(names)} assignments in {course}")
    return names


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="_build_nbgrader", help="output directory (default: _build_nbgrader)")
    parser.add_argument("--chapters", help="comma-separated chapter numbers (default: every chapter with checkers)")
    parser.add_argument("--no-release", action="store_true", help="write the source notebooks only")
    args = parser.parse_args(argv)
    chapters = {int(c) for c in args.chapters.split(",")} if args.chapters else None
    generate(Path(args.out).resolve(), chapters, release=not args.no_release)
    return 0


if __name__ == "__main__":
    sys.exit(main())
