"""``measure_env``: the library's runner on the bundled environments' tasks.

The harness side of measuring: each trial runs a task of ``skillbank_harness.envs`` through
``run_task`` with the bank's middleware (``skillbank.consistency.runner.logged_factory``), with the
simulated policy unless a model factory is given. The library never imports this module.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from skillbank.consistency.runner import (
    ARM_WITH,
    ARM_WITHOUT,
    MeasureError,
    MeasureResult,
    logged_factory,
    measure,
)
from skillbank_harness.envs.trials import simulated_trial, trial_with
from skillbank_harness.envs.workers import TrialWorkers

__all__ = ["measure_env", "ARM_WITH", "ARM_WITHOUT"]


def measure_env(
    tasks: Sequence[Any],
    model_factory: Callable[[Any, int], Any] | None = None,
    trials: int = 5,
    bank: Any = None,
    arms: Sequence[str] = (ARM_WITHOUT, ARM_WITH),
    *,
    k: int = 5,
    middleware_options: Mapping[str, Any] | None = None,
    model: str | None = None,
    simulated: bool | None = None,
    workers: TrialWorkers | None = None,
    **kwargs: Any,
) -> MeasureResult:
    """:func:`~skillbank.consistency.runner.measure` for the bundled environments' tasks.

    Each trial runs ``run_task(task, chat_model, middleware=[SkillBankMiddleware(bank, k=k,
    inject=arm != "without", ...)])`` in a fresh environment; the middleware logs the trajectory
    in the bank in both arms, so both arms are stored and costed the same way, and the runner
    records the environment's verdict as the outcome.

    Args:
        model_factory: ``model_factory(task, seed)`` returns a LangChain chat model for one
            trial. Default: the environments' ``SimulatedPolicy`` seeded with the trial seed.
        k: Skills injected per model turn in the ``"with"`` arm.
        middleware_options: Extra keyword arguments for ``SkillBankMiddleware`` (a whole
            ``InjectionConfig`` as ``injection``, with ``k`` set on it).
        model: A label for the model; default ``"simulated-policy"`` when the default policy is used.
        simulated: Stated in reports; default: True exactly when the default policy is used.
        workers: Run the (simulated) trials in these worker processes, as many at a time as
            it has processes, instead of on threads of this one.
        **kwargs: Passed to ``measure`` (``concurrency``, ``run_id``, ``progress``, ...).
    """
    if bank is None:
        raise MeasureError("measure_env needs a bank: every trial is logged in it")
    if model_factory is None:
        simulated = True if simulated is None else simulated
        model = model or "simulated-policy"
    if workers is not None:
        if model_factory is not None:
            raise MeasureError("worker processes run the simulated policy only; a model_factory "
                               "runs in this process (drop workers=)")
        factory = workers.factory(arms, k, middleware_options)
        kwargs["concurrency"] = workers.processes
    else:
        run_trial = simulated_trial if model_factory is None else trial_with(model_factory)
        factory = logged_factory(bank, arms, k, middleware_options, run_trial)
    return measure(factory, tasks, trials=trials, bank=bank, arms=arms, model=model,
                   simulated=simulated, **kwargs)
