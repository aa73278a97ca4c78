"""Exact cosine search in this process over the active skills' cached embeddings, with a
search's kind/tag/tool filters applied before ranking."""

from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from skillbank.protocols import Embedder
from skillbank.queries import IndexHit, IndexState, SearchFilters
from skillbank.store._base import Store

__all__ = ["ExactIndex"]


class ExactIndex:
    """Exact cosine search over the active skills' cached embeddings, held in this process.

    The embedded default's index up to :data:`~skillbank.store._sized_index.EXACT_MAX` active
    skills (see :class:`~skillbank.store._sized_index.SizedIndex`),
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
        by: list[dict[str, np.ndarray] | None] = [None, None, None] if groups is None else \
            [{k: np.asarray(v, dtype=np.intp) for k, v in g.items()} for g in groups]
        return cls(ids, [entries[i][0] for i in ids], vectors, {sid: r for r, sid in enumerate(ids)},
                   by_kind=by[0], by_tag=by[1], by_tool=by[2], unknown=np.asarray(unknown, dtype=np.intp))

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
