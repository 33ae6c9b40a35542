"""Every exercise checker, found by introspection, passes its solution and fails every stub with feedback.

The stubs are what a reader's unfinished or broken function does: return None, raise NotImplementedError or
another exception, return a string, a dict, a list, a value of the wrong shape or dtype, NaN, an object that lies
about equality, or never return. None of them may crash a checker, hang it, or pass.
"""

import inspect
import json
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import dpcp_tutorial.course.exercises as exercises
from dpcp_tutorial.course.exercises import ExerciseResult
from dpcp_tutorial.course.exercises._common import DEFAULT_TIME_LIMIT, array, checker, number

import exercise_solutions

LIMIT = 0.1  # seconds per call for the stubs; keeps the module fast

CHECKERS = exercises.all_checkers()


def test_introspection_finds_every_checker():
    import importlib
    import pkgutil

    from dpcp_tutorial.course.exercises._common import REGISTRY

    assert len(CHECKERS) >= 22
    public = {name for name in dir(exercises) if name.startswith("check_")}
    assert public == set(CHECKERS), "every check_* must be made with the shared @checker harness"
    assert all(getattr(check, "is_exercise_checker", False) for check in CHECKERS.values())
    # the package finds its checkers in the chapter modules' sources: exactly those the chapter modules make
    for module in pkgutil.iter_modules(exercises.__path__):
        importlib.import_module(f"{exercises.__name__}.{module.name}")
    made = {name for name, check in REGISTRY.items() if check.__module__.startswith(f"{exercises.__name__}.ch")}
    assert made == set(CHECKERS)


def test_every_checker_names_a_distinct_function_with_a_solution():
    names = [f for c in CHECKERS.values() for f in c.functions]
    assert len(names) == len(set(names)), "two checkers ask for the same function name; the grader needs them unique"
    missing = [n for n in names if not callable(getattr(exercise_solutions, n, None))]
    assert not missing, f"add reference solutions to tests/exercise_solutions.py for {missing}"


def _solutions(check):
    return [getattr(exercise_solutions, f) for f in check.functions]


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_public_signature_and_docstring(name):
    check = CHECKERS[name]
    params = inspect.signature(check).parameters
    first = ["fn"] if len(check.functions) == 1 else list(check.functions)
    assert list(params) == first + ["time_limit", "quiet", "secret"]
    assert params["time_limit"].default == DEFAULT_TIME_LIMIT
    assert check.__doc__ and "Check a reader's" in check.__doc__
    assert check.exercise.startswith("ex-")
    for function in check.functions:
        assert f"{function}(" in check.__doc__, f"{name}'s docstring must give the signature of {function}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_solution_passes(name, capsys):
    check = CHECKERS[name]
    result = check(*_solutions(check))
    assert isinstance(result, ExerciseResult)
    assert result and result.passed and result.feedback == []
    assert result.cases_total >= 1 and result.cases_passed == result.cases_total
    assert f"{name}: all checks passed" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- stubs


def _transform(value, leaf):
    """Apply ``leaf`` to the first array or number inside ``value`` (tuples are walked)."""
    if isinstance(value, tuple):
        return (_transform(value[0], leaf),) + value[1:]
    return leaf(value)


def _nan(value):
    if isinstance(value, np.ndarray):
        out = np.array(value, dtype=float)
        out.flat[0] = np.nan
        return out
    return float("nan")


def _as_list(value):
    return value.tolist() if isinstance(value, np.ndarray) else [value]


def _wrong_shape(value):
    return value[..., None] if isinstance(value, np.ndarray) else np.array([value, value])


def _wrong_dtype(value):
    if isinstance(value, np.ndarray):
        return value.astype(float) if value.dtype == bool else value.astype(str)
    return str(value)


