"""``guidance``: free advice in a person's (or a model's) own words."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._registry import KindSpec, register

__all__ = ["Guidance"]


class Guidance(Lesson):
    """``text``, as written (white space folded)."""

    kind: Literal[LessonKind.guidance] = LessonKind.guidance
    text: str

    @field_validator("text")
    @classmethod
    def _folded(cls, v: str) -> str:
        v = " ".join(v.split())
        if not v:
            raise ValueError("guidance needs its text")
        return v


SPEC = register(KindSpec(LessonKind.guidance, Guidance, "Guidance", lambda lesson: lesson.text))
