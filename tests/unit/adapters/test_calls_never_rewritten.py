"""The library never rewrites the model's calls or the tools' results, on every guidance path.

Each case puts one lesson in a bank and has a scripted model break it through the real
``create_agent`` with ``SkillBankMiddleware``: the tool either runs with exactly the arguments
the model passed, or does not run, and a result the model reads is the tool's own output or a
reminder, never a tool's output with something appended.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool

from skillbank import SkillBank
from skillbank.adapters import SkillBankMiddleware
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters._interventions import intervention_of
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.lessons import Lesson, MethodStep

TODAY = dt.date(2027, 3, 8)


def _tools(ran: list[tuple[str, dict]]) -> list[StructuredTool]:
    def make(name: str, params: dict[str, type], result: dict) -> StructuredTool:
        def run(**kwargs: Any) -> str:
            ran.append((name, dict(kwargs)))
            return json.dumps(result)
        from pydantic import create_model
        schema = create_model(f"{name}_args", **{p: (t, ...) for p, t in params.items()})
        return StructuredTool.from_function(func=run, name=name, description=f"The {name} tool.",
                                            args_schema=schema)
    return [make("get_order", {"order_id": str}, {"order_id": "A1", "status": "delivered"}),
            make("refund", {"order_id": str}, {"refunded": True}),
            make("book", {"time": str, "date": str}, {"booked": True}),
            make("get_balance", {"account": str}, {"balance_cents": 1250})]


# (lesson, the user's request, the model's script)
CASES = {
    "check_first": (Lesson(kind="check_first", check="get_order", tool="refund"), "refund order A1",
                    [tool_call("refund", order_id="A1"), tool_call("refund", order_id="A1"), "Refunded."]),
    "missing_tool": (Lesson(kind="missing_tool", tool="open_window"), "open the window",
                     [tool_call("open_window", side="left"), "I cannot open the window."]),
    "missing_parameter": (Lesson(kind="missing_parameter", tool="refund", parameter="reason"),
                          "refund order A1 because it broke",
                          [tool_call("refund", order_id="A1", reason="broke"), tool_call("refund", order_id="A1"),
                           "Refunded; the reason cannot be set."]),
    "ask_for": (Lesson(kind="ask_for", tool="refund", parameter="order_id"), "refund my order",
                [tool_call("refund", order_id="ZZ-9"), tool_call("refund", order_id="ZZ-9"), "Done."]),
    "budget": (Lesson(kind="budget", budget=2), "what is the status of order A1",
               [tool_call("get_order", order_id="A1"), tool_call("get_order", order_id="A1"), "Delivered."]),
    "pitfall_call": (Lesson(kind="pitfall", avoid="call", tool="refund",
                            steps=(MethodStep(tool="refund", args={"order_id": "A1"}),)), "refund order A1",
                     [tool_call("refund", order_id="A1"), tool_call("refund", order_id="A1"), "Refunded."]),
    "pitfall_repeat": (Lesson(kind="pitfall", avoid="repeat"), "what is the status of order A1",
                       [tool_call("get_order", order_id="A1"), tool_call("get_order", order_id="A1"), "Delivered."]),
    "wrong_tool_name": (Lesson(kind="wrong_tool_name", tool="refund"), "refund order A1",
                        [tool_call("issue_refund", order_id="A1"), tool_call("refund", order_id="A1"), "Refunded."]),
    "no_tool": (Lesson(kind="no_tool"), "thanks, that was lovely",
                [tool_call("get_order", order_id="A1"), "You are welcome!"]),
    "stated_time": (Lesson(kind="stated_time", tool="book", parameter="time"), "book it at a quarter past two pm",
                    [tool_call("book", time="14:00", date="2027-03-08"), tool_call("book", time="14:00", date="2027-03-08"),
                     "Booked."]),
    "stated_date": (Lesson(kind="stated_date", tool="book", parameter="date"), "book it at 10:00 the day after tomorrow",
                    [tool_call("book", time="10:00", date="2027-03-09"), tool_call("book", time="10:00", date="2027-03-09"),
                     "Booked."]),
    "answer_raw_number": (Lesson(kind="answer_unit", tool="get_balance", field="balance_cents", scale=100),
                          "what is the balance of account 7",
                          [tool_call("get_balance", account="7"), "Your balance is 1250.", "Your balance is 12.50."]),
    "answer_unsourced": (Lesson(kind="answer_unit", tool="get_balance", field="balance_cents", scale=100),
                         "what is the balance of account 7",
                         ["Your balance is 99.", tool_call("get_balance", account="7"), "It is 12.50."]),
    "answer_empty": (Lesson(kind="procedure", steps=(MethodStep(tool="get_order", args={"order_id": "<order_id>"}),)),
                     "what is the status of order A1",
                     [tool_call("get_order", order_id="A1"), "", "It was delivered."]),
    "answer_described": (Lesson(kind="procedure", steps=(MethodStep(tool="get_order", args={"order_id": "<order_id>"}),)),
                         "what is the status of order A1",
                         ["You can call get_order with the order id.", tool_call("get_order", order_id="A1"),
                          "It was delivered."]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_lesson_never_changes_a_call_or_a_result(tmp_path, case):
    lesson, request, script = CASES[case]
    ran: list[tuple[str, dict]] = []
    tools = _tools(ran)
    deliver = {"stated_time": "tool", "stated_date": "tool"}
    with SkillBank.open(tmp_path / "bank") as bank:
        bank.add_skill(f"lesson-{case.replace('_', '-')}", f"When asked: {request}.", lessons=[lesson],
                       tools=sorted(lesson.tools()))
        model = ScriptedChatModel(script, cycle=False)
        agent = create_agent(model, tools, middleware=[SkillBankMiddleware(
            bank, injection=InjectionConfig(k=3, deliver=deliver, today=TODAY))])
        result = agent.invoke({"messages": [("user", request)]}, {"recursion_limit": 30})
    messages = result["messages"]
    asked = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    intervened = False
    # Every tool that ran, ran with exactly the arguments of a call the model made.
    for name, args in ran:
        assert any(c["name"] == name and c["args"] == args for c in asked), (name, args)
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    outputs = {"get_order": '{"order_id": "A1", "status": "delivered"}', "refund": '{"refunded": true}',
               "book": '{"booked": true}', "get_balance": '{"balance_cents": 1250}'}
    for call in asked:
        message = results[call["id"]]
        record = intervention_of(message)
        if record is not None:
            intervened = True
            assert record.kind == "reminder" and "was not run" in message.text
        elif message.status != "error":
            assert message.text == outputs[call["name"]]  # the tool's own output, nothing appended
    # Every reply the user could read is the model's own.
    replies = [m.text for m in messages if isinstance(m, AIMessage) and not m.tool_calls]
    assert all(r in [s for s in script if isinstance(s, str)] for r in replies)
    intervened = intervened or any(intervention_of(m) is not None for m in messages)
    assert intervened, f"the {case} lesson was never checked: the case does not test a guidance path"


def test_a_reminder_names_no_value_the_library_read_for_the_model(tmp_path):
    lesson, request, script = CASES["stated_time"]
    ran: list[tuple[str, dict]] = []
    with SkillBank.open(tmp_path / "bank") as bank:
        bank.add_skill("booking-times", f"When asked: {request}.", lessons=[lesson], tools=["book"])
        agent = create_agent(ScriptedChatModel(script, cycle=False), _tools(ran),
                             middleware=[SkillBankMiddleware(bank, injection=InjectionConfig(
                                 k=3, deliver={"stated_time": "tool"}, today=TODAY))])
        result = agent.invoke({"messages": [("user", request)]})
    reminder = next(m.text for m in result["messages"] if isinstance(m, ToolMessage) and intervention_of(m))
    assert "14:15" not in reminder and "was not run" in reminder
    assert ran == [("book", {"time": "14:00", "date": "2027-03-08"})]  # the second call ran as the model made it
