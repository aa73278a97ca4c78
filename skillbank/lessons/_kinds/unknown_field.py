"""``unknown_field``: ``tool`` may return ``field`` as unknown (both ``None``: any); learnt from an
``unknown_field`` limit."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner
from skillbank.lessons._registry import KindSpec, register
from skillbank.lessons._render import tool_ref

__all__ = ["UnknownField"]


class UnknownField(Lesson):
    """If ``tool`` returns ``field`` as unknown, say so rather than invent it; both ``None``: any."""

    kind: Literal[LessonKind.unknown_field] = LessonKind.unknown_field
    tool: str | None = None
    field: str | None = None
    generalisable = True

    @model_validator(mode="after")
    def _both_or_neither(self) -> "UnknownField":
        if (self.tool is None) != (self.field is None):
            raise ValueError("unknown_field takes a tool and a field, or neither")
        return self


def sentence(lesson: UnknownField) -> str:
    if lesson.tool is None:
        return ("If a tool returns a field as unknown or null, do not invent a value: tell the user "
                "which field is unknown.")
    return (f"If {tool_ref(lesson.tool)} returns {tool_ref(lesson.field)} as unknown or null, do not invent "
            f"a value: tell the user that {tool_ref(lesson.field)} is unknown.")


SPEC = register(KindSpec(
    LessonKind.unknown_field, UnknownField, "When a tool is missing or falls short", sentence,
    advice=lambda lesson: "Answer the parts that are known and name the unknown field as the blocker.",
    limit_learner=LimitLearner(
        families=("unknown_field",),
        lessons=lambda sit: [UnknownField(tool=sit.tool, field=sit.detail) if sit.detail else UnknownField()],
        name=lambda sit, tool, detail: (["when", tool, detail, "is-unknown"] if detail
                                        else ["when", tool, "returns-unknown"]),
        what_happened=lambda sit: f"`{sit.tool}` returned `{sit.detail}` as unknown",
        description=lambda sit, tool: (f"When {tool} may return " + (f"`{sit.detail}`" if sit.detail else "a field")
                                       + " as unknown or null."))))
