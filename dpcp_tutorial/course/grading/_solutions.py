"""The instructor edition's solutions and the book's reference files, to refuse an answer copied from them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from . import _source

ANY_NAME = "*"
"""The key of :func:`book_solutions` under which the reference files' functions are kept, whatever their name."""


def book_solutions(book: Path | None) -> dict[str, set[str]]:
    """Normalised code of every function in the book's solution cells and ``{solution}`` blocks, by name, and
    (under ``"*"``, without their names) the substantial functions of the reference files ``book/reference``."""
    if book is None or not Path(book).is_dir():
        return {}
    fence = re.compile(r"^(`{3,}|:{3,})\{solution\}[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
    code_fence = re.compile(r"^(`{3,})(?:python|\{code-cell\}[^\n]*)?[ \t]*\n(.*?)^\1[ \t]*$", re.S | re.M)
    sources = []
    for path in sorted(Path(book).glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for cell in cells:
            text = "".join(cell.get("source", [])) if isinstance(cell.get("source"), list) else str(cell.get("source", ""))
            if cell.get("cell_type") == "code" and "solution" in cell.get("metadata", {}).get("tags", []):
                sources.append(text)
            elif cell.get("cell_type") == "markdown":
                for block in fence.finditer(text):
                    sources += [m.group(2) for m in code_fence.finditer(block.group(2))]
    out: dict[str, set[str]] = {}
    for text in sources:
        units, _ = _source.units_of([_source.Cell("book", text, frozenset())], "book")
        for name, dumps in _source.function_sources(units).items():
            out.setdefault(name, set()).update(dumps)
    # the copy-ready reference files, under any name ("*": a renamed copy is still a copy)
    out[ANY_NAME] = _source.reference_functions(Path(book) / "reference")
    return out


def default_book() -> Path | None:
    """The ``book`` folder next to the package, when there is one (a checkout of the course)."""
    candidate = Path(__file__).resolve().parents[2] / "book"
    return candidate if candidate.is_dir() else None

