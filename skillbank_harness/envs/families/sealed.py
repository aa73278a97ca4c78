"""Sealed task templates: six small toolsets and their templates.

Written by a helper agent that read only the environment API (``skillbank_harness/envs/base.py``).
Importing this module registers the toolsets' templates in ``TEMPLATES``.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Optional

from pydantic import BaseModel, Field

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

# IDs of the templates where doing nothing (no tool call, a generic answer) is the right run.
NOOP_OK: set[str] = set()

# ============================================================================ answer helpers

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]


def _said(answer: str, value: Any) -> bool:
    """``value`` appears in the answer as a whole token (case-insensitive)."""
    v = re.escape(str(value).strip().lower())
    return re.search(rf"(?<![a-z0-9]){v}(?![a-z0-9])", (answer or "").lower()) is not None


def _numbers(answer: str) -> list[float]:
    out = []
    for m in re.finditer(r"(?<![\w.\-/:])(\d+(?:[.,]\d+)?)(?!\d|[.,:/\-]\d)", answer or ""):
        try:
            out.append(float(m.group(1).replace(",", ".")))
        except ValueError:
            pass
    return out


def _said_number(answer: str, x: float, tol: float = 0.0) -> bool:
    return any(abs(n - x) <= tol + 1e-9 for n in _numbers(answer))


def _said_time(answer: str, hhmm: str, *, require_12h: bool = False) -> bool:
    h, m = (int(p) for p in hhmm.split(":"))
    a = (answer or "").lower()
    h12 = h % 12 or 12
    suffix = "am" if h < 12 else "pm"
    suf_re = r"\s*a\.?\s?m\.?" if suffix == "am" else r"\s*p\.?\s?m\.?"
    pats = [rf"(?<!\d){h12}[:.]{m:02d}{suf_re}"]
    if m == 0:
        pats.append(rf"(?<!\d){h12}{suf_re}")
    if not require_12h:
        pats.append(rf"(?<!\d)0?{h}:{m:02d}(?!\d)")
        if h >= 12:
            pats.append(rf"(?<!\d){h:02d}{m:02d}\s*h")
    return any(re.search(p, a) for p in pats)


def _said_date(answer: str, iso: str) -> bool:
    d = _dt.date.fromisoformat(iso)
    a = (answer or "").lower()
    if iso in a:
        return True
    mon, short = _MONTHS[d.month - 1].lower(), _MONTHS[d.month - 1][:3].lower()
    day = rf"0?{d.day}(?:st|nd|rd|th)?"
    pats = [rf"(?<!\d){day}\s+(?:of\s+)?(?:{mon}|{short})\b", rf"\b(?:{mon}|{short})\.?\s+{day}(?!\d)",
            rf"(?<!\d)0?{d.day}[/.]0?{d.month}[/.](?:{d.year}|{d.year % 100})(?!\d)",
            rf"(?<!\d)0?{d.month}/0?{d.day}/(?:{d.year}|{d.year % 100})(?!\d)"]
    return any(re.search(p, a) for p in pats)


def _any_word(answer: str, words: list[str]) -> bool:
    a = (answer or "").lower()
    return any(w in a for w in words)


def _need(ok: bool, reason: str) -> list[str]:
    return [] if ok else [reason]


def _no_calls_except(env: Environment, allowed: set[str]) -> list[str]:
    bad = sorted({c.tool for c in env.calls() if c.tool not in allowed})
    return [f"called `{t}`, which this task does not need" for t in bad]


def _pick(rng, pool, k):
    return rng.sample(list(pool), k)


FIRST = ["Amara", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Isla", "Jonas",
         "Kemi", "Liam", "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tomas",
         "Uma", "Victor", "Wen", "Yusuf", "Zara"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Haddad", "Kowalski", "Tanaka", "Byrne", "Silva",
        "Novak", "Patel", "Jensen", "Abara", "Castillo", "Fischer", "Mensah", "Rossi", "Walsh"]


def _people(rng, n):
    firsts = _pick(rng, FIRST, n)
    lasts = _pick(rng, LAST, n)
    return [f"{f} {l}" for f, l in zip(firsts, lasts)]


def _date(rng, start=_dt.date(2026, 1, 5), span=300) -> _dt.date:
    return start + _dt.timedelta(days=rng.randrange(span))


# ============================================================================ 1. gym

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
CLASS_NAMES = ["Spin", "Yoga", "Pilates", "HIIT", "Boxing", "Zumba", "Body Pump", "Kettlebells"]
CLASS_TIMES = ["06:30", "07:15", "09:00", "10:30", "12:15", "13:00", "17:45", "18:30", "19:15", "20:00"]
COACHES = ["Coach Ade", "Coach Bea", "Coach Carl", "Coach Dana", "Coach Emil", "Coach Fay"]


class FindMemberArgs(BaseModel):
    name: str = Field(description="The member's name or part of it, e.g. 'Rosa' or 'Rosa Silva'.")


class MemberIdArgs(BaseModel):
    member_id: str = Field(description="Member id, e.g. 'M-4821'.")


class DayArgs(BaseModel):
    day: str = Field(description="Day of the week, e.g. 'Tuesday'.")


class BookClassArgs(BaseModel):
    member_id: str = Field(description="Member id, e.g. 'M-4821'.")
    class_id: str = Field(description="Class id from list_classes, e.g. 'C-207'.")


class BookingIdArgs(BaseModel):
    booking_id: str = Field(description="Booking id, e.g. 'B-1093'.")


class GymEnv(Environment):
    family = "sealed_gym"
    system_prompt = (
        "You are the front-desk assistant of a fitness gym. Use the tools to look things up and act. "
        "Policy: always call check_membership for a member before calling book_class for them, and "
        "only book members whose status is 'active'. Bookings are cancelled with cancel_booking. "
        "When you are done, reply to the user with a short answer."
    )


@GymEnv.tool("find_member", "Find gym members whose name contains the given text. Returns member ids and names.",
             FindMemberArgs)
def _gym_find(env, name):
    q = name.strip().lower()
    if not q:
        raise EnvError("name must not be empty")
    hits = [{"member_id": mid, "name": m["name"]} for mid, m in env.state["members"].items()
            if q in m["name"].lower()]
    return {"matches": hits}


@GymEnv.tool("check_membership", "Show a member's membership: status (active, frozen or expired), plan and "
             "expiry_date.", MemberIdArgs)
def _gym_check(env, member_id):
    m = env.state["members"].get(member_id.strip())
    if m is None:
        raise EnvError(f"unknown member id {member_id!r}")
    return {"member_id": member_id.strip(), "name": m["name"], "status": m["status"], "plan": m["plan"],
            "expiry_date": m["expiry_date"]}


@GymEnv.tool("list_classes", "List the group classes on a day of the week: class_id, name, start time "
             "(24-hour), coach and spots_left.", DayArgs)
def _gym_list(env, day):
    d = day.strip().capitalize()
    if d not in DAYS + ["Sunday"]:
        raise EnvError(f"unknown day {day!r}; use a weekday name like 'Tuesday'")
    rows = [{"class_id": cid, "name": c["name"], "time": c["time"], "coach": c["coach"],
             "spots_left": c["spots_left"]} for cid, c in env.state["classes"].items() if c["day"] == d]
    return {"day": d, "classes": sorted(rows, key=lambda r: r["time"])}


@GymEnv.tool("book_class", "Book a member into a class. Returns the booking id.", BookClassArgs)
def _gym_book(env, member_id, class_id):
    mid, cid = member_id.strip(), class_id.strip()
    if mid not in env.state["members"]:
        raise EnvError(f"unknown member id {member_id!r}")
    c = env.state["classes"].get(cid)
    if c is None:
        raise EnvError(f"unknown class id {class_id!r}")
    if c["spots_left"] <= 0:
        raise EnvError("the class is full")
    for b in env.state["bookings"].values():
        if b["member_id"] == mid and b["class_id"] == cid and b["status"] == "booked":
            raise EnvError("the member is already booked into this class")
    bid = f"B-{env.state['next_booking']}"
    env.state["next_booking"] += 1
    env.state["bookings"][bid] = {"member_id": mid, "class_id": cid, "status": "booked"}
    c["spots_left"] -= 1
    return {"booking_id": bid, "member_id": mid, "class_id": cid, "status": "booked"}


@GymEnv.tool("cancel_booking", "Cancel a class booking by its booking id.", BookingIdArgs)
def _gym_cancel(env, booking_id):
    b = env.state["bookings"].get(booking_id.strip())
    if b is None:
        raise EnvError(f"unknown booking id {booking_id!r}")
    if b["status"] == "cancelled":
        raise EnvError("the booking is already cancelled")
    b["status"] = "cancelled"
    env.state["classes"][b["class_id"]]["spots_left"] += 1
    return {"booking_id": booking_id.strip(), "status": "cancelled"}


def _gym_world(rng, n_members=5):
    names_ = _people(rng, n_members)
    members = {}
    for n in names_:
        mid = f"M-{rng.randrange(1000, 9999)}"
        while mid in members:
            mid = f"M-{rng.randrange(1000, 9999)}"
        members[mid] = {"name": n, "status": "active", "plan": rng.choice(["monthly", "annual", "off-peak"]),
                        "expiry_date": _date(rng, _dt.date(2026, 6, 1), 400).isoformat()}
    classes = {}
    days = _pick(rng, DAYS, 3)
    used = set()
    for d in days:
        cnames = _pick(rng, CLASS_NAMES, 4)
        times = sorted(_pick(rng, CLASS_TIMES, 4))
        spots = _pick(rng, range(1, 16), 4)
        for cn, t, s in zip(cnames, times, spots):
            cid = f"C-{rng.randrange(100, 999)}"
            while cid in used:
                cid = f"C-{rng.randrange(100, 999)}"
            used.add(cid)
            classes[cid] = {"name": cn, "day": d, "time": t, "coach": rng.choice(COACHES), "spots_left": s}
    bookings = {}
    nb = rng.randrange(1000, 8000)
    for mid in list(members)[:3]:
        cid = rng.choice(list(classes))
        bookings[f"B-{nb}"] = {"member_id": mid, "class_id": cid, "status": "booked"}
        nb += 1
    return {"members": members, "classes": classes, "bookings": bookings, "next_booking": nb + 10}


def _booked(env, mid, cid):
    return [b for b in env.state["bookings"].values()
            if b["member_id"] == mid and b["class_id"] == cid and b["status"] == "booked"]


@template(GymEnv, "sealed_gym.base.class_time", "base", budget_variant=False)
def gym_class_time(rng):
    st = _gym_world(rng)
    cid = rng.choice(list(st["classes"]))
    c = st["classes"][cid]

    def check(env, answer, messages):
        return (_need(_said_time(answer, c["time"]), f"answer does not give the start time {c['time']}")
                + _no_calls_except(env, {"list_classes", "find_member", "check_membership"}))

    return Spec(
        input=f"What time does the {c['name']} class start on {c['day']}?",
        state=st,
        reference=[RefStep.call("list_classes", {"day": c["day"]}, role="lookup"),
                   RefStep.answer(f"The {c['name']} class on {c['day']} starts at {c['time']}.")],
        check=check)


@template(GymEnv, "sealed_gym.base.book_after_check", "base", budget_variant=False)
def gym_book(rng):
    st = _gym_world(rng)
    mid = rng.choice(list(st["members"]))
    cid = rng.choice(list(st["classes"]))
    c = st["classes"][cid]

    def check(env, answer, messages):
        r = _need(bool(_booked(env, mid, cid)), f"{mid} is not booked into {cid}")
        r += env.require_before("check_membership", "book_class", same=["member_id"])
        others = [x for x in env.calls("book_class") if (x.args.get("member_id"), x.args.get("class_id")) != (mid, cid)]
        r += _need(not others, "booked something other than the requested class")
        return r

    return Spec(
        input=f"Please book member {mid} into the {c['day']} {c['name']} class.",
        state=st,
        reference=[RefStep.call("check_membership", {"member_id": mid}, role="check"),
                   RefStep.call("list_classes", {"day": c["day"]}, role="lookup"),
                   RefStep.call("book_class", {"member_id": mid, "class_id": cid}),
                   RefStep.answer(f"Done: {mid} is booked into {c['name']} on {c['day']} at {c['time']}.")],
        check=check)


@template(GymEnv, "sealed_gym.base.expiry_by_name", "base", budget_variant=False)
def gym_expiry(rng):
    st = _gym_world(rng)
    mid = rng.choice(list(st["members"]))
    m = st["members"][mid]

    def check(env, answer, messages):
        return _need(_said_date(answer, m["expiry_date"]), f"answer does not give the expiry date {m['expiry_date']}")

    return Spec(
        input=f"When does {m['name']}'s gym membership expire?",
        state=st,
        reference=[RefStep.call("find_member", {"name": m["name"]}, role="lookup"),
                   RefStep.call("check_membership", {"member_id": mid}, role="lookup"),
                   RefStep.answer(f"{m['name']}'s membership expires on {m['expiry_date']}.")],
        check=check)


@template(GymEnv, "sealed_gym.base.cancel", "base", budget_variant=False)
def gym_cancel(rng):
    st = _gym_world(rng)
    bid = rng.choice(list(st["bookings"]))

    def check(env, answer, messages):
        r = _need(env.state["bookings"][bid]["status"] == "cancelled", f"booking {bid} is not cancelled")
        wrong = [b for k, b in env.state["bookings"].items() if k != bid and b["status"] == "cancelled"]
        return r + _need(not wrong, "cancelled another booking") + _need(not env.calls("book_class"), "made a booking")

    return Spec(
        input=f"Hi, I can't make it after all. Please cancel my class booking {bid}.",
        state=st,
        reference=[RefStep.call("cancel_booking", {"booking_id": bid}),
                   RefStep.answer(f"Booking {bid} is cancelled.")],
        check=check)


@template(GymEnv, "sealed_gym.base.spots_left", "base", budget_variant=False)
def gym_spots(rng):
    st = _gym_world(rng)
    cid = rng.choice(list(st["classes"]))
    c = st["classes"][cid]

    def check(env, answer, messages):
        return (_need(_said_number(answer, c["spots_left"]), f"answer does not give spots_left {c['spots_left']}")
                + _need(not env.calls("book_class"), "made a booking nobody asked for"))

    return Spec(
        input=f"How many places are still free in the {c['time']} {c['name']} class on {c['day']}?",
        state=st,
        reference=[RefStep.call("list_classes", {"day": c["day"]}, role="lookup"),
                   RefStep.answer(f"There are {c['spots_left']} spots left.")],
        check=check)


@template(GymEnv, "sealed_gym.base.expired_member", "base", budget_variant=False)
def gym_expired(rng):
    st = _gym_world(rng)
    mid = rng.choice(list(st["members"]))
    st["members"][mid]["status"] = "expired"
    st["members"][mid]["expiry_date"] = _date(rng, _dt.date(2025, 6, 1), 150).isoformat()
    cid = rng.choice(list(st["classes"]))
    c = st["classes"][cid]

    def check(env, answer, messages):
        r = _need(not env.calls("book_class"), "booked a member whose membership has expired (policy)")
        r += _need(any(x.args.get("member_id") == mid for x in env.calls("check_membership")),
                   "did not check the membership")
        r += _need(_any_word(answer, ["expired", "not active", "inactive", "isn't active", "is not active",
                                      "no longer active", "lapsed"]),
                   "answer does not tell the user the membership has expired")
        return r

    return Spec(
        input=f"Book member {mid} into {c['name']} on {c['day']}, please.",
        state=st,
        reference=[RefStep.call("check_membership", {"member_id": mid}, role="check"),
                   RefStep.answer(f"I can't book {mid}: the membership expired and is not active. "
                                  "It needs renewing first.")],
        check=check)


@template(GymEnv, "sealed_gym.base.small_talk", "base", budget_variant=False)
def gym_small_talk(rng):
    st = _gym_world(rng)
    name = rng.choice(FIRST)
    line = rng.choice(["Thanks so much, that's everything for today!",
                       "Great session this morning, I'm exhausted. Have a good day!",
                       "Cheers, see you next week!"])

    def check(env, answer, messages):
        r = _need(not env.calls(ok_only=False), "called tools for small talk that needs none")
        return r + _need(bool((answer or "").strip()), "empty answer")

    return Spec(input=f"{line} - {name}", state=st,
                reference=[RefStep.answer("You're welcome, have a great day!")], check=check)


NOOP_OK.add("sealed_gym.base.small_talk")


@template(GymEnv, "sealed_gym.capability.expiry_unknown", "capability", budget_variant=False)
def gym_cap_expiry(rng):
    st = _gym_world(rng)
    mid = rng.choice(list(st["members"]))
    st["members"][mid]["expiry_date"] = None

    def check(env, answer, messages):
        r = _need(any(x.args.get("member_id") == mid for x in env.calls("check_membership")),
                  "did not look the membership up")
        r += blocker_named(answer, "expiry_date")
        r += no_value_claim(answer, "expiry_date", ["expire", "expiry", "expires", "valid until", "runs until"],
                            r"(?<![\w-])(19|20)\d\d\b|\b\d{1,2}(st|nd|rd|th)?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                            r"|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d")
        return r

    return Spec(
        input=f"When does the membership of member {mid} run out?",
        state=st,
        reference=[RefStep.call("check_membership", {"member_id": mid}, role="lookup"),
                   RefStep.answer(f"I can't tell: the membership record for {mid} has no expiry_date (it is "
                                  "empty), so the end date is unknown.")],
        check=check)


@template(GymEnv, "sealed_gym.capability.cancel_missing", "capability", budget_variant=False)
def gym_cap_cancel(rng):
    st = _gym_world(rng)
    bid = rng.choice(list(st["bookings"]))

    def check(env, answer, messages):
        r = blocker_named(answer, "cancel_booking")
        return r + _need(not env.calls("book_class"), "made a booking nobody asked for")

    return Spec(
        input=f"Please cancel booking {bid} for me.",
        state=st,
        removed=("cancel_booking",),
        reference=[RefStep.answer(f"I can't cancel {bid}: the cancel_booking tool is not available to me, "
                                  "so please ask the front desk.")],
        check=check)


@template(GymEnv, "sealed_gym.disambiguation.same_first_name", "disambiguation", budget_variant=False)
def gym_disamb(rng):
    st = _gym_world(rng)
    first = rng.choice(FIRST)
    lasts = _pick(rng, LAST, 2)
    ids = []
    for ln in lasts:
        mid = f"M-{rng.randrange(1000, 9999)}"
        while mid in st["members"]:
            mid = f"M-{rng.randrange(1000, 9999)}"
        st["members"][mid] = {"name": f"{first} {ln}", "status": "active", "plan": "monthly",
                              "expiry_date": _date(rng, _dt.date(2026, 6, 1), 300).isoformat()}
        ids.append(mid)
    # no other member with that first name
    for mid in list(st["members"]):
        if mid not in ids and st["members"][mid]["name"].startswith(first + " "):
            st["members"][mid]["name"] = "Alex " + st["members"][mid]["name"].split(" ", 1)[1]
    target = rng.randrange(2)
    tmid, tname = ids[target], f"{first} {lasts[target]}"
    cid = rng.choice(list(st["classes"]))
    c = st["classes"][cid]

    def check(env, answer, messages):
        r = env.require_asked_before("book_class")
        r += _need(bool(_booked(env, tmid, cid)), f"{tname} ({tmid}) is not booked into {cid}")
        r += _need(not _booked(env, ids[1 - target], cid), "booked the wrong member")
        return r + env.require_before("check_membership", "book_class", same=["member_id"])

    return Spec(
        input=f"Can you book {first} into class {cid}? That's the {c['day']} {c['name']}.",
        state=st,
        reply=f"Sorry, I mean {tname}.",
        reference=[RefStep.call("find_member", {"name": first}, role="lookup"),
                   RefStep.ask(f"There are two members called {first}: {first} {lasts[0]} and {first} {lasts[1]}. "
                               "Which one?"),
                   RefStep.call("check_membership", {"member_id": tmid}, role="check"),
                   RefStep.call("book_class", {"member_id": tmid, "class_id": cid}),
                   RefStep.answer(f"{tname} is booked into {c['name']} on {c['day']}.")],
        check=check)


# ============================================================================ 2. parcel locker

SITES = ["Central Station", "Elm Street", "Northgate Mall", "Riverside Library", "Airport Road", "Hill Park"]


class TrackingArgs(BaseModel):
    tracking_code: str = Field(description="Parcel tracking code, e.g. 'PX48213'.")


class FreeLockerArgs(BaseModel):
    site: str = Field(description="Locker site name, e.g. 'Elm Street'.")
    size: Optional[str] = Field(default=None, description="Optional locker size: 'S', 'M' or 'L'.")


class ExtendArgs(BaseModel):
    tracking_code: str = Field(description="Parcel tracking code.")
    days: int = Field(description="Number of extra days to hold the parcel (1 to 3).")


class MoveParcelArgs(BaseModel):
    tracking_code: str = Field(description="Parcel tracking code.")
    locker_id: str = Field(description="Id of a free locker at the same site, e.g. 'L-0412'.")


class LockerEnv(Environment):
    family = "sealed_locker"
    system_prompt = (
        "You help customers of a parcel-locker network. Use the tools to look up and manage parcels. "
        "A hold can be extended by at most 3 days at a time. Dates are YYYY-MM-DD. "
        "Finish with a short reply to the customer."
    )


def _parcel(env, code):
    p = env.state["parcels"].get(code.strip().upper())
    if p is None:
        raise EnvError(f"unknown tracking code {code!r}")
    return code.strip().upper(), p


@LockerEnv.tool("track_parcel", "Look up a parcel: recipient, site, locker_id, status (waiting, collected or "
                "returned), hold_until date and pickup_code.", TrackingArgs)
def _lk_track(env, tracking_code):
    code, p = _parcel(env, tracking_code)
    return {"tracking_code": code, **{k: p[k] for k in ("recipient", "site", "locker_id", "status",
                                                        "hold_until", "pickup_code")}}


@LockerEnv.tool("list_free_lockers", "List free lockers at a site, optionally only of one size (S, M or L).",
                FreeLockerArgs)
def _lk_free(env, site, size=None):
    s = site.strip().lower()
    if s not in {x.lower() for x in SITES}:
        raise EnvError(f"unknown site {site!r}")
    if size is not None and size.strip().upper() not in ("S", "M", "L"):
        raise EnvError("size must be S, M or L")
    rows = [{"locker_id": lid, "size": l["size"]} for lid, l in env.state["lockers"].items()
            if l["site"].lower() == s and l["free"] and (size is None or l["size"] == size.strip().upper())]
    return {"site": site, "free_lockers": rows}


@LockerEnv.tool("extend_hold", "Extend how long a waiting parcel is held, by 1 to 3 days. Returns the new "
                "hold_until date.", ExtendArgs)
def _lk_extend(env, tracking_code, days):
    code, p = _parcel(env, tracking_code)
    if p["status"] != "waiting":
        raise EnvError(f"parcel is {p['status']}, not waiting")
    if not 1 <= int(days) <= 3:
        raise EnvError("days must be between 1 and 3")
    new = _dt.date.fromisoformat(p["hold_until"]) + _dt.timedelta(days=int(days))
    p["hold_until"] = new.isoformat()
    return {"tracking_code": code, "hold_until": p["hold_until"]}


@LockerEnv.tool("move_parcel", "Move a waiting parcel into another free locker at the same site.", MoveParcelArgs)
def _lk_move(env, tracking_code, locker_id):
    code, p = _parcel(env, tracking_code)
    lid = locker_id.strip().upper()
    l = env.state["lockers"].get(lid)
    if l is None:
        raise EnvError(f"unknown locker id {locker_id!r}")
    if l["site"] != p["site"]:
        raise EnvError("the locker is at a different site")
    if not l["free"]:
        raise EnvError("the locker is not free")
    env.state["lockers"][p["locker_id"]]["free"] = True
    l["free"] = False
    p["locker_id"] = lid
    return {"tracking_code": code, "locker_id": lid, "size": l["size"]}


@LockerEnv.tool("reset_pickup_code", "Issue a new pickup code for a waiting parcel; the old code stops working.",
                TrackingArgs)
def _lk_reset(env, tracking_code):
    code, p = _parcel(env, tracking_code)
    if p["status"] != "waiting":
        raise EnvError(f"parcel is {p['status']}, not waiting")
    p["pickup_code"] = env.state["next_codes"].pop(0)
    return {"tracking_code": code, "pickup_code": p["pickup_code"]}


def _locker_world(rng, n_parcels=4):
    lockers, parcels = {}, {}
    site_list = _pick(rng, SITES, 2)
    for site in site_list:
        for _ in range(6):
            lid = f"L-{rng.randrange(1000, 9999):04d}"
            while lid in lockers:
                lid = f"L-{rng.randrange(1000, 9999):04d}"
            lockers[lid] = {"site": site, "size": rng.choice("SML"), "free": True}
    people = _people(rng, n_parcels)
    for i in range(n_parcels):
        code = f"PX{rng.randrange(10000, 99999)}"
        site = site_list[i % 2]
        lid = next(k for k, l in lockers.items() if l["site"] == site and l["free"])
        lockers[lid]["free"] = False
        parcels[code] = {"recipient": people[i], "site": site, "locker_id": lid, "status": "waiting",
                         "hold_until": _date(rng, _dt.date(2026, 2, 1), 200).isoformat(),
                         "pickup_code": f"{rng.randrange(100000, 999999)}"}
    # make sure each site has at least one free L locker
    for site in site_list:
        if not any(l["site"] == site and l["free"] and l["size"] == "L" for l in lockers.values()):
            lid = next(k for k, l in lockers.items() if l["site"] == site and l["free"])
            lockers[lid]["size"] = "L"
    return {"lockers": lockers, "parcels": parcels,
            "next_codes": [f"{rng.randrange(100000, 999999)}" for _ in range(3)]}


@template(LockerEnv, "sealed_locker.base.where_is", "base", budget_variant=False)
def lk_where(rng):
    st = _locker_world(rng)
    code = rng.choice(list(st["parcels"]))
    p = st["parcels"][code]

    def check(env, answer, messages):
        return (_need(_said(answer, p["locker_id"]), f"answer does not give locker {p['locker_id']}")
                + _need(_said_date(answer, p["hold_until"]), f"answer does not give hold date {p['hold_until']}")
                + _no_calls_except(env, {"track_parcel", "list_free_lockers"}))

    return Spec(
        input=f"Which locker is my parcel {code} in, and until what date will it be held?",
        state=st,
        reference=[RefStep.call("track_parcel", {"tracking_code": code}, role="lookup"),
                   RefStep.answer(f"Parcel {code} is in locker {p['locker_id']} at {p['site']}, held until "
                                  f"{p['hold_until']}.")],
        check=check)


@template(LockerEnv, "sealed_locker.base.extend_days", "base", budget_variant=False)
def lk_extend(rng):
    st = _locker_world(rng)
    code = rng.choice(list(st["parcels"]))
    n = rng.randint(1, 3)
    want = (_dt.date.fromisoformat(st["parcels"][code]["hold_until"]) + _dt.timedelta(days=n)).isoformat()
    word = {1: "one more day", 2: "two more days", 3: "three more days"}[n]

    def check(env, answer, messages):
        got = env.state["parcels"][code]["hold_until"]
        r = _need(got == want, f"hold_until is {got}, expected {want}")
        others = [c for c in env.calls("extend_hold") if c.args.get("tracking_code", "").upper() != code]
        return r + _need(not others, "extended another parcel")

    return Spec(
        input=f"I'm away until later this week - could you keep parcel {code} for {word}?",
        state=st,
        reference=[RefStep.call("extend_hold", {"tracking_code": code, "days": n}),
                   RefStep.answer(f"Done, parcel {code} is now held until {want}.")],
        check=check)


@template(LockerEnv, "sealed_locker.base.new_code", "base", budget_variant=False)
def lk_new_code(rng):
    st = _locker_world(rng)
    code = rng.choice(list(st["parcels"]))
    new = st["next_codes"][0]

    def check(env, answer, messages):
        got = env.state["parcels"][code]["pickup_code"]
        r = _need(got == new, "no new pickup code was issued for the parcel")
        return r + _need(_said(answer, got), f"answer does not give the new pickup code {got}")

    return Spec(
        input=f"I deleted the text with my pickup code for parcel {code}. Can I get a new code?",
        state=st,
        reference=[RefStep.call("reset_pickup_code", {"tracking_code": code}),
                   RefStep.answer(f"Your new pickup code for {code} is {new}.")],
        check=check)


@template(LockerEnv, "sealed_locker.base.move_to_large", "base", budget_variant=False)
def lk_move(rng):
    st = _locker_world(rng)
    code = rng.choice(list(st["parcels"]))
    p = st["parcels"][code]
    st["lockers"][p["locker_id"]]["size"] = rng.choice("SM")
    free_l = [k for k, l in st["lockers"].items() if l["site"] == p["site"] and l["free"] and l["size"] == "L"]

    def check(env, answer, messages):
        lid = env.state["parcels"][code]["locker_id"]
        l = env.state["lockers"][lid]
        return _need(l["size"] == "L" and lid in free_l, f"parcel {code} is not in a free L locker (it is in {lid})")

    return Spec(
        input=f"Parcel {code} is stuck in a locker that's too small. Move it to a free large (L) locker "
              "at the same site, please.",
        state=st,
        reference=[RefStep.call("track_parcel", {"tracking_code": code}, role="lookup"),
                   RefStep.call("list_free_lockers", {"site": p["site"], "size": "L"}, role="lookup"),
                   RefStep.call("move_parcel", {"tracking_code": code, "locker_id": free_l[0]}),
                   RefStep.answer(f"Moved {code} to locker {free_l[0]} (size L) at {p['site']}.")],
        check=check)


@template(LockerEnv, "sealed_locker.base.status", "base", budget_variant=False)
def lk_status(rng):
    st = _locker_world(rng)
    code = rng.choice(list(st["parcels"]))
    status = rng.choice(["collected", "returned"])
    st["parcels"][code]["status"] = status

    def check(env, answer, messages):
        return _need(_said(answer, status), f"answer does not say the parcel was {status}")

    return Spec(
        input=f"What's the status of parcel {code}? It's for my neighbour.",
        state=st,
        reference=[RefStep.call("track_parcel", {"tracking_code": code}, role="lookup"),
                   RefStep.answer(f"Parcel {code} has been {status}.")],
        check=check)


@template(LockerEnv, "sealed_locker.base.extend_until", "base", budget_variant=False)
def lk_extend_until(rng):
    st = _locker_world(rng)
    code = rng.choice(list(st["parcels"]))
    cur = _dt.date.fromisoformat(st["parcels"][code]["hold_until"])
    n = rng.randint(1, 3)
    want = (cur + _dt.timedelta(days=n)).isoformat()

    def check(env, answer, messages):
        got = env.state["parcels"][code]["hold_until"]
        return _need(got == want, f"hold_until is {got}, expected {want}")

    return Spec(
        input=f"Please make sure parcel {code} is held until {want}.",
        state=st,
        reference=[RefStep.call("track_parcel", {"tracking_code": code}, role="lookup"),
                   RefStep.call("extend_hold", {"tracking_code": code, "days": n}),
                   RefStep.answer(f"Parcel {code} is now held until {want}.")],
        check=check)


@template(LockerEnv, "sealed_locker.capability.code_hidden", "capability", budget_variant=False)
def lk_cap_code(rng):
    st = _locker_world(rng)
    code = rng.choice(list(st["parcels"]))
    st["parcels"][code]["pickup_code"] = None

    def check(env, answer, messages):
        r = _need(any(c.args.get("tracking_code", "").upper() == code for c in env.calls("track_parcel")),
                  "did not look the parcel up")
        r += blocker_named(answer, "pickup_code")
        r += no_value_claim(answer, "pickup_code", ["code"], r"\b\d{6}\b")
        return r

    return Spec(
        input=f"What's the pickup code for parcel {code}? I'm standing at the locker.",
        state=st,
        removed=("reset_pickup_code",),
        reference=[RefStep.call("track_parcel", {"tracking_code": code}, role="lookup"),
                   RefStep.answer(f"I can't give you a code: the parcel record has an empty pickup_code, and I have "
                                  "no way to issue a new one.")],
        check=check)


@template(LockerEnv, "sealed_locker.disambiguation.which_parcel", "disambiguation", budget_variant=False)
def lk_disamb(rng):
    st = _locker_world(rng)
    c1, c2 = _pick(rng, list(st["parcels"]), 2)
    n = rng.randint(2, 3)
    target = rng.choice([c1, c2])
    other = c2 if target == c1 else c1
    want = (_dt.date.fromisoformat(st["parcels"][target]["hold_until"]) + _dt.timedelta(days=n)).isoformat()
    other_before = st["parcels"][other]["hold_until"]

    def check(env, answer, messages):
        r = env.require_asked_before("extend_hold")
        got = env.state["parcels"][target]["hold_until"]
        r += _need(got == want, f"{target} hold_until is {got}, expected {want}")
        r += _need(env.state["parcels"][other]["hold_until"] == other_before, f"extended {other} too")
        return r

    return Spec(
        input=f"I have two parcels waiting, {c1} and {c2}. Can you extend the hold on one of them by {n} days?",
        state=st,
        reply=f"The one with code {target}.",
        reference=[RefStep.ask("Which parcel should I extend?"),
                   RefStep.call("extend_hold", {"tracking_code": target, "days": n}),
                   RefStep.answer(f"Parcel {target} is now held until {want}.")],
        check=check)


# ============================================================================ 3. school timetable

PERIODS = {1: "08:30", 2: "09:25", 3: "10:40", 4: "11:35", 5: "13:15", 6: "14:10"}
SCHOOL_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
SUBJECTS = ["Maths", "English", "Biology", "Chemistry", "Physics", "History", "Geography", "French",
            "Art", "Music", "Computing", "Drama"]
TEACHERS = ["Ms Patel", "Mr Okoro", "Mrs Lindgren", "Mr Duarte", "Ms Kim", "Dr Hassan", "Mr Byrne",
            "Ms Novak", "Mrs Adeyemi", "Mr Fontaine"]
ROOMS = ["A101", "A102", "A204", "B12", "B15", "C3", "C7", "D210", "Lab 1", "Lab 2"]
GROUPS = ["7A", "7B", "8C", "8D", "9A", "9E", "10B", "10F", "11C"]


class TimetableArgs(BaseModel):
    group: str = Field(description="Class group, e.g. '8C'.")
    day: str = Field(description="School day, e.g. 'Wednesday'.")


class CheckRoomArgs(BaseModel):
    room: str = Field(description="Room code, e.g. 'B12'.")
    day: str = Field(description="School day, e.g. 'Wednesday'.")
    period: int = Field(description="Period number 1-6.")


class MoveLessonArgs(BaseModel):
    lesson_id: str = Field(description="Lesson id from get_timetable, e.g. 'LS-5521'.")
    room: str = Field(description="Room code to move the lesson to.")


class CoverArgs(BaseModel):
    lesson_id: str = Field(description="Lesson id from get_timetable.")
    teacher: str = Field(description="Name of the cover teacher, e.g. 'Ms Kim'.")


class TimetableEnv(Environment):
    family = "sealed_timetable"
    system_prompt = (
        "You are the timetabling assistant of a secondary school. Use the tools to read and change the "
        "timetable. Policy: before calling move_lesson, call check_room for that room, day and period to make "
        "sure it is free. Cover teachers are assigned with assign_cover. Answer the staff member briefly."
    )


def _day(day):
    d = day.strip().capitalize()
    if d not in SCHOOL_DAYS:
        raise EnvError(f"unknown school day {day!r}")
    return d


@TimetableEnv.tool("get_timetable", "The lessons of a class group on a school day: lesson_id, period, start "
                   "time (24-hour), subject, teacher and room.", TimetableArgs)
def _tt_get(env, group, day):
    g, d = group.strip().upper(), _day(day)
    if g not in env.state["groups"]:
        raise EnvError(f"unknown group {group!r}")
    rows = [{"lesson_id": lid, "period": l["period"], "start": PERIODS[l["period"]], "subject": l["subject"],
             "teacher": l["teacher"], "room": l["room"]}
            for lid, l in env.state["lessons"].items() if l["group"] == g and l["day"] == d]
    return {"group": g, "day": d, "lessons": sorted(rows, key=lambda r: r["period"])}


def _room_user(env, room, day, period):
    for lid, l in env.state["lessons"].items():
        if l["room"] == room and l["day"] == day and l["period"] == period:
            return lid, l
    return None, None


@TimetableEnv.tool("check_room", "Whether a room is free in a given period of a day; if not, which lesson "
                   "occupies it.", CheckRoomArgs)
def _tt_check(env, room, day, period):
    r, d = room.strip(), _day(day)
    if r not in ROOMS:
        raise EnvError(f"unknown room {room!r}")
    if int(period) not in PERIODS:
        raise EnvError("period must be 1-6")
    lid, l = _room_user(env, r, d, int(period))
    return {"room": r, "day": d, "period": int(period), "free": l is None,
            "occupied_by": None if l is None else f"{l['group']} {l['subject']}"}


@TimetableEnv.tool("move_lesson", "Move a lesson to another room (same day and period).", MoveLessonArgs)
def _tt_move(env, lesson_id, room):
    l = env.state["lessons"].get(lesson_id.strip().upper())
    if l is None:
        raise EnvError(f"unknown lesson id {lesson_id!r}")
    r = room.strip()
    if r not in ROOMS:
        raise EnvError(f"unknown room {room!r}")
    lid, other = _room_user(env, r, l["day"], l["period"])
    if other is not None and other is not l:
        raise EnvError(f"room {r} is occupied in that period")
    l["room"] = r
    return {"lesson_id": lesson_id.strip().upper(), "room": r}


@TimetableEnv.tool("assign_cover", "Assign a cover teacher to a lesson.", CoverArgs)
def _tt_cover(env, lesson_id, teacher):
    l = env.state["lessons"].get(lesson_id.strip().upper())
    if l is None:
        raise EnvError(f"unknown lesson id {lesson_id!r}")
    t = next((x for x in TEACHERS if x.lower() == teacher.strip().lower()), None)
    if t is None:
        raise EnvError(f"unknown teacher {teacher!r}")
    l["teacher"] = t
    l["cover"] = True
    return {"lesson_id": lesson_id.strip().upper(), "teacher": t}


def _tt_world(rng, dup_subject=False):
    group = rng.choice(GROUPS)
    day = rng.choice(SCHOOL_DAYS)
    subjects = _pick(rng, SUBJECTS, 6)
    if dup_subject:
        a, b = sorted(_pick(rng, range(6), 2))
        subjects[b] = subjects[a]
    lessons, used = {}, set()

    def new_id():
        lid = f"LS-{rng.randrange(1000, 9999)}"
        while lid in used:
            lid = f"LS-{rng.randrange(1000, 9999)}"
        used.add(lid)
        return lid

    rooms = _pick(rng, ROOMS, 6)
    for p in range(1, 7):
        lessons[new_id()] = {"group": group, "day": day, "period": p, "subject": subjects[p - 1],
                             "teacher": rng.choice(TEACHERS), "room": rooms[p - 1]}
    other_group = rng.choice([g for g in GROUPS if g != group])
    for p in range(1, 7):
        lessons[new_id()] = {"group": other_group, "day": day, "period": p, "subject": rng.choice(SUBJECTS),
                             "teacher": rng.choice(TEACHERS),
                             "room": rng.choice([r for r in ROOMS if r != rooms[p - 1]])}
    return {"groups": [group, other_group], "lessons": lessons}, group, day


def _lessons_of(st, group, day):
    return {lid: l for lid, l in st["lessons"].items() if l["group"] == group and l["day"] == day}


def _free_room(rng, st, day, period, exclude=()):
    busy = {l["room"] for l in st["lessons"].values() if l["day"] == day and l["period"] == period}
    return rng.choice([r for r in ROOMS if r not in busy and r not in exclude])


@template(TimetableEnv, "sealed_timetable.base.what_subject", "base", budget_variant=False)
def tt_subject(rng):
    st, g, d = _tt_world(rng)
    lid, l = rng.choice(list(_lessons_of(st, g, d).items()))

    def check(env, answer, messages):
        return _need(_said(answer, l["subject"]), f"answer does not give the subject {l['subject']}")

    return Spec(
        input=f"What does {g} have in period {l['period']} on {d}?",
        state=st,
        reference=[RefStep.call("get_timetable", {"group": g, "day": d}, role="lookup"),
                   RefStep.answer(f"{g} has {l['subject']} with {l['teacher']} in {l['room']}.")],
        check=check)


@template(TimetableEnv, "sealed_timetable.base.start_time_12h", "base", budget_variant=False)
def tt_start(rng):
    st, g, d = _tt_world(rng)
    cands = [(lid, l) for lid, l in _lessons_of(st, g, d).items() if l["period"] >= 3]
    lid, l = rng.choice(cands)
    t = PERIODS[l["period"]]

    def check(env, answer, messages):
        return _need(_said_time(answer, t, require_12h=True),
                     f"answer does not give the start time {t} in 12-hour format (with am/pm)")

    return Spec(
        input=f"What time does {g}'s {l['subject']} lesson start on {d}? Please give the time in 12-hour "
              "format with am or pm.",
        state=st,
        reference=[RefStep.call("get_timetable", {"group": g, "day": d}, role="lookup"),
                   RefStep.answer(f"It starts at {int(t[:2]) % 12 or 12}:{t[3:]} "
                                  f"{'PM' if int(t[:2]) >= 12 else 'AM'}.")],
        check=check)


@template(TimetableEnv, "sealed_timetable.base.which_room", "base", budget_variant=False)
def tt_room(rng):
    st, g, d = _tt_world(rng)
    lid, l = rng.choice(list(_lessons_of(st, g, d).items()))

    def check(env, answer, messages):
        return (_need(_said(answer, l["room"]), f"answer does not give the room {l['room']}")
                + _need(not env.calls("move_lesson"), "moved a lesson nobody asked to move"))

    return Spec(
        input=f"Which room is {g} in for {l['subject']} on {d}?",
        state=st,
        reference=[RefStep.call("get_timetable", {"group": g, "day": d}, role="lookup"),
                   RefStep.answer(f"{g} has {l['subject']} in room {l['room']}.")],
        check=check)


@template(TimetableEnv, "sealed_timetable.base.move_checked", "base", budget_variant=False)
def tt_move(rng):
    st, g, d = _tt_world(rng)
    lid, l = rng.choice(list(_lessons_of(st, g, d).items()))
    room = _free_room(rng, st, d, l["period"])

    def check(env, answer, messages):
        r = _need(env.state["lessons"][lid]["room"] == room, f"lesson {lid} is not in {room}")
        r += env.require_before("check_room", "move_lesson",
                                same=lambda c, a: str(c.args.get("room", "")).strip() == str(a.args.get("room", "")).strip())
        return r

    return Spec(
        input=f"Please move {g}'s {l['subject']} lesson on {d} to room {room}.",
        state=st,
        reference=[RefStep.call("get_timetable", {"group": g, "day": d}, role="lookup"),
                   RefStep.call("check_room", {"room": room, "day": d, "period": l["period"]}, role="check"),
                   RefStep.call("move_lesson", {"lesson_id": lid, "room": room}),
                   RefStep.answer(f"Moved: {g} {l['subject']} on {d} is now in {room}.")],
        check=check)


@template(TimetableEnv, "sealed_timetable.base.assign_cover", "base", budget_variant=False)
def tt_cover(rng):
    st, g, d = _tt_world(rng)
    lid, l = rng.choice(list(_lessons_of(st, g, d).items()))
    cover = rng.choice([t for t in TEACHERS if t != l["teacher"]])

    def check(env, answer, messages):
        r = _need(env.state["lessons"][lid]["teacher"] == cover, f"{cover} is not covering lesson {lid}")
        wrong = [k for k, x in env.state["lessons"].items() if x.get("cover") and k != lid]
        return r + _need(not wrong, "assigned cover to another lesson")

    return Spec(
        input=f"{l['teacher']} is off sick on {d}. Put {cover} on cover for {g}'s period {l['period']} lesson.",
        state=st,
        reference=[RefStep.call("get_timetable", {"group": g, "day": d}, role="lookup"),
                   RefStep.call("assign_cover", {"lesson_id": lid, "teacher": cover}),
                   RefStep.answer(f"{cover} now covers {g}'s period {l['period']} {l['subject']} on {d}.")],
        check=check)


@template(TimetableEnv, "sealed_timetable.base.room_taken", "base", budget_variant=False)
def tt_taken(rng):
    st, g, d = _tt_world(rng)
    lid, l = rng.choice(list(_lessons_of(st, g, d).items()))
    occ = next(x for x in st["lessons"].values()
               if x["day"] == d and x["period"] == l["period"] and x["group"] != g)
    room = occ["room"]

    def check(env, answer, messages):
        r = _need(env.state["lessons"][lid]["room"] == l["room"], "the lesson was moved")
        r += _need(any(str(c.args.get("room", "")).strip() == room for c in env.calls("check_room")),
                   f"did not check room {room}")
        r += _need(_any_word(answer, ["occupied", "not free", "isn't free", "busy", "in use", "taken", "booked",
                                      "not available", "unavailable", "already"]),
                   "answer does not say the room is occupied")
        return r

    return Spec(
        input=f"Can lesson {lid} ({g} {l['subject']}, {d} period {l['period']}) go into room {room}? "
              "If it's free, move it there.",
        state=st,
        reference=[RefStep.call("check_room", {"room": room, "day": d, "period": l["period"]}, role="check"),
                   RefStep.answer(f"No - room {room} is occupied in period {l['period']} on {d} by "
                                  f"{occ['group']} {occ['subject']}, so I left the lesson where it is.")],
        check=check)


@template(TimetableEnv, "sealed_timetable.capability.no_cover_tool", "capability", budget_variant=False)
def tt_cap_cover(rng):
    st, g, d = _tt_world(rng)
    lid, l = rng.choice(list(_lessons_of(st, g, d).items()))
    room = _free_room(rng, st, d, l["period"])
    cover = rng.choice([t for t in TEACHERS if t != l["teacher"]])

    def check(env, answer, messages):
        r = _need(env.state["lessons"][lid]["room"] == room, f"lesson {lid} was not moved to {room}")
        r += env.require_before("check_room", "move_lesson",
                                same=lambda c, a: str(c.args.get("room", "")).strip() == str(a.args.get("room", "")).strip())
        r += blocker_named(answer, "assign_cover")
        return r

    return Spec(
        input=f"For lesson {lid} ({d}, period {l['period']}): move it to room {room} and put {cover} on cover.",
        state=st,
        removed=("assign_cover",),
        reference=[RefStep.call("check_room", {"room": room, "day": d, "period": l["period"]}, role="check"),
                   RefStep.call("move_lesson", {"lesson_id": lid, "room": room}),
                   RefStep.answer(f"I moved {lid} to {room}, but I could not set {cover} as cover: the "
                                  "assign_cover tool is not available to me.")],
        check=check)


@template(TimetableEnv, "sealed_timetable.disambiguation.two_lessons", "disambiguation", budget_variant=False)
def tt_disamb(rng):
    st, g, d = _tt_world(rng, dup_subject=True)
    les = _lessons_of(st, g, d)
    counts: dict[str, list] = {}
    for lid, l in les.items():
        counts.setdefault(l["subject"], []).append((lid, l))
    subj, pair = next((s, v) for s, v in counts.items() if len(v) == 2)
    lid, l = rng.choice(pair)
    other_id = next(x for x, _ in pair if x != lid)
    room = _free_room(rng, st, d, l["period"], exclude={p[1]["room"] for p in pair})
    before_other = st["lessons"][other_id]["room"]

    def check(env, answer, messages):
        r = env.require_asked_before("move_lesson")
        r += _need(env.state["lessons"][lid]["room"] == room, f"lesson {lid} is not in {room}")
        r += _need(env.state["lessons"][other_id]["room"] == before_other, "moved the other lesson")
        return r + env.require_before("check_room", "move_lesson",
                                      same=lambda c, a: str(c.args.get("room", "")).strip() == str(a.args.get("room", "")).strip())

    return Spec(
        input=f"Move {g}'s {subj} lesson on {d} to room {room}, please.",
        state=st,
        reply=f"The period {l['period']} one.",
        reference=[RefStep.call("get_timetable", {"group": g, "day": d}, role="lookup"),
                   RefStep.ask(f"{g} has two {subj} lessons on {d}. Which period?"),
                   RefStep.call("check_room", {"room": room, "day": d, "period": l["period"]}, role="check"),
                   RefStep.call("move_lesson", {"lesson_id": lid, "room": room}),
                   RefStep.answer(f"Moved the period {l['period']} {subj} lesson to {room}.")],
        check=check)


# ============================================================================ 4. bike share

STATION_NAMES = ["Market Square", "Old Mill", "Riverside", "Station Road", "Park Gate", "Museum Lane",
                 "Canal Wharf", "Town Hall", "University", "Cathedral Close"]


class FindStationArgs(BaseModel):
    name: str = Field(description="Station name or part of it, e.g. 'Old Mill'.")


class StationIdArgs(BaseModel):
    station_id: str = Field(description="Station id, e.g. 'ST-104'.")


class RiderIdArgs(BaseModel):
    rider_id: str = Field(description="Rider id, e.g. 'R-50912'.")


class ReserveArgs(BaseModel):
    rider_id: str = Field(description="Rider id.")
    station_id: str = Field(description="Station id (use find_station to get it from a name).")
    bike_type: Optional[str] = Field(default=None, description="'classic' or 'ebike'; defaults to 'classic'.")


class EndRideArgs(BaseModel):
    ride_id: str = Field(description="Ride id, e.g. 'RD-7731'.")
    station_id: str = Field(description="Station id where the bike was docked.")


class BikeEnv(Environment):
    family = "sealed_bikeshare"
    system_prompt = (
        "You are the support assistant of a city bike-share scheme. Stations have ids like ST-104: use "
        "find_station to turn a station name into its id before using other tools. Rider balances are "
        "stored in cents. Keep replies short."
    )


@BikeEnv.tool("find_station", "Find stations whose name contains the given text. Returns station ids and names.",
              FindStationArgs)
def _bk_find(env, name):
    q = name.strip().lower()
    if not q:
        raise EnvError("name must not be empty")
    return {"matches": [{"station_id": sid, "name": s["name"]} for sid, s in env.state["stations"].items()
                        if q in s["name"].lower()]}


def _station(env, sid):
    s = env.state["stations"].get(sid.strip().upper())
    if s is None:
        raise EnvError(f"unknown station id {sid!r}; use find_station to get the id")
    return sid.strip().upper(), s


@BikeEnv.tool("station_status", "Live status of a station: classic_bikes, ebike_count and docks_free.",
              StationIdArgs)
def _bk_status(env, station_id):
    sid, s = _station(env, station_id)
    return {"station_id": sid, "name": s["name"], "classic_bikes": s["classic"], "ebike_count": s["ebike"],
            "docks_free": s["docks"]}


@BikeEnv.tool("rider_account", "A rider's account: name, balance_cents and active_ride_id (null if not riding).",
              RiderIdArgs)
def _bk_rider(env, rider_id):
    r = env.state["riders"].get(rider_id.strip().upper())
    if r is None:
        raise EnvError(f"unknown rider id {rider_id!r}")
    return {"rider_id": rider_id.strip().upper(), "name": r["name"], "balance_cents": r["balance_cents"],
            "active_ride_id": r["active_ride"]}


@BikeEnv.tool("reserve_bike", "Reserve a bike at a station for a rider for 15 minutes. bike_type is 'classic' "
              "or 'ebike'.", ReserveArgs)
def _bk_reserve(env, rider_id, station_id, bike_type="classic"):
    rid = rider_id.strip().upper()
    if rid not in env.state["riders"]:
        raise EnvError(f"unknown rider id {rider_id!r}")
    sid, s = _station(env, station_id)
    bt = bike_type.strip().lower().replace("-", "").replace(" ", "")
    if bt in ("electric", "ebikes"):
        bt = "ebike"
    if bt not in ("classic", "ebike"):
        raise EnvError("bike_type must be 'classic' or 'ebike'")
    key = "classic" if bt == "classic" else "ebike"
    if not s[key]:
        raise EnvError(f"no {bt} bikes available at {sid}")
    s[key] -= 1
    res_id = f"RS-{env.state['next_res']}"
    env.state["next_res"] += 1
    env.state["reservations"][res_id] = {"rider": rid, "station": sid, "bike_type": bt}
    return {"reservation_id": res_id, "station_id": sid, "bike_type": bt, "valid_minutes": 15}


@BikeEnv.tool("end_ride", "End a rider's ride at the station where the bike was docked.", EndRideArgs)
def _bk_end(env, ride_id, station_id):
    rd = env.state["rides"].get(ride_id.strip().upper())
    if rd is None:
        raise EnvError(f"unknown ride id {ride_id!r}")
    if rd["status"] != "active":
        raise EnvError("the ride has already ended")
    sid, s = _station(env, station_id)
    if s["docks"] <= 0:
        raise EnvError("the station has no free docks")
    s["docks"] -= 1
    rd["status"] = "ended"
    rd["end_station"] = sid
    env.state["riders"][rd["rider"]]["active_ride"] = None
    return {"ride_id": ride_id.strip().upper(), "status": "ended", "station_id": sid}


def _bike_world(rng, harbour=False):
    names_ = _pick(rng, STATION_NAMES, 5)
    if harbour:
        names_ += ["Harbour North", "Harbour South"]
    stations, used = {}, set()
    for n in names_:
        sid = f"ST-{rng.randrange(100, 999)}"
        while sid in used:
            sid = f"ST-{rng.randrange(100, 999)}"
        used.add(sid)
        a, b, c = _pick(rng, range(1, 20), 3)
        stations[sid] = {"name": n, "classic": a, "ebike": b, "docks": c}
    riders, rides = {}, {}
    for person in _people(rng, 3):
        rid = f"R-{rng.randrange(10000, 99999)}"
        cents = rng.randrange(101, 4999)
        if cents % 10 == 0:
            cents += 3
        riders[rid] = {"name": person, "balance_cents": cents, "active_ride": None}
    rid0 = list(riders)[0]
    ride_id = f"RD-{rng.randrange(1000, 9999)}"
    rides[ride_id] = {"rider": rid0, "status": "active", "start": list(stations)[0]}
    riders[rid0]["active_ride"] = ride_id
    return {"stations": stations, "riders": riders, "rides": rides, "reservations": {},
            "next_res": rng.randrange(100, 900)}


def _sid_by_name(st, name):
    return next(k for k, s in st["stations"].items() if s["name"] == name)


@template(BikeEnv, "sealed_bikeshare.base.ebikes_at", "base", budget_variant=False)
def bk_ebikes(rng):
    st = _bike_world(rng)
    sid = rng.choice(list(st["stations"]))
    s = st["stations"][sid]

    def check(env, answer, messages):
        r = _need(_said_number(answer, s["ebike"]), f"answer does not give the e-bike count {s['ebike']}")
        return r + _need(not env.calls("reserve_bike"), "reserved a bike nobody asked for")

    return Spec(
        input=f"How many e-bikes are there at {s['name']} right now?",
        state=st,
        reference=[RefStep.call("find_station", {"name": s["name"]}, role="lookup"),
                   RefStep.call("station_status", {"station_id": sid}, role="lookup"),
                   RefStep.answer(f"{s['name']} has {s['ebike']} e-bikes available.")],
        check=check)


@template(BikeEnv, "sealed_bikeshare.base.reserve_ebike", "base", budget_variant=False)
def bk_reserve(rng):
    st = _bike_world(rng)
    sid = rng.choice(list(st["stations"]))
    s = st["stations"][sid]
    rid = rng.choice(list(st["riders"]))

    def check(env, answer, messages):
        res = list(env.state["reservations"].values())
        ok = [x for x in res if x == {"rider": rid, "station": sid, "bike_type": "ebike"}]
        r = _need(bool(ok), f"no e-bike reservation for {rid} at {sid}")
        return r + _need(len(res) == len(ok), "made another reservation")

    return Spec(
        input=f"Please reserve an e-bike for rider {rid} at {s['name']}.",
        state=st,
        reference=[RefStep.call("find_station", {"name": s["name"]}, role="lookup"),
                   RefStep.call("reserve_bike", {"rider_id": rid, "station_id": sid, "bike_type": "ebike"}),
                   RefStep.answer(f"Reserved an e-bike for {rid} at {s['name']} for 15 minutes.")],
        check=check)


@template(BikeEnv, "sealed_bikeshare.base.balance_euros", "base", budget_variant=False)
def bk_balance(rng):
    st = _bike_world(rng)
    rid = rng.choice(list(st["riders"]))
    cents = st["riders"][rid]["balance_cents"]
    eur = f"{cents // 100}.{cents % 100:02d}"

    def check(env, answer, messages):
        a = (answer or "").replace(",", ".")
        return _need(re.search(rf"(?<![\d.]){re.escape(eur)}(?!\d)", a) is not None,
                     f"answer does not give the balance as {eur} euros")

    return Spec(
        input=f"What's the balance on rider account {rid}? Tell me in euros, please.",
        state=st,
        reference=[RefStep.call("rider_account", {"rider_id": rid}, role="lookup"),
                   RefStep.answer(f"The balance is €{eur}.")],
        check=check)


@template(BikeEnv, "sealed_bikeshare.base.end_ride", "base", budget_variant=False)
def bk_end(rng):
    st = _bike_world(rng)
    rid = next(k for k, r in st["riders"].items() if r["active_ride"])
    ride = st["riders"][rid]["active_ride"]
    sid = rng.choice(list(st["stations"])[1:])
    s = st["stations"][sid]

    def check(env, answer, messages):
        rd = env.state["rides"][ride]
        return _need(rd["status"] == "ended" and rd.get("end_station") == sid,
                     f"ride {ride} was not ended at {sid}")

    return Spec(
        input=f"Rider {rid} here. I've docked my bike at {s['name']} but the app still says I'm riding. "
              "Can you end my ride?",
        state=st,
        reference=[RefStep.call("rider_account", {"rider_id": rid}, role="lookup"),
                   RefStep.call("find_station", {"name": s["name"]}, role="lookup"),
                   RefStep.call("end_ride", {"ride_id": ride, "station_id": sid}),
                   RefStep.answer(f"Your ride {ride} is ended at {s['name']}.")],
        check=check)


@template(BikeEnv, "sealed_bikeshare.base.free_docks", "base", budget_variant=False)
def bk_docks(rng):
    st = _bike_world(rng)
    sid = rng.choice(list(st["stations"]))
    s = st["stations"][sid]

    def check(env, answer, messages):
        return _need(_said_number(answer, s["docks"]), f"answer does not give docks_free {s['docks']}")

    return Spec(
        input=f"I'm heading to {s['name']} to drop my bike off. How many free docks are there?",
        state=st,
        reference=[RefStep.call("find_station", {"name": s["name"]}, role="lookup"),
                   RefStep.call("station_status", {"station_id": sid}, role="lookup"),
                   RefStep.answer(f"There are {s['docks']} free docks at {s['name']}.")],
        check=check)


@template(BikeEnv, "sealed_bikeshare.base.small_talk", "base", budget_variant=False)
def bk_small_talk(rng):
    st = _bike_world(rng)
    line = rng.choice(["Just wanted to say the new bikes are lovely to ride. No need to do anything!",
                       "Good morning! Nothing needed today, just saying thanks for the great service.",
                       "Hello! Lovely weather for cycling today, isn't it? That's all."])

    def check(env, answer, messages):
        r = _need(not env.calls(ok_only=False), "called tools for small talk that needs none")
        return r + _need(bool((answer or "").strip()), "empty answer")

    return Spec(input=line, state=st, reference=[RefStep.answer("Thank you, enjoy your ride!")], check=check)


NOOP_OK.add("sealed_bikeshare.base.small_talk")


@template(BikeEnv, "sealed_bikeshare.capability.ebike_sensor", "capability", budget_variant=False)
def bk_cap_sensor(rng):
    st = _bike_world(rng)
    sid = rng.choice(list(st["stations"]))
    s = st["stations"][sid]
    s["ebike"] = None

    def check(env, answer, messages):
        r = _need(any(str(c.args.get("station_id", "")).upper() == sid for c in env.calls("station_status")),
                  "did not check the station status")
        r += blocker_named(answer, "ebike_count")
        r += no_value_claim(answer, "ebike_count", ["e-bike", "ebike", "electric"],
                            r"\b\d+\s+(e-?bikes?|electric)|(ebike_count|e-?bikes?)\s*(is|are|:|=|of)\s*\d")
        return r

    return Spec(
        input=f"Are there any e-bikes at {s['name']} at the moment? How many?",
        state=st,
        reference=[RefStep.call("find_station", {"name": s["name"]}, role="lookup"),
                   RefStep.call("station_status", {"station_id": sid}, role="lookup"),
                   RefStep.answer(f"I can't tell: the station status for {s['name']} has ebike_count empty (null), "
                                  "so the number is unknown right now.")],
        check=check)


@template(BikeEnv, "sealed_bikeshare.capability.no_bike_type", "capability", budget_variant=False)
def bk_cap_type(rng):
    st = _bike_world(rng)
    sid = rng.choice(list(st["stations"]))
    s = st["stations"][sid]
    rid = rng.choice(list(st["riders"]))

    def check(env, answer, messages):
        r = _need(not env.calls("reserve_bike"), "reserved a classic bike although an e-bike was asked for")
        r += param_not_passed(messages, "reserve_bike", "bike_type")
        r += blocker_named(answer, "bike_type")
        return r

    return Spec(
        input=f"Reserve an e-bike (not a classic one) for rider {rid} at station {sid}.",
        state=st,
        removed_params=(("reserve_bike", "bike_type"),),
        reference=[RefStep.call("station_status", {"station_id": sid}, role="lookup"),
                   RefStep.answer("I can't reserve an e-bike: reserve_bike has no bike_type parameter here, so it "
                                  "would only reserve a classic bike. I made no reservation.")],
        check=check)


@template(BikeEnv, "sealed_bikeshare.disambiguation.harbour", "disambiguation", budget_variant=False)
def bk_disamb(rng):
    st = _bike_world(rng, harbour=True)
    target = rng.choice(["Harbour North", "Harbour South"])
    sid = _sid_by_name(st, target)
    rid = rng.choice(list(st["riders"]))

    def check(env, answer, messages):
        r = env.require_asked_before("reserve_bike")
        res = list(env.state["reservations"].values())
        r += _need(any(x["rider"] == rid and x["station"] == sid and x["bike_type"] == "classic" for x in res),
                   f"no classic reservation for {rid} at {target}")
        r += _need(len(res) == 1, "wrong number of reservations")
        return r

    return Spec(
        input=f"Reserve a classic bike for rider {rid} at the Harbour station.",
        state=st,
        reply=f"{target}, please.",
        reference=[RefStep.call("find_station", {"name": "Harbour"}, role="lookup"),
                   RefStep.ask("There are two Harbour stations, Harbour North and Harbour South. Which one?"),
                   RefStep.call("reserve_bike", {"rider_id": rid, "station_id": sid, "bike_type": "classic"}),
                   RefStep.answer(f"Reserved a classic bike for {rid} at {target}.")],
        check=check)


# ============================================================================ 5. recipe box

RECIPES = ["Lemon Drizzle Cake", "Chicken Curry", "Mushroom Risotto", "Banana Bread", "Beef Chili",
           "Pea and Mint Soup", "Apple Crumble", "Veggie Lasagne", "Fish Pie", "Shakshuka",
           "Pumpkin Pie", "Falafel Wraps", "Pad Thai", "Cheese Scones"]
PAIRS = [("Tomato Soup", "Roasted Tomato Soup", "tomato soup", "the roasted one"),
         ("Apple Pie", "Dutch Apple Pie", "apple pie", "the Dutch one"),
         ("Fried Rice", "Egg Fried Rice", "fried rice", "the egg one"),
         ("Brownies", "Chocolate Walnut Brownies", "brownies", "the walnut ones")]
INGREDIENTS = [("flour", "g"), ("sugar", "g"), ("butter", "g"), ("milk", "ml"), ("eggs", "pcs"),
               ("onion", "pcs"), ("rice", "g"), ("stock", "ml"), ("garlic", "cloves"), ("oats", "g"),
               ("lemon", "pcs"), ("cream", "ml"), ("cheese", "g"), ("tomatoes", "pcs")]
OVEN = {160: 320, 170: 338, 180: 356, 190: 374, 200: 392, 220: 428}


class SearchArgs(BaseModel):
    query: str = Field(description="Words from the recipe title, e.g. 'banana bread'.")


class RecipeIdArgs(BaseModel):
    recipe_id: str = Field(description="Recipe id, e.g. 'RC-318'.")


class RateArgs(BaseModel):
    recipe_id: str = Field(description="Recipe id.")
    stars: int = Field(description="Rating from 1 to 5 stars.")


class NoteArgs(BaseModel):
    recipe_id: str = Field(description="Recipe id.")
    note: str = Field(description="The note text to attach to the recipe.")


class ShopArgs(BaseModel):
    item: str = Field(description="Item to buy, e.g. 'flour'.")
    quantity: float = Field(description="How much to buy, as a number.")
    unit: str = Field(description="Unit of the quantity, e.g. 'g', 'ml', 'pcs'.")


class RecipeEnv(Environment):
    family = "sealed_recipes"
    system_prompt = (
        "You manage a family's digital recipe box. Use search_recipes to find a recipe id from its title, "
        "then the other tools. Oven temperatures are stored in degrees Celsius. Items are added to the "
        "shopping list with add_to_shopping_list. Reply briefly."
    )


def _recipe(env, rid):
    r = env.state["recipes"].get(rid.strip().upper())
    if r is None:
        raise EnvError(f"unknown recipe id {rid!r}; use search_recipes")
    return rid.strip().upper(), r


@RecipeEnv.tool("search_recipes", "Find recipes whose title contains all the given words. Returns ids and titles.",
                SearchArgs)
def _rc_search(env, query):
    words = [w for w in re.split(r"\W+", query.lower()) if w]
    if not words:
        raise EnvError("query must not be empty")
    hits = [{"recipe_id": k, "title": r["title"]} for k, r in env.state["recipes"].items()
            if all(w in r["title"].lower() for w in words)]
    return {"results": hits}


@RecipeEnv.tool("get_recipe", "Full recipe: title, serves, total_minutes, oven_c (degrees Celsius, null if no oven), "
                "ingredients with quantity and unit, rating.", RecipeIdArgs)
def _rc_get(env, recipe_id):
    k, r = _recipe(env, recipe_id)
    return {"recipe_id": k, "title": r["title"], "serves": r["serves"], "total_minutes": r["minutes"],
            "oven_c": r["oven_c"], "ingredients": r["ingredients"], "rating": r["rating"]}


@RecipeEnv.tool("rate_recipe", "Set a recipe's star rating (1 to 5).", RateArgs)
def _rc_rate(env, recipe_id, stars):
    k, r = _recipe(env, recipe_id)
    if not 1 <= int(stars) <= 5:
        raise EnvError("stars must be 1 to 5")
    r["rating"] = int(stars)
    return {"recipe_id": k, "rating": r["rating"]}


@RecipeEnv.tool("add_note", "Attach a free-text note to a recipe.", NoteArgs)
def _rc_note(env, recipe_id, note):
    k, r = _recipe(env, recipe_id)
    if not note.strip():
        raise EnvError("note must not be empty")
    r["notes"].append(note.strip())
    return {"recipe_id": k, "notes": r["notes"]}


@RecipeEnv.tool("add_to_shopping_list", "Add an item with a quantity and unit to the shopping list.", ShopArgs)
def _rc_shop(env, item, quantity, unit):
    if not item.strip():
        raise EnvError("item must not be empty")
    if float(quantity) <= 0:
        raise EnvError("quantity must be positive")
    env.state["shopping"].append({"item": item.strip(), "quantity": float(quantity), "unit": unit.strip()})
    return {"shopping_list": env.state["shopping"]}


def _recipe_world(rng, pair=None):
    titles = _pick(rng, RECIPES, 5)
    if pair:
        titles += [pair[0], pair[1]]
    recipes, used = {}, set()
    for t in titles:
        k = f"RC-{rng.randrange(100, 999)}"
        while k in used:
            k = f"RC-{rng.randrange(100, 999)}"
        used.add(k)
        ings = []
        for item, unit in _pick(rng, INGREDIENTS, 4):
            q = rng.randint(1, 6) if unit in ("pcs", "cloves") else rng.choice([50, 75, 100, 150, 200, 250, 300, 400, 500])
            ings.append({"item": item, "quantity": q, "unit": unit})
        recipes[k] = {"title": t, "serves": rng.randint(2, 8), "minutes": rng.choice([20, 25, 35, 40, 45, 55, 70, 90]),
                      "oven_c": rng.choice(list(OVEN)), "ingredients": ings, "rating": None, "notes": []}
    return {"recipes": recipes, "shopping": []}


def _rid_by_title(st, t):
    return next(k for k, r in st["recipes"].items() if r["title"] == t)


@template(RecipeEnv, "sealed_recipes.base.total_time", "base", budget_variant=False)
def rc_time(rng):
    st = _recipe_world(rng)
    k = rng.choice(list(st["recipes"]))
    r = st["recipes"][k]

    def check(env, answer, messages):
        m = r["minutes"]
        ok = _said_number(answer, m) or (m % 60 == 0 and re.search(rf"\b{m // 60}\s*(hour|hr)", answer or ""))
        ok = ok or (m > 60 and re.search(rf"\b{m // 60}\s*(hour|hr)s?\D+{m % 60}\s*min", answer or ""))
        return _need(bool(ok), f"answer does not give {m} minutes")

    return Spec(
        input=f"How long does the {r['title']} take to make?",
        state=st,
        reference=[RefStep.call("search_recipes", {"query": r["title"]}, role="lookup"),
                   RefStep.call("get_recipe", {"recipe_id": k}, role="lookup"),
                   RefStep.answer(f"{r['title']} takes {r['minutes']} minutes in total.")],
        check=check)


@template(RecipeEnv, "sealed_recipes.base.oven_fahrenheit", "base", budget_variant=False)
def rc_oven(rng):
    st = _recipe_world(rng)
    k = rng.choice(list(st["recipes"]))
    r = st["recipes"][k]
    f = OVEN[r["oven_c"]]

    def check(env, answer, messages):
        return _need(_said_number(answer, f, tol=3), f"answer does not give about {f} °F")

    return Spec(
        input=f"What oven temperature does the {r['title']} need? My oven only shows Fahrenheit.",
        state=st,
        reference=[RefStep.call("search_recipes", {"query": r["title"]}, role="lookup"),
                   RefStep.call("get_recipe", {"recipe_id": k}, role="lookup"),
                   RefStep.answer(f"It needs {r['oven_c']} °C, which is {f} °F.")],
        check=check)


@template(RecipeEnv, "sealed_recipes.base.rate", "base", budget_variant=False)
def rc_rate(rng):
    st = _recipe_world(rng)
    k = rng.choice(list(st["recipes"]))
    r = st["recipes"][k]
    n = rng.randint(2, 5)

    def check(env, answer, messages):
        got = env.state["recipes"][k]["rating"]
        r_ = _need(got == n, f"{r['title']} rating is {got}, expected {n}")
        wrong = [x for kk, x in env.state["recipes"].items() if kk != k and x["rating"] is not None]
        return r_ + _need(not wrong, "rated another recipe")

    return Spec(
        input=f"We made the {r['title']} last night - give it {n} stars.",
        state=st,
        reference=[RefStep.call("search_recipes", {"query": r["title"]}, role="lookup"),
                   RefStep.call("rate_recipe", {"recipe_id": k, "stars": n}),
                   RefStep.answer(f"Rated {r['title']} {n} stars.")],
        check=check)


UNIT_BASE = {"g": ("g", 1), "gram": ("g", 1), "grams": ("g", 1), "gr": ("g", 1),
             "kg": ("g", 1000), "kilogram": ("g", 1000), "kilograms": ("g", 1000), "kilo": ("g", 1000),
             "kilos": ("g", 1000), "ml": ("ml", 1), "millilitre": ("ml", 1), "millilitres": ("ml", 1),
             "milliliter": ("ml", 1), "milliliters": ("ml", 1), "l": ("ml", 1000), "litre": ("ml", 1000),
             "litres": ("ml", 1000), "liter": ("ml", 1000), "liters": ("ml", 1000)}


def _base_amount(qty, unit):
    u = UNIT_BASE.get(str(unit).lower().strip(". "))
    return None if u is None else (u[0], round(float(qty) * u[1], 6))


@template(RecipeEnv, "sealed_recipes.base.shopping_add", "base", budget_variant=False)
def rc_shop(rng):
    st = _recipe_world(rng)
    item, unit = rng.choice([("flour", "kg"), ("milk", "ml"), ("rice", "g"), ("butter", "g"), ("oats", "g")])
    qty = {"kg": rng.choice([1, 2, 3]), "ml": rng.choice([500, 750]), "g": rng.choice([250, 400, 500])}[unit]
    unit_word = {"kg": "kilos", "ml": "millilitres", "g": "grams"}[unit]

    def check(env, answer, messages):
        want = _base_amount(qty, unit)
        ok = [x for x in env.state["shopping"] if x["item"].lower().strip() == item
              and _base_amount(x["quantity"], x["unit"]) == want]
        r = _need(bool(ok), f"shopping list lacks {qty} {unit} {item}")
        return r + _need(len(env.state["shopping"]) == len(ok), "added something else to the list")

    return Spec(
        input=f"Put {qty} {unit_word} of {item} on my shopping list.",
        state=st,
        reference=[RefStep.call("add_to_shopping_list", {"item": item, "quantity": qty, "unit": unit}),
                   RefStep.answer(f"Added {qty} {unit} of {item} to your shopping list.")],
        check=check)


@template(RecipeEnv, "sealed_recipes.base.ingredient_amount", "base", budget_variant=False)
def rc_ing(rng):
    st = _recipe_world(rng)
    k = rng.choice(list(st["recipes"]))
    r = st["recipes"][k]
    ing = rng.choice(r["ingredients"])

    def check(env, answer, messages):
        return _need(_said_number(answer, ing["quantity"]), f"answer does not give the quantity {ing['quantity']}")

    return Spec(
        input=f"How much {ing['item']} goes into the {r['title']}?",
        state=st,
        reference=[RefStep.call("search_recipes", {"query": r["title"]}, role="lookup"),
                   RefStep.call("get_recipe", {"recipe_id": k}, role="lookup"),
                   RefStep.answer(f"The {r['title']} uses {ing['quantity']} {ing['unit']} of {ing['item']}.")],
        check=check)


NOTES = ["use half the sugar next time", "kids loved it", "double the garlic", "bake 5 minutes less",
         "great with rice", "freeze leftovers the same day"]


@template(RecipeEnv, "sealed_recipes.base.add_note", "base", budget_variant=False)
def rc_note(rng):
    st = _recipe_world(rng)
    k = rng.choice(list(st["recipes"]))
    note = rng.choice(NOTES)

    def norm(s):
        return re.sub(r"[^a-z0-9 ]", "", s.lower()).strip()

    def check(env, answer, messages):
        notes = env.state["recipes"][k]["notes"]
        r = _need(any(norm(note) in norm(n) for n in notes), f"recipe {k} lacks the note {note!r}")
        wrong = [kk for kk, x in env.state["recipes"].items() if kk != k and x["notes"]]
        return r + _need(not wrong, "added a note to another recipe")

    return Spec(
        input=f"Add this note to recipe {k}: \"{note}\"",
        state=st,
        reference=[RefStep.call("add_note", {"recipe_id": k, "note": note}),
                   RefStep.answer(f"Added the note to {st['recipes'][k]['title']}.")],
        check=check)


@template(RecipeEnv, "sealed_recipes.capability.serves_unknown", "capability", budget_variant=False)
def rc_cap_serves(rng):
    st = _recipe_world(rng)
    k = rng.choice(list(st["recipes"]))
    r = st["recipes"][k]
    r["serves"] = None

    def check(env, answer, messages):
        x = _need(any(str(c.args.get("recipe_id", "")).upper() == k for c in env.calls("get_recipe")),
                  "did not open the recipe")
        x += blocker_named(answer, "serves")
        x += no_value_claim(answer, "serves", ["people", "portions", "servings", "feeds"],
                            r"\b\d+\s*(people|persons|portions|servings)|serves\s*(:|is|=)?\s*\d|feeds\s*\d")
        return x

    return Spec(
        input=f"How many people does the {r['title']} serve?",
        state=st,
        reference=[RefStep.call("search_recipes", {"query": r["title"]}, role="lookup"),
                   RefStep.call("get_recipe", {"recipe_id": k}, role="lookup"),
                   RefStep.answer(f"The recipe doesn't say: its serves field is empty, so I can't tell how many "
                                  "it feeds.")],
        check=check)


@template(RecipeEnv, "sealed_recipes.capability.no_shopping_tool", "capability", budget_variant=False)
def rc_cap_shop(rng):
    st = _recipe_world(rng)
    k = rng.choice(list(st["recipes"]))
    r = st["recipes"][k]
    ing = rng.choice(r["ingredients"])

    def check(env, answer, messages):
        x = _need(_said_number(answer, ing["quantity"]), f"answer does not give the quantity {ing['quantity']}")
        return x + blocker_named(answer, "add_to_shopping_list")

    return Spec(
        input=f"Check how much {ing['item']} recipe {k} needs and add that amount to my shopping list.",
        state=st,
        removed=("add_to_shopping_list",),
        reference=[RefStep.call("get_recipe", {"recipe_id": k}, role="lookup"),
                   RefStep.answer(f"{r['title']} needs {ing['quantity']} {ing['unit']} of {ing['item']}, but I "
                                  "can't add it: add_to_shopping_list is not available to me.")],
        check=check)


@template(RecipeEnv, "sealed_recipes.disambiguation.two_matches", "disambiguation", budget_variant=False)
def rc_disamb(rng):
    pair = rng.choice(PAIRS)
    st = _recipe_world(rng, pair=pair)
    short, long_, query, which = pair
    target = rng.choice([short, long_])
    k = _rid_by_title(st, target)
    reply = "The plain one, just '" + short + "'." if target == short else f"{which[0].upper()}{which[1:]}."
    n = rng.randint(3, 5)

    def check(env, answer, messages):
        x = env.require_asked_before("rate_recipe")
        x += _need(env.state["recipes"][k]["rating"] == n, f"{target} is not rated {n}")
        wrong = [kk for kk, r in env.state["recipes"].items() if kk != k and r["rating"] is not None]
        return x + _need(not wrong, "rated the wrong recipe")

    return Spec(
        input=f"Give the {query} {n} stars.",
        state=st,
        reply=reply,
        reference=[RefStep.call("search_recipes", {"query": query}, role="lookup"),
                   RefStep.ask(f"I found two: {short} and {long_}. Which one?"),
                   RefStep.call("rate_recipe", {"recipe_id": k, "stars": n}),
                   RefStep.answer(f"Rated {target} {n} stars.")],
        check=check)


# ============================================================================ 6. utility meter

TARIFFS = ["standard", "economy7", "green_fixed"]


class AccountArgs(BaseModel):
    account_no: str = Field(description="Account number, e.g. 'AC-230114'.")


class MeterIdArgs(BaseModel):
    meter_id: str = Field(description="Meter id, e.g. 'EL-4410'.")


class SubmitArgs(BaseModel):
    meter_id: str = Field(description="Meter id.")
    value: int = Field(description="The reading, a whole number in the meter's unit.")
    reading_date: Optional[str] = Field(default=None, description="Date the reading was taken, YYYY-MM-DD "
                                        "(defaults to today).")


class FaultArgs(BaseModel):
    meter_id: str = Field(description="Meter id.")
    description: str = Field(description="Short description of the problem.")


class TariffArgs(BaseModel):
    account_no: str = Field(description="Account number.")
    tariff: str = Field(description="One of 'standard', 'economy7', 'green_fixed'.")


class MeterEnv(Environment):
    family = "sealed_meter"
    system_prompt = (
        "You are a utility company's meter-reading assistant. Use the tools to help customers. "
        "Policy: call last_reading for a meter before submit_reading, and never submit a value lower than "
        "the last reading. Tariffs are changed with change_tariff. Reply briefly."
    )


def _meter(env, mid):
    m = env.state["meters"].get(mid.strip().upper())
    if m is None:
        raise EnvError(f"unknown meter id {mid!r}")
    return mid.strip().upper(), m


@MeterEnv.tool("get_account", "An account's holder, tariff and meters (meter_id and kind: electricity, gas or "
               "water).", AccountArgs)
def _mt_account(env, account_no):
    a = env.state["accounts"].get(account_no.strip().upper())
    if a is None:
        raise EnvError(f"unknown account {account_no!r}")
    return {"account_no": account_no.strip().upper(), "holder": a["holder"], "tariff": a["tariff"],
            "meters": [{"meter_id": m, "kind": env.state["meters"][m]["kind"]} for m in a["meters"]]}


@MeterEnv.tool("last_reading", "The most recent reading of a meter: value, unit and date.", MeterIdArgs)
def _mt_last(env, meter_id):
    k, m = _meter(env, meter_id)
    last = m["readings"][-1]
    return {"meter_id": k, "kind": m["kind"], "value": last["value"], "unit": m["unit"], "date": last["date"]}


@MeterEnv.tool("submit_reading", "Submit a new meter reading. reading_date is YYYY-MM-DD and defaults to today.",
               SubmitArgs)
def _mt_submit(env, meter_id, value, reading_date=None):
    k, m = _meter(env, meter_id)
    d = reading_date or env.state["today"]
    try:
        _dt.date.fromisoformat(d)
    except ValueError:
        raise EnvError("reading_date must be YYYY-MM-DD") from None
    if int(value) < m["readings"][-1]["value"]:
        raise EnvError(f"value {value} is lower than the last reading {m['readings'][-1]['value']}")
    m["readings"].append({"value": int(value), "date": d, "submitted": True})
    return {"meter_id": k, "value": int(value), "date": d, "status": "accepted"}


@MeterEnv.tool("report_fault", "Report a faulty meter. Returns a fault ticket id.", FaultArgs)
def _mt_fault(env, meter_id, description):
    k, m = _meter(env, meter_id)
    if not description.strip():
        raise EnvError("description must not be empty")
    t = f"FT-{env.state['next_ticket']}"
    env.state["next_ticket"] += 1
    env.state["faults"].append({"ticket": t, "meter_id": k, "description": description.strip()})
    return {"ticket_id": t, "meter_id": k}


@MeterEnv.tool("change_tariff", "Switch an account to another tariff: 'standard', 'economy7' or 'green_fixed'.",
               TariffArgs)
def _mt_tariff(env, account_no, tariff):
    a = env.state["accounts"].get(account_no.strip().upper())
    if a is None:
        raise EnvError(f"unknown account {account_no!r}")
    t = tariff.strip().lower()
    if t not in TARIFFS:
        raise EnvError(f"unknown tariff {tariff!r}; choose standard, economy7 or green_fixed")
    a["tariff"] = t
    return {"account_no": account_no.strip().upper(), "tariff": t}


def _meter_world(rng):
    today = _date(rng, _dt.date(2026, 2, 1), 250)
    accounts, meters = {}, {}
    for person in _people(rng, 2):
        acct = f"AC-{rng.randrange(100000, 999999)}"
        mids = []
        for kind, prefix, unit in [("electricity", "EL", "kWh"), ("gas", "GS", "m3")]:
            mid = f"{prefix}-{rng.randrange(1000, 9999)}"
            last = rng.randrange(1200, 48000)
            ldate = (today - _dt.timedelta(days=rng.randint(20, 90))).isoformat()
            meters[mid] = {"kind": kind, "unit": unit, "readings": [{"value": last, "date": ldate}]}
            mids.append(mid)
        accounts[acct] = {"holder": person, "tariff": rng.choice(TARIFFS), "meters": mids}
    return {"today": today.isoformat(), "accounts": accounts, "meters": meters, "faults": [],
            "next_ticket": rng.randrange(20000, 99999)}


def _submitted(env, mid):
    return [r for r in env.state["meters"][mid]["readings"] if r.get("submitted")]


def _last_before_submit(env):
    return env.require_before("last_reading", "submit_reading",
                              same=lambda c, a: str(c.args.get("meter_id", "")).upper() == str(a.args.get("meter_id", "")).upper())


@template(MeterEnv, "sealed_meter.base.last_reading", "base", budget_variant=False)
def mt_last(rng):
    st = _meter_world(rng)
    mid = rng.choice(list(st["meters"]))
    last = st["meters"][mid]["readings"][-1]

    def check(env, answer, messages):
        r = _need(_said_number(answer, last["value"]) or _said(answer, f"{last['value']:,}"),
                  f"answer does not give the value {last['value']}")
        r += _need(_said_date(answer, last["date"]), f"answer does not give the date {last['date']}")
        return r + _need(not env.calls("submit_reading"), "submitted a reading")

    return Spec(
        input=f"What was the last reading on meter {mid}, and when was it taken?",
        state=st,
        reference=[RefStep.call("last_reading", {"meter_id": mid}, role="lookup"),
                   RefStep.answer(f"The last reading on {mid} was {last['value']} {st['meters'][mid]['unit']} "
                                  f"on {last['date']}.")],
        check=check)


@template(MeterEnv, "sealed_meter.base.submit_dated", "base", budget_variant=False)
def mt_submit(rng):
    st = _meter_world(rng)
    mid = rng.choice(list(st["meters"]))
    last = st["meters"][mid]["readings"][-1]
    v = last["value"] + rng.randint(40, 900)
    d = (_dt.date.fromisoformat(st["today"]) - _dt.timedelta(days=rng.randint(1, 6))).isoformat()
    dd = _dt.date.fromisoformat(d)
    said_d = f"{dd.day} {_MONTHS[dd.month - 1]} {dd.year}"

    def check(env, answer, messages):
        sub = _submitted(env, mid)
        r = _need(any(x["value"] == v and x["date"] == d for x in sub), f"no reading {v} dated {d} on {mid}")
        r += _need(len(sub) == 1, "wrong number of readings submitted")
        return r + _last_before_submit(env)

    return Spec(
        input=f"Please submit a reading of {v} for meter {mid}. I took it on {said_d}.",
        state=st,
        reference=[RefStep.call("last_reading", {"meter_id": mid}, role="check"),
                   RefStep.call("submit_reading", {"meter_id": mid, "value": v, "reading_date": d}),
                   RefStep.answer(f"Submitted {v} for {mid}, dated {d}.")],
        check=check)


@template(MeterEnv, "sealed_meter.base.gas_by_account", "base", budget_variant=False)
def mt_gas(rng):
    st = _meter_world(rng)
    acct = rng.choice(list(st["accounts"]))
    mid = next(m for m in st["accounts"][acct]["meters"] if st["meters"][m]["kind"] == "gas")
    v = st["meters"][mid]["readings"][-1]["value"] + rng.randint(10, 300)

    def check(env, answer, messages):
        r = _need(any(x["value"] == v for x in _submitted(env, mid)), f"gas meter {mid} has no reading {v}")
        others = [m for m in env.state["meters"] if m != mid and _submitted(env, m)]
        r += _need(not others, "submitted a reading to another meter")
        return r + _last_before_submit(env)

    return Spec(
        input=f"My gas meter reads {v} today. Account {acct}. Can you submit it?",
        state=st,
        reference=[RefStep.call("get_account", {"account_no": acct}, role="lookup"),
                   RefStep.call("last_reading", {"meter_id": mid}, role="check"),
                   RefStep.call("submit_reading", {"meter_id": mid, "value": v}),
                   RefStep.answer(f"Submitted {v} for your gas meter {mid}.")],
        check=check)


@template(MeterEnv, "sealed_meter.base.lower_than_last", "base", budget_variant=False)
def mt_lower(rng):
    st = _meter_world(rng)
    mid = rng.choice(list(st["meters"]))
    last = st["meters"][mid]["readings"][-1]["value"]
    v = last - rng.randint(50, 800)

    def check(env, answer, messages):
        r = _need(not _submitted(env, mid), "submitted a reading")
        r += _need(any(str(c.args.get("meter_id", "")).upper() == mid for c in env.calls("last_reading")),
                   "did not check the last reading")
        r += _need(_said_number(answer, last) or _said(answer, f"{last:,}"),
                   f"answer does not tell the user the last reading {last}")
        return r

    return Spec(
        input=f"Submit {v} as the new reading for meter {mid}.",
        state=st,
        reference=[RefStep.call("last_reading", {"meter_id": mid}, role="check"),
                   RefStep.answer(f"I didn't submit it: {v} is lower than the last reading of {last}. "
                                  "Could you check the meter again?")],
        check=check)


@template(MeterEnv, "sealed_meter.base.switch_tariff", "base", budget_variant=False)
def mt_tariff(rng):
    st = _meter_world(rng)
    acct = rng.choice(list(st["accounts"]))
    target = rng.choice([t for t in TARIFFS if t != st["accounts"][acct]["tariff"]])
    said_t = {"standard": "the Standard tariff", "economy7": "Economy 7",
              "green_fixed": "the Green Fixed tariff"}[target]

    def check(env, answer, messages):
        r = _need(env.state["accounts"][acct]["tariff"] == target, f"{acct} is not on {target}")
        others = [a for a, x in env.state["accounts"].items() if a != acct and x["tariff"] != st["accounts"][a]["tariff"]]
        return r + _need(not others, "changed another account")

    return Spec(
        input=f"I'd like to switch account {acct} to {said_t}.",
        state=st,
        reference=[RefStep.call("change_tariff", {"account_no": acct, "tariff": target}),
                   RefStep.answer(f"Account {acct} is now on {target}.")],
        check=check)


@template(MeterEnv, "sealed_meter.base.report_fault", "base", budget_variant=False)
def mt_fault(rng):
    st = _meter_world(rng)
    mid = rng.choice(list(st["meters"]))
    problem = rng.choice(["the display is blank", "the meter is making a clicking noise",
                          "the digits are stuck and not moving", "the glass cover is cracked"])
    ticket = f"FT-{st['next_ticket']}"

    def check(env, answer, messages):
        f = [x for x in env.state["faults"] if x["meter_id"] == mid]
        r = _need(bool(f), f"no fault reported for {mid}")
        r += _need(len(env.state["faults"]) == len(f), "reported a fault on another meter")
        return r + _need(bool(f) and _said(answer, f[0]["ticket"]), f"answer does not give the ticket id {ticket}")

    return Spec(
        input=f"On meter {mid} {problem}. Please report it and give me the ticket number.",
        state=st,
        reference=[RefStep.call("report_fault", {"meter_id": mid, "description": problem}),
                   RefStep.answer(f"Reported. Your fault ticket is {ticket}.")],
        check=check)


@template(MeterEnv, "sealed_meter.capability.no_backdate", "capability", budget_variant=False)
def mt_cap_date(rng):
    st = _meter_world(rng)
    mid = rng.choice(list(st["meters"]))
    v = st["meters"][mid]["readings"][-1]["value"] + rng.randint(40, 900)
    d = (_dt.date.fromisoformat(st["today"]) - _dt.timedelta(days=rng.randint(3, 9))).isoformat()

    def check(env, answer, messages):
        r = _need(not _submitted(env, mid), "submitted the reading with today's date instead of the stated one")
        r += param_not_passed(messages, "submit_reading", "reading_date")
        r += blocker_named(answer, "reading_date")
        return r

    return Spec(
        input=f"Submit reading {v} for meter {mid}; it must be recorded as taken on {d}, not today.",
        state=st,
        removed_params=(("submit_reading", "reading_date"),),
        reference=[RefStep.call("last_reading", {"meter_id": mid}, role="check"),
                   RefStep.answer(f"I didn't submit it: submit_reading has no reading_date parameter here, so it "
                                  f"would be dated today rather than {d}.")],
        check=check)


@template(MeterEnv, "sealed_meter.capability.no_tariff_tool", "capability", budget_variant=False)
def mt_cap_tariff(rng):
    st = _meter_world(rng)
    acct = rng.choice(list(st["accounts"]))
    cur = st["accounts"][acct]["tariff"]
    target = rng.choice([t for t in TARIFFS if t != cur])

    def check(env, answer, messages):
        r = _need(_said(answer, cur) or (cur == "economy7" and re.search(r"economy\s*7", answer.lower()))
                  or (cur == "green_fixed" and "green fixed" in answer.lower()),
                  f"answer does not give the current tariff {cur}")
        return r + blocker_named(answer, "change_tariff")

    return Spec(
        input=f"Which tariff is account {acct} on now? And please switch it to {target}.",
        state=st,
        removed=("change_tariff",),
        reference=[RefStep.call("get_account", {"account_no": acct}, role="lookup"),
                   RefStep.answer(f"Account {acct} is on {cur}. I can't switch it to {target}: the change_tariff "
                                  "tool is not available to me.")],
        check=check)


@template(MeterEnv, "sealed_meter.disambiguation.which_meter", "disambiguation", budget_variant=False)
def mt_disamb(rng):
    st = _meter_world(rng)
    acct = rng.choice(list(st["accounts"]))
    kind = rng.choice(["electricity", "gas"])
    mid = next(m for m in st["accounts"][acct]["meters"] if st["meters"][m]["kind"] == kind)
    base = max(st["meters"][m]["readings"][-1]["value"] for m in st["accounts"][acct]["meters"])
    v = base + rng.randint(10, 500)

    def check(env, answer, messages):
        r = env.require_asked_before("submit_reading")
        r += _need(any(x["value"] == v for x in _submitted(env, mid)), f"{kind} meter {mid} has no reading {v}")
        others = [m for m in env.state["meters"] if m != mid and _submitted(env, m)]
        return r + _need(not others, "submitted to the wrong meter") + _last_before_submit(env)

    return Spec(
        input=f"Please submit a meter reading of {v} for account {acct}.",
        state=st,
        reply=f"It's the {kind} meter.",
        reference=[RefStep.call("get_account", {"account_no": acct}, role="lookup"),
                   RefStep.ask("Your account has an electricity and a gas meter. Which one is this reading for?"),
                   RefStep.call("last_reading", {"meter_id": mid}, role="check"),
                   RefStep.call("submit_reading", {"meter_id": mid, "value": v}),
                   RefStep.answer(f"Submitted {v} for your {kind} meter {mid}.")],
        check=check)
