"""Reminders at the answer: a final reply that an injected lesson contradicts gets one more turn.

With ``InjectionConfig.reminders`` a final reply (no tool calls) is checked against the lessons
the run was shown before it stands:

- **described, not called**: the reply names, as a word of its own, a tool that a shown lesson
  says to call (:attr:`~skillbank.lessons.KindSpec.tools_to_call`), that the agent was offered
  and that has not been called in this run;
- **the block repeated**: the reply contains a skill tag of the injected block (where the
  block holds a ``no_tool`` lesson, the note asks for a reply in the model's own words rather
  than for the tools it needs);
- **an empty reply**: the reply has no text and no call;
- **guidance repeated**: most of the reply's words (at least two) come in pairs that the shown
  skills' words hold (a name, a description, a lesson's sentence) and the user's messages do not;
- **a raw number**: an ``answer_unit`` lesson's field came back from its tool in this run and
  the reply states it raw; the note asks the model to give it as the lesson says (the library
  never computes the value for it);
- **a number no tool returned**: an ``answer_unit`` lesson's tool was offered and not called,
  and the reply states a number that neither the user nor any result of the run gave.

Then the model is asked once more, in the same model call (no extra graph step), with its draft
and one short note; at most once per run. The reply that stands carries an
:class:`~skillbank.adapters._interventions.Intervention` saying why it was asked again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from skillbank.adapters._interventions import Intervention
from skillbank.lessons import Lesson, LessonKind, sentence, spec_of
from skillbank.adapters.injection import calls_no_tool
from skillbank.adapters._reminders import words as _words
from skillbank.queries import SkillHit
from skillbank._toolnames import names_tool
from skillbank._units import converts, numbers_in, numeric_fields, states

__all__ = ["AnswerReminder", "answer_reminder"]

_SKILL_TAG = re.compile(r"</?skill\b", re.I)
# Share of a reply's words that, in pairs taken from the skills and not from the user, make it a
# repeat of its guidance rather than an answer that happens to share a phrase with it.
_REPEATED_SHARE = 0.6


_BLOCK = ("Your reply repeats the skills block. That block is guidance for you, not the answer: "
          "do what the user asked (call the tools it needs), then answer the user in your own words.")
# A no-tool skill is in the block only when the request read as small talk: no tool to push.
_BLOCK_ON_SMALL_TALK = ("Your reply repeats the skills block. That block is guidance for you, not the "
                        "answer: reply to the user's last message yourself, in one or two sentences of "
                        "your own.")
_EMPTY_AFTER_TOOLS = ("Your reply is empty, so the user has been told nothing. Answer the user now, in one "
                      "or two sentences, from the results above.")
_EMPTY = ("Your reply is empty, so the user has been told nothing. Answer the user's last message now, "
          "in one or two sentences.")


def _pairs(text: str) -> set[tuple[str, str]]:
    words = _words(text)
    return set(zip(words, words[1:]))


def repeats_guidance(reply: str, guidance: Iterable[str], said: str) -> bool:
    """Whether most of ``reply``'s words (at least two) come in consecutive pairs that
    ``guidance`` holds and ``said`` (what the user wrote) does not."""
    words = _words(reply)
    known = set().union(*map(_pairs, guidance)) - _pairs(said)
    covered: set[int] = set()
    for i, pair in enumerate(zip(words, words[1:])):
        if pair in known:
            covered.update((i, i + 1))
    return len(covered) >= 2 and len(covered) >= _REPEATED_SHARE * len(words)


def _guidance(hits: Sequence[SkillHit]) -> list[str]:
    """What the block told the model, as text: each skill's name, description and sentences."""
    return [text for hit in hits
            for text in (hit.skill.content.name.replace("-", " "), hit.skill.content.description,
                         *map(sentence, hit.skill.content.lessons))]


@dataclass(frozen=True)
class AnswerReminder:
    """Why a reply does not stand yet: the note the model reads and where it came from."""

    reason: Literal["described", "repeated block", "repeated guidance", "raw number", "unsourced number",
                    "empty"]
    note: str
    skill_id: str | None = None
    version: int | None = None
    tool: str | None = None

    def record(self, draft: str) -> Intervention:
        """The intervention record of this reminder, with the draft reply it asks again."""
        return Intervention(kind="answer_reminder", reason=self.reason, note=self.note, skill_id=self.skill_id,
                            version=self.version, tool=self.tool, draft=draft[:500])


