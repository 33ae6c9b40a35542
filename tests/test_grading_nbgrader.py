"""The nbgrader path (issue 21 section 5): the course generated from the book, graded offline by nbgrader.

``tools/make_nbgrader.py`` writes the source notebook of chapter 1 from the chapter, ``nbgrader
generate_assignment`` makes the student version, two submissions (the solutions, and wrong answers typed
into the student version) are autograded with the instructor's secret in the environment, and ``nbgrader
export`` writes the grades: full marks for the solutions, partial credit counted from the cases for the
wrong answers. nbgrader comes from PyPI with the ``[course]`` extra; without it this module is skipped.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is the [course] extra: pip install -e '.[course]'")

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("make_nbgrader", ROOT / "tools" / "make_nbgrader.py")
make_nbgrader = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(make_nbgrader)

pytestmark = pytest.mark.slow     # two kernels and nbgrader's database: about 30 s


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    out = tmp_path_factory.mktemp("nbgrader")
    names = make_nbgrader.generate(out, {1}, release=True)
    assert names == ["ch01"]
    return out / "course"


def test_source_notebook_is_read_from_the_chapter(course):
    notebook = json.loads((course / "source" / "ch01" / "ch01.ipynb").read_text(encoding="utf-8"))
    chapter = (ROOT / "book" / "01_conformal_prediction.ipynb").read_text(encoding="utf-8")
    cells = notebook["cells"]
    solutions = [c for c in cells if c["metadata"].get("nbgrader", {}).get("solution")]
    tests = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade")]
    assert len(solutions) == len(tests) == 2
    assert all("### BEGIN SOLUTION" in _source(c) and "### END SOLUTION" in _source(c) for c in solutions)
    assert all("### BEGIN HIDDEN TESTS" in _source(c) and "secret=True" in _source(c) for c in tests)
    assert {c["metadata"]["nbgrader"]["points"] for c in tests} == {6.0}
    texts = [_source(c) for c in cells if c["cell_type"] == "markdown"]
    assert any("my_quantile(scores, alpha)" in t and "my_quantile(scores, alpha)" in chapter for t in texts)
    release = json.loads((course / "release" / "ch01" / "ch01.ipynb").read_text(encoding="utf-8"))
    text = "\n".join(_source(c) for c in release["cells"])
    assert "BEGIN SOLUTION" not in text and "raise NotImplementedError()" in text and "secret=True" not in text


def test_autograde_and_export_offline(course):
    release = json.loads((course / "release" / "ch01" / "ch01.ipynb").read_text(encoding="utf-8"))
    for cell in release["cells"]:
        if "def my_quantile" in _source(cell):
            cell["source"] = "def my_quantile(scores, alpha):\n    return float(np.quantile(scores, 1 - alpha))\n"
    for student, notebook in [("good", json.loads((course / "source" / "ch01" / "ch01.ipynb").read_text())),
                              ("wrong", release)]:
        folder = course / "submitted" / student / "ch01"
        folder.mkdir(parents=True)
        (folder / "ch01.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    env = dict(os.environ, DPCP_GRADING_SECRET="a course secret")
    make_nbgrader.run_nbgrader(["autograde", "ch01", "--create", "--force"], course, env)
    make_nbgrader.run_nbgrader(["export"], course, env)
    with open(course / "grades.csv", newline="", encoding="utf-8") as handle:
        grades = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert float(grades["good"]["score"]) == float(grades["good"]["max_score"]) == 12.0
    wrong = float(grades["wrong"]["score"])
    assert 0.0 < wrong < 6.0, "the wrong my_quantile earns partial credit, the missing my_aps_sets nothing"
    shutil.rmtree(course / "autograded", ignore_errors=True)
