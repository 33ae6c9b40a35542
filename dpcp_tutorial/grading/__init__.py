"""Batch grading of the book's coding exercises: ``python -m dpcp_tutorial.grading SUBMISSIONS --out grades.csv``.

A *submission* is one ``.ipynb`` or ``.py`` file directly inside ``SUBMISSIONS`` (the student is the file name
without its extension) or one sub-folder (the student is the folder name; every ``.ipynb``/``.py`` file in it,
in sorted order, belongs to that student). Each coding exercise asks for a function with a fixed name (exercise
ex-01-code-quantile asks for ``my_quantile``, and so on; ``python -m dpcp_tutorial.grading --list`` prints the
table); the grader takes the submission's function of that name and runs the exercise's checker on it.

From a submission only the top-level imports, function and class definitions, ``try`` blocks and assignments to
plain names are run, statement by statement (a statement that fails is skipped and reported); everything else,
such as experiments, plots and the chapter's own checker calls, is ignored. Each submission runs in its own
Python process. A call of a student's function may take ``--time-limit`` seconds (the checkers' limit), one
exercise ``--exercise-timeout`` seconds and the whole submission ``--submission-timeout`` seconds; a process
that overruns is killed, the exercise is recorded as failed, and grading goes on with the next exercise in a
fresh process. Crashes, hangs and ``sys.exit`` in a submission never stop the batch.

The output is one CSV row per student and exercise with the columns ``student, exercise, function, passed,
feedback`` (``passed`` is ``1`` or ``0``; the feedback lines are joined by `` | ``).

The grader is not a sandbox: it runs the students' code with your permissions. Grade untrusted submissions in a
container or virtual machine.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

_STARTUP = 120.0  # seconds a worker may take to start before it reports

__all__ = ["Row", "exercise_table", "find_submissions", "grade_folder", "grade_submission", "load_submission",
           "main"]

_SUFFIXES = (".ipynb", ".py")


@dataclass(frozen=True)
class Row:
    """One line of the grades CSV."""

    student: str
    exercise: str
    function: str
    passed: bool
    feedback: str


# --------------------------------------------------------------------------------------------------------------
# Exercises


def _checkers() -> dict:
    """Every exercise checker of :mod:`dpcp_tutorial.exercises`, keyed by checker name, in chapter order."""
    from .. import exercises

    found = {name: obj for name, obj in vars(exercises).items() if getattr(obj, "is_exercise_checker", False)}
    return dict(sorted(found.items(), key=lambda item: (item[1].__module__, item[1].exercise, item[1].function)))


def exercise_table() -> list[tuple[str, str, str, str]]:
    """``(chapter module, exercise label, function name, checker name)`` for every coding exercise."""
    return [(check.__module__.rsplit(".", 1)[-1], check.exercise, check.function, name)
            for name, check in _checkers().items()]


def _select(selection: str | None) -> list[str]:
    """Checker names matching a comma-separated list of chapters (``ch01``/``1``), labels, functions or checkers."""
    table = exercise_table()
    if not selection:
        return [row[3] for row in table]
    chosen: list[str] = []
    for token in (t.strip() for t in selection.split(",")):
        if not token:
            continue
        chapter = f"ch{int(token):02d}" if token.isdigit() else token
        matches = [row[3] for row in table if token in (row[1], row[2], row[3]) or chapter == row[0]]
        if not matches:
            raise ValueError(f"--exercises: {token!r} matches no exercise; run with --list to see the exercises")
        chosen += [m for m in matches if m not in chosen]
    return chosen


# --------------------------------------------------------------------------------------------------------------
# Reading a submission


def _notebook_code(path: Path) -> list[tuple[str, str]]:
    """``(where, source)`` of every code cell; IPython magics and shell lines are dropped."""
    with open(path, encoding="utf-8") as handle:
        notebook = json.load(handle)
    out = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.lstrip().startswith("%%"):
            continue
        lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
        out.append((f"{path.name}, cell {index + 1}", "\n".join(lines)))
    return out


def _kept(node: ast.stmt) -> bool:
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Try)):
        return True
    if isinstance(node, ast.Assign):
        return all(isinstance(target, ast.Name) for target in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.value is not None
    return False


def load_submission(paths: list[Path]) -> tuple[dict, list[str]]:
    """Run the definitions of a submission's files; return the namespace and the problems met on the way."""
    namespace: dict = {"__name__": "submission", "__builtins__": __builtins__}
    problems: list[str] = []
    for path in paths:
        try:
            if path.suffix == ".ipynb":
                chunks = _notebook_code(path)
            else:
                chunks = [(path.name, path.read_text(encoding="utf-8"))]
        except (OSError, ValueError) as exc:
            problems.append(f"{path.name} could not be read ({type(exc).__name__}: {exc})")
            continue
        for where, source in chunks:
            try:
                tree = ast.parse(source)
            except SyntaxError as exc:
                problems.append(f"{where}: syntax error at line {exc.lineno}: {exc.msg}; the cell was skipped")
                continue
            for node in tree.body:
                if not _kept(node):
                    continue
                code = compile(ast.Module(body=[node], type_ignores=[]), where, "exec")
                try:
                    exec(code, namespace)  # noqa: S102 - grading runs the student's code by design
                except BaseException as exc:  # noqa: BLE001 - SystemExit too
                    problems.append(f"{where}, line {node.lineno}: {type(exc).__name__}: {str(exc)[:200]}")
    return namespace, problems


