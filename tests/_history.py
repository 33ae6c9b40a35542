"""What the project must not say about its own history: the tracker's issue numbers and decisions (the
word issue followed by a number, or a decision of one). The code, its docstrings, the tests,
the benchmarks, the tools, the book's sources and the built API pages speak of the material only.

Used by ``tests/test_history.py`` (the sources, and the built pages where they are built), by
``tests/check_pages.py`` (the instructor edition's built API page, after ``make book``) and by
``tests/test_student_edition.py`` (the student edition's built API page, after ``make student``).
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

TRACKER = re.compile(
    r"\bissues?\s*#?\s*\d+"                                   # an issue's number
    r"|\bpull request\s*#?\s*\d+"
    r"|\b(?:decision|resolution) of (?:the )?issues?\b"
    r"|\b(?:the|this|that|foundation) issue's\b"              # an issue's case: the tracker's, not the material's
    r"|\bthe issue (?:lists|asks|says|decided|requires)\b",
    re.I)

SUFFIXES = {".py", ".md", ".ipynb", ".cfg", ".toml", ".yml", ".yaml", ".txt"}
NAMES = {"Makefile", "run"}         # the Makefile and the CI entry point (.ci/run)
SKIPPED_FOLDERS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache", ".ipynb_checkpoints"}

#: the built API page of each edition, relative to the repository (``make book``, ``make student``)
BUILT_API_PAGES = {"instructor edition": Path("_build/html/book/api.html"),
                   "student edition": Path("_build_student/html/book/api.html")}


def mentions(text: str) -> list[str]:
    """The history mentions in ``text``, each once, in order."""
    return list(dict.fromkeys(" ".join(m.group(0).split()) for m in TRACKER.finditer(text)))


def source_files(root: Path) -> list[Path]:
    """The repository's text sources: code, tests, benchmarks, tools, the book, configuration (not ``.git``,
    virtual environments or build folders)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith("_build")
                         and not d.endswith(".egg-info") and not (d.startswith(".") and d != ".ci"))
        found += [Path(folder) / f for f in sorted(files) if Path(f).suffix in SUFFIXES or f in NAMES]
    return found


def page_text(page: Path) -> str:
    """The text a reader sees on a built HTML page (tags dropped, entities decoded)."""
    raw = page.read_text(encoding="utf-8", errors="replace")
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def built_page_problems(page: Path) -> list[str]:
    """``page: mention`` for every history mention on a built page."""
    return [f"{page}: {found!r}" for found in mentions(page_text(page))]
