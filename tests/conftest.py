"""Configuration shared by every test file."""

from __future__ import annotations

import pytest

#: Module fixtures that need more than a few seconds to set up (subprocesses that run into time limits on
#: purpose): every test that uses one, directly or through another fixture, is marked ``slow``, so that
#: ``make unit`` leaves it out and ``make test`` runs it. ``graded``: a folder of submissions graded once
#: (tests/test_grading.py).
SLOW_FIXTURES = frozenset({"graded"})


@pytest.hookimpl(tryfirst=True)          # before the deselection by marker (-m "not slow")
def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
