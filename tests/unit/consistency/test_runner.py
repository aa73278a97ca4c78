"""The consistency runner: shapes, labels, paired seeds, resuming, attribution, splits."""

from __future__ import annotations

import dataclasses
import json
import random
import threading

import pytest

from skillbank.consistency import _metrics as metrics
from skillbank.consistency.runner import (
    MeasureConfig,
    MeasureError,
    MeasureResult,
    SimpleTask,
    TrialOutcome,
    TrialSpec,
    TrialState,
    assign_splits,
    measure,
    trial_seed,
)
from skillbank.models import Injection, Outcome, Step, Trajectory


def make_tasks(n: int = 6) -> list[SimpleTask]:
    return [SimpleTask(id=f"t{i}", type="ab"[i % 2], input=f"do thing {i}",
                       split="train" if i < n - 2 else "heldout") for i in range(n)]


def coin(p_without: float = 0.4, p_with: float = 0.8, calls: list | None = None):
    """A factory whose trials succeed by a seeded coin; records (arm, bank, task, spec)."""

    def factory(arm, bank, task):
        def run(spec: TrialSpec):
            if calls is not None:
                calls.append((arm, bank, task.id, spec))
            p = p_without if arm == "without" else p_with
            return random.Random(spec.seed).random() < p
        return run

    return factory


def run_trajectories(bank, run_id):
    return bank.trajectories.list(labels={"run": run_id}, limit=None)


def test_results_shape_and_labels(bank):
    tasks = make_tasks()
    result = measure(coin(), tasks, trials=4, bank=bank, run_id="r1", progress=False)
    assert isinstance(result, MeasureResult)
    assert result.arms == ("without", "with")
    assert len(result.records) == 6 * 4 * 2 and result.ran == 48 and result.skipped == 0
    for arm in result.arms:
        res = result.results(arm)
        assert sorted(res) == [t.id for t in tasks]
        assert all(len(v) == 4 and all(isinstance(x, bool) for x in v) for v in res.values())
    assert sorted(result.results("with", "heldout")) == ["t4", "t5"]
    assert result.splits == ["train", "heldout"]

    trajs = run_trajectories(bank, "r1")
    assert len(trajs) == 48
    snapshot = bank.snapshot_id()
    for traj in trajs:
        assert traj.success is not None
        assert traj.task_id in {t.id for t in tasks}
        assert traj.task_type == ("ab"[int(traj.task_id[1:]) % 2])
        labels = traj.labels
        assert labels["arm"] in {"without", "with"} and labels["run"] == "r1"
        assert labels["trial"] in {"0", "1", "2", "3"}
        assert labels["split"] == ("train" if int(traj.task_id[1:]) < 4 else "heldout")
        assert labels["snapshot"] == snapshot
        assert int(labels["seed"]) == trial_seed(traj.task_id, int(labels["trial"]))
    # the stored outcomes are the result's outcomes
    by_key = {(t.task_id, t.labels["arm"], int(t.labels["trial"])): t.success for t in trajs}
    for r in result.records:
        assert by_key[(r.task_id, r.arm, r.trial)] == r.success

    # numbers agree with the metric functions
    summary = result.summary("with")
    assert summary.pass_hat_k[3] == metrics.mean_pass_hat_k(result.results("with"), 3)
    assert result.ci("with", k=3) == pytest.approx(metrics.bootstrap_ci(
        result.results("with"), lambda r: metrics.mean_pass_hat_k(r, 3), seed=0))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["splits"]["all"]["arms"]["with"]["summary"]["pass_hat_k"]["3"] == summary.pass_hat_k[3]
    assert set(data["splits"]) == {"all", "train", "heldout"}
    assert len(data["records"]) == 48


def test_arms_get_bank_only_with_and_seeds_are_paired(bank):
    calls: list = []
    measure(coin(calls=calls), make_tasks(4), trials=3, bank=bank, run_id="r2", progress=False,
            concurrency=3)
    assert calls and all((b is None) == (arm == "without") for arm, b, _, _ in calls)
    seeds = {(arm, tid, spec.index): spec.seed for arm, _, tid, spec in calls}
    for (arm, tid, i), seed in seeds.items():
        assert seeds[("without", tid, i)] == seeds[("with", tid, i)] == seed
    for tid in {tid for _, tid, _ in seeds}:
        assert len({seeds[("with", tid, i)] for i in range(3)}) == 3
    assert len({seeds[("with", tid, 0)] for tid in {t for _, t, _ in seeds}}) == 4
    # a different base seed moves every trial's seed
    assert trial_seed("t0", 0, base=1) != trial_seed("t0", 0, base=0)


