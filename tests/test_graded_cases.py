"""Graded cases stay secret: none equals a public case, for every checker and many secrets.

The public cases can be read off a notebook, with their answers (a correct function prints nothing, but a
reader can run the reference solution of a classmate, or their own once it passes). A graded case equal to a
public one could be answered from a table of the public answers, so the grader draws graded cases that never
equal a public one (:func:`dpcp_tutorial.course.exercises._common.draw_graded_cases`). The checkers are found by
introspection, so a checker added later is covered by these tests without being named here.
"""

import copy
import hashlib

import numpy as np
import pytest

import dpcp_tutorial.course.exercises as exercises
from dpcp_tutorial.course.exercises._common import (
    LocalExecutor,
    _fingerprint_into,
    case_fingerprint,
    draw_graded_cases,
)

import exercise_solutions


def _every_checker() -> dict:
    """The exported checkers and any other made with @checker in a module of dpcp_tutorial.course.exercises."""
    import importlib
    import pkgutil

    from dpcp_tutorial.course.exercises._common import REGISTRY

    for module in pkgutil.iter_modules(exercises.__path__):
        importlib.import_module(f"dpcp_tutorial.course.exercises.{module.name}")
    found = dict(REGISTRY)
    found.update(exercises.all_checkers())
    return found


CHECKERS = _every_checker()
SECRETS = [f"secret {i}" for i in range(40)] + ["x", "instructor's secret for the spring term"]
MIN_CASES = 3


@pytest.mark.slow      # every checker under many secrets: make test runs it
@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_no_graded_case_equals_a_public_case(name):
    spec = CHECKERS[name].spec
    assert spec.make_cases is not None, f"{name} must draw its cases from a generator (cases=...)"
    public = spec.cases(None)
    public_prints = {case_fingerprint(c) for c in public}
    assert len(public) >= MIN_CASES, f"{name} has {len(public)} cases; a graded run needs at least {MIN_CASES}"
    for secret in SECRETS:
        graded = spec.cases(secret)
        prints = [case_fingerprint(c) for c in graded]
        assert len(graded) == len(public), f"{name}: the graded run has another number of cases"
        assert [c.kind for c in graded] == [c.kind for c in public], f"{name}: graded cases of other kinds"
        same = [c.kind for c, p in zip(graded, prints) if p in public_prints]
        assert not same, f"{name}, secret {secret!r}: graded cases equal to a public one: {same}"
        assert len(set(prints)) == len(prints), f"{name}, secret {secret!r}: two graded cases are equal"
        assert prints == [case_fingerprint(c) for c in spec.cases(secret)], f"{name}: graded cases not reproducible"


def test_the_salt_gives_each_student_other_cases_none_public():
    spec = exercises.check_conformal_quantile.spec
    public = {case_fingerprint(c) for c in spec.cases(None)}
    plain = [case_fingerprint(c) for c in spec.cases("s")]
    ann = [case_fingerprint(c) for c in spec.cases("s", salt="ann")]
    bob = [case_fingerprint(c) for c in spec.cases("s", salt="bob")]
    assert ann == [case_fingerprint(c) for c in spec.cases("s", salt="ann")]
    assert not set(ann) & set(bob) and not set(ann) & set(plain) and not set(ann) & public
    for name, check in CHECKERS.items():
        for salt in ("ann", "bob"):
            prints = {case_fingerprint(c) for c in check.spec.cases("s", salt=salt)}
            assert not prints & {case_fingerprint(c) for c in check.spec.cases(None)}, name


def test_a_case_that_ignores_the_generator_is_refused_with_a_reason():
    from dpcp_tutorial.course.exercises._common import Case

    def fixed(rng):
        return [Case("drawn", "", x=rng.uniform()), Case("fixed", "", x=0.5)]

    with pytest.raises(RuntimeError, match=r"\['fixed'\].*draw their values from the rng"):
        draw_graded_cases("check_fixed", fixed, "secret")


