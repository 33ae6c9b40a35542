"""Configuration shared by every test file."""

from __future__ import annotations

import pytest

#: Module fixtures that need more than a few seconds to set up, by test file: every test of that file that
#: uses one, directly or through another fixture, is marked ``slow``, so that ``make unit`` leaves it out and
#: ``make test`` runs it.
#: ``graded``: a folder of submissions graded once (subprocesses that run into time limits on purpose);
#: ``client``: a Dask cluster of two worker processes (the distributed releases against the in-memory ones).
SLOW_FIXTURES = {"test_grading.py": "graded", "test_scale.py": "client"}

#: The test files that take longest, run first: ``make test`` hands whole files to its two workers in collection
#: order (``--dist loadfile --no-loadscope-reorder``), so that the long ones start early and the many short files
#: that follow fill the end, and the workers finish together. Only the order changes. (CPU seconds on one core,
#: and wall seconds of waiting, measured in ``make test``.)
LONG_FIRST = ("test_grading_sandbox.py",     # 19 s CPU, 70 s wall: every exercise graded twice in sandboxes
              "test_grading.py",             # 3 s CPU, 50 s wall: submissions that hang until their time limits
              "test_grading_nbgrader.py",    # 43 s
              "test_exercises_ch04.py",      # 22 s
              "test_bad_input_sweep.py",     # 21 s
              "test_unbounded.py",           # 21 s
              "test_private_split.py",       # 17 s
              "test_tukey_exact_degenerate.py", "test_private_errors.py", "test_dpcp.py", "test_conformal.py",
              "test_exercises_ch02.py")     # 5-17 s each
# The two grading files wait for sandboxed submissions more than they compute: at the start, beside the book
# builds, their waiting costs no wall time, whereas at the end it would leave a core idle. test_grading.py's limit
# for loading an exercise (40 s, against about 2 s on an idle machine) leaves room for the load of the builds.


@pytest.hookimpl(tryfirst=True)          # before the deselection by marker (-m "not slow")
def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))     # stable: the rest keep their order
    for item in items:
        fixture = SLOW_FIXTURES.get(item.path.name)
        if fixture is not None and fixture in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
