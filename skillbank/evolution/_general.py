"""General lessons: a lesson that recurs for different tools becomes one general skill.

Learned lessons name a tool (a ``missing_tool`` lesson about ``open_window``), so retrieval and
the agent apply them to requests about that tool only, and a new tool starts from zero. When the
same kind of lesson has been learned for at least ``min_general_tools`` different tools (in
active skills and this round's proposals), the round proposes one skill holding the lesson's
general form, which names no tool (``skillbank.lessons.general_form``). Five kinds generalise:
checks before an action, missing tools, missing parameters, unknown fields and asking instead
of guessing. Procedures and budgets are specific to a task and do not.

This reads lessons, never prose: a lesson a person wrote (as structured lessons) or the LLM
distiller wrote generalises exactly like one the rule distiller wrote.

A general skill is a proposal like any other: it is linted, de-duplicated and gated, so a
generalisation that does not help on the runs behind it is rejected (and remembered as
rejected, so it is not proposed again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from skillbank.evolution._proposals import ChangeKind, Proposal
from skillbank.lessons import Lesson, LessonKind, general_form
from skillbank.models import GENERAL_TAG, SkillContent, SkillKind

__all__ = ["GeneralSkill", "GENERAL_SKILLS", "general_proposals"]


@dataclass(frozen=True)
class GeneralSkill:
    """How the skill holding one kind of general lesson is named and described."""

    family: str
    name: str
    kind: SkillKind
    description: str


GENERAL_SKILLS: dict[LessonKind, GeneralSkill] = {
    LessonKind.check_first: GeneralSkill(
        "check-first", "run-the-required-check-first", SkillKind.policy,
        "For any request that changes something: before calling the action tool, run the check "
        "its description requires, even when the request seems clear."),
    LessonKind.missing_tool: GeneralSkill(
        "missing-tool", "when-a-needed-tool-is-unavailable", SkillKind.guard,
        "For any request that needs a tool you do not have: do the possible part, decline the "
        "rest and name the missing tool."),
    LessonKind.missing_parameter: GeneralSkill(
        "missing-parameter", "when-a-tool-lacks-a-parameter", SkillKind.guard,
        "For any request that asks for a setting the tool has no parameter for: do the possible "
        "part, decline the rest and name the missing parameter."),
    LessonKind.unknown_field: GeneralSkill(
        "unknown-field", "when-a-tool-returns-unknown", SkillKind.guard,
        "For any question a tool answers with an unknown or null field: report the field as "
        "unknown instead of estimating it."),
    LessonKind.ask_for: GeneralSkill(
        "ask", "ask-instead-of-guessing", SkillKind.policy,
        "For any request that leaves a needed value unstated or ambiguous (which one, what "
        "time, what amount): ask the user one short question before acting."),
}


def general_content(kind: LessonKind) -> SkillContent:
    info = GENERAL_SKILLS[kind]
    return SkillContent(name=info.name, description=info.description, kind=info.kind,
                        tags=("learned", GENERAL_TAG, info.family), lessons=(Lesson(kind=kind),))


def general_proposals(sources: Iterable[tuple[Sequence[Lesson], Sequence[str]]],
                      have: Iterable[Lesson], min_tools: int) -> list[Proposal]:
    """Proposals for general skills.

    ``sources`` are ``(lessons, evidence run ids)`` of active skills and of this round's
    proposals; ``have`` are the lessons already in the bank (a general one already there is not
    proposed again).
    """
    present = {x.kind for x in have if x.general}
    tools: dict[LessonKind, dict[str, list[str]]] = {}
    for lessons, evidence in sources:
        for lesson in lessons:
            if general_form(lesson) is None or lesson.kind not in GENERAL_SKILLS:
                continue
            tools.setdefault(lesson.kind, {}).setdefault(lesson.tool or "", []).extend(evidence)
    out = []
    for kind, by_tool in tools.items():
        if kind in present or len(by_tool) < min_tools:
            continue
        names = sorted(by_tool)
        # Evidence in turns across tools, so a capped gate replays runs of every tool.
        columns = [list(dict.fromkeys(by_tool[t])) for t in names]
        evidence = [ids[i] for i in range(max(map(len, columns))) for ids in columns if i < len(ids)]
        family = GENERAL_SKILLS[kind].family
        out.append(Proposal(
            kind=ChangeKind.add, content=general_content(kind), origin="generalise",
            reason=f"general lesson: the {family} lesson recurred for {len(names)} tools "
                   f"({', '.join(names)})",
            evidence=tuple(evidence)))
    return out
