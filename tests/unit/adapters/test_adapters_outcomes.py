"""How a run gets its outcome and how it is written: async verifiers and ``LLMJudge.ajudge``, the
judge with the callback handler, one scorer per run, buffered writes (``flush_every``), and an
``interrupt()`` or a cancellation seen by the callback handler."""

from __future__ import annotations

import asyncio

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool

from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.config import RecordingConfig
from skillbank.adapters.judge import LLMJudge, OutcomeVerdict
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call


@tool
def peek() -> str:
    """Peek at the car."""
    return "the window is closed"


def _judge(success: bool, reason: str) -> tuple[LLMJudge, ScriptedChatModel]:
    model = ScriptedChatModel([tool_call("Verdict", success=success, score=1.0 if success else 0.0,
                                         reason=reason)])
    return LLMJudge(model, criteria="The window must be open."), model


# -- async scorers -----------------------------------------------------------------------------


def test_ajudge_grades_through_the_models_async_path():
    judge, model = _judge(False, "still closed")
    verdict = asyncio.run(judge.ajudge("open the window", "I opened it", "peek -> closed"))
    assert verdict == OutcomeVerdict(success=False, score=0.0, reason="still closed")
    (sent,) = model.received
    assert "The window must be open." in sent[1].content and "peek -> closed" in sent[1].content


@pytest.mark.parametrize("invoke", ["sync", "async"])
def test_an_async_verifier_labels_the_run(bank, invoke):
    seen = []

    async def verifier(state):
        await asyncio.sleep(0)
        seen.append(state["messages"][-1].content)
        return 0.75

    mw = SkillBankMiddleware(bank, verifier=verifier, inject=False)
    agent = create_agent(ScriptedChatModel([tool_call("peek"), "It is closed."]), [peek], middleware=[mw])
    payload = {"messages": [("user", "is the window open?")]}
    result = agent.invoke(payload) if invoke == "sync" else asyncio.run(agent.ainvoke(payload))
    outcome = bank.trajectories.get(result["skillbank_trajectory_id"]).outcome
    assert seen == ["It is closed."]  # awaited once, on the final state
    assert (outcome.success, outcome.score, outcome.source) == (True, 0.75, "verifier")


def test_the_judges_async_call_as_a_verifier(bank):
    judge, model = _judge(True, "opened")
    mw = SkillBankMiddleware(bank, verifier=judge.acall, inject=False)
    agent = create_agent(ScriptedChatModel(["I opened the window."]), [], middleware=[mw])
    result = asyncio.run(agent.ainvoke({"messages": [("user", "open the window")]}))
    outcome = bank.trajectories.get(result["skillbank_trajectory_id"]).outcome
    assert outcome.success is True and outcome.note == "opened"
    assert "I opened the window." in model.received[0][1].content


def test_the_judge_reads_the_messages_of_any_mapping_state():
    # A final state that is a Mapping but not a dict (here a read-only view) is read by its
    # "messages" key, as a dict is; not iterated as a list of messages (which gives its keys).
    from types import MappingProxyType

    from langchain_core.messages import AIMessage, HumanMessage

    judge, model = _judge(True, "opened")
    state = MappingProxyType({"messages": [HumanMessage("open the window"), AIMessage("I opened it.")]})
    assert judge(state) == OutcomeVerdict(success=True, score=1.0, reason="opened")
    (sent,) = model.received
    assert "## Task\nopen the window" in sent[1].content and "## Final answer\nI opened it." in sent[1].content


# -- the judge with the callback handler ------------------------------------------------------------


def test_the_judge_labels_a_run_logged_by_the_callback_handler(bank):
    judge, model = _judge(False, "window still closed")
    handler = SkillBankCallbackHandler(bank, judge=judge)
    agent = create_agent(ScriptedChatModel([tool_call("peek"), "I opened the window."]), [peek])
    agent.invoke({"messages": [("user", "open the window")]}, config={"callbacks": [handler]})
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "complete" and traj.final_answer == "I opened the window."
    assert (traj.outcome.success, traj.outcome.source, traj.outcome.note) == (False, "judge", "window still closed")
    (sent,) = model.received  # the judge saw the transcript, tool result included
    assert "the window is closed" in sent[1].content


