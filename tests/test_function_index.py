"""The reader's-path pages stay complete: every public name is documented and indexed."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import make_function_index  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_function_index_page_is_up_to_date():
    assert make_function_index.PAGE.read_text(encoding="utf-8") == make_function_index.render(), (
        "book/function_index.md is stale: run `.venv/bin/python tests/make_function_index.py`")


def test_every_public_name_is_in_the_api_reference():
    api = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    missing = [name for name in make_function_index.public_names() if name not in api]
    assert not missing, f"add these names to book/api.md: {missing}"
