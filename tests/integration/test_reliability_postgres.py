"""The reliability runs of the SQLite tests, on one PostgreSQL server (issue 14's "done when").

- 8 agent processes x 200 runs through the real ``create_agent`` middleware, with an evolution
  loop and a search loop running at once: every run present and complete, the chain verifies;
- kill -9 of a writer (skills and trajectories) and of an evolving process at random points,
  20 times each: no half-written version, the chain verifies, the next round completes.
"""

from __future__ import annotations

import random

import pytest

from skillbank import SkillBank
from test_hardening_support import KILL_POINTS, check_bank, crash_evolution, run_many_agent_writers
from test_reliability import kill_writer

PROCESSES, PER, KILLS = 8, 200, 20


@pytest.mark.slow
def test_eight_agent_processes_with_evolve_and_search_lose_nothing_on_postgres(pg_url):
    result = run_many_agent_writers(pg_url, PROCESSES, PER, timeout=480)
    errors = [m for m in result["messages"] if m[2] != "ok"]
    assert not errors, errors[0][3]
    assert result["exitcodes"] == [0] * (PROCESSES + 2), result
    loops = {m[0]: m[3] for m in result["messages"] if m[0] in ("evolve", "search")}
    assert loops["evolve"] >= 1 and loops["search"] >= 1
    with SkillBank.open(pg_url, embedder="hash") as bank:
        trajs = bank.trajectories.list(limit=None, with_steps=True)
        assert len(trajs) == PROCESSES * PER
        assert all(t.status == "complete" and len(t.steps) == 3 and t.outcome is not None
                   and t.outcome.source == "verifier" and t.final_answer for t in trajs)
        per_worker: dict[str, int] = {}
        for t in trajs:
            per_worker[t.labels["worker"]] = per_worker.get(t.labels["worker"], 0) + 1
        assert per_worker == {str(w): PER for w in range(PROCESSES)}
        report = bank.verify()
        assert report.ok, report.problems


@pytest.mark.slow
def test_kill_9_writers_and_rounds_never_half_write_on_postgres(pg_server):
    url = pg_server.create_database()
    SkillBank.open(url, embedder="hash").close()
    rng = random.Random(14)
    problems = []
    for attempt in range(KILLS):
        kill_writer(url, f"w{attempt}", rng.uniform(0.05, 0.6))
        problems += [f"writer kill {attempt}: {p}" for p in check_bank(url)]
    assert problems == []
    with SkillBank.open(url, embedder="hash") as bank:
        running = bank.trajectories.list(status="running", limit=None, with_steps=True)
        assert all(len(t.steps) <= 5 for t in running)  # killed runs kept what they wrote

    result = crash_evolution(pg_server.create_database(), attempts=KILLS, seed=14, families=120)
    assert result["failures"] == []
    assert result["killed"] == KILLS and set(result["points"]) == set(KILL_POINTS)  # each named step
    assert result["versions"] > 0 and result["final_round"] >= 1  # the next round completed
