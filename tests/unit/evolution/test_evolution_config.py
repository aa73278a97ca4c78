"""``EvolutionConfig`` fields set one at a time, each against its default: ``quarantine_flagged``
and the support and size thresholds of a round; and the gate's ``min_gain`` and ``holdout``
(``GateConfig``); and that ``evolve``'s gate keywords are the same setting as a whole ``GateConfig``."""

from __future__ import annotations

import dataclasses

import pytest

from skillbank import SkillBank
from skillbank.evolution import EvolutionConfig, GateConfig, LLMDistiller, evolve
from skillbank.models import SkillStatus
from test_evolution_support import refund, window


def _refunds(bank, n=3):
    for i in range(n):
        bank.trajectories.save(refund(i))


def _procedures(report):
    return [c for c in report.changes if c.skill.startswith("refund-order")]


@pytest.mark.parametrize("min_gain, decision", [(0.05, "promoted"), (0.1, "rejected"), (0.2, "rejected")])
def test_min_gain_is_the_gain_a_candidate_must_beat(bank, min_gain, decision):
    _refunds(bank)
    report = evolve(bank, gate=GateConfig(validate=lambda skill, tasks: {"gain": 0.1, "regressions": [], "cost": 1.0},
                                          auto_promote=True, min_gain=min_gain))
    assert [d.decision for d in report.gate] == [decision]  # gain > min_gain, strictly


def _gains(gain):
    return lambda skill, tasks: {"gain": gain, "regressions": [], "cost": 1.0}


@pytest.mark.parametrize("how", ["keywords", "gate config"])
def test_the_gate_config_and_the_keywords_are_one_setting(bank, how):
    _refunds(bank)
    if how == "keywords":
        report = evolve(bank, validate=_gains(0.1), auto_promote=True)
    else:
        report = evolve(bank, gate=GateConfig(validate=_gains(0.1), auto_promote=True))
    assert [d.decision for d in report.gate] == ["promoted"]


def test_evolution_config_is_frozen_and_holds_no_gate_setting():
    config = EvolutionConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.min_support = 3  # type: ignore[misc]
    assert dataclasses.replace(config, min_support=3).min_support == 3
    with pytest.raises(TypeError):
        EvolutionConfig(min_gain=0.2)  # the gate's: GateConfig(min_gain=...)


@pytest.mark.parametrize("holdout", [0, 2, 50])
def test_holdout_is_how_many_other_tasks_a_candidate_is_validated_on(bank, holdout):
    _refunds(bank)
    for i in range(4):
        bank.trajectories.save(window(i))
    asked = {}

    def validate(skill, tasks):
        asked[skill.name] = tasks
        return {"gain": 0.5, "regressions": [], "cost": float(len(tasks))}

    evolve(bank, gate=GateConfig(validate=validate, auto_promote=True, holdout=holdout))
    (name,) = [n for n in asked if n.startswith("refund-order")]
    own = [f"retail-refund-{i:04d}" for i in range(3)]
    others = [f"car-{i:03d}" for i in range(4)]
    assert asked[name][:3] == own  # its evidence tasks first
    sampled = asked[name][3:]
    assert len(sampled) == min(holdout, len(others)) and set(sampled) <= set(others)
    assert len(set(sampled)) == len(sampled)


@pytest.mark.parametrize("quarantine", [True, False])
def test_quarantine_flagged_keeps_or_drops_an_injection_like_candidate(bank, quarantine):
    from test_hardening_poison import _copying_model, _log_poisoned_successes, _poisoned

    _log_poisoned_successes(bank)
    report = evolve(bank, distiller=LLMDistiller(_copying_model()), promote_policy="all",
                    config=EvolutionConfig(quarantine_flagged=quarantine))
    poisoned = [s for s in bank.list_skills() if _poisoned(s)]
    if quarantine:
        assert [s.status for s in poisoned] == [SkillStatus.quarantined] and report.rejected == []
    else:  # dropped, and the report says why
        assert poisoned == []
        (change,) = report.rejected
        assert change.status == "rejected" and change.note.startswith("lint: injection")


@pytest.mark.parametrize("guard_min_support, failures, guarded", [(1, 1, True), (2, 1, False), (2, 2, True)])
def test_guard_min_support_is_the_failures_a_guard_needs(bank, guard_min_support, failures, guarded):
    for i in range(failures):
        bank.trajectories.save(window(i))
    report = evolve(bank, promote_policy="all", config=EvolutionConfig(guard_min_support=guard_min_support))
    names = [c.skill for c in report.changes]
    assert ("when-open-window-is-unavailable" in names) is guarded, names


@pytest.mark.parametrize("min_procedure_steps, induced", [(2, True), (3, True), (4, False)])
def test_min_procedure_steps_is_the_shortest_method_worth_a_skill(bank, min_procedure_steps, induced):
    _refunds(bank)  # a three-step method
    report = evolve(bank, promote_policy="all", config=EvolutionConfig(min_procedure_steps=min_procedure_steps))
    assert bool(_procedures(report)) is induced, [c.skill for c in report.changes]


@pytest.mark.parametrize("min_support, runs, induced", [(2, 2, True), (3, 2, False), (3, 3, True)])
def test_min_support_is_the_successes_a_new_skill_needs(tmp_path, min_support, runs, induced):
    with SkillBank.open(tmp_path / "bank", embedder="hash") as bank:
        _refunds(bank, runs)
        report = evolve(bank, promote_policy="all", min_support=min_support)
        assert bool(_procedures(report)) is induced

