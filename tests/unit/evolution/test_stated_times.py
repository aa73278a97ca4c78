"""The clock time the user said: learned where the successes passed it and the failures another
(when the round is asked to: the reading is English), and checked at the tool when delivered
there, with a reminder that asks the model to pass the time the user said (the library names no
time for it). Shaped like a small model's kept evidence: "a quarter to six this evening" passed
as 18:30 or 19:30, "a quarter past two" as 14:00, the same request passed as 16:30 when it
succeeded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.langchain import SkillBankMiddleware
from pydantic import ValidationError

from skillbank.adapters._reminders import CallHistory, ReminderRules
from skillbank.evolution.config import EvolutionConfig
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank._clock import clock_value, spoken_times
from skillbank.evolution import evolve
from skillbank.evolution._evidence import to_run
from skillbank.lessons import Lesson, LessonKind, sentence
from skillbank.queries import SkillHit
from test_evolution_support import stated_values_learned, traj


# -- reading a said time ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, readings", [
    ("I'll collect it at half past four this afternoon.", [("16:30",)]),
    ("a quarter to six this evening", [("17:45",)]),
    ("Could I check out at a quarter past two?", [("14:15", "02:15")]),  # no part of the day: both
    ("ten past nine", [("09:10", "21:10")]),  # daytime first: the morning for 7 to 11
    ("one o'clock", [("13:00", "01:00")]),
    ("half past twelve", [("12:30", "00:30")]),
    ("a quarter to one", [("12:45", "00:45")]),
    ("twenty-five minutes to three in the afternoon", [("14:35",)]),
    ("nine oh five in the morning", [("09:05",)]),
    ("two forty-five pm", [("14:45",)]),
    ("at 2pm or 18:00", [("14:00",), ("18:00",)]),
    ("2.15 pm", [("14:15",)]),
    ("noon", [("12:00",)]),
    ("midnight", [("00:00",)]),
])
def test_a_said_time_is_read_with_its_24_hour_readings(text, readings):
    assert [t.readings for t in spoken_times(text)] == readings


@pytest.mark.parametrize("text", [
    "It costs 12.50 euros.", "Refill RX-1234 for three weeks.", "Two five-packs, please.",
    "Hi, lovely to be here!", "Reservation R-1230, room 14.", "I have one thing to ask.",
])
def test_no_time_where_none_is_said(text):
    assert spoken_times(text) == []


@pytest.mark.parametrize("value, time", [
    ("14:15", "14:15"), ("2:15 PM", "14:15"), ("2pm", "14:00"), ("14:15:00", "14:15"),
    ("2027-03-10T18:00", "18:00"), ("12:00 am", "00:00"),
    ("14", None), (14, None), ("quarter past two", None), ("25:00", None),
])
def test_a_tool_argument_is_read_as_a_time_or_not(value, time):
    assert clock_value(value) == time


@given(st.integers(0, 23), st.integers(0, 59))
def test_every_24_hour_time_written_in_digits_reads_as_itself(hour, minute):
    text = f"{hour:02d}:{minute:02d}"
    assert clock_value(text) == text
    assert spoken_times(f"at {text} please")[0].readings[0] == text


# -- learned from the model's own runs -----------------------------------------------------------

PICKUPS = [("half past four this afternoon", "16:30"), ("a quarter to six this evening", "17:45"),
           ("ten past five this afternoon", "17:10")]


def pickup(i: int, *, passed: str | None = None, success: bool):
    words, time = PICKUPS[i % len(PICKUPS)]
    order = f"PO-{40000 + i}"
    given_time = passed or time
    calls = [("set_pickup_time", {"order_id": order, "time": given_time},
              json.dumps({"order_id": order, "pickup": given_time}))]
    return traj(f"Please note that I'll pick up {order} at {words}.", calls, success=success,
                answer=f"Noted: {order} at {given_time}.", task_id=f"steady.pharmacy.pickup_time#{i}",
                task_type="pickup")


def _runs(*trajectories):
    return [to_run(t) for t in trajectories]


def test_the_time_the_successes_passed_and_the_failures_did_not_is_learned():
    ok = _runs(pickup(0, success=True), pickup(1, success=True), pickup(2, success=True))
    bad = _runs(pickup(1, passed="18:30", success=False), pickup(1, passed="19:30", success=False))
    [(lesson, why)] = stated_values_learned(ok, bad)
    assert (lesson.kind, lesson.tool, lesson.parameter) == (LessonKind.stated_time, "set_pickup_time", "time")
    assert "3 successes" in why and "2 failed" in why


@pytest.mark.parametrize("ok, bad", [
    # One success is not a pattern.
    ([pickup(0, success=True)], [pickup(1, passed="18:30", success=False)]),
    # A success that passed another time: the time is not what failed.
    ([pickup(0, success=True), pickup(1, success=True), pickup(2, passed="09:00", success=True)],
     [pickup(1, passed="18:30", success=False)]),
    # The failures passed the said time too: they failed for another reason.
    ([pickup(0, success=True), pickup(1, success=True)], [pickup(2, success=False)]),
])
def test_no_time_lesson_without_support_or_without_a_cause(ok, bad):
    assert stated_values_learned(_runs(*ok), _runs(*bad)) == []


def test_a_round_writes_the_time_lesson_and_no_pitfall_about_the_literal_time(bank):
    """The trace: a pitfall "never took `reserve_court` {'date': ..., 'time': ...}" with one
    instance's literal values was proposed where the cause was the value itself."""
    for t in [pickup(0, success=True), pickup(0, success=True), pickup(0, success=True),
              pickup(0, passed="14:30", success=False), pickup(0, passed="18:30", success=False)]:
        bank.trajectories.save(t)
    evolve(bank, config=EvolutionConfig(learn_stated_values=True), promote_policy="all")
    lessons = [x for s in bank.list_skills() for x in s.content.lessons]
    assert [(x.tool, x.parameter) for x in lessons if x.kind == LessonKind.stated_time] == \
        [("set_pickup_time", "time")], lessons
    assert not [x for x in lessons if x.kind == LessonKind.pitfall and x.tool == "set_pickup_time"], lessons
    body = next(s for s in bank.list_skills() if any(x.kind == LessonKind.stated_time for x in s.content.lessons)).body
    assert "## Checks" in body and "24-hour clock" in body


