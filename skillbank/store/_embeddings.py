"""The embedding cache: vectors by content hash and embedder, so nothing is embedded twice.

The index is rebuilt from it without the model, and every backend's exact search reads it.

It is derived data: a row can be damaged (a truncated blob, another model's dimension, NaN)
without any version being touched. :meth:`EmbeddingCache.get` therefore returns only vectors
it can read, and says (once per call, as a warning) which it skipped: the caller embeds those
again as if they were missing, and :meth:`EmbeddingCache.put` overwrites the damaged rows.
``skillbank verify`` lists the damage (:mod:`skillbank.store._cache_check`) and ``skillbank
reindex`` rebuilds the cache from the versions (:mod:`skillbank.store._rebuild`).
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, Iterator

import numpy as np

from skillbank.store._base import Store

__all__ = ["EmbeddingCache", "read_vector", "short_hash"]

log = logging.getLogger("skillbank")

_CHUNK = 500
# meta key: the change-log position up to which every active skill's vector (for one embedder)
# was written. A vector missing for a skill last changed before it was there once: damage, not
# a skill nobody has searched for yet.
_COMPLETE = "embeddings:complete:"


def short_hash(chash: str) -> str:
    """``sha256:f46b00aa26e0…``: enough to find the row, short enough for a one-line message."""
    return chash[:19] + "…" if len(chash) > 20 else chash


def read_vector(raw: Any, dim: int | None) -> tuple[np.ndarray | None, str | None]:
    """A cached vector as float32, or ``None`` and what is wrong with it (``dim``: the size the
    embedder makes, when known)."""
    try:
        data = bytes(raw)
    except (TypeError, ValueError):
        return None, f"not bytes ({type(raw).__name__})"
    if len(data) % 4:
        return None, f"{len(data)} bytes, not a whole number of float32 values"
    vector = np.frombuffer(data, dtype=np.float32)
    if vector.size == 0:
        return None, "empty"
    if dim is not None and vector.size != dim:
        return None, f"{vector.size} dimensions where the embedder makes {dim}"
    if not np.isfinite(vector).all():
        return None, "NaN or infinite values"
    return vector, None


def _read_rows(rows: list[dict[str, Any]], dim: int | None) -> Iterator[tuple[str, np.ndarray | None, str | None]]:
    """:func:`read_vector` over many rows: those of the expected size are checked as one matrix
    (a full sync reads tens of thousands; one by one the checks cost as much as the reads)."""
    if dim is None:
        for row in rows:
            yield row["content_hash"], *read_vector(row["vector"], None)
        return
    sized: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for row in rows:
        raw = row["vector"]
        (sized if isinstance(raw, (bytes, memoryview)) and len(raw) == 4 * dim else others).append(row)
    if sized:
        matrix = np.frombuffer(b"".join(bytes(r["vector"]) for r in sized), dtype=np.float32).reshape(-1, dim)
        finite: np.ndarray = np.all(np.isfinite(matrix), axis=1)  # one flag per row
        for row, vector, ok in zip(sized, matrix, finite):
            yield (row["content_hash"], vector, None) if ok else (row["content_hash"], None, "NaN or infinite values")
    for row in others:
        yield row["content_hash"], *read_vector(row["vector"], dim)


class EmbeddingCache:
    def __init__(self, store: Store):
        self.store = store
        # The dimension of each embedder's vectors: told by the sync (the embedder's own
        # ``dim``), learned from what this process embedded, or else the commonest size cached.
        self._dims: dict[str, int] = {}

    # -- the expected size -----------------------------------------------------------------------

    def expect(self, embedder: str, dim: int) -> None:
        """Vectors of ``embedder`` have ``dim`` values (what it just produced, or declares)."""
        self._dims[embedder] = int(dim)

    def dimension(self, embedder: str) -> int | None:
        """The size of ``embedder``'s vectors; ``None`` while nothing says (an empty cache)."""
        if embedder not in self._dims:
            # The commonest byte length among its rows: one damaged row cannot outvote the rest.
            row = self.store.query_one(
                "SELECT length(vector) AS n, count(*) AS c FROM embeddings WHERE embedder = ?"
                " GROUP BY length(vector) ORDER BY count(*) DESC, length(vector) DESC LIMIT 1", (embedder,))
            if row is None or not row["n"] or row["n"] % 4:
                return None
            self._dims[embedder] = int(row["n"]) // 4
        return self._dims[embedder]

    # -- reads and writes ------------------------------------------------------------------------

    def get(self, embedder: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``hashes`` (float32), by content hash.

        An unreadable row is left out, as if missing, with a warning: the caller embeds it
        again (and :meth:`put` then replaces it), so a damaged row never stops a search.
        """
        hashes = list(dict.fromkeys(hashes))
        out: dict[str, np.ndarray] = {}
        damaged: list[str] = []
        dim = self.dimension(embedder) if hashes else None
        for start in range(0, len(hashes), _CHUNK):
            chunk = hashes[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self.store.query(
                f"SELECT content_hash, vector FROM embeddings WHERE embedder = ? AND content_hash IN ({marks})",
                [embedder, *chunk],
            )
            for chash, vector, problem in _read_rows(rows, dim):
                if vector is None:
                    damaged.append(f"{short_hash(chash)}: {problem}")
                else:
                    out[chash] = vector
        if damaged:
            log.warning("the embedding cache of %s has %d unreadable vector(s) for %s (%s); embedding "
                        "them again. `skillbank verify` lists every damaged entry; `skillbank reindex` "
                        "rebuilds the cache from the versions.", self.store.location, len(damaged),
                        embedder, "; ".join(damaged[:3]) + ("; …" if len(damaged) > 3 else ""))
        return out

    def put(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        rows = [(h, embedder, np.asarray(v, dtype=np.float32).tobytes()) for h, v in vectors.items()]
        with self.store.transaction() as conn:
            conn.executemany(
                "INSERT INTO embeddings (content_hash, embedder, vector) VALUES (?, ?, ?)"
                " ON CONFLICT (content_hash, embedder) DO UPDATE SET vector = excluded.vector", rows)
        self.expect(embedder, len(rows[0][2]) // 4)  # what the embedder makes, whatever was cached

    def rows(self) -> list[dict[str, Any]]:
        """Every cached row (``content_hash``, ``embedder``, ``vector``), for the checks."""
        return self.store.query("SELECT content_hash, embedder, vector FROM embeddings"
                                " ORDER BY embedder, content_hash")

    def delete(self, keys: Iterable[tuple[str, str]]) -> int:
        """Remove the rows ``(content_hash, embedder)``; how many there were."""
        keys = list(keys)
        if keys:
            with self.store.transaction() as conn:
                conn.executemany("DELETE FROM embeddings WHERE content_hash = ? AND embedder = ?", keys)
        return len(keys)

    # -- completeness ----------------------------------------------------------------------------

    def complete_at(self, embedder: str) -> int:
        """The change-log position up to which every active skill's vector was cached (0: never)."""
        raw = self.store.get_meta(_COMPLETE + embedder)
        try:
            return int(raw) if raw else 0
        except ValueError:  # a damaged marker only loses the "missing row" check until the next sync
            return 0

    def mark_complete(self, embedder: str, seq: int) -> None:
        """Record that every active skill at ``seq`` has its vector (written only when it moves:
        each process's first search syncs, and most find nothing new)."""
        if seq > 0 and self.complete_at(embedder) != seq:
            self.store.set_meta(_COMPLETE + embedder, str(seq))
