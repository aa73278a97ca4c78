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
from skillbank._toolnames import fitting_tool, is_skill_name
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


# -- an error that names its remedy ---------------------------------------------------------------

ROOMS = ["kitchen", "bedroom", "office", "hallway"]


def _home(bank, room, calls):
    """A lights run; ``set_light`` refuses by policy until the room's status was read."""
    read: set[str] = set()
    lit: list[str] = []

    @tool
    def get_room_status(room: str) -> str:
        """Read a room's status (occupancy, current light level)."""
        read.add(room)
        return json.dumps({"room": room, "occupied": False, "level": 0})

    @tool
    def set_light(room: str, level: int) -> str:
        """Set a room's light level in percent. Policy: read the room's status first."""
        if room not in read:
            return json.dumps({"ok": False, "error": "refused by policy: call get_room_status for it first"})
        lit.append(room)
        return json.dumps({"ok": True, "room": room, "level": level})

    script = [tool_call(name, args) for name, args in calls] + ["Done."]
    mw = SkillBankMiddleware(bank, inject=False, verifier=lambda state: room in lit)
    create_agent(ScriptedChatModel(script, cycle=False), [get_room_status, set_light], middleware=[mw]).invoke(
        {"messages": [("user", f"Set the {room} light to 40 percent.")]})
    return bank.trajectories.get(mw.recording_middleware.last_trajectory_id)


def test_a_refusal_that_names_its_remedy_is_a_policy_limit_and_teaches_the_check(bank):
    traj = _home(bank, "kitchen", [("set_light", {"room": "kitchen", "level": 40})])
    assert [(e.type, e.tool) for e in traj.limit_events] == [(LimitType.policy_refusal, "set_light")]
    for room in ROOMS[1:]:
        _home(bank, room, [("set_light", {"room": room, "level": 40})])
    evolve(bank)
    lessons = [x for _, x in _lessons(bank)]
    assert [(x.kind, x.check, x.tool) for x in lessons] == [(LessonKind.check_first, "get_room_status", "set_light")]
    skill = bank.get_skill("call-get-room-status-before-set-light")
    assert "Always call `get_room_status` before `set_light`." in skill.body and "retry" not in skill.body


def test_an_error_that_only_mentions_another_tool_is_not_a_check(bank):
    from skillbank.evolution._evidence import to_run
    from skillbank.evolution._guards import situations

    traj = _home(bank, "kitchen", [("set_light", {"room": "kitchen", "level": 40})])
    run = to_run(traj)
    assert [s.key for s in situations([run])] == [("check_first", "set_light", "get_room_status")]
    # The same failure, the message naming the other tool without asking for it: a plain error.
    [call] = [c for c in run.calls if c.tool == "set_light"]
    object.__setattr__(call, "result", json.dumps({"ok": False, "error": "level out of range (see get_room_status)"}))
    run.limits = [h.__class__(**{**h.__dict__, "type": LimitType.tool_error}) for h in run.limits]
    assert [s.key for s in situations([run])] == [("tool_error", "set_light", None)]


# -- checks from noise ----------------------------------------------------------------------------


def _house(bank, calls, *, passed):
    @tool
    def set_light(room: str, level: int) -> str:
        """Set a room's light level in percent."""
        return json.dumps({"ok": True, "room": room, "level": level})

    @tool
    def lock_doors() -> str:
        """Lock every door of the house."""
        return json.dumps({"ok": True, "locked": True})

    @tool
    def get_room_status(room: str) -> str:
        """Read a room's status."""
        return json.dumps({"room": room, "occupied": False})

    script = [tool_call(name, args) for name, args in calls] + ["Done."]
    mw = SkillBankMiddleware(bank, inject=False, verifier=lambda state: passed)
    create_agent(ScriptedChatModel(script, cycle=False), [set_light, lock_doors, get_room_status],
                 middleware=[mw]).invoke({"messages": [("user", "Dim the kitchen light and lock up.")]})
    from skillbank.evolution._evidence import to_run
    return to_run(bank.trajectories.get(mw.recording_middleware.last_trajectory_id))


