"""Fake chat models for testing agents offline, yours and ours.

``ScriptedChatModel`` answers from a script: each entry is an ``AIMessage``, a string (a final
answer), a callable ``messages -> AIMessage | str`` or an exception to raise. It reports token
usage, works with ``bind_tools`` (tools are remembered, the script is unchanged), streams with
tool calls intact, and records every message list it receives, so a test can assert what the
model was shown:

    model = ScriptedChatModel([tool_call("get_weather", city="Oslo"), "It is sunny."])
    agent = create_agent(model, [get_weather], system_prompt="Be brief.", middleware=[mw])
    agent.invoke({"messages": [("user", "weather in Oslo?")]})
    assert "Be brief." in model.received[0][0].content
"""

from __future__ import annotations

import itertools
import math
import threading
import uuid
from typing import Any, Callable, Sequence

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

__all__ = ["ScriptedChatModel", "tool_call", "estimate_usage"]

_ids = itertools.count(1)


def tool_call(name: str, args: dict[str, Any] | None = None, *, content: str = "", id: str | None = None,
              **kwargs: Any) -> AIMessage:
    """An ``AIMessage`` calling one tool: ``tool_call("add", a=1, b=2)``.

    Args:
        name: The tool's name.
        args: The call's arguments; keyword arguments are merged in over them.
        content: The message's text beside the call.
        id: The tool call's id; ``None``: empty (:class:`ScriptedChatModel` gives each call a
            unique one when it replies).

    Returns:
        The message, with one tool call.
    """
    merged = {**(args or {}), **kwargs}
    return AIMessage(content=content, tool_calls=[{"name": name, "args": merged, "id": id or "", "type": "tool_call"}])


def estimate_usage(messages: Sequence[BaseMessage], response: AIMessage) -> dict[str, int]:
    """Token counts at ~4 characters a token: what a provider would report, roughly."""
    chars_in = sum(len(str(m.content)) for m in messages)
    chars_out = len(str(response.content)) + sum(len(str(c)) for c in response.tool_calls)
    i, o = math.ceil(chars_in / 4) + 3 * len(messages), max(1, math.ceil(chars_out / 4))
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}


Response = AIMessage | str | BaseException | Callable[[list[BaseMessage]], Any]


class ScriptedChatModel(FakeMessagesListChatModel):
    """A fake chat model that follows a script.

    ``responses`` are used in order; after the last one the script starts over (``cycle=True``)
    or keeps repeating the last entry (``cycle=False``). ``usage`` is ``"estimate"``
    (:func:`estimate_usage`), ``None`` (no usage reported), a fixed dict, or a callable
    ``(messages, response) -> dict``. Every response is a fresh copy with unique message and
    tool-call ids, as a provider's would be. Thread safe: concurrent runs share the script
    position, so give concurrent tests a callable entry that decides from the messages.

    Attributes:
        responses: The script (also the first positional argument): each entry an ``AIMessage``,
            a string (a reply's text), an exception (raised) or a callable ``messages -> entry``.
        usage: The token usage each reply reports: ``"estimate"``, ``None``, a dict or a callable.
        cycle: Whether the script starts over after its last entry (else the last repeats).
        model_name: The name reported in each reply's ``response_metadata``.
        received: The messages of every call so far, in order (filled by the model).
        bound_tools: The tool names of the last ``bind_tools`` (filled by the model).

    Raises:
        ValueError: Called with an empty script.
        TypeError: A script entry gives something other than an ``AIMessage`` or a string.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: list[Any] = Field(default_factory=list)
    usage: Any = "estimate"
    cycle: bool = True
    model_name: str = "scripted-chat-model"
    received: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[str] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, responses: Sequence[Response] | None = None, **kwargs: Any):
        if responses is not None:
            kwargs["responses"] = list(responses)
        super().__init__(**kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> "ScriptedChatModel":
        """LangChain's tool binding: records the tools' names in ``bound_tools``; the scripted
        responses are unchanged.

        Args:
            tools: Tools, functions or tool schemas (dicts, OpenAI's ``function`` form too).
            tool_choice: Ignored.

        Returns:
            This model itself (not a copy).
        """
        names = []
        for t in tools:
            name = getattr(t, "name", None) or (t.get("name") if isinstance(t, dict) else None) \
                or getattr(t, "__name__", None)
            if name is None and isinstance(t, dict):
                name = (t.get("function") or {}).get("name")
            if name:
                names.append(name)
        self.bound_tools = names
        return self

    @property
    def last_system_prompt(self) -> str | None:
        """Text of the system message the model received last, if any."""
        if not self.received:
            return None
        first = self.received[-1][0] if self.received[-1] else None
        return first.text if first is not None and first.type == "system" else None

    def _next(self) -> Any:
        with self._lock:
            if not self.responses:
                raise ValueError("ScriptedChatModel has no responses")
            entry = self.responses[self.i]
            if self.i < len(self.responses) - 1:
                self.i += 1
            elif self.cycle:
                self.i = 0
            return entry

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        with self._lock:
            self.received.append(list(messages))
        if self.sleep:
            import time

            time.sleep(self.sleep)
        entry = self._next()
        if callable(entry) and not isinstance(entry, (AIMessage, BaseException)):
            entry = entry(list(messages))
        if isinstance(entry, BaseException):
            raise entry
        message = AIMessage(content=entry) if isinstance(entry, str) else entry
        if not isinstance(message, AIMessage):
            raise TypeError(f"a script entry must give an AIMessage or a string, not {type(message).__name__}")
        n = next(_ids)
        calls = [{**c, "id": f"call_{n}_{k}_{uuid.uuid4().hex[:6]}"} for k, c in enumerate(message.tool_calls)]
        update: dict[str, Any] = {"id": f"scripted-{uuid.uuid4().hex}", "tool_calls": calls}
        usage = self.usage
        if usage == "estimate":
            update["usage_metadata"] = estimate_usage(messages, message)
        elif callable(usage):
            update["usage_metadata"] = usage(messages, message)
        elif isinstance(usage, dict):
            u = dict(usage)
            u.setdefault("total_tokens", int(u.get("input_tokens", 0)) + int(u.get("output_tokens", 0)))
            update["usage_metadata"] = u
        response = message.model_copy(update=update)
        response.response_metadata = {**message.response_metadata, "model_name": self.model_name}
        return ChatResult(generations=[ChatGeneration(message=response)])
