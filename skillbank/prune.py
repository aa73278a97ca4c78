"""Which active skills to retire, by rule: ``SkillBank.prune`` plans with :func:`plan_prune`;
:func:`least_useful_first` is also the order an evolution round's bank budget retires in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Iterable

from skillbank.models import Skill

__all__ = ["PruneAction", "least_useful_first", "plan_prune"]


@dataclass
class PruneAction:
    skill_id: str
    name: str
    rule: str
    detail: str


def least_useful_first(skills: Iterable[Skill]) -> list[Skill]:
    """``skills`` in the order a cap retires them: lowest Laplace-smoothed success rate, then
    fewest uses, then unused for longest (never used: since created), then id.

    Unused-for-longest breaks ties because it is evidence about use, the thing a cap protects;
    the time of the last edit is not (evolution edits a skill without making it more useful).
    The id makes the order total, so a dry run plans exactly what the real run retires.
    """
    return sorted(skills, key=lambda s: (s.stats.usefulness, s.stats.uses,
                                         s.stats.last_used_at or s.created_at, s.id))


def plan_prune(active: list[Skill], *, pinned: int, now: datetime, unused_days: float | None,
               min_success_rate: float | None, min_evidence: int, max_active: int | None) -> list[PruneAction]:
    """What to retire of ``active`` (unpinned) skills, ``pinned`` more being active and kept; see
    ``SkillBank.prune`` for the rules."""
    actions: dict[str, PruneAction] = {}
    if unused_days is not None:
        cutoff = now - timedelta(days=unused_days)
        for s in active:
            last = s.stats.last_used_at or s.created_at
            if last < cutoff:
                actions[s.id] = PruneAction(s.id, s.name, "unused",
                                            f"last used {last:%Y-%m-%d}, over {unused_days:g} days ago")
    if min_success_rate is not None:
        for s in active:
            rate = s.stats.success_rate
            labelled = s.stats.successes + s.stats.failures
            if s.id not in actions and rate is not None and labelled >= min_evidence and rate < min_success_rate:
                actions[s.id] = PruneAction(s.id, s.name, "low-success",
                                            f"success rate {rate:.0%} over {labelled} labelled uses")
    if max_active is not None:
        remaining = [s for s in active if s.id not in actions]
        excess = len(remaining) + pinned - max_active
        if excess > 0:
            for s in least_useful_first(remaining)[:excess]:
                actions[s.id] = PruneAction(s.id, s.name, "over-cap",
                                            f"usefulness {s.stats.usefulness:.2f}; cap {max_active} active")
    return list(actions.values())
