"""A tier for small real models, calibrated by headroom: six lessons in four toolsets.

Each of the four worlds (weather, home, shop, calendar) is one toolset of three or four tools;
every template of a world sees all of that world's tools, as an agent of that toolset would.
The templates cover six lessons a skill bank is for, each with two evolution-set templates and
two held-out ones, in different worlds:

=================  =================================  =================================
lesson             evolution set                      held out
=================  =================================  =================================
check first        home.lock_door, shop.refund        shop.cancel, calendar.cancel_event
missing tool/param weather.alert_missing,             home.dim_missing,
                   shop.address_missing               calendar.invite_missing
budget             weather.warmer_city,               shop.two_orders,
                   home.two_rooms_on                  calendar.two_days
no tool            weather.thanks, shop.compliment    home.greeting, calendar.capabilities
argument shape     home.heating_fahrenheit,           weather.local_name,
                   calendar.time_24h                  shop.bare_number
ask, don't guess   home.heating_ask, calendar.call_ask weather.rain_tomorrow, shop.status_ask
=================  =================================  =================================

A template is kept for the real-model benchmark when a person's hint for it (the oracle, in
``benchmarks/oracle_hints.py``, never in a bank) raises the unguided model's pass^1 by at least
20 points: a lesson can help this model there, whatever its unguided rate. The wording of every
template here and of every hint was committed before any bank ran on them.

Verifiers are strict where a real system would be: a refused call counts against a run (a
policy refusal is a failed action; an argument in the wrong shape is a call that failed), and a
check must come before the first attempt of its action, not after a refusal.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Optional

from pydantic import BaseModel, Field

from skillbank_harness.envs.base import (
    EnvError,
    Environment,
    RefStep,
    Spec,
    attempted_tools,
    param_not_passed,
    template,
)

TODAY = dt.date(2027, 3, 8)  # a Monday; every world's system prompt says so
_TODAY_LINE = "Today is Monday, 8 March 2027."

# A decline in plain words ("I can't set alerts", "there is no tool to change the address").
_DECLINE = re.compile(
    r"\b(can ?not|can't|can’t|unable|not able|don't have|don’t have|do not have|no (?:tool|way|"
    r"option|function|ability)|not (?:possible|supported|available)|isn't (?:possible|available|"
    r"supported)|doesn't (?:support|allow)|does not (?:support|allow)|unfortunately)\b",
    re.IGNORECASE)


class SmallEnv(Environment):
    """The common base of the small tier's worlds (each subclass is one toolset)."""

    family = "small"


def _refused(env: Environment) -> list[str]:
    return [f"`{c.tool}` refused {c.args}: {c.error}" for c in env.calls(ok_only=False) if not c.ok]


def _declines(answer: str, what: str) -> list[str]:
    return [] if _DECLINE.search(answer or "") else [f"the answer does not say it cannot {what}"]


def _no_tools(messages) -> list[str]:
    called = attempted_tools(messages)
    return [f"called {called} on a request that needs no tool"] if called else []


def _mentions(answer: str, value: object, what: str) -> list[str]:
    text = str(value)
    pattern = (rf"(?<![\d.]){re.escape(text)}(?![\d])" if text.lstrip("-").isdigit()
               else re.escape(text))
    return [] if re.search(pattern, answer or "", re.IGNORECASE) else [
        f"the answer does not give {what} ({text})"]


def _asked_first(env: Environment, tools: tuple[str, ...]) -> list[str]:
    first_ask = next((a.seq for a in env.asks()), None)
    first_call = next((c.seq for c in env.calls(ok_only=False) if c.tool in tools), None)
    if first_call is None:
        return [] if first_ask is not None else ["never asked the user"]
    if first_ask is None or first_ask > first_call:
        return [f"called `{env.log[first_call].tool}` before asking the user (it guessed)"]
    return []


def _checked_first(env: Environment, check: str, action: str, key: str) -> list[str]:
    """``check`` ran, for the same ``key`` argument, before the first attempt of ``action``."""
    attempts = env.calls(action, ok_only=False)
    if not attempts:
        return [f"never called `{action}`"]
    first = attempts[0]
    value = str(first.args.get(key, "")).lower()
    if not any(c.seq < first.seq and str(c.args.get(key, "")).lower() == value
               for c in env.calls(check)):
        return [f"`{action}` was tried before `{check}` for the same {key}"]
    return []


# ============================================================================ weather

