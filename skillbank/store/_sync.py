"""Keeping a bank's search index in step with its store.

The store is the source of truth and the index is derived from it: each change to a skill is a
row of the change log, and the index records the position it reflects. A search does not wait
for a sync after every write: up to :data:`DIRTY_LIMIT` skills changed since that position are
scored exactly from the embedding cache (:meth:`IndexSync.changed`) and the index's stale
entries for them are ignored; past that, or when the index is behind or ahead in a way a diff
cannot explain, the index is synced. A damaged index is rebuilt from the store, with a warning.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from skillbank.errors import DamagedIndexError
from skillbank.models import Skill, SkillStatus
from skillbank.protocols import Embedder, VectorIndex
from skillbank.store._base import Store
from skillbank.store._cache_check import find_damage
from skillbank.store._embeddings import EmbeddingCache
from skillbank.store._index import open_index
from skillbank.store._rebuild import rebuild_caches
from skillbank.store._skills import SkillRepo

__all__ = ["IndexSync", "DIRTY_LIMIT"]

log = logging.getLogger("skillbank")

# Up to this many skills changed since the index last synced are scored exactly from the
# embedding cache instead of rewriting the index on every change.
DIRTY_LIMIT = 256


def _dim(embedder: Embedder) -> int | None:
    """The size of ``embedder``'s vectors if it says (the hash embedder does; a model's is
    learned from what it embeds)."""
    dim = getattr(embedder, "dim", None)
    return dim if isinstance(dim, int) and dim > 0 else None


class IndexSync:
    """A bank's index (opened on first use, with the embedder resolved then) and its sync.

    ``embedder`` is called when first needed: opening a bank never loads the model.
    """

    def __init__(self, store: Store, folder: Path | None, skills: SkillRepo, embeddings: EmbeddingCache,
                 embedder: Callable[[], Embedder]):
        self.store = store
        self.folder = folder
        self.skills = skills
        self.embeddings = embeddings
        self._embedder = embedder
        self._index: VectorIndex | None = None
        # (index position, change-log position, skills changed between them): the last answer of
        # changed(), reused while neither position moves.
        self._changed: tuple[int, int, frozenset[str]] | None = None

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            self._index = open_index(self.store, self.folder, self._embedder())
        return self._index

    @index.setter
    def index(self, index: VectorIndex) -> None:
        """Use ``index`` from now on (a benchmark pins one path of a sized index)."""
        self._index, self._changed = index, None

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def changed(self) -> frozenset[str]:
        """Skills changed since this process's view of the index; syncs when there are many."""
        view = self.index.ensure_fresh()
        db_seq = self.skills.last_event_seq()
        if view.seq == db_seq:
            return frozenset()
        if self._changed and self._changed[:2] == (view.seq, db_seq):
            return self._changed[2]
        ids = frozenset(e["skill_id"] for e in self.skills.events_since(view.seq) if e["skill_id"])
        if view.seq == 0 or view.seq > db_seq or len(ids) > DIRTY_LIMIT:
            self.sync()
            return frozenset()
        self._changed = (view.seq, db_seq, ids)
        return ids

    def sync(self, *, full: bool = False) -> dict[str, int]:
        """Bring the index in step with the store; ``full`` compares every entry (repairs anything).

        A damaged index is rebuilt from the store (and a warning says so).
        """
        try:
            return self._apply(full)
        except DamagedIndexError as exc:
            return self.rebuild_damaged(exc)

    def rebuild_damaged(self, exc: DamagedIndexError) -> dict[str, int]:
        log.warning("the search index at %s was damaged (%s); rebuilding it from the bank",
                    exc.where, exc.reason)
        return self.reindex()

    def reindex(self) -> dict[str, int]:
        """Rebuild the caches derived from the versions (damaged current rows and cached
        vectors), then delete the index and rebuild it from the store (sound cached embeddings
        are reused).

        Always works: the old index is removed without being read, damaged or not.
        """
        embedder = self._embedder()
        repaired = rebuild_caches(self.store, self.embeddings, embedder.name, _dim(embedder))
        if repaired["rows"]:
            self.skills.forget_built()  # built from the damaged rows
        self.index.destroy()
        self._changed = None
        counts = self._apply(full=True)
        # What was repaired, only when something was (a sound bank's counts stay as they were).
        if repaired["rows"]:
            counts["rebuilt_rows"] = repaired["rows"]
        if repaired["vectors"]:
            counts["dropped_vectors"] = repaired["vectors"]
        return counts

    def cache_problems(self, *, with_embedder: bool = True) -> list[str]:
        """The damaged cache entries (:func:`~skillbank.store._cache_check.find_damage`);
        ``with_embedder=False`` leaves the embedder unresolved (and missing vectors unchecked)."""
        embedder = self._embedder() if with_embedder else None
        return find_damage(self.store, self.embeddings, embedder.name if embedder is not None else None,
                           _dim(embedder) if embedder is not None else None).problems

    def _apply(self, full: bool) -> dict[str, int]:
        index = self.index
        with index.write_lock():
            view = index.view
            db_seq = self.skills.last_event_seq()
            if full or view.seq == 0 or view.seq > db_seq:
                indexed = index.entries()
                active = {s.id: s for s in self.skills.list(status=SkillStatus.active)}
                upsert = [s for sid, s in active.items() if indexed.get(sid) != s.content_hash]
                delete = [sid for sid in indexed if sid not in active]
            else:
                ids = {e["skill_id"] for e in self.skills.events_since(view.seq) if e["skill_id"]}
                current = self.skills.get_many(ids)
                upsert = [s for s in current.values() if s.status == SkillStatus.active]
                delete = [sid for sid in ids if sid not in current or current[sid].status != SkillStatus.active]
            vectors = self.vectors(upsert)
            index.apply([(s.id, vectors[s.content_hash], s.content_hash) for s in upsert], delete, db_seq)
        # Every active skill at db_seq now has its vector cached: one missing later is damage.
        self.embeddings.mark_complete(self._embedder().name, db_seq)
        self._changed = None
        return {"upserted": len(upsert), "deleted": len(delete)}

    def vectors(self, skills: Sequence[Skill]) -> dict[str, np.ndarray]:
        """Embeddings by content hash, from the store's cache; missing ones are embedded and cached."""
        embedder = self._embedder()
        dim = _dim(embedder)
        if dim is not None:  # so a cached vector of another size is not read
            self.embeddings.expect(embedder.name, dim)
        out = self.embeddings.get(embedder.name, (s.content_hash for s in skills))
        missing = [s for s in {s.content_hash: s for s in skills}.values() if s.content_hash not in out]
        if missing:
            vectors = embedder.embed([s.content.embedding_text() for s in missing])
            fresh = {s.content_hash: np.asarray(v, dtype=np.float32) for s, v in zip(missing, vectors)}
            self.embeddings.put(embedder.name, fresh)
            out.update(fresh)
        return out

    def problems(self) -> list[str]:
        """Where the index disagrees with the active skills (skills changed since the last sync
        aside: searches score those exactly), as ``verify`` reports them."""
        try:
            changed = self.changed()  # first: it may sync, which changes the entries
            indexed = self.index.entries()
        except DamagedIndexError as exc:
            return [f"index: {exc}"]
        active = {s.id: s.content_hash for s in self.skills.list(status=SkillStatus.active)}
        missing = [i for i in active if i not in indexed and i not in changed]
        extra = [i for i in indexed if i not in active and i not in changed]
        stale = [i for i in active if i in indexed and indexed[i] != active[i] and i not in changed]
        return [f"index: {len(ids)} skill(s) {label} the index (e.g. {ids[0]}); run `skillbank reindex`"
                for label, ids in (("missing from", missing), ("retired or unknown but in", extra),
                                   ("stale in", stale)) if ids]
