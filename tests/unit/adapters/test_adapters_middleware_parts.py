"""SkillBankMiddleware's three parts, each one concern: injection, recording, run budgets.

Each works alone in ``create_agent``, costs no node, and tells the others what they need only
through the call's own messages; the gate runs with the injection part alone.
"""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from skillbank import SkillBank
from skillbank.adapters._budget_middleware import RunBudgetMiddleware
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.injection import injections_from_messages
from skillbank.adapters._injection_middleware import SkillInjectionMiddleware
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.limits import limit_from_message
from skillbank.adapters._recording_middleware import SkillRecordingMiddleware
from skillbank.adapters._run_context import agent_runs
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.models import LimitType

USAGE = {"input_tokens": 100, "output_tokens": 20}


@pytest.fixture
def bank(tmp_path):
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    b.add_skill(name="ping-politely", description="pinging a server", body="Ping once, then answer.")
    yield b
    b.close()


@tool
def ping() -> str:
    """Ping the server."""
    return "pong"


@pytest.mark.parametrize("cls", [SkillInjectionMiddleware, SkillRecordingMiddleware, RunBudgetMiddleware,
                                 SkillBankMiddleware])
def test_every_part_works_only_inside_the_model_and_tool_calls(cls):
    # before_*/after_* hooks would be graph nodes, a superstep each (tests/unit/adapters/test_capture_costs.py).
    for hook in ("before_agent", "before_model", "after_model", "after_agent"):
        for name in (hook, f"a{hook}"):
            assert getattr(cls, name) is getattr(AgentMiddleware, name), f"{cls.__name__}.{name}"


def test_the_composite_is_its_parts(bank):
    mw = SkillBankMiddleware(bank, k=2, verifier=bool)
    assert mw.budget_middleware is None  # no budget set: no budget part
    assert mw.prompt_middleware.config is mw.injection and mw.recording_middleware.recording is mw.recording
    assert SkillBankMiddleware(bank, max_seconds_per_run=5).budget_middleware.max_seconds_per_run == 5
    create_agent(ScriptedChatModel(["done"]), [ping], middleware=[mw]).invoke({"messages": [("user", "ping it")]})
    assert mw.recording_middleware.last_trajectory_id is not None
    assert mw.prompt_middleware.retrieval_seconds > 0
    # no forwarding: what a part counts is read on the part
    assert not hasattr(mw, "last_trajectory_id") and not hasattr(mw, "retrieval_seconds")
    # the run's context was let go of when the run ended
    assert len(agent_runs()) == 0


def test_the_injection_part_alone_injects_records_nothing_and_counts(bank):
    model = ScriptedChatModel([tool_call("ping"), "done"])
    mw = SkillInjectionMiddleware(bank, k=2)
    create_agent(model, [ping], system_prompt="Be brief.", middleware=[mw]).invoke(
        {"messages": [("user", "ping the server")]})
    skill = bank.get_skill("ping-politely")
    # the system message the model got carries the skills and the record of what they are
    for received in model.received:
        assert "ping-politely" in received[0].text
        assert [sid for sid, _, _ in injections_from_messages(received)] == [skill.id]
    assert mw.injected[skill.id] == 2  # two model calls
    assert not bank.trajectories.list()


def test_the_budget_part_alone_ends_the_run_with_a_message_that_carries_the_limit(bank):
    model = ScriptedChatModel([tool_call("ping")], usage=USAGE)
    handler = SkillBankCallbackHandler(bank)
    agent = create_agent(model, [ping], middleware=[RunBudgetMiddleware(max_tokens_per_run=300)])
    result = agent.invoke({"messages": [("user", "ping")]}, config={"callbacks": [handler]})
    assert len(model.received) == 3  # 3 x 120 tokens > 300: the fourth call never happens
    signal = limit_from_message(result["messages"][-1])
    assert signal.type == LimitType.token_budget and signal.data == {"used": 360, "budget": 300}
    # so any recorder reads it, here the callback handler: an event, and a failure at that limit
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert [e.type for e in traj.limit_events] == [LimitType.token_budget]
    assert traj.outcome.success is False and traj.outcome.source == "limit:token_budget"


def test_a_paused_run_keeps_what_its_parts_keep_when_it_resumes(bank):
    # The budget counts the tokens spent before the pause: 120 before, 240 after one more call,
    # over 200, so the third call never happens (a fresh count would allow it).
    @tool
    def confirm() -> str:
        """Ask the human."""
        return f"human said {interrupt('go on?')}"

    model = ScriptedChatModel([tool_call("confirm"), tool_call("ping"), tool_call("ping"), "done"],
                              cycle=False, usage=USAGE)
    mw = SkillBankMiddleware(bank, k=2, max_tokens_per_run=200)
    agent = create_agent(model, [confirm, ping], middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "paused"}}
    first = agent.invoke({"messages": [("user", "ping after asking")]}, config)
    assert "__interrupt__" in first
    second = agent.invoke(Command(resume="yes"), config)
    assert len(model.received) == 2
    traj = bank.trajectories.get(second["skillbank_trajectory_id"])
    assert traj.id == first["skillbank_trajectory_id"] and traj.status == "complete"
    assert [e.type for e in traj.limit_events] == [LimitType.token_budget]
    # the injected block went on as it was: the same skills at both model calls
    before, after = ([i.skill_id for i in traj.injections if i.step == s.index] for s in traj.steps
                     if s.kind == "model")
    assert before and after == before
    assert len(agent_runs()) == 0
