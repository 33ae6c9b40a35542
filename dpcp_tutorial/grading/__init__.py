"""Batch grading of the book's coding exercises: ``python -m dpcp_tutorial.grading SUBMISSIONS --out grades.csv``.

A *submission* is one ``.ipynb`` (nbformat 4 or 3) or ``.py`` file directly inside ``SUBMISSIONS`` (the
student is the file name without its extension) or one sub-folder (the student is the folder name; every
``.ipynb``/``.py`` file in it, in sorted order, belongs to that student). Each coding exercise asks for one or
more functions with fixed names (``python -m dpcp_tutorial.grading --list`` prints the table); the grader
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
"""

from __future__ import annotations

import argparse
import csv
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import _isolation, _source
from .points import POINTS

__all__ = ["Row", "STATUSES", "exercise_table", "find_submissions", "grade_folder", "grade_submission",
           "grading_table", "load_submission", "main"]

STATUSES = ("passed", "failed", "not submitted", "not graded", "error")
COLUMNS = ["student", "exercise", "function", "passed", "status", "cases_passed", "cases_total", "points",
           "max_points", "feedback", "isolation"]
_STARTUP = 120.0          # seconds a sandbox may take to start (Python, numpy), not counted against the student
_MAX_REPLY = 64 * 2**20   # bytes of one reply of the sandbox
_FILE_MB = 64             # largest file a submission may write (RLIMIT_FSIZE)
_PROCESSES = 32           # processes and threads of one sandbox (RLIMIT_NPROC, counted per sandbox)
_UNLIMITED = -1
_UID_BASE = 10**9         # as root, each sandbox runs under a uid of its own above this
_SUFFIXES = _source.SUFFIXES
_SECRET_VARIABLE = "DPCP_GRADING_SECRET"


@dataclass(frozen=True)
class Row:
    """One line of the grades CSV (the first five fields are those of earlier versions of this module)."""

    student: str
    exercise: str
    function: str
    passed: bool
    feedback: str
    status: str = "failed"
    cases_passed: int = 0
    cases_total: int = 0
    points: float = 0.0
    max_points: float = 0.0
    isolation: str = ""


# --------------------------------------------------------------------------------------------------------------
# Exercises


def _checkers() -> dict:
    """Every exercise checker, keyed by checker name, in chapter order."""
    from .. import exercises

    return exercises.all_checkers()


def exercise_table() -> list[tuple[str, str, str, str]]:
    """``(chapter module, exercise label, function name(s), checker name)`` for every checker."""
    return [(check.__module__.rsplit(".", 1)[-1], check.exercise, check.function, name)
            for name, check in _checkers().items()]


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: its label, chapter, functions, checkers and points."""

    label: str
    chapter: str
    functions: tuple[str, ...]
    checkers: tuple[str, ...]
    max_points: float
    implements: tuple[str, ...]

    @property
    def function(self) -> str:
        return " + ".join(self.functions)


def grading_table() -> list[Exercise]:
    """One entry per exercise label (an exercise with several checkers or functions is one entry)."""
    groups: dict[str, list] = {}
    for name, check in _checkers().items():
        groups.setdefault(check.exercise, []).append((name, check))
    table = []
    for label, members in groups.items():
        functions = tuple(f for _, check in members for f in check.functions)
        implements = tuple(sorted({i for _, check in members for i in check.implements}))
        table.append(Exercise(label, members[0][1].__module__.rsplit(".", 1)[-1], functions,
                              tuple(name for name, _ in members), float(POINTS.get(label, 6)), implements))
    return table


def _select(selection: str | None) -> list[Exercise]:
    """Exercises matching a comma-separated list of chapters (``ch01``/``1``), labels, functions or checkers."""
    table = grading_table()
    if not selection:
        return table
    chosen: list[Exercise] = []
    for token in (t.strip() for t in selection.split(",")):
        if not token:
            continue
        chapter = f"ch{int(token):02d}" if token.isdigit() else token
        matches = [e for e in table if token == e.label or token in e.functions or token in e.checkers
                   or chapter == e.chapter]
        if not matches:
            raise ValueError(f"--exercises: {token!r} matches no exercise; run with --list to see the exercises")
        chosen += [m for m in matches if m not in chosen]
    return chosen


# --------------------------------------------------------------------------------------------------------------
# Reading submissions (no student code runs here)


@dataclass
class Submission:
    """A submission as read by the grader: its statements and what went wrong reading it."""

    student: str
    files: list[Path]
    units: list = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    refusal: str = ""                # non-empty: nothing of it is graded (duplicate, unreadable)
    folder: Path | None = None       # copied into the private scratch folder
    defined: set = field(default_factory=set)


def load_submission(paths: list[Path], student: str = "submission") -> Submission:
    """Read a submission's files into statements (:class:`Submission`); nothing of it is executed."""
    paths = [Path(p) for p in paths]
    cells, problems = _source.read_files(paths, student)
    units, more = _source.units_of(cells, student)
    submission = Submission(student, paths, units, problems + more)
    submission.defined = set().union(*(u.defines for u in units)) if units else set()
    if not units and problems:
        submission.refusal = "; ".join(problems)
    return submission


