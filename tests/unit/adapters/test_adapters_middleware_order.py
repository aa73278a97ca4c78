"""The three middleware parts work in any order in a plain ``create_agent`` list.

They share one run context per run and one call context per call
(:mod:`skillbank.adapters._run_context`), so whichever order a user lists them in, the stored run
is the same as the composite's: the skills injected at each model call, a reminder step where
the injection answered a call with its lesson, the budget's stop as a limit event, the label.
"""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool

from conftest import check_first
from skillbank import BudgetConfig, InjectionConfig, RecordingConfig, SkillBankMiddleware
from skillbank.adapters._budget_middleware import RunBudgetMiddleware
from skillbank.adapters._injection_middleware import SkillInjectionMiddleware
from skillbank.adapters._recording_middleware import SkillRecordingMiddleware
from skillbank.adapters._run_context import agent_runs
from skillbank.adapters.testing import ScriptedChatModel, tool_call


@tool
def get_order(order_id: str) -> str:
    """Look an order up: its status and whether it may be refunded."""
    return json.dumps({"order_id": order_id, "status": "delivered", "refundable": True})


@tool
def refund(order_id: str) -> str:
    """Refund an order. Call get_order first."""
    return json.dumps({"refunded": order_id})


# The refund skips its check (answered with the lesson: a reminder step), the check runs, the
# refund runs, a needless look-up, and the fifth model call is over the token budget (4 x 120).
SCRIPT = [tool_call("refund", order_id="A1"), tool_call("get_order", order_id="A1"),
          tool_call("refund", order_id="A1"), tool_call("get_order", order_id="A1"), "Refunded."]
USAGE = {"input_tokens": 100, "output_tokens": 20}
INJECTION = InjectionConfig(k=3, reminders=True)
RECORDING = RecordingConfig()
BUDGET = BudgetConfig(max_tokens_per_run=400)


@pytest.fixture
def refund_bank(bank):
    bank.add_skill(name="refund-orders", description="refund an order after looking it up",
                   kind="procedure", tools=["get_order", "refund"], lessons=[check_first("get_order", "refund")])
    return bank


def stored_run(bank, middleware, mode):
    model = ScriptedChatModel(SCRIPT, cycle=False, usage=USAGE)
    agent = create_agent(model, [get_order, refund], system_prompt="Be brief.", middleware=middleware)
    inputs = {"messages": [("user", "refund my order A1")]}
    result = asyncio.run(agent.ainvoke(inputs)) if mode == "async" else agent.invoke(inputs)
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    steps = [(s.index, s.kind, s.tool, s.args, s.content, s.result, s.error, s.input_messages,
              [c["name"] for c in s.tool_calls or []]) for s in traj.steps]
    injections = sorted((i.step, i.skill_id, i.version, i.rank) for i in traj.injections)
    limits = [(e.type, e.step) for e in traj.limit_events]
    return {"steps": steps, "injections": injections, "limits": limits, "status": traj.status,
            "outcome": (traj.outcome.success, traj.outcome.source), "model_calls": len(model.received)}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_parts_in_every_order_store_the_composites_run(refund_bank, mode):
    expected = stored_run(refund_bank, [SkillBankMiddleware(refund_bank, injection=INJECTION, recording=RECORDING,
                                                            budget=BUDGET)], mode)
    # what the scenario is meant to exercise, so "the same" is not "the same nothing"
    assert [s[1] for s in expected["steps"]] == ["model", "reminder", "model", "tool", "model", "tool",
                                                 "model", "tool"]
    assert expected["model_calls"] == 4 and expected["outcome"] == (False, "limit:token_budget")
    reminder_step = expected["steps"][1][0]
    assert any(step == reminder_step for step, *_ in expected["injections"])  # the lesson's skill, at the reminder
    assert {step for step, *_ in expected["injections"]} >= {0, 2, 4, 6}  # every model call got the skill
    for order in itertools.permutations(("budget", "injection", "recording")):
        parts = {"budget": RunBudgetMiddleware(BUDGET),
                 "injection": SkillInjectionMiddleware(refund_bank, INJECTION),
                 "recording": SkillRecordingMiddleware(refund_bank, RECORDING)}
        assert stored_run(refund_bank, [parts[name] for name in order], mode) == expected, order
    assert len(agent_runs()) == 0  # every run's context was let go of


def test_a_budget_given_to_the_recording_fails_with_where_it_went(bank):
    with pytest.raises(TypeError, match="BudgetConfig"):
        RecordingConfig(max_tokens_per_run=100)
    with pytest.raises(TypeError, match="max_seconds_per_run"):  # not a recording option
        SkillRecordingMiddleware(bank, max_seconds_per_run=5)
    # the composite takes them, as keywords or as a config
    assert SkillBankMiddleware(bank, max_tokens_per_run=100).budget_middleware.budget.max_tokens_per_run == 100
    assert SkillBankMiddleware(bank, budget=BUDGET).budget_middleware.budget == BUDGET
