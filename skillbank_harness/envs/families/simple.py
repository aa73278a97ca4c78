"""A tier a small real model can play: one-tool requests in two tiny worlds.

The bundled car / retail / calendar tasks are beyond a 1.5B model (0 of 57 runs). This tier
keeps only templates on which the *unguided* Qwen2.5-Coder-1.5B succeeds between 30% and 70%
of the time, so there is room for a skill bank to move it both ways:

* a tool-call budget (the model repeats calls, or explains instead of calling): two cities'
  weather (evolution set) and three rooms' lights (held out);
* small talk that needs no tool (the model calls tools on it): a greeting (held out). Its
  evolution-set twin, a thank-you, succeeded 15 of 20 runs unguided (75%) and was dropped.

Templates for the other situations the bank is for -- a check a tool's description requires,
a missing tool, a missing parameter, a value to ask for -- were written and calibrated too,
in three rounds of wording; the unguided 1.5B model stayed at 0-20% on every one of them, so
they are not in the tier. The whole calibration table, with the wording each round changed, is
in ``benchmarks/RESULTS.md`` (``benchmarks/bench_real_model.py --calibrate``).

Every world is its own :class:`SimpleEnv` subclass with one or two tools, so an agent sees only
the tools its request is about.
"""

from __future__ import annotations

import re
from typing import Optional

from pydantic import BaseModel, Field

from skillbank_harness.envs.base import (
    EnvError,
    Environment,
    RefStep,
    Spec,
    attempted_tools,
    template,
)

CITIES = ("Paris", "Oslo", "Lisbon", "Dublin", "Vienna", "Prague", "Madrid", "Berlin", "Rome",
          "Athens", "Warsaw", "Zurich")
CONDITIONS = ("sunny", "cloudy", "light rain", "windy", "foggy", "snowing")
ROOMS = ("kitchen", "bedroom", "living room", "office", "hallway", "bathroom")

# What a careful operator tells a small agent. The three-rooms template carries it (calibrated
# with it: 70%); in the other worlds it pushed small talk to 90-100% and two cities to 10%.
HOUSE_RULES = ("Use the tools when the request needs them, then answer in one or two short "
               "sentences. If part of a request cannot be done with your tools, do the rest and "
               "say which part you cannot do. If a request leaves out a value a tool needs, ask "
               "the user for it.")


class SimpleEnv(Environment):
    """The common base of the simple tier's worlds (each subclass has its own tools)."""

    family = "simple"
    system_prompt = "You are a helpful assistant. Use the tools when they are needed, then answer briefly."


# ---------------------------------------------------------------------- weather


class WeatherEnv(SimpleEnv):
    system_prompt = ("You are a weather assistant. Use the tools to look up the weather, then "
                     "answer in one or two short sentences.")


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


# ---------------------------------------------------------------------- lights


class HomeEnv(SimpleEnv):
    system_prompt = ("You are a smart-home assistant for the lights. Use the tools, then answer "
                     "in one or two short sentences.")


class LightsArgs(BaseModel):
    room: str = Field(description="Which room, e.g. kitchen.")
    on: bool = Field(description="True to switch the lights on, False to switch them off.")
    brightness: Optional[int] = Field(None, description="Brightness in percent, 1 to 100.")


@HomeEnv.tool("set_lights", "Switch the lights of one room on or off.", LightsArgs)
def set_lights(env: HomeEnv, room: str, on: bool, brightness: int | None = None) -> dict:
    key = room.strip().lower()
    if key not in env.state["lights"]:
        raise EnvError(f"unknown room {room!r}; rooms: {', '.join(env.state['lights'])}")
    if brightness is not None and not 1 <= brightness <= 100:
        raise EnvError("brightness must be between 1 and 100")
    env.state["lights"][key] = {"on": bool(on), "brightness": brightness if on else None}
    return {"room": key, "on": bool(on)}


def _home_state(lit: tuple[str, ...] = ()) -> dict:
    return {"lights": {r: {"on": r in lit, "brightness": None} for r in ROOMS}}


def _lights(env: Environment, want: dict[str, bool]) -> list[str]:
    got = {room: light["on"] for room, light in env.state["lights"].items()}
    wrong = {room: got[room] for room in got if got[room] != want.get(room, got[room])}
    return [f"lights are {got}, expected {want}"] if wrong else []


def _no_tools(messages) -> list[str]:
    called = attempted_tools(messages)
    return [f"called {called} on a request that needs no tool"] if called else []


# ---------------------------------------------------------------------- small talk


@template(HomeEnv, "simple.base.smalltalk_greeting", "base", heldout=True)
def _smalltalk_greeting(rng) -> Spec:
    return Spec(
        input=rng.choice(["Hi there! How is your day going?", "Good morning! How are you today?",
                          "Hello! Nice to talk to you."]),
        state=_home_state(),
        reference=[RefStep.answer("Hello! I'm doing well, thank you.")],
        check=lambda env, ans, msgs: _no_tools(msgs),
    )


# ---------------------------------------------------------------------- a tool-call budget


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
        state=_home_state(lit=tuple(rooms)),
        reference=[*(RefStep.call("set_lights", {"room": r, "on": False}) for r in rooms),
                   RefStep.answer(f"The {', '.join(rooms)} lights are off.")],
        check=lambda env, ans, msgs: _lights(env, {r: False for r in rooms}),
        system_prompt="You are a smart-home assistant for the lights. " + HOUSE_RULES,
    )
