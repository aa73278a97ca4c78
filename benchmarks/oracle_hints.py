"""The oracle arm of the real-model benchmark: for each ``small`` template, the hint a person
would write for it (the ideal skill), and the lesson it teaches.

These hints live with the benchmark and never enter a bank. ``bench_real_model.py`` renders a
template's hint exactly where the bank puts skills (the skills block appended to the system
message, :func:`skillbank.retrieval.render`), so the oracle arm differs from the bank's arm
only in what the block says. Written, and committed, before any bank ran on these templates;
never reworded after.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Oracle", "ORACLE", "LESSONS"]

LESSONS = ("check first", "missing tool or parameter", "budget", "no tool", "argument shape",
           "ask, don't guess")


class Oracle(NamedTuple):
    lesson: str
    when: str
    hint: str


ORACLE: dict[str, Oracle] = {
    # --------------------------------------------------------------- check first
    "small.home.lock_door": Oracle(
        "check first", "Locking a door.",
        "Call get_door_status for the door first, then call lock_door for the same door. "
        "Example: 'Lock the back door' -> get_door_status(door='back') -> lock_door(door='back') "
        "-> 'The back door is locked.'"),
    "small.shop.refund": Oracle(
        "check first", "Refunding an order.",
        "Call check_refund_eligibility for the order first; call issue_refund only after it. "
        "Example: 'Refund ORD-1111' -> check_refund_eligibility(order_id='ORD-1111') -> "
        "issue_refund(order_id='ORD-1111') -> 'Order ORD-1111 is refunded.'"),
    "small.shop.cancel": Oracle(
        "check first", "Cancelling an order.",
        "Call get_order for the order first; call cancel_order only after it. Example: 'Cancel "
        "ORD-2222' -> get_order(order_id='ORD-2222') -> cancel_order(order_id='ORD-2222') -> "
        "'Order ORD-2222 is cancelled.'"),
    "small.calendar.cancel_event": Oracle(
        "check first", "Cancelling a calendar event.",
        "Call list_events for the event's date first; call cancel_event only after it. "
        "Example: 'Cancel my Chess club on 2027-01-05' -> list_events(date='2027-01-05') -> "
        "cancel_event(title='Chess club', date='2027-01-05') -> 'Chess club is cancelled.'"),
    # --------------------------------------------------------------- missing tool or parameter
    "small.weather.alert_missing": Oracle(
        "missing tool or parameter", "A request for a weather alert.",
        "You have no tool that sets alerts. Do not pretend to set one: tell the user you can't "
        "set weather alerts (you can still tell them the current weather or forecast)."),
    "small.shop.address_missing": Oracle(
        "missing tool or parameter", "A request to change a delivery address.",
        "None of your tools can change a delivery address. Tell the user plainly that you can't "
        "change the address, and do not call other tools instead."),
    "small.home.dim_missing": Oracle(
        "missing tool or parameter", "A request to dim lights or set a brightness.",
        "set_lights can only switch lights on or off; it has no brightness setting. Do not pass "
        "a brightness. Tell the user you can't set the brightness."),
    "small.calendar.invite_missing": Oracle(
        "missing tool or parameter", "Creating an event and inviting someone.",
        "create_event has no way to invite people. Create the event with title, date and time "
        "only, and tell the user you can't send the invitation."),
    # --------------------------------------------------------------- budget
    "small.weather.warmer_city": Oracle(
        "budget", "Comparing the weather in two cities.",
        "Call get_weather once per city (two calls in all, never the same city twice), then "
        "answer with the warmer city's name and both temperatures."),
    "small.home.two_rooms_on": Oracle(
        "budget", "Switching on the lights in two rooms.",
        "Call set_lights once per room with on=true (two calls in all, no repeats), then answer "
        "in one sentence."),
    "small.shop.two_orders": Oracle(
        "budget", "The status of two orders.",
        "Call get_order once per order id (two calls in all, no repeats), then answer with both "
        "statuses."),
    "small.calendar.two_days": Oracle(
        "budget", "What is on the calendar on two days.",
        "Call list_events once per date (two calls in all, no repeats), then name the events of "
        "both days."),
    # --------------------------------------------------------------- no tool
    "small.weather.thanks": Oracle(
        "no tool", "The user says thanks or goodbye.",
        "When the user only thanks you or says goodbye, call no tool: just reply politely in one "
        "sentence."),
    "small.shop.compliment": Oracle(
        "no tool", "The user gives a compliment and asks nothing.",
        "When the user only says something nice and asks for nothing, call no tool: thank them "
        "in one sentence."),
    "small.home.greeting": Oracle(
        "no tool", "The user greets you.",
        "When the user only greets you, call no tool: greet them back in one sentence."),
    "small.calendar.capabilities": Oracle(
        "no tool", "The user asks what you can do.",
        "When the user asks what you can do, call no tool: answer from your tool list (listing, "
        "adding and cancelling events) in one or two sentences."),
    # --------------------------------------------------------------- argument shape
    "small.home.heating_fahrenheit": Oracle(
        "argument shape", "Setting the heating to a temperature in Fahrenheit.",
        "set_heating takes degrees Celsius. Convert Fahrenheit first: C = (F - 32) x 5 / 9, "
        "rounded. Example: 68°F -> set_heating(temperature_c=20)."),
    "small.calendar.time_24h": Oracle(
        "argument shape", "Adding an event at a time like 3pm.",
        "create_event wants the date as YYYY-MM-DD and the time as 24-hour HH:MM. Example: "
        "'Friday 12 March at 3pm' -> create_event(title=..., date='2027-03-12', time='15:00')."),
    "small.weather.local_name": Oracle(
        "argument shape", "A city named in another language.",
        "The weather tools want the city's English name. Translate it first. Example: 'Wien' -> "
        "get_weather(city='Vienna'); 'München' -> 'Munich'."),
    "small.shop.bare_number": Oracle(
        "argument shape", "An order given as a bare number.",
        "Order ids look like ORD-1234. If the user gives only the number, add the prefix. "
        "Example: 'order 5678' -> get_order(order_id='ORD-5678')."),
    # --------------------------------------------------------------- ask, don't guess
    "small.home.heating_ask": Oracle(
        "ask, don't guess", "Changing the heating without a temperature.",
        "If the user does not say which temperature, do not guess and do not call set_heating: "
        "ask them which temperature they want, then set it."),
    "small.calendar.call_ask": Oracle(
        "ask, don't guess", "Scheduling something without a time.",
        "If the user gives no time for an event, do not guess and do not call create_event yet: "
        "ask them what time, then create it."),
    "small.weather.rain_tomorrow": Oracle(
        "ask, don't guess", "A weather question that names no city.",
        "If the user names no city, do not guess one and do not call a tool: ask which city, "
        "then look up the forecast."),
    "small.shop.status_ask": Oracle(
        "ask, don't guess", "An order question without an order id.",
        "If the user gives no order id, do not guess one and do not call a tool: ask for the "
        "order id, then look it up."),
}
