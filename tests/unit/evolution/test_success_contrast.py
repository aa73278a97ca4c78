"""Learning from the model's own successes on a one-step request (issue 29, item 3): where the
successes called the tool and the failures described the call in prose instead, the round
writes "do not skip" with a worked example from a success, and the injected lesson is what the
answer reminder checks. Shaped like the 1.5B model's real trains runs (protocol v1 calibration)."""

from __future__ import annotations

import pytest

from skillbank.evolution import evolve
from skillbank.lessons import LessonKind
from test_evolution_support import traj

STATIONS = [("Hamburg", "Cologne"), ("Frankfurt", "Leipzig"), ("Berlin", "Munich"), ("Bremen", "Dresden")]


def first_train(i: int, *, success: bool):
    origin, destination = STATIONS[i % len(STATIONS)]
    task = f"When is the first train from {origin} to {destination} tomorrow?"
    if success:
        calls = [("find_trains", {"origin": origin, "destination": destination, "date": "2027-03-09"},
                  '{"trains": [{"train_id": "IC %d", "departs": "06:%02d"}]}' % (100 + i, 10 + i))]
        answer = f"The first train leaves at 06:{10 + i:02d}."
    else:  # the real failure: the call written out as advice, no tool called
        calls = []
        answer = (f"To find the earliest train from {origin} to {destination} tomorrow, you can call "
                  "the `find_trains` function with the origin, destination and date.")
    return traj(task, calls, success=success, answer=answer, task_id=f"steady.trains.first#{i}",
                task_type="first-train")


def test_a_step_the_failures_described_instead_of_taking_is_learned_with_an_example(bank):
    for i in range(3):
        bank.trajectories.save(first_train(i, success=True))
    for i in range(3, 6):
        bank.trajectories.save(first_train(i, success=False))
    report = evolve(bank, promote_policy="all", examples_per_lesson=2)
    lessons = [x for s in bank.list_skills() for x in s.content.lessons]
    skip = [x for x in lessons if x.kind == LessonKind.pitfall and x.avoid == "skip"]
    assert skip and skip[0].tool == "find_trains", (report.changes, lessons)
    assert skip[0].examples, "a success shows the step: it is the lesson's worked example"
    example = skip[0].examples[0]
    assert [c.tool for c in example.calls] == ["find_trains"]
    assert "Hamburg" not in example.request and "<" in example.request  # instance values are placeholders


def test_failures_that_did_nothing_teach_no_skip(bank):
    # A failure that neither called nor named the tool (a refusal, a question) is no evidence
    # that the step was skipped: nothing is learned from it.
    for i in range(3):
        bank.trajectories.save(first_train(i, success=True))
    for i in range(3, 6):
        t = first_train(i, success=False)
        t.final_answer = "Sorry, I cannot help with that."
        t.steps[-1].content = t.final_answer
        bank.trajectories.save(t)
    evolve(bank, promote_policy="all", examples_per_lesson=2)
    lessons = [x for s in bank.list_skills() for x in s.content.lessons]
    assert not [x for x in lessons if x.kind == LessonKind.pitfall and x.avoid == "skip"]


# -- a result field in the user's unit (the answer_unit kind, _units.py) ---------------------------------------

def balance(i: int, *, success: bool, raw_in_success: bool = False):
    cents = 24175 + 1010 * i
    task = f"What is the balance of my {['current', 'holiday', 'savings'][i % 3]} account in euros?"
    calls = [("get_accounts", {}, '{"accounts": [{"account_id": "AC-%d", "name": "current", '
              '"balance_cents": %d, "open": true}]}' % (300 + i, cents))]
    if success:
        answer = f"Your balance is {cents // 100}.{cents % 100:02d} euros."
        if raw_in_success:
            answer += f" ({cents} cents)"
    else:
        answer = f"Your current account balance is ${cents:,}."  # the model's real failure: 136,550
    return traj(task, calls, success=success, answer=answer, task_id=f"steady.money.balance#{i}",
                task_type="balance")


