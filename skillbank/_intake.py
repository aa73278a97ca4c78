"""How text enters the bank from outside an evolution round (added, edited, imported): scrubbed
of secrets, validated, screened, and recorded with its source."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Iterator

from pydantic import ValidationError

from skillbank.errors import InvalidSkillError, SkillBankError
from skillbank.lessons import scrub_lesson
from skillbank.models import Skill, SkillContent, SkillStatus, error_message
from skillbank.protocols import Screen, ScrubsText
from skillbank._provenance import Source, SourceRecord, recorded, source_entry, source_of_author
from skillbank._skillmd import read_skill_dir
from skillbank.store._base import Store
from skillbank.store._drafts import DraftRepo, free_draft_name
from skillbank.store._skills import SkillRepo

__all__ = ["ImportChange", "ImportReport", "Imported", "build_content", "updated_content", "screen_status",
           "with_source", "import_skill_files"]


def build_content(scrubber: ScrubsText, **fields: Any) -> SkillContent:
    """A skill's content from ``fields``, its text scrubbed; invalid fields raise
    :class:`InvalidSkillError` with the readable reasons only."""
    # Secrets never enter a skill, and so never a prompt.
    for key in ("description", "body"):
        if isinstance(fields.get(key), str):
            fields[key] = scrubber(fields[key])
    if fields.get("lessons"):
        # The body is rendered from the lessons: scrub what they say, then render again.
        fields["lessons"] = tuple(scrub_lesson(x, scrubber) for x in fields["lessons"])
        fields.pop("body", None)
    try:
        return SkillContent(**fields)
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc']))}: {error_message(e)}" for e in exc.errors())
        raise InvalidSkillError(f"invalid skill: {reasons}") from None


def updated_content(scrubber: ScrubsText, skills: SkillRepo, skill_id: str,
                    changes: dict[str, Any]) -> tuple[Skill, SkillContent]:
    """The skill ``skill_id`` names and its content with ``changes`` applied (``None`` values
    leave a field as it is), as :func:`build_content` makes it; a field that is not a content
    field is an error, before the skill is looked up."""
    unknown = set(changes) - set(SkillContent.model_fields)
    if unknown:
        raise InvalidSkillError(f"cannot update {', '.join(sorted(unknown))}: updatable fields are "
                                f"{', '.join(SkillContent.model_fields)}")
    current = skills.get(skill_id)
    fields = current.content.model_dump()
    fields.update({k: v for k, v in changes.items() if v is not None})
    return current, build_content(scrubber, **fields)


def screen_status(screen: Screen, content: SkillContent, status: SkillStatus, note: str | None, *,
                  previous: Skill | None = None, allow_unsafe: bool = False) -> tuple[SkillStatus, str | None]:
    """The status and note a skill entering with ``content`` gets: quarantined when ``screen``
    flags it, unless the caller explicitly allows it (then the findings go in the note)."""
    if status in (SkillStatus.quarantined, SkillStatus.retired):
        return status, note  # never injected: nothing to guard
    # Lines of a quarantined version were never let in, so they are checked again.
    known = previous.content if previous is not None and previous.status != SkillStatus.quarantined else None
    result = screen(content, previous=known)
    if result.ok:
        return status, note
    if allow_unsafe:
        return status, "; ".join(filter(None, [f"allowed unsafe: {result.reason}", note]))
    return SkillStatus.quarantined, "; ".join(filter(None, [f"quarantined: {result.reason}", note]))


def with_source(provenance: Iterable[str], source: Source | None, author: str) -> list[str]:
    """``provenance`` with the text's source recorded (unless it already holds one)."""
    entries = list(provenance)
    if recorded(entries) is None:
        record = SourceRecord(source) if source is not None else source_of_author(author)
        entries.insert(0, source_entry(record.source, record.detail))
    return entries


class ImportChange(str, Enum):
    """What importing one SKILL.md did to the bank."""

    new = "new"  # a skill the bank did not hold
    changed = "changed"  # a new version of the skill its file names
    proposed = "proposed"  # an edit of an active skill, waiting for review as its next version
    unchanged = "unchanged"  # the bank already holds this content: nothing written


@dataclass(frozen=True)
class Imported:
    """One file's outcome: ``skill`` is what was written (for ``proposed``, the pending edit;
    for ``unchanged``, the bank's skill as it stands)."""

    change: ImportChange
    skill: Skill
    path: str
    target: Skill | None = None  # the active skill a proposed edit would update


