"""Which banks this code may open, so that a fleet sharing one bank can upgrade host by host.

Each migration says whether code that does not know it can still read and write a bank it was
applied to (``older_code_can_use`` in :mod:`skillbank.store._schema`). A store that applies
migrations records in the bank which of them a reader must know: the ``meta`` key
:data:`READERS_MUST_KNOW`, a JSON list of names (the base and every migration that breaks older
code). On open, a migration this code does not know is tolerated unless that record names it. A
bank without the record was migrated by a release from before it, which said nothing about its
migrations: every unknown one refuses it, as before. Both backends decide with
:func:`check_schema`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import AbstractSet

from skillbank.errors import SchemaTooNewError
from skillbank.store._schema import BREAKS_OLDER_CODE, KNOWN_MIGRATIONS

__all__ = ["READERS_MUST_KNOW", "SchemaCheck", "check_schema", "parse_record"]

READERS_MUST_KNOW = "schema.readers_must_know"

log = logging.getLogger("skillbank.store")


@dataclass(frozen=True)
class SchemaCheck:
    """What this code makes of a bank it may use (see :func:`check_schema`)."""

    #: Migrations this code knows that the bank lacks: the store applies them.
    pending: frozenset[str]
    #: Migrations a newer release applied that this code does not know and can do without.
    tolerated: frozenset[str]
    #: What the bank's :data:`READERS_MUST_KNOW` record must hold once ``pending`` are applied.
    readers_must_know: frozenset[str]
    #: Whether the bank's record holds exactly those already.
    recorded: bool

    @property
    def up_to_date(self) -> bool:
        """Nothing to write: every migration this code knows is applied, and recorded."""
        return not self.pending and self.recorded

    def record(self) -> str:
        """The :data:`READERS_MUST_KNOW` value to write."""
        return json.dumps(sorted(self.readers_must_know))

    def log_tolerated(self, location: str) -> None:
        if self.tolerated:
            log.info("%s has schema migrations from a newer skillbank that this one does not know "
                     "and can use the bank without: %s", location, ", ".join(sorted(self.tolerated)))


def parse_record(value: str | None) -> frozenset[str] | None:
    """The names a :data:`READERS_MUST_KNOW` value holds; ``None`` when it is absent or not a
    JSON list of names (such a bank is read strictly)."""
    try:
        names = json.loads(value) if value is not None else None
    except ValueError:
        return None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return frozenset(names)


def check_schema(location: str, applied: AbstractSet[str], recorded: frozenset[str] | None) -> SchemaCheck:
    """Whether this code may use the bank at ``location``, and what its store must write to it.

    ``applied`` are the migrations the bank records as applied; ``recorded`` is its
    :data:`READERS_MUST_KNOW` record (``None`` when it has none). Raises
    :class:`~skillbank.errors.SchemaTooNewError`, before the store writes anything, when the
    bank needs a migration this code does not know.
    """
    unknown = frozenset(applied) - KNOWN_MIGRATIONS
    # Without a record, nothing says an unknown migration is safe to do without.
    missing = unknown if recorded is None else recorded - KNOWN_MIGRATIONS
    if missing:
        raise SchemaTooNewError(_refusal(location, missing, recorded is None))
    # Once the pending migrations are applied, every one of this code's breaking migrations is;
    # what a newer release recorded stays (it may know more about what it applied).
    must_know = BREAKS_OLDER_CODE | (recorded or frozenset())
    return SchemaCheck(pending=KNOWN_MIGRATIONS - applied, tolerated=unknown,
                       readers_must_know=must_know, recorded=recorded == must_know)


def _refusal(location: str, missing: frozenset[str], unrecorded: bool) -> str:
    why = ("the bank does not record which of its migrations older releases can use, so it needs "
           "every one" if unrecorded else "older releases cannot use the bank without them")
    return (f"{location} was migrated by a newer skillbank and needs schema migrations this "
            f"skillbank does not know: {', '.join(sorted(missing))} ({why}). Upgrade skillbank on "
            "this host (pip install -U skillbank) and open the bank again; it was left untouched.")
