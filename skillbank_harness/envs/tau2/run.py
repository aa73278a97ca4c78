"""One τ² trial: the agent in a real ``create_agent`` loop, τ²'s user, and τ²'s evaluator.

:func:`run_tau2_task` opens the conversation (:class:`~.env.Tau2Env`), runs the agent -- a real
``langchain.agents.create_agent(model, tools, system_prompt=τ²'s, middleware=[τ²'s side,
*yours])`` -- until τ²'s conversation ends, and scores the trajectory with τ²'s own
``evaluate_simulation``. The reward is τ²'s: on a conversation that ended normally (the user
or the solo agent stopped), the product of the checks in the task's reward basis (the
database after replaying the run's tool calls against the one the gold actions make, the
environment assertions, the actions, the information the agent had to communicate); 0 when it
ended otherwise (too many steps or errors, an empty message).

Natural-language assertions need a judge model: with ``judge_model`` they are evaluated
(``EvaluationType.ALL_WITH_NL_ASSERTIONS``, τ²'s judge prompt, the judge a LangChain chat
model); without it the evaluation is τ²'s leaderboard one (``EvaluationType.ALL``), and the
result says so (:attr:`Tau2Run.nl_assertions`). τ²'s shipped airline, retail and telecom tasks
leave natural-language assertions out of their reward basis, so the judge never changes their
reward; a task that has them in it is scored without them (τ² itself refuses to score it), and
its result says that too.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Sequence

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langgraph.errors import GraphRecursionError

from skillbank.errors import ContextWindowExceededError
from skillbank_harness.envs.tau2 import _tau2
from skillbank_harness.envs.tau2.convert import reply_text, to_langchain
from skillbank_harness.envs.tau2.env import Tau2Env

__all__ = ["Tau2Run", "run_tau2_task", "evaluate", "NL_EVALUATED", "NL_SKIPPED", "NL_NONE",
           "NL_SKIPPED_IN_BASIS"]

NL_EVALUATED = "evaluated"
NL_SKIPPED = "skipped: no judge model"
NL_SKIPPED_IN_BASIS = "skipped: no judge model (in the task's reward basis: scored without them)"
NL_NONE = "none in the task"


@dataclass
class Tau2Run:
    """One trial's outcome: τ²'s simulation record and reward, and the LangChain final state."""

    task: Any
    env: Tau2Env
    state: dict[str, Any] | None
    simulation: Any  # τ²'s SimulationRun, reward_info set
    nl_assertions: str
    duration_s: float
    error: str | None = None  # an exception that ended the run, in words
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def reward_info(self) -> Any:
        return self.simulation.reward_info

    @property
    def reward(self) -> float:
        return float(self.simulation.reward_info.reward)

    @property
    def success(self) -> bool:
        """τ²'s success: a reward of 1 (``tau2.metrics.agent_metrics.is_successful``)."""
        return bool(_tau2.is_successful(self.reward))

    @property
    def termination(self) -> str:
        return str(_tau2.TerminationReason(self.simulation.termination_reason).value)

    def note(self) -> str:
        """One line for the bank's outcome note: reward, its parts, how it ended, NL assertions."""
        info = self.reward_info
        parts = ", ".join(f"{getattr(k, 'value', k)} {v:g}" for k, v in (info.reward_breakdown or {}).items())
        text = f"τ² reward {self.reward:g}" + (f" ({parts})" if parts else "")
        text += f"; ended: {self.termination}"
        if self.env.note:
            text += f" ({self.env.note})"
        if self.nl_assertions != NL_NONE:
            text += f"; NL assertions {self.nl_assertions}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: task, reward and its checks, termination, time, and τ²'s messages."""
        info = self.reward_info
        return {
            "task_id": self.task.id, "tau2_task_id": self.task.tau2_id, "domain": self.task.domain,
            "solo": self.task.solo, "split": self.task.split, "reward": self.reward,
            "success": self.success, "termination": self.termination, "note": self.env.note,
            "error": self.error, "nl_assertions": self.nl_assertions,
            "reward_basis": [getattr(b, "value", b) for b in (info.reward_basis or [])],
            "reward_breakdown": {getattr(k, "value", k): v for k, v in (info.reward_breakdown or {}).items()},
            "reward_info": json.loads(info.model_dump_json()),
            "steps": self.env.step_count, "tool_errors": self.env.num_errors,
            "duration_s": self.duration_s,
            "messages": [json.loads(m.model_dump_json()) for m in self.simulation.messages],
            **self.extra,
        }