def test_a_check_is_never_learned_around_an_invented_tool(bank):
    from skillbank.evolution.rule import mistakes

    light = ("set_light", {"room": "kitchen", "level": 30})
    invented = ("set_door_lock", {"locked": True})
    ok = [_house(bank, [light, invented, ("lock_doors", {})], passed=True) for _ in range(2)]
    bad = [_house(bank, [invented], passed=False)]
    lessons = [x for x, _ in mistakes(ok, bad, ok[0].method)]
    assert not any("set_door_lock" in x.tools() for x in lessons), lessons


def test_a_check_needs_two_successes_that_checked_first(bank):
    from skillbank.evolution.rule import mistakes

    status, light = ("get_room_status", {"room": "kitchen"}), ("set_light", {"room": "kitchen", "level": 30})
    bad = [_house(bank, [light], passed=False)]
    one = [_house(bank, [status, light], passed=True)]
    assert not [x for x, _ in mistakes(one, bad, one[0].method) if x.kind == LessonKind.check_first]
    two = one + [_house(bank, [status, light], passed=True)]
    assert [(x.check, x.tool) for x, _ in mistakes(two, bad, two[0].method)
            if x.kind == LessonKind.check_first] == [("get_room_status", "set_light")]


# -- text that says something -----------------------------------------------------------------------


def test_a_request_pattern_that_is_mostly_elisions_is_left_out():
    from skillbank.evolution._templates import describable

    assert describable("… the …") == ""
    assert describable("switch off the <value> the <value> and <value> the <value>") == ""
    assert describable("… on … at …") == ""
    # Elisions framed by words of their own say what they stand for: kept.
    assert describable("refund order <num> for <name>, it arrived damaged.") == "refund order … for …, it arrived damaged."
    assert describable("schedule <text> with <name> on <num> at <num>.") == "schedule … with … on … at …."
    assert describable("how warm is it right now in <value> and in <value>?") != ""


def test_a_budget_guard_updated_with_new_evidence_keeps_one_budget(bank):
    from test_evolution_support import injected, traj

    from skillbank.evolution import EvolutionConfig
    from skillbank.evolution._distiller import SkillEvidence
    from skillbank.evolution._evidence import to_run
    from skillbank.evolution._guards import situations
    from skillbank.evolution.rule import RuleDistiller
    from skillbank.lessons import Lesson
    from skillbank.models import LimitEvent

    old = Lesson(kind=LessonKind.budget, budget=13, tool="search")
    skill = bank.add_skill(name="finish-within-steps-budget-stop-repeating-search",
                           description="When a task risks running out of its steps budget.",
                           lessons=[old], kind="guard", tools=["search"], status="active")
    runs = [to_run(traj(f"Find the efficiency of topic {i}.", [("search", {"query": f"topic {i}"}, "no match")] * 6,
                        success=False, task_id=f"s-{i}", injections=injected(skill),
                        limits=[LimitEvent(type="tool_call_limit", step=12, detail="tool call limit reached",
                                           data={"limit": 6, "used": 6})]))
            for i in range(3)]
    evidence = SkillEvidence(skill=skill, runs=runs, situations=situations(runs))
    [proposal] = RuleDistiller().revise(evidence, EvolutionConfig())
    budgets = [x.budget for x in proposal.content.lessons if x.kind == LessonKind.budget]
    assert budgets == [6]
    assert proposal.content.body.count("Finish within") == 1
    # A merge of two skills keeps one budget too: the merged-in (later) one.
    merged = RuleDistiller().merge(skill.content, proposal.content)
    assert [x.budget for x in merged.lessons if x.kind == LessonKind.budget] == [6]


def test_a_numbered_slot_says_where_its_value_comes_from():
    from test_evolution_support import traj

    from skillbank.evolution._evidence import to_run
    from skillbank.evolution._methods import method_steps
    from skillbank.lessons import Lesson, sentence

    runs = [to_run(traj(f"Find my {item} and open what it is in.",
                        [("find_item", {"item": item}, f"The {item} is in the {box}."),
                         ("act", {"command": f"open {box}"}, "Opened.")], success=True, task_id=f"f-{item}"))
            for item, box in (("key", "chest"), ("coin", "crate"), ("map", "drawer"))]
    steps = method_steps(runs, runs[0].method)
    assert [s.args for s in steps] == [{"item": "<item>"}, {"command": "open <value_1>"}]
    assert steps[1].sources == {"value_1": "find_item"}
    text = sentence(Lesson(kind=LessonKind.procedure, steps=tuple(steps)))
    assert "2. Call `act` with `command`=`open <value_1>` (<value_1> from the result of `find_item`)." in text
    assert "1. Call `find_item` with `item`=<item> (from the request)." in text


