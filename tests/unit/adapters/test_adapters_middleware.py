"""SkillBankMiddleware driving the real ``create_agent`` with scripted fake chat models.

Every test asserts on what the bank stored: steps, injected skill versions per turn, tokens,
limit events produced by the real mechanism (LangGraph's recursion limit, LangChain's limit
middlewares, ToolNode's unknown-tool and validation errors, a tool that raises, ...).
"""

from __future__ import annotations

import asyncio
import json
import threading
import warnings

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware
from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain.agents.middleware.tool_call_limit import ToolCallLimitExceededError
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from skillbank import SkillBank
from skillbank.adapters.config import InjectionConfig, RecordingConfig
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.models import LimitType

SYSTEM = "You are a careful car assistant. Answer in one sentence."


@pytest.fixture
def bank(tmp_path):
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    yield b
    b.close()


@pytest.fixture
def skills(bank):
    return {
        "ac": bank.add_skill(
            name="ac-before-window", description="turning on the AC and opening the window",
            body="Turn on the AC first, then open the window.", tools=["turn_on_ac", "open_window"]),
        "missing": bank.add_skill(
            name="decline-missing-tool", description="a needed tool such as the window tool is missing",
            body="Do the possible part, decline the rest and name the missing tool.", kind="guard"),
        "refund": bank.add_skill(
            name="refund-after-eligibility", description="refund an order after checking eligibility",
            body="Look up the order, check eligibility, then refund.", tags=["retail"]),
    }


@tool
def turn_on_ac(temperature: int) -> str:
    """Turn on the air conditioning at a temperature in Celsius."""
    return json.dumps({"ac": "on", "temperature": temperature})


@tool
def get_cabin() -> str:
    """Read the cabin sensors."""
    return json.dumps({"temperature": 24, "humidity": None, "window": "unknown"})


@tool
def unlock_trunk() -> str:
    """Unlock the trunk."""
    return "Unlocking the trunk while driving is not allowed by the safety policy."


@tool
def flaky_device() -> str:
    """A device that is offline."""
    raise RuntimeError("device offline")


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def agent_with(model, tools, mw, *extra, **kwargs):
    return create_agent(model, tools, system_prompt=SYSTEM, middleware=[mw, *extra], **kwargs)


def limits(traj):
    return [(e.type, e.step) for e in traj.limit_events]


# -- the whole loop --------------------------------------------------------------------------


