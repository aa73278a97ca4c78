"""Run every task several times per arm and measure how consistent the agent is.

:func:`measure` is the general runner: it takes an ``agent_factory(arm, bank_or_None, task)``
that builds one trial, runs each task ``trials`` times in each arm (``"without"`` the bank and
``"with"`` it, by default) on a bounded thread pool, stores every trial as a trajectory in the
bank tagged with the run, arm, trial number, split and bank snapshot, and returns a
:class:`MeasureResult` with pass^k, pass@k, their gap, per-type breakdowns, cost per trial,
bootstrap confidence intervals and skill attribution.

Resuming: a run is named by ``run_id``. Before running, the bank is asked for the trajectories
already labelled with that run; every ``(task, arm, trial)`` that has a finished, labelled
trajectory is not run again. Interrupt a run (Ctrl-C, a crash, an exception from the factory)
and call :func:`measure` again with the same ``run_id``: only the missing trials run.

Pairing: trial ``i`` of task ``t`` gets the seed :func:`trial_seed(t, i) <trial_seed>` in every
arm, so the arms differ only in the bank; seeds differ across trials.

:func:`measure_agent` measures your own agent: each trial runs through
:class:`~skillbank.adapters.langchain.SkillBankMiddleware` (``inject=False`` in the ``"without"``
arm, so that arm is logged the same way but never sees a skill); :func:`logged_factory` is that
wiring, for other runners (the bundled environments' ``skillbank_harness.envs.measure_env`` uses it).
"""

from __future__ import annotations

import hashlib
import inspect
import math
import threading
import time
import uuid
from collections import defaultdict
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Mapping,
    Protocol,
    Sequence,
    runtime_checkable,
)

import numpy as np

from skillbank.consistency import metrics
from skillbank.errors import MeasureError

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.bank import SkillBank
    from skillbank.models import Trajectory

__all__ = [
    "ARM_WITHOUT",
    "ARM_WITH",
    "ALL_SPLITS",
    "EvalTask",
    "SimpleTask",
    "TrialSpec",
    "TrialOutcome",
    "TrialRecord",
    "MeasureResult",
    "MeasureError",
    "measure",
    "logged_factory",
    "measure_agent",
    "trial_seed",
    "assign_splits",
    "new_run_id",
    "key_k",
]

ARM_WITHOUT = "without"
ARM_WITH = "with"
ALL_SPLITS = "all"
"""The pseudo-split that pools every task."""

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95


# ------------------------------------------------------------------------------------ tasks


@runtime_checkable
class EvalTask(Protocol):
    """What the runner needs from a task: an id, a type and an input; ``verify`` is optional.

    The environments' ``Task`` satisfies it as it is; so does :class:`SimpleTask`. A task may
    also carry ``split`` (e.g. ``"train"`` / ``"held_out"``), which the runner reports
    separately, and ``family``.
    """

    id: str
    type: str
    input: Any


@dataclass(frozen=True)
class SimpleTask:
    """A minimal task record: ``verify(result) -> bool`` judges what the agent returned.

    ``data`` carries whatever else the task's verifier needs (a task file's whole line).
    """

    id: str
    type: str
    input: Any
    verify: Callable[[Any], bool] | None = None
    split: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


def _task_split(task: Any, splits: Mapping[str, str] | None) -> str | None:
    if splits is not None and task.id in splits:
        return splits[task.id]
    value = getattr(task, "split", None)
    return None if value is None else str(getattr(value, "value", value))


