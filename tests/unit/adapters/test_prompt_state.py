"""What a run was shown lives in the agent's state: a run resumed by another process goes on as it was.

The prompt part writes each run's block, exposure draw and call history to a private, checkpointed
channel (``skillbank_shown``), so a run paused by an ``interrupt()`` and resumed by an agent built
afresh (a new process, another worker: new middleware objects, the same checkpointer and bank)
keeps its skills at the versions first shown, its holdout arms and what its reminders know.
"""

from __future__ import annotations

import json

import pytest

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, hook_config
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, interrupt

from conftest import check_first
from skillbank import InjectionConfig, SkillBankMiddleware
from skillbank.adapters._budget_middleware import RunBudgetMiddleware
from skillbank.adapters._prompt_middleware import SHOWN_KEY, RunSkills, SkillPromptMiddleware
from skillbank.adapters._recording_middleware import SkillRecordingMiddleware
from skillbank.adapters.injection import SHOWN_CALL_KEY
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.live import LiveConfig

USAGE = {"input_tokens": 100, "output_tokens": 20}
CONFIG = {"configurable": {"thread_id": "refund-thread"}}


@tool
def get_order(order_id: str) -> str:
    """Look an order up: its status and whether it may be refunded."""
    ran.append(("get_order", order_id))
    return json.dumps({"order_id": order_id, "refundable": True})


@tool
def refund(order_id: str) -> str:
    """Refund an order. Call get_order first."""
    ran.append(("refund", order_id))
    return json.dumps({"refunded": order_id})


@tool
def confirm() -> str:
    """Ask the human before refunding."""
    return f"human said {interrupt('refund it?')}"


ran: list[tuple[str, str]] = []


def refund_bank(bank, *, canary=True):
    bank.add_skill(name="refund-orders", description="refund an order after looking it up",
                   kind="procedure", tools=["get_order", "refund"], lessons=[check_first("get_order", "refund")])
    if not canary:
        return bank
    # in canary: shown to half the runs it is eligible for, its arm drawn once a run
    bank.add_skill(name="refund-tone", description="refund an order and say so plainly", body="Say it is refunded.",
                   tags=["canary"])
    return bank


def agent_on(bank, checkpointer, model, **options):
    """A freshly built agent: new middleware objects, as another process would build them."""
    mw = SkillBankMiddleware(bank, k=3, **options)
    return mw, create_agent(model, [get_order, refund, confirm], middleware=[mw], checkpointer=checkpointer)


def test_a_run_resumed_by_another_process_keeps_its_block_its_draw_and_its_call_history(bank):
    refund_bank(bank)
    ran.clear()
    script = [tool_call("get_order", order_id="A1"), tool_call("confirm"), tool_call("refund", order_id="A1"),
              "Refunded."]
    saver = InMemorySaver()
    live = LiveConfig(holdout=0.0, canary_exposure=0.5)
    _, first_agent = agent_on(bank, saver, ScriptedChatModel(script, cycle=False), live=live)
    paused = first_agent.invoke({"messages": [("user", "refund my order A1")]}, CONFIG)
    assert "__interrupt__" in paused
    shown_before = first_agent.get_state(CONFIG).values[SHOWN_KEY]["SkillPromptMiddleware"]
    # The skill changes while the run waits: the run goes on with the version it was shown.
    skill = bank.get_skill("refund-orders")
    bank.update_skill(skill.id, reason="edited while a run waits", body="Check the order, then refund it.")

    mw, second_agent = agent_on(bank, saver, ScriptedChatModel(script[2:], cycle=False), live=live)
    done = second_agent.invoke(Command(resume="yes"), CONFIG)

    # get_order ran before the pause, so the refund after it runs (a fresh history would remind)
    assert ran == [("get_order", "A1"), ("refund", "A1")]
    traj = bank.trajectories.get(done["skillbank_trajectory_id"])
    assert traj.id == paused["skillbank_trajectory_id"]
    assert "reminder" not in [s.kind for s in traj.steps]
    by_step = {}
    for i in traj.injections:
        by_step.setdefault(i.step, []).append((i.skill_id, i.version))
    model_steps = [s.index for s in traj.steps if s.kind == "model"]
    assert len(model_steps) == 4
    assert len({tuple(by_step.get(step, ())) for step in model_steps}) == 1  # one block, all run long
    assert (skill.id, skill.version) in by_step[model_steps[-1]]  # the version first shown
    # one arm for the canary for the whole run: the resumed run drew nothing again
    assert [r.skill_id for r in bank.exposures.for_run(traj.id)] == [bank.get_skill("refund-tone").id]
    shown_after = second_agent.get_state(CONFIG).values[SHOWN_KEY]["SkillPromptMiddleware"]
    assert shown_after["block"]["run_id"] == shown_before["block"]["run_id"]
    assert mw.prompt_middleware.injected  # the new process counts what it showed


