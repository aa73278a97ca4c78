"""A tier a small real model can play: one- and two-tool requests in four tiny worlds.

The bundled car / retail / calendar tasks are beyond a 1.5B model (0 of 57 runs). These keep
the situations the bank is for and make each one small: a check a tool's description requires,
a missing tool, a missing parameter, a value to ask for, small talk that needs no tool, and a
tool-call budget. Each situation has one evolution-set template and one held-out template in a
different world, so a held-out gain needs a lesson that travels.

Every world is its own :class:`SimpleEnv` subclass with two or three tools, so an agent sees
only the tools its request is about. The templates were calibrated on the unguided 1.5B model
(``benchmarks/bench_real_model.py --calibrate``; the table is in ``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import BaseModel, Field

from skillbank.directives import AskFor, CheckFirst, NoParam, Unavailable
from skillbank.envs.base import (
    EnvError,
    Environment,
    NoArgs,
    RefStep,
    Spec,
    attempted_tools,
    names,
    param_not_passed,
    template,
)

CITIES = ("Paris", "Oslo", "Lisbon", "Dublin", "Vienna", "Prague", "Madrid", "Berlin", "Rome",
          "Athens", "Warsaw", "Zurich")
CONDITIONS = ("sunny", "cloudy", "light rain", "windy", "foggy", "snowing")
PEOPLE = ("Anna", "Tom", "Maria", "Ben", "Sofia", "Leo", "Nora", "Omar", "Julia", "Max")
MESSAGES = ("I'm running ten minutes late", "see you at the station", "dinner is at eight",
            "can you call me back", "I left the keys at home", "the meeting moved to Friday")
ROOMS = ("kitchen", "bedroom", "living room", "office", "hallway", "bathroom")
# A degree figure or a weather word in a sentence about the forecast is a claimed forecast.
_FORECAST = (r"-?\d+ ?(?:°|degrees|c\b)|\b(?:sunny|cloudy|rain|rainy|windy|foggy|snow|snowing|clear|"
             r"storm|showers)\b")
CHORES = ("call the dentist", "water the plants", "buy milk", "pay the electricity bill",
          "book the train tickets", "send the report")


# Every world's system prompt ends with this: what a careful operator tells a small agent. The
# unguided model still skips it often enough (the calibration table) for skills to matter.
HOUSE_RULES = ("Use the tools when the request needs them, then answer in one or two short "
               "sentences. If part of a request cannot be done with your tools, do the rest and "
               "say which part you cannot do. If a request leaves out a value a tool needs, ask "
               "the user for it.")


class SimpleEnv(Environment):
    """The common base of the simple tier's worlds (each subclass has its own tools)."""

    family = "simple"
    system_prompt = f"You are a helpful assistant. {HOUSE_RULES}"


# ---------------------------------------------------------------------- weather


class WeatherEnv(SimpleEnv):
    system_prompt = "You are a weather assistant. " + HOUSE_RULES


class CityArgs(BaseModel):
    city: str = Field(description="City name, e.g. Paris; ask the user if they did not say.")


class ForecastArgs(CityArgs):
    days: int = Field(1, description="How many days ahead, 1 to 3.")


def _city(env: Environment, city: str) -> dict:
    for name, data in env.state["cities"].items():
        if name.lower() == city.strip().lower():
            return {"city": name, **data}
    raise EnvError(f"unknown city {city!r}")


@WeatherEnv.tool("get_weather", "Get the current weather in a city: condition and temperature_c.",
                 CityArgs)
def get_weather(env: WeatherEnv, city: str) -> dict:
    found = _city(env, city)
    return {"city": found["city"], "condition": found["condition"],
            "temperature_c": found["temperature_c"]}


@WeatherEnv.tool("get_forecast", "Get the forecast for the next days in a city: condition, "
                 "high_c and low_c per day.", ForecastArgs)
