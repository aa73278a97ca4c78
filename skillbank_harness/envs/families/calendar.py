"""Calendar assistant: contacts, events, availability, rooms.

Policies (stated in the action tools' descriptions, enforced by the verifiers):
``check_availability`` for the slot before ``create_event`` and before ``move_event``; never
book a slot that is not free.
"""

from __future__ import annotations

import re
from typing import Optional

from pydantic import BaseModel, Field

from skillbank import Lesson, LessonKind
from skillbank_harness.envs.base import (
    EnvError,
    Environment,
    RefStep,
    Spec,
    blocker_named,
    no_value_claim,
    param_not_passed,
    template,
)

FIRST = ("Dana", "Lee", "Priya", "Tomas", "Aiko", "Marta", "Owen", "Nadia", "Felix", "Rosa",
         "Jonas", "Amara")
LAST = ("Smith", "Okafor", "Novak", "Garcia", "Tanaka", "Berg", "Costa", "Walsh", "Haddad", "Kim")
TITLES = ("Budget review", "Design sync", "Hiring panel", "Quarterly planning", "Vendor call",
          "Roadmap chat", "Launch retro", "Team lunch", "Security briefing", "Onboarding session")
ROOMS = ("Aurora", "Birch", "Cedar")
_NUMBER = r"(?<![\w-])\d+(?:\.\d+)?(?![\w:-])"


class CalendarEnv(Environment):
    family = "calendar"
    system_prompt = (
        "You are a calendar assistant for a busy professional. Manage their calendar with the "
        "tools, then answer briefly."
    )


class NameArgs(BaseModel):
    name: str = Field(description="A person's name, e.g. Dana Smith.")


class ListArgs(BaseModel):
    date: Optional[str] = Field(None, description="Only events on this date, YYYY-MM-DD.")


class SlotArgs(BaseModel):
    date: str = Field(description="Date, YYYY-MM-DD.")
    time: str = Field(description="Start time, HH:MM.")


class CreateArgs(BaseModel):
    title: str = Field(description="Event title.")
    date: str = Field(description="Date, YYYY-MM-DD.")
    time: str = Field(description="Start time, HH:MM.")
    attendee_email: Optional[str] = Field(None, description="Email of the person to invite, if any.")


class MoveArgs(BaseModel):
    event_id: str = Field(description="Event id, e.g. EVT-123.")
    time: str = Field(description="New start time, HH:MM.")


class EventArgs(BaseModel):
    event_id: str = Field(description="Event id, e.g. EVT-123.")


class RoomArgs(BaseModel):
    event_id: str = Field(description="Event id, e.g. EVT-123.")
    room: str = Field(description="Room name.")


@CalendarEnv.tool("find_contact", "Find contacts whose name matches; returns name and email of each.",
                  NameArgs)
def find_contact(env: CalendarEnv, name: str) -> dict:
    parts = name.lower().split()
    found = [c for c in env.state["contacts"] if all(p in c["name"].lower().split() for p in parts)]
    return {"contacts": [dict(c) for c in found]}


@CalendarEnv.tool(
    "list_events",
    "List calendar events with event_id, title, date, time, duration_min and location.",
    ListArgs,
)
def list_events(env: CalendarEnv, date: str | None = None) -> dict:
    keys = ("event_id", "title", "date", "time", "duration_min", "location")
    return {"events": [{k: e[k] for k in keys} for e in env.state["events"]
                       if date is None or e["date"] == date]}


@CalendarEnv.tool("check_availability", "Check whether a time slot is free.", SlotArgs)
def check_availability(env: CalendarEnv, date: str, time: str) -> dict:
    _slot(date, time)
    clash = next((e for e in env.state["events"] if e["date"] == date and e["time"] == time), None)
    return {"date": date, "time": time, "free": clash is None,
            "conflict": clash["title"] if clash else None}


@CalendarEnv.tool(
    "create_event",
    "Create a calendar event (meeting) and optionally invite one attendee. "
    "Policy: call check_availability for the slot first.",
    CreateArgs,
)
def create_event(env: CalendarEnv, title: str, date: str, time: str,
                 attendee_email: str | None = None) -> dict:
    _slot(date, time)
    event_id = f"EVT-{env.state['next_id']}"
    env.state["next_id"] += 1
    env.state["events"].append({
        "event_id": event_id, "title": title, "date": date, "time": time, "duration_min": 30,
        "location": None, "attendees": [attendee_email] if attendee_email else [], "created": True,
    })
    return {"event_id": event_id, "title": title, "date": date, "time": time,
            "attendee_email": attendee_email}