def test_fingerprints_treat_equal_inputs_alike_and_tell_others_apart():
    from dpcp_tutorial.course.exercises._common import Case

    assert case_fingerprint(Case("a", "", n=3, x=np.array([1.0, 2.0]))) == \
        case_fingerprint(Case("b", "other params", n=np.int64(3), x=np.array([1.0, 2.0])))
    assert case_fingerprint(Case("a", "", n=3.0)) == case_fingerprint(Case("a", "", n=3))
    assert case_fingerprint(Case("a", "", x=np.array([1.0, 2.0]))) != \
        case_fingerprint(Case("a", "", x=np.array([2.0, 1.0])))
    assert case_fingerprint(Case("a", "", x=(1, 2))) != case_fingerprint(Case("a", "", x=(1, 2, 0)))
    assert case_fingerprint(Case("a", "", x=0.1)) != case_fingerprint(Case("a", "", x=0.1 + 1e-17 + 1e-16))


# ------------------------------------------------------------------------------- the lookup-table attack


def _key(function: str, args: tuple, kwargs: dict) -> str:
    """What a table-building submission can see of a call: the arguments, a Generator standing for any rng."""
    h = hashlib.sha256(function.encode())

    def plain(value):
        if isinstance(value, np.random.Generator):
            return "<rng>"
        if isinstance(value, (list, tuple)):
            return type(value)(plain(v) for v in value)
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    _fingerprint_into(h, plain(args))
    _fingerprint_into(h, plain(kwargs))
    return h.hexdigest()


def _table_of_public_answers(check) -> dict:
    """Every answer the reference solution gives on the public cases, keyed by the call's arguments."""
    table: dict = {}

    def recorder(function):
        solution = getattr(exercise_solutions, function)

        def record(*args, **kwargs):
            key = _key(function, args, kwargs)
            out = solution(*args, **kwargs)
            table.setdefault(key, copy.deepcopy(out))
            return out
        return record

    result = check.spec.run(LocalExecutor({f: recorder(f) for f in check.functions}, 10.0), time_limit=10.0)
    assert result.cases_passed == result.cases_total, f"{check.__name__}: the reference solution fails"
    return table


def _lookup(function: str, table: dict):
    def answer(*args, **kwargs):
        key = _key(function, args, kwargs)
        if key not in table:
            raise LookupError("not in the table of public answers")
        return copy.deepcopy(table[key])
    return answer


@pytest.mark.slow      # every checker under many secrets: make test runs it
def test_a_table_of_public_answers_scores_nothing_on_graded_cases():
    public_passed = public_total = 0
    for name in sorted(CHECKERS):
        check = CHECKERS[name]
        table = _table_of_public_answers(check)
        functions = {f: _lookup(f, table) for f in check.functions}
        public = check.spec.run(LocalExecutor(functions, 10.0), time_limit=10.0)
        public_passed += public.cases_passed
        public_total += public.cases_total
        for secret in ("first secret", "second secret", "third secret"):
            graded = check.spec.run(LocalExecutor(functions, 10.0), time_limit=10.0, secret=secret)
            assert graded.cases_passed == 0, (
                f"{name}: a table of the public answers passed {graded.cases_passed} of {graded.cases_total} "
                f"graded cases under {secret!r}: "
                f"{[v.kind for v in graded.verdicts if v.passed]}")
    # the attack is real: replayed on the public cases, the table passes most of them
    assert public_passed >= 0.8 * public_total, (public_passed, public_total)


# ------------------------------------------------------------------------------- fixed graded cases (nbgrader)


@pytest.mark.parametrize("name", sorted(CHECKERS))
def test_fixed_cases_round_trip_exactly(name):
    from dpcp_tutorial.course.exercises._fixed import decode_cases, encode_cases

    cases = CHECKERS[name].spec.cases("a course secret")
    text = encode_cases(cases)
    assert "a course secret" not in text and max(len(line) for line in text.splitlines()) <= 76
    back = decode_cases(text)
    assert [case_fingerprint(c) for c in back] == [case_fingerprint(c) for c in cases]
    assert [(c.kind, c.params) for c in back] == [(c.kind, c.params) for c in cases]


