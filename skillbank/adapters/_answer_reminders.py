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
- **the kinds' own checks**: each shown lesson's kind's answer checks
  (:attr:`~skillbank.lessons.KindSpec.answer_checks`), which read the reply and the run through
  :class:`~skillbank.lessons.AnswerView` and return the note that asks the model to act (an
  ``answer_unit`` lesson: a raw number, a number no tool returned); the library never computes
  the answer for it. This module names no kind.

Then the model is asked once more, in the same model call (no extra graph step), with its draft
and one short note; at most once per run. The reply that stands carries an
:class:`~skillbank.adapters._interventions.Intervention` saying why it was asked again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from skillbank.adapters._interventions import Intervention
from skillbank.lessons import sentence, spec_of
from skillbank.adapters.injection import calls_no_tool
from skillbank.adapters._reminders import words as _words
from skillbank.queries import SkillHit
from skillbank._toolnames import names_tool

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

    # "described", "repeated block", "repeated guidance", "empty", or a kind's AnswerCheck.reason
    # ("raw number", "unsourced number").
    reason: str
    note: str
    skill_id: str | None = None
    version: int | None = None
    tool: str | None = None

    def record(self, draft: str) -> Intervention:
        """The intervention record of this reminder, with the draft reply it asks again."""
        return Intervention(kind="answer_reminder", reason=self.reason, note=self.note, skill_id=self.skill_id,
                            version=self.version, tool=self.tool, draft=draft[:500])


class _Answer:
    """A final reply and the run it ends, as the kinds' answer checks read it (``AnswerView``)."""

    def __init__(self, text: str, said: str, messages: Sequence[BaseMessage], offered: set[str]) -> None:
        self.text, self.said, self._offered = text, said, offered
        self._results = [(m.name, str(m.text)) for m in messages if isinstance(m, ToolMessage)]
        self._called = {c.get("name") for m in messages if isinstance(m, AIMessage) for c in (m.tool_calls or [])}

    def results(self, tool: str | None = None) -> list[str]:
        return [text for name, text in self._results if tool is None or name == tool]

    def offered(self, tool: str) -> bool:
        return tool in self._offered

    def called(self, tool: str) -> bool:
        return tool in self._called


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
    answer = _Answer(text, user, messages, set(offered))
    for hit in hits:
        for lesson in hit.skill.content.lessons:
            spec = spec_of(lesson.kind)
            for check in spec.answer_checks:
                note = check.note(lesson, answer)
                if note is not None:
                    return AnswerReminder(check.reason, note, hit.skill.id, hit.skill.version, lesson.tool)
            for tool in spec.tools_to_call(lesson):
                if answer.offered(tool) and not answer.called(tool) and names_tool(text, tool):
                    return AnswerReminder("described", (
                        f"Your reply describes calling `{tool}` but does not call it. Do not write the "
                        f"call as text: call `{tool}` with the tool-calling interface now, then answer the "
                        f"user from its result. The skill says: {sentence(lesson)}"),
                        hit.skill.id, hit.skill.version, tool)
    return None
