"""Writes a bank with the release before lesson kinds became plug-ins: one skill per lesson kind.

Run from a checkout of that release; the test reads the bank with today's code.
"""
import json, sys, shutil
from pathlib import Path
from skillbank import SkillBank
from skillbank.lessons import Lesson, LessonKind, MethodStep, Example

out = Path(sys.argv[1])
shutil.rmtree(out, ignore_errors=True)
K = LessonKind
lessons = {
    "procedure": [Lesson(kind=K.procedure, steps=(MethodStep(tool="get_order", args={"order_id": "<order_id>"}, sources={"order_id": "request"}), MethodStep(tool="refund", args={"order_id": "<order_id>"}, sources={"order_id": "get_order"})),
                         examples=(Example(request="refund order <order_id>", calls=(MethodStep(tool="get_order", args={"order_id": "<order_id>"}),), result_tool="get_order", result={"status": "delivered"}, answer="Refunded <order_id>."),))],
    "check-first": [Lesson(kind=K.check_first, check="get_order", tool="refund"), Lesson(kind=K.check_first)],
    "missing-tool": [Lesson(kind=K.missing_tool, tool="open_window"), Lesson(kind=K.missing_tool)],
    "missing-parameter": [Lesson(kind=K.missing_parameter, tool="set_climate", parameter="fan_speed"), Lesson(kind=K.missing_parameter)],
    "ask-for": [Lesson(kind=K.ask_for, tool="set_seat", parameter="seat"), Lesson(kind=K.ask_for, tool="set_seat"), Lesson(kind=K.ask_for)],
    "unknown-field": [Lesson(kind=K.unknown_field, tool="get_status", field="range_km"), Lesson(kind=K.unknown_field)],
    "budget": [Lesson(kind=K.budget, budget=4), Lesson(kind=K.budget, budget=3, tool="search")],
    "pitfall": [Lesson(kind=K.pitfall, avoid="skip", tool="get_order"), Lesson(kind=K.pitfall, avoid="call", tool="delete", steps=(MethodStep(tool="delete", args={"force": "true"}),)), Lesson(kind=K.pitfall, avoid="repeat")],
    "guidance": [Lesson(kind=K.guidance, text="Say   hello  first.")],
    "tool-error": [Lesson(kind=K.tool_error, tool="pay")],
    "policy": [Lesson(kind=K.policy, tool="refund"), Lesson(kind=K.policy)],
    "wrong-tool-name": [Lesson(kind=K.wrong_tool_name, tool="create_event")],
    "no-tool": [Lesson(kind=K.no_tool)],
    "answer-unit": [Lesson(kind=K.answer_unit, tool="get_balance", field="balance_cents", scale=100)],
    "stated-time": [Lesson(kind=K.stated_time, tool="book", parameter="time")],
    "stated-date": [Lesson(kind=K.stated_date, tool="book", parameter="date")],
}
expected = {}
with SkillBank.open(out) as bank:
    for name, ls in lessons.items():
        skill = bank.add_skill(name, f"When the {name} lesson applies.", lessons=ls, tools=sorted({t for l in ls for t in l.tools()}))
        skill = bank.update_skill(skill.id, description=f"When the {name} lesson applies (edited).", reason="edited")
        expected[name] = {"id": skill.id, "version": skill.version, "hash": skill.content_hash, "body": skill.content.body,
                          "keys": [l.key for l in skill.content.lessons]}
    report = bank.verify()
    print(report)
(out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True))
print("ok", len(expected))
