"""A tool error teaches no guard when the failing call's every value was made up: no token of
any value is in the request or in a result an earlier call returned. The failure is calling at
all. The trace (protocol v8 on the real 1.5B, RESULTS.md): on small talk the model called
``set_pickup_time(order_id="12345")`` and ``get_forecast(city="London")``; the errors became
"retry at most once" guards, one was promoted, and it cost the pickup requests their call."""

from __future__ import annotations

from skillbank.evolution import evolve
from skillbank.models import LimitEvent, LimitType
from test_evolution_support import traj


def _failed(task: str, args: dict, i: int, *, before=()):
    error = "Error: unknown table_id; take it from find_tables"
    calls = [*before, ("hold_table", args, None, error)]
    return traj(task, calls, success=False, answer="", task_id=f"t-{i}",
                limits=[LimitEvent(type=LimitType.tool_error, step=2 * len(before) + 1, detail=error,
                                   tool="hold_table")])


def _guards(bank):
    return [c for c in evolve(bank, distiller="rule", dry_run=True).changes if c.origin == "guard"]


def test_small_talk_answered_with_a_made_up_call_teaches_no_guard(bank):
    for i, task in enumerate(["Cheers, what a lovely evening!", "Many thanks, that was delightful."]):
        bank.trajectories.save(_failed(task, {"table_id": "T-100", "time": "19:00"}, i))
    assert _guards(bank) == []


def test_a_value_from_the_request_keeps_the_guard(bank):
    for i, table in enumerate(["T-7", "T-9"]):
        bank.trajectories.save(_failed(f"Hold table {table} for tonight.", {"table_id": table}, i))
    assert [c.skill for c in _guards(bank)] == ["when-hold-table-fails"]


def test_a_value_from_an_earlier_result_keeps_the_guard(bank):
    found = ("find_tables", {"area": "terrace"}, '{"tables": [{"table_id": "T-31"}]}')
    for i in range(2):
        bank.trajectories.save(_failed("Hold a table on the terrace for tonight.", {"table_id": "T-31"}, i,
                                       before=[found]))
    assert [c.skill for c in _guards(bank)] == ["when-hold-table-fails"]
