"""What a user said for a ``stated_time`` or ``stated_date`` lesson, as a tool takes it.

One reading for the two places that need it, both in ``skillbank/lessons/_kinds/stated_value.py``:
learning the lesson from runs (the kinds' contrast learner) and checking a call against it (the
kinds' call check). A time reads as ``"HH:MM"`` (:mod:`skillbank._clock`),
a date as ``"YYYY-MM-DD"`` counted from the run's today (:mod:`skillbank._dates`). The grammars
read English only. ``kind`` is a lesson kind's value (``"stated_time"`` or ``"stated_date"``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from skillbank._clock import clock_value, spoken_times
from skillbank._dates import date_value, spoken_dates

__all__ = ["Said", "said_values", "value_reading", "WHAT_IS_SAID"]

# What each kind is about, as a sentence names it.
WHAT_IS_SAID = {"stated_time": "time", "stated_date": "date"}


@dataclass(frozen=True)
class Said:
    """A time or date the user said: the words as written and its readings as a tool takes
    them, the likelier first."""

    phrase: str
    readings: tuple[str, ...]


def said_values(kind: str, text: str, today: dt.date | None) -> list[Said]:
    """The times (``stated_time``) or dates (``stated_date``, counted from ``today``; none
    without one) that ``text`` says."""
    if kind == "stated_time":
        return [Said(t.phrase, t.readings) for t in spoken_times(text)]
    if kind == "stated_date" and today is not None:
        return [Said(d.phrase, tuple(r.isoformat() for r in d.readings)) for d in spoken_dates(text, today)]
    return []


def value_reading(kind: str, value: object) -> str | None:
    """A tool argument read as a time or a date, as :class:`Said` readings are written (``None``:
    it is not one)."""
    if kind == "stated_time":
        return clock_value(value)
    found = date_value(value)
    return found.isoformat() if found is not None else None