def _entries(folder: Path) -> list[tuple[str, list[Path], Path]]:
    out = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix in _SUFFIXES:
            out.append((entry.stem, [entry], entry))
        elif entry.is_dir():
            files = sorted(p for p in entry.rglob("*") if p.suffix in _SUFFIXES and p.is_file()
                           and ".ipynb_checkpoints" not in p.parts and not any(part.startswith(".") for part in
                                                                              p.relative_to(entry).parts))
            if files:
                out.append((entry.name, files, entry))
    return out


def find_submissions(folder: Path) -> dict[str, list[Path]]:
    """Map student -> files (see the module docstring); a student with two entries gets all their files."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder of submissions")
    found: dict[str, list[Path]] = {}
    for student, files, _ in _entries(folder):
        found.setdefault(student, []).extend(files)
    return found


def _read_all(folder: Path) -> list[Submission]:
    """Every submission of ``folder``, read into memory before any student code runs."""
    entries = _entries(folder)
    count: dict[str, int] = {}
    for student, _, _ in entries:
        count[student] = count.get(student, 0) + 1
    out = []
    for student in sorted(count):
        mine = [(files, where) for s, files, where in entries if s == student]
        if len(mine) > 1:
            names = ", ".join(sorted(where.name for _, where in mine))
            out.append(Submission(student, [f for files, _ in mine for f in files],
                                  refusal=f"two submissions for the student {student} ({names}); hand in one"))
            continue
        files, where = mine[0]
        submission = load_submission(files, student)
        submission.folder = where if where.is_dir() else None
        out.append(submission)
    return out


# --------------------------------------------------------------------------------------------------------------
# The instructor edition's solutions (to refuse a copied or handed-in instructor notebook)


def book_solutions(book: Path | None) -> dict[str, set[str]]:
    """Normalised code of every function in the book's solution cells and ``{solution}`` blocks, by name, and
    (under ``"*"``, without their names) the substantial functions of the reference files ``book/reference``."""
    import json
    import re

    if book is None or not Path(book).is_dir():
        return {}
    fence = re.compile(r"^(`{3,}|:{3,})\{solution\}[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
    code_fence = re.compile(r"^(`{3,})(?:python|\{code-cell\}[^\n]*)?[ \t]*\n(.*?)^\1[ \t]*$", re.S | re.M)
    sources = []
    for path in sorted(Path(book).glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for cell in cells:
            text = "".join(cell.get("source", [])) if isinstance(cell.get("source"), list) else str(cell.get("source", ""))
            if cell.get("cell_type") == "code" and "solution" in cell.get("metadata", {}).get("tags", []):
                sources.append(text)
            elif cell.get("cell_type") == "markdown":
                for block in fence.finditer(text):
                    sources += [m.group(2) for m in code_fence.finditer(block.group(2))]
    out: dict[str, set[str]] = {}
    for text in sources:
        units, _ = _source.units_of([_source.Cell("book", text, frozenset())], "book")
        for name, dumps in _source.function_sources(units).items():
            out.setdefault(name, set()).update(dumps)
    # the copy-ready reference files, under any name ("*": a renamed copy is still a copy)
    out[_ANY_NAME] = _source.reference_functions(Path(book) / "reference")
    return out


_ANY_NAME = "*"


def _default_book() -> Path | None:
    candidate = Path(__file__).resolve().parents[2] / "book"
    return candidate if candidate.is_dir() else None


# --------------------------------------------------------------------------------------------------------------
# The sandbox process, seen from the grader


class _Abort(BaseException):
    """The sandbox overran the exercise's time, died or broke the protocol (ends the exercise)."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(kind)
        self.kind, self.detail = kind, detail


