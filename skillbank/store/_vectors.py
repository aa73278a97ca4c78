"""Vector search inside PostgreSQL: the active skills' vectors in a pgvector column, HNSW-indexed.

Like the Chroma directory of the embedded default, the table is derived data: one table per
embedder (``skill_vectors_<hash>``, so vectors of different models never mix), synced from the
change log by the bank under an advisory lock, and dropped and rebuilt by ``reindex``. It is
not part of the migrations, because it exists only where the server has the extension.

A search is one SQL statement: the nearest vectors (an HNSW index scan in a subquery) joined to
their skills, with the status, content hash, kind, tag, tool and exclusion filters in its WHERE
clause. Like pgvector's own filtering, the filters apply to the neighbours the index found, so a
narrowing filter reads four times as many neighbours (and ``hnsw.ef_search`` is raised to match:
the scan returns at most that many).

Without the extension, :func:`database_index` says so once and returns ``None``; the bank then
searches exactly over the cached embeddings (:class:`skillbank.store._index.ExactIndex`). With it, the
bank searches exactly too up to :data:`skillbank.store._index.EXACT_MAX` active skills, and through this
table above (:class:`skillbank.store._index.SizedIndex`).
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any, Iterator

import numpy as np

from skillbank._hashing import content_hash
from skillbank.protocols import Embedder
from skillbank.queries import IndexHit, IndexState, SearchFilters
from skillbank.store._embeddings import read_vector, short_hash
from skillbank.store._hnsw import EF_CONSTRUCTION, EF_SEARCH
from skillbank.store._postgres import SETUP_KEY, PostgresStore, _psycopg
from skillbank.store._skills import skill_from_row

__all__ = ["PgVectorIndex", "database_index", "vector_literal", "EF_SEARCH", "EF_CONSTRUCTION"]

log = logging.getLogger("skillbank.store")
BUILD_MEMORY = "512MB"
_warned: set[str] = set()
_unreadable: set[str | None] = set()


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form, ``[0.1,0.2,…]``."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def _vector(row: dict[str, Any]) -> np.ndarray | None:
    """A hit's vector: the cached bytes, or the index's own text form when the cache has no
    readable row (the SQL sends the text then). ``None`` (the hit is still served, only not
    compared for near-duplicates) when the cached row has the right size but NaN in it."""
    if row["_embedding"] is not None:
        return np.array(json.loads(row["_embedding"]), dtype=np.float32)
    vector, problem = read_vector(row["_vector"], None)
    if vector is None and row.get("content_hash") not in _unreadable:
        _unreadable.add(row.get("content_hash"))  # once a hash per process: searches repeat
        log.warning("the embedding cache of skill %s (%s) is unreadable (%s); `skillbank reindex` "
                    "rebuilds it", row.get("id"), short_hash(row.get("content_hash") or ""), problem)
    return vector


def _skill(row: dict[str, Any]) -> Any:
    """The hit's skill, or ``None`` when its row cannot be built (the search then reads it
    through the skill repository, which falls back to its latest version)."""
    try:
        return skill_from_row(row)
    except (ValueError, TypeError, KeyError):
        return None


def database_index(store: PostgresStore, embedder: Embedder) -> "PgVectorIndex | None":
    """A pgvector index for ``embedder``, creating the extension if allowed; ``None`` without it."""
    if store.vector_extension is None:
        store.vector_extension = _enable_pgvector(store)
    return PgVectorIndex(store, embedder) if store.vector_extension else None


def _enable_pgvector(store: PostgresStore) -> bool:
    if store.query_one("SELECT 1 AS x FROM pg_extension WHERE extname = 'vector'"):
        return True
    reason = "the server has no pgvector extension"
    if store.query_one("SELECT 1 AS x FROM pg_available_extensions WHERE name = 'vector'"):
        try:
            with store.transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(?)", (SETUP_KEY,))  # one creator at a time
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            return True
        except Exception as exc:  # noqa: BLE001 - e.g. insufficient privilege: say why, fall back
            reason = f"creating the pgvector extension failed: {' '.join(str(exc).split())}"
    if store.location not in _warned:
        _warned.add(store.location)
        log.warning("%s: %s; searching exactly over the cached embeddings instead (fine for "
                    "thousands of skills, slower beyond). Install pgvector on the server "
                    "(CREATE EXTENSION vector) for an HNSW index.", store.location, reason)
    return False


class PgVectorIndex:
    """The active skills of one embedder in ``skill_vectors_<hash>`` (see the module docstring)."""

    def __init__(self, store: PostgresStore, embedder: Embedder):
        self.store = store
        self.embedder = embedder
        self.table = "skill_vectors_" + content_hash(embedder.name).split(":")[1][:12]
        self._state_key = f"index:{self.table}"
        self.view = IndexState(embedder=embedder.name)

    # -- state -----------------------------------------------------------------------------------

    def ensure_fresh(self) -> IndexState:
        """The position the table reflects (shared by every process: nothing to reload)."""
        raw = self.store.get_meta(self._state_key)
        data = json.loads(raw) if raw else {}
        self.view = IndexState(seq=int(data.get("seq", 0)), count=int(data.get("count", 0)),
                               embedder=self.embedder.name)
        return self.view

    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        with self.store.lock(f"index:{self.table}", timeout=None, what="index sync"):
            self.ensure_fresh()
            yield

    def _exists(self) -> bool:
        row = self.store.query_one("SELECT to_regclass(?) AS t", (self.table,))
        return row is not None and row["t"] is not None

    # -- writes ----------------------------------------------------------------------------------

    def apply(self, upserts: list[tuple[str, np.ndarray, str]], deletes: list[str], seq: int) -> None:
        """Write changes and the new position in one transaction (call inside :meth:`write_lock`)."""
        with self.store.transaction() as conn:
            new = bool(upserts) and not self._exists()
            if new:
                conn.execute(f"CREATE TABLE {self.table} (skill_id TEXT PRIMARY KEY,"
                             f" content_hash TEXT NOT NULL, embedding vector({len(upserts[0][1])}) NOT NULL)")
            exists = bool(upserts) or self._exists()
            if exists and deletes:
                conn.execute(f"DELETE FROM {self.table} WHERE skill_id = ANY(?)", (list(deletes),))
            if upserts:
                conn.executemany(
                    f"INSERT INTO {self.table} (skill_id, content_hash, embedding) VALUES (?, ?, ?::vector)"
                    " ON CONFLICT (skill_id) DO UPDATE SET content_hash = excluded.content_hash,"
                    " embedding = excluded.embedding",
                    [(sid, chash, vector_literal(vec)) for sid, vec, chash in upserts])
            if new:  # built after the first fill: much faster than growing the graph row by row
                # The graph of 100,000 MiniLM vectors is ~200 MB; the default 64 MB makes the
                # build spill and crawl. Scoped to this transaction.
                conn.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
                conn.execute(f"CREATE INDEX {self.table}_hnsw ON {self.table} USING hnsw"
                             f" (embedding vector_cosine_ops) WITH (m = 16, ef_construction = {EF_CONSTRUCTION})")
                # Fresh statistics, so the planner joins the few neighbours to skills by key
                # instead of scanning every active skill.
                conn.execute(f"ANALYZE {self.table}")
                conn.execute("ANALYZE skills")
            count = conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0] if exists else 0
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)"
                         " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                         (self._state_key, json.dumps({"seq": seq, "count": count})))
        self.view = IndexState(seq=seq, count=count, embedder=self.embedder.name)

    def destroy(self) -> None:
        """Drop the table and its position (reindex rebuilds them)."""
        with self.store.lock(f"index:{self.table}", timeout=None, what="reindex"):
            with self.store.transaction() as conn:
                conn.execute(f"DROP TABLE IF EXISTS {self.table}")
                conn.execute("DELETE FROM meta WHERE key = ?", (self._state_key,))
        self.view = IndexState(embedder=self.embedder.name)

    # -- reads -----------------------------------------------------------------------------------

    def entries(self) -> dict[str, str]:
        if not self._exists():
            return {}
        return {r["skill_id"]: r["content_hash"]
                for r in self.store.query(f"SELECT skill_id, content_hash FROM {self.table}")}

    def query(self, vector: np.ndarray, n: int, filters: SearchFilters | None = None) -> list[IndexHit]:
        """The ``n`` nearest active skills passing ``filters`` (but ``accept``), in one statement."""
        if n <= 0 or not self.view.count:
            return []
        try:
            rows = self._rows(vector, n, filters)
        except _psycopg().errors.DataError as exc:
            if filters is None or not filters.clauses:
                raise
            # A skill's current row whose tags or tools are not JSON fails the filter's cast for
            # the whole statement: search unfiltered (the bank applies the filters to what it
            # builds, from the latest version where a row is unreadable) and say why.
            log.warning("a skill's current row in %s has tags or tools that are not JSON (%s); "
                        "filtering after the search instead. `skillbank verify` names the row, "
                        "`skillbank reindex` rebuilds it.", self.store.location, " ".join(str(exc).split())[:120])
            rows = self._rows(vector, min(1000, n * 4), None)
        return [IndexHit(r["id"], float(r["_similarity"]), r["content_hash"], _vector(r),
                         skill=_skill(r)) for r in rows]

    def _rows(self, vector: np.ndarray, n: int, filters: SearchFilters | None) -> list[dict[str, Any]]:
        sql, params, ef = self.search_sql(vector, n, filters)
        if ef == EF_SEARCH:  # every pooled connection starts with it (PostgresStore's pool)
            return self.store.query(sql, params)
        with self.store.transaction() as conn:
            conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
            return self.store.query(sql, params)

    def search_sql(self, vector: np.ndarray, n: int,
                   filters: SearchFilters | None = None) -> tuple[str, list[Any], int]:
        """The search statement, its parameters and the ``hnsw.ef_search`` it needs."""
        where, params = ["s.status = 'active'", "s.content_hash = c.content_hash"], []
        narrows = False
        if filters is not None:
            for clause in filters.clauses:
                if clause.field == "kind":
                    where.append("s.kind = ANY(?)")
                else:  # tags and tools are JSON arrays: any one element may match
                    where.append(f"EXISTS (SELECT 1 FROM json_array_elements_text(s.{clause.field}::json)"
                                 " AS e(value) WHERE e.value = ANY(?))")
                params.append(sorted(clause.values))
            if filters.exclude:
                where.append("NOT (s.id = ANY(?))")
                params.append(list(filters.exclude))
            narrows = bool(filters.narrows)
        literal = vector_literal(vector)
        # The nearest vectors first, through the HNSW index (a plain join would let the planner
        # scan every active skill and sort); then the skills and the filters. A filter that
        # narrows reads more neighbours, as pgvector's own filtering would.
        nearest = min(1000, n * 4) if narrows else n
        # Each hit's vector (for near-duplicate suppression) comes as bytes from the embedding
        # cache: parsing pgvector's text form costs more than the search.
        sql = (f"SELECT s.*, e.vector AS _vector,"
               # The index's own vector when the cache's row is missing or of the wrong size.
               f" CASE WHEN e.vector IS NULL OR length(e.vector) <> 4 * vector_dims(c.embedding)"
               f" THEN c.embedding::text END AS _embedding,"
               f" 1 - c.distance AS _similarity FROM"
               f" (SELECT skill_id, content_hash, embedding, embedding <=> ?::vector AS distance"
               f"  FROM {self.table} ORDER BY embedding <=> ?::vector LIMIT {int(nearest)}) c"
               f" JOIN skills s ON s.id = c.skill_id"
               f" LEFT JOIN embeddings e ON e.content_hash = c.content_hash AND e.embedder = ?"
               f" WHERE {' AND '.join(where)} ORDER BY c.distance LIMIT {int(n)}")
        return sql, [literal, literal, self.embedder.name, *params], max(EF_SEARCH, nearest)

    def close(self) -> None:
        """Nothing held: the table lives in the database."""
