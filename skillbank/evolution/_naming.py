"""Skill names that fit the SKILL.md limit without being cut mid-word."""

from __future__ import annotations

import re
from typing import Sequence

from skillbank.models import NAME_MAX

__all__ = ["fit_name"]


def fit_name(parts: Sequence[str], *, suffix: str = "", fallback: str = "learned-skill",
             limit: int = NAME_MAX) -> str:
    """``parts`` joined by hyphens, as many whole words as fit in ``limit`` with ``suffix``.

    Words are the hyphen-separated pieces of each part; a name is never cut inside one, and
    ``suffix`` (``pitfalls``, a number) always survives.
    """
    words = [w for part in parts for w in re.sub(r"[^a-z0-9]+", "-", part.lower()).split("-") if w]
    tail = [w for w in re.sub(r"[^a-z0-9]+", "-", suffix.lower()).split("-") if w]
    room = limit - (len("-".join(tail)) + 1 if tail else 0)
    kept: list[str] = []
    for word in words:
        if len("-".join(kept + [word])) > room:
            break
        kept.append(word)
    name = "-".join(kept + tail)
    return name or fallback
