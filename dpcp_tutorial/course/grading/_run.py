"""Grading one submission: exercise by exercise, the static checks, then a sandbox of its own.

:func:`grade` walks the exercises of one submission. For each one, :func:`_row_without_running` settles
the cases that need no sandbox (nothing submitted, the submission's time spent, an answer refused from
its source, a statement that hung before); otherwise :func:`_sandboxed_row` starts a sandbox, loads the
statements the exercise's functions need, refuses functions that are not the submission's own
(:func:`origin_verdict`) and runs the checkers' calls through it. A sandbox that overruns, dies or breaks
the protocol ends the exercise (:func:`_abort_row`) and grading goes on with the next one.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import _source
from ._process import Abort, RemoteExecutor, Sandbox, reap
from ._rows import Row, make_row
from ._solutions import ANY_NAME
from ._submissions import Submission
from ._table import Exercise, checkers


def package_names() -> frozenset:
    """The public names of the package (an answer that uses the one it must write is not graded)."""
    import dpcp_tutorial

    return frozenset(dpcp_tutorial.__all__)


@dataclass
class Context:
    """The settings of one grading run, shared by all its submissions, and its staged sandbox folders."""

    time_limit: float
    exercise_timeout: float
    submission_timeout: float
    secret: str | None
    memory_mb: int
    stdout_lines: int
    solutions: dict
    scratch_root: Path
    salt_per_student: bool = False    # each student's graded cases also depend on their name
    sandboxed: bool = True
    tmpfs_mb: int = 256
    _stages: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def stage(self, exercise: Exercise) -> Path:
        """The staged runner and helpers for an exercise (one folder per set of forbidden implementations)."""
        from . import _stage

        key = tuple(sorted(exercise.implements))
        with self._lock:
            if key not in self._stages:
                folder = Path(tempfile.mkdtemp(prefix="runtime-", dir=self.scratch_root))
                _stage.stage(folder, key)
                self._stages[key] = folder
            return self._stages[key]


def scratch_root() -> Path:
    """A fresh private folder for the copies of the submissions and the staged sandbox folders."""
    root = Path(tempfile.mkdtemp(prefix="dpcp-grading-"))
    root.chmod(0o711)       # a sandbox's own uid may pass through to its (world-readable) staged folders
    return root


def copy_folder(submission: Submission, scratch: Path) -> None:
    """The private copy: the student's own folder (at most 100 MB) or their single file; world-readable, so
    that a sandbox running under its own uid can copy it into its tmpfs."""
    budget = 100 * 2**20
    if submission.folder:
        for path in sorted(submission.folder.rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            size = path.stat().st_size
            if size > budget:
                continue
            budget -= size
            target = scratch / path.relative_to(submission.folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    else:
        for path in submission.files:
            if path.is_file() and not path.is_symlink():
                shutil.copyfile(path, scratch / path.name)
    for path in [scratch, *scratch.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def refusal(submission: Submission, exercise: Exercise, needed: list, ctx: Context, names) -> str | None:
    """Why an answer is not graded, from its source alone (the static checks; ``None`` if none applies)."""
    refused = _source.forbidden(_source.package_uses(needed, exercise.functions, names), exercise.implements)
    if not refused and any("exercise_solutions" in u.source for u in needed):
        refused = "uses the book's reference solutions (exercise_solutions)"
    if not refused:
        for unit in needed:
            if "solution" in unit.tags and set(exercise.functions) & unit.defines:
                return (f"{', '.join(sorted(set(exercise.functions) & unit.defines))} comes from a cell "
                        "of the instructor edition tagged 'solution'")
    if not refused and ctx.solutions:
        mine = _source.function_sources(needed)
        copied = sorted(f for f in exercise.functions if set(mine.get(f, [])) & ctx.solutions.get(f, set()))
        if copied:
            refused = f"{', '.join(copied)} is the instructor edition's solution, copied from the book"
        copied = [] if refused else _source.copied_references(needed, ctx.solutions.get(ANY_NAME, set()))
        if copied:
            refused = f"{', '.join(copied)} is a copy of one of the book's reference implementations (book/reference)"
    return refused


@dataclass
class _Attempt:
    """One submission being graded: its private copy, its deadline and the statements that hung so far."""

    submission: Submission
    ctx: Context
    copy: Path
    deadline: float                   # time.monotonic() at which the submission's time is spent
    names: frozenset                  # the package's public names
    stdout: list[str] = field(default_factory=list)
    hung: set[int] = field(default_factory=set)

    @property
    def student(self) -> str:
        return self.submission.student

    @property
    def keep_output(self) -> bool:
        """Whether what the submission prints is kept: never while graded cases run (it would show them)."""
        return self.ctx.secret is None


def grade(submission: Submission, exercises: list[Exercise], ctx: Context) -> tuple[list[Row], list[str]]:
    """Grade the ``exercises`` of one submission, each in a sandbox of its own; return one row per exercise
    and the first lines the submission printed (none when graded with a secret)."""
    if submission.refusal:
        return [make_row(submission.student, e, "not graded", [f"not graded: {submission.refusal}"])
                for e in exercises], []
    deadline = time.monotonic() + ctx.submission_timeout
    copy = Path(tempfile.mkdtemp(prefix="submission-", dir=ctx.scratch_root))
    attempt = _Attempt(submission, ctx, copy, deadline, package_names())
    try:
        copy_folder(submission, copy)
        rows = [_grade_exercise(attempt, exercise) for exercise in exercises]
    finally:
        reap()
        shutil.rmtree(copy, ignore_errors=True)
    return rows, attempt.stdout


def _grade_exercise(attempt: _Attempt, exercise: Exercise) -> Row:
    """The row of one exercise: settled without running anything, or from a run in a sandbox."""
    needed = _source.needed_units(attempt.submission.units, exercise.functions)
    row = _row_without_running(attempt, exercise, needed)
    return row if row is not None else _sandboxed_row(attempt, exercise, needed)


def _row_without_running(attempt: _Attempt, exercise: Exercise, needed: list) -> Row | None:
    """The row of an exercise that is not run: no function of it is defined, the submission's time is spent,
    its source is refused, or it needs a statement that hung before; ``None`` when it is to be run."""
    submission, ctx = attempt.submission, attempt.ctx
    if not any(set(exercise.functions) & u.defines for u in needed):
        note = f"; problems while reading: {' / '.join(submission.problems[:3])}" if submission.problems else ""
        return make_row(attempt.student, exercise, "not submitted",
                        [f"not submitted: the submission defines no function named "
                         f"{' or '.join(exercise.functions)}{note}"])
    if time.monotonic() >= attempt.deadline:
        return make_row(attempt.student, exercise, "not graded",
                        [f"not graded: the submission as a whole ran past its time limit of "
                         f"{ctx.submission_timeout:g} s"])
    refused = refusal(submission, exercise, needed, ctx, attempt.names)
    if refused:
        return make_row(attempt.student, exercise, "not graded", [f"not graded: {refused}"])
    blocked = [u for u in needed if u.index in attempt.hung]
    if blocked:
        return make_row(attempt.student, exercise, "not graded",
                        [f"not graded: loading {blocked[0].where} took longer than "
                         f"{ctx.exercise_timeout:g} s earlier; the functions of this exercise need it"])
    return None


def _sandboxed_row(attempt: _Attempt, exercise: Exercise, needed: list) -> Row:
    """Run one exercise in a fresh sandbox, within the exercise's and the submission's time; always close it."""
    ctx = attempt.ctx
    sandbox: Sandbox | None = None
    try:
        sandbox = Sandbox(ctx.stage(exercise), attempt.copy, ctx, attempt.stdout, attempt.keep_output)
        deadline = min(attempt.deadline, time.monotonic() + ctx.exercise_timeout)   # once it has started
        return _checked_row(attempt, exercise, needed, sandbox, deadline)
    except Abort as abort:
        executing = sandbox.executing if sandbox is not None else None
        return _abort_row(attempt, exercise, abort, executing)
    finally:
        if sandbox is not None:
            sandbox.close()


def _checked_row(attempt: _Attempt, exercise: Exercise, needed: list, sandbox: Sandbox, deadline: float) -> Row:
    """Load the statements the functions need, check that the functions are the submission's own, and run
    the exercise's checkers through the sandbox; the row counts the cases passed."""
    reply = sandbox.request({"op": "load", "units": [(u.index, u.filename, u.lineno, u.source, u.where)
                                                     for u in needed]}, deadline)
    problems = [str(p) for p in reply.get("problems", [])][:5]
    origins = sandbox.request({"op": "functions", "names": list(exercise.functions)}, deadline)
    verdict = origin_verdict(exercise, origins.get("functions", {}), problems)
    if verdict is not None:
        return make_row(attempt.student, exercise, verdict[0], verdict[1])
    ctx, specs = attempt.ctx, checkers()
    executor = RemoteExecutor(sandbox, ctx.time_limit, deadline)
    salt = attempt.student if ctx.salt_per_student else None
    results = [specs[name].spec.run(executor, time_limit=ctx.time_limit, secret=ctx.secret, salt=salt)
               for name in exercise.checkers]
    passed = sum(r.cases_passed for r in results)
    total = sum(r.cases_total for r in results)
    feedback = [line for r in results for line in r.feedback]
    if problems and passed < total:
        feedback.append("problems while loading: " + " / ".join(problems[:3]))
    return make_row(attempt.student, exercise, "passed" if passed == total and total else "failed", feedback,
                    passed, total)


