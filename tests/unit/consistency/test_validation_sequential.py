"""The gate's sequential validation: it stops when the verdict is settled, and never changes it."""

import random

import pytest

from skillbank import SkillBank
from skillbank.consistency.runner import SimpleTask
from skillbank.consistency.validation import CandidateView, ValidationConfig, make_validator
from skillbank.evolution.gate import as_gate_result

TRIALS = 2


@pytest.fixture
def bank(tmp_path):
    with SkillBank.open(tmp_path / "bank", embedder="hash") as b:
        yield b


def scripted(table):
    """A trial_fn whose outcome is ``table[(arm, task id)][trial]`` (the arm read from the
    middleware's bank: the candidate arm searches a CandidateView), recording each call."""
    calls = []

    def trial_fn(task, middleware, seed):
        arm = "candidate" if isinstance(middleware.injector.bank, CandidateView) else "current"
        done = sum(1 for c in calls if c[:2] == (arm, task.id))
        calls.append((arm, task.id, seed))
        return table[(arm, task.id)][done]

    return trial_fn, calls


def tasks_of(n):
    return [SimpleTask(id=f"t{i}", type="x", input=f"task {i}") for i in range(n)]


def verdict(out):
    return as_gate_result(out).accepted(0.0)


def config(**options):
    return ValidationConfig(trials=TRIALS, **options)


def test_stops_at_the_first_regression(bank):
    cand = bank.add_skill(name="c", description="d", body="b", status="candidate")
    tasks = tasks_of(5)
    table = {(arm, t.id): [True, True] for t in tasks for arm in ("current", "candidate")}
    table[("candidate", "t1")] = [False, False]  # worse on the second task
    trial_fn, calls = scripted(table)
    out = make_validator(bank, tasks, trial_fn, config(concurrency=1))(cand, [t.id for t in tasks])
    assert out.regressions == ("t1",) and not verdict(out)
    assert out.checked == ("t0", "t1") and out.cost == 8  # 2 tasks x 2 arms x 2 trials
    assert {c[1] for c in calls} == {"t0", "t1"}
    assert "stopped after 2 of 5" in out.detail


def test_stops_when_no_gain_is_reachable(bank):
    cand = bank.add_skill(name="c", description="d", body="b", status="candidate")
    tasks = tasks_of(4)
    # Every task already passes without the candidate: no gain is possible; the first task
    # settles it only if the rest are known, so warm the current arm's cache first.
    table = {(arm, t.id): [True, True] for t in tasks for arm in ("current", "candidate")}
    trial_fn, calls = scripted(table)
    validate = make_validator(bank, tasks, trial_fn, config(concurrency=1))
    full = make_validator(bank, tasks, trial_fn, config(concurrency=1, sequential=False))
    full(cand, [t.id for t in tasks])  # (its own cache)
    calls.clear()
    validate(cand, [tasks[0].id, tasks[1].id, tasks[2].id, tasks[3].id])
    assert len(calls) == 16  # nothing known yet: a gain stays possible until the last task
    calls.clear()
    other = bank.add_skill(name="c2", description="d2", body="b2", status="candidate")
    table.update({("candidate", t.id): [True, True] for t in tasks})
    out = validate(other, [t.id for t in tasks])
    # current cached now: after one task with no gain, the best the rest can do is no gain
    assert out.checked == ("t0",) and out.cost == 2 and not verdict(out)
    assert out.gain <= 0.0 and "at most" in out.detail


