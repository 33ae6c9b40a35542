"""The nbgrader path: the course generated from the book, graded offline by nbgrader.

``dpcp_tutorial/course/make_nbgrader.py`` writes one source notebook per problem set of ``book/for_instructors.md`` (its
coding exercises, read from their chapters) and ``nbgrader generate_assignment`` makes the student versions (one
nbgrader run for all sets, as ``make nbgrader`` does). The hidden tests hold the graded cases as fixed data
drawn from the instructor's secret at generation time: the secret is in no generated file and in no
environment while the notebooks run. Every set's source notebook is checked for its structure and run in this
process: its solutions earn full marks from the hidden tests, the student version's stubs earn nothing. Then
submissions of problem sets 1 and 2 (the solutions, and wrong answers typed into the student version) are
autograded by nbgrader and ``nbgrader export`` writes the grades: full marks for the solutions, partial credit
counted from the cases for the wrong answers, and one graded exercise with several functions (chapter 4's
assembly exercise) or several checkers (``ex-04-code``). nbgrader comes from PyPI with the ``[course]`` extra;
without it this module is skipped.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import io
import json
import os
import re
import shutil
from pathlib import Path

import importlib.util

import pytest

# found, not imported: importing nbgrader loads its Jupyter server extensions (about 2 s), and the tests run
# nbgrader as a command; make unit collects this file only to deselect it
if importlib.util.find_spec("nbgrader") is None:
    pytest.skip("nbgrader is the [course] extra: pip install -e '.[course]'", allow_module_level=True)

from dpcp_tutorial.course.grading import grading_table  # noqa: E402
from dpcp_tutorial.course.grading.points import POINTS  # noqa: E402

from dpcp_tutorial.course import make_nbgrader  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow     # nbgrader's database, one generation for all chapters, two kernels per submission

SECRET = "a course secret"
TABLE = {e.label: e for e in grading_table()}
SETS = {name: [TABLE[label] for label in dict.fromkeys(labels) if label in TABLE]
        for name, _, labels in make_nbgrader.problem_sets()}
SETS = {name: exercises for name, exercises in SETS.items() if exercises}
LABELS = {key for key in make_nbgrader.references() if key[0] != "doc"}   # (role, label)


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    out = tmp_path_factory.mktemp("nbgrader")
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        names = make_nbgrader.generate(out, SECRET, None, release=True)
    assert names == list(SETS), "every problem set with a coding exercise becomes an assignment"
    notes = printed.getvalue().strip().splitlines()[:-1]
    assert not notes, f"every exercise and its solution come from its chapter: {notes}"
    return out / "course"


def _graded_cells(notebook: dict) -> tuple[list, list]:
    cells = notebook["cells"]
    return ([c for c in cells if c["metadata"].get("nbgrader", {}).get("solution")],
            [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade")])


def test_source_notebook_is_read_from_the_chapter(course):
    notebook = _load(course / "source" / "ps1" / "ps1.ipynb")
    chapter = (ROOT / "book" / "01_conformal_prediction.ipynb").read_text(encoding="utf-8")
    solutions, tests = _graded_cells(notebook)
    assert len(solutions) == len(tests) == len(SETS["ps1"]) >= 4
    assert {c["metadata"]["nbgrader"]["points"] for c in tests} == {6.0}
    texts = [_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    assert any("my_quantile(scores, alpha)" in t and "my_quantile(scores, alpha)" in chapter for t in texts)
    assert any("ties by class index" in t or "break ties by class index" in t for t in texts)


def test_problem_sets_are_read_from_the_course_plan():
    sets = {name: labels for name, _, labels in make_nbgrader.problem_sets()}
    six = {name: labels for name, _, labels in make_nbgrader.problem_sets(six_weeks=True)}
    assert "ex-01-code-quantile" in sets["ps1"] and "ex-04-assemble" in sets["ps2"]
    assert all(set(six[name]) <= set(sets[name]) for name in sets)
    assert any(set(six[name]) < set(sets[name]) for name in sets), "the (8 weeks) items are left out"
    assigned = [label for exercises in SETS.values() for label in (e.label for e in exercises)]
    assert len(assigned) == len(set(assigned)), "an exercise is in two problem sets"


@pytest.mark.parametrize("name", list(SETS))
def test_every_problem_set_becomes_an_assignment_with_its_exercises(course, name):
    """Per exercise of the set: its text, an answer cell with one solution region per function, a locked
    hidden test worth the exercise's points; the student version keeps stubs and loses the rest."""
    notebook = _load(course / "source" / name / f"{name}.ipynb")
    exercises = SETS[name]
    solutions, tests = _graded_cells(notebook)
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in solutions] == [f"{e.label}-answer" for e in exercises]
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in tests] == [f"{e.label}-tests" for e in exercises]
    assert len({c["id"] for c in notebook["cells"]}) == len(notebook["cells"]), "nbformat 4.5 cell ids"
    markdown = "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert not re.search(r"\{(?:ref|prf:ref|doc|numref|eq)\}`", markdown), "MyST roles do not render in Jupyter"
    prose = re.sub(r"^## ex-[\w-]+", "", markdown, flags=re.M)
    bare = sorted(label for _, label in LABELS if re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", prose))
    assert not bare, f"references left as bare labels: {bare}"
    setup = _source(notebook["cells"][1])
    implemented = {n.rsplit(".", 1)[-1] for e in exercises for n in e.implements}
    imported = {a.asname or a.name for node in ast.walk(ast.parse(setup))
                if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    assert not imported & implemented, f"the setup hands out the package's implementation: {imported & implemented}"
    for exercise, answer, test in zip(exercises, solutions, tests):
        assert f"## {exercise.label} ({exercise.max_points:g} points, chapter {int(exercise.chapter[2:])})" in markdown
        code = _source(answer)
        defined = {n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)}
        assert set(exercise.functions) <= defined
        assert code.count("### BEGIN SOLUTION") == code.count("### END SOLUTION") >= len(exercise.functions)
        assert test["metadata"]["nbgrader"]["points"] == POINTS[exercise.label]
        assert test["metadata"]["nbgrader"]["locked"]
        body = _source(test)
        assert body.startswith("### BEGIN HIDDEN TESTS") and "grade_fixed_cases(" in body
        assert "secret" not in body.replace("instructor's secret", ""), "the hidden test reads no secret"
        assert all(f"{checker}," in body for checker in exercise.checkers)
    release = _load(course / "release" / name / f"{name}.ipynb")
    text = "\n".join(_source(c) for c in release["cells"])
    assert "BEGIN SOLUTION" not in text and "grade_fixed_cases" not in text and "HIDDEN TESTS" not in text
    assert text.count("raise NotImplementedError()") >= sum(len(e.functions) for e in exercises)


def test_hidden_cases_are_the_graded_cases_and_the_secret_is_in_no_file(course):
    from dpcp_tutorial.course.exercises import all_checkers
    from dpcp_tutorial.course.exercises._common import case_fingerprint
    from dpcp_tutorial.course.exercises._fixed import decode_cases

    checkers = all_checkers()
    for name, exercises in SETS.items():
        tests = _graded_cells(_load(course / "source" / name / f"{name}.ipynb"))[1]
        for exercise, test in zip(exercises, tests):
            namespace: dict = {}
            exec(compile("\n".join(line for line in _source(test).splitlines() if line.startswith("_cases_")
                                    or line.startswith("    \"") or line == ")"), "cases", "exec"), namespace)
            for index, checker in enumerate(exercise.checkers):
                fixed = [case_fingerprint(c) for c in decode_cases(namespace[f"_cases_{index}"])]
                spec = checkers[checker].spec
                assert fixed == [case_fingerprint(c) for c in spec.cases(SECRET)]
                assert not set(fixed) & {case_fingerprint(c) for c in spec.cases(None)}
    for path in course.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and b"DPCP_GRADING_SECRET" not in data, path


def test_generation_refuses_without_a_secret(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="secret"):
        make_nbgrader.generate(tmp_path, None, release=False)
    monkeypatch.delenv("DPCP_GRADING_SECRET", raising=False)
    with pytest.raises(SystemExit, match="DPCP_GRADING_SECRET"):
        make_nbgrader.main(["--out", str(tmp_path), "--no-release"])


def _run(cells: list, namespace: dict) -> object:
    """Execute the code cells in ``namespace``; return the value of the last cell's last expression."""
    value = None
    for cell in cells:
        tree = ast.parse(_source(cell))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, cell.get("id", "cell"), "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), "last", "eval"), namespace) if last else None
    return value


@pytest.mark.parametrize("name", list(SETS))
def test_solutions_earn_every_point_and_stubs_none(course, name, monkeypatch, capsys):
    """The source notebook run top to bottom, with no secret anywhere (its public checks print, its hidden
    tests give the points); the student version with the source's hidden tests appended gives 0."""
    monkeypatch.delenv("DPCP_GRADING_SECRET", raising=False)
    source = _load(course / "source" / name / f"{name}.ipynb")
    code = [c for c in source["cells"] if c["cell_type"] == "code"]
    tests = [c for c in code if c["metadata"].get("nbgrader", {}).get("grade")]
    exercises = SETS[name]
    namespace: dict = {}
    earned = []
    for cell in code:
        value = _run([cell], namespace)
        if cell in tests:
            earned.append(value)
    assert earned == [POINTS[e.label] for e in exercises], capsys.readouterr().out[-3000:]
    release = _load(course / "release" / name / f"{name}.ipynb")
    stubs: dict = {}
    _run([release["cells"][1]], stubs)       # the locked setup cell
    for cell in release["cells"][2:]:
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):
            _run([cell], stubs)
    assert [_run([t], stubs) for t in tests] == [0] * len(tests)


def test_autograde_and_export_offline(course):
    """nbgrader itself: problem sets 1 and 2 autograded for two students and exported, with no secret in the
    environment (the student versions' stubs earn nothing: the in-process test above)."""
    submissions = {}
    for name in ("ps1", "ps2"):
        source = _load(course / "source" / name / f"{name}.ipynb")
        release = _load(course / "release" / name / f"{name}.ipynb")
        wrong = json.loads(json.dumps(release))
        for cell in wrong["cells"]:
            if "def my_quantile" in _source(cell):
                cell["source"] = "def my_quantile(scores, alpha):\n    return float(np.quantile(scores, 1 - alpha))\n"
            if "def my_round_up(" in _source(cell):     # my_qtilde stays a stub: half of ex-04-code's cases
                cell["source"] = _source(cell).replace(
                    "def my_round_up(scores, m):\n    # YOUR CODE HERE\n    raise NotImplementedError()",
                    "def my_round_up(scores, m):\n    edges = np.arange(m) / (m - 1)\n"
                    "    return edges[np.minimum(np.searchsorted(edges, scores, side='right'), m - 1)]")
        submissions[name] = {"good": source, "wrong": wrong}
    for name, students in submissions.items():
        for student, notebook in students.items():
            folder = course / "submitted" / student / name
            folder.mkdir(parents=True)
            (folder / f"{name}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "DPCP_GRADING_SECRET"}
    make_nbgrader.run_nbgrader(["autograde", "ps[12]", "--create", "--force"], course, env)
    make_nbgrader.run_nbgrader(["export"], course, env)
    with open(course / "grades.csv", newline="", encoding="utf-8") as handle:
        grades = {(row["assignment"], row["student_id"]): row for row in csv.DictReader(handle)}
    score = {key: float(row["score"]) for key, row in grades.items()}
    for name in ("ps1", "ps2"):
        full = sum(POINTS[e.label] for e in SETS[name])
        assert score[(name, "good")] == float(grades[(name, "good")]["max_score"]) == full
    assert 0.0 < score[("ps1", "wrong")] < 6.0, "a wrong my_quantile earns partial credit, stubs nothing"
    assert 0.0 < score[("ps2", "wrong")] < 6.0, "my_round_up right and my_qtilde a stub: part of ex-04-code"
    shutil.rmtree(course / "autograded", ignore_errors=True)