def get_forecast(env: WeatherEnv, city: str, days: int = 1) -> dict:
    if not 1 <= days <= 3:
        raise EnvError("days must be between 1 and 3")
    found = _city(env, city)
    return {"city": found["city"], "days": found["forecast"][:days]}


def _weather_state(rng, cities: list[str]) -> dict:
    return {"cities": {c: {"condition": rng.choice(CONDITIONS), "temperature_c": rng.randint(-5, 32),
                           "forecast": [{"day": d, "condition": rng.choice(CONDITIONS),
                                         "high_c": rng.randint(5, 30), "low_c": rng.randint(-8, 4)}
                                        for d in (1, 2, 3)]}
                       for c in cities}}


def _looked_up(env: Environment, city: str) -> list[str]:
    if any(c.args.get("city", "").lower() == city.lower() for c in env.calls("get_weather")):
        return []
    return [f"never looked up the weather in {city}"]


def _says_number(answer: str, value: int, what: str) -> list[str]:
    if re.search(rf"(?<![\d.]){re.escape(str(value))}(?![\d])", answer or ""):
        return []
    return [f"the answer does not give {what} ({value})"]


# ---------------------------------------------------------------------- messages


class MessagesEnv(SimpleEnv):
    system_prompt = "You are a messaging assistant on the user's phone. " + HOUSE_RULES


class ContactArgs(BaseModel):
    name: str = Field(description="The contact's first name, e.g. Anna.")


class SendArgs(BaseModel):
    contact_id: str = Field(description="The contact_id that find_contact returned for the contact.")
    text: str = Field(description="The message to send.")


@MessagesEnv.tool("find_contact", "Find a contact by name: contact_id and phone number.", ContactArgs)
def find_contact(env: MessagesEnv, name: str) -> dict:
    for c in env.state["contacts"]:
        if c["name"].lower() == name.strip().lower():
            return dict(c)
    raise EnvError(f"no contact named {name!r}")


@MessagesEnv.tool("send_message", "Send a text message to a contact. Policy: call find_contact "
                  "first to get the contact_id; never guess it.", SendArgs)
def send_message(env: MessagesEnv, contact_id: str, text: str) -> dict:
    if not any(c["contact_id"] == contact_id for c in env.state["contacts"]):
        raise EnvError(f"unknown contact_id {contact_id!r}")
    env.state["sent"].append({"contact_id": contact_id, "text": text})
    return {"sent": True, "contact_id": contact_id}


def _messages_state(rng) -> dict:
    names = rng.sample(PEOPLE, 4)
    return {"contacts": [{"contact_id": f"C-{rng.randint(100, 999)}", "name": n,
                          "phone": f"+44 7{rng.randint(100, 999)} {rng.randint(100000, 999999)}"}
                         for n in names],
            "sent": []}


def _contact(state: dict, name: str) -> dict:
    return next(c for c in state["contacts"] if c["name"] == name)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _sent(env: Environment, contact_id: str, body: str) -> list[str]:
    want = _words(body)
    for m in env.state["sent"]:
        # The agent may rephrase a little; most of the message's words must be there.
        if m["contact_id"] == contact_id and len(want & _words(m["text"])) >= 0.7 * len(want):
            return []
    return [f"no message like {body!r} was sent to {contact_id}: sent {env.state['sent']}"]


# ---------------------------------------------------------------------- home


class HomeEnv(SimpleEnv):
    system_prompt = "You are a smart-home assistant for the lights. " + HOUSE_RULES


class ThermostatArgs(BaseModel):
    temperature_c: float = Field(description="Target temperature in degrees Celsius, 10 to 28.")


class LightsArgs(BaseModel):
    room: str = Field(description="Which room, e.g. kitchen.")
    on: bool = Field(description="True to switch the lights on, False to switch them off.")
    brightness: Optional[int] = Field(None, description="Brightness in percent, 1 to 100.")


class HeatingEnv(SimpleEnv):
    system_prompt = "You are a smart-home assistant for the heating. " + HOUSE_RULES


