"""The embedded default index: exact search up to :data:`EXACT_MAX` active skills, HNSW above."""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Iterator

import numpy as np

from skillbank.models import SkillStatus
from skillbank.protocols import Embedder, VectorIndex
from skillbank.queries import IndexHit, IndexState, SearchFilters
from skillbank.store._base import Store
from skillbank.store._exact_index import ExactIndex
from skillbank.store._skills import SkillRepo

__all__ = ["SizedIndex", "EXACT_MAX"]

# Up to this many active skills the embedded default searches exactly, in this process; above,
# Chroma's HNSW (docs/decisions/0009).
EXACT_MAX = 50_000
EXACT_MAX_ENV = "SKILLBANK_EXACT_MAX"


class SizedIndex:
    """Exact search in this process while the bank has at most ``exact_max`` active skills, an
    HNSW index above (``hnsw``: Chroma's directory beside a SQLite file, pgvector's table in
    PostgreSQL).

    Below the size, exact search is faster than HNSW (the matrix product over a few thousand
    vectors costs less than Chroma's per-query overhead) and never misses a neighbour, which an
    approximate graph over near-identical skills does; above it, each process would hold and
    load too many vectors (docs/decisions/0009). ``$SKILLBANK_EXACT_MAX`` overrides the size
    (0: always HNSW).

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