class Liar:
    """Claims to equal everything and to be close to anything."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __float__(self):
        raise TypeError("not a number")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("not an array")


_RELEASE = threading.Event()  # blocked stubs wait on it; released at module teardown


@pytest.fixture(scope="module", autouse=True)
def _release_blocked_stubs():
    yield
    _RELEASE.set()


def _busy(*args, **kwargs):
    while True:
        pass


def _blocked(*args, **kwargs):
    _RELEASE.wait()


def _raises_not_implemented(*args, **kwargs):
    raise NotImplementedError


def _raises_zero_division(*args, **kwargs):
    return 1 / 0


def _derived(solution, leaf):
    def stub(*args, **kwargs):
        return _transform(solution(*args, **kwargs), leaf)

    return stub


STUBS = {
    # name: (make_stub(solution), phrase the feedback must contain)
    "returns None": (lambda sol: (lambda *a, **k: None), "returned None"),
    "forgot return": (lambda sol: (lambda *a, **k: [sol and sol(*a, **k)] and None), "returned None"),
    "NotImplementedError": (lambda sol: _raises_not_implemented, "NotImplementedError"),
    "ZeroDivisionError": (lambda sol: _raises_zero_division, "ZeroDivisionError"),
    "string": (lambda sol: (lambda *a, **k: "abc"), "string"),
    "dict": (lambda sol: (lambda *a, **k: {}), "dict"),
    "bool": (lambda sol: (lambda *a, **k: True), "bool"),
    "liar": (lambda sol: (lambda *a, **k: Liar()), "Liar"),
    "list instead of array": (lambda sol: _derived(sol, _as_list), "list"),
    "wrong shape": (lambda sol: _derived(sol, _wrong_shape), "shape"),
    "wrong dtype": (lambda sol: _derived(sol, _wrong_dtype), ("dtype", "string")),
    "NaN": (lambda sol: _derived(sol, _nan), ("NaN", "dtype float64", "neither 0 nor 1")),  # bool arrays hold no NaN
}


DERIVED = {"list instead of array", "wrong shape", "wrong dtype", "NaN"}


def _stub_cases():
    for name in sorted(CHECKERS):
        for stub in STUBS:
            yield name, stub


@pytest.mark.parametrize("name,stub", list(_stub_cases()))
def test_stub_fails_with_feedback(name, stub, capsys):
    check = CHECKERS[name]
    make, phrase = STUBS[stub]
    stubs = [make(solution) for solution in _solutions(check)]
    result = check(*stubs, time_limit=5.0)
    assert not result, f"{name} passed the stub {stub!r}"
    if stub != "forgot return" and stub not in DERIVED:   # these run the solution: they pass where it must raise
        assert result.cases_passed == 0 and result.cases_total >= 1, f"{name}: a stub passed some cases"
    with pytest.raises(AssertionError):
        assert check(*stubs, time_limit=5.0, quiet=True)
    assert result.feedback and all(line.strip() for line in result.feedback)
    text = " ".join(result.feedback)
    assert "could not evaluate" not in text, f"{name}: the checker itself tripped over the stub {stub!r}: {text}"
    phrases = (phrase,) if isinstance(phrase, str) else phrase
    assert any(p.lower() in text.lower() for p in phrases), f"{name} / {stub}: {text}"
    assert "problem(s) found" in capsys.readouterr().out


def _timed_check(name, hang):
    start = time.monotonic()
    check = CHECKERS[name]
    result = check(*[hang] * len(check.functions), time_limit=LIMIT, quiet=True)
    return result, time.monotonic() - start


@pytest.fixture(scope="module")
def blocked_results():
    """Every checker against functions blocked in C, all at once: each check waits out its time limit and the
    quarter second in which an abandoned call may still end; those waits overlap instead of adding up."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(CHECKERS)) as pool:
        futures = {name: pool.submit(_timed_check, name, _blocked) for name in CHECKERS}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHECKERS))
@pytest.mark.parametrize("hang", [_busy, _blocked], ids=["busy loop", "blocked in C"])
def test_never_returning_function_times_out(name, hang, request):
    if hang is _blocked:
        result, elapsed = request.getfixturevalue("blocked_results")[name]
    else:   # pure-Python loops, one at a time (run together they would share the interpreter lock)
        result, elapsed = _timed_check(name, hang)
    assert not result
    assert f"took longer than {LIMIT:g} s" in result.feedback[0]
    assert elapsed < LIMIT + 2.0
    assert all("not run" in line for line in result.feedback[1:]), "after a time-out the other cases are not run"
    assert result.cases_passed == 0
    if hang is _busy:  # a pure-Python loop is stopped, not left burning a core
        assert "stopped it" in result.feedback[0]


def test_busy_workers_are_really_stopped():
    before = threading.active_count()
    for _ in range(3):
        exercises.check_smallest_n(_busy, time_limit=0.05, quiet=True)
    deadline = time.monotonic() + 2.0
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() <= before


def test_not_callable_and_bad_time_limit():
    result = exercises.check_smallest_n(3, quiet=True)
    assert not result and "pass your function itself" in result.feedback[0]
    with pytest.raises(ValueError, match="time_limit"):
        exercises.check_smallest_n(exercise_solutions.smallest_n, time_limit=0)
    with pytest.raises(TypeError, match="takes 3 function"):
        exercises.check_dpcp_assembly(exercise_solutions.my_dpcp_budget)


