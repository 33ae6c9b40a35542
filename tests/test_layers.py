"""No module of the package reaches into another module's private names.

A name with a leading underscore is private to the module that defines it. A module whose own name starts
with an underscore (``grading/_source.py``, ``exercises/_common.py``) is internal to its package: it is the
declared home of what several modules share, and its names *without* an underscore are those internals.
So ``from ._source import units_of`` and ``_isolation.probe()`` are fine, while
``from ._common import _describe`` or ``_isolation._children(pid)`` reach into a private part.

The scan reads the source (it imports nothing): ``from X import _name`` where ``X._name`` is not a module,
and ``module._name`` where ``module`` is bound to a module of the package, through ``import`` or
``from ... import`` anywhere in the file (dunder names such as ``__file__`` are not private).
``python tests/test_layers.py`` lists the uses in the whole package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "dpcp_tutorial"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(root: Path, dotted: str) -> bool:
    base = root.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imported_from(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a ``from ... import`` reads from (``package``: that of the importing file)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    parts = parts[:len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def private_uses(root: Path, path: Path, top: str = PACKAGE) -> list[str]:
    """``file:line: what`` for every private name of another module of ``top`` that ``path`` uses."""
    me = _module_name(root, path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(root)
    modules: dict[str, str] = {}          # local name -> module of the package it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == top:
                    local = alias.asname or top
                    modules[local] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom):
            source = _imported_from(node, package)
            if source.split(".")[0] != top:
                continue
            for alias in node.names:
                if _is_module(root, f"{source}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
                elif _is_private(alias.name) and source != me:
                    found.append(f"{where}:{node.lineno}: from {source} import {alias.name}")

    def resolve(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = resolve(node.value)
            if base is not None and _is_module(root, f"{base}.{node.attr}"):
                return f"{base}.{node.attr}"
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            module = resolve(node.value)
            if module is not None and module != me and not _is_module(root, f"{module}.{node.attr}"):
                found.append(f"{where}:{node.lineno}: {module}.{node.attr}")
    return found


def scan(root: Path, folders, top: str = PACKAGE) -> list[str]:
    """Every cross-module private use in the ``.py`` files under ``folders`` (relative to ``root``)."""
    return [use for folder in folders for path in sorted((root / folder).rglob("*.py"))
            for use in private_uses(root, path, top)]


def test_no_module_of_the_package_uses_a_private_name_of_another_module():
    uses = scan(ROOT, [PACKAGE])
    assert not uses, ("give what modules share a name without an underscore in an internal module "
                      "(one whose name starts with an underscore):\n" + "\n".join(uses))


def test_the_scan_finds_every_form_of_reaching_in_and_spares_internal_modules(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "sub" / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("_hidden = 1\nshown = 2\n\ndef _own():\n    return _hidden\n", encoding="utf-8")
    (package / "_inner.py").write_text("shared = 1\n_hidden = 2\n", encoding="utf-8")
    (package / "sub" / "b.py").write_text(
        "import pkg.a as alias\n"
        "import pkg\n"
        "from .. import a, _inner\n"
        "from ..a import _hidden, shown\n"
        "from pkg._inner import shared\n"
        "from os import _exit\n"
        "x = a._own() + _inner.shared + _inner._hidden + alias._hidden + pkg.a._hidden + a.__file__\n",
        encoding="utf-8")
    uses = scan(tmp_path, ["pkg"], top="pkg")
    assert sorted(use.split(": ", 1)[1] for use in uses) == sorted(
        ["from pkg.a import _hidden", "pkg.a._own", "pkg._inner._hidden", "pkg.a._hidden", "pkg.a._hidden"])
    assert all(use.startswith(str(Path("pkg") / "sub" / "b.py") + ":") for use in uses)


# ----------------------------------------------------------------------------------------- the three layers
#
# The package's docstring states the rule: the library (every module of the package outside ``course/`` and
# ``experiments/``, sub-packages included) imports neither the course tooling nor the experiments and
# benchmarks; the experiments and benchmarks do not import the course tooling. The scan reads the source:
# ``import`` and ``from ... import`` anywhere in a file (inside functions too, relative ones resolved), a
# constant (or the constant start of an f-string) passed to ``importlib.import_module`` or ``__import__``,
# and attribute chains on a name bound to the package (``dpcp_tutorial.course.exercises``, which the
# package's lazy ``__getattr__`` would import). The package's own ``__init__`` is the index of all three
# layers (it names the on-demand modules and the course tooling's former names) and is not scanned.

COURSE_NAMES = ("course", "exercises", "grading")
"""The course tooling's folder and its former names (``dpcp_tutorial.exercises`` is ``course.exercises``)."""

