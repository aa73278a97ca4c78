"""Named, append-only migrations. Never edit a released migration: add a new one below it."""

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


@migrations(name="0002_lessons_and_toolset")
def _lessons(db: Database) -> None:
    # A version's structured lessons and the toolset it was learned with (JSON lists); empty
    # for versions written before, whose body is their one lesson.
    db.executescript(
        """
        ALTER TABLE skills ADD COLUMN lessons TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE skills ADD COLUMN toolset TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE skill_versions ADD COLUMN lessons TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE skill_versions ADD COLUMN toolset TEXT NOT NULL DEFAULT '[]';
        """
    )


# Every migration this release knows, read through the public API (all are pending on an empty db).
KNOWN_MIGRATIONS = frozenset(m.name for m in migrations.pending(Database(memory=True)))