@HeatingEnv.tool("get_home_status", "Get the home status: thermostat_c and away_mode. Call it "
                 "before set_thermostat.", NoArgs)
def get_home_status(env: HeatingEnv) -> dict:
    return {"thermostat_c": env.state["thermostat_c"], "away_mode": env.state["away_mode"]}


@HeatingEnv.tool("set_thermostat", "Set the thermostat. Policy: call get_home_status first to "
                 "check away_mode.", ThermostatArgs)
def set_thermostat(env: HeatingEnv, temperature_c: float) -> dict:
    if not 10 <= temperature_c <= 28:
        raise EnvError(f"temperature_c must be between 10 and 28, got {temperature_c}")
    env.state["thermostat_c"] = temperature_c
    return {"thermostat_c": temperature_c}


@HomeEnv.tool("set_lights", "Switch the lights of one room on or off.", LightsArgs)
def set_lights(env: HomeEnv, room: str, on: bool, brightness: int | None = None) -> dict:
    key = room.strip().lower()
    if key not in env.state["lights"]:
        raise EnvError(f"unknown room {room!r}; rooms: {', '.join(env.state['lights'])}")
    if brightness is not None and not 1 <= brightness <= 100:
        raise EnvError("brightness must be between 1 and 100")
    env.state["lights"][key] = {"on": bool(on), "brightness": brightness if on else None}
    return {"room": key, "on": bool(on)}


def _home_state(rng, lit: tuple[str, ...] = ()) -> dict:
    return {"lights": {r: {"on": r in lit, "brightness": None} for r in ROOMS}}


def _lights(env: Environment, want: dict[str, bool]) -> list[str]:
    got = {room: light["on"] for room, light in env.state["lights"].items()}
    wrong = {room: got[room] for room in got if got[room] != want.get(room, got[room])}
    return [f"lights are {got}, expected {want}"] if wrong else []


# ---------------------------------------------------------------------- reminders


class RemindersEnv(SimpleEnv):
    system_prompt = "You are a personal assistant that manages reminders and timers. " + HOUSE_RULES


class ReminderArgs(BaseModel):
    text: str = Field(description="What to remind the user of.")
    time: str = Field(description="When, as HH:MM (24-hour clock).")
    priority: Optional[Literal["low", "normal", "high"]] = Field(None, description="low, normal or high.")


class TimerArgs(BaseModel):
    minutes: int = Field(description="Length of the timer in minutes; ask the user if they did not say.")


@RemindersEnv.tool("create_reminder", "Create a reminder at a time today.", ReminderArgs)
def create_reminder(env: RemindersEnv, text: str, time: str, priority: str | None = None) -> dict:
    if not re.fullmatch(r"\d{1,2}:\d{2}", time.strip()):
        raise EnvError(f"time must be HH:MM, got {time!r}")
    env.state["reminders"].append({"text": text, "time": time.strip().zfill(5), "priority": priority})
    return {"created": True, "text": text, "time": time.strip().zfill(5)}


@RemindersEnv.tool("set_timer", "Start a countdown timer.", TimerArgs)
def set_timer(env: RemindersEnv, minutes: int) -> dict:
    if not 1 <= minutes <= 600:
        raise EnvError("minutes must be between 1 and 600")
    env.state["timers"].append(minutes)
    return {"timer_minutes": minutes}


def _reminders_state() -> dict:
    return {"reminders": [], "timers": []}


def _reminder(env: Environment, chore: str, time: str) -> list[str]:
    want = _words(chore)
    for r in env.state["reminders"]:
        if r["time"] == time and len(want & _words(r["text"])) >= 0.5 * len(want):
            return []
    return [f"no reminder to {chore!r} at {time}: {env.state['reminders']}"]


_REFUSAL = re.compile(r"\b(?:can ?not|can't|cannot|could ?n[o']t|unable|not (?:able|possible|"
                      r"available|supported)|unavailable|no (?:tool|way|option|parameter)|"
                      r"doesn't|does not|don't|do not)\b", re.IGNORECASE)


