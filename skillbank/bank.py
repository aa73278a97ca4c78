"""``SkillBank``: the facade users touch first, and the door every part of it goes through.

The store is the source of truth: a SQLite file (``bank.db``, the embedded default) or a
PostgreSQL database (``SkillBank.open("postgresql://…")``, for a fleet). The search index is
derived from it and repaired from it: a Chroma directory (``index/``) beside a SQLite file,
pgvector inside PostgreSQL. Opening a bank touches only the store, so it is fast; the embedding
model and the index load on the first search.

The work is done below: opening in :mod:`skillbank.store._location`, the index and its sync in
:mod:`skillbank.store._sync`, search in :mod:`skillbank._search`, the way text comes in (scrub,
validation, the screen) in :mod:`skillbank._intake`, pruning rules in :mod:`skillbank.prune`.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator, Sequence

import numpy as np

from skillbank import retrieval
from skillbank.embed import BaseEmbedder, resolve_embedder
from skillbank.errors import InvalidSkillError
from skillbank._intake import (ImportReport, build_content, import_skill_files, screen_status, updated_content,
                              with_source)
from skillbank.live._config import LiveConfig
from skillbank.live._effect import KindOf, task_type_kind
from skillbank.live._monitor import MonitorReport, monitor
from skillbank.models import Outcome, Skill, SkillKind, SkillStatus, SkillVersion, utcnow
from skillbank.protocols import Screen, VectorIndex
from skillbank._provenance import Source
from skillbank.prune import (EffectKind, MeasuredEffect, PruneAction, PrunePlan, gate_effects, measured_effects,
                             plan_prune)
from skillbank.queries import SearchFilters, SkillHit, SolvedRequest
from skillbank._screen import lint_incoming
from skillbank._scrub import resolve_scrubber
from skillbank._skillmd import export_skills
from skillbank._search import Searchable, SkillSearch
from skillbank.store._base import Store
from skillbank.store._drafts import DraftRepo
from skillbank.store._embeddings import EmbeddingCache
from skillbank.store._evidence import EvidenceRepo
from skillbank.store._exposures import ExposureRepo
from skillbank.store._gate_records import GateRecordRepo
from skillbank.store._history import VerifyReport, diff_versions, verify_history
from skillbank.store._location import open_store
from skillbank.store._rounds import RoundRepo
from skillbank.store._skills import SkillRepo
from skillbank.store._sync import IndexSync
from skillbank.store._trajectories import TrajectoryRepo

__all__ = ["SkillBank"]


class SkillBank(Searchable):
    """A versioned skill bank over a store; open one with :meth:`open`.

    Args:
        path: The bank's folder; ``None`` for a bank in a database server.
        store: The store that holds the skills, versions and trajectories.
        embedder: Any spec :func:`~skillbank.embed.resolve_embedder` takes, resolved on the
            first search; ``None``: the bundled MiniLM.
        scrubber: Applied to every text that enters the bank: ``None`` or ``True`` the default
            scrubber, ``False`` none, or a callable ``str -> str``.
        screen: Checks text that enters from outside an evolution round (see :meth:`add_skill`);
            ``None``: the injection screen, :func:`skillbank._screen.lint_incoming`.
    """

    def __init__(self, path: Path | None, store: Store, embedder: Any = None, scrubber: Any = None,
                 screen: Screen | None = None):
        self.path = path
        self.location = str(path) if path is not None else store.location
        self.store = store
        self.skills = SkillRepo(store)
        self.trajectories = TrajectoryRepo(store, self.skills)
        self.evidence = EvidenceRepo(store)
        self.embeddings = EmbeddingCache(store)
        self.drafts = DraftRepo(store)
        self.rounds = RoundRepo(store)
        self.gate_records = GateRecordRepo(store)
        self.exposures = ExposureRepo(store)
        self.scrubber: Callable[[str], str] = resolve_scrubber(scrubber)
        self.screen: Screen = screen if screen is not None else lint_incoming
        self._embedder_spec = embedder
        self._embedder: BaseEmbedder | None = None
        self._indexing = IndexSync(store, path, self.skills, self.embeddings, lambda: self.embedder)
        self._search = SkillSearch(self._indexing, self.skills)

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path | None = None, *, embedder: Any = None, create: bool = True,
             scrubber: Any = None, screen: Screen | None = None, read_only: bool = False) -> "SkillBank":
        """Open the bank in ``path`` (default ``$SKILLBANK_DIR`` or ``./.skillbank``).

        ``path`` is a folder (the embedded default: a SQLite file and a local index) or a
        PostgreSQL connection string, ``postgresql://user[:password]@host[:port]/dbname``, that
        every process of a fleet opens alike. ``create=False`` refuses to make a new bank. A
        non-empty folder without a bank database is refused either way, so a typo never
        scatters files into an unrelated folder. ``read_only=True`` opens an existing bank so that
        its database cannot be written (any write raises); it never creates or upgrades one.

        Args:
            path: A folder or a ``postgresql://`` connection string; ``None``: ``$SKILLBANK_DIR``
                or ``./.skillbank``.
            embedder: Any spec :func:`~skillbank.embed.resolve_embedder` takes (``"minilm"``,
                ``"hash"``, a model, a callable, ...); ``None``: the bundled MiniLM.
            create: Create the bank when there is none yet.
            scrubber: Applied to every text that enters the bank (``None``: the default scrubber;
                ``False``: none).
            screen: Checks text entering from outside an evolution round; ``None``: the
                injection screen.
            read_only: Open an existing bank so that nothing can be written to it.

        Returns:
            The bank; close it with :meth:`close` or use it as a context manager.

        Raises:
            NotABankError: No bank there and ``create=False``, a non-empty folder without a bank
                database, or a folder that cannot be created or written.
            CorruptBankError: The bank's database cannot be read.
            SchemaTooNewError: A newer skillbank wrote the bank.
        """
        folder, store = open_store(path, create=create, read_only=read_only)
        return cls(folder, store, embedder=embedder, scrubber=scrubber, screen=screen)

    def close(self) -> None:
        """Close the bank's index and its store (the database connection)."""
        self._indexing.close()
        self.store.close()

    def __enter__(self) -> "SkillBank":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self, *, ordered: bool = False) -> ContextManager[Any]:
        """One write transaction around several of the bank's writes (nested use joins it).

        ``ordered=True`` orders it, from its first statement, against every change to skills and
        the change log in any process: a check read inside it (say, that a skill is still at the
        version a form was drawn from) cannot be overtaken before the writes that follow. SQLite's
        write transactions are always ordered so; on PostgreSQL a plain one is ordered only from
        its first skill write.

        Args:
            ordered: Order the transaction against every skill and change-log write from its start.

        Returns:
            A context manager that commits on success and rolls back on error; it yields the
            store's connection.
        """
        if not ordered:
            return self.store.transaction()
        return self._ordered_transaction()

    @contextlib.contextmanager
    def _ordered_transaction(self) -> Iterator[Any]:
        with self.store.transaction() as conn:
            self.store.serialize_changes(conn)
            yield conn

    def lock(self, name: str, *, timeout: float | None, what: str, busy: Any = None) -> ContextManager[Any]:
        """An exclusive lock named ``name`` held across every process using this bank
        (:meth:`Store.lock <skillbank.store._base.Store.lock>`); released however the holder exits.

        Args:
            name: The lock's name; holders of other names do not wait for it.
            timeout: Seconds to wait for the lock; ``None``: wait as long as it takes.
            what: What the lock is taken for, used in the error's message.
            busy: ``busy(holder, waited)`` words the error instead; ``None``: the default wording.

        Returns:
            A context manager holding the lock while inside it.

        Raises:
            LockedError: On entering, when the lock is still held after ``timeout`` seconds.
        """
        return self.store.lock(name, timeout=timeout, what=what, busy=busy)

    @property
    def embedder(self) -> BaseEmbedder:  # type: ignore[override]  # read-only here, an attribute in Searchable
        """The bank's embedder, resolved from the spec given to :meth:`open` on first use."""
        if self._embedder is None:
            self._embedder = resolve_embedder(self._embedder_spec)
        return self._embedder

    @property
    def index(self) -> VectorIndex:
        """The vector index the bank searches (kept in step with the store by :meth:`sync_index`)."""
        return self._indexing.index

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

        Text the bank's ``screen`` flags (by default, text that looks like prompt injection:
        :func:`~skillbank._screen.lint_incoming`) makes the skill ``quarantined``, with the reason
        in its note, whatever ``status`` asked for; ``skillbank candidates promote ID --force``
        makes it active after review. ``allow_unsafe=True`` keeps ``status`` and records the
        findings in the note instead.

        ``source`` (where the text came from; default: what ``author`` implies, see
        :mod:`skillbank._provenance`) is recorded in the version's provenance.

        Args:
            name: A unique name: lower-case letters, digits and single hyphens.
            description: When the skill applies (what retrieval matches on).
            body: Free guidance in markdown; leave it empty when giving ``lessons``.
            kind: What sort of lesson it is (:class:`~skillbank.models.SkillKind` or its value).
            tools: The tools the skill concerns.
            tags: Free labels (``general``: injected on every turn).
            status: The status it starts with (a screen finding makes it ``quarantined``).
            pinned: Leave it alone in pruning and evolution rounds.
            author: Who writes it, recorded on the version.
            reason: Why, recorded on the version.
            provenance: Where it came from (trajectory ids, ...), recorded on the version.
            note: A note shown to reviewers.
            lessons: Typed lessons the body is rendered from.
            toolset: The tools of the agents it suits; empty: any agent.
            allow_unsafe: Keep ``status`` despite screen findings (recorded in the note).
            source: Where the text came from; ``None``: what ``author`` implies.

        Returns:
            The skill at version 1.

        Raises:
            InvalidSkillError: A field breaks a rule (name format, empty or oversized text, a
                body that does not match its lessons).
            DuplicateSkillError: A skill with that name exists.
        """
        provenance = with_source(provenance, source, author)
        content = build_content(self.scrubber, name=name, description=description, body=body, kind=kind,
                                tools=tuple(tools), tags=tuple(tags), lessons=tuple(lessons),
                                toolset=tuple(toolset))
        status, note = screen_status(self.screen, content, SkillStatus(status), note, allow_unsafe=allow_unsafe)
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

        Added lines the screen flags quarantine the skill, as in :meth:`add_skill`; ``source``
        is recorded as there.

        Args:
            skill_id: The skill's id or name.
            reason: Why, recorded on the version.
            author: Who writes it, recorded on the version.
            provenance: Where the change came from, recorded on the version.
            status: The new version's status; ``None``: the current one (a screen finding
                makes it ``quarantined``).
            note: A note shown to reviewers.
            allow_unsafe: Keep the status despite screen findings (recorded in the note).
            source: Where the text came from; ``None``: what ``author`` implies.
            **changes: The content fields to change (``name``, ``description``, ``body``,
                ``kind``, ``tools``, ``tags``, ``lessons``, ``toolset``).

        Returns:
            The skill at its new version.

        Raises:
            SkillNotFoundError: No skill has that id or name.
            InvalidSkillError: An unknown field, or a changed field that breaks a rule.
            DuplicateSkillError: The new name is another skill's.
        """
        provenance = with_source(provenance, source, author)
        current, content = updated_content(self.scrubber, self.skills, skill_id, changes)
        wanted = SkillStatus(status) if status is not None else current.status
        screened, note = screen_status(self.screen, content, wanted, note, previous=current,
                                       allow_unsafe=allow_unsafe)
        return self.skills.new_version(current.id, content=content, status=screened, author=author,
                                       reason=reason, provenance=provenance, note=note)

    def get_skill(self, skill_id: str) -> Skill:
        """The current state of one skill.

        Args:
            skill_id: The skill's id or name.

        Returns:
            The skill at its latest version.

        Raises:
            SkillNotFoundError: No skill has that id or name.
        """
        return self.skills.get(skill_id)

    def list_skills(self, status: SkillStatus | str | None = None, kind: str | None = None,
                    tag: str | None = None, *, drafts: bool = False) -> list[Skill]:
        """The skills, filtered. An edit evolution proposes for an active skill waits as a
        pending version of that skill (``skillbank candidates list``), not as a skill of its
        own: ``drafts=True`` lists the rows that hold those versions too.

        Args:
            status: Only skills with this status; ``None``: any.
            kind: Only skills of this kind; ``None``: any.
            tag: Only skills with this tag; ``None``: any.
            drafts: Also list the rows that hold pending edits of other skills.

        Returns:
            The matching skills.
        """
        skills = self.skills.list(status=status, kind=kind, tag=tag)
        if drafts:
            return skills
        hidden = self.drafts.draft_ids()
        return [s for s in skills if s.id not in hidden]

    def list_skills_page(self, *, status: SkillStatus | str | None = None, kind: str | None = None,
                         tag: str | None = None, order: str = "name", offset: int = 0,
                         limit: int = 50) -> tuple[list[Skill], int]:
        """One page of :meth:`list_skills` (drafts hidden alike) and the number matching in all,
        read without building every skill: what a paged view of a large bank needs. ``order``:
        ``name``, ``updated``, ``uses`` or ``success`` (rate when injected, highest first).

        Args:
            status: Only skills with this status; ``None``: any.
            kind: Only skills of this kind; ``None``: any.
            tag: Only skills with this tag; ``None``: any.
            order: The page's order: ``name``, ``updated``, ``uses`` or ``success``.
            offset: Matching skills skipped before the page starts.
            limit: Skills on the page at most.

        Returns:
            The page's skills (empty past the end) and how many skills match in all.

        Raises:
            ValueError: An unknown ``order``, ``offset < 0`` or ``limit < 1``.
        """
        return self.skills.page(status=status, kind=kind, tag=tag, hide_drafts=True, order=order,
                                offset=offset, limit=limit)

    def history(self, skill_id: str) -> list[SkillVersion]:
        """Every version of a skill, with its author, reason and provenance.

        Args:
            skill_id: The skill's id or name.

        Returns:
            The versions, oldest first.

        Raises:
            SkillNotFoundError: No skill has that id or name.
        """
        return self.skills.history(skill_id)

    def version(self, skill_id: str, version: int) -> SkillVersion:
        """One version of a skill.

        Args:
            skill_id: The skill's id or name.
            version: The version's number, from 1.

        Returns:
            That version.

        Raises:
            SkillNotFoundError: No skill has that id or name.
            VersionNotFoundError: The skill has no such version.
        """
        return self.skills.version(skill_id, version)

    def diff(self, skill_id: str, v1: int, v2: int) -> str:
        """A unified diff between two versions of a skill, front matter fields first, then the body.

        Args:
            skill_id: The skill's id or name.
            v1: The version diffed from.
            v2: The version diffed to.

        Returns:
            The diff's text (empty when the two versions' fields, status and body are the same).

        Raises:
            SkillNotFoundError: No skill has that id or name.
            VersionNotFoundError: The skill has no such version.
        """
        return diff_versions(self.skills.version(skill_id, v1), self.skills.version(skill_id, v2))

    def rollback(self, skill_id: str, to_version: int, *, reason: str | None = None,
                 author: str = "human") -> Skill:
        """Append a version equal in content to ``to_version``; the rolled-back edit is remembered.

        Args:
            skill_id: The skill's id or name.
            to_version: The version whose content comes back.
            reason: Why, recorded on the version; ``None``: ``rollback to v<N>``.
            author: Who rolls back, recorded on the version.

        Returns:
            The skill at its new version.

        Raises:
            SkillNotFoundError: No skill has that id or name.
            VersionNotFoundError: The skill has no such version.
        """
        return self.skills.rollback(skill_id, to_version, reason=reason, author=author)

    def set_status(self, skill_id: str, status: SkillStatus | str, *, reason: str,
                   author: str = "human", note: str | None = None) -> Skill:
        """Give a skill ``status`` with a new version (what :meth:`retire` and :meth:`activate`
        do); no version is written when it already has that status.

        Args:
            skill_id: The skill's id or name.
            status: The new status.
            reason: Why, recorded on the version.
            author: Who changes it, recorded on the version.
            note: Stored as the skill's note; ``None``: none.

        Returns:
            The skill at its new (or unchanged) version.

        Raises:
            ValueError: ``status`` is no :class:`SkillStatus`.
            SkillNotFoundError: No skill has that id or name.
        """
        return self.skills.new_version(skill_id, status=status, reason=reason, author=author,
                                       note=note, action=f"status:{SkillStatus(status).value}")

    def retire(self, skill_id: str, *, reason: str, author: str = "human") -> Skill:
        """Retire a skill (never injected again; its history is kept) with a new version.

        Args:
            skill_id: The skill's id or name.
            reason: Why, recorded on the version and as the skill's note.
            author: Who retires it, recorded on the version.

        Returns:
            The skill at its new version.

        Raises:
            SkillNotFoundError: No skill has that id or name.
        """
        return self.set_status(skill_id, SkillStatus.retired, reason=reason, author=author, note=reason)

    def activate(self, skill_id: str, *, reason: str = "promoted", author: str = "human") -> Skill:
        """Make a skill active (retrieved and injected) with a new version.

        Args:
            skill_id: The skill's id or name.
            reason: Why, recorded on the version.
            author: Who activates it, recorded on the version.

        Returns:
            The skill at its new version.

        Raises:
            SkillNotFoundError: No skill has that id or name.
        """
        return self.set_status(skill_id, SkillStatus.active, reason=reason, author=author)

    def pin(self, skill_id: str, pinned: bool = True, *, reason: str | None = None) -> Skill:
        """Pin a skill (pruning and evolution rounds leave it alone), or unpin it, with a new version.

        Args:
            skill_id: The skill's id or name.
            pinned: Pin (``True``) or unpin (``False``).
            reason: Why, recorded on the version; ``None``: ``pinned`` or ``unpinned``.

        Returns:
            The skill at its new version.

        Raises:
            SkillNotFoundError: No skill has that id or name.
        """
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
        ``min_success_rate`` over at least ``min_evidence`` labelled uses, unless the skill's
        measured effect (:meth:`measured_effects`) says it helps; and, over a cap of
        ``max_active``, the least useful, in the order an evolution round's bank budget retires
        them (:func:`skillbank.prune.least_useful_first`), skills measured as helping last.
        :meth:`prune_plan` also says which skills a rule matched but their effect kept.

        Args:
            unused_days: Retire skills not used for this many days; ``None``: no such rule.
            min_success_rate: Retire skills whose success rate is below this (0 to 1); ``None``:
                no such rule.
            min_evidence: Labelled uses a success rate needs before it counts.
            max_active: Retire the least useful skills over this many active ones (pinned
                skills count); ``None``: no cap.
            dry_run: Return the plan and write nothing.
            now: The time ``unused_days`` counts back from; ``None``: now (UTC).

        Returns:
            The skills retired (or, dry, that would be), one action each with its rule.
        """
        plan = self.prune_plan(unused_days=unused_days, min_success_rate=min_success_rate,
                               min_evidence=min_evidence, max_active=max_active, now=now)
        if not dry_run:
            self.apply_prune(plan)
        return plan.retire

    def prune_plan(self, *, unused_days: float | None = None, min_success_rate: float | None = None,
                   min_evidence: int = 5, max_active: int | None = None,
                   now: datetime | None = None) -> PrunePlan:
        """What :meth:`prune` would retire and what it would spare, each with its measured effect;
        reads only. Pinned skills are never retired.

        Args:
            unused_days: Retire skills not used for this many days; ``None``: no such rule.
            min_success_rate: Retire skills whose success rate is below this (0 to 1); ``None``:
                no such rule.
            min_evidence: Labelled uses a success rate needs before it counts.
            max_active: Retire the least useful skills over this many active ones (pinned
                skills count); ``None``: no cap.
            now: The time ``unused_days`` counts back from; ``None``: now (UTC).

        Returns:
            The plan: ``retire``, the skills to retire, and ``spared``, those a rule matched but
            their measured effect kept, one action each with its rule.
        """
        active = [s for s in self.skills.list(status=SkillStatus.active) if not s.pinned]
        return plan_prune(active, pinned=self.skills.count(SkillStatus.active) - len(active),
                          now=now or utcnow(), unused_days=unused_days, min_success_rate=min_success_rate,
                          min_evidence=min_evidence, max_active=max_active,
                          effects=self.measured_effects(active))

    def apply_prune(self, plan: PrunePlan) -> None:
        """Retire every skill ``plan`` retires, in one transaction, each with its rule as reason.

        Args:
            plan: A plan from :meth:`prune_plan`.

        Raises:
            SkillNotFoundError: A skill of the plan is gone (nothing is retired).
        """
        with self.transaction():
            for action in plan.retire:
                self.retire(action.skill_id, reason=f"prune ({action.rule}): {action.detail}", author="prune")

    def measured_effects(self, skills: Sequence[Skill]) -> dict[str, MeasuredEffect]:
        """Each of ``skills``' measured effect on success, by skill id (skills never measured are
        left out): the live effect first (its runs shown against its runs held back, when the
        anytime-valid interval excludes zero), else the gate's, from its records.

        Args:
            skills: The skills to look up.

        Returns:
            The measured effect of each skill that has one, by skill id.
        """
        return measured_effects(skills, [self._live_effects, gate_effects(self.gate_records)])

    def _live_effects(self, skills: Sequence[Skill]) -> dict[str, MeasuredEffect]:
        """The live effect of each of ``skills`` whose interval excludes zero (its estimate)."""
        wanted = {s.id for s in skills}
        report = self.monitor()
        found: dict[str, MeasuredEffect] = {}
        for entry in report.skills:
            interval = entry.tally.overall.interval(report.alpha)
            if entry.skill.id in wanted and interval.estimate is not None and interval.excludes_zero():
                found[entry.skill.id] = MeasuredEffect(EffectKind.live, interval.estimate, version=entry.skill.version)
        return found

    # -- retrieval ---------------------------------------------------------------------------

    def search_filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]:
        """What :meth:`search` and :meth:`search_vector` run: the top ``k`` skills for an embedded
        query under ``filters``.

        Args:
            vector: The embedded query (normalised).
            k: Skills returned at most.
            filters: What a hit must satisfy (kinds, tags, tools, score, budget, exclusions).

        Returns:
            The hits, best first; empty for ``k <= 0``.

        Raises:
            ValueError: ``filters.kinds`` names an unknown kind.
        """
        return self._search.filtered(vector, k, filters)

    def general_skills(self) -> list[Skill]:
        """Active skills tagged ``general`` (lessons generalised across tools), most useful
        first: the injector adds them to every turn instead of retrieving them.

        Returns:
            The general skills, most useful first.
        """
        return self._search.general_skills()

    def render(self, hits: Sequence[SkillHit | Skill], token_budget: int | None = None) -> str:
        """The block a model is given for these skills, as the injector renders it.

        Args:
            hits: Skills or search hits, in rank order.
            token_budget: The block's cap in tokens; a skill that would overflow it is skipped
                (smaller ones after it may still fit); ``None``: no cap.

        Returns:
            The block's text; empty when there is nothing to render.
        """
        return retrieval.render(hits, token_budget=token_budget)

    def sync_index(self, *, full: bool = False) -> dict[str, int]:
        """Bring the index in step with the store (:meth:`IndexSync.sync <skillbank.store._sync.IndexSync.sync>`);
        a damaged index is rebuilt from the store, with a warning.

        Args:
            full: Compare every index entry with the active skills (repairs anything) instead of
                reading only the changes since the last sync.

        Returns:
            Counts of the index entries written (``upserted``) and removed (``deleted``); after a
            rebuild, also ``rebuilt_rows`` and ``dropped_vectors`` when any were repaired.
        """
        return self._indexing.sync(full=full)

    def reindex(self) -> dict[str, int]:
        """Rebuild the caches from the versions, delete the index and rebuild it from the store;
        always works, damaged files or rows or not.

        Returns:
            Counts of the index entries written (``upserted``) and removed (``deleted``), and,
            when any were repaired, ``rebuilt_rows`` and ``dropped_vectors``.
        """
        return self._indexing.reindex()

    # -- integrity ---------------------------------------------------------------------------

    def verify(self, *, check_index: bool = True) -> VerifyReport:
        """Check the history chain and versions, the caches derived from them (each skill's
        current row, the cached vectors) and that the index matches the active set; also runs
        the database's own integrity check.

        Args:
            check_index: Also check the index (which may sync it) and look for missing cached
                vectors; ``False`` leaves the embedder unresolved.

        Returns:
            The events and versions checked and the problems found (``ok`` when there are none).
        """
        report = verify_history(self.store)
        report.problems.extend(f"database: {p}" for p in self.store.integrity_check())
        # The caches first: the index's check may sync, which embeds damaged vectors again.
        # Without the index, the bank's embedder is not resolved (no missing vectors looked for).
        report.problems.extend(self._indexing.cache_problems(with_embedder=check_index))
        if check_index:
            report.problems.extend(self._indexing.problems())
        return report

    def snapshot_id(self) -> str:
        """Identity of the active bank.

        Returns:
            A hash over every active skill's id and content hash: equal for banks whose active
            skills are the same.
        """
        return self.skills.snapshot_id()

    # -- trajectories ------------------------------------------------------------------------

    def solved_requests(self, limit: int = 200) -> list[SolvedRequest]:
        """The requests of the newest ``limit`` recorded runs that succeeded, each with whether
        it called a tool (see :class:`~skillbank.protocols.SolvedRequests`).

        Args:
            limit: The newest recorded runs read at most.

        Returns:
            The solved requests, one per successful run.
        """
        return self.trajectories.solved_requests(limit)

    def record_outcome(
        self,
        trajectory_id: str,
        success: bool | None = None,
        score: float | None = None,
        note: str | None = None,
        source: str = "manual",
    ) -> None:
        """Label a recorded run; a relabel replaces the old label in the skills' statistics.

        Args:
            trajectory_id: The run's id (``tr_...``).
            success: Whether it succeeded; ``None``: decided by ``score`` (at least 0.5).
            score: A score in [0, 1]; ``None``: none.
            note: Free text stored with the label.
            source: Who labels it (``manual``, ``verifier``, ``judge``, ...).

        Raises:
            InvalidSkillError: Neither ``success`` nor ``score`` given.
            TrajectoryNotFoundError: No run has that id.
        """
        if success is None and score is None:
            raise InvalidSkillError("record_outcome needs success=True/False or a score")
        if success is None and score is not None:
            success = score >= 0.5
        self.trajectories.record_outcome(
            trajectory_id, Outcome(success=success, score=score, note=note, source=source)
        )

    def monitor(self, config: LiveConfig | None = None, *, apply: bool = False,
                kind_of: KindOf = task_type_kind, lock_timeout: float | None = 10.0) -> MonitorReport:
        """Every randomized skill's live effect and the live monitor's decision on it; ``apply``
        writes the decisions as versions by ``monitor`` (see :mod:`skillbank.live._monitor`).

        Args:
            config: The monitor's thresholds; ``None``: the defaults of :class:`LiveConfig`.
            apply: Write the decisions as new versions, under the bank's monitor lock.
            kind_of: Names each run's kind of request from its task text and task type.
            lock_timeout: With ``apply``, seconds to wait for the monitor lock; ``None``: wait
                as long as it takes.

        Returns:
            Each randomized (or canary) active skill's tally and decision, with whether it was
            applied.

        Raises:
            LockedError: With ``apply``, another process held the monitor lock past ``lock_timeout``.
        """
        return monitor(self, config, apply=apply, kind_of=kind_of, lock_timeout=lock_timeout)

    # -- interop -----------------------------------------------------------------------------

    def export_skills(self, directory: str | Path, status: SkillStatus | str = SkillStatus.active) -> list[Path]:
        """Write each skill with ``status`` as an Agent Skills folder, ``<directory>/<name>/SKILL.md``.

        Args:
            directory: Where the folders go (created as needed); an existing SKILL.md of the
                same name is replaced, other files are left alone.
            status: Which skills to export.

        Returns:
            The SKILL.md paths written, in order.

        Raises:
            SkillFileError: Two skills share a name (nothing is written).
        """
        return export_skills(self.skills.list(status=status), Path(directory))

    def import_skills(self, directory: str | Path, *, author: str = "import",
                      allow_unsafe: bool = False, trusted: bool = False) -> ImportReport:
        """Import SKILL.md folders; every file is validated first and nothing is written if any fails.

        Returns what each file did (:class:`~skillbank._intake.ImportReport`; iterating it yields
        the skills written). A file whose skill the bank already holds with the same content
        writes nothing, so an export imported back into a copy of its bank leaves it as it was.
        A changed file of an active skill, not trusted, waits as that skill's pending next
        version (``skillbank candidates list``) while the active version stays injected.

        Text from a file is not trusted: a skill its file marks ``active`` (or leaves unmarked)
        arrives as a ``candidate``, never injected until a person promotes it (``skillbank
        candidates promote NAME``); ``trusted=True`` keeps the file's status. A skill whose text
        the screen flags arrives quarantined either way (see :meth:`add_skill`);
        ``allow_unsafe=True`` imports it with the status it would otherwise get. Each version
        records the file it came from as its source (:mod:`skillbank._provenance`).

        Args:
            directory: A folder of SKILL.md folders.
            author: Who imports, recorded on each version.
            allow_unsafe: Give skills the screen flags the status they would otherwise get.
            trusted: Keep each file's status (else an active one arrives as a candidate).

        Returns:
            What each file did.

        Raises:
            SkillFileError: A file is invalid, or two share a name or id; its ``problems`` say
                which and why, and nothing is written.
        """
        return import_skill_files(self.store, self.skills, Path(directory), scrubber=self.scrubber,
                                  screen=self.screen, author=author, allow_unsafe=allow_unsafe, trusted=trusted)

    # -- overview ----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """An overview of the bank, as ``skillbank stats`` prints it.

        Returns:
            ``path``; ``skills`` (``total`` and a count per status); ``proposed_edits`` (rows of
            the total that hold pending edits of other skills); ``active_by_kind``;
            ``trajectories`` and ``limit_events`` (totals); ``history_events`` (the change
            log's last position); ``snapshot`` (the snapshot id).
        """
        by_status = self.skills.count_by("status")
        return {
            "path": self.location,
            "skills": {"total": sum(by_status.values()), **by_status},
            # Rows of the total that hold proposed edits of another skill (``skills list`` shows
            # them apart, labelled), so the two counts can be told apart and agree.
            "proposed_edits": len(self.drafts.draft_ids()),
            "active_by_kind": self.skills.count_by("kind", status=SkillStatus.active),
            "trajectories": self.trajectories.totals(),
            "limit_events": self.trajectories.limit_counts(),
            "history_events": self.skills.last_event_seq(),
            "snapshot": self.snapshot_id(),
        }
