"""The one record of what guidance did in a run, carried on the message it concerns.

When the guidance middleware answers a tool call with a reminder instead of running it, or asks
a final reply again, it marks the message with an :class:`Intervention` under one metadata key
(``response_metadata`` is never sent to a provider). Whoever records the run reads it with
:func:`intervention_of`, without knowing which part of the guidance wrote it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["Intervention", "intervention_of", "INTERVENTION_KEY"]

INTERVENTION_KEY = "skillbank_intervention"


class Intervention(BaseModel):
    """What guidance did at one message.

    ``kind``: ``"reminder"`` (a tool call answered with a lesson, not run) or
    ``"answer_reminder"`` (a final reply asked again; ``reason`` says why, ``note`` is what the
    model read, ``draft`` the reply it replaced). ``skill_id`` and ``version``: the skill whose
    lesson it was (``None`` for a reply asked again for no one skill's sake, an empty one).
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["reminder", "answer_reminder"]
    skill_id: str | None = None
    version: int | None = None
    reason: str | None = None
    note: str | None = None
    tool: str | None = None
    draft: str | None = None

    def metadata(self) -> dict[str, Any]:
        """The ``response_metadata`` entry that carries this record."""
        return {INTERVENTION_KEY: self.model_dump(mode="json")}


def intervention_of(message: object) -> Intervention | None:
    """The :class:`Intervention` a message carries, or ``None``."""
    marker = (getattr(message, "response_metadata", None) or {}).get(INTERVENTION_KEY)
    if not isinstance(marker, dict):
        return None
    return Intervention.model_validate(marker)