def test_grading_fixed_cases_counts_like_a_graded_run():
    from dpcp_tutorial.conformal import conformal_quantile
    from dpcp_tutorial.course.exercises import grade_fixed_cases
    from dpcp_tutorial.course.exercises._fixed import encode_cases

    check = exercises.check_conformal_quantile
    text = encode_cases(check.spec.cases("s"))
    good = grade_fixed_cases(check, exercise_solutions.my_quantile, cases=text)
    assert good.passed and good.graded and good.cases_total == len(check.spec.cases(None))

    def slip(scores, alpha):
        return float(np.quantile(scores, 1 - alpha))

    bad = grade_fixed_cases(check, slip, cases=text)
    direct = check(slip, secret="s", quiet=True)
    assert (bad.cases_passed, bad.cases_total, bad.feedback) == (direct.cases_passed, direct.cases_total,
                                                                  direct.feedback)
    refused = grade_fixed_cases(check, conformal_quantile, cases=text)
    assert refused.not_graded and refused.score(6) == 0


@pytest.mark.slow
def test_the_batch_grader_salts_the_cases_with_the_student_name(tmp_path, monkeypatch):
    from dpcp_tutorial.course.grading import grade_folder

    solution = "import math\nimport numpy as np\nfrom fractions import Fraction\n\n\n" + \
        "def my_quantile(scores, alpha):\n" + "\n".join(
            "    " + line for line in [
                "n = len(scores)",
                "k = math.ceil((n + 1) * (1 - Fraction(alpha).limit_denominator(10**12)))",
                "return math.inf if k > n else float(np.partition(scores, k - 1)[k - 1])"]) + "\n"
    (tmp_path / "subs").mkdir()
    for student in ("ann", "bob"):
        (tmp_path / "subs" / f"{student}.py").write_text(solution, encoding="utf-8")
    seen = []
    original = exercises.check_conformal_quantile.spec.cases

    def spy(secret=None, *, salt=None):
        seen.append((secret, salt))
        return original(secret, salt=salt)

    monkeypatch.setattr(exercises.check_conformal_quantile.spec, "cases", spy)
    rows = grade_folder(tmp_path / "subs", exercises="my_quantile", progress=False, book=None, secret="s",
                        salt_per_student=True)
    assert [(r.student, r.status) for r in rows] == [("ann", "passed"), ("bob", "passed")]
    assert {("s", "ann"), ("s", "bob")} <= set(seen)


def test_fixed_cases_refuse_what_they_cannot_use():
    from dpcp_tutorial.course.exercises import fixed_cases, grade_fixed_cases
    from dpcp_tutorial.course.exercises._fixed import decode_cases

    check = exercises.check_smallest_n
    text = fixed_cases(check, "s")
    with pytest.raises(ValueError, match="fixed_cases"):
        decode_cases(text[: len(text) // 2])
    with pytest.raises(ValueError, match="fixed_cases"):
        decode_cases("not base64 at all!")
    with pytest.raises(TypeError, match="fixed_cases"):
        decode_cases(None)
    with pytest.raises(ValueError, match="secret"):
        fixed_cases(check, "")
    with pytest.raises(TypeError, match="checkers"):
        fixed_cases(print, "s")
    with pytest.raises(TypeError, match="function"):
        grade_fixed_cases(check, cases=text)
    result = grade_fixed_cases(check, 3, cases=text)
    assert not result and result.score(6) == 0


def test_generated_nbgrader_notebooks_hold_cases_never_the_secret(tmp_path, monkeypatch):
    """Without nbgrader installed too: the source notebooks of ``make nbgrader`` (before nbgrader's release
    step) hold the graded cases as data and neither the secret nor a way to read one."""
    import json

    from dpcp_tutorial.course import make_nbgrader

    secret = "the instructor's long secret 7f3a"
    monkeypatch.setenv("DPCP_GRADING_SECRET", secret)
    names = make_nbgrader.generate(tmp_path, secret, {"ps1"}, release=False)
    assert names == ["ps1"]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert secret not in text and "DPCP_GRADING_SECRET" not in text and "secret=True" not in text, path
    notebook = json.loads((tmp_path / "course" / "source" / "ps1" / "ps1.ipynb").read_text(encoding="utf-8"))
    hidden = [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    assert hidden and all("grade_fixed_cases(" in "".join(c["source"]) for c in hidden)
