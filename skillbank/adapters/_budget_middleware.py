"""``RunBudgetMiddleware``: a token and a wall-clock budget per agent run.

One concern, when a run has had enough. Before each model call it compares what the run has
used so far (the input and output tokens its model calls reported; the seconds since its first
call) with its budgets, and when one is exceeded it answers that call itself, with a final
message saying so, instead of calling the model: the run ends there, gracefully. The message
carries the limit (:func:`~skillbank.adapters.limits.budget_stop_message`), so whoever records
the run records a ``token_budget`` / ``time_budget`` limit event and labels the run a failure at
that limit, as it does for LangChain's own limit middlewares.

It costs the agent no step: it works only inside ``wrap_model_call`` (and its async twin). A run
paused by an interrupt keeps what it has used when it resumes in this process. What a run has
used lives in the run's :class:`~skillbank.adapters._run_context.RunContext`; the stop is the
call's (:meth:`~skillbank.adapters._run_context.CallContext.stop`), so the recording, wherever it
sits in the middleware list, does not record a call it stops; the prompt part, when it sits
outside this one, sees the stop come back and drops what it had retrieved for the call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelCallResult, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage

from skillbank.adapters.config import BudgetConfig
from skillbank._config_keywords import with_options
from skillbank.adapters.limits import LimitSignal, budget_stop_message
from skillbank.adapters._run_context import CallContext, agent_runs, enter_call, leave_call
from skillbank.messages import response_message
from skillbank.models import LimitType

__all__ = ["RunBudgetMiddleware", "Spent"]


@dataclass
class Spent:
    """What one run has used so far."""

    started: float  # the clock when its first model call began
    tokens: int = 0  # input + output tokens its model calls reported

    def add(self, response: ModelCallResult) -> None:
        usage = getattr(response_message(response), "usage_metadata", None) or {}
        self.tokens += int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)


class RunBudgetMiddleware(AgentMiddleware):
    """Ends a run before the model call that would exceed its :class:`BudgetConfig`
    (``RunBudgetMiddleware(max_tokens_per_run=20_000)`` or ``RunBudgetMiddleware(BudgetConfig(...))``).

    Args:
        budget: A whole :class:`~skillbank.adapters.config.BudgetConfig` (then the keywords
            below are set on it, not here; so is its ``clock``).
        max_tokens_per_run: End a run whose model calls used more tokens than this.
        max_seconds_per_run: End a run that has taken longer than this since its first call.

    Raises:
        TypeError: an unknown keyword, or a budget given both as a keyword and in ``budget``.
    """

    def __init__(self, budget: BudgetConfig | None = None, *, max_tokens_per_run: int | None = None,
                 max_seconds_per_run: float | None = None):
        super().__init__()
        self.budget = with_options(budget, BudgetConfig, owner="RunBudgetMiddleware", argument="budget",
                                   options={"max_tokens_per_run": max_tokens_per_run,
                                            "max_seconds_per_run": max_seconds_per_run})
        self.max_tokens_per_run = self.budget.max_tokens_per_run
        self.max_seconds_per_run = self.budget.max_seconds_per_run
        self.clock = self.budget.clock
        self._runs = agent_runs()

    def _spent(self, call: CallContext) -> Spent | None:
        """What the call's run has used (``None`` when the run cannot be seen)."""
        run = call.run
        if run is None:
            return None
        spent = run.spent.get(self)
        if spent is None:
            with run.lock:
                spent = run.spent.setdefault(self, Spent(self.clock()))
        return spent

    def stop(self, spent: Spent) -> AIMessage | None:
        """The final answer that ends a run which has used ``spent``, if a budget is exceeded."""
        if self.max_tokens_per_run is not None and spent.tokens > self.max_tokens_per_run:
            used, budget = spent.tokens, self.max_tokens_per_run
            signal = LimitSignal(LimitType.token_budget, f"token budget exceeded: {used} tokens used, budget {budget}",
                                 data={"used": used, "budget": budget})
            text = f"Stopped before finishing: this run used {used} tokens, over its budget of {budget} tokens."
            return budget_stop_message(signal, text)
        if self.max_seconds_per_run is None:
            return None
        elapsed = self.clock() - spent.started
        if elapsed <= self.max_seconds_per_run:
            return None
        used_s, budget_s = round(elapsed, 3), self.max_seconds_per_run
        signal = LimitSignal(LimitType.time_budget, f"time budget exceeded: {used_s}s elapsed, budget {budget_s}s",
                             data={"used_seconds": used_s, "budget_seconds": budget_s})
        text = f"Stopped before finishing: this run took {used_s} seconds, over its time budget of {budget_s} seconds."
        return budget_stop_message(signal, text)

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        call, token = enter_call(request.state)
        try:
            spent = self._spent(call)
            if spent is None:
                return handler(request)
            if (stop := call.stop()) is not None:
                return stop
            with self._runs.calling:
                response = handler(request)
            spent.add(response)
            return response
        finally:
            leave_call(token)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        call, token = enter_call(request.state)
        try:
            spent = self._spent(call)
            if spent is None:
                return await handler(request)
            if (stop := call.stop()) is not None:
                return stop
            with self._runs.calling:
                response = await handler(request)
            spent.add(response)
            return response
        finally:
            leave_call(token)