def test_resume_runs_only_missing_trials(bank):
    tasks = make_tasks(5)
    total = 5 * 3 * 2
    started = {"n": 0}

    def flaky(arm, bank_, task):
        started["n"] += 1
        if started["n"] > 13:
            raise RuntimeError("interrupted")
        return coin()(arm, bank_, task)

    with pytest.raises(RuntimeError, match="interrupted"):
        measure(flaky, tasks, trials=3, bank=bank, run_id="resume", progress=False, concurrency=1)
    finished = len(run_trajectories(bank, "resume"))
    assert finished == 13

    calls: list = []
    result = measure(coin(calls=calls), tasks, trials=3, bank=bank, run_id="resume",
                     progress=False, concurrency=2)
    assert len(calls) == total - finished
    assert result.ran == total - finished and result.skipped == finished
    assert len(run_trajectories(bank, "resume")) == total  # nothing ran twice
    assert all(len(v) == 3 for arm in result.arms for v in result.results(arm).values())
    # the finished trials were not rerun: no (task, arm, trial) was called twice overall
    done_again = {(a, t, s.index) for a, _, t, s in calls}
    assert len(done_again) == len(calls)

    # the resumed result equals a result computed from the trajectories alone
    again = measure(coin(calls=[]), tasks, trials=3, bank=bank, run_id="resume", progress=False)
    assert again.ran == 0 and again.skipped == total
    assert again.results("with") == result.results("with")

    # a different run id is a fresh run
    fresh = measure(coin(), tasks, trials=3, bank=bank, run_id="other", progress=False)
    assert fresh.ran == total


def test_resume_reads_the_trial_state(bank):
    """A finished trial says so in its labels; one labelled by a runner before the state label
    (its latency only) still counts as finished, and a labelled trial in another state does not."""
    tasks = make_tasks(2)
    measure(coin(), tasks, trials=2, bank=bank, run_id="state", progress=False)
    trajs = run_trajectories(bank, "state")
    assert {t.labels["trial_state"] for t in trajs} == {TrialState.finished.value}

    old, other = trajs[0], trajs[1]
    written_before = {k: v for k, v in old.labels.items() if k != "trial_state"}
    bank.trajectories.set_labels(old.id, task_id=old.task_id, task_type=old.task_type,
                                 labels=written_before)
    bank.trajectories.set_labels(other.id, task_id=other.task_id, task_type=other.task_type,
                                 labels={**other.labels, "trial_state": "started"})
    calls: list = []
    again = measure(coin(calls=calls), tasks, trials=2, bank=bank, run_id="state", progress=False)
    rerun = [(task_id, spec.arm, spec.index) for _, _, task_id, spec in calls]
    assert rerun == [(other.task_id, other.labels["arm"], int(other.labels["trial"]))]
    assert again.skipped == len(trajs) - 1 and again.ran == 1


def test_measure_config_and_keywords_are_one_thing(bank):
    config = MeasureConfig(trials=2, arms=("without",), progress=False, seed=3)
    by_config = measure(coin(), make_tasks(2), config=config)
    by_keywords = measure(coin(), make_tasks(2), trials=2, arms=("without",), progress=False, seed=3)
    assert by_config.results("without") == by_keywords.results("without")
    # each field one way: a keyword (or a positional shorthand) beside the whole config is refused
    with pytest.raises(TypeError, match="trials= and config="):
        measure(coin(), make_tasks(2), 1, config=config)
    with pytest.raises(TypeError, match="concurrency= and config="):
        measure(coin(), make_tasks(2), config=config, concurrency=4)
    with pytest.raises(TypeError, match="unexpected keyword argument 'trails'"):
        measure(coin(), make_tasks(2), trails=3)


def test_measure_takes_every_option_as_a_named_parameter():
    import inspect

    from skillbank.consistency.agents import measure_agent

    for function in (measure, measure_agent):
        params = inspect.signature(function).parameters.values()
        assert not [p.name for p in params if p.kind is p.VAR_KEYWORD]
        assert {p.name for p in params} >= {f.name for f in dataclasses.fields(MeasureConfig)}


