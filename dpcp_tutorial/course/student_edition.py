"""Build the student edition of the book: no solutions anywhere.

Usage (``make student``)::

    python -m dpcp_tutorial.course.student_edition [--out _build_student] [--no-build]

What it does, without re-executing any chapter (the committed outputs are used):

1. copies the book's sources into ``<out>/src`` and strips them:

   * every sphinx-exercise ``{solution}`` block (backtick or colon fences) is removed
     from every page and chapter;
   * every notebook cell tagged ``solution`` (the cells that run the checkers on the
     reference solutions, and hidden cells that only compute numbers quoted in a
     solution) is removed;
   * the instructor-only pages (``INSTRUCTOR_ONLY``) are dropped from the table of
     contents, and links to them become plain text;
   * the copy-ready reference files (``book/reference/*.py``) are neither printed nor
     copied: several answer coding exercises (a note says so where they were included);

2. writes a ``_config.yml`` with notebook execution off, without ``sphinx.ext.viewcode``
   (its source pages would show the checkers' reference solutions) and with a small
   extension that renders ``dpcp_tutorial.course.exercises`` functions by signature only;

3. builds the HTML into ``<out>/html`` (``jupyter-book build -W``) and copies the
   stripped chapter notebooks, the ones to hand out, into ``<out>/notebooks``.

``tests/test_student_edition.py`` builds the edition and fails if any solution marker or
any line of solution code appears in its HTML or notebooks.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys

# the repository (the tool reads the book's sources: it runs from a clone, as `make` does)
ROOT = pathlib.Path(__file__).resolve().parents[2]

#: pages that exist only in the instructor edition
INSTRUCTOR_ONLY = ("book/for_instructors", "book/answer_key", "book/grading")

#: a fenced sphinx-exercise solution: opening fence of 3+ backticks or colons, closed by
#: the same fence on a line of its own
SOLUTION_BLOCK = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}[^\n]*\n.*?^(?P=fence)[ \t]*\n?",
                            re.S | re.M)

STUDENT_EXTENSION = '''"""Render dpcp_tutorial.course.exercises by signature only (student edition)."""

NOTE = "Checker for one of the chapters' coding exercises; see the exercise for what it checks."


def _strip(app, what, name, obj, options, lines):
    if name.startswith(("dpcp_tutorial.course.exercises", "dpcp_tutorial.exercises")):
        lines[:] = [NOTE] if what in ("function", "method") else []


def setup(app):
    app.connect("autodoc-process-docstring", _strip)
    return {"parallel_read_safe": True}
'''


#: what the student edition says instead of the instructor edition's "Running the chapters" (which points to
#: launch buttons the edition removes and to cloning the repository, which holds the instructor edition)
STUDENT_RUNNING = """* **The notebooks:** your instructor hands out the chapters' notebooks and the book's package. Install the
  package into a Python environment as your instructor says (for instance `pip install` the file you were
  given), open a notebook in Jupyter and run it from the top; every exercise's checker runs in the notebook
  (`from dpcp_tutorial.course.exercises import check_...`) on the public cases and explains what is wrong.
