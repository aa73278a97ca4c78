"""``measure_env`` on the bundled environments with the simulated policy, and the gate's
validator (``make_validator``) with a candidate seen through ``CandidateView``."""

from __future__ import annotations

import pytest

from skillbank_harness import envs
from skillbank_harness.envs.measure import measure_env
from skillbank.consistency.validation import CandidateView, ValidationConfig, make_validator
from skillbank.models import SkillStatus


@pytest.fixture(scope="module")
def tasks():
    all_tasks = envs.generate_tasks(["car"], per_template=1, seed=3, budget=False)
    train, held = envs.split_tasks(all_tasks)
    return train[:3] + held[:1]


def test_measure_env_logs_both_arms_and_labels(bank, tasks):
    skill = bank.add_skill(name="check-status-first", description="Before changing the car's "
                           "climate or seats, check the vehicle status",
                           body="Always call `get_vehicle_status` before `set_climate`.",
                           tools=["get_vehicle_status", "set_climate"])
    result = measure_env(tasks, trials=3, bank=bank, run_id="env", progress=False)
    assert result.simulated is True and result.model == "simulated-policy"
    trajs = bank.trajectories.list(labels={"run": "env"}, limit=None, with_steps=True)
    assert len(trajs) == len(tasks) * 3 * 2
    for traj in trajs:
        assert traj.status != "running" and traj.success is not None
        assert traj.steps, "the middleware recorded the run"
        assert traj.task_id in {t.id for t in tasks}
        assert traj.labels["split"] in {"train", "heldout"}
        if traj.labels["arm"] == "without":
            assert traj.injections == []
    injected = [t for t in trajs if t.labels["arm"] == "with" and t.injections]
    assert injected and all(i.skill_id == skill.id for t in injected for i in t.injections)
    assert result.cost("with")["steps"] > 0 and result.cost("with")["tokens"] > 0
    assert result.splits == ["train", "heldout"]

    # paired seeds: with no skill relevant... the outcome record carries the same seed per trial
    seeds = {(r.task_id, r.trial): set() for r in result.records}
    for r in result.records:
        seeds[(r.task_id, r.trial)].add(r.seed)
    assert all(len(s) == 1 for s in seeds.values())

    again = measure_env(tasks, trials=3, bank=bank, run_id="env", progress=False)
    assert again.ran == 0 and again.results("with") == result.results("with")


def test_empty_bank_arms_are_identical(bank, tasks):
    """With nothing to inject, paired seeds make the two arms the same run by run."""
    result = measure_env(tasks, trials=3, bank=bank, progress=False)
    assert result.results("with") == result.results("without")


