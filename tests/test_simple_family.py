"""The simple tier: one- and two-tool requests a small real model can play."""

import pytest

from skillbank import envs
from skillbank.envs import RefStep, ReferenceModel, generate_tasks, split_tasks
from skillbank.envs.tasks import list_templates

SIMPLE = generate_tasks(["simple"], per_template=2, seed=3)
SITUATIONS = {  # what each template is about: train / held-out pairs
    "check": {"simple.base.text_contact", "simple.base.thermostat"},
    "small talk": {"simple.base.smalltalk_thanks", "simple.base.smalltalk_greeting"},
    "budget": {"simple.base.two_cities", "simple.base.three_rooms"},
    "missing tool": {"simple.capability.forecast_missing", "simple.capability.send_missing"},
    "missing parameter": {"simple.capability.priority_missing", "simple.capability.brightness_missing"},
    "ask": {"simple.disambiguation.timer", "simple.disambiguation.which_city"},
}


def test_the_tier_is_opt_in():
    assert "simple" in envs.EXTRA_FAMILY_NAMES and "simple" not in envs.FAMILY_NAMES
    assert not any(t.family == "simple" for t in generate_tasks(per_template=1))
    assert generate_tasks(templates=["simple.base.thermostat"], per_template=1)


def test_every_situation_has_an_evolution_and_a_held_out_template():
    templates = {t.id: t for t in list_templates(["simple"])}
    assert set(templates) == set().union(*SITUATIONS.values())
    for name, ids in SITUATIONS.items():
        assert sorted(templates[i].heldout for i in ids) == [False, True], name
    train, held = split_tasks(SIMPLE, by="template")
    assert {t.template for t in train}.isdisjoint({t.template for t in held})


def test_budget_templates_exist_only_as_their_budget_variant():
    budget_ids = SITUATIONS["budget"]
    assert all(t.budget and t.max_tool_calls == 3 + (t.template == "simple.base.three_rooms")
               for t in SIMPLE if t.template in budget_ids)
    assert not any(t.template in budget_ids for t in generate_tasks(["simple"], per_template=1, budget=False))


def test_every_world_binds_only_its_own_tools():
    for t in SIMPLE:
        assert 1 <= len(t.tools) <= 3, t.id


@pytest.mark.parametrize("task", [t for t in SIMPLE if t.instance == 0], ids=lambda t: t.id)
def test_the_scripted_correct_run_passes_through_create_agent(task):
    result = envs.run_task(task, ReferenceModel.for_task(task))
    assert result.success, task.explain(result.env, result.final_answer, result.messages)


def _one(template_id):
    return next(t for t in SIMPLE if t.template == template_id and not t.budget)


def _run(task, steps):
    return envs.run_task(task, ReferenceModel.from_steps(steps))


def test_skipping_the_check_a_tool_description_requires_fails():
    task = _one("simple.base.thermostat")
    action = [s for s in task.reference if s.role != "check"]
    result = _run(task, action)
    assert not result.success
    assert any("without `get_home_status` first" in r
               for r in task.explain(result.env, result.final_answer, result.messages))


def test_small_talk_fails_when_a_tool_is_called():
    task = _one("simple.base.smalltalk_greeting")
    result = _run(task, [RefStep.call("get_home_status"), RefStep.answer("Hi!")])
    assert not result.success


def test_a_missing_tool_must_be_named_and_not_called():
    task = _one("simple.capability.forecast_missing")
    look = task.reference[0]
    vague = _run(task, [look, RefStep.answer(task.reference[-1].text.split(" I cannot")[0] + " No forecast, sorry.")])
    assert not vague.success  # does not name `get_forecast`
    called = _run(task, [look, RefStep.call("get_forecast", {"city": look.args["city"]}),
                         task.reference[-1]])
    assert not called.success  # called a tool that is not bound


def test_a_blocker_is_declined_in_plain_words_or_by_name():
    from skillbank.envs.families.simple import blocker_declined

    assert blocker_declined("I can't give you the forecast for tomorrow.", "get_forecast") == []
    assert blocker_declined("`get_forecast` is unavailable.", "get_forecast") == []
    assert blocker_declined("I cannot send the message, but here is the number.", "send_message") == []
    assert blocker_declined("Done, and I marked it as high priority.", "priority")
    assert blocker_declined("The forecast looks fine.", "get_forecast")


def test_an_invented_forecast_fails():
    task = _one("simple.capability.forecast_missing")
    text = task.reference[-1].text
    invented = _run(task, [task.reference[0], RefStep.answer(text + " Tomorrow will be sunny, 20 degrees.")])
    assert not invented.success
    merged = _run(task, [task.reference[0], RefStep.answer(text.replace(" now. I", " now, but I"))])
    assert merged.success  # one sentence with today's value and the refusal is fine


def test_a_missing_parameter_must_not_be_passed():
    task = _one("simple.capability.brightness_missing")
    call = task.reference[0]
    passed = _run(task, [RefStep.call("set_lights", {**call.args, "brightness": 40}), task.reference[-1]])
    assert not passed.success
    assert any("no such parameter" in r for r in task.explain(passed.env, passed.final_answer, passed.messages))


def test_guessing_instead_of_asking_fails():
    task = _one("simple.disambiguation.timer")
    guessed = _run(task, [task.reference[1], task.reference[-1]])
    assert not guessed.success


def test_going_over_the_budget_fails():
    task = next(t for t in SIMPLE if t.template == "simple.base.three_rooms")
    calls = [s for s in task.reference if s.kind == "call"]
    over = _run(task, [calls[0], calls[0], calls[1], calls[1], task.reference[-1]])
    assert not over.success
