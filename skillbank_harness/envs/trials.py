"""One trial of a bundled task, as ``logged_factory`` runs it: shared by ``measure_env`` (threads
of this process) and ``TrialWorkers`` (worker processes), so neither imports the other."""

from __future__ import annotations

from typing import Any, Callable

from skillbank.consistency.runner import TrialSpec
from skillbank_harness.envs.policy import SimulatedPolicy
from skillbank_harness.envs.runner import run_task

__all__ = ["trial_with", "simulated_trial"]


def trial_with(model_factory: Callable[[Any, int], Any]) -> Callable[..., tuple[Any, bool]]:
    """``run_trial(task, middleware, spec, config)`` for ``logged_factory``: one run of the task
    with ``model_factory(task, trial seed)``, returning ``(final state or None, success)``."""
    def run_trial(task: Any, middleware: Any, spec: TrialSpec, config: dict[str, Any]) -> tuple[Any, bool]:
        outcome = run_task(task, model_factory(task, spec.seed), middleware=[middleware], config=config)
        return outcome.state, bool(outcome.success)
    return run_trial


def _simulated(task: Any, seed: int) -> SimulatedPolicy:
    return SimulatedPolicy(seed=seed)


# The default trial, importable by name: worker processes run it too.
simulated_trial = trial_with(_simulated)
