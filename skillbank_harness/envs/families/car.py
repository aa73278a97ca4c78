"""In-car assistant: climate, windows, seat heaters, navigation.

Policies (stated in the action tools' descriptions, enforced by the verifiers):
``get_vehicle_status`` before ``set_climate`` (battery check); ``get_route`` before
``start_navigation``.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from skillbank import Lesson, LessonKind
from skillbank_harness.envs.base import (
    EnvError,
    Environment,
    NoArgs,
    RefStep,
    Spec,
    blocker_named,
    no_value_claim,
    param_not_passed,
    template,
)

POSITIONS = ("driver", "passenger", "rear_left", "rear_right")
SEATS = ("driver", "passenger")
PLACES = (
    "Lakeside Mall", "Central Station", "Harbor View Park", "Old Town Square", "Riverside Clinic",
    "Northgate Library", "Maple Street Bakery", "Sunset Beach", "City Museum", "Westfield Stadium",
    "Greenhill Golf Club", "Pinewood Campus",
)
_NUMBER = r"(?<![\w-])\d+(?:\.\d+)?(?![\w:-])"


class CarEnv(Environment):
    family = "car"
    system_prompt = (
        "You are an in-car voice assistant. Operate the vehicle with the tools on the driver's "
        "behalf, then answer in one or two short sentences."
    )


class ClimateArgs(BaseModel):
    temperature_c: float = Field(description="Target cabin temperature in degrees Celsius, 16 to 28.")
    fan_speed: Optional[int] = Field(None, description="Fan speed, 1 (low) to 5 (high).")


class OpenWindowArgs(BaseModel):
    position: Literal["driver", "passenger", "rear_left", "rear_right"] = Field(
        description="Which window: driver, passenger, rear_left or rear_right.")
    percent: int = Field(100, description="How far to open it, in percent (1-100).")


class CloseWindowArgs(BaseModel):
    position: Literal["driver", "passenger", "rear_left", "rear_right"] = Field(
        description="Which window: driver, passenger, rear_left or rear_right.")


class SeatArgs(BaseModel):
    seat: Literal["driver", "passenger"] = Field(description="Which seat: driver or passenger.")
    level: int = Field(description="Heater level from 0 (off) to 3.")


class DestinationArgs(BaseModel):
    destination: str = Field(description="Name of the place to go to, as the driver said it.")


@CarEnv.tool(
    "get_vehicle_status",
    "Get the vehicle status: battery_pct, range_km (driving range), cabin_temperature_c, "
    "doors_locked and windows (percent open).",
    NoArgs,
)
def get_vehicle_status(env: CarEnv) -> dict:
    s = env.state
    return {
        "battery_pct": s["battery_pct"],
        "range_km": s["range_km"],
        "cabin_temperature_c": s["cabin_temperature_c"],
        "doors_locked": s["doors_locked"],
        "windows": dict(s["windows"]),
    }


@CarEnv.tool(
    "set_climate",
    "Turn on the climate control and set the cabin temperature. "
    "Policy: call get_vehicle_status first to check the battery.",
    ClimateArgs,
)
def set_climate(env: CarEnv, temperature_c: float, fan_speed: int | None = None) -> dict:
    if not 16 <= temperature_c <= 28:
        raise EnvError(f"temperature_c must be between 16 and 28, got {temperature_c}")
    if fan_speed is not None and not 1 <= fan_speed <= 5:
        raise EnvError(f"fan_speed must be between 1 and 5, got {fan_speed}")
    env.state["climate"] = {"on": True, "temperature_c": temperature_c}
    if fan_speed is None:
        return {"climate": "on", "temperature_c": temperature_c}
    env.state["fan_speed"] = fan_speed
    return {"climate": "on", "temperature_c": temperature_c, "fan_speed": fan_speed}


@CarEnv.tool("open_window", "Open a window.", OpenWindowArgs)
def open_window(env: CarEnv, position: str, percent: int = 100) -> dict:
    if not 1 <= percent <= 100:
        raise EnvError("percent must be between 1 and 100")
    env.state["windows"][position] = percent
    return {"position": position, "percent_open": percent}


@CarEnv.tool("close_window", "Close a window.", CloseWindowArgs)
def close_window(env: CarEnv, position: str) -> dict:
    env.state["windows"][position] = 0
    return {"position": position, "percent_open": 0}


@CarEnv.tool("set_seat_heater", "Set a seat heater level.", SeatArgs)
def set_seat_heater(env: CarEnv, seat: str, level: int) -> dict:
    if not 0 <= level <= 3:
        raise EnvError("level must be between 0 and 3")
    env.state["seat_heaters"][seat] = level
    return {"seat": seat, "level": level}


@CarEnv.tool(
    "get_route",
    "Plan a route to a place: distance_km, duration_min and whether it is reachable on the "
    "current charge.",
    DestinationArgs,
)
def get_route(env: CarEnv, destination: str) -> dict:
    place = _place(env, destination)
    km = env.state["places"][place]
    return {"destination": place, "distance_km": km, "duration_min": round(km * 1.4),
            "reachable": True}


@CarEnv.tool(
    "start_navigation",
    "Start turn-by-turn navigation to a place. Policy: call get_route for the place first.",
    DestinationArgs,
)
def start_navigation(env: CarEnv, destination: str) -> dict:
    place = _place(env, destination)
    env.state["navigation"] = place
    return {"navigating_to": place}


@CarEnv.tool("lock_doors", "Lock all doors.", NoArgs)
def lock_doors(env: CarEnv) -> dict:
    env.state["doors_locked"] = True
    return {"doors_locked": True}


def _place(env: CarEnv, destination: str) -> str:
    for place in env.state["places"]:
        if place.lower() == destination.strip().lower():
            return place
    raise EnvError(f"unknown place {destination!r}")


# ---------------------------------------------------------------------- world and helpers


def _state(rng, *, range_known: bool = True) -> dict:
    battery = rng.randint(35, 95)
    places = rng.sample(PLACES, 5)
    return {
        "battery_pct": battery,
        "range_km": battery * 4 + rng.randint(-20, 20) if range_known else None,
        "cabin_temperature_c": rng.randint(2, 34),
        "doors_locked": True,
        "windows": {p: 0 for p in POSITIONS},
        "seat_heaters": {s: 0 for s in SEATS},
        "climate": {"on": False, "temperature_c": None},
        "navigation": None,
        "places": {p: rng.randint(3, 60) for p in places},
    }


def _say(position: str) -> str:
    return position.replace("_", " ")


def _climate(env: CarEnv, t: float) -> list[str]:
    c = env.state["climate"]
    if not c["on"] or c["temperature_c"] is None or float(c["temperature_c"]) != float(t):
        return [f"climate is {c}, expected on at {t}"]
    return []


def _seat(env: CarEnv, seat: str, level: int) -> list[str]:
    heaters = env.state["seat_heaters"]
    want = {s: (level if s == seat else 0) for s in SEATS}
    return [] if heaters == want else [f"seat heaters are {heaters}, expected {want}"]


def _windows(env: CarEnv, position: str | None, percent: int = 100) -> list[str]:
    w = env.state["windows"]
    want = {p: (percent if p == position else 0) for p in POSITIONS}
    return [] if w == want else [f"windows are {w}, expected {want}"]


def _navigation(env: CarEnv, place: str) -> list[str]:
    nav = env.state["navigation"]
    return [] if nav == place else [f"navigation is {nav!r}, expected {place!r}"]


def _climate_checked(env: CarEnv) -> list[str]:
    return env.require_before("get_vehicle_status", "set_climate")


def _route_checked(env: CarEnv) -> list[str]:
    return env.require_before(
        "get_route", "start_navigation",
        lambda c, a: str(c.args.get("destination", "")).lower() == str(a.args.get("destination", "")).lower(),
    )


CHECK_CLIMATE = Lesson(kind=LessonKind.check_first, check="get_vehicle_status", tool="set_climate")
CHECK_ROUTE = Lesson(kind=LessonKind.check_first, check="get_route", tool="start_navigation")


# ---------------------------------------------------------------------- base


@template(CarEnv, "car.base.climate", "base")
def _base_climate(rng) -> Spec:
    t = rng.randint(18, 26)
    lead = rng.choice(["", "Please ", "Hey, "])
    return Spec(
        input=f"{lead}{'set' if lead else 'Set'} the climate to {t} degrees.",
        state=_state(rng),
        reference=[RefStep.call("get_vehicle_status", role="check"),
                   RefStep.call("set_climate", {"temperature_c": t}),
                   RefStep.answer(f"The climate is on at {t} degrees.")],
        check=lambda env, ans, msgs: _climate(env, t) + _climate_checked(env),
        hints=(CHECK_CLIMATE,),
    )


@template(CarEnv, "car.base.comfort", "base")
def _base_comfort(rng) -> Spec:
    t, seat, level = rng.randint(19, 25), rng.choice(SEATS), rng.randint(1, 3)
    return Spec(
        input=(f"It's freezing in here: set the climate to {t} degrees and turn the {seat} seat "
               f"heater to level {level}."),
        state=_state(rng),
        reference=[RefStep.call("get_vehicle_status", role="check"),
                   RefStep.call("set_climate", {"temperature_c": t}),
                   RefStep.call("set_seat_heater", {"seat": seat, "level": level}),
                   RefStep.answer(f"Climate on at {t} degrees and the {seat} seat heater at level {level}.")],
        check=lambda env, ans, msgs: _climate(env, t) + _seat(env, seat, level) + _climate_checked(env),
        hints=(CHECK_CLIMATE,),
    )


@template(CarEnv, "car.base.navigate", "base", heldout=True)
def _base_navigate(rng) -> Spec:
    state = _state(rng)
    place = rng.choice(sorted(state["places"]))
    return Spec(
        input=f'Navigate to "{place}", please.',
        state=state,
        reference=[RefStep.call("get_route", {"destination": place}, role="check"),
                   RefStep.call("start_navigation", {"destination": place}),
                   RefStep.answer(f"Navigating to {place}.")],
        check=lambda env, ans, msgs: _navigation(env, place) + _route_checked(env),
        hints=(CHECK_ROUTE,),
    )


# ---------------------------------------------------------------------- capability limits


@template(CarEnv, "car.capability.window_missing", "capability")
def _cap_window(rng) -> Spec:
    t, pos = rng.randint(18, 26), rng.choice(POSITIONS)
    return Spec(
        input=f"Open the {_say(pos)} window and set the climate to {t} degrees.",
        state=_state(rng),
        removed=("open_window",),
        reference=[RefStep.call("get_vehicle_status", role="check"),
                   RefStep.call("set_climate", {"temperature_c": t}),
                   RefStep.answer(f"The climate is on at {t} degrees. I could not open the window: "
                           "`open_window` is unavailable.")],
        check=lambda env, ans, msgs: (_climate(env, t) + _climate_checked(env)
                                      + _windows(env, None) + blocker_named(ans, "open_window")),
        hints=(CHECK_CLIMATE, Lesson(kind=LessonKind.missing_tool, tool="open_window")),
    )


@template(CarEnv, "car.capability.range_unknown", "capability")
def _cap_range(rng) -> Spec:
    t = rng.randint(18, 26)
    return Spec(
        input=f"What is my driving range right now? Also set the climate to {t} degrees.",
        state=_state(rng, range_known=False),
        reference=[RefStep.call("get_vehicle_status", role="check"),
                   RefStep.call("set_climate", {"temperature_c": t}),
                   RefStep.answer(f"The climate is on at {t} degrees. `range_km` is unknown, so I cannot "
                           "tell you your range.")],
        check=lambda env, ans, msgs: (_climate(env, t) + _climate_checked(env)
                                      + blocker_named(ans, "range_km")
                                      + no_value_claim(ans, "range_km", ["range"], _NUMBER)),
        hints=(CHECK_CLIMATE, Lesson(kind=LessonKind.unknown_field, tool="get_vehicle_status", field="range_km")),
    )


@template(CarEnv, "car.capability.fan_missing", "capability", heldout=True)
def _cap_fan(rng) -> Spec:
    t, fan = rng.randint(18, 26), rng.randint(1, 5)
    return Spec(
        input=f"Set the climate to {t} degrees with fan speed {fan}.",
        state=_state(rng),
        removed_params=(("set_climate", "fan_speed"),),
        reference=[RefStep.call("get_vehicle_status", role="check"),
                   RefStep.call("set_climate", {"temperature_c": t}),
                   RefStep.answer(f"The climate is on at {t} degrees. I could not set the fan: "
                           "`set_climate` has no `fan_speed` parameter.")],
        check=lambda env, ans, msgs: (_climate(env, t) + _climate_checked(env)
                                      + param_not_passed(msgs, "set_climate", "fan_speed")
                                      + blocker_named(ans, "fan_speed")),
        hints=(CHECK_CLIMATE, Lesson(kind=LessonKind.missing_parameter, tool="set_climate", parameter="fan_speed")),
    )


@template(CarEnv, "car.capability.seat_missing", "capability")
def _cap_seat(rng) -> Spec:
    state = _state(rng)
    seat, level = rng.choice(SEATS), rng.randint(1, 3)
    place = rng.choice(sorted(state["places"]))
    return Spec(
        input=f'Turn the {seat} seat heater to level {level} and navigate to "{place}".',
        state=state,
        removed=("set_seat_heater",),
        reference=[RefStep.call("get_route", {"destination": place}, role="check"),
                   RefStep.call("start_navigation", {"destination": place}),
                   RefStep.answer(f"Navigating to {place}. I could not change the seat heater: "
                           "`set_seat_heater` is unavailable.")],
        check=lambda env, ans, msgs: (_navigation(env, place) + _route_checked(env)
                                      + blocker_named(ans, "set_seat_heater")),
        hints=(CHECK_ROUTE, Lesson(kind=LessonKind.missing_tool, tool="set_seat_heater")),
    )


# ---------------------------------------------------------------------- disambiguation


@template(CarEnv, "car.disambiguation.window", "disambiguation")
def _dis_window(rng) -> Spec:
    pos = rng.choice(POSITIONS)
    return Spec(
        input=rng.choice(["Please open the window.", "Open the window, it's stuffy in here."]),
        state=_state(rng),
        reply=f"The {_say(pos)} window.",
        reference=[RefStep.ask("Which window should I open: driver, passenger, rear_left or rear_right?"),
                   RefStep.call("open_window", {"position": pos}),
                   RefStep.answer(f"The {_say(pos)} window is open.")],
        check=lambda env, ans, msgs: _windows(env, pos) + env.require_asked_before("open_window"),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="position", tool="open_window"),),
    )


@template(CarEnv, "car.disambiguation.seat", "disambiguation")
def _dis_seat(rng) -> Spec:
    seat, level = rng.choice(SEATS), rng.randint(1, 3)
    return Spec(
        input=f"Turn the seat heater to level {level}.",
        state=_state(rng),
        reply=f"The {seat} seat, please.",
        reference=[RefStep.ask("Which seat: driver or passenger?"),
                   RefStep.call("set_seat_heater", {"seat": seat, "level": level}),
                   RefStep.answer(f"The {seat} seat heater is at level {level}.")],
        check=lambda env, ans, msgs: _seat(env, seat, level) + env.require_asked_before("set_seat_heater"),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="seat", tool="set_seat_heater"),),
    )


@template(CarEnv, "car.disambiguation.climate", "disambiguation", heldout=True)
def _dis_climate(rng) -> Spec:
    t = rng.randint(18, 26)
    return Spec(
        input=rng.choice(["Turn on the climate, please.", "Please turn on the climate."]),
        state=_state(rng),
        reply=f"{t} degrees, please.",
        reference=[RefStep.ask("What temperature would you like?"),
                   RefStep.call("get_vehicle_status", role="check"),
                   RefStep.call("set_climate", {"temperature_c": t}),
                   RefStep.answer(f"The climate is on at {t} degrees.")],
        check=lambda env, ans, msgs: (_climate(env, t) + _climate_checked(env)
                                      + env.require_asked_before("set_climate")),
        hints=(Lesson(kind=LessonKind.ask_for, parameter="temperature_c", tool="set_climate"), CHECK_CLIMATE),
    )