CITIES = ("Paris", "Oslo", "Lisbon", "Dublin", "Vienna", "Prague", "Madrid", "Berlin", "Rome",
          "Athens", "Warsaw", "Munich", "Cologne", "Florence")
LOCAL_NAMES = {"München": "Munich", "Wien": "Vienna", "Praha": "Prague", "Lisboa": "Lisbon",
               "Köln": "Cologne", "Firenze": "Florence", "Roma": "Rome", "Warszawa": "Warsaw"}
CONDITIONS = ("sunny", "cloudy", "light rain", "windy", "foggy", "snow")


class WeatherDesk(SmallEnv):
    system_prompt = ("You are a weather assistant. " + _TODAY_LINE + " Use the tools to look up "
                     "the weather, then answer in one or two short sentences.")


class CityArgs(BaseModel):
    city: str = Field(description="City name in English, e.g. Munich.")


class ForecastArgs(CityArgs):
    days: int = Field(1, description="How many days ahead, 1 (tomorrow) to 3.")


class AlertArgs(CityArgs):
    condition: str = Field(description="The weather condition to alert on, e.g. snow.")


def _city(env: Environment, city: str) -> dict:
    for name, data in env.state["cities"].items():
        if name.lower() == city.strip().lower():
            return {"city": name, **data}
    raise EnvError(f"unknown city {city!r}")


@WeatherDesk.tool("get_weather", "Get the current weather in a city: condition and "
                  "temperature_c.", CityArgs)
def get_weather(env: WeatherDesk, city: str) -> dict:
    found = _city(env, city)
    return {"city": found["city"], "condition": found["condition"],
            "temperature_c": found["temperature_c"]}


@WeatherDesk.tool("get_forecast", "Get the forecast for the next days in a city: condition, "
                  "high_c and low_c per day (day 1 is tomorrow).", ForecastArgs)
def get_forecast(env: WeatherDesk, city: str, days: int = 1) -> dict:
    if not 1 <= int(days) <= 3:
        raise EnvError("days must be between 1 and 3")
    found = _city(env, city)
    return {"city": found["city"], "days": found["forecast"][:int(days)]}


@WeatherDesk.tool("set_alert", "Alert the user when a condition starts in a city.", AlertArgs)
def set_alert(env: WeatherDesk, city: str, condition: str) -> dict:
    found = _city(env, city)
    env.state.setdefault("alerts", []).append({"city": found["city"], "condition": condition})
    return {"ok": True, "city": found["city"], "condition": condition}


def _weather_state(rng, cities) -> dict:
    temps = rng.sample(range(-4, 31), len(cities))  # distinct: "which is warmer" has one answer
    return {"cities": {c: {"condition": rng.choice(CONDITIONS), "temperature_c": t,
                           "forecast": [{"day": d, "condition": rng.choice(CONDITIONS),
                                         "high_c": rng.randint(5, 30), "low_c": rng.randint(-8, 4)}
                                        for d in (1, 2, 3)]}
                       for c, t in zip(cities, temps)}}


def _looked_up(env: Environment, city: str, tools=("get_weather",)) -> list[str]:
    if any(c.args.get("city", "").lower() == city.lower() for t in tools for c in env.calls(t)):
        return []
    return [f"never looked up the weather in {city}"]


@template(WeatherDesk, "small.weather.thanks", "base", budget_variant=False)
def _weather_thanks(rng) -> Spec:
    return Spec(
        input=rng.choice(["Thanks, that's all I needed!", "Great, thank you so much!",
                          "Perfect, thanks for your help."]),
        state=_weather_state(rng, rng.sample(CITIES, 2)),
        reference=[RefStep.answer("You're welcome!")],
        check=lambda env, ans, msgs: _no_tools(msgs),
    )


@template(WeatherDesk, "small.weather.warmer_city", "base", budget_only=True)
def _warmer_city(rng) -> Spec:
    a, b = rng.sample(CITIES, 2)
    state = _weather_state(rng, [a, b])
    ta, tb = (state["cities"][c]["temperature_c"] for c in (a, b))
    warmer = a if ta > tb else b
    return Spec(
        input=rng.choice([f"Which is warmer right now, {a} or {b}?",
                          f"Is it warmer in {a} or in {b} at the moment?"]),
        state=state,
        reference=[RefStep.call("get_weather", {"city": a}, role="lookup"),
                   RefStep.call("get_weather", {"city": b}, role="lookup"),
                   RefStep.answer(f"{warmer} is warmer ({a}: {ta} °C, {b}: {tb} °C).")],
        check=lambda env, ans, msgs: (_looked_up(env, a) + _looked_up(env, b)
                                      + _mentions(ans, warmer, "the warmer city")),
    )


