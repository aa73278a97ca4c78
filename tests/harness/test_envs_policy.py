"""The simulated policy: honest by construction, sloppy without skills, literal with them.

Rates measured here come from a simulated policy and show the machinery working; they are not
a claim about any real model.
"""

from __future__ import annotations

import ast
import collections
import inspect
import types
from pathlib import Path

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool

import skillbank_harness.envs.guidance as guidance_module
import skillbank_harness.envs.policy as policy_module
import skillbank_harness.envs.reading as reading_module
from conftest import ask_for, budget, check_first, missing_tool, order
from skillbank_harness.envs import SimulatedPolicy, Task, generate_tasks, run_task
from skillbank_harness.envs.base import Environment, RefStep, Spec, Template

SEEDS = 30
TYPES = ("base", "capability", "disambiguation")
PERFECT = dict(adherence=1.0, p_skip_check=0.0, p_call_unavailable=0.0, p_guess_missing=0.0,
               p_wander=0.0, p_name_blocker=1.0, p_misread=0.0, p_misreport=0.0, p_stop_early=0.0)


def _task(template_id: str, budget: bool = False, seed: int = 0, instance: int = 0) -> Task:
    tasks = generate_tasks(templates=[template_id], per_template=instance + 1, seed=seed)
    return next(t for t in tasks if t.budget == budget and t.instance == instance)


def _rate(task_seeds, model: SimulatedPolicy, skills_for=lambda t: None) -> float:
    wins = [run_task(t, model.with_seed(s), skills=skills_for(t)).success for t, s in task_seeds]
    return sum(wins) / len(wins)


# ---------------------------------------------------------------------- honesty


def _reachable(root):
    """Every object reachable from ``root`` through attributes, containers and closures."""
    seen, stack = set(), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, (str, bytes, int, float, bool, type(None), type, types.ModuleType)):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        if isinstance(obj, types.FunctionType):
            stack.extend(c.cell_contents for c in obj.__closure__ or ())
            stack.extend(obj.__defaults__ or ())
        if isinstance(obj, types.MethodType):
            stack.append(obj.__self__)
        if hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
        for attr in ("__pydantic_private__", "__pydantic_extra__"):
            extra = getattr(obj, attr, None) if not isinstance(obj, type) else None
            if isinstance(extra, dict):
                stack.extend(extra.values())
        for slot in getattr(type(obj), "__slots__", ()):
            if isinstance(slot, str) and hasattr(obj, slot):
                stack.append(getattr(obj, slot))


def test_policy_holds_nothing_but_tool_schemas():
    task = _task("retail.disambiguation.refund_which")
    env = task.make_env()
    bound = SimulatedPolicy(seed=3).bind_tools(env.tools())
    forbidden = (Task, Environment, Spec, Template, RefStep, BaseTool)
    hidden_ids = {o["order_id"] for o in env.state["orders"]}
    strings = []
    for obj in _reachable(bound):
        assert not isinstance(obj, forbidden), type(obj)
        assert not isinstance(obj, (types.FunctionType, types.MethodType)), obj
        if isinstance(obj, str):
            strings.append(obj)
    # The schemas are there (that is what a real model sees) ...
    assert {s["name"] for s in bound.tool_specs} == set(env.tool_names())
    assert all(set(s) <= {"name", "description", "parameters"} for s in bound.tool_specs)
    # ... but no hidden entity: the orders only exist in the environment's state.
    assert not any(oid in s for s in strings for oid in hidden_ids)


