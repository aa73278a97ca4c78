"""Where a skill version's text came from: a person, a SKILL.md file, or a distiller.

The source is one entry of the version's provenance (``source:<kind>`` or
``source:<kind>:<detail>``, e.g. ``source:skill-md:/path/to/SKILL.md``); every other entry is a
trajectory id the version was learned from. This module is the only reader and writer of that
entry, so the rest of the code asks it for :func:`evidence` and :func:`text_source` instead of
looking at the strings.

Trust follows the source: a person's text keeps the status it asks for; imported SKILL.md text
arrives as a ``candidate`` unless the caller trusts the folder; text an LLM distiller wrote is never
promoted by a policy alone (only the gate's measured gain or a person makes it active).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillbank.models import SkillVersion

__all__ = ["Source", "SourceRecord", "evidence", "recorded", "source_entry", "source_of_author", "text_source"]

PREFIX = "source:"


class Source(str, Enum):
    person = "person"  # SkillBank.add_skill / update_skill, `skillbank skills add|edit`
    skill_md = "skill-md"  # SkillBank.import_skills, `skillbank import`
    rule_distiller = "rule-distiller"  # evolution's rule-based distiller (and its templates)
    llm_distiller = "llm-distiller"  # evolution's LLM distiller: model-written text


@dataclass(frozen=True)
class SourceRecord:
    source: Source
    detail: str | None = None  # the file an import came from, the distiller's name

    def __str__(self) -> str:
        return self.source.value + (f" ({self.detail})" if self.detail else "")


def source_entry(source: Source, detail: str | None = None) -> str:
    """The provenance entry that records ``source``."""
    return PREFIX + source.value + (f":{detail}" if detail else "")


def source_of_author(author: str) -> SourceRecord:
    """The source an author name implies (versions written before sources were recorded, and
    writers that pass no source): ``evolution:llm:*`` is model text, other ``evolution:*`` the
    rule distiller, ``import`` a SKILL.md file, anyone else a person."""
    if author.startswith("evolution:llm"):
        return SourceRecord(Source.llm_distiller, author.removeprefix("evolution:"))
    if author.startswith("evolution:"):
        return SourceRecord(Source.rule_distiller, author.removeprefix("evolution:"))
    if author == "import":
        return SourceRecord(Source.skill_md)
    return SourceRecord(Source.person, author)


def _parse(entry: str) -> SourceRecord | None:
    if not entry.startswith(PREFIX):
        return None
    kind, _, detail = entry[len(PREFIX):].partition(":")
    try:
        return SourceRecord(Source(kind), detail or None)
    except ValueError:
        return None


def recorded(provenance: Iterable[str]) -> SourceRecord | None:
    """The source recorded in a version's provenance, if any."""
    for entry in provenance:
        found = _parse(entry)
        if found is not None:
            return found
    return None


def evidence(provenance: Iterable[str]) -> tuple[str, ...]:
    """The trajectory ids of a version's provenance (its source entry left out)."""
    return tuple(e for e in provenance if _parse(e) is None)


def text_source(versions: Sequence["SkillVersion"]) -> SourceRecord | None:
    """Where the text of the last of ``versions`` (a skill's history, oldest first) came from:
    the source of the first version in the unbroken run of versions with the same content
    (status changes and rollbacks to it carry no text of their own)."""
    if not versions:
        return None
    current = versions[-1].content_hash
    first = len(versions) - 1
    while first > 0 and versions[first - 1].content_hash == current:
        first -= 1
    for version in versions[first:]:
        found = recorded(version.provenance)
        if found is not None:
            return found
    return source_of_author(versions[first].author)