class _Sandbox:
    """One bwrap sandbox (or, for practice, an unsandboxed process) for one exercise of one submission."""

    def __init__(self, stage: Path, copy: Path, ctx: "_Context", stdout: list[str], keep_output: bool):
        import json
        import random

        from ..exercises import _runtime

        self._runtime = _runtime
        read_fd, write_fd = os.pipe()
        sandboxed = ctx.sandboxed
        paths = _isolation.sys_path_inside(sandboxed, stage)
        code = f"import sys; sys.path[:0] = {paths!r}; import _dpcp_runner; _dpcp_runner.main()"
        config = {"memory_mb": int(ctx.memory_mb), "fsize_mb": _FILE_MB, "cpu_s": int(ctx.exercise_timeout) + 10,
                  "nproc": _PROCESSES if sandboxed else _UNLIMITED,
                  "uid": (_UID_BASE + random.SystemRandom().randrange(2**24)) if sandboxed and os.geteuid() == 0
                  else None,
                  "copy_from": _isolation.SUBMISSION if sandboxed else None}
        prefix = _isolation.bwrap_command(stage, copy, ctx.tmpfs_mb) if sandboxed else []
        command = prefix + [_isolation.interpreter(), "-I", "-S", "-c", code, str(write_fd), json.dumps(config)]
        env = dict(_isolation.ENVIRONMENT)
        if not sandboxed:
            env.update(HOME=str(copy), TMPDIR=str(copy))
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, pass_fds=(write_fd,),
                                        cwd=str(copy) if not sandboxed else "/", env=env, start_new_session=True)
        with _LIVE_LOCK:
            _LIVE.add(self.process.pid)
        os.close(write_fd)
        self._fd = read_fd
        self._buffer = bytearray()
        self._nonce = 0
        self.executing: int | None = None
        self._stdout, self._limit, self._keep = stdout, int(ctx.stdout_lines), keep_output
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        try:
            ready = self._next(time.monotonic() + _STARTUP)
            if ready.get("event") != "ready":
                raise _Abort("protocol", "the sandbox did not start")
        except BaseException:
            self.close()
            raise

    def _drain(self) -> None:
        """Read the submission's output in bounded chunks; keep at most the line limit, 500 characters each,
        and only when ``keep_output`` (never while graded cases run)."""
        fd = self.process.stdout.fileno()
        line = bytearray()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            if not self._keep or len(self._stdout) >= self._limit:
                continue
            for piece in chunk.split(b"\n")[:-1] if b"\n" in chunk else []:
                line += piece[:max(0, 500 - len(line))]
                if len(self._stdout) < self._limit:
                    self._stdout.append(line.decode("utf-8", "replace"))
                line = bytearray()
            tail = chunk.rsplit(b"\n", 1)[-1] if b"\n" in chunk else chunk
            line += tail[:max(0, 500 - len(line))]
        if line and self._keep and len(self._stdout) < self._limit:
            self._stdout.append(line.decode("utf-8", "replace"))
        self.process.stdout.close()

    def _read_exact(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Abort("timeout")
            ready, _, _ = select.select([self._fd], [], [], min(left, 1.0))
            if not ready:
                if self.process.poll() is not None and not select.select([self._fd], [], [], 0)[0]:
                    raise _Abort("died")
                continue
            chunk = os.read(self._fd, min(1 << 20, size - len(self._buffer)))
            if not chunk:
                raise _Abort("died")
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _next(self, deadline: float) -> dict:
        from ._sandbox import _HEADER

        (size,) = _HEADER.unpack(self._read_exact(_HEADER.size, deadline))
        if size > _MAX_REPLY:
            raise _Abort("protocol", f"a reply larger than {_MAX_REPLY // 2**20} MB")
        try:
            message = self._runtime.decode(self._read_exact(size, deadline))
        except ValueError as exc:
            raise _Abort("protocol", str(exc)) from None
        if not isinstance(message, dict):
            raise _Abort("protocol", "a reply that is not a dict")
        return message

    def request(self, body: dict, deadline: float) -> dict:
        from ._sandbox import write_message

        self._nonce += 1
        body = dict(body, nonce=self._nonce)
        try:
            write_message(self.process.stdin.fileno(), self._runtime.encode(body).encode())
        except (BrokenPipeError, OSError):
            raise _Abort("died") from None
        while True:
            message = self._next(deadline)
            if message.get("event") == "executing":
                self.executing = message.get("unit")
                continue
            if message.get("event") != "reply" or message.get("nonce") != self._nonce:
                raise _Abort("protocol", "an unexpected message")
            self.executing = None
            reply = message.get("body")
            if not isinstance(reply, dict):
                raise _Abort("protocol", "a reply that is not a dict")
            return reply

    def close(self) -> None:
        try:
            os.killpg(self.process.pid, 9)
        except OSError:
            pass
        try:
            self.process.kill()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        with _LIVE_LOCK:
            _LIVE.discard(self.process.pid)
        _reap()            # (without a sandbox) a daemon it left, which may also hold its output open
        try:
            self.process.stdin.close()
        except OSError:
            pass
        self._reader.join(timeout=5)
        for handle in (self.process.stdin, self.process.stdout):
            try:
                handle.close()
            except OSError:
                pass
        try:
            os.close(self._fd)
        except OSError:
            pass


class _RemoteExecutor:
    """Sends a checker's calls to the sandbox and validates the replies (the grader side of the protocol).

    It trusts nothing the sandbox reports about a call: the checks of inputs modified in place and of
    numpy's global random state are made from a recheck (see :class:`dpcp_tutorial.exercises._runtime.Reply`),
    and the sandbox's own reports become feedback without points."""

    trusts_reports = False
    recheck = True

    def __init__(self, sandbox: _Sandbox, time_limit: float, deadline: float):
        self.sandbox, self.time_limit, self.deadline = sandbox, float(time_limit), deadline

    def run(self, call):
        from ..exercises._runtime import Reply

        body = self.sandbox.request({"op": "call", "call": call.to_plain(), "time_limit": self.time_limit,
                                     "wall_limit": wall_limit(self.time_limit)}, self.deadline)
        try:
            reply = Reply.from_plain(body, call.returns)
        except ValueError as exc:
            raise _Abort("protocol", str(exc)) from None
        if reply.status == "ok" and (len(reply.values) != call.count or len(reply.recheck) != int(call.recheck)):
            raise _Abort("protocol", "a reply with the wrong number of outputs")
        return reply


def wall_limit(time_limit: float) -> float:
    """Wall-clock seconds (less the time spent waiting for a CPU) a call may take when ``time_limit`` bounds
    its own CPU time: other submissions' load must not decide a grade, while a call that only waits
    (``sleep``, a blocked read) still ends."""
    return max(3.0 * float(time_limit), float(time_limit) + 5.0)



# --------------------------------------------------------------------------------------------------------------
# Grading one submission


def _row(student: str, exercise: Exercise, status: str, feedback: list[str], passed_cases: int = 0,
         total_cases: int = 0) -> Row:
    points = 0.0
    if status in ("passed", "failed") and total_cases:
        points = round(exercise.max_points * passed_cases / total_cases, 2)
    return Row(student, exercise.label, exercise.function, status == "passed", " | ".join(feedback), status,
               passed_cases, total_cases, points, exercise.max_points)


def _package_names() -> frozenset:
    import dpcp_tutorial

    return frozenset(dpcp_tutorial.__all__)


@dataclass
class _Context:
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

    def stage(self, exercise: "Exercise") -> Path:
        """The staged runner and helpers for an exercise (one folder per set of forbidden implementations)."""
        from . import _stage

        key = tuple(sorted(exercise.implements))
        with self._lock:
            if key not in self._stages:
                folder = Path(tempfile.mkdtemp(prefix="runtime-", dir=self.scratch_root))
                _stage.stage(folder, key)
                self._stages[key] = folder
            return self._stages[key]


def _copy_folder(submission: Submission, scratch: Path) -> None:
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


def _refusal(submission: Submission, exercise: Exercise, needed: list, ctx: _Context, names) -> str | None:
    """Why an answer is not graded, from its source alone (the static checks; ``None`` if none applies)."""
    refusal = _source.forbidden(_source.package_uses(needed, exercise.functions, names), exercise.implements)
    if not refusal and any("exercise_solutions" in u.source for u in needed):
        refusal = "uses the book's reference solutions (exercise_solutions)"
    if not refusal:
        for unit in needed:
            if "solution" in unit.tags and set(exercise.functions) & unit.defines:
                return (f"{', '.join(sorted(set(exercise.functions) & unit.defines))} comes from a cell "
                        "of the instructor edition tagged 'solution'")
    if not refusal and ctx.solutions:
        mine = _source.function_sources(needed)
        copied = sorted(f for f in exercise.functions if set(mine.get(f, [])) & ctx.solutions.get(f, set()))
        if copied:
            refusal = f"{', '.join(copied)} is the instructor edition's solution, copied from the book"
        copied = [] if refusal else _source.copied_references(needed, ctx.solutions.get(_ANY_NAME, set()))
        if copied:
            refusal = f"{', '.join(copied)} is a copy of one of the book's reference implementations (book/reference)"
    return refusal


def _grade(submission: Submission, exercises: list[Exercise], ctx: _Context) -> tuple[list[Row], list[str]]:
    checkers = _checkers()
    rows: list[Row] = []
    stdout: list[str] = []
    if submission.refusal:
        return [_row(submission.student, e, "not graded", [f"not graded: {submission.refusal}"])
                for e in exercises], stdout
    start = time.monotonic()
    deadline_all = start + ctx.submission_timeout
    copy = Path(tempfile.mkdtemp(prefix="submission-", dir=ctx.scratch_root))
    _copy_folder(submission, copy)
    names = _package_names()
    hung: set[int] = set()
    keep_output = ctx.secret is None          # graded calls' output would reveal the graded cases
    try:
        for exercise in exercises:
            student = submission.student
            needed = _source.needed_units(submission.units, exercise.functions)
            if not any(set(exercise.functions) & u.defines for u in needed):
                note = f"; problems while reading: {' / '.join(submission.problems[:3])}" if submission.problems else ""
                rows.append(_row(student, exercise, "not submitted",
                                 [f"not submitted: the submission defines no function named "
                                  f"{' or '.join(exercise.functions)}{note}"]))
                continue
            if time.monotonic() >= deadline_all:
                rows.append(_row(student, exercise, "not graded",
                                 [f"not graded: the submission as a whole ran past its time limit of "
                                  f"{ctx.submission_timeout:g} s"]))
                continue
            refusal = _refusal(submission, exercise, needed, ctx, names)
            if refusal:
                rows.append(_row(student, exercise, "not graded", [f"not graded: {refusal}"]))
                continue
            blocked = [u for u in needed if u.index in hung]
            if blocked:
                rows.append(_row(student, exercise, "not graded",
                                 [f"not graded: loading {blocked[0].where} took longer than "
                                  f"{ctx.exercise_timeout:g} s earlier; the functions of this exercise need it"]))
                continue
            sandbox: _Sandbox | None = None
            deadline = min(deadline_all, time.monotonic() + ctx.exercise_timeout)
            try:
                sandbox = _Sandbox(ctx.stage(exercise), copy, ctx, stdout, keep_output)
                deadline = min(deadline_all, time.monotonic() + ctx.exercise_timeout)
                reply = sandbox.request({"op": "load", "units": [(u.index, u.filename, u.lineno, u.source, u.where)
                                                                 for u in needed]}, deadline)
                problems = [str(p) for p in reply.get("problems", [])][:5]
                origins = sandbox.request({"op": "functions", "names": list(exercise.functions)}, deadline)
                verdict = _origin_verdict(exercise, origins.get("functions", {}), problems)
                if verdict is not None:
                    rows.append(_row(student, exercise, verdict[0], verdict[1]))
                    continue
                results = []
                executor = _RemoteExecutor(sandbox, ctx.time_limit, deadline)
                for name in exercise.checkers:
                    spec = checkers[name].spec
                    results.append(spec.run(executor, time_limit=ctx.time_limit, secret=ctx.secret,
                                            salt=student if ctx.salt_per_student else None))
                passed = sum(r.cases_passed for r in results)
                total = sum(r.cases_total for r in results)
                feedback = [line for r in results for line in r.feedback]
                if problems and passed < total:
                    feedback.append("problems while loading: " + " / ".join(problems[:3]))
                rows.append(_row(student, exercise, "passed" if passed == total and total else "failed", feedback,
                                 passed, total))
            except _Abort as abort:
                executing = sandbox.executing if sandbox is not None else None
                rows.append(_abort_row(student, exercise, abort, executing, submission, ctx, deadline_all, hung))
            finally:
                if sandbox is not None:
                    sandbox.close()
    finally:
        _reap()
        shutil.rmtree(copy, ignore_errors=True)
    return rows, stdout


def _origin_verdict(exercise: Exercise, origins: dict, problems: list[str]):
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


def _abort_row(student, exercise, abort, executing, submission, ctx, deadline_all, hung) -> Row:
    row = _abort_row_without_cases(student, exercise, abort, executing, submission, ctx, deadline_all, hung)
    if row.status == "failed":      # counted as none of the exercise's cases passed
        checkers = _checkers()
        total = sum(len(checkers[name].spec.cases(ctx.secret)) for name in exercise.checkers)
        row = _row(student, exercise, "failed", row.feedback.split(" | "), 0, total)
    return row


def _abort_row_without_cases(student, exercise, abort, executing, submission, ctx, deadline_all, hung) -> Row:
    if abort.kind == "timeout":
        if executing is not None:
            hung.add(executing)
            where = next((u.where for u in submission.units if u.index == executing), "a statement")
            return _row(student, exercise, "not graded",
                        [f"not graded: loading {where} took longer than {ctx.exercise_timeout:g} s"])
        if time.monotonic() >= deadline_all:
            return _row(student, exercise, "not graded", [f"not graded: the submission as a whole ran past its "
                                                          f"time limit of {ctx.submission_timeout:g} s"])
        return _row(student, exercise, "failed", [f"grading this exercise took longer than {ctx.exercise_timeout:g} "
                                                  "s; the process was stopped"])
    if abort.kind == "died":
        return _row(student, exercise, "failed", ["the submission's process died while this exercise was checked "
                                                  f"(e.g. os._exit, a crash of compiled code, or more memory than "
                                                  f"the limit of {ctx.memory_mb} MB)"])
    return _row(student, exercise, "not graded", [f"not graded: the submission's process broke the grading "
                                                  f"protocol ({abort.detail[:100]})"])


_KEEP: set[int] = set()          # children of the grader's process that are not the submissions' (practice mode)
_LIVE: set[int] = set()          # sandbox processes running now (several with --jobs)
_LIVE_LOCK = threading.Lock()


def _reap() -> None:
    with _LIVE_LOCK:
        keep = _KEEP | _LIVE
    _isolation.reap_orphans(keep)


def grade_submission(student: str, paths: list[Path], checker_names: list[str] | None = None, *,
                     time_limit: float = 10.0, exercise_timeout: float = 120.0, submission_timeout: float = 600.0,
                     secret: str | None = None, memory_mb: int = 2048, book: Path | None = None,
                     unsafe_no_sandbox: bool = False) -> list[Row]:
    """Grade one submission (its code in a sandbox per exercise); one :class:`Row` per exercise.

    ``checker_names`` may name checkers, labels or functions (default: every exercise).
    """
    exercises = _select(",".join(checker_names)) if checker_names else grading_table()
    _check_isolation(unsafe_no_sandbox, secret)
    submission = load_submission(paths, student)
    scratch_root = _scratch_root()
    try:
        ctx = _Context(time_limit, exercise_timeout, submission_timeout, secret, memory_mb, 200,
                       book_solutions(book), scratch_root, sandboxed=not unsafe_no_sandbox)
        _prepare_isolation(ctx.sandboxed)
        rows, _ = _grade(submission, exercises, ctx)
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    return _labelled(rows, ctx.sandboxed)


def _scratch_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="dpcp-grading-"))
    root.chmod(0o711)       # a sandbox's own uid may pass through to its (world-readable) staged folders
    return root


