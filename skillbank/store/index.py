"""Search indexes of the active skills: derived data, rebuildable from the bank at any time.

Implementations of one small surface (:class:`~skillbank.protocols.VectorIndex`): :class:`SkillIndex`, a Chroma
(HNSW) directory; :class:`ExactIndex`, an exact search in this process over the cached
embeddings; :class:`SizedIndex`, the embedded default, exact up to :data:`EXACT_MAX` active
skills and Chroma above; and :class:`~skillbank.store.vectors.PgVectorIndex`, an HNSW index
inside PostgreSQL (a PostgreSQL bank without pgvector searches exactly). :func:`open_index`
picks one for a store.

Chroma's persistent client keeps its HNSW graph in memory per process and does not see other
processes' writes, and two processes writing at once could clobber each other's files. So:

- every write happens under an exclusive file lock, after reloading if another process wrote
  since this process last loaded (``synced.json`` records the change-log position the files
  reflect);
- between syncs the bank scores the few skills changed since that position exactly, from
  the embedding cache, and ignores the index's stale entries for them (see ``store/sync.py``);
- damaged files (``chroma.sqlite3`` truncated or overwritten) raise :class:`DamagedIndexError`
  with one readable line; the bank rebuilds them from the database.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
from filelock import FileLock

from skillbank.errors import DamagedIndexError
from skillbank.hashing import content_hash
from skillbank.models import SkillStatus
from skillbank.protocols import Embedder, VectorIndex
from skillbank.queries import IndexHit, IndexState, SearchFilters
from skillbank.store.base import Store
from skillbank.store.hnsw import EF_CONSTRUCTION, EF_SEARCH
from skillbank.store.skills import SkillRepo

__all__ = ["IndexHit", "IndexState", "VectorIndex", "SkillIndex", "ExactIndex", "SizedIndex", "open_index",
           "INDEX_DIR", "EXACT_MAX"]

INDEX_DIR = "index"
# Up to this many active skills the embedded default searches exactly, in this process; above,
# Chroma's HNSW. Measured (benchmarks/RESULTS.md, "Retrieval: exact vs HNSW", idle 2 cores):
# bank.search after the embedding, p50, exact vs HNSW: 0.82 vs 3.46 ms at 10k, 2.75 vs 3.13 ms
# at 50k, 5.77 vs 3.26 ms at 100k; so exact up to 50k (77 MB of float32 vectors per process).
EXACT_MAX = 50_000
EXACT_MAX_ENV = "SKILLBANK_EXACT_MAX"
STATE_FILE = "synced.json"
LOCK_FILE = ".lock"
# What SQLite (under Chroma) says about a file that is not, or no longer, a whole database.
_DAMAGE = re.compile(r"malformed|not a database|file is encrypted|no such table|disk i/o error|"
                     r"database corrupt|unable to open database", re.IGNORECASE)


def open_index(store: Store, folder: Path | None, embedder: Embedder) -> VectorIndex:
    """The index for a bank: Chroma beside a SQLite file; pgvector (or, without the
    extension, exact search in this process) for a PostgreSQL bank."""
    if store.backend == "sqlite":
        if folder is None:
            return ExactIndex(embedder, store)
        return SizedIndex(store, SkillIndex(folder / INDEX_DIR, embedder), embedder)
    from skillbank.store.vectors import database_index

    pgvector = database_index(store, embedder)
    return SizedIndex(store, pgvector, embedder) if pgvector is not None else ExactIndex(embedder, store)


def _damage(path: Path, exc: BaseException) -> DamagedIndexError | None:
    """A :class:`DamagedIndexError` if ``exc`` says the index files are unreadable, else None."""
    text = " ".join(str(exc).split())
    if (type(exc).__module__.startswith("chromadb") or isinstance(exc, sqlite3.DatabaseError)) \
            and _DAMAGE.search(text):
        return DamagedIndexError(str(path), text)
    return None


class _ChromaEmbeddingFunction:
    """Chroma wants an embedding function on the collection; ours never downloads anything.

    skillbank always passes vectors explicitly, so this is only used if someone queries the
    collection by text directly.
    """

    def __init__(self, embedder: Any = None):
        self.embedder = embedder

    def __call__(self, input: Sequence[str]) -> list[np.ndarray]:
        if self.embedder is None:
            raise RuntimeError("skillbank's Chroma collection is queried with vectors, not text")
        return list(self.embedder.embed(list(input)))

    def embed_query(self, input: Sequence[str]) -> list[np.ndarray]:
        return self(input)

    @staticmethod
    def name() -> str:
        return "skillbank"

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "_ChromaEmbeddingFunction":
        return _ChromaEmbeddingFunction()

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]


def _locked(method: Any) -> Any:
    """Under the process lock; a damaged file becomes :class:`DamagedIndexError` (and this
    process's client is dropped, so a rebuild starts from nothing)."""

    @functools.wraps(method)
    def wrapper(self: "SkillIndex", *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            try:
                return method(self, *args, **kwargs)
            except DamagedIndexError:
                raise
            except Exception as exc:
                damage = _damage(self.path, exc)
                if damage is None:
                    raise
                self.reload()
                raise damage from exc

    return wrapper


class SkillIndex:
    def __init__(self, path: Path, embedder: Embedder):
        self.path = Path(path)
        self.embedder = embedder
        # One collection per embedder: vectors of different models never mix.
        self.collection_name = "skills-" + content_hash(embedder.name).split(":")[1][:12]
        self._client: Any = None
        self._collection: Any = None
        self.view = IndexState(embedder=embedder.name)  # what this process's client reflects
        # Threads of one process share the client; a reload must never close it under a query.
        self.lock = threading.RLock()

    # -- state file --------------------------------------------------------------------------

    def disk_state(self) -> IndexState:
        try:
            data = json.loads((self.path / STATE_FILE).read_text())
        except (OSError, ValueError):
            return IndexState(embedder=self.embedder.name)
        if data.get("embedder") != self.embedder.name or data.get("collection") != self.collection_name:
            return IndexState(embedder=self.embedder.name)
        return IndexState(seq=int(data.get("seq", 0)), count=int(data.get("count", 0)),
                          embedder=self.embedder.name)

    def _write_state(self, state: IndexState) -> None:
        tmp = self.path / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps({"seq": state.seq, "count": state.count,
                                   "embedder": state.embedder, "collection": self.collection_name}))
        os.replace(tmp, self.path / STATE_FILE)

    # -- chroma ------------------------------------------------------------------------------

    @_locked
    def _open(self) -> Any:
        if self._collection is None:
            import chromadb  # imported here: it costs ~0.3 s and many uses never search

            self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._client = chromadb.PersistentClient(
                path=str(self.path),
                settings=chromadb.Settings(anonymized_telemetry=False, allow_reset=True),
            )
            self._collection = self._client.get_or_create_collection(
                self.collection_name,
                embedding_function=_ChromaEmbeddingFunction(),
                configuration={"hnsw": {"space": "cosine", "ef_construction": EF_CONSTRUCTION,
                                        "ef_search": EF_SEARCH}},
            )
            state = self.disk_state()
            if self._collection.count() != state.count:
                state = IndexState(embedder=self.embedder.name)  # files and state disagree: rebuild
            self.view = state
        return self._collection

    def reload(self) -> None:
        """Drop this process's in-memory view so the next use reads the files again."""
        with self.lock:
            if self._client is not None:
                # close() releases this process's shared system, so reopening reads the files.
                with contextlib.suppress(Exception):
                    self._client.close()
            else:  # a client that failed to open may still have left its system in the cache
                with contextlib.suppress(Exception):
                    from chromadb.api.shared_system_client import SharedSystemClient

                    SharedSystemClient._identifier_to_system.pop(str(self.path), None)
            self._client = self._collection = None
            self.view = IndexState(embedder=self.embedder.name)

    @_locked
    def ensure_fresh(self) -> IndexState:
        """Open, and reload if another process moved the index since this process loaded it."""
        self._open()
        if self.disk_state().seq != self.view.seq:
            self.reload()
            self._open()
        return self.view

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self.lock, FileLock(str(self.path / LOCK_FILE)):  # released by the OS if the process dies
            yield

    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        with self._file_lock():
            self.ensure_fresh()
            yield

    @_locked
    def apply(self, upserts: list[tuple[str, np.ndarray, str]], deletes: list[str], seq: int) -> None:
        """Write changes (call inside :meth:`write_lock`) and record the new position."""
        collection = self._open()
        if deletes:
            for start in range(0, len(deletes), 5000):
                collection.delete(ids=deletes[start : start + 5000])
        for start in range(0, len(upserts), 5000):
            batch = upserts[start : start + 5000]
            collection.upsert(
                ids=[b[0] for b in batch],
                embeddings=np.stack([b[1] for b in batch]),
                metadatas=[{"content_hash": b[2]} for b in batch],
            )
        state = IndexState(seq=seq, count=collection.count(), embedder=self.embedder.name)
        self._write_state(state)
        self.view = state

    @_locked
    def entries(self) -> dict[str, str]:
        """Every indexed skill id with the content hash it was indexed at."""
        collection = self._open()
        out: dict[str, str] = {}
        total = collection.count()
        for offset in range(0, total, 10_000):
            page = collection.get(include=["metadatas"], limit=10_000, offset=offset)
            for sid, meta in zip(page["ids"], page["metadatas"]):
                out[sid] = (meta or {}).get("content_hash", "")
        return out

    @_locked
    def query(self, vector: np.ndarray, n: int, filters: SearchFilters | None = None) -> list[IndexHit]:
        """The ``n`` nearest entries (``filters`` are applied by the caller)."""
        collection = self._open()
        total = self.view.count  # kept by _open/apply; Collection.count() costs a round trip
        if total == 0 or n <= 0:
            return []
        result = collection.query(
            query_embeddings=vector.reshape(1, -1), n_results=min(n, total),
            include=["distances", "metadatas", "embeddings"],
        )
        embeddings = result.get("embeddings")
        hits = []
        for i, (sid, dist, meta) in enumerate(zip(result["ids"][0], result["distances"][0], result["metadatas"][0])):
            vector_i = None if embeddings is None else np.asarray(embeddings[0][i], dtype=np.float32)
            hits.append(IndexHit(sid, 1.0 - float(dist), (meta or {}).get("content_hash", ""), vector_i))
        return hits

    def destroy(self) -> None:
        """Delete the index files (reindex rebuilds them); never reads them, so damage is no bar."""
        with self._file_lock():
            self.reload()
            for child in self.path.iterdir():
                if child.name in (LOCK_FILE, LOCK_FILE + ".holder"):
                    continue
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)

    def close(self) -> None:
        self.reload()