@template(WeatherDesk, "small.weather.alert_missing", "capability", budget_variant=False)
def _alert_missing(rng) -> Spec:
    city = rng.choice(CITIES)
    condition = rng.choice(["snow", "rain", "fog"])
    return Spec(
        input=rng.choice([f"Please alert me when it starts to {condition} in {city}.",
                          f"Can you set an alert for {condition} in {city}?"]),
        state=_weather_state(rng, [city]),
        reference=[RefStep.answer(f"I can't set weather alerts: there is no tool for that.")],
        check=lambda env, ans, msgs: _declines(ans, "set an alert"),
        removed=("set_alert",),
    )


@template(WeatherDesk, "small.weather.local_name", "base", heldout=True, budget_variant=False)
def _local_name(rng) -> Spec:
    local, english = rng.choice(sorted(LOCAL_NAMES.items()))
    state = _weather_state(rng, [english])
    temp = state["cities"][english]["temperature_c"]
    return Spec(
        input=rng.choice([f"How warm is it in {local} right now?",
                          f"What's the temperature in {local} at the moment?"]),
        state=state,
        reference=[RefStep.call("get_weather", {"city": english}, role="lookup"),
                   RefStep.answer(f"It is {temp} °C in {english}.")],
        check=lambda env, ans, msgs: (_refused(env) + _looked_up(env, english)
                                      + _mentions(ans, temp, "the temperature")),
    )


@template(WeatherDesk, "small.weather.rain_tomorrow", "disambiguation", heldout=True,
          budget_variant=False)
def _rain_tomorrow(rng) -> Spec:
    city = rng.choice(CITIES)
    state = _weather_state(rng, [city])
    condition = state["cities"][city]["forecast"][0]["condition"]
    return Spec(
        input=rng.choice(["Will it rain tomorrow?", "What will the weather be like tomorrow?"]),
        state=state,
        reference=[RefStep.ask("Which city?"),
                   RefStep.call("get_forecast", {"city": city, "days": 1}, role="lookup"),
                   RefStep.answer(f"Tomorrow in {city}: {condition}.")],
        check=lambda env, ans, msgs: (_asked_first(env, ("get_forecast", "get_weather"))
                                      + _looked_up(env, city, ("get_forecast",))
                                      + _mentions(ans, condition, "tomorrow's condition")),
        reply=f"In {city}.",
    )


# ============================================================================ home

DOORS = ("front", "back", "garage", "patio")
ROOMS = ("kitchen", "bedroom", "living room", "office", "hallway", "bathroom")


