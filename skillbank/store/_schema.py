"""Named, append-only migrations, one list per backend. Never edit a released migration.

The tables are written once, as :data:`INITIAL` with a few type placeholders that each backend
fills (:data:`SQLITE_TYPES`, :data:`POSTGRES_TYPES`); timestamps and JSON stay ISO / JSON text
on both, so one row reader serves both backends.

To change the schema, add a migration with the same new name to *both* lists (the conformance
tests check the two name sets are equal): an ``@migration(name, older_code_can_use=...)``
function for SQLite (sqlite-utils records it in ``_sqlite_migrations``) and a ``(name, sql)``
entry in ``POSTGRES_MIGRATIONS`` (recorded in ``skillbank_migrations``). A new skill content
field (the ``lessons`` JSON, say) is ``ALTER TABLE skills ADD COLUMN lessons TEXT NOT NULL
DEFAULT '[]'`` and the same for ``skill_versions``, in one migration per backend (the
statements are the same text on both), plus the field in ``skills._content_row`` /
``_content_from_row`` and the column in ``transfer.TABLES``.

``older_code_can_use`` says whether code that does not know the migration can still read and
write a bank it was applied to (see :func:`migration`); decide it by reading the code that reads
and writes the tables it touches, and say why beside it. It is what lets a fleet sharing one
bank upgrade host by host (:mod:`skillbank.store._compat`).
"""

from __future__ import annotations

from typing import Callable, TypeVar

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

MIGRATION_SET = "skillbank"
migrations = Migrations(MIGRATION_SET)

_Fn = TypeVar("_Fn", bound=Callable[[Database], None])

#: Per migration name: can code that does not know the migration still read and write a bank it
#: was applied to? Filled by :func:`migration`, next to each migration and its reason.
OLDER_CODE_CAN_USE: dict[str, bool] = {}


def migration(name: str, *, older_code_can_use: bool) -> Callable[[_Fn], _Fn]:
    """Register SQLite migration ``name`` and whether older code can use a bank it was applied to.

    ``True`` for an additive change older code never notices: a new table it does not read, a new
    column its INSERTs can leave out (nullable or defaulted) and whose absence from what it reads
    misleads nothing. ``False`` when older code would misread the bank or lose data in it (data
    moved elsewhere, columns it would read wrong or drop on a rewrite). A host whose code does not
    know a ``False`` migration refuses the bank; it uses a bank with unknown ``True`` ones.
    """
    OLDER_CODE_CAN_USE[name] = older_code_can_use
    return migrations(name=name)


# 0001: every table. The change log (events) is tamper-evident: each event's hash covers the
# previous event's hash. Embeddings are cached by content hash so the index can be rebuilt
# without the model; rejected or rolled-back edits are kept so evolution does not propose them
# again. limit_events' rowid is SQLite's implicit column, made explicit on PostgreSQL.
INITIAL = """
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
            seq {serial_key},
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
            vector {blob} NOT NULL,
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
            score {real},
            outcome TEXT,
            input_tokens {bigint} NOT NULL DEFAULT 0,
            output_tokens {bigint} NOT NULL DEFAULT 0,
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

        CREATE TABLE IF NOT EXISTS limit_events ({rowid}
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
            score {real} NOT NULL
        );
        CREATE INDEX IF NOT EXISTS injections_traj ON injections(trajectory_id);
        CREATE INDEX IF NOT EXISTS injections_skill ON injections(skill_id);
"""

SQLITE_TYPES = {"serial_key": "INTEGER PRIMARY KEY AUTOINCREMENT", "blob": "BLOB", "real": "REAL",
                "bigint": "INTEGER", "rowid": ""}
POSTGRES_TYPES = {"serial_key": "BIGINT PRIMARY KEY", "blob": "BYTEA", "real": "DOUBLE PRECISION",
                  "bigint": "BIGINT", "rowid": "\n            rowid BIGSERIAL PRIMARY KEY,"}


