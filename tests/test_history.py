"""No internal history anywhere: no issue numbers or tracker decisions in the code, its docstrings, the tests,
the benchmarks, the tools, the book's sources, the configuration, or the built API page of either edition
(the patterns: ``tests/_history.py``).

The built pages are checked here when they are built and newer than the sources they are made from (an older
build is skipped with the reason); CI checks them right after building them: the instructor edition in
``tests/check_pages.py`` (``make test``'s page stage), the student edition in ``tests/test_student_edition.py``
(its ``STUDENT_EDITION`` stage).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _history import BUILT_API_PAGES, built_page_problems, mentions, source_files

ROOT = Path(__file__).resolve().parents[1]

# the examples are built from pieces, so that this file passes its own scan
ISSUE, DECISION, PULL = "iss" + "ue", "deci" + "sion", "pull" + " request"


def test_no_source_file_speaks_of_the_tracker():
    files = source_files(ROOT)
    assert any(p.suffix == ".ipynb" for p in files) and any(p.parts[-2:] == ("dpcp_tutorial", "__init__.py")
                                                             for p in files)
    found = [f"{p.relative_to(ROOT)}: {m!r}" for p in files
             for m in mentions(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, ("write about the material, not about the project's history (no issue numbers or "
                       "decisions of the tracker):\n" + "\n".join(found))


def test_the_patterns_find_the_forms_of_history_and_spare_the_material():
    text = (f"the data set ({ISSUE} 13), see {ISSUE.title()} #7 and {ISSUE}s 13 and 19; the {DECISION} of "
            f"{ISSUE} 19 holds; The {ISSUE}'s case; the {ISSUE} lists by name; {PULL} 12")
    assert mentions(text) == [f"{ISSUE} 13", f"{ISSUE.title()} #7", f"{ISSUE}s 13", f"{DECISION} of {ISSUE}",
                              f"The {ISSUE}'s", f"the {ISSUE} lists", f"{PULL} 12"]
    material = (f"the {ISSUE} with a public bound is its width; tissue 3; this raises no {ISSUE}; "
                "use_issues_button=False; 13 issued keys")
    assert mentions(material) == []


def test_the_file_walk_skips_builds_environments_and_git(tmp_path):
    for name in ["a.py", "book/b.md", "book/c.ipynb", ".ci/run", "Makefile", "_build/html/x.md", ".venv/x.py",
                 "venv/y.py", ".git/z.md", "pkg.egg-info/w.txt", "data.json"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"{ISSUE} 1\n", encoding="utf-8")
    assert sorted(str(p.relative_to(tmp_path)) for p in source_files(tmp_path)) == sorted(
        [".ci/run", "Makefile", "a.py", "book/b.md", "book/c.ipynb"])


def test_built_pages_are_read_as_a_reader_sees_them(tmp_path):
    page = tmp_path / "api.html"
    page.write_text(f"<p>The RAND data (<em>{ISSUE}</em> 13).</p><script>var {ISSUE}s = 3;</script>",
                    encoding="utf-8")
    assert built_page_problems(page) == [f"{page}: '{ISSUE} 13'"]


def _sources_newest() -> float:
    paths = [ROOT / "book" / "api.md", *(ROOT / "dpcp_tutorial").rglob("*.py")]
    return max(p.stat().st_mtime for p in paths if p.is_file())


@pytest.mark.parametrize("edition", sorted(BUILT_API_PAGES))
def test_the_built_api_page_speaks_of_the_material_only(edition):
    page = ROOT / BUILT_API_PAGES[edition]
    if not page.is_file():
        pytest.skip(f"the {edition} is not built here ({BUILT_API_PAGES[edition]}: make book / make student; "
                    "CI checks it right after building it)")
    if page.stat().st_mtime < _sources_newest():
        pytest.skip(f"the built {edition} ({BUILT_API_PAGES[edition]}) is older than the package's sources: "
                    "rebuild it to check it")
    problems = built_page_problems(page)
    assert not problems, "the built API page speaks of the project's history:\n" + "\n".join(problems)
