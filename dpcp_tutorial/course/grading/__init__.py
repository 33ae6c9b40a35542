"""Batch grading of the book's coding exercises.

``python -m dpcp_tutorial.course.grading SUBMISSIONS --out grades.csv``

A *submission* is one ``.ipynb`` (nbformat 4 or 3) or ``.py`` file directly inside ``SUBMISSIONS`` (the
student is the file name without its extension) or one sub-folder (the student is the folder name; every
``.ipynb``/``.py`` file in it, in sorted order, belongs to that student). Each coding exercise asks for one or
more functions with fixed names (``python -m dpcp_tutorial.course.grading --list`` prints the table); the grader
grades the submission's functions of those names with the exercise's checker(s).

How a submission is graded (the integrity model; ``book/grading.md`` says what remains outside it):

* Every submission is read into the grader's memory before any student code runs; a submission is parsed,
  never imported, by the grader. For each exercise only the statements its functions need are run
  (:mod:`._source`): definitions, imports, constants (tuple unpacking included), definitions nested in
  ``if``/``with``/``try`` blocks, cells that start with a Python cell magic such as ``%%time`` -- never a
  chapter's experiments, plots or checker calls, unless an answer's function reads their result; of a
  hand-out's unchanged chapter cells only the imports.
* Each exercise runs in a fresh bubblewrap sandbox (:mod:`._isolation`): its own namespaces, read-only binds
  of exactly the Python runtime and the allowed packages, a size-limited tmpfs holding a copy of the
  submission as the only writable place, limits on CPU time, memory, processes and file size, and an
  unprivileged uid of its own when the grader is root. Without ``bwrap`` grading refuses, unless
  ``--unsafe-no-sandbox`` asks for a practice run with the public cases.
* The sandbox holds no implementation of a graded function: the course package is not importable there; a
  stand-in exports an allowlist of helpers, with the graded exercise's implementations replaced by stubs
  (:mod:`._stage`). It holds no case, no expected answer and no verdict either: the grader sends it one call
  at a time as plain data, it sends back the outputs as plain data (JSON, never pickles), the grader
  validates their type, shape and finiteness, and every comparison with the expected answer happens in the
  grader's process. Inputs modified in place and numpy's global random state are judged from a second call
  on the same argument objects under another global seed; what the sandbox reports about itself is feedback
  without points.
* Graded runs draw their cases from the instructor's secret (``--secret``, ``--secret-file`` or the
  environment variable ``DPCP_GRADING_SECRET``), which never enters a sandbox; without a secret the public
  cases (those a student runs in the notebook) are used and a warning says so. Graded feedback names the
  mistake without printing expected values, and nothing a graded call prints or writes into an exception's
  text reaches it.
* An answer whose source uses the package's own implementation of the exercise (or a helper of the checkers
  or the grader), or whose function is a solution of the instructor edition (a cell tagged ``solution``, or
  the same code as a solution in the book's notebooks when ``--book`` points to them), is *not graded*.

Time limits: ``--time-limit`` seconds per call of a student's function, ``--exercise-timeout`` per exercise
(loading what it needs included), ``--submission-timeout`` per submission; a process that overruns is
ended, the exercise recorded, and grading goes on with the next exercise. Malformed or
duplicate submissions produce rows that say so; the batch always finishes with its CSV files.

Output: ``--out`` (one row per student and exercise: ``student, exercise, function, passed, status,
cases_passed, cases_total, points, max_points, feedback, isolation``; ``status`` is one of passed / failed / not
submitted / not graded / error), a totals file an LMS can import (``student, points, max_points``;
``--totals``, default ``<out>_totals.csv``), and a feedback file per student (``--feedback-dir``, default
``<out>_feedback/``) with every exercise's feedback (and, in a practice run without a secret only, the first
lines the submission printed). Every row records the isolation used (``isolation`` column).

The modules, in the order of a run: :mod:`._table` (the exercises and their points), :mod:`._submissions`
(reading the folder), :mod:`._solutions` (the book's solutions, for the copy check), :mod:`._batch` (the
entry points), :mod:`._run` (one submission, exercise by exercise), :mod:`._process` (the sandbox process
and its protocol, seen from the grader), :mod:`._rows` (the rows and the CSV and feedback files) and
:mod:`._cli` (the command line); :mod:`._source`, :mod:`._isolation`, :mod:`._stage` and :mod:`._sandbox`
are cited above.
"""

from __future__ import annotations

from ._batch import grade_folder, grade_submission
from ._cli import main
from ._process import wall_limit
from ._rows import COLUMNS, STATUSES, Row, write_outputs
from ._solutions import book_solutions
from ._submissions import Submission, find_submissions, load_submission
from ._table import Exercise, exercise_table, grading_table


def __getattr__(name):
    # POINTS (the exercises' points, collected from the checkers) is read when first asked for
    if name == "POINTS":
        from . import points

        return points.POINTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Row", "STATUSES", "exercise_table", "find_submissions", "grade_folder", "grade_submission",
           "grading_table", "load_submission", "main"]
