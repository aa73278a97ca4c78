"""``stated_time`` and ``stated_date``: pass ``parameter`` of ``tool`` as the time (date) the user said.

The call check reads the user's words with an English clock and date grammar
(:mod:`skillbank._said`), so it is delivered in the prompt unless the user asks for it at the tool
(``deliver={"stated_time": "tool"}``); the lesson is
always shown in the prompt. A reminder asks the model to pass the value the user said; it never
names a value the library read for it.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import its_tool, not_run
from skillbank._said import said_values, value_reading

__all__ = ["StatedTime", "StatedDate"]


class StatedTime(Lesson):
    """Pass ``parameter`` of ``tool`` as the clock time the user said, on the 24-hour clock."""

    kind: Literal[LessonKind.stated_time] = LessonKind.stated_time
    tool: str = Field(min_length=1)
    parameter: str = Field(min_length=1)


class StatedDate(Lesson):
    """Pass ``parameter`` of ``tool`` as the date the user said, counted from the run's today."""

    kind: Literal[LessonKind.stated_date] = LessonKind.stated_date
    tool: str = Field(min_length=1)
    parameter: str = Field(min_length=1)


def _other_said(lesson: StatedTime | StatedDate, call: CallView) -> bool:
    """Whether the call passes the parameter a value that is no reading of a time (date) the
    user said (nothing to judge when the user said none)."""
    args = call.args if isinstance(call.args, dict) else {}
    if args.get(lesson.parameter) is None:
        return False
    today = getattr(call, "today", None) or dt.date.today()
    said = {r for s in said_values(lesson.kind, call.said, today) for r in s.readings}
    return bool(said) and value_reading(lesson.kind, args[lesson.parameter]) not in said


def _reminder(lesson: StatedTime | StatedDate, call: CallView) -> str:
    what = "clock time, on the 24-hour clock" if lesson.kind == LessonKind.stated_time else \
        "date, counted from today's date"
    return (f"{not_run(call)} Pass `{lesson.parameter}` as the {what} the user said, and call "
            f"`{call.tool}` again.")


_CHECK = CallCheck(scope=its_tool, breaks=_other_said, reminder=_reminder)

SPEC_TIME = register(KindSpec(
    LessonKind.stated_time, StatedTime, "Checks",
    lambda lesson: (f"Pass {tool_ref(lesson.parameter)} to {tool_ref(lesson.tool)} as the clock time the user "
                    "said, on the 24-hour clock (for example, twenty to nine in the evening is 20:40), never "
                    "another time."),
    call_check=_CHECK))
SPEC_DATE = register(KindSpec(
    LessonKind.stated_date, StatedDate, "Checks",
    lambda lesson: (f"Pass {tool_ref(lesson.parameter)} to {tool_ref(lesson.tool)} as the date the user said, "
                    "counted from today's date (\"the day after tomorrow\" is today plus two days), never "
                    "another date."),
    call_check=_CHECK))
