"""Answer-unit lessons given at the tool (``InjectionConfig.answer_units="tool"``).

An ``answer_unit`` lesson says to give a field of a tool's result divided by a scale
(``balance_cents`` as euros, ``visibility_m`` as km). In the system prompt, the 1.5B took it as
its answer: it skipped the tool and stated the lesson's own example, or repeated the skills
block, in every gate the lesson was proposed in (protocols v6, v9, v11, v12 and v13 in
benchmarks/RESULTS.md). So in this form the lesson is left out of the block (:func:`at_prompt`)
and given where the number arrives: appended to the result of its tool that carries the field,
with the division already done (:func:`with_answer_note`), the place a small model followed a
lesson before (the reminders at the tool). The skill stays the run's, so the checks at the
answer still see it, and the note is marked for whoever records the run (:func:`answer_note_of`).
"""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.messages import ToolMessage

from skillbank.lessons import Lesson, LessonKind, render_body
from skillbank.queries import SkillHit
from skillbank.units import numeric_fields, scaled

__all__ = ["at_prompt", "with_answer_note", "answer_note_of", "ANSWER_NOTE_METADATA_KEY"]

# Where a tool result says which lesson's note was appended to it (skill id and version), for
# whoever records the run: ``response_metadata`` is never sent to a provider.
ANSWER_NOTE_METADATA_KEY = "skillbank_answer_note"


def _at_tool(lesson: Lesson) -> bool:
    return lesson.kind == LessonKind.answer_unit


def at_prompt(hits: Sequence[SkillHit], kinds: frozenset[LessonKind]) -> list[SkillHit]:
    """``hits`` as the prompt shows them: without their lessons of ``kinds`` (given at the tool
    instead: answer units here, stated times in :mod:`skillbank.adapters.time_fixes`), and
    without a skill that has nothing else to say."""
    shown_hits = []
    for hit in hits:
        content = hit.skill.content
        kept = tuple(lesson for lesson in content.lessons if lesson.kind not in kinds)
        if len(kept) == len(content.lessons):
            shown_hits.append(hit)
        elif kept:
            trimmed = content.model_copy(update={"lessons": kept, "body": render_body(kept)})
            shown_hits.append(SkillHit(hit.skill.model_copy(update={"content": trimmed}), hit.score))
    return shown_hits


def _note(lesson: Lesson, text: str) -> str | None:
    """The note for a result of ``lesson``'s tool (``text``) that carries its field, or ``None``."""
    values = [value for name, value in numeric_fields(text) if name == lesson.field]
    if not values or not lesson.scale:
        return None
    said = ", ".join(f"`{lesson.field}` {value:g} is {scaled(value, lesson.scale)}" for value in dict.fromkeys(values))
    return (f"Note for your answer: {said} ({lesson.field} divided by {lesson.scale}). Tell the user "
            "that number, never the raw one.")


def with_answer_note(hits: Sequence[SkillHit], result: Any) -> Any:
    """``result`` (a tool call's answer) with the note of the first answer-unit lesson of
    ``hits`` whose tool answered and whose field it carries; anything else as it is."""
    if not isinstance(result, ToolMessage) or result.status == "error" or not isinstance(result.content, str):
        return result
    for hit in hits:
        for lesson in hit.skill.content.lessons:
            if not _at_tool(lesson) or lesson.tool != result.name:
                continue
            note = _note(lesson, result.content)
            if note is not None:
                marker = {"skill_id": hit.skill.id, "version": hit.skill.version, "note": note}
                return result.model_copy(update={
                    "content": f"{result.content}\n\n{note}",
                    "response_metadata": {**result.response_metadata, ANSWER_NOTE_METADATA_KEY: marker}})
    return result


def answer_note_of(message: object) -> tuple[str, int] | None:
    """``(skill_id, version)`` of the lesson whose note :func:`with_answer_note` appended to
    ``message``, or ``None``."""
    marker = (getattr(message, "response_metadata", None) or {}).get(ANSWER_NOTE_METADATA_KEY)
    if not isinstance(marker, dict):
        return None
    return str(marker["skill_id"]), int(marker["version"])
