"""More of the consistency tier: twenty-four evolution templates in four further toolsets.

The v1 calibration of :mod:`steady` kept 4 of 16 templates: too few for an interval over
templates. These templates widen the tier with the lessons the 1.5B model got right *sometimes*
there (a date from a relative word, an amount in the tool's unit, a value said in the user's
unit, small talk without a tool) and keep a few of the others (a lookup by a name the user
gives, a check a policy names). No field description carries an example id: the model copied
those instead of looking the id up.

* **evolution** (``split`` train): ``EVOLUTION_MORE``, six templates in each of four toolsets
  (weather, hotel, pharmacy, gym), each registered with :func:`steady._twin`, so each has its
  unseen-instances twin ``…_again`` (other wording, other entities: disjoint pools);
* **unseen templates** (held out): ``UNSEEN_MORE``, four templates of four lesson kinds in a
  fifth toolset (restaurant).

Lesson kinds over the 24: 8 argument shape, 6 answer shape, 4 procedure, 3 check first,
3 no tool. They are registered into :data:`steady.KINDS` and :data:`steady.AGAIN`.

Written, and committed, before any run of any model on them; never reworded after.
"""

from __future__ import annotations

import datetime as dt
import re

from pydantic import BaseModel, Field

from skillbank_harness.envs.base import EnvError, Environment, RefStep, Spec
from skillbank_harness.envs.families.steady import (
    AGAIN, KINDS, TODAY, TOMORROW, _TODAY_LINE, NoArgs, SteadyEnv, _before, _called, _date_arg,
    _euros, _iso, _kilos, _mentions, _no_tools, _pick, _refused, _twin, _unseen,
)

__all__ = ["EVOLUTION_MORE", "UNSEEN_MORE", "Weather", "Hotel", "Pharmacy", "Gym", "Restaurant"]

_BEFORE = set(AGAIN)
_KINDS_BEFORE = set(KINDS)
WEDNESDAY = dt.date(2027, 3, 10)
DAY_AFTER = TODAY + dt.timedelta(days=2)


def _hhmm(value: object) -> str:
    text = str(value).strip()
    if not re.fullmatch(r"\d{2}:\d{2}", text) or int(text[:2]) > 23 or int(text[3:]) > 59:
        raise EnvError(f"time must be HH:MM (24-hour), got {value!r}")
    return text


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _number_with_unit(answer: str, number: str, units: str, what: str, shown: str) -> list[str]:
    pattern = rf"(?<![\d.,]){re.escape(number).replace(chr(92) + '.', '[.,]')}0*(?![\d])\s*(?:{units})"
    return [] if re.search(pattern, answer or "", re.IGNORECASE) else [
        f"the answer does not give {what} ({shown})"]


def _celsius(answer: str, tenths: int) -> list[str]:
    number = f"{tenths / 10:g}"
    return _number_with_unit(answer, number, r"°|º|degrees?\b|deg\b|celsius|C\b", "the temperature "
                             "in degrees Celsius", f"{number} °C")


def _km(answer: str, metres: int) -> list[str]:
    number = f"{metres / 1000:g}"
    return _number_with_unit(answer, number, r"km\b|kilomet", "the distance in kilometres",
                             f"{number} km")


def _hours_minutes(answer: str, minutes: int) -> list[str]:
    h, m = divmod(int(minutes), 60)
    hours = r"(?:hours?|hrs?|h)\b"
    mins = r"(?:minutes?|mins?|m)\b"
    pattern = rf"(?<![\d.,]){h}\s*{hours}[\s,]*(?:and\s*)?{m}\s*{mins}"
    return [] if re.search(pattern, answer or "", re.IGNORECASE) else [
        f"the answer does not give the time in hours and minutes ({h} h {m} min)"]


def _euro_text(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d} euros"


def _find(items: list[dict], key: str, value: object, what: str, source: str) -> dict:
    for item in items:
        if item[key].lower() == str(value).strip().lower():
            return item
    raise EnvError(f"unknown {key} {value!r}: take the {key} from {source}")


def _matches(query: str, name: str) -> bool:
    q, n = query.strip().lower(), name.lower()
    return bool(q) and (q in n or n in q)


# ============================================================================ weather

CITIES = ("Vienna", "Prague", "Oslo", "Lisbon", "Dublin", "Madrid")
CITIES_AGAIN = ("Copenhagen", "Helsinki", "Warsaw", "Budapest", "Athens", "Brussels")
CONDITIONS = ("sunny", "light rain", "cloudy", "snow showers", "thunderstorms", "fog")
_STEMS = {"sunny": "sun", "light rain": "rain", "cloudy": "cloud", "snow showers": "snow",
          "thunderstorms": "thunder", "fog": "fog"}  # "sunshine", "rainy", "a thunderstorm" say it too


