"""The distiller interface: evidence in, proposed skill edits out.

Two abstract methods: :meth:`Distiller.revise` (one used skill and the runs that used it) and
:meth:`Distiller.induce` (one recurring cluster of runs that used no skill). Guards written from
limit events and merges of lessons are concrete here and shared by every distiller: they are
templates, so they cost no model call and read the same whoever distils.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from skillbank.evolution._cluster import Cluster
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._evidence import Run, RunGroup
from skillbank.evolution._guards import Situation, guard_content
from skillbank.evolution._proposals import ChangeKind, Proposal, Usage
from skillbank.lessons import Lesson, LessonKind
from skillbank.models import Skill, SkillContent


@dataclass
class SkillEvidence(RunGroup):
    """A used skill and the labelled runs it was injected into (agent-visible views)."""

    skill: Skill
    runs: list[Run]
    situations: list[Situation] = field(default_factory=list)  # limit lessons this skill owns

    @property
    def current(self) -> list[Run]:
        """Runs that used the skill's current version."""
        return [r for r in self.runs if self.skill.version in r.skills.get(self.skill.id, ())]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.runs)


def merge_lessons(base: Sequence[Lesson], new: Iterable[Lesson]) -> list[Lesson]:
    """``base`` followed by each lesson of ``new`` it does not already say (a lesson its general
    form already covers is not added either); a new procedure replaces none: the first stays.

    A skill has one budget: a budget in ``new`` (the later evidence) takes the place of the one
    in ``base``, where two budgets would contradict each other ("within 13" and "within 16")."""
    out = list(base)
    has_method = any(x.kind == LessonKind.procedure for x in out)
    for lesson in new:
        if lesson.kind == LessonKind.procedure and has_method:
            continue
        if any(have.covers(lesson) for have in out):
            continue
        old = next((i for i, x in enumerate(out) if x.kind == LessonKind.budget), None)
        if lesson.kind == LessonKind.budget and old is not None:
            out[old] = lesson
            out = [x for i, x in enumerate(out) if i == old or x.kind != LessonKind.budget]
            continue
        out.append(lesson)
        has_method = has_method or lesson.kind == LessonKind.procedure
    return out


def relevant(lesson: Lesson, tools: Iterable[str]) -> bool:
    """Whether ``lesson`` belongs in a skill about ``tools``: it names one of them, or no tool
    at all. A lesson about another tool never enters a skill (it would mislead the model on
    requests about this skill's tools), and a skill about no tool (a budget, a general lesson)
    takes only lessons about no tool."""
    named = lesson.tools()
    return not named or bool(named & set(tools))


class Distiller(ABC):
    """Subclasses implement :meth:`revise` and :meth:`induce`; ``name`` goes into provenance."""

    name: str = "distiller"

    def __init__(self) -> None:
        self.usage = Usage()
        self.scrubber: Callable[[str], str] = lambda text: text

    def begin_round(self, scrubber: Callable[[str], str] | None = None) -> None:
        """Reset per-round counters (model calls and tokens); ``scrubber`` cleans model input.

        Args:
            scrubber: Applied to the text a model is sent from now on; ``None``: keep the
                current one.
        """
        self.usage = Usage()
        if scrubber is not None:
            self.scrubber = scrubber

    @property
    def author(self) -> str:
        """The author of the versions this distiller proposes: ``evolution:<name>``."""
        return f"evolution:{self.name}"

    @abstractmethod
    def revise(self, evidence: SkillEvidence, config: EvolutionConfig) -> list[Proposal]:
        """Edits for one used skill (update, or split), from its successes and failures.

        Args:
            evidence: The skill and the labelled runs it was injected into, with their limit
                situations.
            config: The round's settings.

        Returns:
            The proposals; empty when the evidence teaches nothing new.
        """

    @abstractmethod
    def induce(self, cluster: Cluster, config: EvolutionConfig) -> list[Proposal]:
        """New skills from one recurring cluster of uncovered runs.

        Args:
            cluster: Similar runs into which no skill was injected (from the uncovered pile).
            config: The round's settings.

        Returns:
            The proposals (new skills); empty when the cluster teaches nothing.
        """

    # -- concrete, shared ---------------------------------------------------------------------

    def guard(self, situation: Situation, config: EvolutionConfig) -> list[Proposal]:
        """A template-written guard skill for one limit situation.

        Args:
            situation: A limit situation: a limit family and its tool, with the runs that met it.
            config: The round's settings (unused by the template).

        Returns:
            One proposal adding the guard skill.
        """
        return [Proposal(kind=ChangeKind.add, content=guard_content(situation), origin="guard",
                         reason=f"limit lesson: {situation.describe()}",
                         evidence=situation.evidence)]

    def merge(self, base: SkillContent, other: SkillContent) -> SkillContent:
        """``base`` extended with the lessons ``other`` adds about ``base``'s own tools.

        ``base`` keeps its name, description and method; a merge never deletes guidance, and
        never brings in a lesson about a tool ``base`` does not concern.

        Args:
            base: The content merged into.
            other: The content whose lessons, tags and toolset are added.

        Returns:
            ``base`` itself when ``other`` adds no lesson, else the merged content.
        """
        lessons = merge_lessons(base.all_lessons, [x for x in other.all_lessons if relevant(x, base.tools)])
        if [x.key for x in lessons] == [x.key for x in base.all_lessons]:
            return base
        named = {t for x in lessons for t in x.tools()}
        return SkillContent(
            name=base.name, description=base.description, kind=base.kind,
            tools=tuple(dict.fromkeys(base.tools + tuple(t for t in other.tools if t in named))),
            tags=tuple(dict.fromkeys(base.tags + other.tags)), lessons=tuple(lessons),
            toolset=tuple(sorted(set(base.toolset) | set(other.toolset))),
        )
