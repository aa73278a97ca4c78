"""What a distiller hands back: proposed changes to the bank, not yet linted or written."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from skillbank.models import SkillContent


class ChangeKind(str, Enum):
    add = "add"  # a new skill
    update = "update"  # a new version of one skill
    merge = "merge"  # a new version of one skill that absorbs another (retired on promotion)
    # The member shadows str.split on purpose (its name is its stored value): mypy flags any
    # str-mixin member named like a str method.
    split = "split"  # type: ignore[assignment]  # a narrowed version of one skill, or a skill split off from it
    retire = "retire"  # a status change: the skill stops being injected
    flag = "flag"  # a status change: quarantined as a likely environment exploit


@dataclass
class Proposal:
    """One proposed change.

    ``target`` is the skill an update/merge/split/retire applies to (``None`` for a new skill,
    including a skill split off from ``parent``). ``evidence`` lists trajectory ids; they
    become the version's provenance.
    """

    kind: ChangeKind
    reason: str
    evidence: tuple[str, ...] = ()
    content: SkillContent | None = None
    target: str | None = None
    parent: str | None = None  # for a skill split off from another
    absorb: tuple[str, ...] = ()  # merge: skills retired when this is promoted
    origin: str = ""  # "revise" | "induce" | "guard" | "generalise" | "dedupe" | "harm" | "budget"
    # Who wrote the text, when it is not the round's distiller as a whole (one part of a
    # CombinedDistiller); it becomes the version's author, and so its text source.
    author: str = ""

    def __post_init__(self) -> None:
        self.kind = ChangeKind(self.kind)
        self.evidence = tuple(dict.fromkeys(self.evidence))


def joint_author(first: str, second: str) -> str:
    """The author of one text made from two proposals' texts: model-written text wins, so a
    merge that carries any of it is treated (and gated) as model-written."""
    return second if second.startswith("evolution:llm") and not first.startswith("evolution:llm") else first


@dataclass
class Usage:
    """Model usage of a distiller in one round."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: list[str] = field(default_factory=list)  # calls skipped after bounded retries

    def as_dict(self) -> dict[str, object]:
        return {"calls": self.calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "failures": list(self.failures)}