def test_the_package_own_implementation_is_refused():
    from dpcp_tutorial import conformal_quantile

    result = exercises.check_conformal_quantile(conformal_quantile, quiet=True)
    assert not result and result.not_graded and "package's own" in result.feedback[0]
    assert result.score(6) == 0


def test_graded_cases_come_from_the_secret(monkeypatch):
    check = exercises.check_conformal_quantile
    public = check.spec.cases(None)
    graded = check.spec.cases("instructor secret")
    again = check.spec.cases("instructor secret")
    other = check.spec.cases("another secret")
    assert [c.kind for c in public] == [c.kind for c in graded]
    assert [c.params for c in graded] == [c.params for c in again]
    assert any(not np.array_equal(a.scores, b.scores) for a, b in zip(public, graded))
    assert any(not np.array_equal(a.scores, b.scores) for a, b in zip(graded, other))
    monkeypatch.setenv("DPCP_GRADING_SECRET", "instructor secret")
    result = check(exercise_solutions.my_quantile, secret=True, quiet=True)
    assert result and result.graded
    monkeypatch.delenv("DPCP_GRADING_SECRET")
    with pytest.raises(ValueError, match="DPCP_GRADING_SECRET"):
        check(exercise_solutions.my_quantile, secret=True)


def test_graded_feedback_omits_parameters_and_expected_values():
    def slip(scores, alpha):
        return float(np.sort(scores)[min(len(scores) - 1, int(np.ceil((len(scores) + 1) * (1 - alpha))))])

    notebook = exercises.check_conformal_quantile(slip, quiet=True)
    graded = exercises.check_conformal_quantile(slip, quiet=True, secret="s")
    assert not notebook and not graded
    assert any("expected" in line for line in notebook.feedback)
    assert not any("expected" in line or "alpha=" in line for line in graded.feedback)
    assert graded.cases_total == notebook.cases_total


def test_system_exit_and_keyboard_interrupt_inside_the_reader_function_are_feedback():
    def leaves(*args):
        raise SystemExit(3)

    def interrupts(*args):
        raise KeyboardInterrupt

    assert "SystemExit" in exercises.check_smallest_n(leaves, quiet=True).feedback[0]
    assert "KeyboardInterrupt" in exercises.check_smallest_n(interrupts, quiet=True).feedback[0]


def test_checker_body_errors_become_feedback_and_a_check_without_calls_fails():
    @checker(function="f", exercise="ex-00-test")
    def check_broken(ctx):
        """Check a reader's ``fn``."""
        ctx.call(1.0, returns=number())
        raise RuntimeError("bug in the checker")

    @checker(function="f", exercise="ex-00-test")
    def check_nothing(ctx):
        """Check a reader's ``fn``."""

    broken = check_broken(lambda x: x, quiet=True)
    assert not broken and "could not evaluate" in broken.feedback[0]
    nothing = check_nothing(lambda x: x, quiet=True)
    assert not nothing and "no call" in nothing.feedback[0]


def test_output_conversion_is_strict_and_returns_plain_types():
    @checker(function="f", exercise="ex-00-test")
    def check_types(ctx):
        """Check a reader's ``fn``."""
        got = ctx.call(returns=array((2,)))
        assert type(got) is np.ndarray and got.dtype == np.float64
        ctx.fail(repr(got.tolist()))

    class Sub(np.ndarray):
        def __eq__(self, other):
            return True

    sub = np.arange(2.0).view(Sub)
    assert check_types(lambda: sub, quiet=True).feedback == ["[0.0, 1.0]"]
    assert check_types(lambda: np.array([1, 2]), quiet=True).feedback == ["[1.0, 2.0]"]
    assert "inf" in check_types(lambda: np.array([1.0, np.inf]), quiet=True).feedback[0]
    assert "dtype object" in check_types(lambda: np.array([1, "a"], dtype=object), quiet=True).feedback[0]


def test_chapter_style_assert_usage(capsys):
    assert exercises.check_smallest_n(exercise_solutions.smallest_n)
    with pytest.raises(AssertionError):
        assert exercises.check_smallest_n(lambda *a: None)
    assert "returned None" in capsys.readouterr().out


def test_repeat_limits_each_call_not_the_total():
    @checker(function="f", exercise="ex-00-test")
    def check_many(ctx):
        """Check a reader's ``fn``."""
        out = ctx.call(returns=number(), repeat=30)
        if out != [1.0] * 30:
            ctx.fail("wrong")

    def slow():
        time.sleep(0.02)
        return 1

    calls = {"n": 0}

    def hangs_at_ten():
        calls["n"] += 1
        while calls["n"] >= 10:
            pass
        return 1

    assert check_many(slow, time_limit=0.3, quiet=True)            # 30 x 0.02 s > 0.3 s in total
    result = check_many(hangs_at_ten, time_limit=0.3, quiet=True)
    assert not result and "one call of your function took longer than 0.3 s" in result.feedback[0]