@CalendarEnv.tool(
    "move_event",
    "Move (reschedule) an event to a new time on the same day. "
    "Policy: call check_availability for the new slot first.",
    MoveArgs,
)
def move_event(env: CalendarEnv, event_id: str, time: str) -> dict:
    e = _event(env, event_id)
    _slot(e["date"], time)
    e["time"] = time
    return {"event_id": e["event_id"], "date": e["date"], "time": time}


@CalendarEnv.tool("cancel_event", "Cancel an event.", EventArgs)
def cancel_event(env: CalendarEnv, event_id: str) -> dict:
    e = _event(env, event_id)
    env.state["events"].remove(e)
    return {"event_id": e["event_id"], "cancelled": True}


@CalendarEnv.tool("book_room", "Book a meeting room for an event.", RoomArgs)
def book_room(env: CalendarEnv, event_id: str, room: str) -> dict:
    e = _event(env, event_id)
    e["location"] = room
    return {"event_id": e["event_id"], "room": room}


def _event(env: CalendarEnv, event_id: str) -> dict:
    for e in env.state["events"]:
        if e["event_id"].lower() == str(event_id).strip().lower():
            return e
    raise EnvError(f"no event {event_id!r}")


def _slot(date: str, time: str) -> None:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date or ""):
        raise EnvError(f"date must be YYYY-MM-DD, got {date!r}")
    if not re.fullmatch(r"\d{1,2}:\d{2}", time or ""):
        raise EnvError(f"time must be HH:MM, got {time!r}")


# ---------------------------------------------------------------------- world and helpers


def _date(rng, month: int) -> str:
    return f"2025-{month:02d}-{rng.randint(1, 28):02d}"


def _times(rng, n: int) -> list[str]:
    return [f"{h:02d}:{m}" for h, m in
            zip(rng.sample(range(8, 18), n), [rng.choice(["00", "30"]) for _ in range(n)])]


def _person(first: str, last: str) -> dict:
    return {"name": f"{first} {last}", "email": f"{first.lower()}.{last.lower()}@example.com"}


def _state(rng, *, contacts: list[dict] | None = None) -> dict:
    month = rng.randint(1, 12)
    if contacts is None:
        firsts = rng.sample(FIRST, 4)
        contacts = [_person(f, rng.choice(LAST)) for f in firsts]
    days = sorted({_date(rng, month) for _ in range(3)})
    events = []
    titles = rng.sample(TITLES, 4)
    for i, title in enumerate(titles):
        events.append({
            "event_id": f"EVT-{100 + i}", "title": title, "date": days[i % len(days)],
            "time": _times(rng, 1)[0], "duration_min": rng.choice([30, 45, 60]),
            "location": rng.choice(ROOMS), "attendees": [], "created": False,
        })
    return {"contacts": contacts, "events": events, "next_id": 200, "month": month}


def _free_slot(rng, state: dict, date: str) -> str:
    taken = {e["time"] for e in state["events"] if e["date"] == date}
    while True:
        t = _times(rng, 1)[0]
        if t not in taken:
            return t


def _fresh_date(rng, state: dict) -> str:
    return _date(rng, state["month"])


def _created(env: CalendarEnv, title: str, date: str, time: str, email: str | None) -> list[str]:
    made = [e for e in env.state["events"] if e["created"]]
    want = {"title": title, "date": date, "time": time, "attendees": [email] if email else []}
    got = [{k: e[k] for k in want} for e in made]
    return [] if got == [want] else [f"created {got}, expected [{want}]"]


def _nothing_created(env: CalendarEnv) -> list[str]:
    made = [e["title"] for e in env.state["events"] if e["created"]]
    return [] if not made else [f"created {made} although the slot was taken"]


def _create_checked(env: CalendarEnv) -> list[str]:
    return env.require_before("check_availability", "create_event", ["date", "time"])


def _moved(env: CalendarEnv, event_id: str, time: str, others: dict[str, str]) -> list[str]:
    e = _event(env, event_id)
    reasons = [] if e["time"] == time else [f"{event_id} is at {e['time']}, expected {time}"]
    for eid, t in others.items():
        if _event(env, eid)["time"] != t:
            reasons.append(f"{eid} was moved but should not have been")
    return reasons


