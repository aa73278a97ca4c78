"""The adapter proven without a model: BFCL's ground truth, replayed turn by turn through the
real ``create_agent`` loop, our tools and the runner, passes BFCL's checker; with one call
dropped or altered it fails. The fast tests take a sample; the slow ones every entry."""

from __future__ import annotations

import ast
import copy

import pytest
from bfcl_support import (
    CHECKER_BLIND_TO_ALTERATION,
    UNPASSABLE,
    UNPASSABLE_ONE_CALL_PER_STEP,
    require_bfcl,
)

require_bfcl()

from skillbank_harness import envs  # noqa: E402
from skillbank_harness.envs.measure import ARM_WITHOUT, measure_env  # noqa: E402
from skillbank_harness.envs import bfcl  # noqa: E402


@pytest.fixture(scope="module")
def all_tasks():
    return bfcl.load_tasks(bfcl.CATEGORIES)


@pytest.fixture(scope="module")
def sample(all_tasks):
    multi = [t for t in all_tasks if t.type != "long_context"]
    chosen = bfcl.spread(multi, 8) + bfcl.spread([t for t in all_tasks if t.type == "long_context"], 3)
    chosen += [t for t in all_tasks if t.id in UNPASSABLE or t.id in UNPASSABLE_ONE_CALL_PER_STEP]
    return list({t.id: t for t in chosen}.values())


def drop_last(turns: list[list[str]]) -> list[list[str]]:
    """The ground truth without its last call."""
    out = copy.deepcopy(turns)
    last = max(i for i, turn in enumerate(out) if turn)
    out[last].pop()
    return out


def _altered(call: str) -> str | None:
    node = ast.parse(call, mode="eval").body
    for arg in [*node.args, *(k.value for k in node.keywords)]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            arg.value += "_x"
            return ast.unparse(node)
        if isinstance(arg, ast.Constant) and type(arg.value) in (int, float):
            arg.value += 7
            return ast.unparse(node)
    return None


def alter_last(turns: list[list[str]]) -> list[list[str]]:
    """The ground truth with the last call that has a text or number argument changed."""
    out = copy.deepcopy(turns)
    for t in reversed(range(len(out))):
        for i in reversed(range(len(out[t]))):
            if (changed := _altered(out[t][i])) is not None:
                out[t][i] = changed
                return out
    raise AssertionError("no call with a text or number argument")


def _replay(task, turns=None, *, parallel=False):
    return envs.run_task(task, bfcl.GroundTruthModel.for_task(task, turns, parallel=parallel))


def _failures(tasks, **kw) -> dict[str, str]:
    out = {}
    for task in tasks:
        result = _replay(task, **kw)
        if not result.success:
            out[task.id] = (result.env.last_check or {}).get("error_type", "no verdict")
    return out


# ------------------------------------------------------------------------ fast: a sample


def test_replay_through_the_runner_and_middleware_passes(bank, sample):
    """measure_env: run_task + SkillBankMiddleware logging every trial, BFCL's checker judging."""
    result = measure_env(sample, lambda task, seed: bfcl.GroundTruthModel.for_task(task), trials=1,
                         bank=bank, arms=(ARM_WITHOUT,), run_id="replay", progress=False,
                         model="bfcl-ground-truth")
    outcomes = {task_id: runs[0] for task_id, runs in result.results(ARM_WITHOUT).items()}
    expected_fail = set(UNPASSABLE) | set(UNPASSABLE_ONE_CALL_PER_STEP)
    assert len(outcomes) == len(sample)
    assert {t for t, ok in outcomes.items() if not ok} == expected_fail
    for traj in bank.trajectories.list(labels={"run": "replay"}, limit=None, with_steps=True):
        assert traj.status == "complete" and traj.success == outcomes[traj.task_id]
        task = next(t for t in sample if t.id == traj.task_id)
        n_calls = sum(len(turn) for turn in task.ground_truth)
        if traj.success:
            assert sum(s.kind == "tool" for s in traj.steps) == n_calls


def test_parallel_replay_passes(sample):
    assert _failures(sample, parallel=True) == {t: "multi_turn:execution_response_mismatch"
                                                for t in UNPASSABLE}


def test_replay_with_a_call_dropped_or_altered_fails(sample):
    passable = [t for t in sample if t.id not in UNPASSABLE and t.id not in UNPASSABLE_ONE_CALL_PER_STEP]
    for task in passable:
        assert not _replay(task, drop_last(task.ground_truth)).success, task.id
        if task.id not in CHECKER_BLIND_TO_ALTERATION:
            assert not _replay(task, alter_last(task.ground_truth)).success, task.id


# ------------------------------------------------------------------------ slow: every entry


@pytest.mark.slow
@pytest.mark.parametrize("category", bfcl.CATEGORIES)
def test_every_entry_replays(all_tasks, category):
    tasks = [t for t in all_tasks if t.type == category]
    one_call = _failures(tasks)
    parallel = _failures(tasks, parallel=True)
    known = {t.id for t in tasks} & set(UNPASSABLE)
    assert set(parallel) == known, parallel
    assert set(one_call) == known | ({t.id for t in tasks} & set(UNPASSABLE_ONE_CALL_PER_STEP)), one_call
    print(f"\n{category}: {len(tasks) - len(one_call)}/{len(tasks)} pass one call per step, "
          f"{len(tasks) - len(parallel)}/{len(tasks)} one message per turn")


@pytest.mark.slow
@pytest.mark.parametrize("category", bfcl.CATEGORIES)
def test_every_mutated_entry_fails(all_tasks, category):
    tasks = [t for t in all_tasks if t.type == category and t.id not in UNPASSABLE]
    passed_dropped = [t.id for t in tasks if _replay(t, drop_last(t.ground_truth), parallel=True).success]
    passed_altered = [t.id for t in tasks if _replay(t, alter_last(t.ground_truth), parallel=True).success]
    assert passed_dropped == []
    assert set(passed_altered) == {t.id for t in tasks} & CHECKER_BLIND_TO_ALTERATION