def test_an_input_counts_as_unchanged_exactly_when_its_values_are():
    """The check that a reader's function left its input arrays alone agrees with ``np.array_equal`` (NaN equal
    to NaN for reals) on every kind of array, whether or not the bytes are the same."""
    from dpcp_tutorial.course.exercises._runtime import _same

    rng = np.random.default_rng(5)
    reals = rng.normal(size=7)
    payload = np.frombuffer((np.frombuffer(np.float64(np.nan).tobytes(), np.uint64) ^ np.uint64(1)).tobytes(),
                            np.float64)
    pairs = [
        (reals, reals.copy()), (reals, reals + 1e-300), (np.array([0.0, 1.0]), np.array([-0.0, 1.0])),
        (np.array([np.nan, 1.0]), np.array([np.nan, 1.0])), (np.array([np.nan]), payload),
        (np.array([np.nan]), np.array([1.0])), (np.arange(5), np.arange(5)), (np.arange(5), np.arange(1, 6)),
        (np.arange(5, dtype=np.uint8), np.arange(5, dtype=np.uint8)), (np.array([True, False]), np.array([True, True])),
        (np.array([1 + 1j, np.nan]), np.array([1 + 1j, np.nan])), (np.array(["a", "b"]), np.array(["a", "b"])),
        (np.array([1.0, "a"], dtype=object), np.array([1.0, "a"], dtype=object)),
        (np.zeros((2, 3)), np.zeros((2, 3))[:, ::-1].copy()), (np.zeros((2, 3)).T, np.zeros((3, 2))),
    ]
    for given, kept in pairs:
        expected = bool(np.array_equal(given, kept, equal_nan=kept.dtype.kind == "f"))
        assert _same(given, kept) is expected, (given, kept)
        assert _same([given, {"x": given}], [kept, {"x": kept}]) is expected
    assert not _same(np.zeros(3), np.zeros(4)) and not _same(np.zeros(3, np.float32), np.zeros(3))
    assert not _same([1.0, 2.0], np.array([1.0, 2.0]))


def test_a_call_run_queue_wait_is_read_from_one_open_file():
    """Each call of a reader's function starts its clocks from the calling thread's ``schedstat``, read from a
    file opened once per checker call; it reads what opening the file reads, and never goes back."""
    from dpcp_tutorial.course.exercises._runtime import _run_queue_wait, _RunQueueWait

    waited = _RunQueueWait(threading.get_native_id())
    try:
        readings = []
        for _ in range(50):
            readings.append((waited(), _run_queue_wait(threading.get_native_id())))
            sum(range(20_000))
        assert all(a <= b for a, b in readings)
        assert all(b <= a for (_, b), (a, _) in zip(readings, readings[1:]))
        assert [a for a, _ in readings] == sorted(a for a, _ in readings)
    finally:
        waited.close()
    assert waited() == 0.0                          # closed: no reading, no error


def test_a_call_waits_for_a_thread_slot_and_says_so_when_none_comes_free(monkeypatch):
    """Under a limit on processes and threads that a reader's code has used up (its forked children keep
    running), the previous call's thread frees its slot only after ``join`` returned: the kernel refuses the
    next thread for a moment, and the call must wait for the slot, not fail. Where no slot comes free within
    the call's time limit, the call is reported as raising, with the cause, instead of crashing the checker."""
    from dpcp_tutorial.course.exercises._runtime import Call, execute, number

    refusals = {"left": 0, "seen": 0}
    start = threading.Thread.start

    def refusing_start(self):
        if self.name == "dpcp-exercise-call" and refusals["left"] > 0:
            refusals["left"] -= 1
            refusals["seen"] += 1
            raise RuntimeError("can't start new thread")
        return start(self)

    monkeypatch.setattr(threading.Thread, "start", refusing_start)
    functions = {"double": lambda x: 2 * x}
    refusals["left"] = 5                            # the slot comes free after five refusals
    reply = execute(functions, Call("double", args=(1.5,), returns=number()), time_limit=2.0)
    assert (reply.status, reply.values, refusals["seen"]) == ("ok", [3.0], 5)

    refusals["left"], refusals["seen"] = 10**9, 0   # it never does
    began = time.monotonic()
    reply = execute(functions, Call("double", args=(1.5,), returns=number()), time_limit=0.3)
    took = time.monotonic() - began
    assert reply.status == "raised" and reply.exception[0] == "RuntimeError"
    assert "use up the limit" in reply.message
    assert refusals["seen"] > 3 and 0.25 <= took < 2.0