# The base: there is no older code, and every reader must know it.
@migration("0001_initial", older_code_can_use=False)
def _initial(db: Database) -> None:
    db.executescript(INITIAL.format(**SQLITE_TYPES))


# A version's structured lessons and the toolset it was learned with (JSON lists); empty for
# versions written before, whose body is their one lesson. The same statements on both backends.
LESSONS_AND_TOOLSET = """
        ALTER TABLE skills ADD COLUMN lessons TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE skills ADD COLUMN toolset TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE skill_versions ADD COLUMN lessons TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE skill_versions ADD COLUMN toolset TEXT NOT NULL DEFAULT '[]';
"""


# Breaks older code. Its INSERTs can leave the defaulted columns out, but it misreads skills
# written after: a version's content hash covers its lessons and toolset, so older code finds
# the hash of every skill with lessons wrong (``verify``), injects the body without them, and
# its next edit of such a skill writes a version without them: the lessons are lost silently.
@migration("0002_lessons_and_toolset", older_code_can_use=False)
def _lessons(db: Database) -> None:
    db.executescript(LESSONS_AND_TOOLSET)


# Candidates waiting for review, the draft row of each edited skill and the finished rounds
# get tables of their own (they were prefixed ``meta`` keys); the keys of a bank written before
# move into them, and leave ``meta``. Only reading the old last-run JSON differs by backend.
DRAFTS_AND_ROUNDS = """
        CREATE TABLE IF NOT EXISTS pending_candidates (skill_id TEXT PRIMARY KEY, info TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS drafts (target_id TEXT PRIMARY KEY, draft_id TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS evolution_rounds (
            round_no INTEGER PRIMARY KEY,
            finished_at TEXT,
            trajectories INTEGER
        );
        INSERT INTO pending_candidates (skill_id, info)
            SELECT substr(key, length('evolution:pending:') + 1), value FROM meta
            WHERE key LIKE 'evolution:pending:%';
        INSERT INTO drafts (target_id, draft_id)
            SELECT substr(key, length('evolution:draft:') + 1), value FROM meta
            WHERE key LIKE 'evolution:draft:%';
        INSERT INTO evolution_rounds (round_no, finished_at, trajectories)
            SELECT CAST(r.value AS INTEGER), {last_run_at}, {last_run_trajectories}
            FROM meta r LEFT JOIN meta l ON l.key = 'evolution:last_run'
            WHERE r.key = 'evolution:round';
        DELETE FROM meta WHERE key LIKE 'evolution:pending:%' OR key LIKE 'evolution:draft:%'
            OR key IN ('evolution:round', 'evolution:last_run');
"""
SQLITE_LAST_RUN = {"last_run_at": "json_extract(l.value, '$.at')",
                   "last_run_trajectories": "json_extract(l.value, '$.trajectories')"}
POSTGRES_LAST_RUN = {"last_run_at": "(l.value::json ->> 'at')",
                     "last_run_trajectories": "(l.value::json ->> 'trajectories')::integer"}


# Breaks older code: it moves what older code reads from ``meta`` keys into tables (and deletes
# the keys), so older code would see no candidates waiting and no drafts, restart its round
# numbers, and write its own candidates and drafts to keys newer code never reads.
@migration("0003_drafts_and_rounds", older_code_can_use=False)
def _drafts_and_rounds(db: Database) -> None:
    db.executescript(DRAFTS_AND_ROUNDS.format(**SQLITE_LAST_RUN))


