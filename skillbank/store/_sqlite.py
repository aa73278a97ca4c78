"""The embedded default store: one SQLite file, pragmas for many writers, immediate transactions.

One connection per process (shared by threads under a lock). WAL lets readers run while one
writer commits; ``BEGIN IMMEDIATE`` takes the write lock up front so two processes never both
read-then-write the change log's tip; a busy timeout plus a bounded retry keeps "database is
locked" from ever reaching a caller under ordinary contention.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from sqlite_utils import Database

from skillbank.errors import CorruptBankError, LockedError, NotABankError, SchemaTooOldError, StorageFullError
from skillbank.store._base import Dialect, Store
from skillbank.store._compat import READERS_MUST_KNOW, SchemaCheck, check_schema, parse_record
from skillbank.store._locks import file_lock
from skillbank.store._schema import BASE_MIGRATION, MIGRATION_SET, READ_ONLY_CAN_SKIP, migrations

__all__ = ["DB_FILENAME", "SQLiteStore"]

DB_FILENAME = "bank.db"
BUSY_TIMEOUT_MS = 30_000
_LOCK_RETRIES = 50


def _is_locked(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class SQLiteStore(Store):
    """A bank's SQLite database. Open with :meth:`open`; call :meth:`close` (or use ``with``)."""

    backend = "sqlite"
    sql = Dialect()
    read_only = False

    def __init__(self, conn: sqlite3.Connection, path: Path | None):
        self.conn = conn
        self.path = path
        self.location = str(path) if path is not None else ":memory:"
        self.db = Database(conn)
        self._mutex = threading.RLock()
        self._named: dict[str, threading.Lock] = {}

    @classmethod
    def open(cls, path: str | Path | None, *, read_only: bool = False) -> "SQLiteStore":
        """Open (creating if needed) the database at ``path``; ``None`` means in memory.

        ``read_only=True`` opens an existing file through SQLite's ``mode=ro``, so nothing (no
        migration, no journal mode, no checkpoint) can change its bytes; a bank that lacks only
        migrations adding tables no read-only command reads (``READ_ONLY_CAN_SKIP``) is read as it
        is, and one that needs any other migration is refused
        (:class:`~skillbank.errors.SchemaTooOldError`). A file that is
        a SQLite database of something else is refused either way (:class:`NotABankError`).
        """
        if read_only and path is None:
            raise ValueError("a read-only store needs a database file")
        target = ":memory:" if path is None else str(path)
        if path is not None and Path(path).exists():
            _check_sqlite_header(Path(path))
        try:
            if read_only:
                assert path is not None  # refused above
                uri = f"{Path(path).resolve().as_uri()}?mode=ro"
                conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                       check_same_thread=False)
            else:
                conn = sqlite3.connect(
                    target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
                )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if path is not None:
                _refuse_foreign(conn, Path(path))
            if path is not None and not read_only:
                conn.execute("PRAGMA journal_mode = WAL")
                # NORMAL is durable across application crashes in WAL mode; only an OS crash
                # can lose the last transactions, never corrupt the file.
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise _corrupt(path, exc) from exc
        store = cls(conn, Path(path) if path is not None else None)
        store.read_only = read_only
        try:
            store.setup()
        except sqlite3.DatabaseError as exc:
            store.close()
            raise _corrupt(path, exc) from exc
        except BaseException:
            store.close()
            raise
        if path is not None and not read_only:
            # SQLite made -wal/-shm with the umask's mode before the chmod; later ones copy bank.db's.
            for name in (str(path), f"{path}-wal", f"{path}-shm"):
                with contextlib.suppress(OSError):
                    os.chmod(name, 0o600)
        return store

    def setup(self) -> None:
        """Apply pending migrations; idempotent, and safe when several processes start at once.

        Refuses (:class:`~skillbank.errors.SchemaTooNewError`) a bank that needs a migration this
        code does not know; see :mod:`skillbank.store._compat`.
        """
        check = self._check_schema()
        if not check.up_to_date and self.read_only and set(check.pending) <= READ_ONLY_CAN_SKIP:
            return  # read as it is: the next command that writes upgrades it
        if not check.up_to_date and self.read_only:
            if BASE_MIGRATION in check.pending:
                raise NotABankError(f"{self.location} holds no skill bank (an empty database); "
                                    "create one with `skillbank init`")
            raise SchemaTooOldError(
                f"{self.location} was written by an older skillbank and needs upgrading "
                f"({', '.join(sorted(check.pending))} not applied); a read-only command does not upgrade it. "
                "Run any command that changes the bank (e.g. `skillbank reindex`) once, then retry.")
        if not check.up_to_date:
            with self._setup_lock():
                check = self._check_schema()  # another process may have migrated it meanwhile
                if not check.up_to_date:
                    self._migrate(check)
        check.log_tolerated(self.location)

    def _check_schema(self) -> SchemaCheck:
        applied = {m.name for m in migrations.applied(self.db)}
        # meta comes with the base migration
        recorded = parse_record(self.get_meta(READERS_MUST_KNOW)) if BASE_MIGRATION in applied else None
        return check_schema(self.location, applied, recorded)

    def _migrate(self, check: SchemaCheck) -> None:
        # Each migration commits on its own (executescript ends any transaction), so a bank that
        # has meta gets its record first: the record never says less than what is applied. A new
        # bank gets it after its base migration has made meta.
        new = BASE_MIGRATION in check.pending
        if not new:
            self.set_meta(READERS_MUST_KNOW, check.record())
        migrations.apply(self.db)
        if new:
            self.set_meta(READERS_MUST_KNOW, check.record())

    @contextlib.contextmanager
    def _setup_lock(self) -> Iterator[None]:
        # Migrations run in deferred transactions; a file lock keeps two first opens from racing.
        if self.path is None:
            yield
            return
        with file_lock(self.path.with_suffix(".setup.lock"), timeout=None, what="migrations",
                       busy=lambda holder, waited: "unreachable: waits forever"):
            yield

    @contextlib.contextmanager
    def lock(self, name: str, *, timeout: float | None, what: str, busy: Any = None) -> Iterator[Any]:
        """A file lock ``<bank folder>/<name>.lock`` (in memory: a lock of this process only)."""
        busy = busy or (lambda holder, waited: f"{name} is locked on {self.location}{holder}{waited}")
        if self.path is None:
            lock = self._named.setdefault(name, threading.Lock())
            if not lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
                raise LockedError(busy("", f" after waiting {timeout:g}s" if timeout else ""))
            try:
                yield None
            finally:
                lock.release()
            return
        with file_lock(self.path.parent / f"{name}.lock", timeout=timeout, what=what, busy=busy) as path:
            yield path

    def serialize_changes(self, conn: Any, *, shared: bool = False) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already made this the only writer."""

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An immediate (write-locked) transaction; commits on success, rolls back on error."""
        with self._mutex:
            if self.conn.in_transaction:  # nested use joins the outer transaction
                yield self.conn
                return
            self._begin_immediate()
            try:
                yield self.conn
                self._retry(lambda: self.conn.execute("COMMIT"))
            except BaseException as exc:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc).lower():
                    raise StorageFullError(
                        f"the disk holding {self.path} is full ({exc}); the change was rolled "
                        "back and nothing was lost. Free some space and retry."
                    ) from exc
                raise

    def _begin_immediate(self) -> None:
        self._retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))

    def _retry(self, fn: Any) -> Any:
        # busy_timeout already waits up to 30 s; this covers the rare SQLITE_BUSY that SQLite
        # returns without waiting (e.g. a WAL checkpoint race) so callers never see it.
        for attempt in range(_LOCK_RETRIES):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc) or attempt == _LOCK_RETRIES - 1:
                    raise
                time.sleep(min(0.5, 0.01 * 2**attempt) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        with self._mutex:
            cursor = self._retry(lambda: self.conn.execute(sql, params))
            columns = [c[0] for c in cursor.description or ()]
            return [dict(zip(columns, row)) for row in cursor.fetchall()]

    def integrity_check(self) -> list[str]:
        """SQLite's own check; returns the problems found (empty when the file is sound)."""
        rows = self.query("PRAGMA integrity_check")
        problems = [next(iter(r.values())) for r in rows]
        return [] if problems == ["ok"] else problems

    def close(self) -> None:
        with self._mutex:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()


def _check_sqlite_header(path: Path) -> None:
    # sqlite3.connect() happily opens any file; reading the header turns garbage into a clear
    # error before anything can write to it.
    if path.stat().st_size == 0:
        return
    with open(path, "rb") as handle:
        header = handle.read(16)
    if header != b"SQLite format 3\x00":
        raise CorruptBankError(
            f"{path} is not a SQLite database (bad header); it may be truncated or overwritten. "
            "Restore it from a backup, or move it aside to start an empty bank."
        )
    if _truncated(path):
        expected, size = _size_in_header(path), path.stat().st_size
        raise CorruptBankError(
            f"{path} is truncated: it holds {size} bytes of the {expected} its header records. Nothing "
            "was written; restore it from a backup, or move it aside and run `skillbank init` to "
            "start a new bank."
        )


def _truncated(path: Path, *, looks: int = 3) -> bool:
    """True when the file is shorter than its header says, with no write-ahead log or hot
    journal beside it, on ``looks`` reads 50 ms apart. Another process may be checkpointing
    (a checkpoint can write the new size into the header before the pages it counts, and the log
    it copies from holds them), so one short read is not enough."""
    for look in range(looks):
        expected = _size_in_header(path)
        if expected is None or path.stat().st_size >= expected:
            return False
        if any(_nonempty(path.with_name(path.name + suffix)) for suffix in ("-wal", "-journal")):
            return False
        if look < looks - 1:
            time.sleep(0.05)
    return True


def _nonempty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _size_in_header(path: Path) -> int | None:
    """The file size a SQLite header records (page size times page count), or None when the
    count is not to be trusted (written by a version that did not keep it; see SQLite's file
    format, "in-header database size")."""
    with open(path, "rb") as handle:
        header = handle.read(100)
    if len(header) < 100:
        return None
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages == 0 or header[24:28] != header[92:96]:
        return None
    return page_size * pages


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """A SQLite file holding tables but no skillbank migrations belongs to something else:
    migrating it would write skillbank's tables into another program's database."""
    try:
        tables = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        ours = "_sqlite_migrations" in tables and conn.execute(
            "SELECT count(*) FROM _sqlite_migrations WHERE migration_set = ?", (MIGRATION_SET,)).fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise _corrupt(path, exc) from exc
    if tables and not ours:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        conn.close()
        raise NotABankError(
            f"{path} is a SQLite database of something else (tables: {shown}), not a skill bank; "
            "nothing was written. Point -d / SKILLBANK_DIR at a skill bank folder, or move the file "
            "aside and run `skillbank init` to start a new bank there.")


def _corrupt(path: str | Path | None, exc: BaseException) -> CorruptBankError:
    return CorruptBankError(
        f"cannot read the bank database {path}: {exc}. Check it with "
        f"`sqlite3 {path} 'PRAGMA integrity_check'`, restore a backup, or move it aside."
    )
