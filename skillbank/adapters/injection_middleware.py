"""``SkillInjectionMiddleware``: the bank's skills in every model call of a ``create_agent`` agent.

One concern, what the agent is shown. Per model call it puts the turn's skills into the system
message: a block that stays the same through the run unless a new skill becomes relevant (so a
prompt cache keeps the whole prefix; see :class:`~skillbank.adapters.injection.SkillInjector`),
with the injection's record attached to that system message for whoever records the call
(:func:`~skillbank.adapters.injection.injections_from_messages`). With
``InjectionConfig.reminders`` it answers a tool call that breaks a lesson of the run's block with
the lesson instead of running it, and the answer says which skill gave it
(:func:`~skillbank.adapters.reminders.reminded_by`). It stores nothing; :attr:`injected` counts
how many model calls each skill went into (the evolution gate reads it).

With ``reminders`` it also checks a final reply against the block's lessons (a call described
instead of made; the block repeated) and asks once more (:mod:`~skillbank.adapters.answer_reminders`).

Like the rest of skillbank's middleware it costs the agent no step: it works only inside
``wrap_model_call`` and ``wrap_tool_call`` (and their async twins).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from langchain.agents.middleware import (AgentMiddleware, ExtendedModelResponse, ModelCallResult, ModelRequest,
                                         ModelResponse, ToolCallRequest)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Command

from skillbank.adapters.agent_runs import AgentRuns
from skillbank.adapters.answer_reminders import ANSWER_REMINDER_METADATA_KEY, AnswerReminder, answer_reminder
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import Block, InjectionResult, SkillInjector, skills_system_message
from skillbank.adapters.tools import tool_names
from skillbank.messages import first_human_text, response_message, state_messages
from skillbank.protocols import SkillSource

__all__ = ["SkillInjectionMiddleware"]

log = logging.getLogger("skillbank.adapters")


@dataclass
class _RunSkills:
    """What one run has been shown: its skills block (and the reminders kept on it)."""

    task: str  # what the run is about: its newest human message when it started
    block: Block = field(default_factory=Block)
    answer_reminded: bool = False  # a reply was asked again (answer_reminders.py): once per run

    @classmethod
    def start(cls, state: Mapping[str, Any]) -> "_RunSkills":
        return cls(first_human_text(state_messages(state), last=True))


class SkillInjectionMiddleware(AgentMiddleware):
    """Injects skills into each model call (and, with ``reminders=True``, reminds at the tool).

    ``SkillInjectionMiddleware(bank, k=3)``: keyword options are the fields of
    :class:`~skillbank.adapters.config.InjectionConfig` (``injection=`` takes a whole one).
    ``bank`` is anything a :class:`~skillbank.protocols.SkillSource` (a ``SkillBank``, the gate's
    ``CandidateView``). One instance serves many runs at once. A retrieval that fails is logged
    and that turn runs without skills.
    """

    def __init__(self, bank: SkillSource, injection: InjectionConfig | None = None, **options: Any):
        super().__init__()
        self.injector = SkillInjector(bank, injection, **options)
        self.config: InjectionConfig = self.injector.config
        self.runs: AgentRuns[_RunSkills] = AgentRuns(_RunSkills.start)
        self.injected: Counter[str] = Counter()  # skill id -> model calls it went into
        self.model_calls = 0  # every model call it wrapped, with skills or without
        self.retrieval_seconds = 0.0  # all retrieval so far (embedding, search, rendering)
        self._lock = threading.Lock()

    # -- model calls ---------------------------------------------------------------------------

    def _retrieve(self, request: ModelRequest, run: _RunSkills | None) -> InjectionResult | None:
        """The turn's skills (``None`` when retrieval failed: the agent must not go down with it)."""
        if run is not None and self.config.reminders:
            run.block.reminders.know_tools(request.tools)
        task = run.task if run is not None else first_human_text(request.messages, last=True)
        try:
            return self.injector.inject(request.messages, task=task, block=run.block if run is not None else None,
                                        tools=tool_names(request.tools))
        except Exception:
            log.warning("skillbank: skill retrieval failed; this turn runs without skills", exc_info=True)
            return None

    def _with_skills(self, request: ModelRequest, result: InjectionResult | None) -> ModelRequest:
        with self._lock:
            self.model_calls += 1
        if result is None:
            return request
        with self._lock:
            self.retrieval_seconds += result.seconds
            self.injected.update([h.skill.id for h in result.hits])
        if not result:
            return request
        return request.override(system_message=skills_system_message(request.system_message, result))

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        run = self.runs.current(request.state)
        request = self._with_skills(request, self._retrieve(request, run))
        with self.runs.calling:
            response: Any = handler(request)
            again = self._answer_reminder(run, request, response)
            if again is None:
                return response
            return _asked_again(handler(_with_note(request, response, again)), response, again)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        run = self.runs.current(request.state)
        # Embedding the query is CPU work: keep it off the event loop.
        request = self._with_skills(request, await asyncio.to_thread(self._retrieve, request, run))
        with self.runs.calling:
            response = await handler(request)
            again = self._answer_reminder(run, request, response)
            if again is None:
                return response
            return _asked_again(await handler(_with_note(request, response, again)), response, again)

    # -- final replies: reminders at the answer (InjectionConfig.reminders; answer_reminders.py)

    def _answer_reminder(self, run: _RunSkills | None, request: ModelRequest,
                         response: Any) -> AnswerReminder | None:
        reply = response_message(response)
        if run is None or not self.config.reminders or run.answer_reminded or reply is None:
            return None
        found = answer_reminder(reply, request.messages, run.block.hits, tool_names(request.tools))
        if found is not None:
            run.answer_reminded = True
        return found

    # -- tool calls: reminders (InjectionConfig.reminders; see reminders.py) -------------------

    def _reminder(self, request: ToolCallRequest) -> tuple[_RunSkills | None, ToolMessage | None]:
        """The run (when it keeps reminders) and the lesson's answer, when the call breaks one."""
        run = self.runs.current(request.state) if self.config.reminders else None
        if run is None:
            return None, None
        found = run.block.reminders.intercept(run.block.hits, request)
        return run, found[1] if found is not None else None

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        run, answer = self._reminder(request)
        if answer is not None:
            return answer
        with self.runs.calling:
            try:
                return handler(request)
            finally:  # the run's reminders learn the call ran, whatever its outcome
                if run is not None:
                    run.block.reminders.ran(request)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        run, answer = self._reminder(request)
        if answer is not None:
            return answer
        with self.runs.calling:
            try:
                return await handler(request)
            finally:  # the run's reminders learn the call ran, whatever its outcome
                if run is not None:
                    run.block.reminders.ran(request)


def _with_note(request: ModelRequest, response: Any, reminder: AnswerReminder) -> ModelRequest:
    """The same call again, with the draft reply and the note after it."""
    return request.override(messages=[*request.messages, response_message(response),
                                      HumanMessage(content=reminder.note)])


def _asked_again(response: Any, first: Any, reminder: AnswerReminder) -> Any:
    """``response`` with the record of why it was asked for (the draft it replaces), and the
    state update an inner middleware attached to the first answer (the trajectory id)."""
    reply = response_message(response)
    if reply is not None:
        draft = str(getattr(response_message(first), "text", "") or "")
        reply.response_metadata = {**(reply.response_metadata or {}),
                                   ANSWER_REMINDER_METADATA_KEY: reminder.as_metadata(draft)}
    command = getattr(first, "command", None)
    if command is None or getattr(response, "command", None) is not None:
        return response
    inner = getattr(response, "model_response", response)
    if isinstance(inner, AIMessage):
        inner = ModelResponse(result=[inner])
    return ExtendedModelResponse(model_response=inner, command=command)
