"""The Chroma (HNSW) index of the active skills: a directory beside a SQLite bank.

Chroma's persistent client keeps its HNSW graph in memory per process and does not see other
processes' writes, and two processes writing at once could clobber each other's files. So:

- every write happens under an exclusive file lock, after reloading if another process wrote
  since this process last loaded (``synced.json`` records the change-log position the files
  reflect);
- between syncs the bank scores the few skills changed since that position exactly, from
  the embedding cache, and ignores the index's stale entries for them (see ``store/_sync.py``);
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
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
from filelock import FileLock

from skillbank.errors import DamagedIndexError
from skillbank._hashing import content_hash
from skillbank.protocols import Embedder
from skillbank.queries import IndexHit, IndexState, SearchFilters
from skillbank.store._hnsw import EF_CONSTRUCTION, EF_SEARCH

__all__ = ["SkillIndex"]

STATE_FILE = "synced.json"
LOCK_FILE = ".lock"
# What SQLite (under Chroma) says about a file that is not, or no longer, a whole database.
_DAMAGE = re.compile(r"malformed|not a database|file is encrypted|no such table|disk i/o error|"
                     r"database corrupt|unable to open database", re.IGNORECASE)



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
