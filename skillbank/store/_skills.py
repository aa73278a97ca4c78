"""Skills, their immutable versions and the hash-chained change log.

Every write goes through :meth:`SkillRepo._append`, which in one immediate transaction inserts
the version row, updates the skill's current row and appends a change-log event whose hash
covers the previous event's hash. Nothing here ever updates or deletes a version or an event.
"""

from __future__ import annotations

import builtins
import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Iterator, Mapping, Sequence

from skillbank.errors import DuplicateSkillError, SkillNotFoundError, VersionNotFoundError
from skillbank._hashing import content_hash
from skillbank._lru import LRU
from skillbank.models import (
    Skill,
    SkillContent,
    SkillStats,
    SkillStatus,
    SkillVersion,
    new_id,
    utcnow,
)
from skillbank.store._base import Store

log = logging.getLogger("skillbank")

_CONTENT_COLUMNS = ("name", "description", "body", "kind", "tools", "tags", "lessons", "toolset")
_JSON_COLUMNS = ("tools", "tags", "lessons", "toolset")
#: The change-log action of an acknowledgement (:meth:`SkillRepo.acknowledge`): an event that
#: names a skill and, in its payload, the version seen; it writes no version.
ACKNOWLEDGE = "acknowledge"


def _content_row(content: SkillContent) -> dict[str, Any]:
    data = content.model_dump(mode="json")
    for key in _JSON_COLUMNS:
        data[key] = json.dumps(data[key])
    return data


# Parsed contents by their stored text. Validating a SkillContent (its lessons above all) costs
# far more than reading the row, and a search reads dozens of rows per model turn. The key is
# the row's own text, so a changed row is parsed afresh; contents are frozen, so sharing is safe.
_PARSED: LRU[tuple[Any, ...], SkillContent] = LRU(4096)
# Damaged current rows already warned about (location, id, state): one warning per damage.
_WARNED: set[tuple[Any, ...]] = set()


def _content_from_row(row: dict[str, Any]) -> SkillContent:
    key = tuple(row[k] for k in _CONTENT_COLUMNS)
    content = _PARSED.get(key)
    if content is None:
        content = SkillContent.stored({k: json.loads(row[k]) if k in _JSON_COLUMNS else row[k]
                                       for k in _CONTENT_COLUMNS})
        _PARSED.put(key, content)
    return content


# The columns that tell one state of a skill from another: its content is fixed by its version
# and hash; status, note and usage counts change without a new version.
_STATE_COLUMNS = ("id", "version", "content_hash", "status", "pinned", "note", "created_at", "updated_at",
                  "uses", "successes", "failures", "last_used_at")
_STATE_SELECT = ", ".join(_STATE_COLUMNS)


def _state(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row[k] for k in _STATE_COLUMNS)