class HomeHub(SmallEnv):
    system_prompt = ("You are a smart-home assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class DoorArgs(BaseModel):
    door: str = Field(description="Which door: front, back, garage or patio.")


class LightsArgs(BaseModel):
    room: str = Field(description="Which room, e.g. kitchen.")
    on: bool = Field(description="True to switch the lights on, False to switch them off.")
    brightness: Optional[int] = Field(None, description="Brightness in percent, 1 to 100.")


class HeatingArgs(BaseModel):
    temperature_c: int = Field(description="Target temperature in degrees Celsius, 5 to 30.")


def _door(env: Environment, door: str) -> str:
    key = door.strip().lower().removesuffix(" door")
    if key not in env.state["doors"]:
        raise EnvError(f"unknown door {door!r}")
    return key


@HomeHub.tool("get_door_status", "Whether a door is open or closed, and locked or not.", DoorArgs)
def get_door_status(env: HomeHub, door: str) -> dict:
    key = _door(env, door)
    env.state.setdefault("checked", []).append(key)
    return {"door": key, **env.state["doors"][key]}


@HomeHub.tool("lock_door", "Lock a door. Policy: call get_door_status for that door first.",
              DoorArgs)
def lock_door(env: HomeHub, door: str) -> dict:
    key = _door(env, door)
    if key not in env.state.get("checked", []):
        raise EnvError(f"refused by policy: call get_door_status for the {key} door first")
    env.state["doors"][key]["locked"] = True
    return {"door": key, "locked": True}


@HomeHub.tool("set_lights", "Switch the lights of one room on or off.", LightsArgs)
def set_lights(env: HomeHub, room: str, on: bool, brightness: int | None = None) -> dict:
    key = room.strip().lower()
    if key not in env.state["lights"]:
        raise EnvError(f"unknown room {room!r}")
    if brightness is not None and not 1 <= brightness <= 100:
        raise EnvError("brightness must be between 1 and 100")
    env.state["lights"][key] = {"on": bool(on), "brightness": brightness if on else None}
    return {"room": key, "on": bool(on)}


@HomeHub.tool("set_heating", "Set the heating's target temperature.", HeatingArgs)
def set_heating(env: HomeHub, temperature_c: int) -> dict:
    if not 5 <= int(temperature_c) <= 30:
        raise EnvError("temperature_c must be between 5 and 30")
    env.state["heating_c"] = int(temperature_c)
    return {"temperature_c": int(temperature_c)}


def _home_state(lit: tuple[str, ...] = ()) -> dict:
    return {"doors": {d: {"open": False, "locked": False} for d in DOORS},
            "lights": {r: {"on": r in lit, "brightness": None} for r in ROOMS},
            "heating_c": 17}


def _lights_on(env: Environment, rooms) -> list[str]:
    off = [r for r in rooms if not env.state["lights"][r]["on"]]
    return [f"the lights are still off in {off}"] if off else []


def _heating(env: Environment, want: int, tolerance: int = 0) -> list[str]:
    got = env.state["heating_c"]
    return [] if abs(got - want) <= tolerance else [f"the heating is at {got} °C, not {want} °C"]


@template(HomeHub, "small.home.lock_door", "base", budget_variant=False)
def _lock_door(rng) -> Spec:
    door = rng.choice(DOORS)
    def check(env, ans, msgs):
        locked = [] if env.state["doors"][door]["locked"] else [f"the {door} door is not locked"]
        return locked + _checked_first(env, "get_door_status", "lock_door", "door")
    return Spec(
        input=rng.choice([f"Lock the {door} door, please.", f"Please lock the {door} door."]),
        state=_home_state(),
        reference=[RefStep.call("get_door_status", {"door": door}, role="check"),
                   RefStep.call("lock_door", {"door": door}),
                   RefStep.answer(f"The {door} door is locked.")],
        check=check,
    )


@template(HomeHub, "small.home.two_rooms_on", "base", budget_only=True)
def _two_rooms_on(rng) -> Spec:
    rooms = rng.sample(ROOMS, 2)
    return Spec(
        input=f"Switch on the lights in the {rooms[0]} and the {rooms[1]}.",
        state=_home_state(),
        reference=[*(RefStep.call("set_lights", {"room": r, "on": True}) for r in rooms),
                   RefStep.answer(f"The {rooms[0]} and {rooms[1]} lights are on.")],
        check=lambda env, ans, msgs: _lights_on(env, rooms),
    )


@template(HomeHub, "small.home.heating_fahrenheit", "base", budget_variant=False)
def _heating_fahrenheit(rng) -> Spec:
    fahrenheit = rng.choice([64, 66, 68, 70, 72])
    celsius = round((fahrenheit - 32) * 5 / 9)
    return Spec(
        input=rng.choice([f"Set the heating to {fahrenheit}°F.",
                          f"Please put the heating at {fahrenheit} degrees Fahrenheit."]),
        state=_home_state(),
        reference=[RefStep.call("set_heating", {"temperature_c": celsius}),
                   RefStep.answer(f"The heating is set to {celsius} °C ({fahrenheit} °F).")],
        check=lambda env, ans, msgs: _refused(env) + _heating(env, celsius, tolerance=1),
    )


@template(HomeHub, "small.home.heating_ask", "disambiguation", budget_variant=False)
def _heating_ask(rng) -> Spec:
    want = rng.choice([19, 20, 21, 22, 23])
    return Spec(
        input=rng.choice(["Set the heating for me, please.", "Can you change the heating?"]),
        state=_home_state(),
        reference=[RefStep.ask("What temperature would you like?"),
                   RefStep.call("set_heating", {"temperature_c": want}),
                   RefStep.answer(f"The heating is set to {want} °C.")],
        check=lambda env, ans, msgs: _asked_first(env, ("set_heating",)) + _heating(env, want),
        reply=f"{want} degrees Celsius, please.",
    )


@template(HomeHub, "small.home.dim_missing", "capability", heldout=True, budget_variant=False)
def _dim_missing(rng) -> Spec:
    room = rng.choice(ROOMS)
    percent = rng.choice([20, 30, 40, 60])
    return Spec(
        input=rng.choice([f"Dim the {room} lights to {percent}%.",
                          f"Set the {room} lights to {percent} percent brightness."]),
        state=_home_state(lit=(room,)),
        reference=[RefStep.answer("I can't set the brightness: I can only switch lights on or off.")],
        check=lambda env, ans, msgs: (param_not_passed(msgs, "set_lights", "brightness")
                                      + _declines(ans, "set the brightness")),
        removed_params=(("set_lights", "brightness"),),
    )


@template(HomeHub, "small.home.greeting", "base", heldout=True, budget_variant=False)
def _home_greeting(rng) -> Spec:
    return Spec(
        input=rng.choice(["Good evening! How are you?", "Hi there, how's it going?",
                          "Hello! Nice to meet you."]),
        state=_home_state(),
        reference=[RefStep.answer("Hello! I'm doing well, thank you.")],
        check=lambda env, ans, msgs: _no_tools(msgs),
    )


# ============================================================================ shop

STATUSES = ("processing", "shipped", "delivered")


class ShopDesk(SmallEnv):
    system_prompt = ("You are a customer-service assistant for an online shop. " + _TODAY_LINE
                     + " Use the tools, then answer in one or two short sentences.")


class OrderArgs(BaseModel):
    order_id: str = Field(description="The order id, e.g. ORD-1234.")


class CancelArgs(OrderArgs):
    reason: Optional[str] = Field(None, description="Why the customer cancels, if they said.")


@ShopDesk.tool("get_order", "Look up an order: status, items and total.", OrderArgs)
def get_order(env: ShopDesk, order_id: str) -> dict:
    order = env.state["orders"].get(order_id.strip())
    if order is None:
        raise EnvError(f"unknown order id {order_id!r}")
    env.state.setdefault("looked_up", []).append(order_id.strip())
    return {"order_id": order_id.strip(), **order}


@ShopDesk.tool("check_refund_eligibility", "Whether an order can be refunded.", OrderArgs)
def check_refund_eligibility(env: ShopDesk, order_id: str) -> dict:
    if order_id.strip() not in env.state["orders"]:
        raise EnvError(f"unknown order id {order_id!r}")
    env.state.setdefault("eligibility_checked", []).append(order_id.strip())
    return {"order_id": order_id.strip(), "eligible": True}


@ShopDesk.tool("issue_refund", "Refund an order. Policy: call check_refund_eligibility for "
               "the order first.", OrderArgs)
def issue_refund(env: ShopDesk, order_id: str) -> dict:
    key = order_id.strip()
    if key not in env.state["orders"]:
        raise EnvError(f"unknown order id {order_id!r}")
    if key not in env.state.get("eligibility_checked", []):
        raise EnvError("refused by policy: call check_refund_eligibility for it first")
    env.state["orders"][key]["refunded"] = True
    return {"order_id": key, "refunded": True}


@ShopDesk.tool("cancel_order", "Cancel an order that has not shipped. Policy: call get_order "
               "first to confirm its status.", CancelArgs)
def cancel_order(env: ShopDesk, order_id: str, reason: str | None = None) -> dict:
    key = order_id.strip()
    if key not in env.state["orders"]:
        raise EnvError(f"unknown order id {order_id!r}")
    if key not in env.state.get("looked_up", []):
        raise EnvError("refused by policy: call get_order for it first")
    if env.state["orders"][key]["status"] != "processing":
        raise EnvError("the order has shipped and cannot be cancelled")
    env.state["orders"][key]["status"] = "cancelled"
    return {"order_id": key, "status": "cancelled"}


def _order_ids(rng, n: int) -> list[str]:
    return [f"ORD-{number}" for number in rng.sample(range(1000, 10000), n)]


def _shop_state(rng, ids, statuses=None) -> dict:
    items = ("a kettle", "two mugs", "a desk lamp", "running shoes", "a phone case", "a backpack")
    return {"orders": {i: {"status": (statuses or {}).get(i, rng.choice(STATUSES)),
                           "items": rng.choice(items), "total_eur": rng.randint(9, 180),
                           "refunded": False} for i in ids}}


def _looked_up_order(env: Environment, order_id: str) -> list[str]:
    if any(c.args.get("order_id", "").strip() == order_id for c in env.calls("get_order")):
        return []
    return [f"never looked up {order_id}"]


@template(ShopDesk, "small.shop.refund", "base", budget_variant=False)
def _refund(rng) -> Spec:
    (order_id,) = _order_ids(rng, 1)
    def check(env, ans, msgs):
        done = [] if env.state["orders"][order_id]["refunded"] else [f"{order_id} is not refunded"]
        return done + _checked_first(env, "check_refund_eligibility", "issue_refund", "order_id")
    return Spec(
        input=rng.choice([f"Please refund order {order_id}.", f"I'd like a refund for {order_id}."]),
        state=_shop_state(rng, [order_id], {order_id: "delivered"}),
        reference=[RefStep.call("check_refund_eligibility", {"order_id": order_id}, role="check"),
                   RefStep.call("issue_refund", {"order_id": order_id}),
                   RefStep.answer(f"Order {order_id} is refunded.")],
        check=check,
    )


@template(ShopDesk, "small.shop.address_missing", "capability", budget_variant=False)
def _address_missing(rng) -> Spec:
    (order_id,) = _order_ids(rng, 1)
    street = rng.choice(["12 Elm Street", "4 Harbour Road", "77 Mill Lane", "9 Park Avenue"])
    return Spec(
        input=f"Please change the delivery address of order {order_id} to {street}.",
        state=_shop_state(rng, [order_id], {order_id: "processing"}),
        reference=[RefStep.answer("I can't change a delivery address: there is no tool for it.")],
        check=lambda env, ans, msgs: _declines(ans, "change the address"),
    )


@template(ShopDesk, "small.shop.compliment", "base", budget_variant=False)
def _compliment(rng) -> Spec:
    return Spec(
        input=rng.choice(["Hi! I just wanted to say your service has been great.",
                          "Hello, no question today, just saying thanks for the quick delivery!"]),
        state=_shop_state(rng, _order_ids(rng, 1)),
        reference=[RefStep.answer("Thank you, that's kind of you to say!")],
        check=lambda env, ans, msgs: _no_tools(msgs),
    )


@template(ShopDesk, "small.shop.cancel", "base", heldout=True, budget_variant=False)
def _cancel(rng) -> Spec:
    (order_id,) = _order_ids(rng, 1)
    def check(env, ans, msgs):
        status = env.state["orders"][order_id]["status"]
        done = [] if status == "cancelled" else [f"{order_id} is {status}, not cancelled"]
        return done + _checked_first(env, "get_order", "cancel_order", "order_id")
    return Spec(
        input=rng.choice([f"Please cancel order {order_id}.", f"Cancel my order {order_id}, please."]),
        state=_shop_state(rng, [order_id], {order_id: "processing"}),
        reference=[RefStep.call("get_order", {"order_id": order_id}, role="check"),
                   RefStep.call("cancel_order", {"order_id": order_id}),
                   RefStep.answer(f"Order {order_id} is cancelled.")],
        check=check,
    )


@template(ShopDesk, "small.shop.two_orders", "base", heldout=True, budget_only=True)
def _two_orders(rng) -> Spec:
    ids = _order_ids(rng, 2)
    statuses = dict(zip(ids, rng.sample(STATUSES, 2)))
    return Spec(
        input=f"What's the status of my orders {ids[0]} and {ids[1]}?",
        state=_shop_state(rng, ids, statuses),
        reference=[*(RefStep.call("get_order", {"order_id": i}, role="lookup") for i in ids),
                   RefStep.answer(f"{ids[0]} is {statuses[ids[0]]}; {ids[1]} is {statuses[ids[1]]}.")],
        check=lambda env, ans, msgs: [r for i in ids for r in _looked_up_order(env, i)
                                      + _mentions(ans, statuses[i], f"{i}'s status")],
    )


@template(ShopDesk, "small.shop.bare_number", "base", heldout=True, budget_variant=False)
def _bare_number(rng) -> Spec:
    (order_id,) = _order_ids(rng, 1)
    number = order_id.removeprefix("ORD-")
    state = _shop_state(rng, [order_id])
    status = state["orders"][order_id]["status"]
    return Spec(
        input=rng.choice([f"Where is my order {number}?", f"What's happening with order number {number}?"]),
        state=state,
        reference=[RefStep.call("get_order", {"order_id": order_id}, role="lookup"),
                   RefStep.answer(f"Order {order_id} is {status}.")],
        check=lambda env, ans, msgs: (_refused(env) + _looked_up_order(env, order_id)
                                      + _mentions(ans, status, "the status")),
    )


@template(ShopDesk, "small.shop.status_ask", "disambiguation", heldout=True, budget_variant=False)
def _status_ask(rng) -> Spec:
    (order_id,) = _order_ids(rng, 1)
    state = _shop_state(rng, [order_id])
    status = state["orders"][order_id]["status"]
    return Spec(
        input=rng.choice(["What's the status of my order?", "Has my order shipped yet?"]),
        state=state,
        reference=[RefStep.ask("What is your order id?"),
                   RefStep.call("get_order", {"order_id": order_id}, role="lookup"),
                   RefStep.answer(f"Order {order_id} is {status}.")],
        check=lambda env, ans, msgs: (_asked_first(env, ("get_order",))
                                      + _looked_up_order(env, order_id)
                                      + _mentions(ans, status, "the status")),
        reply=f"It's {order_id}.",
    )


# ============================================================================ calendar

TITLES = ("Dentist", "Budget review", "Yoga class", "Team sync", "Car service", "Piano lesson")
PEOPLE = ("Dana", "Omar", "Priya", "Lukas", "Mei", "Tomás")


class CalendarDesk(SmallEnv):
    system_prompt = ("You are a calendar assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class DateArgs(BaseModel):
    date: str = Field(description="The date, YYYY-MM-DD.")


class NewEventArgs(BaseModel):
    title: str = Field(description="What the event is.")
    date: str = Field(description="The date, YYYY-MM-DD.")
    time: str = Field(description="Start time, 24-hour HH:MM.")
    attendee_email: Optional[str] = Field(None, description="E-mail of a person to invite.")


class CancelEventArgs(BaseModel):
    title: str = Field(description="The event's title.")
    date: str = Field(description="The event's date, YYYY-MM-DD.")


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^\d{2}:\d{2}$")


def _valid_date(date: str) -> str:
    if not _DATE.match(date.strip()):
        raise EnvError(f"invalid date {date!r}")
    return date.strip()


@CalendarDesk.tool("list_events", "List the events on a date: title and time.", DateArgs)
def list_events(env: CalendarDesk, date: str) -> dict:
    day = _valid_date(date)
    env.state.setdefault("listed", []).append(day)
    return {"date": day, "events": [{"title": e["title"], "time": e["time"]}
                                    for e in env.state["events"] if e["date"] == day]}


@CalendarDesk.tool("create_event", "Add an event to the calendar.", NewEventArgs)
def create_event(env: CalendarDesk, title: str, date: str, time: str,
                 attendee_email: str | None = None) -> dict:
    day = _valid_date(date)
    if not _TIME.match(time.strip()):
        raise EnvError(f"invalid time {time!r}")
    event = {"title": title, "date": day, "time": time.strip(), "attendee": attendee_email}
    env.state["events"].append(event)
    return {"ok": True, **event}


@CalendarDesk.tool("cancel_event", "Cancel an event. Policy: call list_events for that date "
                   "first to confirm the event.", CancelEventArgs)
def cancel_event(env: CalendarDesk, title: str, date: str) -> dict:
    day = _valid_date(date)
    if day not in env.state.get("listed", []):
        raise EnvError("refused by policy: call list_events for that date first")
    for event in env.state["events"]:
        if event["date"] == day and event["title"].lower() == title.strip().lower():
            env.state["events"].remove(event)
            return {"ok": True, "cancelled": event["title"], "date": day}
    raise EnvError(f"no event {title!r} on {day}")


def _day(rng, lo: int = 1, hi: int = 11) -> dt.date:
    return TODAY + dt.timedelta(days=rng.randint(lo, hi))


def _words(day: dt.date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def _calendar_state(rng, events=()) -> dict:
    return {"events": [dict(e) for e in events]}


def _event_at(env: Environment, date: str, time: str) -> list[str]:
    if any(e["date"] == date and e["time"] == time for e in env.state["events"]):
        return []
    return [f"no event on {date} at {time}: {env.state['events']}"]


@template(CalendarDesk, "small.calendar.time_24h", "base", budget_variant=False)
def _time_24h(rng) -> Spec:
    day = _day(rng)
    hour = rng.choice([1, 2, 3, 4, 5])
    title = rng.choice(TITLES)
    return Spec(
        input=f"Add '{title}' to my calendar on {_words(day)} at {hour}pm.",
        state=_calendar_state(rng),
        reference=[RefStep.call("create_event", {"title": title, "date": day.isoformat(),
                                                 "time": f"{hour + 12}:00"}),
                   RefStep.answer(f"'{title}' is on {_words(day)} at {hour + 12}:00.")],
        check=lambda env, ans, msgs: _refused(env) + _event_at(env, day.isoformat(), f"{hour + 12}:00"),
    )


@template(CalendarDesk, "small.calendar.call_ask", "disambiguation", budget_variant=False)
def _call_ask(rng) -> Spec:
    person = rng.choice(PEOPLE)
    tomorrow = (TODAY + dt.timedelta(days=1)).isoformat()
    time = rng.choice(["09:30", "11:00", "14:00", "16:30"])
    return Spec(
        input=rng.choice([f"Schedule a call with {person} tomorrow.",
                          f"Put a call with {person} in my calendar for tomorrow."]),
        state=_calendar_state(rng),
        reference=[RefStep.ask("What time?"),
                   RefStep.call("create_event", {"title": f"Call with {person}", "date": tomorrow,
                                                 "time": time}),
                   RefStep.answer(f"The call with {person} is tomorrow at {time}.")],
        check=lambda env, ans, msgs: _asked_first(env, ("create_event",)) + _event_at(env, tomorrow, time),
        reply=f"At {time}.",
    )


@template(CalendarDesk, "small.calendar.cancel_event", "base", heldout=True, budget_variant=False)
def _cancel_event(rng) -> Spec:
    day = _day(rng)
    title = rng.choice(TITLES)
    events = [{"title": title, "date": day.isoformat(), "time": "10:00", "attendee": None}]
    def check(env, ans, msgs):
        left = [e for e in env.state["events"] if e["title"] == title]
        return ([f"'{title}' is still there"] if left else []) + _checked_first(
            env, "list_events", "cancel_event", "date")
    return Spec(
        input=f"Cancel my '{title}' on {_words(day)}.",
        state=_calendar_state(rng, events),
        reference=[RefStep.call("list_events", {"date": day.isoformat()}, role="check"),
                   RefStep.call("cancel_event", {"title": title, "date": day.isoformat()}),
                   RefStep.answer(f"'{title}' on {_words(day)} is cancelled.")],
        check=check,
    )


@template(CalendarDesk, "small.calendar.invite_missing", "capability", heldout=True,
          budget_variant=False)
def _invite_missing(rng) -> Spec:
    day = _day(rng)
    person = rng.choice(PEOPLE)
    email = f"{person.lower().replace('á', 'a')}@example.com"
    return Spec(
        input=f"Create 'Team lunch' on {day.isoformat()} at 12:30 and invite {email}.",
        state=_calendar_state(rng),
        reference=[RefStep.call("create_event", {"title": "Team lunch", "date": day.isoformat(),
                                                 "time": "12:30"}),
                   RefStep.answer("The lunch is in the calendar, but I can't send invitations.")],
        check=lambda env, ans, msgs: (_event_at(env, day.isoformat(), "12:30")
                                      + param_not_passed(msgs, "create_event", "attendee_email")
                                      + _declines(ans, "invite")),
        removed_params=(("create_event", "attendee_email"),),
    )


@template(CalendarDesk, "small.calendar.two_days", "base", heldout=True, budget_only=True)
def _two_days(rng) -> Spec:
    first = _day(rng, 1, 9)
    days = [first, first + dt.timedelta(days=1)]
    titles = rng.sample(TITLES, 2)
    events = [{"title": t, "date": d.isoformat(), "time": "10:00", "attendee": None}
              for t, d in zip(titles, days)]
    def check(env, ans, msgs):
        listed = env.state.get("listed", [])
        missing = [d.isoformat() for d in days if d.isoformat() not in listed]
        return ([f"never listed {missing}"] if missing else []) + [
            r for t in titles for r in _mentions(ans, t, "an event")]
    return Spec(
        input=f"What's on my calendar on {_words(days[0])} and on {_words(days[1])}?",
        state=_calendar_state(rng, events),
        reference=[*(RefStep.call("list_events", {"date": d.isoformat()}, role="lookup") for d in days),
                   RefStep.answer(f"{_words(days[0])}: {titles[0]}; {_words(days[1])}: {titles[1]}.")],
        check=check,
    )


@template(CalendarDesk, "small.calendar.capabilities", "base", heldout=True, budget_variant=False)
def _capabilities(rng) -> Spec:
    return Spec(
        input=rng.choice(["What kinds of things can you help me with?",
                          "Hi! What are you able to do?"]),
        state=_calendar_state(rng),
        reference=[RefStep.answer("I can list, add and cancel events in your calendar.")],
        check=lambda env, ans, msgs: _no_tools(msgs),
    )
