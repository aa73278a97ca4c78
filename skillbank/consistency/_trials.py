"""One trial: its seed, what it is handed, what it returns, what is kept of it, and its state.

A trial is one run of one task in one arm. The runner labels its trajectory with the run, arm,
trial number and seed when it starts, and with its latency and :data:`TrialState.finished`
once its outcome is stored: that label is what a resumed run reads to skip it.
"""

from __future__ import annotations

import enum
import hashlib
import inspect
import uuid
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from skillbank.consistency.tasks import agent_input
from skillbank.errors import MeasureError

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.models import Trajectory

__all__ = ["ARM_WITHOUT", "ARM_WITH", "TrialState", "TrialSpec", "TrialOutcome", "TrialRecord",
           "trial_seed", "new_run_id", "key_k", "finished_labels", "is_finished", "as_outcome",
           "call_runnable", "record_from_trajectory"]

ARM_WITHOUT = "without"
ARM_WITH = "with"
STATE_LABEL = "trial_state"
LATENCY_LABEL = "latency_s"


class TrialState(str, enum.Enum):
    """A trial's state as its trajectory's ``trial_state`` label says it."""

    finished = "finished"  # the outcome is stored: a resumed run does not run it again


def finished_labels(labels: Mapping[str, str], latency_s: float) -> dict[str, str]:
    """``labels`` with what a finished trial adds: its latency and its state."""
    return {**labels, LATENCY_LABEL: f"{latency_s:.6f}", STATE_LABEL: TrialState.finished.value}


def is_finished(labels: Mapping[str, str]) -> bool:
    """Whether a trial's labels say it finished. Banks written before the state label have only
    the latency, which the runner also wrote last, once the outcome was stored."""
    state = labels.get(STATE_LABEL)
    if state is None:
        return LATENCY_LABEL in labels
    return state == TrialState.finished.value


def trial_seed(task_id: str, trial: int, base: int = 0) -> int:
    """The seed of trial ``trial`` of task ``task_id``: the same in every arm (a paired
    comparison), different across trials and tasks, stable across processes."""
    digest = hashlib.sha256(f"{base}\x1f{task_id}\x1f{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def new_run_id(prefix: str = "run") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def key_k(n_trials: int, preferred: int = 3) -> int:
    """The k to headline: ``preferred`` (3) when every task has that many trials, else fewer."""
    return max(1, min(preferred, n_trials))


@dataclass(frozen=True)
class TrialSpec:
    """One trial, as handed to the runnable the factory built."""

    task: Any
    arm: str
    index: int
    seed: int
    run_id: str
    labels: Mapping[str, str]


@dataclass
class TrialOutcome:
    """What one trial returns. A runnable may instead return ``(success, trajectory_id)`` or a
    bare ``bool``; the runner then reads the cost from the stored trajectory."""

    success: bool
    trajectory_id: str | None = None
    note: str | None = None


@dataclass
class TrialRecord:
    """One finished trial: its outcome, cost and the skills injected into it."""

    task_id: str
    task_type: str
    split: str | None
    arm: str
    trial: int
    seed: int
    success: bool
    trajectory_id: str | None
    steps: int
    model_turns: int
    tokens: int
    latency_s: float
    limit_hit: bool
    limits: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    snapshot: str | None = None
    resumed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def as_outcome(raw: Any) -> TrialOutcome:
    """What a trial returned as a :class:`TrialOutcome`: one, ``(success, trajectory_id)``, a
    bool, or an object with ``success`` (and ``trajectory_id``)."""
    if isinstance(raw, TrialOutcome):
        return raw
    if isinstance(raw, (bool, np.bool_)):
        return TrialOutcome(success=bool(raw))
    if isinstance(raw, tuple) and len(raw) >= 2:
        return TrialOutcome(success=bool(raw[0]), trajectory_id=raw[1])
    success = getattr(raw, "success", None)
    if success is not None:
        tid = getattr(raw, "trajectory_id", None)
        return TrialOutcome(success=bool(success), trajectory_id=tid)
    raise MeasureError(
        f"a trial returned {type(raw).__name__}; return TrialOutcome, (success, trajectory_id) "
        "or a bool"
    )


def call_runnable(runnable: Any, spec: TrialSpec) -> Any:
    """Run what the factory built: ``fn(spec)``, ``fn()``, or ``runnable.invoke(messages)``."""
    if hasattr(runnable, "invoke") and not inspect.isfunction(runnable):
        task = spec.task
        # SkillBankMiddleware reads these: the trajectory is labelled from the start.
        config = {"metadata": {"skillbank_task_id": task.id, "skillbank_task_type": str(task.type),
                               "skillbank_labels": dict(spec.labels), "skillbank_seed": spec.seed}}
        state = runnable.invoke(agent_input(task.input), config=config)
        verify = getattr(task, "verify", None)
        if verify is None:
            raise MeasureError(f"task {task.id!r} has no verify; the runner cannot judge the "
                               "agent's answer")
        success = bool(verify(state))
        return TrialOutcome(success=success, trajectory_id=_trajectory_id_from_state(state))
    if not callable(runnable):
        raise MeasureError(f"agent_factory returned {type(runnable).__name__}, which is neither "
                           "callable nor has .invoke")
    try:
        params = [p for p in inspect.signature(runnable).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        params = [None]  # type: ignore[list-item]  # any item: call with the spec
    return runnable(spec) if params else runnable()


def _trajectory_id_from_state(state: Any) -> str | None:
    if isinstance(state, Mapping):
        for key in ("skillbank_trajectory_id", "trajectory_id"):
            value = state.get(key)
            if isinstance(value, str):
                return value
    return None


def record_from_trajectory(traj: "Trajectory | None", *, task: Any, split: str | None, arm: str,
                           trial: int, seed: int, success: bool, latency_s: float | None,
                           snapshot: str | None, resumed: bool) -> TrialRecord:
    """A :class:`TrialRecord`, its cost read from the trial's stored trajectory (if any)."""
    steps = model_turns = tokens = 0
    limits: list[str] = []
    injected: list[str] = []
    if traj is not None:
        steps = len(traj.steps)
        model_turns = traj.model_turns
        tokens = traj.input_tokens + traj.output_tokens
        limits = [e.type.value for e in traj.limit_events]
        injected = list(dict.fromkeys(i.skill_id for i in traj.injections))
        if latency_s is None:
            latency_s = _float(traj.labels.get(LATENCY_LABEL))
        if latency_s is None and traj.ended_at is not None:
            latency_s = (traj.ended_at - traj.started_at).total_seconds()
    return TrialRecord(
        task_id=task.id, task_type=str(task.type), split=split, arm=arm, trial=trial, seed=seed,
        success=bool(success), trajectory_id=None if traj is None else traj.id, steps=steps,
        model_turns=model_turns, tokens=tokens, latency_s=float(latency_s or 0.0),
        limit_hit=bool(limits), limits=limits, injected=injected, snapshot=snapshot,
        resumed=resumed,
    )


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None
