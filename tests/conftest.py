"""Configuration shared by every test file."""

from __future__ import annotations

import pytest

#: Module fixtures that need more than a few seconds to set up, by test file: every test of that file that
#: uses one, directly or through another fixture, is marked ``slow``, so that ``make unit`` leaves it out and
#: ``make test`` runs it.
#: ``graded``: a folder of submissions graded once (subprocesses that run into time limits on purpose);
#: ``client``: a Dask cluster of two worker processes (the distributed releases against the in-memory ones).
SLOW_FIXTURES = {"test_grading.py": "graded", "test_scale.py": "client"}

#: The test files that take longest (CPU seconds on one core, measured), run first: ``make test`` hands whole files
#: to its two workers in collection order (``--dist loadfile --no-loadscope-reorder``), so that the long ones start
#: early and the many short files that follow fill the end, and the workers finish together. Only the order changes.
LONG_FIRST = ("test_grading_sandbox.py",     # 55 s: every exercise graded twice in sandboxes
              "test_private_errors.py",      # 40 s: exact halfspace audits on lattices
              "test_grading_nbgrader.py",    # 39 s
              "test_exercises_ch04.py",      # 26 s
              "test_private_split.py",       # 24 s
              "test_bad_input_sweep.py",     # 20 s
              "test_tukey_exact_degenerate.py", "test_unbounded.py", "test_dpcp.py", "test_conformal.py",
              "test_exercises_ch02.py")     # 10-15 s each
# test_grading.py (12 s) keeps its place: its graded folder runs into wall-clock limits on purpose (20 s per
# exercise), and at the start the book builds load the cores most


@pytest.hookimpl(tryfirst=True)          # before the deselection by marker (-m "not slow")
def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))     # stable: the rest keep their order
    for item in items:
        fixture = SLOW_FIXTURES.get(item.path.name)
        if fixture is not None and fixture in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
