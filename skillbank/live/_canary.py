"""Putting a skill into canary and taking it out: the ``canary`` tag on an active skill.

A canary is an active skill tagged ``canary``: retrieval finds it like any active skill, and the
exposure draw shows it to only ``LiveConfig.canary_exposure`` of its eligible runs. A tag, not a
new status, so every existing bank, both store backends and every reader of statuses read it
unchanged; the tag's change is a version like any edit, on the hash-chained history.
"""

from __future__ import annotations

from typing import Any

from skillbank.errors import SkillBankError
from skillbank.live._config import CANARY_TAG
from skillbank.models import Skill, SkillContent, SkillStatus

__all__ = ["canary_refusal", "start_canary", "with_canary", "without_canary"]


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


def canary_refusal(bank: Any, skill: Skill) -> str | None:
    """Why a person should not put ``skill`` into canary from a review screen, or ``None`` when
    they may: a retired skill, a quarantined one (its text was flagged: review it and promote it),
    a pinned one (a person decided on it; the draw never randomizes it), one already in canary,
    and a proposed edit of another skill (a canary of that row would be a second copy of the
    skill: promote or reject the edit). ``bank`` is a :class:`~skillbank.bank.SkillBank`."""
    if skill.status == SkillStatus.retired:
        return f"{skill.name} is retired; activate it by hand if it should be tried again"
    if skill.status == SkillStatus.quarantined:
        return (f"{skill.name} is quarantined ({skill.note or 'flagged by a lint'}): read it and promote it "
                "if it is safe")
    if skill.pinned:
        return f"{skill.name} is pinned: a person decided on it, and a pinned skill is always shown"
    if CANARY_TAG in skill.content.tags and skill.status == SkillStatus.active:
        return f"{skill.name} is already in canary"
    if skill.id in bank.drafts.draft_ids():
        return f"{skill.name} is a proposed edit of another skill: promote or reject the edit instead"
    return None
