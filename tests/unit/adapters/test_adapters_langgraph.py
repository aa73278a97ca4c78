"""Agents not built with create_agent: create_react_agent with skillbank_hook, and a custom
StateGraph with inject_skills, both logged by SkillBankCallbackHandler."""

from __future__ import annotations

import asyncio
import threading
import warnings
from typing import Annotated, TypedDict

import pytest
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from skillbank import SkillBank
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.config import InjectionConfig, RecordingConfig
from skillbank.adapters.injection import INJECTION_METADATA_KEY
from skillbank.adapters.langgraph import inject_skills, skillbank_hook
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.models import LimitType

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:.*create_react_agent.*")

PROMPT = "You operate a smart home. Be brief."


@pytest.fixture
def bank(tmp_path):
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    b.add_skill(name="lights-before-blinds", description="turning on the lights and closing the blinds",
                body="Switch the lights on before closing the blinds.")
    b.add_skill(name="thermostat-range", description="setting the thermostat temperature",
                body="Keep the thermostat between 16 and 26 degrees.")
    yield b
    b.close()


@tool
def lights(on: bool) -> str:
    """Switch the lights."""
    return f"lights {'on' if on else 'off'}"


@tool
def thermostat() -> str:
    """Read the thermostat."""
    return '{"temperature": 21, "mode": null}'


@tool
def broken() -> str:
    """Always fails."""
    raise ConnectionError("hub unreachable")


def limits(traj):
    return [(e.type, e.step) for e in traj.limit_events]


# -- create_react_agent -----------------------------------------------------------------------


def test_react_agent_hook_injects_per_call_and_handler_records_everything(bank):
    model = ScriptedChatModel([
        tool_call("lights", on=True),
        tool_call("blinds", closed=True),        # not in the toolset
        tool_call("lights", on="maybe"),         # fails validation
        tool_call("thermostat"),                 # mode comes back null
        "Lights on; I have no blinds tool.",
    ])
    handler = SkillBankCallbackHandler(bank)
    agent = create_react_agent(model, [lights, thermostat],
                               pre_model_hook=skillbank_hook(bank, system_prompt=PROMPT, k=1))
    result = agent.invoke({"messages": [("user", "turn on the lights and close the blinds")]},
                          config={"callbacks": [handler]})

    # injected for the call only: the saved conversation has no system message and no skills
    assert result["messages"][0].type == "human"
    assert not any(isinstance(m, SystemMessage) for m in result["messages"])
    for received in model.received:
        assert received[0].type == "system"
        assert received[0].text.startswith(PROMPT)
        assert '<skill name="lights-before-blinds"' in received[0].text

    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "complete" and traj.task == "turn on the lights and close the blinds"
    assert traj.model == "scripted-chat-model" and traj.bank_snapshot == bank.snapshot_id()
    assert traj.final_answer == "Lights on; I have no blinds tool."
    assert [(s.kind, s.tool) for s in traj.steps] == [
        ("model", None), ("tool", "lights"), ("model", None), ("tool", "blinds"),
        ("model", None), ("tool", "lights"), ("model", None), ("tool", "thermostat"), ("model", None)]
    assert traj.steps[1].args == {"on": True} and traj.steps[1].result == "lights on"
    assert traj.input_tokens > 0 and traj.output_tokens > 0
    assert all(s.input_tokens for s in traj.steps if s.kind == "model")
    skill_id = bank.get_skill("lights-before-blinds").id
    assert [(i.step, i.skill_id, i.version, i.rank) for i in traj.injections] == [
        (step, skill_id, 1, 0) for step in (0, 2, 4, 6, 8)]
    assert limits(traj) == [(LimitType.missing_tool, 3), (LimitType.invalid_tool_args, 5),
                            (LimitType.unknown_field, 7)]


