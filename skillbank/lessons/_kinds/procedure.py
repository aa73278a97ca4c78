"""``procedure``: the method, each step a tool and the shape of its arguments."""

from __future__ import annotations

from typing import Literal, Sequence

from pydantic import model_validator

from skillbank.lessons._base import Lesson, LessonKind, MethodStep
from skillbank.lessons._registry import KindSpec, register
from skillbank.lessons._render import step_text, tool_ref

__all__ = ["Procedure"]


class Procedure(Lesson):
    """Follow ``steps``, in order."""

    kind: Literal[LessonKind.procedure] = LessonKind.procedure
    steps: tuple[MethodStep, ...]

    @model_validator(mode="after")
    def _has_steps(self) -> "Procedure":
        if not self.steps:
            raise ValueError("a procedure needs at least one step")
        return self


def _collapse(tools: Sequence[str]) -> list[str]:
    out: list[str] = []
    for tool in tools:
        if not out or out[-1] != tool:
            out.append(tool)
    return out


def sentence(lesson: Procedure) -> str:
    tools = [s.tool for s in lesson.steps]
    lines = []
    if len(set(tools)) >= 2:
        order = list(dict.fromkeys(_collapse(tools)))
        if order == _collapse(tools):
            lines.append("Call the tools in this order: " + ", then ".join(map(tool_ref, order)) + ".")
    lines += [f"{i}. {step_text(s)}." for i, s in enumerate(lesson.steps, 1)]
    lines.append("Then answer the user with the results.")
    return "\n".join(lines)


SPEC = register(KindSpec(LessonKind.procedure, Procedure, "Method", sentence,
                         tools_to_call=lambda lesson: tuple(dict.fromkeys(s.tool for s in lesson.steps))))
