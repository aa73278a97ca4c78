"""Putting a skill into canary and taking it out: the ``canary`` tag on an active skill.

A canary is an active skill tagged ``canary``: retrieval finds it like any active skill, and the
exposure draw shows it to only ``LiveConfig.canary_exposure`` of its eligible runs. A tag, not a
new status, so every existing bank, both store backends and every reader of statuses read it
unchanged; the tag's change is a version like any edit, on the hash-chained history.
"""

from __future__ import annotations

from typing import Any

from skillbank.errors import SkillBankError
from skillbank.live.config import CANARY_TAG
from skillbank.models import Skill, SkillContent, SkillStatus

__all__ = ["start_canary", "with_canary", "without_canary"]


def with_canary(content: SkillContent) -> SkillContent:
    return content.model_copy(update={"tags": tuple(dict.fromkeys((*content.tags, CANARY_TAG)))})


def without_canary(content: SkillContent) -> SkillContent:
    return content.model_copy(update={"tags": tuple(t for t in content.tags if t != CANARY_TAG)})


def start_canary(skills: Any, skill_id: str, *, author: str = "human",
                 reason: str = "canary: shown to part of its eligible runs until the monitor decides") -> Skill:
    """Put ``skill_id`` (a candidate, or any skill not retired) into canary: active and tagged
    ``canary``, in one new version. ``skills`` is the bank's skill repository."""
    skill = skills.get(skill_id)
    if skill.status == SkillStatus.retired:
        raise SkillBankError(f"{skill.name} is retired; activate it by hand if it should be tried again")
    return skills.new_version(skill.id, content=with_canary(skill.content), status=SkillStatus.active,
                              author=author, reason=reason, action="status:active")
