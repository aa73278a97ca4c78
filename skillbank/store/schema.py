"""Named, append-only migrations, one list per backend. Never edit a released migration.

To change the schema, add a migration with the same new name to *both* lists below (the
conformance tests check the two name sets are equal): an ``@migrations(name=...)`` function for
SQLite (sqlite-utils records it in ``_sqlite_migrations``) and a ``(name, sql)`` entry in
``POSTGRES_MIGRATIONS`` (recorded in ``skillbank_migrations``). A new skill content field, for
example, is one ``ALTER TABLE skills ADD COLUMN`` plus one for ``skill_versions`` in each list,
and the field's name in ``skills.CONTENT_COLUMNS``.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

MIGRATION_SET = "skillbank"
migrations = Migrations(MIGRATION_SET)


@migrations(name="0001_initial")
def _initial(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE IF NOT EXISTS skills (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            description TEXT NOT NULL,
            body TEXT NOT NULL,
            kind TEXT NOT NULL,
            tools TEXT NOT NULL,
            tags TEXT NOT NULL,
            status TEXT NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            version INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            note TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0,
            successes INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            last_used_at TEXT
        );
        CREATE INDEX IF NOT EXISTS skills_status ON skills(status);

        CREATE TABLE IF NOT EXISTS skill_versions (
            skill_id TEXT NOT NULL REFERENCES skills(id),
            version INTEGER NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            body TEXT NOT NULL,
            kind TEXT NOT NULL,
            tools TEXT NOT NULL,
            tags TEXT NOT NULL,
            status TEXT NOT NULL,
            pinned INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            parent_hash TEXT,
            author TEXT NOT NULL,
            reason TEXT NOT NULL,
            provenance TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (skill_id, version)
        );

        -- The tamper-evident change log: each event's hash covers the previous event's hash.
        CREATE TABLE IF NOT EXISTS events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            ts TEXT NOT NULL,
            action TEXT NOT NULL,
            skill_id TEXT,
            version INTEGER,
            payload TEXT NOT NULL,
            prev_hash TEXT,
            hash TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS events_skill ON events(skill_id);

        -- Embeddings cached by content hash so the index can be rebuilt without the model.
        CREATE TABLE IF NOT EXISTS embeddings (
            content_hash TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (content_hash, embedder)
        );

        -- Rejected or rolled-back edits, so evolution does not propose them again.
        CREATE TABLE IF NOT EXISTS rejected_edits (
            content_hash TEXT PRIMARY KEY,
            skill_id TEXT,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL
        );

        CREATE TABLE IF NOT EXISTS trajectories (
            id TEXT PRIMARY KEY,
            task TEXT NOT NULL,
            task_id TEXT,
            task_type TEXT,
            labels TEXT NOT NULL,
            model TEXT,
            bank_snapshot TEXT,
            status TEXT NOT NULL,
            error TEXT,
            final_answer TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            success INTEGER,
            score REAL,
            outcome TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            n_steps INTEGER NOT NULL DEFAULT 0,
            consumed_round INTEGER
        );
        CREATE INDEX IF NOT EXISTS trajectories_started ON trajectories(started_at);
        CREATE INDEX IF NOT EXISTS trajectories_consumed ON trajectories(consumed_round, success);

        CREATE TABLE IF NOT EXISTS steps (
            trajectory_id TEXT NOT NULL REFERENCES trajectories(id),
            idx INTEGER NOT NULL,
            kind TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (trajectory_id, idx)
        );

        CREATE TABLE IF NOT EXISTS limit_events (
            trajectory_id TEXT NOT NULL REFERENCES trajectories(id),
            type TEXT NOT NULL,
            category TEXT NOT NULL,
            step INTEGER NOT NULL,
            detail TEXT NOT NULL,
            tool TEXT,
            data TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS limit_events_traj ON limit_events(trajectory_id);

        CREATE TABLE IF NOT EXISTS injections (
            trajectory_id TEXT NOT NULL REFERENCES trajectories(id),
            step INTEGER NOT NULL,
            skill_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            rank INTEGER NOT NULL,
            score REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS injections_traj ON injections(trajectory_id);
        CREATE INDEX IF NOT EXISTS injections_skill ON injections(skill_id);
        """
    )


