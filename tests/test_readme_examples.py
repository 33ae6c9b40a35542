"""The README's usage section and the API page's recommended estimators run as written (issue 19, section 1).

The Python blocks of each section run in order, in one namespace. Only the README section "Using the package
from your own code" is executed (the Dask section needs a cluster address), and the API page's "Recommended
estimators". Warnings are errors here (pytest's ``filterwarnings = error``), so an example that warns fails too.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SECTION = "## Using the package from your own code"
API = ROOT / "book" / "api.md"


def _blocks(path=README, section=SECTION):
    text = path.read_text()
    start = text.index(section)
    end = text.index("\n## ", start + len(section))
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_the_section_has_the_three_recommended_examples():
    recommended = "\n".join(_blocks()[:3])
    for name in ("PrivateSplitConformalRegressor", "PrivateSplitConformalClassifier", "private_depth_median",
                 "load_rand_hie", "privacy_"):
        assert name in recommended
    assert "rng=" not in recommended            # real releases draw fresh OS entropy (issue 19, section 4)


def test_the_readme_examples_run(capsys):
    pytest.importorskip("statsmodels")
    namespace = {}
    for block in _blocks():
        exec(compile(block, str(README), "exec"), namespace)      # noqa: S102 - the README is ours
    out = capsys.readouterr().out
    assert "coverage" in out and "Privacy account (chapter 4)" in out
    assert namespace["model"].privacy_.add_remove == (1.0, 1e-6)
    assert 0 < namespace["model"].qhat_ < 1 and 0 < namespace["clf"].qhat_ < 1


def test_the_api_page_examples_run(capsys):
    pytest.importorskip("statsmodels")
    blocks = _blocks(API, "## Recommended estimators")
    assert blocks and "rng=" not in "".join(blocks)
    namespace = {}
    for block in blocks:
        exec(compile(block, str(API), "exec"), namespace)      # noqa: S102
    assert "Privacy account (chapter 4)" in capsys.readouterr().out
    assert namespace["reg"].privacy_.relation == "add/remove"


def test_the_deploying_page_examples_run(capsys):
    blocks = _blocks(ROOT / "book" / "deploying.md", "## 3. Account for the whole pipeline")
    assert blocks
    namespace = {}
    for block in blocks:
        exec(compile(block, "deploying.md", "exec"), namespace)      # noqa: S102
    assert capsys.readouterr().out.splitlines()[0] == "1.0"
    assert namespace["budget"].account().replace_one[0] == 2.0
