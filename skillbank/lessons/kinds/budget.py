"""``budget``: finish within ``budget`` tool calls (``tool``: the one runs kept repeating).

Everything the library knows about the kind is here: its fields, its sentence, where it is
delivered, and how a call breaks it (an identical call: its answer is already at hand).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._registry import CallCheck, KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons.kinds._calls import already_answered

__all__ = ["Budget"]


class Budget(Lesson):
    """Finish within ``budget`` tool calls; ``tool`` is the one runs kept repeating, if any."""

    kind: Literal[LessonKind.budget] = LessonKind.budget
    budget: int = Field(ge=1)
    tool: str | None = None


def sentence(lesson: Budget) -> str:
    text = (f"Finish within {lesson.budget} tool calls: never repeat a call with the same arguments, "
            "and answer as soon as the needed facts are known.")
    if lesson.tool:
        text += (f" Do not keep calling {tool_ref(lesson.tool)}: if two calls did not find it, a third will "
                 "not; answer with what is known and say what is still missing.")
    return text


# Only a call identical to one already run is held back: its answer is truly at hand. A new call
# past the budget runs (it may be the very action the user asked for).
SPEC = register(KindSpec(
    LessonKind.budget, Budget, "Budget", sentence, delivery="tool",
    call_check=CallCheck(scope=lambda lesson: "any_tool", breaks=lambda lesson, call: call.ran_before(),
                         reminder=lambda lesson, call: already_answered(call))))
