"""``SkillBankMiddleware``: skills in, trajectories out, for ``langchain.agents.create_agent``.

    agent = create_agent(model, tools, system_prompt="...",
                         middleware=[SkillBankMiddleware(bank, k=5, verifier=my_check)])
    result = agent.invoke({"messages": [("user", "turn on the AC")]})
    bank.trajectories.get(result["skillbank_trajectory_id"])

It is four middlewares of one concern each, composed into one:

- :class:`~skillbank.adapters._budget_middleware.RunBudgetMiddleware` (when a
  :class:`~skillbank.adapters.config.BudgetConfig` budget is set) ends a run that has used its
  budget, with a final message saying so;
- :class:`~skillbank.adapters._prompt_middleware.SkillPromptMiddleware` (unless ``inject=False``)
  puts the skills into each model call;
- :class:`~skillbank.adapters._guidance_middleware.SkillGuidanceMiddleware` (unless
  ``inject=False`` or ``reminders=False``) holds the run to them at the tool and at the answer;
- :class:`~skillbank.adapters._recording_middleware.SkillRecordingMiddleware` records the run.

The prompt part keeps what a run was shown in the agent's state (a private channel, so a
checkpointer keeps it) and hands a call's injection to the recording on the call's request
(:class:`~skillbank.adapters.injection.ShownCall`); the budget, guidance at the tool and the
recording keep what they need per run in the run's
:class:`~skillbank.adapters._run_context.RunContext` and tell each other what a call needs
through its :class:`~skillbank.adapters._run_context.CallContext` (the budget's stop, who
records it). So they work in any order, here or in a plain ``create_agent(middleware=[...])``
list (``tests/unit/adapters/test_adapters_middleware_order.py`` stores the same run in every
order). This composite is the short form, and picks the cheapest order: the budget outermost (a
stopped call goes no further), the recording around the injection on a tool call (it sees a
reminder come back) and inside it on a model call (it sees the skills go in). It composes them
as ``create_agent`` would (:func:`~skillbank.adapters._compose.through`).

To add a concern: a part of its own (an ``AgentMiddleware`` that works inside
``wrap_model_call`` / ``wrap_tool_call``), its per-run value in a private state channel of its
``state_schema`` (or, when it must see a graph run end, on ``RunContext``), what the other parts
must know of a call on the call's request; then its place here.

None of them costs the agent a step: ``create_agent`` turns ``before_*`` / ``after_*`` hooks into
graph nodes, each node run a superstep counted against ``recursion_limit``, and they have none.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelCallResult, ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from skillbank.adapters._budget_middleware import RunBudgetMiddleware
from skillbank.adapters.config import BudgetConfig, InjectionConfig, RecordingConfig
from skillbank._config_keywords import with_options
from skillbank.adapters._compose import athrough, through
from skillbank.adapters._guidance_middleware import SkillGuidanceMiddleware
from skillbank.adapters._prompt_middleware import SkillPromptMiddleware
from skillbank.adapters._prompt_middleware import SkillPromptState
from skillbank.adapters._recording_middleware import TRAJECTORY_KEY, SkillRecordingMiddleware, SkillRecordingState
from skillbank.live._config import LiveConfig
from skillbank.protocols import AgentBank

__all__ = ["SkillBankMiddleware", "SkillBankState", "TRAJECTORY_KEY"]


class SkillBankState(SkillRecordingState, SkillPromptState):
    """The agent state with the run's trajectory id (in ``invoke``'s result) and, private, what
    the run was shown."""


class SkillBankMiddleware(AgentMiddleware[SkillBankState]):
    """Injects skills per model turn and records the run as a trajectory.

    ``SkillBankMiddleware(bank, k=5, verifier=check, max_tokens_per_run=20_000)``. The options
    users set most are keywords; every other option is a field of the whole config passed as
    ``injection=`` (:class:`~skillbank.adapters.config.InjectionConfig`, what is injected),
    ``recording=`` (:class:`~skillbank.adapters.config.RecordingConfig`, how the run is recorded
    and labelled) or ``budget=`` (:class:`~skillbank.adapters.config.BudgetConfig`, when a run
    has had enough). A keyword left ``None`` keeps its config's default.

    Args:
        bank: The bank skills come from and runs are recorded into.
        injection: A whole ``InjectionConfig`` (then ``k``, ``reminders``, ``lean``,
            ``examples``, ``live`` and ``today`` are set on it, not here).
        recording: A whole ``RecordingConfig`` (then ``verifier``, ``judge`` and ``today`` are
            set on it, not here).
        budget: A whole ``BudgetConfig`` (then the two budgets are set on it, not here).
            Without one, the budget measures time with the recording's ``clock``.
        inject: ``False`` only records (no skills are injected).
        k: Retrieved skills per model call at most (``InjectionConfig.k``, default 5).
        reminders: Remind at the tool and at the answer (``InjectionConfig.reminders``, on).
        lean: The block for a small model (``InjectionConfig.lean``, off).
        examples: Show a lesson's closest worked example (``InjectionConfig.examples``, off).
        live: Randomized exposure for the live monitor (``InjectionConfig.live``).
        today: The date the agent takes as today (a ``date`` or ISO text), for both the
            injection's checks and the recording (``None``: the machine's date).
        verifier: ``verifier(final_state)`` labels each run (``RecordingConfig.verifier``).
        judge: An :class:`~skillbank.adapters.judge.LLMJudge` that labels each run instead.
        max_tokens_per_run: End a run whose model calls used more tokens than this.
        max_seconds_per_run: End a run that has taken longer than this since its first call.

    Raises:
        TypeError: an unknown keyword, or an option given both as a keyword and in a config.
        ValueError: a config's own check failed (``verifier`` and ``judge`` both, say).

    The parts are :attr:`budget_middleware` (``None`` without a budget),
    :attr:`prompt_middleware`, :attr:`guidance_middleware` and :attr:`recording_middleware`: what
    they count (the recording's ``last_trajectory_id``, the prompt's ``retrieval_seconds``, ...)
    is read there.
    """

    state_schema = SkillBankState

    def __init__(self, bank: AgentBank, *, injection: InjectionConfig | None = None,
                 recording: RecordingConfig | None = None, budget: BudgetConfig | None = None,
                 inject: bool = True, k: int | None = None, reminders: bool | None = None,
                 lean: bool | None = None, examples: bool | None = None, live: LiveConfig | None = None,
                 today: dt.date | str | None = None, verifier: Callable[[Any], Any] | None = None,
                 judge: Any = None, max_tokens_per_run: int | None = None,
                 max_seconds_per_run: float | None = None):
        super().__init__()
        self.bank = bank
        self.inject = inject
        owner = "SkillBankMiddleware"
        self.injection = with_options(injection, InjectionConfig, owner=owner, argument="injection", options={
            "k": k, "reminders": reminders, "lean": lean, "examples": examples, "live": live, "today": today})
        self.recording = with_options(recording, RecordingConfig, owner=owner, argument="recording", options={
            "verifier": verifier, "judge": judge, "today": today})
        budget_given = budget is not None
        budget = with_options(budget, BudgetConfig, owner=owner, argument="budget", options={
            "max_tokens_per_run": max_tokens_per_run, "max_seconds_per_run": max_seconds_per_run})
        if not budget_given:  # one clock for the run: the recording's (a test's fake one, say)
            budget = dataclasses.replace(budget, clock=self.recording.clock)
        self.budget = budget
        self.budget_middleware = RunBudgetMiddleware(budget) if budget.enabled else None
        self.prompt_middleware = SkillPromptMiddleware(bank, self.injection)
        self.guidance_middleware = SkillGuidanceMiddleware(self.prompt_middleware)
        self.recording_middleware = SkillRecordingMiddleware(bank, self.recording)
        # Each hook's layers, outermost first (see the module docstring for why in this order).
        budgeting = [self.budget_middleware] if self.budget_middleware is not None else []
        prompting = [self.prompt_middleware] if inject else []
        guiding = [self.guidance_middleware] if inject and self.injection.reminders else []
        model_layers: list[Any] = [*budgeting, *prompting, *guiding, self.recording_middleware]
        tool_layers: list[Any] = [self.recording_middleware, *guiding]
        self._model_calls = [m.wrap_model_call for m in model_layers]
        self._amodel_calls = [m.awrap_model_call for m in model_layers]
        self._tool_calls = [m.wrap_tool_call for m in tool_layers]
        self._atool_calls = [m.awrap_tool_call for m in tool_layers]

    # -- hooks: the parts' own, each wrapping the next -------------------------------------------

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        """LangChain's model-call hook: the call runs through the budget, prompt, guidance and
        recording parts (those switched on), outermost first, then ``handler``.

        Args:
            request: The model call ``create_agent`` is about to make.
            handler: Makes the call (the next middleware's hook or the model).

        Returns:
            The call's result as the parts leave it (a budget's final message instead, once
            the run has used its budget).
        """
        return through(self._model_calls, handler)(request)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        """:meth:`wrap_model_call` for an agent run asynchronously.

        Args:
            request: The model call ``create_agent`` is about to make.
            handler: Makes the call asynchronously.

        Returns:
            The call's result as the parts leave it.
        """
        return await athrough(self._amodel_calls, handler)(request)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        """LangChain's tool-call hook: the call runs through the recording part, then the
        guidance part (when skills are injected and reminders are on), then ``handler``.

        Args:
            request: The tool call ``create_agent`` is about to make.
            handler: Runs the tool (the next middleware's hook or the tool node).

        Returns:
            The tool's message or command, or the guidance part's reminder instead of running
            a call that breaks a lesson.
        """
        return through(self._tool_calls, handler)(request)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        """:meth:`wrap_tool_call` for an agent run asynchronously.

        Args:
            request: The tool call ``create_agent`` is about to make.
            handler: Runs the tool asynchronously.

        Returns:
            The tool's message or command, or the guidance part's reminder.
        """
        return await athrough(self._atool_calls, handler)(request)
