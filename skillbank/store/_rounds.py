"""The evolution rounds a bank has finished: the watermark the next round starts from.

One row per finished round (its number, when it finished, how many trajectories it read). The
trajectories a round read carry its number themselves (``consumed_round``); this table is the
counter the next round's number comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from skillbank.store._base import Store

__all__ = ["FinishedRound", "RoundRepo"]


@dataclass(frozen=True)
class FinishedRound:
    round: int
    finished_at: str | None  # ISO time; None for a round migrated from a bank that had not kept it
    trajectories: int | None


class RoundRepo:
    def __init__(self, store: Store):
        self.store = store

    def current(self) -> int:
        """The number of the last finished round (0 before the first)."""
        row = self.store.query_one("SELECT max(round_no) AS n FROM evolution_rounds")
        return int(row["n"] or 0) if row else 0

    def finished(self) -> list[FinishedRound]:
        """Every finished round, oldest first."""
        return self._rounds("ORDER BY round_no")

    def last(self) -> FinishedRound | None:
        rounds = self._rounds("ORDER BY round_no DESC LIMIT 1")
        return rounds[0] if rounds else None

    def _rounds(self, order: str) -> list[FinishedRound]:
        rows = self.store.query(f"SELECT round_no, finished_at, trajectories FROM evolution_rounds {order}")
        return [FinishedRound(r["round_no"], r["finished_at"], r["trajectories"]) for r in rows]

    def finish(self, round_no: int, when: datetime, trajectories: int) -> None:
        """Record round ``round_no`` as finished (inside the caller's transaction, if any)."""
        with self.store.transaction() as conn:
            conn.execute("INSERT INTO evolution_rounds (round_no, finished_at, trajectories) VALUES (?, ?, ?)",
                         (round_no, when.isoformat(), trajectories))