def assign_splits(
    tasks: Sequence[Any],
    held_out: float = 0.3,
    *,
    seed: int = 0,
    group: Callable[[Any], str] | None = None,
    names: tuple[str, str] = ("train", "heldout"),
) -> dict[str, str]:
    """Split tasks into an evolution set and a held-out set: ``task id -> split name``.

    Tasks are split by ``group`` (default: the task's ``template`` if it has one, else its id),
    so that variants of one task never land on both sides; within each task type about
    ``held_out`` of the groups go to the held-out set, chosen by ``seed``. Pass the mapping to
    :func:`measure` as ``splits=``.
    """
    if not 0 < held_out < 1:
        raise MeasureError(f"held_out must be strictly between 0 and 1, got {held_out}")
    group = group or (lambda t: str(getattr(t, "template", None) or t.id))
    groups_by_type: dict[str, list[str]] = defaultdict(list)
    for task in tasks:
        key = group(task)
        if key not in groups_by_type[task.type]:
            groups_by_type[task.type].append(key)
    rng = np.random.default_rng(seed)
    held: set[tuple[str, str]] = set()
    for task_type in sorted(groups_by_type):
        keys = sorted(groups_by_type[task_type])
        n_held = int(round(held_out * len(keys)))
        if len(keys) > 1:
            n_held = min(max(n_held, 1), len(keys) - 1)
        else:
            n_held = 0
        for i in rng.permutation(len(keys))[:n_held]:
            held.add((task_type, keys[int(i)]))
    return {t.id: names[1] if (t.type, group(t)) in held else names[0] for t in tasks}


# ------------------------------------------------------------------------------------ trials


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


# ----------------------------------------------------------------------------------- result


