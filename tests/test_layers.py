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


if __name__ == "__main__":      # the whole package's uses: python tests/test_layers.py
    found = scan(ROOT, [PACKAGE])
    print("\n".join(found))
    print(f"{len(found)} uses of another module's private name in {PACKAGE}")
