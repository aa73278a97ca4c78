"""Property tests over the record parsers and the trajectory store (hardening, item 4).

Generated trajectories (steps, limit events, injections, outcomes; arbitrary unicode including
NULs, astral characters and lone surrogates) round-trip through JSON and through a real SQLite
bank. Texts with lone surrogates cannot be UTF-8: they are stored with each surrogate replaced,
never crash the write, and everything else in the record survives unchanged.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbank import SkillBank
from skillbank.models import Injection, LimitEvent, LimitType, Outcome, Step, Trajectory

EXAMPLES = int(os.environ.get("HARDENING_EXAMPLES", "150"))
COUNTS = {"examples": 0}  # read by scripts/hardening_report.py

SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\udcff"])
CLEAN_TEXT = st.text(max_size=60)  # hypothesis' default alphabet: all of unicode but surrogates
DIRTY_TEXT = st.lists(st.one_of(CLEAN_TEXT, SURROGATES), max_size=4).map("".join)
KEY = st.text(min_size=1, max_size=12)
JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | CLEAN_TEXT,
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEY, inner, max_size=3),
                       max_leaves=6)
WHEN = st.datetimes(timezones=st.just(timezone.utc))


def steps(text):
    return st.builds(
        Step, index=st.integers(0, 500), kind=st.sampled_from(["model", "tool"]), started_at=WHEN,
        latency_ms=st.none() | st.floats(0, 1e6, allow_nan=False),
        content=st.none() | text, tool_calls=st.lists(st.dictionaries(KEY, JSONISH, max_size=3), max_size=2),
        input_tokens=st.none() | st.integers(0, 10**7), output_tokens=st.none() | st.integers(0, 10**7),
        tool=st.none() | text, args=st.none() | st.dictionaries(KEY, JSONISH, max_size=3),
        result=st.none() | text, error=st.none() | text)


def trajectories(text):
    return st.builds(
        Trajectory, task=text, task_id=st.none() | text, task_type=st.none() | text,
        labels=st.dictionaries(KEY, text, max_size=3), model=st.none() | text,
        status=st.sampled_from(["running", "complete", "incomplete"]), error=st.none() | text,
        final_answer=st.none() | text, started_at=WHEN, ended_at=st.none() | WHEN,
        steps=st.lists(steps(text), max_size=4, unique_by=lambda s: s.index),  # one row per index
        limit_events=st.lists(st.builds(LimitEvent, type=st.sampled_from(list(LimitType)),
                                        step=st.integers(0, 500), detail=text, tool=st.none() | text,
                                        data=st.dictionaries(KEY, JSONISH, max_size=2)), max_size=3),
        injections=st.lists(st.builds(Injection, step=st.integers(0, 50), skill_id=KEY,
                                      version=st.integers(1, 99), rank=st.integers(0, 9),
                                      score=st.floats(-1, 1, allow_nan=False)), max_size=2),
        outcome=st.none() | st.builds(Outcome, success=st.none() | st.booleans(),
                                      score=st.none() | st.floats(0, 1, allow_nan=False),
                                      source=st.sampled_from(["verifier", "manual", "judge"]),
                                      note=st.none() | text, recorded_at=WHEN))


_BANK: dict[str, SkillBank] = {}


def _bank() -> SkillBank:
    # one real bank for all examples (hypothesis and function-scoped fixtures do not mix)
    if "b" not in _BANK:
        _BANK["b"] = SkillBank.open(tempfile.mkdtemp(prefix="sb-props-") + "/bank", embedder="hash")
    return _BANK["b"]


def _fix(value):
    """What the store keeps of a text: lone surrogates replaced, like ``str.encode(errors='replace')``."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_fix(k): _fix(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fix(v) for v in value]
    return value


def _canon(traj: Trajectory) -> dict:
    data = traj.model_dump(mode="python")
    data["steps"] = sorted(data["steps"], key=lambda s: s["index"])
    data["injections"] = sorted(data["injections"], key=lambda i: sorted(i.items()))  # read by step, rank
    if data["status"] == "running":  # a running record has no end yet: save() does not finish it
        data.update(final_answer=None, error=None, ended_at=None)
    data.pop("ended_at")  # finish() stamps "now" when a finished record has none
    return data


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trajectories(CLEAN_TEXT))
def test_clean_records_round_trip_json_and_sqlite(traj):
    COUNTS["examples"] += 1
    assert Trajectory.model_validate_json(traj.model_dump_json()) == traj
    for step in traj.steps:
        assert Step.model_validate_json(step.model_dump_json()) == step
    for event in traj.limit_events:
        assert LimitEvent.model_validate_json(event.model_dump_json()) == event
    bank = _bank()
    bank.trajectories.save(traj)
    got = bank.trajectories.get(traj.id)
    assert _canon(got) == _canon(traj)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trajectories(DIRTY_TEXT))
def test_lone_surrogates_are_stored_replaced_without_crashing(traj):
    COUNTS["examples"] += 1
    bank = _bank()
    bank.trajectories.save(traj)
    got = bank.trajectories.get(traj.id)
    assert _canon(got) == _fix(_canon(traj))
    assert Trajectory.model_validate_json(got.model_dump_json()) == got  # what was stored is valid JSON
