"""Which active skills to retire, by rule: ``SkillBank.prune`` plans with :func:`plan_prune`;
:func:`least_useful_first` is also the order an evolution round's bank budget retires in.

A rule on raw success rate never retires a skill whose measured effect (:class:`MeasuredEffect`:
success with the skill against success without it) says it helps: a skill injected into hard
tasks, or into every task, can help and still sit among failing runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Callable, Iterable, Mapping, Sequence

from skillbank.models import Skill
from skillbank.store._gate_records import GateRecord, GateRecordRepo, GateVerdict

__all__ = ["EffectSource", "MeasuredEffect", "PruneAction", "PrunePlan", "gate_effects",
           "least_useful_first", "measured_effects", "plan_prune"]


class EffectKind(str, Enum):
    """Where a measured effect comes from."""

    gate = "gate"  # the evolution gate's trials with and without the skill, before promotion
    live = "live"  # runs held out from the skill while it was active


@dataclass(frozen=True)
class MeasuredEffect:
    """A measured change in success a skill makes: ``gain`` > 0 means it helps."""

    kind: EffectKind
    gain: float
    version: int | None = None  # the version measured, when known
    round: int | None = None  # the evolution round that measured it, when known

    @property
    def helps(self) -> bool:
        return self.gain > 0

    def label(self) -> str:
        """``gate +0.29 (v2)``: the source, the gain and the version measured."""
        where = f" (v{self.version})" if self.version is not None else ""
        return f"{self.kind.value} {self.gain:+.2f}{where}"


#: Measured effects of some skills, by skill id; a source leaves out the skills it has none for.
EffectSource = Callable[[Sequence[Skill]], Mapping[str, MeasuredEffect]]


@dataclass
class PruneAction:
    """A skill a pruning rule matched: retired, or in :class:`PrunePlan` spared by its effect.

    Attributes:
        skill_id: The skill's id.
        name: The skill's name.
        rule: The rule that matched: ``unused``, ``low-success`` or ``over-cap``.
        detail: Why, in words (the last use, the success rate or the usefulness and cap).
        effect: The skill's measured effect on success; ``None``: never measured.
    """

    skill_id: str
    name: str
    rule: str
    detail: str
    effect: MeasuredEffect | None = None


@dataclass
class PrunePlan:
    """What to retire, and what a rule matched but the skill's measured effect kept."""

    retire: list[PruneAction] = field(default_factory=list)
    spared: list[PruneAction] = field(default_factory=list)


def gate_effects(records: GateRecordRepo) -> EffectSource:
    """The gate's measured effect of each skill: the newest record of the skill's own row, or of
    an edit of it that was promoted (a rejected edit measured content the skill never had)."""

    def effects(skills: Sequence[Skill]) -> dict[str, MeasuredEffect]:
        found: dict[str, MeasuredEffect] = {}
        for skill in skills:
            record = next((r for r in records.for_skill(skill.id) if _measured_this_skill(r, skill)), None)
            if record is not None:
                found[skill.id] = MeasuredEffect(EffectKind.gate, record.gain, round=record.round,
                                                 version=record.version if record.skill_id == skill.id else None)
        return found

    return effects


def _measured_this_skill(record: GateRecord, skill: Skill) -> bool:
    if record.skill_id == skill.id:
        return True
    return record.decision in (GateVerdict.promoted, GateVerdict.decided)


def measured_effects(skills: Sequence[Skill], sources: Iterable[EffectSource]) -> dict[str, MeasuredEffect]:
    """Each skill's measured effect from the first of ``sources`` (most trusted first) that has one."""
    found: dict[str, MeasuredEffect] = {}
    for source in sources:
        for skill_id, effect in source(skills).items():
            found.setdefault(skill_id, effect)
    return found


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
               min_success_rate: float | None, min_evidence: int, max_active: int | None,
               effects: Mapping[str, MeasuredEffect] | None = None) -> PrunePlan:
    """What to retire of ``active`` (unpinned) skills, ``pinned`` more being active and kept; see
    ``SkillBank.prune`` for the rules. ``effects`` (by skill id): a skill whose effect helps is
    spared by the success-rate rule and retired last by the cap."""
    effects = effects or {}
    plan = PrunePlan()
    actions: dict[str, PruneAction] = {}

    def action(s: Skill, rule: str, detail: str) -> PruneAction:
        return PruneAction(s.id, s.name, rule, detail, effects.get(s.id))

    if unused_days is not None:
        cutoff = now - timedelta(days=unused_days)
        for s in active:
            last = s.stats.last_used_at or s.created_at
            if last < cutoff:
                actions[s.id] = action(s, "unused", f"last used {last:%Y-%m-%d}, over {unused_days:g} days ago")
    if min_success_rate is not None:
        for s in active:
            rate = s.stats.success_rate
            labelled = s.stats.successes + s.stats.failures
            if s.id not in actions and rate is not None and labelled >= min_evidence and rate < min_success_rate:
                found = action(s, "low-success", f"success rate {rate:.0%} over {labelled} labelled uses")
                if found.effect is not None and found.effect.helps:
                    found.detail += "; kept: its measured effect says it helps"
                    plan.spared.append(found)
                else:
                    actions[s.id] = found
    if max_active is not None:
        remaining = [s for s in active if s.id not in actions]
        excess = len(remaining) + pinned - max_active
        if excess > 0:
            helpful = [s for s in remaining if s.id in effects and effects[s.id].helps]
            others = [s for s in remaining if s not in helpful]
            for s in (least_useful_first(others) + least_useful_first(helpful))[:excess]:
                actions[s.id] = action(s, "over-cap", f"usefulness {s.stats.usefulness:.2f}; cap {max_active} active")
    plan.retire = list(actions.values())
    return plan
