"""``tool_error``: ``tool`` may fail: retry once, then report it; learnt from a ``tool_error`` limit."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner
from skillbank.lessons._registry import KindSpec, register
from skillbank.lessons._render import tool_ref

__all__ = ["ToolError"]


class ToolError(Lesson):
    """If ``tool`` fails, retry once, then report it."""

    kind: Literal[LessonKind.tool_error] = LessonKind.tool_error
    tool: str = Field(min_length=1)


def sentence(lesson: ToolError) -> str:
    t = tool_ref(lesson.tool)
    return (f"If {t} returns an error, retry at most once with corrected arguments; if it fails "
            f"again, do the rest of the request and tell the user that {t} failed.")


SPEC = register(KindSpec(
    LessonKind.tool_error, ToolError, "When a tool is missing or falls short", sentence,
    limit_learner=LimitLearner(
        families=("tool_error",),
        # a situation without a tool names none (and fails validation: no guard about no tool)
        lessons=lambda sit: [ToolError(tool=sit.tool or "")],
        name=lambda sit, tool, detail: ["when", tool, "fails"],
        what_happened=lambda sit: f"`{sit.tool}` returned errors",
        description=lambda sit, tool: f"When {tool} returns an error.")))
