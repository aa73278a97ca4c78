"""Randomized exposure, its record, the anytime-valid live effect and the monitor (skillbank.live)."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from test_evolution_support import refund

from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import Block, SkillInjector
from skillbank.live._canary import start_canary, without_canary
from skillbank.live._config import CANARY_TAG, LiveConfig
from skillbank.live._confseq import bernoulli_cs, difference_cs
from skillbank.live._decisions import last_decision
from skillbank.live._effect import Tally
from skillbank.live._exposure import Arm, Exposure, ExposureDraw, draw
from skillbank.live._monitor import Action, decide, monitor
from skillbank.models import SkillStatus

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_live.py"


def _skill(bank, name, **kw):
    return bank.add_skill(name=name, description=f"Refund an order that arrived damaged ({name})",
                          body=f"Do {name}.", **kw)


# -- the draw ------------------------------------------------------------------------------------------


def test_the_draw_is_fixed_by_run_skill_and_salt_and_spreads_evenly():
    assert draw("run-1", "sk-1", "s") == draw("run-1", "sk-1", "s")
    assert draw("run-1", "sk-1", "s") != draw("run-1", "sk-1", "t") != draw("run-2", "sk-1", "t")
    values = [draw(f"run-{i}", "sk-1") for i in range(4000)]
    assert all(0.0 <= v < 1.0 for v in values)
    assert 0.47 < sum(v < 0.5 for v in values) / len(values) < 0.53


def test_canaries_are_drawn_at_their_exposure_active_skills_at_the_holdout_and_pinned_never(bank):
    canary = start_canary(bank.skills, _skill(bank, "canary-one").id)
    active = _skill(bank, "active-one")
    pinned = bank.pin(start_canary(bank.skills, _skill(bank, "pinned-one").id).id)
    draws = ExposureDraw(LiveConfig(canary_exposure=0.3, holdout=0.1))
    arms = [{e.skill_id: e for e in draws.assign(f"run-{i}", [canary, active, pinned])} for i in range(2000)]
    assert all(pinned.id not in a for a in arms)
    shown_canary = sum(a[canary.id].arm == Arm.shown for a in arms) / len(arms)
    held_active = sum(a[active.id].arm == Arm.held for a in arms) / len(arms)
    assert 0.26 < shown_canary < 0.34 and 0.07 < held_active < 0.13
    assert {a[canary.id].p_shown for a in arms} == {0.3}
    # Holdout 0: active skills are not randomized at all; without a run, canaries stay out.
    assert [e.skill_id for e in ExposureDraw(LiveConfig(holdout=0.0)).assign("r", [active, canary])] == [canary.id]
    assert ExposureDraw().assign(None, [canary])[0].arm == Arm.held


# -- the injector: held-back skills are not shown, and a run keeps its arm -----------------------------


def test_the_injector_holds_back_by_the_run_s_draw_and_records_each_draw_once(bank):
    canary = start_canary(bank.skills, _skill(bank, "refund-canary").id)
    injector = SkillInjector(bank, InjectionConfig(k=3, reminders=False))
    seen = {Arm.shown: 0, Arm.held: 0}
    for _ in range(40):
        block = Block()
        first = injector.inject([], "Refund order 4001, it arrived damaged", block=block)
        arm = block.exposures[canary.id].arm
        seen[arm] += 1
        assert [(e.skill_id, e.arm) for e in first.exposures] == [(canary.id, arm)]
        assert (canary.id in block.ids()) == (arm == Arm.shown)
        assert (canary.id in {h.skill.id for h in first.hits}) == (arm == Arm.shown)
        again = injector.inject([], "Refund order 4001, it arrived damaged", block=block)
        assert again.exposures == () and (canary.id in block.ids()) == (arm == Arm.shown)
        assert draw(block.run_id, canary.id) < 0.5 if arm == Arm.shown else draw(block.run_id, canary.id) >= 0.5
    assert seen[Arm.shown] > 5 and seen[Arm.held] > 5


def test_without_a_live_config_active_skills_are_always_shown(bank):
    active = _skill(bank, "refund-active")
    for _ in range(30):
        block = Block()
        SkillInjector(bank, InjectionConfig(k=3, reminders=False)).inject(
            [], "Refund order 4001, it arrived damaged", block=block)
        assert active.id in block.ids() and block.exposures == {}
    held = 0
    for _ in range(60):
        block = Block()
        SkillInjector(bank, InjectionConfig(k=3, reminders=False, live=LiveConfig(holdout=0.5))).inject(
            [], "Refund order 4001, it arrived damaged", block=block)
        held += active.id not in block.ids()
    assert 10 < held < 50


# -- the confidence sequence ------------------------------------------------------------------------


def test_the_bernoulli_cs_covers_the_mean_at_every_size_in_most_streams():
    misses = 0
    for seed in range(200):
        rng = random.Random(seed)
        s = 0
        for n in range(1, 1001):
            s += rng.random() < 0.3
            i = bernoulli_cs(s, n, alpha=0.05)
            if not i.low <= 0.3 <= i.high:
                misses += 1
                break
    assert misses <= 10  # at most alpha of the streams ever miss
    assert bernoulli_cs(300, 1000).high - bernoulli_cs(300, 1000).low < bernoulli_cs(30, 100).high - \
        bernoulli_cs(30, 100).low


def test_the_difference_excludes_zero_only_with_enough_evidence():
    assert not difference_cs((6, 10), (4, 10)).excludes_zero()
    big = difference_cs((700, 1000), (400, 1000))
    assert big.low > 0 and big.estimate == pytest.approx(0.3)
    assert difference_cs((400, 1000), (700, 1000)).high < 0
    assert difference_cs((0, 0), (5, 10)).estimate is None


# -- the decision rule --------------------------------------------------------------------------------


def _tally(shown, held, kind=None):
    t = Tally()
    for arm, (s, n) in (("shown", shown), ("held", held)):
        for i in range(n):
            t.add(arm, i < s, kind=kind)
    return t


def test_decide_promotes_rejects_retires_and_leaves_pinned_and_person_decided_alone(bank):
    canary = start_canary(bank.skills, _skill(bank, "c1").id)
    active = _skill(bank, "a1")
    config = LiveConfig()
    good, bad = _tally((700, 1000), (400, 1000)), _tally((400, 1000), (700, 1000))
    assert decide(canary, good, config).action == Action.promote
    assert decide(canary, bad, config).action == Action.reject
    assert decide(active, bad, config).action == Action.retire
    assert decide(active, good, config) is None  # an active skill that helps stays as it is
    assert decide(canary, _tally((6, 10), (4, 10)), config) is None
    assert decide(bank.pin(canary.id), bad, config) is None
    assert decide(canary, bad, config, held_by_person=True) is None
    stale = decide(canary, Tally(), config, now=canary.updated_at + timedelta(days=30))
    assert stale.action == Action.stale


def test_decide_narrows_a_skill_that_helps_one_kind_and_hurts_another(bank):
    canary = start_canary(bank.skills, _skill(bank, "c2").id)
    t = _tally((400, 500), (200, 500), kind="refund <num>")
    for arm, (s, n) in (("shown", (100, 500)), ("held", (300, 500))):
        for i in range(n):
            t.add(arm, i < s, kind="track <num>")
    d = decide(canary, t, LiveConfig())
    assert d.action == Action.narrow and d.hurts == ("track <num>",)


# -- the bank: the record, the monitor's versions, once ---------------------------------------------


def _runs(bank, skill, n, p_shown, p_held, seed=0, p_exposure=0.5):
    rng = random.Random(seed)
    for i in range(n):
        arm = Arm.shown if rng.random() < p_exposure else Arm.held
        success = rng.random() < (p_shown if arm == Arm.shown else p_held)
        tid = bank.trajectories.save(refund(i, success=success))
        bank.exposures.record(tid, [Exposure(skill.id, skill.version, arm, p_exposure)])


def test_monitor_promotes_a_canary_once_as_a_version_by_monitor_with_its_evidence(bank):
    canary = start_canary(bank.skills, _skill(bank, "refund-canary").id)
    _runs(bank, canary, 300, 0.9, 0.3)
    dry = bank.monitor()
    assert [d.action for d in dry.decisions] == [Action.promote]
    assert CANARY_TAG in bank.get_skill(canary.id).tags  # a dry run writes nothing
    done = bank.monitor(apply=True)
    assert [s.applied for s in done.skills] == [True]
    skill = bank.get_skill(canary.id)
    assert CANARY_TAG not in skill.tags and skill.status == SkillStatus.active
    last = bank.history(canary.id)[-1]
    assert last.author == "monitor" and last.reason.startswith("monitor: promote")
    assert "evidence" not in last.reason  # typed data on the change log, not text in the reason
    evidence = bank.skills.recorded_evidence([canary.id])[canary.id][last.version]
    assert evidence["overall"]["interval"][0] > 0 and sum(evidence["overall"]["shown"]) > 0
    assert last_decision(bank.history(canary.id), {last.version: evidence}).evidence == evidence
    assert bank.verify(check_index=False).ok  # the evidence is hash-chained with its version
    versions = len(bank.history(canary.id))
    assert bank.monitor(apply=True).decisions == []  # promoted once: it helps, so it stays
    assert len(bank.history(canary.id)) == versions


def test_monitor_rejects_a_harmful_canary_and_a_person_s_pin_wins(bank):
    hurt = start_canary(bank.skills, _skill(bank, "refund-hurt").id)
    _runs(bank, hurt, 300, 0.3, 0.9, seed=1)
    bank.pin(hurt.id)
    assert bank.monitor(apply=True).decisions == []
    bank.pin(hurt.id, False)
    bank.monitor(apply=True)
    assert bank.get_skill(hurt.id).status == SkillStatus.retired
    assert bank.history(hurt.id)[-1].author == "monitor"


def test_exposures_keep_the_first_arm_and_join_the_outcome_recorded_later(bank):
    skill = _skill(bank, "refund-a")
    tid = bank.trajectories.save(refund(0))
    bank.exposures.record(tid, [Exposure(skill.id, skill.version, Arm.held, 0.95)])
    bank.exposures.record(tid, [Exposure(skill.id, skill.version, Arm.shown, 0.95)])
    assert [(e.arm, e.p_shown) for e in bank.exposures.for_run(tid)] == [("held", 0.95)]
    bank.record_outcome(tid, success=False)
    (run,) = bank.exposures.runs([skill.id])
    assert run.success is False and run.tokens > 0 and run.steps > 0


# -- the command ------------------------------------------------------------------------------------


def test_the_monitor_command_prints_each_skill_s_live_effect(bank, cli_env, tmp_path):
    from typer.testing import CliRunner

    from skillbank.cli import app

    canary = start_canary(bank.skills, _skill(bank, "refund-canary").id)
    _runs(bank, canary, 300, 0.9, 0.3)
    where = str(bank.path)
    out = CliRunner().invoke(app, ["monitor", "--json", "--dir", where])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    (s,) = data["skills"]
    assert s["canary"] and s["decision"]["action"] == "promote" and not s["applied"]
    table = CliRunner().invoke(app, ["monitor", "--dir", where])
    assert "refund-canary" in table.output and "promote" in table.output
    applied = CliRunner().invoke(app, ["monitor", "--apply", "--json", "--dir", where])
    assert json.loads(applied.output)["skills"][0]["applied"] is True


# -- the simulated stream (a small benchmarks/bench_live.py) ------------------------------------------


def test_the_simulated_stream_gets_each_skill_s_decision():
    spec = importlib.util.spec_from_file_location("bench_live", BENCH)
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_live"] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    config = LiveConfig(holdout=0.2, stale_after=timedelta(days=3650))  # a wide holdout: a short stream
    decided = bench.stream(0, 8000, config)
    assert {n: bench.first(d)[0] for n, d in decided.items()} == bench.EXPECTED
    null = [bench.stream(100 + s, 1500, config, null=True) for s in range(3)]
    assert not any(any(d.values()) for d in null)


# -- an agent: the run's exposure is recorded under its trajectory, with the arm it was shown ----------


def test_an_agent_run_records_its_exposures_and_a_held_back_skill_is_not_in_its_prompt(bank):
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from skillbank.adapters.langchain import SkillBankMiddleware
    from skillbank.adapters.testing import ScriptedChatModel

    @tool
    def ping() -> str:
        """Ping the server."""
        return "pong"

    canary = start_canary(bank.skills, bank.add_skill(name="ping-politely", description="pinging a server",
                                                      body="Ping once, then answer.").id)
    arms = set()
    for i in range(12):
        model = ScriptedChatModel(["done"])
        mw = SkillBankMiddleware(bank, k=2, verifier=lambda state: True)
        create_agent(model, [ping], middleware=[mw]).invoke({"messages": [("user", f"ping the server {i}")]})
        tid = mw.recording_middleware.last_trajectory_id
        (exposure,) = bank.exposures.for_run(tid)
        arms.add(exposure.arm)
        injected = {x.skill_id for x in bank.trajectories.get(tid).injections}
        assert (canary.id in injected) == (exposure.arm == "shown")
    assert arms == {"shown", "held"}
    (live,) = bank.monitor().skills
    assert live.tally.overall.shown.labelled + live.tally.overall.held.labelled == 12


def test_monitor_narrows_by_kind_of_request_and_flags_a_canary_without_runs_stale(bank):
    mixed = start_canary(bank.skills, _skill(bank, "refund-mixed").id)
    rng = random.Random(3)
    for i in range(800):
        kind = ("refund", "track")[i % 2]
        arm = Arm.shown if rng.random() < 0.5 else Arm.held
        good = (arm == Arm.shown) == (kind == "refund")
        tid = bank.trajectories.save(refund(i, success=rng.random() < (0.85 if good else 0.25), task_type=kind))
        bank.exposures.record(tid, [Exposure(mixed.id, mixed.version, arm, 0.5)])
    (decision,) = bank.monitor(apply=True).decisions
    assert decision.action == Action.narrow and decision.hurts == ("track",)
    skill = bank.get_skill(mixed.id)
    assert skill.description.endswith('Not for requests like "track".') and CANARY_TAG in skill.tags
    # Narrowed: the evidence starts again with the new content, so nothing more is decided now.
    assert bank.monitor(apply=True).decisions == []
    quiet = start_canary(bank.skills, _skill(bank, "refund-quiet").id)
    later = quiet.updated_at + timedelta(days=20)
    flags = [d for d in monitor(bank, now=later).decisions if d.skill_id == quiet.id]
    assert [d.action for d in flags] == [Action.stale]
    monitor(bank, now=later, apply=True)  # a flag: nothing is written
    assert bank.get_skill(quiet.id).version == quiet.version


def test_evolve_with_the_canary_policy_puts_every_new_skill_into_canary(bank):
    from skillbank.evolution import evolve
    from skillbank.evolution._review import list_candidates
    from test_evolution_support import window

    for i in range(3):
        bank.trajectories.save(refund(i))
        bank.trajectories.save(window(i))
    report = evolve(bank, promote_policy="canary")
    added = [bank.get_skill(c.skill) for c in report.changes]
    assert added and all(CANARY_TAG in s.tags and s.status == SkillStatus.active for s in added)
    assert all(bank.history(s.id)[-1].author == "policy" for s in added)
    assert list_candidates(bank) == []
    assert {s.skill.id for s in bank.monitor().skills} == {s.id for s in added}


def test_a_person_s_promotion_of_a_canary_wins_over_later_evidence(bank):
    from skillbank.live._canary import without_canary

    canary = start_canary(bank.skills, _skill(bank, "refund-kept").id)
    bank.skills.new_version(canary.id, content=without_canary(canary.content), reason="I want it", author="human")
    kept = bank.get_skill(canary.id)
    _runs(bank, kept, 300, 0.2, 0.9, seed=4, p_exposure=0.8)
    (live,) = bank.monitor(LiveConfig(holdout=0.2)).skills
    assert live.held_by_person and live.decision is None
    assert live.tally.overall.interval(0.05).high < 0  # the evidence says harmful; the person decided


def test_the_monitor_command_on_a_bank_without_randomized_skills_says_how_to_start(bank, cli_env):
    from typer.testing import CliRunner

    from skillbank.cli import app

    _skill(bank, "refund-plain")
    out = CliRunner().invoke(app, ["monitor", "--dir", str(bank.path)])
    assert out.exit_code == 0 and "No randomized skill yet" in out.output and "refund-plain" not in out.output


def test_prune_keeps_a_skill_whose_live_effect_helps_though_its_runs_mostly_fail(bank):
    # A skill shown where requests are hard: its runs succeed 40% of the time, the held-back runs
    # 10%. Its raw success rate is below the rule's 0.7; the live effect says it helps.
    skill = _skill(bank, "refund-hard")
    rng = random.Random(3)
    for i in range(300):
        arm = Arm.shown if rng.random() < 0.5 else Arm.held
        success = rng.random() < (0.4 if arm == Arm.shown else 0.1)
        tid = bank.trajectories.save(refund(i, success=success, skill=skill if arm == Arm.shown else None))
        bank.exposures.record(tid, [Exposure(skill.id, skill.version, arm, 0.05)])
    plan = bank.prune_plan(min_success_rate=0.7)
    assert plan.retire == []
    (kept,) = plan.spared
    assert kept.skill_id == skill.id and kept.effect.kind.value == "live" and kept.effect.gain > 0


def test_the_monitor_decides_on_a_cadence_once_per_decision(bank, cli_env):
    from typer.testing import CliRunner

    from skillbank.cli import app

    canary = start_canary(bank.skills, _skill(bank, "refund-canary").id)
    _runs(bank, canary, 300, 0.9, 0.3)
    where = str(bank.path)
    out = CliRunner().invoke(app, ["monitor", "--apply", "--every", "0", "--rounds", "3", "--json", "--dir", where])
    assert out.exit_code == 0, out.output
    rounds = [json.loads(line) for line in out.output.splitlines()]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    assert [[s["applied"] for s in r["skills"]] for r in rounds] == [[True], [False], [False]]
    assert [v.author for v in bank.history(canary.id)].count("monitor") == 1
    text = CliRunner().invoke(app, ["monitor", "--apply", "--every", "0", "--rounds", "1", "--dir", where])
    assert "round 1: 1 randomized skill(s), no decision written" in text.output


def test_the_monitor_cadence_needs_apply_and_rounds_need_a_cadence(bank, cli_env):
    from typer.testing import CliRunner

    from skillbank.cli import app

    where = str(bank.path)
    no_apply = CliRunner().invoke(app, ["monitor", "--every", "60", "--dir", where])
    assert no_apply.exit_code != 0 and "add --apply" in no_apply.output
    no_every = CliRunner().invoke(app, ["monitor", "--apply", "--rounds", "2", "--dir", where])
    assert no_every.exit_code != 0 and "--rounds goes with --every" in no_every.output


def test_a_version_written_before_evidence_events_is_read_from_its_reason(bank):
    """Banks whose monitor wrote the evidence as JSON after "; evidence" in the reason read unchanged."""
    canary = start_canary(bank.skills, _skill(bank, "refund-legacy").id)
    old = {"overall": {"shown": [9, 10], "held": [3, 10], "difference": 0.6, "interval": [0.1, 0.9], "alpha": 0.05}}
    bank.skills.new_version(canary.id, content=without_canary(canary.content), author="monitor",
                            reason="monitor: promote: helps; evidence " + json.dumps(old), action="status:active")
    assert bank.skills.recorded_evidence([canary.id]) == {}
    assert last_decision(bank.history(canary.id)).evidence == old
