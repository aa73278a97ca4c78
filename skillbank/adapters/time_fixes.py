"""Stated-time lessons given at the tool (``InjectionConfig.stated_times="tool"``).

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

The fix is marked on the result for whoever records the run (:func:`time_fix_of`): the step is
recorded with the arguments the tool ran with, and the lesson as injected at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from langchain_core.messages import ToolMessage

from skillbank.clock import clock_value, spoken_times
from skillbank.lessons import LessonKind
from skillbank.queries import SkillHit

__all__ = ["TimeFix", "fixed_call", "with_fix_note", "time_fix_of", "TIME_FIX_METADATA_KEY"]

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
    time: str  # the time it ran with, HH:MM


def _said_reading(said: str) -> tuple[str, str] | None:
    """``(phrase, HH:MM)`` of the one time the user said (its first reading), or ``None`` when
    the user said none or several."""
    times = spoken_times(said)
    if len({t.readings[0] for t in times}) != 1:
        return None
    return times[0].phrase, times[0].readings[0]


def fixed_call(hits: Sequence[SkillHit], tool: str, args: Any, said: str) -> TimeFix | None:
    """For a call of ``tool`` with ``args`` that breaks a ``stated_time`` lesson of ``hits`` (its
    parameter is no reading of the time the user said, ``said`` being everything the user said):
    the call with the said time, or ``None``."""
    if not isinstance(args, dict):
        return None
    for hit in hits:
        for lesson in hit.skill.content.lessons:
            if lesson.kind != LessonKind.stated_time or lesson.tool != tool or lesson.parameter is None:
                continue
            passed = args.get(lesson.parameter)
            said_time = _said_reading(said) if passed is not None else None
            if said_time is None:
                continue
            phrase, reading = said_time
            readings = {r for t in spoken_times(said) for r in t.readings}
            if clock_value(passed) in readings:
                return None  # a reading of the said time: the call is the user's
            note = (f'Note: `{tool}` ran with `{lesson.parameter}`="{reading}", the time the user said '
                    f'("{phrase}") on the 24-hour clock, instead of "{passed}".')
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
