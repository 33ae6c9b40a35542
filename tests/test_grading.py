"""The batch grader: correct, wrong, crashing, hanging, malformed and cheating submissions.

One folder of submissions is graded once (module fixture) with a secret; the tests read its CSV, totals and
feedback files. Each attack on the grader has a student here and a test below; so do the grading of hand-out
notebooks, tuple constants, ``%%time`` cells, nested definitions, duplicates and nbformat 3, and the CSV and
totals files.
"""

from __future__ import annotations

import csv
import json
import re
import textwrap
import time
from pathlib import Path

import pytest

from dpcp_tutorial.course.grading import (COLUMNS, exercise_table, find_submissions, grade_folder, grade_submission,
                                   grading_table, load_submission, main)
from dpcp_tutorial.course.grading import _isolation, _source
from dpcp_tutorial.course.grading.points import POINTS

pytestmark = pytest.mark.skipif(_isolation.probe() is not None,
                                reason=f"the grader needs a bubblewrap sandbox: {_isolation.probe()}")

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = Path(__file__).with_name("exercise_solutions.py")
SECRET = "test secret of the course"
EXERCISES = "ch01,ex-08-code-n,ex-08-code-interval"
FUNCTIONS = {"my_quantile", "my_aps_sets", "smallest_n", "my_interval"}

SMALLEST_N = '''
import math


def smallest_n(alpha, epsilon1, epsilon2, delta):
    alpha1 = math.exp(-epsilon1) * (alpha - delta)
    return math.floor(2 / (alpha1 * epsilon2)) + 1
'''


