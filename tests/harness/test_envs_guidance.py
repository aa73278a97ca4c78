"""The simulated policy reads guidance by meaning, not by the bank's sentence grammar.

The paraphrases below were written by hand, before the reader (``skillbank_harness.envs.guidance``)
existed, in two voices: a person writing a SKILL.md, and an LLM distiller's formal register.
None of them is a ``skillbank.lessons.sentence`` rendering. The tests check that the policy
reads each as the same directive the bank's own sentence would give, and that a policy given
the paraphrased hints succeeds about as often as one given the bank's sentences.

Rates measured here come from a simulated policy and show the machinery working; they are not
a claim about any real model.
"""

from __future__ import annotations

import collections

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from skillbank.lessons import sentence
from skillbank_harness.envs import SimulatedPolicy, generate_tasks, run_task
from skillbank_harness.envs import directives as dx
from skillbank_harness.envs.guidance import read

pytestmark = pytest.mark.model  # the reader embeds with the bundled MiniLM model


# -- hand-written paraphrases: (template whose tools the reader sees, text, expected directive) --

PERSON = [
    # check before
    ("calendar.base.meeting", "Never create an event without running check_availability first.",
     dx.CheckFirst("check_availability", "create_event")),
    ("car.base.climate", "Look at the car's status with get_vehicle_status before you touch set_climate.",
     dx.CheckFirst("get_vehicle_status", "set_climate")),
    ("retail.base.cancel", "Pull up the order with get_order before cancelling it via cancel_order.",
     dx.CheckFirst("get_order", "cancel_order")),
    ("retail.base.refund", "Refunds: confirm eligibility with check_refund_eligibility, and only then issue_refund.",
     dx.CheckFirst("check_refund_eligibility", "issue_refund")),
    ("car.base.navigate", "Don't start_navigation until get_route has been run for that destination.",
     dx.CheckFirst("get_route", "start_navigation")),
    # a tool that may be missing
    ("car.capability.window_missing",
     "This car may not have open_window; if it's missing, don't try it. Just do the rest and tell the "
     "driver open_window isn't available.",
     dx.Unavailable("open_window")),
    ("car.capability.seat_missing",
     "Seat heating may be unsupported here: never call set_seat_heater if you don't have it, and say so by name.",
     dx.Unavailable("set_seat_heater")),
    ("calendar.capability.room_missing",
     "Room booking (book_room) is not something every calendar offers. If you can't see it in your tools, "
     "skip it and tell the user book_room is unavailable.",
     dx.Unavailable("book_room")),
    ("retail.capability.refund_missing",
     "If you have no issue_refund tool you cannot refund: don't attempt the call, report that issue_refund "
     "is missing and handle the rest.",
     dx.Unavailable("issue_refund")),
    # a parameter a tool may lack
    ("car.capability.fan_missing",
     "set_climate might not take a fan_speed argument. Leave fan_speed out and tell the driver it can't be set.",
     dx.NoParam("set_climate", "fan_speed")),
    ("retail.capability.reason_missing",
     "cancel_order has no slot for cancel_reason here, so cancel without it, then let the customer know "
     "the cancel_reason couldn't be recorded.",
     dx.NoParam("cancel_order", "cancel_reason")),
    ("calendar.capability.invite_missing",
     "Invites may not be supported: if create_event offers no attendee_email, don't send one; create the "
     "event and tell the user attendee_email can't be set.",
     dx.NoParam("create_event", "attendee_email")),
    # ask rather than guess
    ("retail.disambiguation.cancel_which",
     "If it's unclear which order the customer means, ask them for the order_id before you cancel_order anything.",
     dx.AskFor("order_id", "cancel_order")),
    ("car.disambiguation.window",
     "Which window? If the driver didn't say, ask for the position before open_window; don't pick one yourself.",
     dx.AskFor("position", "open_window")),
    ("car.disambiguation.seat",
     "Don't guess the seat for set_seat_heater: when it's not stated, ask which seat.",
     dx.AskFor("seat", "set_seat_heater")),
    ("calendar.disambiguation.time",
     "No time given for create_event? Ask the user for the time instead of choosing one.",
     dx.AskFor("time", "create_event")),
    ("car.disambiguation.climate",
     "If the driver doesn't say what temperature, ask for temperature_c rather than making up a number "
     "for set_climate.",
     dx.AskFor("temperature_c", "set_climate")),
    ("calendar.disambiguation.contact",
     "When two contacts match, ask which attendee_email to use for create_event; never pick one at random.",
     dx.AskFor("attendee_email", "create_event")),
    # a field that may come back unknown
    ("car.capability.range_unknown",
     "get_vehicle_status sometimes returns range_km as null. Don't make up a range; tell the driver "
     "range_km is unknown.",
     dx.UnknownField("get_vehicle_status", "range_km")),
    ("retail.capability.delivery_unknown",
     "estimated_delivery from get_order can be empty: never invent a date, just say estimated_delivery is unknown.",
     dx.UnknownField("get_order", "estimated_delivery")),
    ("calendar.capability.duration_unknown",
     "If list_events gives no duration_min, admit the duration_min is unknown instead of guessing one.",
     dx.UnknownField("list_events", "duration_min")),
    # budget and order
    ("retail.base.cancel", "Keep it to 3 tool calls at most and don't repeat a call you've already made.",
     dx.StepBudget(3)),
    ("retail.base.cancel", "First get_order, then cancel_order.", dx.Order(("get_order", "cancel_order"))),
]