class Weather(SteadyEnv):
    system_prompt = ("You are a weather assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class CityDateArgs(BaseModel):
    city: str = Field(description="The city's name.")
    date: str = Field(description="The day, YYYY-MM-DD.")


class CityArgs(BaseModel):
    city: str = Field(description="The city's name.")


class PlaceArgs(BaseModel):
    name: str = Field(description="A place name.")


class LocationArgs(BaseModel):
    location_id: str = Field(description="The location's id, from find_location.")


def _city(env: Environment, city: str) -> dict:
    for c in env.state["cities"]:
        if _matches(city, c["name"]):
            return c
    raise EnvError(f"no weather data for {city!r}")


@Weather.tool("get_forecast", "The forecast for a city on a day (up to 6 days ahead): condition, "
              "high_c and rain_chance (percent).", CityDateArgs)
def get_forecast(env: Weather, city: str, date: str) -> dict:
    day = _date_arg(date)
    c = _city(env, city)
    if day < TODAY:
        raise EnvError("the date is in the past")
    if _iso(day) not in c["forecast"]:
        raise EnvError("no forecast that far ahead")
    return {"city": c["name"], "date": _iso(day), **c["forecast"][_iso(day)]}


@Weather.tool("current_conditions", "The weather in a city now: condition, temp_tenths_c "
              "(tenths of a degree Celsius) and visibility_m (metres).", CityArgs)
def current_conditions(env: Weather, city: str) -> dict:
    c = _city(env, city)
    return {"city": c["name"], **c["now"]}


@Weather.tool("find_location", "Find a place by name: location_id, name and country.", PlaceArgs)
def find_location(env: Weather, name: str) -> dict:
    return {"locations": [{k: c[k] for k in ("location_id", "name", "country")}
                          for c in env.state["cities"] if _matches(name, c["name"])]}


@Weather.tool("subscribe_alerts", "Send the user severe-weather alerts for a location.", LocationArgs)
def subscribe_alerts(env: Weather, location_id: str) -> dict:
    c = _find(env.state["cities"], "location_id", location_id, "location", "find_location")
    env.state.setdefault("alerts", []).append(c["location_id"])
    return {"subscribed": c["location_id"], "name": c["name"]}


_COUNTRIES = {"Vienna": "Austria", "Prague": "Czechia", "Oslo": "Norway", "Lisbon": "Portugal",
              "Dublin": "Ireland", "Madrid": "Spain", "Copenhagen": "Denmark", "Helsinki": "Finland",
              "Warsaw": "Poland", "Budapest": "Hungary", "Athens": "Greece", "Brussels": "Belgium"}


def _weather_state(rng, again: bool) -> dict:
    cities = []
    for name in rng.sample(CITIES_AGAIN if again else CITIES, 3):
        forecast = {}
        for d in range(0, 7):
            forecast[_iso(TODAY + dt.timedelta(days=d))] = {
                "condition": rng.choice(CONDITIONS), "high_c": rng.randint(2, 19),
                "rain_chance": rng.randrange(5, 100, 5)}
        cities.append({"name": name, "country": _COUNTRIES[name],
                       "location_id": f"L-{rng.randint(10000, 99999)}", "forecast": forecast,
                       "now": {"condition": rng.choice(CONDITIONS),
                               "temp_tenths_c": rng.randint(3, 28) * 10 + rng.randint(1, 9),
                               "visibility_m": rng.choice([2300, 4700, 8500, 12400, 6800, 15600])}})
    return {"cities": cities}


def _forecast_tomorrow(rng, again: bool) -> Spec:
    state = _weather_state(rng, again)
    city = rng.choice(state["cities"])
    day = city["forecast"][_iso(TOMORROW)]
    wording = _pick(rng, again, (f"What's the weather going to be like in {city['name']} tomorrow?",
                                 f"What is the forecast for {city['name']} tomorrow?"),
                    (f"I'm in {city['name']} tomorrow. What weather should I expect?",
                     f"Tomorrow in {city['name']}: sun or rain?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_forecast", {"city": city["name"], "date": _iso(TOMORROW)},
                                role="lookup"),
                   RefStep.answer(f"Tomorrow in {city['name']}: {day['condition']}, up to "
                                  f"{day['high_c']} °C.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "get_forecast", date=_iso(TOMORROW))
                                      + _mentions(ans, _STEMS[day["condition"]], "the forecast")),
    )


def _rain_day_after(rng, again: bool) -> Spec:
    state = _weather_state(rng, again)
    city = rng.choice(state["cities"])
    chance = city["forecast"][_iso(DAY_AFTER)]["rain_chance"]
    wording = _pick(rng, again, (f"What's the chance of rain in {city['name']} the day after tomorrow?",
                                 f"How likely is rain in {city['name']} the day after tomorrow?"),
                    (f"Will I need an umbrella in {city['name']} two days from now? What are the odds "
                     "of rain?",
                     f"Rain chances for {city['name']}, in two days' time?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_forecast", {"city": city["name"], "date": _iso(DAY_AFTER)},
                                role="lookup"),
                   RefStep.answer(f"The chance of rain is {chance}%.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "get_forecast", date=_iso(DAY_AFTER))
                                      + _mentions(ans, chance, "the chance of rain")),
    )


def _temperature_now(rng, again: bool) -> Spec:
    state = _weather_state(rng, again)
    city = rng.choice(state["cities"])
    tenths = city["now"]["temp_tenths_c"]
    wording = _pick(rng, again, (f"How warm is it in {city['name']} right now?",
                                 f"What's the temperature in {city['name']} at the moment?"),
                    (f"Is it cold in {city['name']} now? What does the thermometer say?",
                     f"Current temperature in {city['name']}, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("current_conditions", {"city": city["name"]}, role="lookup"),
                   RefStep.answer(f"It is {tenths / 10:g} °C in {city['name']}.")],
        check=lambda env, ans, msgs: _refused(env) + _celsius(ans, tenths),
    )


def _visibility_km(rng, again: bool) -> Spec:
    state = _weather_state(rng, again)
    city = rng.choice(state["cities"])
    metres = city["now"]["visibility_m"]
    wording = _pick(rng, again, (f"How many kilometres is the visibility in {city['name']} now?",
                                 f"What's the visibility in {city['name']} right now, in km?"),
                    (f"How far can you see in {city['name']} at the moment, in kilometres?",
                     f"Visibility in {city['name']} currently, in km?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("current_conditions", {"city": city["name"]}, role="lookup"),
                   RefStep.answer(f"The visibility is {metres / 1000:g} km.")],
        check=lambda env, ans, msgs: _refused(env) + _km(ans, metres),
    )


def _alerts(rng, again: bool) -> Spec:
    state = _weather_state(rng, again)
    city = rng.choice(state["cities"])
    wording = _pick(rng, again, (f"Please send me weather alerts for {city['name']}.",
                                 f"Sign me up for storm warnings in {city['name']}."),
                    (f"I'd like to get severe-weather alerts for {city['name']}.",
                     f"Can you warn me when bad weather is coming to {city['name']}?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_location", {"name": city["name"]}, role="lookup"),
                   RefStep.call("subscribe_alerts", {"location_id": city["location_id"]}),
                   RefStep.answer(f"You will get severe-weather alerts for {city['name']}.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "subscribe_alerts", location_id=city["location_id"])),
    )


def _weather_thanks(rng, again: bool) -> Spec:
    wording = _pick(rng, again, ("Great, thanks for the forecast!", "Thank you, that helps a lot."),
                    ("Perfect, much appreciated!", "Thanks, I'll pack accordingly."))
    return Spec(input=wording, state=_weather_state(rng, again),
                reference=[RefStep.answer("You're welcome!")],
                check=lambda env, ans, msgs: _no_tools(msgs))


_twin(Weather, "weather.forecast_tomorrow", "argument shape", _forecast_tomorrow)
_twin(Weather, "weather.rain_day_after", "argument shape", _rain_day_after)
_twin(Weather, "weather.temperature_now", "answer shape", _temperature_now)
_twin(Weather, "weather.visibility_km", "answer shape", _visibility_km)
_twin(Weather, "weather.alerts", "procedure", _alerts)
_twin(Weather, "weather.thanks", "no tool", _weather_thanks)


# ============================================================================ hotel

ROOMS = ("Garden Double", "Tower Suite", "Courtyard Single", "Lake View Twin")
ROOMS_AGAIN = ("Harbour Double", "Attic Suite", "Forest Single", "Terrace Twin")
GUESTS = ("Anna Berger", "Luca Moretti", "Sara Lindgren", "Omar Haddad")
GUESTS_AGAIN = ("Julia Novak", "Tom Becker", "Ines Costa", "Ravi Mehta")
CHECKOUT_TIMES = (("half past twelve", "12:30"), ("one o'clock", "13:00"),
                  ("a quarter past two", "14:15"), ("half past one", "13:30"))
CHECKOUT_TIMES_AGAIN = (("a quarter to two", "13:45"), ("two o'clock", "14:00"),
                        ("half past two", "14:30"), ("a quarter past one", "13:15"))


class Hotel(SteadyEnv):
    system_prompt = ("You are a hotel's reception assistant. " + _TODAY_LINE + " Use the tools, "
                     "then answer in one or two short sentences.")


class StayArgs(BaseModel):
    check_in: str = Field(description="Arrival date, YYYY-MM-DD.")
    nights: int = Field(description="Number of nights.")


class GuestArgs(BaseModel):
    guest: str = Field(description="The guest's name.")


class ReservationArgs(BaseModel):
    reservation_id: str = Field(description="The reservation's id.")


class CheckoutArgs(ReservationArgs):
    time: str = Field(description="Check-out time, HH:MM (24-hour).")


@Hotel.tool("list_rooms", "The hotel's room types: room_type_id, name and price_cents (per "
            "night).", NoArgs)
def list_rooms(env: Hotel) -> dict:
    return {"rooms": [{k: r[k] for k in ("room_type_id", "name", "price_cents")}
                      for r in env.state["rooms"]]}


@Hotel.tool("check_availability", "Room types free for a whole stay, from the arrival date for "
            "a number of nights.", StayArgs)
def check_availability(env: Hotel, check_in: str, nights: int) -> dict:
    day = _date_arg(check_in)
    if day < TODAY:
        raise EnvError("the arrival date is in the past")
    if not 1 <= int(nights) <= 14:
        raise EnvError("nights must be between 1 and 14")
    stay = {_iso(day + dt.timedelta(days=i)) for i in range(int(nights))}
    return {"free": [{"name": r["name"], "price_cents": r["price_cents"]}
                     for r in env.state["rooms"] if not stay & set(r["booked"])]}


@Hotel.tool("find_reservation", "Reservations under a guest's name: reservation_id, room, "
            "check_in and nights.", GuestArgs)
def find_reservation(env: Hotel, guest: str) -> dict:
    return {"reservations": [{k: r[k] for k in ("reservation_id", "guest", "room", "check_in", "nights")}
                             for r in env.state["reservations"] if _matches(guest, r["guest"])]}


def _reservation(env: Environment, reservation_id: str) -> dict:
    return _find(env.state["reservations"], "reservation_id", reservation_id, "reservation",
                 "find_reservation")


@Hotel.tool("add_breakfast", "Add breakfast to a reservation.", ReservationArgs)
def add_breakfast(env: Hotel, reservation_id: str) -> dict:
    r = _reservation(env, reservation_id)
    r["breakfast"] = True
    return {"reservation_id": r["reservation_id"], "breakfast": True}


@Hotel.tool("set_late_checkout", "Ask for a late check-out on a reservation (possible between "
            "12:00 and 16:00).", CheckoutArgs)
def set_late_checkout(env: Hotel, reservation_id: str, time: str) -> dict:
    text = _hhmm(time)
    r = _reservation(env, reservation_id)
    if not "12:00" <= text <= "16:00":
        raise EnvError("late check-out is possible between 12:00 and 16:00")
    r["checkout"] = text
    return {"reservation_id": r["reservation_id"], "checkout": text}


@Hotel.tool("get_cancellation_terms", "A reservation's cancellation terms: whether cancelling is "
            "free, and the fee_cents if not.", ReservationArgs)
def get_cancellation_terms(env: Hotel, reservation_id: str) -> dict:
    r = _reservation(env, reservation_id)
    env.state.setdefault("terms_seen", []).append(r["reservation_id"])
    return {"reservation_id": r["reservation_id"], "free": r["fee_cents"] == 0,
            "fee_cents": r["fee_cents"]}


@Hotel.tool("cancel_reservation", "Cancel a reservation. Policy: call get_cancellation_terms "
            "for it first.", ReservationArgs)
def cancel_reservation(env: Hotel, reservation_id: str) -> dict:
    r = _reservation(env, reservation_id)
    if r["reservation_id"] not in env.state.get("terms_seen", []):
        raise EnvError("refused by policy: call get_cancellation_terms first")
    r["cancelled"] = True
    return {"cancelled": r["reservation_id"], "fee_cents": r["fee_cents"]}


def _hotel_state(rng, again: bool) -> dict:
    prices = rng.sample([8950, 12450, 15900, 10375, 19820, 7640, 13120], 4)
    rooms = [{"room_type_id": f"RT-{rng.randint(100, 999)}", "name": name, "price_cents": p,
              "booked": [_iso(TODAY + dt.timedelta(days=d)) for d in range(0, 10) if rng.random() < 0.3]}
             for name, p in zip(ROOMS_AGAIN if again else ROOMS, prices)]
    reservations = []
    for guest in rng.sample(GUESTS_AGAIN if again else GUESTS, 3):
        reservations.append({"reservation_id": f"R-{rng.randint(1000, 9999)}", "guest": guest,
                             "room": rng.choice(rooms)["name"],
                             "check_in": _iso(TODAY + dt.timedelta(days=rng.randint(0, 9))),
                             "nights": rng.randint(1, 4), "breakfast": False,
                             "fee_cents": rng.choice([0, 0, 2500, 4000])})
    return {"rooms": rooms, "reservations": reservations}


def _free_wednesday(rng, again: bool) -> Spec:
    state = _hotel_state(rng, again)
    n = rng.randint(2, 4)
    stay = [_iso(WEDNESDAY + dt.timedelta(days=i)) for i in range(n)]
    free = rng.choice(state["rooms"])
    for room in state["rooms"]:  # only one room type is free for the whole stay
        room["booked"] = ([d for d in room["booked"] if d not in stay] if room is free
                          else sorted(set(room["booked"]) | {rng.choice(stay)}))
    wording = _pick(rng, again, (f"Do you have a room free from Wednesday for {n} nights?",
                                 f"I'd like to stay {n} nights starting this Wednesday. Which room "
                                 "is available?"),
                    (f"Is anything available for {n} nights, arriving on Wednesday?",
                     f"Checking in on Wednesday and staying {n} nights: what room can I have?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("check_availability", {"check_in": _iso(WEDNESDAY), "nights": n},
                                role="lookup"),
                   RefStep.answer(f"The {free['name']} is free for those {n} nights.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "check_availability", check_in=_iso(WEDNESDAY),
                                                nights=n)
                                      + _mentions(ans, free["name"], "the free room")),
    )


def _late_checkout(rng, again: bool) -> Spec:
    state = _hotel_state(rng, again)
    r = rng.choice(state["reservations"])
    words, time = rng.choice(CHECKOUT_TIMES_AGAIN if again else CHECKOUT_TIMES)
    rid = r["reservation_id"]
    wording = _pick(rng, again, (f"Could I check out late, at {words}? My reservation is {rid}.",
                                 f"For reservation {rid}, I'd like a late check-out at {words}."),
                    (f"Is a {words} check-out possible? Reservation {rid}.",
                     f"Please push my check-out to {words}, booking {rid}."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("set_late_checkout", {"reservation_id": rid, "time": time}),
                   RefStep.answer(f"Done: you can check out at {time}.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "set_late_checkout", reservation_id=rid, time=time)),
    )


def _room_price(rng, again: bool) -> Spec:
    state = _hotel_state(rng, again)
    room = rng.choice(state["rooms"])
    wording = _pick(rng, again, (f"How much is a night in the {room['name']}?",
                                 f"What does the {room['name']} cost per night?"),
                    (f"What's the nightly rate for the {room['name']}?",
                     f"Price of one night in your {room['name']}, please?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("list_rooms", role="lookup"),
                   RefStep.answer(f"The {room['name']} is {_euro_text(room['price_cents'])} a night.")],
        check=lambda env, ans, msgs: _refused(env) + _euros(ans, room["price_cents"], "the price"),
    )


def _breakfast(rng, again: bool) -> Spec:
    state = _hotel_state(rng, again)
    r = rng.choice(state["reservations"])
    guest = r["guest"]
    wording = _pick(rng, again, (f"Please add breakfast to the booking under {guest}.",
                                 f"Can you include breakfast in {guest}'s reservation?"),
                    (f"We'd like breakfast too. The room is booked under {guest}.",
                     f"Add breakfast for the stay of {guest}, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_reservation", {"guest": guest}, role="lookup"),
                   RefStep.call("add_breakfast", {"reservation_id": r["reservation_id"]}),
                   RefStep.answer(f"Breakfast is added to {guest}'s reservation.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "add_breakfast", reservation_id=r["reservation_id"])),
    )


def _hotel_cancel(rng, again: bool) -> Spec:
    state = _hotel_state(rng, again)
    r = rng.choice(state["reservations"])
    rid = r["reservation_id"]
    wording = _pick(rng, again, (f"Please cancel my reservation {rid}.",
                                 f"I need to cancel booking {rid}."),
                    (f"Our plans changed: call off reservation {rid}, please.",
                     f"Could you drop the hotel booking {rid}?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_cancellation_terms", {"reservation_id": rid}, role="check"),
                   RefStep.call("cancel_reservation", {"reservation_id": rid}),
                   RefStep.answer(f"Reservation {rid} is cancelled.")],
        check=lambda env, ans, msgs: (_before(env, "get_cancellation_terms", "cancel_reservation")
                                      + _refused(env)
                                      + _called(env, "cancel_reservation", reservation_id=rid)),
    )


def _hotel_greeting(rng, again: bool) -> Spec:
    wording = _pick(rng, again, ("Good evening! How are you doing?", "Hi, lovely to be here!"),
                    ("Hello there, hope you're having a nice day.", "Hey! How's everything at the desk?"))
    return Spec(input=wording, state=_hotel_state(rng, again),
                reference=[RefStep.answer("Hello! I'm well, thank you. How can I help?")],
                check=lambda env, ans, msgs: _no_tools(msgs))


_twin(Hotel, "hotel.free_wednesday", "argument shape", _free_wednesday)
_twin(Hotel, "hotel.late_checkout", "argument shape", _late_checkout)
_twin(Hotel, "hotel.room_price", "answer shape", _room_price)
_twin(Hotel, "hotel.breakfast", "procedure", _breakfast)
_twin(Hotel, "hotel.cancel", "check first", _hotel_cancel)
_twin(Hotel, "hotel.greeting", "no tool", _hotel_greeting)


# ============================================================================ pharmacy

MEDICINES = ("Lisinopril", "Metformin", "Atorvastatin", "Levothyroxine")
MEDICINES_AGAIN = ("Amlodipine", "Omeprazole", "Sertraline", "Salbutamol")
PRODUCTS = ("vitamin D drops", "throat lozenges", "nasal spray", "ibuprofen gel")
PRODUCTS_AGAIN = ("hand cream", "eye drops", "blister plasters", "cough syrup")
BRANCHES = ("Main Street", "Station Square", "Park Road")
BRANCHES_AGAIN = ("Hill Street", "Market Hall", "Canal Side")
SUPPLY = (("two weeks", 14), ("three weeks", 21))
SUPPLY_AGAIN = (("four weeks", 28), ("a fortnight", 14))
PICKUP = (("a quarter to six this evening", "17:45"), ("half past four this afternoon", "16:30"))
PICKUP_AGAIN = (("ten past five this afternoon", "17:10"), ("a quarter past three this afternoon", "15:15"))


class Pharmacy(SteadyEnv):
    system_prompt = ("You are a pharmacy's assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class RefillArgs(BaseModel):
    rx_id: str = Field(description="The prescription's id.")
    days: int = Field(30, description="Days of supply (default 30).")


class ProductQueryArgs(BaseModel):
    query: str = Field(description="Words of a product's name.")


class PickupArgs(BaseModel):
    order_id: str = Field(description="The order's id.")
    time: str = Field(description="Collection time today, HH:MM (24-hour).")


class BranchArgs(BaseModel):
    branch: str = Field(description="The branch's name.")


class BranchRxArgs(BranchArgs):
    rx_id: str = Field(description="The prescription's id.")


@Pharmacy.tool("list_prescriptions", "The user's prescriptions: rx_id, medicine and refills_left.",
               NoArgs)
def list_prescriptions(env: Pharmacy) -> dict:
    return {"prescriptions": [{k: p[k] for k in ("rx_id", "medicine", "refills_left")}
                              for p in env.state["prescriptions"]]}


def _rx(env: Environment, rx_id: str) -> dict:
    return _find(env.state["prescriptions"], "rx_id", rx_id, "prescription", "list_prescriptions")


@Pharmacy.tool("refill_prescription", "Order a refill of a prescription for a number of days' "
               "supply.", RefillArgs)
def refill_prescription(env: Pharmacy, rx_id: str, days: int = 30) -> dict:
    p = _rx(env, rx_id)
    if not 7 <= int(days) <= 90:
        raise EnvError("days must be between 7 and 90")
    p["refills_left"] -= 1
    env.state.setdefault("refills", []).append({"rx_id": p["rx_id"], "days": int(days)})
    return {"rx_id": p["rx_id"], "medicine": p["medicine"], "days": int(days), "ready": _iso(TOMORROW)}


@Pharmacy.tool("search_products", "Search the shop: product_id, name and price_cents.",
               ProductQueryArgs)
def search_products(env: Pharmacy, query: str) -> dict:
    return {"products": [p for p in env.state["products"] if _matches(query, p["name"])]}


@Pharmacy.tool("set_pickup_time", "Say when the user will collect an order today (opening hours "
               "08:00 to 20:00).", PickupArgs)
def set_pickup_time(env: Pharmacy, order_id: str, time: str) -> dict:
    text = _hhmm(time)
    order = _find(env.state["orders"], "order_id", order_id, "order", "the user's request")
    if not "08:00" <= text <= "19:59":
        raise EnvError("the pharmacy is open from 08:00 to 20:00")
    order["pickup"] = text
    return {"order_id": order["order_id"], "pickup": text}


@Pharmacy.tool("check_stock", "Whether a branch has the user's prescription medicines in stock.",
               BranchArgs)
def check_stock(env: Pharmacy, branch: str) -> dict:
    env.state.setdefault("stock_checked", []).append(branch.strip().lower())
    return {"branch": branch, "in_stock": True}


@Pharmacy.tool("prepare_at_branch", "Have a prescription prepared for collection at a branch. "
               "Policy: call check_stock for that branch first.", BranchRxArgs)
def prepare_at_branch(env: Pharmacy, branch: str, rx_id: str) -> dict:
    if branch.strip().lower() not in env.state.get("stock_checked", []):
        raise EnvError("refused by policy: call check_stock for that branch first")
    p = _rx(env, rx_id)
    env.state.setdefault("prepared", []).append((p["rx_id"], branch))
    return {"rx_id": p["rx_id"], "branch": branch, "ready": _iso(TOMORROW)}


def _pharmacy_state(rng, again: bool) -> dict:
    return {"prescriptions": [{"rx_id": f"RX-{rng.randint(1000, 9999)}", "medicine": m,
                               "refills_left": rng.randint(1, 5)}
                              for m in rng.sample(MEDICINES_AGAIN if again else MEDICINES, 3)],
            "products": [{"product_id": f"P-{rng.randint(100, 999)}", "name": name,
                          "price_cents": rng.choice([495, 749, 1150, 389, 1299, 865])}
                         for name in (PRODUCTS_AGAIN if again else PRODUCTS)],
            "orders": [{"order_id": f"PO-{rng.randint(10000, 99999)}", "pickup": None}]}


def _refill_weeks(rng, again: bool) -> Spec:
    state = _pharmacy_state(rng, again)
    p = rng.choice(state["prescriptions"])
    words, days = rng.choice(SUPPLY_AGAIN if again else SUPPLY)
    rx = p["rx_id"]
    wording = _pick(rng, again, (f"Please refill prescription {rx} for {words}.",
                                 f"I need {words} of my prescription {rx}, please refill it."),
                    (f"Could you order a refill of {rx}, enough for {words}?",
                     f"Refill {rx} so that it lasts {words}, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("refill_prescription", {"rx_id": rx, "days": days}),
                   RefStep.answer(f"Refilled {p['medicine']} for {days} days; ready tomorrow.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "refill_prescription", rx_id=rx, days=days)),
    )


def _pickup_time(rng, again: bool) -> Spec:
    state = _pharmacy_state(rng, again)
    order = state["orders"][0]["order_id"]
    words, time = rng.choice(PICKUP_AGAIN if again else PICKUP)
    wording = _pick(rng, again, (f"I'll collect my order {order} at {words}.",
                                 f"Please note that I'll pick up {order} at {words}."),
                    (f"I'm coming for order {order} at {words}, can you put that down?",
                     f"Set my collection of {order} for {words}, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("set_pickup_time", {"order_id": order, "time": time}),
                   RefStep.answer(f"Noted: {order} will be ready for you at {time}.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "set_pickup_time", order_id=order, time=time)),
    )


def _pharmacy_price(rng, again: bool) -> Spec:
    state = _pharmacy_state(rng, again)
    product = rng.choice(state["products"])
    name = product["name"]
    wording = _pick(rng, again, (f"What's the price of {name}?", f"How much do you charge for {name}?"),
                    (f"What would I pay for {name}?", f"Tell me the price of {name}, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("search_products", {"query": name}, role="lookup"),
                   RefStep.answer(f"The {name} cost {_euro_text(product['price_cents'])}.")],
        check=lambda env, ans, msgs: _refused(env) + _euros(ans, product["price_cents"], "the price"),
    )


def _refill_by_name(rng, again: bool) -> Spec:
    state = _pharmacy_state(rng, again)
    p = rng.choice(state["prescriptions"])
    wording = _pick(rng, again, (f"Please refill my {p['medicine']} prescription.",
                                 f"I'm running out of {p['medicine']}, can you order a refill?"),
                    (f"Reorder my {p['medicine']}, please.",
                     f"My {p['medicine']} is almost gone: refill it for me."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("list_prescriptions", role="lookup"),
                   RefStep.call("refill_prescription", {"rx_id": p["rx_id"]}),
                   RefStep.answer(f"Your {p['medicine']} refill is ordered; ready tomorrow.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "refill_prescription", rx_id=p["rx_id"])),
    )


def _branch(rng, again: bool) -> Spec:
    state = _pharmacy_state(rng, again)
    rx = rng.choice(state["prescriptions"])["rx_id"]
    branch = rng.choice(BRANCHES_AGAIN if again else BRANCHES)
    wording = _pick(rng, again, (f"Please have prescription {rx} ready for me at the {branch} branch.",
                                 f"I'd like to collect {rx} at your {branch} shop."),
                    (f"Can {rx} be prepared at the {branch} pharmacy for me?",
                     f"Send prescription {rx} to the {branch} branch for pick-up."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("check_stock", {"branch": branch}, role="check"),
                   RefStep.call("prepare_at_branch", {"branch": branch, "rx_id": rx}),
                   RefStep.answer(f"{rx} will be ready at {branch} tomorrow.")],
        check=lambda env, ans, msgs: (_before(env, "check_stock", "prepare_at_branch") + _refused(env)
                                      + _called(env, "prepare_at_branch", rx_id=rx)),
    )


def _pharmacy_thanks(rng, again: bool) -> Spec:
    wording = _pick(rng, again, ("Thank you so much, that's all I needed.", "Thanks, have a nice day!"),
                    ("Many thanks for your help today.", "Wonderful, thank you kindly."))
    return Spec(input=wording, state=_pharmacy_state(rng, again),
                reference=[RefStep.answer("You're welcome, take care!")],
                check=lambda env, ans, msgs: _no_tools(msgs))


_twin(Pharmacy, "pharmacy.refill_weeks", "argument shape", _refill_weeks)
_twin(Pharmacy, "pharmacy.pickup_time", "argument shape", _pickup_time)
_twin(Pharmacy, "pharmacy.price", "answer shape", _pharmacy_price)
_twin(Pharmacy, "pharmacy.refill_by_name", "procedure", _refill_by_name)
_twin(Pharmacy, "pharmacy.branch", "check first", _branch)
_twin(Pharmacy, "pharmacy.thanks", "no tool", _pharmacy_thanks)


# ============================================================================ gym

CLASSES = ("Yoga", "Spinning", "Pilates", "Boxing")
CLASSES_AGAIN = ("Zumba", "Kettlebells", "Aqua Fit", "Stretching")
TRAINERS = ("Nina Vogel", "Marco Rossi", "Elif Demir")
TRAINERS_AGAIN = ("Jana Horak", "Pedro Silva", "Kim Larsen")
COURT_TIMES = ("18:00", "07:30", "19:15")
COURT_TIMES_AGAIN = ("17:45", "08:00", "20:30")


class Gym(SteadyEnv):
    system_prompt = ("You are a gym's member assistant. " + _TODAY_LINE + " Use the tools, then "
                     "answer in one or two short sentences.")


class DateArgs(BaseModel):
    date: str = Field(description="The day, YYYY-MM-DD.")


class CourtArgs(DateArgs):
    time: str = Field(description="Start time, HH:MM (24-hour).")


class TrainerNameArgs(BaseModel):
    name: str = Field(description="The trainer's name.")


class TrainerArgs(BaseModel):
    trainer_id: str = Field(description="The trainer's id, from find_trainer.")


class PauseArgs(BaseModel):
    months: int = Field(description="Number of months.")


@Gym.tool("list_classes", "Group classes on a day: class_id, name and start time.", DateArgs)
def list_classes(env: Gym, date: str) -> dict:
    day = _date_arg(date)
    if _iso(day) not in env.state["classes"]:
        raise EnvError("the timetable covers today and the next 6 days")
    return {"date": _iso(day), "classes": env.state["classes"][_iso(day)]}


@Gym.tool("reserve_court", "Reserve a squash court for one hour.", CourtArgs)
def reserve_court(env: Gym, date: str, time: str) -> dict:
    day = _date_arg(date)
    text = _hhmm(time)
    if day < TODAY:
        raise EnvError("the date is in the past")
    env.state.setdefault("courts", []).append((_iso(day), text))
    return {"court": env.state["court"], "date": _iso(day), "time": text}


@Gym.tool("get_activity", "The user's training this week: sessions and total_minutes.", NoArgs)
def get_activity(env: Gym) -> dict:
    return env.state["activity"]


@Gym.tool("get_measurements", "The user's latest weigh-in: date and weight_grams.", NoArgs)
def get_measurements(env: Gym) -> dict:
    return env.state["weigh_in"]


@Gym.tool("find_trainer", "Personal trainers by name: trainer_id and name.", TrainerNameArgs)
def find_trainer(env: Gym, name: str) -> dict:
    return {"trainers": [{"trainer_id": t["trainer_id"], "name": t["name"]}
                         for t in env.state["trainers"] if _matches(name, t["name"])]}


@Gym.tool("book_session", "Book the trainer's next free personal-training session.", TrainerArgs)
def book_session(env: Gym, trainer_id: str) -> dict:
    t = _find(env.state["trainers"], "trainer_id", trainer_id, "trainer", "find_trainer")
    env.state.setdefault("sessions", []).append(t["trainer_id"])
    return {"trainer": t["name"], "date": t["next"][0], "time": t["next"][1]}


@Gym.tool("get_contract", "The user's membership contract: type and whether it can be paused.",
          NoArgs)
def get_contract(env: Gym) -> dict:
    env.state["contract_seen"] = True
    return env.state["contract"]


@Gym.tool("pause_membership", "Pause the membership for a number of months. Policy: call "
          "get_contract first.", PauseArgs)
def pause_membership(env: Gym, months: int) -> dict:
    if not env.state.get("contract_seen"):
        raise EnvError("refused by policy: call get_contract first")
    if not 1 <= int(months) <= 3:
        raise EnvError("a pause is 1 to 3 months")
    env.state["paused"] = int(months)
    return {"paused_months": int(months)}


def _gym_state(rng, again: bool) -> dict:
    classes = {}
    for d in range(0, 7):
        times = rng.sample(range(7 * 60, 21 * 60, 15), 4)
        classes[_iso(TODAY + dt.timedelta(days=d))] = sorted(
            ({"class_id": f"C-{rng.randint(100, 999)}", "name": name, "time": _clock(t)}
             for name, t in zip(CLASSES_AGAIN if again else CLASSES, times)), key=lambda c: c["time"])
    trainers = [{"trainer_id": f"T-{rng.randint(10, 99)}{i}", "name": name,
                 "next": (_iso(TODAY + dt.timedelta(days=rng.randint(1, 4))),
                          _clock(rng.randrange(8 * 60, 20 * 60, 30)))}
                for i, name in enumerate(TRAINERS_AGAIN if again else TRAINERS)]
    return {"classes": classes, "trainers": trainers, "court": rng.randint(1, 6),
            "activity": {"sessions": rng.randint(2, 5),
                         "total_minutes": rng.choice([75, 135, 200, 95, 170, 250])},
            "weigh_in": {"date": _iso(TODAY - dt.timedelta(days=rng.randint(1, 6))),
                         "weight_grams": rng.choice([68400, 72300, 81700, 59600, 90200, 77800])},
            "contract": {"type": rng.choice(["monthly", "annual"]), "can_pause": True}}


def _class_tomorrow(rng, again: bool) -> Spec:
    state = _gym_state(rng, again)
    name = rng.choice(CLASSES_AGAIN if again else CLASSES)
    time = next(c["time"] for c in state["classes"][_iso(TOMORROW)] if c["name"] == name)
    wording = _pick(rng, again, (f"What time is {name} tomorrow?",
                                 f"When does the {name} class start tomorrow?"),
                    (f"I want to go to {name} tomorrow. What time is it on?",
                     f"Tomorrow's {name} class: when does it begin?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("list_classes", {"date": _iso(TOMORROW)}, role="lookup"),
                   RefStep.answer(f"{name} starts at {time} tomorrow.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "list_classes", date=_iso(TOMORROW))
                                      + _mentions(ans, time, "the class's time")),
    )


def _court_day_after(rng, again: bool) -> Spec:
    state = _gym_state(rng, again)
    time = rng.choice(COURT_TIMES_AGAIN if again else COURT_TIMES)
    wording = _pick(rng, again, (f"Reserve a squash court for me the day after tomorrow at {time}.",
                                 f"Book a squash court for the day after tomorrow, {time}."),
                    (f"Can I get a squash court two days from now, starting {time}?",
                     f"Squash court in two days' time at {time}, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("reserve_court", {"date": _iso(DAY_AFTER), "time": time}),
                   RefStep.answer(f"Court {state['court']} is yours on {_iso(DAY_AFTER)} at {time}.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "reserve_court", date=_iso(DAY_AFTER), time=time)),
    )


def _training_time(rng, again: bool) -> Spec:
    state = _gym_state(rng, again)
    minutes = state["activity"]["total_minutes"]
    wording = _pick(rng, again, ("How long have I trained this week, in hours and minutes?",
                                 "How much time did I spend training this week? Hours and minutes, "
                                 "please."),
                    ("What's my total workout time this week, in hours and minutes?",
                     "In hours and minutes, how long did I exercise this week?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_activity", role="lookup"),
                   RefStep.answer(f"{minutes // 60} hours and {minutes % 60} minutes.")],
        check=lambda env, ans, msgs: _refused(env) + _hours_minutes(ans, minutes),
    )


def _weight(rng, again: bool) -> Spec:
    state = _gym_state(rng, again)
    grams = state["weigh_in"]["weight_grams"]
    kg = f"{grams / 1000:g}"
    wording = _pick(rng, again, ("How many kilos did I weigh at my last weigh-in?",
                                 "What was my weight in kg at the last weigh-in?"),
                    ("What did the scale say last time, in kilograms?",
                     "My most recent weight, in kg, please?"))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_measurements", role="lookup"),
                   RefStep.answer(f"You weighed {kg} kg.")],
        check=lambda env, ans, msgs: _refused(env) + _kilos(ans, kg),
    )


def _trainer(rng, again: bool) -> Spec:
    state = _gym_state(rng, again)
    t = rng.choice(state["trainers"])
    wording = _pick(rng, again, (f"Book me a personal training session with {t['name']}.",
                                 f"I'd like a session with {t['name']}, the next one free."),
                    (f"Can you get me {t['name']}'s next free training slot?",
                     f"Sign me up for a one-to-one with {t['name']}, please."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("find_trainer", {"name": t["name"]}, role="lookup"),
                   RefStep.call("book_session", {"trainer_id": t["trainer_id"]}),
                   RefStep.answer(f"Booked with {t['name']} on {t['next'][0]} at {t['next'][1]}.")],
        check=lambda env, ans, msgs: (_refused(env) + _called(env, "book_session", trainer_id=t["trainer_id"])
                                      + _mentions(ans, t["next"][1], "the session's time")),
    )


def _pause(rng, again: bool) -> Spec:
    state = _gym_state(rng, again)
    months = rng.randint(1, 3)
    unit = "month" if months == 1 else "months"
    wording = _pick(rng, again, (f"Please pause my membership for {months} {unit}.",
                                 f"I'm travelling: can you freeze my membership for {months} {unit}?"),
                    (f"Put my gym membership on hold for {months} {unit}, please.",
                     f"I'd like to suspend my membership for {months} {unit}."))
    return Spec(
        input=wording, state=state,
        reference=[RefStep.call("get_contract", role="check"),
                   RefStep.call("pause_membership", {"months": months}),
                   RefStep.answer(f"Your membership is paused for {months} {unit}.")],
        check=lambda env, ans, msgs: (_before(env, "get_contract", "pause_membership") + _refused(env)
                                      + _called(env, "pause_membership", months=months)),
    )


_twin(Gym, "gym.class_tomorrow", "argument shape", _class_tomorrow)
_twin(Gym, "gym.court_day_after", "argument shape", _court_day_after)
_twin(Gym, "gym.training_time", "answer shape", _training_time)
_twin(Gym, "gym.weight", "answer shape", _weight)
_twin(Gym, "gym.trainer", "procedure", _trainer)
_twin(Gym, "gym.pause", "check first", _pause)


# ============================================================================ unseen: restaurant

DISHES = ("duck confit", "mushroom risotto", "sea bass", "beef wellington")


class Restaurant(SteadyEnv):
    system_prompt = ("You are a restaurant's booking assistant. " + _TODAY_LINE + " Use the tools, "
                     "then answer in one or two short sentences.")


class TableArgs(BaseModel):
    date: str = Field(description="The day, YYYY-MM-DD.")
    time: str = Field(description="Arrival time, HH:MM (24-hour).")
    people: int = Field(description="Number of guests.")


class PreorderArgs(BaseModel):
    reservation_id: str = Field(description="The table reservation's id.")
    dish: str = Field(description="The dish's name.")


@Restaurant.tool("book_table", "Book a table.", TableArgs)
def book_table(env: Restaurant, date: str, time: str, people: int) -> dict:
    day = _date_arg(date)
    text = _hhmm(time)
    if day < TODAY:
        raise EnvError("the date is in the past")
    if not 1 <= int(people) <= 12:
        raise EnvError("tables are for 1 to 12 people")
    env.state.setdefault("tables", []).append((_iso(day), text, int(people)))
    return {"reservation_id": env.state["next_id"], "date": _iso(day), "time": text, "people": int(people)}


@Restaurant.tool("get_last_bill", "The user's last bill: date and total_cents.", NoArgs)
def get_last_bill(env: Restaurant) -> dict:
    return env.state["bill"]


@Restaurant.tool("get_menu", "Today's menu: the dishes served.", NoArgs)
def get_menu(env: Restaurant) -> dict:
    env.state["menu_seen"] = True
    return {"dishes": list(DISHES)}


@Restaurant.tool("preorder_dish", "Pre-order a dish for a table reservation. Policy: call get_menu "
                 "first to confirm the dish is served.", PreorderArgs)
def preorder_dish(env: Restaurant, reservation_id: str, dish: str) -> dict:
    if not env.state.get("menu_seen"):
        raise EnvError("refused by policy: call get_menu first")
    if str(reservation_id).strip().lower() != env.state["reservation_id"].lower():
        raise EnvError(f"unknown reservation_id {reservation_id!r}")
    env.state.setdefault("preorders", []).append(dish)
    return {"reservation_id": env.state["reservation_id"], "dish": dish}


def _restaurant_state(rng) -> dict:
    return {"next_id": f"T-{rng.randint(1000, 9999)}", "reservation_id": f"T-{rng.randint(1000, 9999)}",
            "bill": {"date": _iso(TODAY - dt.timedelta(days=rng.randint(2, 9))),
                     "total_cents": rng.choice([4370, 6815, 9240, 5690, 12350])}}


@_unseen(Restaurant, "restaurant.table_tomorrow", "argument shape")
def _table_tomorrow(rng) -> Spec:
    state = _restaurant_state(rng)
    n = rng.randint(2, 6)
    time = rng.choice(["19:30", "20:00", "18:45"])
    return Spec(
        input=rng.choice([f"A table for {n} tomorrow at {time}, please.",
                          f"Can you book us a table tomorrow, {n} people, at {time}?"]),
        state=state,
        reference=[RefStep.call("book_table", {"date": _iso(TOMORROW), "time": time, "people": n}),
                   RefStep.answer(f"Your table for {n} is booked tomorrow at {time}.")],
        check=lambda env, ans, msgs: (_refused(env)
                                      + _called(env, "book_table", date=_iso(TOMORROW), time=time, people=n)),
    )


@_unseen(Restaurant, "restaurant.bill_euros", "answer shape")
def _bill_euros(rng) -> Spec:
    state = _restaurant_state(rng)
    cents = state["bill"]["total_cents"]
    return Spec(
        input=rng.choice(["How much was my last bill?", "What did I pay last time I ate here?"]),
        state=state,
        reference=[RefStep.call("get_last_bill", role="lookup"),
                   RefStep.answer(f"Your last bill was {_euro_text(cents)}.")],
        check=lambda env, ans, msgs: _refused(env) + _euros(ans, cents, "the bill"),
    )


@_unseen(Restaurant, "restaurant.preorder", "check first")
def _preorder(rng) -> Spec:
    state = _restaurant_state(rng)
    rid = state["reservation_id"]
    dish = rng.choice(DISHES)
    return Spec(
        input=rng.choice([f"Please pre-order the {dish} for my reservation {rid}.",
                          f"For table reservation {rid}, could you have the {dish} ready?"]),
        state=state,
        reference=[RefStep.call("get_menu", role="check"),
                   RefStep.call("preorder_dish", {"reservation_id": rid, "dish": dish}),
                   RefStep.answer(f"The {dish} is pre-ordered for {rid}.")],
        check=lambda env, ans, msgs: (_before(env, "get_menu", "preorder_dish") + _refused(env)
                                      + _called(env, "preorder_dish", reservation_id=rid)),
    )


@_unseen(Restaurant, "restaurant.goodbye", "no tool")
def _restaurant_goodbye(rng) -> Spec:
    return Spec(input=rng.choice(["That was delicious, thank you! Goodbye.",
                                  "Thanks for a lovely evening, see you soon!"]),
                state=_restaurant_state(rng),
                reference=[RefStep.answer("Thank you, see you soon!")],
                check=lambda env, ans, msgs: _no_tools(msgs))


EVOLUTION_MORE = tuple(t for t in AGAIN if t not in _BEFORE)
UNSEEN_MORE = tuple(t for t in KINDS if t not in _KINDS_BEFORE and t not in AGAIN
                    and t not in AGAIN.values())
