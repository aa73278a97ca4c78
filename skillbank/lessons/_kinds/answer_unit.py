"""``answer_unit``: give ``field`` of ``tool``'s result divided by ``scale``, never the raw number.

Delivered in the prompt. Two checks at the answer: a reply that states the field as its tool
returned it is asked to give the number as the lesson says (the library never computes the answer
for it); a reply that states a number nothing in the run gave, where the lesson's tool was offered
and not called, is asked to call the tool and answer from its result.

**Learned** from the contrast of a kind of request's runs. A small model that reads
``balance_cents: 24175`` sometimes answers "241.75" and sometimes "24175". Where at least
``min_support`` successes stated a numeric result field divided by one of
:data:`skillbank._units.SCALES`, none stated it raw, and a failure stated it raw, the reply's
number is the cause of the failure, not a correlation: the lesson is ``answer_unit`` (that field,
that scale; of several scales, the one most successes used).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal, Sequence

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import ContrastLearner, ContrastRun
from skillbank.lessons._registry import AnswerCheck, AnswerView, KindSpec, register
from skillbank.lessons._render import sentence as _sentence
from skillbank.lessons._render import tool_ref
from skillbank._units import SCALES, converts, numbers_in, numeric_fields, scaled, states

__all__ = ["AnswerUnit", "answer_units"]


class AnswerUnit(Lesson):
    """Report ``field`` of ``tool``'s result divided by ``scale`` (cents as euros, and so on)."""

    kind: Literal[LessonKind.answer_unit] = LessonKind.answer_unit
    tool: str = Field(min_length=1)
    field: str = Field(min_length=1)
    scale: int = Field(gt=1)


def sentence(lesson: AnswerUnit) -> str:
    example = lesson.scale * 3 // 4
    return (f"When {tool_ref(lesson.tool)} returns {tool_ref(lesson.field)}, tell the user that number divided "
            f"by {lesson.scale} (for example {example} is {scaled(example, lesson.scale)}), never the raw "
            "number.")


# -- learned from successes and failures -------------------------------------------------------------


def _stated(run: ContrastRun) -> dict[tuple[str, str, int], str]:
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


def answer_units(ok: Sequence[ContrastRun], bad: Sequence[ContrastRun],
                 min_support: int = 2) -> list[tuple[Lesson, str]]:
    """``[(lesson, why)]``: an ``answer_unit`` lesson per result field the successes scaled and
    a failure stated raw (one scale per field: the one most successes used)."""
    scaled_ok: defaultdict[tuple[str, str, int], int] = defaultdict(int)
    raw_ok: defaultdict[tuple[str, str, int], int] = defaultdict(int)
    raw_bad: defaultdict[tuple[str, str, int], int] = defaultdict(int)
    for run in ok:
        for key, how in _stated(run).items():
            (scaled_ok if how == "scaled" else raw_ok)[key] += 1
    for run in bad:
        for key, how in _stated(run).items():
            if how == "raw":
                raw_bad[key] += 1
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for (tool, name, scale), n in scaled_ok.items():
        if n >= min_support and not raw_ok[(tool, name, scale)] and raw_bad[(tool, name, scale)]:
            if n > best.get((tool, name), (0, 0))[0]:
                best[(tool, name)] = (n, scale)
    return [(AnswerUnit(tool=tool, field=name, scale=scale),
             f"{n} successes stated `{name}` divided by {scale}; {raw_bad[(tool, name, scale)]} failed "
             f"run(s) stated the raw number")
            for (tool, name), (n, scale) in sorted(best.items())]


# -- checked at the answer ---------------------------------------------------------------------------


def _raw_number(lesson: AnswerUnit, answer: AnswerView) -> str | None:
    """The note for a reply that states the lesson's field as its tool returned it, or ``None``."""
    said = numbers_in(answer.text)
    for result in answer.results(lesson.tool):
        for name, value in numeric_fields(result):
            if name == lesson.field and states(said, value) and not states(said, value / lesson.scale):
                return (f"Your reply gives `{name}` as {value:g}, the number `{lesson.tool}` returned. "
                        f"The skill says: {_sentence(lesson)} Answer the user again with the number as "
                        "the skill says.")
    return None


def _unsourced_number(lesson: AnswerUnit, answer: AnswerView) -> str | None:
    """The note for a reply that states a number no source of the run gave (the user's words, a
    tool's result), where the lesson says the answer comes from its tool's result and that tool
    was offered and not called; ``None`` otherwise."""
    if not answer.offered(lesson.tool) or answer.called(lesson.tool):
        return None
    said = numbers_in(answer.text)
    sources = numbers_in(answer.said).union(*(numbers_in(result) for result in answer.results()))
    made_up = sorted(n for n in said if not states(sources, n) and not converts(n, sources))
    if not made_up:
        return None
    return (f"Your reply states {made_up[0]:g}, but nothing in this conversation gave that number: "
            f"`{lesson.tool}` has not been called. The skill says: {_sentence(lesson)} Call "
            f"`{lesson.tool}` with the tool-calling interface now, then answer the user from its result.")


SPEC = register(KindSpec(
    LessonKind.answer_unit, AnswerUnit, "Answer", sentence,
    tools_to_call=lambda lesson: (lesson.tool,),  # the number comes from its result
    contrast_learner=ContrastLearner(learn=answer_units),
    answer_checks=(AnswerCheck("raw number", _raw_number), AnswerCheck("unsourced number", _unsourced_number))))
