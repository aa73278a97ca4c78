"""End to end: runs logged by the real middleware, a round, and the next run sees the new skill."""

from __future__ import annotations

import json

from langchain.agents import create_agent
from langchain_core.tools import tool

from skillbank import SkillBank
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.evolution import evolve
from skillbank.lessons import Lesson, LessonKind, sentence
from skillbank.models import SkillStatus

SYSTEM = "You are a helpful assistant for a car and a shop."


@tool
def turn_on_ac(temperature: int) -> str:
    """Turn on the air conditioning at a temperature in Celsius."""
    return json.dumps({"ac": "on", "temperature": temperature})


@tool
def find_order(order_id: str) -> str:
    """Look an order up."""
    return json.dumps({"order_id": order_id, "status": "delivered", "total": 30})


@tool
def check_refund_policy(order_id: str) -> str:
    """Check whether an order may be refunded."""
    return json.dumps({"order_id": order_id, "eligible": True})


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return json.dumps({"order_id": order_id, "refunded": amount})


TOOLS = [turn_on_ac, find_order, check_refund_policy, issue_refund]


def window_declined(state):
    """The verifier: the window cannot be opened here, and the answer must say so."""
    return "unavailable" in state["messages"][-1].content.lower()


def run(bank, model, task, task_id, verifier=window_declined):
    mw = SkillBankMiddleware(bank, k=3, verifier=verifier)
    agent = create_agent(model, TOOLS, system_prompt=SYSTEM, middleware=[mw])
    result = agent.invoke({"messages": [("user", task)]},
                          config={"metadata": {"skillbank_task_id": task_id}})
    return result["skillbank_trajectory_id"]


def test_logged_runs_evolve_into_a_skill_the_next_run_receives(bank, tmp_path):
    # Two runs try a tool the agent does not have and claim success: the verifier fails them.
    failed = []
    for n, temp in enumerate((20, 21)):
        model = ScriptedChatModel([tool_call("turn_on_ac", temperature=temp), tool_call("open_window"),
                                   f"The AC is at {temp} and the window is open."])
        failed.append(run(bank, model, f"Turn on the AC at {temp} degrees and open the window", f"car-{n}"))
    # Three refund runs follow the same method and succeed.
    refunds = []
    for n, order in enumerate(("A-100", "B-200", "C-300")):
        model = ScriptedChatModel([tool_call("find_order", order_id=order),
                                   tool_call("check_refund_policy", order_id=order),
                                   tool_call("issue_refund", order_id=order, amount=30),
                                   f"I have refunded order {order}."])
        refunds.append(run(bank, model, f"Refund order {order}, it arrived broken", f"shop-{n}",
                           verifier=lambda state: True))
    trajs = [bank.trajectories.get(t) for t in failed + refunds]
    assert [t.success for t in trajs] == [False, False, True, True, True]
    assert [e.type.value for e in trajs[0].limit_events] == ["missing_tool"]

    report = evolve(bank, promote_policy="all")
    assert report.trajectories == 5
    names = {c.skill: c for c in report.changes}
    guard_change = names["when-open-window-is-unavailable"]
    assert guard_change.status == "active" and set(guard_change.evidence) == set(failed)
    procedure = next(c for n, c in names.items() if n.startswith("refund-order"))
    assert procedure.status == "active" and set(procedure.evidence) == set(refunds)

    # The next run: the model receives the learned guard in its system message, and its answer
    # depends on it: with the guard it declines the window, without it it claims to have opened it.
    lesson = sentence(Lesson(kind=LessonKind.missing_tool, tool="open_window"))

    def answer(messages):
        if lesson in messages[0].text:
            return "The AC is at 22; opening the window is unavailable: open_window is unavailable."
        return "The AC is at 22 and the window is open."

    def guided_model():
        return ScriptedChatModel([tool_call("turn_on_ac", temperature=22), answer])

    with SkillBank.open(tmp_path / "empty", embedder="hash") as empty:  # the control: no skill
        control = run(empty, guided_model(), "Turn on the AC at 22 degrees and open the window", "car-9")
        assert empty.trajectories.get(control).success is False
    model = guided_model()
    tid = run(bank, model, "Turn on the AC at 22 degrees and open the window", "car-9")
    guard = bank.get_skill("when-open-window-is-unavailable")
    system = model.received[0][0].text
    assert system.startswith(SYSTEM) and '<skill name="when-open-window-is-unavailable"' in system
    assert lesson in system
    injected = {(i.skill_id, i.version) for i in bank.trajectories.get(tid).injections}
    assert (guard.id, guard.version) in injected
    assert bank.trajectories.get(tid).success is True

    # History says where it came from: the failed runs, the rule distiller, the reason.
    history = bank.history(guard.id)
    assert [v.status for v in history] == [SkillStatus.candidate, SkillStatus.active]
    assert history[0].author == "evolution:rule" and "open_window" in history[0].reason
    from skillbank._provenance import evidence

    assert set(evidence(history[0].provenance)) == set(failed) == set(evidence(history[1].provenance))
    assert history[1].author == "policy"

    # A shop run gets the learned procedure.
    model = ScriptedChatModel(["ok"])
    run(bank, model, "Refund order D-400, it arrived broken", "shop-9", verifier=lambda s: True)
    assert f'<skill name="{procedure.skill}"' in model.received[0][0].text
    assert "Call the tools in this order: `find_order`, then `check_refund_policy`, then `issue_refund`." \
        in model.received[0][0].text