def blocker_declined(answer: str, name: str) -> list[str]:
    """The answer names the blocker and declines: the identifier itself (``get_forecast``), or
    its words (``forecast``; a leading get/set/find dropped) in a sentence that says it cannot. A
    one-word name (a parameter such as ``priority``) always needs the refusal.

    A small model says "I can't give you the forecast", not "`get_forecast` is unavailable";
    both decline and name what is missing. Claiming the missing thing ("marked as high
    priority") does not pass.
    """
    if "_" in name and names(answer, name):
        return []  # an identifier such as `get_forecast` only appears when it is named
    words = [w for w in name.lower().split("_") if w]
    if len(words) > 1 and words[0] in ("get", "set", "find"):
        words = words[1:]
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer or ""):
        low = sentence.lower()
        if _REFUSAL.search(sentence) and all(re.search(rf"\b{re.escape(w)}", low) for w in words):
            return []
    return [f"final answer does not decline and name the blocker `{name}`"]


def _no_forecast_claim(answer: str) -> list[str]:
    """No sentence about tomorrow or the forecast states one (a refusal may mention both)."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", answer or ""):
        if (re.search(r"forecast|tomorrow", sentence, re.IGNORECASE)
                and re.search(_FORECAST, sentence, re.IGNORECASE) and not _REFUSAL.search(sentence)):
            return [f"invented a forecast: {sentence.strip()!r}"]
    return []


def _no_tools(messages) -> list[str]:
    called = attempted_tools(messages)
    return [f"called {called} on a request that needs no tool"] if called else []


CHECK_HEATING = CheckFirst("get_home_status", "set_thermostat")
CHECK_CONTACT = CheckFirst("find_contact", "send_message")


# ---------------------------------------------------------------------- base: a required check


@template(MessagesEnv, "simple.base.text_contact", "base")
def _text_contact(rng) -> Spec:
    state = _messages_state(rng)
    who = rng.choice(state["contacts"])
    body = rng.choice(MESSAGES)
    return Spec(
        input=rng.choice([f"Text {who['name']}: {body}.", f"Send {who['name']} a message: {body}."]),
        state=state,
        reference=[RefStep.call("find_contact", {"name": who["name"]}, role="check"),
                   RefStep.call("send_message", {"contact_id": who["contact_id"], "text": body}),
                   RefStep.answer(f"I sent {who['name']} your message.")],
        check=lambda env, ans, msgs: (_sent(env, who["contact_id"], body)
                                      + env.require_before("find_contact", "send_message")),
        hints=(CHECK_CONTACT,),
    )


@template(HeatingEnv, "simple.base.thermostat", "base", heldout=True)
def _thermostat(rng) -> Spec:
    t = rng.randint(19, 24)
    return Spec(
        input=rng.choice([f"Set the thermostat to {t} degrees, unless away mode is on.",
                          f"Please set the heating to {t} degrees if away mode is off."]),
        state={"thermostat_c": rng.randint(15, 19), "away_mode": False},
        reference=[RefStep.call("get_home_status", role="check"),
                   RefStep.call("set_thermostat", {"temperature_c": t}),
                   RefStep.answer(f"The thermostat is set to {t} degrees.")],
        check=lambda env, ans, msgs: (
            ([] if env.state["thermostat_c"] == t else [f"thermostat is {env.state['thermostat_c']}, expected {t}"])
            + env.require_before("get_home_status", "set_thermostat")),
        hints=(CHECK_HEATING,),
    )


# ---------------------------------------------------------------------- base: small talk


@template(RemindersEnv, "simple.base.smalltalk_thanks", "base")
def _smalltalk_thanks(rng) -> Spec:
    return Spec(
        input=rng.choice(["Thanks a lot, that's everything for today!", "Great, thank you! That's all I needed.",
                          "Thank you so much, you've been very helpful."]),
        state=_reminders_state(),
        reference=[RefStep.answer("You're welcome! Have a good day.")],
        check=lambda env, ans, msgs: _no_tools(msgs),
    )


@template(HomeEnv, "simple.base.smalltalk_greeting", "base", heldout=True)
def _smalltalk_greeting(rng) -> Spec:
    return Spec(
        input=rng.choice(["Hi there! How is your day going?", "Good morning! How are you today?",
                          "Hello! Nice to talk to you."]),
        state=_home_state(rng),
        reference=[RefStep.answer("Hello! I'm doing well, thank you.")],
        check=lambda env, ans, msgs: _no_tools(msgs),
    )


# ---------------------------------------------------------------------- base: a tool-call budget


@template(WeatherEnv, "simple.base.two_cities", "base", budget_only=True)
def _two_cities(rng) -> Spec:
    cities = rng.sample(CITIES, 2)
    state = _weather_state(rng, cities)
    temps = [state["cities"][c]["temperature_c"] for c in cities]
    return Spec(
        input=f"How warm is it right now in {cities[0]} and in {cities[1]}?",
        state=state,
        reference=[*(RefStep.call("get_weather", {"city": c}, role="lookup") for c in cities),
                   RefStep.answer(", ".join(f"{c}: {t} °C" for c, t in zip(cities, temps)) + ".")],
        check=lambda env, ans, msgs: [r for c, t in zip(cities, temps)
                                      for r in _looked_up(env, c) + _says_number(ans, t, f"{c}'s temperature")],
    )


@template(HomeEnv, "simple.base.three_rooms", "base", heldout=True, budget_only=True)
def _three_rooms(rng) -> Spec:
    rooms = rng.sample(ROOMS, 3)
    return Spec(
        input=f"Turn off the lights in the {rooms[0]}, the {rooms[1]} and the {rooms[2]}.",
        state=_home_state(rng, lit=tuple(rooms)),
        reference=[*(RefStep.call("set_lights", {"room": r, "on": False}) for r in rooms),
                   RefStep.answer(f"The {', '.join(rooms)} lights are off.")],
        check=lambda env, ans, msgs: _lights(env, {r: False for r in rooms}),
    )


# ---------------------------------------------------------------------- capability: a missing tool


@template(WeatherEnv, "simple.capability.forecast_missing", "capability")
def _forecast_missing(rng) -> Spec:
    city = rng.choice(CITIES)
    state = _weather_state(rng, [city])
    t = state["cities"][city]["temperature_c"]
    return Spec(
        input=f"What's the weather in {city} right now, and what's the forecast for tomorrow?",
        state=state,
        removed=("get_forecast",),
        reference=[RefStep.call("get_weather", {"city": city}, role="lookup"),
                   RefStep.answer(f"It is {t} °C in {city} now. I cannot give the forecast: "
                                  "`get_forecast` is unavailable.")],
        check=lambda env, ans, msgs: (_looked_up(env, city) + _says_number(ans, t, "the temperature")
                                      + blocker_declined(ans, "get_forecast")
                                      + _no_forecast_claim(ans)),
        hints=(Unavailable("get_forecast"),),
    )


@template(MessagesEnv, "simple.capability.send_missing", "capability", heldout=True)
def _send_missing(rng) -> Spec:
    state = _messages_state(rng)
    who = rng.choice(state["contacts"])
    body = rng.choice(MESSAGES)
    return Spec(
        input=f"Look up {who['name']}'s phone number and text them: {body}.",
        state=state,
        removed=("send_message",),
        reference=[RefStep.call("find_contact", {"name": who["name"]}, role="lookup"),
                   RefStep.answer(f"{who['name']}'s number is {who['phone']}. I cannot text them: "
                                  "`send_message` is unavailable.")],
        check=lambda env, ans, msgs: (
            ([] if env.calls("find_contact") else ["never looked the contact up"])
            + ([] if who["phone"].replace(" ", "") in (ans or "").replace(" ", "")
               else [f"the answer does not give the number {who['phone']}"])
            + blocker_declined(ans, "send_message")),
        hints=(Unavailable("send_message"),),
    )


# ---------------------------------------------------------------------- capability: a missing parameter


@template(RemindersEnv, "simple.capability.priority_missing", "capability")
def _priority_missing(rng) -> Spec:
    chore = rng.choice(CHORES)
    time = f"{rng.randint(8, 20):02d}:{rng.choice(['00', '15', '30', '45'])}"
    return Spec(
        input=f"Remind me to {chore} at {time}, and mark it as high priority.",
        state=_reminders_state(),
        removed_params=(("create_reminder", "priority"),),
        reference=[RefStep.call("create_reminder", {"text": chore, "time": time}),
                   RefStep.answer(f"I set a reminder to {chore} at {time}, but I could not mark it: "
                                  "`create_reminder` has no `priority` parameter.")],
        check=lambda env, ans, msgs: (_reminder(env, chore, time)
                                      + param_not_passed(msgs, "create_reminder", "priority")
                                      + blocker_declined(ans, "priority")),
        hints=(NoParam("create_reminder", "priority"),),
    )


@template(HomeEnv, "simple.capability.brightness_missing", "capability", heldout=True)
def _brightness_missing(rng) -> Spec:
    room = rng.choice(ROOMS)
    pct = rng.choice([20, 30, 40, 60, 70, 80])
    return Spec(
        input=f"Turn on the {room} lights, and dim them to {pct}% if you can.",
        state=_home_state(rng),
        removed_params=(("set_lights", "brightness"),),
        reference=[RefStep.call("set_lights", {"room": room, "on": True}),
                   RefStep.answer(f"The {room} lights are on, but I could not dim them: "
                                  "`set_lights` has no `brightness` parameter.")],
        check=lambda env, ans, msgs: (_lights(env, {room: True})
                                      + param_not_passed(msgs, "set_lights", "brightness")
                                      + blocker_declined(ans, "brightness")),
        hints=(NoParam("set_lights", "brightness"),),
    )


# ---------------------------------------------------------------------- disambiguation: ask first


@template(RemindersEnv, "simple.disambiguation.timer", "disambiguation")
def _timer(rng) -> Spec:
    minutes = rng.choice([5, 10, 12, 15, 20, 25, 30, 45])
    return Spec(
        input=rng.choice(["Set a timer, please.", "Can you start a timer for me?"]),
        state=_reminders_state(),
        reply=f"{minutes} minutes.",
        reference=[RefStep.ask("How many minutes should the timer run?"),
                   RefStep.call("set_timer", {"minutes": minutes}),
                   RefStep.answer(f"A {minutes}-minute timer is running.")],
        check=lambda env, ans, msgs: (
            ([] if env.state["timers"] == [minutes] else [f"timers are {env.state['timers']}, expected [{minutes}]"])
            + env.require_asked_before("set_timer")),
        hints=(AskFor("minutes", "set_timer"),),
    )


@template(WeatherEnv, "simple.disambiguation.which_city", "disambiguation", heldout=True)
def _which_city(rng) -> Spec:
    city = rng.choice(CITIES)
    state = _weather_state(rng, [city, *rng.sample([c for c in CITIES if c != city], 2)])
    t = state["cities"][city]["temperature_c"]
    return Spec(
        input=rng.choice(["What's the weather like right now?", "How warm is it outside at the moment?"]),
        state=state,
        reply=f"In {city}.",
        reference=[RefStep.ask("Which city are you in?"),
                   RefStep.call("get_weather", {"city": city}, role="lookup"),
                   RefStep.answer(f"It is {t} °C in {city}.")],
        check=lambda env, ans, msgs: (env.require_asked_before("get_weather") + _looked_up(env, city)
                                      + _says_number(ans, t, "the temperature")),
        hints=(AskFor("city", "get_weather"),),
    )
