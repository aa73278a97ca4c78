"""τ²'s messages and tools in LangChain's terms, and back.

τ² talks to models in OpenAI's chat format through LiteLLM (``tau2.utils.llm_utils``:
``to_litellm_messages`` and ``generate``); here the same conversations go to LangChain chat
models, converted the same way: a τ² ``UserMessage`` is a ``HumanMessage``, an
``AssistantMessage`` an ``AIMessage`` with its tool calls, a ``ToolMessage`` a ``ToolMessage``
answering the call of the same id. A τ² tool is offered with τ²'s own description and JSON
schema (``Tool.openai_schema``), its arguments passed through as the model wrote them, as τ²
passes them.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool, ToolException

from skillbank_harness.envs.tau2 import _tau2

__all__ = ["to_langchain", "tau2_tool_calls", "reply_text", "usage_of", "tool_schema", "langchain_tool",
           "langchain_tools"]


def to_langchain(messages: Sequence[Any]) -> list[BaseMessage]:
    """τ² messages -> LangChain messages, as ``to_litellm_messages`` turns them into OpenAI's."""
    out: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, _tau2.UserMessage):
            out.append(HumanMessage(content=message.content or ""))
        elif isinstance(message, _tau2.AssistantMessage):
            calls = [{"name": tc.name, "args": dict(tc.arguments), "id": tc.id, "type": "tool_call"}
                     for tc in message.tool_calls or ()]
            out.append(AIMessage(content=message.content or "", tool_calls=calls))
        elif isinstance(message, _tau2.ToolMessage):
            out.append(ToolMessage(content=message.content or "", tool_call_id=message.id,
                                   status="error" if message.error else "success"))
        elif isinstance(message, _tau2.SystemMessage):
            out.append(SystemMessage(content=message.content or ""))
        else:
            raise ValueError(f"no LangChain form for a τ² {type(message).__name__}")
    return out


def reply_text(message: Any) -> str:
    """A model reply's text (the text blocks of a content list joined, as ``BaseMessage.text``)."""
    if isinstance(message, BaseMessage):
        return str(message.text)
    content = getattr(message, "content", None)
    return "" if content is None else str(content)


def tau2_tool_calls(message: Any, requestor: str) -> list[Any]:
    """A model reply's tool calls as τ² ``ToolCall``s (id, name, arguments, who asked)."""
    return [_tau2.ToolCall(id=call.get("id") or "", name=call.get("name") or "",
                           arguments=dict(call.get("args") or {}), requestor=requestor)
            for call in getattr(message, "tool_calls", None) or ()]


def usage_of(message: Any) -> dict[str, int] | None:
    """A reply's token counts in τ²'s shape (``completion_tokens``, ``prompt_tokens``)."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    return {"completion_tokens": int(usage.get("output_tokens", 0)),
            "prompt_tokens": int(usage.get("input_tokens", 0))}


def tool_schema(tool: Any) -> dict[str, Any]:
    """τ²'s OpenAI function schema of a τ² ``Tool`` (its description and parameters)."""
    return tool.openai_schema["function"]


def langchain_tool(name: str, description: str, parameters: dict[str, Any],
                   run: Callable[[str, dict[str, Any]], tuple[str, bool]]) -> StructuredTool:
    """A LangChain tool that hands its call to ``run(name, arguments) -> (content, error)``.

    The arguments reach ``run`` as the model wrote them (no validation against the schema: a
    τ² tool answers a bad call itself, with the error text the model then reads). An error
    comes back as LangChain's error ``ToolMessage`` (status ``"error"``) with the same text.
    """

    def call(**arguments: Any) -> str:
        content, error = run(name, arguments)
        if error:
            raise ToolException(content)
        return content

    return StructuredTool.from_function(func=call, name=name, description=description,
                                        args_schema=json.loads(json.dumps(parameters)),
                                        handle_tool_error=True)


def langchain_tools(tools: Sequence[Any], run: Callable[[str, dict[str, Any]], tuple[str, bool]]
                    ) -> list[StructuredTool]:
    """LangChain tools for τ² ``Tool``s, in the order given."""
    out = []
    for tool in tools:
        schema = tool_schema(tool)
        out.append(langchain_tool(schema["name"], schema.get("description") or schema["name"],
                                  schema.get("parameters") or {"type": "object", "properties": {}},
                                  run))
    return out
