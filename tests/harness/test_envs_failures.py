"""Failure mass: each verifier reason the harness's helpers write maps to the lesson kind that
addresses it; a state mismatch maps to none."""

from __future__ import annotations

from types import SimpleNamespace

from skillbank_harness.envs import SimulatedPolicy, generate_tasks, run_task
from skillbank_harness.envs.base import blocker_named, no_value_claim, param_not_passed
from skillbank_harness.envs.failures import failure_mass, lesson_kind
from langchain_core.messages import AIMessage


def test_each_helper_reason_has_its_lesson_kind_and_a_wrong_state_has_none():
    call = AIMessage(content="", tool_calls=[{"name": "set_climate", "args": {"fan_speed": 3}, "id": "c1"}])
    assert lesson_kind(param_not_passed([call], "set_climate", "fan_speed")[0]) == "missing_parameter"
    assert lesson_kind(blocker_named("sorry", "open_window")[0]) == "missing_tool/parameter/field"
    assert lesson_kind(no_value_claim("The range_km is 300 km.", "range_km", ["range"], r"\d")[0]) == "unknown_field"
    assert lesson_kind("climate is {'on': False}, expected on at 21") is None


def test_failure_mass_counts_only_failed_trials_and_reproduces_them():
    tasks = generate_tasks(templates=["retail.base.cancel"], per_template=3, seed=0, budget=False)
    runs = {(t.id, s): run_task(t, SimulatedPolicy(seed=s)) for t in tasks for s in range(4)}
    records = [SimpleNamespace(task_id=tid, arm="without", seed=s, success=r.success)
               for (tid, s), r in runs.items()]
    failed = sum(not r.success for r in runs.values())
    assert failed > 0
    mass = failure_mass(records, tasks, lambda t, s: run_task(t, SimulatedPolicy(seed=s)))
    assert mass.failed == failed and mass.replay_mismatches == 0
    assert mass.addressable + mass.partly + mass.unaddressable == failed
    assert mass.by_reason.get("check_first", 0) > 0  # the policy skips get_order at its documented rate
