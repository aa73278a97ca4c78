"""The fleet store: a PostgreSQL database shared by every process on every host.

psycopg 3 with a connection pool (``psycopg-pool``); install with
``pip install 'skillbank[postgres]'``. Guarantees as on SQLite, by other means:

- every change to skills and the change log runs under a transaction-scoped advisory lock
  (:meth:`PostgresStore.serialize_changes`), so two writers never both read the chain's tip;
  writers that only bump usage counters take it shared, so they run side by side but never
  interleave with a change (and lock order is the same everywhere: no deadlocks);
- first-open migrations, the evolution round lock and index sync use session advisory locks
  on a dedicated connection: the server releases them when the holder's connection ends, so a
  killed process (on any host) never keeps a lock.

The repositories' SQL uses SQLite's ``?`` / ``:name`` placeholders; :func:`translate` rewrites
them for psycopg once per statement text.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import threading
import time
from typing import Any, Iterator

from skillbank.errors import (
    BankUnavailableError,
    LockedError,
    MissingExtraError,
    NotABankError,
    StorageFullError,
)
from skillbank.store._base import Dialect, Store
from skillbank.store._compat import READERS_MUST_KNOW, check_schema, parse_record
from skillbank.store._hnsw import EF_SEARCH
from skillbank.store._locks import POLL_SECONDS, describe_holder, holder_info
from skillbank.store._schema import BASE_MIGRATION, POSTGRES_MIGRATIONS

__all__ = ["PostgresStore", "PostgresDialect", "is_database_url", "translate"]

_URL = re.compile(r"^(postgres(?:ql)?):/+", re.IGNORECASE)
_TOKEN = re.compile(r"'(?:[^']|'')*'|\?|(?<![:\w]):([A-Za-z_]\w*)|%")
MIGRATIONS_TABLE = "skillbank_migrations"
POOL_SIZE = 4


def is_database_url(target: object) -> bool:
    """Whether ``target`` names a PostgreSQL database (``postgresql://…`` or ``postgres://…``)."""
    return bool(_URL.match(str(target)))


def normalise_url(target: object) -> str:
    # A URL that went through pathlib (the CLI's -d is a path option) lost one of its slashes.
    return _URL.sub(lambda m: m.group(1) + "://", str(target), count=1)


def mask_password(url: str) -> str:
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """``?`` -> ``%s``, ``:name`` -> ``%(name)s``, literal ``%`` -> ``%%`` (string literals kept)."""

    def sub(m: re.Match[str]) -> str:
        token = m.group(0)
        if token.startswith("'"):
            return token.replace("%", "%%")
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        return f"%({m.group(1)})s"

    return _TOKEN.sub(sub, sql)


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory lock key for ``name``."""
    return int.from_bytes(hashlib.sha256(f"skillbank:{name}".encode()).digest()[:8], "big", signed=True)


CHAIN_KEY = lock_key("change-log")
SETUP_KEY = lock_key("migrations")


class PostgresDialect(Dialect):
    name = "postgresql"

    def json_text(self, column: str, key: str) -> str:
        return f"({column}::json ->> '{key}')"

    def json_int(self, column: str, key: str) -> str:
        return f"({column}::json ->> '{key}')::bigint"

    def json_array_length(self, column: str, key: str) -> str:
        field = f"({column}::json -> '{key}')"
        return f"(CASE WHEN json_typeof({field}) = 'array' THEN json_array_length({field}) ELSE 0 END)"

    def json_field_param(self, column: str) -> str:
        return f"({column}::json ->> ?)"

    def json_key(self, key: str) -> str:
        return key

    def json_has_element(self, column: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_array_elements_text({column}::json) AS e(value) WHERE e.value = ?)"

    def char(self, code: int) -> str:
        return f"chr({code})"

    for_update = " FOR UPDATE"


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("a PostgreSQL bank", "postgres", "psycopg") from exc
    return psycopg


def _configure(conn: Any) -> None:
    """Session settings of every pooled connection: pgvector's search width (a placeholder
    setting where the extension is absent), so a plain search needs no transaction to set it."""
    conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")


class _Tx:
    """A transaction's connection, taking the repositories' placeholders."""

    def __init__(self, conn: Any):
        self.conn = conn

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self.conn.execute(translate(sql) if params else sql, params or None)

    def executemany(self, sql: str, rows: Any) -> Any:
        rows = list(rows)
        if not rows:
            return None
        with self.conn.cursor() as cur:
            cur.executemany(translate(sql), rows)
        return None


class PostgresStore(Store):
    """A bank in a PostgreSQL database. Open with :meth:`open`; :meth:`close` when done."""

    backend = "postgresql"
    sql = PostgresDialect()

    def __init__(self, url: str, pool: Any):
        self.url = url
        self.location = mask_password(url)
        self.pool = pool
        self._local = threading.local()
        self.vector_extension: bool | None = None  # known after the first index use

    @classmethod
    def open(cls, url: str, *, create: bool = True, pool_size: int = POOL_SIZE,
             connect_timeout: float = 10.0) -> "PostgresStore":
        """Connect to ``url`` (``postgresql://user[:password]@host[:port]/dbname``) and migrate.

        ``create=False`` refuses a database that holds no bank yet.
        """
        psycopg = _psycopg()
        from psycopg_pool import ConnectionPool

        url = normalise_url(url)
        location = mask_password(url)
        try:
            psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise BankUnavailableError(f"{location} is not a valid PostgreSQL connection string: "
                                       f"{exc}. Use postgresql://user@host:5432/dbname") from None
        try:  # one direct attempt first: it fails fast and says why (the pool would retry)
            psycopg.connect(url, connect_timeout=int(connect_timeout)).close()
        except psycopg.Error as exc:
            raise BankUnavailableError(
                f"cannot connect to the PostgreSQL bank {location}: {' '.join(str(exc).split())}. "
                "Check that the server is running and the connection string "
                "(postgresql://user@host:5432/dbname)") from None
        pool = ConnectionPool(url, min_size=1, max_size=pool_size, open=False,
                              kwargs={"autocommit": True}, configure=_configure, name="skillbank")
        pool.open(wait=True, timeout=connect_timeout)
        store = cls(url, pool)
        try:
            if not create:
                found = store.query_one("SELECT to_regclass(?) AS t", (MIGRATIONS_TABLE,))
                if found is None or found["t"] is None:
                    raise NotABankError(f"no skill bank in {location}; create one with "
                                        f"`skillbank init -d {location}` or SkillBank.open(url)")
            store.setup()
        except BaseException:
            store.close()
            raise
        return store

    # -- connections and transactions ----------------------------------------------------------

    def _connect(self) -> Any:
        """A dedicated connection, outside the pool: for session advisory locks."""
        return _psycopg().connect(self.url, autocommit=True)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Tx]:
        outer = getattr(self._local, "conn", None)
        if outer is not None:  # nested use joins the outer transaction
            yield _Tx(outer)
            return
        psycopg = _psycopg()
        with self.pool.connection() as conn:
            self._local.conn = conn
            try:
                with conn.transaction():
                    yield _Tx(conn)
            except psycopg.errors.DiskFull as exc:
                raise StorageFullError(
                    f"the disk of the PostgreSQL server holding {self.location} is full ({exc}); "
                    "the change was rolled back and nothing was lost. Free some space and retry."
                ) from exc
            finally:
                self._local.conn = None

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        from psycopg.rows import dict_row

        text = translate(sql) if params else sql
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            with conn.cursor(row_factory=dict_row) as cur:
                cur.execute(text, params or None)
                return cur.fetchall() if cur.description else []
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(text, params or None)
            return cur.fetchall() if cur.description else []

    def serialize_changes(self, conn: Any, *, shared: bool = False) -> None:
        conn.execute("SELECT pg_advisory_xact_lock_shared(?)" if shared else "SELECT pg_advisory_xact_lock(?)",
                     (CHAIN_KEY,))

    # -- migrations ----------------------------------------------------------------------------

    def setup(self) -> None:
        with contextlib.closing(self._connect()) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_KEY,))
            try:
                conn.execute(f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE}"
                             " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
                applied = {r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")}
                recorded = None
                if BASE_MIGRATION in applied:  # meta comes with the base migration
                    row = conn.execute("SELECT value FROM meta WHERE key = %s", (READERS_MUST_KNOW,)).fetchone()
                    recorded = parse_record(row[0] if row else None)
                check = check_schema(self.location, applied, recorded)
                if not check.up_to_date:
                    with conn.transaction():  # the migrations and the record commit together
                        for name, script in POSTGRES_MIGRATIONS:
                            if name in check.pending:
                                conn.execute(script)
                                conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name, applied_at) VALUES (%s, %s)",
                                             (name, time.strftime("%Y-%m-%dT%H:%M:%S")))
                        conn.execute("INSERT INTO meta (key, value) VALUES (%s, %s)"
                                     " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                     (READERS_MUST_KNOW, check.record()))
                check.log_tolerated(self.location)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_KEY,))

    def applied_migrations(self) -> list[str]:
        return [r["name"] for r in self.query(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY name")]

    # -- locks ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, name: str, *, timeout: float | None, what: str, busy: Any = None) -> Iterator[Any]:
        """A session advisory lock held on a dedicated connection for the block's duration."""
        busy = busy or (lambda holder, waited: f"{name} is locked on {self.location}{holder}{waited}")
        key = lock_key(f"lock:{name}")
        conn = self._connect()
        try:
            deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
            while not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                if deadline is not None and time.monotonic() >= deadline:
                    raw = self.get_meta(f"lock:{name}")
                    info = json.loads(raw) if raw else None
                    raise LockedError(busy(describe_holder(info), f" after waiting {timeout:g}s" if timeout else ""))
                time.sleep(POLL_SECONDS)
            self.set_meta(f"lock:{name}", json.dumps(holder_info(what)))
            try:
                yield None
            finally:
                with contextlib.suppress(Exception):
                    self.delete_meta(f"lock:{name}")
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        finally:
            conn.close()

    # -- the rest ------------------------------------------------------------------------------

    def integrity_check(self) -> list[str]:
        """Nothing to add: the server checks its own pages (checksums, WAL replay)."""
        return []

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.pool.close()

