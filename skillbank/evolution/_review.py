"""Candidates waiting for review, and promoting or rejecting them.

A candidate is either a new skill (status ``candidate``) or, for an edit of an *active* skill,
a **pending version** of that skill: the proposed content waits in a draft row (named
``<target>-next`` in storage) while the active version keeps being injected. Drafts are not
skills: ``SkillBank.list_skills`` and ``skillbank skills list`` leave them out, and ``skillbank
candidates list`` shows each as the next version of its target. Promoting one appends its
content as that next version (with the edit's provenance and reason) and retires the draft row;
a merge also retires the skills it absorbed. Rejecting remembers the proposed content hash so
the same edit is not proposed again.

What promoting a candidate would do, and the draft used for each target, live in the bank's
``drafts`` (:class:`~skillbank.store._drafts.DraftRepo`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from skillbank.errors import InvalidSkillError
from skillbank.evolution._seam import EvolutionBank
from skillbank._hashing import content_hash
from skillbank.models import Skill, SkillContent, SkillStatus


@dataclass
class Pending:
    """A candidate and what promoting it would do."""

    skill: Skill
    kind: str = "add"
    target: str | None = None  # the active skill a draft would update
    absorb: list[str] = field(default_factory=list)
    name: str | None = None  # the target's name after promotion
    proposal_hash: str | None = None  # hash of the proposed content, as proposed
    base_hash: str | None = None  # the target's content hash when the draft was made
    evidence: list[str] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)
    reason: str = ""
    author: str = ""
    round: int | None = None
    parent: str | None = None  # for a skill split off from another

    @property
    def is_draft(self) -> bool:
        return self.target is not None

    def info(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "absorb": self.absorb, "name": self.name,
                "proposal_hash": self.proposal_hash, "base_hash": self.base_hash,
                "evidence": self.evidence, "task_ids": self.task_ids, "reason": self.reason,
                "author": self.author, "round": self.round, "parent": self.parent}


# -- remembering rejected edits ----------------------------------------------------------------------


def edit_key(content: SkillContent) -> str:
    """The content's hash with every number blanked: proposals that differ only in evidence
    counts ("seen in 3 runs" / "in 5 runs") are the same edit."""
    data = content.model_dump(mode="json")
    for key in ("description", "body"):
        data[key] = re.sub(r"\d[\d,.]*", "#", data[key])
    return "edit:" + content_hash(data)


def remember_rejection(bank: EvolutionBank, content: SkillContent, skill_id: str | None, reason: str,
                       extra: Iterable[str] = ()) -> None:
    """Remember ``content`` (exactly and as an edit) so no round proposes it again."""
    for key in dict.fromkeys([content.hash(), edit_key(content), *extra]):
        bank.skills.remember_rejected(key, skill_id, reason)


def is_rejected(bank: EvolutionBank, content: SkillContent) -> bool:
    """Whether ``content`` (or the same edit with other counts) was rejected or rolled back."""
    return bank.skills.was_rejected(content.hash()) or bank.skills.was_rejected(edit_key(content))


def get_pending(bank: EvolutionBank, skill_id: str) -> Pending:
    """The candidate ``skill_id`` names: a candidate skill, or an active skill's pending version
    (by the active skill's own name or id, or the draft's)."""
    skill = bank.get_skill(skill_id)
    draft = bank.drafts.draft_for(skill.id) if skill.status == SkillStatus.active else None
    if draft is not None and bank.drafts.pending(draft) is not None:
        skill = bank.get_skill(draft)
    info = bank.drafts.pending(skill.id) or {}
    return Pending(skill=skill, **{k: v for k, v in info.items() if k in Pending.__dataclass_fields__})


def list_candidates(bank: EvolutionBank, *, include_quarantined: bool = True) -> list[Pending]:
    """Every candidate (and quarantined) skill with what promoting it would do."""
    statuses = [SkillStatus.candidate] + ([SkillStatus.quarantined] if include_quarantined else [])
    out = []
    for status in statuses:
        for skill in bank.skills.list(status=status):
            info = bank.drafts.pending(skill.id) or {}
            out.append(Pending(skill=skill, **{k: v for k, v in info.items()
                                               if k in Pending.__dataclass_fields__}))
    return out


# -- decisions -------------------------------------------------------------------------------------


def promote(bank: EvolutionBank, skill_id: str, *, force: bool = False, reason: str | None = None,
            author: str = "human") -> Skill:
    """Make a candidate active (a draft: apply it to its target). Returns the active skill.

    A quarantined candidate, or a draft whose target changed since it was made, needs
    ``force=True``; the error says why.
    """
    p = get_pending(bank, skill_id)
    cand = p.skill
    if cand.status == SkillStatus.quarantined and not force:
        raise InvalidSkillError(
            f"{cand.name} is quarantined: {cand.note or 'flagged by a lint'}. Read it "
            f"(`skillbank candidates show {cand.id}`) and promote with --force if it is safe")
    if cand.status not in (SkillStatus.candidate, SkillStatus.quarantined):
        raise InvalidSkillError(f"{cand.name} is {cand.status.value}, not a candidate")
    why = reason or "promoted by review"
    detail = f"{why}; {p.kind} from {p.author or 'evolution'}: {p.reason}" if p.reason else why
    with bank.transaction():
        if p.target is not None:  # a draft: an edit of its target
            target = bank.get_skill(p.target)
            if p.base_hash and target.content_hash != p.base_hash and not force:
                raise InvalidSkillError(
                    f"{target.name} changed since this edit was proposed (now v{target.version}); "
                    "review the diff and promote with --force, or reject it")
            content = cand.content.model_copy(update={"name": p.name or target.name})
            result = bank.skills.new_version(
                target.id, content=content, status=SkillStatus.active, author=author,
                reason=f"{detail} (candidate {cand.id})", provenance=p.evidence,
                note=None, action=f"evolve:{p.kind}")
            # A draft whose content the target already has (another edit brought it there) changes
            # nothing on the target: the decision, with its reason, is kept on the draft instead.
            already = result.version == target.version
            bank.skills.new_version(cand.id, status=SkillStatus.retired, author=author,
                                    reason=f"promoted into {target.name} v{result.version}"
                                    + (f", which already had its content: {detail}" if already else ""),
                                    note=f"promoted into {target.id} v{result.version}",
                                    action="status:retired")
        else:
            result = bank.skills.new_version(
                cand.id, status=SkillStatus.active, author=author, reason=detail,
                provenance=p.evidence, note=None, action="status:active")
        for absorbed in p.absorb:
            other = bank.get_skill(absorbed)
            if other.status != SkillStatus.retired and not other.pinned:
                bank.skills.new_version(other.id, status=SkillStatus.retired, author=author,
                                        reason=f"merged into {result.name}",
                                        note=f"merged into {result.id}", action="status:retired")
        bank.drafts.drop_pending(cand.id)
    return result


def reject(bank: EvolutionBank, skill_id: str, *, reason: str = "rejected by review", author: str = "human") -> Skill:
    """Retire a candidate and remember its content so the same edit is not proposed again."""
    p = get_pending(bank, skill_id)
    cand = p.skill
    if cand.status not in (SkillStatus.candidate, SkillStatus.quarantined):
        raise InvalidSkillError(f"{cand.name} is {cand.status.value}, not a candidate")
    proposed = cand.content.model_copy(update={"name": p.name or cand.name})
    remember_rejection(bank, proposed, p.target or cand.id, reason,
                       extra=[h for h in (p.proposal_hash, cand.content_hash) if h])
    with bank.transaction():
        result = bank.skills.new_version(cand.id, status=SkillStatus.retired, author=author,
                                         reason=f"rejected: {reason}", note=f"rejected: {reason}",
                                         action="status:retired")
        bank.drafts.drop_pending(cand.id)
    return result