@pytest.mark.parametrize("case", range(40))
def test_sequential_verdict_equals_running_every_task(bank, case):
    rng = random.Random(case)
    tasks = tasks_of(rng.randint(1, 6))
    lean = rng.random()
    table = {}
    for t in tasks:
        table[("current", t.id)] = [rng.random() < 0.5 for _ in range(TRIALS)]
        table[("candidate", t.id)] = [rng.random() < lean for _ in range(TRIALS)]
    cand = bank.add_skill(name=f"c{case}", description="d", body="b", status="candidate")
    ids = [t.id for t in tasks]
    seq_fn, seq_calls = scripted(table)
    full_fn, full_calls = scripted(table)
    seq = make_validator(bank, tasks, seq_fn, config(concurrency=1))
    full = make_validator(bank, tasks, full_fn, config(concurrency=2, sequential=False))
    if rng.random() < 0.5:  # sometimes the current arm is already cached
        warm = bank.add_skill(name=f"w{case}", description="w", body="w", status="candidate")
        seq(warm, ids)
        seq_calls.clear()  # (the scripted outcomes are read afresh per arm and task)
    a, b = seq(cand, ids), full(cand, ids)
    assert verdict(a) == verdict(b), (a, b)
    assert a.cost <= b.cost and b.cost == len(tasks) * 2 * TRIALS
    if a.checked == b.checked:  # nothing skipped: the very same figures
        assert a.gain == b.gain and a.regressions == b.regressions
    # paired seeds: a trial has the same seed however the tasks were grouped
    assert {c for c in seq_calls if c[0] == "candidate"} <= {c for c in full_calls if c[0] == "candidate"}


def test_a_task_the_candidate_never_reaches_counts_for_nothing(bank):
    """Real agents: the candidate is a guard for a tool only one task's agent has; on the other
    task the toolset keeps it out of every prompt, so its arms differ by sampling noise only."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from skillbank.adapters.testing import ScriptedChatModel

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    @tool
    def get_order(order_id: str) -> str:
        """An order's status."""
        return "shipped"

    tools = {"weather": [get_weather], "shop": [get_order]}
    cand = bank.add_skill(name="no-alerts", description="weather alerts cannot be set",
                          body="Say that alerts cannot be set.", kind="guard", status="candidate",
                          toolset=["get_weather"])
    tasks = [SimpleTask(id="weather", type="x", input="weather alerts for Oslo"),
             SimpleTask(id="shop", type="x", input="weather alerts for my order")]
    # The shop task "regresses" by chance: without the reach rule that rejects the candidate.
    outcomes = {("current", "shop"): [True, True], ("candidate", "shop"): [False, False],
                ("current", "weather"): [False, False], ("candidate", "weather"): [True, True]}
    seen = []

    def trial_fn(task, middleware, seed):
        arm = "candidate" if isinstance(middleware.injector.bank, CandidateView) else "current"
        agent = create_agent(ScriptedChatModel(["ok"]), tools[task.id], middleware=[middleware])
        agent.invoke({"messages": [("user", task.input)]})
        done = sum(1 for a, t in seen if (a, t) == (arm, task.id))
        seen.append((arm, task.id))
        return outcomes[(arm, task.id)][done % TRIALS]

    validate = make_validator(bank, tasks, trial_fn, config(concurrency=1))
    out = validate(cand, ["weather", "shop"])
    assert out.checked == ("weather",) and out.regressions == () and verdict(out)
    assert "1 task(s) not reached" in out.detail
    # Reaching no task measures nothing: not promoted.
    out = validate(cand, ["shop"])
    assert out.checked == () and not verdict(out) and "reached no task" in out.detail



def test_the_gates_min_gain_settles_a_sequential_validation(bank):
    """The validator stops on the min_gain of the GateConfig it serves. Every trial passes then
    fails, in both arms: no gain on the first task, and at best +0.375 over both, so a min_gain
    of 0.5 settles it after one task (the current arm's outcomes are cached by then)."""
    from skillbank.evolution.gate import GateConfig

    tasks = tasks_of(2)
    checked = {}
    for min_gain in (0.0, 0.5):
        seen = []

        def trial_fn(task, middleware, seed):
            seen.append(task.id)
            return len(seen) % 2 == 1  # pass, fail, pass, fail, ... (the trials run in order)

        gate = GateConfig(min_gain=min_gain)
        validate = make_validator(bank, tasks, trial_fn, config(concurrency=1), gate=gate)
        warm = bank.add_skill(name=f"w{int(min_gain * 10)}", description="w", body="w", status="candidate")
        validate(warm, [t.id for t in tasks])
        cand = bank.add_skill(name=f"c{int(min_gain * 10)}", description="d", body="b", status="candidate")
        checked[min_gain] = validate(cand, [t.id for t in tasks]).checked
    assert checked == {0.0: ("t0", "t1"), 0.5: ("t0",)}