def skill_from_row(row: dict[str, Any]) -> Skill:
    return Skill(
        id=row["id"],
        content=_content_from_row(row),
        status=row["status"],
        pinned=bool(row["pinned"]),
        version=row["version"],
        content_hash=row["content_hash"],
        note=row["note"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        stats=SkillStats(
            uses=row["uses"],
            successes=row["successes"],
            failures=row["failures"],
            last_used_at=row["last_used_at"],
        ),
    )


def _stats(row: dict[str, Any]) -> SkillStats:
    try:
        return SkillStats(uses=row["uses"], successes=row["successes"], failures=row["failures"],
                          last_used_at=row["last_used_at"])
    except (ValueError, TypeError):  # counters are statistics: a damaged one restarts at zero
        return SkillStats()


def skill_from_version(version: dict[str, Any], current: dict[str, Any]) -> Skill:
    """The skill as its latest ``version`` row says, with what only the ``current`` row holds
    (note, dates, usage) kept where readable: how a damaged current row is read."""
    def field(key: str, default: Any) -> Any:
        value = current.get(key)
        return value if isinstance(value, type(default)) else default

    return Skill(
        id=version["skill_id"],
        content=_content_from_row(version),
        status=version["status"],
        pinned=bool(version["pinned"]),
        version=version["version"],
        content_hash=version["content_hash"],
        note=current.get("note") if isinstance(current.get("note"), str) else None,
        created_at=field("created_at", version["created_at"]),
        updated_at=field("updated_at", version["created_at"]),
        stats=_stats(current),
    )


def version_from_row(row: dict[str, Any]) -> SkillVersion:
    return SkillVersion(
        skill_id=row["skill_id"],
        version=row["version"],
        content=_content_from_row(row),
        status=row["status"],
        pinned=bool(row["pinned"]),
        content_hash=row["content_hash"],
        parent_hash=row["parent_hash"],
        author=row["author"],
        reason=row["reason"],
        provenance=tuple(json.loads(row["provenance"])),
        created_at=row["created_at"],
    )


def event_hash(event: dict[str, Any]) -> str:
    """The hash of one change-log event, over every field but the hash itself."""
    return content_hash({k: event[k] for k in ("seq", "ts", "action", "skill_id", "version", "payload", "prev_hash")})


@dataclass(frozen=True)
class VersionStamp:
    """One version's name, status, author, reason and time, without its content: what a round's
    report lists."""

    skill_id: str
    version: int
    name: str
    status: str
    author: str
    reason: str
    created_at: str


class SkillRepo:
    def __init__(self, store: Store):
        self.store = store
        # Skills built from rows, by the row's state: a search reads ~20-40 skills per model
        # turn, and reading their state alone then building only the changed ones is several
        # times cheaper than reading and building every row (Skill is frozen, so sharing is safe).
        self._built: LRU[tuple[Any, ...], Skill] = LRU(4096)

    def forget_built(self) -> None:
        """Drop the skills built so far (after their rows were rebuilt underneath)."""
        self._built.clear()

    # -- reads ---------------------------------------------------------------------------------

    def _build(self, row: dict[str, Any]) -> Skill:
        """The skill of a current row; a row that cannot be read (it is derived data: its
        versions are the truth) is read from its latest version, with a warning."""
        try:
            return skill_from_row(row)
        except (ValueError, TypeError, KeyError) as exc:
            latest = self.store.query_one(
                "SELECT * FROM skill_versions WHERE skill_id = ? ORDER BY version DESC LIMIT 1", (row["id"],))
            if latest is None:
                raise
            key = (self.store.location, row["id"], _state(row))
            if key not in _WARNED:
                _WARNED.add(key)
                reason = " ".join(str(exc).split())[:120]
                log.warning("skill %s: its current row in %s is unreadable (%s); serving its latest "
                            "version (v%s) instead. `skillbank reindex` rebuilds the row from its versions.",
                            row["id"], self.store.location, reason, latest["version"])
            return skill_from_version(latest, row)

    def get(self, id_or_name: str) -> Skill:
        # Two lookups, not "id = ? OR name = ?": PostgreSQL may plan an OR as a full scan when
        # its statistics lag (inside a long transaction they always do), costing O(n) a call.
        row = self.store.query_one("SELECT * FROM skills WHERE id = ?", (id_or_name,)) or \
            self.store.query_one("SELECT * FROM skills WHERE name = ?", (id_or_name,))
        if row is None:
            raise SkillNotFoundError(
                f"no skill with id or name {id_or_name!r}; list them with `skillbank skills list`"
            )
        return self._build(row)

    def get_many(self, ids: Iterable[str]) -> dict[str, Skill]:
        """The current skills of ``ids`` that exist, by id."""
        out: dict[str, Skill] = {}
        unbuilt = []
        for row in self._rows(_STATE_SELECT, list(dict.fromkeys(ids))):
            skill = self._built.get(_state(row))
            if skill is None:
                unbuilt.append(row["id"])
            else:
                out[row["id"]] = skill
        # A row that changed between the two reads is built as it is now, under its new state.
        for row in self._rows("*", unbuilt):
            out[row["id"]] = skill = self._build(row)
            self._built.put(_state(row), skill)
        return out

    def _rows(self, columns: str, ids: list[str]) -> Iterator[dict[str, Any]]:
        for start in range(0, len(ids), 500):  # stay under SQLite's variable limit
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            yield from self.store.query(f"SELECT {columns} FROM skills WHERE id IN ({marks})", chunk)

    def list(
        self,
        status: SkillStatus | str | None = None,
        kind: str | None = None,
        tag: str | None = None,
    ) -> list[Skill]:
        where, params = self._where(status, kind, tag)
        try:
            rows = self.store.query(f"SELECT * FROM skills WHERE {where} ORDER BY name", params)
        except Exception:
            if tag is None:
                raise
            # A current row whose tags are not JSON makes the database's JSON functions fail:
            # filter the skills as built instead (a damaged row is built from its version).
            skills = self.list(status=status, kind=kind)
            return [s for s in skills if tag.lower() in s.tags]
        return [self._build(r) for r in rows]

    def _where(self, status: SkillStatus | str | None, kind: str | None, tag: str | None,
               hide_drafts: bool = False) -> tuple[str, builtins.list[Any]]:
        clauses, params = ["1=1"], []
        if status is not None:
            clauses.append("status = ?")
            params.append(SkillStatus(status).value)
        if kind is not None:
            clauses.append("kind = ?")
            params.append(kind)
        if tag is not None:
            # In SQL, so a tag shared by a few skills is found without building every skill.
            clauses.append(self.store.sql.json_has_element("skills.tags"))
            params.append(tag.lower())
        if hide_drafts:
            # A subquery, not a list of ids: drafts accumulate, and a list would outgrow
            # SQLite's variable limit.
            clauses.append("id NOT IN (SELECT draft_id FROM drafts)")
        return " AND ".join(clauses), params

    # The orders a page of skills can take; name breaks ties so pages never overlap.
    PAGE_ORDERS = {
        "name": "name",
        "updated": "updated_at DESC, name",
        "uses": "uses DESC, name",
        "success": "CASE WHEN successes + failures = 0 THEN -1.0 "
                   "ELSE successes * 1.0 / (successes + failures) END DESC, name",
    }

    def page(self, *, status: SkillStatus | str | None = None, kind: str | None = None,
             tag: str | None = None, hide_drafts: bool = False, order: str = "name",
             offset: int = 0, limit: int = 50) -> tuple[builtins.list[Skill], int]:
        """One page of the filtered skills in ``order`` and how many match in all: two queries,
        whatever the bank's size. ``hide_drafts``: leave out the rows evolution keeps for draft
        edits (as :meth:`SkillBank.list_skills` does). A page past the end is empty."""
        if order not in self.PAGE_ORDERS:
            raise ValueError(f"order must be one of {', '.join(self.PAGE_ORDERS)}; got {order!r}")
        if offset < 0 or limit < 1:
            raise ValueError(f"offset must be >= 0 and limit >= 1; got offset={offset}, limit={limit}")
        where, params = self._where(status, kind, tag, hide_drafts)
        row = self.store.query_one(f"SELECT count(*) AS n FROM skills WHERE {where}", params)
        total = row["n"] if row else 0
        rows = self.store.query(f"SELECT * FROM skills WHERE {where} ORDER BY {self.PAGE_ORDERS[order]} "
                                f"LIMIT {int(limit)} OFFSET {int(offset)}", params)
        return [self._build(r) for r in rows], total

    def count(self, status: SkillStatus | str | None = None) -> int:
        if status is None:
            row = self.store.query_one("SELECT count(*) AS n FROM skills")
        else:
            row = self.store.query_one(
                "SELECT count(*) AS n FROM skills WHERE status = ?", (SkillStatus(status).value,)
            )
        return row["n"] if row else 0

    def count_by(self, column: str, status: SkillStatus | str | None = None) -> dict[str, int]:
        """Skills per ``status`` or ``kind`` (of one status, if given)."""
        if column not in ("status", "kind"):
            raise ValueError(f"cannot count skills by {column!r}")
        where, params = ("", ()) if status is None else (" WHERE status = ?", (SkillStatus(status).value,))
        rows = self.store.query(f"SELECT {column} AS value, count(*) AS n FROM skills{where} GROUP BY {column}",
                                params)
        return {r["value"]: r["n"] for r in rows}

    def history(self, skill_id: str) -> builtins.list[SkillVersion]:
        skill = self.get(skill_id)
        rows = self.store.query(
            "SELECT * FROM skill_versions WHERE skill_id = ? ORDER BY version", (skill.id,)
        )
        return [version_from_row(r) for r in rows]

    def version(self, skill_id: str, version: int) -> SkillVersion:
        skill = self.get(skill_id)
        row = self.store.query_one(
            "SELECT * FROM skill_versions WHERE skill_id = ? AND version = ?", (skill.id, version)
        )
        if row is None:
            raise VersionNotFoundError(
                f"skill {skill.name!r} has versions 1..{skill.version}; there is no version {version}"
            )
        return version_from_row(row)

    def stamps(self, *, author_prefix: str, authors: Sequence[str] = ()) -> builtins.list[VersionStamp]:
        """Who wrote each version whose author starts with ``author_prefix`` (a plain word: no
        ``%`` or ``_``) or is one of ``authors``, when and why, oldest first; no content is read."""
        marks = ", ".join("?" * len(authors))
        rows = self.store.query(
            "SELECT skill_id, version, name, status, author, reason, created_at FROM skill_versions"
            f" WHERE author LIKE ?{f' OR author IN ({marks})' if authors else ''} ORDER BY created_at",
            (author_prefix + "%", *authors))
        return [VersionStamp(r["skill_id"], r["version"], r["name"], r["status"], r["author"], r["reason"] or "",
                             str(r["created_at"])) for r in rows]

    def last_event_seq(self) -> int:
        row = self.store.query_one("SELECT max(seq) AS seq FROM events")
        return (row or {}).get("seq") or 0

    def events_since(self, seq: int) -> builtins.list[dict[str, Any]]:
        return self.store.query("SELECT * FROM events WHERE seq > ? ORDER BY seq", (seq,))

    def snapshot_id(self) -> str:
        """Identity of the active bank: a hash over every active skill's id and content hash."""
        rows = self.store.query(
            "SELECT id, content_hash FROM skills WHERE status = 'active' ORDER BY id"
        )
        return content_hash([[r["id"], r["content_hash"]] for r in rows])

    # -- writes --------------------------------------------------------------------------------

    def create(
        self,
        content: SkillContent,
        *,
        status: SkillStatus = SkillStatus.active,
        pinned: bool = False,
        author: str = "human",
        reason: str = "created",
        provenance: Iterable[str] = (),
        note: str | None = None,
        skill_id: str | None = None,
    ) -> Skill:
        skill_id = skill_id or new_id("sk")
        with self.store.transaction() as conn:
            self.store.serialize_changes(conn)
            clash = conn.execute("SELECT id FROM skills WHERE name = ?", (content.name,)).fetchone()
            if clash:
                raise DuplicateSkillError(
                    f"a skill named {content.name!r} already exists ({clash[0]}); "
                    "update it instead, or choose another name"
                )
            now = utcnow().isoformat()
            conn.execute(
                "INSERT INTO skills (id, name, description, body, kind, tools, tags, lessons, toolset,"
                " status, pinned, version, content_hash, note, created_at, updated_at)"
                " VALUES (:id, :name, :description, :body, :kind, :tools, :tags, :lessons, :toolset,"
                " :status, :pinned, 0, '', :note, :now, :now)",
                {**_content_row(content), "id": skill_id, "status": status.value,
                 "pinned": int(pinned), "note": note, "now": now},
            )
            self._append(conn, skill_id, content, SkillStatus(status), pinned, author, reason,
                         provenance, note, action="create")
        return self.get(skill_id)

    def new_version(
        self,
        skill_id: str,
        *,
        content: SkillContent | None = None,
        status: SkillStatus | str | None = None,
        pinned: bool | None = None,
        author: str = "human",
        reason: str,
        provenance: Iterable[str] = (),
        note: str | None = None,
        action: str = "update",
        evidence: Mapping[str, Any] | None = None,
    ) -> Skill:
        """Append a version that changes any of content, status or pinned. A no-op writes nothing.

        ``evidence``, a JSON object, is what the change rests on (the live monitor's reading): it
        is kept in the version's change-log event, hash-chained with it, and read back by
        :meth:`recorded_evidence`."""
        with self.store.transaction() as conn:
            self.store.serialize_changes(conn)
            current = self.get(skill_id)
            content = content or current.content
            status = SkillStatus(status) if status is not None else current.status
            pinned = current.pinned if pinned is None else pinned
            if (content.hash(), status, pinned) == (current.content_hash, current.status, current.pinned):
                return current
            if content.name != current.name:
                clash = conn.execute(
                    "SELECT id FROM skills WHERE name = ? AND id != ?", (content.name, current.id)
                ).fetchone()
                if clash:
                    raise DuplicateSkillError(f"a skill named {content.name!r} already exists ({clash[0]})")
            self._append(conn, current.id, content, status, pinned, author, reason, provenance,
                         note, action=action, evidence=evidence)
        return self.get(current.id)

    def rollback(self, skill_id: str, to_version: int, *, reason: str | None = None,
                 author: str = "human") -> Skill:
        """Append a version equal in content to ``to_version``; the rolled-back edit is remembered."""
        target = self.version(skill_id, to_version)
        current = self.get(skill_id)
        if current.content_hash != target.content_hash:
            self.remember_rejected(current.content_hash, current.id, f"rolled back to v{to_version}")
        return self.new_version(current.id, content=target.content, author=author, action="rollback",
                                reason=reason or f"rollback to v{to_version}")

    def _append(
        self,
        conn: Any,
        skill_id: str,
        content: SkillContent,
        status: SkillStatus,
        pinned: bool,
        author: str,
        reason: str,
        provenance: Iterable[str],
        note: str | None,
        action: str,
        evidence: Mapping[str, Any] | None = None,
    ) -> None:
        row = conn.execute(
            "SELECT version, content_hash FROM skills WHERE id = ?", (skill_id,)
        ).fetchone()
        version, parent_hash = row[0] + 1, (row[1] or None)
        chash = content.hash()
        now = utcnow().isoformat()
        provenance = list(dict.fromkeys(provenance))
        conn.execute(
            "INSERT INTO skill_versions (skill_id, version, name, description, body, kind, tools,"
            " tags, lessons, toolset, status, pinned, content_hash, parent_hash, author, reason,"
            " provenance, created_at)"
            " VALUES (:skill_id, :version, :name, :description, :body, :kind, :tools, :tags,"
            " :lessons, :toolset, :status, :pinned, :content_hash, :parent_hash, :author, :reason,"
            " :provenance, :now)",
            {**_content_row(content), "skill_id": skill_id, "version": version,
             "status": status.value, "pinned": int(pinned), "content_hash": chash,
             "parent_hash": parent_hash, "author": author, "reason": reason,
             "provenance": json.dumps(provenance), "now": now},
        )
        conn.execute(
            "UPDATE skills SET name = :name, description = :description, body = :body,"
            " kind = :kind, tools = :tools, tags = :tags, lessons = :lessons, toolset = :toolset,"
            " status = :status, pinned = :pinned,"
            " version = :version, content_hash = :content_hash, note = :note, updated_at = :now"
            " WHERE id = :id",
            {**_content_row(content), "id": skill_id, "status": status.value,
             "pinned": int(pinned), "version": version, "content_hash": chash,
             "note": note, "now": now},
        )
        self._log(conn, action, skill_id, version, {
            "content_hash": chash, "parent_hash": parent_hash, "status": status.value,
            "pinned": pinned, "author": author, "reason": reason, "provenance": provenance,
            **({"evidence": dict(evidence)} if evidence is not None else {}),
        })

    def _log(self, conn: Any, action: str, skill_id: str | None, version: int | None,
             payload: dict[str, Any]) -> None:
        tip = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        event = {
            "seq": (tip[0] if tip else 0) + 1,
            "ts": utcnow().isoformat(),
            "action": action,
            "skill_id": skill_id,
            "version": version,
            "payload": json.dumps(payload, sort_keys=True),
            "prev_hash": tip[1] if tip else None,
        }
        event["hash"] = event_hash(event)
        conn.execute(
            "INSERT INTO events (seq, ts, action, skill_id, version, payload, prev_hash, hash)"
            " VALUES (:seq, :ts, :action, :skill_id, :version, :payload, :prev_hash, :hash)",
            event,
        )

    # -- acknowledgements: an event on the change log, no version -----------------------------------

    def acknowledge(self, skill_id: str, version: int, *, author: str, reason: str) -> None:
        """Record on the hash-chained change log that ``author`` saw version ``version`` of the
        skill (an :data:`ACKNOWLEDGE` event: the skill's content, status and versions are
        untouched, and :meth:`acknowledged` reads it back).

        Raises:
            SkillNotFoundError: no such skill.
            VersionNotFoundError: the skill has no version ``version``.
        """
        with self.store.transaction() as conn:
            self.store.serialize_changes(conn)
            skill = self.version(skill_id, version)
            self._log(conn, ACKNOWLEDGE, skill.skill_id, None,
                      {"version": version, "author": author, "reason": reason})

    def acknowledged(self, skill_ids: Iterable[str]) -> dict[str, set[int]]:
        """Per skill id of ``skill_ids``, the versions :meth:`acknowledge` recorded (skills with
        none are left out)."""
        ids = list(dict.fromkeys(skill_ids))
        found: dict[str, set[int]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = self.store.query(f"SELECT skill_id, payload FROM events WHERE action = ? AND skill_id IN"
                                    f" ({', '.join('?' * len(chunk))})", (ACKNOWLEDGE, *chunk))
            for r in rows:
                found.setdefault(r["skill_id"], set()).add(int(json.loads(r["payload"])["version"]))
        return found

    def recorded_evidence(self, skill_ids: Iterable[str]) -> dict[str, dict[int, dict[str, Any]]]:
        """Per skill id of ``skill_ids``, the evidence each version was written with
        (:meth:`new_version`'s ``evidence``), by version; versions written without any are left out."""
        ids = list(dict.fromkeys(skill_ids))
        found: dict[str, dict[int, dict[str, Any]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            # The LIKE only skips events that cannot hold evidence (most of a history); the
            # payload's JSON decides.
            rows = self.store.query(f"SELECT skill_id, version, payload FROM events WHERE version IS NOT NULL"
                                    f" AND payload LIKE ? AND skill_id IN ({', '.join('?' * len(chunk))})",
                                    ('%"evidence": {%', *chunk))
            for r in rows:
                evidence = json.loads(r["payload"]).get("evidence")
                if isinstance(evidence, dict):
                    found.setdefault(r["skill_id"], {})[int(r["version"])] = evidence
        return found

    def bump_usage(self, conn: Any, skill_ids: Iterable[str], used_at: datetime,
                   successes: int = 0, failures: int = 0, uses: int = 0) -> None:
        """Adjust usage counters (statistics, not content: no version, no event).

        The caller holds ``serialize_changes(conn, shared=True)``; rows are updated in id order
        so two counters' transactions always lock skills in the same order.
        """
        when = used_at.isoformat()
        for sid in sorted(set(skill_ids)):
            conn.execute(
                "UPDATE skills SET uses = uses + ?, successes = successes + ?,"
                " failures = failures + ?,"
                " last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ?"
                " ELSE last_used_at END"
                " WHERE id = ?",
                (uses, successes, failures, when, when, sid),
            )

    # -- rejected edits --------------------------------------------------------------------------

    def remember_rejected(self, chash: str, skill_id: str | None, reason: str) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO rejected_edits (content_hash, skill_id, reason, created_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (content_hash) DO UPDATE SET"
                " skill_id = excluded.skill_id, reason = excluded.reason, created_at = excluded.created_at",
                (chash, skill_id, reason, utcnow().isoformat()),
            )

    def was_rejected(self, chash: str) -> bool:
        return self.store.query_one(
            "SELECT 1 AS x FROM rejected_edits WHERE content_hash = ?", (chash,)
        ) is not None
