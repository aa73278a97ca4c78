"""The round watermark: finishing a round.

Every trajectory a round reads is stamped with the round number (``consumed_round``), so the
next round skips it; the bank's finished rounds (``bank.rounds``,
:class:`~skillbank.store._rounds.RoundRepo`) give the next round its number.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from skillbank.evolution._seam import EvolutionBank

__all__ = ["finish_round"]


def finish_round(bank: EvolutionBank, round_no: int, ids: Sequence[str], when: datetime) -> None:
    """Stamp ``ids`` as consumed by ``round_no`` and record the round as finished, atomically."""
    with bank.transaction():
        bank.trajectories.mark_consumed(ids, round_no)  # first: it orders the round's writes
        bank.rounds.finish(round_no, when, len(ids))
