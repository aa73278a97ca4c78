"""``stated_time`` and ``stated_date``: pass ``parameter`` of ``tool`` as the time (date) the user said.

The call check reads the user's words with an English clock and date grammar
(:mod:`skillbank._said`), so it is delivered in the prompt unless the user asks for it at the tool
(``deliver={"stated_time": "tool"}``); the lesson is
always shown in the prompt. A reminder asks the model to pass the value the user said; it never
names a value the library read for it.

**Learned** from the contrast of a kind of request's runs, only when the round asks for it
(``EvolutionConfig.learn_stated_values``: the reading of the user's words is English). A model
may pass ``time="17:45"`` for "a quarter to six this evening" in some runs and ``"18:30"`` in
others, the same request. Where at least ``min_support`` successes passed, for one parameter of
one tool, a time that is a reading of a clock time their request said
(:func:`skillbank._clock.spoken_times`), no success passed one that is not, and a failure passed
one that is not, the value is the cause of the failure (the call shape is otherwise the same),
not a correlation: the lesson is ``stated_time`` (that tool, that parameter). Dates the same way
(``stated_date``): "the day after tomorrow" read from the date the run took as today
(:func:`skillbank._dates.spoken_dates`), so a run recorded without one says nothing about dates.
Such a lesson explains the times and dates its parameter took: a pitfall about a call whose only
telling value is one is that same mistake seen as a correlation, and evolution does not propose
it beside the lesson.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any, Literal, Sequence

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import ContrastLearner, ContrastRun
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import its_tool, not_run
from skillbank._said import WHAT_IS_SAID, said_values, value_reading

__all__ = ["StatedTime", "StatedDate", "stated_values"]


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


# -- learned from successes and failures -------------------------------------------------------------


def _passed(run: ContrastRun, kind: LessonKind | str) -> dict[tuple[str, str], bool]:
    """``(tool, parameter)`` -> whether every value ``run`` passed there that reads as a time
    (or a date, by ``kind``) is a reading of one its request said (absent: the request said
    none, or the parameter never took such a value)."""
    said = {r for s in said_values(kind, run.task, run.today) for r in s.readings}
    out: dict[tuple[str, str], bool] = {}
    if not said:
        return out
    for call in run.calls:
        if not isinstance(call.args, dict):
            continue
        for parameter, value in call.args.items():
            read = value_reading(kind, value)
            if read is not None:
                key = (call.tool, parameter)
                out[key] = out.get(key, True) and read in said
    return out


def stated_values(ok: Sequence[ContrastRun], bad: Sequence[ContrastRun], kind: LessonKind | str,
                  min_support: int = 2) -> list[tuple[Lesson, str]]:
    """``[(lesson, why)]``: a ``kind`` lesson (``stated_time`` or ``stated_date``) per tool
    parameter the successes gave the said time (or date) and a failure gave another."""
    said_ok: Counter[tuple[str, str]] = Counter()
    other_ok: Counter[tuple[str, str]] = Counter()
    other_bad: Counter[tuple[str, str]] = Counter()
    for run in ok:
        for key, said in _passed(run, kind).items():
            (said_ok if said else other_ok)[key] += 1
    for run in bad:
        for key, said in _passed(run, kind).items():
            if not said:
                other_bad[key] += 1
    cls = StatedTime if kind == LessonKind.stated_time else StatedDate
    return [(cls(tool=tool, parameter=parameter),
             f"{n} successes passed `{parameter}` as the {WHAT_IS_SAID[kind]} the user said; "
             f"{other_bad[(tool, parameter)]} failed run(s) passed another")
            for (tool, parameter), n in sorted(said_ok.items())
            if n >= min_support and not other_ok[(tool, parameter)] and other_bad[(tool, parameter)]]


def _explains(lesson: StatedTime | StatedDate, tool: str, parameter: str, value: Any) -> bool:
    """Whether ``lesson`` explains ``value`` passed as ``parameter`` of ``tool``: its own
    parameter, and a value that reads as a time or a date (a parameter may take either, and
    ``2027-03-10T18:00`` reads as both)."""
    return (tool, parameter) == (lesson.tool, lesson.parameter) and \
        any(value_reading(kind, value) for kind in WHAT_IS_SAID)


def _learner(kind: LessonKind) -> ContrastLearner:
    return ContrastLearner(learn=lambda ok, bad, min_support: stated_values(ok, bad, kind, min_support),
                           explains=_explains, opt_in=True)


SPEC_TIME = register(KindSpec(
    LessonKind.stated_time, StatedTime, "Checks",
    lambda lesson: (f"Pass {tool_ref(lesson.parameter)} to {tool_ref(lesson.tool)} as the clock time the user "
                    "said, on the 24-hour clock (for example, twenty to nine in the evening is 20:40), never "
                    "another time."),
    call_check=_CHECK, contrast_learner=_learner(LessonKind.stated_time)))
SPEC_DATE = register(KindSpec(
    LessonKind.stated_date, StatedDate, "Checks",
    lambda lesson: (f"Pass {tool_ref(lesson.parameter)} to {tool_ref(lesson.tool)} as the date the user said, "
                    "counted from today's date (\"the day after tomorrow\" is today plus two days), never "
                    "another date."),
    call_check=_CHECK, contrast_learner=_learner(LessonKind.stated_date)))
