"""Many writers through real agents, and evolution rounds racing each other (hardening, item 1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from skillbank import SkillBank
from skillbank.errors import LockedError
from skillbank.evolution import evolve
from test_hardening_support import family_runs, run_many_agent_writers

PROCESSES, PER = 8, 200


@pytest.mark.slow
def test_eight_agent_processes_with_evolve_and_search_lose_nothing(tmp_path):
    path = tmp_path / "bank"
    result = run_many_agent_writers(str(path), PROCESSES, PER, timeout=240)
    errors = [m for m in result["messages"] if m[2] != "ok"]
    assert not errors, errors[0][3]
    assert result["exitcodes"] == [0] * (PROCESSES + 2), result
    roles = sorted(m[0] for m in result["messages"])
    assert roles == ["agent"] * PROCESSES + ["evolve", "search"]
    with SkillBank.open(path, embedder="hash") as bank:
        trajs = bank.trajectories.list(limit=None, with_steps=True)
        assert len(trajs) == PROCESSES * PER
        assert all(t.status == "complete" and len(t.steps) == 3 and t.outcome is not None
                   and t.outcome.source == "verifier" and t.final_answer for t in trajs)
        per_worker = {}
        for t in trajs:
            per_worker[t.labels.get("worker")] = per_worker.get(t.labels.get("worker"), 0) + 1
        assert per_worker == {str(w): PER for w in range(PROCESSES)}
        report = bank.verify()
        assert report.ok, report.problems
        assert bank.store.integrity_check() == []


SLOW_ROUND = textwrap.dedent("""
    import sys, time
    from skillbank import SkillBank
    from skillbank.evolution import evolve
    bank = SkillBank.open(sys.argv[1], embedder="hash")
    def validate(skill, tasks):
        print("in-round", flush=True)
        time.sleep(float(sys.argv[2]))
        return True
    evolve(bank, validate=validate, auto_promote=True, lock_timeout=5)
    print("done", flush=True)
""")


def _slow_round(path, seconds):
    proc = subprocess.Popen([sys.executable, "-c", SLOW_ROUND, str(path), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "in-round"
    return proc


def _prepare(bank, families):
    for f in families:
        for t in family_runs(f):
            bank.trajectories.save(t)


def test_two_real_rounds_second_fails_clearly_then_waits(bank):
    _prepare(bank, range(2))
    proc = _slow_round(bank.path, 60)
    try:
        with pytest.raises(LockedError) as info:
            evolve(bank, lock_timeout=0.5)
        message = str(info.value)
        assert "another evolution round is running" in message and f"pid {proc.pid}" in message
        assert "--lock-timeout" in message  # says what to do
    finally:
        proc.kill()
        proc.wait()
    # the killed round (SIGKILL mid-round) does not block the next one: no wait at all
    report = evolve(bank, lock_timeout=0)
    # the killed round had written its candidates and consumed its evidence before the gate;
    # the next round starts cleanly after it and nothing is half-done
    assert report.round == 2 and report.trajectories == 0
    assert bank.verify().ok

    _prepare(bank, range(2, 4))
    proc = _slow_round(bank.path, 1.0)
    try:
        # waits for the first round, then runs: it finds the evidence consumed (below), which
        # a round running alongside the first would have taken as its own
        report = evolve(bank, lock_timeout=30)
        assert proc.wait(30) == 0 and "done" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert report.round == 4 and report.trajectories == 0  # the first consumed the evidence
    rows = bank.store.query("SELECT s.id, s.version, count(v.version) AS n FROM skills s"
                            " JOIN skill_versions v ON v.skill_id = s.id GROUP BY s.id")
    assert rows and all(r["version"] == r["n"] for r in rows)
    assert bank.verify().ok


def test_lock_of_a_sigkilled_round_is_released(bank):
    _prepare(bank, range(1))
    proc = _slow_round(bank.path, 60)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert evolve(bank, lock_timeout=0).round == 2  # no wait, no LockedError
    assert bank.verify().ok