class ExactIndex:
    """Exact cosine search over the active skills' cached embeddings, held in this process.

    The embedded default's index up to :data:`EXACT_MAX` active skills (see :class:`SizedIndex`),
    and a PostgreSQL bank's without pgvector: each process keeps its own matrix, filled by the
    bank's sync from the embedding cache and kept current from the change log like any index.

    Given the ``store``, it also keeps each skill's kind, tags and tools, and applies a search's
    ``kinds``/``tags``/``tools``/``exclude`` filters before ranking: the top ``n`` it returns are
    the top ``n`` of the skills those filters allow, however few they are.
    """

    def __init__(self, embedder: Embedder, store: Store | None = None):
        self.embedder = embedder
        self.store = store
        self.view = IndexState(embedder=embedder.name)
        self.lock = threading.RLock()
        self._entries: dict[str, tuple[str, np.ndarray]] = {}
        self._meta: dict[str, _SkillMeta] = {}
        self._matrix: _Matrix | None = None

    def ensure_fresh(self) -> IndexState:
        return self.view

    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        with self.lock:
            yield

    def apply(self, upserts: list[tuple[str, np.ndarray, str]], deletes: list[str], seq: int) -> None:
        meta = _read_meta(self.store, [u[0] for u in upserts]) if self.store is not None else {}
        with self.lock:
            for sid in deletes:
                self._entries.pop(sid, None)
                self._meta.pop(sid, None)
            for sid, vector, chash in upserts:
                self._entries[sid] = (chash, np.asarray(vector, dtype=np.float32))
                if sid in meta:
                    self._meta[sid] = meta[sid]
            self._matrix = None
            self.view = IndexState(seq=seq, count=len(self._entries), embedder=self.embedder.name)

    def entries(self) -> dict[str, str]:
        with self.lock:
            return {sid: chash for sid, (chash, _) in self._entries.items()}

    def _current(self) -> "_Matrix":
        with self.lock:
            if self._matrix is None:
                self._matrix = _Matrix.build(self._entries, self._meta if self.store is not None else None)
            return self._matrix

    def query(self, vector: np.ndarray, n: int, filters: SearchFilters | None = None) -> list[IndexHit]:
        if n <= 0 or not self._entries:
            return []
        m = self._current()
        sims = m.vectors @ np.asarray(vector, dtype=np.float32)
        allowed = m.allowed(filters)
        if allowed is not None:
            rows = np.flatnonzero(allowed)
            sims_allowed = sims[rows]
        else:
            rows, sims_allowed = None, sims
        n = min(n, len(sims_allowed))
        if n == 0:
            return []
        top = np.argpartition(-sims_allowed, n - 1)[:n]
        top = top[np.argsort(-sims_allowed[top], kind="stable")]
        if rows is not None:
            top = rows[top]
        return [IndexHit(m.ids[i], float(sims[i]), m.hashes[i], m.vectors[i]) for i in top]

    def destroy(self) -> None:
        with self.lock:
            self._entries.clear()
            self._meta.clear()
            self._matrix = None
            self.view = IndexState(embedder=self.embedder.name)

    def close(self) -> None:
        self.destroy()


