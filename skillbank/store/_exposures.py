"""The exposure record: per run, each randomized eligible skill and whether it was shown.

One row per (run, skill): the skill's version when first drawn, its arm (``shown`` or
``held``), the chance it had of being shown, and when. The first draw of a run wins (a run sees
one arm for its life; a later turn's record of the same skill is ignored). The run id is the
trajectory's id, so the live effect joins the row with the run's outcome, recorded then or later.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from skillbank.models import utcnow
from skillbank.store._base import Store

__all__ = ["ExposedRun", "ExposureRepo", "ExposureRow"]


@dataclass(frozen=True)
class ExposureRow:
    """One stored exposure."""

    run_id: str
    skill_id: str
    version: int
    arm: str  # "shown" or "held"
    p_shown: float
    at: datetime


@dataclass(frozen=True)
class ExposedRun:
    """An exposure with what the live effect reads of its run: the outcome (``None``: not
    labelled, or the run was never recorded), the request, and the run's cost and steps."""

    exposure: ExposureRow
    success: bool | None
    task: str | None
    task_type: str | None
    tokens: int
    steps: int


_COLUMNS = ("run_id", "skill_id", "version", "arm", "p_shown", "at")


def _row(r: dict[str, Any]) -> ExposureRow:
    at = r["at"]
    return ExposureRow(r["run_id"], r["skill_id"], int(r["version"]), r["arm"], float(r["p_shown"]),
                       at if isinstance(at, datetime) else datetime.fromisoformat(at))


class ExposureRepo:
    def __init__(self, store: Store):
        self.store = store

    def record(self, run_id: str, exposures: Iterable[Any], at: datetime | None = None) -> int:
        """Keep the arm of each of ``exposures`` (anything with ``skill_id``, ``version``, ``arm``,
        ``p_shown``) in run ``run_id``; a skill already recorded for the run keeps its first arm.
        Returns how many were given."""
        when = (at or utcnow()).isoformat()
        rows = [(run_id, e.skill_id, int(e.version), getattr(e.arm, "value", e.arm), float(e.p_shown), when)
                for e in exposures]
        if not rows:
            return 0
        with self.store.transaction() as conn:
            conn.executemany(
                f"INSERT INTO exposures ({', '.join(_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (run_id, skill_id) DO NOTHING", rows)
        return len(rows)

    def for_run(self, run_id: str) -> list[ExposureRow]:
        rows = self.store.query(f"SELECT {', '.join(_COLUMNS)} FROM exposures WHERE run_id = ? ORDER BY skill_id",
                                (run_id,))
        return [_row(r) for r in rows]

    def for_skill(self, skill_id: str) -> list[ExposureRow]:
        rows = self.store.query(f"SELECT {', '.join(_COLUMNS)} FROM exposures WHERE skill_id = ? ORDER BY at, run_id",
                                (skill_id,))
        return [_row(r) for r in rows]

    def runs(self, skill_ids: Sequence[str] | None = None) -> list[ExposedRun]:
        """Every exposure (of ``skill_ids`` only, when given) with its run's outcome, oldest first
        (per 500 ids: SQLite's variable limit)."""
        sql = ("SELECT e.run_id, e.skill_id, e.version, e.arm, e.p_shown, e.at, t.success, t.task, t.task_type,"
               " t.input_tokens, t.output_tokens, t.n_steps"
               " FROM exposures e LEFT JOIN trajectories t ON t.id = e.run_id")
        order = " ORDER BY e.at, e.run_id, e.skill_id"
        if skill_ids is None:
            rows = self.store.query(sql + order)
        else:
            ids = list(dict.fromkeys(skill_ids))
            rows = []
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                rows += self.store.query(f"{sql} WHERE e.skill_id IN ({', '.join('?' * len(chunk))}){order}", chunk)
            rows.sort(key=lambda r: (str(r["at"]), r["run_id"], r["skill_id"]))
        return [ExposedRun(_row(r), None if r["success"] is None else bool(r["success"]), r["task"],
                           r["task_type"], int(r["input_tokens"] or 0) + int(r["output_tokens"] or 0),
                           int(r["n_steps"] or 0)) for r in rows]
