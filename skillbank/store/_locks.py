"""Named exclusive locks that a dead holder cannot keep: files on one host, the server across hosts.

A file lock (the ``filelock`` library: ``fcntl`` on POSIX, ``msvcrt`` on Windows) is released by
the operating system when the holding process exits, however it exits. Who holds it is written
to a sidecar ``<lock>.holder`` file, only so a waiting process can say who it waited for (the
lock file itself may be truncated by a waiter on some filelock versions).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path
from typing import Callable, Iterator

from filelock import FileLock, Timeout

from skillbank.errors import LockedError

__all__ = ["file_lock", "holder_info", "describe_holder"]

POLL_SECONDS = 0.05


def holder_info(what: str) -> dict[str, object]:
    """What a lock holder says about itself: enough to find it (pid on a host) and to judge it."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "what": what,
            "since": time.strftime("%Y-%m-%dT%H:%M:%S")}


def describe_holder(info: dict[str, object] | None) -> str:
    if not info:
        return ""
    return f" (pid {info.get('pid')} on {info.get('host', '?')}, {info.get('what', '?')} since {info.get('since')})"


@contextlib.contextmanager
def file_lock(path: Path, *, timeout: float | None, what: str,
              busy: Callable[[str, str], str]) -> Iterator[Path]:
    """Hold the lock file ``path``; wait up to ``timeout`` seconds (``None``: forever).

    ``busy(holder, waited)`` builds the :class:`LockedError` message when the wait runs out.
    Two handles in one process exclude each other too (each opens its own lock).
    """
    lock = FileLock(str(path))
    sidecar = Path(f"{path}.holder")
    try:
        lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout), poll_interval=POLL_SECONDS)
    except Timeout:
        info = None
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(sidecar.read_text() or "{}")
        waited = f" after waiting {timeout:g}s" if timeout else ""
        raise LockedError(busy(describe_holder(info), waited)) from None
    try:
        with contextlib.suppress(OSError):
            sidecar.write_text(json.dumps(holder_info(what)))
        yield path
    finally:
        with contextlib.suppress(OSError):
            sidecar.write_text("")
        lock.release()