@dataclass
class MeasureResult:
    """Every trial of one run plus the numbers computed from them.

    ``records`` hold one :class:`TrialRecord` per ``(task, arm, trial)``. The methods compute
    per arm and split (``split=None`` or ``"all"`` pools every task).
    """

    run_id: str
    arms: tuple[str, ...]
    trials: int
    tasks: dict[str, dict[str, Any]]
    records: list[TrialRecord]
    seed: int = 0
    bank_snapshot: str | None = None
    bank_path: str | None = None
    model: str | None = None
    simulated: bool | None = None
    started_at: float | None = None
    wall_time_s: float | None = None
    ran: int = 0
    skipped: int = 0
    skill_names: dict[str, str] = field(default_factory=dict)
    skills: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    # -- selection ---------------------------------------------------------------------------

    @property
    def splits(self) -> list[str]:
        """The split names present, in first-seen order (empty when no task has a split)."""
        seen = dict.fromkeys(m.get("split") for m in self.tasks.values())
        return [s for s in seen if s is not None]

    def _select(self, arm: str, split: str | None) -> list[TrialRecord]:
        if arm not in self.arms:
            raise MeasureError(f"no arm {arm!r} in this run (arms: {', '.join(self.arms)})")
        pooled = split in (None, ALL_SPLITS)
        return [r for r in self.records if r.arm == arm and (pooled or r.split == split)]

    def results(self, arm: str, split: str | None = None) -> dict[str, list[bool]]:
        """``task id -> outcomes`` (ordered by trial number) for one arm and split."""
        by_task: dict[str, list[TrialRecord]] = defaultdict(list)
        for r in self._select(arm, split):
            by_task[r.task_id].append(r)
        return {t: [r.success for r in sorted(rs, key=lambda r: r.trial)]
                for t, rs in sorted(by_task.items())}

    def task_types(self) -> dict[str, str]:
        return {t: str(m["type"]) for t, m in self.tasks.items()}

    @property
    def key_k(self) -> int:
        return key_k(self.trials)

    # -- numbers -----------------------------------------------------------------------------

    def summary(self, arm: str, split: str | None = None, ks: Sequence[int] | None = None
                ) -> metrics.ConsistencySummary:
        return metrics.consistency_summary(self.results(arm, split), ks=ks)

    def by_type(self, arm: str, split: str | None = None, k: int | None = None
                ) -> dict[str, metrics.ConsistencySummary]:
        return metrics.by_type(self.results(arm, split), self.task_types(), k or self.key_k)

    def cost(self, arm: str, split: str | None = None) -> dict[str, float]:
        """Mean steps, model turns, tokens and latency per trial, and the limit-hit rate."""
        rs = self._select(arm, split)
        n = len(rs)
        if n == 0:
            return {"trials": 0, "steps": 0.0, "model_turns": 0.0, "tokens": 0.0,
                    "latency_s": 0.0, "limit_hit_rate": 0.0}
        return {
            "trials": n,
            "steps": math.fsum(r.steps for r in rs) / n,
            "model_turns": math.fsum(r.model_turns for r in rs) / n,
            "tokens": math.fsum(r.tokens for r in rs) / n,
            "latency_s": math.fsum(r.latency_s for r in rs) / n,
            "limit_hit_rate": sum(r.limit_hit for r in rs) / n,
        }

    def limit_counts(self, arm: str, split: str | None = None) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for r in self._select(arm, split):
            for kind in set(r.limits):
                counts[kind] += 1
        return dict(sorted(counts.items()))

    def ci(self, arm: str, split: str | None = None, k: int | None = None,
           metric: str = "pass_hat_k") -> tuple[float, float]:
        """Bootstrap (tasks resampled) 95% interval of ``pass_hat_k``, ``pass_at_k`` or ``gap``.

        :func:`metrics.bootstrap_mean_ci` of the per-task values: every statistic here is a mean
        over tasks, so this is :func:`metrics.bootstrap_ci`'s interval computed at once.
        """
        k = k or self.key_k
        results = self.results(arm, split)
        if not results:
            raise MeasureError(f"no trials in arm {arm!r} for split {split!r}")
        metrics.consistency_summary(results, ks=(k,))  # validates: every task has >= k trials
        values = np.array([_per_task(metric, outcomes, k) for outcomes in results.values()])
        return metrics.bootstrap_mean_ci(values, BOOTSTRAP_RESAMPLES, CONFIDENCE, self.seed)

    def delta(self, split: str | None = None, k: int | None = None, metric: str = "pass_hat_k",
              baseline: str = ARM_WITHOUT, treatment: str = ARM_WITH) -> dict[str, Any]:
        """``treatment - baseline`` for one metric, with a paired bootstrap interval (the same
        resampled tasks in both arms)."""
        k = k or self.key_k
        base, treat = self.results(baseline, split), self.results(treatment, split)
        common = sorted(set(base) & set(treat))
        if not common:
            raise MeasureError("the two arms share no task")
        per_task = np.array([_per_task(metric, treat[t], k) - _per_task(metric, base[t], k)
                             for t in common])
        low, high = metrics.bootstrap_mean_ci(per_task, BOOTSTRAP_RESAMPLES, CONFIDENCE, self.seed)
        return {"metric": metric, "k": k, "baseline": baseline, "treatment": treatment,
                "delta": float(math.fsum(per_task) / len(common)),
                "ci": [low, high], "n_tasks": len(common)}

    def attribution(self, split: str | None = None, k: int | None = None,
                    baseline: str = ARM_WITHOUT, treatment: str = ARM_WITH) -> dict[str, Any]:
        from skillbank.consistency.attribution import attribute

        return attribute(self, split=split, k=k, baseline=baseline, treatment=treatment)

    # -- export ------------------------------------------------------------------------------

    def split_block(self, split: str | None) -> dict[str, Any]:
        """Every number for one split (``None``: all tasks), as plain JSON-ready data."""
        k = self.key_k
        arms: dict[str, Any] = {}
        for arm in self.arms:
            if not self._select(arm, split):
                continue
            summary = self.summary(arm, split)
            breakdown = self.by_type(arm, split, k)
            arms[arm] = {
                "summary": summary.to_dict(),
                "ci": {m: {str(kk): list(self.ci(arm, split, kk, m)) for kk in sorted({1, k})}
                       for m in ("pass_hat_k", "pass_at_k", "gap")},
                "by_type": {label: s.to_dict() for label, s in breakdown.items()},
                "type_spread": metrics.type_spread(breakdown, k),
                "cost": self.cost(arm, split),
                "limits": self.limit_counts(arm, split),
            }
        block: dict[str, Any] = {"k": k, "n_tasks": len(self.results(self.arms[0], split))
                                 if self._select(self.arms[0], split) else 0, "arms": arms}
        if ARM_WITHOUT in arms and ARM_WITH in arms:
            block["delta"] = {m: self.delta(split, k, m) for m in ("pass_hat_k", "pass_at_k", "gap")}
            block["attribution"] = self.attribution(split, k)
        return block

    def to_dict(self) -> dict[str, Any]:
        """All numbers and every trial, JSON-serialisable."""
        views = [ALL_SPLITS] + self.splits
        return {
            "run_id": self.run_id,
            "arms": list(self.arms),
            "trials": self.trials,
            "k": self.key_k,
            "seed": self.seed,
            "bank_snapshot": self.bank_snapshot,
            "bank_path": self.bank_path,
            "model": self.model,
            "simulated": self.simulated,
            "wall_time_s": self.wall_time_s,
            "ran": self.ran,
            "skipped": self.skipped,
            "tasks": self.tasks,
            "splits": {view: self.split_block(None if view == ALL_SPLITS else view)
                       for view in views},
            "skills": self.skills,
            "skill_names": self.skill_names,
            "warnings": self.warnings,
            "records": [r.to_dict() for r in self.records],
        }

    def headline(self, split: str | None = None) -> dict[str, dict[str, float]]:
        """``arm -> {pass^1, pass^k, pass@k, gap}`` at the headline k, for tables and logs."""
        k = self.key_k
        out = {}
        for arm in self.arms:
            if not self._select(arm, split):
                continue
            s = self.summary(arm, split, ks=sorted({1, k}))
            out[arm] = {"pass^1": s.pass_hat_k[1], f"pass^{k}": s.pass_hat_k[k],
                        f"pass@{k}": s.pass_at_k[k], "gap": s.gap[k]}
        return out