def run_tau2_task(
    task: Any,
    model: Any,
    user_model: Any = None,
    middleware: Sequence[AgentMiddleware] = (),
    *,
    judge_model: Any = None,
    config: dict[str, Any] | None = None,
    max_steps: int = _tau2.DEFAULT_MAX_STEPS,
    max_errors: int = _tau2.DEFAULT_MAX_ERRORS,
) -> Tau2Run:
    """Run τ² task ``task`` (a :class:`~.tasks.Tau2Task`) once on a fresh database; score it.

    ``model`` is the agent's chat model, ``user_model`` the user simulator's (not used in solo
    mode), ``middleware`` the agent's own (the bank's, say), after τ²'s side of the
    conversation. A run that hits the recursion limit ends on τ²'s ``max_steps``; one whose
    prompt no longer fits a local model's context is an agent error (reward 0).
    """
    started = time.perf_counter()
    start_time = datetime.now().isoformat()
    env: Tau2Env = task.make_env(user_model, max_steps=max_steps, max_errors=max_errors)
    state = None
    error = None
    try:
        opening = env.start()
        if opening is not None and not env.done:
            agent = create_agent(model, env.tools(), system_prompt=env.system_prompt,
                                 middleware=[*env.middleware(), *middleware])
            run_config: dict[str, Any] = {"recursion_limit": task.recursion_limit(max_steps), **(config or {})}
            run_config["metadata"] = {
                "task_id": task.id, "task_type": task.kind, "family": task.family,
                "template": task.template, "split": task.split, **run_config.get("metadata", {}),
            }
            try:
                state = agent.invoke({"messages": opening}, config=run_config)
            except GraphRecursionError:
                env.stop_unfinished(_tau2.TerminationReason.MAX_STEPS, "the graph's recursion limit")
    except ContextWindowExceededError as exc:
        error = f"{type(exc).__name__}: {exc}"
        env.stop_unfinished(_tau2.TerminationReason.AGENT_ERROR, "the prompt outgrew the model's context")
    env.stop_unfinished(note="the run ended without τ²'s ending")
    duration = time.perf_counter() - started
    simulation = _tau2.SimulationRun(
        id=str(uuid.uuid4()), task_id=task.tau2_id, start_time=start_time,
        end_time=datetime.now().isoformat(), duration=duration,
        termination_reason=env.termination, messages=env.messages())
    simulation.reward_info, nl = evaluate(simulation, task, judge_model=judge_model)
    return Tau2Run(task=task, env=env, state=state, simulation=simulation, nl_assertions=nl,
                   duration_s=time.perf_counter() - started, error=error)


# ---------------------------------------------------------------------------------- evaluation


def _nl_in_task(task: Any) -> bool:
    criteria = task.evaluation_criteria
    return bool(criteria is not None and criteria.nl_assertions)


def evaluate(simulation: Any, task: Any, *, judge_model: Any = None) -> tuple[Any, str]:
    """τ²'s ``evaluate_simulation`` on a simulation of ``task`` (a :class:`~.tasks.Tau2Task`);
    returns τ²'s ``RewardInfo`` and what became of the natural-language assertions."""
    tau2_task = task.task
    failed = None
    if judge_model is not None:
        try:
            with _tau2.nl_judge(_judge_generate(judge_model)):
                info = _tau2.evaluate_simulation(
                    simulation=simulation, task=tau2_task, solo_mode=task.solo, domain=task.domain,
                    evaluation_type=_tau2.EvaluationType.ALL_WITH_NL_ASSERTIONS)
            return info, NL_EVALUATED if _nl_in_task(tau2_task) else NL_NONE
        except (ValueError, KeyError, TypeError) as exc:  # the judge's reply is not τ²'s JSON
            failed = f"skipped: the judge's reply could not be read ({type(exc).__name__}: {exc})"
    nl = NL_SKIPPED if _nl_in_task(tau2_task) else NL_NONE
    criteria = tau2_task.evaluation_criteria
    if criteria is not None and _tau2.RewardType.NL_ASSERTION in criteria.reward_basis:
        # τ² raises on this (the assertions are in the basis but not evaluated): score the rest.
        basis = [b for b in criteria.reward_basis if b != _tau2.RewardType.NL_ASSERTION]
        tau2_task = tau2_task.model_copy(update={
            "evaluation_criteria": criteria.model_copy(update={"reward_basis": basis})})
        nl = NL_SKIPPED_IN_BASIS
    if failed is not None and nl != NL_NONE:
        nl = failed
    info = _tau2.evaluate_simulation(simulation=simulation, task=tau2_task,
                                     evaluation_type=_tau2.EvaluationType.ALL,
                                     solo_mode=task.solo, domain=task.domain)
    return info, nl


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _judge_generate(judge: Any) -> Any:
    """τ²'s ``generate`` for its NL-assertion judge, answered by a LangChain chat model."""

    def generate(model: Any = None, messages: Sequence[Any] = (), **kwargs: Any) -> Any:
        answer = judge.invoke(to_langchain(messages))
        text = reply_text(answer)
        fenced = _FENCE.match(text)  # τ² parses the reply as JSON: a fenced block is unwrapped
        return _tau2.AssistantMessage(role="assistant", content=fenced.group(1) if fenced else text)

    return generate
