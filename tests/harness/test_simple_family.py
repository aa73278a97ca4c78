"""The simple tier: requests a small real model can play, calibrated on the unguided 1.5B model."""

import pytest

from skillbank_harness import envs
from skillbank_harness.envs import RefStep, ReferenceModel, generate_tasks, split_tasks
from skillbank_harness.envs.tasks import list_templates

SIMPLE = generate_tasks(["simple"], per_template=2, seed=3)
SITUATIONS = {  # what each template is about: an evolution-set / held-out pair
    "budget": {"simple.base.two_cities", "simple.base.three_rooms"},
}
HELD_OUT_ONLY = {"simple.base.smalltalk_greeting"}  # its evolution-set twin did not calibrate


def test_the_tier_is_opt_in():
    assert "simple" in envs.EXTRA_FAMILY_NAMES and "simple" not in envs.FAMILY_NAMES
    assert not any(t.family == "simple" for t in generate_tasks(per_template=1))
    assert generate_tasks(templates=["simple.base.two_cities"], per_template=1)


def test_every_situation_has_an_evolution_and_a_held_out_template():
    templates = {t.id: t for t in list_templates(["simple"])}
    assert set(templates) == set().union(*SITUATIONS.values(), HELD_OUT_ONLY)
    assert all(templates[i].heldout for i in HELD_OUT_ONLY)
    for name, ids in SITUATIONS.items():
        assert sorted(templates[i].heldout for i in ids) == [False, True], name
    train, held = split_tasks(SIMPLE, by="template")
    assert {t.template for t in train}.isdisjoint({t.template for t in held})


def test_budget_templates_exist_only_as_their_budget_variant():
    budget_ids = SITUATIONS["budget"]
    assert all(t.budget and t.max_tool_calls == 3 + (t.template == "simple.base.three_rooms")
               for t in SIMPLE if t.template in budget_ids)
    assert not any(t.template in budget_ids for t in generate_tasks(["simple"], per_template=1, budget=False))


def test_worlds_bind_only_their_own_tools_and_a_template_may_bring_its_prompt():
    for t in SIMPLE:
        assert 1 <= len(t.tools) <= 2, t.id
    rooms = next(t for t in SIMPLE if t.template == "simple.base.three_rooms")
    greeting = next(t for t in SIMPLE if t.template == "simple.base.smalltalk_greeting")
    assert rooms.tools == greeting.tools and rooms.system_prompt != greeting.system_prompt
    assert "ask the user" in rooms.system_prompt


@pytest.mark.parametrize("task", [t for t in SIMPLE if t.instance == 0], ids=lambda t: t.id)
def test_the_scripted_correct_run_passes_through_create_agent(task):
    result = envs.run_task(task, ReferenceModel.for_task(task))
    assert result.success, task.explain(result.env, result.final_answer, result.messages)


def _first(template_id):
    return next(t for t in SIMPLE if t.template == template_id)


def _run(task, steps):
    return envs.run_task(task, ReferenceModel.from_steps(steps))


def test_small_talk_fails_when_a_tool_is_called():
    task = _first("simple.base.smalltalk_greeting")
    result = _run(task, [RefStep.call("set_lights", {"room": "kitchen", "on": True}), RefStep.answer("Hello!")])
    assert not result.success
    assert any("needs no tool" in r for r in task.explain(result.env, result.final_answer, result.messages))


def test_the_answer_must_carry_what_the_tools_returned():
    task = _first("simple.base.two_cities")
    calls = [s for s in task.reference if s.kind == "call"]
    vague = _run(task, [*calls, RefStep.answer("It is mild in both cities.")])
    assert not vague.success


def test_going_over_the_budget_fails():
    task = _first("simple.base.three_rooms")
    calls = [s for s in task.reference if s.kind == "call"]
    over = _run(task, [calls[0], calls[0], calls[1], calls[1], calls[2], task.reference[-1]])
    assert not over.success
    assert any("budget" in r for r in task.explain(over.env, over.final_answer, over.messages))


def test_a_missed_room_fails():
    task = _first("simple.base.three_rooms")
    calls = [s for s in task.reference if s.kind == "call"]
    assert not _run(task, [calls[0], calls[1], task.reference[-1]]).success
