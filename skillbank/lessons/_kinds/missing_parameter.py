"""``missing_parameter``: ``tool`` may lack ``parameter`` (both ``None``: any).

Learnt from a ``missing_parameter`` limit; one that did not record the parameter teaches to ask
for the tool's values instead (an ``ask_for`` lesson).
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner, LimitSituation
from skillbank.lessons._registry import CallCheck, CallView, KindSpec, kind_class, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import not_run

__all__ = ["MissingParameter"]


class MissingParameter(Lesson):
    """If ``tool`` has no ``parameter``, do not pass it and say so; both ``None``: any."""

    kind: Literal[LessonKind.missing_parameter] = LessonKind.missing_parameter
    tool: str | None = None
    parameter: str | None = None
    generalisable = True

    @model_validator(mode="after")
    def _both_or_neither(self) -> "MissingParameter":
        if (self.tool is None) != (self.parameter is None):
            raise ValueError("missing_parameter takes a tool and a parameter, or neither")
        return self


def sentence(lesson: MissingParameter) -> str:
    if lesson.tool is None:
        return ("If the request needs a setting that the tool has no parameter for, do not pass it: do "
                "the rest of the request, then tell the user which parameter is missing, by name.")
    return (f"If {tool_ref(lesson.tool)} has no {tool_ref(lesson.parameter)} parameter, do not pass it: do "
            f"the rest of the request, then tell the user that {tool_ref(lesson.parameter)} cannot be set.")


def advice(lesson: MissingParameter) -> str:
    if lesson.general:
        return ("Do not pass an argument the tool's schema does not declare (it is dropped "
                "silently) and do not claim that part was done.")
    return "Do not claim that part was done; name the missing parameter as the blocker."


def breaks(lesson: MissingParameter, call: CallView) -> bool:
    if lesson.parameter is not None and not (isinstance(call.args, dict) and lesson.parameter in call.args):
        return False
    extra = call.undeclared()  # a tool the agent lacks declares nothing: the tool node answers that
    return bool(extra) if lesson.parameter is None else lesson.parameter in extra


def reminder(lesson: MissingParameter, call: CallView) -> str:
    extra = lesson.parameter or "that argument"
    return (f"{not_run(call)} It has no `{extra}` parameter. Call `{call.tool}` again without it if the "
            f"rest is still needed, and tell the user `{extra}` cannot be set.")


def lessons(sit: LimitSituation) -> list[Lesson]:
    if sit.detail:
        return [MissingParameter(tool=sit.tool, parameter=sit.detail)]
    # Built by kind: importing ask_for's module here would register it before this one.
    return [kind_class(LessonKind.ask_for).model_validate({"tool": sit.tool})]


def what_happened(sit: LimitSituation) -> str:
    return f"`{sit.tool}` has no " + (f"`{sit.detail}` parameter" if sit.detail else "parameter for an argument given")


def description(sit: LimitSituation, tool: str) -> str:
    return (f"When a request asks {tool} for " + (f"`{sit.detail}`" if sit.detail else "a setting")
            + ", which it may have no parameter for.")


SPEC = register(KindSpec(
    LessonKind.missing_parameter, MissingParameter, "When a tool is missing or falls short", sentence,
    advice, delivery="tool",
    call_check=CallCheck(scope=lambda lesson: "its_tool" if lesson.tool else "any_tool",
                         breaks=breaks, reminder=reminder),
    limit_learner=LimitLearner(
        families=("missing_parameter",), lessons=lessons,
        name=lambda sit, tool, detail: ["when", tool, "has-no", detail] if detail else ["check", tool, "arguments"],
        what_happened=what_happened, description=description)))
