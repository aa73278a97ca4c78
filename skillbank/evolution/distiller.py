"""The distiller interface: evidence in, proposed skill edits out.

Two abstract methods: :meth:`Distiller.revise` (one used skill and the runs that used it) and
:meth:`Distiller.induce` (one recurring cluster of runs that used no skill). Guards written from
limit events and structural merges are concrete here and shared by every distiller: they are
templates, so they cost no model call and read the same whoever distils.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable

from skillbank import directives as dx
from skillbank.evolution import body as B
from skillbank.evolution.cluster import Cluster
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution.evidence import Run, RunGroup
from skillbank.evolution.guards import Situation, guard_content
from skillbank.evolution.proposals import ChangeKind, Proposal, Usage
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


def section_for(directive: dx.Directive) -> str:
    if isinstance(directive, dx.Order):
        return B.METHOD
    if isinstance(directive, dx.StepBudget):
        return B.BUDGET
    if isinstance(directive, (dx.Unavailable, dx.NoParam, dx.UnknownField, dx.AskFor)):
        return B.CAPABILITY
    return B.MISTAKES


class Distiller(ABC):
    """Subclasses implement :meth:`revise` and :meth:`induce`; ``name`` goes into provenance."""

    name: str = "distiller"

    def __init__(self) -> None:
        self.usage = Usage()
        self.scrubber: Callable[[str], str] = lambda text: text

    def begin_round(self, scrubber: Callable[[str], str] | None = None) -> None:
        """Reset per-round counters (model calls and tokens); ``scrubber`` cleans model input."""
        self.usage = Usage()
        if scrubber is not None:
            self.scrubber = scrubber

    @property
    def author(self) -> str:
        return f"evolution:{self.name}"

    @abstractmethod
    def revise(self, evidence: SkillEvidence, config: EvolutionConfig) -> list[Proposal]:
        """Edits for one used skill (update, or split), from its successes and failures."""

    @abstractmethod
    def induce(self, cluster: Cluster, config: EvolutionConfig) -> list[Proposal]:
        """New skills from one recurring cluster of uncovered runs."""

    # -- concrete, shared ---------------------------------------------------------------------

    def guard(self, situation: Situation, config: EvolutionConfig) -> list[Proposal]:
        """A template-written guard skill for one limit situation."""
        return [Proposal(kind=ChangeKind.add, content=guard_content(situation), origin="guard",
                         reason=f"limit lesson: {situation.describe()}",
                         evidence=situation.evidence)]

    def merge(self, base: SkillContent, other: SkillContent) -> SkillContent:
        """``base`` extended with what ``other`` adds: its directives, sections and tools.

        ``base`` keeps its name, description and method; a merge never deletes guidance.
        """
        body = base.body
        if B.order_of(body) is None and (order := B.order_of(other.body)) is not None:
            body = B.replace_order(body, order)
        for title in (B.MISTAKES, B.CAPABILITY, B.BUDGET):
            body = B.add_bullets(body, title, B.bullets(B.get_section(other.body, title)))
        have = set(dx.parse(body))
        for directive in dx.parse(other.body):
            if directive not in have and not isinstance(directive, dx.Order):
                body = B.add_bullets(body, section_for(directive), [directive.sentence()])
                have.add(directive)
        return SkillContent(
            name=base.name, description=base.description, body=body, kind=base.kind,
            tools=tuple(dict.fromkeys(base.tools + other.tools)),
            tags=tuple(dict.fromkeys(base.tags + other.tags)),
        )
