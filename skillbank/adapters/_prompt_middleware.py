"""``SkillPromptMiddleware``: the bank's skills in the system message of every model call.

One concern, what the agent is shown. Per model call it puts the turn's skills into the system
message: a block that stays the same through the run unless a new skill becomes relevant (so a
prompt cache keeps the whole prefix; see :class:`~skillbank.adapters.injection.SkillInjector`),
with the injection's record attached to that system message (for a recorder that reads messages,
:func:`~skillbank.adapters.injection.injections_from_messages`) and to the call's
:class:`~skillbank.adapters._run_context.CallContext` (for the recording part, wherever it sits).
A model call a run budget stops gets no skills. It stores nothing and never touches a tool call.

What a run was shown (:class:`RunSkills`) is kept on the run's context, for the guidance part
(:class:`~skillbank.adapters._guidance_middleware.SkillGuidanceMiddleware`) to check calls and
replies against. :attr:`SkillPromptMiddleware.injected` counts, per skill, the model calls it
went into and the answers guidance gave with it (its reach, as the evolution gate reads it).

It costs the agent no step: it works only inside ``wrap_model_call`` (and its async twin).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from langchain.agents.middleware import AgentMiddleware, ModelCallResult, ModelRequest, ModelResponse

from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import Block, InjectionResult, SkillInjector, skills_system_message
from skillbank.adapters._run_context import CallContext, agent_runs, enter_call, leave_call
from skillbank.adapters._tools import tool_names, tool_purposes
from skillbank.messages import first_human_text, state_messages
from skillbank.protocols import SkillSource

__all__ = ["SkillPromptMiddleware", "RunSkills"]

log = logging.getLogger("skillbank.adapters")


@dataclass
class RunSkills:
    """What one run has been shown: its skills block, and which of its skills reached the model."""

    task: str  # what the run is about: its newest human message when it started
    block: Block = field(default_factory=Block)
    answer_reminded: bool = False  # a reply was asked again (once per run)
    # Skills of the block the model was shown: in the prompt, or by a reminder at the tool.
    reached: set[str] = field(default_factory=set)

    @classmethod
    def start(cls, state: Mapping[str, Any]) -> "RunSkills":
        return cls(first_human_text(state_messages(state), last=True))


class SkillPromptMiddleware(AgentMiddleware):
    """Puts the bank's relevant skills into each model call's system message.

    Args:
        bank: Any :class:`~skillbank.protocols.SkillSource` (a ``SkillBank``, the gate's
            ``CandidateView``).
        config: What to inject (:class:`~skillbank.adapters.config.InjectionConfig`; the
            defaults when ``None``).

    One instance serves many runs at once. A retrieval that fails is logged and that turn runs
    without skills.
    """

    def __init__(self, bank: SkillSource, config: InjectionConfig | None = None):
        super().__init__()
        self.injector = SkillInjector(bank, config)
        self.config: InjectionConfig = self.injector.config
        self.injected: Counter[str] = Counter()  # skill id -> model calls it went into, answers given with it
        self.model_calls = 0  # every model call it wrapped, with skills or without
        self.retrieval_seconds = 0.0  # all retrieval so far (embedding, search, rendering)
        self._runs = agent_runs()
        self._lock = threading.Lock()

    def run_skills(self, call: CallContext) -> RunSkills | None:
        """What the call's run has been shown (``None`` when the run cannot be seen)."""
        run = call.run
        if run is None:
            return None
        skills = run.skills.get(self)
        if skills is None:
            with run.lock:
                skills = run.skills.setdefault(self, RunSkills.start(call.state or {}))
        return skills

    def reach(self, run: RunSkills | None, *skill_ids: str) -> None:
        """``skill_ids`` reached the model (in the prompt, or by guidance): counted, and kept as the run's."""
        with self._lock:
            self.injected.update(skill_ids)
        if run is not None:
            run.reached.update(skill_ids)

    def _retrieve(self, request: ModelRequest, run: RunSkills | None) -> InjectionResult | None:
        """The turn's skills (``None`` when retrieval failed: the agent must not go down with it)."""
        task = run.task if run is not None else first_human_text(request.messages, last=True)
        try:
            return self.injector.inject(request.messages, task=task, block=run.block if run is not None else None,
                                        tools=tool_names(request.tools), purposes=tool_purposes(request.tools))
        except Exception:
            log.warning("skillbank: skill retrieval failed; this turn runs without skills", exc_info=True)
            return None

    def _with_skills(self, call: CallContext, run: RunSkills | None, request: ModelRequest,
                     result: InjectionResult | None) -> ModelRequest:
        with self._lock:
            self.model_calls += 1
            if result is not None:
                self.retrieval_seconds += result.seconds
        if result is None:
            return request
        self.reach(run, *(h.skill.id for h in result.hits))
        call.exposures = result.exposures
        if not result:
            call.injected = ()
            return request
        call.injected = tuple(result.records)
        call.system_added = request.system_message is None
        return request.override(system_message=skills_system_message(request.system_message, result))

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        call, token = enter_call(request.state)
        try:
            if call.stop() is not None:  # a budget answers this call: nothing to show
                return handler(request)
            run = self.run_skills(call)
            request = self._with_skills(call, run, request, self._retrieve(request, run))
            with self._runs.calling:
                return handler(request)
        finally:
            leave_call(token)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        call, token = enter_call(request.state)
        try:
            if call.stop() is not None:  # a budget answers this call: nothing to show
                return await handler(request)
            run = self.run_skills(call)
            # Embedding the query is CPU work: keep it off the event loop.
            result = await asyncio.to_thread(self._retrieve, request, run)
            request = self._with_skills(call, run, request, result)
            with self._runs.calling:
                return await handler(request)
        finally:
            leave_call(token)