def test_react_agent_need_more_steps_is_a_step_limit(bank):
    handler = SkillBankCallbackHandler(bank)
    agent = create_react_agent(ScriptedChatModel([tool_call("lights", on=True)]), [lights],
                               pre_model_hook=skillbank_hook(bank))
    # With a pre_model_hook each turn is three graph steps; at this limit the agent itself
    # notices it is out of steps and answers so.
    result = agent.invoke({"messages": [("user", "flick the lights forever")]},
                          config={"callbacks": [handler], "recursion_limit": 9})
    assert result["messages"][-1].content == "Sorry, need more steps to process this request."
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "complete" and traj.final_answer == result["messages"][-1].content
    assert limits(traj) == [(LimitType.step_limit, len(traj.steps) - 1)]


def test_react_agent_recursion_error_and_tool_error(bank):
    handler = SkillBankCallbackHandler(bank)
    agent = create_react_agent(ScriptedChatModel([tool_call("lights", on=True)]), [lights],
                               pre_model_hook=skillbank_hook(bank))
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [("user", "flick the lights")]},
                     config={"callbacks": [handler], "recursion_limit": 7})
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "incomplete" and traj.error.startswith("GraphRecursionError")
    assert [t for t, _ in limits(traj)] == [LimitType.recursion_limit]

    agent = create_react_agent(ScriptedChatModel([tool_call("broken"), "never"]), [broken])
    with pytest.raises(ConnectionError):
        agent.invoke({"messages": [("user", "use the hub")]}, config={"callbacks": [handler]})
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "incomplete" and traj.error == "ConnectionError: hub unreachable"
    assert limits(traj) == [(LimitType.tool_error, 1)]
    assert traj.injections == []  # no hook, nothing injected


def test_react_agent_async_and_concurrent_runs_share_one_handler(bank):
    def script(messages):
        task = next(m.content for m in messages if m.type == "human")
        if not any(m.type == "tool" for m in messages):
            return tool_call("lights", on=True)
        return f"done: {task}"

    handler = SkillBankCallbackHandler(bank)
    agent = create_react_agent(ScriptedChatModel([script]), [lights], pre_model_hook=skillbank_hook(bank))

    async def main():
        return await asyncio.gather(*(agent.ainvoke({"messages": [("user", f"lights please {i}")]},
                                                    config={"callbacks": [handler]}) for i in range(5)))

    asyncio.run(main())
    threads = [threading.Thread(target=agent.invoke, args=({"messages": [("user", f"lights thread {i}")]},),
                                kwargs={"config": {"callbacks": [handler]}}) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(handler.trajectory_ids)) == 10
    for tid in handler.trajectory_ids:
        traj = bank.trajectories.get(tid)
        assert traj.status == "complete" and traj.final_answer == f"done: {traj.task}"
        assert [s.kind for s in traj.steps] == ["model", "tool", "model"]
        assert {i.step for i in traj.injections} == {0, 2}


def test_handler_verifier_and_run_id_lookup(bank):
    import uuid

    handler = SkillBankCallbackHandler(bank, recording=RecordingConfig(
        verifier=lambda out: "on" in out["messages"][-1].content, labels={"arm": "react"}))
    agent = create_react_agent(ScriptedChatModel(["the lights are on"]), [lights])
    run_id = uuid.uuid4()
    agent.invoke({"messages": [("user", "lights")]}, config={"callbacks": [handler], "run_id": run_id})
    tid = handler.trajectory_id_for(run_id)
    traj = bank.trajectories.get(tid)
    assert traj.outcome.success is True and traj.outcome.source == "verifier"
    assert traj.labels == {"arm": "react"}


# -- a custom StateGraph ----------------------------------------------------------------------


class State(TypedDict):
    messages: Annotated[list, add_messages]


def build_graph(model, tools, **inject_options):
    def call_model(state):
        return {"messages": [model.invoke(inject_skills(bank_ref["bank"], state["messages"],
                                                        system_prompt=PROMPT, **inject_options))]}

    bank_ref: dict = {}
    g = StateGraph(State)
    g.add_node("model", call_model)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "model")
    g.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    g.add_edge("tools", "model")
    return g.compile(), bank_ref


