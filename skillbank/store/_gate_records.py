"""The gate's evidence: one record per measured candidate, kept with the decision it led to.

When the evolution gate measures a candidate and decides on it, the measurement is written
beside the decision, in the same transaction (``gate_records``): the gain, the changes in pass^k
and in the success rate, the cost, whether validation stopped early, and each task's trials in
both arms. Without it only "promoted" or "rejected" and a line of reason survived a round, and
why the gate decided could not be checked afterwards.

A record names the candidate row it measured and that row's version; for an edit of an active
skill that row is a draft, and the record also names the skill the draft edits (``target_id``),
so the edited skill's own history shows the evidence of every edit proposed for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Iterable

from skillbank.models import new_id, utcnow
from skillbank.store._base import Store

__all__ = ["GateRecord", "GateRecordRepo", "GateVerdict", "TaskTrials"]


class GateVerdict(str, Enum):
    """What the gate did with a candidate (:class:`~skillbank.evolution.gate.GateDecision`)."""

    promoted = "promoted"
    rejected = "rejected"
    decided = "decided"  # a person promoted or rejected it while the gate was measuring it
    waiting = "waiting"  # not measured (quarantined, no room, budget spent): never recorded


@dataclass(frozen=True)
class TaskTrials:
    """One task's outcomes in both arms, trial by trial (trial i of each arm had one seed)."""

    task_id: str
    current: tuple[bool, ...]
    candidate: tuple[bool, ...]


@dataclass(frozen=True)
class GateRecord:
    """One measurement of one candidate version and the gate's decision on it."""

    skill_id: str  # the candidate row measured (a draft, for an edit of an active skill)
    version: int  # its version when measured
    decision: GateVerdict
    reason: str  # as written in the version history
    gain: float  # the gain the gate decided on (a bound, when validation stopped early)
    cost: float  # evaluation budget spent (trials, for the trial validator)
    target_id: str | None = None  # the active skill a draft edits
    round: int | None = None  # the evolution round that proposed the candidate
    # Reported by the trial validator; None when the validate function did not say.
    pass_hat_k_change: float | None = None
    success_change: float | None = None
    stopped_early: bool = False
    trials: tuple[TaskTrials, ...] = ()  # the tasks measured, in the order run
    planned: tuple[str, ...] = ()  # the tasks validation was to run
    not_reached: tuple[str, ...] = ()  # run, but the candidate reached none of their prompts
    decided_at: datetime = field(default_factory=utcnow)
    id: str = field(default_factory=lambda: new_id("gr"))

    @property
    def k(self) -> int | None:
        """The k of pass^k: the fewest trials any task had in either arm (the trial validator
        runs each task ``trials`` times per arm, so that number); None without trials."""
        counts = [len(arm) for t in self.trials for arm in (t.current, t.candidate)]
        return min(counts) if counts and min(counts) > 0 else None


_COLUMNS = ("id", "skill_id", "version", "target_id", "round_no", "decided_at", "decision", "reason", "gain",
            "pass_hat_k_change", "success_change", "cost", "stopped_early", "trials", "planned", "not_reached")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM gate_records"
_NEWEST_FIRST = " ORDER BY decided_at DESC, id DESC"


def _row(record: GateRecord) -> tuple[Any, ...]:
    trials = [{"task_id": t.task_id, "current": list(t.current), "candidate": list(t.candidate)}
              for t in record.trials]
    return (record.id, record.skill_id, record.version, record.target_id, record.round,
            record.decided_at.isoformat(), record.decision.value, record.reason, record.gain,
            record.pass_hat_k_change, record.success_change, record.cost, int(record.stopped_early),
            json.dumps(trials), json.dumps(list(record.planned)), json.dumps(list(record.not_reached)))


def _record(row: dict[str, Any]) -> GateRecord:
    trials = tuple(TaskTrials(t["task_id"], tuple(map(bool, t["current"])), tuple(map(bool, t["candidate"])))
                   for t in json.loads(row["trials"]))
    return GateRecord(
        id=row["id"], skill_id=row["skill_id"], version=int(row["version"]), target_id=row["target_id"],
        round=row["round_no"], decided_at=datetime.fromisoformat(row["decided_at"]),
        decision=GateVerdict(row["decision"]), reason=row["reason"], gain=float(row["gain"]),
        pass_hat_k_change=row["pass_hat_k_change"], success_change=row["success_change"],
        cost=float(row["cost"]), stopped_early=bool(row["stopped_early"]), trials=trials,
        planned=tuple(json.loads(row["planned"])), not_reached=tuple(json.loads(row["not_reached"])))


class GateRecordRepo:
    def __init__(self, store: Store):
        self.store = store

    def add(self, record: GateRecord) -> GateRecord:
        """Keep ``record`` (inside the caller's transaction, if any: the gate writes it with the
        decision it led to)."""
        if record.decision == GateVerdict.waiting:
            raise ValueError("a candidate left waiting was not measured: there is nothing to record")
        marks = ", ".join("?" * len(_COLUMNS))
        with self.store.transaction() as conn:
            conn.execute(f"INSERT INTO gate_records ({', '.join(_COLUMNS)}) VALUES ({marks})", _row(record))
        return record

    def for_skill(self, skill_id: str) -> list[GateRecord]:
        """Every record about ``skill_id``, newest first: its own versions measured, and the edits
        of it measured as drafts."""
        rows = self.store.query(f"{_SELECT} WHERE skill_id = ? OR target_id = ?{_NEWEST_FIRST}",
                                (skill_id, skill_id))
        return [_record(r) for r in rows]

    def for_version(self, skill_id: str, version: int) -> list[GateRecord]:
        """The records of version ``version`` of the row ``skill_id``, newest first."""
        rows = self.store.query(f"{_SELECT} WHERE skill_id = ? AND version = ?{_NEWEST_FIRST}",
                                (skill_id, version))
        return [_record(r) for r in rows]

    def latest_for(self, skill_id: str, version: int | None = None) -> GateRecord | None:
        """The newest record of that version (any version: of :meth:`for_skill`); None if none."""
        found = self.for_skill(skill_id) if version is None else self.for_version(skill_id, version)
        return found[0] if found else None

    def latest_for_each(self, skill_ids: Iterable[str]) -> dict[str, GateRecord]:
        """The newest record of each candidate row in ``skill_ids`` that has one, read in one
        query per 500 ids (a queue of hundreds of candidates must not cost a query each)."""
        ids = list(dict.fromkeys(skill_ids))
        latest: dict[str, GateRecord] = {}
        for start in range(0, len(ids), 500):  # stay under SQLite's variable limit
            chunk = ids[start:start + 500]
            rows = self.store.query(f"{_SELECT} WHERE skill_id IN ({','.join('?' * len(chunk))}){_NEWEST_FIRST}",
                                    chunk)
            for row in rows:
                latest.setdefault(row["skill_id"], _record(row))
        return latest
