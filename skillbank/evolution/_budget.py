"""The bank budget (steps 8 and 11): caps on active skills and their total rendered size.

Over a cap, the least useful active, unpinned skills are retired first, in the order of
:func:`~skillbank.prune.least_useful_first` (also what ``SkillBank.prune(max_active=...)`` retires
by, so it lives below the bank). A round may
retire at most
``ceil(max_retire_fraction * active skills at the start of the round)`` skills in all (harmful
and over-budget together), so one bad batch of labels cannot empty a bank.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from skillbank.evolution.config import EvolutionConfig
from skillbank.models import Skill
from skillbank.prune import least_useful_first
from skillbank.retrieval import approx_tokens, render_one


def retire_allowance(n_active: int, fraction: float) -> int:
    return math.ceil(max(0.0, fraction) * n_active) if n_active > 0 else 0


def rendered_tokens(skills: Iterable[Skill]) -> int:
    return sum(approx_tokens(render_one(s)) for s in skills)


def over_budget(active: list[Skill], config: EvolutionConfig, *, protect: Iterable[str] = (),
                limit: int | None = None) -> list[tuple[Skill, str]]:
    """Skills to retire to get ``active`` within the caps (at most ``limit`` of them)."""
    protected = set(protect)
    count = len(active)
    tokens = rendered_tokens(active)
    victims = least_useful_first(s for s in active if not s.pinned and s.id not in protected)
    out: list[tuple[Skill, str]] = []
    for skill in victims:
        if count <= config.max_active and tokens <= config.max_rendered_tokens:
            break
        if limit is not None and len(out) >= limit:
            break
        reason = (f"bank budget: {count} active skills (cap {config.max_active}), ~{tokens} rendered "
                  f"tokens (cap {config.max_rendered_tokens}); least useful "
                  f"(usefulness {skill.stats.usefulness:.2f}, {skill.stats.uses} uses)")
        out.append((skill, reason))
        count -= 1
        tokens -= approx_tokens(render_one(skill))
    return out


def no_room(active: list[Skill], pending: Any, config: EvolutionConfig) -> str | None:
    """Why promoting ``pending`` would break a cap (``None`` when it fits).

    Checked before promotion so a cap holds from the first round: retiring afterwards is bounded
    by the retire allowance, which is zero on an empty bank.
    """
    replaced = {pending.target, *pending.absorb} - {None}
    staying = [s for s in active if s.id not in replaced]
    count = len(staying) + 1
    tokens = rendered_tokens(staying) + approx_tokens(render_one(pending.skill))
    if count <= config.max_active and tokens <= config.max_rendered_tokens:
        return None
    return (f"bank budget full: promoting would make {count} active skills (cap "
            f"{config.max_active}), ~{tokens} rendered tokens (cap {config.max_rendered_tokens})")
