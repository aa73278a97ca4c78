"""What the pages show, computed through the bank's public API only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillbank.bank import SkillBank
from skillbank.evolution import review
from skillbank.models import Skill, SkillStatus
from skillbank.store.history import diff_versions

PAGE_SIZE = 50
SORTS = ("name", "updated", "uses", "success")


@dataclass
class Listing:
    skills: list[Skill]
    total: int
    page: int
    pages: int
    scores: dict[str, float]


def list_page(bank: SkillBank, *, q: str, status: str, kind: str, tag: str, sort: str, page: int) -> Listing:
    """One page of skills. With ``q``: the bank's own search (what would be injected for that
    text), ranked by score; otherwise filtered and sorted."""
    status_filter = status or None
    if q:  # search answers with active skills only: what an agent would be given
        hits = bank.search(q, k=PAGE_SIZE, kinds=[kind] if kind else None, tags=[tag] if tag else None)
        return Listing([h.skill for h in hits], len(hits), 1, 1, {h.skill.id: h.score for h in hits})
    pages_before = max(0, page - 1)
    skills, total = bank.list_skills_page(status=status_filter, kind=kind or None, tag=tag or None,
                                          order=sort if sort in SORTS else "name",
                                          offset=pages_before * PAGE_SIZE, limit=PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    if page > pages:  # past the end (the bank shrank, or a typed URL): show the last page
        return list_page(bank, q=q, status=status, kind=kind, tag=tag, sort=sort, page=pages)
    return Listing(skills, total, max(1, page), pages, {})


def candidate_rows(bank: SkillBank) -> list[dict[str, Any]]:
    """The candidates queue, newest first, each with its diff against the skill it would edit
    and the gate's latest measurement of it, if any.

    The diff is of the two skills as they are now (a skill's row is its latest version: same
    content, status and pin), with the targets read in one batch. Reading the target and two
    versions per candidate (~600 queries for 200 candidates) took 57 ms p50 for these rows; the
    batch takes 17 ms (same diffs; measured beside bench_serve.py's candidates page). The gate
    records are read in one batch too, for the same reason.
    """
    items = review.list_candidates(bank)
    items.sort(key=lambda c: c.skill.updated_at, reverse=True)
    targets = bank.skills.get_many(c.target for c in items if c.target)
    gate = bank.gate_records.latest_for_each(c.skill.id for c in items)
    return [{"c": c, "diff": diff_versions(targets[c.target], c.skill) if c.target in targets else None,
             "gate": gate.get(c.skill.id)} for c in items]


def changes_since(bank: SkillBank, skill_id: str, drawn: int) -> list[str]:
    """The versions after ``drawn``, one line each, for a stale-form refusal."""
    return [f"v{v.version} by {v.author}: {v.reason}" for v in bank.history(skill_id) if v.version > drawn]


STATUSES = [s.value for s in SkillStatus]
