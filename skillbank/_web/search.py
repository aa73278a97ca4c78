"""The skills page's search: what an agent would be given for a text, and what it would not.

The injected skills are chosen by the injector itself (pinned and general skills, then the top
``k`` retrieved, under the toolset filter and the token budget), in the order they would
appear in the prompt; every other active skill the search finds follows, by score, marked with
why it stays out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from skillbank.adapters.config import GENERAL_K, InjectionConfig
from skillbank.adapters.injection import SkillInjector, fits_toolset
from skillbank.bank import SkillBank
from skillbank.models import Skill

__all__ = ["DEFAULT_K", "SearchRow", "search_rows"]

DEFAULT_K = InjectionConfig().k
SHOWN = 50  # skills listed in all, injected or not


@dataclass(frozen=True)
class SearchRow:
    """A skill the search found: ``injected`` with its place in the prompt (``position``, from 1)
    and whether it is a standing (general) skill, on every turn, or left out with
    ``left_out`` saying why (the search breaks ties between equal scores)."""

    skill: Skill
    score: float | None  # similarity to the text; None for a standing (general) skill not retrieved
    injected: bool
    position: int | None = None
    standing: bool = False
    left_out: str = ""


def search_rows(bank: SkillBank, text: str, *, k: int = DEFAULT_K, tools: Sequence[str] | None = None,
                kind: str | None = None, tag: str | None = None) -> list[SearchRow]:
    """What would be injected for ``text`` (``tools``: the agent's tool names, None when not
    known), then the other matches by score. ``kind``/``tag`` narrow both."""
    injector = SkillInjector(bank, InjectionConfig(k=k, kinds=(kind,) if kind else None, tags=(tag,) if tag else None,
                             general_k=GENERAL_K))
    chosen = injector.select(text, tools=list(tools) if tools else None)
    pinned, general = injector.standing()
    standing = {s.id for s in pinned} | {s.id for s in general}
    hits = bank.search(text, k=SHOWN, kinds=[kind] if kind else None, tags=[tag] if tag else None)
    scores = {h.skill.id: float(h.score) for h in hits}
    rows = [SearchRow(h.skill, scores.get(h.skill.id), True, i + 1, h.skill.id in standing)
            for i, h in enumerate(chosen)]
    taken = {h.skill.id for h in chosen}
    slots_full = sum(h.skill.id not in standing for h in chosen) >= k
    for hit in hits:
        if hit.skill.id in taken:
            continue
        if tools and not fits_toolset(hit.skill, tools):
            why = "learned with other tools than these"
        elif slots_full:
            why = f"below the top {k}"
        else:
            why = "left out by the token budget or because the text asks for a tool it does not call"
        rows.append(SearchRow(hit.skill, float(hit.score), False, left_out=why))
    return rows
