"""``ask_for``: ask for ``parameter`` of ``tool`` rather than guess (``None``s widen it).

Learnt from an ``invalid_tool_args`` limit (and, through ``missing_parameter``'s learner, from a
``missing_parameter`` limit that did not record the parameter).
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import its_tool, not_run

__all__ = ["AskFor"]


class AskFor(Lesson):
    """Ask for ``parameter`` of ``tool`` when the request does not state it (``parameter``
    ``None``: any value of ``tool``; both ``None``: any value of any tool)."""

    kind: Literal[LessonKind.ask_for] = LessonKind.ask_for
    tool: str | None = None
    parameter: str | None = None
    generalisable = True

    @model_validator(mode="after")
    def _parameter_with_tool(self) -> "AskFor":
        if self.parameter is not None and self.tool is None:
            raise ValueError("ask_for names a parameter only together with its tool")
        return self


def sentence(lesson: AskFor) -> str:
    if lesson.parameter is None:
        whose = tool_ref(lesson.tool) if lesson.tool else "a tool"
        return (f"If the request does not state every value {whose} needs unambiguously, ask the user "
                "instead of guessing.")
    return (f"If the request does not state {tool_ref(lesson.parameter)} for {tool_ref(lesson.tool)} "
            f"unambiguously, ask the user for {tool_ref(lesson.parameter)} instead of guessing.")


def advice(lesson: AskFor) -> str | None:
    if lesson.general:
        return "A guessed value is a wrong action the user must undo; ask once, then act on the answer."
    return None


def reminder(lesson: AskFor, call: CallView) -> str:
    what = f"`{lesson.parameter}`" if lesson.parameter else "the values it needs"
    return (f"{not_run(call)} The user has not said {what}. Ask the user for it now, and call "
            f"`{call.tool}` after they answer.")


SPEC = register(KindSpec(
    LessonKind.ask_for, AskFor, "Checks", sentence, advice, delivery="tool",
    call_check=CallCheck(scope=its_tool, breaks=lambda lesson, call: call.guessed(lesson.parameter),
                         reminder=reminder),
    limit_learner=LimitLearner(
        families=("invalid_tool_args",),
        lessons=lambda sit: [AskFor(tool=sit.tool, parameter=sit.detail)],
        name=lambda sit, tool, detail: ["ask-for", detail, "before", tool] if detail else ["check", tool, "arguments"],
        what_happened=lambda sit: (f"`{sit.tool}` could not take the arguments given"
                                   + (f" (`{sit.detail}`)" if sit.detail else "")),
        description=lambda sit, tool: f"When calling {tool}" + (f", which needs `{sit.detail}`" if sit.detail else "")
        + ".")))
