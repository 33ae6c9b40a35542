"""Configuration shared by every test file."""

from __future__ import annotations

import pytest

#: Module fixtures that need more than a few seconds to set up, by test file: every test of that file that
#: uses one, directly or through another fixture, is marked ``slow``, so that ``make unit`` leaves it out and
#: ``make test`` runs it.
#: ``graded``: a folder of submissions graded once (subprocesses that run into time limits on purpose);
#: ``client``: a Dask cluster of two worker processes (the distributed releases against the in-memory ones).
SLOW_FIXTURES = {"test_grading.py": "graded", "test_scale.py": "client"}


@pytest.hookimpl(tryfirst=True)          # before the deselection by marker (-m "not slow")
def pytest_collection_modifyitems(config, items):
    for item in items:
        fixture = SLOW_FIXTURES.get(item.path.name)
        if fixture is not None and fixture in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
