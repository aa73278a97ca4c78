"""The round watermark: which round comes next, and finishing one.

Every trajectory a round reads is stamped with the round number (``consumed_round``), so the
next round skips it; the bank's finished rounds (:class:`~skillbank.store.rounds.RoundRepo`)
give the next round its number.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from skillbank.store.rounds import RoundRepo

__all__ = ["current_round", "finish_round"]


def current_round(bank: Any) -> int:
    """The number of the bank's last finished round (0 before the first)."""
    return RoundRepo(bank.store).current()


def finish_round(bank: Any, round_no: int, ids: Sequence[str], when: datetime) -> None:
    """Stamp ``ids`` as consumed by ``round_no`` and record the round as finished, atomically."""
    with bank.store.transaction():
        bank.trajectories.mark_consumed(ids, round_no)  # first: it orders the round's writes
        RoundRepo(bank.store).finish(round_no, when, len(ids))
