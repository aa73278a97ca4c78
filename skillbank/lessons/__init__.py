"""Lessons: what a skill teaches, as typed data, and the one place they become prose.

A skill version carries its lessons (``SkillContent.lessons``); its body is rendered from them
here and nowhere else. Every evolution step works on lessons, never by reading prose back. A
skill a person wrote without structured lessons holds one *guidance* lesson: its text.

Each kind is one class with only its own fields, in its own module of
:mod:`skillbank.lessons._kinds`, registered with everything it knows (:class:`KindSpec`): its
sentence, its section of the body, where it is delivered, how a tool call breaks it
(:class:`CallCheck`), how a final reply breaks it (:class:`AnswerCheck`), and how evolution learns
it from a limit situation (:class:`LimitLearner`) or from what successes did that failures did not
(:class:`ContrastLearner`). Build one
with its class (``Budget(budget=4)``) or by kind (``Lesson(kind="budget", budget=4)``); parse
stored data with :func:`parse_lesson`; annotate a field with :data:`AnyLesson`.

The sentences are ordinary imperative English, one per lesson, so the same text serves a model
and a person. Statistics and evidence live in a version's provenance, never here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterable, Union

from pydantic import Field

import skillbank.lessons._kinds  # noqa: F401  (registers every kind)
from skillbank.lessons._base import STORED_FIELDS, Example, Lesson, LessonKind, MethodStep
from skillbank.lessons._learning import ContrastCall, ContrastLearner, ContrastRun, LimitLearner, LimitSituation
from skillbank.lessons._registry import (KINDS, AnswerCheck, AnswerView, CallCheck, CallView, Delivery, KindSpec,
                                         contrast_learners, kind_class, learner_of, limit_learner, spec_of)
from skillbank.lessons._render import SECTION_ORDER, example_text, render_body, sentence, step_text
from skillbank.lessons._kinds.answer_unit import AnswerUnit
from skillbank.lessons._kinds.ask_for import AskFor
from skillbank.lessons._kinds.budget import Budget
from skillbank.lessons._kinds.check_first import CheckFirst
from skillbank.lessons._kinds.guidance import Guidance
from skillbank.lessons._kinds.missing_parameter import MissingParameter
from skillbank.lessons._kinds.missing_tool import MissingTool
from skillbank.lessons._kinds.no_tool import NoTool
from skillbank.lessons._kinds.pitfall import Pitfall
from skillbank.lessons._kinds.policy import Policy
from skillbank.lessons._kinds.procedure import Procedure
from skillbank.lessons._kinds.stated_value import StatedDate, StatedTime
from skillbank.lessons._kinds.tool_error import ToolError
from skillbank.lessons._kinds.unknown_field import UnknownField
from skillbank.lessons._kinds.wrong_tool_name import WrongToolName

__all__ = ["LessonKind", "MethodStep", "Example", "Lesson", "AnyLesson", "parse_lesson", "GENERALISABLE",
           "sentence", "render_body", "general_form", "lesson_tools", "scrub_lesson", "example_text", "step_text",
           "SECTION_ORDER", "KINDS", "KindSpec", "CallCheck", "CallView", "Delivery", "spec_of", "kind_class",
           "LimitLearner", "LimitSituation", "limit_learner", "learner_of", "AnswerCheck", "AnswerView",
           "ContrastLearner", "ContrastRun", "ContrastCall", "contrast_learners",
           "STORED_FIELDS", "Procedure", "CheckFirst", "MissingTool", "MissingParameter", "AskFor", "UnknownField",
           "Budget", "Pitfall", "Guidance", "ToolError", "Policy", "WrongToolName", "NoTool", "AnswerUnit",
           "StatedTime", "StatedDate"]

# The public names of the private modules answer to this package.
for _public in (Lesson, LessonKind, MethodStep, Example, KindSpec, CallCheck, AnswerCheck, LimitLearner,
                ContrastLearner):
    _public.__module__ = __name__

if TYPE_CHECKING:
    AnyLesson = Lesson
else:
    AnyLesson = Annotated[Union[tuple(spec.cls for spec in KINDS.values())], Field(discriminator="kind")]
    """Any built-in lesson, validated as the class its ``kind`` names (a schema a model can read)."""

# Kinds with a general form naming no tool: learned for several tools, they become one.
GENERALISABLE = frozenset(spec.kind for spec in KINDS.values() if spec.cls.generalisable)


def parse_lesson(data: Any) -> Lesson:
    """A lesson from its stored form (a dict) or a lesson as it is, as the class its kind names
    (a plug-in kind registered after import included).

    Raises:
        ValueError: the data is no lesson of a registered kind (a ``pydantic.ValidationError``
            when its fields do not fit the kind).
    """
    if isinstance(data, Lesson):
        return data
    if not isinstance(data, dict) or "kind" not in data:
        raise ValueError(f"a lesson is a mapping with a 'kind'; got {type(data).__name__}")
    return kind_class(data["kind"]).model_validate(data)


def lesson_tools(lessons: Iterable[Lesson]) -> set[str]:
    """Every tool the lessons name."""
    out: set[str] = set()
    for lesson in lessons:
        out |= lesson.tools()
    return out


def scrub_lesson(lesson: Any, scrubber: Callable[[str], str]) -> Lesson:
    """``lesson`` (a ``Lesson`` or its dict) with every free text in it passed through ``scrubber``."""
    lesson = parse_lesson(lesson)
    update: dict[str, Any] = {}
    if "steps" in type(lesson).model_fields:
        update["steps"] = tuple(step.model_copy(update={"args": {k: scrubber(v) for k, v in step.args.items()}})
                                for step in lesson.steps)
    if lesson.text:
        update["text"] = scrubber(lesson.text)
    return lesson.model_copy(update=update) if update else lesson


def general_form(lesson: Lesson) -> Lesson | None:
    """The general lesson a specific one is an instance of (``None`` if it has none)."""
    if not lesson.generalisable or lesson.general:
        return None
    return kind_class(lesson.kind).model_validate({"kind": lesson.kind})
