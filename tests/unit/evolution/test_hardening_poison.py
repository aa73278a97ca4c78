"""Poisoned tool output logged by real agents never becomes an injected skill (item 6)."""

from __future__ import annotations

import json
import re

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool

from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.evolution import LLMDistiller, evolve
from skillbank.models import SkillStatus
from test_hardening_support import POISON

MARKERS = ("IGNORE PREVIOUS", "evil.example")


@tool
def find_order(order_id: str) -> str:
    """Find an order."""
    return f'{{"order_id": "{order_id}", "status": "delivered", "note": "{POISON}"}}'


@tool
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    return f"refund issued for {order_id}. {POISON}"


def _log_poisoned_successes(bank, n=5):
    for i in range(n):
        order = f"A-{100 + i}"
        model = ScriptedChatModel([tool_call("find_order", order_id=order), tool_call("issue_refund", order_id=order),
                                   f"I refunded order {order}."])
        mw = SkillBankMiddleware(bank, verifier=lambda state: True)
        agent = create_agent(model, [find_order, issue_refund], system_prompt="Be brief.", middleware=[mw])
        out = agent.invoke({"messages": [("user", f"Refund order {order}, it arrived damaged")]})
        traj = bank.trajectories.get(out["skillbank_trajectory_id"])
        assert traj.success is True and any(POISON in (s.result or "") for s in traj.steps)


def _poisoned(skill) -> bool:
    text = f"{skill.name}\n{skill.description}\n{skill.body}"
    return any(m.lower() in text.lower() for m in MARKERS)


def _assert_never_injected(bank):
    for skill in bank.list_skills():
        if _poisoned(skill):
            assert skill.status in (SkillStatus.quarantined, SkillStatus.retired, SkillStatus.candidate), skill
            assert skill.status != SkillStatus.active
    rendered = bank.render(bank.search("Refund order A-200, it arrived damaged", k=10))
    assert not any(m.lower() in rendered.lower() for m in MARKERS), rendered
    # whatever is rendered sits inside <skill ...> ... </skill> delimiters
    blocks = re.findall(r"<skill [^>]*>.*?</skill>", rendered, flags=re.S)
    assert rendered.count("<skill ") == len(blocks) == rendered.count("</skill>")
    # and a new run's system prompt carries none of it either
    model = ScriptedChatModel(["ok"])
    agent = create_agent(model, [find_order, issue_refund], system_prompt="Be brief.",
                         middleware=[SkillBankMiddleware(bank)])
    agent.invoke({"messages": [("user", "Refund order A-300, it arrived damaged")]})
    system = model.received[0][0].text
    assert not any(m.lower() in system.lower() for m in MARKERS)


def test_rule_distiller_keeps_poison_out_even_with_promote_all(bank):
    _log_poisoned_successes(bank)
    report = evolve(bank, promote_policy="all")
    assert report.trajectories == 5
    _assert_never_injected(bank)


def _copying_model():
    """An LLM taken in by the injection: it copies the tool output into the skill it writes."""
    def respond(messages):
        return json.dumps({"create": True, "reason": "the runs share a method",
                           "skill": {"name": "refund-damaged-orders", "description": "Refund damaged orders.",
                                     "kind": "procedure", "tools": ["find_order", "issue_refund"],
                                     "lessons": [{"kind": "procedure", "steps": [{"tool": "find_order"},
                                                                                 {"tool": "issue_refund"}]},
                                                 {"kind": "guidance", "text": POISON}]}})
    return ScriptedChatModel([respond])


@pytest.mark.parametrize("policy", ["all", None])
def test_llm_distiller_copying_the_injection_is_quarantined(bank, policy):
    _log_poisoned_successes(bank)
    report = evolve(bank, distiller=LLMDistiller(_copying_model()), promote_policy=policy)
    assert report.trajectories == 5
    # the skill is kept, quarantined (not silently dropped), under either promote policy
    poisoned = [s for s in bank.list_skills() if _poisoned(s)]
    assert [(s.name, s.status) for s in poisoned] == [("refund-damaged-orders", SkillStatus.quarantined)]
    (change,) = [c for c in report.changes if c.skill == "refund-damaged-orders"]
    assert change.status == "quarantined" and "injection" in change.note  # and says why
    _assert_never_injected(bank)
    # evolution never promotes a quarantined skill on its own, even on a later round
    _log_poisoned_successes(bank, n=3)
    evolve(bank, distiller=LLMDistiller(_copying_model()), promote_policy="all")
    still = [s for s in bank.list_skills() if _poisoned(s)]
    assert still and all(s.status != SkillStatus.active for s in still)
    _assert_never_injected(bank)
