"""LangGraph without ``create_agent``: ``create_react_agent`` and custom ``StateGraph``s.

Injection and logging are separate here. Skills go in through a hook or a helper that builds
the model's input messages (never the saved state); the run is logged by a
:class:`~skillbank.adapters.callbacks.SkillBankCallbackHandler` passed in the invocation's
config, which also sees which skill versions each model call carried:

    handler = SkillBankCallbackHandler(bank)
    agent = create_react_agent(model, tools, pre_model_hook=skillbank_hook(bank, system_prompt="..."))
    agent.invoke({"messages": [("user", "...")]}, config={"callbacks": [handler]})

In a custom graph's model node:

    def call_model(state):
        return {"messages": [model.invoke(inject_skills(bank, state["messages"]))]}
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.injection import GENERAL_K, SkillInjector, inject_skills
from skillbank.models import Skill

__all__ = ["skillbank_hook", "inject_skills", "SkillBankCallbackHandler"]


def skillbank_hook(
    bank: Any,
    *,
    system_prompt: str | None = None,
    k: int = 5,
    token_budget: int | None = 1200,
    history: int = 4,
    pinned: Iterable[str] = (),
    general_k: int = GENERAL_K,
    filter: Callable[[Skill], bool] | None = None,
    kinds: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
    min_score: float = 0.0,
    message_chars: int = 100,
) -> Callable[[Any], dict[str, Any]]:
    """A ``pre_model_hook`` for ``create_react_agent`` that injects skills for each model call.

    It returns ``{"llm_input_messages": [...]}``: the conversation with the skills in a system
    message, used for this call only and never written to ``messages``. The skills are merged
    into a leading system message in the conversation if there is one. ``create_react_agent``
    applies its own ``prompt=`` *after* the hook, as a second system message; to keep a single
    system message (some providers want exactly one) pass your prompt here as ``system_prompt``
    instead of ``prompt=``. The options are :class:`SkillInjector`'s.
    """
    injector = SkillInjector(bank, k=k, token_budget=token_budget, history=history, min_score=min_score,
                             pinned=pinned, general_k=general_k, filter=filter, kinds=kinds, tags=tags,
                             tools=tools, message_chars=message_chars)

    def skillbank_pre_model_hook(state: Any) -> dict[str, Any]:
        messages = state.get("messages", []) if isinstance(state, dict) else getattr(state, "messages", [])
        return {"llm_input_messages": injector.inject_messages(messages, system_prompt=system_prompt)}

    skillbank_pre_model_hook.injector = injector  # type: ignore[attr-defined]
    return skillbank_pre_model_hook
