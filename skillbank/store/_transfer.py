"""Copying a bank between stores (SQLite <-> PostgreSQL), row for row.

Every table of the schema is copied verbatim, in one transaction on the destination: skills,
every version, the change log with its hashes (so ``verify`` passes on the copy), the embedding
cache, rejected edits, candidates waiting for review with their drafts, the finished rounds, the
gate's records, meta, and trajectories with their steps, limit events and injections, and the live
experiment's exposures. The search
index is not copied: it is derived, and the destination builds its own on first search (from the
copied embedding cache, without the model).
"""

from __future__ import annotations

from typing import Any, Callable

from skillbank.errors import SkillBankError
from skillbank.store._base import Store

__all__ = ["TABLES", "copy_store"]

# (table, columns, order): parents before children, so foreign keys hold at every insert.
TABLES: list[tuple[str, tuple[str, ...], str]] = [
    ("meta", ("key", "value"), "key"),
    ("skills", ("id", "name", "description", "body", "kind", "tools", "tags", "lessons", "toolset", "status", "pinned",
                "version", "content_hash", "note", "created_at", "updated_at", "uses", "successes",
                "failures", "last_used_at"), "id"),
    ("skill_versions", ("skill_id", "version", "name", "description", "body", "kind", "tools",
                        "tags", "lessons", "toolset", "status", "pinned", "content_hash", "parent_hash", "author",
                        "reason", "provenance", "created_at"), "skill_id, version"),
    ("events", ("seq", "ts", "action", "skill_id", "version", "payload", "prev_hash", "hash"), "seq"),
    ("embeddings", ("content_hash", "embedder", "vector"), "content_hash, embedder"),
    ("rejected_edits", ("content_hash", "skill_id", "reason", "created_at"), "content_hash"),
    ("pending_candidates", ("skill_id", "info"), "skill_id"),
    ("drafts", ("target_id", "draft_id"), "target_id"),
    ("evolution_rounds", ("round_no", "finished_at", "trajectories"), "round_no"),
    ("gate_records", ("id", "skill_id", "version", "target_id", "round_no", "decided_at", "decision", "reason",
                      "gain", "pass_hat_k_change", "success_change", "cost", "stopped_early", "trials",
                      "planned", "not_reached"), "id"),
    ("trajectories", ("id", "task", "task_id", "task_type", "labels", "model", "bank_snapshot",
                      "status", "error", "final_answer", "started_at", "ended_at", "success",
                      "score", "outcome", "input_tokens", "output_tokens", "n_steps",
                      "consumed_round", "today"), "id"),
    ("steps", ("trajectory_id", "idx", "kind", "data"), "trajectory_id, idx"),
    ("limit_events", ("trajectory_id", "type", "category", "step", "detail", "tool", "data"), "rowid"),
    ("injections", ("trajectory_id", "step", "skill_id", "version", "rank", "score"),
     "trajectory_id, step, rank"),
    ("exposures", ("run_id", "skill_id", "version", "arm", "p_shown", "at"), "run_id, skill_id"),
]
_PAGE = 2000
# Bookkeeping of the source's own locks, index and schema record (compat.READERS_MUST_KNOW, which
# the destination's own migrations wrote), meaningless in another store.
_LOCAL_META = ("lock:", "index:", "schema.")


def copy_store(src: Store, dst: Store, *, progress: Callable[[str, int], Any] | None = None) -> dict[str, int]:
    """Copy every row of ``src`` into ``dst``, which must hold no skills, events or runs.

    Returns rows copied per table. All or nothing: a failure leaves ``dst`` as it was.
    """
    for table in ("skills", "events", "trajectories"):
        row = dst.query_one(f"SELECT count(*) AS n FROM {table}")
        if row and row["n"]:
            raise SkillBankError(
                f"the destination {dst.location} already holds a bank ({table} is not empty); "
                "copy into a new, empty one")
    counts: dict[str, int] = {}
    with dst.transaction() as conn:
        for table, columns, order in TABLES:
            names = ", ".join(columns)
            insert = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})"
            if table == "meta":  # a fresh destination may have written its own keys
                insert += " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            n, offset = 0, 0
            while True:
                rows = src.query(f"SELECT {names} FROM {table} ORDER BY {order} LIMIT {_PAGE} OFFSET {offset}")
                if not rows:
                    break
                if table == "meta":
                    rows = [r for r in rows if not r["key"].startswith(_LOCAL_META)]
                conn.executemany(insert, [tuple(_plain(r[c]) for c in columns) for r in rows])
                n += len(rows)
                offset += _PAGE
                if progress is not None:
                    progress(table, n)
            counts[table] = n
    return counts


def _plain(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value
