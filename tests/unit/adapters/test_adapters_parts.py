"""The adapters' parts on their own: limit classifiers and detectors, the injector, the recorder's
durability, the LLM judge, the scripted fake model, the example and the benchmark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel, ValidationError

from skillbank import SkillBank
from skillbank.adapters import limits as L
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import SkillInjector, merge_system_message
from skillbank.adapters.judge import LLMJudge, OutcomeVerdict
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters._recorder import TrajectoryRecorder, coerce_outcome
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.models import LimitType, Outcome

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def bank(tmp_path):
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    yield b
    b.close()


# -- limit classification --------------------------------------------------------------------


def test_exceptions_map_to_budget_limits():
    from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
    from langgraph.errors import GraphRecursionError

    class RateLimitError(Exception):
        pass

    class APIStatusError(Exception):
        status_code = 429

    class BadRequestError(Exception):
        pass

    cases = [
        (GraphRecursionError("Recursion limit of 5 reached"), LimitType.recursion_limit),
        (ModelCallLimitExceededError(3, 3, None, 3), LimitType.model_call_limit),
        (RateLimitError("slow down"), LimitType.rate_limit),
        (APIStatusError("server said no"), LimitType.rate_limit),
        (RuntimeError("HTTP 429 Too Many Requests"), LimitType.rate_limit),
        (BadRequestError("This model's maximum context length is 128000 tokens"), LimitType.context_overflow),
        (ValueError("prompt is too long: 210000 tokens > 200000 maximum"), LimitType.context_overflow),
    ]
    for exc, expected in cases:
        assert L.classify_exception(exc).type == expected, exc
    # wrapped errors are found through __cause__
    try:
        try:
            raise RateLimitError("429")
        except RateLimitError as inner:
            raise RuntimeError("provider call failed") from inner
    except RuntimeError as outer:
        assert L.classify_exception(outer).type == LimitType.rate_limit
    for ordinary in (ValueError("bad value"), KeyError("order 429 not found"), RuntimeError("boom")):
        assert L.classify_exception(ordinary) is None, ordinary


def test_tool_exceptions_and_tool_messages():
    class Args(BaseModel):
        n: int

    with pytest.raises(ValidationError) as info:
        Args(n="x")
    assert L.classify_tool_exception(info.value, "t").type == LimitType.invalid_tool_args
    assert L.classify_tool_exception(OSError("disk"), "t").type == LimitType.tool_error
    assert L.classify_tool_message("Error: fly is not a valid tool, try one of [a].").type == LimitType.missing_tool
    assert L.classify_tool_message("Error: fly is not a valid tool, try one of [a].").tool == "fly"
    assert L.classify_tool_message("Error invoking tool 'a' with kwargs {} with error:\n x").type \
        == LimitType.invalid_tool_args
    assert L.classify_tool_message("Tool call limit exceeded. Do not call 'a' again.").type == LimitType.tool_call_limit
    assert L.classify_tool_message("ValueError: nope").type == LimitType.tool_error


def test_messages_that_announce_limits():
    assert L.limit_from_message(AIMessage(L.NEED_MORE_STEPS)).type == LimitType.step_limit
    assert L.limit_from_message(AIMessage("Model call limits exceeded: run limit (2/2)")).type \
        == LimitType.model_call_limit
    assert L.limit_from_message(AIMessage("Tool call limit reached: run limit exceeded (3/2 calls).")).type \
        == LimitType.tool_call_limit
    assert L.limit_from_message(ToolMessage("Tool call limit exceeded. Do not make additional tool calls.",
                                            tool_call_id="1", name="x")).tool == "x"
    assert L.limit_from_message(AIMessage("All done.")) is None
    assert L.limit_from_message(HumanMessage(L.NEED_MORE_STEPS)) is None


def test_default_detectors():
    assert L.find_unknown_fields('{"a": 1, "b": null, "c": "N/A", "d": {"e": "unknown", "f": 2}}') == ["b", "c", "d.e"]
    assert L.find_unknown_fields('[{"x": null}]') == ["[0].x"]
    assert L.find_unknown_fields('{"a": 0, "b": false, "c": []}') == []
    assert L.find_unknown_fields("the status is unknown") == []  # free text is no evidence
    assert L.find_unknown_fields("{not json") == []
    for text in ("That is not allowed.", "This is against company policy", "I cannot comply with that",
                 "Request violates the policy"):
        assert L.detect_refusal(text), text
    for text in ("The window is open.", "Allowed values are 1-5", "policy number 7 updated"):
        assert L.detect_refusal(text) is None, text
    detectors = L.Detectors(unknown_fields=lambda t: 1 / 0, refusal=None)
    assert detectors.unknown('{"a": null}', "t") is None  # a broken detector never breaks a run
    assert detectors.refused("not allowed") is None


# -- injection -------------------------------------------------------------------------------


def test_query_uses_task_and_last_n_messages(bank):
    injector = SkillInjector(bank, InjectionConfig(history=2))
    messages = [SystemMessage("sys"), HumanMessage("book a table for two"),
                AIMessage("", tool_calls=[{"name": "search", "args": {"city": "Oslo"}, "id": "1"}]),
                ToolMessage("no tables left", tool_call_id="1", name="search", status="error"),
                AIMessage("Shall I try tomorrow?")]
    query = injector.build_query(messages)
    assert query.splitlines() == ["book a table for two", "search failed: no tables left",
                                  "assistant: Shall I try tomorrow?"]
    assert "sys" not in query
    # the tool-calling assistant message adds no text of its own: its call is in the result
    assert SkillInjector(bank, InjectionConfig(history=3)).build_query(messages) == query
    assert SkillInjector(bank, InjectionConfig(history=0)).build_query(messages) == "book a table for two"
    long = SkillInjector(bank,
                         InjectionConfig(message_chars=20)).query_parts([HumanMessage("x"),
                                         ToolMessage("y" * 50, tool_call_id="1", name="t")])
    assert long == ["x", "t: " + "y" * 17]


def test_injector_respects_k_budget_and_kinds(bank):
    for i in range(6):
        bank.add_skill(name=f"window-skill-{i}", description=f"opening the car window variant {i}",
                       body="Open the window slowly. " * (5 + 20 * (i % 2)), kind="guard" if i < 3 else "procedure")
    injector = SkillInjector(bank, InjectionConfig(k=3, token_budget=None))
    result = injector.inject([HumanMessage("open the car window")])
    assert len(result.hits) == 3 and result.text.count("<skill ") == 3
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    small = SkillInjector(bank, InjectionConfig(k=6, token_budget=200)).inject([HumanMessage("open the car window")])
    assert small.text and len(small.text) / 4 <= 200 + 10
    assert 0 < len(small.hits) < 6
    guards = SkillInjector(bank, InjectionConfig(k=6, kinds=["guard"], token_budget=None)).inject(
        [HumanMessage("open the window")])
    assert {h.skill.kind.value for h in guards.hits} == {"guard"}
    assert [r[:2] for r in result.records] == [(h.skill.id, 1) for h in result.hits]


def test_merge_system_message_keeps_user_prompt_and_content_blocks():
    merged = merge_system_message(SystemMessage("be brief"), "<skills>x</skills>")
    assert merged.content == "be brief\n\n<skills>x</skills>"
    blocks = SystemMessage(content=[{"type": "text", "text": "be brief"}])
    merged = merge_system_message(blocks, "<skills>x</skills>")
    assert merged.content[0] == {"type": "text", "text": "be brief"} and "<skills>x" in merged.content[1]["text"]
    assert blocks.content == [{"type": "text", "text": "be brief"}]
    assert merge_system_message(None, "S").content == "S"


# -- recorder --------------------------------------------------------------------------------


def test_each_step_is_on_disk_before_the_next_one_starts(bank, tmp_path):
    seen_by_tool: list[list[str]] = []
    mw = SkillBankMiddleware(bank, inject=False)

    @tool
    def peek() -> str:
        """Look at what the bank already stored for this run, from another connection."""
        other = SkillBank.open(tmp_path / "bank", embedder="hash")
        try:
            traj = other.trajectories.get(mw.recording_middleware.last_trajectory_id)
            seen_by_tool.append([s.kind for s in traj.steps])
            return traj.status
        finally:
            other.close()

    model = ScriptedChatModel([tool_call("peek"), tool_call("peek"), "done"])
    create_agent(model, [peek], middleware=[mw]).invoke({"messages": [("user", "peek twice")]})
    # while the tool ran, every earlier step was already committed and the run was "running"
    assert seen_by_tool == [["model"], ["model", "tool", "model"]]
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert [s.result for s in traj.steps if s.kind == "tool"] == ["running", "running"]


def test_recorder_directly_and_outcome_coercion(bank):
    rec = TrajectoryRecorder(bank, task="do it", model="m", labels={"k": "v"})
    turn = rec.begin_model(1, [("sk_x", 2, 0.9)])
    rec.end_model(turn, AIMessage("", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "c1"}],
                                  usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}))
    tool_turn = rec.begin_tool("t", {"a": 1}, "c1")
    rec.end_tool(tool_turn, result=ToolMessage('{"v": null}', tool_call_id="c1"))
    rec.fail(TimeoutError("took too long"))
    rec.fail(RuntimeError("second call is ignored"))
    traj = bank.trajectories.get(rec.id)
    assert traj.status == "incomplete" and traj.error == "TimeoutError: took too long"
    assert traj.input_tokens == 10 and traj.injections[0].skill_id == "sk_x" and traj.injections[0].version == 2
    assert [e.type for e in traj.limit_events] == [LimitType.unknown_field]
    assert rec.record_outcome(0.8).success is True
    assert bank.trajectories.get(rec.id).outcome.score == 0.8

    assert coerce_outcome(False, "verifier").score == 0.0
    assert coerce_outcome((True, "fine"), "verifier").note == "fine"
    assert coerce_outcome({"success": False, "reason": "r"}, "judge").note == "r"
    assert coerce_outcome(OutcomeVerdict(success=True, score=0.7, reason="ok"), "judge").source == "judge"
    assert coerce_outcome(None, "x") is None
    assert isinstance(coerce_outcome(Outcome(success=True), "x"), Outcome)
    with pytest.raises(TypeError):
        coerce_outcome(object(), "verifier")


def test_a_failing_bank_write_never_breaks_the_agent(bank, caplog):
    mw = SkillBankMiddleware(bank, inject=False)
    original = bank.trajectories.append
    calls = {"n": 0}

    def flaky_append(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk full")
        return original(*args, **kwargs)

    bank.trajectories.append = flaky_append
    model = ScriptedChatModel([tool_call("peek"), "done"])

    @tool
    def peek() -> str:
        """Peek."""
        return "ok"

    result = create_agent(model, [peek], middleware=[mw]).invoke({"messages": [("user", "go")]})
    assert result["messages"][-1].content == "done"
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert [s.kind for s in traj.steps] == ["model", "tool", "model"]  # the failed write was retried
    assert "could not write trajectory" in caplog.text


# -- judge -----------------------------------------------------------------------------------


def test_llm_judge_with_structured_output_as_verifier_and_later(bank):
    judge_model = ScriptedChatModel([tool_call("Verdict", success=False, score=0.2, reason="window still closed")])
    judge = LLMJudge(judge_model, criteria="The window must be open.")
    mw = SkillBankMiddleware(bank, judge=judge)
    agent = create_agent(ScriptedChatModel(["I opened the window."]), [], middleware=[mw])
    result = agent.invoke({"messages": [("user", "open the window, my password=hunter2hunter2")]})
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert traj.outcome.success is False and traj.outcome.score == 0.2
    assert traj.outcome.source == "judge" and traj.outcome.note == "window still closed"
    sent = judge_model.received[0]
    assert "The window must be open." in sent[1].content and "I opened the window." in sent[1].content
    assert "hunter2hunter2" not in sent[1].content  # scrubbed before it left the process

    judge_model.responses = [tool_call("Verdict", success=True, score=1.0, reason="looks fine")]
    judge_model.i = 0
    outcome = judge.label(bank, traj.id)
    assert outcome.success is True
    assert bank.trajectories.get(traj.id).outcome.note == "looks fine"


# -- the fake model --------------------------------------------------------------------------


def test_scripted_model_basics():
    model = ScriptedChatModel([tool_call("a", x=1), "done", RuntimeError("boom")], cycle=False,
                              usage={"input_tokens": 5, "output_tokens": 2})
    model = model.bind_tools([])
    first = model.invoke("hi")
    assert first.tool_calls[0]["name"] == "a" and first.tool_calls[0]["id"]
    assert first.usage_metadata == {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
    second = model.invoke("again")
    assert second.content == "done" and second.id != first.id
    with pytest.raises(RuntimeError):
        model.invoke("third")
    with pytest.raises(RuntimeError):  # not cycling: the last entry repeats
        model.invoke("fourth")
    assert [m[0].content for m in model.received] == ["hi", "again", "third", "fourth"]
    streamed = list(ScriptedChatModel([tool_call("a", x=1)]).stream("hi"))
    assert sum((c for c in streamed[1:]), streamed[0]).tool_calls[0]["name"] == "a"


# -- public API, example, benchmark, real model ----------------------------------------------


def test_public_names_import():
    import skillbank.adapters as adapters

    namespace: dict = {}
    exec("from skillbank.adapters import *", namespace)
    assert len(set(adapters.__all__)) == len(adapters.__all__), "a name is listed twice"
    for name in adapters.__all__:  # each one the adapters' own object, not a placeholder
        assert namespace[name] is getattr(adapters, name)
        assert namespace[name].__module__.startswith("skillbank.adapters."), name
    from skillbank.adapters.langchain import SkillBankMiddleware as direct

    assert adapters.SkillBankMiddleware is direct


def _run_script(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_quickstart_example_runs():
    out = _run_script("examples/quickstart_agent.py", "--embedder", "hash")
    assert out.returncode == 0, out.stderr
    assert "injected" in out.stdout and "missing_tool" in out.stdout


def test_benchmark_quick_smoke():
    out = _run_script("benchmarks/bench_middleware.py", "--quick", "--embedder", "hash", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["turns"] > 0 and report["skills"] > 0
    for arm in ("baseline", "logging", "injection"):
        assert report[arm]["median_ms"] > 0
    assert "retrieval_ms" in report["added"] and "logging_ms" in report["added"]


@pytest.mark.model
def test_real_minilm_injects_the_relevant_skill(tmp_path):
    bank = SkillBank.open(tmp_path / "bank")  # the bundled all-MiniLM-L6-v2
    try:
        bank.add_skill(name="decline-missing-tool", description="the user asks for something no tool can do",
                       body="Do what you can and name the missing tool.", kind="guard")
        bank.add_skill(name="refund-after-eligibility", description="refunding a customer's order",
                       body="Check eligibility before refunding.")
        model = ScriptedChatModel(["ok"])
        mw = SkillBankMiddleware(bank, k=1)
        create_agent(model, [], system_prompt="sys", middleware=[mw]).invoke(
            {"messages": [("user", "I want my money back for order 17")]})
        traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
        assert [i.skill_id for i in traj.injections] == [bank.get_skill("refund-after-eligibility").id]
        assert "Check eligibility before refunding." in model.received[0][0].text
    finally:
        bank.close()


def test_an_error_a_tool_reports_in_its_answer_is_a_limit():
    from skillbank.adapters.limits import Detectors, find_result_error
    from skillbank.models import LimitType

    missing = find_result_error("Error during execution: GorillaFileSystem.mv() missing 1 required positional "
                                "argument: 'destination'")
    assert missing.type == LimitType.invalid_tool_args and missing.data == {"param": "destination"}
    assert find_result_error('{"error": "cd: \'nowhere\': No such file or directory"}').type == LimitType.tool_error
    assert find_result_error("Error: the device is offline").type == LimitType.tool_error
    for fine in ('{"error": null, "ok": true}', "Errors were fixed in 3 files.", '{"status": "done"}', ""):
        assert find_result_error(fine) is None, fine
    # replaceable: a custom detector's text is a tool error; None switches it off
    assert Detectors(result_error=lambda text: "bad").error_in("x", "t").type == LimitType.tool_error
    assert Detectors(result_error=None).error_in("Error: x", "t") is None
