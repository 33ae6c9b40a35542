"""The lists of the coding exercises that the book's pages show, generated from the checkers.

Each coding exercise's label, chapter, function name(s), checker and points are declared once, by its checker
(``@checker(exercise=..., function=..., points=...)`` in ``dpcp_tutorial/course/exercises/chNN.py``). Two
pages list them: the grading page's table of exercises, functions and checkers (``book/grading.md``) and the
API page's list of checkers (``book/api.md``). Those lists are generated here, each between two comment lines
(MyST ``%`` comments, which the built page does not show) that say so; edit the checkers, not the lists.

Usage::

    python -m dpcp_tutorial.course.pages            # rewrite the generated lists
    python -m dpcp_tutorial.course.pages --check    # exit 1 if one is out of date (tests/test_grading.py)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# the repository (the tool reads the book's sources: it runs from a clone, as `make` does)
ROOT = Path(__file__).resolve().parents[2]

COMMAND = "python -m dpcp_tutorial.course.pages"
BEGIN = f"% generated from the exercise checkers by `{COMMAND}`: do not edit until the end marker"
END = "% end of the generated list"


def grading_table() -> str:
    """The grading page's table: chapter, exercise (a link), function(s), checker; one row per checker, in the
    order of ``python -m dpcp_tutorial.course.grading --list``."""
    from .grading import exercise_table

    rows = ["| Chapter | Exercise | Function | Checker |", "|---|---|---|---|"]
    for chapter, label, function, checker in exercise_table():
        names = ", ".join(f"`{f.strip()}`" for f in function.split(","))
        rows.append(f"| {int(chapter[2:])} | {{ref}}`{label} <{label}>` | {names} | `{checker}` |")
    return "\n".join(rows)


def api_checkers() -> str:
    """The API page's reference of the checkers: a summary table, then each checker's docstring."""
    from . import exercises

    names = list(exercises.all_checkers())
    return "\n".join(["```{eval-rst}", ".. currentmodule:: dpcp_tutorial.course.exercises", "", ".. autosummary::",
                      "", *(f"   {name}" for name in names), "", ".. autoclass:: ExerciseResult",
                      "   :members: report, score", ".. autofunction:: fixed_cases",
                      ".. autofunction:: grade_fixed_cases", *(f".. autofunction:: {name}" for name in names),
                      "```"])


#: page -> the function that writes its generated list
GENERATED = {"book/grading.md": grading_table, "book/api.md": api_checkers}

_BLOCK = re.compile(rf"^{re.escape(BEGIN)}\n(?P<body>.*?)^{re.escape(END)}$", re.S | re.M)


def render(page: str, text: str) -> str:
    """``text`` (the page ``page``) with its generated list rewritten."""
    if len(_BLOCK.findall(text)) != 1:
        raise ValueError(f"{page} must hold one generated list between the lines {BEGIN!r} and {END!r}")
    return _BLOCK.sub(lambda _: f"{BEGIN}\n\n{GENERATED[page]()}\n\n{END}", text)


def stale(root: Path = ROOT) -> list[str]:
    """The pages whose generated list is out of date."""
    return [page for page in GENERATED
            if render(page, text := (root / page).read_text(encoding="utf-8")) != text]


def write(root: Path = ROOT) -> list[str]:
    """Rewrite the generated lists; return the pages that changed."""
    changed = stale(root)
    for page in changed:
        path = root / page
        path.write_text(render(page, path.read_text(encoding="utf-8")), encoding="utf-8")
    return changed


def main(argv: list[str]) -> int:
    if "--check" in argv:
        out = stale()
        print("\n".join(f"{page}: out of date; run {COMMAND}" for page in out) or "the generated lists are current")
        return 1 if out else 0
    changed = write()
    print("\n".join(f"rewrote the generated list of {page}" for page in changed) or "nothing to rewrite")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
