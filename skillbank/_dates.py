"""Dates as people say them, counted from the run's today, and as tools take them.

A user writes "the day after tomorrow" or "this Friday"; a tool takes ``2027-03-10``. A lesson
that the date is the one the user said can only be checked if the said date is known. This
module reads it (English only): :func:`spoken_dates` finds the dates a text says with
their readings, given the day the run took as today; :func:`date_value` reads a tool argument
as a date.

Why not dateparser (1.2, the maintained parser): its ``search_dates`` reads "the day after
tomorrow at 18:00" as tomorrow, and "a refill for three weeks" (a duration) as a date three
weeks on. So this is a small grammar of English date phrases: today, tonight, tomorrow, the day
after tomorrow; "in N days/weeks('s time)", "N days/weeks from now/today"; a weekday, bare or
after "this", "on", "coming" or "next"; "the first ... last <weekday> of next month / <month>";
"12 March", "March 12th", "on the 12th"; ISO ``2027-03-12``. A phrase with two readings has the
likelier first: "next Friday" said on a Monday is this week's Friday or the next one's.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

__all__ = ["SpokenDate", "spoken_dates", "date_value"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "thirty": 30}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}

_WEEKDAY = "(?P<wd>" + "|".join(_WEEKDAYS) + ")"
_MONTH = "(?P<month>" + "|".join(m[:3] + f"(?:{m[3:]})?" if len(m) > 3 else m for m in _MONTHS) + r")\.?"
_COUNT = r"(?P<n>\d{1,3}|" + "|".join(_COUNTS) + ")"
_DAY = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_FORMS = (
    ("iso", r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"),
    ("after", r"(?:the\s+)?day\s+after\s+tomorrow"),
    ("offset", rf"(?:in\s+{_COUNT}\s+(?P<unit>day|week)s?(?:['’]s?\s+time)?|{_COUNT.replace('<n>', '<n2>')}\s+"
               rf"(?P<unit2>day|week)s?\s+from\s+(?:now|today))"),
    ("nth", r"(?:the\s+)?(?P<nth>" + "|".join(_ORDINALS) + rf")\s+{_WEEKDAY}\s+(?:of|in)\s+"
            rf"(?:(?P<next>next\s+month)|(?P<this>this\s+month)|{_MONTH})"),
    ("day_month", rf"(?:{_WEEKDAY.replace('<wd>', '<wd2>')},?\s+)?(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}"),
    ("month_day", rf"(?:{_WEEKDAY.replace('<wd>', '<wd2>')},?\s+)?{_MONTH}\s+(?:the\s+)?{_DAY}{_YEAR}"),
    ("weekday_the", rf"{_WEEKDAY}\s+the\s+{_DAY}"),
    ("the_day", rf"on\s+the\s+{_DAY.replace('(?:st|nd|rd|th)?', '(?:st|nd|rd|th)')}"),  # not "the 2nd floor"
    ("weekday", rf"(?:(?P<rel>this|on|coming|this\s+coming|next)\s+)?{_WEEKDAY}"),
    ("tomorrow", r"tomorrow"),
    ("today", r"today|tonight|this\s+(?:morning|afternoon|evening)"),
)
_PATTERN = re.compile(r"(?<![\w-])(?:" + "|".join(
    f"(?P<{name}>{body.replace('(?P<', f'(?P<{name}_')})" for name, body in _FORMS) + r")(?![\w-])",
    re.IGNORECASE)


@dataclass(frozen=True)
class SpokenDate:
    """A date found in a text: the words as written and its readings, the likelier first (two
    when the words leave it open: "next Friday")."""

    phrase: str
    readings: tuple[dt.date, ...]


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _COUNTS[text.lower()]


def _month(text: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(text.lower().rstrip(".")[:3]))


def _coming(today: dt.date, weekday: int) -> dt.date:
    """The next ``weekday`` after today (a week on when today is that weekday)."""
    return today + dt.timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> dt.date | None:
    first = dt.date(year, month, 1)
    if nth > 0:
        day = first + dt.timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
        return day if day.month == month else None
    last = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1))
    return last - dt.timedelta(days=(last.weekday() - weekday) % 7)


def _dated(year: int | None, month: int, day: int, today: dt.date) -> dt.date | None:
    """``day`` ``month`` in ``year``, or, with no year said, the first not before today."""
    try:
        if year is not None:
            return dt.date(year, month, day)
        found = dt.date(today.year, month, day)
        return found if found >= today else dt.date(today.year + 1, month, day)
    except ValueError:  # 31 April
        return None


def _parse(match: re.Match, today: dt.date) -> tuple[dt.date, ...]:
    form = match.lastgroup or ""
    g = {k[len(form) + 1:]: v for k, v in match.groupdict().items() if v is not None and k.startswith(f"{form}_")}
    if form == "iso":
        try:
            return (dt.date(int(g["y"]), int(g["m"]), int(g["d"])),)
        except ValueError:
            return ()
    if form == "today":
        return (today,)
    if form == "tomorrow":
        return (today + dt.timedelta(days=1),)
    if form == "after":
        return (today + dt.timedelta(days=2),)
    if form == "offset":
        n, unit = _count(g.get("n") or g["n2"]), (g.get("unit") or g["unit2"]).lower()
        return (today + dt.timedelta(days=n * (7 if unit == "week" else 1)),)
    if form == "nth":
        if g.get("next"):
            year, month = today.year + today.month // 12, today.month % 12 + 1
        elif g.get("this"):
            year, month = today.year, today.month
        else:
            month = _month(g["month"])
            year = today.year if month >= today.month else today.year + 1
        found = _nth_weekday(year, month, _WEEKDAYS.index(g["wd"].lower()), _ORDINALS[g["nth"].lower()])
        return (found,) if found else ()
    if form in ("day_month", "month_day"):
        found = _dated(int(g["year"]) if g.get("year") else None, _month(g["month"]), int(g["day"]), today)
        return (found,) if found else ()
    if form in ("weekday_the", "the_day"):
        day = int(g["day"])
        month_start = today.replace(day=1)
        for first in (month_start, (month_start + dt.timedelta(days=32)).replace(day=1)):
            found = _dated(first.year, first.month, day, today)
            if found is not None and found >= today:
                return (found,)
        return ()
    weekday = _WEEKDAYS.index(g["wd"].lower())
    rel = " ".join((g.get("rel") or "").lower().split())
    if rel == "next":  # this week's or the next one's: said on a Monday, "next Friday" is either
        coming = _coming(today, weekday)
        return (coming, coming + dt.timedelta(days=7))
    if rel == "this" and today.weekday() == weekday:
        return (today,)
    return (_coming(today, weekday),)


def spoken_dates(text: str, today: dt.date) -> list[SpokenDate]:
    """The dates ``text`` says, in order, each with its readings counted from ``today``."""
    out = []
    for match in _PATTERN.finditer(text or ""):
        readings = _parse(match, today)
        if readings:
            out.append(SpokenDate(" ".join(match.group(0).split()).rstrip("."), readings))
    return out


_VALUE = re.compile(r"\s*(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?\s*")


def date_value(value: object) -> dt.date | None:
    """A tool argument read as a date (``"2027-03-10"``, ``"2027-03-10T18:00"``, a ``date``), or
    ``None`` when it is not one."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    m = _VALUE.fullmatch(value)
    if m is None:
        return None
    try:
        return dt.date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
    except ValueError:
        return None
