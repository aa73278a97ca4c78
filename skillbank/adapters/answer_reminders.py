"""Reminders at the answer: a final reply that an injected lesson contradicts gets one more turn.

A small model often *describes* a call instead of making it ("you can call the `find_trains`
function with ...", or a function call written out as text) and ends the run there; or it
answers with the skills block it was shown. Both are visible in the reply itself, so where a
lesson of the run's block says a tool is part of the method, the reply is checked before it
stands (``InjectionConfig.reminders``, the same switch as the reminders at the tool):

- **described, not called**: the reply names, as a word of its own, a tool that an injected
  lesson says to call (a procedure's step, a step not to skip, a check or the action it guards),
  that the agent was offered and that has not been called in this run;
- **the block repeated**: the reply contains a skill tag of the injected block; where the block
  holds a ``no_tool`` lesson (the request read as small talk), the note asks for a reply in the
  model's own words and no longer to "call the tools it needs" (protocol v21: 4 small-talk
  replies were the block, again after that note);
- **an empty reply**: the reply has no text and no call (protocol v21: all 3 runs whose
  late-checkout time was fixed at the tool repeated the call and then ended with an empty reply,
  the model's end-of-turn as its first token; the user was told nothing);
- **guidance repeated**: most of the reply's words (at least two) come in pairs that the injected
  skills' words hold (a skill's name, description or lesson sentence) and the user's messages do
  not: "No tool: reply in one or two sentences." for a no-tool lesson (protocol v6's reading: the
  1.5B answered small talk with the lesson's sentence, its name or the request its description
  quotes). Words the user said do not count, so a reply that echoes the user stands;
- **a raw number**: an ``answer_unit`` lesson's field came back from its tool in this run and
  the reply states it raw, not divided by the lesson's scale (the note gives the scaled value);
- **a number no tool returned**: an ``answer_unit`` lesson's tool was offered and not called,
  and the reply states a number that neither the user nor any result of the run gave, nor one
  converted from theirs (protocol v9's gate: with "when `current_conditions` returns
  `visibility_m` ..." in its block, the 1.5B skipped the call and answered "750 km", the
  lesson's own example, in 6 of 6 trials).

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
from skillbank.adapters.injection import calls_no_tool
from skillbank.adapters.reminders import words as _words
from skillbank.queries import SkillHit
from skillbank.toolnames import names_tool
from skillbank.units import converts, numbers_in, numeric_fields, scaled, states

__all__ = ["AnswerReminder", "answer_reminder", "answer_reminder_of", "ANSWER_REMINDER_METADATA_KEY"]

# Where the final reply records that it was asked again (the draft and the lesson), for whoever
# records the run: ``response_metadata`` is never sent to a provider.
ANSWER_REMINDER_METADATA_KEY = "skillbank_answer_reminder"

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

    def as_metadata(self, draft: str) -> dict:
        return {"reason": self.reason, "note": self.note, "skill_id": self.skill_id,
                "version": self.version, "tool": self.tool, "draft": draft[:500]}


def answer_reminder_of(message: object) -> dict | None:
    """What :meth:`AnswerReminder.as_metadata` put on ``message`` (the note asking a reply
    again, or the reply that replaced a draft), or ``None``."""
    marker = (getattr(message, "response_metadata", None) or {}).get(ANSWER_REMINDER_METADATA_KEY)
    return marker if isinstance(marker, dict) else None


def _tools_to_call(lesson: Lesson) -> list[str]:
    """The tools ``lesson`` says are part of the method (called, not avoided)."""
    if lesson.kind == LessonKind.procedure:
        return list(dict.fromkeys(s.tool for s in lesson.steps))
    if lesson.kind == LessonKind.check_first and lesson.tool and lesson.check:
        return [lesson.check, lesson.tool]
    if lesson.kind == LessonKind.pitfall and lesson.avoid == "skip" and lesson.tool:
        return [lesson.tool]
    if lesson.kind == LessonKind.answer_unit and lesson.tool:  # the number comes from its result
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
            if name == lesson.field and states(said, value) and not states(said, value / (lesson.scale or 1)):
                shown = scaled(value, lesson.scale or 1)
                return (f"Your reply gives `{name}` as {value:g}, the number `{lesson.tool}` returned. "
                        f"The skill says: {sentence(lesson)} So it is {shown}: answer the user again "
                        "with that.")
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
        return AnswerReminder("repeated block", _BLOCK_ON_SMALL_TALK if any(calls_no_tool(h.skill) for h in hits) else _BLOCK)
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
            for tool in _tools_to_call(lesson):
                if tool in offered and tool not in called and names_tool(text, tool):
                    return AnswerReminder("described", (
                        f"Your reply describes calling `{tool}` but does not call it. Do not write the "
                        f"call as text: call `{tool}` with the tool-calling interface now, then answer the "
                        f"user from its result. The skill says: {sentence(lesson)}"),
                        hit.skill.id, hit.skill.version, tool)
    return None
