"""Measuring a LangChain agent: every trial through the bank's middleware.

:func:`measure_agent` measures your own agent: each trial runs through
:class:`~skillbank.adapters.langchain.SkillBankMiddleware` (``inject=False`` in the
``"without"`` arm, so that arm is logged the same way but never sees a skill);
:func:`logged_factory` is that wiring, for other runners (the bundled environments'
``skillbank_harness.envs.measure_env`` uses it).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from skillbank.consistency.config import MeasureConfig, measure_config
from skillbank.consistency.measure import AgentFactory, measure
from skillbank.consistency.result import MeasureResult
from skillbank.consistency.tasks import agent_input
from skillbank.consistency._trials import ARM_WITHOUT, TrialOutcome, TrialSpec, is_finished
from skillbank.errors import MeasureError

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.bank import SkillBank

__all__ = ["measure_agent", "logged_factory", "middleware_keywords", "run_agent_trial", "agent_trial_fn"]


def measure_agent(
    build: Callable[..., Any],
    tasks: Sequence[Any],
    trials: int | None = None,
    bank: "SkillBank | None" = None,
    arms: Sequence[str] | None = None,
    *,
    k: int = 5,
    middleware_options: Mapping[str, Any] | None = None,
    recursion_limit: int = 100,
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
    """:func:`measure` for your own agent: ``build`` makes it, with the bank's middleware in.

    ``build(middleware=[...], seed=...)`` is called once per trial and returns ``(agent,
    verify)``: ``agent`` is a LangChain runnable (e.g. ``create_agent(model, tools,
    middleware=middleware)``) invoked with the task's input as a user message (or the input
    itself when it is a dict), and ``verify(task, final_state) -> bool`` judges the run (the
    task carries what the verifier needs, e.g. a task file's line as ``task.data``). ``seed``
    is the trial's seed, the same in both arms; pass it to a model that takes one. The
    middleware logs every trial in ``bank`` in both arms and injects skills only in the
    ``"with"`` arm. A run that hits ``recursion_limit`` is a failure. ``middleware_options`` are
    more keywords of the middleware (:func:`middleware_keywords`). ``trials``, ``arms``,
    ``config`` and the keywords from ``concurrency`` on are :func:`measure`'s (a whole
    :class:`MeasureConfig`, or its fields as keywords; not both).

    Args:
        build: ``build(middleware=[...], seed=...) -> (agent, verify)``, called once per trial.
        tasks: Records with ``id``, ``type`` and ``input`` (as :func:`measure` takes them).
        trials: Trials per task and arm (``MeasureConfig.trials``; ``None``: its default).
        bank: The bank every trial is logged in and the ``"with"`` arm injects from; required.
        arms: Arm names, run in this order (``MeasureConfig.arms``; ``None``: its default).
        k: Retrieved skills per turn at most in the ``"with"`` arm.
        middleware_options: More keywords of ``SkillBankMiddleware``; ``None``: none.
        recursion_limit: The graph's recursion limit per trial; a run that hits it fails.
        config: How to run, whole (:class:`MeasureConfig`); then none of its fields is given here.
        concurrency: Trials run at once (``None``: the config's default).
        run_id: The run's name; an interrupted run's id resumes it (``None``: a new one).
        progress: A progress bar, or ``callback(done, total)`` (``None``: the config's default).
        splits: ``task id -> split`` overriding the tasks' own ``split``.
        seed: The base of the per-trial seeds and of the bootstrap (``None``: 0).
        model: A label for the model, stored with the result.
        simulated: Whether the policy is simulated, stated in reports.
        description: The progress bar's label.

    Returns:
        Every trial's record and the numbers computed from them (see :func:`measure`).

    Raises:
        MeasureError: No bank given, ``build`` did not return ``(agent, verify)``, or as
            :func:`measure` raises it.
        TypeError: An unknown keyword, or a field given both here and in ``config``.
    """
    if bank is None:
        raise MeasureError("measure_agent needs a bank: every trial is logged in it")

    def run_trial(task: Any, middleware: Any, spec: TrialSpec, config: dict[str, Any]) -> Any:
        return run_agent_trial(build, task, middleware, spec.seed, config, recursion_limit)

    cfg = measure_config(config, owner="measure_agent", trials=trials, arms=arms, concurrency=concurrency,
                         run_id=run_id, progress=progress, splits=splits, seed=seed, model=model,
                         simulated=simulated, description=description)
    factory = logged_factory(bank, cfg.arms, k, middleware_options, run_trial)
    return measure(factory, tasks, bank=bank, config=cfg)


def run_agent_trial(build: Callable[..., Any], task: Any, middleware: Any, seed: int,
                    config: Mapping[str, Any] | None = None, recursion_limit: int = 100) -> tuple[Any, bool]:
    """One trial of your agent: ``build(middleware=[middleware], seed=seed)`` -> ``(agent,
    verify)``, the agent invoked with the task's input, ``verify(task, final_state)`` judging it.

    Returns ``(final_state, success)``; a run that hits ``recursion_limit`` is ``(None, False)``.

    Raises:
        MeasureError: ``build`` did not return ``(agent, verify)``.
    """
    from langgraph.errors import GraphRecursionError

    built = build(middleware=[middleware], seed=seed)
    try:
        agent, verify = built
    except (TypeError, ValueError):
        raise MeasureError(f"the agent factory returned {type(built).__name__}; it must "
                           "return (agent, verify)") from None
    try:
        state = agent.invoke(agent_input(task.input),
                             config={**(config or {}), "recursion_limit": recursion_limit})
    except GraphRecursionError:
        return None, False
    return state, bool(verify(task, state))


def agent_trial_fn(build: Callable[..., Any], recursion_limit: int = 100) -> Callable[[Any, Any, int], bool]:
    """Your agent factory as the gate's ``trial_fn(task, middleware, seed) -> success``
    (:func:`skillbank.consistency.validation.make_validator`): each trial as
    :func:`measure_agent` runs it, with the gate's middleware in place of the bank's."""
    def trial_fn(task: Any, middleware: Any, seed: int) -> bool:
        return run_agent_trial(build, task, middleware, seed, None, recursion_limit)[1]
    return trial_fn


def logged_factory(bank: "SkillBank", arms: Sequence[str], k: int,
                   middleware_options: Mapping[str, Any] | None,
                   run_trial: Callable[[Any, Any, TrialSpec, dict[str, Any]], Any]) -> AgentFactory:
    """An ``agent_factory`` whose trials run through ``SkillBankMiddleware`` (logging in both
    arms, injecting only outside ``"without"``); ``run_trial(task, middleware, spec, config)``
    returns ``(final_state_or_None, success)``, or ``(final_state_or_None, success, note)`` to
    store a note with the verdict (a benchmark's score, say)."""
    from skillbank.adapters.langchain import SkillBankMiddleware

    options = middleware_keywords(k, middleware_options)
    # One middleware per arm, shared by that arm's trials: it keeps per-run state under each
    # run's trajectory id (concurrent runs never mix), and its query-embedding cache then
    # serves every trial instead of starting cold in each.
    middlewares = {arm: SkillBankMiddleware(bank, inject=arm != ARM_WITHOUT, **options)
                   for arm in arms}

    def factory(arm: str, bank_or_none: Any, task: Any) -> Callable[[TrialSpec], TrialOutcome]:
        def run(spec: TrialSpec) -> TrialOutcome:
            config = {"metadata": {"skillbank_task_id": task.id,
                                   "skillbank_task_type": str(task.type),
                                   "skillbank_labels": dict(spec.labels)}}
            state, success, *note = run_trial(task, middlewares[arm], spec, config)
            outcome = _logged_outcome(state, success, bank, task, spec)
            if note and note[0] is not None:
                outcome.note = str(note[0])
            return outcome
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
                 if t.task_id == task.id and not is_finished(t.labels)]
        tid = found[0].id if found else None  # newest first
    return TrialOutcome(success=bool(success), trajectory_id=tid)


def middleware_keywords(k: int, middleware_options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keyword arguments a measurement's middleware is built with: ``middleware_options``
    (keywords of ``SkillBankMiddleware`` / ``SkillInjectionMiddleware``) with the measurement's
    ``k``, set on the whole ``InjectionConfig`` when one is given as ``injection`` (where ``k``
    replaces the config's) and as the ``k`` keyword otherwise.

    Args:
        k: Skills injected per model call.
        middleware_options: The middleware's other keywords (``None``: none).

    Returns:
        A new dict; the middleware itself refuses an unknown keyword, or ``k`` given in
        ``middleware_options`` along with ``injection``.
    """
    options = dict(middleware_options or {})
    injection = options.get("injection")
    if injection is not None:
        options["injection"] = dataclasses.replace(injection, k=k)
        return options
    return {"k": k, **options}
