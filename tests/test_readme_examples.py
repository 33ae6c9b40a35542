"""The README's and the Deploying page's snippets, and the API page's recommended estimators, run as written.

Each Python block runs **alone**, in a namespace of its own (nothing defined by an earlier block is visible), as a
reader who copies one block into a fresh interpreter would run it. The README's Dask block runs on the default
Dask scheduler (its comment says how to reach a cluster). Warnings are errors here (pytest's
``filterwarnings = error``), so an example that warns fails too.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SECTION = "## Using the package from your own code"
DASK = "## Running on a cluster (Dask)"
API = ROOT / "book" / "api.md"
DEPLOYING = ROOT / "book" / "deploying.md"


def _blocks(path=README, section=SECTION):
    text = path.read_text()
    start = text.index(section)
    end = text.find("\n## ", start + len(section))
    return re.findall(r"```python\n(.*?)```", text[start:end if end >= 0 else None], flags=re.S)


def _run_alone(block, name):
    namespace = {"__name__": "__main__"}
    exec(compile(block, name, "exec"), namespace)      # noqa: S102 - the pages are ours
    return namespace


def test_the_section_has_the_three_recommended_examples():
    recommended = "\n".join(_blocks()[:3])
    for name in ("PrivateSplitConformalRegressor", "PrivateSplitConformalClassifier", "private_depth_median",
                 "load_rand_hie", "privacy_", "PublicScaler"):
        assert name in recommended
    assert "rng=" not in recommended            # real releases draw fresh OS entropy
    assert "rng=" not in "".join(_blocks(README, DASK))


def test_the_readme_examples_run_each_alone(capsys):
    pytest.importorskip("statsmodels")
    spaces = [_run_alone(block, f"README block {i}") for i, block in enumerate(_blocks())]
    out = capsys.readouterr().out
    assert "coverage" in out and "Privacy account (chapter 4)" in out
    model, clf = spaces[0]["model"], spaces[1]["clf"]
    assert model.privacy_.add_remove == (1.0, 1e-6)
    assert any("PublicScaler" in line for line in model.privacy_.public)
    assert 0 < model.qhat_ < 1 and 0 < clf.qhat_ < 1


def test_the_readme_dask_example_runs_alone(capsys):
    pytest.importorskip("dask.dataframe")
    (block,) = _blocks(README, DASK)
    space = _run_alone(block, "README Dask block")
    assert 0 < space["qhat"] <= 1 and capsys.readouterr().out.strip()


def test_the_api_page_examples_run_each_alone(capsys):
    pytest.importorskip("statsmodels")
    blocks = _blocks(API, "## Recommended estimators")
    assert blocks and "rng=" not in "".join(blocks)
    spaces = [_run_alone(block, f"API block {i}") for i, block in enumerate(blocks)]
    assert "Privacy account (chapter 4)" in capsys.readouterr().out
    assert any(space.get("reg") is not None and space["reg"].privacy_.relation == "add/remove" for space in spaces)


def test_the_deploying_page_examples_run_each_alone(capsys):
    blocks = _blocks(DEPLOYING, "## 3. Account for the whole pipeline")
    assert len(blocks) == 2
    spaces = [_run_alone(block, f"deploying block {i}") for i, block in enumerate(blocks)]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "(1.0, 1e-06)" and lines[1] == "1.0"
    assert spaces[1]["budget"].account().replace_one[0] == 2.0
    every = re.findall(r"```python\n", DEPLOYING.read_text())
    assert len(every) == len(blocks)            # no other Python block on the page goes untested
