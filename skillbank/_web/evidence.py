"""The gate's evidence as the skill page shows it: each gate record with its per-task trials
and a bootstrap interval, over tasks, of its pass^k change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from skillbank.bank import SkillBank
from skillbank.consistency import _metrics as metrics
from skillbank.consistency.result import BOOTSTRAP_RESAMPLES, CONFIDENCE
from skillbank.store._gate_records import GateRecord

__all__ = ["Arms", "Evidence", "TaskRow", "for_skill"]


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    current: str  # one mark per trial: ✓ success, ✗ failure
    candidate: str


@dataclass(frozen=True)
class Arms:
    """A mean over the tasks the skill reached, without it (``before``) and with it (``after``)."""

    before: float
    after: float


@dataclass(frozen=True)
class Evidence:
    record: GateRecord
    tasks: list[TaskRow]
    not_run: list[str]  # planned but never run: validation stopped once the verdict was settled
    interval: tuple[float, float] | None  # 95% bootstrap over tasks of the pass^k change
    no_interval: str  # why there is no interval, when there is none
    measured: int  # tasks run in both arms: those the skill reached and those it did not
    reached: int  # tasks where the candidate was in at least one prompt (the per-task trials)
    pass_k: Arms | None  # mean per-task pass^k over the reached tasks; None without k
    success: Arms | None  # mean per-task success rate over the reached tasks; None without trials


def marks(outcomes: Sequence[bool]) -> str:
    return "".join("✓" if ok else "✗" for ok in outcomes)


def pass_hat_k_interval(record: GateRecord) -> tuple[float, float] | None:
    """The interval of the mean per-task pass^k change, resampling tasks as the consistency
    report does (the same helper, resamples and confidence); None under two tasks, where
    resampling one task says nothing."""
    k = record.k
    if k is None or len(record.trials) < 2:
        return None
    changes = [metrics.pass_hat_k(sum(t.candidate), len(t.candidate), k)
               - metrics.pass_hat_k(sum(t.current), len(t.current), k) for t in record.trials]
    return metrics.bootstrap_mean_ci(changes, BOOTSTRAP_RESAMPLES, CONFIDENCE)


def _no_interval(record: GateRecord) -> str:
    if not record.trials:
        return "no per-task trials recorded"
    if len(record.trials) == 1:
        return "one task: no interval"
    return "" if record.k is not None else "a task without trials in an arm: no interval"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def pass_k_arms(record: GateRecord) -> Arms | None:
    """Mean per-task pass^k without and with the candidate, over the tasks it reached."""
    k = record.k
    if k is None or not record.trials:
        return None
    return Arms(_mean([metrics.pass_hat_k(sum(t.current), len(t.current), k) for t in record.trials]),
                _mean([metrics.pass_hat_k(sum(t.candidate), len(t.candidate), k) for t in record.trials]))


def success_arms(record: GateRecord) -> Arms | None:
    """Mean per-task success rate without and with the candidate, over the tasks it reached."""
    trials = [t for t in record.trials if t.current and t.candidate]
    if not trials:
        return None
    return Arms(_mean([sum(t.current) / len(t.current) for t in trials]),
                _mean([sum(t.candidate) / len(t.candidate) for t in trials]))


def evidence(record: GateRecord) -> Evidence:
    ran = {t.task_id for t in record.trials} | set(record.not_reached)
    return Evidence(
        record=record,
        tasks=[TaskRow(t.task_id, marks(t.current), marks(t.candidate)) for t in record.trials],
        not_run=[t for t in record.planned if t not in ran],
        interval=pass_hat_k_interval(record),
        no_interval=_no_interval(record),
        measured=len(ran), reached=len(record.trials),
        pass_k=pass_k_arms(record), success=success_arms(record))


def for_skill(bank: SkillBank, skill_id: str) -> list[Evidence]:
    """Every gate record about the skill (its own versions and the drafts that edit it), newest first."""
    return [evidence(r) for r in bank.gate_records.for_skill(skill_id)]