def test_a_procedure_name_says_what_it_does():
    from skillbank.evolution.rule import name_for
    from skillbank.lessons import MethodStep

    game = [MethodStep(tool="act", args={"command": c}) for c in ("take <value_1>", "open <value_2>",
                                                                  "put <value_1> in <value_2>")]
    # One shared request word and a one-word tool said nothing ("put-act", "get-act").
    assert name_for(["put the <value> in the <value>."], ["act"], steps=game) == "take-open-put-with-act"
    assert name_for(["get the <value>."], ["get_weather"]) == "get-weather"
    assert name_for(['schedule <text> on <num>.'], ["find_contact", "create_event"]) == "schedule-create-event"
    assert name_for(["refund order <num> for <name>, it arrived damaged."], ["find_order", "issue_refund"]) \
        == "refund-order-arrived-damaged"


# -- small talk answered with a lookup ------------------------------------------------------------

COMPLIMENTS = ["Hi! I just wanted to say your service has been great.",
               "Hello! Just wanted to say your service has been great."]


def _shop(bank, text, calls):
    """A shop run on small talk; it passes when the model called no tool."""
    @tool
    def get_order(order_id: str) -> str:
        """Look up an order."""
        return json.dumps({"ok": False, "error": f"unknown order {order_id}"})

    script = [tool_call(name, args) for name, args in calls] + ["Thank you, glad to hear it!"]
    mw = SkillBankMiddleware(bank, inject=False, verifier=lambda state: not calls)
    create_agent(ScriptedChatModel(script, cycle=False), [get_order], middleware=[mw]).invoke(
        {"messages": [("user", text)]})


def test_small_talk_answered_with_a_lookup_teaches_to_call_no_tool(bank):
    from skillbank.adapters.injection import fits_toolset

    for text in COMPLIMENTS:  # the runs that got it right called nothing
        _shop(bank, text, [])
    for i in range(3):  # the lookups failed with an error: the call, not the error, was the mistake
        _shop(bank, COMPLIMENTS[i % 2], [("get_order", {"order_id": f"ORD-{1000 + i}"})])
    evolve(bank)
    taught = {lesson.kind: name for name, lesson in _lessons(bank)}
    assert LessonKind.no_tool in taught
    name, lesson = taught[LessonKind.no_tool], LessonKind.no_tool
    skill = bank.get_skill(name)
    assert "call no tool" in skill.body and "service has been great" in skill.description
    # Calling no tool is right whatever the agent's tools: it reaches an agent of another toolset.
    assert skill.content.toolset == ("get_order",) and fits_toolset(skill, ["get_door_status", "lock_door"])


def test_no_tool_is_not_learned_when_a_success_called_a_tool(bank):
    for text in COMPLIMENTS:
        _shop(bank, text, [])
    for i in range(3):
        _shop(bank, COMPLIMENTS[i % 2], [("get_order", {"order_id": f"ORD-{1000 + i}"})])
    # A request of the same kind that succeeded with a call: tools were not the mistake.
    bank.trajectories.save(_success_with_a_call(bank))
    evolve(bank)
    assert all(x.kind != LessonKind.no_tool for _, x in _lessons(bank))


def _success_with_a_call(bank):
    import test_evolution_support as worlds

    return worlds.traj(COMPLIMENTS[1], [("get_order", {"order_id": "ORD-7"}, '{"status": "shipped"}')],
                       success=True, answer="Thank you!")