def _per_task(metric: str, outcomes: Sequence[bool], k: int) -> float:
    n, c = len(outcomes), sum(bool(o) for o in outcomes)
    if metric == "pass_hat_k":
        return metrics.pass_hat_k(c, n, k)
    if metric == "pass_at_k":
        return metrics.pass_at_k(c, n, k)
    if metric == "gap":
        return metrics.pass_at_k(c, n, k) - metrics.pass_hat_k(c, n, k)
    raise MeasureError(f"unknown metric {metric!r}")


# ----------------------------------------------------------------------------------- runner

AgentFactory = Callable[[str, "SkillBank | None", Any], Any]


def _call_runnable(runnable: Any, spec: TrialSpec) -> Any:
    """Run what the factory built: ``fn(spec)``, ``fn()``, or ``runnable.invoke(messages)``."""
    if hasattr(runnable, "invoke") and not inspect.isfunction(runnable):
        task = spec.task
        payload = task.input
        if isinstance(payload, str):
            payload = {"messages": [{"role": "user", "content": payload}]}
        # SkillBankMiddleware reads these: the trajectory is labelled from the start.
        config = {"metadata": {"skillbank_task_id": task.id, "skillbank_task_type": str(task.type),
                               "skillbank_labels": dict(spec.labels), "skillbank_seed": spec.seed}}
        state = runnable.invoke(payload, config=config)
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
        params = [None]
    return runnable(spec) if params else runnable()


def _trajectory_id_from_state(state: Any) -> str | None:
    if isinstance(state, Mapping):
        for key in ("skillbank_trajectory_id", "trajectory_id"):
            value = state.get(key)
            if isinstance(value, str):
                return value
    return None


def _normalise(raw: Any) -> TrialOutcome:
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


def _task_meta(task: Any, split: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"type": str(task.type), "split": split}
    for attr in ("family", "template"):
        value = getattr(task, attr, None)
        if value is not None:
            meta[attr] = str(value)
    return meta


