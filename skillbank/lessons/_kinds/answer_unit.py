"""``answer_unit``: give ``field`` of ``tool``'s result divided by ``scale``, never the raw number.

Delivered in the prompt; the answer check (a reply stating the raw number) asks the model to
give the scaled value itself. The library never computes the answer for it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._registry import KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank._units import scaled

__all__ = ["AnswerUnit"]


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


SPEC = register(KindSpec(LessonKind.answer_unit, AnswerUnit, "Answer", sentence,
                         tools_to_call=lambda lesson: (lesson.tool,)))  # the number comes from its result
