"""Synthetic environments: generation, splits, tools, scripted user, verifiers, runner."""

from __future__ import annotations

import dataclasses
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from conftest import budget as budget_lesson
from skillbank_harness.envs import (
    FAMILY_NAMES,
    TASK_TYPES,
    ReferenceModel,
    SimulatedPolicy,
    Task,
    generate_tasks,
    list_templates,
    run_task,
    split_tasks,
)
from skillbank_harness.envs.base import GENERIC_REPLY, RefStep, names, no_value_claim

ONE_EACH = generate_tasks(per_template=1, seed=7)
TEMPLATE_IDS = sorted({t.template for t in ONE_EACH})


def _first(template_id: str, budget: bool = False, **kw) -> Task:
    return next(t for t in generate_tasks(templates=[template_id], per_template=1, **kw)
                if t.budget == budget)


# ---------------------------------------------------------------------- catalogue and generation


def test_three_families_three_types_one_held_out_template_each():
    assert set(FAMILY_NAMES) == {"car", "retail", "calendar"}
    for family in FAMILY_NAMES:
        for kind in TASK_TYPES:
            tpls = list_templates([family], [kind])
            # Capability: two missing tools, a missing parameter and an unknown field.
            assert len(tpls) == (4 if kind == "capability" else 3), (family, kind)
            assert sum(t.heldout for t in tpls) == 1


def test_every_template_has_a_budget_variant_with_a_tight_budget():
    plain = {t.template: t for t in ONE_EACH if not t.budget}
    budget = {t.template: t for t in ONE_EACH if t.budget}
    assert plain.keys() == budget.keys() == set(TEMPLATE_IDS)
    for tid, task in budget.items():
        assert task.kind == f"{task.type}+budget"
        calls = sum(1 for s in task.reference if s.kind == "call")
        assert task.max_tool_calls == calls + 1
        assert budget_lesson(calls + 1) in task.hints
        assert plain[tid].max_tool_calls is None


def test_generation_is_deterministic_by_seed():
    def fingerprint(tasks):
        return [(t.id, t.input, t.hints, t.reference, t.max_tool_calls, t.make_env().state)
                for t in tasks]

    a = generate_tasks(per_template=2, seed=3)
    b = generate_tasks(per_template=2, seed=3)
    c = generate_tasks(per_template=2, seed=4)
    assert fingerprint(a) == fingerprint(b)
    assert [t.input for t in a] != [t.input for t in c]
    # Instances of one template differ: entities are randomised, not fixed answers.
    inputs = [t.input for t in generate_tasks(templates=["car.base.climate"], per_template=20,
                                              budget=False)]
    assert len(set(inputs)) > 5


def test_filters_and_unknown_family():
    tasks = generate_tasks(["retail"], types=["capability"], per_template=2, budget=False)
    assert tasks and {(t.family, t.type, t.budget) for t in tasks} == {("retail", "capability", False)}
    with pytest.raises(ValueError, match="unknown families"):
        generate_tasks(["spaceship"])


# ---------------------------------------------------------------------- splits


def test_split_by_template_has_disjoint_templates():
    tasks = generate_tasks(per_template=3, seed=1)
    train, held = split_tasks(tasks, by="template")
    assert train and held and len(train) + len(held) == len(tasks)
    assert not {t.template for t in train} & {t.template for t in held}
    # Every family and type is represented on both sides.
    for side in (train, held):
        assert {(t.family, t.type) for t in side} == {(f, k) for f in FAMILY_NAMES for k in TASK_TYPES}
    assert all(t.split == "heldout" for t in held) and all(t.split == "train" for t in train)


