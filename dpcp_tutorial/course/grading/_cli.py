"""The command line: ``python -m dpcp_tutorial.course.grading SUBMISSIONS --out grades.csv``.

See :mod:`dpcp_tutorial.course.grading`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import _isolation
from ._batch import SECRET_VARIABLE, grade_folder
from ._rows import Row, default_paths
from ._table import grading_table


def _parser() -> argparse.ArgumentParser:
    """The command line's options (``--help`` prints them)."""
    parser = argparse.ArgumentParser(prog="python -m dpcp_tutorial.course.grading",
                                     description="Grade a folder of submitted notebooks or .py files with the "
                                                 "book's exercise checkers and write the grades CSV, a totals "
                                                 "CSV and one feedback file per student.")
    parser.add_argument("submissions", nargs="?", help="folder with one .ipynb/.py file or one sub-folder per student")
    parser.add_argument("--out", default="grades.csv", help="grades CSV to write (default: grades.csv)")
    parser.add_argument("--totals", help="totals CSV (student, points, max_points); default <out>_totals.csv")
    parser.add_argument("--feedback-dir", help="one feedback file per student; default <out>_feedback/")
    parser.add_argument("--exercises", help="comma-separated chapters (ch01 or 1), exercise labels, function or "
                                            "checker names; default: every coding exercise")
    parser.add_argument("--secret", help=f"the instructor's secret for the graded cases (or {SECRET_VARIABLE})")
    parser.add_argument("--secret-file", help="a file holding the secret (hidden from the submissions)")
    parser.add_argument("--salt-per-student", action="store_true",
                        help="draw each student's graded cases from the secret and their name (a draw "
                             "of their own for every student)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per call of a student's function")
    parser.add_argument("--exercise-timeout", type=float, default=120.0, help="seconds per exercise (hard limit)")
    parser.add_argument("--submission-timeout", type=float, default=600.0, help="seconds per submission")
    parser.add_argument("--memory-limit", type=int, default=2048, help="megabytes of memory per submission")
    parser.add_argument("--stdout-lines", type=int, default=200, help="lines of a submission's output kept")
    parser.add_argument("--book", default="auto", help="folder of the instructor edition's notebooks, to refuse "
                                                       "copied solutions (default: the book next to the package, "
                                                       "when there is one)")
    parser.add_argument("--no-copy-check", action="store_true", help="do not compare the answers with the book's "
                                                                     "solutions")
    parser.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel (default 1)")
    parser.add_argument("--tmpfs-limit", type=int, default=256, help="megabytes of the sandbox's only writable "
                                                                     "folder (default 256)")
    parser.add_argument("--unsafe-no-sandbox", action="store_true",
                        help="practice only: run the submissions without the bubblewrap sandbox (they can read "
                             "and change your files); refuses a secret, so grades use the public cases")
    parser.add_argument("--list", action="store_true", help="print the exercises and the function names they ask for")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    return parser


def _print_table() -> None:
    """``--list``: every exercise, its points, functions and checkers, and the isolation this machine offers."""
    print(f"{'chapter':8} {'exercise':22} {'points':>6}  functions (checkers)")
    for e in grading_table():
        print(f"{e.chapter:8} {e.label:22} {e.max_points:6g}  {', '.join(e.functions)} ({', '.join(e.checkers)})")
    print(f"isolation on this machine: {_isolation.describe()}")


def _print_summary(rows: list[Row], args: argparse.Namespace) -> None:
    """Each student's points and passed exercises, and where the files were written."""
    for student in sorted({row.student for row in rows}):
        mine = [row for row in rows if row.student == student]
        print(f"{student}: {sum(r.points for r in mine):g} of {sum(r.max_points for r in mine):g} points, "
              f"{sum(r.passed for r in mine)}/{len(mine)} exercises passed")
    totals, feedback = default_paths(Path(args.out))
    print(f"wrote {len(rows)} rows to {args.out}, totals to {args.totals or totals}, feedback files to "
          f"{args.feedback_dir or feedback}")


def main(argv: list[str] | None = None) -> int:
    """Run the grader's command line on ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        _print_table()
        return 0
    if not args.submissions:
        parser.error("give the folder of submissions (or --list)")
    for name in ("time_limit", "exercise_timeout", "submission_timeout", "memory_limit", "stdout_lines",
                 "tmpfs_limit"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    try:
        rows = grade_folder(args.submissions, args.out, exercises=args.exercises, time_limit=args.time_limit,
                            exercise_timeout=args.exercise_timeout, submission_timeout=args.submission_timeout,
                            jobs=args.jobs, progress=not args.quiet, secret=args.secret, secret_file=args.secret_file,
                            totals=args.totals, feedback_dir=args.feedback_dir, memory_mb=args.memory_limit,
                            stdout_lines=args.stdout_lines, book=None if args.no_copy_check else args.book,
                            salt_per_student=args.salt_per_student,
                            unsafe_no_sandbox=args.unsafe_no_sandbox, tmpfs_mb=args.tmpfs_limit)
    except (ValueError, OSError, _isolation.SandboxUnavailable) as exc:
        parser.error(str(exc))
    if not args.quiet:
        _print_summary(rows, args)
    return 0
