"""One agent run as the parts that keep something per run in this process see it.

The budget (:class:`~skillbank.adapters._budget_middleware.RunBudgetMiddleware`), guidance at
the tool (:class:`~skillbank.adapters._guidance_middleware.SkillGuidanceMiddleware`) and the
recording (:class:`~skillbank.adapters._recording_middleware.SkillRecordingMiddleware`) keep
what they need per run in one :class:`RunContext` per run, one field per concern (what the run
has spent, its recording), and tell each other what a call needs through the
:class:`CallContext` of that call. That is what lets them sit in any order in a plain
``create_agent(middleware=[...])`` list and store the same run:

- a model call a budget stops is stopped for every one of them (:meth:`CallContext.stop`), so
  none records it, whichever of them runs first;
- a tool call guidance answers with a reminder is recorded by every recording part that did
  not see it go by (:meth:`CallContext.answered_without_running`).

The recording's run must live here, not in the agent's state: only the process-wide watcher sees
a graph run end in an error, and the recording labels that run. The prompt part keeps what a run
was shown in the agent's state instead
(:class:`~skillbank.adapters._prompt_middleware.SkillPromptState`) and hands a call's injection
on the call's request (:class:`~skillbank.adapters.injection.ShownCall`); it learns that a budget
answered a call from the message the call returns.

Finding the run costs a look-up through the process-wide watcher; the first part a call reaches
does it and the others reuse it (:func:`enter_call`), so a call pays it once however many parts
the agent has. The registry is one :class:`~skillbank.adapters._agent_runs.AgentRuns` for the
process: a run's context lives from its first wrapped call to the end of its graph run (or its
resume, when it pauses).
"""

from __future__ import annotations

import threading
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Hashable, Mapping, Protocol

from skillbank.adapters._agent_runs import AgentRuns

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, ToolMessage


# What a run's context needs of the parts, as protocols: the parts import this module, so it
# names none of them (they would import each other).
class BudgetPart(Hashable, Protocol):
    def stop(self, spent: Any) -> "AIMessage | None":
        """The final answer that ends a run which has used ``spent``, if a budget is exceeded."""


class RecordingPart(Hashable, Protocol):
    def attached(self, run: Any) -> None: ...

    def ended(self, run: Any, outputs: Any) -> None: ...

    def failed(self, run: Any, error: BaseException) -> None: ...

    def paused(self, run: Any, kept: bool) -> None: ...

    def record_answer(self, run: Any, request: Any, answer: "ToolMessage") -> None:
        """Record a tool call another part answered without running it."""

__all__ = ["RunContext", "CallContext", "enter_call", "leave_call", "agent_runs"]


@dataclass(eq=False)
class RunContext:
    """What the parts keep for one agent run, one field per concern, each keyed by the part that
    keeps it (an agent may have two recordings, on two banks)."""

    spent: dict[BudgetPart, Any] = field(default_factory=dict)  # a budget part -> its Spent
    records: dict[RecordingPart, Any] = field(default_factory=dict)  # a recording part -> its RecordedRun
    # Two parallel tool calls may join a part to the run at once: one of them makes its value.
    lock: threading.Lock = field(default_factory=threading.Lock)

    # -- the run's life: what AgentRuns reports, handed to the parts that keep a record ----------

    def attached(self) -> None:
        for part, run in list(self.records.items()):
            part.attached(run)

    def ended(self, outputs: Any) -> None:
        for part, run in list(self.records.items()):
            part.ended(run, outputs)

    def failed(self, error: BaseException) -> None:
        for part, run in list(self.records.items()):
            part.failed(run, error)

    def paused(self, kept: bool) -> None:
        for part, run in list(self.records.items()):
            part.paused(run, kept)


class CallContext:
    """One model or tool call of a run, shared by the parts that keep something per run (the
    budget, guidance at the tool, the recording).

    ``run`` is ``None`` when the run cannot be seen (outside ``create_agent``'s nodes, or without
    LangChain callbacks): each part then does what it can without one."""

    __slots__ = ("run", "state", "recording", "_stop", "_stop_known")

    def __init__(self, run: RunContext | None, state: Any):
        self.run = run
        self.state = state  # the request's state: tells this call from a nested agent's
        self.recording: list[RecordingPart] = []  # recording parts around this call
        self._stop: AIMessage | None = None
        self._stop_known = False

    def stop(self) -> "AIMessage | None":
        """The budget's final answer when a budget of this run stops this model call (decided
        once per call, so every part sees the same answer)."""
        if not self._stop_known:
            self._stop_known = True
            if self.run is not None:
                for part, spent in list(self.run.spent.items()):
                    if (message := part.stop(spent)) is not None:
                        self._stop = message
                        break
        return self._stop

    def answered_without_running(self, request: Any, answer: "ToolMessage") -> None:
        """A part answered this tool call itself (a reminder): the recording parts of the run
        that are not around the call (they would see the answer come back) record it here."""
        if self.run is None:
            return
        for part, run in list(self.run.records.items()):
            if part not in self.recording:
                part.record_answer(run, request, answer)


_CALL: ContextVar[CallContext | None] = ContextVar("skillbank_call", default=None)
_RUNS: AgentRuns[RunContext] | None = None
_RUNS_LOCK = threading.Lock()


def agent_runs() -> AgentRuns[RunContext]:
    """The process's runs, each with its context (made on first use: it registers the watcher)."""
    global _RUNS
    if _RUNS is None:
        with _RUNS_LOCK:
            if _RUNS is None:
                _RUNS = AgentRuns(_new_context, attached=RunContext.attached, ended=RunContext.ended,
                                  failed=RunContext.failed, paused=RunContext.paused)
    return _RUNS


def _new_context(state: Mapping[str, Any]) -> RunContext:
    return RunContext()


def enter_call(state: Any) -> tuple[CallContext, Token[CallContext | None] | None]:
    """The context of the call a part's wrapper is in, and the token to hand :func:`leave_call`
    (``None`` when an outer part already entered this call: only the outermost looks it up).

    The state tells a call from one of a nested agent (an agent run as a tool): its wrappers
    run inside the outer call's, with a state of their own."""
    call = _CALL.get()
    if call is not None and _same_call(call.state, state):
        return call, None
    call = CallContext(agent_runs().current(state), state)
    return call, _CALL.set(call)


def _same_call(a: Any, b: Any) -> bool:
    """Whether two requests' states are one call's: the same state, or one a part handed on with
    a key of its own added (the same messages)."""
    if a is b:
        return True
    messages = a.get("messages") if isinstance(a, Mapping) else None
    return messages is not None and isinstance(b, Mapping) and b.get("messages") is messages


def leave_call(token: Token[CallContext | None] | None) -> None:
    if token is not None:
        _CALL.reset(token)