DISTILLER = [
    ("calendar.base.meeting", "Ensure `check_availability` has been invoked prior to any `create_event` call.",
     dx.CheckFirst("check_availability", "create_event")),
    ("car.base.climate",
     "Prior to adjusting the climate via `set_climate`, the agent should retrieve the vehicle status using "
     "`get_vehicle_status`.",
     dx.CheckFirst("get_vehicle_status", "set_climate")),
    ("car.capability.window_missing",
     "When the `open_window` tool is absent from the available toolset, refrain from invoking it; complete "
     "the remaining steps and inform the user that `open_window` is not available.",
     dx.Unavailable("open_window")),
    ("car.capability.fan_missing",
     "The `set_climate` schema may lack a `fan_speed` field; do not include it in the call, and mention to "
     "the user that `fan_speed` is not configurable.",
     dx.NoParam("set_climate", "fan_speed")),
    ("retail.disambiguation.cancel_which",
     "In cases where the `order_id` for `cancel_order` cannot be determined with certainty from the request, "
     "request clarification from the user rather than assuming.",
     dx.AskFor("order_id", "cancel_order")),
    ("car.capability.range_unknown",
     "Should `get_vehicle_status` report `range_km` as null or unknown, avoid fabricating a figure and state "
     "that `range_km` is unavailable.",
     dx.UnknownField("get_vehicle_status", "range_km")),
    ("retail.base.cancel", "Complete the task using no more than 4 tool invocations, avoiding redundant repeated calls.",
     dx.StepBudget(4)),
    ("car.base.climate", "The correct sequence is: `get_vehicle_status` followed by `set_climate`.",
     dx.Order(("get_vehicle_status", "set_climate"))),
]

GENERAL = [
    ("car.base.climate",
     "Whenever a tool's description tells you to call something first, do that before using the tool, even "
     "if the request looks obvious.",
     dx.CheckFirst(None, None)),
    ("car.base.climate", "Adhere to every prerequisite call stated in tool descriptions prior to invoking the tool.",
     dx.CheckFirst(None, None)),
    ("retail.base.cancel",
     "If the user asks for something none of your tools can do, don't call a made-up tool; finish the rest and "
     "name the tool that's missing.",
     dx.Unavailable(None)),
    ("retail.base.cancel",
     "If the user wants a setting your tool has no argument for, don't pass it; do the rest and name the "
     "parameter that's missing.",
     dx.NoParam(None, None)),
    ("retail.base.cancel",
     "When the request leaves a needed value unclear or open to two readings, ask the user rather than guessing.",
     dx.AskFor(None, None)),
    ("retail.base.cancel",
     "If a tool gives back a field as null or unknown, never fill it in yourself; tell the user which field "
     "is unknown.",
     dx.UnknownField(None, None)),
]

