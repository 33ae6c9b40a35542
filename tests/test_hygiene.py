"""Package hygiene: command lines, output locations, declared dependencies."""

from __future__ import annotations

import ast
import json
import re
import pathlib
import subprocess
import sys
import tomllib
import types

import pytest

import dpcp_tutorial
from dpcp_tutorial.experiments import __main__ as experiments_main
from dpcp_tutorial.experiments import available

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = pathlib.Path(dpcp_tutorial.__file__).resolve().parent

# import name -> distribution name, where they differ
_DIST = {"sklearn": "scikit-learn", "yaml": "pyyaml", "dp_accounting": "dp-accounting", "pipeline_dp": "pipeline-dp", "pydp": "python-dp",
         "apache_beam": "apache-beam", "tmlt": "tmlt.analytics"}


def _requirement_name(req: str) -> str:
    for sep in "<>=!~[; ":
        req = req.split(sep)[0]
    return req.strip().lower()


def _third_party_imports() -> tuple[set[str], set[str]]:
    """Distribution names imported by the package: (at module level, anywhere)."""
    top, anywhere = set(), set()
    stdlib = set(sys.stdlib_module_names)
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        module_level = set(id(node) for node in tree.body)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                root = name.split(".")[0]
                if root in stdlib or root == "dpcp_tutorial":
                    continue
                dist = _DIST.get(root, root).lower()
                anywhere.add(dist)
                if id(node) in module_level:
                    top.add(dist)
    return top, anywhere


def test_declared_dependencies_are_exactly_the_runtime_imports():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {_requirement_name(r) for r in project["dependencies"]}
    extras = {_requirement_name(r) for reqs in project.get("optional-dependencies", {}).values() for r in reqs}
    top, anywhere = _third_party_imports()
    assert top <= required, f"imported at module level but not declared: {sorted(top - required)}"
    assert anywhere <= required | extras, f"imported but declared nowhere: {sorted(anywhere - required - extras)}"
    assert required <= anywhere, f"declared but never imported by the package: {sorted(required - anywhere)}"
    assert "tqdm" in required


def test_no_hand_written_progress_bar():
    assert not (PACKAGE / "_progress.py").exists()
    for path in (PACKAGE / "experiments").glob("*.py"):
        assert "_progress import" not in path.read_text(), path.name


def test_readme_mentions_the_accounting_extra():
    readme = (ROOT / "README.md").read_text()
    assert '".[accounting]"' in readme or "[accounting]" in readme
    assert "--save" in readme and "--out" in readme


def test_experiments_help_does_not_crash():
    for argv in (["--help"], *([name, "--help"] for name in available())):
        with pytest.raises(SystemExit) as info:
            experiments_main.main(argv)
        assert info.value.code == 0, argv


@pytest.mark.slow
def test_experiments_help_in_a_subprocess():
    out = subprocess.run([sys.executable, "-m", "dpcp_tutorial.experiments", "--help"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "contamination" in out.stdout


def test_default_output_is_the_working_directory_never_the_package():
    parser = experiments_main.build_parser()
    for name in available():
        args = parser.parse_args([name])
        assert args.out == pathlib.Path(f"{name}.json")
        assert not args.out.is_absolute()


def _fake_runner():
    from tqdm import tqdm

    def run(args):
        return {"total": sum(tqdm(range(5), desc="fake", disable=args.quiet))}

    return types.SimpleNamespace(DESCRIPTION="a fake runner at 25% of the size", add_arguments=lambda p: None,
                                 run=run)


def test_runner_writes_to_cwd_with_progress_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(experiments_main, "available", lambda: {"fake": _fake_runner()})
    monkeypatch.chdir(tmp_path)
    assert experiments_main.main(["fake"]) == 0
    assert json.loads((tmp_path / "fake.json").read_text())["total"] == 10
    err = capsys.readouterr().err
    assert "fake" in err and "5/5" in err           # tqdm's bar, on stderr
    assert experiments_main.main(["fake", "--out", "sub/r.json", "--quiet"]) == 0
    assert (tmp_path / "sub" / "r.json").exists()
    err = capsys.readouterr().err
    assert "5/5" not in err                          # --quiet: no bar
    assert not list(PACKAGE.joinpath("data").glob("fake*.json"))


def test_benchmarks_rewrite_committed_json_only_with_save(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import __main__ as bench_main
        from benchmarks._timing import save_result
    finally:
        sys.path.remove(str(ROOT))
    target = tmp_path / "bench.json"
    save_result(target, {"x": 1}, save=False)
    assert not target.exists()
    save_result(target, {"x": 1}, save=True)
    assert json.loads(target.read_text()) == {"x": 1}
    calls = []
    fake = types.SimpleNamespace(main=lambda save=False: calls.append(save))
    monkeypatch.setattr(bench_main.importlib, "import_module", lambda name: fake)
    assert bench_main.main(["quantile"]) == 0
    assert bench_main.main(["quantile", "--save"]) == 0
    assert calls == [False, True]
    # options such as --quick reach only benchmarks whose main takes them; others refuse them up front
    assert bench_main.main(["quantile", "--quick"]) == 2 and calls == [False, True]
    fake.main = lambda save=False, options=(): calls.append((save, list(options)))
    assert bench_main.main(["quantile", "--quick", "--save"]) == 0
    assert calls[-1] == (True, ["--quick"])
    for path in (ROOT / "benchmarks").glob("bench_*.py"):
        text = path.read_text()
        assert re.search(r"def main\(save: bool = False(, options[^)]*)?\)", text), path.name
        assert ".write_text(" not in text, f"{path.name} writes a file without going through save_result"


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


HEAVY = {"sklearn", "scipy", "scipy.stats", "tqdm", "dask", "distributed", "pandas", "opendp", "dp_accounting",
         "matplotlib", "statsmodels"}


def test_import_is_lazy_and_the_public_names_are_unchanged():
    """``import dpcp_tutorial`` loads none of its modules (timed in ``python -m benchmarks import``);
    the first name used loads only what its module needs; names and dir() are those of an eager import."""
    import dpcp_tutorial

    assert not (_modules_after("import dpcp_tutorial") & (HEAVY | {"numpy"}))
    assert not (_modules_after("from dpcp_tutorial import private_quantile") & (HEAVY - {"scipy"}))
    every = set(dpcp_tutorial.__all__)
    assert set(dir(dpcp_tutorial)) >= every
    for name in every:
        assert getattr(dpcp_tutorial, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        dpcp_tutorial.not_a_name
