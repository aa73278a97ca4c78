"""``missing_tool``: ``tool`` may be missing (``None``: any tool); learnt from a ``missing_tool`` limit."""

from __future__ import annotations

from typing import Literal

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import not_run

__all__ = ["MissingTool"]


class MissingTool(Lesson):
    """If ``tool`` is not among the agent's tools, do the rest and say so (``None``: any tool)."""

    kind: Literal[LessonKind.missing_tool] = LessonKind.missing_tool
    tool: str | None = None
    generalisable = True


def sentence(lesson: MissingTool) -> str:
    t = lesson.tool
    if t is None:
        return ("If the request needs a tool that is not among your tools, do not call it: do the rest "
                "of the request, then tell the user which tool is unavailable, by name.")
    return (f"If {tool_ref(t)} is not among your tools, do not call it: do the rest of the request, then "
            f"tell the user that {tool_ref(t)} is unavailable.")


def advice(lesson: MissingTool) -> str:
    if lesson.general:
        return ("Do not claim the step was done and do not substitute a different tool; the "
                "missing tool's name is the blocker to report.")
    return ("Do not claim the step was done and do not substitute a different tool for it; "
            "name the missing capability as the blocker.")


def reminder(lesson: MissingTool, call: CallView) -> str:
    return (f"{not_run(call)} You have no tool named `{call.tool}`. Do the rest of the request, and tell "
            "the user you cannot do that part.")


SPEC = register(KindSpec(
    LessonKind.missing_tool, MissingTool, "When a tool is missing or falls short", sentence, advice,
    delivery="tool",
    call_check=CallCheck(scope=lambda lesson: "its_tool" if lesson.tool else "unknown_tool",
                         breaks=lambda lesson, call: not call.offered, reminder=reminder),
    limit_learner=LimitLearner(
        families=("missing_tool",),
        lessons=lambda sit: [MissingTool(tool=sit.tool)],
        name=lambda sit, tool, detail: ["when", tool, "is-unavailable"],
        what_happened=lambda sit: f"`{sit.tool}` was unavailable",
        description=lambda sit, tool: f"When a request needs {tool} and that tool may not be among your tools.")))
