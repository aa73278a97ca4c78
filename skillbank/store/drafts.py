"""Candidates waiting for review, and the draft rows that hold edits of active skills.

A candidate made by an evolution round has a pending record: what promoting it would do (its
kind, target, evidence, ...), kept as JSON in ``pending_candidates`` until it is promoted or
rejected. An edit of an active skill waits in a draft row, one per target (``drafts``), reused
by later edits of that target even after it was retired.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from skillbank.store.base import Store

__all__ = ["DraftRepo"]


class DraftRepo:
    def __init__(self, store: Store):
        self.store = store

    def save_pending(self, skill_id: str, info: Mapping[str, Any]) -> None:
        """Record (or replace) what promoting ``skill_id`` would do; a draft (``info["target"]``
        set) also becomes its target's draft row."""
        with self.store.transaction() as conn:
            conn.execute("INSERT INTO pending_candidates (skill_id, info) VALUES (?, ?) "
                         "ON CONFLICT (skill_id) DO UPDATE SET info = excluded.info",
                         (skill_id, json.dumps(dict(info), sort_keys=True)))
            if info.get("target"):
                conn.execute("INSERT INTO drafts (target_id, draft_id) VALUES (?, ?) "
                             "ON CONFLICT (target_id) DO UPDATE SET draft_id = excluded.draft_id",
                             (info["target"], skill_id))

    def pending(self, skill_id: str) -> dict[str, Any] | None:
        """What promoting ``skill_id`` would do; None when it is not a pending candidate."""
        row = self.store.query_one("SELECT info FROM pending_candidates WHERE skill_id = ?", (skill_id,))
        return json.loads(row["info"]) if row else None

    def drop_pending(self, skill_id: str) -> None:
        """``skill_id`` was decided (promoted or rejected): it no longer waits."""
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM pending_candidates WHERE skill_id = ?", (skill_id,))

    def draft_for(self, target_id: str) -> str | None:
        """The draft row used for edits of ``target_id``, if one was ever made."""
        row = self.store.query_one("SELECT draft_id FROM drafts WHERE target_id = ?", (target_id,))
        return row["draft_id"] if row else None

    def targets_of(self, ids: Iterable[str]) -> dict[str, str]:
        """Of ``ids``, those that are draft rows, each with the skill it edits (one query)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        rows = self.store.query(f"SELECT draft_id, target_id FROM drafts WHERE draft_id IN"
                                f" ({','.join('?' * len(wanted))})", wanted)
        return {r["draft_id"]: r["target_id"] for r in rows}

    def draft_ids(self) -> set[str]:
        """Every draft row ever made."""
        return {r["draft_id"] for r in self.store.query("SELECT draft_id FROM drafts")}
