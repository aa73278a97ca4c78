"""Time and date lessons: the successes passed the time (or date) the user said, the failures another.

A model may pass ``time="17:45"`` for "a quarter to six this evening" in some runs and
``"18:30"`` in others, the same request. Where at least ``min_support`` successes passed, for one
parameter of one tool, a time that is a
reading of a clock time their request said (:func:`skillbank._clock.spoken_times`), no success
passed one that is not, and a failure passed one that is not, the value is the cause of the
failure (the call shape is otherwise the same), not a correlation: the lesson is
``stated_time`` (that tool, that parameter). The round learns it only with
``EvolutionConfig.learn_stated_values``: the reading of the user's words is English.

Dates the same way (``stated_date``): "the day after tomorrow" read from the date the run took
as today (:func:`skillbank._dates.spoken_dates`; ``Run.today``), so a run recorded without one
says nothing about dates.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from skillbank.evolution._evidence import Run
from skillbank.lessons import Lesson, LessonKind, parse_lesson
from skillbank._said import WHAT_IS_SAID, said_values, value_reading

__all__ = ["stated_times", "stated_values"]


def _passed(run: Run, kind: LessonKind | str) -> dict[tuple[str, str], bool]:
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


def stated_values(ok: Sequence[Run], bad: Sequence[Run], kind: LessonKind | str,
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
    return [(parse_lesson({"kind": kind, "tool": tool, "parameter": parameter}),
             f"{n} successes passed `{parameter}` as the {WHAT_IS_SAID[kind]} the user said; "
             f"{other_bad[(tool, parameter)]} failed run(s) passed another")
            for (tool, parameter), n in sorted(said_ok.items())
            if n >= min_support and not other_ok[(tool, parameter)] and other_bad[(tool, parameter)]]


def stated_times(ok: Sequence[Run], bad: Sequence[Run], min_support: int = 2) -> list[tuple[Lesson, str]]:
    """The ``stated_time`` and ``stated_date`` lessons of a request type's runs."""
    return [found for kind in WHAT_IS_SAID for found in stated_values(ok, bad, kind, min_support)]
