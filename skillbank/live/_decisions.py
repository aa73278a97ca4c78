"""The monitor's decisions as a skill's history holds them, and the rollbacks waiting for a person.

The monitor writes each decision as a version by :data:`~skillbank.live._monitor.MONITOR_AUTHOR`
(:func:`~skillbank.live._monitor.monitor` with ``apply``). What it decided is read from the typed
change that version made against the one before it (a canary made active: promote; made retired:
reject for a canary, retire otherwise; the content changed: narrow); the evidence is the object
the monitor recorded with that version on the change log
(:meth:`~skillbank.store._skills.SkillRepo.recorded_evidence`). Versions written before the
change log held it carry it as JSON after ``; evidence`` in their reason, and are read from there.

A skill the monitor retired or rejected stays *waiting* until a person acknowledges it: an
``acknowledge`` event on the bank's hash-chained change log naming the retiring version
(:meth:`~skillbank.store._skills.SkillRepo.acknowledge`). No version is written, so the skill,
its content hash and its history stay as the monitor left them; reading never writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from skillbank.errors import SkillBankError
from skillbank.live._monitor import MONITOR_AUTHOR, Action, is_canary_version
from skillbank.models import SkillStatus, SkillVersion

__all__ = ["MonitorVersion", "NothingToAcknowledge", "acknowledge_rollback", "evidence_in_words",
           "last_decision", "monitor_versions", "pending_rollback", "pending_rollbacks"]

_LEGACY_EVIDENCE = "; evidence "  # where versions written before evidence events kept it


class NothingToAcknowledge(SkillBankError):
    """The skill has no rollback by the monitor waiting for a person."""


@dataclass(frozen=True)
class MonitorVersion:
    """A version the monitor wrote: what it decided, when, and the evidence it recorded."""

    skill_id: str
    version: int
    action: Action
    at: datetime
    evidence: dict[str, Any] | None  # None: the reason carried none that could be read

    @property
    def rolled_back(self) -> bool:
        """Whether the decision took the skill out of use (a reject or a retire)."""
        return self.action in (Action.reject, Action.retire)

    def words(self) -> str:
        """The evidence as a sentence (:func:`evidence_in_words`)."""
        return evidence_in_words(self.evidence)

    def as_dict(self) -> dict[str, Any]:
        return {"skill_id": self.skill_id, "version": self.version, "action": self.action.value,
                "at": self.at.isoformat(), "evidence": self.evidence, "in_words": self.words()}


def _legacy_evidence(reason: str) -> dict[str, Any] | None:
    _, found, tail = reason.partition(_LEGACY_EVIDENCE)
    if not found:
        return None
    try:
        data = json.loads(tail)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _action(prev: SkillVersion, v: SkillVersion) -> Action:
    if v.status == SkillStatus.retired and prev.status != SkillStatus.retired:
        return Action.reject if is_canary_version(prev) else Action.retire
    if is_canary_version(prev) and not is_canary_version(v):
        return Action.promote
    return Action.narrow


Evidence = Mapping[int, dict[str, Any]]  # one skill's recorded evidence, by version


def monitor_versions(history: Sequence[SkillVersion], evidence: Evidence | None = None) -> list[MonitorVersion]:
    """The versions of ``history`` (one skill's, oldest first) the monitor wrote, oldest first,
    each with its evidence from ``evidence`` (the skill's
    :meth:`~skillbank.store._skills.SkillRepo.recorded_evidence`)."""
    evidence = evidence or {}
    return [MonitorVersion(v.skill_id, v.version, _action(prev, v), v.created_at,
                           evidence.get(v.version) or _legacy_evidence(v.reason))
            for prev, v in zip(history, history[1:]) if v.author == MONITOR_AUTHOR]


def last_decision(history: Sequence[SkillVersion], evidence: Evidence | None = None) -> MonitorVersion | None:
    """The newest decision the monitor wrote on the skill, if any (``evidence``: as for
    :func:`monitor_versions`)."""
    found = monitor_versions(history, evidence)
    return found[-1] if found else None


def pending_rollback(history: Sequence[SkillVersion], acknowledged: Iterable[int] = (),
                     evidence: Evidence | None = None) -> MonitorVersion | None:
    """The monitor's reject or retire that made the skill retired as it is now, unless a person
    acknowledged that version (``acknowledged``: the versions acknowledged; ``evidence``: as for
    :func:`monitor_versions`)."""
    if not history or history[-1].status != SkillStatus.retired:
        return None
    start = len(history) - 1
    while start > 0 and history[start - 1].status == SkillStatus.retired:
        start -= 1
    retiring = history[start]
    if start == 0 or retiring.author != MONITOR_AUTHOR or retiring.version in set(acknowledged):
        return None
    return monitor_versions(history[start - 1:start + 1], evidence)[0]


def pending_rollbacks(bank: Any, skill_ids: Iterable[str] | None = None) -> dict[str, MonitorVersion]:
    """Every skill (of ``skill_ids``, when given) the monitor retired or rejected and no person has
    acknowledged yet, by skill id. Reads the monitor's versions first, so only the skills it ever
    retired have their history read. ``bank`` is a :class:`~skillbank.bank.SkillBank`."""
    wanted = None if skill_ids is None else set(skill_ids)
    retired_by_monitor = {s.skill_id for s in bank.skills.stamps(author_prefix=MONITOR_AUTHOR)
                          if s.author == MONITOR_AUTHOR and s.status == SkillStatus.retired.value
                          and (wanted is None or s.skill_id in wanted)}
    if not retired_by_monitor:
        return {}
    now = bank.skills.get_many(retired_by_monitor)
    ids = [sid for sid, s in now.items() if s.status == SkillStatus.retired]
    seen = bank.skills.acknowledged(ids)
    recorded = bank.skills.recorded_evidence(ids)
    found = {}
    for sid in ids:
        waiting = pending_rollback(bank.skills.history(sid), seen.get(sid, ()), recorded.get(sid))
        if waiting is not None:
            found[sid] = waiting
    return found


def acknowledge_rollback(bank: Any, skill_id: str, *, author: str = "human",
                         reason: str = "acknowledged the monitor's rollback") -> MonitorVersion:
    """Record that ``author`` saw the monitor's rollback of ``skill_id`` (an event on the change
    log; the skill stays retired, with no new version).

    Returns:
        The rollback acknowledged.

    Raises:
        NothingToAcknowledge: the skill is not retired by the monitor, or that was acknowledged.
        SkillNotFoundError: no such skill.
    """
    with bank.transaction(ordered=True):
        skill = bank.skills.get(skill_id)
        seen = bank.skills.acknowledged([skill.id]).get(skill.id, ())
        waiting = pending_rollback(bank.skills.history(skill.id), seen,
                                   bank.skills.recorded_evidence([skill.id]).get(skill.id))
        if waiting is None:
            raise NothingToAcknowledge(
                f"{skill.name} has no rollback by the monitor waiting to be acknowledged (it is {skill.status.value}"
                f"{'' if skill.status != SkillStatus.retired else ', and its retirement was a person’s or is seen'})")
        bank.skills.acknowledge(skill.id, waiting.version, author=author, reason=reason)
    return waiting


def _pct(pair: Sequence[int]) -> str:
    successes, labelled = pair
    return f"{successes} of {labelled}" + (f" ({successes / labelled:.0%})" if labelled else "")


def evidence_in_words(evidence: dict[str, Any] | None) -> str:
    """The monitor's recorded evidence as a sentence: success shown vs held back, the difference
    and its anytime-valid interval, and for a narrowing the kinds of request it read."""
    if not evidence or "overall" not in evidence:
        return "no evidence recorded"
    o = evidence["overall"]
    diff = o.get("difference")
    low, high = o.get("interval", [None, None])
    said = (f"succeeded in {_pct(o['shown'])} runs shown the skill and {_pct(o['held'])} held back; "
            f"difference {'-' if diff is None else f'{diff:+.2f}'}, interval [{low:+.2f}, {high:+.2f}] "
            f"at alpha {o.get('alpha', 0.05):g}")
    kinds = evidence.get("by_kind") or {}
    for kind, k in kinds.items():
        k_low, k_high = k["interval"]
        said += f"; {kind}: {_pct(k['shown'])} vs {_pct(k['held'])}, [{k_low:+.2f}, {k_high:+.2f}]"
    return said
