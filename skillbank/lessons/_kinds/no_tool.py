"""``no_tool``: call no tool: the request (small talk, thanks) asks for nothing a tool does.

It names no tool, so it holds in any toolset. At the tool, every call of the turn it answers is
answered with it (once per run: a second call runs).
"""

from __future__ import annotations

from typing import Literal

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._registry import CallCheck, KindSpec, register
from skillbank.lessons._kinds._calls import not_run

__all__ = ["NoTool"]


class NoTool(Lesson):
    """Call no tool; reply in a sentence or two."""

    kind: Literal[LessonKind.no_tool] = LessonKind.no_tool


def sentence(lesson: NoTool) -> str:
    return ("If the user only makes conversation and asks for nothing a tool does, call no tool: "
            "reply in one or two sentences.")


SPEC = register(KindSpec(
    LessonKind.no_tool, NoTool, "Checks", sentence, delivery="tool",
    call_check=CallCheck(scope=lambda lesson: "any_tool", breaks=lambda lesson, call: True,
                         reminder=lambda lesson, call: (
                             f"{not_run(call)} The user's message asks for nothing a tool does. Reply to it "
                             "yourself now, in one or two sentences, without calling a tool."),
                         holds_turn=True)))