def test_two_values_of_one_parameter_get_two_placeholders_named_by_the_request():
    """The trace: "1. Call `set_light` with `room`=<room>, `on`=`true` … 2. Call `set_light` with
    `room`=<room>, `on`=`false`" — the model then switched the wrong room off."""
    from test_evolution_support import traj

    from skillbank.evolution._evidence import to_run
    from skillbank.evolution._methods import method_steps
    from skillbank.lessons import Lesson, sentence

    rooms = (("kitchen", "hall"), ("office", "bedroom"), ("garage", "porch"))
    runs = [to_run(traj(f"Turn on the {on} light and switch off the {off} light.",
                        [("set_light", {"room": on, "on": True}, "ok"),
                         ("set_light", {"room": off, "on": False}, "ok")], success=True, task_id=f"l-{on}"))
            for on, off in rooms]
    steps = method_steps(runs, runs[0].method)
    assert [s.args for s in steps] == [{"room": "<room_1>", "on": "true"}, {"room": "<room_2>", "on": "false"}]
    assert [s.sources for s in steps] == [{"room": "request"}, {"room": "request"}]
    text = sentence(Lesson(kind=LessonKind.procedure, steps=tuple(steps)))
    assert "`room`=<room_2> (the second `room` the request names), `on`=`false`" in text
    # named by where the request names the value, not by step order
    flipped = [to_run(traj(f"Switch off the {off} light after turning on the {on} light.",
                           [("set_light", {"room": on, "on": True}, "ok"),
                            ("set_light", {"room": off, "on": False}, "ok")], success=True, task_id=f"f-{on}"))
               for on, off in rooms]
    steps = method_steps(flipped, flipped[0].method)
    assert [s.args["room"] for s in steps] == ["<room_2>", "<room_1>"]


def test_one_value_passed_twice_keeps_one_placeholder():
    from test_evolution_support import traj

    from skillbank.evolution._evidence import to_run
    from skillbank.evolution._methods import method_steps

    runs = [to_run(traj(f"Dim the {room} light.",
                        [("get_light", {"room": room}, "on, 80%"),
                         ("set_light", {"room": room, "brightness": 30}, "ok")], success=True, task_id=f"d-{room}"))
            for room in ("kitchen", "hall", "porch")]
    steps = method_steps(runs, runs[0].method)
    assert [s.args["room"] for s in steps] == ["<room>", "<room>"]


def _lights(on_room, off_room, pct, *, success, off_args=None, off_error=None, task_id):
    from test_evolution_support import traj

    from skillbank.evolution._evidence import to_run

    off = off_args or {"room": off_room, "on": False}
    return to_run(traj(f"Turn on the {on_room} light at {pct}% and turn off the {off_room} light.",
                       [("set_light", {"room": on_room, "on": True, "brightness": pct}, "ok"),
                        ("set_light", off, "error" if off_error else "ok", *([off_error] if off_error else []))],
                       success=success, task_id=task_id))


def test_a_call_shape_that_worked_in_failed_runs_is_no_pitfall():
    """The trace: "Do not call `set_light` with `brightness`=`0`, `on`=`False`" was learned from
    runs that failed for another reason (the wrong room); the call itself worked."""
    from skillbank.evolution.rule import mistakes

    ok = [_lights(a, b, p, success=True, task_id=f"ok-{a}")
          for a, b, p in (("kitchen", "hall", 60), ("office", "porch", 40), ("garage", "attic", 70))]
    bad = [_lights(a, b, p, success=False, off_args={"room": a, "on": False, "brightness": 0}, task_id=f"bad-{a}")
           for a, b, p in (("den", "bath", 30), ("loft", "yard", 50))]
    found = mistakes(ok, bad, ok[0].skeleton)
    assert not [x for x, _ in found if x.kind == LessonKind.pitfall and x.avoid == "call"], found


def test_a_call_shape_that_failed_where_the_same_call_succeeds_is_a_pitfall():
    from skillbank.evolution.rule import mistakes

    ok = [_lights(a, b, p, success=True, task_id=f"ok-{a}")
          for a, b, p in (("kitchen", "hall", 60), ("office", "porch", 40), ("garage", "attic", 70))]
    bad = [_lights(a, b, p, success=False, off_args={"room": b, "on": False, "brightness": 0},
                   off_error="brightness must be between 1 and 100", task_id=f"bad-{a}")
           for a, b, p in (("den", "bath", 30), ("loft", "yard", 50))]
    found = mistakes(ok, bad, ok[0].skeleton)
    [pitfall] = [x for x, _ in found if x.kind == LessonKind.pitfall and x.avoid == "call"]
    assert pitfall.tool == "set_light" and pitfall.steps[0].args["brightness"] == "0"
