"""The live experiment's settings: how often an eligible skill is held back, and the monitor's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

__all__ = ["CANARY_TAG", "LiveConfig"]

#: The tag that marks a skill in canary: active (so retrieval finds it) but shown to only
#: ``LiveConfig.canary_exposure`` of the runs it is eligible for, until the monitor decides.
CANARY_TAG = "canary"


@dataclass(frozen=True)
class LiveConfig:
    """Randomized exposure and the monitor's thresholds.

    ``canary_exposure``: the chance a canary skill is shown to a run it is eligible for (in (0, 1]).
    ``holdout``: the chance an active, unpinned skill is held back from such a run (0 turns the
    standing holdout off; below 1). ``salt``: mixed into every draw, so two banks (or two
    experiments on one bank) draw independently. ``alpha``: the error rate of each skill's
    confidence sequence, valid however often it is looked at. ``stale_after``: a skill with no
    eligible run for this long is flagged stale. ``min_per_arm``: a kind of request needs this many
    labelled runs in each arm before narrowing reads it.
    """

    canary_exposure: float = 0.5
    holdout: float = 0.05
    salt: str = ""
    alpha: float = 0.05
    stale_after: timedelta = timedelta(days=14)
    min_per_arm: int = 10

    def __post_init__(self) -> None:
        if not 0.0 < self.canary_exposure <= 1.0:
            raise ValueError(f"canary_exposure must be in (0, 1], not {self.canary_exposure}")
        if not 0.0 <= self.holdout < 1.0:
            raise ValueError(f"holdout must be in [0, 1), not {self.holdout}")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), not {self.alpha}")
