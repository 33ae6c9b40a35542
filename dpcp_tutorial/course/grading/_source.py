"""Reading a submission without running it: its code cells, the statements an answer needs, and what it uses.

Everything here runs in the grader's own process and only *reads* the students' files (JSON and Python
source are parsed, never executed):

* :func:`read_files` turns ``.py`` files and notebooks (nbformat 4 and 3) into code cells (in a hand-out
  notebook of the student edition, the chapter's own cells, unchanged, contribute only their imports:
  :func:`chapter_mark`), drops IPython
  line magics and shell lines (a ``pass`` keeps the indentation valid), keeps the body of cells that start
  with a Python cell magic (``%%time``, ``%%timeit``, ``%%capture``, ...) and skips cells in other languages
  (``%%bash``, ``%%writefile``, ...);
* each top-level statement becomes a :class:`Unit` with the names it binds (imports, definitions, plain and
  tuple assignments, names bound inside ``if``/``with``/``try``/``for`` blocks) and the module-level names it
  reads (also from inside function bodies and class bodies, by :mod:`symtable`);
* :func:`needed_units` is the closure of the units that define an exercise's functions and everything
  they read, in source order: the only code the grader runs for that exercise (a chapter's experiments,
  plots and checker calls are never run unless an answer's function reads their result);
* :func:`package_uses` lists the ``dpcp_tutorial`` names the answer's code refers to (imports inside or
  outside functions, aliases, attribute chains, star imports), so that a submission that uses the
  package's own implementation of an exercise, or a checker's helper, is not graded.
"""

from __future__ import annotations

import ast
import json
import re
import symtable
from dataclasses import dataclass, field
from pathlib import Path

SUFFIXES = (".ipynb", ".py")
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "memit", "pypy", "python", "python3"}
_LINE_MAGIC = re.compile(r"^(\s*)(?:[%!]|[\w.,\s\[\]()*]+=\s*[%!])")
_HELP = re.compile(r"^(\s*)[\w.]+\?{1,2}\s*$")


@dataclass
class Unit:
    """One top-level statement of a submission, with what it binds and reads."""

    index: int
    where: str           # e.g. "ada.ipynb, cell 5, line 3"
    filename: str        # the name it is compiled under (marks code of the submission)
    lineno: int          # its first line within the cell (tracebacks keep the cell's numbering)
    source: str
    defines: frozenset = frozenset()
    reads: frozenset = frozenset()
    star_from: tuple = ()            # modules of ``from M import *`` in this unit
    aliases: dict = field(default_factory=dict)   # local name -> dotted module path of imports
    tags: frozenset = frozenset()    # the notebook cell's tags


@dataclass
class Cell:
    where: str
    source: str
    tags: frozenset
    chapter: bool = False        # an unchanged chapter cell of a hand-out: only its imports are kept


def chapter_mark(source: str) -> str:
    """The mark the student edition puts on a chapter's code cell: a digest of its source, so that a cell the
    reader edited (an answer typed into it) no longer carries a valid mark."""
    import hashlib

    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:24]


def _is_chapter_cell(cell: dict, source: str) -> bool:
    metadata = cell.get("metadata")
    mark = metadata.get("dpcp_tutorial") if isinstance(metadata, dict) else None
    return isinstance(mark, dict) and mark.get("chapter") == chapter_mark(source)


