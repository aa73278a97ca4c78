"""What a small real model actually does wrong, and what a round learns from it.

Each trace below has the shape of a real Qwen2.5-1.5B run: the real ``create_agent`` loop with
the real ``SkillBankMiddleware`` recording it, and a scripted chat model replaying the model's
calls (an invented tool name, a skill's name called as a tool, a refusal that names its remedy).
"""

from __future__ import annotations

import json

from langchain.agents import create_agent
from langchain_core.tools import tool

from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.evolution import evolve
from skillbank.evolution.toolnames import fitting_tool, is_skill_name
from skillbank.lessons import LessonKind
from skillbank.models import LimitType

TITLES = ["Standup", "Budget review", "Design sync", "Retro", "Planning", "Lunch with Sam"]
DATES = ["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-09"]


def _calendar(bank, title, date, calls, *, extra_tools=(), passed=bool):
    """One scheduling run: ``calls`` are the model's tool calls, in order, then an answer."""
    created: list[dict] = []

    @tool
    def create_event(title: str, date: str, time: str) -> str:
        """Create a calendar event."""
        created.append({"title": title, "date": date, "time": time})
        return json.dumps({"ok": True, "title": title})

    @tool
    def list_events(date: str) -> str:
        """List the events of one day."""
        return json.dumps({"date": date, "events": []})

    script = [tool_call(name, args) for name, args in calls] + ["I have scheduled it."]
    mw = SkillBankMiddleware(bank, inject=False, verifier=lambda state: passed(created))
    agent = create_agent(ScriptedChatModel(script, cycle=False), [create_event, list_events, *extra_tools],
                         middleware=[mw])
    agent.invoke({"messages": [("user", f'Schedule "{title}" on {date} at 10:00.')]})


def _lessons(bank):
    return [(s.name, x) for s in bank.skills.list() for x in s.content.all_lessons]


# -- an invented tool name ------------------------------------------------------------------------


def test_the_recorder_sees_an_invented_name_as_a_missing_tool_and_the_toolset_offered(bank):
    _calendar(bank, TITLES[0], DATES[0], [("add_event", {"title": TITLES[0], "date": DATES[0], "time": "10:00"})])
    [traj] = bank.trajectories.list(with_steps=True)
    [event] = traj.limit_events
    assert (event.type, event.tool) == (LimitType.missing_tool, "add_event")
    assert {"create_event", "list_events"} <= {t for s in traj.steps for t in (s.tools_offered or ())}


def test_an_invented_tool_name_teaches_the_right_tool_and_never_names_the_invented_one(bank):
    for i in range(3):
        args = {"title": TITLES[i], "date": DATES[i], "time": "10:00"}
        _calendar(bank, TITLES[i], DATES[i], [("add_event", args)])
    for i in range(3, 6):  # the model sometimes gets the name right
        args = {"title": TITLES[i], "date": DATES[i], "time": "10:00"}
        _calendar(bank, TITLES[i], DATES[i], [("create_event", args)])
    report = evolve(bank)
    lessons = _lessons(bank)
    kinds = {x.kind for _, x in lessons}
    assert LessonKind.missing_tool not in kinds, lessons
    [(name, lesson)] = [(n, x) for n, x in lessons if x.kind == LessonKind.wrong_tool_name]
    assert lesson.tool == "create_event" and name == "call-create-event-by-its-exact-name"
    skill = bank.get_skill(name)
    assert "add_event" not in skill.body + skill.description and "create_event" in skill.body
    assert skill.tools == ("create_event",)
    # The invented name is in the reason (provenance), so a person can see what happened.
    assert any("`add_event`" in c.reason for c in report.changes if c.skill == name)


def test_a_call_no_tool_fits_stays_a_missing_tool(bank):
    for i in range(2):
        args = {"date": DATES[i], "time": "10:00"}
        _calendar(bank, TITLES[i], DATES[i], [("create_event", {"title": TITLES[i], **args}), ("book_room", args)],
                  passed=lambda created: False)  # the room was asked for and not booked
    evolve(bank)
    assert [(x.kind, x.tool) for _, x in _lessons(bank) if x.kind != LessonKind.procedure] == [
        (LessonKind.missing_tool, "book_room")]


def test_which_tool_a_wrong_name_meant():
    cal = ["create_event", "list_events", "cancel_event"]
    assert fitting_tool("add_event", "Schedule the standup on Monday.", cal) == "create_event"
    assert fitting_tool("book_room", "Book a meeting room.", cal) is None
    home = ["set_lights", "get_room_status", "lock_doors"]
    assert fitting_tool("turn_light", "Turn off the kitchen light.", home) == "set_lights"
    assert fitting_tool("set_door_lock", "Lock the front door.", home) == "lock_doors"
    # Opposite verbs, or a read tool for a write: the request needs what no tool offers.
    car = ["close_window", "set_climate", "get_vehicle_status"]
    assert fitting_tool("open_window", "Open the driver window.", car) is None
    retail = ["get_order", "check_refund_eligibility", "cancel_order"]
    assert fitting_tool("issue_refund", "Refund order 4001, it arrived damaged.", retail) is None
    assert fitting_tool("delete_order", "Cancel order 4001.", retail) == "cancel_order"
    # Two tools that fit equally: no lesson can say which one was meant, unless the arguments do.
    two = ["set_lights", "set_light_color"]
    assert fitting_tool("turn_light", "Turn the lights on.", ["set_lights", "switch_lights"]) is None
    assert fitting_tool("turn_light", "Turn the lights on.", ["set_lights", "switch_lights"],
                        {"set_lights": {"room", "on"}}, ["room", "on"]) == "set_lights"
    assert fitting_tool("turn_light", "Turn the lights on.", two) == "set_lights"


# -- a skill's name called as a tool --------------------------------------------------------------


def test_a_skill_name_called_as_a_tool_is_no_guard(bank):
    bank.add_skill(name="turn-light-brightness-switch", description="Dim or brighten a room's light.",
                   body="Call `create_event`.", kind="procedure", tools=["create_event"], status="active")
    assert is_skill_name("turn_light_brightness_switch", ["turn-light-brightness-switch"])
    for i in range(3):
        _calendar(bank, TITLES[i], DATES[i], [("turn_light_brightness_switch", {"room": "kitchen"})])
    report = evolve(bank, dry_run=True)
    assert report.situations == 0
    assert not [c for c in report.changes if "turn" in c.skill and c.skill != "turn-light-brightness-switch"]
