"""``policy``: check that policy allows ``tool`` (``None``: the request) before acting; learnt from a
``policy_refusal`` limit."""

from __future__ import annotations

from typing import Literal

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner
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


SPEC = register(KindSpec(
    LessonKind.policy, Policy, "Checks", sentence,
    limit_learner=LimitLearner(
        families=("policy_refusal",),
        lessons=lambda sit: [Policy(tool=sit.tool)],
        name=lambda sit, tool, detail: ["check-policy-before", tool] if tool else ["check-policy-first"],
        what_happened=lambda sit: f"a policy refused `{sit.tool}`" if sit.tool else "a policy refused the request",
        description=lambda sit, tool: ("When a request may not be allowed by policy"
                                       + (f", before calling {tool}" if sit.tool else "") + "."))))
