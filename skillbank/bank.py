"""``SkillBank``: the facade users touch first.

The store is the source of truth: a SQLite file (``bank.db``, the embedded default) or a
PostgreSQL database (``SkillBank.open("postgresql://…")``, for a fleet). The search index is
derived from it and repaired from it: a Chroma directory (``index/``) beside a SQLite file,
pgvector inside PostgreSQL. Opening a bank touches only the store, so it is fast; the embedding
model and the index load on the first search.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from pydantic import ValidationError

from skillbank import retrieval
from skillbank.embed import BaseEmbedder, resolve_embedder
from skillbank.errors import (
    CorruptBankError,
    DamagedIndexError,
    InvalidSkillError,
    NotABankError,
    SkillBankError,
)
from skillbank.index import INDEX_DIR, VectorIndex, open_index
from skillbank.lessons import scrub_lesson
from skillbank.models import (
    GENERAL_TAG,
    Outcome,
    Skill,
    SkillContent,
    SkillKind,
    SkillStatus,
    SkillVersion,
    error_message,
    utcnow,
)
from skillbank.provenance import Source, SourceRecord, recorded, source_entry, source_of_author
from skillbank.retrieval import Candidate, SkillHit
from skillbank.store.base import Store
from skillbank.store.embeddings import EmbeddingCache
from skillbank.store.evidence import EvidenceRepo
from skillbank.store.history import VerifyReport, diff_versions, verify_history
from skillbank.store.postgres import is_database_url
from skillbank.store.skills import SkillRepo
from skillbank.store.sqlite import DB_FILENAME, SQLiteStore
from skillbank.store.trajectories import TrajectoryRepo

log = logging.getLogger("skillbank")

DEFAULT_DIR = ".skillbank"
ENV_DIR = "SKILLBANK_DIR"
# Files that only a bank which has been used leaves beside its database.
_USED_BANK_SIGNS = (INDEX_DIR, "evolve.lock")
# Up to this many skills changed since the index last synced are scored exactly from the
# embedding cache instead of rewriting the index on every change.
DIRTY_LIMIT = 256
# The most candidates one search reads while its filters leave fewer than k.
MAX_CANDIDATES = 4096


@dataclass
class PruneAction:
    skill_id: str
    name: str
    rule: str
    detail: str


@dataclass(frozen=True)
class SearchFilters:
    """The keyword-only options of a skill search, in one place.

    :meth:`SkillBank.search` and :meth:`SkillBank.search_vector` spell them out as explicit
    keywords (for users, IDEs and the CLI) and hand them on as one of these; a view that searches
    differently (the evolution gate's ``CandidateView``) overrides
    :meth:`SkillBank.search_filtered` alone and keeps both public signatures.

    ``min_score`` bounds raw similarity; ``kinds``/``tags``/``tools`` keep skills of those kinds, with
    one of those tags, or naming one of those tools; ``token_budget`` caps the rendered size of the
    hits; ``exclude`` drops skills by id; ``accept(skill)``, for callers in Python (the injector's
    ``filter`` and toolset match), keeps the skills it returns true for.
    """

    min_score: float = 0.0
    kinds: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    tools: Sequence[str] | None = None
    token_budget: int | None = None
    exclude: Iterable[str] = ()
    accept: Callable[[Skill], bool] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude", frozenset(self.exclude))  # an iterator is read once

    @property
    def narrows(self) -> bool:
        """Whether kinds/tags/tools filter in the database (pgvector then reads more neighbours)."""
        return bool(self.kinds or self.tags or self.tools)

    def allow(self, candidates: Iterable[Candidate]) -> list[Candidate]:
        """The candidates ``exclude``/``kinds``/``tags``/``tools``/``accept`` let through."""
        allowed = retrieval.filter_candidates(candidates, exclude=self.exclude, kinds=self.kinds,
                                              tags=self.tags, tools=self.tools)
        return [c for c in allowed if self.accept(c.skill)] if self.accept else allowed


class SkillBank:
    def __init__(self, path: Path | None, store: Store, embedder: Any = None, scrubber: Any = None):
        from skillbank.scrub import resolve_scrubber

        self.path = path  # the bank folder; None for a bank in a database server
        self.location = str(path) if path is not None else store.location
        self.store = store
        self.skills = SkillRepo(store)
        self.trajectories = TrajectoryRepo(store, self.skills)
        self.evidence = EvidenceRepo(store)
        self.embeddings = EmbeddingCache(store)
        self._embedder_spec = embedder
        self._embedder: BaseEmbedder | None = None
        self._index: VectorIndex | None = None
        self._dirty: tuple[int, int, frozenset[str]] | None = None
        self.scrubber: Callable[[str], str] = resolve_scrubber(scrubber)

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        embedder: Any = None,
        create: bool = True,
        scrubber: Any = None,
    ) -> "SkillBank":
        """Open the bank in ``path`` (default ``$SKILLBANK_DIR`` or ``./.skillbank``).

        ``path`` is a folder (the embedded default: a SQLite file and a local index) or a
        PostgreSQL connection string, ``postgresql://user[:password]@host[:port]/dbname``, that
        every process of a fleet opens alike. ``create=False`` refuses to make a new bank. A
        non-empty folder without a bank database is refused either way, so a typo never
        scatters files into an unrelated folder.
        """
        target = path if path is not None else (os.environ.get(ENV_DIR) or DEFAULT_DIR)
        if is_database_url(target):
            from skillbank.store.postgres import PostgresStore

            return cls(None, PostgresStore.open(str(target), create=create), embedder=embedder,
                       scrubber=scrubber)
        folder = Path(target)
        db_path = folder / DB_FILENAME
        if db_path.exists():
            _refuse_emptied_database(folder, db_path)
        else:
            if folder.exists() and not folder.is_dir():
                raise NotABankError(f"{folder} is a file, not a skill bank folder")
            if folder.exists() and any(folder.iterdir()):
                raise NotABankError(
                    f"{folder} is not a skill bank (no {DB_FILENAME}) and is not empty; "
                    "choose an empty or new folder"
                )
            if not create:
                raise NotABankError(
                    f"no skill bank at {folder}; create one with `skillbank init -d {folder}` "
                    "or SkillBank.open(path)"
                )
            try:
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as exc:
                raise NotABankError(f"cannot create a skill bank at {folder}: {exc.strerror}") from exc
        if not os.access(folder, os.W_OK):
            raise NotABankError(
                f"the skill bank folder {folder} is not writable; fix its permissions or "
                "choose another folder with -d / SKILLBANK_DIR"
            )
        return cls(folder, SQLiteStore.open(db_path), embedder=embedder, scrubber=scrubber)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        self.store.close()

    def __enter__(self) -> "SkillBank":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def embedder(self) -> BaseEmbedder:
        if self._embedder is None:
            self._embedder = resolve_embedder(self._embedder_spec)
        return self._embedder

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            self._index = open_index(self.store, self.path, self.embedder)
        return self._index

    # -- skills ------------------------------------------------------------------------------

    def add_skill(
        self,
        name: str,
        description: str,
        body: str = "",
        *,
        kind: SkillKind | str = SkillKind.procedure,
        tools: Iterable[str] = (),
        tags: Iterable[str] = (),
        status: SkillStatus | str = SkillStatus.active,
        pinned: bool = False,
        author: str = "human",
        reason: str = "created",
        provenance: Iterable[str] = (),
        note: str | None = None,
        lessons: Iterable[Any] = (),
        toolset: Iterable[str] = (),
        allow_unsafe: bool = False,
        source: Source | None = None,
    ) -> Skill:
        """Add a skill (version 1). ``body`` is free guidance in markdown; or give ``lessons``
        (structured, ``skillbank.lessons.Lesson``) and leave ``body`` empty: it is rendered
        from them.

        Text that looks like prompt injection (the lint's :func:`~skillbank.evolution.lint.lint_incoming`)
        makes the skill ``quarantined``, with the reason in its note, whatever ``status`` asked
        for; ``skillbank candidates promote ID --force`` makes it active after review.
        ``allow_unsafe=True`` keeps ``status`` and records the findings in the note instead.

        ``source`` (where the text came from; default: what ``author`` implies, see
        :mod:`skillbank.provenance`) is recorded in the version's provenance.
        """
        provenance = _with_source(provenance, source, author)
        content = self._content(name=name, description=description, body=body, kind=kind,
                                tools=tuple(tools), tags=tuple(tags), lessons=tuple(lessons),
                                toolset=tuple(toolset))
        status, note = self._screen(content, SkillStatus(status), note, allow_unsafe=allow_unsafe)
        return self.skills.create(content, status=status, pinned=pinned,
                                  author=author, reason=reason, provenance=provenance, note=note)

    def update_skill(
        self,
        skill_id: str,
        *,
        reason: str,
        author: str = "human",
        provenance: Iterable[str] = (),
        status: SkillStatus | str | None = None,
        note: str | None = None,
        allow_unsafe: bool = False,
        source: Source | None = None,
        **changes: Any,
    ) -> Skill:
        """Append a version with the given content fields changed (name, description, body, ...).

        Added lines that look like prompt injection quarantine the skill, as in :meth:`add_skill`;
        ``source`` is recorded as there.
        """
        provenance = _with_source(provenance, source, author)
        unknown = set(changes) - set(SkillContent.model_fields)
        if unknown:
            raise InvalidSkillError(
                f"cannot update {', '.join(sorted(unknown))}: updatable fields are "
                f"{', '.join(SkillContent.model_fields)}"
            )
        current = self.skills.get(skill_id)
        fields = current.content.model_dump()
        fields.update({k: v for k, v in changes.items() if v is not None})
        content = self._content(**fields)
        wanted = SkillStatus(status) if status is not None else current.status
        screened, note = self._screen(content, wanted, note, previous=current, allow_unsafe=allow_unsafe)
        return self.skills.new_version(current.id, content=content, status=screened, author=author,
                                       reason=reason, provenance=provenance, note=note)

    @staticmethod
    def _screen(content: SkillContent, status: SkillStatus, note: str | None, *,
                previous: Skill | None = None, allow_unsafe: bool = False) -> tuple[SkillStatus, str | None]:
        """The status and note a skill entering with ``content`` gets: quarantined when the entry
        lint flags it, unless the caller explicitly allows it."""
        if status in (SkillStatus.quarantined, SkillStatus.retired):
            return status, note  # never injected: nothing to guard
        from skillbank.evolution.lint import lint_incoming

        # Lines of a quarantined version were never let in, so they are checked again.
        known = previous.content if previous is not None and previous.status != SkillStatus.quarantined else None
        result = lint_incoming(content, previous=known)
        if result.ok:
            return status, note
        if allow_unsafe:
            return status, "; ".join(filter(None, [f"allowed unsafe: {result.reason}", note]))
        return SkillStatus.quarantined, "; ".join(filter(None, [f"quarantined: {result.reason}", note]))

    def _content(self, **fields: Any) -> SkillContent:
        # Secrets never enter a skill, and so never a prompt.
        for key in ("description", "body"):
            if isinstance(fields.get(key), str):
                fields[key] = self.scrubber(fields[key])
        if fields.get("lessons"):
            # The body is rendered from the lessons: scrub what they say, then render again.
            fields["lessons"] = tuple(scrub_lesson(x, self.scrubber) for x in fields["lessons"])
            fields.pop("body", None)
        try:
            return SkillContent(**fields)
        except ValidationError as exc:  # keep only the readable reasons
            reasons = "; ".join(f"{'.'.join(map(str, e['loc']))}: {error_message(e)}"
                                for e in exc.errors())
            raise InvalidSkillError(f"invalid skill: {reasons}") from None

    def get_skill(self, skill_id: str) -> Skill:
        return self.skills.get(skill_id)

    def list_skills(self, status: SkillStatus | str | None = None, kind: str | None = None,
                    tag: str | None = None, *, drafts: bool = False) -> list[Skill]:
        """The skills, filtered. An edit evolution proposes for an active skill waits as a
        pending version of that skill (``skillbank candidates list``), not as a skill of its
        own: ``drafts=True`` lists the rows that hold those versions too."""
        skills = self.skills.list(status=status, kind=kind, tag=tag)
        if drafts:
            return skills
        from skillbank.evolution.review import draft_ids

        hidden = draft_ids(self)
        return [s for s in skills if s.id not in hidden]

    def history(self, skill_id: str) -> list[SkillVersion]:
        return self.skills.history(skill_id)

    def version(self, skill_id: str, version: int) -> SkillVersion:
        return self.skills.version(skill_id, version)

    def diff(self, skill_id: str, v1: int, v2: int) -> str:
        return diff_versions(self.skills.version(skill_id, v1), self.skills.version(skill_id, v2))

    def rollback(self, skill_id: str, to_version: int, *, reason: str | None = None,
                 author: str = "human") -> Skill:
        """Append a version equal in content to ``to_version``; the rolled-back edit is remembered."""
        target = self.skills.version(skill_id, to_version)
        current = self.skills.get(skill_id)
        if current.content_hash != target.content_hash:
            self.skills.remember_rejected(current.content_hash, current.id,
                                          f"rolled back to v{to_version}")
        return self.skills.new_version(
            current.id, content=target.content, author=author, action="rollback",
            reason=reason or f"rollback to v{to_version}",
        )

    def set_status(self, skill_id: str, status: SkillStatus | str, *, reason: str,
                   author: str = "human", note: str | None = None) -> Skill:
        return self.skills.new_version(skill_id, status=status, reason=reason, author=author,
                                       note=note, action=f"status:{SkillStatus(status).value}")

    def retire(self, skill_id: str, *, reason: str, author: str = "human") -> Skill:
        return self.set_status(skill_id, SkillStatus.retired, reason=reason, author=author, note=reason)

    def activate(self, skill_id: str, *, reason: str = "promoted", author: str = "human") -> Skill:
        return self.set_status(skill_id, SkillStatus.active, reason=reason, author=author)

    def pin(self, skill_id: str, pinned: bool = True, *, reason: str | None = None) -> Skill:
        return self.skills.new_version(skill_id, pinned=pinned, reason=reason or ("pinned" if pinned else "unpinned"),
                                       action="pin")

    def prune(
        self,
        *,
        unused_days: float | None = None,
        min_success_rate: float | None = None,
        min_evidence: int = 5,
        max_active: int | None = None,
        dry_run: bool = False,
        now: datetime | None = None,
    ) -> list[PruneAction]:
        """Retire active, unpinned skills by rule; ``dry_run`` returns the plan and writes nothing.

        Rules: not used for ``unused_days`` (creation counts as a use); success rate below
        ``min_success_rate`` over at least ``min_evidence`` labelled uses; and, over a cap of
        ``max_active``, the least useful, in the order an evolution round's bank budget retires
        them (:func:`skillbank.evolution.budget.least_useful_first`).
        """
        now = now or utcnow()
        active = [s for s in self.skills.list(status=SkillStatus.active) if not s.pinned]
        actions: dict[str, PruneAction] = {}
        if unused_days is not None:
            cutoff = now - timedelta(days=unused_days)
            for s in active:
                last = s.stats.last_used_at or s.created_at
                if last < cutoff:
                    actions[s.id] = PruneAction(s.id, s.name, "unused",
                                                f"last used {last:%Y-%m-%d}, over {unused_days:g} days ago")
        if min_success_rate is not None:
            for s in active:
                rate = s.stats.success_rate
                labelled = s.stats.successes + s.stats.failures
                if s.id not in actions and rate is not None and labelled >= min_evidence and rate < min_success_rate:
                    actions[s.id] = PruneAction(s.id, s.name, "low-success",
                                                f"success rate {rate:.0%} over {labelled} labelled uses")
        if max_active is not None:
            remaining = [s for s in active if s.id not in actions]
            pinned_count = self.skills.count(SkillStatus.active) - len(active)
            excess = len(remaining) + pinned_count - max_active
            if excess > 0:
                from skillbank.evolution.budget import least_useful_first

                for s in least_useful_first(remaining)[:excess]:
                    actions[s.id] = PruneAction(s.id, s.name, "over-cap",
                                                f"usefulness {s.stats.usefulness:.2f}; cap {max_active} active")
        if not dry_run:
            with self.store.transaction():
                for action in actions.values():
                    self.retire(action.skill_id, reason=f"prune ({action.rule}): {action.detail}",
                                author="prune")
        return list(actions.values())

    # -- retrieval ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        min_score: float = 0.0,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tools: Sequence[str] | None = None,
        token_budget: int | None = None,
        exclude: Iterable[str] = (),
        accept: Callable[[Skill], bool] | None = None,
    ) -> list[SkillHit]:
        """The top ``k`` active skills for ``query`` as ``(skill, score)`` pairs, best first.

        The keyword options are those of :class:`SearchFilters`.
        """
        if k <= 0 or not query.strip():
            return []
        vector = self.embedder.embed_query(self.scrubber(query))
        return self.search_filtered(vector, k, SearchFilters(min_score, kinds, tags, tools, token_budget, exclude,
                                                             accept))

    def search_vector(
        self,
        vector: np.ndarray,
        k: int = 5,
        *,
        min_score: float = 0.0,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tools: Sequence[str] | None = None,
        token_budget: int | None = None,
        exclude: Iterable[str] = (),
        accept: Callable[[Skill], bool] | None = None,
    ) -> list[SkillHit]:
        """:meth:`search` for a query already embedded (a normalised vector)."""
        return self.search_filtered(vector, k, SearchFilters(min_score, kinds, tags, tools, token_budget, exclude,
                                                             accept))

    def search_filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]:
        """What :meth:`search` and :meth:`search_vector` run: the top ``k`` skills for an embedded
        query under ``filters``."""
        if k <= 0:
            return []
        vector = np.asarray(vector, dtype=np.float32)
        # Read a few more candidates than k (filters, exclusions and the blend with usage reorder
        # them), and more again while the filters leave fewer than k and the index has more.
        n = k * 4 + len(filters.exclude)
        while True:
            try:
                candidates = self._candidates(vector, n, filters)
            except DamagedIndexError as exc:
                self._rebuild_damaged(exc)
                candidates = self._candidates(vector, n, filters)
            allowed = filters.allow(candidates)
            if len(allowed) >= k or len(candidates) < n or n >= MAX_CANDIDATES:
                break
            n = min(n * 4, MAX_CANDIDATES)
        return retrieval.select(allowed, k=k, min_score=filters.min_score,
                                token_budget=filters.token_budget)

    def general_skills(self) -> list[Skill]:
        """Active skills tagged ``general`` (lessons generalised across tools), most useful
        first: the injector adds them to every turn instead of retrieving them."""
        skills = self.skills.list(status=SkillStatus.active, tag=GENERAL_TAG)
        return sorted(skills, key=lambda s: (-retrieval.blended_score(s, 0.0), s.name))

    def render(self, hits: Sequence[SkillHit | Skill], token_budget: int | None = None) -> str:
        return retrieval.render(hits, token_budget=token_budget)

    def _candidates(self, vector: np.ndarray, n: int, filters: SearchFilters | None = None) -> list[Candidate]:
        dirty = self._dirty_ids()
        hits = [h for h in self.index.query(vector, n + len(dirty), filters) if h.skill_id not in dirty]
        skills = {h.skill_id: h.skill for h in hits if h.skill is not None}
        skills.update(self.skills.get_many([h.skill_id for h in hits if h.skill is None] + list(dirty)))
        out = []
        for hit in hits:
            skill = skills.get(hit.skill_id)
            # Defensive: an entry the index kept for a skill the store no longer calls active.
            if skill and skill.status == SkillStatus.active and skill.content_hash == hit.content_hash:
                out.append(Candidate(skill, hit.similarity, hit.vector))
        fresh = [skills[i] for i in dirty if i in skills and skills[i].status == SkillStatus.active]
        if fresh:
            vectors = self._vectors(fresh)
            for skill in fresh:
                vec = vectors[skill.content_hash]
                out.append(Candidate(skill, float(np.dot(vec, vector)), vec))
        return out

    def _dirty_ids(self) -> frozenset[str]:
        """Skills changed since this process's view of the index; syncs when there are many."""
        view = self.index.ensure_fresh()
        db_seq = self.skills.last_event_seq()
        if view.seq == db_seq:
            return frozenset()
        if self._dirty and self._dirty[:2] == (view.seq, db_seq):
            return self._dirty[2]
        ids = frozenset(e["skill_id"] for e in self.skills.events_since(view.seq) if e["skill_id"])
        if view.seq == 0 or view.seq > db_seq or len(ids) > DIRTY_LIMIT:
            self.sync_index()
            return frozenset()
        self._dirty = (view.seq, db_seq, ids)
        return ids

    def sync_index(self, *, full: bool = False) -> dict[str, int]:
        """Bring the index in step with the store; ``full`` compares every entry (repairs anything).

        A damaged index is rebuilt from the store (and a warning says so).
        """
        try:
            return self._sync(full)
        except DamagedIndexError as exc:
            return self._rebuild_damaged(exc)

    def _rebuild_damaged(self, exc: DamagedIndexError) -> dict[str, int]:
        log.warning("the search index at %s was damaged (%s); rebuilding it from the bank",
                    exc.where, exc.reason)
        return self.reindex()

    def _sync(self, full: bool) -> dict[str, int]:
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
            vectors = self._vectors(upsert)
            index.apply([(s.id, vectors[s.content_hash], s.content_hash) for s in upsert], delete, db_seq)
        self._dirty = None
        return {"upserted": len(upsert), "deleted": len(delete)}

    def reindex(self) -> dict[str, int]:
        """Delete the index and rebuild it from the store (cached embeddings are reused).

        Always works: the old index is removed without being read, damaged or not.
        """
        self.index.destroy()
        self._dirty = None
        return self._sync(full=True)

    def _vectors(self, skills: Sequence[Skill]) -> dict[str, np.ndarray]:
        """Embeddings by content hash, from the store's cache; missing ones are embedded and cached."""
        name = self.embedder.name
        out = self.embeddings.get(name, (s.content_hash for s in skills))
        missing = [s for s in {s.content_hash: s for s in skills}.values() if s.content_hash not in out]
        if missing:
            vectors = self.embedder.embed([s.content.embedding_text() for s in missing])
            fresh = {s.content_hash: np.asarray(v, dtype=np.float32) for s, v in zip(missing, vectors)}
            self.embeddings.put(name, fresh)
            out.update(fresh)
        return out

    # -- integrity ---------------------------------------------------------------------------

    def verify(self, *, check_index: bool = True) -> VerifyReport:
        """Check the history chain and versions, and that the index matches the active set."""
        report = verify_history(self.store)
        report.problems.extend(f"database: {p}" for p in self.store.integrity_check())
        if check_index:
            try:
                dirty = self._dirty_ids()  # first: it may sync, which changes the entries
                indexed = self.index.entries()
            except DamagedIndexError as exc:
                report.problems.append(f"index: {exc}")
                return report
            active = {s.id: s.content_hash for s in self.skills.list(status=SkillStatus.active)}
            missing = [i for i in active if i not in indexed and i not in dirty]
            extra = [i for i in indexed if i not in active and i not in dirty]
            stale = [i for i in active if i in indexed and indexed[i] != active[i] and i not in dirty]
            for label, ids in (("missing from", missing), ("retired or unknown but in", extra),
                               ("stale in", stale)):
                if ids:
                    report.problems.append(f"index: {len(ids)} skill(s) {label} the index "
                                           f"(e.g. {ids[0]}); run `skillbank reindex`")
        return report

    def snapshot_id(self) -> str:
        return self.skills.snapshot_id()

    # -- trajectories ------------------------------------------------------------------------

    def record_outcome(
        self,
        trajectory_id: str,
        success: bool | None = None,
        score: float | None = None,
        note: str | None = None,
        source: str = "manual",
    ) -> None:
        if success is None and score is None:
            raise InvalidSkillError("record_outcome needs success=True/False or a score")
        if success is None and score is not None:
            success = score >= 0.5
        self.trajectories.record_outcome(
            trajectory_id, Outcome(success=success, score=score, note=note, source=source)
        )

    # -- interop -----------------------------------------------------------------------------

    def export_skills(self, directory: str | Path, status: SkillStatus | str = SkillStatus.active) -> list[Path]:
        from skillbank.skillmd import export_skills

        return export_skills(self.skills.list(status=status), Path(directory))

    def import_skills(self, directory: str | Path, *, author: str = "import",
                      allow_unsafe: bool = False, trusted: bool = False) -> list[Skill]:
        """Import SKILL.md folders; every file is validated first and nothing is written if any fails.

        Text from a file is not trusted: a skill its file marks ``active`` (or leaves unmarked)
        arrives as a ``candidate``, never injected until a person promotes it (``skillbank
        candidates promote NAME``); ``trusted=True`` keeps the file's status. A skill whose text
        looks like prompt injection arrives quarantined either way (see :meth:`add_skill`);
        ``allow_unsafe=True`` imports it with the status it would otherwise get. Each version
        records the file it came from as its source (:mod:`skillbank.provenance`).
        """
        from skillbank.skillmd import read_skill_dir

        parsed = read_skill_dir(Path(directory), consequence="nothing was imported")
        imported: list[Skill] = []
        with self.store.transaction():
            for item in parsed:
                content = self._content(**item.content.model_dump())
                existing = None
                for key in (item.skill_id, content.name):
                    if key:
                        with contextlib.suppress(SkillBankError):
                            existing = self.skills.get(key)
                            break
                wanted = SkillStatus(item.status or SkillStatus.active)
                if wanted == SkillStatus.active and not trusted:
                    wanted = SkillStatus.candidate
                status, note = self._screen(content, wanted, None, previous=existing, allow_unsafe=allow_unsafe)
                reason = f"imported from {item.path}"
                provenance = [source_entry(Source.skill_md, str(item.path))]
                if existing is None:
                    imported.append(self.skills.create(content, status=status, pinned=item.pinned,
                                                       author=author, reason=reason, skill_id=item.skill_id,
                                                       note=note, provenance=provenance))
                else:
                    imported.append(self.skills.new_version(existing.id, content=content, status=status,
                                                            pinned=item.pinned, author=author,
                                                            reason=reason, action="import", note=note,
                                                            provenance=provenance))
        return imported

    # -- overview ----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        by_status = self.skills.count_by("status")
        return {
            "path": self.location,
            "skills": {"total": sum(by_status.values()), **by_status},
            "active_by_kind": self.skills.count_by("kind", status=SkillStatus.active),
            "trajectories": self.trajectories.totals(),
            "limit_events": self.trajectories.limit_counts(),
            "history_events": self.skills.last_event_seq(),
            "snapshot": self.snapshot_id(),
        }


def _with_source(provenance: Iterable[str], source: Source | None, author: str) -> list[str]:
    """``provenance`` with the text's source recorded (unless it already holds one)."""
    entries = list(provenance)
    if recorded(entries) is None:
        record = SourceRecord(source) if source is not None else source_of_author(author)
        entries.insert(0, source_entry(record.source, record.detail))
    return entries


def _refuse_emptied_database(folder: Path, db_path: Path) -> None:
    """A 0-byte database beside the files a used bank leaves is a damaged bank, not a new one."""
    if db_path.stat().st_size != 0:
        return
    signs = [name for name in _USED_BANK_SIGNS
             if (folder / name).exists() and (not (folder / name).is_dir() or any((folder / name).iterdir()))]
    wal = Path(f"{db_path}-wal")
    if wal.exists() and wal.stat().st_size:
        signs.append(wal.name)
    if signs:
        raise CorruptBankError(
            f"{db_path} is empty (0 bytes) but {folder} holds {', '.join(signs)}: this bank once "
            "held data and its database was truncated or replaced. Nothing was written; restore "
            f"{DB_FILENAME} from a backup (or move the folder aside to start a new bank)."
        )
