"""The copy check also knows the book's reference files (``book/reference/*.py``).

Several reference files answer coding exercises (the split-conformal quantile of ex-01-code-quantile, the
spatial depth of ex-09-spatial): a submission that copies one, renamed or called through a wrapper, is not
graded when the grader compares with the book (the default), and is graded like any code without the check.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpcp_tutorial.course.grading import book_solutions, grade_folder
from dpcp_tutorial.course.grading import _source

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "book" / "reference"
SECRET = "copy check secret"


def _units(text: str):
    return _source.units_of([_source.Cell("sub.py", text, frozenset())], "x")[0]


def test_renamed_and_wrapped_copies_of_a_reference_file_are_found():
    reference = _source.reference_functions(REFERENCE)
    assert len(reference) >= 10
    assert book_solutions(ROOT / "book")["*"] == reference
    quantile = (REFERENCE / "conformal_quantile.py").read_text(encoding="utf-8")
    renamed = quantile.replace("def conformal_quantile(", "def my_quantile(")
    assert "my_quantile" in _source.copied_references(_source.needed_units(_units(renamed), ["my_quantile"]),
                                                      reference)
    wrapped = quantile + "\n\ndef my_quantile(scores, alpha):\n    return conformal_quantile(scores, alpha)\n"
    assert "conformal_quantile" in _source.copied_references(_source.needed_units(_units(wrapped), ["my_quantile"]),
                                                             reference)
    depth = (REFERENCE / "private_median.py").read_text(encoding="utf-8")
    depth = depth.replace("def spatial_depth(", "def my_spatial_depth(")
    assert "my_spatial_depth" in _source.copied_references(
        _source.needed_units(_units(depth), ["my_spatial_depth"]), reference)
    own = ("import math\nimport numpy as np\n\ndef my_quantile(scores, alpha):\n    n = len(scores)\n"
           "    k = math.ceil((n + 1) * (1 - alpha))\n"
           "    return math.inf if k > n else float(np.sort(scores)[k - 1])\n")
    assert _source.copied_references(_source.needed_units(_units(own), ["my_quantile"]), reference) == []


@pytest.mark.slow
def test_a_copied_reference_file_is_not_graded(tmp_path):
    (tmp_path / "subs").mkdir()
    quantile = (REFERENCE / "conformal_quantile.py").read_text(encoding="utf-8")
    (tmp_path / "subs" / "copied.py").write_text(quantile.replace("def conformal_quantile(", "def my_quantile("),
                                                 encoding="utf-8")
    rows = grade_folder(tmp_path / "subs", exercises="my_quantile", progress=False, book=ROOT / "book",
                        secret=SECRET)
    assert [r.status for r in rows] == ["not graded"], rows
    assert "reference implementations" in rows[0].feedback and rows[0].points == 0
    rows = grade_folder(tmp_path / "subs", exercises="my_quantile", progress=False, book=None, secret=SECRET)
    assert [r.status for r in rows] == ["passed"], rows
