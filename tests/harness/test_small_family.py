"""The small tier: 24 templates in four toolsets, each verifier passes the scripted correct run
and fails the runs that make the template's mistake; every template has its oracle hint."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from skillbank_harness import envs
from skillbank_harness.envs.base import RefStep
from skillbank_harness.envs.runner import ReferenceModel, run_task

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from oracle_hints import LESSONS, ORACLE  # noqa: E402

TASKS = envs.generate_tasks(["small"], per_template=2, seed=0)


def test_the_tier_has_two_evolution_and_two_held_out_templates_per_lesson_in_four_toolsets():
    templates = {t.template: t for t in TASKS}
    assert len(templates) == 24 and set(templates) == set(ORACLE)
    per = Counter((ORACLE[name].lesson, t.split) for name, t in templates.items())
    assert per == {(lesson, split): 2 for lesson in LESSONS for split in ("train", "heldout")}
    assert len({t.tools for t in TASKS if not t.template.endswith("_missing")}) == 4


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_scripted_correct_run_passes(task):
    result = run_task(task, ReferenceModel.for_task(task))
    assert result.success, task.explain(result.env, result.final_answer, result.messages)


def _mistake(task) -> list[RefStep]:
    """The reference run with the template's mistake: the check skipped, the question not
    asked, a tool called on small talk, a call repeated, or an answer that claims success."""
    lesson = ORACLE[task.template].lesson
    ref = list(task.reference)
    if lesson == "check first":
        return [s for s in ref if s.role != "check"] + [RefStep.answer("Done.")]
    if lesson == "ask, don't guess":
        return [s for s in ref if s.kind != "ask"]
    if lesson == "no tool":
        return [RefStep.call(task.tools[0], {}), *ref]
    if lesson == "budget":
        calls = [s for s in ref if s.kind == "call"]
        return [*calls, *calls, ref[-1]]
    if lesson == "missing tool or parameter":
        return [s for s in ref if s.kind == "call"] + [RefStep.answer("Done, all set!")]
    return [RefStep.call(s.tool, {k: "wrong shape" for k in s.args}) if s.kind == "call" else s
            for s in ref]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_the_templates_mistake_fails(task):
    result = run_task(task, ReferenceModel.from_steps(_mistake(task)))
    assert not result.success


def test_a_refusal_names_its_remedy_and_the_check_must_come_before_the_first_attempt():
    task = next(t for t in TASKS if t.template == "small.home.lock_door")
    door = task.reference[0].args["door"]
    steps = [RefStep.call("lock_door", {"door": door}), *task.reference]  # refused, then right
    result = run_task(task, ReferenceModel.from_steps(steps))
    refusal = next(m for m in result.messages if getattr(m, "status", "") == "error")
    assert f"call get_door_status for the {door} door first" in refusal.content
    assert result.env.state["doors"][door]["locked"] and not result.success