def _called(messages: Iterable[BaseMessage]) -> set[str]:
    return {c.get("name") for m in messages if isinstance(m, AIMessage) for c in (m.tool_calls or [])}


def _raw_number(lesson: Lesson, said: set[float], messages: Sequence[BaseMessage]) -> str | None:
    """The note for a reply that states ``lesson``'s field as its tool returned it, or ``None``."""
    for m in messages:
        if not isinstance(m, ToolMessage) or m.name != lesson.tool:
            continue
        for name, value in numeric_fields(str(m.text)):
            if name == lesson.field and states(said, value) and not states(said, value / (lesson.scale or 1)):
                return (f"Your reply gives `{name}` as {value:g}, the number `{lesson.tool}` returned. "
                        f"The skill says: {sentence(lesson)} Answer the user again with the number as "
                        "the skill says.")
    return None


def _unsourced_number(lesson: Lesson, said: set[float], sources: set[float]) -> str | None:
    """The note for a reply that states a number no source of the run gave, where ``lesson``
    says the answer comes from its tool's result (the caller checks the tool was not called)."""
    made_up = sorted(n for n in said if not states(sources, n) and not converts(n, sources))
    if not made_up:
        return None
    return (f"Your reply states {made_up[0]:g}, but nothing in this conversation gave that number: "
            f"`{lesson.tool}` has not been called. The skill says: {sentence(lesson)} Call "
            f"`{lesson.tool}` with the tool-calling interface now, then answer the user from its result.")


def _sources(user: str, messages: Sequence[BaseMessage]) -> set[float]:
    """Every number the user (``user``, their messages joined) or a tool result of the run stated."""
    return numbers_in(user).union(*(numbers_in(str(m.text)) for m in messages if isinstance(m, ToolMessage)))


def answer_reminder(reply: BaseMessage, messages: Sequence[BaseMessage], hits: Sequence[SkillHit],
                    offered: Iterable[str]) -> AnswerReminder | None:
    """Why ``reply`` (the model's newest message) should not end the run, or ``None``.

    ``messages`` is the conversation the reply answers, ``hits`` the run's injected skills and
    ``offered`` the tools the agent has. Only a final reply (no tool calls) is checked.
    """
    if not hits or not isinstance(reply, AIMessage) or reply.tool_calls:
        return None
    text = str(reply.text)
    if not text.strip():
        return AnswerReminder("empty", _EMPTY_AFTER_TOOLS if any(isinstance(m, ToolMessage) for m in messages)
                              else _EMPTY)
    if _SKILL_TAG.search(text):
        small_talk = any(calls_no_tool(h.skill) for h in hits)
        return AnswerReminder("repeated block", _BLOCK_ON_SMALL_TALK if small_talk else _BLOCK)
    user = " ".join(str(m.text) for m in messages if getattr(m, "type", None) == "human")
    if repeats_guidance(text, _guidance(hits), user):
        return AnswerReminder("repeated guidance", (
            "Your reply repeats guidance you were given; it is for you, not an answer. Answer the "
            "user's last message itself, in your own words."))
    offered, called, said = set(offered), _called(messages), numbers_in(text)
    for hit in hits:
        for lesson in hit.skill.content.lessons:
            if lesson.kind == LessonKind.answer_unit:
                note = _raw_number(lesson, said, messages)
                if note is not None:
                    return AnswerReminder("raw number", note, hit.skill.id, hit.skill.version, lesson.tool)
                if lesson.tool in offered and lesson.tool not in called:
                    note = _unsourced_number(lesson, said, _sources(user, messages))
                    if note is not None:
                        return AnswerReminder("unsourced number", note, hit.skill.id, hit.skill.version,
                                              lesson.tool)
            for tool in spec_of(lesson.kind).tools_to_call(lesson):
                if tool in offered and tool not in called and names_tool(text, tool):
                    return AnswerReminder("described", (
                        f"Your reply describes calling `{tool}` but does not call it. Do not write the "
                        f"call as text: call `{tool}` with the tool-calling interface now, then answer the "
                        f"user from its result. The skill says: {sentence(lesson)}"),
                        hit.skill.id, hit.skill.version, tool)
    return None