def test_unfinished_trajectory_is_rerun(bank):
    """A trajectory labelled with the run but without an outcome counts as not done."""
    tasks = make_tasks(2)
    stale = Trajectory(task="do thing 0", task_id="t0", task_type="a",
                       labels={"run": "r3", "arm": "with", "trial": "0"})
    bank.trajectories.save(stale)
    result = measure(coin(), tasks, trials=2, bank=bank, run_id="r3", progress=False)
    assert result.ran == 2 * 2 * 2
    assert len(result.results("with")["t0"]) == 2


def test_trial_returning_trajectory_id_is_used_and_costed(bank):
    skill = bank.add_skill(name="check-first", description="Check before acting",
                           body="Always check first.")
    tasks = make_tasks(2)

    def factory(arm, bank_, task):
        def run(spec):
            traj = Trajectory(task=task.input, status="complete", steps=[
                Step(index=0, kind="model", started_at=Trajectory().started_at, input_tokens=100,
                     output_tokens=20),
                Step(index=1, kind="tool", started_at=Trajectory().started_at, tool="x"),
            ], injections=[] if arm == "without" else [
                Injection(step=0, skill_id=skill.id, version=1, rank=0, score=0.9)])
            tid = bank.trajectories.save(traj)
            return (arm == "with", tid)
        return run

    result = measure(factory, tasks, trials=3, bank=bank, run_id="r4", progress=False)
    assert len(run_trajectories(bank, "r4")) == 12  # the trial's own trajectories, labelled
    assert bank.trajectories.count() == 12
    cost = result.cost("with")
    assert cost["steps"] == 2 and cost["model_turns"] == 1 and cost["tokens"] == 120
    assert result.results("with")["t0"] == [True] * 3
    attr = result.attribution()
    assert [s["name"] for s in attr["skills"]] == ["check-first"]
    row = attr["skills"][0]
    assert row["trials_injected"] == 6 and row["success_when_injected"] == 1.0
    assert row["baseline_success_same_tasks"] == 0.0 and row["delta"] == 1.0
    assert {t["task_id"] for t in attr["tasks"]} == {"t0", "t1"}
    assert attr["tasks"][0]["skills"] == [{"skill_id": skill.id, "name": "check-first", "trials": 3}]
    assert bank.get_skill(skill.id).stats.uses == 6


def test_without_arm_must_not_inject(bank):
    skill = bank.add_skill(name="some-skill", description="Some skill", body="Do it.")

    def factory(arm, bank_, task):
        def run(spec):
            traj = Trajectory(task=task.input, status="complete", injections=[
                Injection(step=0, skill_id=skill.id, version=1, rank=0, score=0.5)])
            return TrialOutcome(success=True, trajectory_id=bank.trajectories.save(traj))
        return run

    with pytest.raises(MeasureError, match="without"):
        measure(factory, make_tasks(1), trials=1, bank=bank, run_id="r5", progress=False)


def test_existing_outcome_is_kept_and_relabel_when_trial_disagrees(bank):
    def factory(arm, bank_, task):
        def run():
            traj = Trajectory(task=task.input, status="complete",
                              outcome=Outcome(success=False, source="verifier"))
            return TrialOutcome(success=True, trajectory_id=bank.trajectories.save(traj))
        return run

    measure(factory, make_tasks(1), trials=1, bank=bank, run_id="r6", progress=False,
            arms=("with",))
    (traj,) = run_trajectories(bank, "r6")
    assert traj.success is True  # the runner's verdict is the one recorded


def test_runnable_with_invoke(bank):
    seen = {}

    class Agent:
        def invoke(self, payload, config=None):
            seen["payload"], seen["config"] = payload, config
            return {"messages": [], "answer": "42"}

    task = SimpleTask(id="q", type="qa", input="what is 6*7?",
                      verify=lambda state: state["answer"] == "42")
    result = measure(lambda arm, b, t: Agent(), [task], trials=2, bank=bank, run_id="r7",
                     progress=False)
    assert result.results("with") == {"q": [True, True]}
    assert seen["payload"] == {"messages": [{"role": "user", "content": "what is 6*7?"}]}
    meta = seen["config"]["metadata"]
    assert meta["skillbank_task_id"] == "q" and meta["skillbank_labels"]["run"] == "r7"


