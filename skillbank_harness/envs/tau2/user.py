"""τ²'s user simulator, played by any LangChain chat model.

The model gets what τ²'s ``UserSimulator`` sends its LiteLLM model: τ²'s system prompt (the
global simulation guidelines, in their tools variant when the domain gives the user tools, and
the task's scenario) and the conversation as the user sees it, roles flipped (``UserState``):
its own turns as the assistant's, the agent's messages as the user's, the results of its own
tool calls. Its reply is a τ² ``UserMessage``; the user ends the conversation by saying one of
τ²'s stop signals (``###STOP###``, ``###TRANSFER###``, ``###OUT-OF-SCOPE###``), which τ²'s own
``UserSimulator.is_stop`` recognises.
"""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.messages import SystemMessage

from skillbank_harness.envs.tau2 import _tau2
from skillbank_harness.envs.tau2.convert import reply_text, tau2_tool_calls, to_langchain, usage_of

__all__ = ["Tau2User", "EMPTY_REPLY_RETRIES"]

EMPTY_REPLY_RETRIES = 3
"""An empty reply (no text, no tool call) is asked for again this many times, as τ²'s
``generate`` does (``DEFAULT_MAX_RETRIES``)."""


class Tau2User:
    """The user of one τ² trial: ``reply(trajectory)`` is its next ``UserMessage``."""

    def __init__(self, model: Any, scenario: Any, tools: Sequence[Any] = ()) -> None:
        if model is None:
            raise ValueError("a τ² conversation needs a user model (the chat model that plays the user)")
        self.tools = list(tools)
        self.system_prompt = _tau2.user_system_prompt(scenario, with_tools=bool(self.tools))
        self.model = model.bind_tools([t.openai_schema for t in self.tools]) if self.tools else model

    def messages(self, trajectory: Sequence[Any]) -> list[Any]:
        """What the model is sent: the system prompt, then the user's view of the conversation."""
        return [SystemMessage(content=self.system_prompt), *to_langchain(_tau2.user_view(list(trajectory)))]

    def reply(self, trajectory: Sequence[Any]) -> Any:
        """The user's next message given the conversation so far (τ² messages)."""
        messages = self.messages(trajectory)
        for _ in range(EMPTY_REPLY_RETRIES + 1):
            answer = self.model.invoke(messages)
            text = reply_text(answer)
            calls = tau2_tool_calls(answer, "user")
            if text.strip() or calls:
                break
        return _tau2.UserMessage(role="user", content=text or None, tool_calls=calls or None,
                                 usage=usage_of(answer))