def test_candidate_view_injects_candidate_and_validator_reports(bank, tasks):
    cand = bank.add_skill(name="car-status-check", description="Before changing the car's "
                          "climate, check the vehicle status", body="Always call "
                          "`get_vehicle_status` before `set_climate`.", status="candidate")
    assert bank.search("set the car climate to 20 degrees") == []  # candidates are not injected
    view = CandidateView(bank, cand)
    hits = view.search("set the car climate to 20 degrees")
    assert [h.skill.id for h in hits] == [cand.id]
    assert hits[0].skill.status == SkillStatus.active

    middlewares = []
    outcomes = []  # (task id, middleware, seed, success) of every trial the validator ran

    def trial_fn(task, middleware, seed):
        middlewares.append(middleware)
        success = envs.run_task(task, envs.SimulatedPolicy(seed=seed), middleware=[middleware]).success
        outcomes.append((task.id, middleware, seed, success))
        return success

    before = bank.trajectories.count()
    validate = make_validator(bank, tasks, trial_fn, ValidationConfig(trials=2, concurrency=2))
    out = validate(cand, [t.id for t in tasks] + ["unknown-task"])
    assert out.cost == len(tasks) * 2 * 2 and out.checked == tuple(t.id for t in tasks)
    # the gain is the documented mean of the pass^2 change and the success-rate change, over the
    # trials that ran (recomputed here from what trial_fn returned), with paired seeds
    from skillbank.consistency._metrics import pass_hat_k

    arms = list(dict.fromkeys(m for _, m, _, _ in outcomes))
    assert len(arms) == 2
    by = {(t, m): [] for t, m, _, _ in outcomes}
    seeds = {(t, m): set() for t, m, _, _ in outcomes}
    for t, m, seed, success in outcomes:
        by[(t, m)].append(success)
        seeds[(t, m)].add(seed)
    ids = [t.id for t in tasks]
    assert all(seeds[(t, arms[0])] == seeds[(t, arms[1])] for t in ids)  # paired
    d_hat = sum(pass_hat_k(sum(by[(t, arms[1])]), 2, 2) - pass_hat_k(sum(by[(t, arms[0])]), 2, 2)
                for t in ids) / len(ids)
    d_rate = sum((sum(by[(t, arms[1])]) - sum(by[(t, arms[0])])) / 2 for t in ids) / len(ids)
    assert out.gain == pytest.approx((d_hat + d_rate) / 2)
    # the per-task evidence a review can show: each task's outcomes in both arms
    assert [t.task_id for t in out.trials] == ids
    assert all(sorted(t.current) == sorted(by[(t.task_id, arms[0])]) and
               sorted(t.candidate) == sorted(by[(t.task_id, arms[1])]) for t in out.trials)
    assert bank.trajectories.count() == before  # validation stores nothing
    used = list(dict.fromkeys(middlewares))
    assert len(used) == 2  # one middleware per arm, shared by its trials
    current, candidate = used
    assert not current.injected  # the bank has no active skill
    assert candidate.injected[cand.id] > 0
    # the current arm is cached per bank snapshot: a second candidate reruns only its own arm
    middlewares.clear()
    out2 = validate(cand, [tasks[0].id])
    assert out2.cost == 2 and current not in middlewares
    assert validate.log.trials == out.cost + out2.cost


def test_trajectory_found_by_labels_when_the_state_is_lost(bank, tasks):
    """A run stopped by the recursion limit has no final state; its trajectory is found by the
    labels the middleware put on it at the start."""
    from skillbank.consistency.agents import _logged_outcome
    from skillbank.consistency.runner import TrialSpec
    from skillbank.models import Trajectory

    spec = TrialSpec(task=tasks[0], arm="with", index=1, seed=7, run_id="lost",
                     labels={"arm": "with", "run": "lost", "trial": "1", "seed": "7"})
    tid = bank.trajectories.save(Trajectory(task="x", task_id=tasks[0].id, labels=dict(spec.labels)))
    bank.trajectories.save(Trajectory(task="x", task_id=tasks[1].id, labels=dict(spec.labels)))
    outcome = _logged_outcome(None, False, bank, tasks[0], spec)
    assert outcome.trajectory_id == tid and outcome.success is False


def test_candidate_view_is_an_explicit_read_view(bank):
    """The view forwards nothing: it has what the injection middleware reads of a bank (a
    SkillSource) and no way to write, and the candidate reaches a prompt through it."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from skillbank.adapters.injection import inject_skills
    from skillbank.protocols import SkillSource

    cand = bank.add_skill(name="car-status-check", description="Before changing the car's climate, "
                          "check the vehicle status", body="Call `get_vehicle_status` first.",
                          status="candidate")
    view = CandidateView(bank, cand)
    assert not any("__getattr__" in vars(c) for c in type(view).__mro__ if c is not object)
    assert isinstance(view, SkillSource)
    assert not any(hasattr(view, name) for name in ("add_skill", "update_skill", "store", "trajectories", "drafts"))
    messages = inject_skills(view, [SystemMessage("You drive a car."),
                                    HumanMessage("set the car climate to 20 degrees")])
    assert "car-status-check" in messages[0].content
    assert "car-status-check" not in inject_skills(bank, [SystemMessage("You drive a car."),
                                                          HumanMessage("set the car climate to 20 degrees")])[0].content
