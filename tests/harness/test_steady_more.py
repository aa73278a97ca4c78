"""More of the consistency tier: twenty-four evolution templates in four further toolsets, their
unseen-instance twins and four unseen templates in a fifth; every verifier passes the scripted
correct run and fails the run that makes the template's mistake."""

from __future__ import annotations

from collections import Counter

import pytest

from skillbank_harness import envs
from skillbank_harness.envs.base import RefStep
from skillbank_harness.envs.families.steady import AGAIN, EVOLUTION, KINDS, UNSEEN_TEMPLATES
from skillbank_harness.envs.families.steady_more import EVOLUTION_MORE, UNSEEN_MORE
from skillbank_harness.envs.runner import ReferenceModel, run_task

MORE = (*EVOLUTION_MORE, *(AGAIN[t] for t in EVOLUTION_MORE), *UNSEEN_MORE)
TASKS = envs.generate_tasks(["steady"], per_template=2, seed=0, templates=MORE)


def test_the_new_templates_and_their_kinds():
    assert len(EVOLUTION_MORE) == 24 and len(UNSEEN_MORE) == 4
    assert not set(MORE) & {*EVOLUTION, *(AGAIN[t] for t in EVOLUTION), *UNSEEN_TEMPLATES}
    assert {t.template for t in TASKS} == set(MORE)
    kinds = Counter(KINDS[t] for t in EVOLUTION_MORE)
    assert kinds == {"argument shape": 8, "answer shape": 6, "procedure": 4, "check first": 3,
                     "no tool": 3}
    assert len({KINDS[t] for t in UNSEEN_MORE}) == 4
    assert {KINDS[t] for t in UNSEEN_MORE} <= set(kinds)
    assert all(KINDS[AGAIN[t]] == KINDS[t] for t in EVOLUTION_MORE)
    assert all(t.family == "steady" for t in TASKS)
    assert all(t.split == "train" for t in TASKS if t.template in EVOLUTION_MORE)
    assert all(t.split == "heldout" for t in TASKS if t.template not in EVOLUTION_MORE)
    toolsets = Counter(t.split(".")[1] for t in EVOLUTION_MORE)
    assert len(toolsets) == 4 and set(toolsets.values()) == {6}


def test_no_field_description_carries_an_example_id():
    for task in TASKS:
        for tool in type(task.make_env()).TOOLDEFS.values():
            for field in tool.args.model_fields.values():
                assert "e.g." not in (field.description or ""), (tool.name, field.description)


def test_a_twin_asks_the_same_thing_in_other_words_about_other_entities():
    by_template: dict[str, set[str]] = {}
    for t in envs.generate_tasks(["steady"], per_template=8, seed=1, templates=MORE):
        by_template.setdefault(t.template, set()).add(t.input)
    for base in EVOLUTION_MORE:
        assert not by_template[base] & by_template[AGAIN[base]], base


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_scripted_correct_run_passes(task):
    result = run_task(task, ReferenceModel.for_task(task))
    assert result.success, task.explain(result.env, result.final_answer, result.messages)


# the argument a template shapes, and the value the model gives when it does not shape it
_UNSHAPED = {"date": lambda v: "tomorrow", "check_in": lambda v: "Wednesday",
             "time": lambda v: "half past one", "days": lambda v: int(v) // 7}


def _mistake(task) -> list[RefStep]:
    kind = KINDS[task.template]
    ref = list(task.reference)
    if kind == "check first":
        return [s for s in ref if s.role != "check"]
    if kind == "no tool":
        return [RefStep.call(task.tools[0], {}), *ref]
    if kind == "answer shape":  # the value in the tool's unit, not the user's
        return [*[s for s in ref if s.kind == "call"], RefStep.answer("It is 123456 cents or grams.")]
    if kind == "argument shape":  # the argument as the user said it
        out = []
        for s in ref:
            if s.kind == "call" and set(s.args) & set(_UNSHAPED):
                s = RefStep.call(s.tool, {k: _UNSHAPED[k](v) if k in _UNSHAPED else v
                                          for k, v in s.args.items()}, role=s.role)
            out.append(s)
        assert out != ref, task.template
        return out
    # procedure: act without looking the id up, and answer without the looked-up value
    return [RefStep.call(s.tool, {k: "the one I asked for" for k in s.args}) for s in ref
            if s.kind == "call"] + [RefStep.answer("Done.")]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_templates_mistake_fails(task):
    result = run_task(task, ReferenceModel.from_steps(_mistake(task)))
    assert not result.success, task.template
