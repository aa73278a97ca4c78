"""The reads an evolution round, the harm rule and attribution make, as repository methods.

They read many trajectories at once, so they return plain rows (dicts and tuples) in the few
fields each caller needs rather than whole :class:`~skillbank.models.Trajectory` records: the
database extracts those fields from the step JSON (in C, about twice as fast as parsing whole
steps in Python, whose model text a round never needs).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Collection, Iterable

from skillbank.store._base import Store
from skillbank.store._trajectories import where_clause

__all__ = ["EvidenceRepo", "RunRows"]

_CHUNK = 500  # ids per IN (...) list: under SQLite's variable limit


@dataclass
class RunRows:
    """One batch of runs' rows: steps (in order), limit events, injections, trajectory rows."""

    steps: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    limits: dict[str, list[tuple]] = field(default_factory=lambda: defaultdict(list))
    injections: dict[str, list[tuple[str, int]]] = field(default_factory=lambda: defaultdict(list))
    trajectories: dict[str, dict[str, Any]] = field(default_factory=dict)


class EvidenceRepo:
    def __init__(self, store: Store):
        self.store = store

    def labelled_ids(self, *, since: datetime | None = None,
                     exclude_splits: Collection[str] = ()) -> list[str]:
        """Finished, labelled runs not consumed by a round (or every one since ``since``),
        leaving out runs whose ``split`` label is one of ``exclude_splits``."""
        where, params = where_clause(self.store.sql, exclude_splits=exclude_splits)
        sql = ("SELECT id FROM trajectories WHERE success IS NOT NULL AND status != 'running'"
               + (" AND started_at >= ?" if since is not None else " AND consumed_round IS NULL")
               + f" AND {where} ORDER BY started_at, id")
        params = ([since.isoformat()] if since is not None else []) + params
        return [r["id"] for r in self.store.query(sql, params)]

    def run_rows(self, ids: list[str]) -> RunRows:
        """The rows a round builds its runs from, for ``ids`` (at most a few hundred)."""
        out = RunRows()
        if not ids:
            return out
        q, d = self.store.query, self.store.sql
        marks = ",".join("?" * len(ids))
        tool = "CASE WHEN kind = 'tool' THEN {} END"
        blank = " || ".join(["' '"] + [d.char(c) for c in (9, 10, 13)])
        for r in q(f"SELECT trajectory_id, kind, {d.json_int('data', 'index')} AS \"index\","
                   f" {d.json_int('data', 'input_tokens')} AS input_tokens,"
                   f" {d.json_int('data', 'output_tokens')} AS output_tokens,"
                   f" {tool.format(d.json_text('data', 'tool'))} AS tool,"
                   f" {tool.format(d.json_text('data', 'args'))} AS args,"
                   f" {tool.format(d.json_text('data', 'result'))} AS result,"
                   f" {tool.format(d.json_text('data', 'error'))} AS error,"
                   f" CASE WHEN kind = 'model' THEN {d.json_text('data', 'tools_offered')} END AS tools_offered,"
                   # The same test as asks(): no tool call and text ending in a question mark.
                   " CASE WHEN kind = 'model' THEN"
                   f"  {d.json_array_length('data', 'tool_calls')} = 0"
                   f"  AND rtrim(coalesce({d.json_text('data', 'content')}, ''), {blank}) LIKE '%?'"
                   " END AS asks"
                   f" FROM steps WHERE trajectory_id IN ({marks}) ORDER BY trajectory_id, idx", ids):
            for key in ("args", "tools_offered"):
                if r[key] is not None:
                    r[key] = json.loads(r[key])
            out.steps[r["trajectory_id"]].append(r)
        for r in q(f"SELECT * FROM limit_events WHERE trajectory_id IN ({marks}) ORDER BY rowid", ids):
            out.limits[r["trajectory_id"]].append((r["type"], r["step"], r["detail"], r["tool"],
                                                   json.loads(r["data"] or "{}")))
        for r in q(f"SELECT trajectory_id, skill_id, version FROM injections WHERE trajectory_id IN ({marks})", ids):
            out.injections[r["trajectory_id"]].append((r["skill_id"], r["version"]))
        out.trajectories = {r["id"]: r for r in q(f"SELECT * FROM trajectories WHERE id IN ({marks})", ids)}
        return out

    def labelled_injections(self) -> list[dict[str, Any]]:
        """``skill_id``, ``version``, ``trajectory_id`` of every injection into a labelled run."""
        return self.store.query(
            "SELECT DISTINCT i.skill_id, i.version, i.trajectory_id FROM injections i"
            " JOIN trajectories t ON t.id = i.trajectory_id WHERE t.success IS NOT NULL")

    def labelled_tasks(self) -> list[dict[str, Any]]:
        """``id``, ``task``, ``task_type``, ``success`` of every labelled run."""
        return self.store.query(
            "SELECT id, task, task_type, success FROM trajectories WHERE success IS NOT NULL")

    def splits_of(self, ids: Iterable[str]) -> dict[str, tuple[str, str | None]]:
        """``trajectory id -> (split label or "unlabelled", run label)`` for the ids still stored."""
        ids = list(ids)
        out: dict[str, tuple[str, str | None]] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in self.store.query(f"SELECT id, labels FROM trajectories WHERE id IN ({marks})", chunk):
                labels = json.loads(row["labels"] or "{}")
                out[row["id"]] = (labels.get("split") or "unlabelled", labels.get("run"))
        return out