def _move_checked(env: CalendarEnv) -> list[str]:
    def same(check, act) -> bool:
        try:
            date = _event(env, act.args.get("event_id", ""))["date"]
        except EnvError:
            return False
        return check.args.get("date") == date and check.args.get("time") == act.args.get("time")

    return env.require_before("check_availability", "move_event", same)


CHECK_CREATE = Lesson(kind=LessonKind.check_first, check="check_availability", tool="create_event")
CHECK_MOVE = Lesson(kind=LessonKind.check_first, check="check_availability", tool="move_event")


# ---------------------------------------------------------------------- base


@template(CalendarEnv, "calendar.base.meeting", "base")
def _base_meeting(rng) -> Spec:
    state = _state(rng)
    person = rng.choice(state["contacts"])
    title, date = rng.choice(TITLES), _fresh_date(rng, state)
    time = _free_slot(rng, state, date)
    return Spec(
        input=f'Schedule "{title}" with {person["name"]} on {date} at {time}.',
        state=state,
        reference=[RefStep.call("find_contact", {"name": person["name"]}, role="lookup"),
                   RefStep.call("check_availability", {"date": date, "time": time}, role="check"),
                   RefStep.call("create_event", {"title": title, "date": date, "time": time,
                                          "attendee_email": person["email"]}),
                   RefStep.answer(f"{title} is booked with {person['name']}.")],
        check=lambda env, ans, msgs: (_created(env, title, date, time, person["email"])
                                      + _create_checked(env)),
        hints=(CHECK_CREATE,),
    )


@template(CalendarEnv, "calendar.base.solo", "base")
def _base_solo(rng) -> Spec:
    state = _state(rng)
    busy = rng.random() < 0.3
    if busy:
        clash = rng.choice(state["events"])
        date, time = clash["date"], clash["time"]
    else:
        date = _fresh_date(rng, state)
        time = _free_slot(rng, state, date)
    title = rng.choice(["Focus time", "Gym", "Dentist", "Deep work", "Lunch break"])
    steps = [RefStep.call("check_availability", {"date": date, "time": time}, role="check")]
    if busy:
        steps.append(RefStep.answer("That slot is taken, so I did not add it."))
    else:
        steps += [RefStep.call("create_event", {"title": title, "date": date, "time": time}),
                  RefStep.answer(f"{title} is on your calendar.")]
    return Spec(
        input=f'Add "{title}" to my calendar on {date} at {time}.',
        state=state,
        reference=steps,
        check=lambda env, ans, msgs: ((_nothing_created(env) if busy
                                       else _created(env, title, date, time, None))
                                      + _create_checked(env)
                                      + ([] if any(c.args == {"date": date, "time": time}
                                                   for c in env.calls("check_availability"))
                                         else ["never checked whether the slot is free"])),
        hints=(CHECK_CREATE,),
    )


@template(CalendarEnv, "calendar.base.reschedule", "base", heldout=True)
def _base_reschedule(rng) -> Spec:
    state = _state(rng)
    event = rng.choice(state["events"])
    new_time = _free_slot(rng, state, event["date"])
    others = {e["event_id"]: e["time"] for e in state["events"] if e is not event}
    return Spec(
        input=f'Move "{event["title"]}" on {event["date"]} to {new_time}.',
        state=state,
        reference=[RefStep.call("list_events", {"date": event["date"]}, role="lookup"),
                   RefStep.call("check_availability", {"date": event["date"], "time": new_time},
                                role="check"),
                   RefStep.call("move_event", {"event_id": event["event_id"], "time": new_time}),
                   RefStep.answer(f"{event['title']} now starts at {new_time}.")],
        check=lambda env, ans, msgs: (_moved(env, event["event_id"], new_time, others)
                                      + _move_checked(env)),
        hints=(CHECK_MOVE,),
    )


# ---------------------------------------------------------------------- capability limits


