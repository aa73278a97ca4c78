"""Simulated trials in worker processes, so a measurement uses every core.

A simulated trial is pure Python (a LangGraph run, the policy reading its prompt, the bank's
middleware): threads of one process share one interpreter lock, so two trial threads on two
cores ran at about one core (the demo measured 1.03-1.04). :class:`TrialWorkers` keeps a pool of
processes, each with its own handle on the same bank (opened by location, as the hosts of a
fleet open one bank) and its own copy of the tasks (generated again from the same recipe: tasks
hold closures and do not pickle). The library's :func:`~skillbank.consistency.runner.measure`
still runs the measurement in the parent, with its threads only waiting on the workers: it
labels, stores, resumes and shows progress exactly as for in-process trials, and the trial
itself is the one :func:`~skillbank_harness.envs.measure.measure_env` runs in-process.

Workers start with ``spawn``: forking a process that already has threads, an ONNX session and
open SQLite connections is not safe.
"""

from __future__ import annotations

import multiprocessing
import pickle
import uuid
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from skillbank.consistency.runner import MeasureError, TrialOutcome, TrialSpec, logged_factory
from skillbank_harness.envs.trials import simulated_trial

__all__ = ["TaskRecipe", "TrialWorkers"]


@dataclass(frozen=True)
class TaskRecipe:
    """The arguments of :func:`~skillbank_harness.envs.generate_tasks` that made a run's tasks:
    the same arguments make the same tasks in every process."""

    families: tuple[str, ...] | None = None
    per_template: int = 5
    seed: int = 0

    def tasks(self) -> dict[str, Any]:
        from skillbank_harness.envs.tasks import generate_tasks

        families = list(self.families) if self.families else None
        return {t.id: t for t in generate_tasks(families, per_template=self.per_template, seed=self.seed)}


class TrialWorkers:
    """``processes`` worker processes running simulated trials on the bank at ``location``.

    Use :meth:`factory` as a measurement's agent factory (with ``concurrency`` equal to
    :attr:`processes`); close the pool when done (or use it as a context manager).
    """

    def __init__(self, location: str, recipe: TaskRecipe, processes: int, embedder: Any = None):
        if processes < 1:
            raise ValueError(f"processes must be at least 1, not {processes}")
        try:
            pickle.dumps(embedder)
        except Exception as exc:  # a loaded model object cannot go to another process
            raise ValueError(f"the embedder {embedder!r} cannot be sent to worker processes "
                             f"({exc}); pass it by name (e.g. 'minilm', 'hash') or run the "
                             "trials on threads (processes=0)") from None
        self.processes = processes
        self._pool = ProcessPoolExecutor(
            max_workers=processes, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker, initargs=(str(location), recipe, embedder))

    def warm_up(self) -> None:
        """Start every worker now (imports, the bank, the embedding model: a few seconds),
        while the caller does something else; the first trials then start at once."""
        for _ in range(self.processes):  # a busy pool starts a process for each job
            self._pool.submit(_ready)

    def factory(self, arms: Sequence[str], k: int,
                middleware_options: Mapping[str, Any] | None) -> Callable[[str, Any, Any], Any]:
        """An agent factory for one measurement: each trial runs in a worker through
        ``SkillBankMiddleware(bank, inject=arm != "without", **middleware_keywords(k, middleware_options))``, one
        middleware per arm in each worker, shared by the measurement's trials there."""
        key = uuid.uuid4().hex
        setup = (key, tuple(arms), k, dict(middleware_options or {}))

        def factory(arm: str, _bank: Any, task: Any) -> Callable[[TrialSpec], TrialOutcome]:
            def run(spec: TrialSpec) -> TrialOutcome:
                try:
                    return self._pool.submit(_trial, setup, replace(spec, task=task.id)).result()
                except BrokenProcessPool as exc:
                    raise MeasureError(f"a trial worker process died while running task "
                                       f"{task.id!r}: {exc}. Rerun with the same run id to run "
                                       "only the trials that did not finish.") from exc
            return run
        return factory

    def failure_mass(self, records: Sequence[Any]) -> "Future[Any]":
        """:func:`~skillbank_harness.envs.failures.failure_mass` of ``records`` (the failed
        trials are re-run), computed in a worker while this process goes on."""
        return self._pool.submit(_failure_mass, list(records))

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "TrialWorkers":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- in the worker process ------------------------------------------------------------------

_SETUP: tuple[str, TaskRecipe, Any] | None = None  # (bank location, recipe, embedder)
_OPENED: dict[str, Any] = {}  # "bank", "tasks": made on first use, so an error reaches the caller
_FACTORIES: dict[str, Any] = {}  # measurement key -> its agent factory (the newest few)


def _start_worker(location: str, recipe: TaskRecipe, embedder: Any) -> None:
    global _SETUP
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # one core per worker: the pool is the parallelism
    _SETUP = (location, recipe, embedder)


def _bank() -> Any:
    if "bank" not in _OPENED:
        from skillbank import SkillBank

        location, _, embedder = _SETUP
        _OPENED["bank"] = SkillBank.open(location, embedder=embedder, create=False)
    return _OPENED["bank"]


def _tasks() -> dict[str, Any]:
    if "tasks" not in _OPENED:
        _OPENED["tasks"] = _SETUP[1].tasks()
    return _OPENED["tasks"]


def _ready() -> None:
    _tasks()
    _bank().embedder.embed_query("warm up the embedding model")


def _trial(setup: tuple[str, tuple[str, ...], int, dict[str, Any]], spec: TrialSpec) -> TrialOutcome:
    key, arms, k, options = setup
    factory = _FACTORIES.get(key)
    if factory is None:
        while len(_FACTORIES) >= 4:  # measurements run one after another: keep the newest
            del _FACTORIES[next(iter(_FACTORIES))]
        factory = _FACTORIES[key] = logged_factory(_bank(), arms, k, options, simulated_trial)
    task = _tasks()[spec.task]
    return factory(spec.arm, None, task)(replace(spec, task=task))


def _failure_mass(records: list[Any]) -> Any:
    from skillbank_harness.envs.failures import failure_mass
    from skillbank_harness.envs.policy import SimulatedPolicy
    from skillbank_harness.envs.runner import run_task

    return failure_mass(records, list(_tasks().values()),
                        lambda task, seed: run_task(task, SimulatedPolicy(seed=seed)))
