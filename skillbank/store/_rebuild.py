"""Rebuilding the caches derived from the versions, as ``skillbank reindex`` does first.

The versions are the source of truth and are only read here. A skill's current row that differs
from its latest version (see :mod:`skillbank.store._cache_check`) gets that version's columns
back (its note, dates and usage counts, which no version holds, are kept); an unreadable
embedding, or one for a hash no version has, is deleted, and the index sync that follows
embeds what the active skills then miss.
"""

from __future__ import annotations

import logging

from skillbank.store._base import Store
from skillbank.store._cache_check import ROW_COLUMNS, find_damage
from skillbank.store._embeddings import EmbeddingCache

__all__ = ["rebuild_caches"]

log = logging.getLogger("skillbank")


def rebuild_caches(store: Store, embeddings: EmbeddingCache, embedder: str | None,
                   dim: int | None = None) -> dict[str, int]:
    """Repair every damaged cache entry; how many current rows and vectors were redone."""
    damage = find_damage(store, embeddings, embedder, dim)
    rows = _rebuild_rows(store, damage.bad_rows)
    vectors = embeddings.delete(damage.bad_vectors)
    if rows or vectors:
        log.warning("rebuilt %d skill row(s) and dropped %d damaged cached vector(s) of %s from the "
                    "versions", rows, vectors, store.location)
    return {"rows": rows, "vectors": vectors}


def _rebuild_rows(store: Store, ids: list[str]) -> int:
    if not ids:
        return 0
    sets = ", ".join(f"{c} = ?" for c in ROW_COLUMNS)
    with store.transaction() as conn:
        store.serialize_changes(conn)  # no write of a new version in between
        heads = {}
        for sid in ids:
            head = conn.execute(
                f"SELECT {', '.join(ROW_COLUMNS)} FROM skill_versions WHERE skill_id = ?"
                " ORDER BY version DESC LIMIT 1", (sid,)).fetchone()
            if head is not None:
                heads[sid] = tuple(head)
        # Names are unique: park the damaged rows' names first, so one row may take back a name
        # that another damaged row holds until its own turn.
        for sid in heads:
            conn.execute("UPDATE skills SET name = ? WHERE id = ?", (f"(rebuilding {sid})", sid))
        for sid, head in heads.items():
            conn.execute(f"UPDATE skills SET {sets} WHERE id = ?", (*head, sid))
    return len(heads)
