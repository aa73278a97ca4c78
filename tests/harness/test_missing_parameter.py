"""A tool that lacks a parameter the request needs: the environments' parameter-removal tasks,
the simulated policy, the recorder's ``missing_parameter`` limit and the guard it becomes."""

from __future__ import annotations

from langchain_core.tools import StructuredTool
from pydantic import BaseModel, ConfigDict

from conftest import missing_parameter, teaches
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.limits import unknown_parameters
from skillbank_harness.envs import SimulatedPolicy, run_task
from skillbank.evolution import evolve
from skillbank.models import LimitType
from test_envs_policy import _task

FAN = "car.capability.fan_missing"
RECKLESS = dict(p_call_unavailable=1.0, p_name_blocker=0.0, p_skip_check=0.0, p_wander=0.0,
                adherence=1.0)


def test_the_removed_parameter_is_gone_from_the_schema_the_model_sees():
    task = _task(FAN)
    climate = next(t for t in task.make_env().tools() if t.name == "set_climate")
    assert set(climate.args) == {"temperature_c"}
    base = next(t for t in _task("car.base.climate").make_env().tools() if t.name == "set_climate")
    assert set(base.args) == {"temperature_c", "fan_speed"}


def test_policy_passes_a_missing_parameter_when_sloppy_and_declines_it_when_told():
    task = _task(FAN)
    sloppy = run_task(task, SimulatedPolicy(**RECKLESS))
    assert not sloppy.success and "fan_speed" in str([m.tool_calls for m in sloppy.messages
                                                      if getattr(m, "tool_calls", None)])
    for skills in ([missing_parameter("set_climate", "fan_speed")], [missing_parameter(None, None)]):
        good = run_task(task, SimulatedPolicy(**RECKLESS), skills=skills)
        assert good.success and "`fan_speed`" in good.final_answer
    # A lesson about another tool's parameter changes nothing.
    assert not run_task(task, SimulatedPolicy(**RECKLESS),
                        skills=[missing_parameter("cancel_order", "cancel_reason")]).success


def test_middleware_records_the_argument_the_tool_dropped_as_a_missing_parameter(bank):
    task = _task(FAN)
    run_task(task, SimulatedPolicy(**RECKLESS), [SkillBankMiddleware(bank, inject=False)])
    run_task(task, SimulatedPolicy(**{**RECKLESS, "p_call_unavailable": 0.0}),
             [SkillBankMiddleware(bank, inject=False)])
    sloppy, careful = sorted(bank.trajectories.list(limit=10),
                             key=lambda t: -len(bank.trajectories.get(t.id).limit_events))
    events = bank.trajectories.get(sloppy.id).limit_events
    assert [(e.type, e.tool, e.data.get("param")) for e in events] == [
        (LimitType.missing_parameter, "set_climate", "fan_speed")]
    assert events[0].category == "capability"
    assert not bank.trajectories.get(careful.id).limit_events


def test_schemas_that_accept_extra_arguments_are_left_alone():
    class Loose(BaseModel):
        model_config = ConfigDict(extra="allow")
        q: str

    class Strict(BaseModel):
        q: str

    def make(schema):
        return StructuredTool.from_function(func=lambda **kw: "ok", name="search",
                                            description="Search.", args_schema=schema)

    assert unknown_parameters({"q": "x", "lang": "en"}, make(Loose)) == []
    [signal] = unknown_parameters({"q": "x", "lang": "en"}, make(Strict))
    assert signal.type == LimitType.missing_parameter and signal.data == {"param": "lang"}
    assert unknown_parameters("not a dict", make(Strict)) == []


def test_missing_parameter_failures_become_a_no_param_guard(bank):
    for seed in range(3):
        task = _task(FAN, instance=seed)
        run_task(task, SimulatedPolicy(seed=seed, **RECKLESS),
                 [SkillBankMiddleware(bank, inject=False, verifier=lambda s, t=task: False)])
    report = evolve(bank, dry_run=True)
    guard = next(c for c in report.changes if c.skill == "when-set-climate-has-no-fan-speed")
    assert "`set_climate` has no `fan_speed` parameter" in guard.reason
    evolve(bank)
    skill = bank.get_skill("when-set-climate-has-no-fan-speed")
    assert teaches(skill, "missing_parameter", tool="set_climate", parameter="fan_speed")
    assert skill.kind.value == "guard" and skill.tools == ("set_climate",)