def origin_verdict(exercise: Exercise, origins: dict, problems: list[str]):
    """(status, feedback) when the functions cannot be graded as the submission's own; ``None`` when they can."""
    missing = [f for f in exercise.functions if not origins.get(f, {}).get("defined")]
    for function in exercise.functions:
        origin = origins.get(function, {})
        if not origin.get("defined"):
            continue
        kind = origin.get("origin")
        if kind == "package":
            return "not graded", [f"not graded: uses the package's implementation of {function} "
                                  f"({origin.get('name', '')})"]
        if kind == "elsewhere":
            return "not graded", [f"not graded: {function} is not a function defined in the submission "
                                  f"({origin.get('name', '')})"]
        if kind == "not callable":
            return "failed", [f"{function} is not a function (it is a {origin.get('name', 'value')})"]
    if len(missing) == len(exercise.functions):
        note = f"; problems while loading: {' / '.join(problems[:3])}" if problems else ""
        return "not submitted", [f"not submitted: no function named {' or '.join(missing)} after loading{note}"]
    return None


def _abort_row(attempt: _Attempt, exercise: Exercise, abort: Abort, executing: int | None) -> Row:
    """The row of an exercise whose sandbox was ended; a failure counts none of the exercise's cases passed."""
    row = _abort_row_without_cases(attempt, exercise, abort, executing)
    if row.status == "failed":
        specs = checkers()
        total = sum(len(specs[name].spec.cases(attempt.ctx.secret)) for name in exercise.checkers)
        row = make_row(attempt.student, exercise, "failed", row.feedback.split(" | "), 0, total)
    return row


