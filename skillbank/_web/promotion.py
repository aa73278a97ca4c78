"""What promoting a candidate asks the reviewer to confirm first, in the page's words.

The page shows each confirmation beside its Promote button (a box to tick) and the server
checks them again inside the write transaction, so a promotion never depends on a flag the
page does not offer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from skillbank.bank import SkillBank
from skillbank.errors import SkillBankError
from skillbank.evolution import _review as review
from skillbank.models import Skill, SkillStatus

__all__ = ["Confirmation", "Unconfirmed", "confirmations", "for_candidate", "needs_force", "unconfirmed"]

QUARANTINED, TARGET_CHANGED, UNMEASURED = "quarantined", "target_changed", "unmeasured"
# The confirmations that the bank's own promote refuses without ``force``.
FORCED = frozenset({QUARANTINED, TARGET_CHANGED})


@dataclass(frozen=True)
class Confirmation:
    """One thing to confirm before promoting: ``kind`` (the form's ``confirm`` value) and what
    the reviewer confirms, as the page shows it."""

    kind: str
    says: str


class Unconfirmed(SkillBankError):
    """A promotion posted without ticking what the page asked to confirm (a 409, nothing written)."""

    def __init__(self, name: str, missing: list[Confirmation]) -> None:
        super().__init__(f"Promoting {name} needs your confirmation: "
                         + "; ".join(c.says for c in missing)
                         + ". Tick the box beside Promote and promote again, or reject it.")
        self.missing = missing


def confirmations(pending: review.Pending, target: Skill | None, measured: bool) -> list[Confirmation]:
    """What promoting ``pending`` needs confirmed: a quarantined candidate, a draft whose target
    changed since it was proposed (``target`` is that skill as it is now), and a candidate the
    gate never measured (``measured`` False)."""
    out = []
    cand = pending.skill
    if cand.status == SkillStatus.quarantined:
        out.append(Confirmation(QUARANTINED, f"it is quarantined ({cand.note or 'flagged by a lint'}); "
                                             "I read it and it is safe"))
    if target is not None and pending.base_hash and target.content_hash != pending.base_hash:
        out.append(Confirmation(TARGET_CHANGED, f"{target.name} changed since this edit was proposed "
                                                f"(now v{target.version}); I read the diff"))
    if not measured:
        out.append(Confirmation(UNMEASURED, "the gate never measured it (no trials with and without "
                                            "it); I accept it unmeasured"))
    return out


def for_candidate(bank: SkillBank, skill_id: str) -> list[Confirmation]:
    """:func:`confirmations` for the candidate ``skill_id``, read from the bank."""
    pending = review.get_pending(bank, skill_id)
    target = bank.get_skill(pending.target) if pending.target else None
    measured = bool(bank.gate_records.latest_for_each([pending.skill.id]))
    return confirmations(pending, target, measured)


def unconfirmed(needed: list[Confirmation], ticked: Iterable[str]) -> list[Confirmation]:
    """The confirmations in ``needed`` whose kind is not among the ``ticked`` form values."""
    given = set(ticked)
    return [c for c in needed if c.kind not in given]


def needs_force(needed: list[Confirmation]) -> bool:
    """Whether the bank's promote must be forced past what was confirmed."""
    return any(c.kind in FORCED for c in needed)
