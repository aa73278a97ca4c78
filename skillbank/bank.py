"""``SkillBank``: the facade users touch first.

SQLite (``bank.db``) is the source of truth; the Chroma index (``index/``) is derived from it
and repaired from it. Opening a bank touches only SQLite, so it is fast; the embedding model and
Chroma load on the first search.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from pydantic import ValidationError

from skillbank import retrieval
from skillbank.embed import BaseEmbedder, resolve_embedder
from skillbank.errors import InvalidSkillError, NotABankError, SkillBankError
from skillbank.index import SkillIndex
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
from skillbank.retrieval import Candidate, SkillHit
from skillbank.store.db import DB_FILENAME, Store
from skillbank.store.history import VerifyReport, diff_versions, verify_history
from skillbank.store.skills import SkillRepo
from skillbank.store.trajectories import TrajectoryRepo

DEFAULT_DIR = ".skillbank"
ENV_DIR = "SKILLBANK_DIR"
INDEX_DIR = "index"
# Up to this many skills changed since the index last synced are scored exactly from the
# embedding cache instead of rewriting the index on every change.
DIRTY_LIMIT = 256


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
    hits; ``exclude`` drops skills by id.
    """

    min_score: float = 0.0
    kinds: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    tools: Sequence[str] | None = None
    token_budget: int | None = None
    exclude: Iterable[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude", frozenset(self.exclude))  # an iterator is read once

    @property
    def narrows(self) -> bool:
        """Whether kinds/tags/tools filter (a search then reads more candidates to fill ``k``)."""
        return bool(self.kinds or self.tags or self.tools)

    def allow(self, candidates: Iterable[Candidate]) -> list[Candidate]:
        """The candidates ``exclude``/``kinds``/``tags``/``tools`` let through."""
        return retrieval.filter_candidates(candidates, exclude=self.exclude, kinds=self.kinds,
                                           tags=self.tags, tools=self.tools)


def default_bank_dir() -> Path:
    return Path(os.environ.get(ENV_DIR) or DEFAULT_DIR)


class SkillBank:
    def __init__(self, path: Path, store: Store, embedder: Any = None, scrubber: Any = None):
        from skillbank.scrub import resolve_scrubber

        self.path = path
        self.store = store
        self.skills = SkillRepo(store)
        self.trajectories = TrajectoryRepo(store, self.skills)
        self._embedder_spec = embedder
        self._embedder: BaseEmbedder | None = None
        self._index: SkillIndex | None = None
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

        ``create=False`` refuses to make a new bank. A non-empty folder without a bank database
        is refused either way, so a typo never scatters files into an unrelated folder.
        """
        folder = Path(path) if path is not None else default_bank_dir()
        db_path = folder / DB_FILENAME
        if not db_path.exists():
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
        return cls(folder, Store.open(db_path), embedder=embedder, scrubber=scrubber)

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
    def index(self) -> SkillIndex:
        if self._index is None:
            self._index = SkillIndex(self.path / INDEX_DIR, self.embedder)
        return self._index

    # -- skills ------------------------------------------------------------------------------

    def add_skill(
        self,
        name: str,
        description: str,
        body: str,
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
        allow_unsafe: bool = False,
    ) -> Skill:
        """Add a skill (version 1).

        Text that looks like prompt injection (the lint's :func:`~skillbank.evolution.lint.lint_incoming`)
        makes the skill ``quarantined``, with the reason in its note, whatever ``status`` asked
        for; ``skillbank candidates promote ID --force`` makes it active after review.
        ``allow_unsafe=True`` keeps ``status`` and records the findings in the note instead.
        """
        content = self._content(name=name, description=description, body=body, kind=kind,
                                tools=tuple(tools), tags=tuple(tags))
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
        **changes: Any,
    ) -> Skill:
        """Append a version with the given content fields changed (name, description, body, ...).

        Added lines that look like prompt injection quarantine the skill, as in :meth:`add_skill`.
        """
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
        try:
            return SkillContent(**fields)
        except ValidationError as exc:  # keep only the readable reasons
            reasons = "; ".join(f"{'.'.join(map(str, e['loc']))}: {error_message(e)}"
                                for e in exc.errors())
            raise InvalidSkillError(f"invalid skill: {reasons}") from None

    def get_skill(self, skill_id: str) -> Skill:
        return self.skills.get(skill_id)

    def list_skills(self, status: SkillStatus | str | None = None, kind: str | None = None,
                    tag: str | None = None) -> list[Skill]:
        return self.skills.list(status=status, kind=kind, tag=tag)

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
    ) -> list[SkillHit]:
        """The top ``k`` active skills for ``query`` as ``(skill, score)`` pairs, best first.

        The keyword options are those of :class:`SearchFilters`.
        """
        if k <= 0 or not query.strip():
            return []
        vector = self.embedder.embed_query(self.scrubber(query))
        return self.search_filtered(vector, k, SearchFilters(min_score, kinds, tags, tools, token_budget, exclude))

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
    ) -> list[SkillHit]:
        """:meth:`search` for a query already embedded (a normalised vector)."""
        return self.search_filtered(vector, k, SearchFilters(min_score, kinds, tags, tools, token_budget, exclude))

    def search_filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]:
        """What :meth:`search` and :meth:`search_vector` run: the top ``k`` skills for an embedded
        query under ``filters``."""
        if k <= 0:
            return []
        candidates = self._candidates(np.asarray(vector, dtype=np.float32), k * (20 if filters.narrows else 4))
        return retrieval.select(filters.allow(candidates), k=k, min_score=filters.min_score,
                                token_budget=filters.token_budget)

    def general_skills(self) -> list[Skill]:
        """Active skills tagged ``general`` (lessons generalised across tools), most useful
        first: the injector adds them to every turn instead of retrieving them."""
        skills = self.skills.list(status=SkillStatus.active, tag=GENERAL_TAG)
        return sorted(skills, key=lambda s: (-retrieval.blended_score(s, 0.0), s.name))

    def render(self, hits: Sequence[SkillHit | Skill], token_budget: int | None = None) -> str:
        return retrieval.render(hits, token_budget=token_budget)

    def _candidates(self, vector: np.ndarray, n: int) -> list[Candidate]:
        dirty = self._dirty_ids()
        hits = [h for h in self.index.query(vector, n + len(dirty)) if h.skill_id not in dirty]
        skills = self.skills.get_many([h.skill_id for h in hits] + list(dirty))
        out = []
        for hit in hits:
            skill = skills.get(hit.skill_id)
            # Defensive: an entry the index kept for a skill SQLite no longer calls active.
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
        """Bring the index in step with SQLite; ``full`` compares every entry (repairs anything)."""
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
        """Delete the index files and rebuild them from SQLite (cached embeddings are reused)."""
        self.index.destroy()
        return self.sync_index(full=True)

    def _vectors(self, skills: Sequence[Skill]) -> dict[str, np.ndarray]:
        """Embeddings by content hash, from the SQLite cache; missing ones are embedded and cached."""
        name = self.embedder.name
        hashes = list(dict.fromkeys(s.content_hash for s in skills))
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.store.query(
                f"SELECT content_hash, vector FROM embeddings WHERE embedder = ? AND content_hash IN ({marks})",
                [name, *chunk],
            ):
                out[row["content_hash"]] = np.frombuffer(row["vector"], dtype=np.float32)
        missing = [s for s in {s.content_hash: s for s in skills}.values() if s.content_hash not in out]
        if missing:
            vectors = self.embedder.embed([s.content.embedding_text() for s in missing])
            with self.store.transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO embeddings (content_hash, embedder, vector) VALUES (?, ?, ?)",
                    [(s.content_hash, name, v.astype(np.float32).tobytes()) for s, v in zip(missing, vectors)],
                )
            out.update({s.content_hash: v.astype(np.float32) for s, v in zip(missing, vectors)})
        return out

    # -- integrity ---------------------------------------------------------------------------

    def verify(self, *, check_index: bool = True) -> VerifyReport:
        """Check the history chain and versions, and that the index matches SQLite's active set."""
        report = verify_history(self.store)
        report.problems.extend(f"database: {p}" for p in self.store.integrity_check())
        if check_index:
            dirty = self._dirty_ids()  # first: it may sync, which changes the entries
            indexed = self.index.entries()
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
                      allow_unsafe: bool = False) -> list[Skill]:
        """Import SKILL.md folders; every file is validated first and nothing is written if any fails.

        A skill whose text looks like prompt injection arrives quarantined (see :meth:`add_skill`);
        ``allow_unsafe=True`` imports it with the status its file gives.
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
                status, note = self._screen(content, SkillStatus(item.status or SkillStatus.active), None,
                                            previous=existing, allow_unsafe=allow_unsafe)
                reason = f"imported from {item.path}"
                if existing is None:
                    imported.append(self.skills.create(content, status=status, pinned=item.pinned,
                                                       author=author, reason=reason, skill_id=item.skill_id,
                                                       note=note))
                else:
                    imported.append(self.skills.new_version(existing.id, content=content, status=status,
                                                            pinned=item.pinned, author=author,
                                                            reason=reason, action="import", note=note))
        return imported

    # -- overview ----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        q = self.store.query
        by_status = {r["status"]: r["n"] for r in q("SELECT status, count(*) AS n FROM skills GROUP BY status")}
        by_kind = {r["kind"]: r["n"] for r in q(
            "SELECT kind, count(*) AS n FROM skills WHERE status = 'active' GROUP BY kind")}
        runs = q("SELECT count(*) AS n, sum(success IS NOT NULL) AS labelled, sum(success = 1) AS ok,"
                 " sum(status = 'incomplete') AS incomplete FROM trajectories")[0]
        limits = {r["type"]: r["n"] for r in q("SELECT type, count(*) AS n FROM limit_events GROUP BY type")}
        return {
            "path": str(self.path),
            "skills": {"total": sum(by_status.values()), **by_status},
            "active_by_kind": by_kind,
            "trajectories": {
                "total": runs["n"] or 0,
                "labelled": runs["labelled"] or 0,
                "successes": runs["ok"] or 0,
                "incomplete": runs["incomplete"] or 0,
            },
            "limit_events": limits,
            "history_events": self.skills.last_event_seq(),
            "snapshot": self.snapshot_id(),
        }
