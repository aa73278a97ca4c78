"""The oracle's typed lessons: what each template's hint (``oracle_hints.py``) says, as the
lessons a bank holds, so the oracle skill is placed everywhere the bank places a skill.

The hints were first measured in the skills block alone, where the 1.5B model ignores a rule
such as "call X first" (calibration of 2026-12-01 22:27). A bank also answers a call that breaks
a lesson at the tool boundary (``InjectionConfig.reminders``): the ideal skill for a template is
its hint *and* the lessons a call can be checked against, shown where the bank shows them.
Templates whose lesson no call can be checked against (small talk, an argument's shape) have
none here: their oracle is the block alone, as before.

The hint texts are unchanged. Written, and committed, before any bank ran with these lessons and
before the calibration that uses them; never edited after.
"""

from __future__ import annotations

from skillbank.lessons import Lesson, LessonKind

__all__ = ["ORACLE_LESSONS"]


def _check(check: str, tool: str) -> Lesson:
    return Lesson(kind=LessonKind.check_first, check=check, tool=tool)


def _ask(tool: str, parameter: str) -> Lesson:
    return Lesson(kind=LessonKind.ask_for, tool=tool, parameter=parameter)


def _budget(tool: str) -> Lesson:
    return Lesson(kind=LessonKind.budget, budget=2, tool=tool)  # every budget template needs two calls


ORACLE_LESSONS: dict[str, tuple[Lesson, ...]] = {
    # check first: the action's call is held back until its check has run
    "small.home.lock_door": (_check("get_door_status", "lock_door"),),
    "small.shop.refund": (_check("check_refund_eligibility", "issue_refund"),),
    "small.shop.cancel": (_check("get_order", "cancel_order"),),
    "small.calendar.cancel_event": (_check("list_events", "cancel_event"),),
    # missing tool or parameter: a call to the tool the agent lacks, an argument it cannot take
    "small.weather.alert_missing": (Lesson(kind=LessonKind.missing_tool, tool="set_alert"),),
    # no tool changes an address, and nobody can say what name a model will invent for one
    "small.shop.address_missing": (Lesson(kind=LessonKind.missing_tool),),
    "small.home.dim_missing": (Lesson(kind=LessonKind.missing_parameter, tool="set_lights",
                                      parameter="brightness"),),
    # the invitation's argument has no name the model can see: any argument create_event lacks
    "small.calendar.invite_missing": (Lesson(kind=LessonKind.missing_parameter),),
    # budget: two calls, no repeats
    "small.weather.warmer_city": (_budget("get_weather"),),
    "small.home.two_rooms_on": (_budget("set_lights"),),
    "small.shop.two_orders": (_budget("get_order"),),
    "small.calendar.two_days": (_budget("list_events"),),
    # ask, don't guess: a value the user never gave
    "small.home.heating_ask": (_ask("set_heating", "temperature_c"),),
    "small.calendar.call_ask": (_ask("create_event", "time"),),
    "small.weather.rain_tomorrow": (_ask("get_forecast", "city"), _ask("get_weather", "city")),
    "small.shop.status_ask": (_ask("get_order", "order_id"),),
    # no tool, argument shape: nothing a call can be checked against (the block only)
    "small.weather.thanks": (),
    "small.shop.compliment": (),
    "small.home.greeting": (),
    "small.calendar.capabilities": (),
    "small.home.heating_fahrenheit": (),
    "small.calendar.time_24h": (),
    "small.weather.local_name": (),
    "small.shop.bare_number": (),
}
