"""Structural checks of every chapter notebook (fast; the notebooks themselves run under nbval).

* The first cell is the hidden install guard; its missing-package branch installs from the
  repository named in ``_config.yml`` (simulated: ``dpcp_tutorial`` made unimportable and
  ``%pip`` recorded instead of run), and its normal branch does nothing.
* Every code cell was executed, in order, in one fresh kernel (outputs are comparable by nbval).
* Every chapter has learning goals and 3–6 exercises, each with a hidden solution.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _repository_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"]


def test_there_are_chapters():
    assert NOTEBOOKS, "no chapter notebooks found under book/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cell_is_hidden_install_guard(path):
    cell = _load(path)["cells"][0]
    assert cell["cell_type"] == "code"
    assert "remove-cell" in cell.get("metadata", {}).get("tags", [])
    source = _source(cell)
    assert "import dpcp_tutorial" in source and "%pip install" in source
    assert _repository_url().removeprefix("https://") in source, "install URL must match _config.yml repository.url"


def _run_guard(source: str, package_importable: bool) -> list[str]:
    """Execute the guard cell as IPython would; return the recorded %pip calls."""
    from IPython.core.inputtransformer2 import TransformerManager

    code = TransformerManager().transform_cell(source)
    calls: list[str] = []

    class FakeShell:
        def run_line_magic(self, name, line):
            calls.append(f"%{name} {line}")
            sys.modules.pop("dpcp_tutorial", None)  # "installed": importable again

    saved = sys.modules.get("dpcp_tutorial")
    try:
        if not package_importable:
            sys.modules["dpcp_tutorial"] = None  # makes `import dpcp_tutorial` raise ImportError
        exec(compile(code, "<guard>", "exec"), {"get_ipython": lambda: FakeShell()})
    finally:
        if saved is not None:
            sys.modules["dpcp_tutorial"] = saved
    return calls


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_install_guard_branches(path):
    source = _source(_load(path)["cells"][0])
    assert _run_guard(source, package_importable=True) == []
    calls = _run_guard(source, package_importable=False)
    assert len(calls) == 1 and calls[0].startswith("%pip install")
    assert "git+" + _repository_url() in calls[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_in_order_in_one_kernel(path):
    nb = _load(path)
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code" and _source(c).strip()]
    assert None not in counts, "some code cells were never executed: run `make execute NB=...`"
    assert counts == list(range(1, len(counts) + 1)), "cells were not run top to bottom in one fresh kernel"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", "a committed output is an error"
            if output.get("output_type") == "stream":
                assert output.get("name") != "stderr", "a cell printed to stderr (warnings fail the build)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_learning_goals_and_exercises(path):
    text = "\n".join(_source(c) for c in _load(path)["cells"] if c["cell_type"] == "markdown")
    assert "Learning goals" in text
    exercises = re.findall(r"`{3,}\{exercise\}", text)
    solutions = re.findall(r"`{3,}\{solution\} *(\S+)\s*\n:class: dropdown", text)
    labels = re.findall(r"`{3,}\{exercise\}[^\n]*\n:label: *(\S+)", text)
    assert 3 <= len(exercises) <= 6, f"{len(exercises)} exercises; each chapter needs 3 to 6"
    assert sorted(solutions) == sorted(labels), "every exercise needs a hidden (dropdown) solution"
