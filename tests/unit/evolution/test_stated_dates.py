"""The date the user said, counted from the run's today: read from the request, learned where the
successes passed it and the failures another (when the round is asked to: the reading is
English), checked at the tool when delivered there (never fixed), and recorded with the today
each run took. Shaped like a small model's kept evidence: "the day after tomorrow" on Monday
8 March 2027 passed as 2027-03-09 or 2027-03-19 when the run failed, as 2027-03-10 when it
succeeded."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from skillbank.adapters.config import InjectionConfig, RecordingConfig
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters._reminders import CallHistory, ReminderRules
from skillbank.evolution.config import EvolutionConfig
from pydantic import ValidationError
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank._dates import date_value, spoken_dates
from skillbank.evolution import evolve
from skillbank.evolution._evidence import to_run
from skillbank.lessons import Lesson, LessonKind, sentence
from skillbank.queries import SkillHit
from test_evolution_support import stated_values_learned, traj

MONDAY = dt.date(2027, 3, 8)


# -- reading a said date -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, readings", [
    ("Reserve a squash court for me the day after tomorrow at 18:00.", [("2027-03-10",)]),
    ("Can I get a squash court two days from now, starting 18:00?", [("2027-03-10",)]),
    ("Squash court in two days' time at 18:00, please.", [("2027-03-10",)]),
    ("Is she free this Friday? When is the first slot?", [("2027-03-12",)]),
    ("What's the earliest time she can see me on Friday?", [("2027-03-12",)]),
    ("Book me tomorrow morning.", [("2027-03-09",)]),
    ("next Friday, please", [("2027-03-12", "2027-03-19")]),  # this week's or the next one's
    ("this Monday", [("2027-03-08",)]),  # said on a Monday: today
    ("Monday", [("2027-03-15",)]),  # a bare weekday: the next one
    ("the first Friday of next month", [("2027-04-02",)]),
    ("the last Monday of March", [("2027-03-29",)]),
    ("in a week", [("2027-03-15",)]),
    ("in three weeks' time", [("2027-03-29",)]),
    ("on the 20th", [("2027-03-20",)]),
    ("Find me the lowest fare on 12 March.", [("2027-03-12",)]),
    ("on 2 March", [("2028-03-02",)]),  # passed this year: the next one
    ("March 3rd, 2028", [("2028-03-03",)]),
    ("2027-04-01 works for me", [("2027-04-01",)]),
    ("I'll pick it up tonight", [("2027-03-08",)]),
])
def test_a_said_date_is_read_with_its_readings(text, readings):
    assert [tuple(r.isoformat() for r in d.readings) for d in spoken_dates(text, MONDAY)] == readings


@pytest.mark.parametrize("text", [
    "I'd like a refill for three weeks.",  # a duration, not a date
    "Take me to the 2nd floor.",
    "May I ask a question?",
    "Reservation R-2027-03 please",
    "",
])
def test_no_date_where_none_is_said(text):
    assert spoken_dates(text, MONDAY) == []


@given(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2999, 12, 31)))
def test_every_iso_date_reads_as_itself(day):
    assert [d.readings for d in spoken_dates(f"on {day.isoformat()}", MONDAY)] == [(day,)]
    assert date_value(day.isoformat()) == day and date_value(f"{day.isoformat()}T18:00") == day


@pytest.mark.parametrize("value", ["Friday", "10/03/2027", "2027-02-30", 20270310, None])
def test_an_argument_that_is_no_iso_date_is_not_read_as_one(value):
    assert date_value(value) is None


# -- learned from the model's own runs -----------------------------------------------------------

COURT = "Reserve a squash court for me the day after tomorrow at 18:00."


def court(i: int, *, passed: str = "2027-03-10", success: bool, today: dt.date | None = MONDAY):
    calls = [("reserve_court", {"date": passed, "time": "18:00"},
              json.dumps({"court": 3, "date": passed, "time": "18:00"}))]
    run = traj(COURT, calls, success=success, answer=f"Court 3 is yours on {passed}.",
               task_id=f"steady.gym.court_day_after#{i}", task_type="court")
    return run.model_copy(update={"today": today})


def _runs(*trajectories):
    return [to_run(t) for t in trajectories]


def test_the_date_the_successes_passed_and_the_failures_did_not_is_learned():
    ok = _runs(court(0, success=True), court(1, success=True))
    bad = _runs(court(2, passed="2027-03-09", success=False), court(3, passed="2027-03-19", success=False))
    [(lesson, why)] = stated_values_learned(ok, bad)
    assert (lesson.kind, lesson.tool, lesson.parameter) == (LessonKind.stated_date, "reserve_court", "date")
    assert "2 successes passed `date` as the date the user said" in why and "2 failed" in why


@pytest.mark.parametrize("ok, bad", [
    # Recorded without a today: "the day after tomorrow" cannot be read.
    ([court(0, success=True, today=None), court(1, success=True, today=None)],
     [court(2, passed="2027-03-09", success=False, today=None)]),
    # A success that passed another date: the date is not what failed.
    ([court(0, success=True), court(1, success=True), court(2, passed="2027-03-11", success=True)],
     [court(3, passed="2027-03-09", success=False)]),
    # A run on another day read the same words as another date, and that was right for it.
    ([court(0, success=True), court(1, success=True, today=dt.date(2027, 3, 9))],
     [court(2, passed="2027-03-09", success=False)]),
])
def test_no_date_lesson_without_a_today_or_without_a_cause(ok, bad):
    assert stated_values_learned(_runs(*ok), _runs(*bad)) == []


def test_a_round_writes_the_date_lesson_and_no_pitfall_about_the_literal_date(bank):
    for t in [court(0, success=True), court(1, success=True), court(2, success=True),
              court(3, passed="2027-03-09", success=False), court(4, passed="2027-03-19", success=False)]:
        bank.trajectories.save(t)
    evolve(bank, config=EvolutionConfig(learn_stated_values=True), promote_policy="all")
    lessons = [x for s in bank.list_skills() for x in s.content.lessons]
    assert [(x.tool, x.parameter) for x in lessons if x.kind == LessonKind.stated_date] == \
        [("reserve_court", "date")], lessons
    assert not [x for x in lessons if x.kind == LessonKind.pitfall and x.tool == "reserve_court"], lessons


def test_the_lesson_reads_as_one_sentence_and_needs_its_tool_and_parameter():
    lesson = Lesson(kind=LessonKind.stated_date, tool="reserve_court", parameter="date")
    assert sentence(lesson).startswith("Pass `date` to `reserve_court` as the date the user said, counted from")
    with pytest.raises(ValidationError, match="parameter"):
        Lesson(kind=LessonKind.stated_date, tool="reserve_court")


# -- recorded with its today ---------------------------------------------------------------------------

@tool
def reserve_court(date: str, time: str) -> str:
    """Reserve a squash court (dates as YYYY-MM-DD)."""
    RAN.append({"date": date, "time": time})
    return json.dumps({"court": 3, "date": date, "time": time})


RAN: list[dict] = []


@pytest.fixture(autouse=True)
def _fresh():
    RAN.clear()


def _agent(bank, script, *, today=None, deliver=None):
    model = ScriptedChatModel(script)
    mw = SkillBankMiddleware(bank, injection=InjectionConfig(k=3, today=today, deliver=deliver or {}),
                             recording=RecordingConfig(today=today))
    return create_agent(model, [reserve_court], system_prompt="Be brief.", middleware=[mw]), model, mw


def test_a_run_is_recorded_with_the_today_its_agent_took(bank):
    agent, _, mw = _agent(bank, [tool_call("reserve_court", date="2027-03-10", time="18:00"), "Done."],
                          today="2027-03-08")
    agent.invoke({"messages": [("user", COURT)]})
    assert bank.trajectories.get(mw.recording_middleware.last_trajectory_id).today == MONDAY
    agent, _, mw = _agent(bank, ["Hello."])
    agent.invoke({"messages": [("user", "hi")]})
    assert bank.trajectories.get(mw.recording_middleware.last_trajectory_id).today == dt.date.today()


def test_today_is_a_date_or_iso_text():
    assert InjectionConfig(today="2027-03-08").today == RecordingConfig(today=MONDAY).today == MONDAY
    with pytest.raises(ValueError, match="today must be a date or ISO text such as '2027-03-08', not 'Monday'"):
        InjectionConfig(today="Monday")


# -- checked at the tool ----------------------------------------------------------------

def _date_skill(bank):
    return bank.add_skill(name="court-dates", description="reserve a squash court on the day the user said",
                          kind="pitfall", tools=["reserve_court"],
                          lessons=(Lesson(kind=LessonKind.stated_date, tool="reserve_court", parameter="date"),))


def test_a_call_with_another_date_is_answered_and_not_run_when_delivered_at_the_tool(bank):
    _date_skill(bank)
    agent, _, _ = _agent(bank, [tool_call("reserve_court", date="2027-03-09", time="18:00"),
                                tool_call("reserve_court", date="2027-03-10", time="18:00"), "Done."],
                         today=MONDAY, deliver={"stated_date": "tool"})
    result = agent.invoke({"messages": [("user", COURT)]})
    assert RAN == [{"date": "2027-03-10", "time": "18:00"}]
    first = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert first.text == ("`reserve_court` was not run. Pass `date` as the date, counted from today's date "
                          "the user said, and call `reserve_court` again.")


def test_by_default_the_date_lesson_is_shown_and_every_call_runs_as_made(bank):
    _date_skill(bank)
    agent, model, _ = _agent(bank, [tool_call("reserve_court", date="2027-03-19", time="18:00"), "Done."],
                             today=MONDAY)
    agent.invoke({"messages": [("user", COURT)]})
    assert RAN == [{"date": "2027-03-19", "time": "18:00"}]  # as the model made it
    assert "counted from today" in model.received[0][0].text  # the lesson is in the prompt


def _broken(rules, tool, args, messages, today):
    return rules.broken(tool, args, object(), CallHistory(), messages, today)


def test_the_check_counts_from_the_agents_today_not_the_machines(bank):
    rules = ReminderRules.from_hits([SkillHit(_date_skill(bank), 1.0)])
    said = [HumanMessage(COURT)]
    call = {"date": "2027-03-10", "time": "18:00"}
    assert _broken(rules, "reserve_court", call, said, MONDAY) is None
    assert _broken(rules, "reserve_court", call, said, dt.date(2027, 3, 9)) is not None
    assert _broken(rules, "reserve_court", {"date": "2027-03-10"},
                   [HumanMessage("Reserve a court, please.")], MONDAY) is None  # no date said
