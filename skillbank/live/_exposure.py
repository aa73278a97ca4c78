"""Which eligible skills a run is shown: a deterministic draw per (run, skill, salt).

A skill is *eligible* for a run when retrieval would inject it. Whether it is then shown or held
back is decided by :func:`draw`, a hash of the run's id, the skill's id and the bank's salt to
[0, 1): the same run always gets the same arm for a skill, so it sees one arm for its whole life,
and runs are assigned independently of anything about them (the randomization the live effect
rests on). A pinned skill is always shown and never recorded: a person decided on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from skillbank.live._config import CANARY_TAG, LiveConfig
from skillbank.models import Skill, SkillStatus

__all__ = ["Arm", "Exposure", "ExposureDraw", "draw", "is_canary", "shown_probability"]


class Arm(str, Enum):
    shown = "shown"
    held = "held"


@dataclass(frozen=True)
class Exposure:
    """One eligible skill's arm in one run: shown or held back, and the chance it had of being shown."""

    skill_id: str
    version: int
    arm: Arm
    p_shown: float


def draw(run_id: str, skill_id: str, salt: str = "") -> float:
    """A number in [0, 1) fixed by ``(run_id, skill_id, salt)`` and uniform across them."""
    digest = hashlib.blake2b(f"{salt}\x1f{run_id}\x1f{skill_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0 ** 64


def is_canary(skill: Skill) -> bool:
    """Whether ``skill`` is in canary: active and tagged ``canary``."""
    return skill.status == SkillStatus.active and CANARY_TAG in skill.content.tags


def shown_probability(skill: Skill, config: LiveConfig) -> float | None:
    """The chance an eligible ``skill`` is shown to a run; ``None`` when it is not randomized
    (pinned, not active, or active with the holdout off)."""
    if skill.pinned or skill.status != SkillStatus.active:
        return None
    if is_canary(skill):
        return config.canary_exposure
    return 1.0 - config.holdout if config.holdout > 0 else None


class ExposureDraw:
    """Splits a run's eligible skills into the shown and the held back, as ``config`` says."""

    def __init__(self, config: LiveConfig | None = None):
        self.config = config or LiveConfig()

    def assign(self, run_id: str | None, skills: Sequence[Skill]) -> list[Exposure]:
        """The arm of each randomized skill of ``skills`` in run ``run_id``, in their order.

        Without a run id (a turn outside any run) no arm can hold for a run's life: canaries
        are held back and active skills shown, and neither is recorded (``p_shown`` 0 or 1).
        """
        out = []
        for skill in skills:
            p = shown_probability(skill, self.config)
            if p is None:
                continue
            if run_id is None:
                arm, p = (Arm.held, 0.0) if is_canary(skill) else (Arm.shown, 1.0)
            else:
                arm = Arm.shown if draw(run_id, skill.id, self.config.salt) < p else Arm.held
            out.append(Exposure(skill.id, skill.version, arm, p))
        return out