def _notebook_cells(path: Path, text: str) -> list[Cell]:
    notebook = json.loads(text)
    if not isinstance(notebook, dict):
        raise ValueError("not a notebook (the JSON is not an object)")
    major = notebook.get("nbformat", 4)
    if major >= 4:
        raw = notebook.get("cells", [])
    else:   # nbformat 3: worksheets of cells, code in "input"
        raw = [c for sheet in notebook.get("worksheets", []) for c in sheet.get("cells", [])]
    if not isinstance(raw, list):
        raise ValueError("the notebook's cells are not a list")
    cells = []
    for number, cell in enumerate(raw, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        source = "".join(source) if isinstance(source, list) else str(source)
        tags = cell.get("metadata", {}).get("tags", []) if isinstance(cell.get("metadata"), dict) else []
        cells.append(Cell(f"{path.name}, cell {number}", source, frozenset(str(t) for t in tags if isinstance(t, str)),
                          _is_chapter_cell(cell, source)))
    return cells


def python_source(source: str) -> str | None:
    """The Python in a cell: magics and shell lines replaced by ``pass``; ``None`` for a non-Python cell."""
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(maxsplit=1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return None
        lines[first] = ""
    out = []
    for line in lines:
        match = _LINE_MAGIC.match(line) or _HELP.match(line)
        if match:
            out.append(match.group(1) + "pass")
        else:
            out.append(line)
    return "\n".join(out)


def read_files(paths: list[Path], student: str) -> tuple[list[Cell], list[str]]:
    """Code cells of every file (in the given order) and the problems met reading them."""
    cells: list[Cell] = []
    problems: list[str] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path.name} could not be read ({type(exc).__name__})")
            continue
        if path.suffix == ".ipynb":
            try:
                cells += _notebook_cells(path, text)
            except (ValueError, TypeError, AttributeError) as exc:
                problems.append(f"{path.name} is not a valid notebook ({type(exc).__name__}: {str(exc)[:120]})")
        else:
            cells.append(Cell(path.name, text, frozenset()))
    return cells, problems


def _segment(lines: list[str], node: ast.stmt) -> tuple[int, str]:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start, "\n".join(lines[start - 1: node.end_lineno])


def _scope_names(source: str) -> tuple[set[str], set[str]]:
    """(names bound at module level, module-level names read anywhere in the unit)."""
    table = symtable.symtable(source, "<unit>", "exec")
    defines, reads = set(), set()
    for symbol in table.get_symbols():
        if symbol.is_assigned() or symbol.is_imported():
            defines.add(symbol.get_name())
        if symbol.is_referenced():
            reads.add(symbol.get_name())

    def visit(tab):
        for child in tab.get_children():
            for symbol in child.get_symbols():
                if symbol.is_global() and (symbol.is_referenced() or symbol.is_assigned()):
                    reads.add(symbol.get_name())
                    if symbol.is_declared_global() and symbol.is_assigned():
                        defines.add(symbol.get_name())
            visit(child)

    visit(table)
    return defines, reads


def _aliases(tree: ast.AST) -> tuple[dict, tuple]:
    aliases, stars = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for name in node.names:
                if name.asname:
                    aliases[name.asname] = name.name
                else:
                    aliases[name.name.split(".")[0]] = name.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in node.names:
                if name.name == "*":
                    stars.append(node.module)
                else:
                    aliases[name.asname or name.name] = f"{node.module}.{name.name}"
    return aliases, tuple(stars)


def _statements(tree: ast.Module, lines: list[str], chapter: bool):
    """The top-level statements of a cell with their source. Of a hand-out's chapter cell only the imports,
    one name per statement (an import that names something the sandbox lacks costs only that name)."""
    for node in tree.body:
        if not chapter:
            yield node, _segment(lines, node)[1]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                single = type(node)(names=[alias], **({"module": node.module, "level": node.level}
                                                      if isinstance(node, ast.ImportFrom) else {}))
                single = ast.copy_location(single, node)
                yield single, ast.unparse(single)


def units_of(cells: list[Cell], student: str) -> tuple[list[Unit], list[str]]:
    """Split cells into top-level statements; problems name the cells that do not parse."""
    units: list[Unit] = []
    problems: list[str] = []
    for cell in cells:
        source = python_source(cell.source)
        if source is None or not source.strip():
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            problems.append(f"{cell.where}: syntax error at line {exc.lineno}: {exc.msg}; the cell was skipped")
            continue
        lines = source.splitlines()
        for node, text in _statements(tree, lines, cell.chapter):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            try:
                defines, reads = _scope_names(text)
            except SyntaxError:   # e.g. a 'return' outside a function: never runnable
                problems.append(f"{cell.where}, line {start}: this statement cannot run at the top level")
                continue
            aliases, stars = _aliases(node)
            where = f"{cell.where}, line {start}" if cell.where.count(",") or len(lines) > 1 else cell.where
            units.append(Unit(len(units), where, f"<submission {student}: {cell.where}>", start, text,
                              frozenset(defines), frozenset(reads), stars, aliases, cell.tags))
    return units, problems


def needed_units(units: list[Unit], targets) -> list[Unit]:
    """The units that define ``targets`` and, recursively, every module-level name they read (source order)."""
    by_name: dict[str, list[Unit]] = {}
    for unit in units:
        for name in unit.defines:
            by_name.setdefault(name, []).append(unit)
    stars = [u for u in units if u.star_from]
    chosen: dict[int, Unit] = {}
    todo = list(targets)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        defining = by_name.get(name, [])
        if not defining and stars:
            defining = stars            # the name may come from a star import
        for unit in defining:
            if unit.index not in chosen:
                chosen[unit.index] = unit
                todo.extend(unit.reads - seen)
    return [chosen[i] for i in sorted(chosen)]


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def package_uses(units: list[Unit], targets=(), package_names: frozenset = frozenset()) -> set[str]:
    """Dotted ``dpcp_tutorial...`` names that the units' code refers to (by aliases of imports, attribute
    chains, or names a star import of the package brings), and the package objects that ``targets`` are
    bound to by an import (``from dpcp_tutorial... import X as my_function``). An import alone is not a use."""
    aliases: dict[str, str] = {}
    stars: list[str] = []
    for unit in units:
        aliases.update(unit.aliases)
        stars += list(unit.star_from)
    bound = set().union(*(u.defines for u in units)) if units else set()
    star_package = any(s.split(".")[0] == "dpcp_tutorial" for s in stars)
    found: set[str] = {aliases[t] for t in targets if t in aliases and aliases[t].split(".")[0] == "dpcp_tutorial"}
    for unit in units:
        tree = ast.parse(unit.source)
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Attribute, ast.Name)) or isinstance(parents.get(node), ast.Attribute):
                continue      # only the longest chain of attributes counts
            chain = _dotted(node)
            if not chain:
                continue
            root = chain[0]
            if root in aliases:
                path = ".".join([aliases[root]] + chain[1:])
            elif root not in bound and root in package_names and star_package:
                path = ".".join(["dpcp_tutorial"] + chain)
            else:
                continue
            if path.split(".")[0] == "dpcp_tutorial":
                found.add(path)
    return found


