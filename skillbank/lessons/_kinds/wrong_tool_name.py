"""``wrong_tool_name``: call ``tool`` by its exact name (the wrong name is never stored or shown).

Learnt from a ``wrong_tool_name`` situation: evolution reads a ``missing_tool`` limit as one when a
tool of the run's toolset fits the name called; the guard is a pitfall skill.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import not_run
from skillbank._toolnames import fits

__all__ = ["WrongToolName"]


class WrongToolName(Lesson):
    """Call ``tool`` by exactly that name."""

    kind: Literal[LessonKind.wrong_tool_name] = LessonKind.wrong_tool_name
    tool: str = Field(min_length=1)


def sentence(lesson: WrongToolName) -> str:
    return (f"To do this, call {tool_ref(lesson.tool)} by exactly that name: a tool name that is not among "
            "your tools fails.")


def _breaks(lesson: WrongToolName, call: CallView) -> bool:
    return not call.offered and fits(call.tool, lesson.tool, call.said)


SPEC = register(KindSpec(
    LessonKind.wrong_tool_name, WrongToolName, "Common mistakes", sentence, delivery="tool",
    call_check=CallCheck(scope=lambda lesson: "unknown_tool", breaks=_breaks,
                         reminder=lambda lesson, call: (f"{not_run(call)} There is no tool by that name. "
                                                        f"Call `{lesson.tool}` instead.")),
    limit_learner=LimitLearner(
        families=("wrong_tool_name",),
        lessons=lambda sit: [WrongToolName(tool=sit.tool or "")],
        name=lambda sit, tool, detail: ["call", tool, "by-its-exact-name"],
        what_happened=lambda sit: (f"`{sit.tool}` was called by another name ("
                                   + ", ".join(f"`{c}`" for c in sorted(sit.called)) + ")"),
        description=lambda sit, tool: f"When a request needs {tool}: call it by its exact name.",
        skill_kind="pitfall")))