def test_the_threads_next_run_starts_a_new_block(bank):
    refund_bank(bank)
    saver = InMemorySaver()
    _, agent = agent_on(bank, saver, ScriptedChatModel(["Done."]))
    agent.invoke({"messages": [("user", "refund my order A1")]}, CONFIG)
    first = agent.get_state(CONFIG).values[SHOWN_KEY]["SkillPromptMiddleware"]
    agent.invoke({"messages": [("user", "and refund order B2")]}, CONFIG)
    state = agent.get_state(CONFIG).values
    second = state[SHOWN_KEY]["SkillPromptMiddleware"]
    assert second["block"]["run_id"] != first["block"]["run_id"]
    assert second["human"] == state["messages"][-2].id and second["task"] == "and refund order B2"
    assert SHOWN_KEY not in agent.invoke({"messages": [("user", "thanks")]}, CONFIG)  # private


class AnswersTheQuestion(AgentMiddleware):
    """Plays the user inside the run: a question the agent ends its turn with is answered, and
    the loop goes back to the model (one graph run, two human messages)."""

    @hook_config(can_jump_to=["model"])
    def after_model(self, state, runtime):
        last = state["messages"][-1]
        if last.tool_calls or not str(last.content).endswith("?"):
            return None
        return {"messages": [HumanMessage("Order A1.")], "jump_to": "model"}


def test_a_human_message_inside_the_run_continues_it(bank):
    refund_bank(bank)
    ran.clear()
    model = ScriptedChatModel([tool_call("get_order", order_id="A1"), "Which order?",
                               tool_call("refund", order_id="A1"), "Refunded."], cycle=False)
    mw = SkillBankMiddleware(bank, k=3, live=LiveConfig(holdout=0.0, canary_exposure=0.5))
    result = create_agent(model, [get_order, refund], middleware=[AnswersTheQuestion(), mw]).invoke(
        {"messages": [("user", "refund my order")]})
    # one run: get_order ran before the question, so the refund after the answer runs
    assert ran == [("get_order", "A1"), ("refund", "A1")]
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert [s.kind for s in traj.steps].count("model") == 4 and "reminder" not in [s.kind for s in traj.steps]
    assert len(bank.exposures.for_run(traj.id)) == 1  # the canary's arm, drawn once


def test_a_call_a_budget_answers_shows_nothing_wherever_the_budget_sits(bank):
    refund_bank(bank, canary=False)

    def counts(order):
        prompt = SkillPromptMiddleware(bank, InjectionConfig(k=3))
        parts = {"prompt": prompt, "budget": RunBudgetMiddleware(max_tokens_per_run=300)}
        model = ScriptedChatModel([tool_call("get_order", order_id="A1")], usage=USAGE)
        create_agent(model, [get_order, refund], middleware=[parts[name] for name in order]).invoke(
            {"messages": [("user", "refund my order A1")]})
        return len(model.received), prompt.model_calls, dict(prompt.injected)

    outside, inside = counts(("budget", "prompt")), counts(("prompt", "budget"))
    assert outside == inside
    calls, shown, injected = outside
    assert calls == shown == 3 and set(injected.values()) == {3}  # the fourth call was the budget's


def test_what_a_run_was_shown_is_stored_as_plain_data_and_read_back(bank):
    refund_bank(bank)
    prompt = SkillPromptMiddleware(bank, InjectionConfig(k=3, live=LiveConfig(holdout=0.5)))
    model = ScriptedChatModel([tool_call("get_order", order_id="A1"), "Done."], cycle=False)
    agent = create_agent(model, [get_order, refund], middleware=[prompt], checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "refund my order A1")]}, CONFIG)
    record = agent.get_state(CONFIG).values[SHOWN_KEY][prompt.name]
    serde = JsonPlusSerializer()
    stored = serde.loads_typed(serde.dumps_typed(record))
    restored = RunSkills.restore(stored, prompt._skill_at)
    assert restored.record() == record
    assert [h.skill.id for h in restored.block.hits] == [sid for sid, _, _ in record["block"]["hits"]]


def test_the_verifier_gets_the_agents_state_without_the_calls_handoff(bank):
    # A run the step limit ends is labelled from the last state the recording saw: that state
    # is the agent's, not the request state the parts hand each other.
    refund_bank(bank, canary=False)
    seen = []
    prompt = SkillPromptMiddleware(bank, InjectionConfig(k=3))
    recording = SkillRecordingMiddleware(bank, verifier=lambda state: seen.append(set(state)) or True)
    model = ScriptedChatModel([tool_call("get_order", order_id="A1")])
    agent = create_agent(model, [get_order, refund], middleware=[prompt, recording])
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [("user", "refund my order A1")]}, {"recursion_limit": 5})
    assert seen and SHOWN_CALL_KEY not in seen[0] and "messages" in seen[0]
    traj = bank.trajectories.get(recording.last_trajectory_id)
    model_steps = {s.index for s in traj.steps if s.kind == "model"}
    assert model_steps and {i.step for i in traj.injections} == model_steps  # the recording inside saw the skills