def _labelled(rows: list[Row], sandboxed: bool) -> list[Row]:
    import dataclasses

    label = _isolation.label(sandboxed)
    return [dataclasses.replace(row, isolation=label) for row in rows]


def _check_isolation(unsafe_no_sandbox: bool, secret: str | None) -> None:
    """Fail closed: grading needs a working bubblewrap sandbox unless the caller asks for an unsafe practice run,
    which never sees the instructor's secret (a submission could read it from the grader's process)."""
    if unsafe_no_sandbox:
        if secret is not None:
            raise ValueError("--unsafe-no-sandbox is for practice only and grades with the public cases: do not "
                             f"give a secret (--secret, --secret-file or {_SECRET_VARIABLE})")
        return
    reason = _isolation.probe()
    if reason is not None:
        raise _isolation.SandboxUnavailable(f"grading refuses to run without a sandbox: {reason}")


def _prepare_isolation(sandboxed: bool) -> None:
    if not sandboxed and _isolation.become_subreaper():
        _KEEP.update(_isolation._children(os.getpid()))   # children that existed before: not ours to end


# --------------------------------------------------------------------------------------------------------------
# The batch and its files


def _safe_cell(text: str) -> str:
    """Defuse spreadsheet formulas in text that comes from submissions."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _write_atomically(path: Path, write) -> None:
    """Write ``path`` through a temporary file in its folder and an atomic rename (a planted symlink is replaced,
    never followed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", newline="", encoding="utf-8") as out:
            write(out)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _default_paths(out: Path) -> tuple[Path, Path]:
    stem = out.with_suffix("") if out.suffix else out
    return Path(f"{stem}_totals.csv"), Path(f"{stem}_feedback")


def _safe_name(student: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in student).strip(".")
    return keep or "student"


def write_outputs(rows: list[Row], out: Path, totals: Path, feedback_dir: Path, stdout: dict[str, list[str]],
                  secret_used: bool) -> None:
    """The grades CSV, the totals CSV and one feedback file per student."""
    def grades(handle):
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([_safe_cell(row.student), row.exercise, row.function, int(row.passed), row.status,
                             row.cases_passed, row.cases_total, f"{row.points:g}", f"{row.max_points:g}",
                             _safe_cell(row.feedback), row.isolation])

    _write_atomically(out, grades)
    students = sorted({row.student for row in rows})

    def total(handle):
        writer = csv.writer(handle)
        writer.writerow(["student", "points", "max_points"])
        for student in students:
            mine = [row for row in rows if row.student == student]
            writer.writerow([_safe_cell(student), f"{round(sum(r.points for r in mine), 2):g}",
                             f"{sum(r.max_points for r in mine):g}"])

    _write_atomically(totals, total)
    feedback_dir = Path(feedback_dir)
    feedback_dir.mkdir(parents=True, exist_ok=True)
    for student in students:
        mine = [row for row in rows if row.student == student]

        def text(handle, mine=mine, student=student):
            handle.write(f"Feedback for {student}\n")
            handle.write(("Graded with the instructor's cases.\n" if secret_used else
                          "Graded with the public cases (no grading secret was given).\n"))
            handle.write(f"Total: {round(sum(r.points for r in mine), 2):g} of {sum(r.max_points for r in mine):g} "
                         "automatic points\n\n")
            for row in mine:
                handle.write(f"{row.exercise} ({row.function}): {row.status}, {row.cases_passed} of "
                             f"{row.cases_total} cases, {row.points:g} of {row.max_points:g} points\n")
                for line in row.feedback.split(" | ") if row.feedback else []:
                    handle.write(f"  - {line}\n")
            if secret_used:
                handle.write("\nWhat your code printed while it was graded is not kept: it would show the "
                             "instructor's cases. Run the exercises' checks in your notebook to see your output.\n")
                return
            lines = stdout.get(student, [])
            handle.write("\nThe first lines your code printed while it was checked"
                         f" ({len(lines)} shown):\n")
            for line in lines:
                handle.write(f"  | {line}\n")

        _write_atomically(feedback_dir / f"{_safe_name(student)}.txt", text)


def _resolve_secret(secret: str | None, secret_file: str | Path | None) -> str | None:
    if secret_file is not None:
        value = Path(secret_file).read_text(encoding="utf-8").strip()
        if not value:
            raise ValueError(f"the secret file {secret_file} is empty")
        return value
    if secret:
        return secret
    return os.environ.get(_SECRET_VARIABLE) or None


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
    chosen = _select(exercises)
    secret_value = _resolve_secret(secret, secret_file)
    _check_isolation(unsafe_no_sandbox, secret_value)
    if secret_value is None:
        print("warning: no grading secret (--secret, --secret-file or DPCP_GRADING_SECRET): grading with the "
              "public cases, which students can run themselves", file=sys.stderr)
    submissions = _read_all(folder)          # every submission is in memory before any student code runs
    out_path = Path(out) if out is not None else None
    totals_path, feedback_path = (_default_paths(out_path) if out_path is not None else (None, None))
    totals_path = Path(totals) if totals is not None else totals_path
    feedback_path = Path(feedback_dir) if feedback_dir is not None else feedback_path
    scratch_root = _scratch_root()
    book_dir = _default_book() if book == "auto" else (Path(book) if book is not None else None)
    _prepare_isolation(not unsafe_no_sandbox)
    ctx = _Context(time_limit, exercise_timeout, submission_timeout, secret_value, memory_mb, stdout_lines,
                   book_solutions(book_dir), scratch_root, salt_per_student=salt_per_student,
                   sandboxed=not unsafe_no_sandbox, tmpfs_mb=tmpfs_mb)
    stdout: dict[str, list[str]] = {}

    def one(submission: Submission) -> list[Row]:
        try:
            rows, printed = _grade(submission, chosen, ctx)
        except Exception as exc:  # noqa: BLE001 - a bug of the grader must not cost the batch its CSV
            return [_row(submission.student, e, "error", [f"error in the grader: {type(exc).__name__}: "
                                                          f"{str(exc)[:200]}"]) for e in chosen]
        stdout[submission.student] = printed
        return rows

    rows: list[Row] = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
            graded = pool.map(one, submissions)
            if progress:
                from tqdm.auto import tqdm

                graded = tqdm(graded, total=len(submissions), desc="grading", unit="submission")
            for student_rows in graded:
                rows.extend(student_rows)
    finally:
        _reap()
        shutil.rmtree(scratch_root, ignore_errors=True)
    rows = _labelled(rows, ctx.sandboxed)
    if out_path is not None:
        write_outputs(rows, out_path, totals_path, feedback_path, stdout, secret_value is not None)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcp_tutorial.grading",
                                     description="Grade a folder of submitted notebooks or .py files with the "
                                                 "book's exercise checkers and write the grades CSV, a totals "
                                                 "CSV and one feedback file per student.")
    parser.add_argument("submissions", nargs="?", help="folder with one .ipynb/.py file or one sub-folder per student")
    parser.add_argument("--out", default="grades.csv", help="grades CSV to write (default: grades.csv)")
    parser.add_argument("--totals", help="totals CSV (student, points, max_points); default <out>_totals.csv")
    parser.add_argument("--feedback-dir", help="one feedback file per student; default <out>_feedback/")
    parser.add_argument("--exercises", help="comma-separated chapters (ch01 or 1), exercise labels, function or "
                                            "checker names; default: every coding exercise")
    parser.add_argument("--secret", help=f"the instructor's secret for the graded cases (or {_SECRET_VARIABLE})")
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
    args = parser.parse_args(argv)
    if args.list:
        print(f"{'chapter':8} {'exercise':22} {'points':>6}  functions (checkers)")
        for e in grading_table():
            print(f"{e.chapter:8} {e.label:22} {e.max_points:6g}  {', '.join(e.functions)} ({', '.join(e.checkers)})")
        print(f"isolation on this machine: {_isolation.describe()}")
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
        for student in sorted({row.student for row in rows}):
            mine = [row for row in rows if row.student == student]
            print(f"{student}: {sum(r.points for r in mine):g} of {sum(r.max_points for r in mine):g} points, "
                  f"{sum(r.passed for r in mine)}/{len(mine)} exercises passed")
        totals, feedback = _default_paths(Path(args.out))
        print(f"wrote {len(rows)} rows to {args.out}, totals to {args.totals or totals}, feedback files to "
              f"{args.feedback_dir or feedback}")
    return 0

