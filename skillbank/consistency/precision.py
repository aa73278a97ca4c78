"""Injection precision: how many of the skills a run was given were learned with its tools.

A skill learned by an agent with other tools (a car agent's guard, injected into a calendar
agent) is noise in the prompt at best. Each learned skill records the toolset of the runs it came
from (``SkillContent.toolset``) and each run the tools its model was offered; a skill injected
into a run is *on-toolset* when the two share a tool. Skills that record no toolset (general
lessons, which apply to any tool by design, and skills people wrote) are counted apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from skillbank.evolution._seam import EvolutionBank

__all__ = ["InjectionPrecision", "injection_precision"]


@dataclass(frozen=True)
class InjectionPrecision:
    pairs: int = 0  # (run, skill) injections with a recorded toolset on both sides
    on_toolset: int = 0
    no_toolset: int = 0  # injections of skills that record no toolset (general, hand-written)

    @property
    def share(self) -> float | None:
        return self.on_toolset / self.pairs if self.pairs else None

    def as_dict(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "on_toolset": self.on_toolset, "no_toolset": self.no_toolset,
                "share": None if self.share is None else round(self.share, 4)}


def injection_precision(bank: EvolutionBank, trajectory_ids: Iterable[str]) -> InjectionPrecision:
    """Injection precision over the given runs, each distinct skill counted once per run."""
    pairs = on = untracked = 0
    toolsets: dict[str, frozenset[str]] = {}
    for tid in trajectory_ids:
        traj = bank.trajectories.get(tid)
        offered = {t for step in traj.steps for t in (step.tools_offered or ())}
        for skill_id in dict.fromkeys(i.skill_id for i in traj.injections):
            if skill_id not in toolsets:
                toolsets[skill_id] = frozenset(bank.get_skill(skill_id).content.toolset)
            learned_with = toolsets[skill_id]
            if not learned_with:
                untracked += 1
            elif offered:
                pairs += 1
                on += bool(learned_with & offered)
    return InjectionPrecision(pairs=pairs, on_toolset=on, no_toolset=untracked)