@dataclass(frozen=True)
class _SkillMeta:
    kind: str
    tags: frozenset[str]
    tools: frozenset[str]


def _read_meta(store: Store, ids: list[str]) -> dict[str, _SkillMeta]:
    """Kind, tags and tools of the skills ``ids``, straight from the skills table (no parsing
    of contents: a full sync of 10,000 skills reads them in a few tens of milliseconds)."""
    out: dict[str, _SkillMeta] = {}
    for start in range(0, len(ids), 500):  # SQLite's variable limit
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in store.query(f"SELECT id, kind, tags, tools FROM skills WHERE id IN ({marks})", chunk):
            try:
                out[row["id"]] = _SkillMeta(row["kind"], _json_set(row["tags"]), _json_set(row["tools"]))
            except (ValueError, TypeError):
                # A damaged row: no metadata, so every filter lets it through and the bank
                # checks the skill it builds (from the latest version, if the row is unreadable).
                continue
    return out


def _json_set(value: Any) -> frozenset[str]:
    items = json.loads(value) if isinstance(value, str) else value or ()
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise ValueError(f"not a JSON list of strings: {value!r:.40}")
    return frozenset(items)


@dataclass
class _Matrix:
    """One snapshot of an :class:`ExactIndex`: the vectors as rows, and which rows carry each
    kind, tag and tool (``None`` where the index keeps no metadata)."""

    ids: list[str]
    hashes: list[str]
    vectors: np.ndarray
    row: dict[str, int]
    by_kind: dict[str, np.ndarray] | None
    by_tag: dict[str, np.ndarray] | None
    by_tool: dict[str, np.ndarray] | None
    unknown: np.ndarray  # rows without metadata: every filter lets them through (the bank re-checks)

    @classmethod
    def build(cls, entries: dict[str, tuple[str, np.ndarray]], meta: dict[str, _SkillMeta] | None) -> "_Matrix":
        ids = list(entries)
        vectors = np.vstack([entries[i][1] for i in ids]) if ids else np.zeros((0, 0), np.float32)
        groups: tuple[dict[str, list[int]], ...] | None = None
        unknown: list[int] = []
        if meta is not None:
            groups = ({}, {}, {})
            for r, sid in enumerate(ids):
                m = meta.get(sid)
                if m is None:
                    unknown.append(r)
                    continue
                groups[0].setdefault(m.kind, []).append(r)
                for t in m.tags:
                    groups[1].setdefault(t, []).append(r)
                for t in m.tools:
                    groups[2].setdefault(t, []).append(r)
        by = [None, None, None] if groups is None else \
            [{k: np.asarray(v, dtype=np.intp) for k, v in g.items()} for g in groups]
        return cls(ids, [entries[i][0] for i in ids], vectors, {sid: r for r, sid in enumerate(ids)}, *by,
                   unknown=np.asarray(unknown, dtype=np.intp))

    def allowed(self, filters: SearchFilters | None) -> np.ndarray | None:
        """A boolean mask of the rows ``filters`` allow (their clauses and ``exclude``; the
        bank applies ``accept``), or ``None`` for every row."""
        if filters is None:
            return None
        mask: np.ndarray | None = None
        by_field = {"kind": self.by_kind, "tags": self.by_tag, "tools": self.by_tool}
        for clause in filters.clauses:
            groups = by_field[clause.field]
            if groups is None:
                continue
            keep = np.zeros(len(self.ids), dtype=bool)
            keep[self.unknown] = True
            for value in clause.values:
                rows = groups.get(value)
                if rows is not None:
                    keep[rows] = True
            mask = keep if mask is None else mask & keep
        excluded = [self.row[i] for i in filters.exclude if i in self.row]
        if excluded:
            if mask is None:
                mask = np.ones(len(self.ids), dtype=bool)
            mask[excluded] = False
        return mask


