"""The grader's entry points: :func:`grade_folder` (a folder of submissions, with its CSV files) and
:func:`grade_submission` (one submission); both refuse to run student code without a sandbox."""

from __future__ import annotations

import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import _isolation
from ._process import prepare_isolation, reap
from ._rows import Row, default_paths, labelled, make_row, write_outputs
from ._run import Context, grade, scratch_root
from ._solutions import book_solutions, default_book
from ._submissions import Submission, load_submission, read_all
from ._table import Exercise, grading_table, select

SECRET_VARIABLE = "DPCP_GRADING_SECRET"
"""The environment variable the grader (like the checkers) reads the instructor's secret from."""


def check_isolation(unsafe_no_sandbox: bool, secret: str | None) -> None:
    """Fail closed: grading needs a working bubblewrap sandbox unless the caller asks for an unsafe practice run,
    which never sees the instructor's secret (a submission could read it from the grader's process)."""
    if unsafe_no_sandbox:
        if secret is not None:
            raise ValueError("--unsafe-no-sandbox is for practice only and grades with the public cases: do not "
                             f"give a secret (--secret, --secret-file or {SECRET_VARIABLE})")
        return
    reason = _isolation.probe()
    if reason is not None:
        raise _isolation.SandboxUnavailable(f"grading refuses to run without a sandbox: {reason}")


def resolve_secret(secret: str | None, secret_file: str | Path | None) -> str | None:
    """The instructor's secret: from ``secret_file``, else ``secret``, else the environment; ``None`` if none."""
    if secret_file is not None:
        value = Path(secret_file).read_text(encoding="utf-8").strip()
        if not value:
            raise ValueError(f"the secret file {secret_file} is empty")
        return value
    if secret:
        return secret
    return os.environ.get(SECRET_VARIABLE) or None


def grade_submission(student: str, paths: list[Path], checker_names: list[str] | None = None, *,
                     time_limit: float = 10.0, exercise_timeout: float = 120.0, submission_timeout: float = 600.0,
                     secret: str | None = None, memory_mb: int = 2048, book: Path | None = None,
                     unsafe_no_sandbox: bool = False) -> list[Row]:
    """Grade one submission (its code in a sandbox per exercise); one :class:`Row` per exercise.

    ``checker_names`` may name checkers, labels or functions (default: every exercise).
    """
    exercises = select(",".join(checker_names)) if checker_names else grading_table()
    check_isolation(unsafe_no_sandbox, secret)
    submission = load_submission(paths, student)
    root = scratch_root()
    try:
        ctx = Context(time_limit, exercise_timeout, submission_timeout, secret, memory_mb, 200,
                      book_solutions(book), root, sandboxed=not unsafe_no_sandbox)
        prepare_isolation(ctx.sandboxed)
        rows, _ = grade(submission, exercises, ctx)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return labelled(rows, ctx.sandboxed)


def _output_paths(out, totals, feedback_dir) -> tuple[Path | None, Path | None, Path | None]:
    """The grades CSV, the totals CSV and the feedback folder (the last two default to names next to the first)."""
    out_path = Path(out) if out is not None else None
    totals_path, feedback_path = (default_paths(out_path) if out_path is not None else (None, None))
    totals_path = Path(totals) if totals is not None else totals_path
    feedback_path = Path(feedback_dir) if feedback_dir is not None else feedback_path
    return out_path, totals_path, feedback_path


def _grade_all(submissions: list[Submission], chosen: list[Exercise], ctx: Context, jobs: int, progress: bool,
               stdout: dict[str, list[str]]) -> list[Row]:
    """Every submission's rows, ``jobs`` submissions at a time; a bug of the grader on one submission gives it
    rows with the status ``error`` instead of ending the batch. The lines each printed go into ``stdout``."""
    def one(submission: Submission) -> list[Row]:
        try:
            rows, printed = grade(submission, chosen, ctx)
        except Exception as exc:  # noqa: BLE001 - a bug of the grader must not cost the batch its CSV
            return [make_row(submission.student, e, "error", [f"error in the grader: {type(exc).__name__}: "
                                                              f"{str(exc)[:200]}"]) for e in chosen]
        stdout[submission.student] = printed
        return rows

    rows: list[Row] = []
    with ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
        graded = pool.map(one, submissions)
        if progress:
            from tqdm.auto import tqdm

            graded = tqdm(graded, total=len(submissions), desc="grading", unit="submission")
        for student_rows in graded:
            rows.extend(student_rows)
    return rows


def grade_folder(folder, out=None, *, exercises: str | None = None, time_limit: float = 10.0,
                 exercise_timeout: float = 120.0, submission_timeout: float = 600.0, jobs: int = 1,
                 progress: bool = True, secret: str | None = None, secret_file=None, totals=None,
                 feedback_dir=None, memory_mb: int = 2048, stdout_lines: int = 200, book="auto",
                 salt_per_student: bool = False, unsafe_no_sandbox: bool = False, tmpfs_mb: int = 256) -> list[Row]:
    """Grade every submission in ``folder``; write the CSV files when ``out`` is given; return the rows.

    ``book``: the folder of the instructor edition's notebooks, whose solutions (and reference files,
    ``book/reference``) a submission must not copy (``"auto"``: the book next to the package, when there is one;
    ``None``: no such check). ``salt_per_student``: each student's graded cases are drawn from the secret and
    the student's name (a draw of their own for every student).
    Each exercise runs in a bubblewrap sandbox (:mod:`._isolation`); without one this refuses
    (:class:`~._isolation.SandboxUnavailable`) unless ``unsafe_no_sandbox`` asks for a practice run, which
    grades with the public cases only.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder of submissions")
    chosen = select(exercises)
    secret_value = resolve_secret(secret, secret_file)
    check_isolation(unsafe_no_sandbox, secret_value)
    if secret_value is None:
        print("warning: no grading secret (--secret, --secret-file or DPCP_GRADING_SECRET): grading with the "
              "public cases, which students can run themselves", file=sys.stderr)
    submissions = read_all(folder)          # every submission is in memory before any student code runs
    out_path, totals_path, feedback_path = _output_paths(out, totals, feedback_dir)
    root = scratch_root()
    book_dir = default_book() if book == "auto" else (Path(book) if book is not None else None)
    prepare_isolation(not unsafe_no_sandbox)
    ctx = Context(time_limit, exercise_timeout, submission_timeout, secret_value, memory_mb, stdout_lines,
                  book_solutions(book_dir), root, salt_per_student=salt_per_student,
                  sandboxed=not unsafe_no_sandbox, tmpfs_mb=tmpfs_mb)
    stdout: dict[str, list[str]] = {}
    try:
        rows = _grade_all(submissions, chosen, ctx, jobs, progress, stdout)
    finally:
        reap()
        shutil.rmtree(root, ignore_errors=True)
    rows = labelled(rows, ctx.sandboxed)
    if out_path is not None:
        write_outputs(rows, out_path, totals_path, feedback_path, stdout, secret_value is not None)
    return rows
