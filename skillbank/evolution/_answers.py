"""Answer lessons: what the successful replies said that the failed ones did not.

A small model that reads ``balance_cents: 24175`` sometimes answers "241.75" and sometimes
"24175". Where at least ``min_support`` successes stated a numeric result field divided by one
of :data:`skillbank._units.SCALES`, none stated it raw, and a failure stated it raw, the reply's
number is the cause of the failure, not a correlation: the lesson is ``answer_unit`` (that
field, that scale), checked again at the answer (``adapters/_answer_reminders.py``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from skillbank.evolution._evidence import Run
from skillbank.lessons import AnswerUnit, Lesson
from skillbank._units import SCALES, numbers_in, numeric_fields, states

__all__ = ["answer_units"]


def _stated(run: Run) -> dict[tuple[str, str, int], str]:
    """``(tool, field, scale)`` -> ``"scaled"`` or ``"raw"``: how ``run``'s reply stated each
    numeric field of its results (a field it did not state is absent)."""
    said = numbers_in(run.answer)
    out: dict[tuple[str, str, int], str] = {}
    for call in run.calls:
        if not call.ok:
            continue
        for name, value in numeric_fields(call.result):
            for scale in SCALES:
                if value < scale:  # 45 cents as 0.45 and as 45 read too alike to teach anything
                    continue
                key = (call.tool, name, scale)
                if states(said, value):
                    out[key] = "raw"
                elif states(said, value / scale) and out.get(key) != "raw":
                    out[key] = "scaled"
    return out


def answer_units(ok: Sequence[Run], bad: Sequence[Run], min_support: int = 2) -> list[tuple[Lesson, str]]:
    """``[(lesson, why)]``: an ``answer_unit`` lesson per result field the successes scaled and
    a failure stated raw (one scale per field: the one most successes used)."""
    scaled: defaultdict[tuple[str, str, int], int] = defaultdict(int)
    raw_ok: defaultdict[tuple[str, str, int], int] = defaultdict(int)
    raw_bad: defaultdict[tuple[str, str, int], int] = defaultdict(int)
    for run in ok:
        for key, how in _stated(run).items():
            (scaled if how == "scaled" else raw_ok)[key] += 1
    for run in bad:
        for key, how in _stated(run).items():
            if how == "raw":
                raw_bad[key] += 1
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for (tool, name, scale), n in scaled.items():
        if n >= min_support and not raw_ok[(tool, name, scale)] and raw_bad[(tool, name, scale)]:
            if n > best.get((tool, name), (0, 0))[0]:
                best[(tool, name)] = (n, scale)
    return [(AnswerUnit(tool=tool, field=name, scale=scale),
             f"{n} successes stated `{name}` divided by {scale}; {raw_bad[(tool, name, scale)]} failed "
             f"run(s) stated the raw number")
            for (tool, name), (n, scale) in sorted(best.items())]
