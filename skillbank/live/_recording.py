"""Keeping a run's exposures with the bank its recording writes to."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from skillbank.live._exposure import Exposure

__all__ = ["keep_exposures"]

log = logging.getLogger("skillbank.live")


def keep_exposures(sink: Any, run_id: str, exposures: Sequence[Exposure]) -> bool:
    """Write ``exposures`` for run ``run_id`` (the trajectory's id) to ``sink``'s exposure record.

    A sink without one (a view of a bank, a test double) keeps nothing; a write that fails is
    logged and the run goes on: the agent must not go down with its bookkeeping. Returns whether
    they were written.
    """
    repo = getattr(sink, "exposures", None)
    if not exposures or repo is None or not hasattr(repo, "record"):
        return False
    try:
        repo.record(run_id, exposures)
    except Exception:
        log.warning("skillbank: could not record the exposures of run %s", run_id, exc_info=True)
        return False
    return True
