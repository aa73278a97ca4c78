"""``policy``: check that policy allows ``tool`` (``None``: the request) before acting."""

from __future__ import annotations

from typing import Literal

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._registry import KindSpec, register
from skillbank.lessons._render import tool_ref

__all__ = ["Policy"]


class Policy(Lesson):
    """Check that policy allows ``tool`` (``None``: the request) before acting."""

    kind: Literal[LessonKind.policy] = LessonKind.policy
    tool: str | None = None


def sentence(lesson: Policy) -> str:
    subject = tool_ref(lesson.tool) if lesson.tool else "an action"
    return (f"Before calling {subject}, check that policy allows it for this request; if it does not, "
            "decline that part, state the rule in one sentence and do the rest.")


SPEC = register(KindSpec(LessonKind.policy, Policy, "Checks", sentence))