@template(CalendarEnv, "calendar.capability.room_missing", "capability")
def _cap_room(rng) -> Spec:
    state = _state(rng)
    person = rng.choice(state["contacts"])
    title, date = rng.choice(TITLES), _fresh_date(rng, state)
    time = _free_slot(rng, state, date)
    return Spec(
        input=f'Schedule "{title}" with {person["name"]} on {date} at {time} and book a meeting room.',
        state=state,
        removed=("book_room",),
        reference=[RefStep.call("find_contact", {"name": person["name"]}, role="lookup"),
                   RefStep.call("check_availability", {"date": date, "time": time}, role="check"),
                   RefStep.call("create_event", {"title": title, "date": date, "time": time,
                                          "attendee_email": person["email"]}),
                   RefStep.answer(f"{title} is booked. I could not book a room: "
                                          "`book_room` is unavailable.")],
        check=lambda env, ans, msgs: (_created(env, title, date, time, person["email"])
                                      + _create_checked(env) + blocker_named(ans, "book_room")),
        hints=(CHECK_CREATE, Lesson(kind=LessonKind.missing_tool, tool="book_room")),
    )


@template(CalendarEnv, "calendar.capability.invite_missing", "capability")
def _cap_invite(rng) -> Spec:
    state = _state(rng)
    person = rng.choice(state["contacts"])
    title, date = rng.choice(TITLES), _fresh_date(rng, state)
    time = _free_slot(rng, state, date)
    return Spec(
        input=f'Schedule "{title}" on {date} at {time} with {person["name"]} as an invited attendee.',
        state=state,
        removed_params=(("create_event", "attendee_email"),),
        reference=[RefStep.call("check_availability", {"date": date, "time": time}, role="check"),
                   RefStep.call("create_event", {"title": title, "date": date, "time": time}),
                   RefStep.answer(f"{title} is booked. I could not invite {person['name']}: "
                                          "`create_event` has no `attendee_email` parameter.")],
        check=lambda env, ans, msgs: (_created(env, title, date, time, None) + _create_checked(env)
                                      + param_not_passed(msgs, "create_event", "attendee_email")
                                      + blocker_named(ans, "attendee_email")),
        hints=(CHECK_CREATE, Lesson(kind=LessonKind.missing_parameter, tool="create_event", parameter="attendee_email")),
    )


@template(CalendarEnv, "calendar.capability.duration_unknown", "capability")
def _cap_duration(rng) -> Spec:
    state = _state(rng)
    event = rng.choice(state["events"])
    event["duration_min"] = None
    title2 = rng.choice(["Focus time", "Gym", "Deep work", "Lunch break"])
    time2 = _free_slot(rng, state, event["date"])
    return Spec(
        input=(f'What is the duration of "{event["title"]}" on {event["date"]}? '
               f'Also add "{title2}" on {event["date"]} at {time2}.'),
        state=state,
        reference=[RefStep.call("list_events", {"date": event["date"]}, role="lookup"),
                   RefStep.call("check_availability", {"date": event["date"], "time": time2}, role="check"),
                   RefStep.call("create_event", {"title": title2, "date": event["date"], "time": time2}),
                   RefStep.answer(f"{title2} is on your calendar. `duration_min` is unknown "
                                          f"for {event['title']}.")],
        check=lambda env, ans, msgs: (
            _created(env, title2, event["date"], time2, None) + _create_checked(env)
            + blocker_named(ans, "duration_min")
            + no_value_claim(ans, "duration_min", ["duration", "long", "minutes"], _NUMBER)),
        hints=(Lesson(kind=LessonKind.unknown_field, tool="list_events", field="duration_min"), CHECK_CREATE),
    )


@template(CalendarEnv, "calendar.capability.move_missing", "capability", heldout=True)
def _cap_move(rng) -> Spec:
    state = _state(rng)
    event = rng.choice(state["events"])
    new_time = _free_slot(rng, state, event["date"])
    title2 = rng.choice(["Focus time", "Gym", "Deep work", "Lunch break"])
    time3 = _free_slot(rng, state, event["date"])
    while time3 == new_time:
        time3 = _free_slot(rng, state, event["date"])
    return Spec(
        input=(f'Move "{event["title"]}" on {event["date"]} to {new_time} and add "{title2}" on '
               f'{event["date"]} at {time3}.'),
        state=state,
        removed=("move_event",),
        reference=[RefStep.call("check_availability", {"date": event["date"], "time": time3}, role="check"),
                   RefStep.call("create_event", {"title": title2, "date": event["date"], "time": time3}),
                   RefStep.answer(f"{title2} is on your calendar. I could not move "
                                          f"{event['title']}: `move_event` is unavailable.")],
        check=lambda env, ans, msgs: (_created(env, title2, event["date"], time3, None)
                                      + _create_checked(env) + blocker_named(ans, "move_event")),
        hints=(Lesson(kind=LessonKind.missing_tool, tool="move_event"), CHECK_CREATE),
    )


