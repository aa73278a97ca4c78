"""Candidates waiting for review, and the draft rows that hold edits of active skills.

A candidate made by an evolution round has a pending record: what promoting it would do (its
kind, target, evidence, ...), kept as JSON in ``pending_candidates`` until it is promoted or
rejected. An edit of an active skill waits in a draft row, one per target (``drafts``), reused
by later edits of that target even after it was retired.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from skillbank.errors import DuplicateSkillError
from skillbank.store._base import Store

__all__ = ["DraftRepo", "free_draft_name"]

_NAME_MAX = 64


def free_draft_name(target_name: str, *, exists: Callable[[str], bool]) -> str:
    """The name of a new draft row for edits of ``target_name``: ``<target>-next`` (then
    ``-next2``, ...) cut to fit a skill name, the first that ``exists`` says is free."""
    for n in range(1, 100):
        suffix = "-next" if n == 1 else f"-next{n}"
        name = target_name[: _NAME_MAX - len(suffix)].rstrip("-") + suffix
        if not exists(name):
            return name
    raise DuplicateSkillError(f"no free draft name for {target_name}")


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

    def targets(self) -> dict[str, str]:
        """Every draft row ever made, mapped to the skill whose edits it holds."""
        return {r["draft_id"]: r["target_id"] for r in self.store.query("SELECT draft_id, target_id FROM drafts")}

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