def test_policy_modules_import_no_environment_code():
    allowed_prefixes = ("skillbank_harness.envs.directives", "skillbank_harness.envs.reading",
                        "skillbank_harness.envs.guidance", "skillbank.embed", "langchain_core", "pydantic",
                        "numpy")
    stdlib = {"__future__", "functools", "hashlib", "json", "re", "threading", "weakref", "dataclasses",
              "typing", "skillbank"}  # "skillbank": the library's public surface (its MiniLM embedder)
    for module in (policy_module, reading_module, guidance_module):
        tree = ast.parse(Path(inspect.getfile(module)).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
            elif isinstance(node, ast.Import):
                mod = node.names[0].name
            else:
                continue
            assert mod in stdlib or mod.startswith(allowed_prefixes), (module.__name__, mod)


def test_policy_is_a_chat_model_whose_bind_tools_returns_a_copy():
    env = _task("car.base.climate").make_env()
    base = SimulatedPolicy()
    bound = base.bind_tools(env.tools())
    assert isinstance(bound, BaseChatModel) and bound is not base
    assert base.tool_specs == () and len(bound.tool_specs) == len(env.tools())
    assert bound.with_seed(9).seed == 9 and bound.with_seed(9).tool_specs == bound.tool_specs


def test_policy_emits_tool_calls_with_ids_and_usage():
    env = _task("car.base.climate").make_env()
    model = SimulatedPolicy(**PERFECT).bind_tools(env.tools())
    out = model.invoke([SystemMessage("You drive."), HumanMessage("Set the climate to 21 degrees.")])
    assert isinstance(out, AIMessage) and out.tool_calls
    call = out.tool_calls[0]
    assert call["name"] == "get_vehicle_status" and call["id"].startswith("call_")
    assert out.usage_metadata["input_tokens"] > 0 and out.usage_metadata["output_tokens"] > 0


# ---------------------------------------------------------------------- determinism


def test_runs_are_reproducible_and_differ_only_through_the_seed():
    task = _task("calendar.disambiguation.contact")

    def transcript(seed):
        r = run_task(task, SimulatedPolicy(seed=seed))
        return [(type(m).__name__, m.content, getattr(m, "tool_calls", None)) for m in r.messages]

    assert transcript(1) == transcript(1)
    assert len({str(transcript(s)) for s in range(12)}) > 1


# ---------------------------------------------------------------------- with and without skills


def test_noise_free_policy_solves_every_task_from_text_schemas_and_the_right_skills():
    """Sanity of the reading heuristics: with no noise and the template's hints, every template
    is solvable; without hints every base and disambiguation template is. (A capability task
    needs the exact name of what is missing, which only a skill can tell it: the policy names a
    missing tool or parameter its own way.)"""
    tasks = generate_tasks(per_template=1, seed=11)
    model = SimulatedPolicy(**PERFECT)
    failed = [t.id for t in tasks if not run_task(t, model, skills=list(t.hints)).success]
    assert not failed
    unguided = [t.id for t in tasks if t.type != "capability" and not run_task(t, model).success]
    assert not unguided


def test_maximally_sloppy_policy_fails_every_task():
    tasks = generate_tasks(per_template=1, seed=11, budget=False)
    model = SimulatedPolicy(adherence=0.0, p_skip_check=1.0, p_call_unavailable=1.0,
                            p_guess_missing=1.0, p_wander=0.0, p_name_blocker=0.0)
    passed = [t.id for t in tasks if run_task(t, model).success]
    assert not passed


@pytest.fixture(scope="module")
def rates():
    """Success rates over SEEDS policy seeds, unguided vs. with the template's hints."""
    tasks = generate_tasks(per_template=SEEDS, seed=5, budget=False)
    wins = collections.defaultdict(list)
    model = SimulatedPolicy()
    for t in tasks:
        seed = t.instance  # one fresh policy seed per task instance
        wins[(t.type, "unguided")].append(run_task(t, model.with_seed(seed)).success)
        wins[(t.type, "guided")].append(run_task(t, model.with_seed(seed), skills=list(t.hints)).success)
    return {k: sum(v) / len(v) for k, v in wins.items()}


@pytest.mark.slow
@pytest.mark.parametrize("kind", TYPES)
def test_unguided_policy_fails_a_measurable_fraction(rates, kind):
    failure = 1 - rates[(kind, "unguided")]
    assert 0.2 <= failure <= 0.9, (kind, failure)


@pytest.mark.slow
@pytest.mark.parametrize("kind", TYPES)
def test_right_skills_help_a_lot_but_not_perfectly(rates, kind):
    unguided, guided = rates[(kind, "unguided")], rates[(kind, "guided")]
    assert guided >= unguided + 0.25, (kind, unguided, guided)
    assert 0.8 <= guided < 1.0, (kind, guided)


def test_a_wrong_skill_misleads_it_literally():
    tasks = [(_task("car.base.climate", instance=i, seed=2), i) for i in range(SEEDS)]
    model = SimulatedPolicy()
    unguided = _rate(tasks, model)
    # The procedure in the wrong order: act first, check afterwards.
    backwards = _rate(tasks, model, lambda t: [order("set_climate", "get_vehicle_status")])
    assert backwards < unguided - 0.3, (unguided, backwards)
    # A budget too small to finish.
    starved = _rate(tasks, model, lambda t: [check_first("get_vehicle_status", "set_climate"),
                                             budget(1)])
    assert starved < 0.2


def test_irrelevant_skills_do_not_change_behaviour():
    task = _task("retail.base.cancel")
    noise = [missing_tool("open_window"), ask_for("seat", "set_seat_heater"),
             check_first("get_route", "start_navigation")]
    for seed in range(8):
        plain = run_task(task, SimulatedPolicy(seed=seed))
        other = run_task(task, SimulatedPolicy(seed=seed), skills=noise)
        strip = lambda r: [(type(m).__name__, getattr(m, "tool_calls", None))  # noqa: E731
                           for m in r.messages if not isinstance(m, HumanMessage)]
        assert strip(plain) == strip(other) and plain.success == other.success


def test_check_first_skill_is_followed_with_adherence():
    tasks = [(_task("retail.base.cancel", instance=i, seed=3), i) for i in range(SEEDS)]
    always_skips = SimulatedPolicy(p_skip_check=1.0)
    assert _rate(tasks, always_skips) == 0.0
    guided = _rate(tasks, always_skips, lambda t: [check_first("get_order", "cancel_order")])
    assert 0.75 <= guided < 1.0
    assert _rate(tasks, always_skips.model_copy(update={"adherence": 1.0}),
                 lambda t: [check_first("get_order", "cancel_order")]) == 1.0


def test_unavailable_skill_stops_the_call_and_names_the_blocker():
    task = _task("car.capability.window_missing")
    reckless = SimulatedPolicy(p_call_unavailable=1.0, p_name_blocker=0.0, p_skip_check=0.0,
                               p_wander=0.0, adherence=1.0, p_misread=0.0, p_misreport=0.0,
                               p_stop_early=0.0)
    bad = run_task(task, reckless)
    assert not bad.success and any(tc["name"] == "open_window" for m in bad.messages
                                   if isinstance(m, AIMessage) for tc in m.tool_calls)
    good = run_task(task, reckless, skills=[missing_tool("open_window")])
    assert good.success and "`open_window`" in good.final_answer


def test_ask_for_skill_makes_it_ask_instead_of_guessing():
    task = _task("retail.disambiguation.cancel_which")
    guesser = SimulatedPolicy(p_guess_missing=1.0, p_skip_check=0.0, p_wander=0.0, adherence=1.0)
    assert not run_task(task, guesser).success
    asked = run_task(task, guesser, skills=[ask_for("order_id", "cancel_order")])
    assert asked.success and len(asked.env.asks()) == 1


def test_step_budget_skill_stops_wandering():
    tasks = [(_task("retail.base.cancel", budget=True, instance=i, seed=4), i) for i in range(SEEDS)]
    wanderer = SimulatedPolicy(p_wander=0.6, p_skip_check=0.0)
    unguided = _rate(tasks, wanderer)
    guided = _rate(tasks, wanderer, lambda t: [budget(t.max_tool_calls)])
    assert unguided < 0.6 and guided >= unguided + 0.3, (unguided, guided)
