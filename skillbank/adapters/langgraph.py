"""LangGraph without ``create_agent``: ``create_react_agent`` and custom ``StateGraph``s.

Injection and logging are separate here. Skills go into the model's input (never the saved
state) through ``create_react_agent``'s ``prompt``; the run is logged by a
:class:`~skillbank.adapters.callbacks.SkillBankCallbackHandler` passed in the invocation's
config, which also sees which skill versions each model call carried:

    handler = SkillBankCallbackHandler(bank, verifier=check)
    agent = create_react_agent(model, tools, prompt=skillbank_prompt(bank, system_prompt="..."))
    agent.invoke({"messages": [("user", "...")]}, config={"callbacks": [handler]})

Neither costs the agent a step: the prompt runs inside the agent's model node, the handler is a
callback. (``skillbank_hook``, a ``pre_model_hook``, does the same as the prompt but is a graph
node of its own: one superstep per model turn against ``recursion_limit``.)

In a custom graph's model node:

    def call_model(state):
        return {"messages": [model.invoke(inject_skills(bank, state["messages"]))]}
"""

from __future__ import annotations

from typing import Any, Callable

from langchain_core.messages import BaseMessage

from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.config import InjectionConfig
from skillbank._config_keywords import with_options
from skillbank.adapters.injection import RunBlocks, SkillInjector, inject_skills
from skillbank.messages import state_messages
from skillbank.protocols import SkillSource

__all__ = ["skillbank_prompt", "skillbank_hook", "inject_skills", "SkillBankCallbackHandler"]

# create_react_agent's node names: the prompt runs inside "agent", a pre-model hook is its own node.
_AGENT_NODE = "agent"
_HOOK_NODE = "pre_model_hook"


def skillbank_prompt(bank: SkillSource, *, system_prompt: str | None = None,
                     injection: InjectionConfig | None = None,
                     k: int | None = None) -> Callable[[Any], list[BaseMessage]]:
    """A ``prompt`` for ``create_react_agent`` that puts the skills into each model call.

    It returns the conversation behind one system message: ``system_prompt`` (pass your prompt
    here instead of ``prompt=``), or the conversation's own leading system message, with the
    skills appended. ``injection`` (an :class:`~skillbank.adapters.config.InjectionConfig`) and
    ``k`` are :class:`~skillbank.adapters.injection.SkillInjector`'s. The injected block stays
    the same through a run unless a new skill becomes relevant.

    Args:
        bank: A :class:`~skillbank.protocols.SkillSource` (a bank) to draw skills from.
        system_prompt: Your system prompt, put first; ``None``: the conversation's own leading
            system message, if any.
        injection: What to inject; ``None``: the defaults (with ``k``).
        k: Retrieved skills per turn at most (``InjectionConfig.k``); ``None``: the config's.

    Returns:
        A callable ``state -> messages`` to pass as ``create_react_agent(prompt=...)``; its
        ``injector`` attribute is the :class:`~skillbank.adapters.injection.SkillInjector` it uses.

    Raises:
        TypeError: ``k`` given along with ``injection``.
    """
    injector = SkillInjector(bank, with_options(injection, InjectionConfig, owner="skillbank_prompt",
                                                argument="injection", options={"k": k}))
    blocks = RunBlocks(_AGENT_NODE)

    def skillbank_react_prompt(state: Any) -> list[BaseMessage]:
        return injector.inject_messages(state_messages(state), system_prompt=system_prompt, block=blocks.current())

    skillbank_react_prompt.injector = injector  # type: ignore[attr-defined]
    return skillbank_react_prompt


def skillbank_hook(bank: SkillSource, *, system_prompt: str | None = None,
                   injection: InjectionConfig | None = None,
                   k: int | None = None) -> Callable[[Any], dict[str, Any]]:
    """A ``pre_model_hook`` for ``create_react_agent`` that injects skills for each model call.

    Prefer :func:`skillbank_prompt`: a pre-model hook is a graph node, so it costs the agent one
    superstep of ``recursion_limit`` per model turn. The hook returns
    ``{"llm_input_messages": [...]}``: the conversation with the skills in a system message, used
    for this call only and never written to ``messages``. ``create_react_agent`` applies its own
    ``prompt=`` *after* the hook, as a second system message; to keep a single system message
    pass your prompt here as ``system_prompt``. ``injection`` and ``k`` are ``SkillInjector``'s.
    """
    injector = SkillInjector(bank, with_options(injection, InjectionConfig, owner="skillbank_hook",
                                                argument="injection", options={"k": k}))
    blocks = RunBlocks(_HOOK_NODE)

    def skillbank_pre_model_hook(state: Any) -> dict[str, Any]:
        messages = injector.inject_messages(state_messages(state), system_prompt=system_prompt, block=blocks.current())
        return {"llm_input_messages": messages}

    skillbank_pre_model_hook.injector = injector  # type: ignore[attr-defined]
    return skillbank_pre_model_hook
