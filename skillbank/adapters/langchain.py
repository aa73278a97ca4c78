"""``SkillBankMiddleware``: skills in, trajectories out, for ``langchain.agents.create_agent``.

    agent = create_agent(model, tools, system_prompt="...",
                         middleware=[SkillBankMiddleware(bank, k=5, verifier=my_check)])
    result = agent.invoke({"messages": [("user", "turn on the AC")]})
    bank.trajectories.get(result["skillbank_trajectory_id"])

It is four middlewares of one concern each, composed into one:

- :class:`~skillbank.adapters.budget_middleware.RunBudgetMiddleware` (when a
  :class:`~skillbank.adapters.config.BudgetConfig` budget is set) ends a run that has used its
  budget, with a final message saying so;
- :class:`~skillbank.adapters.prompt_middleware.SkillPromptMiddleware` (unless ``inject=False``)
  puts the skills into each model call;
- :class:`~skillbank.adapters.guidance_middleware.SkillGuidanceMiddleware` (unless
  ``inject=False`` or ``reminders=False``) holds the run to them at the tool and at the answer;
- :class:`~skillbank.adapters.recording_middleware.SkillRecordingMiddleware` records the run.

They keep what they need per run in the run's
:class:`~skillbank.adapters.run_context.RunContext` and tell each other what a call needs
through its :class:`~skillbank.adapters.run_context.CallContext` (the skills injected, the
budget's stop, who records it), found once per call by the outermost part. So they work in any
order, here or in a plain ``create_agent(middleware=[...])`` list
(``tests/unit/test_adapters_middleware_order.py`` stores the same run in every order). This composite
is the short form, and picks the cheapest order: the budget outermost (a stopped call goes no
further), the recording around the injection on a tool call (it sees a reminder come back) and
inside it on a model call (it sees the skills go in).

To add a concern: a part of its own (an ``AgentMiddleware`` that works inside
``wrap_model_call`` / ``wrap_tool_call``), a field for its per-run value on ``RunContext``, and
on ``CallContext`` whatever the other parts must know of a call; then its place here.

None of them costs the agent a step: ``create_agent`` turns ``before_*`` / ``after_*`` hooks into
graph nodes, each node run a superstep counted against ``recursion_limit``, and they have none.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelCallResult, ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from skillbank.adapters.budget_middleware import RunBudgetMiddleware
from skillbank.adapters.config import BudgetConfig, InjectionConfig, RecordingConfig, split_budget, split_options
from skillbank.adapters._compose import through
from skillbank.adapters.guidance_middleware import SkillGuidanceMiddleware
from skillbank.adapters.prompt_middleware import SkillPromptMiddleware
from skillbank.adapters.recording_middleware import TRAJECTORY_KEY, SkillBankState, SkillRecordingMiddleware
from skillbank.protocols import AgentBank

__all__ = ["SkillBankMiddleware", "SkillBankState", "TRAJECTORY_KEY"]


class SkillBankMiddleware(AgentMiddleware[SkillBankState]):
    """Injects skills per model turn and records the run as a trajectory.

    ``SkillBankMiddleware(bank, k=5, verifier=check, max_tokens_per_run=20_000)``: keyword options
    are the fields of :class:`~skillbank.adapters.config.InjectionConfig` (what is injected),
    :class:`~skillbank.adapters.config.RecordingConfig` (how the run is recorded and labelled)
    and :class:`~skillbank.adapters.config.BudgetConfig` (when a run has had enough);
    ``injection=`` / ``recording=`` / ``budget=`` take whole configs. ``inject=False`` only
    records. The parts are :attr:`budget_middleware` (``None`` without a budget),
    :attr:`prompt_middleware`, :attr:`guidance_middleware` and :attr:`recording_middleware`: what
    they count (the recording's ``last_trajectory_id``, the prompt's ``retrieval_seconds``, ...)
    is read there.
    """

    state_schema = SkillBankState

    def __init__(self, bank: AgentBank, *, injection: InjectionConfig | None = None,
                 recording: RecordingConfig | None = None, budget: BudgetConfig | None = None,
                 inject: bool = True, **options: Any):
        super().__init__()
        self.bank = bank
        self.inject = inject
        budget_given = budget is not None
        budget, options = split_budget(options, budget)
        self.injection, self.recording = split_options(options, injection=injection, recording=recording,
                                                       owner="SkillBankMiddleware")
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
        return through(self._model_calls, handler)(request)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        return await through(self._amodel_calls, handler)(request)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        return through(self._tool_calls, handler)(request)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        return await through(self._atool_calls, handler)(request)
