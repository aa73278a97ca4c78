"""``SkillBankMiddleware``: skills in, trajectories out, for ``langchain.agents.create_agent``.

    agent = create_agent(model, tools, system_prompt="...",
                         middleware=[SkillBankMiddleware(bank, k=5, verifier=my_check)])
    result = agent.invoke({"messages": [("user", "turn on the AC")]})
    bank.trajectories.get(result["skillbank_trajectory_id"])

It is three middlewares of one concern each, composed into one:

- :class:`~skillbank.adapters.budget_middleware.RunBudgetMiddleware` (when a token or time
  budget is set) ends a run that has used its budget, with a final message saying so;
- :class:`~skillbank.adapters.injection_middleware.SkillInjectionMiddleware` (unless
  ``inject=False``) puts the skills into each model call, and reminds at the tool;
- :class:`~skillbank.adapters.recording_middleware.SkillRecordingMiddleware` records the run.

They share no state: each keeps what it needs per run
(:class:`~skillbank.adapters.agent_runs.AgentRuns`), and what one must tell another travels in
the call's own messages. The injection's record rides on the system message it builds, which the
recording reads as the model gets it, so on a model call the injection runs first; the skill a
reminder came from rides on the ``ToolMessage`` the injection answers a tool call with, which the
recording sees come back, so on a tool call the recording runs first; a budget's stop is a final
message carrying its limit, which the recording reads from the run's messages (as it reads a
LangChain limit middleware's), and the budget runs before both, so a stopped call neither
retrieves nor counts as a model call. A middleware list has one order for both hooks; this
composite gives each hook its own, which is why the three come as one.

None of them costs the agent a step: ``create_agent`` turns ``before_*`` / ``after_*`` hooks into
graph nodes, each node run a superstep counted against ``recursion_limit``, and they have none.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import Any, Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelCallResult, ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from skillbank.adapters.budget_middleware import RunBudgetMiddleware
from skillbank.adapters.config import InjectionConfig, RecordingConfig, split_options
from skillbank.adapters.injection import SkillInjector
from skillbank.adapters.injection_middleware import SkillInjectionMiddleware
from skillbank.adapters.limits import Detectors
from skillbank.adapters.recorder import TrajectoryRecorder
from skillbank.adapters.recording_middleware import TRAJECTORY_KEY, SkillBankState, SkillRecordingMiddleware
from skillbank.protocols import AgentBank

__all__ = ["SkillBankMiddleware", "SkillBankState", "TRAJECTORY_KEY", "RunBudgetMiddleware",
           "SkillInjectionMiddleware", "SkillRecordingMiddleware"]


class SkillBankMiddleware(AgentMiddleware[SkillBankState]):
    """Injects skills per model turn and records the run as a trajectory.

    ``SkillBankMiddleware(bank, k=5, verifier=check)``: keyword options are the fields of
    :class:`~skillbank.adapters.config.InjectionConfig` (what is injected) and
    :class:`~skillbank.adapters.config.RecordingConfig` (how the run is recorded and
    labelled); ``injection=`` / ``recording=`` take whole configs. ``inject=False`` only records.
    The parts are :attr:`budget_middleware` (``None`` without a budget),
    :attr:`injection_middleware` and :attr:`recording_middleware`.
    """

    state_schema = SkillBankState

    def __init__(self, bank: AgentBank, *, injection: InjectionConfig | None = None,
                 recording: RecordingConfig | None = None, inject: bool = True, **options: Any):
        super().__init__()
        self.bank = bank
        self.inject = inject
        self.injection, self.recording = split_options(options, injection=injection, recording=recording,
                                                       owner="SkillBankMiddleware")
        cfg = self.recording
        budgeted = cfg.max_tokens_per_run is not None or cfg.max_seconds_per_run is not None
        self.budget_middleware = RunBudgetMiddleware(
            max_tokens_per_run=cfg.max_tokens_per_run, max_seconds_per_run=cfg.max_seconds_per_run,
            clock=cfg.clock) if budgeted else None
        self.injection_middleware = SkillInjectionMiddleware(bank, self.injection)
        self.recording_middleware = SkillRecordingMiddleware(bank, self.recording)
        # Each hook's layers, outermost first (see the module docstring for why in this order).
        budget = [self.budget_middleware] if self.budget_middleware is not None else []
        injecting = [self.injection_middleware] if inject else []
        reminding = injecting if self.injection.reminders else []  # else its tool hook only passes through
        model_layers: list[Any] = [*budget, *injecting, self.recording_middleware]
        tool_layers: list[Any] = [self.recording_middleware, *reminding]
        self._model_calls = [m.wrap_model_call for m in model_layers]
        self._amodel_calls = [m.awrap_model_call for m in model_layers]
        self._tool_calls = [m.wrap_tool_call for m in tool_layers]
        self._atool_calls = [m.awrap_tool_call for m in tool_layers]

    # -- the parts' state, where callers have always read it --------------------------------------

    @property
    def injector(self) -> SkillInjector:
        return self.injection_middleware.injector

    @injector.setter
    def injector(self, injector: SkillInjector) -> None:
        self.injection_middleware.injector = injector

    @property
    def retrieval_seconds(self) -> float:
        """Seconds spent in retrieval so far (embedding, search, rendering), for overhead reports."""
        return self.injection_middleware.retrieval_seconds

    @retrieval_seconds.setter
    def retrieval_seconds(self, seconds: float) -> None:
        self.injection_middleware.retrieval_seconds = seconds

    @property
    def detectors(self) -> Detectors:
        return self.recording_middleware.detectors

    @property
    def last_trajectory_id(self) -> str | None:
        return self.recording_middleware.last_trajectory_id

    @property
    def trajectory_ids(self) -> deque[str]:
        """The runs this middleware started, oldest first (the latest 10,000)."""
        return self.recording_middleware.trajectory_ids

    @property
    def logging_seconds(self) -> float:
        """Seconds spent writing trajectories so far (all runs of this middleware)."""
        return self.recording_middleware.logging_seconds

    def recorder(self, trajectory_id: str) -> TrajectoryRecorder | None:
        """The live recorder of a running trajectory (``None`` once it has finished)."""
        return self.recording_middleware.recorder(trajectory_id)

    # -- hooks: the parts' own, each wrapping the next -------------------------------------------

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        return _through(self._model_calls, handler)(request)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        return await _through(self._amodel_calls, handler)(request)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        return _through(self._tool_calls, handler)(request)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        return await _through(self._atool_calls, handler)(request)


def _through(layers: list[Callable[..., Any]], handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``handler`` wrapped by each of ``layers`` (``layer(request, handler)``), the first outermost:
    the order ``create_agent`` composes a middleware list in. A layer's result reaches the one
    around it as it is (only the recording answers with an ``ExtendedModelResponse``, and it is
    innermost), so the composite answers what its innermost part did."""
    for layer in reversed(layers):
        handler = partial(layer, handler=handler)
    return handler
