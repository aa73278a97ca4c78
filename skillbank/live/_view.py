"""The live view of one skill (or a few): what the review page and ``skillbank skills show`` print.

Computed with the monitor's own parts, so the numbers are those ``skillbank monitor`` prints: the
exposures since the current content's first version (:func:`~skillbank.live._monitor.evidence_start`)
tallied by :func:`~skillbank.live._effect.tally_runs`, the interval of
:meth:`~skillbank.live._effect.Effect.interval`, the decision :func:`~skillbank.live._monitor.decide`
would take now, and the last decision the monitor wrote (:mod:`skillbank.live._decisions`). Unlike
the monitor, it reads a skill of any status: a retired skill still shows the evidence it was
retired on. Reading never writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from skillbank.live._config import LiveConfig
from skillbank.live._decisions import MonitorVersion, last_decision, pending_rollback
from skillbank.live._effect import KindOf, Tally, task_type_kind, tally_runs
from skillbank.live._exposure import is_canary, shown_probability
from skillbank.live._monitor import Decision, SkillLive, decide, evidence_start, held_by_person
from skillbank.models import Skill, utcnow

__all__ = ["LiveView", "canaries", "live_view", "live_views"]


@dataclass(frozen=True)
class LiveView:
    """One skill's live evidence and the monitor's part in it.

    ``live``: the tally and the decision the monitor would take now (as in its report);
    ``since_version``: the first version whose exposures count; ``p_shown``: the chance an eligible
    run is shown the skill now by the draw (``None``: the draw never randomizes it); ``randomized``:
    whether the monitor reads it (a canary, or a skill the draw randomizes with runs recorded);
    ``stale``: randomized, with no eligible run for longer than the config's ``stale_after``;
    ``last_written``: the monitor's newest version of it; ``waiting``: its reject or retire no
    person acknowledged yet.
    """

    live: SkillLive
    alpha: float
    since_version: int
    p_shown: float | None
    randomized: bool
    last_eligible: datetime
    stale: bool
    last_written: MonitorVersion | None
    waiting: MonitorVersion | None

    @property
    def skill(self) -> Skill:
        return self.live.skill

    @property
    def tally(self) -> Tally:
        return self.live.tally

    @property
    def decision(self) -> Decision | None:
        return self.live.decision

    @property
    def has_evidence(self) -> bool:
        """Whether any eligible run was recorded (shown or held back) since ``since_version``."""
        return self.tally.overall.shown.exposed + self.tally.overall.held.exposed > 0

    def as_dict(self) -> dict[str, Any]:
        """The monitor report's entry for the skill, with what only this view adds."""
        return {**self.live.as_dict(self.alpha), "alpha": self.alpha, "since_version": self.since_version,
                "p_shown": self.p_shown, "randomized": self.randomized,
                "last_eligible": self.last_eligible.isoformat(), "stale": self.stale,
                "last_written": self.last_written.as_dict() if self.last_written else None,
                "waiting_acknowledgement": self.waiting.as_dict() if self.waiting else None}


def live_views(bank: Any, skill_ids: Sequence[str], config: LiveConfig | None = None, *,
               kind_of: KindOf = task_type_kind, now: datetime | None = None) -> list[LiveView]:
    """The :class:`LiveView` of each of ``skill_ids`` (ids or names), in their order, from one
    read of their exposures. ``bank`` is a :class:`~skillbank.bank.SkillBank`.

    Raises:
        SkillNotFoundError: one of ``skill_ids`` names no skill.
    """
    config = config or LiveConfig()
    now = now or utcnow()
    skills = [bank.skills.get(sid) for sid in skill_ids]
    histories = {s.id: bank.skills.history(s.id) for s in skills}
    since = {s.id: evidence_start(histories[s.id]) for s in skills}
    tallies = tally_runs(bank.exposures.runs([s.id for s in skills]), since, kind_of)
    seen = bank.skills.acknowledged([s.id for s in skills])
    recorded = bank.skills.recorded_evidence([s.id for s in skills])
    views = []
    for s in skills:
        history = histories[s.id]
        tally = tallies.get(s.id, Tally())
        person = held_by_person(history)
        p_shown = shown_probability(s, config)
        # As the monitor reads it: an active skill without exposures was never randomized.
        randomized = p_shown is not None and (is_canary(s) or s.id in tallies)
        last = tally.last_exposed or s.updated_at
        views.append(LiveView(
            live=SkillLive(s, tally, decide(s, tally, config, now=now, held_by_person=person) if randomized else None,
                           person),
            alpha=config.alpha, since_version=since[s.id], p_shown=p_shown, randomized=randomized,
            last_eligible=last, stale=randomized and now - last > config.stale_after,
            last_written=last_decision(history, recorded.get(s.id)),
            waiting=pending_rollback(history, seen.get(s.id, ()), recorded.get(s.id))))
    return views


def live_view(bank: Any, skill_id: str, config: LiveConfig | None = None, *, kind_of: KindOf = task_type_kind,
              now: datetime | None = None) -> LiveView:
    """The :class:`LiveView` of one skill (:func:`live_views`)."""
    return live_views(bank, [skill_id], config, kind_of=kind_of, now=now)[0]


def canaries(bank: Any) -> list[Skill]:
    """The skills in canary now (active and tagged ``canary``), by name."""
    return sorted((s for s in bank.skills.list(status="active") if is_canary(s)), key=lambda s: s.name)
