"""The live monitor: decisions on skills from their randomized live evidence.

For each randomized skill (a canary, or an active skill under the standing holdout) it reads
the anytime-valid interval for ``success(shown) - success(held)`` and decides:

- a kind of request it helps and another it hurts (each kind's interval clear of zero, the kinds
  Bonferroni-corrected): **narrow**, a "Not for requests like ..." clause naming the hurt kind;
- a canary whose lower bound is above zero: **promote** (the ``canary`` tag comes off);
- a canary whose upper bound is below zero: **reject** (retired);
- an active skill whose upper bound is below zero: **retire**;
- a skill with no eligible run for ``stale_after``: flagged **stale** (reported, nothing written).

The skills read are the canaries and the active skills with exposures on record (an active skill
never randomized has no evidence).

A pinned skill, and a skill a person last activated, are reported and never decided on. Each
decision applied is one new version by author ``monitor`` whose reason holds the evidence (arms,
counts, interval) as JSON, so it is on the hash-chained history. Decisions are applied under the
evolution lock, and only to the skill version they were computed from: two monitors at once
decide once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from skillbank.live._canary import without_canary
from skillbank.live._config import CANARY_TAG, LiveConfig
from skillbank.live._effect import Effect, KindOf, Tally, tally_runs, task_type_kind
from skillbank.live._exposure import is_canary, shown_probability
from skillbank.models import DESCRIPTION_MAX, Skill, SkillStatus, SkillVersion, utcnow

__all__ = ["MONITOR_AUTHOR", "Action", "Decision", "MonitorReport", "SkillLive", "decide", "monitor"]

MONITOR_AUTHOR = "monitor"
# The evolution round's lock (skillbank.evolution._lock.LOCK_NAME): the monitor and a round never
# change skills at once.
_LOCK_NAME = "evolve"
_NOT_FOR = re.compile(r"\s*Not for requests (?:like|about) [^\n]*$")


class Action(str, Enum):
    promote = "promote"
    reject = "reject"
    retire = "retire"
    narrow = "narrow"
    stale = "stale"  # a flag: nothing is written


@dataclass(frozen=True)
class Decision:
    """What the monitor decided about one skill version, why, and on what evidence."""

    skill_id: str
    version: int
    action: Action
    reason: str
    evidence: dict[str, Any]
    hurts: tuple[str, ...] = ()  # narrow: the kinds of request it hurts

    def as_dict(self) -> dict[str, Any]:
        return {"skill_id": self.skill_id, "version": self.version, "action": self.action.value,
                "reason": self.reason, "hurts": list(self.hurts), "evidence": self.evidence}


@dataclass(frozen=True)
class SkillLive:
    """One randomized skill's live effect and the monitor's decision on it (if any)."""

    skill: Skill
    tally: Tally
    decision: Decision | None
    held_by_person: bool
    applied: bool = False

    def as_dict(self, alpha: float) -> dict[str, Any]:
        return {"skill_id": self.skill.id, "name": self.skill.name, "version": self.skill.version,
                "status": self.skill.status.value, "canary": is_canary(self.skill), "pinned": self.skill.pinned,
                "held_by_person": self.held_by_person,
                "last_exposed": self.tally.last_exposed.isoformat() if self.tally.last_exposed else None,
                "effect": self.tally.overall.as_dict(alpha),
                "by_kind": {k: e.as_dict(alpha) for k, e in sorted(self.tally.by_kind.items())},
                "decision": self.decision.as_dict() if self.decision else None, "applied": self.applied}


@dataclass
class MonitorReport:
    skills: list[SkillLive] = field(default_factory=list)
    alpha: float = 0.05

    @property
    def decisions(self) -> list[Decision]:
        return [s.decision for s in self.skills if s.decision is not None]

    def as_dict(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "skills": [s.as_dict(self.alpha) for s in self.skills]}


def _summary(effect: Effect, alpha: float) -> dict[str, Any]:
    i = effect.interval(alpha)
    return {"shown": [effect.shown.successes, effect.shown.labelled],
            "held": [effect.held.successes, effect.held.labelled],
            "difference": round(i.estimate, 4) if i.estimate is not None else None,
            "interval": [round(i.low, 4), round(i.high, 4)], "alpha": alpha}


def _kinds(tally: Tally, config: LiveConfig) -> tuple[list[str], list[str], dict[str, Any]]:
    """The kinds the skill helps and hurts (Bonferroni over the kinds with enough runs)."""
    readable = {k: e for k, e in tally.by_kind.items()
                if min(e.shown.labelled, e.held.labelled) >= config.min_per_arm}
    if len(readable) < 2:
        return [], [], {}
    alpha = config.alpha / len(readable)
    helps = sorted(k for k, e in readable.items() if e.interval(alpha).low > 0)
    hurts = sorted(k for k, e in readable.items() if e.interval(alpha).high < 0)
    return helps, hurts, {k: _summary(e, alpha) for k, e in sorted(readable.items())}


def decide(skill: Skill, tally: Tally, config: LiveConfig, *, now: datetime | None = None,
           held_by_person: bool = False) -> Decision | None:
    """The monitor's decision on ``skill`` from ``tally`` (``None``: no decision yet)."""
    if skill.pinned or held_by_person or shown_probability(skill, config) is None:
        return None
    canary = is_canary(skill)
    helps, hurts, per_kind = _kinds(tally, config)
    if helps and hurts:
        return Decision(skill.id, skill.version, Action.narrow,
                        f"helps {', '.join(helps)}; hurts {', '.join(hurts)}",
                        {"overall": _summary(tally.overall, config.alpha), "by_kind": per_kind}, tuple(hurts))
    interval = tally.overall.interval(config.alpha)
    evidence = {"overall": _summary(tally.overall, config.alpha)}
    if canary and interval.low > 0:
        return Decision(skill.id, skill.version, Action.promote, "live effect above zero", evidence)
    if interval.high < 0:
        action = Action.reject if canary else Action.retire
        return Decision(skill.id, skill.version, action, "live effect below zero", evidence)
    last = tally.last_exposed or skill.updated_at
    if (now or utcnow()) - last > config.stale_after:
        return Decision(skill.id, skill.version, Action.stale,
                        f"no eligible run since {last.isoformat(timespec='seconds')}", evidence)
    return None


