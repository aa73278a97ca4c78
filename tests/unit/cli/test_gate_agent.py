"""``skillbank evolve --gate-agent module:factory --tasks file.jsonl``: the gate runs each candidate
on your own agent, on the tasks its retrieval reaches; and how the gate spends its budget (a
share per candidate, a general lesson after its specific ones, canary for what it left)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank.bank import SkillBank
from skillbank.cli import app
from test_evolution_support import refund, window

runner = CliRunner()

# The agent reads its system prompt: with the refund skill in it, it answers as the task file
# expects; without, it does not. Every call is kept, so a test sees which tasks the gate ran.
FACTORY = '''
from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

RAN = []


@tool
def find_order(order_id: str) -> str:
    """Find an order."""
    return "delivered"


@tool
def check_refund_policy(order_id: str) -> str:
    """Check the refund policy."""
    return "eligible"


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund."""
    return "refund issued"


@tool
def set_climate(temperature: int) -> str:
    """Set the AC."""
    return "climate on"


class Reader(BaseChatModel):
    @property
    def _llm_type(self):
        return "reader"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        system = " ".join(str(m.content) for m in messages if m.type == "system")
        RAN.append(messages[-1].content)
        text = "checked and refunded" if "check_refund_policy" in system else "refunded"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def verify(task, state):
    answer = state["messages"][-1].content
    return answer == task.data["expect"] if task.data.get("exact") else task.data["expect"] in answer


def build(middleware, seed):
    tools = [find_order, check_refund_policy, issue_refund, set_climate]
    return create_agent(Reader(), tools, middleware=middleware), verify