# Written after the reader's first version failed on some of the lists above, before its
# descriptions and cue words were revised, and never used to revise them: a blind check.
HELD_OUT = [
    ("retail.base.refund", "Only hand out a refund with issue_refund once check_refund_eligibility says yes.",
     dx.CheckFirst("check_refund_eligibility", "issue_refund")),
    ("calendar.base.solo", "Always see whether the slot is free using check_availability ahead of create_event.",
     dx.CheckFirst("check_availability", "create_event")),
    ("car.capability.window_missing",
     "Some cars lack open_window. Do not invent the call; finish the other requests and say open_window "
     "is not there.",
     dx.Unavailable("open_window")),
    ("calendar.capability.room_missing", "You may not be able to book rooms: book_room might not exist, so never call it.",
     dx.Unavailable("book_room")),
    ("retail.capability.reason_missing",
     "cancel_order does not accept cancel_reason in this shop; don't include cancel_reason, just mention "
     "that it couldn't be saved.",
     dx.NoParam("cancel_order", "cancel_reason")),
    ("car.capability.fan_missing", "There's no fan_speed on set_climate here, so never send fan_speed.",
     dx.NoParam("set_climate", "fan_speed")),
    ("car.disambiguation.seat", "Ask the driver which seat they mean before calling set_seat_heater if they didn't say.",
     dx.AskFor("seat", "set_seat_heater")),
    ("retail.disambiguation.cancel_which",
     "Customers often have several orders. Check with them which order_id they mean before cancel_order.",
     dx.AskFor("order_id", "cancel_order")),
    ("retail.capability.delivery_unknown",
     "get_order may leave estimated_delivery blank; in that case say estimated_delivery is not known, "
     "never guess a date.",
     dx.UnknownField("get_order", "estimated_delivery")),
    ("car.capability.range_unknown",
     "When range_km from get_vehicle_status is null, the range is unknown: say so and don't estimate it.",
     dx.UnknownField("get_vehicle_status", "range_km")),
    ("retail.base.cancel", "Use at most 2 tool calls for this.", dx.StepBudget(2)),
    ("retail.base.cancel",
     "If a tool's description names a tool to call first, call that one first every time.",
     dx.CheckFirst(None, None)),
    ("retail.base.cancel", "If something the user wants needs a tool you don't have, don't call it; name it.",
     dx.Unavailable(None)),
    ("retail.base.cancel", "Never guess a value the request leaves open; ask the user for it.",
     dx.AskFor(None, None)),
]

NOT_GUIDANCE = [
    ("car.base.climate", "You are an in-car voice assistant. Operate the vehicle with the tools on the "
                         "driver's behalf, then answer in one or two short sentences."),
    ("retail.base.cancel", "Be friendly and keep your answers short."),
    ("retail.base.cancel", "Our store ships to the UK and Ireland only."),
    ("calendar.base.meeting", "## Skills"),
]

# A person's SKILL.md for each template: its hints in the person's words (from PERSON above).
_BY_EXPECTED = {expected: text for _, text, expected in PERSON}


def _tools(template_id: str) -> list[dict]:
    task = generate_tasks(templates=[template_id], per_template=1, seed=0)[0]
    return [convert_to_openai_tool(t)["function"] for t in task.make_env().tools()]


@pytest.mark.parametrize("template_id,text,expected", PERSON + DISTILLER + GENERAL,
                         ids=[f"{i}-{e.__class__.__name__}" for i, (_, _, e) in enumerate(PERSON + DISTILLER + GENERAL)])
def test_a_paraphrase_reads_as_the_same_directive(template_id, text, expected):
    assert read(text, tools=_tools(template_id)) == [expected]


def test_held_out_paraphrases_read_mostly_right():
    """The blind set: at least 11 of its 14 read exactly as the bank's sentence would."""
    wrong = [(text, read(text, tools=_tools(tid))) for tid, text, expected in HELD_OUT
             if read(text, tools=_tools(tid)) != [expected]]
    assert len(wrong) <= 3, wrong


@pytest.mark.parametrize("template_id,text", NOT_GUIDANCE)
def test_prose_that_is_not_guidance_reads_as_nothing(template_id, text):
    assert read(text, tools=_tools(template_id)) == []


def _directive(lesson, tools: list[dict]):
    """What the bank's own sentence for ``lesson`` reads as (the reader's answer to compare with)."""
    return read(sentence(lesson), tools=tools)


def _person_hints(task) -> list[str] | None:
    """The task's hints in a person's words, or None when a hint has no hand-written paraphrase."""
    tools = [convert_to_openai_tool(t)["function"] for t in task.make_env().tools()]
    out = []
    for lesson in task.hints:
        read = _directive(lesson, tools)
        if len(read) != 1 or read[0] not in _BY_EXPECTED:
            return None
        out.append(_BY_EXPECTED[read[0]])
    return out


@pytest.mark.slow
def test_paraphrased_hints_help_about_as_much_as_the_banks_own_sentences():
    seeds = 8
    tasks = [t for t in generate_tasks(per_template=seeds, seed=7, budget=False) if t.hints]
    wins = collections.defaultdict(list)
    covered = set()
    for task in tasks:
        person = _person_hints(task)
        if person is None:
            continue
        covered.add(task.template)
        model = SimulatedPolicy(seed=task.instance)
        wins["unguided"].append(run_task(task, model).success)
        wins["bank"].append(run_task(task, model, skills=list(task.hints)).success)
        wins["person"].append(run_task(task, model, skills=person).success)
    rate = {arm: sum(v) / len(v) for arm, v in wins.items()}
    assert len(covered) >= 20, sorted(covered)  # most templates have their hints paraphrased
    assert rate["person"] >= rate["unguided"] + 0.2, rate
    assert abs(rate["person"] - rate["bank"]) <= 0.1, rate
