"""One evolution round per bank at a time, across processes and, on PostgreSQL, across hosts.

The bank's store holds the lock: a file lock (``<bank>/evolve.lock``, via ``filelock``) on the
embedded default, a session advisory lock on PostgreSQL. Either is released when the holding
process exits, however it exits, so a crashed round can never hold the bank forever; who holds
it is recorded only to make the waiting side's message useful.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

from skillbank.evolution._seam import EvolutionBank
from skillbank.store._locks import file_lock

LOCK_NAME = "evolve"
LOCK_FILE = f"{LOCK_NAME}.lock"


@contextlib.contextmanager
def evolution_lock(bank: EvolutionBank | str | Path, *, timeout: float | None = 10.0,
                   what: str = "evolve") -> Iterator[Any]:
    """Hold the evolution lock of ``bank`` (a ``SkillBank``, or a bank folder's path); wait up to
    ``timeout`` seconds (``None`` waits forever).

    Raises :class:`~skillbank.errors.LockedError` when another process (or another handle in
    this process) still holds it after the timeout.
    """
    where = str(bank) if isinstance(bank, (str, Path)) else bank.location

    def busy(holder: str, waited: str) -> str:
        return (f"another evolution round is running on {where}{holder}{waited}; wait for it "
                "to finish or retry with a longer --lock-timeout")

    if isinstance(bank, (str, Path)):
        with file_lock(Path(bank) / LOCK_FILE, timeout=timeout, what=what, busy=busy) as held:
            yield held
    else:
        with bank.lock(LOCK_NAME, timeout=timeout, what=what, busy=busy) as held:
            yield held
