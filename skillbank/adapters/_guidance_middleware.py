"""``SkillGuidanceMiddleware``: the lessons a run was shown, held to at the tool and at the answer.

One concern, guidance. It reads what the run was shown from its prompt part
(:class:`~skillbank.adapters._prompt_middleware.SkillPromptMiddleware`) and, with
``InjectionConfig.reminders``:

- answers a tool call that breaks a lesson checkable at the call with a reminder that asks the
  model to act, instead of running it (:mod:`~skillbank.adapters._reminders`);
- asks a final reply the shown lessons contradict once more, in the same model call
  (:mod:`~skillbank.adapters._answer_reminders`).

The model's call is never rewritten and no answer is computed for it: a call either runs as the
model made it or does not run. Each answer it gives carries an
:class:`~skillbank.adapters._interventions.Intervention` (one metadata key), which the recording
part reads; a recording part that is not around the tool call is told of it
(:meth:`~skillbank.adapters._run_context.CallContext.answered_without_running`). Every answer
given with a skill counts as that skill's reach on the prompt part.

It costs the agent no step: it works only inside ``wrap_model_call`` and ``wrap_tool_call``.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelCallResult, ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.types import Command

from skillbank.adapters._answer_reminders import AnswerReminder, answer_reminder
from skillbank.adapters._prompt_middleware import RunSkills, SkillPromptMiddleware, answered_by_budget
from skillbank.adapters._run_context import CallContext, agent_runs, enter_call, leave_call
from skillbank.adapters._tools import tool_names
from skillbank.messages import response_message

__all__ = ["SkillGuidanceMiddleware"]


class SkillGuidanceMiddleware(AgentMiddleware):
    """Reminds at the tool and asks a contradicted reply again, from what ``prompt`` showed.

    Args:
        prompt: The prompt part whose shown skills this part holds the run to; its
            ``InjectionConfig`` (``reminders``, ``deliver``, ``today``) configures this part too.
    """

    def __init__(self, prompt: SkillPromptMiddleware):
        super().__init__()
        self.prompt = prompt
        self.config = prompt.config
        self._runs = agent_runs()

    def _run(self, state: Any) -> RunSkills | None:
        return self.prompt.run_skills(state) if self.config.reminders else None

    # -- final replies -------------------------------------------------------------------------

    def _answer_reminder(self, request: ModelRequest, response: Any) -> AnswerReminder | None:
        """The note to ask the reply again with, when the run's shown lessons contradict it (once
        a run); the run's reminders learn the tools the call offered."""
        if answered_by_budget(response):
            return None
        run = self._run(request.state)  # read after the call: the prompt part may sit inside this one
        if run is None:
            return None
        run.block.reminders.know_tools(request.tools)
        reply = response_message(response)
        if run.answer_reminded or reply is None:
            return None
        shown = [hit for hit in run.block.hits if hit.skill.id in run.reached]
        found = answer_reminder(reply, request.messages, shown, tool_names(request.tools))
        if found is not None:
            run.answer_reminded = True
        return found

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        response: Any = handler(request)
        again = self._answer_reminder(request, response)
        if again is None:
            return response
        return _asked_again(handler(_with_note(request, response, again)), response, again)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        response: Any = await handler(request)
        again = self._answer_reminder(request, response)
        if again is None:
            return response
        return _asked_again(await handler(_with_note(request, response, again)), response, again)

    # -- tool calls ----------------------------------------------------------------------------

    def _reminder(self, call: CallContext, run: RunSkills | None, request: ToolCallRequest) -> ToolMessage | None:
        """The reminder that answers the call when it breaks a shown lesson, else ``None``."""
        if run is None:
            return None
        found = run.block.reminders.intercept(run.block.hits, request, self.config.run_today,
                                              self.config.checked_at_tool)
        if found is None:
            return None
        call.answered_without_running(request, found[1])
        self.prompt.reach(run, found[0].skill_id)
        return found[1]

    @staticmethod
    def _ran(run: RunSkills | None, request: ToolCallRequest) -> None:
        if run is not None:  # the run's reminders learn the call ran, whatever its outcome
            run.block.reminders.ran(request)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        if not self.config.reminders:
            return handler(request)
        call, token = enter_call(request.state)
        try:
            run = self._run(request.state)
            answer = self._reminder(call, run, request)
            if answer is not None:
                return answer
            with self._runs.calling:
                try:
                    return handler(request)
                finally:
                    self._ran(run, request)
        finally:
            leave_call(token)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        if not self.config.reminders:
            return await handler(request)
        call, token = enter_call(request.state)
        try:
            run = self._run(request.state)
            answer = self._reminder(call, run, request)
            if answer is not None:
                return answer
            with self._runs.calling:
                try:
                    return await handler(request)
                finally:
                    self._ran(run, request)
        finally:
            leave_call(token)


def _with_note(request: ModelRequest, response: Any, reminder: AnswerReminder) -> ModelRequest:
    """The same call again, with the draft reply and the note after it (marked, for a recording
    part inside this one: it records the note as an ``answer_reminder`` step)."""
    draft = response_message(response)
    record = reminder.record(str(getattr(draft, "text", "") or ""))
    note = HumanMessage(content=reminder.note, response_metadata=record.metadata())
    return request.override(messages=[*request.messages, draft, note])


def _asked_again(response: Any, first: Any, reminder: AnswerReminder) -> Any:
    """``response`` with the record of why it was asked for (the draft it replaces)."""
    reply = response_message(response)
    if reply is not None:
        draft = str(getattr(response_message(first), "text", "") or "")
        reply.response_metadata = {**(reply.response_metadata or {}), **reminder.record(draft).metadata()}
    return response
