"""The grader's sandbox under attack: each test hands in what a dishonest or careless submission did.

A *spy* submission looks for everything a graded call must not reach (the grader's account files, the
grader's own code, the folder of submissions and the output files in ``/proc/self/mountinfo``, the secret
in files, environments and command lines, the course package) and answers correctly only when it found
nothing; the same spy run without a sandbox (``--unsafe-no-sandbox``) finds what was planted, so the spy's
detection works. Further attacks: a submission that forges the self-reported checks, leaks its inputs
through feedback, fills the disk, floods its output, or starves a classmate of CPU with ``setsid``
children.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpcp_tutorial.course.grading import _isolation, _source, _stage, grade_folder, main

pytestmark = pytest.mark.slow   # each test starts bubblewrap sandboxes and graders: make test runs them

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sandbox test secret"
CANARY = "CANARY-7f3a9c"
SMALLEST_N_BODY = '''
    alpha1 = math.exp(-epsilon1) * (alpha - delta)
    return math.floor(2 / (alpha1 * epsilon2)) + 1
'''

needs_bwrap = pytest.mark.skipif(_isolation.probe() is not None, reason=f"no bubblewrap sandbox here: "
                                                                       f"{_isolation.probe()}")


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _spy(account: Path, secret_file: Path, folder: Path, out: Path) -> str:
    grader_code = ROOT / "dpcp_tutorial" / "course" / "grading" / "__init__.py"
    return textwrap.dedent(f'''
        import glob, math, os

        CANARY = {CANARY!r}


        def _found():
            found = []
            for key, value in os.environ.items():
                if CANARY in value:
                    found.append("environment")
            for path in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
                try:
                    with open(path, "rb") as handle:
                        if CANARY.encode() in handle.read():
                            found.append(path)
                except OSError:
                    pass
            for path in ({str(account)!r}, {str(secret_file)!r}, os.path.expanduser("~/.bash_history"),
                         {str(Path.home() / ".bash_history")!r}):
                try:
                    with open(path) as handle:
                        if CANARY in handle.read():
                            found.append(path)
                except OSError:
                    pass
            for path in ({str(account)!r}, {str(grader_code)!r}):
                try:
                    with open(path, "a"):
                        found.append("writable " + path)
                except OSError:
                    pass
            with open("/proc/self/mountinfo") as handle:
                mounts = handle.read()
            for path in ({str(folder)!r}, {str(out.parent)!r}, {str(secret_file)!r}, {str(account.parent)!r}):
                if path in mounts or os.path.exists(path):
                    found.append("path " + path)
            try:
                import dpcp_tutorial.conformal
                found.append("the package")
            except ImportError:
                pass
            return found


        def smallest_n(alpha, epsilon1, epsilon2, delta):
            if _found():
                return 0
    ''') + textwrap.indent(SMALLEST_N_BODY.strip("\n"), "") + "\n"


@pytest.mark.slow
@needs_bwrap
def test_a_spy_finds_nothing_in_the_sandbox_and_everything_without_it(tmp_path, monkeypatch):
    account = tmp_path / "home" / ".bash_history"
    account.parent.mkdir()
    account.write_text(f"export DPCP_GRADING_SECRET={CANARY}\n", encoding="utf-8")
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(CANARY, encoding="utf-8")
    folder, out = tmp_path / "subs", tmp_path / "results" / "grades.csv"
    folder.mkdir()
    (folder / "spy.py").write_text("import math\n" + _spy(account, secret_file, folder, out), encoding="utf-8")
    grader_code = ROOT / "dpcp_tutorial" / "course" / "grading" / "__init__.py"
    before = (account.read_bytes(), grader_code.read_bytes())
    monkeypatch.setenv("DPCP_CANARY", CANARY)          # in the grader's environment and, below, its secret
    rows = grade_folder(folder, out, exercises="smallest_n", progress=False, book=None, secret_file=secret_file)
    assert rows[0].status == "passed", rows[0].feedback
    assert _rows(out)[0]["isolation"].startswith("bwrap")
    assert (account.read_bytes(), grader_code.read_bytes()) == before
    # the same spy without the sandbox (practice mode): it finds what was planted
    rows = grade_folder(folder, tmp_path / "practice.csv", exercises="smallest_n", progress=False, book=None,
                        unsafe_no_sandbox=True)
    assert rows[0].status == "failed" and rows[0].isolation.startswith("none"), rows[0]
    assert _rows(tmp_path / "practice.csv")[0]["isolation"].startswith("none")


def test_grading_refuses_without_bwrap(tmp_path, monkeypatch, capsys):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "a.py").write_text("import math\ndef smallest_n(alpha, epsilon1, epsilon2, delta):\n"
                                            + SMALLEST_N_BODY, encoding="utf-8")
    monkeypatch.setattr(_isolation, "bwrap_path", lambda: None)
    _isolation.probe.cache_clear()
    try:
        with pytest.raises(_isolation.SandboxUnavailable, match="apt-get install bubblewrap"):
            grade_folder(tmp_path / "subs", exercises="smallest_n", progress=False, book=None, secret=SECRET)
        with pytest.raises(SystemExit) as stop:
            main([str(tmp_path / "subs"), "--out", str(tmp_path / "g.csv"), "--secret", SECRET, "--quiet"])
        assert stop.value.code == 2 and "--unsafe-no-sandbox" in capsys.readouterr().err
        assert not (tmp_path / "g.csv").exists()
        # the explicit way out is for practice: it refuses a secret, and grades with the public cases
        with pytest.raises(ValueError, match="practice only"):
            grade_folder(tmp_path / "subs", exercises="smallest_n", progress=False, book=None, secret=SECRET,
                         unsafe_no_sandbox=True)
        rows = grade_folder(tmp_path / "subs", exercises="smallest_n", progress=False, book=None,
                            unsafe_no_sandbox=True)
        assert rows[0].status == "passed" and rows[0].isolation.startswith("none")
    finally:
        _isolation.probe.cache_clear()


PACKAGE_TRICKS = f'''
import importlib, sys


def my_quantile(scores, alpha):
    for name in ("dpcp_tutorial.conformal", "dpcp_tutorial"):
        try:
            module = importlib.import_module(name)
            return getattr(module, "conformal_quantile").__wrapped__(scores, alpha)
        except Exception:
            pass
        try:
            return getattr(importlib.import_module(name), "conformal_quantile")(scores, alpha)
        except Exception:
            pass
    namespace = {{}}
    try:
        exec(open({str(ROOT / "dpcp_tutorial" / "conformal.py")!r}).read(), namespace)
        return namespace["conformal_quantile"](scores, alpha)
    except Exception:
        pass
    for module in list(sys.modules.values()):
        if hasattr(module, "conformal_quantile"):
            return module.conformal_quantile(scores, alpha)
    return 0.0
'''

SELF_REPORT_FORGER = '''
import numpy as np


def _forge():
    try:
        import _dpcp_calls
        _dpcp_calls._same = lambda a, b: True
        _dpcp_calls._global_state = lambda: 0
    except ImportError:
        pass


def randomized_response(bits, epsilon, rng):
    _forge()
    keep = rng.random(bits.shape) < 1 / (1 + np.exp(-epsilon))
    bits[~keep] = 1 - bits[~keep]                 # in place
    return bits


def private_mean(x, lower, upper, epsilon, rng):
    _forge()
    return float(np.clip(x, lower, upper).mean() + np.random.laplace(0.0, (upper - lower) / (len(x) * epsilon)))
'''

LEAKER = '''
import numpy as np


def my_quantile(scores, alpha):
    print("LEAK-PRINT", list(scores), alpha)
    raise ValueError("LEAK-RAISE " + repr(list(scores)))


def my_aps_sets(proba, qhat):
    name = "LEAK_CLASS_" + str(int(qhat * 1000))
    raise type(name, (Exception,), {})()
'''


@needs_bwrap
def test_package_tricks_self_reports_and_leaks(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "tricks.py").write_text(PACKAGE_TRICKS, encoding="utf-8")
    (folder / "forger.py").write_text(SELF_REPORT_FORGER, encoding="utf-8")
    (folder / "leaker.py").write_text(LEAKER, encoding="utf-8")
    out = tmp_path / "grades.csv"
    rows = grade_folder(folder, out, exercises="ex-01-code-quantile,ex-01-code-aps,ex-02-attacker,"
                        "ex-02-private-mean", progress=False, book=None, secret=SECRET)
    table = {(r.student, r.exercise): r for r in rows}
    # the package is not in the sandbox: no import, attribute, __wrapped__ or exec of its source works
    assert table[("tricks", "ex-01-code-quantile")].points == 0
    # inputs changed in place and numpy's global random state: judged from the recheck, not the report
    # (the one case of randomized response that does not look at the inputs passes, as in the notebook)
    for label, most in (("ex-02-attacker", 1), ("ex-02-private-mean", 0)):
        row = table[("forger", label)]
        assert row.status == "failed" and row.cases_passed <= most, row
        assert "called again on the same input arrays" in row.feedback, row.feedback
    # nothing the submission printed or wrote into an exception reaches the feedback or the CSV
    text = out.read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for p in (tmp_path / "grades_feedback").iterdir())
    assert "LEAK" not in text
    assert "raised ValueError" in table[("leaker", "ex-01-code-quantile")].feedback
    assert "raised an exception" in table[("leaker", "ex-01-code-aps")].feedback


@needs_bwrap
def test_a_self_reported_check_alone_costs_no_points(tmp_path):
    """An in-place clip whose result does not depend on the change (clipping twice = clipping once) cannot be
    told apart from a correct one by what crosses the boundary: feedback names it, the points stay."""
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "clips.py").write_text(textwrap.dedent('''
        import numpy as np


        def clip_gradients(G, C):
            norms = np.linalg.norm(G, axis=1, keepdims=True)
            G *= np.minimum(1.0, C / np.maximum(norms, 1e-300))
            return G
    '''), encoding="utf-8")
    rows = grade_folder(folder, exercises="ex-07-clip", progress=False, book=None, secret=SECRET)
    assert rows[0].status == "passed", rows[0].feedback
    assert "no points deducted" in rows[0].feedback and "in place" in rows[0].feedback


DISK_FILLER = '''
import math, os


def smallest_n(alpha, epsilon1, epsilon2, delta):
    block = b"x" * 2**20
    for target in (".", os.environ.get("TMPDIR", "."), "/tmp", "/sandbox", "/dev/shm"):
        for index in range(2000):
            try:
                with open(os.path.join(target, f"fill{index}"), "wb") as handle:
                    for _ in range(16):
                        handle.write(block)
            except OSError:
                break
''' + SMALLEST_N_BODY

FLOOD = '''
import math, sys


def smallest_n(alpha, epsilon1, epsilon2, delta):
    sys.stdout.write("x" * 300_000_000)
    sys.stdout.write("\\n" + "y" * 10 + "\\n")
    sys.stdout.flush()
''' + SMALLEST_N_BODY


@pytest.mark.slow
@needs_bwrap
def test_disk_fill_and_output_flood_leave_the_grader_and_its_files_alone(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "filler.py").write_text(DISK_FILLER, encoding="utf-8")
    (folder / "flood.py").write_text(FLOOD, encoding="utf-8")
    shutil.copyfile(ROOT / "tests" / "exercise_solutions.py", folder / "good.py")
    free = shutil.disk_usage(tmp_path).free
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from dpcp_tutorial.course.grading import main
        code = main([{str(folder)!r}, "--out", {str(tmp_path / "out" / "grades.csv")!r}, "--exercises",
                     "smallest_n", "--quiet", "--no-copy-check", "--tmpfs-limit", "64"])
        # the peak of this process's own memory (VmHWM): getrusage's maxrss would also count the pages of the
        # process this one was forked from (a test worker that ran the notebooks), which exec keeps
        with open("/proc/self/status", encoding="ascii") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        print("MAXRSS", peak, code)
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items() if k != "DPCP_GRADING_SECRET"})
    assert done.returncode == 0, done.stderr[-2000:]
    maxrss_kb, code = done.stdout.split("MAXRSS")[1].split()
    assert code == "0"
    assert int(maxrss_kb) < 300 * 1024, f"the grader grew to {int(maxrss_kb) // 1024} MB"
    assert shutil.disk_usage(tmp_path).free > free - 50 * 2**20
    rows = {r["student"]: r for r in _rows(tmp_path / "out" / "grades.csv")}
    assert set(rows) == {"filler", "flood", "good"}
    assert all(r["status"] == "passed" for r in rows.values()), rows
    assert (tmp_path / "out" / "grades_totals.csv").is_file()
    feedback = (tmp_path / "out" / "grades_feedback" / "flood.txt").read_text(encoding="utf-8")
    assert max(len(line) for line in feedback.splitlines()) < 600 and "yyyyyyyyyy" in feedback


STARVER = '''
import math, os, time


def smallest_n(alpha, epsilon1, epsilon2, delta):
    started = 0
    for _ in range(200):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.setsid()
            while True:
                pass
        started += 1
    if started >= 100:
        return 0                       # the process limit did not hold
    time.sleep(3)                     # keep the children busy while the classmate is graded
''' + SMALLEST_N_BODY

SLOW_BUT_CORRECT = '''
import math, time


def smallest_n(alpha, epsilon1, epsilon2, delta):
    end = time.thread_time() + 0.5    # half a second of its own CPU time, within the 1.5 s limit
    while time.thread_time() < end:
        pass
''' + SMALLEST_N_BODY


@pytest.mark.slow
@needs_bwrap
def test_setsid_children_neither_multiply_nor_starve_a_classmate(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "a_starver.py").write_text(STARVER, encoding="utf-8")
    (folder / "b_classmate.py").write_text(SLOW_BUT_CORRECT, encoding="utf-8")
    rows = grade_folder(folder, exercises="smallest_n", progress=False, book=None, secret=SECRET, jobs=2,
                        time_limit=1.5, exercise_timeout=200)
    table = {r.student: r for r in rows}
    assert table["b_classmate"].status == "passed", table["b_classmate"].feedback
    assert table["a_starver"].status == "passed", table["a_starver"].feedback   # < 100 processes, in time


def test_the_staged_package_holds_only_helpers_and_stubs(tmp_path):
    exported = _stage.stage(tmp_path / "stage", ("dpcp_tutorial.quantile.private_quantile",))
    package = tmp_path / "stage" / "dpcp_tutorial"
    names = {p.name for p in package.iterdir()}
    assert {"course", "exercises", "grading"}.isdisjoint(names) and "conformal.py" not in names
    assert set(exported) == set(_stage.HELPERS)
    source = (package / "quantile.py").read_text(encoding="utf-8")
    assert "is not available while an exercise that asks you to write it is graded" in source
    assert "def private_quantile_level" in source


def _unprivileged_uid() -> int | None:
    import pwd

    for name in ("cloudsdk", "nobody"):
        try:
            return pwd.getpwnam(name).pw_uid
        except KeyError:
            continue
    return None


@needs_bwrap
def test_as_an_unprivileged_user():
    """The grader run by an ordinary user: bwrap then creates a user namespace, and the process limit counts
    per user namespace. Root starts the grader under an ordinary uid with ``setpriv``; where the interpreter
    lies under a folder only root may enter (a Python installed in root's home), an outer bwrap gives that
    user a view in which the interpreter's folder is reachable and nothing else changes."""
    import tempfile

    uid = _unprivileged_uid()
    if os.geteuid() != 0 or uid is None or shutil.which("setpriv") is None:
        pytest.skip("needs root (to start the grader as an ordinary user), an ordinary user and setpriv")
    prefix = Path(sys.base_prefix).resolve()
    closed = next((p for p in reversed(prefix.parents) if str(p) != "/" and not os.stat(p).st_mode & 0o001),
                  None)
    outer = []
    if closed is not None:    # bind the folder below the closed one, with its own (open) permissions
        below = closed / prefix.relative_to(closed).parts[0]
        outer = [shutil.which("bwrap"), "--dev-bind", "/", "/", "--tmpfs", str(closed), "--ro-bind", str(below),
                 str(below), "--die-with-parent", "--"]
    work = Path(tempfile.mkdtemp(prefix="dpcp-unprivileged-"))
    try:
        work.chmod(0o777)
        folder = work / "subs"
        folder.mkdir()
        (folder / "a.py").write_text("import math\ndef smallest_n(alpha, epsilon1, epsilon2, delta):\n"
                                     + SMALLEST_N_BODY, encoding="utf-8")
        (folder / "starver.py").write_text(STARVER.replace("time.sleep(3)", "time.sleep(0.1)"), encoding="utf-8")
        for path in (folder, *folder.iterdir()):
            path.chmod(0o777 if path.is_dir() else 0o644)
        script = (f"import os, sys; sys.path.insert(0, {str(ROOT)!r}); from dpcp_tutorial.course.grading import "
                  f"grade_folder; rows = grade_folder({str(folder)!r}, {str(work / 'out.csv')!r}, "
                  "exercises='smallest_n', progress=False, book=None, secret='s'); "
                  "print(os.getuid(), [(r.student, r.status, r.isolation) for r in rows]); "
                  "print([r.feedback for r in rows])")
        command = outer + ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-c",
                           script]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work)})
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.startswith(f"{uid} "), done.stdout
        assert "('a', 'passed', 'bwrap user namespace')" in done.stdout, done.stdout
        assert "('starver', 'passed', 'bwrap user namespace')" in done.stdout, done.stdout   # < 100 processes
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.slow
@needs_bwrap
def test_a_folder_of_all_handouts_with_answers_grades_like_the_py_file(tmp_path):
    """Every chapter's hand-out (student edition) with the answers appended: only the reader's cells (and the
    chapters' imports) run, so a top-level name of a chapter (chapter 8's ``loss``) cannot shadow an answer,
    and the folder grades like the same answers in one ``.py`` file."""
    from dpcp_tutorial.course import student_edition

    folder = tmp_path / "subs"
    (folder / "handouts").mkdir(parents=True)
    solutions = (ROOT / "tests" / "exercise_solutions.py").read_text(encoding="utf-8")
    chapters = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    for index, path in enumerate(chapters):
        notebook = student_edition.strip_notebook(json.loads(path.read_text(encoding="utf-8")))
        if index == 0:      # the answers typed into the first hand-out, before every chapter's code
            notebook["cells"].append({"cell_type": "code", "metadata": {}, "source": solutions, "outputs": [],
                                      "execution_count": None})
        (folder / "handouts" / path.name).write_text(json.dumps(notebook), encoding="utf-8")
    shutil.copyfile(ROOT / "tests" / "exercise_solutions.py", folder / "py.py")
    # what keeps a folder of hand-outs as cheap as the .py file: of an unchanged chapter cell only the imports
    # are units that can run (checked on the units, not by timing the two gradings)
    handouts = sorted((folder / "handouts").glob("*.ipynb"))
    cells, problems = _source.read_files(handouts, "handouts")
    assert not problems, problems
    chapter_cells = [cell for cell in cells if cell.chapter]
    assert len(chapter_cells) > 10 * len(handouts), "the student edition marks the chapters' code cells"
    units, problems = _source.units_of(chapter_cells, "handouts")
    assert units and all(unit.source.startswith(("import ", "from ")) for unit in units), problems
    rows = []
    for student in ("handouts", "py"):
        only = tmp_path / f"only_{student}"
        only.mkdir()
        source = folder / student if student == "handouts" else folder / "py.py"
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, only / source.name)
        rows += grade_folder(only, progress=False, book=None, secret=SECRET)
    failed = [(r.student, r.exercise, r.feedback) for r in rows if r.status != "passed"]
    assert not failed, failed
