"""What LangChain's private state channels do for a middleware that works only inside
``wrap_model_call`` / ``wrap_tool_call``: the facts docs/decisions/0107 and 0109 rest on.

Each test pins one behaviour of the installed LangChain / LangGraph on the real ``create_agent``
with a scripted model. One that fails means the decision's premise changed: read 0107 again.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ExtendedModelResponse, ModelResponse
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.errors import GraphRecursionError, InvalidUpdateError
from langgraph.types import Command, interrupt

from skillbank.adapters._prompt_middleware import RunSkills
from skillbank.adapters.testing import ScriptedChatModel, tool_call


class UntrackedState(AgentState):
    marks: NotRequired[Annotated[list[str], UntrackedValue, PrivateStateAttr]]


class TrackedState(AgentState):  # checkpointed (as msgpack: lists, not tuples), with a reducer
    marks: NotRequired[Annotated[list[str], PrivateStateAttr, operator.add]]


class Marking(AgentMiddleware):
    """Writes a mark per model and tool call into the private ``marks`` channel and notes what
    each call saw there."""

    def __init__(self, schema: type) -> None:
        super().__init__()
        self.state_schema = schema
        self.seen: list[tuple[str, tuple[str, ...]]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        mark = f"model{sum(1 for kind, _ in self.seen if kind == 'model')}"
        self.seen.append(("model", tuple(request.state.get("marks") or ())))
        response = handler(request)
        inner = response if isinstance(response, ModelResponse) else ModelResponse(result=[response])
        return ExtendedModelResponse(model_response=inner, command=Command(update={"marks": [mark]}))

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.seen.append(("tool", tuple(request.state.get("marks") or ())))
        answer = handler(request)
        return Command(update={"messages": [answer], "marks": ["tool"]})


@tool
def ping() -> str:
    """Ping the server."""
    return "pong"


@tool
def confirm() -> str:
    """Ask the human."""
    return f"human said {interrupt('go on?')}"


def _two_pings() -> AIMessage:
    calls: list[Any] = [{"name": "ping", "args": {}, "id": i, "type": "tool_call"} for i in ("a", "b")]
    return AIMessage(content="", tool_calls=calls)


def test_a_mark_written_by_the_model_call_reaches_the_tool_and_next_model_call_not_the_output():
    mw = Marking(UntrackedState)
    agent = create_agent(ScriptedChatModel([tool_call("ping"), "done"], cycle=False), [ping],
                         middleware=[mw])
    result = agent.invoke({"messages": [("user", "ping it")]})
    assert mw.seen == [("model", ()), ("tool", ("model0",)), ("model", ("tool",))]
    assert "marks" not in result  # private: never in the agent's output


def test_writing_a_private_channel_from_the_wrappers_costs_no_superstep():
    def tool_calls_before_the_limit(middleware: list[Any]) -> int:
        calls: list[int] = []

        @tool("ping")
        def counted() -> str:
            """Ping the server."""
            calls.append(1)
            return "pong"

        agent = create_agent(ScriptedChatModel([tool_call("ping")]), [counted], middleware=middleware)
        with pytest.raises(GraphRecursionError):
            agent.invoke({"messages": [("user", "ping forever")]}, {"recursion_limit": 11})
        return len(calls)

    assert tool_calls_before_the_limit([Marking(UntrackedState)]) == tool_calls_before_the_limit([]) == 5


def test_parallel_tool_calls_cannot_both_write_an_untracked_channel_but_add_up_with_a_reducer():
    untracked = create_agent(ScriptedChatModel([_two_pings(), "done"], cycle=False), [ping],
                             middleware=[Marking(UntrackedState)])
    with pytest.raises(InvalidUpdateError, match="one value per step"):
        untracked.invoke({"messages": [("user", "ping twice")]})
    mw = Marking(TrackedState)
    create_agent(ScriptedChatModel([_two_pings(), "done"], cycle=False), [ping], middleware=[mw]).invoke(
        {"messages": [("user", "ping twice")]})
    assert mw.seen[-1] == ("model", ("model0", "tool", "tool"))


@pytest.mark.parametrize(("schema", "kept"), [(UntrackedState, False), (TrackedState, True)])
def test_a_resumed_run_finds_only_a_checkpointed_channel(schema, kept):
    mw = Marking(schema)
    agent = create_agent(ScriptedChatModel([tool_call("confirm"), "done"], cycle=False), [confirm],
                         middleware=[mw], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "paused"}}
    assert "__interrupt__" in agent.invoke({"messages": [("user", "ask first")]}, config)
    agent.invoke(Command(resume="yes"), config)
    tool_visits = [marks for kind, marks in mw.seen if kind == "tool"]
    assert tool_visits[0] == ("model0",)  # before the pause
    assert tool_visits[1] == (("model0",) if kept else ())  # the same tool call, resumed


def test_what_a_run_was_shown_cannot_be_checkpointed_as_it_lives_only_as_its_record():
    run = RunSkills("refund order A1")
    run.block.reminders.calls.ran("get_order", {"order_id": "A1"})  # guidance has used its reminders
    serde = JsonPlusSerializer()
    with pytest.raises(TypeError, match="not msgpack serializable"):
        serde.dumps_typed(run)
    assert serde.loads_typed(serde.dumps_typed(run.record())) == run.record()
