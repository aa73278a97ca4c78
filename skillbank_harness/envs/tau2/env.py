"""One τ² trial: a fresh environment, the conversation as τ² records it, and the middleware that
runs τ²'s side of it inside one ``create_agent`` run.

:class:`Tau2Env` holds one trial's world, set up as τ²'s ``Orchestrator.initialize`` sets it up:
the domain's environment built anew (its database loaded from τ²'s files), the task's
initialisation data and actions applied, its message history replayed, and the conversation
opened (the agent's greeting, then the user's first turn; in solo mode, nothing: the agent
starts). Every message and tool result goes into :attr:`Tau2Env.trajectory`, a list of τ²'s
own message objects, which is what τ²'s evaluator judges.

:class:`Tau2Middleware` plays the orchestrator's part in the agent's graph:

* the agent's tool calls run through the τ² environment (``Environment.get_response``), one at
  a time in the order the model wrote them (LangGraph would run them concurrently); a call to a
  tool the agent does not have is answered by the environment, as τ² answers it;
* a message to the user without a tool call goes to the user simulator (:mod:`.user`), whose
  reply comes back as the next human message, or ends the run when it says a stop signal;
* in solo mode a call to ``done`` ends the run, and a message without a tool call is an error;
* τ²'s limits end the run as the orchestrator ends it: ``max_steps`` messages (a tool result
  batch is one) and ``max_errors`` failed tool calls, checked when a message is not for the
  environment; an empty message (no text, no tool call) is an agent or user error.

The bank's own middleware (``SkillBankMiddleware``) goes after this one in the list, so it sees
every model call and every tool call, and may answer a call without running it (a reminder at
the tool): such a call never reaches the environment, and τ²'s record of the message keeps only
the calls that ran, with the arguments they ran with.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from copy import deepcopy
from datetime import datetime, timedelta
import enum
from typing import Any, NamedTuple, Sequence

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import hook_config
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool

from skillbank.errors import ContextWindowExceededError
from skillbank.messages import response_message
from skillbank_harness.envs.tau2 import _tau2
from skillbank_harness.envs.tau2.convert import (
    langchain_tool,
    langchain_tools,
    reply_text,
    to_langchain,
    usage_of,
)
from skillbank_harness.envs.tau2.user import EMPTY_REPLY_RETRIES, Tau2User

__all__ = ["Tau2Env", "Tau2Middleware", "After", "Following"]

log = logging.getLogger("skillbank_harness.envs.tau2")

_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("skillbank_tau2_call_id", default=None)
# A call waits at most this long for the calls written before it in the same message; they
# start first (LangGraph submits a message's calls in order), so this only bounds a surprise.
_ORDER_TIMEOUT_S = 60.0


class After(enum.Enum):
    """Where the conversation goes after the agent's message."""

    TOOLS = "tools"  # the environment runs its tool calls
    USER = "user"  # the user answered: back to the agent with the user's text
    END = "end"  # the conversation is over


class Following(NamedTuple):
    to: After
    text: str | None = None  # the user's answer (``After.USER``)


