"""The course plan of book/for_instructors.md: a stated, recomputed weekly load within 12 hours.

``dpcp_tutorial/course/course_load.py`` recomputes each week's reading (the chapters' words in the student edition) and
exercise hours (the stars the exercises state, spread over the weeks a problem set is worked on); the page's
numbers must match, no week may go over the limit, and no problem set may be due in the week its ★★★
exercise's chapter is taught.
"""

import pytest

from dpcp_tutorial.course import course_load

MODULES = course_load.modules()


def test_both_modules_have_a_table_of_weeks():
    assert {"Eight-week module", "Six-week module"} <= set(MODULES)
    assert [w.number for w in MODULES["Eight-week module"]] == list(range(1, 9))
    assert [w.number for w in MODULES["Six-week module"]] == list(range(1, 7))


@pytest.mark.parametrize("title", sorted(MODULES))
def test_every_week_stays_within_the_limit_and_states_its_load(title):
    for week in MODULES[title]:
        assert week.total <= course_load.WEEKLY_LIMIT, f"{title}, week {week.number}: {week.total:.1f} h"
        reading, exercises, total = week.stated
        assert abs(reading - week.reading) <= 0.5, (title, week.number, "reading", week.reading)
        assert abs(exercises - week.exercises) <= 0.15, (title, week.number, "exercises", week.exercises)
        assert abs(total - week.total) <= 0.5, (title, week.number, "total", week.total)
        assert abs(reading + exercises - total) <= 0.15, (title, week.number, "the stated total is the sum")


@pytest.mark.parametrize("title", sorted(MODULES))
def test_every_chapter_and_problem_set_is_placed_once(title):
    weeks = MODULES[title]
    chapters = [c for w in weeks for c in w.taught + w.read]
    assert sorted(chapters) == list(range(1, 14)), f"{title}: chapters 1-13 each once, got {sorted(chapters)}"
    due = [name for w in weeks for name in w.due]
    assert sorted(n for n in due if n.startswith("ps")) == ["ps1", "ps2", "ps3", "ps4"]
    assert len(due) == len(set(due))
    for name in due:
        worked = [w.number for w in weeks if name in w.work]
        due_week = next(w.number for w in weeks if name in w.due)
        assert worked and max(worked) == due_week, f"{title}: {name} is worked on until the week it is due"
        assert worked == list(range(min(worked), due_week + 1)), f"{title}: {name} is worked on without a gap"
    assert all(name in due for w in weeks for name in w.work), f"{title}: a set that is worked on is due"


@pytest.mark.parametrize("title", sorted(MODULES))
def test_no_problem_set_is_due_the_week_its_three_star_chapter_is_taught(title):
    weeks = MODULES[title]
    taught = {c: w.number for w in weeks for c in w.taught + w.read}
    six = "six" in title.lower()
    for name, chapters in course_load.three_star_chapters(six).items():
        due = [w.number for w in weeks if name in w.due]
        for chapter in chapters:
            if due and chapter in taught:
                assert taught[chapter] < due[0], f"{title}: {name} is due in week {due[0]}, when its ★★★ " \
                                                 f"exercise's chapter {chapter} is taught"
    assert any(course_load.three_star_chapters(six).values()), "the check must see the ★★★ exercises"


def test_the_basis_of_the_estimate_is_stated_on_the_page():
    page = course_load.PAGE.read_text(encoding="utf-8")
    assert f"{course_load.WORDS_PER_MINUTE} words per minute" in page
    assert "30 minutes for ★, 1.5 hours for ★★, 4 hours for ★★★" in page
    assert course_load.HOURS_PER_STAR == {1: 0.5, 2: 1.5, 3: 4.0}
    assert f"{course_load.PROJECT_HOURS:g} hours for the project" in page
    assert f"within {course_load.WEEKLY_LIMIT:g} hours" in page
