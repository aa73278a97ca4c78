"""``measure_tau2``: the library's runner on τ² tasks, and τ²'s leaderboard numbers.

Each trial runs :func:`~.run.run_tau2_task` with the bank's middleware
(``skillbank.consistency.runner.logged_factory``: logged in both arms, skills injected only in
``with``); the runner stores τ²'s verdict (a reward of 1) as the trial's outcome, with τ²'s
reward, its parts and how the conversation ended as the outcome's note.

:func:`leaderboard` computes pass^k as τ²'s leaderboard does (``tau2.metrics.agent_metrics``:
a trial succeeds when its reward is 1, and pass^k is the mean over tasks of
``pass_hat_k(trials, successes, k)`` = C(successes, k) / C(trials, k), for k from 1 to the
fewest trials any task has), per arm and split, with τ²'s own functions.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Mapping, Sequence

from skillbank.chat import with_seed
from skillbank.consistency.runner import (
    ARM_WITH,
    ARM_WITHOUT,
    MeasureError,
    MeasureResult,
    TrialSpec,
    logged_factory,
    measure,
)
from skillbank_harness.envs.tau2 import _tau2
from skillbank_harness.envs.tau2.run import NL_EVALUATED, NL_NONE, Tau2Run, run_tau2_task

__all__ = ["measure_tau2", "leaderboard", "leaderboard_lines", "LEADERBOARD_FORMULA"]

LEADERBOARD_FORMULA = ("τ²'s pass^k (tau2.metrics.agent_metrics): a trial passes when its reward "
                       "is 1; pass^k is the mean over tasks of C(passes, k) / C(trials, k)")


def measure_tau2(
    tasks: Sequence[Any],
    model_factory: Callable[[Any, int], Any] | None,
    trials: int = 4,
    bank: Any = None,
    arms: Sequence[str] = (ARM_WITHOUT, ARM_WITH),
    *,
    user_model: Any = None,
    judge_model: Any = None,
    k: int = 5,
    middleware_options: Mapping[str, Any] | None = None,
    model: str | None = None,
    max_steps: int = _tau2.DEFAULT_MAX_STEPS,
    max_errors: int = _tau2.DEFAULT_MAX_ERRORS,
    on_trial: Callable[[Any, TrialSpec, Tau2Run], None] | None = None,
    **kwargs: Any,
) -> MeasureResult:
    """:func:`~skillbank.consistency.runner.measure` for τ² tasks (:class:`~.tasks.Tau2Task`).

    Args:
        model_factory: ``model_factory(task, seed)`` returns the agent's chat model for a trial.
        user_model: The chat model that plays τ²'s user (each trial samples with its seed where
            the model takes one); not needed when every task is solo.
        judge_model: A chat model that judges τ²'s natural-language assertions; without one
            they are skipped and the result says so.
        max_steps, max_errors: τ²'s limits (its command's defaults: 200 and 10).
        on_trial: Called with ``(task, spec, run)`` after each trial (a log, say).
        **kwargs: Passed to ``measure`` (``concurrency``, ``run_id``, ``progress``, ...).

    The result's ``benchmark["tau2"]`` holds :func:`leaderboard`'s numbers and its ``notes``
    the lines that print them.
    """
    if bank is None:
        raise MeasureError("measure_tau2 needs a bank: every trial is logged in it")
    if model_factory is None:
        raise MeasureError("τ² tasks need an agent model (--model): the simulated policy only "
                           "plays the bundled environments")
    if user_model is None and any(not t.solo for t in tasks):
        raise MeasureError("τ² conversations need a user model (--user-model): the chat model "
                           "that plays τ²'s user simulator")

    def run_trial(task: Any, middleware: Any, spec: TrialSpec, config: dict[str, Any]) -> tuple[Any, bool, str]:
        user = None if task.solo else with_seed(user_model, spec.seed)
        run = run_tau2_task(task, model_factory(task, spec.seed), user, middleware=[middleware],
                            judge_model=judge_model, config=config, max_steps=max_steps,
                            max_errors=max_errors)
        if on_trial is not None:
            on_trial(task, spec, run)
        return run.state, run.success, run.note()

    factory = logged_factory(bank, arms, k, middleware_options, run_trial)
    result = measure(factory, tasks, trials=trials, bank=bank, arms=arms, model=model,
                     simulated=False, **kwargs)
    board = leaderboard(result)
    nl_tasks = [t for t in tasks if t.task.evaluation_criteria is not None
                and t.task.evaluation_criteria.nl_assertions]
    board["nl_assertions"] = NL_EVALUATED if judge_model is not None else (
        f"skipped: no judge model ({len(nl_tasks)} of {len(tasks)} tasks have them)" if nl_tasks else NL_NONE)
    result.benchmark["tau2"] = board
    result.notes.extend(leaderboard_lines(board))
    return result


def leaderboard(result: MeasureResult) -> dict[str, Any]:
    """τ²'s pass^1..n per split and arm, with τ²'s ``pass_hat_k``; ``"all"`` pools the splits
    when there are several."""
    views: list[str | None] = [None, *result.splits] if len(result.splits) > 1 else list(result.splits) or [None]
    out: dict[str, Any] = {"formula": LEADERBOARD_FORMULA, "splits": {}}
    for view in views:
        arms: dict[str, Any] = {}
        for arm in result.arms:
            by_task: dict[str, list[bool]] = defaultdict(list)
            for record in result.records:
                if record.arm == arm and (view is None or record.split == view):
                    by_task[record.task_id].append(bool(record.success))
            if not by_task:
                continue
            max_k = min(len(v) for v in by_task.values())
            arms[arm] = {
                "n_tasks": len(by_task),
                "trials": max_k,
                "pass_hat_k": {k: sum(_tau2.pass_hat_k(len(v), sum(v), k) for v in by_task.values()) / len(by_task)
                               for k in range(1, max_k + 1)},
            }
        out["splits"][view or "all"] = arms
    return out


def leaderboard_lines(board: Mapping[str, Any]) -> list[str]:
    """The leaderboard as lines for the command's output and the report's notes."""
    lines = [board["formula"] + ":"]
    for view, arms in board["splits"].items():
        for arm, row in arms.items():
            ks = "  ".join(f"pass^{k} {v:.3f}" for k, v in row["pass_hat_k"].items())
            lines.append(f"  {view} ({row['n_tasks']} tasks), {arm}: {ks}")
    nl = board.get("nl_assertions")
    if nl and nl != NL_NONE:
        lines.append(f"τ² natural-language assertions: {nl}")
    return lines


__all__ += ["ARM_WITH", "ARM_WITHOUT"]