class Tau2Env:
    """One run of one τ² task: the environment, the user, the trajectory and the counters."""

    def __init__(self, task: Any, user_model: Any = None, *, max_steps: int = _tau2.DEFAULT_MAX_STEPS,
                 max_errors: int = _tau2.DEFAULT_MAX_ERRORS) -> None:
        if max_steps <= 0 or max_errors <= 0:
            raise ValueError("max_steps and max_errors must be positive")
        self.task = task
        self.solo = bool(task.solo)
        self.max_steps = max_steps
        self.max_errors = max_errors
        self.environment = _tau2.environment(task.domain, solo=self.solo)
        self.trajectory: list[Any] = []
        self.step_count = 0
        self.num_errors = 0
        self.termination: Any = None  # a τ² TerminationReason once the conversation ended
        self.note: str | None = None  # why, in words, when it ended on an error
        self._pending_env_step = False  # the agent's last message called tools
        self._batch_start = 0  # where that message's tool results start in the trajectory
        self._lock = threading.RLock()
        self._order = threading.Condition()
        self._done_calls: set[str] = set()
        self.user: Tau2User | None = None
        if not self.solo:
            user_tools = self.environment.get_user_tools() if self.environment.user_tools else []
            self.user = Tau2User(user_model, task.task.user_scenario, user_tools)
        self._next = self._initialize()
        self._tools = self._make_tools()

    # ------------------------------------------------------------------ set-up (Orchestrator.initialize)

    def _initialize(self) -> str:
        """The environment's initial state; returns who speaks first: "user" or "agent"."""
        initial = self.task.task.initial_state
        data = initial.initialization_data if initial is not None else None
        actions = initial.initialization_actions if initial is not None else None
        history = deepcopy(initial.message_history) if initial is not None and initial.message_history else []
        start = datetime.now() - timedelta(seconds=len(history))
        for i, message in enumerate(history):
            message.turn_idx = None
            message.timestamp = (start + timedelta(seconds=i)).isoformat()
        self.environment.set_state(initialization_data=data, initialization_actions=actions,
                                   message_history=history)
        if history:
            _tau2.Orchestrator.validate_message_history(history)
            self.trajectory = history
            last = history[-1]
            if isinstance(last, _tau2.AssistantMessage) and not last.is_tool_call():
                following = "user"
            elif isinstance(last, _tau2.UserMessage) and not last.is_tool_call():
                following = "agent"
            else:
                raise ValueError(f"τ² task {self.task.task.id}: a message history ending with a "
                                 f"{type(last).__name__} with tool calls is not supported")
        elif self.solo:
            following = "agent"
        else:
            self.trajectory = [_tau2.AssistantMessage(role="assistant", content=_tau2.GREETING, cost=0.0)]
            following = "user"
        self.environment.sync_tools()
        return following

    # ------------------------------------------------------------------ what the agent gets

    @property
    def system_prompt(self) -> str:
        """τ²'s agent system prompt: the instruction and policy (solo: and the ticket)."""
        policy = self.environment.get_policy()
        if self.solo:
            return _tau2.solo_system_prompt(policy, self.task.task.ticket)
        return _tau2.agent_system_prompt(policy)

    def _make_tools(self) -> list[BaseTool]:
        tools = list(self.environment.get_tools())
        if not self.solo:
            return langchain_tools(tools, self._run_tool)
        if self.environment.user_tools is not None:
            tools += list(self.environment.get_user_tools())  # as τ²'s run_task gives the solo agent
        # τ²'s solo agent adds its stop tool, ``done``, to these; a call to it ends the run
        # (Tau2Middleware), so it never runs.
        solo_agent = _tau2.LLMSoloAgent(tools=tools, domain_policy=self.environment.get_policy(),
                                        task=self.task.task)
        return langchain_tools(solo_agent.tools, self._run_tool)

    def tools(self) -> list[BaseTool]:
        return list(self._tools)

    def fallback_tool(self, name: str) -> BaseTool:
        """A tool for a name the agent was not given: the environment answers it (τ²'s error)."""
        return langchain_tool(name, name, {"type": "object", "properties": {}}, self._run_tool)

    def middleware(self) -> list[AgentMiddleware]:
        return [Tau2Middleware(self)]

    def start(self) -> list[BaseMessage] | None:
        """Open the conversation: the agent's input messages, or ``None`` if it already ended
        (the user stopped, or failed, before the agent said anything)."""
        if self.solo:
            # τ²'s solo agent has the ticket in its system prompt and no messages; the ticket is
            # also its first human message here, which is what the bank reads the task from.
            return [*to_langchain(self._agent_view()), HumanMessage(content=str(self.task.task.ticket))]
        if self._next == "user":
            text = self.user_turn()
            if text is None:
                return None
        return to_langchain(self._agent_view())

    def _agent_view(self) -> list[Any]:
        return [m for m in self.trajectory if _tau2.is_valid_agent_history_message(m)]

    # ------------------------------------------------------------------ the conversation

    @property
    def done(self) -> bool:
        return self.termination is not None

    def _end(self, reason: Any, note: str | None = None) -> None:
        self.termination = reason
        if note is not None:
            self.note = note

    def _step(self) -> None:
        """One of the orchestrator's steps went by (a message, or a batch of tool results)."""
        self.step_count += 1
        self.environment.sync_tools()

    def _check_limits(self) -> None:
        """The orchestrator's checks after a step whose message is not for the environment."""
        if self.step_count >= self.max_steps:
            self._end(_tau2.TerminationReason.MAX_STEPS)
        if self.num_errors >= self.max_errors:
            self._end(_tau2.TerminationReason.TOO_MANY_ERRORS)

    def agent_message(self, reply: Any) -> Following:
        """Record the agent's reply; returns what follows it (the user's answer, if any)."""
        text = reply_text(reply)
        calls = list(getattr(reply, "tool_calls", None) or ())
        with self._lock:
            if self.solo and any(c.get("name") == _tau2.SOLO_STOP_TOOL for c in calls):
                # LLMSoloAgent._check_if_stop_toolcall: the whole message becomes the stop token.
                message = _tau2.AssistantMessage(role="assistant", content=_tau2.SOLO_STOP_TOKEN,
                                                 usage=usage_of(reply))
            else:
                message = _tau2.AssistantMessage(role="assistant", content=text or None,
                                                 tool_calls=[] if calls else None, usage=usage_of(reply))
            self.trajectory.append(message)
            self._step()
            if not message.has_text_content() and message.tool_calls is None:
                self._end(_tau2.TerminationReason.AGENT_ERROR, "the agent sent an empty message")
                return Following(After.END)
            if message.tool_calls is not None:  # for the environment: no check yet
                self._pending_env_step = True
                self._batch_start = len(self.trajectory)
                return Following(After.TOOLS)
            if self.solo:
                if _tau2.SOLO_STOP_TOKEN in (message.content or ""):
                    self._end(_tau2.TerminationReason.AGENT_STOP)
                else:  # LLMSoloAgent: "only supports tool calls"
                    self._end(_tau2.TerminationReason.AGENT_ERROR, "the solo agent sent a message to a user")
                self._check_limits()
                return Following(After.END)
            self._check_limits()
        if self.done:
            return Following(After.END)
        answer = self.user_turn()
        return Following(After.END) if answer is None else Following(After.USER, answer)

    def tool_results_delivered(self) -> None:
        """The results of the agent's last tool calls are in: the environment's step is over."""
        with self._lock:
            if not self._pending_env_step:
                return
            self._pending_env_step = False
            batch = self.trajectory[self._batch_start:]
            self.num_errors += sum(1 for m in batch if isinstance(m, _tau2.ToolMessage) and m.error)
            self._step()
            self._check_limits()

    def user_turn(self) -> str | None:
        """The user's turn, with its own tool calls; its text for the agent, or ``None`` when the
        conversation ended (a stop signal, an empty message, a limit)."""
        assert self.user is not None
        while True:
            try:
                reply = self.user.reply(self.trajectory)
            except ContextWindowExceededError:
                self._end(_tau2.TerminationReason.USER_ERROR, "the prompt outgrew the user model's context")
                return None
            with self._lock:
                self.trajectory.append(reply)
                self._step()
                if not (reply.has_text_content() or reply.is_tool_call()):
                    self._end(_tau2.TerminationReason.USER_ERROR, "the user sent an empty message")
                    return None
                if _tau2.user_is_stop(reply):
                    self._end(_tau2.TerminationReason.USER_STOP)
                if reply.is_tool_call():
                    for call in reply.tool_calls:
                        result = self.environment.get_response(call)
                        self.num_errors += bool(result.error)
                        self.trajectory.append(result)
                    self._step()
                    self._check_limits()
                    if self.done:
                        return None
                    continue
                self._check_limits()
                if self.done:
                    return None
                return reply.content

    def _run_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """One agent tool call through the environment, recorded under the agent's message."""
        call = _tau2.ToolCall(id=_CALL_ID.get() or "", name=name, arguments=dict(arguments),
                              requestor="assistant")
        with self._lock:
            result = self.environment.get_response(call)
            message = self._last_agent_message()
            if message is not None and message.tool_calls is not None:
                message.tool_calls.append(call)
            self.trajectory.append(result)
        return result.content or "", bool(result.error)

    def _last_agent_message(self) -> Any:
        for message in reversed(self.trajectory):
            if isinstance(message, _tau2.AssistantMessage):
                return message
        return None

    def stop_unfinished(self, reason: Any = None, note: str | None = None) -> None:
        """The run ended without τ²'s ending (a recursion limit, an exception, another
        middleware's stop): a premature termination, which τ²'s evaluator scores 0."""
        if not self.done:
            self._end(reason or _tau2.TerminationReason.AGENT_ERROR, note)

    # ------------------------------------------------------------------ call order

    def wait_for(self, earlier: Sequence[str]) -> None:
        """Block until the tool calls ``earlier`` (ids) of the same message have run."""
        with self._order:
            if not self._order.wait_for(lambda: self._done_calls.issuperset(earlier), timeout=_ORDER_TIMEOUT_S):
                log.warning("skillbank: τ² %s: a tool call ran before the calls written before it",
                            self.task.id)

    def call_done(self, call_id: str) -> None:
        with self._order:
            self._done_calls.add(call_id)
            self._order.notify_all()

    # ------------------------------------------------------------------ the record

    def messages(self) -> list[Any]:
        """The conversation as τ² records it: turn indices set, and an agent message whose calls
        were all answered without running (a reminder at the tool) without tool calls."""
        out = []
        for i, message in enumerate(self.trajectory):
            message = message.model_copy(deep=True)
            if isinstance(message, _tau2.AssistantMessage) and message.tool_calls == []:
                message.tool_calls = None
            message.turn_idx = i
            out.append(message)
        return out


