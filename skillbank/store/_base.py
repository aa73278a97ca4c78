"""The store interface: what a bank's source of truth must do, whatever the database.

Two implementations: :class:`~skillbank.store._sqlite.SQLiteStore` (the embedded default, one
file) and :class:`~skillbank.store._postgres.PostgresStore` (a fleet's shared server). The
repositories (``skills``, ``trajectories``, ``evidence``, ``embeddings``) hold every query once,
written in the SQL both dialects share with ``?`` / ``:name`` placeholders; the few fragments
that differ (JSON access, advisory locks) come from the store's :class:`Dialect`. Nothing outside
``skillbank.store`` writes SQL.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ContextManager

__all__ = ["Dialect", "Store"]


class Dialect:
    """SQL fragments that differ between SQLite and PostgreSQL (SQLite's spelling here)."""

    name = "sqlite"

    def json_text(self, column: str, key: str) -> str:
        """A top-level field of a JSON text column, as text (or number, as stored)."""
        return f"json_extract({column}, '$.{key}')"

    def json_int(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def json_array_length(self, column: str, key: str) -> str:
        """The length of a JSON array field; 0 when the field is absent or not an array."""
        return f"coalesce(json_array_length({column}, '$.{key}'), 0)"

    def json_field_param(self, column: str) -> str:
        """A field named by a parameter (see :meth:`json_key`), as text."""
        return f"json_extract({column}, ?)"

    def json_key(self, key: str) -> str:
        return f"$.{key}"

    def json_has_element(self, column: str) -> str:
        """True when the JSON array in ``column`` holds the parameter ``?``."""
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = ?)"

    def char(self, code: int) -> str:
        return f"char({code})"

    for_update = ""  # SQLite's BEGIN IMMEDIATE already holds the only write lock


class Store(ABC):
    """One bank's database. Open with the implementation's ``open``; close with :meth:`close`.

    Concrete here: meta get/set/delete and ``query_one``. Each backend supplies connections and
    transactions, migrations, its integrity check and named cross-process locks.
    """

    #: ``"sqlite"`` or ``"postgresql"``.
    backend: str = ""
    #: Where the bank is, for messages (a file path, or a URL without its password).
    location: str = ""
    sql: Dialect = Dialect()

    # -- what each backend implements ------------------------------------------------------------

    @abstractmethod
    def transaction(self) -> ContextManager[Any]:
        """A write transaction (commit on success, roll back on error); nested use joins it.

        Yields a connection whose ``execute(sql, params)`` / ``executemany`` take this module's
        placeholders and whose cursors return tuples.
        """

    @abstractmethod
    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        """Rows as dicts (inside a transaction: on its connection, seeing its writes)."""

    @abstractmethod
    def setup(self) -> None:
        """Apply pending migrations; idempotent, and safe when several processes start at once."""

    @abstractmethod
    def lock(self, name: str, *, timeout: float | None, what: str,
             busy: Any = None) -> ContextManager[Any]:
        """An exclusive lock named ``name`` shared by every process using this bank.

        Released when the holder exits however it exits. Raises
        :class:`~skillbank.errors.LockedError` after ``timeout`` seconds (``None`` waits).
        ``busy(holder, waited)`` words the error.
        """

    @abstractmethod
    def serialize_changes(self, conn: Any, *, shared: bool = False) -> None:
        """Inside a transaction: order it against every change-log append.

        Exclusive for a writer of skills and the change log (it reads the chain's tip), shared
        for one that only bumps usage counters. Taken first, so lock order is always the same.
        """

    @abstractmethod
    def integrity_check(self) -> list[str]:
        """The database's own consistency check; the problems found (empty when sound)."""

    @abstractmethod
    def close(self) -> None: ...

    # -- shared ------------------------------------------------------------------------------------

    def query_one(self, sql: str, params: Any = ()) -> dict[str, Any] | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def get_meta(self, key: str) -> str | None:
        row = self.query_one("SELECT value FROM meta WHERE key = ?", (key,))
        return row["value"] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def delete_meta(self, key: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def meta_items(self, prefix: str = "") -> dict[str, str]:
        """Every meta entry whose key starts with ``prefix``."""
        rows = self.query("SELECT key, value FROM meta ORDER BY key")
        return {r["key"]: r["value"] for r in rows if r["key"].startswith(prefix)}

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
