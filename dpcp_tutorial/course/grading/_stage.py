"""What is copied into a sandbox besides the submission: the runner and an explicit allowlist of helpers.

The sandbox holds no implementation of a graded function: the course package is not importable there.
Instead a folder is staged (read-only inside the sandbox) with

* ``_dpcp_runner.py`` (a copy of :mod:`._sandbox`) and ``_dpcp_calls.py`` (a copy of
  :mod:`dpcp_tutorial.course.exercises._runtime`, the calling side of the checker protocol, which holds no case,
  expected value or verdict);
* a stand-in ``dpcp_tutorial`` package that exports only the helpers of :data:`HELPERS` a reader may use in
  an answer (data generators, and the building blocks later chapters let an answer call), with the
  package's modules those helpers need; every function or class the exercise being graded asks the
  reader to write (the checker's ``implements``) is replaced in those copies by a stub that raises when
  called (so ``from dpcp_tutorial import private_quantile`` still works in a file that answers several
  exercises, but the exercise that asks for a private quantile cannot call the package's). Nothing of
  ``dpcp_tutorial.course.exercises`` (checkers, cases) or ``dpcp_tutorial.course.grading`` is copied.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2]      # dpcp_tutorial/

HELPERS = {
    "private_quantile": "quantile",
    "private_quantile_level": "quantile",
    "private_quantile_miscoverage_bound": "quantile",
    "DPRidgeRegression": "training",
    "make_heteroscedastic_regression": "datasets",
    "make_contaminated_gaussian": "datasets",
    "make_cauchy": "datasets",
}
"""Names a submission may import from ``dpcp_tutorial`` in the sandbox, and the module defining each."""

_RUNNER = "_dpcp_runner.py"
_CALLS = "_dpcp_calls.py"


def _file(module: str) -> Path | None:
    """The source file of ``module`` (dotted, relative to the package: ``quantile``, ``training.ridge``,
    ``training`` for a sub-package's ``__init__``), or None if it is not a module of the package."""
    base = PACKAGE.joinpath(*module.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return base / "__init__.py" if (base / "__init__.py").is_file() else None


def _relative_imports(module: str) -> set[str]:
    """Modules of the package that ``module`` imports (``from .x import ...``, ``from .. import y`` in a
    sub-package), with the sub-packages that hold them."""
    path = _file(module)
    home = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0 or node.level - 1 > len(home):
            continue
        base = home[:len(home) - (node.level - 1)]
        if node.module:
            out.add(".".join(base + node.module.split(".")))
        out.update(".".join(base + (node.module.split(".") if node.module else []) + [alias.name])
                   for alias in node.names)
    found = {m for m in out if m and _file(m) is not None}
    return found | {".".join(m.split(".")[:k]) for m in found for k in range(1, m.count(".") + 1)}


def closure(modules) -> list[str]:
    todo, seen = list(modules), set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(_relative_imports(module) - seen)
    return sorted(seen)


def _defining_module(module: str, name: str) -> str:
    """The module of the package that defines ``name`` (``training.ridge`` for ``training.ssp_sensitivity``,
    which the sub-package re-exports)."""
    import importlib

    value = getattr(importlib.import_module(f"{PACKAGE.name}.{module}"), name, None)
    home = getattr(value, "__module__", None)
    if isinstance(home, str) and home.startswith(PACKAGE.name + "."):
        return home[len(PACKAGE.name) + 1:]
    return module


def _stub(node: ast.stmt) -> ast.stmt:
    message = (f"{node.name} is not available while an exercise that asks you to write it is graded")
    raise_stmt = ast.parse(f"raise NotImplementedError({message!r})").body[0]
    if isinstance(node, ast.ClassDef):
        return ast.parse(f"class {node.name}:\n    def __init__(self, *args, **kwargs):\n"
                         f"        raise NotImplementedError({message!r})").body[0]
    return ast.FunctionDef(name=node.name, args=ast.arguments(posonlyargs=[], args=[],
                                                              vararg=ast.arg("args"), kwonlyargs=[], kw_defaults=[],
                                                              kwarg=ast.arg("kwargs"), defaults=[]),
                           body=[raise_stmt], decorator_list=[], returns=None, type_comment=None,
                           lineno=node.lineno)


def _stripped(module: str, names: set[str]) -> str:
    source = _file(module).read_text(encoding="utf-8")
    if not names:
        return source
    tree = ast.parse(source)
    tree.body = [_stub(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 and node.name in names else node for node in tree.body]
    return ast.unparse(ast.fix_missing_locations(tree))


def stage(target: Path, implements=()) -> list[str]:
    """Write the runner and the stand-in package into ``target``; return the helper names exported
    (those among the ``implements`` are stubs)."""
    from ..exercises import _runtime
    from . import _sandbox

    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_sandbox.__file__, target / _RUNNER)
    shutil.copyfile(_runtime.__file__, target / _CALLS)
    forbidden: dict[str, set[str]] = {}
    for dotted in implements:
        parts = dotted.split(".")
        if len(parts) >= 3 and parts[0] == PACKAGE.name:
            forbidden.setdefault(_defining_module(".".join(parts[1:-1]), parts[-1]), set()).add(parts[-1])
    exported = dict(HELPERS)    # a forbidden helper stays importable, as a stub that raises when called
    package = target / "dpcp_tutorial"
    package.mkdir(exist_ok=True)
    for module in closure(set(exported.values())):
        path = package / _file(module).relative_to(PACKAGE)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_stripped(module, forbidden.get(module, set())), encoding="utf-8")
    lines = ['"""The course package as a graded submission sees it: only the helpers an answer may use."""', ""]
    for name, module in sorted(exported.items()):
        lines.append(f"from .{module} import {name}")
    lines.append(f"__all__ = {sorted(exported)!r}")
    (package / "__init__.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for path in [target, package, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return sorted(exported)