class SizedIndex:
    """Exact search in this process while the bank has at most ``exact_max`` active skills, an
    HNSW index above (``hnsw``: Chroma's directory beside a SQLite file, pgvector's table in
    PostgreSQL).

    Below the size, exact search is faster than HNSW (the matrix product over a few thousand
    vectors costs less than Chroma's per-query overhead) and never misses a neighbour, which an
    approximate graph over near-identical skills does; above it, each process would hold and
    load too many vectors. The size comes from ``benchmarks/bench_retrieval.py`` (RESULTS.md,
    "Retrieval"); ``$SKILLBANK_EXACT_MAX`` overrides it (0: always HNSW).

    The choice is made when the index syncs (each process's first search, then after writes):
    only the index in use is written. The HNSW index keeps the change-log position it was last
    synced at, so switching to it catches up from there; the in-memory matrix is dropped when
    not in use and refilled from the embedding cache when it is again.
    """

    def __init__(self, store: Store, hnsw: VectorIndex, embedder: Embedder, exact_max: int | None = None):
        self.store = store
        self.exact_max = exact_max if exact_max is not None else _exact_max()
        self.exact = ExactIndex(embedder, store)
        self.hnsw = hnsw
        self.lock = threading.RLock()
        self._current: VectorIndex | None = None

    @property
    def mode(self) -> str:
        """``"exact"`` or ``"hnsw"``: the index searches go to now."""
        return "exact" if self.current is self.exact else "hnsw"

    @property
    def current(self) -> VectorIndex:
        with self.lock:
            return self._current if self._current is not None else self._choose()

    def _choose(self) -> VectorIndex:
        with self.lock:
            active = SkillRepo(self.store).count(SkillStatus.active)
            chosen: VectorIndex = self.exact if active <= self.exact_max else self.hnsw
            if self._current is not None and chosen is not self._current:
                self._current.close()  # the matrix's memory, or Chroma's client
            self._current = chosen
            return chosen

    @property
    def view(self) -> IndexState:
        return self.current.view

    def ensure_fresh(self) -> IndexState:
        return self.current.ensure_fresh()

    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        with self.lock:
            with self._choose().write_lock():
                yield

    def apply(self, upserts: list[tuple[str, np.ndarray, str]], deletes: list[str], seq: int) -> None:
        self.current.apply(upserts, deletes, seq)

    def entries(self) -> dict[str, str]:
        return self.current.entries()

    def query(self, vector: np.ndarray, n: int, filters: SearchFilters | None = None) -> list[IndexHit]:
        return self.current.query(vector, n, filters)

    def destroy(self) -> None:
        with self.lock:
            self.exact.destroy()
            self.hnsw.destroy()
            self._current = None

    def close(self) -> None:
        with self.lock:
            self.exact.close()
            self.hnsw.close()
            self._current = None


def _exact_max() -> int:
    raw = os.environ.get(EXACT_MAX_ENV)
    if raw is None or raw.strip() == "":
        return EXACT_MAX
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"${EXACT_MAX_ENV} must be a whole number of skills (0: always HNSW), "
                         f"not {raw!r}") from None
    if value < 0:
        raise ValueError(f"${EXACT_MAX_ENV} must be 0 or more, not {value}")
    return value