def test_split_by_seed_and_by_family():
    tasks = generate_tasks(per_template=4, seed=1)
    train, held = split_tasks(tasks, by="seed", heldout_fraction=0.25)
    assert {t.template for t in train} == {t.template for t in held}
    assert max(t.instance for t in train) < min(t.instance for t in held)
    assert not {t.id for t in train} & {t.id for t in held}

    train, held = split_tasks(tasks, by="template+seed", heldout_fraction=0.25)
    assert train and all(t.split == "train" and t.instance < 3 for t in train)

    train, held = split_tasks(tasks, by="family", heldout_families=["calendar"])
    assert {t.family for t in held} == {"calendar"} and "calendar" not in {t.family for t in train}
    with pytest.raises(ValueError):
        split_tasks(tasks, by="family")
    with pytest.raises(ValueError):
        split_tasks(tasks, by="colour")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- environments


def test_tools_are_structured_tools_over_fresh_in_memory_state():
    task = _first("car.capability.window_missing")
    env = task.make_env()
    tools = env.tools()
    assert tools and all(isinstance(t, StructuredTool) for t in tools)
    names_ = [t.name for t in tools]
    assert "open_window" not in names_ and "set_climate" in names_
    assert tuple(names_) == task.tools
    climate = next(t for t in tools if t.name == "set_climate")
    assert json.loads(climate.invoke({"temperature_c": 21}))["temperature_c"] == 21
    assert env.state["climate"] == {"on": True, "temperature_c": 21}
    # The hidden log records the call; a second environment starts clean.
    assert [c.tool for c in env.calls()] == ["set_climate"]
    assert task.make_env().state["climate"]["on"] is False
    # Tool errors surface as error text, and are logged as failed calls.
    out = climate.invoke({"temperature_c": 40})
    assert "between 16 and 28" in out and env.calls("set_climate", ok_only=False)[-1].error


def test_unknown_fields_are_null_in_tool_results():
    env = _first("car.capability.range_unknown").make_env()
    status = next(t for t in env.tools() if t.name == "get_vehicle_status")
    assert json.loads(status.invoke({}))["range_km"] is None


def test_scripted_user_answers_one_round():
    dis = _first("retail.disambiguation.refund_which").make_env()
    first = dis.user_reply("Which order?")
    assert first and first.startswith("Order ORD-")
    assert dis.user_reply("And which item?") is None
    base = _first("retail.base.cancel").make_env()
    assert base.user_reply("Are you sure?") == GENERIC_REPLY
    assert base.user_reply("Really?") is None


# ---------------------------------------------------------------------- verifiers


def _mutate(task: Task, steps: list[RefStep]) -> bool:
    return run_task(task, ReferenceModel.from_steps(steps)).success


@pytest.mark.parametrize("budget", [False, True])
@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_verifier_accepts_the_scripted_correct_run(template_id, budget):
    task = _first(template_id, budget, seed=7)
    result = run_task(task, ReferenceModel.for_task(task))
    assert result.success, task.explain(result.env, result.final_answer, result.messages)


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_verifier_rejects_wrong_runs(template_id):
    task = _first(template_id, seed=7)
    ref = list(task.reference)
    checked = False

    # A policy check skipped.
    if any(s.role == "check" for s in ref):
        assert not _mutate(task, [s for s in ref if s.role != "check"]), "action without check"
        checked = True

    # Acted without asking (the values are right, but they were guessed).
    if task.type == "disambiguation":
        assert not _mutate(task, [s for s in ref if s.kind != "ask"]), "acted without asking"
        checked = True

    # Wrong value in the action.
    actions = [i for i, s in enumerate(ref) if s.role == "action"]
    if actions:
        i = actions[0]
        key, value = next(iter(ref[i].args.items()))
        wrong = value + 1 if isinstance(value, (int, float)) else f"{value}X"
        bad = dataclasses.replace(ref[i], args={**ref[i].args, key: wrong})
        assert not _mutate(task, ref[:i] + [bad] + ref[i + 1:]), "wrong value"

    if task.type == "capability":
        limit = next(h for h in task.hints if h.kind.value in ("missing_tool", "missing_parameter", "unknown_field"))
        blocker = {"missing_tool": limit.tool, "missing_parameter": limit.parameter}.get(limit.kind.value, limit.field)
        vague = ref[:-1] + [RefStep("answer", text="I did what I could.")]
        assert not _mutate(task, vague), "did not name the blocker"
        if limit.kind.value == "missing_tool":
            tried = ref[:-1] + [RefStep("call", blocker, {}), ref[-1]]
            assert not _mutate(task, tried), "called the missing tool"
        elif limit.kind.value == "missing_parameter":
            # Passing the missing parameter anyway: the tool drops it and the answer claims it.
            i = next(i for i, s in enumerate(ref) if s.kind == "call" and s.tool == limit.tool)
            passed = dataclasses.replace(ref[i], args={**ref[i].args, limit.parameter: 3})
            assert not _mutate(task, ref[:i] + [passed] + ref[i + 1:]), "passed the missing parameter"
        else:
            invented = ref[:-1] + [RefStep("answer", text=f"The {blocker} is 42. "
                                           f"The {blocker.split('_')[0]} is 2025-05-05.")]
            assert not _mutate(task, invented), "invented a value"
        checked = True
    assert checked


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_budget_verifier_rejects_wandering(template_id):
    task = _first(template_id, True, seed=7)
    ref = list(task.reference)
    first_call = next(i for i, s in enumerate(ref) if s.kind == "call")
    wander = ref[:first_call + 1] + [ref[first_call]] * 2 + ref[first_call + 1:]
    result = run_task(task, ReferenceModel.from_steps(wander))
    assert not result.success
    assert any("budget" in r for r in task.explain(result.env, result.final_answer, result.messages))


