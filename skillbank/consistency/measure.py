""":func:`measure`: run every task several times per arm and measure how consistent the agent is.

It takes an ``agent_factory(arm, bank_or_None, task)`` that builds one trial, runs each task
``trials`` times in each arm (``"without"`` the bank and ``"with"`` it, by default) on a bounded
thread pool (:mod:`.engine`), stores every trial as a trajectory in the bank tagged with the
run, arm, trial number, split and bank snapshot, and returns a
:class:`~skillbank.consistency.result.MeasureResult`.

Resuming (:mod:`.resume`): a run is named by ``run_id``; every ``(task, arm, trial)`` whose
trajectory is labelled finished is not run again. Interrupt a run (Ctrl-C, a crash, an exception
from the factory) and call :func:`measure` again with the same ``run_id``: only the missing
trials run.

Pairing: trial ``i`` of task ``t`` gets the seed :func:`~skillbank.consistency._trials.trial_seed`
``(t, i)`` in every arm, so the arms differ only in the bank; seeds differ across trials.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from skillbank.consistency._attribution import skill_names, skill_provenance
from skillbank.consistency.config import MeasureConfig, measure_config
from skillbank.consistency._engine import run_bounded
from skillbank.consistency._progress import Progress
from skillbank.consistency.result import MeasureResult
from skillbank.consistency._resume import TrialKey, finished_trials
from skillbank.consistency._splits import task_split
from skillbank.consistency.tasks import check_tasks, task_meta, task_text
from skillbank.consistency._trials import (
    ARM_WITH,
    ARM_WITHOUT,
    TrialOutcome,
    TrialRecord,
    TrialSpec,
    as_outcome,
    call_runnable,
    finished_labels,
    new_run_id,
    record_from_trajectory,
    trial_seed,
)
from skillbank.errors import MeasureError

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.bank import SkillBank
    from skillbank.models import Trajectory

__all__ = ["AgentFactory", "measure"]

AgentFactory = Callable[[str, "SkillBank | None", Any], Any]


def measure(
    agent_factory: AgentFactory,
    tasks: Sequence[Any],
    trials: int | None = None,
    bank: "SkillBank | None" = None,
    arms: Sequence[str] | None = None,
    *,
    config: MeasureConfig | None = None,
    concurrency: int | None = None,
    run_id: str | None = None,
    progress: bool | Callable[[int, int], None] | None = None,
    splits: Mapping[str, str] | None = None,
    seed: int | None = None,
    model: str | None = None,
    simulated: bool | None = None,
    description: str | None = None,
) -> MeasureResult:
    """Run each task ``trials`` times in each arm and measure consistency.

    Whatever a trial raises stops the run after the trials in flight finish; the finished
    trials are kept, and a rerun with the same ``run_id`` does only the rest.

    Args:
        agent_factory: ``agent_factory(arm, bank_or_None, task)`` builds one trial; it gets the
            bank in every arm except ``"without"`` (and ``None`` everywhere when no bank is
            given). It returns either a callable, called with a :class:`TrialSpec` (or with
            nothing if it takes no argument) and returning a :class:`TrialOutcome`,
            ``(success, trajectory_id)`` or a ``bool``; or a LangChain runnable (e.g. a
            ``create_agent`` graph), invoked with the task's input and judged with
            ``task.verify(state)``.
        tasks: Records with ``id``, ``type`` and ``input`` (and optionally ``verify``,
            ``split``, ``family``); the environments' ``Task`` fits as it is.
        trials: Trials per task and arm (``MeasureConfig.trials``; ``None``: its default).
        bank: The bank that is injected in the ``"with"`` arm and where every trial is stored.
            Without a bank nothing is stored and the run cannot resume.
        arms: Arm names, run in this order (``MeasureConfig.arms``; ``None``: its default).
        config: How to run, whole (:class:`MeasureConfig`); then none of ``trials``, ``arms``
            and the keywords below is given here.
        concurrency: Trials run at once (``MeasureConfig.concurrency``; ``None``: its default).
        run_id: The run's name; an interrupted run's id resumes it (``None``: a new one).
        progress: A progress bar, or ``callback(done, total)`` (``None``: the config's default).
        splits: ``task id -> split`` overriding the tasks' own ``split``.
        seed: The base of the per-trial seeds and of the bootstrap (``None``: 0).
        model: A label for the model, stored with the result.
        simulated: Whether the policy is simulated, stated in reports.
        description: The progress bar's label.

    Returns:
        Every trial's record and the numbers computed from them.

    Raises:
        TypeError: an unknown keyword, or a field given both here and in ``config``.
        MeasureError: bad arguments (no tasks, a task without ``id``/``type``/``input``, two
            tasks with one id, the ``"with"`` arm without a bank), or a trial in the
            ``"without"`` arm that injected a skill.
    """
    cfg = measure_config(config, owner="measure", trials=trials, arms=arms, concurrency=concurrency,
                         run_id=run_id, progress=progress, splits=splits, seed=seed, model=model,
                         simulated=simulated, description=description)
    if bank is None and ARM_WITH in cfg.arms:
        raise MeasureError("the 'with' arm needs a bank: pass bank=")
    tasks = list(tasks)
    check_tasks(tasks)
    run = _Run(agent_factory, tasks, bank, cfg)
    return run.measure()


class _Run:
    """One call of :func:`measure`: what it needs to run one trial, and the run as a whole."""

    def __init__(self, agent_factory: AgentFactory, tasks: list[Any], bank: "SkillBank | None",
                 cfg: MeasureConfig):
        self.agent_factory = agent_factory
        self.tasks = tasks
        self.bank = bank
        self.cfg = cfg
        self.run_id = cfg.run_id or new_run_id()
        self.snapshot = bank.snapshot_id() if bank is not None else None
        self.split_of = {t.id: task_split(t, cfg.splits) for t in tasks}

    def measure(self) -> MeasureResult:
        cfg, bank, tasks = self.cfg, self.bank, self.tasks
        started = time.time()
        result = MeasureResult(
            run_id=self.run_id, arms=cfg.arms, trials=cfg.trials,
            tasks={t.id: task_meta(t, self.split_of[t.id]) for t in tasks}, records=[],
            seed=cfg.seed, bank_snapshot=self.snapshot,
            bank_path=None if bank is None else bank.location, model=cfg.model,
            simulated=cfg.simulated, started_at=started,
        )
        done: dict[TrialKey, TrialRecord] = {}
        if bank is not None:
            resumed = finished_trials(bank, self.run_id, tasks={t.id: t for t in tasks},
                                      splits=self.split_of, arms=cfg.arms, trials=cfg.trials,
                                      seed=cfg.seed, snapshot=self.snapshot)
            done, result.warnings = resumed.done, resumed.warnings
        order = [(t, a, i) for i in range(cfg.trials) for t in tasks for a in cfg.arms]
        pending = [(t, a, i) for t, a, i in order if (t.id, a, i) not in done]
        result.skipped = len(done)

        fresh: list[TrialRecord] = []
        bar = Progress(cfg.progress, len(pending) + len(done), len(done),
                       cfg.description or f"measuring {self.run_id}")

        def finished(record: TrialRecord) -> None:
            fresh.append(record)
            bar.advance()

        with bar:
            run_bounded(pending, lambda job: self.run_trial(*job), concurrency=cfg.concurrency,
                        finished=finished)

        position = {(t.id, a, i): n for n, (t, a, i) in enumerate(order)}
        result.records = sorted([*done.values(), *fresh],
                                key=lambda r: position[(r.task_id, r.arm, r.trial)])
        result.ran = len(fresh)
        result.wall_time_s = time.time() - started
        if bank is not None:
            injected = {s for r in result.records for s in r.injected}
            result.skill_names = skill_names(bank, injected)
            result.skills = skill_provenance(bank, extra_ids=injected)
        return result

    def run_trial(self, task: Any, arm: str, index: int) -> TrialRecord:
        """Trial ``index`` of ``task`` in ``arm``: built, run, stored, recorded."""
        bank = self.bank
        seed_i = trial_seed(task.id, index, self.cfg.seed)
        split = self.split_of[task.id]
        labels = {"arm": arm, "run": self.run_id, "trial": str(index), "seed": str(seed_i)}
        if split is not None:
            labels["split"] = split
        if self.snapshot is not None:
            labels["snapshot"] = self.snapshot
        spec = TrialSpec(task=task, arm=arm, index=index, seed=seed_i, run_id=self.run_id,
                         labels=dict(labels))
        runnable = self.agent_factory(arm, None if arm == ARM_WITHOUT else bank, task)
        t0 = time.perf_counter()
        outcome = as_outcome(call_runnable(runnable, spec))
        latency = time.perf_counter() - t0
        traj = None
        if bank is not None:
            traj = _store_trial(bank, task, outcome, finished_labels(labels, latency),
                                self.snapshot, self.cfg.model)
            if arm == ARM_WITHOUT and traj.injections:
                raise MeasureError(
                    f"trial {index} of task {task.id!r} in the 'without' arm injected "
                    f"{len(traj.injections)} skill(s); that arm must run without the bank "
                    "(use SkillBankMiddleware(..., inject=False))")
        return record_from_trajectory(traj, task=task, split=split, arm=arm, trial=index,
                                      seed=seed_i, success=outcome.success, latency_s=latency,
                                      snapshot=self.snapshot, resumed=False)


def _store_trial(bank: "SkillBank", task: Any, outcome: TrialOutcome, labels: Mapping[str, str],
                 snapshot: str | None, model: str | None) -> "Trajectory":
    """Make sure the trial is a labelled trajectory in the bank; return it with its steps.

    The outcome is written before the run labels (with the finished state), so a trajectory
    carries this run's labels only once it is finished: a crash in between leaves it
    unlabelled, and it is rerun.
    """
    from skillbank.models import Outcome, Trajectory

    tid = outcome.trajectory_id
    if tid is None:
        traj = Trajectory(task=task_text(task.input), task_id=task.id, task_type=str(task.type),
                          labels={}, model=model, bank_snapshot=snapshot, status="complete",
                          outcome=Outcome(success=outcome.success, source="verifier",
                                          note=outcome.note))
        traj.ended_at = traj.started_at
        tid = bank.trajectories.save(traj)
    else:
        current = bank.trajectories.get(tid)
        noted = outcome.note is not None and (current.outcome is None or current.outcome.note != outcome.note)
        if current.success is None or current.success != outcome.success or noted:
            bank.record_outcome(tid, success=outcome.success, note=outcome.note, source="verifier")
    bank.trajectories.set_labels(tid, task_id=task.id, task_type=str(task.type), labels=dict(labels))
    return bank.trajectories.get(tid)