def _abort_row_without_cases(attempt: _Attempt, exercise: Exercise, abort: Abort, executing: int | None) -> Row:
    """What ended the sandbox, as a row: a statement that hung while loading (remembered, so that later
    exercises that need it are not run), the submission's or the exercise's time, a death, or a reply that
    broke the protocol."""
    ctx, student = attempt.ctx, attempt.student
    if abort.kind == "timeout":
        if executing is not None:
            attempt.hung.add(executing)
            where = next((u.where for u in attempt.submission.units if u.index == executing), "a statement")
            return make_row(student, exercise, "not graded",
                            [f"not graded: loading {where} took longer than {ctx.exercise_timeout:g} s"])
        if time.monotonic() >= attempt.deadline:
            return make_row(student, exercise, "not graded", [f"not graded: the submission as a whole ran past "
                                                              f"its time limit of {ctx.submission_timeout:g} s"])
        return make_row(student, exercise, "failed", [f"grading this exercise took longer than "
                                                      f"{ctx.exercise_timeout:g} s; the process was stopped"])
    if abort.kind == "died":
        return make_row(student, exercise, "failed", ["the submission's process died while this exercise was "
                                                      "checked (e.g. os._exit, a crash of compiled code, or more "
                                                      f"memory than the limit of {ctx.memory_mb} MB)"])
    return make_row(student, exercise, "not graded", [f"not graded: the submission's process broke the grading "
                                                      f"protocol ({abort.detail[:100]})"])
