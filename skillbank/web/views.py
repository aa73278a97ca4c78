"""What the pages show, computed through the bank's public API only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillbank.models import Skill, SkillStatus

PAGE_SIZE = 50
SORTS = {
    "name": (lambda s: s.name.lower(), False),
    "updated": (lambda s: s.updated_at, True),
    "uses": (lambda s: s.stats.uses, True),
    "success": (lambda s: -1.0 if s.stats.success_rate is None else s.stats.success_rate, True),
}


@dataclass
class Listing:
    skills: list[Skill]
    total: int
    page: int
    pages: int
    scores: dict[str, float]


def list_page(bank: Any, *, q: str, status: str, kind: str, tag: str, sort: str, page: int) -> Listing:
    """One page of skills. With ``q``: the bank's own search (what would be injected for that
    text), ranked by score; otherwise filtered and sorted."""
    status_filter = status or None
    if q:  # search answers with active skills only: what an agent would be given
        hits = bank.search(q, k=PAGE_SIZE, kinds=[kind] if kind else None, tags=[tag] if tag else None)
        return Listing([h.skill for h in hits], len(hits), 1, 1, {h.skill.id: h.score for h in hits})
    skills = bank.list_skills(status=status_filter, kind=kind or None, tag=tag or None)
    key, reverse = SORTS.get(sort, SORTS["name"])
    skills.sort(key=key, reverse=reverse)
    pages = max(1, -(-len(skills) // PAGE_SIZE))
    page = min(max(1, page), pages)
    return Listing(skills[(page - 1) * PAGE_SIZE: page * PAGE_SIZE], len(skills), page, pages, {})


def changes_since(bank: Any, skill_id: str, drawn: int) -> list[str]:
    """The versions after ``drawn``, one line each, for a stale-form refusal."""
    return [f"v{v.version} by {v.author}: {v.reason}" for v in bank.history(skill_id) if v.version > drawn]


STATUSES = [s.value for s in SkillStatus]
