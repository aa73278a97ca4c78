"""``SkillInjectionMiddleware``: the bank's skills in every model call of a ``create_agent`` agent.

One concern, what the agent is shown. Per model call it puts the turn's skills into the system
message: a block that stays the same through the run unless a new skill becomes relevant (so a
prompt cache keeps the whole prefix; see :class:`~skillbank.adapters.injection.SkillInjector`),
with the injection's record attached to that system message (for a recorder that reads
messages, :func:`~skillbank.adapters.injection.injections_from_messages`) and to the call's
:class:`~skillbank.adapters.run_context.CallContext` (for the recording part, wherever it sits).
With ``InjectionConfig.reminders`` it answers a tool call that breaks a lesson of the run's block
with the lesson instead of running it, and the answer says which skill gave it
(:func:`~skillbank.adapters.reminders.reminded_by`); a recording part that is not around the
call is told of it (:meth:`~skillbank.adapters.run_context.CallContext.answered_without_running`).
A model call a run budget stops gets no skills. It stores nothing; :attr:`injected` counts how
many model calls each skill went into and how many tool answers it gave (a note, a fixed call, a
repeat's answer, a reminder; the evolution gate reads it as the skill's reach).

With ``reminders`` it also checks a final reply against the block's lessons (a call described
instead of made; the block repeated; a raw number where a lesson says a scaled one; a number
no tool returned where a lesson says where it comes from; an empty reply) and asks
once more, inside the same model call (:mod:`~skillbank.adapters.answer_reminders`).

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

from skillbank.adapters.answer_notes import answer_note_of, with_answer_note
from skillbank.adapters.answer_reminders import ANSWER_REMINDER_METADATA_KEY, AnswerReminder, answer_reminder
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import Block, InjectionResult, SkillInjector, skills_system_message
from skillbank.adapters.reminders import call_key, user_words
from skillbank.adapters.run_context import CallContext, agent_runs, enter_call, leave_call
from skillbank.adapters.time_fixes import TimeFix, fixed_call, repeat_answer, with_fix_note
from skillbank.adapters.tools import tool_names, tool_purposes
from skillbank.messages import first_human_text, response_message, state_messages
from skillbank.protocols import SkillSource

__all__ = ["SkillInjectionMiddleware", "RunSkills"]

log = logging.getLogger("skillbank.adapters")


@dataclass
class RunSkills:
    """What one run has been shown: its skills block (and the reminders kept on it)."""

    task: str  # what the run is about: its newest human message when it started
    block: Block = field(default_factory=Block)
    answer_reminded: bool = False  # a reply was asked again (answer_reminders.py): once per run
    # Skills of the block the model was shown: in the prompt, or at the tool (a note, a fix, a
    # repeat's answer, a reminder). A skill in the block for the tool whose tool never ran
    # reached nothing, so the answer's reminders do not read it.
    reached: set[str] = field(default_factory=set)
    # Calls a time fix changed and that succeeded, by call_key: the fix and the first result.
    fixed: dict[tuple[str, str], tuple[TimeFix, ToolMessage]] = field(default_factory=dict)

    @classmethod
    def start(cls, state: Mapping[str, Any]) -> "RunSkills":
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
        self._runs = agent_runs()
        self.injected: Counter[str] = Counter()  # skill id -> model calls it went into, tool answers it gave
        self.model_calls = 0  # every model call it wrapped, with skills or without
        self.retrieval_seconds = 0.0  # all retrieval so far (embedding, search, rendering)
        self._lock = threading.Lock()

    def _skills(self, call: CallContext) -> RunSkills | None:
        """What the call's run has been shown (``None`` when the run cannot be seen)."""
        run = call.run
        if run is None:
            return None
        skills = run.skills.get(self)
        if skills is None:
            with run.lock:
                skills = run.skills.setdefault(self, RunSkills.start(call.state or {}))
        return skills

    # -- model calls ---------------------------------------------------------------------------

    def _retrieve(self, request: ModelRequest, run: RunSkills | None) -> InjectionResult | None:
        """The turn's skills (``None`` when retrieval failed: the agent must not go down with it)."""
        if run is not None and self.config.reminders:
            run.block.reminders.know_tools(request.tools)
        task = run.task if run is not None else first_human_text(request.messages, last=True)
        try:
            return self.injector.inject(request.messages, task=task, block=run.block if run is not None else None,
                                        tools=tool_names(request.tools), purposes=tool_purposes(request.tools))
        except Exception:
            log.warning("skillbank: skill retrieval failed; this turn runs without skills", exc_info=True)
            return None

    def _reach(self, run: RunSkills | None, *skill_ids: str) -> None:
        """``skill_ids`` were shown to the model: counted (the gate's reach reads it) and kept as
        the run's."""
        with self._lock:
            self.injected.update(skill_ids)
        if run is not None:
            run.reached.update(skill_ids)

    def _with_skills(self, call: CallContext, run: RunSkills | None, request: ModelRequest,
                     result: InjectionResult | None) -> ModelRequest:
        with self._lock:
            self.model_calls += 1
            if result is not None:
                self.retrieval_seconds += result.seconds
        if result is None:
            return request
        self._reach(run, *(h.skill.id for h in result.hits))
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
            skills = self._skills(call)
            request = self._with_skills(call, skills, request, self._retrieve(request, skills))
            with self._runs.calling:
                response: Any = handler(request)
                again = self._answer_reminder(skills, request, response)
                if again is None:
                    return response
                return _asked_again(handler(_with_note(request, response, again)), response, again)
        finally:
            leave_call(token)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        call, token = enter_call(request.state)
        try:
            if call.stop() is not None:  # a budget answers this call: nothing to show
                return await handler(request)
            # Embedding the query is CPU work: keep it off the event loop.
            skills = self._skills(call)
            result = await asyncio.to_thread(self._retrieve, request, skills)
            request = self._with_skills(call, skills, request, result)
            with self._runs.calling:
                response = await handler(request)
                again = self._answer_reminder(skills, request, response)
                if again is None:
                    return response
                return _asked_again(await handler(_with_note(request, response, again)), response, again)
        finally:
            leave_call(token)

    # -- final replies: reminders at the answer (InjectionConfig.reminders; answer_reminders.py)

    def _answer_reminder(self, run: RunSkills | None, request: ModelRequest, response: Any) -> AnswerReminder | None:
        reply = response_message(response)
        if run is None or not self.config.reminders or run.answer_reminded or reply is None:
            return None
        shown = [hit for hit in run.block.hits if hit.skill.id in run.reached]
        found = answer_reminder(reply, request.messages, shown, tool_names(request.tools))
        if found is not None:
            run.answer_reminded = True
        return found

    # -- tool calls: reminders (InjectionConfig.reminders; see reminders.py) -------------------

    def _noted(self, run: RunSkills | None, result: Any) -> Any:
        """A tool's answer with the note of an answer-unit lesson given at the tool, if any."""
        if run is None or self.config.answer_units != "tool":
            return result
        noted = with_answer_note(run.block.hits, result)
        if (lesson := answer_note_of(noted)) is not None:
            self._reach(run, lesson[0])
        return noted

    def _reminder(self, call: CallContext, run: RunSkills | None, request: ToolCallRequest) -> ToolMessage | None:
        """With reminders on, the lesson's answer when the call breaks one."""
        if run is None or not self.config.reminders:
            return None
        found = run.block.reminders.intercept(run.block.hits, request, self.config.run_today)
        if found is None:
            return None
        call.answered_without_running(request, found[1])
        self._reach(run, found[0].skill_id)
        return found[1]

    def _time_fix(self, run: RunSkills | None, request: ToolCallRequest) -> tuple[ToolCallRequest, TimeFix | None]:
        """With ``stated_times="tool"``, the call with the time (or date) the user said when it
        passes another (time_fixes.py); else the call as it is."""
        if run is None or self.config.stated_times != "tool":
            return request, None
        tool_call = request.tool_call
        fix = fixed_call(run.block.hits, tool_call.get("name") or "", tool_call.get("args"),
                         user_words(state_messages(request.state)), self.config.run_today)
        if fix is None:
            return request, None
        return request.override(tool_call={**tool_call, "args": fix.args}), fix

    def _repeat(self, call: CallContext, run: RunSkills | None, request: ToolCallRequest) -> ToolMessage | None:
        """A repeat of a call a time fix changed and that succeeded in this run: answered with
        its first result instead of running again (time_fixes.repeat_answer)."""
        if run is None or not run.fixed:
            return None
        first = run.fixed.get(_call_of(request))
        if first is None:
            return None
        answer = repeat_answer(first[0], first[1], request.tool_call)
        call.answered_without_running(request, answer)
        self._reach(run, first[0].skill_id)
        return answer

    def _before(self, call: CallContext, request: ToolCallRequest
                ) -> tuple[RunSkills | None, ToolCallRequest, TimeFix | None, ToolMessage | None]:
        """What happens before a call runs: its time or date fixed, then a repeat of a fixed
        call or a reminder that answers it."""
        run = self._skills(call)
        request, fix = self._time_fix(run, request)
        return run, request, fix, self._repeat(call, run, request) or self._reminder(call, run, request)

    def _after(self, run: RunSkills | None, request: ToolCallRequest, fix: TimeFix | None, result: Any) -> Any:
        """A call's answer with the notes given at its tool (shown to the model: the gate's reach counts them)."""
        if fix is not None and isinstance(result, ToolMessage):
            if run is not None and result.status != "error":
                run.fixed[_call_of(request)] = (fix, result)
            result = with_fix_note(result, fix)
            self._reach(run, fix.skill_id)
        return self._noted(run, result)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        if not self.config.acts_at_tool:  # the tool side is reminders and notes at the tool only
            return handler(request)
        call, token = enter_call(request.state)
        try:
            run, request, fix, answer = self._before(call, request)
            if answer is not None:
                return answer
            with self._runs.calling:
                try:
                    result = handler(request)
                finally:  # the run's reminders learn the call ran, whatever its outcome
                    if run is not None and self.config.reminders:
                        run.block.reminders.ran(request)
            return self._after(run, request, fix, result)
        finally:
            leave_call(token)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        if not self.config.acts_at_tool:  # the tool side is reminders and notes at the tool only
            return await handler(request)
        call, token = enter_call(request.state)
        try:
            run, request, fix, answer = self._before(call, request)
            if answer is not None:
                return answer
            with self._runs.calling:
                try:
                    result = await handler(request)
                finally:  # the run's reminders learn the call ran, whatever its outcome
                    if run is not None and self.config.reminders:
                        run.block.reminders.ran(request)
            return self._after(run, request, fix, result)
        finally:
            leave_call(token)


def _call_of(request: ToolCallRequest) -> tuple[str, str]:
    """The request's call as reminders.call_key keys it: equal for equal calls."""
    return call_key(request.tool_call.get("name") or "?", request.tool_call.get("args"))


def _with_note(request: ModelRequest, response: Any, reminder: AnswerReminder) -> ModelRequest:
    """The same call again, with the draft reply and the note after it (marked, for a recording
    part inside this one: it records the note as an ``answer_reminder`` step)."""
    draft = response_message(response)
    note = HumanMessage(content=reminder.note, response_metadata={
        ANSWER_REMINDER_METADATA_KEY: reminder.as_metadata(str(getattr(draft, "text", "") or ""))})
    return request.override(messages=[*request.messages, draft, note])


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
