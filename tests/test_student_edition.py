"""The student edition contains no solution (``make student``, dpcp_tutorial/course/student_edition.py).

Fingerprints of every solution are taken from the instructor sources: each line of code in a
``{solution}`` block or in a notebook cell tagged ``solution`` that appears nowhere else in the
book, and the longest plain-text run of each solution's prose. Then:

* always (fast): the stripped chapter notebooks and pages contain no fingerprint and no marker;
* when ``STUDENT_EDITION`` names a built edition (``make test`` builds one with ``make student``
  first), or is ``build`` (build it here, into a temporary directory): its HTML, its copied
  sources and the notebooks to hand out contain no fingerprint, no solution marker, no
  instructor-only page and no checker docstring; its API page names no issue of the project's tracker.
"""

from __future__ import annotations

import ast
import functools
import html
import inspect
import json
import os
import pathlib
import re

import pytest

from dpcp_tutorial.course import student_edition

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
#: every notebook of the book (chapters, the introduction, case studies, reference pages): a line of solution code
#: that one of them shows outside a solution is no fingerprint
NOTEBOOKS = sorted(p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
PAGES = sorted((ROOT / "book").glob("*.md"))
MARKERS = ("{solution}", 'class="solution', "solution-title", "solution-content")
FENCED_CODE = re.compile(r"^(`{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _is_solution_cell(cell) -> bool:
    return "solution" in cell.get("metadata", {}).get("tags", [])


@functools.cache
def _instructor_texts():
    """(solution texts, solution cells' code, everything else) of the instructor edition."""
    solutions, solution_code, rest = [], [], []
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            text = _source(cell)
            if _is_solution_cell(cell):
                solution_code.append(text)
                continue
            if cell["cell_type"] == "markdown":
                solutions += [m.group(0) for m in student_edition.SOLUTION_BLOCK.finditer(text)]
                text = student_edition.strip_solutions(text)
            rest.append(text)
    for path in PAGES:
        if path.stem in {p.split("/")[-1] for p in student_edition.INSTRUCTOR_ONLY}:
            continue
        text = path.read_text(encoding="utf-8")
        solutions += [m.group(0) for m in student_edition.SOLUTION_BLOCK.finditer(text)]
        rest.append(student_edition.strip_solutions(text))
    rest += _checker_docstrings()    # the API page shows them in both editions: how to call a checker is no solution
    return solutions, solution_code, "\n".join(rest)


def _checker_docstrings() -> list[str]:
    """Docstrings of the exercise checkers (public API, rendered on the API page of both editions)."""
    texts = []
    for path in sorted((ROOT / "dpcp_tutorial" / "course" / "exercises").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        texts += [doc for n in nodes if (doc := ast.get_docstring(n, clean=False))]
    return texts


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@functools.cache
def _fingerprints():
    solutions, solution_code, rest = _instructor_texts()
    code_lines = set()
    for block in solutions:
        for match in FENCED_CODE.finditer(block.split("\n", 1)[1]):
            code_lines |= {line.strip() for line in match.group(2).splitlines()}
    for code in solution_code:
        code_lines |= {line.strip() for line in code.splitlines()}
    # a line that also occurs (even inside a longer line) outside the solutions is not a fingerprint
    code = {line for line in code_lines
            if len(line) >= 16 and not line.startswith(("#", "import ", "from ")) and line not in rest}
    prose = set()
    normal_rest = _normalise(rest)
    for block in solutions:
        body = FENCED_CODE.sub(" ", block.split("\n", 1)[1])
        runs = [r.strip() for r in re.split(r"[$`{}\\*_|\n]", body)]
        runs = [r for r in runs if len(r) >= 30 and _normalise(r) not in normal_rest]
        if runs:
            prose.add(_normalise(max(runs, key=len)))
    return sorted(code), sorted(prose), len(solutions)


REFERENCE_FILES = sorted((ROOT / "book" / "reference").glob("*.py"))


@functools.cache
def _reference_lines() -> list[str]:
    """Lines of code of the copy-ready reference files (several answer coding exercises) shown nowhere else."""
    rest = _instructor_texts()[2]
    lines = set()
    for path in REFERENCE_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and not isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef)) \
                    and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
                first = ast.get_source_segment(path.read_text(encoding="utf-8"), node).splitlines()[0].strip()
                if len(first) >= 24 and first not in rest:
                    lines.add(first)
    return sorted(lines)



def _leaks(text: str) -> list[str]:
    normal = _normalise(text)
    code, prose, _ = _fingerprints()        # built on first use, not at collection
    found = [f"marker {m!r}" for m in MARKERS if m in text]
    found += [f"code {line!r}" for line in code if line in text]
    found += [f"reference code {line!r}" for line in _reference_lines() if line in text]
    found += [f"text {run[:60]!r}" for run in prose if run in normal]
    return found


def test_fingerprints_cover_every_solution():
    code, prose, n_solutions = _fingerprints()
    exercises = sum(len(re.findall(r"`{3,}\{exercise\}", p.read_text(encoding="utf-8"))) for p in CHAPTERS)
    assert n_solutions >= exercises >= 13 * 3, "every exercise has a solution block"
    assert len(code) >= 100, f"only {len(code)} solution code lines found: the leak test would be weak"
    assert len(prose) >= n_solutions // 2


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_stripped_chapter_has_no_solution(path):
    original = json.loads(path.read_text(encoding="utf-8"))
    stripped = student_edition.strip_notebook(original)
    assert _leaks("\n".join(_source(c) for c in original["cells"])), "the instructor chapter must show leaks"
    text = "\n".join(_source(c) for c in stripped["cells"])
    assert not any(_is_solution_cell(c) for c in stripped["cells"])
    assert not _leaks(text), _leaks(text)[:5]
    assert "{exercise}" in text, "the exercises themselves stay"


def test_stripped_pages_have_no_solution_and_no_instructor_links():
    for path in PAGES:
        if path.stem in {p.split("/")[-1] for p in student_edition.INSTRUCTOR_ONLY}:
            continue
        text = student_edition.student_page(path.name, path.read_text("utf-8"))
        assert not _leaks(text), (path.name, _leaks(text)[:5])
        assert "<for_instructors>" not in text and "{doc}`for_instructors`" not in text, path.name
        for phrase in student_edition.INSTRUCTOR_PHRASES:
            assert phrase not in text.lower(), f"{path.name} promises {phrase!r} to students"


def test_no_reference_file_is_printed_in_the_student_edition():
    """The copy-ready files answer exercises (e.g. the split-conformal quantile of ex-01-code-quantile, the
    spatial depth of ex-09-spatial): the student pages include none of them, and say so where they were."""
    reference_code = _reference_lines()
    assert len(reference_code) >= 50, f"only {len(reference_code)} reference lines: the leak test would be weak"
    page = (ROOT / "book" / "reference_implementations.md").read_text(encoding="utf-8")
    included = re.findall(r"\{literalinclude\} +reference/([\w.]+)", page)
    assert {"conformal_quantile.py", "private_median.py"} <= set(included)
    student = student_edition.student_page("reference_implementations.md", page)
    assert "{literalinclude}" not in student
    assert all(f"`{name}`" in student for name in included), "a note replaces each file"
    for path in PAGES:
        text = student_edition.student_page(path.name, path.read_text(encoding="utf-8"))
        assert not student_edition.REFERENCE_INCLUDE.search(text), path.name
    for path in REFERENCE_FILES:     # a reference file shown in full would be caught by its lines
        assert _leaks(path.read_text(encoding="utf-8")), path.name


def test_the_student_edition_says_how_students_run_the_chapters():
    page = (ROOT / "book" / "how_to_use.md").read_text(encoding="utf-8")
    student = student_edition.student_page("how_to_use.md", page)
    if "## Running the chapters" in page:
        assert "your instructor hands out the chapters' notebooks" in student
    assert not any(p in student.lower() for p in student_edition.INSTRUCTOR_PHRASES)


def _text_of(path: pathlib.Path) -> str:
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        return html.unescape(re.sub(r"<[^>]+>", "", raw))
    if path.suffix == ".ipynb":
        return "\n".join(_source(c) for c in json.loads(raw)["cells"])
    return raw


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    where = os.environ.get("STUDENT_EDITION")
    if not where:
        pytest.skip("set STUDENT_EDITION to a built student edition, or to 'build' (make test does)")
    if where == "build":
        out = tmp_path_factory.mktemp("student")
        student_edition.build(out)
        return out
    out = pathlib.Path(where)
    assert (out / "html" / "index.html").is_file(), f"no student edition under {out}; run `make student`"
    return out


def test_student_html_and_notebooks_have_no_solution(edition):
    files = [p for p in (edition / "html").rglob("*")
             if p.is_file() and p.suffix in {".html", ".ipynb", ".md", ".txt", ".js", ".py"}
             and "_static" not in p.parts]
    notebooks = sorted((edition / "notebooks").glob("*.ipynb"))
    assert len(notebooks) == len(CHAPTERS), "every chapter notebook is handed out"
    assert len([p for p in files if p.suffix == ".html"]) >= len(CHAPTERS)
    leaks = {str(p.relative_to(edition)): _leaks(_text_of(p)) for p in files + notebooks}
    leaks = {k: v for k, v in leaks.items() if v}
    assert not leaks, f"solutions in the student edition: {dict(list(leaks.items())[:5])}"
    promises = {str(p.relative_to(edition)): [x for x in student_edition.INSTRUCTOR_PHRASES
                                              if x in _text_of(p).lower()]
                for p in files if p.suffix == ".html"}
    promises = {k: v for k, v in promises.items() if v}
    assert not promises, f"the student edition promises what it removed: {promises}"
    for nb in notebooks:
        assert not any(_is_solution_cell(c) for c in json.loads(nb.read_text("utf-8"))["cells"]), nb.name


def test_student_edition_drops_instructor_pages_and_source_code(edition):
    built = {p.stem for p in (edition / "html" / "book").glob("*.html")}
    for page in student_edition.INSTRUCTOR_ONLY:
        assert page.split("/")[-1] not in built
    assert not (edition / "html" / "_modules").exists(), "viewcode pages would show the checkers' references"


def test_student_api_page_speaks_of_the_material_only(edition):
    from _history import built_page_problems

    problems = built_page_problems(edition / "html" / "book" / "api.html")
    assert not problems, "the student API page speaks of the project's history:\n" + "\n".join(problems)


def test_student_api_page_shows_checker_signatures_only(edition):
    from dpcp_tutorial.course import exercises

    api = _normalise(_text_of(edition / "html" / "book" / "api.html"))
    names = [n for n in dir(exercises) if n.startswith("check_")]
    assert names
    for name in names:
        assert name in api, f"{name} is missing from the student API page"
        doc = inspect.getdoc(getattr(exercises, name)) or ""
        runs = [_normalise(r.strip()) for r in re.split(r"[`*:\\$_|\n]", doc)]
        for run in (r for r in runs if len(r) >= 25):
            assert run not in api, f"{name}'s docstring is on the student API page: {run!r}"
