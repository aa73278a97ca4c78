"""Clock times as people say them, and as tools take them.

A user writes "a quarter past two" or "half past four this afternoon"; a tool takes ``14:15``
and ``16:30``. A lesson that the time is the one the user said can only be checked if the
said time is known. This module reads it (English only): :func:`spoken_times` finds the clock times
in a text with their 24-hour
readings, :func:`clock_value` reads a tool argument as a time.

No maintained parser reads spoken clock phrases (checked: dateparser 1.5 and timefhuman 0.1.5
return nothing for "a quarter past two" and the wrong hour for "half past four this afternoon"),
so this is a small grammar of English clock phrases: digits (``14:15``, ``2.15 pm``, ``2pm``),
"H o'clock", "half past H", "(a) quarter past/to H", "N (minutes) past/to H", "H fifteen",
noon, midday and midnight, each with an optional part of the day ("am", "pm", "in the
morning", "this afternoon", "tonight"...). A time said without a part of the day has two
readings, the daytime one first (7 to 11 in the morning, 12 to 6 in the afternoon), because
requests made to a service mean its working hours far more often than the night.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SpokenTime", "spoken_times", "clock_value"]

_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
            "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
            "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
_HOUR = r"(?P<hour>1[0-2]|0?[1-9]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
# Minutes in words: twenty-five, twenty five, ten, 25.
_MINUTES = (r"(?P<minutes>(?:twenty|thirty|forty|fifty)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?"
            r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
            r"|sixteen|seventeen|eighteen|nineteen|[0-5]?\d)")
_MORNING = r"a\.?m\.?|in the morning|this morning|tomorrow morning|morning"
_AFTERNOON = (r"p\.?m\.?|in the afternoon|this afternoon|tomorrow afternoon|in the evening|this evening"
              r"|tomorrow evening|tonight|at night|afternoon|evening")
_PART = rf"(?:\s*(?:(?P<am>{_MORNING})|(?P<pm>{_AFTERNOON}))\b)?"
_B = r"(?<![\w:.])"  # not inside a word, a number or a time
_FORMS = (
    # 14:15, 2:15 pm, 2.15pm, 9h30
    # (a dot only before am/pm: 12.50 alone is a price far more often than a time)
    ("digits", rf"{_B}(?P<hour>[01]?\d|2[0-3])(?:[:h]|\.(?=[0-5]\d\s*[ap]\.?m))(?P<minutes>[0-5]\d)(?![\d:])"
               rf"{_PART}"),
    # half past two, a quarter to six, ten past five, twenty-five minutes to three
    ("past", rf"{_B}(?:(?P<half>half)|(?:a\s+)?(?P<quarter>quarter)|{_MINUTES}(?:\s+minutes?)?)\s+"
             rf"(?P<rel>past|after|to|before)\s+{_HOUR}(?:\s+o'?clock)?\b{_PART}"),
    # two o'clock, 2 pm, 11am
    ("oclock", rf"{_B}{_HOUR}(?=\s+o'?clock|\s*(?:{_MORNING}|{_AFTERNOON})\b)(?:\s+o'?clock\b)?{_PART}"),
    # two fifteen, four forty-five (pm), nine oh five; not "two five-packs"
    ("spoken", rf"{_B}{_HOUR}\s+(?P<minutes>oh\s+(?:one|two|three|four|five|six|seven|eight|nine)"
               rf"|fifteen|twenty(?:[- ]five)?|thirty(?:[- ]five)?|forty(?:[- ]five)?|fifty(?:[- ]five)?)"
               rf"\b{_PART}"),
    ("noon", rf"{_B}(?P<noon>noon|midday|midnight)\b"),
)
_PATTERN = re.compile("|".join(f"(?P<{name}>{body.replace('(?P<', f'(?P<{name}_')})"
                               for name, body in _FORMS), re.IGNORECASE)


@dataclass(frozen=True)
class SpokenTime:
    """A clock time found in a text: the words as written and its 24-hour readings (``"HH:MM"``,
    the likelier first; two when no part of the day was said)."""

    phrase: str
    readings: tuple[str, ...]


def _number(text: str) -> int:
    text = text.lower().replace("oh ", "").replace("-", " ").strip()
    if text.isdigit():
        return int(text)
    return sum(_NUMBERS[w] for w in text.split())


def _readings(hour: int, minute: int, part: str | None, twelve_hour: bool) -> tuple[str, ...]:
    if not twelve_hour or hour > 12 or hour == 0:
        return (f"{hour:02d}:{minute:02d}",)
    morning, afternoon = hour % 12, hour % 12 + 12
    if part == "am":
        hours: tuple[int, ...] = (morning,)
    elif part == "pm":
        hours = (afternoon,)
    else:  # the daytime reading first: 7-11 in the morning, 12-6 in the afternoon
        hours = (morning, afternoon) if 7 <= hour <= 11 else (afternoon, morning)
        if hour == 12:
            hours = (12, 0)
    return tuple(f"{h:02d}:{minute:02d}" for h in hours)


def _parse(match: re.Match) -> SpokenTime | None:
    form = match.lastgroup
    g = {k.split("_", 1)[1]: v for k, v in match.groupdict().items() if v is not None and "_" in k
         and k.startswith(f"{form}_")}
    part = "am" if g.get("am") else "pm" if g.get("pm") else None
    phrase = match.group(0).strip()
    if form == "noon":
        return SpokenTime(phrase, ("00:00",) if g["noon"].lower() == "midnight" else ("12:00",))
    hour = _number(g["hour"])
    if form == "digits":
        twelve_hour = part is not None or not g["hour"].startswith("0")
        return SpokenTime(phrase, _readings(hour, int(g["minutes"]), part, twelve_hour and hour <= 12))
    if form == "oclock":
        return SpokenTime(phrase, _readings(hour, 0, part, True))
    if form == "spoken":
        return SpokenTime(phrase, _readings(hour, _number(g["minutes"]), part, True))
    minutes = 30 if g.get("half") else 15 if g.get("quarter") else _number(g["minutes"])
    if minutes >= 60 or (g.get("half") and g["rel"].lower() in ("to", "before")):
        return None
    if g["rel"].lower() in ("to", "before"):
        hour, minutes = (hour - 2) % 12 + 1, 60 - minutes  # a quarter to six: 5:45
    return SpokenTime(phrase, _readings(hour, minutes, part, True))


def spoken_times(text: str) -> list[SpokenTime]:
    """The clock times ``text`` says, in order, each with its 24-hour readings."""
    out = []
    for match in _PATTERN.finditer(text or ""):
        found = _parse(match)
        if found is not None:
            out.append(found)
    return out


_VALUE = re.compile(r"\s*(?:\d{4}-\d{2}-\d{2}[T ])?(?P<hour>[01]?\d|2[0-3])(?::(?P<minutes>[0-5]\d))?"
                    r"(?::\d{2}(?:\.\d+)?)?\s*(?P<part>[ap]\.?m\.?)?\s*", re.IGNORECASE)


def clock_value(value: object) -> str | None:
    """A tool argument read as a time of day, ``"HH:MM"`` (``"2:15 PM"`` is ``"14:15"``,
    ``"2027-03-10T18:00"`` is ``"18:00"``), or ``None`` when it is not one. A bare number is not
    a time (it is a count far more often)."""
    if not isinstance(value, str):
        return None
    m = _VALUE.fullmatch(value)
    if m is None or (m.group("minutes") is None and m.group("part") is None):
        return None
    hour, minute = int(m.group("hour")), int(m.group("minutes") or 0)
    part = (m.group("part") or "").lower()[:1]
    if part:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if part == "p" else 0)
    return f"{hour:02d}:{minute:02d}"
