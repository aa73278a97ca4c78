"""Reminders at the answer: a final reply that an injected lesson contradicts gets one more turn.

A small model often *describes* a call instead of making it ("you can call the `find_trains`
function with ...", or a function call written out as text) and ends the run there; or it
answers with the skills block it was shown. Both are visible in the reply itself, so where a
lesson of the run's block says a tool is part of the method, the reply is checked before it
stands (``InjectionConfig.reminders``, the same switch as the reminders at the tool):

- **described, not called**: the reply names, as a word of its own, a tool that an injected
  lesson says to call (a procedure's step, a step not to skip, a check or the action it guards),
  that the agent was offered and that has not been called in this run;
- **the block repeated**: the reply contains a skill tag of the injected block;
- **a raw number**: an ``answer_unit`` lesson's field came back from its tool in this run and
  the reply states it raw, not divided by the lesson's scale (the note gives the scaled value).

Then the model is asked once more, in the same model call (no extra graph step), with its draft
and one short note; at most once per run. A lesson that does not apply does not fire: a reply
that names no such tool (small talk, a question back, a tool already called) stands as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from skillbank.lessons import Lesson, LessonKind, sentence
from skillbank.queries import SkillHit
from skillbank.toolnames import names_tool
from skillbank.units import numbers_in, numeric_fields, states

__all__ = ["AnswerReminder", "answer_reminder", "ANSWER_REMINDER_METADATA_KEY"]

# Where the final reply records that it was asked again (the draft and the lesson), for whoever
# records the run: ``response_metadata`` is never sent to a provider.
ANSWER_REMINDER_METADATA_KEY = "skillbank_answer_reminder"

_SKILL_TAG = re.compile(r"</?skill\b", re.I)


@dataclass(frozen=True)
class AnswerReminder:
    """Why a reply does not stand yet: the note the model reads and where it came from."""

    reason: Literal["described", "repeated block", "raw number"]
    note: str
    skill_id: str | None = None
    version: int | None = None
    tool: str | None = None

    def as_metadata(self, draft: str) -> dict:
        return {"reason": self.reason, "skill_id": self.skill_id, "version": self.version,
                "tool": self.tool, "draft": draft[:500]}


def _tools_to_call(lesson: Lesson) -> list[str]:
    """The tools ``lesson`` says are part of the method (called, not avoided)."""
    if lesson.kind == LessonKind.procedure:
        return list(dict.fromkeys(s.tool for s in lesson.steps))
    if lesson.kind == LessonKind.check_first and lesson.tool and lesson.check:
        return [lesson.check, lesson.tool]
    if lesson.kind == LessonKind.pitfall and lesson.avoid == "skip" and lesson.tool:
        return [lesson.tool]
    return []


def _called(messages: Iterable[BaseMessage]) -> set[str]:
    return {c.get("name") for m in messages if isinstance(m, AIMessage) for c in (m.tool_calls or [])}


def _raw_number(lesson: Lesson, said: set[float], messages: Sequence[BaseMessage]) -> str | None:
    """The note for a reply that states ``lesson``'s field as its tool returned it, or ``None``."""
    for m in messages:
        if not isinstance(m, ToolMessage) or m.name != lesson.tool:
            continue
        for name, value in numeric_fields(str(m.text)):
            scaled = value / (lesson.scale or 1)
            if name == lesson.field and states(said, value) and not states(said, scaled):
                shown = f"{scaled:.3f}".rstrip("0").rstrip(".")
                return (f"Your reply gives `{name}` as {value:g}, the number `{lesson.tool}` returned. "
                        f"The skill says: {sentence(lesson)} So it is {shown}: answer the user again "
                        "with that.")
    return None


def answer_reminder(reply: BaseMessage, messages: Sequence[BaseMessage], hits: Sequence[SkillHit],
                    offered: Iterable[str]) -> AnswerReminder | None:
    """Why ``reply`` (the model's newest message) should not end the run, or ``None``.

    ``messages`` is the conversation the reply answers, ``hits`` the run's injected skills and
    ``offered`` the tools the agent has. Only a final reply (no tool calls) with text is checked.
    """
    if not hits or not isinstance(reply, AIMessage) or reply.tool_calls:
        return None
    text = str(reply.text)
    if not text.strip():
        return None
    if _SKILL_TAG.search(text):
        return AnswerReminder("repeated block", (
            "Your reply repeats the skills block. That block is guidance for you, not the answer: "
            "do what the user asked (call the tools it needs), then answer the user in your own words."))
    offered, called, said = set(offered), _called(messages), numbers_in(text)
    for hit in hits:
        for lesson in hit.skill.content.lessons:
            if lesson.kind == LessonKind.answer_unit:
                note = _raw_number(lesson, said, messages)
                if note is not None:
                    return AnswerReminder("raw number", note, hit.skill.id, hit.skill.version, lesson.tool)
            for tool in _tools_to_call(lesson):
                if tool in offered and tool not in called and names_tool(text, tool):
                    return AnswerReminder("described", (
                        f"Your reply describes calling `{tool}` but does not call it. Do not write the "
                        f"call as text: call `{tool}` with the tool-calling interface now, then answer the "
                        f"user from its result. The skill says: {sentence(lesson)}"),
                        hit.skill.id, hit.skill.version, tool)
    return None