def test_run_is_recorded_with_steps_tokens_injections_and_skills_reach_the_model(bank, skills):
    model = ScriptedChatModel([
        tool_call("turn_on_ac", temperature=21),
        tool_call("open_window"),
        "The AC is on; I cannot open the window because there is no window tool.",
    ])
    mw = SkillBankMiddleware(bank, k=2)
    agent = agent_with(model, [turn_on_ac], mw)
    result = agent.invoke({"messages": [("user", "turn on the AC and open the window")]})

    tid = result["skillbank_trajectory_id"]
    assert tid == mw.recording_middleware.last_trajectory_id
    assert [t.id for t in bank.trajectories.list()] == [tid]
    traj = bank.trajectories.get(tid)
    assert traj.status == "complete" and traj.error is None
    assert traj.task == "turn on the AC and open the window"
    assert traj.model == "scripted-chat-model"
    assert traj.bank_snapshot == bank.snapshot_id()
    assert traj.final_answer.startswith("The AC is on")
    assert traj.started_at <= traj.ended_at
    assert traj.outcome is None  # unlabelled until someone says otherwise

    # model, tool, model, tool, model, in order, each with its latency
    assert [(s.index, s.kind, s.tool) for s in traj.steps] == [
        (0, "model", None), (1, "tool", "turn_on_ac"), (2, "model", None), (3, "tool", "open_window"),
        (4, "model", None)]
    first, ac, _, window, last = traj.steps
    assert first.tool_calls[0]["name"] == "turn_on_ac" and first.tool_calls[0]["args"] == {"temperature": 21}
    assert first.input_messages == 2  # system + user
    assert ac.args == {"temperature": 21} and json.loads(ac.result) == {"ac": "on", "temperature": 21}
    assert "not a valid tool" in window.error
    assert all(s.latency_ms is not None and s.latency_ms >= 0 for s in traj.steps)
    # token usage as the model reported it, per turn and in total
    reported = [m.usage_metadata for m in result["messages"] if isinstance(m, AIMessage)]
    assert [s.input_tokens for s in traj.steps if s.kind == "model"] == [u["input_tokens"] for u in reported]
    assert traj.input_tokens == sum(u["input_tokens"] for u in reported) > 0
    assert traj.output_tokens == sum(u["output_tokens"] for u in reported) > 0
    # summary columns written by finish()
    row = bank.store.query_one("SELECT n_steps, input_tokens FROM trajectories WHERE id = ?", (tid,))
    assert row == {"n_steps": 5, "input_tokens": traj.input_tokens}

    # injections: every model turn, at most k, ranks 0.., scores descending, current versions
    by_step: dict[int, list] = {}
    for inj in traj.injections:
        by_step.setdefault(inj.step, []).append(inj)
    assert sorted(by_step) == [0, 2, 4]
    assert 1 <= len(by_step[0]) <= 2  # k on the first turn, best first
    assert [i.score for i in by_step[0]] == sorted((i.score for i in by_step[0]), reverse=True)
    assert by_step[0][0].skill_id == skills["ac"].id and by_step[0][0].version == 1
    for before, after in ((0, 2), (2, 4)):
        # the block is stable: a later turn keeps every skill in its place and only appends
        kept = [(i.skill_id, i.version, i.score) for i in by_step[before]]
        assert [(i.skill_id, i.version, i.score) for i in by_step[after]][: len(kept)] == kept
    for injs in by_step.values():
        assert [i.rank for i in injs] == list(range(len(injs)))

    # the model really saw them: the user's prompt first, then the rendered skills
    for received, step in zip(model.received, (0, 2, 4)):
        system = received[0]
        assert system.type == "system"
        assert system.text.startswith(SYSTEM)
        for inj in by_step[step]:
            name = bank.get_skill(inj.skill_id).name
            assert f'<skill name="{name}"' in system.text
    assert "Turn on the AC first, then open the window." in model.received[0][0].text
    # nothing injected leaked into the saved conversation
    assert not any("<skills>" in str(m.content) for m in result["messages"])
    assert result["messages"][0].type == "human"

    # the missing tool is a capability limit at the tool step
    assert limits(traj) == [(LimitType.missing_tool, 3)]
    assert traj.limit_events[0].tool == "open_window"

    # an explicit outcome later labels it, and skill statistics follow
    bank.record_outcome(tid, success=False, score=0.0, note="window stayed closed")
    labelled = bank.trajectories.get(tid)
    assert labelled.outcome.success is False and labelled.outcome.note == "window stayed closed"
    assert bank.get_skill(skills["ac"].id).stats.failures == 1