def _earlier_calls(state: Any, call_id: str) -> list[str]:
    """Ids of the tool calls written before ``call_id`` in the same model message."""
    for message in reversed((state or {}).get("messages", [])):
        ids = [c.get("id") for c in getattr(message, "tool_calls", None) or ()]
        if call_id in ids:
            return ids[:ids.index(call_id)]
    return []


class Tau2Middleware(AgentMiddleware):
    """τ²'s orchestrator inside one ``create_agent`` run (see the module doc).

    Put it first in the middleware list: its ``after_model`` then runs last, after other
    middleware saw the agent's message, and its tool wrapper is outermost, so the bank's
    middleware inside it sees every call (one to an unknown tool included).
    """

    def __init__(self, env: Tau2Env) -> None:
        super().__init__()
        self.env = env

    # -- before the agent speaks: the environment's step is over

    def _before_model(self) -> dict[str, Any] | None:
        self.env.tool_results_delivered()
        return {"jump_to": "end"} if self.env.done else None

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._before_model()

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self._before_model)

    # -- the model call: solo mode must call a tool; an empty reply is asked for again (τ²'s generate)

    def _request(self, request: Any) -> Any:
        return request.override(tool_choice="required") if self.env.solo else request

    @staticmethod
    def _empty(response: Any) -> bool:
        message = response_message(response)
        return isinstance(message, AIMessage) and not message.tool_calls and not reply_text(message).strip()

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        request = self._request(request)
        response = handler(request)
        for _ in range(EMPTY_REPLY_RETRIES):
            if not self._empty(response):
                break
            response = handler(request)
        return response

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        request = self._request(request)
        response = await handler(request)
        for _ in range(EMPTY_REPLY_RETRIES):
            if not self._empty(response):
                break
            response = await handler(request)
        return response

    # -- after the agent spoke: the environment, the user, or the end

    def _after_model(self, state: Any) -> dict[str, Any] | None:
        messages = (state or {}).get("messages") or []
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            return None
        following = self.env.agent_message(last)
        if following.to is After.TOOLS:
            return None
        if following.to is After.END:
            return {"jump_to": "end"}
        return {"messages": [HumanMessage(content=following.text or "")], "jump_to": "model"}

    @hook_config(can_jump_to=["model", "end"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._after_model(state)

    @hook_config(can_jump_to=["model", "end"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self._after_model, state)

    # -- tool calls: in order, through the environment

    def _tool_request(self, request: Any) -> Any:
        if request.tool is None:
            return request.override(tool=self.env.fallback_tool(request.tool_call.get("name") or ""))
        return request

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        call_id = request.tool_call.get("id") or ""
        self.env.wait_for(_earlier_calls(request.state, call_id))
        token = _CALL_ID.set(call_id)
        try:
            return handler(self._tool_request(request))
        finally:
            _CALL_ID.reset(token)
            self.env.call_done(call_id)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        call_id = request.tool_call.get("id") or ""
        await asyncio.to_thread(self.env.wait_for, _earlier_calls(request.state, call_id))
        token = _CALL_ID.set(call_id)
        try:
            return await handler(self._tool_request(request))
        finally:
            _CALL_ID.reset(token)
            self.env.call_done(call_id)