# ---------------------------------------------------------------------- disambiguation


@template(CalendarEnv, "calendar.disambiguation.contact", "disambiguation")
def _dis_contact(rng) -> Spec:
    first = rng.choice(FIRST)
    lasts = rng.sample(LAST, 2)
    others = [f for f in FIRST if f != first]
    contacts = [_person(first, lasts[0]), _person(first, lasts[1])] + [
        _person(f, rng.choice(LAST)) for f in rng.sample(others, 2)]
    rng.shuffle(contacts)
    state = _state(rng, contacts=contacts)
    person = next(c for c in contacts if c["name"] == f"{first} {lasts[0]}")
    title, date = rng.choice(TITLES), _fresh_date(rng, state)
    time = _free_slot(rng, state, date)
    return Spec(
        input=f'Schedule "{title}" with {first} on {date} at {time}.',
        state=state,
        reply=f"I mean {person['name']}.",
        reference=[RefStep.ask(f"Which {first} do you mean?"),
                   RefStep.call("find_contact", {"name": person["name"]}, role="lookup"),
                   RefStep.call("check_availability", {"date": date, "time": time}, role="check"),
                   RefStep.call("create_event", {"title": title, "date": date, "time": time,
                                          "attendee_email": person["email"]}),
                   RefStep.answer(f"{title} is booked with {person['name']}.")],
        check=lambda env, ans, msgs: (_created(env, title, date, time, person["email"])
                                      + _create_checked(env)
                                      + env.require_asked_before("create_event")),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="attendee_email", tool="create_event"), CHECK_CREATE),
    )


@template(CalendarEnv, "calendar.disambiguation.time", "disambiguation")
def _dis_time(rng) -> Spec:
    state = _state(rng)
    person = rng.choice(state["contacts"])
    title, date = rng.choice(TITLES), _fresh_date(rng, state)
    time = _free_slot(rng, state, date)
    return Spec(
        input=f'Schedule "{title}" with {person["name"]} on {date}.',
        state=state,
        reply=f"At {time}, please.",
        reference=[RefStep.ask("What time should it start?"),
                   RefStep.call("find_contact", {"name": person["name"]}, role="lookup"),
                   RefStep.call("check_availability", {"date": date, "time": time}, role="check"),
                   RefStep.call("create_event", {"title": title, "date": date, "time": time,
                                          "attendee_email": person["email"]}),
                   RefStep.answer(f"{title} is booked at {time}.")],
        check=lambda env, ans, msgs: (_created(env, title, date, time, person["email"])
                                      + _create_checked(env)
                                      + env.require_asked_before("create_event")),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="time", tool="create_event"), CHECK_CREATE),
    )


@template(CalendarEnv, "calendar.disambiguation.move_which", "disambiguation", heldout=True)
def _dis_move(rng) -> Spec:
    state = _state(rng)
    first = state["events"][0]
    dates = sorted({e["date"] for e in state["events"]})
    other_date = next((d for d in dates if d != first["date"]), None)
    if other_date is None:
        other_date = first["date"][:-2] + ("27" if first["date"][-2:] != "27" else "26")
    twin = dict(first, event_id="EVT-150", date=other_date, time=_free_slot(rng, state, other_date))
    state["events"].append(twin)
    target = rng.choice([first, twin])
    new_time = _free_slot(rng, state, target["date"])
    others = {e["event_id"]: e["time"] for e in state["events"] if e is not target}
    return Spec(
        input=f'Move my "{first["title"]}" meeting to {new_time}.',
        state=state,
        reply=f"The one on {target['date']}.",
        reference=[RefStep.ask(f"You have two {first['title']} meetings; which date?"),
                   RefStep.call("list_events", {"date": target["date"]}, role="lookup"),
                   RefStep.call("check_availability", {"date": target["date"], "time": new_time},
                         role="check"),
                   RefStep.call("move_event", {"event_id": target["event_id"], "time": new_time}),
                   RefStep.answer(f"Moved to {new_time}.")],
        check=lambda env, ans, msgs: (_moved(env, target["event_id"], new_time, others)
                                      + _move_checked(env) + env.require_asked_before("move_event")),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="event_id", tool="move_event"), CHECK_MOVE),
    )
