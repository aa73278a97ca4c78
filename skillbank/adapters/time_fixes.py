"""Stated-time and stated-date lessons given at the tool (``InjectionConfig.stated_times="tool"``).

A ``stated_time`` lesson says to pass a tool's parameter as the clock time the user said, on the
24-hour clock. Held back at the tool with the right call spelled out (the reminder), the 1.5B
told the user about the call instead of making it, in 4 of the 6 failed gate trials of protocol
v17; in the prompt, it made up a time next to the sentence's example (benchmarks/RESULTS.md,
"protocol v17"). The one lesson given at the tool that passed its gates, the answer-unit note,
rides on the result of a call that ran. So in this form the lesson is left out of the block and
a call of its tool that passes another time runs with the time the user said, and its result
says so (:func:`fixed_call`, :func:`with_fix_note`), so the model can tell the user the time
that was set. Only when the user said one time: with two times said, which one the call meant
is not known, and the call is left to the reminders. A time said without a part of the day is
read as the daytime reading (:mod:`skillbank.clock`), as the reminder gives it first.

A ``stated_date`` lesson (the date the user said, counted from the run's today,
``InjectionConfig.today``) is given the same way, but a date is fixed only when what the user
said has one reading: "next Friday" said on a Monday is this week's or the next one's.

The fix is marked on the result for whoever records the run (:func:`time_fix_of`): the step is
recorded with the arguments the tool ran with, and the lesson as injected at it.

After a fix, the 1.5B often made the fixed call again, and again, until it ran out of turns with
no reply: 3 of the 6 fixed runs of protocol v18 ended so. A repeat of a fixed call that
succeeded is therefore not run again: it is answered with the first result and what to tell the
user (:func:`repeat_answer`), recorded as a reminder of the lesson.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Sequence

from langchain_core.messages import ToolMessage

from skillbank.adapters.reminders import REMINDER_METADATA_KEY
from skillbank.lessons import LessonKind
from skillbank.queries import SkillHit
from skillbank.said import WHAT_IS_SAID, Said, read_as, said_values, value_reading

__all__ = ["TimeFix", "fixed_call", "with_fix_note", "time_fix_of", "repeat_answer",
           "TIME_FIX_METADATA_KEY"]

# Where a tool result says which lesson fixed its call (skill id, version and the arguments the
# tool ran with), for whoever records the run: ``response_metadata`` is never sent to a provider.
TIME_FIX_METADATA_KEY = "skillbank_time_fix"


@dataclass(frozen=True)
class TimeFix:
    """A call's time set to the one the user said: the arguments to run with, and the note."""

    skill_id: str
    version: int
    args: dict[str, Any]
    note: str  # what changed, true whether the call then succeeded or not
    time: str  # the time (HH:MM) or date (YYYY-MM-DD) it ran with


def _the_one_said(kind: LessonKind, found: Sequence[Said]) -> tuple[str, str] | None:
    """``(phrase, reading)`` of the one time (or date) the user said (``found``), or ``None``
    when the user said none or several. A time's first reading is taken (the daytime one: "a
    quarter past two" is 14:15); a date is taken only with one reading ("next Friday" has two)."""
    if len({s.readings[0] for s in found}) != 1:
        return None
    if kind == LessonKind.stated_date and len({r for s in found for r in s.readings}) != 1:
        return None
    return found[0].phrase, found[0].readings[0]


def fixed_call(hits: Sequence[SkillHit], tool: str, args: Any, said: str,
               today: dt.date | None = None) -> TimeFix | None:
    """For a call of ``tool`` with ``args`` that breaks a ``stated_time`` or ``stated_date``
    lesson of ``hits`` (its parameter is no reading of the time or date the user said, ``said``
    being everything the user said; dates counted from ``today``): the call with the said
    value, or ``None``."""
    if not isinstance(args, dict):
        return None
    for hit in hits:
        for lesson in hit.skill.content.lessons:
            kind = lesson.kind
            if kind not in WHAT_IS_SAID or lesson.tool != tool or lesson.parameter is None:
                continue
            passed = args.get(lesson.parameter)
            if passed is None:
                continue
            found = said_values(kind, said, today)
            the_one = _the_one_said(kind, found)
            if the_one is None or value_reading(kind, passed) in {r for s in found for r in s.readings}:
                continue  # nothing (or several) said, or a reading of it: the call is the user's
            phrase, reading = the_one
            note = (f'Note: `{tool}` ran with `{lesson.parameter}`="{reading}", the {WHAT_IS_SAID[kind]} the user '
                    f'said ("{phrase}") {read_as(kind, today)}, instead of "{passed}".')
            return TimeFix(hit.skill.id, hit.skill.version, {**args, lesson.parameter: reading}, note, reading)
    return None


def with_fix_note(result: Any, fix: TimeFix) -> Any:
    """``result`` (the fixed call's answer) with ``fix``'s note and marker: the model reads
    what changed (and, when the call succeeded, the time to tell the user); a result that is no
    message (a ``Command``) as it is."""
    if not isinstance(result, ToolMessage):
        return result
    marker = {"skill_id": fix.skill_id, "version": fix.version, "args": fix.args}
    update: dict[str, Any] = {"response_metadata": {**result.response_metadata, TIME_FIX_METADATA_KEY: marker}}
    if isinstance(result.content, str):
        told = "" if result.status == "error" else f" Tell the user {fix.time}."
        update["content"] = f"{result.content}\n\n{fix.note}{told}"
    return result.model_copy(update=update)


def time_fix_of(message: object) -> tuple[str, int, dict[str, Any]] | None:
    """``(skill_id, version, args the tool ran with)`` of the lesson that fixed the call
    ``message`` answers, or ``None``."""
    marker = (getattr(message, "response_metadata", None) or {}).get(TIME_FIX_METADATA_KEY)
    if not isinstance(marker, dict):
        return None
    return str(marker["skill_id"]), int(marker["version"]), dict(marker["args"])


def repeat_answer(fix: TimeFix, first: ToolMessage, tool_call: dict[str, Any]) -> ToolMessage:
    """The answer to ``tool_call``, a repeat of the call ``fix`` changed, which ran and came
    back with ``first`` (its result before the note): that result again, said to be the same
    call's, and the time to tell the user; marked as a reminder of the lesson (not run)."""
    name = tool_call.get("name") or "?"
    note = (f"Note: `{name}` already ran with these arguments in this run; this is its result, and it was not "
            f"run again. Tell the user {fix.time}.")
    return ToolMessage(content=f"{first.content}\n\n{note}", tool_call_id=tool_call.get("id") or "", name=name,
                       response_metadata={REMINDER_METADATA_KEY: {"skill_id": fix.skill_id, "version": fix.version}})
