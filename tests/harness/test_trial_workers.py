"""Simulated trials in worker processes (``TrialWorkers``): the same trials, the same
outcomes and the same stored trajectories as on threads of this process."""

from __future__ import annotations

import pytest

from skillbank.errors import MeasureError
from skillbank_harness import envs
from skillbank_harness.envs.failures import failure_mass
from skillbank_harness.envs.measure import measure_env
from skillbank_harness.envs.workers import TaskRecipe, TrialWorkers

RECIPE = TaskRecipe(families=("car",), per_template=1, seed=3)


@pytest.fixture(scope="module")
def tasks():
    train, held = envs.split_tasks(list(RECIPE.tasks().values()))
    return train[:4] + held[:2]


def _outcomes(result):
    return {(r.task_id, r.arm, r.trial): (r.success, r.steps, tuple(r.injected)) for r in result.records}


def test_trials_in_workers_match_trials_on_threads(bank, tasks):
    skill = bank.add_skill(name="check-status-first", description="Before changing the car's "
                           "climate or seats, check the vehicle status",
                           body="Always call `get_vehicle_status` before `set_climate`.",
                           tools=["get_vehicle_status", "set_climate"])
    here = measure_env(tasks, trials=2, bank=bank, run_id="threads", progress=False)
    with TrialWorkers(bank.location, RECIPE, processes=2, embedder="hash") as workers:
        there = measure_env(tasks, trials=2, bank=bank, run_id="workers", progress=False,
                            workers=workers)
    assert _outcomes(there) == _outcomes(here)
    assert any(skill.id in r.injected for r in there.records if r.arm == "with")
    # Every worker trial is a finished, labelled trajectory of this bank: a rerun resumes it.
    stored = bank.trajectories.list(labels={"run": "workers"}, limit=None)
    assert len(stored) == len(tasks) * 2 * 2 and all(t.labels["trial_state"] == "finished" for t in stored)
    again = measure_env(tasks, trials=2, bank=bank, run_id="workers", progress=False)
    assert again.ran == 0 and _outcomes(again) == _outcomes(there)


def test_failure_mass_in_a_worker_matches_this_process(bank, tasks):
    baseline = measure_env(tasks, trials=2, bank=bank, arms=("without",), run_id="base", progress=False)
    assert any(not r.success for r in baseline.records), "the car tasks fail sometimes"
    here = failure_mass(baseline.records, tasks,
                        lambda task, seed: envs.run_task(task, envs.SimulatedPolicy(seed=seed)))
    with TrialWorkers(bank.location, RECIPE, processes=1, embedder="hash") as workers:
        there = workers.failure_mass(baseline.records).result()
    assert there == here and there.failed > 0


def test_workers_refuse_a_model_factory_and_a_bank_that_is_not_there(bank, tasks, tmp_path):
    with TrialWorkers(bank.location, RECIPE, processes=1, embedder="hash") as workers:
        with pytest.raises(MeasureError, match="simulated policy only"):
            measure_env(tasks, lambda task, seed: envs.SimulatedPolicy(seed=seed), trials=1,
                        bank=bank, workers=workers, progress=False)
    with pytest.raises(ValueError, match="at least 1"):
        TrialWorkers(bank.location, RECIPE, processes=0)
    with pytest.raises(ValueError, match="pass it by name"):
        TrialWorkers(bank.location, RECIPE, processes=1, embedder=lambda texts: texts)
    with TrialWorkers(str(tmp_path / "no-bank-here"), RECIPE, processes=1, embedder="hash") as workers:
        with pytest.raises(Exception, match="no-bank-here"):
            measure_env(tasks, trials=1, bank=bank, progress=False, workers=workers)
