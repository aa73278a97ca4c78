"""Reading LangChain messages: the one copy of the helpers the adapters and the evolution loop share.

A message's text is ``langchain_core``'s own ``BaseMessage.text`` (the text blocks of any
content, joined); the rest find a message of one kind in a conversation or in what a graph node,
a model call or a tool call returned. Everything is duck-typed on ``type`` so a plain object with
the right attributes (a test double, a deserialised message) reads the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable, Iterator, Sequence

from langchain_core.messages import BaseMessage, ToolMessage

__all__ = ["message_text", "first_human_text", "last_message", "state_messages", "messages_in",
           "response_message", "tool_result_message"]

# How deep messages_in looks: a Command's update, a state dict, its list, the messages.
_MAX_DEPTH = 3


def message_text(message: Any) -> str:
    """Plain text of a message (``BaseMessage.text``); of another object its ``content``, as a
    string (a plain string passes through, ``None`` is ``""``)."""
    if isinstance(message, BaseMessage):
        return str(message.text)
    content = getattr(message, "content", message)
    return "" if content is None else str(content)


def first_human_text(messages: Iterable[Any], *, last: bool = False) -> str:
    """Text of the first (or last) human message, ``""`` if there is none."""
    found = ""
    for message in messages:
        if getattr(message, "type", None) == "human":
            found = message_text(message)
            if not last:
                return found
    return found


def last_message(messages: Sequence[Any], kind: str) -> Any:
    """The newest message of ``kind`` (``"human"``, ``"ai"``, ``"tool"``...), or ``None``."""
    for message in reversed(messages):
        if getattr(message, "type", None) == kind:
            return message
    return None


def state_messages(state: Any) -> list[Any]:
    """The conversation in a graph state: a state dict's ``messages``, or a state object's."""
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    return list(messages or ())


def messages_in(obj: Any, depth: int = 0) -> Iterator[BaseMessage]:
    """The messages inside a run's input or output, in order: a message, a list of them, a state
    dict's ``messages``, a ``Command``'s update, a model call's ``ModelResponse`` (its ``result``)
    or ``ExtendedModelResponse`` (its ``model_response``)."""
    if depth > _MAX_DEPTH or obj is None:
        return
    if isinstance(obj, BaseMessage):
        yield obj
    elif isinstance(obj, dict):
        value = obj.get("messages")
        if value is not None:
            yield from messages_in(value, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            if isinstance(item, BaseMessage):
                yield item
            elif isinstance(item, (dict, list, tuple)) or hasattr(item, "update"):
                yield from messages_in(item, depth + 1)
    elif isinstance(getattr(obj, "update", None), dict):  # a Command
        yield from messages_in(obj.update, depth + 1)
    elif hasattr(obj, "model_response"):  # ExtendedModelResponse
        yield from messages_in(obj.model_response, depth + 1)
    elif isinstance(getattr(obj, "result", None), list):  # ModelResponse
        yield from messages_in(obj.result, depth + 1)


def response_message(response: Any) -> Any:
    """The AIMessage a model call answered with, inside whatever its handler returned (an
    ``AIMessage``, a ``ModelResponse``, an ``ExtendedModelResponse``), or ``None``."""
    # Unwrapped by hand, not through messages_in: this runs on every model call.
    response = getattr(response, "model_response", response)
    if getattr(response, "type", None) == "ai":
        return response
    result = getattr(response, "result", None)
    return last_message(result, "ai") if isinstance(result, list) else None


def tool_result_message(result: Any) -> Any:
    """The ``ToolMessage`` a tool call answered with (itself, or the one in a ``Command``'s
    update); anything else is returned as it is."""
    return next((m for m in messages_in(result) if isinstance(m, ToolMessage)), result)