def test_custom_state_graph_with_inject_skills_and_handler(bank):
    model = ScriptedChatModel([tool_call("thermostat"), "It is 21 degrees."])
    graph, ref = build_graph(model, [thermostat], k=2)
    ref["bank"] = bank
    handler = SkillBankCallbackHandler(bank)
    graph.invoke({"messages": [("user", "what is the thermostat temperature")]}, config={"callbacks": [handler]})

    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "complete" and traj.final_answer == "It is 21 degrees."
    assert [(s.kind, s.tool) for s in traj.steps] == [("model", None), ("tool", "thermostat"), ("model", None)]
    first = [i for i in traj.injections if i.step == 0]
    assert first[0].skill_id == bank.get_skill("thermostat-range").id
    assert [i.rank for i in first] == list(range(len(first)))
    assert model.received[0][0].text.startswith(PROMPT)
    assert "Keep the thermostat between 16 and 26 degrees." in model.received[0][0].text
    assert limits(traj) == [(LimitType.unknown_field, 1)]


def test_custom_graph_failure_and_recursion(bank):
    model = ScriptedChatModel([tool_call("thermostat")])
    graph, ref = build_graph(model, [thermostat])
    ref["bank"] = bank
    handler = SkillBankCallbackHandler(bank)
    with pytest.raises(GraphRecursionError):
        graph.invoke({"messages": [("user", "loop")]}, config={"callbacks": [handler], "recursion_limit": 4})
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "incomplete"
    assert [t for t, _ in limits(traj)][-1] == LimitType.recursion_limit
    assert traj.limit_events[-1].step == len(traj.steps) - 1

    class RateLimitError(Exception):
        pass

    graph, ref = build_graph(ScriptedChatModel([RateLimitError("Too Many Requests")]), [thermostat])
    ref["bank"] = bank
    with pytest.raises(RateLimitError):
        graph.invoke({"messages": [("user", "x")]}, config={"callbacks": [handler]})
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "incomplete" and limits(traj) == [(LimitType.rate_limit, 0)]
    assert traj.steps[0].error.startswith("RateLimitError")


def test_inject_skills_leaves_messages_alone_when_nothing_fits(bank):
    from langchain_core.messages import HumanMessage

    msgs = [SystemMessage("base"), HumanMessage("turn on the lights")]
    out = inject_skills(bank, msgs, injection=InjectionConfig(token_budget=10))
    assert out == msgs
    out = inject_skills(bank, msgs)
    assert out[0].text.startswith("base\n\n<skills>") and out[1] is msgs[1]
    assert msgs[0].content == "base"  # the caller's message is not modified
    meta = out[0].response_metadata[INJECTION_METADATA_KEY]
    assert meta[0]["name"] == "lights-before-blinds" and meta[0]["rank"] == 0


def test_handler_records_a_plain_chain_and_a_bare_model(bank):
    handler = SkillBankCallbackHandler(bank)
    model = ScriptedChatModel(["forty-two"])
    chain = RunnableLambda(lambda q: [("user", q)]) | model
    chain.invoke("what is six times seven", config={"callbacks": [handler]})
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.task == "what is six times seven" and traj.final_answer == "forty-two"
    assert [s.kind for s in traj.steps] == ["model"]

    model.invoke("just the model", config={"callbacks": [handler]})
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "complete" and traj.task == "just the model" and len(traj.steps) == 1


def test_handler_on_a_thread_records_only_each_runs_own_steps(bank):
    from langgraph.checkpoint.memory import InMemorySaver

    handler = SkillBankCallbackHandler(bank)
    model = ScriptedChatModel([tool_call("blinds"), "no blinds tool", "hello again"], cycle=False)
    agent = create_react_agent(model, [lights], checkpointer=InMemorySaver())
    config = {"callbacks": [handler], "configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [("user", "close the blinds")]}, config)
    agent.invoke({"messages": [("user", "hi")]}, config)
    first, second = (bank.trajectories.get(t) for t in handler.trajectory_ids)
    assert limits(first) == [(LimitType.missing_tool, 1)]
    assert second.task == "hi" and second.final_answer == "hello again"
    assert [s.kind for s in second.steps] == ["model"] and second.limit_events == []
