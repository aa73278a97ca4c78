"""``check_first``: call ``check`` before ``tool`` (neither: every check a tool's description asks for).

Learnt from a ``check_first`` situation: evolution reads a refusal or error that names another
tool to call first as one (its detail is that tool); the guard is a policy skill.
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from skillbank._hashing import canonical_json
from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import not_run

__all__ = ["CheckFirst"]


class CheckFirst(Lesson):
    """Call ``check`` before ``tool``; both ``None``: the general form."""

    kind: Literal[LessonKind.check_first] = LessonKind.check_first
    check: str | None = None
    tool: str | None = None
    generalisable = True

    @model_validator(mode="after")
    def _both_or_neither(self) -> "CheckFirst":
        if (self.check is None) != (self.tool is None):
            raise ValueError("check_first takes both a check and a tool, or neither for the general form")
        return self


def sentence(lesson: CheckFirst) -> str:
    if lesson.tool is None:
        return ("Before calling a tool, always call every tool its description says to call first, "
                "even when the request seems clear.")
    return f"Always call {tool_ref(lesson.check)} before {tool_ref(lesson.tool)}."


def advice(lesson: CheckFirst) -> str | None:
    if lesson.general:
        return ("A skipped check fails the request even when the action itself succeeds; the "
                "check's result decides whether to act at all.")
    return None


def reminder(lesson: CheckFirst, call: CallView) -> str:
    given = call.args if isinstance(call.args, dict) else {}
    takes = call.declared(lesson.check or "")
    shared = {k: v for k, v in given.items() if takes is not None and k in takes}
    with_args = f" with {canonical_json(shared)}" if shared else ""
    return f"{not_run(call)} Call `{lesson.check}` now{with_args}; then call `{call.tool}` again."


SPEC = register(KindSpec(
    LessonKind.check_first, CheckFirst, "Checks", sentence, advice, delivery="tool",
    call_check=CallCheck(scope=lambda lesson: "its_tool" if lesson.tool else None,
                         breaks=lambda lesson, call: not call.tool_ran(lesson.check),
                         reminder=reminder,
                         never_held=lambda lesson: (lesson.check,) if lesson.check else ()),
    tools_to_call=lambda lesson: (lesson.check, lesson.tool) if lesson.tool else (),
    limit_learner=LimitLearner(
        families=("check_first",),
        lessons=lambda sit: [CheckFirst(check=sit.detail, tool=sit.tool)],
        name=lambda sit, tool, detail: ["call", detail, "before", tool],
        what_happened=lambda sit: f"`{sit.tool}` was refused with a message naming `{sit.detail}` to call first",
        description=lambda sit, tool: f"When a request needs {tool}, which needs `{sit.detail}` called first.",
        skill_kind="policy")))
