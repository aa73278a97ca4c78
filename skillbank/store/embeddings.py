"""The embedding cache: vectors by content hash and embedder, so nothing is embedded twice.

The index is rebuilt from it without the model, and every backend's exact search reads it.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from skillbank.store.base import Store

__all__ = ["EmbeddingCache"]

_CHUNK = 500


class EmbeddingCache:
    def __init__(self, store: Store):
        self.store = store

    def get(self, embedder: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``hashes`` (float32), by content hash."""
        hashes = list(dict.fromkeys(hashes))
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), _CHUNK):
            chunk = hashes[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in self.store.query(
                f"SELECT content_hash, vector FROM embeddings WHERE embedder = ? AND content_hash IN ({marks})",
                [embedder, *chunk],
            ):
                out[row["content_hash"]] = np.frombuffer(bytes(row["vector"]), dtype=np.float32)
        return out

    def put(self, embedder: str, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        with self.store.transaction() as conn:
            conn.executemany(
                "INSERT INTO embeddings (content_hash, embedder, vector) VALUES (?, ?, ?)"
                " ON CONFLICT (content_hash, embedder) DO UPDATE SET vector = excluded.vector",
                [(h, embedder, np.asarray(v, dtype=np.float32).tobytes()) for h, v in vectors.items()],
            )
