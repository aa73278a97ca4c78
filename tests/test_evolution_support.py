"""Builders of realistic trajectories for the evolution tests (no tests in this module).

Three small worlds, close to the synthetic environments:

- retail refunds: ``find_order`` -> ``check_refund_policy`` -> ``issue_refund``; failures skip the
  policy check;
- a car assistant missing ``open_window`` (a capability limit) and a tracker whose ``eta`` comes
  back unknown;
- a search task that burns its tool-call budget repeating ``search``.
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any, Iterable, Sequence

from skillbank.models import Injection, LimitEvent, Outcome, Step, Trajectory, utcnow

_clock = itertools.count()
NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Fatima", "Goran", "Hana", "Ivan", "Julia",
         "Kofi", "Lena", "Mateo", "Nadia", "Omar", "Priya"]


def traj(task: str, calls: Sequence[tuple], *, success: bool, answer: str = "Done.",
         task_id: str | None = None, task_type: str | None = None,
         limits: Iterable[LimitEvent] = (), injections: Iterable[Injection] = (),
         labels: dict[str, str] | None = None, note: str | None = None) -> Trajectory:
    """A finished, labelled trajectory: a model turn before every tool call, then the answer."""
    start = utcnow() - timedelta(hours=1) + timedelta(seconds=next(_clock))
    steps: list[Step] = []
    for tool, args, result, *rest in calls:
        error = rest[0] if rest else None
        i = len(steps)
        steps.append(Step(index=i, kind="model", started_at=start, input_tokens=400, output_tokens=30,
                          tool_calls=[{"name": tool, "args": args, "id": f"call_{i}"}]))
        steps.append(Step(index=i + 1, kind="tool", started_at=start, tool=tool, args=args,
                          result=result, error=error, latency_ms=12.0))
    steps.append(Step(index=len(steps), kind="model", started_at=start, content=answer,
                      input_tokens=500, output_tokens=60))
    return Trajectory(task=task, task_id=task_id, task_type=task_type, labels=labels or {},
                      model="fake", status="complete", final_answer=answer, started_at=start,
                      ended_at=start + timedelta(seconds=2), steps=steps, limit_events=list(limits),
                      injections=list(injections),
                      outcome=Outcome(success=success, source="verifier", note=note))


def injected(skill: Any, steps: Iterable[int] = (0,)) -> list[Injection]:
    return [Injection(step=s, skill_id=skill.id, version=skill.version, rank=0, score=0.8) for s in steps]


# -- retail refunds --------------------------------------------------------------------------------


def refund(i: int, *, success: bool = True, skip_check: bool = False, skill: Any = None,
           task_type: str | None = None) -> Trajectory:
    order = f"{4000 + i}"
    name = NAMES[i % len(NAMES)]
    calls = [("find_order", {"order_id": order},
              f'{{"order_id": "{order}", "status": "delivered", "total": {20 + i}.50}}')]
    if not skip_check:
        calls.append(("check_refund_policy", {"order_id": order}, '{"eligible": true}'))
    calls.append(("issue_refund", {"order_id": order, "amount": 20 + i + 0.5}, "refund issued"))
    answer = f"I have refunded order {order} ({20 + i}.50)." if success else "Refund issued."
    return traj(f"Refund order {order} for {name}, it arrived damaged.", calls, success=success,
                answer=answer, task_id=f"retail-refund-{i:04d}", task_type=task_type,
                injections=injected(skill) if skill else (),
                note=None if success else f"expected refund policy check before refund of order {order}")


# -- capability and budget limits -------------------------------------------------------------------


def window(i: int, *, success: bool = False, skill: Any = None) -> Trajectory:
    """The user asks for the window and the AC; ``open_window`` does not exist."""
    calls = [("open_window", {"side": "driver"}, None, "Tool open_window is not available."),
             ("set_climate", {"temperature": 20 + i % 3}, "climate on")]
    limits = [LimitEvent(type="missing_tool", step=1, detail="open_window is not among the tools",
                         tool="open_window")]
    answer = ("I turned the AC on. I cannot open the window: open_window is unavailable." if success
              else "I opened the window and turned on the AC.")
    return traj(f"Open the driver window and set the AC to {20 + i % 3} degrees.", calls, success=success,
                answer=answer, task_id=f"car-{i:03d}", limits=limits,
                injections=injected(skill) if skill else ())


def eta(i: int, *, success: bool = False) -> Trajectory:
    order = f"{7000 + i}"
    calls = [("track_order", {"order_id": order}, '{"status": "shipped", "eta": null}')]
    limits = [LimitEvent(type="unknown_field", step=1, detail="eta is null", tool="track_order",
                         data={"field": "eta"})]
    answer = "It is shipped; the delivery date is unknown." if success else "It arrives on Monday."
    return traj(f"When will order {order} arrive?", calls, success=success, answer=answer,
                task_id=f"track-{i:03d}", limits=limits)


def search_budget(i: int, *, success: bool = False, calls_made: int | None = None) -> Trajectory:
    topic = ["solar panels", "heat pumps", "wind turbines", "batteries"][i % 4]
    n = calls_made if calls_made is not None else (6 if not success else 2)
    calls = [("search", {"query": f"{topic} efficiency"}, "no exact match")] * n
    limits = [LimitEvent(type="tool_call_limit", step=2 * n, detail="tool call limit reached",
                         data={"limit": 6, "used": n})] if not success else []
    answer = "Sorry, I ran out of steps." if not success else f"Summary of {topic} efficiency."
    return traj(f"Find the typical efficiency of {topic}.", calls, success=success, answer=answer,
                task_id=f"search-{i:03d}", limits=limits)


def stated_values_learned(ok: Sequence[Any], bad: Sequence[Any], min_support: int = 2) -> list[tuple[Any, str]]:
    """What the registry's opt-in contrast learners (the stated time and the stated date) learn
    from ``ok`` and ``bad``, as a round with ``learn_stated_values`` asks them."""
    from skillbank.lessons import contrast_learners

    return [found for learner in contrast_learners(opt_in=True) if learner.opt_in
            for found in learner.learn(ok, bad, min_support)]
