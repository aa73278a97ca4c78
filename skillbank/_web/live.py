"""The live evidence as the review pages show it: a skill's live effect, the canaries with theirs,
the monitor's rollbacks waiting for a person, and the two actions on them (start a canary,
acknowledge a rollback).

Every number comes from :mod:`skillbank.live._view`, the monitor's own parts, read with the kind
of request ``skillbank monitor`` uses (:func:`~skillbank.evolution._templates.request_kind`), so
the page and the command agree.
"""

from __future__ import annotations

from skillbank.bank import SkillBank
from skillbank.errors import SkillBankError
from skillbank.evolution._templates import request_kind
from skillbank.live._canary import canary_refusal, start_canary
from skillbank.live._config import LiveConfig
from skillbank.live._decisions import MonitorVersion, acknowledge_rollback, pending_rollbacks
from skillbank.live._view import LiveView, canaries, live_view, live_views
from skillbank.live._exposure import is_canary
from skillbank.models import Skill, SkillStatus

__all__ = ["DONE", "CanaryRefused", "acknowledge", "canary_views", "done_message", "for_skill", "refusal", "start",
           "waiting"]

#: What the skill page says after an action it redirected from (``?done=KEY``): a fixed sentence
#: per key, so nothing from the address is ever echoed into the page.
DONE = {
    "canary": "{name} is in canary (v{version}): it stays active, shown to {share} of the runs it is eligible "
              "for and held back from the rest, until the monitor promotes or rejects it on its live effect.",
    "ack": "Acknowledged: the monitor's rollback of {name} is seen. It stays retired and is no longer marked "
           "in the skills list; activate it to try it again.",
}


class CanaryRefused(SkillBankError):
    """A canary the page does not offer was posted (a 409; nothing written)."""


def for_skill(bank: SkillBank, skill_id: str, config: LiveConfig) -> LiveView:
    """The skill's :class:`~skillbank.live._view.LiveView` (reads only)."""
    return live_view(bank, skill_id, config, kind_of=request_kind)


def canary_views(bank: SkillBank, config: LiveConfig) -> list[LiveView]:
    """Each skill in canary with its running evidence, by name (reads only)."""
    return live_views(bank, [s.id for s in canaries(bank)], config, kind_of=request_kind)


def waiting(bank: SkillBank) -> dict[str, tuple[Skill, MonitorVersion]]:
    """The monitor's rollbacks no person has acknowledged, each with its skill, by skill id, in
    the order of the skills' names (reads only)."""
    found = pending_rollbacks(bank)
    skills = bank.skills.get_many(found)
    return {sid: (skills[sid], found[sid]) for sid in sorted(found, key=lambda sid: skills[sid].name)}


def refusal(bank: SkillBank, skill: Skill) -> str | None:
    """Why the page offers no canary for ``skill`` (``None``: it offers one)."""
    return canary_refusal(bank, skill)


def start(bank: SkillBank, skill_id: str, *, author: str, reason: str) -> Skill:
    """Put the skill into canary as ``author``; a skill :func:`refusal` names is refused with why.

    Raises:
        CanaryRefused: the skill may not go into canary (nothing written).
    """
    skill = bank.get_skill(skill_id)
    why = canary_refusal(bank, skill)
    if why:
        raise CanaryRefused(why)
    return start_canary(bank.skills, skill.id, author=author, reason=reason)


def acknowledge(bank: SkillBank, skill_id: str, *, author: str, reason: str) -> MonitorVersion:
    """Acknowledge the monitor's rollback of the skill as ``author`` (an event on the change log)."""
    return acknowledge_rollback(bank, skill_id, author=author, reason=reason)


def done_message(key: str | None, view: LiveView, config: LiveConfig) -> str | None:
    """The sentence :data:`DONE` holds for ``key``, filled from the skill of ``view``; ``None`` for
    another key, or when the skill is not as the action left it (an address typed by hand)."""
    skill = view.skill
    if key == "canary" and not is_canary(skill):
        return None
    if key == "ack" and (view.waiting is not None or skill.status != SkillStatus.retired):
        return None
    if key not in DONE:
        return None
    return DONE[key].format(name=skill.name, version=skill.version, share=f"{config.canary_exposure:.0%}")
