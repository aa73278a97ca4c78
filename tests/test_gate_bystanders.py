"""The gate validates a candidate where it will land, not only where it was learned: its held-out
sample takes *bystanders* first (other tasks whose agent had a tool of the candidate's toolset),
the first of them right after the first evidence task, so a validator that checks only the first
few tasks still checks one. The trace (protocol v7 on the real 1.5B, RESULTS.md): a guard
learned from a tool the model invented on small talk was measured on that small talk only,
promoted, then injected into every request of that agent; on two of six refill requests the
model answered with the guard instead of calling the refill tool."""

from __future__ import annotations

from skillbank.evolution import evolve
from skillbank.models import LimitEvent, LimitType
from test_evolution_support import traj

KITCHEN = ["set_oven", "get_oven_state", "start_timer"]
GARDEN = ["water_bed", "get_soil_moisture"]


def _offered(t, tools):
    """``t`` with its model steps offered ``tools`` (what a run records of its agent)."""
    steps = [s.model_copy(update={"tools_offered": list(tools)}) if s.kind == "model" else s for s in t.steps]
    return t.model_copy(update={"steps": steps})


_INVALID = "Error: say_thanks is not a valid tool, try one of [set_oven, get_oven_state, start_timer]."


def _invented_tool(i: int):
    """Small talk where the model called a tool that does not exist (as the capture records it)."""
    return _offered(traj("Cheers, that was a lovely dinner!", [("say_thanks", {}, None, _INVALID)],
                         success=False, answer="", task_id=f"kitchen-chat-{i}",
                         limits=[LimitEvent(type=LimitType.missing_tool, step=1, detail=_INVALID,
                                            tool="say_thanks")]), KITCHEN)


def _oven(i: int):
    return _offered(traj(f"Preheat the oven to {180 + 10 * i} degrees.",
                         [("set_oven", {"celsius": 180 + 10 * i}, '{"ok": true}')], success=True,
                         answer="The oven is heating.", task_id=f"kitchen-oven-{i}"), KITCHEN)


def _garden(i: int):
    return _offered(traj(f"Water bed {i} for ten minutes.", [("water_bed", {"bed": str(i), "minutes": 10}, '{"ok": true}')],
                         success=True, answer="Watering.", task_id=f"garden-{i}"), GARDEN)


def test_a_guard_is_validated_on_a_bystander_of_its_toolset_second(bank):
    for i in range(3):
        bank.trajectories.save(_invented_tool(i))
    for i in range(4):
        bank.trajectories.save(_oven(i))
        bank.trajectories.save(_garden(i))
    asked: dict[str, list[str]] = {}

    def validate(skill, tasks):
        asked[skill.name] = tasks
        return {"gain": 0.5, "regressions": [], "cost": 1.0}

    evolve(bank, validate=validate, auto_promote=True, holdout=5)
    (name,) = [n for n in asked if "say-thanks" in n]
    tasks = asked[name]
    own = {f"kitchen-chat-{i}" for i in range(3)}
    ovens = {f"kitchen-oven-{i}" for i in range(4)}
    assert tasks[0] in own and tasks[1] in ovens  # within the first two: where it was learned, where it lands
    assert set(tasks[2:4]) == own - {tasks[0]}
    # the rest of the sample: every bystander before any task of another agent
    held = tasks[1:2] + tasks[4:]
    assert set(held) == ovens | {t for t in held if t.startswith("garden-")}
    assert held[:4] and set(held[:4]) == ovens and all(t.startswith("garden-") for t in held[4:])
    assert len(held) == 5


def test_without_recorded_toolsets_the_evidence_comes_first_as_before(bank):
    for i in range(3):
        bare = _invented_tool(i)
        bank.trajectories.save(bare.model_copy(update={"steps": [s.model_copy(update={"tools_offered": None})
                                                                  for s in bare.steps]}))
    for i in range(4):
        bank.trajectories.save(_garden(i))
    asked: dict[str, list[str]] = {}

    def validate(skill, tasks):
        asked[skill.name] = tasks
        return 0.5

    evolve(bank, validate=validate, auto_promote=True)
    (tasks,) = [t for n, t in asked.items() if "say-thanks" in n]
    assert sorted(tasks[:3]) == [f"kitchen-chat-{i}" for i in range(3)]
    assert all(t.startswith("garden-") for t in tasks[3:])
