"""``pitfall``: ``avoid`` one thing: ``skip`` ``tool``, ``call`` ``tool`` (of a step's shape), or ``repeat`` calls."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import model_validator

from skillbank.lessons._base import Lesson, LessonKind, MethodStep
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, register
from skillbank.lessons._render import step_text, tool_ref
from skillbank.lessons._kinds._calls import already_answered, not_run

__all__ = ["Pitfall", "shape_matches"]

_PLACEHOLDER = re.compile(r"<[a-z][a-z0-9_]*>")


class Pitfall(Lesson):
    """A mistake to avoid: skipping ``tool``, calling it (with ``steps``: a call of that shape),
    or repeating identical calls."""

    kind: Literal[LessonKind.pitfall] = LessonKind.pitfall
    avoid: Literal["skip", "call", "repeat"]
    tool: str | None = None
    steps: tuple[MethodStep, ...] = ()

    @model_validator(mode="after")
    def _names_its_tool(self) -> "Pitfall":
        if self.avoid != "repeat" and not self.tool:
            raise ValueError("a pitfall needs what to avoid (skip, call or repeat) and, unless repeat, a tool")
        return self


def sentence(lesson: Pitfall) -> str:
    if lesson.avoid == "repeat":
        return ("Never repeat a tool call with the same arguments: if it did not help, change the "
                "arguments or answer with what is known.")
    if lesson.avoid == "skip":
        return f"Do not skip {tool_ref(lesson.tool)}: every successful run called it."
    if lesson.steps:
        return f"Do not {step_text(lesson.steps[0], 'call')}: runs that did failed and no successful run did."
    return (f"Do not call {tool_ref(lesson.tool)} for this kind of request: runs that called it failed and no "
            "successful run needed it.")


def shape_matches(step: MethodStep, args: Any) -> bool:
    """Whether a call's arguments have ``step``'s shape: every literal value equal (placeholders
    match any value, a template matches its literal words around them)."""
    if not isinstance(args, dict):
        return not step.args
    for param, shape in step.args.items():
        if param not in args:
            return False
        value = str(args[param]).lower()
        if not _PLACEHOLDER.search(shape):
            if value != shape.lower():
                return False
            continue
        pattern = "".join(".+" if _PLACEHOLDER.fullmatch(part) else re.escape(part.lower())
                          for part in re.split(r"(<[a-z][a-z0-9_]*>)", shape) if part)
        if not re.fullmatch(pattern, value, re.S):
            return False
    return True


def _scope(lesson: Pitfall) -> str | None:
    if lesson.avoid == "call":
        return "its_tool"
    return "any_tool" if lesson.avoid == "repeat" else None


def _breaks(lesson: Pitfall, call: CallView) -> bool:
    if lesson.avoid == "call":
        return not lesson.steps or shape_matches(lesson.steps[0], call.args)
    return call.ran_before()


def _reminder(lesson: Pitfall, call: CallView) -> str:
    if lesson.avoid == "call":
        return f"{not_run(call)} {sentence(lesson)}"
    return already_answered(call)


SPEC = register(KindSpec(
    LessonKind.pitfall, Pitfall, "Common mistakes", sentence, delivery="tool",
    call_check=CallCheck(scope=_scope, breaks=_breaks, reminder=_reminder),
    tools_to_call=lambda lesson: (lesson.tool,) if lesson.avoid == "skip" and lesson.tool else ()))