_CHECKER_MODULE = re.compile(r"ch\d\d")


def forbidden(uses: set[str], implements: tuple[str, ...]) -> str | None:
    """Why the uses disqualify the answer: the package's implementation of the exercise, or a helper of the
    checkers or the grader (the public ``check_*`` functions themselves may be called); ``None`` if fine."""
    implemented = {name.rsplit(".", 1)[-1] for name in implements}
    for path in sorted(uses):
        parts = path.split(".")
        hit = next((p for p in parts[1:] if p in implemented), None)
        if hit:
            return f"uses the package's implementation of {hit}"
        if len(parts) > 1 and parts[1] == "course":    # dpcp_tutorial.course.exercises = dpcp_tutorial.exercises
            parts = parts[:1] + parts[2:]
            if len(parts) > 1 and parts[1] not in ("exercises", "grading"):
                return f"uses the package's course tooling ({path})"
        if len(parts) > 1 and parts[1] == "grading":
            return f"uses the package's grader ({path})"
        if len(parts) > 2 and parts[1] == "exercises":
            last = parts[-1]
            if not (last.startswith("check_") or last == "ExerciseResult" or
                    (len(parts) == 3 and _CHECKER_MODULE.fullmatch(last))):
                return f"uses the package's checker helper {'.'.join(parts[2:])}"
    return None


def function_sources(units: list[Unit]) -> dict[str, list[str]]:
    """Normalised ``ast.dump`` of every function definition, by name (docstrings dropped)."""
    out: dict[str, list[str]] = {}
    for unit in units:
        try:
            tree = ast.parse(unit.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(node.name, []).append(normalised(node))
    return out


def normalised(node: ast.AST) -> str:
    """``ast.dump`` without docstrings and positions: what is left when comments and layout are ignored."""
    node = ast.parse(ast.unparse(node)).body[0]
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            child.body = body[1:] or [ast.Pass()]
    return ast.dump(node, annotate_fields=False)


def anonymous(dump: str) -> str:
    """A :func:`normalised` function without its name: a renamed copy has the same."""
    return re.sub(r"^(Async)?FunctionDef\('[^']*'", r"\1FunctionDef('_'", dump)


def reference_functions(folder) -> set[str]:
    """:func:`anonymous` dumps of the substantial functions (five statements or more) of ``folder/*.py``."""
    from pathlib import Path

    out: set[str] = set()
    for path in sorted(Path(folder).glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    sum(isinstance(n, ast.stmt) for n in ast.walk(node)) >= 6:
                out.add(anonymous(normalised(node)))
    return out


def copied_references(units: list[Unit], reference: set[str]) -> list[str]:
    """The functions of ``units`` that are, renamed or not, a function of the book's reference files."""
    if not reference:
        return []
    return sorted(name for name, dumps in function_sources(units).items()
                  if {anonymous(d) for d in dumps} & reference)