# Every migration this release knows, read through the public API (all are pending on an empty db).
KNOWN_MIGRATIONS = frozenset(m.name for m in migrations.pending(Database(memory=True)))


# -- PostgreSQL ----------------------------------------------------------------------------------
# The same tables and columns; types where SQLite's are loose (BIGINT, DOUBLE PRECISION, BYTEA).
# Timestamps and JSON stay ISO / JSON text, so one row reader serves both backends.

POSTGRES_MIGRATIONS: list[tuple[str, str]] = [
    ("0001_initial", """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE IF NOT EXISTS skills (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            description TEXT NOT NULL,
            body TEXT NOT NULL,
            kind TEXT NOT NULL,
            tools TEXT NOT NULL,
            tags TEXT NOT NULL,
            status TEXT NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            version INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            note TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0,
            successes INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            last_used_at TEXT
        );
        CREATE INDEX IF NOT EXISTS skills_status ON skills(status);

        CREATE TABLE IF NOT EXISTS skill_versions (
            skill_id TEXT NOT NULL REFERENCES skills(id),
            version INTEGER NOT NULL,
            name TEXT NOT NULL,
            description TEXT NOT NULL,
            body TEXT NOT NULL,
            kind TEXT NOT NULL,
            tools TEXT NOT NULL,
            tags TEXT NOT NULL,
            status TEXT NOT NULL,
            pinned INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            parent_hash TEXT,
            author TEXT NOT NULL,
            reason TEXT NOT NULL,
            provenance TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (skill_id, version)
        );

        CREATE TABLE IF NOT EXISTS events (
            seq BIGINT PRIMARY KEY,
            ts TEXT NOT NULL,
            action TEXT NOT NULL,
            skill_id TEXT,
            version INTEGER,
            payload TEXT NOT NULL,
            prev_hash TEXT,
            hash TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS events_skill ON events(skill_id);

        CREATE TABLE IF NOT EXISTS embeddings (
            content_hash TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector BYTEA NOT NULL,
            PRIMARY KEY (content_hash, embedder)
        );

        CREATE TABLE IF NOT EXISTS rejected_edits (
            content_hash TEXT PRIMARY KEY,
            skill_id TEXT,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL
        );

        CREATE TABLE IF NOT EXISTS trajectories (
            id TEXT PRIMARY KEY,
            task TEXT NOT NULL,
            task_id TEXT,
            task_type TEXT,
            labels TEXT NOT NULL,
            model TEXT,
            bank_snapshot TEXT,
            status TEXT NOT NULL,
            error TEXT,
            final_answer TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            success INTEGER,
            score DOUBLE PRECISION,
            outcome TEXT,
            input_tokens BIGINT NOT NULL DEFAULT 0,
            output_tokens BIGINT NOT NULL DEFAULT 0,
            n_steps INTEGER NOT NULL DEFAULT 0,
            consumed_round INTEGER
        );
        CREATE INDEX IF NOT EXISTS trajectories_started ON trajectories(started_at);
        CREATE INDEX IF NOT EXISTS trajectories_consumed ON trajectories(consumed_round, success);

        CREATE TABLE IF NOT EXISTS steps (
            trajectory_id TEXT NOT NULL REFERENCES trajectories(id),
            idx INTEGER NOT NULL,
            kind TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (trajectory_id, idx)
        );

        -- rowid: insertion order, named like SQLite's implicit column so one query reads both.
        CREATE TABLE IF NOT EXISTS limit_events (
            rowid BIGSERIAL PRIMARY KEY,
            trajectory_id TEXT NOT NULL REFERENCES trajectories(id),
            type TEXT NOT NULL,
            category TEXT NOT NULL,
            step INTEGER NOT NULL,
            detail TEXT NOT NULL,
            tool TEXT,
            data TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS limit_events_traj ON limit_events(trajectory_id);

        CREATE TABLE IF NOT EXISTS injections (
            trajectory_id TEXT NOT NULL REFERENCES trajectories(id),
            step INTEGER NOT NULL,
            skill_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            rank INTEGER NOT NULL,
            score DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX IF NOT EXISTS injections_traj ON injections(trajectory_id);
        CREATE INDEX IF NOT EXISTS injections_skill ON injections(skill_id);
    """),
]