def test_hostile_objects_cannot_hang_or_crash_the_checker():
    class SlowText(Exception):
        def __str__(self):
            while True:
                pass

    class Endless(float):
        def __float__(self):
            while True:
                pass

        def __repr__(self):
            while True:
                pass

    def raises_slow_text(*args):
        raise SlowText

    start = time.monotonic()
    first = exercises.check_smallest_n(raises_slow_text, time_limit=0.2, quiet=True)
    second = exercises.check_pps_level(lambda *a: Endless(1.0), time_limit=0.2, quiet=True)
    assert not first and not second
    assert "took longer than 0.2 s" in first.feedback[0] and "took longer than 0.2 s" in second.feedback[0]
    assert time.monotonic() - start < 5


BOOK = Path(__file__).parents[1] / "book"
EXERCISE_BLOCK = re.compile(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n:label: *([\w-]+)[ \t]*\n(.*?)^\1[ \t]*$", re.S | re.M)


def _chapter_markdown(chapter: str) -> tuple[str, str]:
    """(file name, markdown text) of the chapter notebook ``book/<chapter>_*.ipynb``, followed by the reference
    pages (``book/[a-z]*.ipynb``), which hold the exercises on the source variants a chapter links to."""
    notebooks = sorted(BOOK.glob(f"{chapter}_*.ipynb"))
    assert len(notebooks) == 1, f"no chapter notebook book/{chapter}_*.ipynb"
    texts = []
    for path in notebooks + sorted(BOOK.glob("[a-z]*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts.append("\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"))
    return notebooks[0].name, "\n".join(texts)


def _normalise_arguments(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_checker_matches_its_exercise_in_the_book(name):
    """The label exists in the checker's chapter, and the exercise asks for every function with the arguments that
    the checker's docstring and the reference solution use (the checker calls some of them by keyword)."""
    check = CHECKERS[name]
    filename, markdown = _chapter_markdown(check.__module__.rsplit(".", 1)[-1][2:])
    texts = {m.group(2): m.group(3) for m in EXERCISE_BLOCK.finditer(markdown)}
    assert check.exercise in texts, f"{filename} has no exercise {check.exercise}"
    text = texts[check.exercise]
    assert f"dpcp_tutorial.course.exercises.{name}" in text or f"`{name}(" in text or f"`{name}`" in text, \
        f"the exercise {check.exercise} never names its checker {name}"
    for function in check.functions:
        asked = {_normalise_arguments(a) for a in re.findall(r"`" + function + r"\(([^`]*?)\)`", text)}
        assert asked, f"{filename}: {check.exercise} never asks for `{function}(...)`"
        documented = {_normalise_arguments(a) for a in re.findall(r"``" + function + r"\(([^`]*?)\)", check.__doc__)}
        solution = str(inspect.signature(getattr(exercise_solutions, function)))[1:-1]
        assert asked == documented == {_normalise_arguments(solution)}, \
            f"{function}: the book asks for {asked}, the checker documents {documented}, the solution takes {solution}"


def test_the_answer_key_names_each_exercise_checker():
    """book/answer_key.md keys a coding exercise by its checker: the entry that links to the exercise names it."""
    text = (Path(__file__).resolve().parents[1] / "book" / "answer_key.md").read_text(encoding="utf-8")
    entries = re.split(r"\n(?=\* )", text)
    for name, check in CHECKERS.items():
        linked = [entry for entry in entries if f"<{check.exercise}>`" in entry]
        assert any(f"`{name}`" in entry for entry in linked), f"answer_key.md: {check.exercise} does not name {name}"


PRINTS = re.compile(r"# prints:? *\"?(?P<name>check_\w+): all checks passed(?P<counted>[^\"\n]*)\"?")


def test_what_the_chapters_say_a_checker_prints_is_what_it_prints():
    """A solution's comment such as ``# prints "check_x: all checks passed (5 of 5 cases)."`` matches the checker."""
    found = 0
    for path in sorted(BOOK.glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            for match in PRINTS.finditer("".join(cell["source"])):
                found += 1
                counted = match.group("counted").strip()
                where = f"{path.name}: {match.group(0)!r}"
                assert counted.startswith("("), f"{where}: the checkers print the cases counted, e.g. (5 of 5 cases)"
                if counted.startswith("(...)"):
                    continue
                check = CHECKERS[match.group("name")]
                total = len(check.spec.cases(None))
                assert counted == f"({total} of {total} cases).", f"{where}: {check.__name__} has {total} cases"
    assert found >= 5