def test_bounded_concurrency_and_progress_callback(bank):
    active, peak, lock = [0], [0], threading.Lock()
    ticks: list[tuple[int, int]] = []
    # Runs meet in pairs: a run returns True only once another run is in flight with it, so
    # serial runs fail (the barrier times out) and more than two at once shows in the peak.
    pair = threading.Barrier(2, timeout=30)

    def factory(arm, bank_, task):
        def run(spec):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            try:
                pair.wait()
                met = True
            except threading.BrokenBarrierError:
                met = False
            with lock:
                active[0] -= 1
            return met
        return run

    result = measure(factory, make_tasks(6), trials=2, bank=bank, run_id="r8", concurrency=2,
                     progress=lambda done, total: ticks.append((done, total)))
    assert [r.success for r in result.records] == [True] * 24  # every run had a partner
    assert peak[0] == 2
    assert ticks[0] == (0, 24) and ticks[-1] == (24, 24)


def test_without_bank_runs_in_memory():
    result = measure(coin(), make_tasks(3), trials=2, arms=("without",), progress=False)
    assert result.ran == 6 and result.records[0].trajectory_id is None
    with pytest.raises(MeasureError, match="needs a bank"):
        measure(coin(), make_tasks(3), trials=2, progress=False)


@pytest.mark.parametrize("kwargs, match", [
    ({"trials": 0}, "trials"),
    ({"arms": ("with", "with")}, "distinct"),
    ({"concurrency": 0}, "concurrency"),
])
def test_bad_arguments(bank, kwargs, match):
    with pytest.raises(MeasureError, match=match):
        measure(coin(), make_tasks(2), bank=bank, progress=False, **{"trials": 2, **kwargs})


def test_duplicate_task_ids(bank):
    tasks = [SimpleTask("x", "a", "1"), SimpleTask("x", "a", "2")]
    with pytest.raises(MeasureError, match="duplicate"):
        measure(coin(), tasks, trials=1, bank=bank, progress=False)


def test_delta_and_headline(bank):
    result = measure(coin(0.0, 1.0), make_tasks(4), trials=3, bank=bank, progress=False)
    delta = result.delta(k=3)
    assert delta["delta"] == 1.0 and delta["ci"] == [1.0, 1.0]
    head = result.headline()
    assert head["with"]["pass^3"] == 1.0 and head["without"]["pass@3"] == 0.0
    assert result.delta(k=3, metric="gap")["delta"] == 0.0


def test_assign_splits_keeps_templates_together():
    tasks = [SimpleTask(id=f"{t}-{i}", type=typ, input="x")
             for typ in ("a", "b") for t in (f"{typ}1", f"{typ}2", f"{typ}3", f"{typ}4")
             for i in range(3)]
    for task in tasks:
        object.__setattr__(task, "template", task.id.split("-")[0])  # frozen dataclass
    splits = assign_splits(tasks, held_out=0.25, seed=1)
    by_template: dict[str, set[str]] = {}
    for task in tasks:
        by_template.setdefault(task.template, set()).add(splits[task.id])
    assert all(len(v) == 1 for v in by_template.values())
    for typ in ("a", "b"):
        held = {t for t, v in by_template.items() if t.startswith(typ) and v == {"heldout"}}
        assert len(held) == 1
    assert assign_splits(tasks, held_out=0.25, seed=1) == splits


def test_skill_provenance_reports_evidence_splits(bank):
    from skillbank.consistency._attribution import skill_provenance

    tasks = make_tasks(6)
    measure(coin(), tasks, trials=1, bank=bank, run_id="p", progress=False, arms=("with",))
    trajs = {t.task_id: t.id for t in run_trajectories(bank, "p")}
    bank.add_skill(name="from-train", description="Learned on train", body="x",
                   provenance=[trajs["t0"], trajs["t1"]])
    bank.add_skill(name="peeked", description="Learned on held-out", body="y",
                   provenance=[trajs["t1"], trajs["t5"], "tr_gone"])
    bank.add_skill(name="by-hand", description="Written by a person", body="z")
    rows = {r["name"]: r for r in skill_provenance(bank)}
    assert rows["from-train"]["evidence_splits"] == {"train": 2}
    assert rows["from-train"]["held_out_evidence"] is False
    assert rows["peeked"]["evidence_splits"] == {"heldout": 1, "missing": 1, "train": 1}
    assert rows["peeked"]["held_out_evidence"] is True
    assert rows["peeked"]["evidence_runs"] == ["p"]
    assert rows["by-hand"]["evidence"] == 0 and rows["by-hand"]["evidence_splits"] == {}