'''

REFUND = "Refund order {order} for {name}, it arrived damaged."
TASKS = ([{"id": f"retail-refund-{i:04d}", "type": "refund", "split": "train",
           "input": REFUND.format(order=4000 + i, name="Ann"), "expect": "checked and refunded"}
          for i in range(5)]
         + [{"id": f"car-{i:03d}", "type": "car", "split": "train",
             "input": f"Open the driver window and set the AC to {20 + i} degrees.", "expect": "refunded"}
            for i in range(2)]
         + [{"id": f"poem-{i}", "type": "poem", "split": "train",
             "input": f"Write a haiku about spring number {i}.", "expect": "refunded"} for i in range(3)]
         + [{"id": "refund-heldout", "type": "refund", "split": "heldout",
             "input": REFUND.format(order=4100, name="Bo"), "expect": "checked and refunded"}])


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "my_agent.py").write_text(FACTORY)
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in TASKS) + "\n")
    with SkillBank.open(tmp_path / "bank", embedder="hash") as bank:
        for t in [refund(i) for i in range(3)] + [refund(i, success=False, skip_check=True) for i in (3, 4)] \
                + [window(0), window(1)]:
            bank.trajectories.save(t)
        # Five active skills about poems fill a poem request's k=5 slots: the candidates reach
        # no poem task (the hash embedder scores unrelated texts 0, which min_score 0 lets in).
        for i in range(5):
            bank.add_skill(name=f"haiku-form-{i}", description=f"Write a haiku about spring number {i}.",
                           body="Five, seven, five syllables about spring.")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKILLBANK_DIR", str(tmp_path / "bank"))
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


def evolve(*args: str):
    return runner.invoke(app, ["evolve", *args])


def test_the_gate_runs_your_agent_on_the_tasks_a_candidate_reaches(project: Path):
    result = evolve("--gate-agent", "my_agent.py:build", "--tasks", "tasks.jsonl", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    status = {c["skill"]: c["status"] for c in data["changes"]}
    assert status["refund-order-arrived-damaged"] == "active"  # it converts its evidence tasks
    assert status["when-open-window-is-unavailable"] == "rejected"  # no gain on its own
    gate = {d["skill_id"]: d for d in data["gate"]}
    names = {c["candidate_id"]: c["skill"] for c in data["changes"]}
    refund_choice = next(d["choice"] for i, d in gate.items() if names[i] == "refund-order-arrived-damaged")
    assert refund_choice["own"] == [f"retail-refund-{i:04d}" for i in range(5)]
    # unreached tasks are not run, and the held-out task is not in the pool at all
    assert set(refund_choice["unreached"]) >= {"poem-0", "poem-1", "poem-2"}
    assert refund_choice["pool"] == 10
    ran = {t for d in data["gate"] if d["result"] for t in d["result"]["planned"]}
    assert not ran & {"poem-0", "poem-1", "poem-2", "refund-heldout"}
    per_task = 2 * 2  # two arms, --gate-trials 2
    run_count = len(refund_choice["own"]) + len(refund_choice["preserve"])
    assert refund_choice["saved_trials"] == (10 - run_count) * per_task
    text = evolve("--gate-agent", "my_agent.py:build", "--tasks", "tasks.jsonl", "--since", "1d")
    assert text.exit_code == 0, text.output


def test_the_report_says_how_many_trials_reach_saved(project: Path):
    result = evolve("--gate-agent", "my_agent.py:build", "--tasks", "tasks.jsonl")
    assert result.exit_code == 0, result.output
    assert "Gate tasks chosen by reach:" in result.stdout
    assert "trials saved against running every task" in result.stdout


def test_a_reached_task_it_would_break_rejects_it(project: Path):
    """The car tasks are not the refund skill's evidence, but its retrieval reaches them: they
    are run to preserve, and one that the skill breaks rejects it."""
    tasks = [dict(t, exact=True) if t["id"] == "car-001" else t for t in TASKS]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in tasks) + "\n")
    result = evolve("--gate-agent", "my_agent.py:build", "--tasks", "tasks.jsonl", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    status = {c["skill"]: c["status"] for c in data["changes"]}
    assert status["refund-order-arrived-damaged"] == "rejected"
    (decision,) = [d for d in data["gate"] if d["result"] and "car-001" in d["result"]["regressions"]]
    assert "car-001" in decision["choice"]["preserve"]


# -- the command line's errors ------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (["--gate-agent", "my_agent.py:build"], "--gate-agent and --tasks go together"),
    (["--tasks", "tasks.jsonl"], "--gate-agent and --tasks go together"),
    (["--gate-agent", "my_agent", "--tasks", "tasks.jsonl"], "--gate-agent 'my_agent': use module:factory"),
    (["--gate-agent", "my_agent.py:nope", "--tasks", "tasks.jsonl"], "has no callable 'nope'"),
    (["--gate-agent", "no_such_module_x:build", "--tasks", "tasks.jsonl"], "cannot import no_such_module_x"),
    (["--gate-agent", "gone.py:build", "--tasks", "tasks.jsonl"], "--gate-agent gone.py:build: no file gone.py"),
    (["--gate-agent", "my_agent.py:build", "--tasks", "missing.jsonl"], "no tasks file at missing.jsonl"),
    (["--gate-agent", "my_agent.py:build", "--tasks", "bad.jsonl"], "bad.jsonl:2: not valid JSON"),
    (["--gate-agent", "my_agent.py:build", "--tasks", "heldout.jsonl"], "every task is in a held-out split"),
    (["--gate-agent", "my_agent.py:build", "--tasks", "tasks.jsonl", "--validate", "os:getcwd"],
     "two ways to validate"),
])
def test_bad_gate_agent_arguments_fail_in_one_line(project: Path, args, message):
    (project / "bad.jsonl").write_text(json.dumps(TASKS[0]) + "\nnot json\n")
    (project / "heldout.jsonl").write_text(json.dumps(TASKS[-1]) + "\n")
    result = evolve(*args)
    assert result.exit_code == 1 and message in result.stderr, result.output
    assert "Traceback" not in result.output
    with SkillBank.open(project / "bank", embedder="hash") as bank:  # nothing was consumed
        assert not bank.skills.list(status="candidate")


def test_held_out_tasks_join_the_pool_with_include_heldout(project: Path):
    result = evolve("--gate-agent", "my_agent.py:build", "--tasks", "tasks.jsonl", "--include-heldout",
                    "--json")
    assert result.exit_code == 0, result.output
    assert {d["choice"]["pool"] for d in json.loads(result.stdout)["gate"]} == {11}


# -- choosing tasks and spending the budget ------------------------------------------------------


def test_the_saved_trials_count_tasks_of_the_pool_not_run():
    from skillbank.evolution._review import Pending
    from skillbank.evolution._task_choice import Reach, choose_tasks
    from types import SimpleNamespace

    skill = SimpleNamespace(content_hash="h")  # all choose_tasks reads of it: the sample's seed
    reach = Reach(reached=("a", "b", "c", "d"), unreached=("e", "f", "g", "h", "i", "j"), trials_per_task=4)
    choice = choose_tasks(Pending(skill=skill, task_ids=["b", "e", "elsewhere"]), reach, holdout=2)
    assert choice.own == ("b", "e")  # its evidence in the pool, reached or not
    assert len(choice.preserve) == 2 and set(choice.preserve) <= {"a", "c", "d"}
    assert len(choice.cut) == 1 and "e" not in choice.unreached
    assert choice.saved_trials == (10 - 4) * 4
    limited = choose_tasks(Pending(skill=skill, task_ids=["b", "e"]), reach, holdout=2, limit=1)
    assert limited.tasks == ["b"] and limited.saved_trials == 9 * 4


@pytest.fixture
def bank(tmp_path):
    with SkillBank.open(tmp_path / "gate-bank", embedder="hash") as b:
        yield b


def alternatives(bank):
    """A general check-first lesson and the two specific ones it generalises, plus an unrelated
    pitfall with the most evidence: the round of the issue, as candidates."""
    from skillbank.evolution._general import general_content
    from skillbank.evolution._review import Pending
    from skillbank.lessons import Lesson, LessonKind

    def candidate(name, tasks, **fields):
        skill = bank.add_skill(name=name, status="candidate", **fields)
        return Pending(skill=skill, evidence=[f"run-{t}" for t in tasks], task_ids=list(tasks))

    general = general_content(LessonKind.check_first)
    return {
        "pitfall": candidate("calendar-pitfall", ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"],
                             description="Calendar events need a time zone.", body="Give the time zone."),
        "general": candidate(general.name, ["r0", "r1", "o0", "o1", "o2"], description=general.description,
                             kind=general.kind, tags=general.tags, lessons=general.lessons),
        "refund": candidate("check-refund-policy", ["r0", "r1"], description="Refunds need the policy check.",
                            lessons=(Lesson(kind=LessonKind.check_first, check="check_refund_policy",
                                            tool="issue_refund"),)),
        "order": candidate("check-order-first", ["o0", "o1", "o2"], description="Cancel after finding the order.",
                           lessons=(Lesson(kind=LessonKind.check_first, check="get_order", tool="cancel_order"),)),
    }


def scripted_validator(bank, trials=2, gains=True):
    """make_validator over tasks c0..c7, r0..r1, o0..o2 whose candidate arm always passes and
    current arm always fails (``gains``: every candidate gains wherever it runs), or both arms
    fail (no candidate gains anywhere)."""
    from skillbank.consistency.runner import SimpleTask
    from skillbank.consistency.validation import CandidateView, ValidationConfig, make_validator

    ids = [f"c{i}" for i in range(8)] + ["r0", "r1", "o0", "o1", "o2"]
    tasks = [SimpleTask(id=t, type=t[0], input=f"request {t}") for t in ids]
    ran = []

    def trial_fn(task, middleware, seed):
        arm = "candidate" if isinstance(middleware.injector.bank, CandidateView) else "current"
        ran.append((arm, task.id))
        return gains and arm == "candidate"

    return make_validator(bank, tasks, trial_fn, ValidationConfig(trials=trials, concurrency=1)), ran


def test_the_budget_measures_every_alternative_and_the_general_one_last(bank):
    """24 trials for four candidates: before, the pitfall (most evidence) and the general lesson
    spent them and both specific lessons waited unmeasured; now each gets a share, its evidence
    first, and the general lesson is measured after the specific ones it would replace."""
    from skillbank.evolution.gate import Gate, GateConfig

    c = alternatives(bank)
    validate, _ = scripted_validator(bank)
    measured: list = []
    gate = Gate(GateConfig(validate=Recording(validate, measured), auto_promote=True, eval_budget=24))
    decisions = {d.skill_id: d for d in gate.run(bank, list(c.values()), pool=[])}
    order = [name for name, _ in measured]
    assert set(order) == {p.skill.name for p in c.values()}, [d.detail for d in decisions.values()]
    assert order.index(c["general"].skill.name) > max(order.index(c["refund"].skill.name),
                                                       order.index(c["order"].skill.name))
    for name, tasks in measured:  # each ran its own evidence first
        own = next(p.task_ids for p in c.values() if p.skill.name == name)
        assert tasks == own[:len(tasks)]
    assert gate.spent <= 24 + 4  # a share is whole tasks: at most one task's trials over


class Recording:
    """A validator that keeps each call's candidate name and tasks, and simulates reach."""

    def __init__(self, validator, calls):
        self.validator, self.calls = validator, calls

    def __call__(self, skill, tasks):
        self.calls.append((skill.name, list(tasks)))
        return self.validator(skill, tasks)

    def reach(self, skill):
        return self.validator.reach(skill)


@pytest.mark.parametrize("policy", ["canary", None])
def test_candidates_the_budget_leaves_unmeasured_go_to_canary_under_the_canary_policy(bank, policy):
    from skillbank.evolution.gate import Gate, GateConfig
    from skillbank.live._config import CANARY_TAG

    c = alternatives(bank)
    validate, _ = scripted_validator(bank)
    gate = Gate(GateConfig(validate=validate, auto_promote=True, eval_budget=4, promote_policy=policy))
    decisions = gate.run(bank, list(c.values()), pool=[])
    measured = [d for d in decisions if d.result is not None]
    undecided = [d for d in decisions if d.result is None]
    assert len(measured) == 1 and len(undecided) == 3  # one task's trials: the whole budget
    for d in undecided:
        skill = bank.get_skill(d.skill_id)
        if policy == "canary":
            assert d.decision == "promoted" and d.detail == "into canary: evaluation budget spent"
            assert skill.status.value == "active" and CANARY_TAG in skill.tags
        else:
            assert d.decision == "waiting" and d.detail == "evaluation budget spent"
            assert skill.status.value == "candidate"


@pytest.mark.parametrize("budget", [None, 8])
def test_no_gain_on_tasks_the_budget_cut_short_is_no_rejection(bank, budget):
    """A rejection is remembered for good: a candidate the budget share measured on fewer tasks
    than it would have run, with no gain and no regression, waits; measured in full, it is rejected."""
    from skillbank.evolution.gate import Gate, GateConfig

    c = alternatives(bank)
    validate, _ = scripted_validator(bank, gains=False)
    decisions = Gate(GateConfig(validate=validate, auto_promote=True, eval_budget=budget)).run(bank, list(c.values()), pool=[])
    pitfall = next(d for d in decisions if d.skill_id == c["pitfall"].skill.id)
    if budget is None:
        assert pitfall.decision == "rejected" and not pitfall.choice.limited
        assert bank.get_skill(pitfall.skill_id).status.value == "retired"
    else:
        assert pitfall.choice.limited and pitfall.result is not None  # measured, on too few tasks
        assert pitfall.decision == "waiting" and pitfall.detail.startswith("no gain on the 1 task(s) the budget")
        assert bank.get_skill(pitfall.skill_id).status.value == "candidate"


def test_a_candidate_that_reaches_no_task_is_not_run_and_not_rejected(bank):
    from skillbank.consistency.runner import SimpleTask
    from skillbank.consistency.validation import ValidationConfig, make_validator
    from skillbank.evolution.gate import Gate, GateConfig
    from skillbank.evolution._review import Pending

    for i in range(5):  # fill the k=5 slots of a poem request
        bank.add_skill(name=f"haiku-{i}", description=f"Write a haiku about spring number {i}.", body="5-7-5.")
    skill = bank.add_skill(name="refund-check", description="Refund orders after the policy check.",
                           body="Check the policy.", status="candidate")
    ran = []
    tasks = [SimpleTask(id=f"p{i}", type="poem", input=f"Write a haiku about spring number {i}.") for i in range(3)]
    validate = make_validator(bank, tasks, lambda task, mw, seed: ran.append(task.id) or True,
                              ValidationConfig(trials=1))
    (decision,) = Gate(GateConfig(validate=validate, auto_promote=True)).run(bank, [Pending(skill=skill)], pool=[])
    assert ran == [] and decision.decision == "waiting" and "reaches none of the 3 task(s)" in decision.detail
    assert decision.choice.saved_trials == 3 * 2
    assert bank.get_skill(skill.id).status.value == "candidate"