ALLOWED = {"library": {"library"}, "experiments": {"library", "experiments"},
           "course": {"library", "course", "experiments"}}
"""Layer -> the layers its modules may import."""


def layer(dotted: str, top: str = PACKAGE) -> str | None:
    """The layer of a dotted module name (``None``: outside the project, or the package's index)."""
    parts = dotted.split(".")
    if parts[0] == "benchmarks":
        return "experiments"
    if parts[0] != top or len(parts) == 1 or not parts[1]:
        return None
    if parts[1] in COURSE_NAMES:
        return "course"
    return "experiments" if parts[1] == "experiments" else "library"


def _string_start(node: ast.AST) -> str | None:
    """A constant string, or the constant start of an f-string (``f"pkg.course.{name}"`` -> ``pkg.course.``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return node.values[0].value
    return None


def _resolve(name: str, package: str) -> str:
    """``name`` (possibly relative, ``..x``) as an absolute dotted name seen from ``package``."""
    level = len(name) - len(name.lstrip("."))
    if not level:
        return name
    parts = package.split(".")
    base = parts[:len(parts) - level + 1]
    return ".".join(base + ([name[level:]] if name[level:] else [])).rstrip(".")


def references(root: Path, path: Path, top: str = PACKAGE) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every module of ``top`` (or of ``benchmarks``) that ``path`` imports or
    reaches through an attribute chain."""
    me = _module_name(root, path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, str] = {}              # local name -> module of the project it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((node.lineno, alias.name))
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                    alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            source = _imported_from(node, package)
            for alias in node.names:
                target = source if alias.name == "*" else f"{source}.{alias.name}"
                found.append((node.lineno, target))
                names[alias.asname or alias.name] = target
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            text = _string_start(node.args[0])
            if called not in ("import_module", "__import__") or text is None:
                continue
            anchor = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "package"), None)
            if text.startswith("."):
                anchor_name = getattr(anchor, "id", None)
                base = {"__name__": me, "__package__": package}.get(anchor_name, _string_start(anchor) or package)
                text = _resolve(text, base)
            found.append((node.lineno, text.rstrip(".")))

    def chain(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.Attribute):
            base = chain(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            dotted = chain(node)        # the package's attribute: ``dpcp_tutorial.course``
            if dotted and dotted.split(".")[0] == top:
                found.append((node.lineno, dotted))
    return [(line, name) for line, name in found if name.split(".")[0] in (top, "benchmarks")]


def layer_violations(root: Path, folders, top: str = PACKAGE) -> list[str]:
    """``file:line: layer imports dotted (layer)`` for every import across the layers' rule in the ``.py`` files
    under ``folders`` (relative to ``root``)."""
    out = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            mine = layer(_module_name(root, path), top)
            if mine is None:
                continue
            for line, dotted in references(root, path, top):
                theirs = layer(dotted, top)
                if theirs is not None and theirs not in ALLOWED[mine]:
                    use = f"{path.relative_to(root)}:{line}: {mine} imports {dotted} ({theirs})"
                    if use not in out:
                        out.append(use)
    return out


def test_the_library_imports_neither_the_course_tooling_nor_the_experiments_and_they_not_the_course():
    violations = layer_violations(ROOT, [PACKAGE, "benchmarks"])
    assert not violations, ("the library (dpcp_tutorial/*.py and its sub-packages) imports neither "
                            "dpcp_tutorial.course nor dpcp_tutorial.experiments; the experiments and benchmarks "
                            "do not import dpcp_tutorial.course (move what they share into the library):\n"
                            + "\n".join(violations))


def test_the_layers_are_the_folders_the_package_docstring_names():
    import dpcp_tutorial

    package = ROOT / PACKAGE
    assert (package / "course" / "exercises" / "__init__.py").is_file()
    assert (package / "course" / "grading" / "__init__.py").is_file()
    assert (package / "experiments" / "__init__.py").is_file() and (ROOT / "benchmarks" / "__init__.py").is_file()
    assert not (package / "exercises").exists() and not (package / "grading").exists()
    doc = dpcp_tutorial.__doc__
    for folder in ("``dpcp_tutorial/course/``", "``dpcp_tutorial/experiments/``", "``benchmarks/``"):
        assert folder in doc
    assert "tests/test_layers.py" in doc
    assert {layer(f"{PACKAGE}.{name}") for name in ("conformal", "training", "training.ridge", "_counts")} == \
        {"library"}


def test_the_layer_scan_finds_every_form_of_import_across_the_rule(tmp_path):
    files = {
        "pkg/__init__.py": "import importlib\nimportlib.import_module('.course', __name__)\n",   # the index
        "pkg/lib.py": (
            "import importlib\n"
            "import pkg\n"
            "import pkg.other as fine\n"
            "from . import other, sub\n"
            "from .course import exercises\n"                            # 5
            "def f(name):\n"
            "    from pkg.experiments import runner\n"                   # 7
            "    import pkg.grading._stage\n"                            # 8
            "    importlib.import_module('pkg.exercises.ch01')\n"         # 9
            "    importlib.import_module(f'pkg.course.{name}')\n"         # 10
            "    importlib.import_module('.experiments', package='pkg')\n"  # 11
            "    __import__('benchmarks.bench_x')\n"                      # 12
            "    return pkg.course.exercises, pkg.other.x, fine.y\n"      # 13
        ),
        "pkg/other.py": "x = 1\n",
        "pkg/sub/__init__.py": "from ..experiments import runner\nfrom .. import other\n",   # 1
        "pkg/course/__init__.py": "",
        "pkg/course/exercises.py": "from .. import other\nfrom ..experiments import runner\n",
        "pkg/experiments/__init__.py": "",
        "pkg/experiments/runner.py": "from pkg import other\nfrom pkg import grading\n",       # 2
        "benchmarks/__init__.py": "",
        "benchmarks/bench_x.py": "import pkg.experiments.runner\nfrom pkg.course.exercises import f\n",  # 2
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = layer_violations(tmp_path, ["pkg", "benchmarks"], top="pkg")
    assert [use.replace("\\", "/") for use in found] == [
        "pkg/experiments/runner.py:2: experiments imports pkg.grading (course)",
        "pkg/lib.py:5: library imports pkg.course.exercises (course)",
        "pkg/lib.py:7: library imports pkg.experiments.runner (experiments)",
        "pkg/lib.py:8: library imports pkg.grading._stage (course)",
        "pkg/lib.py:9: library imports pkg.exercises.ch01 (course)",
        "pkg/lib.py:10: library imports pkg.course (course)",
        "pkg/lib.py:11: library imports pkg.experiments (experiments)",
        "pkg/lib.py:12: library imports benchmarks.bench_x (experiments)",
        "pkg/lib.py:13: library imports pkg.course (course)",
        "pkg/sub/__init__.py:1: library imports pkg.experiments.runner (experiments)",
        "benchmarks/bench_x.py:2: experiments imports pkg.course.exercises.f (course)",
    ]


def test_the_course_tooling_keeps_its_former_names_as_the_same_modules():
    """``dpcp_tutorial.exercises`` and ``dpcp_tutorial.grading`` (and their modules) import as the very module
    objects of ``dpcp_tutorial.course``, and ``python -m dpcp_tutorial.grading`` runs the grader."""
    import importlib
    import subprocess
    import sys

    import dpcp_tutorial
    import dpcp_tutorial.course.exercises
    import dpcp_tutorial.course.grading
    import dpcp_tutorial.exercises
    import dpcp_tutorial.exercises.ch03
    import dpcp_tutorial.grading._stage
    from dpcp_tutorial.course.exercises import ch03
    from dpcp_tutorial.exercises import check_conformal_quantile
    from dpcp_tutorial.grading import grading_table

    assert dpcp_tutorial.exercises is dpcp_tutorial.course.exercises
    assert sys.modules["dpcp_tutorial.exercises"] is dpcp_tutorial.course.exercises
    assert dpcp_tutorial.exercises.ch03 is ch03 and sys.modules["dpcp_tutorial.exercises.ch03"] is ch03
    assert dpcp_tutorial.grading is dpcp_tutorial.course.grading
    assert dpcp_tutorial.grading._stage is importlib.import_module("dpcp_tutorial.course.grading._stage")
    assert check_conformal_quantile is dpcp_tutorial.course.exercises.check_conformal_quantile
    assert grading_table is dpcp_tutorial.course.grading.grading_table
    assert importlib.import_module("dpcp_tutorial.grading._table") is dpcp_tutorial.course.grading._table
    # the modules keep their own names and specs (so that pickling, reloading and -m see one module)
    assert ch03.__name__ == ch03.__spec__.name == "dpcp_tutorial.course.exercises.ch03"
    assert dpcp_tutorial.course.grading.__spec__.name == "dpcp_tutorial.course.grading"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dpcp_tutorial.exercises.no_such_module")
    for name in ("dpcp_tutorial.grading", "dpcp_tutorial.course.grading"):
        out = subprocess.run([sys.executable, "-m", name, "--help"], capture_output=True, text=True, cwd=ROOT,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("usage: python -m dpcp_tutorial.course.grading")


if __name__ == "__main__":      # the whole package's uses: python tests/test_layers.py
    found = scan(ROOT, [PACKAGE])
    print("\n".join(found))
    print(f"{len(found)} uses of another module's private name in {PACKAGE}")
