"""Resuming a measurement: the trials of a run that already finished, read back from the bank.

A run is named by its ``run_id``. Every trajectory labelled with it whose trial state is
finished (:func:`~skillbank.consistency._trials.is_finished`) and whose outcome is stored counts
as done, once per ``(task, arm, trial)``; the runner runs only the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from skillbank.consistency._trials import (
    ARM_WITHOUT,
    TrialRecord,
    is_finished,
    record_from_trajectory,
    trial_seed,
)

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.bank import SkillBank

__all__ = ["TrialKey", "Resumed", "finished_trials"]

TrialKey = tuple[str, str, int]
"""``(task id, arm, trial number)``."""


@dataclass
class Resumed:
    """The finished trials of a run, and what the caller should be warned of."""

    done: dict[TrialKey, TrialRecord] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def finished_trials(bank: "SkillBank", run_id: str, *, tasks: Mapping[str, Any],
                    splits: Mapping[str, str | None], arms: Sequence[str], trials: int,
                    seed: int, snapshot: str | None) -> Resumed:
    """The trials of ``run_id`` already finished in ``bank``, among ``tasks`` (by id), ``arms``
    and trial numbers below ``trials``. A treatment-arm trial run on another bank snapshot is
    kept, with a warning."""
    out = Resumed()
    for traj in bank.trajectories.list(labels={"run": run_id}, labelled=True, limit=None,
                                       with_steps=True):
        key = (traj.task_id or "", traj.labels.get("arm", ""), _int(traj.labels.get("trial")))
        task = tasks.get(key[0])
        if task is None or key[1] not in arms or not 0 <= key[2] < trials or key in out.done:
            continue
        if traj.success is None or not is_finished(traj.labels):
            continue
        rec_snapshot = traj.labels.get("snapshot")
        if key[1] != ARM_WITHOUT and rec_snapshot and snapshot and rec_snapshot != snapshot:
            warning = (f"run {run_id} resumed on a changed bank: some {key[1]!r} trials were run "
                       "with an earlier bank snapshot")
            if warning not in out.warnings:
                out.warnings.append(warning)
        out.done[key] = record_from_trajectory(
            traj, task=task, split=splits[task.id], arm=key[1], trial=key[2],
            seed=_int(traj.labels.get("seed"), trial_seed(task.id, key[2], seed)),
            success=bool(traj.success), latency_s=None, snapshot=rec_snapshot, resumed=True)
    return out


def _int(value: Any, default: int = -1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
