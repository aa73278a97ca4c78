"""Skill forms a small model follows (issue 19, item 3), each behind an ``InjectionConfig``
switch: a lean block, reminders at the tool boundary, worked examples."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from skillbank.adapters.config import LEAN_TOKEN_BUDGET, InjectionConfig
from skillbank.adapters.injection import SkillInjector
from skillbank.evolution.general import general_proposals
from skillbank.retrieval import approx_tokens
from conftest import missing_tool

# -- a lean block ----------------------------------------------------------------------------------


def _general_bank(bank):
    [prop] = general_proposals([([missing_tool("a")], []), ([missing_tool("b")], [])], [], min_tools=2)
    general = bank.add_skill(**prop.content.model_dump(exclude={"body"}), status="active")
    specific = bank.add_skill(name="refund-orders", description="Refund a customer's damaged order",
                              body="Look the order up, then refund it.", kind="procedure",
                              tools=["find_order", "issue_refund"], status="active")
    return general, specific


def test_a_lean_block_lets_general_skills_compete_by_relevance(bank):
    general, specific = _general_bank(bank)
    refund = [HumanMessage(content="Refund my damaged order")]
    # The default: the general skill rides on every turn, first, whatever the request.
    assert [h.skill.id for h in SkillInjector(bank, k=1).inject(refund).hits] == [general.id, specific.id]
    # Lean: it is one candidate among the others; the refund request gets the refund skill only ...
    lean = SkillInjector(bank, k=1, lean=True)
    assert [h.skill.id for h in lean.inject(refund).hits] == [specific.id]
    # ... and a request its description matches gets it, retrieved (scored), not standing.
    asked = [HumanMessage(content=general.description)]
    [hit] = lean.inject(asked).hits
    assert hit.skill.id == general.id and hit.score < 1.0


def test_a_lean_block_is_capped_at_the_lean_budget_or_a_smaller_one():
    assert InjectionConfig(lean=True).block_token_budget == LEAN_TOKEN_BUDGET
    assert InjectionConfig(lean=True, token_budget=None).block_token_budget == LEAN_TOKEN_BUDGET
    assert InjectionConfig(lean=True, token_budget=200).block_token_budget == 200
    assert InjectionConfig(token_budget=900).block_token_budget == 900
    assert InjectionConfig(lean=True, general_k=5).standing_general_k == 0
    assert InjectionConfig(general_k=3).standing_general_k == 3


def test_a_lean_block_stays_within_its_budget(bank):
    for i in range(8):
        bank.add_skill(name=f"refund-step-{i}", description=f"Refund a damaged order, step {i} of the method",
                       body="Look the order up, check it arrived damaged, then refund it. " * 6,
                       kind="procedure", tools=["find_order"], status="active")
    messages = [HumanMessage(content="Refund my damaged order")]
    full = SkillInjector(bank, k=8).inject(messages)
    lean = SkillInjector(bank, k=8, lean=True).inject(messages)
    assert approx_tokens(full.text) > LEAN_TOKEN_BUDGET  # the default block would be longer
    assert 0 < approx_tokens(lean.text) <= LEAN_TOKEN_BUDGET and len(lean.hits) < len(full.hits)
