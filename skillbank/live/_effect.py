"""Each skill's live effect: success shown vs held back among the runs it was eligible for.

Counts come from the exposure record joined with the runs' outcomes (labelled now or later);
a run without an outcome counts as exposed but not labelled. The difference of success rates
carries an anytime-valid interval (:func:`~skillbank.live._confseq.difference_cs`), overall and per
kind of request; cost (tokens) and steps per run are averaged beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from skillbank.live._confseq import DEFAULT_RHO, Interval, difference_cs
from skillbank.live._exposure import Arm

__all__ = ["ArmStats", "Effect", "KindOf", "Tally", "tally_runs", "task_type_kind"]


@dataclass
class ArmStats:
    """One arm's runs: ``exposed`` all of them, ``labelled`` those with an outcome."""

    exposed: int = 0
    labelled: int = 0
    successes: int = 0
    tokens: int = 0  # summed over labelled runs
    steps: int = 0  # summed over labelled runs

    def add(self, success: bool | None, tokens: int = 0, steps: int = 0) -> None:
        self.exposed += 1
        if success is not None:
            self.labelled += 1
            self.successes += int(success)
            self.tokens += tokens
            self.steps += steps

    @property
    def rate(self) -> float | None:
        return self.successes / self.labelled if self.labelled else None

    def as_dict(self) -> dict[str, Any]:
        n = self.labelled
        return {"exposed": self.exposed, "labelled": n, "successes": self.successes, "rate": self.rate,
                "tokens_per_run": self.tokens / n if n else None, "steps_per_run": self.steps / n if n else None}


@dataclass
class Effect:
    """Shown vs held back for one skill (overall or within one kind of request)."""

    shown: ArmStats = field(default_factory=ArmStats)
    held: ArmStats = field(default_factory=ArmStats)

    def add(self, arm: Arm | str, success: bool | None, tokens: int = 0, steps: int = 0) -> None:
        (self.shown if Arm(arm) == Arm.shown else self.held).add(success, tokens, steps)

    def interval(self, alpha: float, rho: float = DEFAULT_RHO) -> Interval:
        """The anytime-valid interval for ``rate(shown) - rate(held)`` at level ``alpha``."""
        return difference_cs((self.shown.successes, self.shown.labelled),
                             (self.held.successes, self.held.labelled), alpha=alpha, rho=rho)

    def as_dict(self, alpha: float) -> dict[str, Any]:
        return {"shown": self.shown.as_dict(), "held": self.held.as_dict(),
                "difference": self.interval(alpha).as_dict(), "alpha": alpha}


#: What kind of request a run was, from its task text and recorded task type (``None``: unknown).
KindOf = Callable[[str | None, str | None], str | None]


def task_type_kind(task: str | None, task_type: str | None) -> str | None:
    """The run's recorded task type as its kind (the default; the CLI templates the task)."""
    return task_type or None


@dataclass
class Tally:
    """One skill's live evidence: overall, per kind of request, and when it was last eligible."""

    overall: Effect = field(default_factory=Effect)
    by_kind: dict[str, Effect] = field(default_factory=dict)
    last_exposed: datetime | None = None

    def add(self, arm: Arm | str, success: bool | None, *, kind: str | None = None, tokens: int = 0,
            steps: int = 0, at: datetime | None = None) -> None:
        self.overall.add(arm, success, tokens, steps)
        if kind is not None:
            self.by_kind.setdefault(kind, Effect()).add(arm, success, tokens, steps)
        if at is not None and (self.last_exposed is None or at > self.last_exposed):
            self.last_exposed = at


def tally_runs(runs: Iterable[Any], since_version: Mapping[str, int] | None = None,
               kind_of: KindOf = task_type_kind) -> dict[str, Tally]:
    """Per skill, the :class:`Tally` of ``runs`` (:class:`~skillbank.store._exposures.ExposedRun`);
    with ``since_version``, only exposures of a skill's versions at or after the one given."""
    out: dict[str, Tally] = {}
    for run in runs:
        e = run.exposure
        if since_version is not None and e.version < since_version.get(e.skill_id, 0):
            continue
        out.setdefault(e.skill_id, Tally()).add(e.arm, run.success, kind=kind_of(run.task, run.task_type),
                                                tokens=run.tokens, steps=run.steps, at=e.at)
    return out
