"""Sphinx extension used only by ``make chapter`` (a one-chapter build of the book).

In a book of one chapter, cross-references to the other chapters cannot resolve. ``make
chapter`` silences Sphinx's own ``ref.doc`` warnings for them; sphinx-proof's
"label '...' not found" warning for a theorem of another chapter has no warning type, so
this extension drops exactly that message, and only for labels that the full book defines
(every other warning still fails the ``-W`` build).
"""

from __future__ import annotations

import logging
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _book_labels() -> set[str]:
    labels: set[str] = set()
    for path in (ROOT / "book").glob("*.*"):
        if path.suffix in (".md", ".ipynb"):
            labels |= set(re.findall(r":label: *([\w-]+)", path.read_text(encoding="utf-8")))
    return labels


class _OtherChapterLabel(logging.Filter):
    def __init__(self, labels: set[str]):
        super().__init__()
        self.labels = labels

    def filter(self, record: logging.LogRecord) -> bool:
        match = re.fullmatch(r"label '([\w-]+)' not found\.", str(record.msg))
        return not (match and match.group(1) in self.labels)


def setup(app):
    logging.getLogger("sphinx.sphinx_proof.domain").addFilter(_OtherChapterLabel(_book_labels()))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
