"""The GGUF's own chat template, rendered the way Hugging Face's ``apply_chat_template`` does.

llama-cpp-python's ``chatml-function-calling`` format (what ``ChatLlamaCpp`` uses for tools)
drops every tool-result message from the prompt, so a model driven through it never sees what
its tools returned. The template stored in the GGUF (``tokenizer.chat_template``) renders tool
calls and tool results as the model was trained on them. Templates are code from a file, so
they run in jinja2's immutable sandbox. Autoescape stays off: the output is a prompt, not HTML,
and escaping ``<`` would corrupt tags such as ``<tool_call>``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Sequence

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from skillbank.errors import TemplateError

__all__ = ["ChatTemplate", "to_template_messages", "TemplateError"]


def _tojson(value: Any, indent: int | None = None, separators: Any = None,
            sort_keys: bool = False, ensure_ascii: bool = False) -> str:
    # Jinja's own tojson HTML-escapes < > & ', which would change what the model sees.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _raise(message: str) -> None:
    raise TemplateError(message)


class ChatTemplate:
    """A compiled chat template: ``render(messages, tools, add_generation_prompt=True)``."""

    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = ""):
        from jinja2 import TemplateSyntaxError
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=[loopcontrols], autoescape=False)
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self._template = env.from_string(source)
        except TemplateSyntaxError as exc:
            raise TemplateError(f"the model's chat template is not valid jinja2: {exc}") from exc
        self.source = source
        self.bos_token = bos_token
        self.eos_token = eos_token

    def render(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None,
               *, add_generation_prompt: bool = True) -> str:
        from jinja2 import TemplateError as JinjaError

        try:
            return self._template.render(messages=list(messages), tools=list(tools) if tools else None,
                                         add_generation_prompt=add_generation_prompt,
                                         bos_token=self.bos_token, eos_token=self.eos_token)
        except JinjaError as exc:
            raise TemplateError(f"the model's chat template failed: {exc}") from exc


def to_template_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages -> the ``{"role", "content", "tool_calls"}`` dicts templates expect.

    Tool-call arguments stay dicts (templates apply ``tojson`` themselves). Several system
    messages are merged into the first, as templates put the system turn first.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, SystemMessage):
            if out and out[0]["role"] == "system":
                out[0]["content"] += "\n\n" + str(m.text)
                continue
            out.insert(0, {"role": "system", "content": str(m.text)})
        elif isinstance(m, AIMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": str(m.text)}
            if m.tool_calls:
                entry["tool_calls"] = [
                    {"id": tc.get("id"), "type": "function",
                     "function": {"name": tc["name"], "arguments": tc.get("args") or {}}}
                    for tc in m.tool_calls]
            out.append(entry)
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "content": str(m.text), "tool_call_id": m.tool_call_id,
                        "name": getattr(m, "name", None)})
        else:  # human, and anything else a user might pass
            out.append({"role": "user", "content": str(m.text)})
    return out
