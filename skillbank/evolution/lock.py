"""One evolution round per bank at a time.

An exclusive ``fcntl.flock`` on ``<bank>/evolve.lock``. The kernel drops the lock when the holding
process exits, however it exits, so a crashed round can never hold the bank forever; the pid and
start time written into the file are only there to make the waiting side's message useful.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path
from typing import Iterator

from skillbank.errors import LockedError

LOCK_FILE = "evolve.lock"
_POLL_SECONDS = 0.05


def _holder(handle) -> str:
    with contextlib.suppress(Exception):
        handle.seek(0)
        info = json.loads(handle.read() or "{}")
        if info:
            return f" (pid {info.get('pid')}, {info.get('what', 'evolve')} since {info.get('since')})"
    return ""


@contextlib.contextmanager
def evolution_lock(bank_dir: str | Path, *, timeout: float | None = 10.0,
                   what: str = "evolve") -> Iterator[Path]:
    """Hold the bank's evolution lock; wait up to ``timeout`` seconds (``None`` waits forever).

    Raises :class:`~skillbank.errors.LockedError` when another process (or another handle in
    this process) still holds it after the timeout.
    """
    path = Path(bank_dir) / LOCK_FILE
    handle = open(path, "a+")
    try:
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    waited = f" after waiting {timeout:g}s" if timeout else ""
                    raise LockedError(
                        f"another evolution round is running on {Path(bank_dir)}{_holder(handle)}"
                        f"{waited}; wait for it to finish or retry with a longer --lock-timeout"
                    ) from None
                time.sleep(_POLL_SECONDS)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "what": what,
                                 "since": time.strftime("%Y-%m-%dT%H:%M:%S")}))
        handle.flush()
        try:
            yield path
        finally:
            with contextlib.suppress(OSError):
                handle.seek(0)
                handle.truncate()
                handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        handle.close()