def _plain(content: Any) -> Any:
    return without_canary(content).hash()


def evidence_start(history: Sequence[SkillVersion]) -> int:
    """The first version of the current content (the ``canary`` tag aside): evidence about an
    earlier content is about another skill."""
    if not history:
        return 0
    current = _plain(history[-1].content)
    start = history[-1].version
    for v in reversed(history):
        if _plain(v.content) != current:
            break
        start = v.version
    return start


def held_by_person(history: Sequence[SkillVersion]) -> bool:
    """Whether a person made the skill's newest status change to active (their decision wins)."""
    for prev, v in zip(reversed(history[:-1]), reversed(history)):
        if v.status != prev.status or is_canary_version(v) != is_canary_version(prev):
            return v.author == "human" and v.status == SkillStatus.active and not is_canary_version(v)
    return False


def is_canary_version(v: SkillVersion) -> bool:
    return CANARY_TAG in v.content.tags


def _narrowed(skill: Skill, hurts: Sequence[str]) -> Any:
    like = "; ".join(hurts)
    base = _NOT_FOR.sub("", skill.content.description).strip()
    description = f"{base} Not for requests like \"{like}\"."[:DESCRIPTION_MAX]
    return skill.content.model_copy(update={"description": description})


def _apply(bank: Any, decision: Decision) -> bool:
    """Write ``decision`` as a new version if the skill is still at the version it was made on."""
    skill = bank.skills.get(decision.skill_id)
    if skill.version != decision.version or decision.action == Action.stale:
        return False
    reason = f"monitor: {decision.action.value}: {decision.reason}"
    evidence = decision.evidence
    if decision.action == Action.promote:
        bank.skills.new_version(skill.id, content=without_canary(skill.content), author=MONITOR_AUTHOR,
                                reason=reason, action="status:active", evidence=evidence)
    elif decision.action in (Action.reject, Action.retire):
        bank.skills.new_version(skill.id, status=SkillStatus.retired, author=MONITOR_AUTHOR, reason=reason,
                                note=reason, action="status:retired", evidence=evidence)
    elif decision.action == Action.narrow:
        bank.skills.new_version(skill.id, content=_narrowed(skill, decision.hurts), author=MONITOR_AUTHOR,
                                reason=reason, action="update", evidence=evidence)
    return True


def monitor(bank: Any, config: LiveConfig | None = None, *, apply: bool = False, kind_of: KindOf = task_type_kind,
            now: datetime | None = None, lock_timeout: float | None = 10.0) -> MonitorReport:
    """Every randomized skill's live effect and the monitor's decision; ``apply`` writes them.

    ``bank`` is a :class:`~skillbank.bank.SkillBank` (its ``skills``, ``exposures`` and ``lock``).
    ``kind_of`` names each run's kind of request from its task text and task type.
    """
    config = config or LiveConfig()

    def read() -> MonitorReport:
        skills = [s for s in bank.skills.list(status=SkillStatus.active)]
        histories = {s.id: bank.skills.history(s.id) for s in skills}
        since = {s.id: evidence_start(histories[s.id]) for s in skills}
        tallies = tally_runs(bank.exposures.runs([s.id for s in skills]), since, kind_of)
        report = MonitorReport(alpha=config.alpha)
        for s in skills:
            person = held_by_person(histories[s.id])
            # An active skill without exposures was never randomized (the agents run without a
            # holdout): there is no evidence to read, and its silence does not make it stale.
            if not is_canary(s) and s.id not in tallies:
                continue
            tally = tallies.get(s.id, Tally())
            report.skills.append(SkillLive(s, tally, decide(s, tally, config, now=now, held_by_person=person), person))
        return report

    if not apply:
        return read()
    with bank.lock(_LOCK_NAME, timeout=lock_timeout, what="monitor"):
        report = read()
        report.skills = [SkillLive(s.skill, s.tally, s.decision, s.held_by_person,
                                   applied=s.decision is not None and _apply(bank, s.decision))
                         for s in report.skills]
    return report