def _save(bank, runs):
    for t in runs:
        bank.trajectories.save(t)


def test_a_field_the_successes_scaled_and_the_failures_stated_raw_is_learned(bank):
    _save(bank, [balance(i, success=True) for i in range(3)] + [balance(i, success=False) for i in range(3, 6)])
    evolve(bank, promote_policy="all")
    lessons = [x for s in bank.list_skills() for x in s.content.lessons]
    unit = [x for x in lessons if x.kind == LessonKind.answer_unit]
    assert [(x.tool, x.field, x.scale) for x in unit] == [("get_accounts", "balance_cents", 100)], lessons
    body = next(s for s in bank.list_skills() if unit[0] in s.content.lessons).body
    assert "## Answer" in body and "divided by 100" in body


@pytest.mark.parametrize("ok, bad", [
    # One success is not a pattern (a lesson needs support from more than one run).
    ([balance(0, success=True)], [balance(i, success=False) for i in range(3, 6)]),
    # Successes that also stated the raw number: the raw number is not what failed.
    ([balance(i, success=True, raw_in_success=True) for i in range(3)],
     [balance(i, success=False) for i in range(3, 6)]),
])
def test_no_unit_lesson_without_support_or_without_a_cause(bank, ok, bad):
    _save(bank, ok + bad)
    evolve(bank, promote_policy="all")
    assert not [x for s in bank.list_skills() for x in s.content.lessons if x.kind == LessonKind.answer_unit]


def visibility(i: int, *, success: bool):
    """Shaped like protocol v3's evidence (steady.weather.visibility_km): the successes said
    "15.6 km", a failure "2300 metres"; the lesson's scale is 1000."""
    metres = [15600, 2300, 8400, 12100, 4700, 9900][i % 6]
    city = ["Vienna", "Prague", "Oslo", "Lyon", "Turin", "Bergen"][i % 6]
    calls = [("current_conditions", {"city": city},
              '{"city": "%s", "condition": "light rain", "visibility_m": %d}' % (city, metres))]
    answer = (f"The visibility in {city} right now is {metres / 1000:g} km." if success
              else f"The visibility in {city} now is {metres} metres.")
    return traj(f"What's the visibility in {city} right now, in km?", calls, success=success,
                answer=answer, task_id=f"steady.weather.visibility#{i}", task_type="visibility")


def test_a_unit_lesson_with_a_four_digit_scale_passes_the_lint(bank):
    """The trace: v3's only lesson learned from the model's own successes ("state `visibility_m`
    divided by 1000") was refused as hard-coded ('1000'): the lint read the lesson's typed scale
    as an instance value."""
    _save(bank, [visibility(i, success=True) for i in (0, 2, 3)] + [visibility(i, success=False) for i in (1, 4)])
    report = evolve(bank, promote_policy="all")
    unit = [x for s in bank.list_skills() for x in s.content.lessons if x.kind == LessonKind.answer_unit]
    assert [(x.field, x.scale) for x in unit] == [("visibility_m", 1000)], str(report)


def test_a_run_value_beside_a_unit_lesson_is_still_hard_coded():
    from skillbank.evolution._lint import lint_content
    from skillbank.lessons import Lesson
    from skillbank.models import SkillContent, SkillKind

    unit = Lesson(kind=LessonKind.answer_unit, tool="current_conditions", field="visibility_m", scale=1000)
    content = SkillContent(name="visibility-in-km", description="Visibility questions, as for station 48213.",
                           kind=SkillKind.pitfall, tools=("current_conditions",), lessons=(unit,))
    findings = [f.message for f in lint_content(content).findings if f.rule == "hardcoded"]
    assert findings == ["contains an id or number of four or more digits ('48213'); use a <placeholder>"]
    clean = content.model_copy(update={"description": "Visibility questions."})
    assert not [f for f in lint_content(clean).findings if f.rule == "hardcoded"]
