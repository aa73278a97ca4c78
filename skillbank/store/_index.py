"""Search indexes of the active skills: derived data, rebuildable from the bank at any time.

Implementations of one small surface (:class:`~skillbank.protocols.VectorIndex`): :class:`SkillIndex`, a Chroma
(HNSW) directory; :class:`ExactIndex`, an exact search in this process over the cached
embeddings; :class:`SizedIndex`, the embedded default, exact up to :data:`EXACT_MAX` active
skills and Chroma above; and :class:`~skillbank.store._vectors.PgVectorIndex`, an HNSW index
inside PostgreSQL (a PostgreSQL bank without pgvector searches exactly). :func:`open_index`
picks one for a store.

The Chroma index is :mod:`skillbank.store._chroma_index`, the exact one
:mod:`skillbank.store._exact_index`, the switch between them :mod:`skillbank.store._sized_index`;
this module picks one for a store and keeps their names importable from here.
"""

from __future__ import annotations

from pathlib import Path

from skillbank.protocols import Embedder, VectorIndex
from skillbank.queries import IndexHit, IndexState
from skillbank.store._base import Store
from skillbank.store._chroma_index import SkillIndex
from skillbank.store._exact_index import ExactIndex
from skillbank.store._sized_index import EXACT_MAX, SizedIndex

__all__ = ["IndexHit", "IndexState", "VectorIndex", "SkillIndex", "ExactIndex", "SizedIndex", "open_index",
           "INDEX_DIR", "EXACT_MAX"]

INDEX_DIR = "index"


def open_index(store: Store, folder: Path | None, embedder: Embedder) -> VectorIndex:
    """The index for a bank: Chroma beside a SQLite file; pgvector (or, without the
    extension, exact search in this process) for a PostgreSQL bank; ``TypeError`` for any
    other store."""
    if store.backend == "sqlite":
        if folder is None:
            return ExactIndex(embedder, store)
        return SizedIndex(store, SkillIndex(folder / INDEX_DIR, embedder), embedder)
    from skillbank.store._postgres import PostgresStore
    from skillbank.store._vectors import database_index

    if not isinstance(store, PostgresStore):
        raise TypeError(f"no search index for a {store.backend or type(store).__name__!r} store")
    pgvector = database_index(store, embedder)
    return SizedIndex(store, pgvector, embedder) if pgvector is not None else ExactIndex(embedder, store)
