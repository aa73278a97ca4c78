"""A stated-time lesson given at the tool (``InjectionConfig.stated_times="tool"``): left out of
the prompt; a call that passes another time runs with the one the user said, its result says
what changed, and the run is recorded with the arguments the tool ran with. Real
``create_agent`` graphs, a real SQLite bank, a scripted model in place of a remote one."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException, tool

from skillbank.adapters.injection import inject_skills
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.adapters.time_fixes import time_fix_of
from skillbank.lessons import Lesson, LessonKind

RAN: list[dict] = []


@tool
def set_pickup_time(order_id: str, time: str) -> str:
    """Say when the user will collect an order today (opening hours 08:00 to 20:00)."""
    RAN.append({"order_id": order_id, "time": time})
    if not "08:00" <= time <= "19:59":
        raise ToolException("the pharmacy is open from 08:00 to 20:00")
    return json.dumps({"order_id": order_id, "pickup": time})


set_pickup_time.handle_tool_error = True  # an error is the model's to read, as ToolNode gives it


@pytest.fixture(autouse=True)
def _fresh():
    RAN.clear()


TIME = Lesson(kind=LessonKind.stated_time, tool="set_pickup_time", parameter="time")
CHECK = Lesson(kind=LessonKind.check_first, tool="set_pickup_time", check="get_order")


def _time_skill(bank, *lessons):
    return bank.add_skill(name="pickup-times", description="pick up or collect an order at the time the user said",
                          kind="pitfall", tools=["set_pickup_time"], lessons=lessons or (TIME,))


def _agent(bank, script, *, stated_times="tool", reminders=True):
    model = ScriptedChatModel(script)
    mw = SkillBankMiddleware(bank, k=3, stated_times=stated_times, reminders=reminders)
    return create_agent(model, [set_pickup_time], system_prompt="Be brief.", middleware=[mw]), model, mw


def _tool_messages(result):
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


SAID = "Please note that I'll pick up PO-24638 at a quarter to six this evening."


def test_a_call_with_another_time_runs_with_the_said_time_and_says_so(bank):
    skill = _time_skill(bank)
    agent, model, mw = _agent(bank, [tool_call("set_pickup_time", order_id="PO-24638", time="18:30"),
                                     "Noted for 17:45."])
    result = agent.invoke({"messages": [("user", SAID)]})
    assert RAN == [{"order_id": "PO-24638", "time": "17:45"}]  # one call, with the said time
    (seen,) = _tool_messages(result)
    assert seen.text.startswith(json.dumps({"order_id": "PO-24638", "pickup": "17:45"}))
    assert seen.text.endswith('Note: `set_pickup_time` ran with `time`="17:45", the time the user said ("a quarter '
                              'to six this evening") on the 24-hour clock, instead of "18:30". Tell the user 17:45.')
    assert time_fix_of(seen) == (skill.id, skill.version, {"order_id": "PO-24638", "time": "17:45"})
    assert "24-hour" not in model.received[0][0].text  # the lesson left the prompt
    assert mw.injection_middleware.injected[skill.id] == 1  # given once, at the tool


def test_the_step_is_recorded_with_the_arguments_the_tool_ran_with(bank):
    skill = _time_skill(bank)
    agent, _, mw = _agent(bank, [tool_call("set_pickup_time", order_id="PO-24638", time="18:30"), "Noted."])
    agent.invoke({"messages": [("user", SAID)]})
    trajectory = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    model_step, tool_step = trajectory.steps[0], trajectory.steps[1]
    assert model_step.tool_calls[0]["args"]["time"] == "18:30"  # what the model asked for, kept
    assert tool_step.tool == "set_pickup_time" and tool_step.args == {"order_id": "PO-24638", "time": "17:45"}
    assert [(i.step, i.skill_id) for i in trajectory.injections if i.step == tool_step.index] == [(1, skill.id)]


def test_the_said_time_or_no_said_time_runs_as_called(bank):
    _time_skill(bank)
    for said, passed in [(SAID, "17:45"), (SAID, "5:45 PM"), ("I'll collect PO-1 at a quarter past two.", "02:15"),
                         ("I'll collect PO-1 later today.", "15:00")]:
        RAN.clear()
        agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time=passed), "Noted."])
        result = agent.invoke({"messages": [("user", said)]})
        assert RAN == [{"order_id": "PO-1", "time": passed}], said
        assert time_fix_of(_tool_messages(result)[0]) is None and "Note" not in _tool_messages(result)[0].text


def test_a_time_said_without_a_part_of_the_day_runs_with_its_daytime_reading(bank):
    _time_skill(bank)
    agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="14:00"), "Noted."])
    agent.invoke({"messages": [("user", "I'll collect PO-1 at a quarter past two.")]})
    assert RAN == [{"order_id": "PO-1", "time": "14:15"}]


def test_two_times_said_leave_the_call_to_the_reminder(bank):
    _time_skill(bank)
    agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="19:00"),
                                tool_call("set_pickup_time", order_id="PO-1", time="16:30"), "Noted."])
    result = agent.invoke({"messages": [("user", "PO-1 at half past four this afternoon, or else at a quarter "
                                                 "to six this evening.")]})
    assert RAN == [{"order_id": "PO-1", "time": "16:30"}]  # which one was meant is not known: held back
    assert _tool_messages(result)[0].text.startswith("`set_pickup_time` was not run.")


def test_a_fixed_call_that_fails_says_what_changed_and_not_what_to_tell(bank):
    _time_skill(bank)
    agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="9:00"), "Sorry."])
    result = agent.invoke({"messages": [("user", "I'll collect PO-1 at a quarter to nine tonight.")]})
    assert RAN == [{"order_id": "PO-1", "time": "20:45"}]
    (seen,) = _tool_messages(result)
    assert seen.status == "error" and 'ran with `time`="20:45"' in seen.text and "Tell the user" not in seen.text


def test_in_the_prompt_by_default_the_call_is_held_back_not_changed(bank):
    _time_skill(bank)
    agent, model, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="18:30"), "Noted."],
                             stated_times="prompt")
    agent.invoke({"messages": [("user", SAID)]})
    assert RAN == [] and "24-hour" in model.received[0][0].text


def test_other_lessons_of_the_skill_still_check_the_fixed_call(bank):
    _time_skill(bank, TIME, CHECK)
    agent, model, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="18:30"), "Noted."])
    result = agent.invoke({"messages": [("user", SAID)]})
    assert RAN == []  # the check-first reminder holds back the call (fixed or not)
    assert "Call `get_order` now" in _tool_messages(result)[0].text
    assert "get_order" in model.received[0][0].text and "24-hour" not in model.received[0][0].text


def test_the_fix_works_without_reminders_and_in_async_runs(bank):
    _time_skill(bank)
    agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="18:30"), "Noted."],
                         reminders=False)
    asyncio.run(agent.ainvoke({"messages": [("user", SAID)]}))
    assert RAN == [{"order_id": "PO-1", "time": "17:45"}]


def test_a_prompt_only_adapter_refuses_the_tool_form(bank):
    with pytest.raises(ValueError, match="stated_times='tool'"):
        inject_skills(bank, [], stated_times="tool")
    with pytest.raises(ValueError, match="stated_times must be 'prompt' or 'tool'"):
        SkillBankMiddleware(bank, stated_times="call")


# -- a repeat of a fixed call (protocol v18: 3 of 6 fixed runs repeated it until no reply) ------


def test_a_repeat_of_the_fixed_call_is_answered_with_its_first_result_not_run(bank):
    skill = _time_skill(bank)
    agent, _, mw = _agent(bank, [tool_call("set_pickup_time", order_id="PO-24638", time="18:30"),
                                 tool_call("set_pickup_time", order_id="PO-24638", time="17:45"),  # the fixed call
                                 tool_call("set_pickup_time", order_id="PO-24638", time="18:30"),  # the first one
                                 "Noted for 17:45."])
    result = agent.invoke({"messages": [("user", SAID)]})
    assert RAN == [{"order_id": "PO-24638", "time": "17:45"}]  # ran once
    first, *repeats = _tool_messages(result)
    assert len(repeats) == 2 and result["messages"][-1].text == "Noted for 17:45."
    for seen in repeats:
        assert seen.text == (json.dumps({"order_id": "PO-24638", "pickup": "17:45"}) + "\n\nNote: `set_pickup_time` "
                             "already ran with these arguments in this run; this is its result, and it was not run "
                             "again. Tell the user 17:45.")
    trajectory = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    kinds = [(s.kind, s.args["time"]) for s in trajectory.steps if s.tool == "set_pickup_time"]
    assert kinds == [("tool", "17:45"), ("reminder", "17:45"), ("reminder", "18:30")]  # as the model asked
    assert {i.skill_id for i in trajectory.injections if i.step > 0} == {skill.id}
    assert mw.injection_middleware.injected[skill.id] == 3


def test_a_repeat_runs_again_when_the_fixed_call_failed_or_no_fix_changed_the_call(bank):
    _time_skill(bank)
    agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="9:00"),
                                tool_call("set_pickup_time", order_id="PO-1", time="20:45"), "Sorry."])
    agent.invoke({"messages": [("user", "I'll collect PO-1 at a quarter to nine tonight.")]})
    assert RAN == [{"order_id": "PO-1", "time": "20:45"}] * 2  # the fixed call failed: the repeat is the model's
    RAN.clear()
    agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-24638", time="17:45"),
                                tool_call("set_pickup_time", order_id="PO-24638", time="17:45"), "Noted."])
    agent.invoke({"messages": [("user", SAID)]})
    assert RAN == [{"order_id": "PO-24638", "time": "17:45"}] * 2  # nothing was fixed: nothing is held


def test_a_repeat_of_the_fixed_call_in_an_async_run(bank):
    _time_skill(bank)
    agent, _, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-1", time="18:30"),
                                tool_call("set_pickup_time", order_id="PO-1", time="17:45"), "Noted."],
                         reminders=False)
    result = asyncio.run(agent.ainvoke({"messages": [("user", SAID.replace("PO-24638", "PO-1"))]}))
    assert RAN == [{"order_id": "PO-1", "time": "17:45"}]
    assert _tool_messages(result)[-1].text.endswith("it was not run again. Tell the user 17:45.")


def test_an_empty_reply_after_the_repeats_is_asked_again_once(bank):
    # Protocol v21, all 3 fixed late-checkout runs: the fixed call repeated twice, then an empty
    # reply (end-of-turn as the first token), so the user was told nothing.
    _time_skill(bank)
    repeat = tool_call("set_pickup_time", order_id="PO-24638", time="17:45")
    agent, model, _ = _agent(bank, [tool_call("set_pickup_time", order_id="PO-24638", time="18:30"), repeat, repeat,
                                    "", "Your pickup of PO-24638 is set for 17:45."])
    result = agent.invoke({"messages": [("user", SAID)]})
    assert RAN == [{"order_id": "PO-24638", "time": "17:45"}]
    assert "Your reply is empty" in model.received[-1][-1].text
    assert result["messages"][-1].text == "Your pickup of PO-24638 is set for 17:45."


def test_a_lesson_kept_for_a_tool_that_never_ran_asks_nothing_at_the_answer(bank):
    # Protocol v23: on small talk ("Wonderful, thank you kindly.") the pickup-time lesson joined
    # the block for the tool, never ran and was never shown, yet an empty reply was asked again:
    # a run the lesson never reached behaved unlike one without the bank.
    _time_skill(bank)
    agent, model, _ = _agent(bank, ["", "unused"])
    result = agent.invoke({"messages": [("user", SAID)]})
    assert len(model.received) == 1 and result["messages"][-1].text == ""
    # The same request with the lesson in the prompt: it reached the run, so the reply is asked again.
    agent, model, _ = _agent(bank, ["", "Noted for 17:45."], stated_times="prompt")
    result = agent.invoke({"messages": [("user", SAID)]})
    assert "Your reply is empty" in model.received[1][-1].text and result["messages"][-1].text == "Noted for 17:45."