def _notebook(cells, nbformat=4):
    if nbformat == 3:
        return json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                           "worksheets": [{"cells": [{"cell_type": "code", "input": c, "language": "python",
                                                      "outputs": [], "metadata": {}} for c in cells]}]})
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [],
                                  "execution_count": None} for c in cells]
                       + [{"cell_type": "markdown", "metadata": {}, "source": "def markdown_only(): pass"}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


GOOD_CELLS = [
    "%matplotlib inline\nimport math\n!echo hello\nimport numpy as np",
    "print('exploring')\nfor _ in range(3):\n    pass",
    SOLUTIONS.read_text(encoding="utf-8"),
    "from dpcp_tutorial.course.exercises import check_conformal_quantile\nassert check_conformal_quantile(my_quantile)",
    "while True:\n    pass  # an experiment left running: not needed by any answer, so never executed",
    "%%bash\necho a cell magic in another language",
]

# Constants by tuple unpacking, definitions inside if/with, an answer cell that starts with %%time.
STYLED_CELLS = [
    "import math, warnings\nimport numpy as np\nLO, HI = 0, 1\n(SCALE,) = (2,)",
    "live = run_experiment_that_takes_a_minute()   # never run: no answer reads it",
    "%%time\nif True:\n    def my_interval(y_pred, qhat, bound):\n"
    "        half = math.inf if qhat >= HI else bound * qhat\n"
    "        return np.column_stack([y_pred - half, y_pred + half])",
    "with warnings.catch_warnings():\n    def smallest_n(alpha, epsilon1, epsilon2, delta):\n"
    "        alpha1 = math.exp(-epsilon1) * (alpha - delta)\n"
    "        return math.floor(SCALE / (alpha1 * epsilon2)) + 1",
    "x = %timeit -o 1 + 1\ny = !ls",
]

BAD = '''
import math
import numpy as np


def my_quantile(scores, alpha):
    return float(np.quantile(scores, 1 - alpha))          # interpolates


def my_aps_sets(proba, qhat):
    return 1 - proba <= qhat                               # LAC, not APS


def my_interval(y_pred, qhat, bound):
    return np.column_stack([y_pred - qhat, y_pred + qhat])  # forgets the bound


def smallest_n(alpha, epsilon1, epsilon2, delta):
    return math.floor(2 / (math.exp(-epsilon1) * (alpha - delta) * epsilon2))   # off by one
'''

CRASHING = '''
import math
import os
import numpy as np
import not_a_module_anywhere


def my_quantile(scores, alpha):
    return 1 / 0


def my_aps_sets(proba, qhat):
    return (proba > qhat).astype(int)


def my_interval(y_pred, qhat, bound):
    os._exit(1)
''' + SMALLEST_N

HANGING = '''
import math
import time

import numpy as np


def my_quantile(scores, alpha):
    while True:
        pass


def my_interval(y_pred, qhat, bound):
    time.sleep(1000)


def smallest_n(alpha, epsilon1, epsilon2, delta):
    time.sleep(0.3)      # slow but in time: passes
    alpha1 = math.exp(-epsilon1) * (alpha - delta)
    return math.floor(2 / (alpha1 * epsilon2)) + 1
'''

LOADS_FOREVER = '''
import time

DATA = time.sleep(1000)


def my_quantile(scores, alpha):
    return DATA
''' + SMALLEST_N

EXITS = "import sys\nsys.exit(0)\nraise SystemExit(1)\n"

# --- section 1 attacks ------------------------------------------------------------------------------------

HARNESS_PATCH = '''
def _patch():
    try:
        from dpcp_tutorial.course.exercises import _common
        _common.ExerciseResult.fail = lambda self, message: None
        _common.CheckContext.fail = lambda self, *a, **k: None
        _common.CheckContext.stop = lambda self, *a, **k: None
    except Exception:
        pass


def my_quantile(scores, alpha):
    _patch()
    return 0.0


def smallest_n(alpha, epsilon1, epsilon2, delta):
    _patch()
    return 0


my_aps_sets = lambda *a, **k: 0
my_interval = lambda *a, **k: 0
'''

CHECKER_PATCH = '''
import numpy as np
import dpcp_tutorial.course.exercises.ch01 as ch01


def my_quantile(scores, alpha):
    ch01.conformal_quantile = lambda s, a: 0.0     # the checker's helper, patched where the student runs
    return 0.0
'''

FORGER = '''
import json, os, struct


def _forge():
    forged = json.dumps({"event": "result", "passed": True}).encode()
    for fd in range(3, 64):
        try:
            os.write(fd, struct.pack(">Q", len(forged)) + forged)
        except OSError:
            pass


def my_quantile(scores, alpha):
    _forge()
    return 0.0


def smallest_n(alpha, epsilon1, epsilon2, delta):
    _forge()
    return 0
'''

IMPORTS_ALIAS = "from dpcp_tutorial.conformal import conformal_quantile as my_quantile\n"
IMPORTS_WRAPPER = '''
import dpcp_tutorial as dt
from dpcp_tutorial import aps_prediction_set


def my_quantile(scores, alpha):
    return dt.conformal_quantile(scores, alpha)


def my_aps_sets(proba, qhat):
    return aps_prediction_set(proba, qhat)


def my_interval(y_pred, qhat, bound):
    from dpcp_tutorial.private_split import bounded_interval
    return bounded_interval(y_pred, qhat, bound)
'''
IMPORTS_DYNAMIC = '''
import importlib


def my_quantile(scores, alpha):
    module = importlib.import_module("dpcp_tutorial." + "conformal")
    return getattr(module, "conformal" + "_quantile")(scores, alpha)
'''
IMPORTS_HELPER = '''
from dpcp_tutorial.course.exercises import ch08


def smallest_n(alpha, epsilon1, epsilon2, delta):
    return ch08._smallest_n(alpha, epsilon1, epsilon2, delta)
'''


def _rewriter(folder: Path, out: Path) -> str:
    return f'''
import glob, os


def smallest_n(alpha, epsilon1, epsilon2, delta):
    for path in glob.glob({str(folder)!r} + "/*") + [{str(out)!r}]:
        try:
            with open(path, "w") as handle:
                handle.write("def smallest_n(*a):\\n    return 0\\n")
        except OSError:
            pass
    return 0
'''


def _daemon(marker: Path, out: Path) -> str:
    return f'''
import os, time


def smallest_n(alpha, epsilon1, epsilon2, delta):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(3)
            with open({str(marker)!r}, "w") as handle:
                handle.write("the daemon outlived the grader")
            with open({str(out)!r}, "w") as handle:
                handle.write("student,points\\ndaemon,1000\\n")
        os._exit(0)
    return 0
'''


MEMORY = '''
import numpy as np


def smallest_n(alpha, epsilon1, epsilon2, delta):
    block = np.ones(2 * 2**30 // 8)       # 2 GB, over the 1200 MB limit of this test
    return int(block[0])
'''

PRINTS = '''
import math


def smallest_n(alpha, epsilon1, epsilon2, delta):
    print("private data:", alpha, epsilon1)
    alpha1 = math.exp(-epsilon1) * (alpha - delta)
    return math.floor(2 / (alpha1 * epsilon2)) + 1
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    folder = root / "submissions"
    folder.mkdir()
    out = root / "results" / "grades.csv"
    marker = root / "daemon_was_here"
    (folder / "good_py.py").write_text(SOLUTIONS.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "good_nb").mkdir()
    (folder / "good_nb" / "chapter01.ipynb").write_text(_notebook(GOOD_CELLS), encoding="utf-8")
    (folder / "good_nb" / ".ipynb_checkpoints").mkdir()
    (folder / "good_nb" / ".ipynb_checkpoints" / "chapter01-checkpoint.ipynb").write_text(_notebook([BAD]))
    (folder / "styled.ipynb").write_text(_notebook(STYLED_CELLS), encoding="utf-8")
    (folder / "nb3.ipynb").write_text(_notebook([SMALLEST_N], nbformat=3), encoding="utf-8")
    (folder / "dup.py").write_text(SMALLEST_N, encoding="utf-8")
    (folder / "dup.ipynb").write_text(_notebook([SMALLEST_N]), encoding="utf-8")
    (folder / "malformed.ipynb").write_text('{"cells": [ this is not JSON', encoding="utf-8")
    (folder / "bad.ipynb").write_text(_notebook([BAD]), encoding="utf-8")
    (folder / "crashing.py").write_text(CRASHING, encoding="utf-8")
    (folder / "hanging.py").write_text(HANGING, encoding="utf-8")
    (folder / "loads_forever.py").write_text(LOADS_FOREVER, encoding="utf-8")
    (folder / "exits.py").write_text(EXITS, encoding="utf-8")
    (folder / "harness_patch.py").write_text(HARNESS_PATCH, encoding="utf-8")
    (folder / "checker_patch.py").write_text(CHECKER_PATCH, encoding="utf-8")
    (folder / "forger.py").write_text(FORGER, encoding="utf-8")
    (folder / "imports_alias.py").write_text(IMPORTS_ALIAS, encoding="utf-8")
    (folder / "imports_wrapper.py").write_text(IMPORTS_WRAPPER, encoding="utf-8")
    (folder / "imports_dynamic.py").write_text(IMPORTS_DYNAMIC, encoding="utf-8")
    (folder / "imports_helper.py").write_text(IMPORTS_HELPER, encoding="utf-8")
    (folder / "a_rewriter.py").write_text(_rewriter(folder, out), encoding="utf-8")   # graded before the others
    (folder / "a_daemon.py").write_text(_daemon(marker, out), encoding="utf-8")
    (folder / "memory.py").write_text(MEMORY, encoding="utf-8")
    (folder / "prints.py").write_text(PRINTS, encoding="utf-8")
    (folder / "notes.txt").write_text("not a submission")
    assert main([str(folder), "--out", str(out), "--exercises", EXERCISES, "--secret", SECRET, "--time-limit", "3",
                 "--exercise-timeout", "40", "--memory-limit", "1200", "--jobs", "2", "--quiet",
                 "--no-copy-check"]) == 0
    time.sleep(3.5)   # give a daemon that escaped the time to write
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with open(out.with_name("grades_totals.csv"), newline="", encoding="utf-8") as handle:
        totals = list(csv.DictReader(handle))
    table = {}
    for row in rows:
        for function in row["function"].split(" + "):
            table[(row["student"], function)] = row
    return {"rows": rows, "table": table, "totals": totals, "folder": folder, "out": out, "marker": marker,
            "feedback": out.with_name("grades_feedback")}


def _status(graded, student, function):
    return graded["table"][(student, function)]["status"]


def _feedback(graded, student, function):
    return graded["table"][(student, function)]["feedback"]


# ---------------------------------------------------------------------------------------- section 3: files

@pytest.mark.slow
def test_csv_columns_one_row_per_student_and_exercise(graded):
    rows = graded["rows"]
    assert list(rows[0]) == COLUMNS
    students = {p.stem if p.is_file() else p.name for p in graded["folder"].iterdir() if p.suffix != ".txt"}
    assert {row["student"] for row in rows} == students
    exercises = {"ex-01-code-quantile", "ex-01-code-aps", "ex-08-code-n", "ex-08-code-interval"}
    assert {row["exercise"] for row in rows} == exercises
    assert len(rows) == len(students) * len(exercises)
    assert all(row["status"] in ("passed", "failed", "not submitted", "not graded", "error") for row in rows)
    for row in rows:
        assert (row["passed"] == "1") == (row["status"] == "passed")
        assert float(row["max_points"]) == POINTS[row["exercise"]]
        total = int(row["cases_total"])
        expected = round(POINTS[row["exercise"]] * int(row["cases_passed"]) / total, 2) if total and \
            row["status"] in ("passed", "failed") else 0.0
        assert float(row["points"]) == pytest.approx(expected)


def test_totals_file_for_the_lms(graded):
    totals = {row["student"]: row for row in graded["totals"]}
    assert list(graded["totals"][0]) == ["student", "points", "max_points"]
    assert set(totals) == {row["student"] for row in graded["rows"]}
    for student, row in totals.items():
        mine = [r for r in graded["rows"] if r["student"] == student]
        assert float(row["points"]) == pytest.approx(sum(float(r["points"]) for r in mine))
        assert float(row["max_points"]) == sum(POINTS[r["exercise"]] for r in mine)
    assert float(totals["good_py"]["points"]) == float(totals["good_py"]["max_points"]) == 24


def test_feedback_never_shows_what_graded_calls_printed(graded):
    text = (graded["feedback"] / "prints.txt").read_text(encoding="utf-8")
    assert "private data" not in text, "printed graded inputs would reveal the instructor's cases"
    assert "not kept" in text
    assert "ex-08-code-n" in text and "Graded with the instructor's cases" in text
    assert (graded["feedback"] / "good_py.txt").is_file()


def test_a_practice_run_with_the_public_cases_keeps_the_first_lines_printed(tmp_path, monkeypatch):
    monkeypatch.delenv("DPCP_GRADING_SECRET", raising=False)
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "prints.py").write_text(PRINTS, encoding="utf-8")
    grade_folder(tmp_path / "subs", tmp_path / "out.csv", exercises="smallest_n", progress=False, book=None)
    text = (tmp_path / "out_feedback" / "prints.txt").read_text(encoding="utf-8")
    assert "private data: 0.1" in text, "the rubric's 'never prints private data' needs the output"
    assert "Graded with the public cases" in text


def test_partial_credit_counts_cases(graded):
    row = graded["table"][("styled", "smallest_n")]
    assert row["status"] == "passed"     # the styled answers pass
    bad = graded["table"][("bad", "my_quantile")]
    assert bad["status"] == "failed" and 0 <= int(bad["cases_passed"]) < int(bad["cases_total"])


# ------------------------------------------------------------------------------- correct and wrong answers

def test_good_submissions_pass(graded):
    for student in ("good_py", "good_nb"):
        for function in FUNCTIONS:
            row = graded["table"][(student, function)]
            assert row["status"] == "passed" and row["feedback"] == "", (student, function, row["feedback"])


def test_wrong_submissions_get_the_checkers_feedback_without_expected_values(graded):
    assert all(_status(graded, "bad", f) == "failed" for f in FUNCTIONS)
    assert "interpolate" in _feedback(graded, "bad", "my_quantile")
    assert "LAC" in _feedback(graded, "bad", "my_aps_sets")
    for function in FUNCTIONS:
        feedback = _feedback(graded, "bad", function)
        assert "expected" not in feedback and "alpha=" not in feedback, feedback


def test_crashes_are_recorded_and_grading_goes_on(graded):
    assert "ZeroDivisionError" in _feedback(graded, "crashing", "my_quantile")
    assert "dtype" in _feedback(graded, "crashing", "my_aps_sets")
    assert "process died" in _feedback(graded, "crashing", "my_interval")
    assert _status(graded, "crashing", "smallest_n") == "passed"    # a fresh process after the crash
    for function in ("my_quantile", "smallest_n"):
        assert _status(graded, "exits", function) == "not submitted"


def test_hanging_submissions_time_out_per_exercise(graded):
    assert "took longer than 3 s" in _feedback(graded, "hanging", "my_quantile")
    assert "stopped it" in _feedback(graded, "hanging", "my_quantile")
    assert "took longer than 3 s" in _feedback(graded, "hanging", "my_interval")
    assert _status(graded, "hanging", "smallest_n") == "passed"
    assert _status(graded, "hanging", "my_aps_sets") == "not submitted"
    # a statement that loads forever blocks only the exercise that needs it
    assert _status(graded, "loads_forever", "my_quantile") == "not graded"
    assert "loading" in _feedback(graded, "loads_forever", "my_quantile")
    assert _status(graded, "loads_forever", "smallest_n") == "passed"


# ----------------------------------------------------------------------------- section 2: what is handed in

def test_styled_answers_grade_like_in_the_notebook(graded):
    """Tuple constants, definitions inside if/with, a %%time answer cell, magics assigned to names."""
    for function in ("smallest_n", "my_interval"):
        assert _status(graded, "styled", function) == "passed", _feedback(graded, "styled", function)


def test_duplicate_and_malformed_submissions_produce_rows(graded):
    for function in FUNCTIONS:
        assert _status(graded, "dup", function) == "not graded"
        assert "two submissions" in _feedback(graded, "dup", function)
        assert _status(graded, "malformed", function) == "not graded"
        assert "not a valid notebook" in _feedback(graded, "malformed", function)


def test_nbformat_3_notebooks_are_read(graded):
    assert _status(graded, "nb3", "smallest_n") == "passed"


def test_handout_chapter_10_with_an_answer_appended_loads_in_seconds(tmp_path):
    from dpcp_tutorial.course import student_edition

    notebook = student_edition.strip_notebook(json.loads((ROOT / "book" / "10_private_medians.ipynb").read_text()))
    solutions = SOLUTIONS.read_text(encoding="utf-8")
    answer = "%%time\nimport numpy as np\n\n" + solutions[solutions.index("def worst_case"):
                                                            solutions.index("# chapter 11")]
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "source": answer, "outputs": [],
                              "execution_count": None})
    path = tmp_path / "ada.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    submission = load_submission([path], "ada")
    needed = _source.needed_units(submission.units, ["worst_case", "langevin_step"])
    assert all("run_experiment" not in unit.source for unit in needed), "the chapter's experiment must not run"
    start = time.monotonic()
    rows = grade_submission("ada", [path], ["ch10"], secret=SECRET)
    seconds = time.monotonic() - start
    assert [row.status for row in rows] == ["passed", "passed"], rows
    assert seconds < 30, f"grading the hand-out chapter 10 took {seconds:.1f} s"


# ------------------------------------------------------------------------------------ section 1: integrity

def test_harness_patch_does_not_pass(graded):
    for function in FUNCTIONS:
        assert _status(graded, "harness_patch", function) in ("failed", "not graded"), function
        assert float(graded["table"][("harness_patch", function)]["points"]) == 0


def test_checker_module_patch_does_not_pass(graded):
    assert _status(graded, "checker_patch", "my_quantile") == "not graded"
    assert float(graded["table"][("checker_patch", "my_quantile")]["points"]) == 0


def test_forged_pipe_messages_do_not_pass(graded):
    for function in ("my_quantile", "smallest_n"):
        row = graded["table"][("forger", function)]
        assert row["status"] in ("failed", "not graded") and float(row["points"]) == 0, row


@pytest.mark.parametrize("student,function", [("imports_alias", "my_quantile"), ("imports_wrapper", "my_quantile"),
                                              ("imports_wrapper", "my_aps_sets"), ("imports_wrapper", "my_interval"),
                                              ("imports_helper", "smallest_n")])
def test_using_the_package_implementation_is_not_graded(graded, student, function):
    row = graded["table"][(student, function)]
    assert row["status"] == "not graded", row
    assert "uses the package's" in row["feedback"]


def test_a_dynamic_import_of_the_package_finds_nothing_in_the_sandbox(graded):
    """The static check cannot see a computed module name; the sandbox has no such module."""
    row = graded["table"][("imports_dynamic", "my_quantile")]
    assert row["status"] == "failed" and float(row["points"]) == 0, row
    assert "raised ModuleNotFoundError" in row["feedback"]


def test_rewriting_other_submissions_and_the_output_has_no_effect(graded):
    assert _status(graded, "a_rewriter", "smallest_n") == "failed"
    for student in ("good_py", "nb3", "crashing", "hanging"):
        assert _status(graded, student, "smallest_n") == "passed", student
    assert "daemon,1000" not in graded["out"].read_text(encoding="utf-8")


def test_a_daemon_does_not_outlive_the_grader(graded):
    assert not graded["marker"].exists(), "a process of a submission survived the grading"
    assert "daemon,1000" not in graded["out"].read_text(encoding="utf-8")


def test_memory_limit(graded):
    row = graded["table"][("memory", "smallest_n")]
    assert row["status"] == "failed" and ("MemoryError" in row["feedback"] or "memory" in row["feedback"]), row


def test_graded_cases_come_from_the_secret(tmp_path):
    """A submission that hard-codes the public cases' answers passes the public cases, not the secret's."""
    from dpcp_tutorial.course.exercises import check_conformal_quantile
    from dpcp_tutorial.conformal import conformal_quantile

    lookup = {}
    for case in check_conformal_quantile.spec.cases(None):
        lookup[(case.scores.size, round(float(case.scores.sum()), 9), case.alpha)] = conformal_quantile(case.scores,
                                                                                                      case.alpha)
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "hardcoded.py").write_text(textwrap.dedent(f'''
        import math
        ANSWERS = {lookup!r}
        def my_quantile(scores, alpha):
            return ANSWERS.get((len(scores), round(float(sum(scores)), 9), alpha), 0.0)
    ''').replace("inf", "math.inf"), encoding="utf-8")
    public = grade_folder(tmp_path / "subs", exercises="ex-01-code-quantile", progress=False, book=None)
    secret = grade_folder(tmp_path / "subs", exercises="ex-01-code-quantile", progress=False, book=None,
                          secret=SECRET)
    assert public[0].status == "passed"
    assert secret[0].status == "failed" and secret[0].cases_passed == 0


@pytest.mark.slow
def test_practice_run_without_a_sandbox_ends_a_daemon(tmp_path, monkeypatch):
    monkeypatch.delenv("DPCP_GRADING_SECRET", raising=False)
    marker = tmp_path / "marker"
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "daemon.py").write_text(_daemon(marker, tmp_path / "out.csv"), encoding="utf-8")
    rows = grade_folder(tmp_path / "subs", tmp_path / "out.csv", exercises="smallest_n", progress=False,
                        book=None, unsafe_no_sandbox=True)
    assert rows[0].status == "failed" and rows[0].isolation.startswith("none")
    time.sleep(3.5)
    assert not marker.exists(), "the subreaper did not end the daemon"
    assert "daemon,1000" not in (tmp_path / "out.csv").read_text(encoding="utf-8")


@pytest.mark.slow
def test_instructor_notebook_handed_in_is_not_graded(tmp_path):
    (tmp_path / "subs").mkdir()
    shutil_copy = (ROOT / "book" / "08_troubleshooting.ipynb").read_text(encoding="utf-8")
    (tmp_path / "subs" / "copied.ipynb").write_text(shutil_copy, encoding="utf-8")
    rows = grade_folder(tmp_path / "subs", exercises="ch08", progress=False, book=ROOT / "book", secret=SECRET)
    assert rows and all(row.status == "not graded" for row in rows), rows
    assert all("instructor edition" in row.feedback for row in rows)
    # the same functions retyped by hand (here: the reference solutions file) with the copy check pointed
    # at the book are refused too, and graded when the check is off
    (tmp_path / "subs" / "copied.ipynb").unlink()
    (tmp_path / "subs" / "retyped.py").write_text(SOLUTIONS.read_text(encoding="utf-8"), encoding="utf-8")
    assert all(r.status == "not graded" for r in grade_folder(tmp_path / "subs", exercises="ch08", progress=False,
                                                              book=ROOT / "book", secret=SECRET))
    assert all(r.status == "passed" for r in grade_folder(tmp_path / "subs", exercises="ch08", progress=False,
                                                          book=None, secret=SECRET))


# ----------------------------------------------------------------------------------------- units and table

def test_loading_reads_only_what_an_answer_needs():
    submission = load_submission([], "x")
    assert submission.units == []
    cells = [_source.Cell("a.ipynb, cell 1", text, frozenset()) for text in STYLED_CELLS]
    units, problems = _source.units_of(cells, "x")
    assert not problems
    needed = _source.needed_units(units, ["smallest_n"])
    text = "\n".join(u.source for u in needed)
    assert "SCALE" in text and "def smallest_n" in text and "run_experiment" not in text
    assert _source.python_source("%%bash\necho") is None
    assert _source.python_source("%%time\nx = 1").strip() == "x = 1"
    assert _source.python_source("if True:\n    %matplotlib inline\nx = !ls").splitlines() == \
        ["if True:", "    pass", "pass"]


def test_package_uses_and_refusals():
    cells = [_source.Cell("a.py", IMPORTS_WRAPPER, frozenset())]
    units, _ = _source.units_of(cells, "x")
    names = frozenset({"conformal_quantile", "aps_prediction_set"})
    for function, implemented in [("my_quantile", "dpcp_tutorial.conformal.conformal_quantile"),
                                  ("my_aps_sets", "dpcp_tutorial.conformal.aps_prediction_set")]:
        needed = _source.needed_units(units, [function])
        uses = _source.package_uses(needed, [function], names)
        assert "implementation" in _source.forbidden(uses, (implemented,))
    for tooling in ("dpcp_tutorial.course", "dpcp_tutorial"):     # the course tooling's folder and former names
        assert _source.forbidden({f"{tooling}.exercises.check_conformal_quantile"}, ()) is None
        assert "checker helper" in _source.forbidden({f"{tooling}.exercises.ch12.whitened_spatial_depth"}, ())
        assert "grader" in _source.forbidden({f"{tooling}.grading._source.normalised"}, ())
    assert "course tooling" in _source.forbidden({"dpcp_tutorial.course.make_nbgrader.solutions"}, ())
    assert _source.forbidden({"dpcp_tutorial.private_quantile_level"},
                             ("dpcp_tutorial.quantile.private_quantile",)) is None


def test_every_exercise_has_points_and_one_row():
    table = grading_table()
    labels = [e.label for e in table]
    assert len(labels) == len(set(labels))
    assert set(labels) == set(POINTS), "book/for_instructors.md's rubric and points.POINTS list every exercise"
    code = next(e for e in table if e.label == "ex-04-code")
    assert set(code.functions) == {"my_round_up", "my_qtilde"} and len(code.checkers) == 2


def test_points_are_declared_with_the_checkers_and_must_agree(monkeypatch):
    from dpcp_tutorial.course import exercises
    from dpcp_tutorial.course.exercises import _common
    from dpcp_tutorial.course.exercises._common import checker
    from dpcp_tutorial.course.grading import points

    monkeypatch.setattr(_common, "REGISTRY", dict(_common.REGISTRY))     # the checker made below stays here

    assert {label: value for label, value in POINTS.items() if value != 6} == {"ex-04-assemble": 12,
                                                                              "ex-06-assemble": 12}
    assert list(POINTS) == list(dict.fromkeys(e.label for e in grading_table()))      # chapter order
    assert {e.label: e.max_points for e in grading_table()} == POINTS
    checkers = exercises.all_checkers()
    def check_other(ctx):
        """Check a reader's ``my_round_up_again(scores, m)``."""

    other = checker(function="my_round_up_again", exercise="ex-04-code", points=12)(check_other)
    monkeypatch.setattr(exercises, "all_checkers", lambda: {**checkers, "check_other": other})
    with pytest.raises(ValueError, match="ex-04-code declare different points"):
        points.exercise_points()
    for bad in (0, -6, True, "6"):
        with pytest.raises(ValueError, match="points must be a positive number"):
            checker(function="f", exercise="ex-99", points=bad)


def test_every_exercise_is_listed_with_its_function(capsys):
    table = exercise_table()
    assert ("ch01", "ex-01-code-quantile", "my_quantile", "check_conformal_quantile") in table
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "my_quantile" in out and "isolation on this machine" in out
    with pytest.raises(SystemExit):
        main([".", "--exercises", "no_such_exercise"])


def test_finding_submissions(graded):
    found = find_submissions(graded["folder"])
    assert [p.name for p in found["good_nb"]] == ["chapter01.ipynb"]   # checkpoints are ignored
    assert len(found["dup"]) == 2


def test_the_grading_page_lists_every_exercise():
    """The grading page's table and the API page's list of checkers are generated from the checkers, and current."""
    from dpcp_tutorial.course import exercises, pages

    assert not pages.stale(), "a generated list is out of date: run python -m dpcp_tutorial.course.pages"
    page = (ROOT / "book" / "grading.md").read_text(encoding="utf-8")
    for chapter, label, function, checker in exercise_table():
        names = ", ".join(f"`{f.strip()}`" for f in function.split(","))
        row = f"| {int(chapter[2:])} | {{ref}}`{label} <{label}>` | {names} | `{checker}` |"
        assert row in page, f"book/grading.md lacks the row {row}"
    api = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    assert all(f".. autofunction:: {name}\n" in api for name in exercises.all_checkers())
    labels = {label for _, label, _, _ in exercise_table()}
    # an exercise named in the text is a link (the CSV column's example value, "e.g. `ex-...`", is a value)
    for name in ("grading.md", "for_instructors.md"):
        text = (ROOT / "book" / name).read_text(encoding="utf-8")
        plain = {m for m in re.findall(r"(?<!e\.g\. )`(ex-\d\d-[\w-]+)`", text) if m in labels}
        assert not plain, f"book/{name} names exercises without linking them: {sorted(plain)}"


def test_the_generated_lists_are_rewritten_and_need_their_markers(tmp_path):
    from dpcp_tutorial.course import pages

    for page in pages.GENERATED:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / page).read_text(encoding="utf-8")
        text = text.replace("`check_conformal_quantile` |", "`check_renamed` |")          # a row of the table
        text = text.replace("   check_conformal_quantile\n", "   check_renamed\n")        # an entry of the summary
        (tmp_path / page).write_text(text, encoding="utf-8")
    assert pages.stale(tmp_path) == list(pages.GENERATED)
    assert pages.write(tmp_path) == list(pages.GENERATED) and pages.stale(tmp_path) == []
    for page in pages.GENERATED:
        assert (tmp_path / page).read_text(encoding="utf-8") == (ROOT / page).read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="one generated list"):
        pages.render("book/grading.md", "no markers here")


def test_isolation_is_reported():
    assert _isolation.describe()
