"""What the pages show, computed through the bank's public API only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillbank.bank import SkillBank
from skillbank.evolution import _review as review
from skillbank.lessons import Lesson, sentence, spec_of
from skillbank.models import Skill, SkillStatus
from skillbank.store._history import diff_versions
from skillbank._web import promotion

PAGE_SIZE = 50
HASH_DIGITS = 12  # as the CLI shows a content hash
SORTS = ("name", "updated", "uses", "success")


@dataclass
class Listing:
    skills: list[Skill]
    total: int
    page: int
    pages: int
    draft_of: dict[str, Skill]  # a proposed edit's row id -> the skill it edits


def list_page(bank: SkillBank, *, status: str, kind: str, tag: str, sort: str, page: int) -> Listing:
    """One page of skills, filtered and sorted, proposed edits (drafts) included: every row the
    bank holds is counted and listed, so the total agrees with ``skillbank stats``."""
    pages_before = max(0, page - 1)
    skills, total = bank.skills.page(status=status or None, kind=kind or None, tag=tag or None,
                                     hide_drafts=False, order=sort if sort in SORTS else "name",
                                     offset=pages_before * PAGE_SIZE, limit=PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    if page > pages:  # past the end (the bank shrank, or a typed URL): show the last page
        return list_page(bank, status=status, kind=kind, tag=tag, sort=sort, page=pages)
    targets = bank.drafts.targets_of(s.id for s in skills)
    by_id = bank.skills.get_many(targets.values())
    return Listing(skills, total, max(1, page), pages,
                   {d: by_id[t] for d, t in targets.items() if t in by_id})


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
             "gate": gate.get(c.skill.id),
             "checks": promotion.confirmations(c, targets.get(c.target) if c.target else None,
                                               c.skill.id in gate)} for c in items]


def changes_since(bank: SkillBank, skill_id: str, drawn: int) -> list[str]:
    """The versions after ``drawn``, one line each, for a stale-form refusal."""
    return [f"v{v.version} by {v.author}: {v.reason}" for v in bank.history(skill_id) if v.version > drawn]


STATUSES = [s.value for s in SkillStatus]


def short_hash(value: str | None) -> str:
    """The first hex digits of a content hash (``sha256:...``), without the algorithm prefix."""
    return value.split(":", 1)[-1][:HASH_DIGITS] if value else "–"


@dataclass(frozen=True)
class LessonView:
    """A lesson as the skill page shows it: the sentence a model reads and the fields it is
    made of (only those set; steps and examples are in the sentence)."""

    kind: str
    sentence: str
    fields: list[tuple[str, str]]


def lesson_view(lesson: Lesson) -> LessonView:
    """The lesson's sentence and the fields its kind has (those set; steps counted)."""
    fields = [(name, str(value)) for name in type(lesson).model_fields
              if name not in ("kind", "examples", "steps") and (value := getattr(lesson, name)) is not None]
    if lesson.steps:
        fields.append(("steps", str(len(lesson.steps))))
    return LessonView(spec_of(lesson.kind).name, sentence(lesson), fields)


@dataclass(frozen=True)
class ProvenanceView:
    """What a version cites: how many runs (linked as one filtered runs page) and anything else."""

    runs: int
    other: list[str]


def provenance_view(provenance: list[str]) -> ProvenanceView:
    runs = [p for p in provenance if p.startswith("tr_")]
    return ProvenanceView(len(runs), [p for p in provenance if not p.startswith("tr_")])