def test_answer_helpers():
    assert names("`open_window` is unavailable", "open_window")
    assert not names("I cannot open the window", "open_window")
    assert not names("open_windows", "open_window")
    assert no_value_claim("Your range is about 240 km.", "range_km", ["range"], r"\d")
    assert not no_value_claim("`range_km` is unknown. Climate set to 21.", "range_km", ["range"], r"\d")


# ---------------------------------------------------------------------- runner


def test_disambiguation_is_one_run_with_the_scripted_reply():
    task = _first("car.disambiguation.window")
    careful = SimulatedPolicy(p_guess_missing=0.0, p_wander=0.0)
    result = run_task(task, careful)
    assert result.success, task.explain(result.env, result.final_answer, result.messages)
    humans = [m for m in result.messages if isinstance(m, HumanMessage)]
    assert [h.content for h in humans][0] == task.input and len(humans) == 2
    asks = result.env.asks()
    assert len(asks) == 1 and asks[0].reply == humans[1].content
    assert asks[0].question.endswith("?")


def test_budget_is_enforced_by_the_agent_loop():
    task = _first("car.base.climate", True)
    looping = SimulatedPolicy(p_wander=1.0, p_skip_check=0.0)
    result = run_task(task, looping)
    assert not result.success
    calls = [tc for m in result.messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    assert len(calls) == task.max_tool_calls + 1  # the blocked call is the one that broke it
    blocked = [m for m in result.messages if isinstance(m, ToolMessage) and m.status == "error"]
    assert blocked and "limit" in result.final_answer.lower()


def test_recursion_limit_counts_as_failure():
    task = _first("car.base.climate")
    looping = SimulatedPolicy(p_wander=1.0, p_skip_check=0.0)
    result = run_task(task, looping, recursion_limit=20)
    assert result.success is False and result.state is None and result.env.calls()


def test_run_task_passes_labels_and_skills_to_the_agent():
    from langchain_core.callbacks import BaseCallbackHandler

    seen: dict = {}

    class Spy(BaseCallbackHandler):
        def on_chat_model_start(self, serialized, messages, **kwargs):
            seen.setdefault("metadata", kwargs.get("metadata"))
            seen.setdefault("system", messages[0][0].content)

    task = _first("retail.base.cancel")
    result = run_task(task, ReferenceModel.for_task(task), skills=list(task.hints),
                      config={"callbacks": [Spy()]})
    assert result.success
    assert seen["metadata"]["task_id"] == task.id and seen["metadata"]["task_type"] == "base"
    assert task.system_prompt in seen["system"]
    assert "Always call `get_order` before `cancel_order`." in seen["system"]
