"""An answer-unit lesson given at the tool (``InjectionConfig.answer_units="tool"``): left out of
the prompt, appended to the result that carries its field with the division done, and recorded
as injected at that tool step. Real ``create_agent`` graphs, a real SQLite bank, a scripted model
in place of a remote one."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from conftest import _lesson
from skillbank.adapters.answer_notes import answer_note_of
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import inject_skills
from skillbank.adapters.injection_middleware import SkillInjectionMiddleware
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.langgraph import skillbank_hook, skillbank_prompt
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.units import numeric_fields

VISIBILITY = {"city": "Prague", "conditions": "thunderstorms", "temp_c": 13.5, "visibility_m": 6800}


@tool
def current_conditions(city: str) -> str:
    """The weather in a city right now."""
    return json.dumps(VISIBILITY)


@tool
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return json.dumps({"city": city, "high_c": 18, "visibility_m": 9000})


UNIT = _lesson("answer_unit", tool="current_conditions", field="visibility_m", scale=1000)
SKIP = _lesson("pitfall", avoid="skip", tool="current_conditions")
ASK = "What is the visibility in Prague right now, in km?"


def _skill(bank, *lessons):
    return bank.add_skill(name="visibility-in-km", description="the visibility in a city right now in km",
                          kind="pitfall", tools=["current_conditions"], lessons=lessons)


def _run(bank, script, *, answer_units="tool", reminders=True, tools=(current_conditions, forecast)):
    model = ScriptedChatModel(script)
    mw = SkillBankMiddleware(bank, k=3, reminders=reminders, answer_units=answer_units)
    agent = create_agent(model, list(tools), system_prompt="Be brief.", middleware=[mw])
    return agent.invoke({"messages": [("user", ASK)]}), model


def _tool_results(model, turn):
    return [m for m in model.received[turn] if isinstance(m, ToolMessage)]


def test_the_lesson_leaves_the_prompt_and_arrives_with_the_result(bank):
    _skill(bank, UNIT)
    result, model = _run(bank, [tool_call("current_conditions", city="Prague"), "6.8 km."])
    assert "visibility" not in model.received[0][0].text.lower()  # no block: the skill had nothing else
    (seen,) = _tool_results(model, 1)
    assert "`visibility_m` 6800 is 6.8" in seen.text and "divided by 1000" in seen.text
    assert numeric_fields(seen.text) == numeric_fields(json.dumps(VISIBILITY))  # the JSON is read as before
    assert result["messages"][-1].text == "6.8 km."


def test_in_the_prompt_by_default_and_no_note(bank):
    _skill(bank, UNIT)
    _, model = _run(bank, [tool_call("current_conditions", city="Prague"), "6.8 km."], answer_units="prompt")
    assert "divided by 1000" in model.received[0][0].text
    (seen,) = _tool_results(model, 1)
    assert seen.text == json.dumps(VISIBILITY)


def test_the_skills_other_lessons_stay_in_the_prompt(bank):
    _skill(bank, UNIT, SKIP)
    _, model = _run(bank, [tool_call("current_conditions", city="Prague"), "6.8 km."])
    block = model.received[0][0].text
    assert "visibility-in-km" in block and "divided by" not in block


@pytest.mark.parametrize("call", [
    tool_call("forecast", city="Prague"),  # another tool's visibility_m: not the lesson's
])
def test_a_result_the_lesson_is_not_about_gets_no_note(bank, call):
    _skill(bank, UNIT)
    _, model = _run(bank, [call, "9 km."])
    (seen,) = _tool_results(model, 1)
    assert "Note" not in seen.text and answer_note_of(seen) is None


def test_a_result_without_the_field_gets_no_note(bank, monkeypatch):
    _skill(bank, UNIT)
    monkeypatch.setitem(VISIBILITY, "visibility_m", "unknown")
    _, model = _run(bank, [tool_call("current_conditions", city="Prague"), "Unknown."])
    (seen,) = _tool_results(model, 1)
    assert "Note" not in seen.text


def test_the_note_works_without_the_reminders(bank):
    _skill(bank, UNIT)
    _, model = _run(bank, [tool_call("current_conditions", city="Prague"), "6.8 km."], reminders=False)
    (seen,) = _tool_results(model, 1)
    assert "is 6.8" in seen.text


def test_a_raw_answer_after_the_note_is_still_asked_again(bank):
    # The answer's raw-number check reads the result's JSON under the note.
    _skill(bank, UNIT)
    result, model = _run(bank, [tool_call("current_conditions", city="Prague"), "Visibility is 6800.", "6.8 km."])
    assert len(model.received) == 3 and "6.8" in model.received[2][-1].text
    assert result["messages"][-1].text == "6.8 km."


def test_the_run_records_the_lesson_at_the_tool_step(bank):
    skill = _skill(bank, UNIT)
    result, _ = _run(bank, [tool_call("current_conditions", city="Prague"), "6.8 km."])
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    (step,) = [s for s in traj.steps if s.kind == "tool"]
    assert "is 6.8" in step.result
    assert [(i.skill_id, i.version) for i in traj.injections] == [(skill.id, skill.version)]
    assert all(i.step == step.index for i in traj.injections)  # the prompt never showed it


def test_async_agents_get_the_note_too(bank):
    _skill(bank, UNIT)
    model = ScriptedChatModel([tool_call("current_conditions", city="Prague"), "6.8 km."])
    agent = create_agent(model, [current_conditions], system_prompt="Be brief.",
                         middleware=[SkillInjectionMiddleware(bank, k=3, answer_units="tool")])
    asyncio.run(agent.ainvoke({"messages": [("user", ASK)]}))
    (seen,) = _tool_results(model, 1)
    assert "is 6.8" in seen.text


@pytest.mark.parametrize("adapter", [
    lambda bank: skillbank_prompt(bank, answer_units="tool"),
    lambda bank: skillbank_hook(bank, answer_units="tool"),
    lambda bank: inject_skills(bank, [("user", ASK)], answer_units="tool"),
])
def test_adapters_that_see_no_tool_result_refuse_it(bank, adapter):
    with pytest.raises(ValueError, match="never sees a tool call. Use SkillBankMiddleware"):
        adapter(bank)


def test_an_unknown_place_is_refused():
    with pytest.raises(ValueError, match="'prompt' or 'tool'"):
        InjectionConfig(answer_units="system")


def test_a_lesson_noted_at_the_tool_counts_as_shown(bank):
    # The gate tells a candidate that reached the model from one that did not by this count.
    skill = _skill(bank, UNIT)
    model = ScriptedChatModel([tool_call("current_conditions", city="Prague"), "6.8 km."])
    mw = SkillInjectionMiddleware(bank, k=3, answer_units="tool")
    agent = create_agent(model, [current_conditions], system_prompt="Be brief.", middleware=[mw])
    agent.invoke({"messages": [("user", ASK)]})
    assert mw.injected[skill.id] == 1
