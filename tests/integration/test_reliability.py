"""Crashes, full disks and many writers: nothing lost, nothing half-written, history intact."""

import multiprocessing
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from skillbank import SkillBank, StorageFullError
from skillbank.models import LimitEvent, LimitType, Step, Trajectory, utcnow

WRITER = textwrap.dedent(
    """
    import sys
    from skillbank import SkillBank
    from skillbank.models import Step, Trajectory, utcnow
    bank = SkillBank.open(sys.argv[1], embedder="hash")
    tag = sys.argv[2]
    print("ready", flush=True)
    i = 0
    while True:
        s = bank.add_skill(name=f"{tag}-{i}", description=f"skill {i}", body="v1 " * 50)
        bank.update_skill(s.id, body="v2 " * 50, reason="edit")
        t = Trajectory(task=f"task {i}")
        bank.trajectories.start(t)
        for j in range(5):
            bank.trajectories.append(t.id, [Step(index=j, kind="tool", started_at=utcnow(),
                                                 tool="lookup", result="x" * 500)])
        bank.trajectories.finish(t.id, final_answer="done")
        i += 1
    """
)


def kill_writer(path, tag: str, delay: float) -> None:
    """Start WRITER on the bank at ``path`` and SIGKILL it ``delay`` seconds after it is ready."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


@pytest.mark.slow
def test_kill_9_during_writes_never_corrupts(tmp_path):
    """Kill a writer at 20 random points; the file, the chain and every version stay sound."""
    path = tmp_path / "bank"
    SkillBank.open(path, embedder="hash").close()
    rng = random.Random(7)
    for attempt in range(20):
        kill_writer(path, f"w{attempt}", rng.uniform(0.01, 0.3))
    with SkillBank.open(path, embedder="hash") as bank:
        assert bank.store.integrity_check() == []
        report = bank.verify()
        assert report.ok, report.problems
        # every skill has exactly the versions its current row claims: none half-written
        rows = bank.store.query(
            "SELECT s.id, s.version, count(v.version) AS n FROM skills s"
            " JOIN skill_versions v ON v.skill_id = s.id GROUP BY s.id")
        assert rows and all(r["version"] == r["n"] for r in rows)
        # runs killed mid-way kept the steps they had written
        running = bank.trajectories.list(status="running", limit=None, with_steps=True)
        assert all(len(t.steps) <= 5 for t in running)
        bank.add_skill(name="after-crash", description="still writable", body="yes")


def test_full_disk_rolls_back_and_says_so(tmp_path):
    with SkillBank.open(tmp_path / "bank", embedder="hash") as bank:
        bank.add_skill(name="before", description="d", body="b")
        pages = bank.store.query_one("PRAGMA page_count")["page_count"]
        bank.store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # simulate a full disk
        with pytest.raises(StorageFullError, match="full"):
            for i in range(100):
                bank.add_skill(name=f"big-{i}", description="d", body="x" * 15000)
        bank.store.conn.execute("PRAGMA max_page_count = 1073741823")
        assert bank.verify(check_index=False).ok
        assert bank.get_skill("before").version == 1


def test_huge_tool_output_is_stored_truncated_with_marker(bank):
    t = Trajectory(task="dump")
    bank.trajectories.start(t)
    bank.trajectories.append(t.id, [Step(index=0, kind="tool", started_at=utcnow(), tool="dump",
                                         result="x" * 10_000_000)])
    stored = bank.trajectories.get(t.id).steps[0].result
    assert len(stored) < 40_000 and "[truncated 9968000 characters]" in stored


def test_non_utf8_text_is_stored(bank):
    bad = b"caf\xe9 \xff\xfe".decode("utf-8", "surrogateescape")
    t = Trajectory(task=bad, steps=[Step(index=0, kind="tool", started_at=utcnow(), result=bad)])
    bank.trajectories.save(t)
    assert bank.trajectories.get(t.id).task.startswith("caf")


def _log_trajectories(path, worker, n):
    bank = SkillBank.open(path, embedder="hash")
    for i in range(n):
        t = Trajectory(task=f"worker {worker} task {i}", labels={"worker": str(worker)})
        bank.trajectories.start(t)
        for j in range(3):
            bank.trajectories.append(
                t.id, [Step(index=j, kind="model", started_at=utcnow(), content=f"turn {j}",
                            input_tokens=10, output_tokens=5)],
                limit_events=[LimitEvent(type=LimitType.tool_error, step=j, detail="boom")] if j == 2 else [],
            )
        bank.trajectories.finish(t.id, final_answer="ok")
        bank.record_outcome(t.id, success=i % 2 == 0)
    bank.close()


def _add_skills(path, n):
    bank = SkillBank.open(path, embedder="hash")
    for i in range(n):
        s = bank.add_skill(name=f"concurrent-{i}", description=f"skill {i}", body="b")
        bank.update_skill(s.id, body="b2", reason="edit")
        bank.search(f"skill {i}", k=3)
    bank.close()


@pytest.mark.slow
def test_many_writers_lose_nothing(tmp_path):
    """8 logging processes, one editing skills and searching; no 'database is locked' escapes."""
    path = tmp_path / "bank"
    SkillBank.open(path, embedder="hash").close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_log_trajectories, args=(path, w, 200)) for w in range(8)]
    procs.append(ctx.Process(target=_add_skills, args=(path, 60)))
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0  # an escaped "database is locked" would have failed the worker
    with SkillBank.open(path, embedder="hash") as bank:
        trajs = bank.trajectories.list(limit=None, with_steps=True)
        assert len(trajs) == 8 * 200
        assert all(t.status == "complete" and len(t.steps) == 3 and len(t.limit_events) == 1
                   and t.outcome is not None for t in trajs)
        assert bank.skills.count() == 60
        report = bank.verify()
        assert report.ok, report.problems