def test_injection_follows_the_conversation(bank, skills):
    # The task says nothing about refunds; the tool result does, so the refund skill comes in
    # on the second turn, appended after the first turn's skill (the block stays stable).
    model = ScriptedChatModel([tool_call("ping"), "done"])

    @tool
    def lookup() -> str:
        """Look something up."""
        return "order 42 needs a refund after eligibility check"

    model = ScriptedChatModel([tool_call("lookup"), "done"])
    mw = SkillBankMiddleware(bank, injection=InjectionConfig(k=1, history=2))
    # The agent has the AC skill's tool, so that skill fits it (see match_toolset).
    agent_with(model, [lookup, turn_on_ac], mw).invoke({"messages": [("user", "please handle my car request")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    first = [i.skill_id for i in traj.injections if i.step == 0]
    second = [i.skill_id for i in traj.injections if i.step == 2]
    assert skills["refund"].id not in first
    assert second == first + [skills["refund"].id]


def test_inject_false_logs_only(bank, skills):
    model = ScriptedChatModel([tool_call("turn_on_ac", temperature=20), "on"])
    mw = SkillBankMiddleware(bank, inject=False)
    agent_with(model, [turn_on_ac], mw).invoke({"messages": [("user", "turn on the AC")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert len(traj.steps) == 3 and traj.injections == []
    assert all(r[0].text == SYSTEM for r in model.received)


def test_pinned_skills_filter_and_token_budget(bank, skills):
    model = ScriptedChatModel(["ok"])
    mw = SkillBankMiddleware(bank, injection=InjectionConfig(k=3, pinned=["refund-after-eligibility"],
                                                             filter=lambda s: s.kind.value == "guard"))
    agent_with(model, [ping], mw).invoke({"messages": [("user", "turn on the AC and open the window")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    got = [(i.skill_id, i.rank) for i in traj.injections]
    # the pinned skill is first whatever the query; the filter let only guard skills through
    assert got == [(skills["refund"].id, 0), (skills["missing"].id, 1)]
    assert traj.injections[0].score == 1.0

    # a budget too small for any skill injects nothing and leaves the prompt alone
    model = ScriptedChatModel(["ok"])
    mw = SkillBankMiddleware(bank, injection=InjectionConfig(k=3, token_budget=60))
    agent_with(model, [ping], mw).invoke({"messages": [("user", "turn on the AC and open the window")]})
    assert bank.trajectories.get(mw.recording_middleware.last_trajectory_id).injections == []
    assert model.received[0][0].text == SYSTEM


def test_pinned_only_with_k_zero_over_several_turns(bank, skills):
    # k=0 retrieves nothing: the run's block is the pinned skill, turn after turn (a block with
    # no retrieved skill has no score floor).
    model = ScriptedChatModel([tool_call("ping"), tool_call("ping"), "ok"])
    mw = SkillBankMiddleware(bank, injection=InjectionConfig(k=0, general_k=0, pinned=["refund-after-eligibility"]))
    agent_with(model, [ping], mw).invoke({"messages": [("user", "turn on the AC")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert {i.skill_id for i in traj.injections} == {skills["refund"].id}
    assert len(model.received) == 3 and all("refund-after-eligibility" in r[0].text for r in model.received)


def test_no_system_prompt_gets_one_with_the_skills(bank, skills):
    model = ScriptedChatModel(["ok"])
    mw = SkillBankMiddleware(bank)
    create_agent(model, [ping], middleware=[mw]).invoke({"messages": [("user", "open the window")]})
    assert model.received[0][0].type == "system" and model.received[0][0].text.startswith("<skills>")


# -- capability limits -----------------------------------------------------------------------


def test_capability_limits_from_real_tool_node_behaviour(bank):
    model = ScriptedChatModel([
        tool_call("open_window"),                              # not bound: ToolNode's unknown-tool error
        tool_call("turn_on_ac", temperature="warm"),           # wrong type: validation error
        tool_call("turn_on_ac"),                               # required parameter missing
        tool_call("get_cabin"),                                # fields come back null / unknown
        tool_call("unlock_trunk"),                             # the tool refuses by policy
        "I cannot comply: unlocking is against policy.",       # and so does the final answer
    ])
    mw = SkillBankMiddleware(bank)
    agent_with(model, [turn_on_ac, get_cabin, unlock_trunk], mw).invoke(
        {"messages": [("user", "open the window, cool the car, unlock the trunk")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "complete"
    assert limits(traj) == [
        (LimitType.missing_tool, 1),
        (LimitType.invalid_tool_args, 3),
        (LimitType.invalid_tool_args, 5),
        (LimitType.unknown_field, 7),
        (LimitType.policy_refusal, 9),
        (LimitType.policy_refusal, 10),
    ]
    events = traj.limit_events
    assert "temperature" in events[1].detail and "Field required" in events[2].detail
    assert events[3].detail.endswith("humidity, window")
    assert events[3].data == {"fields": ["humidity", "window"]}
    assert events[4].tool == "unlock_trunk" and events[5].tool is None
    assert all(e.category == "capability" for e in events)
    assert traj.steps[3].error.startswith("Error invoking tool 'turn_on_ac'")


def test_tool_that_raises_is_stored_incomplete_with_the_error(bank):
    model = ScriptedChatModel([tool_call("ping"), tool_call("flaky_device"), "never"])
    mw = SkillBankMiddleware(bank)
    agent = agent_with(model, [ping, flaky_device], mw)
    with pytest.raises(RuntimeError, match="device offline"):
        agent.invoke({"messages": [("user", "check the device")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete"
    assert traj.error == "RuntimeError: device offline"
    assert [(s.kind, s.tool) for s in traj.steps] == [
        ("model", None), ("tool", "ping"), ("model", None), ("tool", "flaky_device")]
    assert traj.steps[1].result == "pong"  # what was done before the crash is kept
    assert traj.steps[3].error == "RuntimeError: device offline"
    assert limits(traj) == [(LimitType.tool_error, 3)]


def test_custom_detectors_replace_or_disable_the_defaults(bank):
    model = ScriptedChatModel([tool_call("get_cabin"), tool_call("unlock_trunk"), "done"])
    mw = SkillBankMiddleware(bank, recording=RecordingConfig(
        unknown_field_detector=None, refusal_detector=lambda text: "trunk" in text and "trunk mentioned"))
    agent_with(model, [get_cabin, unlock_trunk], mw).invoke({"messages": [("user", "cabin and trunk")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert limits(traj) == [(LimitType.policy_refusal, 3)]
    assert "trunk mentioned" in traj.limit_events[0].detail


# -- budget limits ---------------------------------------------------------------------------


def test_graph_recursion_error_is_a_recursion_limit(bank):
    mw = SkillBankMiddleware(bank)
    agent = agent_with(ScriptedChatModel([tool_call("ping")]), [ping], mw)
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [("user", "ping forever")]}, config={"recursion_limit": 6})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete" and traj.error.startswith("GraphRecursionError: Recursion limit of 6")
    assert limits(traj) == [(LimitType.recursion_limit, len(traj.steps) - 1)]
    assert traj.limit_events[0].category == "budget"


def test_model_call_limit_middleware_ending_and_raising(bank):
    mw = SkillBankMiddleware(bank)
    agent = agent_with(ScriptedChatModel([tool_call("ping")]), [ping], mw, ModelCallLimitMiddleware(run_limit=2))
    result = agent.invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert traj.status == "complete" and traj.model_turns == 2
    assert traj.final_answer.startswith("Model call limits exceeded")
    assert limits(traj) == [(LimitType.model_call_limit, 3)]

    mw = SkillBankMiddleware(bank)
    agent = agent_with(ScriptedChatModel([tool_call("ping")]), [ping], mw,
                       ModelCallLimitMiddleware(run_limit=2, exit_behavior="error"))
    with pytest.raises(ModelCallLimitExceededError):
        agent.invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete" and "ModelCallLimitExceededError" in traj.error
    assert limits(traj) == [(LimitType.model_call_limit, 3)]


@pytest.mark.parametrize("behavior", ["end", "continue", "error"])
def test_tool_call_limit_middleware(bank, behavior):
    mw = SkillBankMiddleware(bank)
    model = ScriptedChatModel([tool_call("ping")] * 3 + ["finished"], cycle=False)
    agent = agent_with(model, [ping], mw, ToolCallLimitMiddleware(run_limit=2, exit_behavior=behavior))
    if behavior == "error":
        with pytest.raises(ToolCallLimitExceededError):
            agent.invoke({"messages": [("user", "ping")]})
    else:
        agent.invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert [s.tool for s in traj.steps if s.kind == "tool"] == ["ping", "ping"]  # the third was blocked
    types = [t for t, _ in limits(traj)]
    assert types == [LimitType.tool_call_limit], types
    assert traj.status == ("incomplete" if behavior == "error" else "complete")


@pytest.mark.parametrize("error, expected", [
    (type("RateLimitError", (Exception,), {})("Error code: 429 - rate limit reached"), LimitType.rate_limit),
    (ValueError("This model's maximum context length is 8192 tokens. Please reduce the length of the messages."),
     LimitType.context_overflow),
])
def test_provider_errors_rate_limit_and_context_overflow(bank, error, expected):
    mw = SkillBankMiddleware(bank)
    agent = agent_with(ScriptedChatModel([tool_call("ping"), error]), [ping], mw)
    with pytest.raises(type(error)):
        agent.invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete"
    assert limits(traj) == [(expected, 2)]  # once, at the model turn that failed
    assert traj.steps[2].kind == "model" and traj.steps[2].error.startswith(type(error).__name__)


def test_token_budget_ends_the_run_gracefully(bank):
    model = ScriptedChatModel([tool_call("ping")], usage={"input_tokens": 100, "output_tokens": 20})
    mw = SkillBankMiddleware(bank, max_tokens_per_run=300)
    result = agent_with(model, [ping], mw).invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    # 3 turns x 120 tokens = 360 > 300: the fourth call never happens
    assert traj.model_turns == 3 and len(model.received) == 3
    assert traj.status == "complete"
    assert traj.final_answer == result["messages"][-1].content
    assert "token" in traj.final_answer and "300" in traj.final_answer
    assert limits(traj) == [(LimitType.token_budget, 5)]
    assert traj.limit_events[0].data == {"used": 360, "budget": 300}


def test_wall_clock_budget_ends_the_run_gracefully(bank):
    # The model would call ping forever; only the budget stops it. The run's clock is a fake
    # that each model call moves 0.05 s on, so the stop comes at a known turn on any machine.
    now = [100.0]

    def slow_ping(messages):
        now[0] += 0.05
        return tool_call("ping")

    model = ScriptedChatModel([slow_ping])
    mw = SkillBankMiddleware(bank, max_seconds_per_run=0.12, inject=False,
                             recording=RecordingConfig(clock=lambda: now[0]))
    result = agent_with(model, [ping], mw).invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    # 0.05 and 0.10 s are within the budget; after the third call 0.15 s is over it
    assert traj.model_turns == 3 and len(model.received) == 3
    assert [t for t, _ in limits(traj)] == [LimitType.time_budget]
    assert traj.limit_events[0].step == len(traj.steps) - 1
    assert traj.limit_events[0].data == {"used_seconds": 0.15, "budget_seconds": 0.12}
    assert "time budget" in traj.final_answer and "0.15 seconds" in traj.final_answer
    model_steps = [s for s in traj.steps if s.kind == "model" and s.latency_ms is not None]
    assert model_steps and all(s.latency_ms == pytest.approx(50.0) for s in model_steps)


# -- outcomes --------------------------------------------------------------------------------


@pytest.mark.parametrize("verdict, success, score", [(True, True, 1.0), (0.25, False, 0.25), (0.75, True, 0.75)])
def test_verifier_labels_the_run(bank, verdict, success, score):
    seen = {}

    def verifier(state):
        seen["messages"] = state["messages"]
        return verdict

    mw = SkillBankMiddleware(bank, verifier=verifier)
    result = agent_with(ScriptedChatModel(["done"]), [ping], mw).invoke({"messages": [("user", "go")]})
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert traj.outcome.success is success and traj.outcome.score == score
    assert traj.outcome.source == "verifier"
    assert seen["messages"][-1].content == "done"


def test_failing_verifier_leaves_the_run_unlabelled(bank, caplog):
    def verifier(state):
        raise KeyError("no such field")

    mw = SkillBankMiddleware(bank, verifier=verifier)
    result = agent_with(ScriptedChatModel(["done"]), [ping], mw).invoke({"messages": [("user", "go")]})
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert traj.status == "complete" and traj.outcome is None
    assert bank.trajectories.list(labelled=False)[0].id == traj.id
    assert "verifier failed" in caplog.text


# -- privacy ---------------------------------------------------------------------------------


def test_every_stored_text_is_scrubbed(bank):
    secret = "sk-proj-" + "Ab1" * 16

    @tool
    def login(api_key: str) -> str:
        """Log in."""
        return f"logged in with {api_key}"

    model = ScriptedChatModel([tool_call("login", api_key=secret), f"Your key {secret} works."])
    mw = SkillBankMiddleware(bank)
    agent_with(model, [login], mw).invoke({"messages": [("user", f"log in with api_key={secret}")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    dumped = traj.model_dump_json()
    assert secret not in dumped
    assert "[REDACTED:" in traj.task and "[REDACTED:" in traj.final_answer
    assert "[REDACTED:" in traj.steps[1].result and "[REDACTED:" in traj.steps[1].args["api_key"]
    raw = bank.store.query("SELECT data FROM steps")
    assert not any(secret in r["data"] for r in raw)


def test_custom_scrubber(bank):
    mw = SkillBankMiddleware(bank, recording=RecordingConfig(scrubber=lambda text: text.replace("Oslo", "<city>")))
    agent_with(ScriptedChatModel(["Sunny in Oslo"]), [ping], mw).invoke({"messages": [("user", "weather in Oslo")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.task == "weather in <city>" and traj.final_answer == "Sunny in <city>"


# -- sync, async, streaming, concurrency -----------------------------------------------------


def _script_for_concurrency(messages):
    # Stateless: decide from the conversation, so concurrent runs sharing a model stay apart.
    task = next(m.content for m in messages if m.type == "human")
    done = sum(1 for m in messages if m.type == "tool")
    n = int(task.split()[-1])
    if done < n:
        return tool_call("ping")
    return f"finished {task}"


@pytest.mark.parametrize("mode", ["stream", "astream", "ainvoke"])
def test_async_and_streaming_runs_are_recorded(bank, skills, mode):
    model = ScriptedChatModel([_script_for_concurrency])
    mw = SkillBankMiddleware(bank)
    agent = agent_with(model, [ping], mw)
    inputs = {"messages": [("user", "turn on the AC task 2")]}
    if mode == "stream":
        chunks = list(agent.stream(inputs, stream_mode="updates"))
        assert chunks
    elif mode == "astream":
        async def consume():
            return [c async for c in agent.astream(inputs, stream_mode="values")]
        assert asyncio.run(consume())
    else:
        asyncio.run(agent.ainvoke(inputs))
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "complete" and traj.final_answer == "finished turn on the AC task 2"
    assert [s.kind for s in traj.steps] == ["model", "tool", "model", "tool", "model"]
    assert {i.step for i in traj.injections} == {0, 2, 4}


def test_async_failure_is_recorded(bank):
    mw = SkillBankMiddleware(bank)
    agent = agent_with(ScriptedChatModel([tool_call("flaky_device")]), [flaky_device], mw)
    with pytest.raises(RuntimeError):
        asyncio.run(agent.ainvoke({"messages": [("user", "go")]}))
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete" and limits(traj) == [(LimitType.tool_error, 1)]


def _assert_separate(bank, ids, counts):
    assert len(set(ids)) == len(ids)
    for tid in ids:
        traj = bank.trajectories.get(tid)
        n = int(traj.task.split()[-1])
        assert traj.status == "complete"
        assert traj.final_answer == f"finished {traj.task}"
        assert [s.kind for s in traj.steps] == ["model", "tool"] * n + ["model"]
        assert [s.index for s in traj.steps] == list(range(2 * n + 1))
        assert {i.step for i in traj.injections} == set(range(0, 2 * n + 1, 2))
        counts.append(n)


def test_concurrent_threads_produce_separate_complete_trajectories(bank, skills):
    model = ScriptedChatModel([_script_for_concurrency])
    mw = SkillBankMiddleware(bank, k=2)
    agent = agent_with(model, [ping], mw)
    ids, errors = [], []

    def worker(i):
        try:
            r = agent.invoke({"messages": [("user", f"turn on the AC run {i % 4 + 1}")]})
            ids.append(r["skillbank_trajectory_id"])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    counts: list[int] = []
    _assert_separate(bank, ids, counts)
    assert sorted(counts) == sorted(i % 4 + 1 for i in range(8))
    assert sorted(mw.recording_middleware.trajectory_ids) == sorted(ids)

    # batch() runs them concurrently too
    results = agent.batch([{"messages": [("user", f"batch run {n}")]} for n in (1, 2, 3)])
    _assert_separate(bank, [r["skillbank_trajectory_id"] for r in results], [])


def test_concurrent_asyncio_tasks_produce_separate_complete_trajectories(bank, skills):
    model = ScriptedChatModel([_script_for_concurrency])
    mw = SkillBankMiddleware(bank)
    agent = agent_with(model, [ping], mw)

    async def main():
        return await asyncio.gather(*(agent.ainvoke({"messages": [("user", f"async run {i % 3 + 1}")]})
                                      for i in range(6)))

    results = asyncio.run(main())
    _assert_separate(bank, [r["skillbank_trajectory_id"] for r in results], [])


def test_threads_with_a_checkpointer_get_one_trajectory_per_invocation(bank):
    model = ScriptedChatModel(["first answer", "second answer"], cycle=False)
    mw = SkillBankMiddleware(bank)
    agent = agent_with(model, [ping], mw, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    r1 = agent.invoke({"messages": [HumanMessage("first question")]}, config)
    r2 = agent.invoke({"messages": [HumanMessage("second question")]}, config)
    t1 = bank.trajectories.get(r1["skillbank_trajectory_id"])
    t2 = bank.trajectories.get(r2["skillbank_trajectory_id"])
    assert t1.id != t2.id
    assert (t1.task, t1.final_answer) == ("first question", "first answer")
    assert (t2.task, t2.final_answer) == ("second question", "second answer")
    assert len(t2.steps) == 1 and t2.steps[0].input_messages == 4  # the thread's history went in


def test_labels_and_task_id_from_invocation_metadata(bank):
    mw = SkillBankMiddleware(bank, recording=RecordingConfig(labels={"arm": "bank"}, task_type="car"))
    agent = agent_with(ScriptedChatModel(["ok"]), [ping], mw)
    r = agent.invoke({"messages": [("user", "go")]},
                     config={"metadata": {"skillbank_task_id": "car-7", "skillbank_labels": {"seed": 3}}})
    traj = bank.trajectories.get(r["skillbank_trajectory_id"])
    assert traj.task_id == "car-7" and traj.task_type == "car"
    assert traj.labels == {"arm": "bank", "seed": "3"}
    assert [t.id for t in bank.trajectories.list(labels={"arm": "bank"})] == [traj.id]


def test_a_retrieval_failure_does_not_break_the_agent(bank, skills, caplog):
    class Broken:
        def inject(self, *a, **k):
            raise RuntimeError("index gone")

    mw = SkillBankMiddleware(bank)
    mw.prompt_middleware.injector = Broken()
    model = ScriptedChatModel(["ok"])
    with warnings.catch_warnings():
        r = agent_with(model, [ping], mw).invoke({"messages": [("user", "go")]})
    traj = bank.trajectories.get(r["skillbank_trajectory_id"])
    assert traj.status == "complete" and traj.injections == []
    assert model.received[0][0].text == SYSTEM
    assert "retrieval failed" in caplog.text


def test_interrupted_run_is_paused_and_continues_in_the_same_trajectory(bank):
    from langgraph.types import Command, interrupt

    @tool
    def confirm(action: str) -> str:
        """Ask the human to confirm an action."""
        answer = interrupt(f"confirm {action}?")
        return f"human said {answer}"

    model = ScriptedChatModel([tool_call("confirm", action="unlock"), "unlocked"], cycle=False)
    mw = SkillBankMiddleware(bank)
    agent = agent_with(model, [confirm], mw, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    first = agent.invoke({"messages": [("user", "unlock the car")]}, config)
    assert "__interrupt__" in first
    tid = first["skillbank_trajectory_id"]
    paused = bank.trajectories.get(tid)
    assert paused.status == "running" and paused.limit_events == []
    assert paused.steps[-1].result == "[interrupted: waiting for input]"

    second = agent.invoke(Command(resume="yes"), config)
    assert second["skillbank_trajectory_id"] == tid
    traj = bank.trajectories.get(tid)
    assert traj.status == "complete" and traj.final_answer == "unlocked"
    assert [s.kind for s in traj.steps] == ["model", "tool", "tool", "model"]
    assert traj.steps[2].result == "human said yes" and traj.limit_events == []
    assert [s.index for s in traj.steps] == [0, 1, 2, 3]


def test_structured_response_is_the_final_answer(bank):
    from pydantic import BaseModel

    class Plan(BaseModel):
        steps: list[str]

    model = ScriptedChatModel([tool_call("Plan", steps=["cool", "vent"])])
    mw = SkillBankMiddleware(bank)
    result = create_agent(model, [], middleware=[mw], response_format=Plan).invoke(
        {"messages": [("user", "plan the climate")]})
    assert result["structured_response"] == Plan(steps=["cool", "vent"])
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert traj.status == "complete" and json.loads(traj.final_answer) == {"steps": ["cool", "vent"]}


def test_abandoned_stream_is_stored_incomplete(bank):
    mw = SkillBankMiddleware(bank)
    agent = agent_with(ScriptedChatModel([tool_call("ping"), tool_call("ping"), "done"]), [ping], mw)
    stream = agent.stream({"messages": [("user", "ping twice")]}, stream_mode="updates")
    for i, _ in enumerate(stream):
        if i == 3:
            break
    stream.close()
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete" and traj.error.startswith("GeneratorExit")
    assert traj.steps and traj.steps[0].kind == "model"


# -- with a SkillBankCallbackHandler on the same run -------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_middleware_and_callback_handler_on_one_run_record_it_once(bank, tmp_path, mode):
    import uuid

    from skillbank.adapters.callbacks import SkillBankCallbackHandler

    other = SkillBank.open(tmp_path / "other", embedder="hash")
    try:
        handler = SkillBankCallbackHandler(bank, recording=RecordingConfig(labels={"via": "handler"}))
        elsewhere = SkillBankCallbackHandler(other)  # another bank: records its own copy
        mw = SkillBankMiddleware(bank, inject=False)
        agent = agent_with(ScriptedChatModel([tool_call("turn_on_ac", temperature=21), "The AC is on."]),
                           [turn_on_ac], mw)
        run_id = uuid.uuid4()
        config = {"callbacks": [handler, elsewhere], "run_id": run_id}
        inputs = {"messages": [("user", "turn on the AC")]}
        result = asyncio.run(agent.ainvoke(inputs, config=config)) if mode == "async" \
            else agent.invoke(inputs, config=config)

        tid = result["skillbank_trajectory_id"]
        runs = bank.trajectories.list(with_steps=True)
        assert [t.id for t in runs] == [tid]  # once, by the middleware
        assert runs[0].status == "complete" and "via" not in runs[0].labels
        assert [(s.kind, s.tool) for s in runs[0].steps] == [("model", None), ("tool", "turn_on_ac"),
                                                            ("model", None)]
        assert handler.last_trajectory_id == tid and handler.trajectory_id_for(run_id) == tid
        assert list(handler.trajectory_ids) == [tid]
        copy = other.trajectories.get(elsewhere.last_trajectory_id)
        assert copy.status == "complete" and len(copy.steps) == 3
    finally:
        other.close()


def test_callback_handler_leaves_a_nested_agent_to_its_middleware(bank):
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from skillbank.adapters.callbacks import SkillBankCallbackHandler

    mw = SkillBankMiddleware(bank, inject=False)
    agent = agent_with(ScriptedChatModel([tool_call("ping"), "pong received"]), [ping], mw)
    summary_model = ScriptedChatModel(["all done"])

    class State(TypedDict, total=False):
        messages: list
        summary: str

    def call_agent(state):
        return {"messages": agent.invoke({"messages": state["messages"]})["messages"]}

    def summarise(state):
        return {"summary": summary_model.invoke("summarise").content}

    graph = StateGraph(State)
    graph.add_node("agent", call_agent)
    graph.add_node("summarise", summarise)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "summarise")
    graph.add_edge("summarise", END)
    handler = SkillBankCallbackHandler(bank)
    graph.compile().invoke({"messages": [("user", "ping it")]}, config={"callbacks": [handler]})

    inner = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    outer = bank.trajectories.get(handler.last_trajectory_id)
    assert inner.id != outer.id
    assert [(s.kind, s.tool) for s in inner.steps] == [("model", None), ("tool", "ping"), ("model", None)]
    # the outer run keeps what the middleware does not see (the summary call), not the agent's part
    assert [(s.kind, s.content) for s in outer.steps] == [("model", "all done")]
    assert outer.status == "complete"