@dataclass(frozen=True)
class ImportReport:
    """Every file's outcome, in the folder's order. Iterating yields the skills written (new,
    changed and proposed), so an unchanged file never looks like an import."""

    items: tuple[Imported, ...]

    def of(self, change: ImportChange) -> list[Imported]:
        return [i for i in self.items if i.change == change]

    @property
    def written(self) -> list[Skill]:
        return [i.skill for i in self.items if i.change != ImportChange.unchanged]

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.written)

    def __len__(self) -> int:
        return len(self.written)


def import_skill_files(store: Store, skills: SkillRepo, directory: Path, *, scrubber: ScrubsText, screen: Screen,
                       author: str, allow_unsafe: bool, trusted: bool) -> ImportReport:
    """``SkillBank.import_skills``: every file validated first, then all written in one transaction.

    A file whose skill the bank holds with the same content is left alone (with ``trusted``,
    also the same status and pin). A changed file of an *active* skill, not trusted, becomes a
    pending edit of that skill (its draft row, promoted with ``skillbank candidates promote``)
    while the active version stays injected; otherwise a changed file is a new version of its
    skill, a candidate unless trusted.
    """
    parsed = read_skill_dir(directory, consequence="nothing was imported")
    drafts = DraftRepo(store)
    items: list[Imported] = []
    with store.transaction():
        for item in parsed:
            content = build_content(scrubber, **item.content.model_dump())
            existing = None
            for key in (item.skill_id, content.name):
                if key:
                    with contextlib.suppress(SkillBankError):
                        existing = skills.get(key)
                        break
            wanted = SkillStatus(item.status or SkillStatus.active)
            if wanted == SkillStatus.active and not trusted:
                wanted = SkillStatus.candidate
            path = str(item.path)
            if existing is not None and existing.content_hash == content.hash() and (
                    not trusted or (existing.status == wanted and existing.pinned == item.pinned)):
                items.append(Imported(ImportChange.unchanged, existing, path))
                continue
            status, note = screen_status(screen, content, wanted, None, previous=existing,
                                         allow_unsafe=allow_unsafe)
            reason = f"imported from {path}"
            provenance = [source_entry(Source.skill_md, path)]
            if existing is None:
                items.append(Imported(ImportChange.new, skills.create(
                    content, status=status, pinned=item.pinned, author=author, reason=reason,
                    skill_id=item.skill_id, note=note, provenance=provenance), path))
            elif existing.status == SkillStatus.active and not trusted:
                draft = _write_draft(skills, drafts, existing, content, status=status, note=note,
                                     author=author, reason=reason, provenance=provenance)
                items.append(Imported(ImportChange.proposed, draft, path, target=existing))
            else:
                items.append(Imported(ImportChange.changed, skills.new_version(
                    existing.id, content=content, status=status, pinned=item.pinned, author=author,
                    reason=reason, action="import", note=note, provenance=provenance), path))
    return ImportReport(tuple(items))


def _write_draft(skills: SkillRepo, drafts: DraftRepo, target: Skill, content: SkillContent, *,
                 status: SkillStatus, note: str | None, author: str, reason: str,
                 provenance: list[str]) -> Skill:
    """The imported edit of active ``target`` as its pending next version (the draft row an
    evolution edit would use), recorded so that promoting it applies it to ``target``."""
    draft_id = drafts.draft_for(target.id)
    draft = None
    if draft_id is not None:
        with contextlib.suppress(SkillBankError):
            draft = skills.get(draft_id)
    if draft is not None:
        draft = skills.new_version(draft.id, content=content.model_copy(update={"name": draft.name}),
                                   status=status, author=author, reason=reason, action="import",
                                   note=note, provenance=provenance)
    else:
        name = free_draft_name(target.name, exists=lambda n: _exists(skills, n))
        draft = skills.create(content.model_copy(update={"name": name}), status=status, author=author,
                              reason=reason, note=note, provenance=provenance)
    drafts.save_pending(draft.id, {"kind": "edit", "target": target.id, "name": target.name,
                                   "base_hash": target.content_hash, "proposal_hash": content.hash(),
                                   "reason": reason, "author": author, "evidence": [], "absorb": [],
                                   "task_ids": [], "round": None, "parent": None})
    return draft


def _exists(skills: SkillRepo, name: str) -> bool:
    try:
        skills.get(name)
    except SkillBankError:
        return False
    return True