# The gate's evidence (:mod:`skillbank.store._gate_records`): each measurement of a candidate
# version with the decision it led to, kept so why the gate promoted or rejected can be checked
# later. Trials, planned and not-reached tasks are JSON lists; a draft's record also names the
# skill it edits (``target_id``), which that skill's page reads by.
GATE_RECORDS = """
        CREATE TABLE IF NOT EXISTS gate_records (
            id TEXT PRIMARY KEY,
            skill_id TEXT NOT NULL REFERENCES skills(id),
            version INTEGER NOT NULL,
            target_id TEXT,
            round_no INTEGER,
            decided_at TEXT NOT NULL,
            decision TEXT NOT NULL,
            reason TEXT NOT NULL,
            gain {real} NOT NULL,
            pass_hat_k_change {real},
            success_change {real},
            cost {real} NOT NULL,
            stopped_early INTEGER NOT NULL DEFAULT 0,
            trials TEXT NOT NULL DEFAULT '[]',
            planned TEXT NOT NULL DEFAULT '[]',
            not_reached TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX IF NOT EXISTS gate_records_skill ON gate_records(skill_id, version);
        CREATE INDEX IF NOT EXISTS gate_records_target ON gate_records(target_id);
"""


# Older code can use it: a new table that older code never reads or writes. Its rows reference
# skills, which no code deletes. (An older ``skillbank copy`` leaves the records out of a copy.)
@migration("0004_gate_records", older_code_can_use=True)
def _gate_records(db: Database) -> None:
    db.executescript(GATE_RECORDS.format(**SQLITE_TYPES))


# The date a run took as today (ISO), so a lesson about the dates its request said ("the day
# after tomorrow") is read from it, not from when it was recorded. The same statement on both.
TRAJECTORY_TODAY = """
        ALTER TABLE trajectories ADD COLUMN today TEXT;
"""


# Older code can use it: a nullable column older code's INSERT INTO trajectories leaves out (no
# UPDATE or REPLACE of a whole row clears it); a run it records has no today, which newer code
# reads as it reads the runs recorded before this migration. (An older copy leaves it out.)
@migration("0005_trajectory_today", older_code_can_use=True)
def _trajectory_today(db: Database) -> None:
    db.executescript(TRAJECTORY_TODAY)


# The live experiment's record (:mod:`skillbank.store._exposures`): per run, each randomized
# eligible skill, its version, whether it was shown or held back, and its chance of being shown.
# No foreign keys: a run's exposure is written while it runs, before its trajectory row may be.
EXPOSURES = """
        CREATE TABLE IF NOT EXISTS exposures (
            run_id TEXT NOT NULL,
            skill_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            arm TEXT NOT NULL,
            p_shown {real} NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (run_id, skill_id)
        );
        CREATE INDEX IF NOT EXISTS exposures_skill ON exposures(skill_id, at);
"""


# Older code can use it: a new table that older code never reads or writes (an older ``skillbank
# copy`` leaves the exposures out of a copy).
@migration("0006_exposures", older_code_can_use=True)
def _exposures(db: Database) -> None:
    db.executescript(EXPOSURES.format(**SQLITE_TYPES))


POSTGRES_MIGRATIONS: list[tuple[str, str]] = [
    ("0001_initial", INITIAL.format(**POSTGRES_TYPES)),
    ("0002_lessons_and_toolset", LESSONS_AND_TOOLSET),
    ("0003_drafts_and_rounds", DRAFTS_AND_ROUNDS.format(**POSTGRES_LAST_RUN)),
    ("0004_gate_records", GATE_RECORDS.format(**POSTGRES_TYPES)),
    ("0005_trajectory_today", TRAJECTORY_TODAY),
    ("0006_exposures", EXPOSURES.format(**POSTGRES_TYPES)),
]


# Every migration this release knows, read through the public API (all are pending on an empty db).
KNOWN_MIGRATIONS = frozenset(m.name for m in migrations.pending(Database(memory=True)))

# Migrations that only add a table no read-only command reads: a read-only open of a bank that
# lacks only these reads it as it is, without upgrading it (a read-only command never writes).
READ_ONLY_CAN_SKIP = frozenset({"0006_exposures"})
#: The migration every bank starts with; it creates ``meta``.
BASE_MIGRATION = "0001_initial"
#: The migrations a reader must know to use a bank they were applied to.
BREAKS_OLDER_CODE = frozenset(name for name, ok in OLDER_CODE_CAN_USE.items() if not ok)