def _check_tasks(tasks: Sequence[Any]) -> None:
    if not tasks:
        raise MeasureError("no tasks to measure")
    seen: set[str] = set()
    for task in tasks:
        for attr in ("id", "type", "input"):
            if not hasattr(task, attr):
                raise MeasureError(f"task {task!r} has no {attr!r}; a task needs id, type and input")
        if task.id in seen:
            raise MeasureError(f"duplicate task id {task.id!r}")
        seen.add(task.id)


def _record_from_trajectory(traj: "Trajectory | None", *, task: Any, split: str | None, arm: str,
                            trial: int, seed: int, success: bool, latency_s: float | None,
                            snapshot: str | None, resumed: bool) -> TrialRecord:
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
            latency_s = _float(traj.labels.get("latency_s"))
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


def measure(
    agent_factory: AgentFactory,
    tasks: Sequence[Any],
    trials: int = 5,
    bank: "SkillBank | None" = None,
    arms: Sequence[str] = (ARM_WITHOUT, ARM_WITH),
    *,
    concurrency: int = 2,
    run_id: str | None = None,
    progress: bool | Callable[[int, int], None] = True,
    splits: Mapping[str, str] | None = None,
    seed: int = 0,
    model: str | None = None,
    simulated: bool | None = None,
    description: str | None = None,
) -> MeasureResult:
    """Run each task ``trials`` times in each arm and measure consistency.

    Args:
        agent_factory: ``agent_factory(arm, bank_or_None, task)`` builds one trial; it gets the
            bank in every arm except ``"without"`` (and ``None`` everywhere when no bank is given). It returns either a callable, called with a
            :class:`TrialSpec` (or with nothing if it takes no argument) and returning a
            :class:`TrialOutcome`, ``(success, trajectory_id)`` or a ``bool``; or a LangChain
            runnable (e.g. a ``create_agent`` graph), invoked with the task's input and judged
            with ``task.verify(state)``.
        tasks: Records with ``id``, ``type`` and ``input`` (and optionally ``verify``,
            ``split``, ``family``); the environments' ``Task`` fits as it is.
        trials: Trials per task and arm (``n``); pass^k is reported for k up to ``n``.
        bank: The bank that is injected in the ``"with"`` arm and where every trial is stored.
            Without a bank nothing is stored and the run cannot resume.
        arms: Arm names, run in this order for each trial.
        concurrency: Trials run at once (threads).
        run_id: Names the run; pass the id of an interrupted run to resume it. Default: new.
        progress: Show a progress bar, or a ``callback(done, total)``.
        splits: ``task id -> split`` overriding the tasks' own ``split`` attribute.
        seed: Base of the per-trial seeds and of the bootstrap.
        model: A label for the model (stored with the result).
        simulated: Whether the policy is simulated (stated in reports).
        description: The progress bar's label.

    Raises:
        MeasureError: bad arguments, or a trial in the ``"without"`` arm that injected a skill.
        Whatever a trial raises stops the run after the trials in flight finish; the finished
        trials are kept, and a rerun with the same ``run_id`` does only the rest.
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise MeasureError(f"trials must be a positive integer, got {trials!r}")
    arms = tuple(arms)
    if not arms or len(set(arms)) != len(arms):
        raise MeasureError(f"arms must be distinct names, got {arms!r}")
    if bank is None and ARM_WITH in arms:
        raise MeasureError("the 'with' arm needs a bank: pass bank=")
    if concurrency < 1:
        raise MeasureError(f"concurrency must be at least 1, got {concurrency}")
    tasks = list(tasks)
    _check_tasks(tasks)
    run_id = run_id or new_run_id()
    started = time.time()
    snapshot = bank.snapshot_id() if bank is not None else None
    split_of = {t.id: _task_split(t, splits) for t in tasks}
    by_id = {t.id: t for t in tasks}

    result = MeasureResult(
        run_id=run_id, arms=arms, trials=trials,
        tasks={t.id: _task_meta(t, split_of[t.id]) for t in tasks}, records=[], seed=seed,
        bank_snapshot=snapshot, bank_path=None if bank is None else bank.location, model=model,
        simulated=simulated, started_at=started,
    )

    # -- what is already done ----------------------------------------------------------------
    done: dict[tuple[str, str, int], TrialRecord] = {}
    if bank is not None:
        for traj in bank.trajectories.list(labels={"run": run_id}, labelled=True, limit=None,
                                           with_steps=True):
            key = (traj.task_id or "", traj.labels.get("arm", ""), _int(traj.labels.get("trial")))
            task = by_id.get(key[0])
            if task is None or key[1] not in arms or not 0 <= key[2] < trials or key in done:
                continue
            # The runner writes the outcome, then the labels with ``latency_s`` last: a
            # trajectory with both is a finished trial (whatever status the agent left).
            if traj.success is None or "latency_s" not in traj.labels:
                continue
            rec_snapshot = traj.labels.get("snapshot")
            if key[1] != ARM_WITHOUT and rec_snapshot and snapshot and rec_snapshot != snapshot:
                _warn_once(result, f"run {run_id} resumed on a changed bank: some {key[1]!r} "
                                   "trials were run with an earlier bank snapshot")
            done[key] = _record_from_trajectory(
                traj, task=task, split=split_of[task.id], arm=key[1], trial=key[2],
                seed=_int(traj.labels.get("seed"), trial_seed(task.id, key[2], seed)),
                success=bool(traj.success), latency_s=None, snapshot=rec_snapshot, resumed=True)

    pending = [(task, arm, i) for i in range(trials) for task in tasks for arm in arms
               if (task.id, arm, i) not in done]
    total = len(pending) + len(done)
    result.skipped = len(done)

    lock = threading.Lock()
    fresh: list[TrialRecord] = []

    def run_one(task: Any, arm: str, index: int) -> TrialRecord:
        seed_i = trial_seed(task.id, index, seed)
        split = split_of[task.id]
        labels = {"arm": arm, "run": run_id, "trial": str(index), "seed": str(seed_i)}
        if split is not None:
            labels["split"] = split
        if snapshot is not None:
            labels["snapshot"] = snapshot
        spec = TrialSpec(task=task, arm=arm, index=index, seed=seed_i, run_id=run_id,
                         labels=dict(labels))
        runnable = agent_factory(arm, None if arm == ARM_WITHOUT else bank, task)
        t0 = time.perf_counter()
        outcome = _normalise(_call_runnable(runnable, spec))
        latency = time.perf_counter() - t0
        labels["latency_s"] = f"{latency:.6f}"
        traj = None
        if bank is not None:
            traj = _store_trial(bank, task, outcome, labels, snapshot, model)
            if arm == ARM_WITHOUT and traj.injections:
                raise MeasureError(
                    f"trial {index} of task {task.id!r} in the 'without' arm injected "
                    f"{len(traj.injections)} skill(s); that arm must run without the bank "
                    "(use SkillBankMiddleware(..., inject=False))")
        return _record_from_trajectory(traj, task=task, split=split, arm=arm, trial=index,
                                       seed=seed_i, success=outcome.success, latency_s=latency,
                                       snapshot=snapshot, resumed=False)

    bar = _Progress(progress, total, len(done), description or f"measuring {run_id}")
    error: BaseException | None = None
    with bar, ThreadPoolExecutor(max_workers=concurrency,
                                 thread_name_prefix="skillbank-trial") as pool:
        futures: dict[Future, tuple] = {}
        queue = iter(pending)

        def submit_next() -> bool:
            item = next(queue, None)
            if item is None:
                return False
            futures[pool.submit(run_one, *item)] = item
            return True

        # Only `concurrency` trials are ever submitted, so an error stops the run promptly.
        for _ in range(concurrency):
            if not submit_next():
                break
        try:
            while futures:
                finished, _ = wait(list(futures), return_when=FIRST_EXCEPTION)
                for fut in finished:
                    futures.pop(fut)
                    exc = fut.exception()
                    if exc is not None:
                        error = error or exc
                        continue
                    with lock:
                        fresh.append(fut.result())
                    bar.advance()
                    if error is None:
                        submit_next()
        except BaseException:  # Ctrl-C: drop what has not started; the rest finishes
            for fut in futures:
                fut.cancel()
            raise
    if error is not None:
        raise error

    records = list(done.values()) + fresh
    order = {(t.id, a, i): n for n, (t, a, i) in enumerate(
        (t, a, i) for i in range(trials) for t in tasks for a in arms)}
    records.sort(key=lambda r: order[(r.task_id, r.arm, r.trial)])
    result.records = records
    result.ran = len(fresh)
    result.wall_time_s = time.time() - started
    if bank is not None:
        from skillbank.consistency.attribution import skill_names, skill_provenance

        injected = {s for r in records for s in r.injected}
        result.skill_names = skill_names(bank, injected)
        result.skills = skill_provenance(bank, extra_ids=injected)
    return result


def _warn_once(result: MeasureResult, message: str) -> None:
    if message not in result.warnings:
        result.warnings.append(message)


def _int(value: Any, default: int = -1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _store_trial(bank: "SkillBank", task: Any, outcome: TrialOutcome, labels: dict[str, str],
                 snapshot: str | None, model: str | None) -> "Trajectory":
    """Make sure the trial is a labelled trajectory in the bank; return it with its steps.

    The outcome is written before the run labels, so a trajectory carries this run's labels
    only once it is finished: a crash in between leaves it unlabelled, and it is rerun.
    """
    from skillbank.models import Outcome, Trajectory

    tid = outcome.trajectory_id
    if tid is None:
        traj = Trajectory(task=_task_text(task.input), task_id=task.id, task_type=str(task.type),
                          labels={}, model=model, bank_snapshot=snapshot, status="complete",
                          outcome=Outcome(success=outcome.success, source="verifier",
                                          note=outcome.note))
        traj.ended_at = traj.started_at
        tid = bank.trajectories.save(traj)
    else:
        current = bank.trajectories.get(tid)
        if current.success is None or current.success != outcome.success:
            bank.record_outcome(tid, success=outcome.success, note=outcome.note, source="verifier")
    bank.trajectories.set_labels(tid, task_id=task.id, task_type=str(task.type), labels=labels)
    return bank.trajectories.get(tid)


def _task_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("text", "prompt", "input", "request", "message"):
            if isinstance(value.get(key), str):
                return value[key]
    return str(value)


class _Progress:
    """A rich progress bar, a callback, or nothing."""

    def __init__(self, progress: bool | Callable[[int, int], None], total: int, done: int,
                 description: str):
        self.total, self.done = total, done
        self.callback = progress if callable(progress) else None
        self.bar = None
        if progress is True:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                transient=False)
            self.task = self.bar.add_task(description, total=total, completed=done)

    def __enter__(self) -> "_Progress":
        if self.bar is not None:
            self.bar.start()
        if self.callback is not None:
            self.callback(self.done, self.total)
        return self

    def advance(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.advance(self.task)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


# ------------------------------------------------------------------------------ your own agent


def measure_agent(
    build: Callable[..., Any],
    tasks: Sequence[Any],
    trials: int = 5,
    bank: "SkillBank | None" = None,
    arms: Sequence[str] = (ARM_WITHOUT, ARM_WITH),
    *,
    k: int = 5,
    middleware_options: Mapping[str, Any] | None = None,
    recursion_limit: int = 100,
    model: str | None = None,
    **kwargs: Any,
) -> MeasureResult:
    """:func:`measure` for your own agent: ``build`` makes it, with the bank's middleware in.

    ``build(middleware=[...], seed=...)`` is called once per trial and returns ``(agent,
    verify)``: ``agent`` is a LangChain runnable (e.g. ``create_agent(model, tools,
    middleware=middleware)``) invoked with the task's input as a user message (or the input
    itself when it is a dict), and ``verify(task, final_state) -> bool`` judges the run (the
    task carries what the verifier needs, e.g. a task file's line as ``task.data``). ``seed``
    is the trial's seed, the same in both arms; pass it to a model that takes one. The
    middleware logs every trial in ``bank`` in both arms and injects skills only in the
    ``"with"`` arm. A run that hits ``recursion_limit`` is a failure.
    """
    if bank is None:
        raise MeasureError("measure_agent needs a bank: every trial is logged in it")
    from langgraph.errors import GraphRecursionError

    def run_trial(task: Any, middleware: Any, spec: TrialSpec, config: dict[str, Any]) -> Any:
        built = build(middleware=[middleware], seed=spec.seed)
        try:
            agent, verify = built
        except (TypeError, ValueError):
            raise MeasureError(f"the agent factory returned {type(built).__name__}; it must "
                               "return (agent, verify)") from None
        payload = task.input
        if not isinstance(payload, Mapping):
            payload = {"messages": [{"role": "user", "content": _task_text(payload)}]}
        try:
            state = agent.invoke(payload, config={**config, "recursion_limit": recursion_limit})
        except GraphRecursionError:
            return None, False
        return state, bool(verify(task, state))

    factory = logged_factory(bank, arms, k, middleware_options, run_trial)
    return measure(factory, tasks, trials=trials, bank=bank, arms=arms, model=model, **kwargs)


def logged_factory(bank: "SkillBank", arms: Sequence[str], k: int,
                    middleware_options: Mapping[str, Any] | None,
                    run_trial: Callable[[Any, Any, TrialSpec, dict[str, Any]], Any]) -> AgentFactory:
    """An ``agent_factory`` whose trials run through ``SkillBankMiddleware`` (logging in both
    arms, injecting only outside ``"without"``); ``run_trial(task, middleware, spec, config)``
    returns ``(final_state_or_None, success)``."""
    from skillbank.adapters.langchain import SkillBankMiddleware

    options = dict(middleware_options or {})
    # One middleware per arm, shared by that arm's trials: it keeps per-run state under each
    # run's trajectory id (concurrent runs never mix), and its query-embedding cache then
    # serves every trial instead of starting cold in each.
    middlewares = {arm: SkillBankMiddleware(bank, k=k, inject=arm != ARM_WITHOUT, **options)
                   for arm in arms}

    def factory(arm: str, bank_or_none: Any, task: Any) -> Callable[[TrialSpec], TrialOutcome]:
        def run(spec: TrialSpec) -> TrialOutcome:
            config = {"metadata": {"skillbank_task_id": task.id,
                                   "skillbank_task_type": str(task.type),
                                   "skillbank_labels": dict(spec.labels)}}
            state, success = run_trial(task, middlewares[arm], spec, config)
            return _logged_outcome(state, success, bank, task, spec)
        return run
    return factory


def _logged_outcome(state: Any, success: bool, bank: "SkillBank", task: Any,
                    spec: TrialSpec) -> TrialOutcome:
    """A trial's final state and verdict -> TrialOutcome. The trajectory id comes from the
    final state; a run stopped without one (the recursion limit) is found by the labels the
    middleware gave its trajectory when it started (this run, arm and trial, and the task)."""
    from skillbank.adapters.langchain import TRAJECTORY_KEY

    state = state or {}
    tid = state.get(TRAJECTORY_KEY) if isinstance(state, Mapping) else None
    if tid is None:
        found = [t for t in bank.trajectories.list(labels=dict(spec.labels), limit=None)
                 if t.task_id == task.id and "latency_s" not in t.labels]
        tid = found[0].id if found else None  # newest first
    return TrialOutcome(success=bool(success), trajectory_id=tid)
