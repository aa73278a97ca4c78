"""Numbers in tool results and in replies: is a value stated as the tool gave it, or scaled?

A tool that returns ``balance_cents: 24175`` is answered well with "241.75" and badly with
"24175 cents". An ``answer_unit`` lesson (``skillbank.lessons``) is learned from runs whose
replies stated a result field divided by a scale and runs that stated the raw number, and
checked at the answer the same way; both sides read numbers only through this module.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

__all__ = ["SCALES", "numeric_fields", "numbers_in", "states", "converts", "scaled"]

# The conversions a person expects between a tool's unit and theirs: cents or millis to the
# whole (100, 1000), minutes to hours (60). Nothing else is guessed.
SCALES = (100, 1000, 60)

_NUMBER = re.compile(r"(?<![\w.,-])\d[\d,.]*\d(?![\w-])|(?<![\w.,-])\d(?![\w.,-]?\d)")
_MAX_DEPTH = 6


def numeric_fields(result: str | None) -> list[tuple[str, float]]:
    """``(field, value)`` for every number in a JSON tool result, nested ones included (a list
    of accounts: each ``balance_cents``); booleans are not numbers. Text after the JSON is not
    read. Not JSON: none."""
    try:
        data, _ = json.JSONDecoder().raw_decode((result or "").strip())
    except (TypeError, ValueError):
        return []
    return list(_walk(data, None, 0))


def scaled(value: float, scale: int) -> str:
    """``value / scale`` as a person writes it: 241.75, 1.25, 2."""
    return f"{value / scale:.3f}".rstrip("0").rstrip(".")


def _walk(data: Any, key: str | None, depth: int) -> Iterator[tuple[str, float]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _walk(v, str(k), depth + 1)
    elif isinstance(data, list):
        for v in data:
            yield from _walk(v, key, depth + 1)
    elif isinstance(data, (int, float)) and not isinstance(data, bool) and key is not None:
        yield key, float(data)


def numbers_in(text: str | None) -> set[float]:
    """Every number ``text`` states, read both ways a separator can mean (``1,250`` is 1250 or
    1.25; ``3.850,50`` is 3850.5), so a match never depends on the writer's locale."""
    out: set[float] = set()
    for token in _NUMBER.findall(text or ""):
        readings = [token.replace(",", "")]  # 1,250.50 / 241.75
        if "," in token:  # 241,75 / 3.850,50
            readings.append(token.replace(".", "").replace(",", "."))
        for reading in readings:
            try:
                out.add(round(float(reading), 6))
            except ValueError:
                continue
    return out


def states(numbers: set[float], value: float) -> bool:
    """Whether ``value`` is among ``numbers`` (from :func:`numbers_in`)."""
    return round(value, 6) in numbers


def converts(value: float, said: set[float]) -> bool:
    """Whether ``value`` is one of ``said``'s numbers in another unit: scaled by one of
    :data:`SCALES` either way, or a temperature between Fahrenheit and Celsius (to the nearest
    degree). A converted value was worked out, not guessed."""
    for number in said:
        if any(abs(value - number * s) < 1e-6 or abs(value - number / s) < 1e-6 for s in SCALES):
            return True
        if abs(value - (number - 32) * 5 / 9) <= 0.5 or abs(value - (number * 9 / 5 + 32)) <= 0.5:
            return True
    return False