# --------------------------------------------------------------------------------------------------------------
# The worker process: grades the listed exercises of one submission and reports each event through a pipe


def _worker(conn, paths: list[str], checker_names: list[str], time_limit: float) -> None:
    """Child process: load the submission, run the checkers, send ``dict`` events; never returns."""
    try:
        if hasattr(os, "setsid"):
            os.setsid()  # own process group: processes the student's code starts are killed with it
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # the student's prints (also from compiled code) go nowhere
        os.dup2(devnull, 2)
        sys.stdout = sys.stderr = io.StringIO()
        checkers = _checkers()
        conn.send({"event": "loading"})
        namespace, problems = load_submission([Path(p) for p in paths])
        conn.send({"event": "loaded"})
        for name in checker_names:
            check = checkers[name]
            conn.send({"event": "start", "checker": name})
            sys.stdout = sys.stderr = io.StringIO()  # fresh sink: whatever the student's code did to the old one
            fn = namespace.get(check.function)
            if fn is None:
                note = f"; problems while loading: {' / '.join(problems[:3])}" if problems else ""
                conn.send({"event": "result", "checker": name, "passed": False,
                           "feedback": [f"not submitted: the submission defines no function named "
                                        f"{check.function}{note}"]})
                continue
            try:
                result = check(fn, time_limit=time_limit, quiet=True)
                conn.send({"event": "result", "checker": name, "passed": bool(result.passed),
                           "feedback": [str(line) for line in result.feedback]})
            except BaseException as exc:  # noqa: BLE001 - the checkers never raise; this guards the batch anyway
                conn.send({"event": "result", "checker": name, "passed": False,
                           "feedback": [f"grading failed: {type(exc).__name__}"]})
        conn.close()
    finally:
        os._exit(0)  # do not wait for abandoned threads of hanging student code