# -- one scorer per run -------------------------------------------------------------------------------


def test_a_verifier_and_a_judge_together_is_an_error(bank):
    """Which of two scorers labels a run would be a hidden rule (the verifier used to win
    silently, and the judge was never called): giving both is refused, saying what to do."""
    judge, _ = _judge(True, "fine")
    with pytest.raises(ValueError, match="verifier= or judge=, not both"):
        RecordingConfig(verifier=lambda state: True, judge=judge)
    with pytest.raises(ValueError, match="not both"):
        SkillBankMiddleware(bank, verifier=lambda state: True, judge=judge)
    with pytest.raises(ValueError, match="not both"):
        SkillBankCallbackHandler(bank, verifier=lambda state: True, judge=judge)
    with pytest.raises(TypeError, match="verifier= and recording="):  # a keyword beside a whole config
        SkillBankMiddleware(bank, recording=RecordingConfig(judge=judge), verifier=lambda state: True)


# -- buffered writes ------------------------------------------------------------------------------


@pytest.mark.parametrize("flush_every, stored_at_each_tool", [(1, [1, 3, 5]), (3, [0, 3, 3])])
def test_flush_every_buffers_steps_and_the_end_writes_the_rest(bank, flush_every, stored_at_each_tool):
    mw = SkillBankMiddleware(bank, inject=False,
                             recording=RecordingConfig(flush_every=flush_every, verifier=lambda state: True))
    stored = []

    @tool
    def count() -> str:
        """Count the steps written so far."""
        stored.append(len(bank.trajectories.get(mw.recording_middleware.last_trajectory_id).steps))
        return "counted"

    model = ScriptedChatModel([tool_call("count"), tool_call("count"), tool_call("count"), "done"])
    result = create_agent(model, [count], middleware=[mw]).invoke({"messages": [("user", "count")]})
    # what the bank held while each tool ran: every step at once, or three at a time
    assert stored == stored_at_each_tool
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert [s.kind for s in traj.steps] == ["model", "tool"] * 3 + ["model"]
    assert [s.index for s in traj.steps] == list(range(7))
    assert traj.status == "complete" and traj.outcome.success is True


# -- interrupt() and cancellation with the callback handler -----------------------------------------


def test_callback_handler_stores_an_interrupted_run_as_incomplete_and_the_resume_as_new(bank):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command, interrupt

    @tool
    def confirm(action: str) -> str:
        """Ask the human to confirm an action."""
        return f"human said {interrupt(f'confirm {action}?')}"

    handler = SkillBankCallbackHandler(bank, verifier=lambda state: True)
    model = ScriptedChatModel([tool_call("confirm", action="unlock"), "unlocked"], cycle=False)
    agent = create_agent(model, [confirm], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}, "callbacks": [handler]}
    first = agent.invoke({"messages": [("user", "unlock the car")]}, config)
    assert "__interrupt__" in first
    paused = bank.trajectories.get(handler.last_trajectory_id)
    assert paused.status == "incomplete" and "interrupted" in (paused.error or "")
    assert paused.outcome is None and paused.limit_events == []  # a pause is not a failure

    agent.invoke(Command(resume="yes"), config)
    resumed = bank.trajectories.get(handler.last_trajectory_id)
    assert resumed.id != paused.id  # documented: a resumed run is a new trajectory
    assert resumed.status == "complete" and resumed.final_answer == "unlocked"
    assert resumed.outcome.success is True


def test_callback_handler_stores_a_cancelled_run_as_incomplete(bank):
    started = asyncio.Event()

    async def main():
        async def hang(messages):
            started.set()
            await asyncio.sleep(600)

        class Hanging(ScriptedChatModel):
            async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
                await hang(messages)

        handler = SkillBankCallbackHandler(bank, verifier=lambda state: True)
        agent = create_agent(Hanging(["never"]), [])
        task = asyncio.create_task(agent.ainvoke({"messages": [("user", "open the sunroof")]},
                                                 config={"callbacks": [handler]}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return handler

    handler = asyncio.run(main())
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.status == "incomplete" and traj.error == "CancelledError: the run was cancelled"
    assert traj.outcome is None  # no verdict on a run nobody finished