* **From your own code:** `import dpcp_tutorial` in that environment.
"""

#: a literalinclude of a copy-ready reference file (``book/reference/*.py``): several of them answer coding
#: exercises (the split-conformal quantile, spatial depth, the private quantile), so the student edition prints
#: none of them
REFERENCE_INCLUDE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{literalinclude\}[ \t]+(?:\.\./)?(?:book/)?reference/"
                               r"(?P<file>[\w.-]+)[^\n]*\n.*?^(?P=fence)[ \t]*\n?", re.S | re.M)

REFERENCE_NOTE = """```{{note}}
The copy-ready file `{file}` is not printed in the student edition: it answers some of the coding exercises.
The package's version is documented in the API reference; your instructor may hand out the file once the
problem sets are graded.
```
"""

#: phrases the student edition must not contain (tests/test_student_edition.py)
INSTRUCTOR_PHRASES = ("launch button", "rocket icon", "clone the repository")


def student_page(name: str, text: str) -> str:
    """A page's text for the student edition: solutions stripped, instructor pages unlinked, and no promise of
    launch buttons or of the instructor repository."""
    text = _unlink_instructor_pages(strip_solutions(text))
    text = REFERENCE_INCLUDE.sub(lambda m: REFERENCE_NOTE.format(file=m.group("file")), text)
    # the bullet list that opens the section "Running the chapters" (bullets and their indented continuations)
    bullets = re.compile(r"(^## Running the chapters[ \t]*\n\n)((?:\* .*\n(?:  .*\n)*)+)", re.M)
    text = bullets.sub(lambda m: m.group(1) + STUDENT_RUNNING, text)
    kept = [line for line in text.split("\n") if not any(p in line.lower() for p in INSTRUCTOR_PHRASES)]
    return "\n".join(kept)


def strip_solutions(text: str) -> str:
    """Remove every ``{solution}`` block from MyST text (and the blank lines it leaves)."""
    text = SOLUTION_BLOCK.sub("", text)
    return re.sub(r"\n{3,}", "\n\n", text)


def _instructor_labels() -> dict[str, str]:
    """MyST labels defined on the instructor-only pages, with the title of their page."""
    labels = {}
    for page in INSTRUCTOR_ONLY:
        path = ROOT / (page + ".md")
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            title = re.search(r"^# +(.+?)\s*$", text, re.M)
            title = title.group(1) if title else page.split("/")[-1]
            found = re.findall(r"^\(([\w-]+)\)=\s*$", text, re.M)
            found += re.findall(r"^:label: *([\w-]+)\s*$", text, re.M)
            labels.update(dict.fromkeys(found, title))
    return labels


def _unlink_instructor_pages(text: str) -> str:
    for label, title in _instructor_labels().items():
        # {ref}`text <label>` -> text ; {ref}`label` -> *title* (in the instructor edition)
        text = re.sub(r"\{ref\}`([^`<]*?)\s*<" + re.escape(label) + ">`", r"\1", text)
        text = text.replace("{ref}`" + label + "`", f"*{title}* (in the instructor edition)")
    names = "|".join(re.escape(p.split("/")[-1]) for p in INSTRUCTOR_ONLY)
    # {doc}`text <for_instructors>` -> text ; {doc}`for_instructors` -> the instructors' page
    text = re.sub(r"\{doc\}`([^`<]*?)\s*<(?:\.\./book/|book/)?(?:" + names + r")>`", r"\1", text)
    return re.sub(r"\{doc\}`(?:\.\./book/|book/)?(?:" + names + r")`",
                  "*For instructors* (in the instructor edition)", text)


def strip_notebook(nb: dict) -> dict:
    """Return a student copy of a chapter notebook (``nb`` is not modified).

    Every code cell of the chapter is marked (``metadata["dpcp_tutorial"]["chapter"]``, a digest of its
    source): the batch grader never runs an unchanged chapter cell of a hand-out, only the reader's own cells
    (and the chapter cells' imports).
    """
    from dpcp_tutorial.course.grading._source import chapter_mark

    nb = json.loads(json.dumps(nb))
    cells = []
    for cell in nb["cells"]:
        if "solution" in cell.get("metadata", {}).get("tags", []):
            continue
        if cell["cell_type"] == "markdown":
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell["source"] = student_page("", src)
        if cell["cell_type"] == "code":
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cell.setdefault("metadata", {})["dpcp_tutorial"] = {"chapter": chapter_mark(src)}
        cells.append(cell)
    nb["cells"] = cells
    return nb


def _student_toc(toc: dict) -> dict:
    def keep(entry):
        return entry.get("file") not in INSTRUCTOR_ONLY

    for part in toc.get("parts", []):
        part["chapters"] = [c for c in part["chapters"] if keep(c)]
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]]
    return toc


def _student_config(config: dict) -> dict:
    config["execute"]["execute_notebooks"] = "off"
    sphinx = config.setdefault("sphinx", {})
    sphinx["extra_extensions"] = [e for e in sphinx.get("extra_extensions", []) if e != "sphinx.ext.viewcode"]
    sphinx["local_extensions"] = {"student_edition_ext": "_ext"}
    config["title"] = config.get("title", "") + " (student edition)"
    # launch buttons would open the instructor notebooks from the repository
    config.pop("launch_buttons", None)
    config.setdefault("html", {}).update(use_repository_button=False, use_issues_button=False)
    return config


def prepare(out: pathlib.Path) -> pathlib.Path:
    """Write the stripped sources into ``out/src`` and return that directory."""
    import yaml     # PyYAML, which the book's build (jupyter-book) brings

    src = out / "src"
    if src.exists():
        shutil.rmtree(src)
    (src / "_ext").mkdir(parents=True)
    (src / "_ext" / "student_edition_ext.py").write_text(STUDENT_EXTENSION, encoding="utf-8")
    toc = _student_toc(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    (src / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False), encoding="utf-8")
    config = _student_config(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")))
    (src / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    for name in ("references.bib",):
        shutil.copy2(ROOT / name, src / name)
    excluded = {ROOT / (p + ".md") for p in INSTRUCTOR_ONLY} | {ROOT / (p + ".ipynb") for p in INSTRUCTOR_ONLY}
    for path in sorted((ROOT / "book").rglob("*")):
        if path.is_dir() or path in excluded or ".ipynb_checkpoints" in path.parts or "__pycache__" in path.parts:
            continue
        if path.parent == ROOT / "book" / "reference" and path.suffix == ".py":
            continue    # the copy-ready reference files answer exercises (REFERENCE_INCLUDE)
        target = src / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".ipynb":
            nb = strip_notebook(json.loads(path.read_text(encoding="utf-8")))
            target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        elif path.suffix == ".md":
            target.write_text(student_page(path.name, path.read_text(encoding="utf-8")), encoding="utf-8")
        else:
            shutil.copy2(path, target)
    return src


def build(out: pathlib.Path) -> None:
    """Prepare the sources, build the HTML and collect the notebooks to hand out."""
    src = prepare(out)
    jb = pathlib.Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb), "build", str(src), "-W", "--keep-going", "--all"], check=True)
    html = out / "html"
    if html.exists():
        shutil.rmtree(html)
    shutil.copytree(src / "_build" / "html", html)
    notebooks = out / "notebooks"
    if notebooks.exists():
        shutil.rmtree(notebooks)
    notebooks.mkdir()
    for path in sorted((src / "book").glob("[0-9][0-9]_*.ipynb")):
        shutil.copy2(path, notebooks / path.name)
    print(f"Student edition: open {html.resolve() / 'index.html'}; notebooks to hand out in {notebooks.resolve()}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="_build_student", help="output directory (default: _build_student)")
    parser.add_argument("--no-build", action="store_true", help="only write the stripped sources")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out).resolve()
    if args.no_build:
        print(prepare(out))
    else:
        build(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
