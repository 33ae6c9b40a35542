"""Batch grading of a folder with good, wrong, crashing and hanging submissions writes one CSV and never stops."""

import csv
import json
import shutil
from pathlib import Path

import pytest

from dpcp_tutorial.grading import exercise_table, find_submissions, grade_submission, load_submission, main

SOLUTIONS = Path(__file__).with_name("exercise_solutions.py")

GOOD_CELLS = [
    "%matplotlib inline\nimport math\n!echo hello\nimport numpy as np",
    "print('exploring')\nfor _ in range(3):\n    pass",
    SOLUTIONS.read_text(encoding="utf-8"),
    "from dpcp_tutorial.exercises import check_conformal_quantile\nassert check_conformal_quantile(my_quantile)",
    "while True:\n    pass  # an experiment left running: not a definition, so never executed",
    "%%bash\necho a cell magic",
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


def smallest_n(alpha, epsilon1, epsilon2, delta):
    return math.floor(2 / (math.exp(-epsilon1) * (alpha - delta) * epsilon2)) + 1
'''

HANGING = '''
import math
import time

import numpy as np


def my_quantile(scores, alpha):
    while True:
        pass


def my_interval(y_pred, qhat, bound):
    time.sleep(1000)


def private_mean(x, lower, upper, epsilon, rng):
    time.sleep(0.01)     # each call is far under the time limit; the exercise's 12000 calls are not
    x = np.clip(x, lower, upper)
    return float(x.mean() + rng.laplace(0.0, (upper - lower) / (x.size * epsilon)))


def smallest_n(alpha, epsilon1, epsilon2, delta):
    time.sleep(0.7)      # slow but in time: passes
    return math.floor(2 / (math.exp(-epsilon1) * (alpha - delta) * epsilon2)) + 1
'''

LOADS_FOREVER = '''
import time

DATA = time.sleep(1000)


def my_quantile(scores, alpha):
    return 0.0
'''

EXITS = "import sys\nsys.exit(0)\nraise SystemExit(1)\n"


def _notebook(cells):
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [],
                                  "execution_count": None} for c in cells]
                       + [{"cell_type": "markdown", "metadata": {}, "source": "def markdown_only(): pass"}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("submissions")
    shutil.copy(SOLUTIONS, root / "good_py.py")
    (root / "good_nb").mkdir()
    (root / "good_nb" / "chapter01.ipynb").write_text(_notebook(GOOD_CELLS), encoding="utf-8")
    (root / "good_nb" / ".ipynb_checkpoints").mkdir()
    (root / "good_nb" / ".ipynb_checkpoints" / "chapter01-checkpoint.ipynb").write_text(_notebook([BAD]))
    (root / "bad.ipynb").write_text(_notebook([BAD]), encoding="utf-8")
    (root / "crashing.py").write_text(CRASHING, encoding="utf-8")
    (root / "hanging.py").write_text(HANGING, encoding="utf-8")
    (root / "loads_forever.py").write_text(LOADS_FOREVER, encoding="utf-8")
    (root / "exits.py").write_text(EXITS, encoding="utf-8")
    (root / "notes.txt").write_text("not a submission")
    return root


@pytest.fixture(scope="module")
def grades(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "grades.csv"
    assert main([str(folder), "--out", str(out), "--exercises", "ch01,ex-02-private-mean,smallest_n,ex-08-code-interval",
                 "--time-limit", "1", "--exercise-timeout", "6", "--jobs", "3", "--quiet"]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {(row["student"], row["function"]): row for row in rows}, rows


def test_one_row_per_student_and_exercise(grades):
    table, rows = grades
    assert list(rows[0]) == ["student", "exercise", "function", "passed", "feedback"]
    students = {"good_py", "good_nb", "bad", "crashing", "hanging", "loads_forever", "exits"}
    functions = {"my_quantile", "my_aps_sets", "my_interval", "smallest_n", "private_mean"}
    assert {row["student"] for row in rows} == students
    assert {row["function"] for row in rows} == functions
    assert len(rows) == len(students) * len(functions)
    assert table[("good_py", "my_interval")]["exercise"] == "ex-08-code-interval"


def test_good_submissions_pass(grades):
    table, _ = grades
    for student in ("good_py", "good_nb"):
        for function in ("my_quantile", "my_aps_sets", "my_interval", "smallest_n", "private_mean"):
            row = table[(student, function)]
            assert row["passed"] == "1" and row["feedback"] == "", (student, function, row["feedback"])


def test_wrong_submissions_get_the_checkers_feedback(grades):
    table, _ = grades
    assert all(table[("bad", f)]["passed"] == "0" for f in ("my_quantile", "my_aps_sets", "my_interval",
                                                             "smallest_n"))
    assert "interpolate" in table[("bad", "my_quantile")]["feedback"]
    assert "LAC" in table[("bad", "my_aps_sets")]["feedback"]
    assert "half-width" in table[("bad", "my_interval")]["feedback"]
    assert "off by one" in table[("bad", "smallest_n")]["feedback"]


def test_crashes_are_recorded_and_grading_goes_on(grades):
    table, _ = grades
    assert "ZeroDivisionError" in table[("crashing", "my_quantile")]["feedback"]
    assert "dtype" in table[("crashing", "my_aps_sets")]["feedback"]
    assert "process died" in table[("crashing", "my_interval")]["feedback"]
    assert table[("crashing", "smallest_n")]["passed"] == "1"   # graded in a fresh process after the crash
    for function in ("my_quantile", "smallest_n"):
        assert table[("exits", function)]["passed"] == "0"
        assert "defines no function" in table[("exits", function)]["feedback"]


def test_hanging_submissions_time_out(grades):
    table, _ = grades
    assert "took longer than 1 s" in table[("hanging", "my_quantile")]["feedback"]
    assert "stopped it" in table[("hanging", "my_quantile")]["feedback"]
    assert "background" in table[("hanging", "my_interval")]["feedback"]
    assert "took longer than 6 s" in table[("hanging", "private_mean")]["feedback"]
    assert table[("hanging", "smallest_n")]["passed"] == "1"    # graded in a fresh process after the kill
    assert "defines no function" in table[("hanging", "my_aps_sets")]["feedback"]
    for function in ("my_quantile", "my_aps_sets", "my_interval", "smallest_n", "private_mean"):
        row = table[("loads_forever", function)]
        assert row["passed"] == "0" and "loading" in row["feedback"]


def test_submission_time_limit(folder):
    rows = grade_submission("hanging", [folder / "hanging.py"], ["check_smallest_n", "check_bounded_interval"],
                            time_limit=5.0, exercise_timeout=30.0, submission_timeout=2.0)
    assert [row.passed for row in rows] == [False, False]
    assert all("as a whole ran past its time limit of 2 s" in row.feedback for row in rows), rows


def test_finding_and_loading_submissions(folder):
    found = find_submissions(folder)
    assert set(found) == {"good_py", "good_nb", "bad", "crashing", "hanging", "loads_forever", "exits"}
    assert [p.name for p in found["good_nb"]] == ["chapter01.ipynb"]   # checkpoints are ignored
    namespace, problems = load_submission([folder / "crashing.py"])
    assert callable(namespace["my_quantile"]) and callable(namespace["smallest_n"])
    assert any("ModuleNotFoundError" in p for p in problems)
    namespace, problems = load_submission(found["good_nb"])
    assert "markdown_only" not in namespace and callable(namespace["my_halfspace_depth"]) and not problems


def test_every_exercise_is_listed_with_its_function(capsys):
    table = exercise_table()
    assert len({row[2] for row in table}) == len(table)
    assert ("ch01", "ex-01-code-quantile", "my_quantile", "check_conformal_quantile") in table
    assert main(["--list"]) == 0
    assert "my_quantile" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([".", "--exercises", "no_such_exercise"])


def test_the_grading_page_lists_every_exercise():
    page = (Path(__file__).parents[1] / "book" / "grading.md").read_text(encoding="utf-8")
    pending = {"ex-02-attacker", "ex-04-assemble", "ex-06-assemble"}   # labels the chapters are adding
    for chapter, label, function, checker in exercise_table():
        names = ", ".join(f"`{f.strip()}`" for f in function.split(","))
        row = f"| {int(chapter[2:])} | {{ref}}`{label} <{label}>` | {names} | `{checker}` |"
        plain = f"| {int(chapter[2:])} | `{label}` | {names} | `{checker}` |"
        assert row in page or (label in pending and plain in page), f"book/grading.md lacks the row {row}"
