"""Time lessons: the successes passed the clock time the user said, the failures another.

"Please note that I'll pick up PO-24638 at a quarter to six this evening": the 1.5B passed
``time="17:45"`` in some runs and ``"18:30"`` or ``"19:30"`` in others, the same request. Where
at least ``min_support`` successes passed, for one parameter of one tool, a time that is a
reading of a clock time their request said (:func:`skillbank.clock.spoken_times`), no success
passed one that is not, and a failure passed one that is not, the value is the cause of the
failure (the call shape is otherwise the same), not a correlation: the lesson is
``stated_time`` (that tool, that parameter), checked again at the tool
(``adapters/reminders.py``), where the said time is read from the user's words and given back
on the 24-hour clock.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from skillbank.clock import clock_value, spoken_times
from skillbank.evolution.evidence import Run
from skillbank.lessons import Lesson, LessonKind

__all__ = ["stated_times"]


def _passed(run: Run) -> dict[tuple[str, str], bool]:
    """``(tool, parameter)`` -> whether every time ``run`` passed there is one its request said
    (absent: the request said no clock time, or the parameter never took a time)."""
    said = {r for t in spoken_times(run.task) for r in t.readings}
    out: dict[tuple[str, str], bool] = {}
    if not said:
        return out
    for call in run.calls:
        if not isinstance(call.args, dict):
            continue
        for parameter, value in call.args.items():
            time = clock_value(value)
            if time is not None:
                key = (call.tool, parameter)
                out[key] = out.get(key, True) and time in said
    return out


def stated_times(ok: Sequence[Run], bad: Sequence[Run], min_support: int = 2) -> list[tuple[Lesson, str]]:
    """``[(lesson, why)]``: a ``stated_time`` lesson per tool parameter the successes gave the
    said time and a failure gave another."""
    said_ok, other_ok, other_bad = Counter(), Counter(), Counter()
    for run in ok:
        for key, said in _passed(run).items():
            (said_ok if said else other_ok)[key] += 1
    for run in bad:
        for key, said in _passed(run).items():
            if not said:
                other_bad[key] += 1
    return [(Lesson(kind=LessonKind.stated_time, tool=tool, parameter=parameter),
             f"{n} successes passed `{parameter}` as the time the user said; {other_bad[(tool, parameter)]} "
             f"failed run(s) passed another")
            for (tool, parameter), n in sorted(said_ok.items())
            if n >= min_support and not other_ok[(tool, parameter)] and other_bad[(tool, parameter)]]
