"""General lessons: a lesson that recurs for different tools becomes one general skill.

Distilled lessons name a tool ("If `open_window` is not among your tools, ..."), so retrieval
and the agent apply them to requests about that tool only, and a new tool starts from zero.
When the same kind of lesson has been learned for at least ``min_general_tools`` different tools
(in active skills and this round's proposals), the round proposes one skill holding the general
form of its directive (``skillbank.directives``): "If the request needs a tool that is not among
your tools, ...". Five kinds generalise: checks before an action, missing tools, missing
parameters, unknown fields and asking instead of guessing. Procedures (tool orders) and step budgets are specific to a task
and do not.

A general skill is a proposal like any other: it is linted, de-duplicated and gated, so a
generalisation that does not help on the runs behind it is rejected (and remembered as
rejected, so it is not proposed again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from skillbank import directives as dx
from skillbank.evolution.proposals import ChangeKind, Proposal
from skillbank.models import GENERAL_TAG, SkillContent, SkillKind

__all__ = ["GeneralLesson", "LESSONS", "lesson_for", "general_proposals"]


@dataclass(frozen=True)
class GeneralLesson:
    """How one kind of specific lesson generalises."""

    family: str
    general: dx.Directive
    name: str
    kind: SkillKind
    description: str
    advice: str  # a prose bullet after the directive, for a person or a real model


LESSONS: dict[type, GeneralLesson] = {
    dx.CheckFirst: GeneralLesson(
        "check-first", dx.CheckFirst(None, None), "run-the-required-check-first", SkillKind.policy,
        "For any request that changes something: before calling the action tool, run the check "
        "its description requires, even when the request seems clear.",
        "A skipped check fails the request even when the action itself succeeds; the check's "
        "result decides whether to act at all."),
    dx.Unavailable: GeneralLesson(
        "missing-tool", dx.Unavailable(None), "when-a-needed-tool-is-unavailable", SkillKind.guard,
        "For any request that needs a tool you do not have: do the possible part, decline the "
        "rest and name the missing tool.",
        "Do not claim the step was done and do not substitute a different tool; the missing "
        "tool's name is the blocker to report."),
    dx.NoParam: GeneralLesson(
        "missing-parameter", dx.NoParam(None, None), "when-a-tool-lacks-a-parameter", SkillKind.guard,
        "For any request that asks for a setting the tool has no parameter for: do the possible "
        "part, decline the rest and name the missing parameter.",
        "Do not pass an argument the tool's schema does not declare (it is dropped silently) and "
        "do not claim that part was done."),
    dx.UnknownField: GeneralLesson(
        "unknown-field", dx.UnknownField(None, None), "when-a-tool-returns-unknown",
        SkillKind.guard,
        "For any question a tool answers with an unknown or null field: report the field as "
        "unknown instead of estimating it.",
        "Answer the parts that are known and name the unknown field as the blocker."),
    dx.AskFor: GeneralLesson(
        "ask", dx.AskFor(None, None), "ask-instead-of-guessing", SkillKind.policy,
        "For any request that leaves a needed value unstated or ambiguous (which one, what "
        "time, what amount): ask the user one short question before acting.",
        "A guessed value is a wrong action the user must undo; ask once, then act on the answer."),
}


def lesson_for(directive: dx.Directive) -> tuple[GeneralLesson, str] | None:
    """The general lesson a specific directive is an instance of, and the tool it is about."""
    if dx.is_general(directive):
        return None
    lesson = LESSONS.get(type(directive))
    if lesson is None:
        return None
    tool = directive.action if isinstance(directive, dx.CheckFirst) else directive.tool
    return (lesson, tool) if tool else None


def general_content(lesson: GeneralLesson, tools: Sequence[str]) -> SkillContent:
    lead = (f"General lesson: the same lesson was learned for {len(tools)} different tools, so "
            "it applies to every tool, including ones not seen yet.")
    body = lead + "\n\n" + "\n".join(f"- {line}" for line in (lesson.general.sentence(), lesson.advice))
    return SkillContent(name=lesson.name, description=lesson.description, body=body,
                        kind=lesson.kind, tools=(), tags=("learned", GENERAL_TAG, lesson.family))


def general_proposals(sources: Iterable[tuple[str, Sequence[str]]], have: Iterable[dx.Directive],
                      min_tools: int) -> list[Proposal]:
    """Proposals for general skills.

    ``sources`` are ``(skill body, evidence run ids)`` of active skills and of this round's
    proposals; ``have`` are the directives already in the bank (a general one already there is
    not proposed again).
    """
    present = set(have)
    tools: dict[type, dict[str, list[str]]] = {}
    for body, evidence in sources:
        for directive in dx.parse(body):
            found = lesson_for(directive)
            if found is None:
                continue
            lesson, tool = found
            tools.setdefault(type(directive), {}).setdefault(tool, []).extend(evidence)
    out = []
    for cls, by_tool in tools.items():
        lesson = LESSONS[cls]
        if lesson.general in present or len(by_tool) < min_tools:
            continue
        names = sorted(by_tool)
        # Evidence in turns across tools, so a capped gate replays runs of every tool.
        columns = [list(dict.fromkeys(by_tool[t])) for t in names]
        evidence = [ids[i] for i in range(max(map(len, columns))) for ids in columns if i < len(ids)]
        out.append(Proposal(
            kind=ChangeKind.add, content=general_content(lesson, names), origin="generalise",
            reason=f"general lesson: the {lesson.family} lesson recurred for {len(names)} tools "
                   f"({', '.join(names)})",
            evidence=tuple(evidence)))
    return out