def _context():
    """Fork server that has imported the package once (fast workers); spawn where fork servers do not exist."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["dpcp_tutorial.exercises"])
        return ctx
    return multiprocessing.get_context("spawn")


def _run_worker(paths: list[Path], names: list[str], time_limit: float, exercise_timeout: float, deadline: float,
                results: dict) -> tuple[str, str | None]:
    """Run one worker until it exits or overruns; fill ``results``; return (how it ended, what it was doing)."""
    from dpcp_tutorial import grading  # the target must pickle by its module name, also under ``python -m``

    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=grading._worker, args=(send, [str(p) for p in paths], names, time_limit))
    process.start()
    send.close()
    # until the worker reports, allow for starting Python and importing the package (not the student's time)
    current, phase_end, ended = "loading", min(deadline, time.monotonic() + max(exercise_timeout, _STARTUP)), "exit"
    try:
        while True:
            wait = phase_end - time.monotonic()
            if wait <= 0 or not receive.poll(wait):
                ended = "submission" if time.monotonic() >= deadline else "phase"
                break
            try:
                event = receive.recv()
            except (EOFError, OSError):
                break
            if event["event"] in ("loading", "start"):
                current = event.get("checker", "loading")
                phase_end = min(deadline, time.monotonic() + exercise_timeout)
            elif event["event"] == "result":
                results[event["checker"]] = (bool(event["passed"]), list(event["feedback"]))
                current = None
    finally:
        receive.close()
        if hasattr(os, "killpg"):
            try:
                os.killpg(process.pid, 9)
            except OSError:  # already gone, or killed before it made its own group
                pass
        if process.is_alive():
            process.kill()
        process.join()
    return ended, current


def grade_submission(student: str, paths: list[Path], checker_names: list[str], *, time_limit: float = 10.0,
                     exercise_timeout: float = 120.0, submission_timeout: float = 600.0) -> list[Row]:
    """Grade one submission in separate processes; one :class:`Row` per checker, whatever the submission does."""
    checkers = _checkers()
    results: dict[str, tuple[bool, list[str]]] = {}
    deadline = time.monotonic() + submission_timeout
    remaining = list(checker_names)
    while remaining:
        ended, current = _run_worker(paths, remaining, time_limit, exercise_timeout, deadline, results)
        before = len(remaining)
        remaining = [name for name in remaining if name not in results]
        if not remaining:
            break
        if ended == "submission":
            for name in remaining:
                results[name] = (False, [f"not graded: the submission as a whole ran past its time limit of "
                                         f"{submission_timeout:g} s"])
            break
        if current == "loading":
            why = (f"loading the submission's definitions took longer than {exercise_timeout:g} s"
                   if ended == "phase" else "the submission's process ended while its definitions were loaded")
            for name in remaining:
                results[name] = (False, [f"not graded: {why}"])
            break
        if current is None and len(remaining) < before:
            continue  # the process stopped between two exercises after some progress: go on in a new one
        current = current or remaining[0]
        results[current] = (False, [f"grading this exercise took longer than {exercise_timeout:g} s; the "
                                     "process was stopped" if ended == "phase" else
                                     "the submission's process died while this exercise was checked (e.g. "
                                     "os._exit, a crash of compiled code, or running out of memory)"])
        remaining = [name for name in remaining if name != current]
    return [Row(student, checkers[name].exercise, checkers[name].function, results[name][0],
                " | ".join(results[name][1])) for name in checker_names]


# --------------------------------------------------------------------------------------------------------------
# The batch


def find_submissions(folder: Path) -> dict[str, list[Path]]:
    """Map student -> files (see the module docstring)."""
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder of submissions")
    found: dict[str, list[Path]] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix in _SUFFIXES:
            student = entry.stem
            files = [entry]
        elif entry.is_dir():
            student = entry.name
            files = sorted(p for p in entry.rglob("*") if p.suffix in _SUFFIXES and p.is_file()
                           and ".ipynb_checkpoints" not in p.parts)
            if not files:
                continue
        else:
            continue
        if student in found:
            raise ValueError(f"two submissions for the student {student!r}: rename one of them")
        found[student] = files
    return found


def grade_folder(folder, out=None, *, exercises: str | None = None, time_limit: float = 10.0,
                 exercise_timeout: float = 120.0, submission_timeout: float = 600.0, jobs: int = 1,
                 progress: bool = True) -> list[Row]:
    """Grade every submission in ``folder``; write the CSV to ``out`` (a path) when given; return the rows."""
    names = _select(exercises)
    submissions = find_submissions(Path(folder))

    def one(item):
        student, files = item
        return grade_submission(student, files, names, time_limit=time_limit, exercise_timeout=exercise_timeout,
                                submission_timeout=submission_timeout)

    rows: list[Row] = []
    with ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
        graded = pool.map(one, submissions.items())
        if progress:
            from tqdm.auto import tqdm

            graded = tqdm(graded, total=len(submissions), desc="grading", unit="submission")
        for student_rows in graded:
            rows.extend(student_rows)
    if out is not None:
        with open(out, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["student", "exercise", "function", "passed", "feedback"])
            for row in rows:
                writer.writerow([row.student, row.exercise, row.function, int(row.passed), row.feedback])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcp_tutorial.grading",
                                     description="Grade a folder of submitted notebooks or .py files with the "
                                                 "book's exercise checkers and write one CSV.")
    parser.add_argument("submissions", nargs="?", help="folder with one .ipynb/.py file or one sub-folder per student")
    parser.add_argument("--out", default="grades.csv", help="CSV file to write (default: grades.csv)")
    parser.add_argument("--exercises", help="comma-separated chapters (ch01 or 1), exercise labels, function or "
                                            "checker names; default: every coding exercise")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per call of a student's function")
    parser.add_argument("--exercise-timeout", type=float, default=120.0, help="seconds per exercise (hard limit)")
    parser.add_argument("--submission-timeout", type=float, default=600.0, help="seconds per submission")
    parser.add_argument("--jobs", type=int, default=1, help="submissions graded in parallel (default 1)")
    parser.add_argument("--list", action="store_true", help="print the exercises and the function names they ask for")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    args = parser.parse_args(argv)
    if args.list:
        print(f"{'chapter':8} {'exercise':24} {'function':28} checker")
        for chapter, label, function, checker in exercise_table():
            print(f"{chapter:8} {label:24} {function:28} {checker}")
        return 0
    if not args.submissions:
        parser.error("give the folder of submissions (or --list)")
    for name in ("time_limit", "exercise_timeout", "submission_timeout"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    try:
        rows = grade_folder(args.submissions, args.out, exercises=args.exercises, time_limit=args.time_limit,
                            exercise_timeout=args.exercise_timeout, submission_timeout=args.submission_timeout,
                            jobs=args.jobs, progress=not args.quiet)
    except ValueError as exc:
        parser.error(str(exc))
    if not args.quiet:
        students = sorted({row.student for row in rows})
        for student in students:
            mine = [row for row in rows if row.student == student]
            print(f"{student}: {sum(row.passed for row in mine)}/{len(mine)} exercises passed")
        print(f"wrote {len(rows)} rows to {args.out}")
    return 0
