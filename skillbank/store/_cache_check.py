"""Checking the caches derived from the versions, as ``skillbank verify`` reports them.

Two caches live in the database beside the versions they are derived from:

- the **embedding cache** (``embeddings``): a vector per content hash and embedder. Damage is
  a row of the wrong byte length, of the wrong dimension, holding NaN or infinity, a row for a
  hash no version has, or a missing row (an active skill last changed before the cache was
  last complete, with no vector);
- each skill's **current row** (``skills``): its latest version's content, status, pinned flag,
  version number and content hash, copied so a search reads one row, and the parsed-content
  and built-skill caches of :mod:`skillbank.store._skills` (in memory, keyed by that row) on top
  of it. Damage is any of those columns differing from the latest version.

Each problem is one line naming the skill or hash and what is wrong; ``skillbank reindex``
repairs them all (:mod:`skillbank.store._rebuild`). Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillbank.store._base import Store
from skillbank.store._embeddings import EmbeddingCache, read_vector, short_hash

__all__ = ["CacheDamage", "find_damage", "ROW_COLUMNS", "REPAIR"]

# The columns of a skill's current row that its latest version determines.
ROW_COLUMNS = ("name", "description", "body", "kind", "tools", "tags", "lessons", "toolset",
               "status", "pinned", "version", "content_hash")
REPAIR = "run `skillbank reindex` to rebuild it from the versions"


@dataclass
class CacheDamage:
    """What :func:`find_damage` found: readable lines, and what a rebuild must redo."""

    problems: list[str] = field(default_factory=list)
    bad_vectors: list[tuple[str, str]] = field(default_factory=list)  # (content_hash, embedder)
    bad_rows: list[str] = field(default_factory=list)  # skill ids whose current row differs


def find_damage(store: Store, embeddings: EmbeddingCache, embedder: str | None,
                dim: int | None = None) -> CacheDamage:
    """Every damaged cache entry. ``embedder``: the bank's (its missing vectors are looked for);
    ``dim``: its vectors' size, when known (else the commonest cached size is expected)."""
    damage = CacheDamage()
    latest = _latest_versions(store)
    _check_rows(store, latest, damage)
    _check_vectors(store, embeddings, embedder, dim, latest, damage)
    return damage


def _latest_versions(store: Store) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for row in store.query(f"SELECT skill_id, {', '.join(ROW_COLUMNS)} FROM skill_versions ORDER BY skill_id, version"):
        latest[row["skill_id"]] = row
    return latest


def _check_rows(store: Store, latest: dict[str, dict[str, Any]], damage: CacheDamage) -> None:
    for row in store.query(f"SELECT id, {', '.join(ROW_COLUMNS)} FROM skills ORDER BY id"):
        head = latest.get(row["id"])
        if head is None:
            damage.problems.append(f"skill {row['id']}: has a current row but no version")
            continue
        differ = [c for c in ROW_COLUMNS if row[c] != head[c]]
        if differ:
            damage.bad_rows.append(row["id"])
            damage.problems.append(
                f"skill {row['id']} ({head['name']}): its current row differs from its latest version "
                f"v{head['version']} in {', '.join(differ)}; {REPAIR}")


def _check_vectors(store: Store, embeddings: EmbeddingCache, embedder: str | None, dim: int | None,
                   latest: dict[str, dict[str, Any]], damage: CacheDamage) -> None:
    owners: dict[str, str] = {}  # content hash -> the first skill version that has it, to name it
    for row in store.query("SELECT skill_id, version, content_hash FROM skill_versions ORDER BY skill_id, version"):
        owners.setdefault(row["content_hash"], f"skill {row['skill_id']} v{row['version']}")
    cached: set[str] = set()
    for row in embeddings.rows():
        chash, name = row["content_hash"], row["embedder"]
        expected = dim if name == embedder and dim is not None else embeddings.dimension(name)
        vector, problem = read_vector(row["vector"], expected)
        owner = owners.get(chash)
        where = f"embedding cache ({name}): " + (f"{owner} ({short_hash(chash)})" if owner else short_hash(chash))
        if vector is None:
            damage.bad_vectors.append((chash, name))
            damage.problems.append(f"{where}: the vector is unreadable ({problem}); {REPAIR}")
        elif owner is None:
            damage.bad_vectors.append((chash, name))
            damage.problems.append(f"{where}: a vector for a hash no version has; "
                                   "run `skillbank reindex` to remove it")
        elif name == embedder:
            cached.add(chash)
    if embedder is None:
        return
    complete = embeddings.complete_at(embedder)
    if not complete:
        return
    last = {r["skill_id"]: r["seq"] for r in store.query(
        "SELECT skill_id, max(seq) AS seq FROM events WHERE skill_id IS NOT NULL GROUP BY skill_id")}
    unreadable = {chash for chash, name in damage.bad_vectors if name == embedder}  # named above
    for sid, head in latest.items():
        if head["status"] == "active" and last.get(sid, complete + 1) <= complete \
                and head["content_hash"] not in cached | unreadable:
            damage.problems.append(
                f"embedding cache ({embedder}): skill {sid} ({head['name']}) v{head['version']} "
                f"({short_hash(head['content_hash'])}): its vector is missing; {REPAIR}")