def test_the_lesson_reads_as_one_sentence_and_needs_its_tool_and_parameter():
    lesson = Lesson(kind=LessonKind.stated_time, tool="set_pickup_time", parameter="time")
    assert sentence(lesson).startswith("Pass `time` to `set_pickup_time` as the clock time the user said")
    with pytest.raises(ValidationError, match="parameter"):
        Lesson(kind=LessonKind.stated_time, tool="set_pickup_time")


# -- checked at the tool -----------------------------------------------------------------------------

RAN: list[dict] = []


@tool
def set_pickup_time(order_id: str, time: str) -> str:
    """Say when the user will collect an order today (opening hours 08:00 to 20:00)."""
    RAN.append({"order_id": order_id, "time": time})
    return json.dumps({"order_id": order_id, "pickup": time})


@pytest.fixture(autouse=True)
def _fresh():
    RAN.clear()


def _time_skill(bank):
    return bank.add_skill(name="pickup-times", description="pick up or collect an order at the time the user said",
                          kind="pitfall", tools=["set_pickup_time"],
                          lessons=(Lesson(kind=LessonKind.stated_time, tool="set_pickup_time",
                                          parameter="time"),))


def _run(bank, script, request, deliver=None):
    model = ScriptedChatModel(script)
    agent = create_agent(model, [set_pickup_time], system_prompt="Be brief.",
                         middleware=[SkillBankMiddleware(bank, injection=InjectionConfig(
                             k=3, deliver=deliver or {"stated_time": "tool"}))])
    return agent.invoke({"messages": [("user", request)]}), model


def test_a_call_with_another_time_is_answered_and_not_run(bank):
    _time_skill(bank)
    script = [tool_call("set_pickup_time", order_id="PO-24638", time="18:30"),
              tool_call("set_pickup_time", order_id="PO-24638", time="17:45"), "Noted for 17:45."]
    result, model = _run(bank, script, "Please note that I'll pick up PO-24638 at a quarter to six this evening.")
    assert RAN == [{"order_id": "PO-24638", "time": "17:45"}]  # the wrong time never ran
    first = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert first.text == ("`set_pickup_time` was not run. Pass `time` as the clock time, on the 24-hour clock "
                          "the user said, and call `set_pickup_time` again.")


def test_delivered_in_the_prompt_the_time_lesson_is_shown_and_the_call_runs_as_made(bank):
    _time_skill(bank)
    script = [tool_call("set_pickup_time", order_id="PO-1", time="14:00"), "Noted."]
    _, model = _run(bank, script, "I'll collect PO-1 at a quarter past two.", deliver={"stated_time": "prompt"})
    assert RAN == [{"order_id": "PO-1", "time": "14:00"}]
    assert "24-hour clock" in model.received[0][0].text


@pytest.mark.parametrize("request_text, passed", [
    ("I'll collect PO-1 at half past four this afternoon.", "16:30"),  # the said time
    ("I'll collect PO-1 at half past four this afternoon.", "4:30 PM"),  # the same, written otherwise
    ("I'll collect PO-1 at a quarter past two.", "02:15"),  # the other reading: not a wrong time
    ("I'll collect PO-1 later today.", "15:00"),  # no time said: nothing to judge
])
def test_a_call_with_the_said_time_or_with_no_time_said_runs(bank, request_text, passed):
    _time_skill(bank)
    _, model = _run(bank, [tool_call("set_pickup_time", order_id="PO-1", time=passed), "Noted."], request_text)
    assert "24-hour clock" in model.received[0][0].text  # the lesson was the run's: the check chose not to fire
    assert RAN == [{"order_id": "PO-1", "time": passed}]


def test_the_check_is_about_its_own_tool_and_parameter(bank):
    rules = ReminderRules.from_hits([SkillHit(_time_skill(bank), 1.0)])
    said = [HumanMessage("I'll come at half past four this afternoon and book the 18:00 class.")]
    def broken(tool, args):
        return rules.broken(tool, args, object(), CallHistory(), said)

    assert broken("set_pickup_time", {"order_id": "PO-1", "time": "19:00"})
    assert broken("set_pickup_time", {"order_id": "PO-1", "time": "18:00"}) is None
    assert broken("book_class", {"time": "19:00"}) is None
    assert broken("set_pickup_time", {"order_id": "PO-1"}) is None

