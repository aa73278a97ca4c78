"""The live monitor on one PostgreSQL server, with writers and monitors in separate processes.

- 8 writer processes record runs (a trajectory, its exposures, its outcome, in the order the
  middleware writes them) while two monitor processes decide at once, as two hosts would: every
  run a writer reported is there with its exposures and outcome, none twice; each skill is decided
  once (one version by ``monitor``); the hash-chained history verifies;
- kill -9 of a writer mid-stream and of a monitor mid-decision (before its write, inside the
  write's transaction, after its commit with the lock still held): nothing committed is lost, a
  decision is a whole version or nothing, and the next monitor run completes the decisions once.

The monitor children write slowly (half a second between a decision's check of the skill's
version and its write), so two monitors not kept apart by the evolution lock would both decide:
with the lock bypassed the first test fails on it. The streams are strong so that decisions
happen: the ``good`` canary's runs succeed exactly when it is shown, the ``bad`` canary's exactly
when it is held back, the ``neutral`` canary's always (it can never be decided).
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from skillbank import SkillBank
from skillbank.live._canary import start_canary
from skillbank.live._config import CANARY_TAG, LiveConfig
from skillbank.models import SkillStatus

WRITERS, PER_WRITER = 8, 60
ROLES = ("good", "bad", "neutral")

# Shared by every process: canaries shown to half their eligible runs, no standing holdout.
LIVE = {"canary_exposure": 0.5, "holdout": 0.0}
CONFIG = f"LiveConfig(**{LIVE!r})"

WRITER = textwrap.dedent(f"""
    import sys
    from skillbank import SkillBank
    from skillbank.live._config import LiveConfig
    from skillbank.live._exposure import Arm, ExposureDraw
    from skillbank.models import Injection, SkillStatus, Trajectory

    url, worker, start, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    roles = dict(pair.split("=") for pair in sys.argv[5].split(","))  # skill id -> role
    ids = sorted(roles)
    bank = SkillBank.open(url, embedder="hash")
    draws = ExposureDraw({CONFIG})
    print("ready", flush=True)
    for i in range(start, start + n):
        skill = bank.get_skill(ids[i % len(ids)])
        run = Trajectory(task=f"run {{worker}}-{{i}}", labels={{"worker": worker, "i": str(i)}})
        eligible = [skill] if skill.status == SkillStatus.active else []
        exposures = draws.assign(run.id, eligible)
        shown = bool(eligible) and (not exposures or exposures[0].arm == Arm.shown)
        # As the middleware writes a run: the row at its start, the exposures and the skills
        # shown at its first model turn, the finish, then the verifier's outcome.
        bank.trajectories.start(run)
        bank.exposures.record(run.id, exposures)
        if shown:
            bank.trajectories.append(run.id, injections=[Injection(step=0, skill_id=skill.id,
                                                                    version=skill.version, rank=0, score=0.9)])
        bank.trajectories.finish(run.id, final_answer="done")
        role = roles[skill.id]
        success = shown if role == "good" else (not shown if role == "bad" else True)
        bank.record_outcome(run.id, success=success, source="verifier")
        print(f"ok {{run.id}} {{i}} {{len(exposures)}}", flush=True)
    print("finished", flush=True)
""")

MONITOR = textwrap.dedent(f"""
    import os, sys, time
    from skillbank import SkillBank
    from skillbank.live._config import LiveConfig

    bank = SkillBank.open(sys.argv[1], embedder="hash")
    stop = sys.argv[2]
    # A slow write (a far host, a busy server): the decision's check of the skill's version and
    # its write are half a second apart, so two monitors not kept apart by the lock both write.
    write = bank.skills.new_version

    def slow_write(*args, **kwargs):
        time.sleep(0.5)
        return write(*args, **kwargs)

    bank.skills.new_version = slow_write
    print("ready", flush=True)
    passes = 0
    while True:
        last = os.path.exists(stop)
        report = bank.monitor({CONFIG}, apply=True, lock_timeout=300)
        passes += 1
        for s in report.skills:
            if s.applied:
                print(f"applied {{s.skill.id}} {{s.decision.action.value}} {{s.decision.version}}", flush=True)
        if last:
            break
    print(f"passes {{passes}}", flush=True)
""")

# A monitor that stops at ``sys.argv[2]`` on its first decision and waits there to be killed:
# ``decided`` (under the lock, nothing written), ``uncommitted`` (the version written inside a
# transaction not yet committed), ``written`` (committed, the lock still held).
MONITOR_KILLED = textwrap.dedent(f"""
    import sys
    import skillbank.live._monitor as monitor_mod
    from skillbank import SkillBank
    from skillbank.live._config import LiveConfig

    bank = SkillBank.open(sys.argv[1], embedder="hash")
    target = sys.argv[2]
    apply = monitor_mod._apply

    def stop(name):
        if name == target:
            print("at " + name, flush=True)
            sys.stdin.readline()  # the parent kills this process here

    def paused(bank, decision):
        stop("decided")
        with bank.transaction():
            out = apply(bank, decision)
            stop("uncommitted")
        stop("written")
        return out

    monitor_mod._apply = paused
    print("ready", flush=True)
    bank.monitor({CONFIG}, apply=True, lock_timeout=60)
    print("done", flush=True)
""")


def _python(script: str, *args: str, stdin: bool = False) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True,
                            stdin=subprocess.PIPE if stdin else None)


class Lines:
    """A child's stdout lines, read on a thread as they come (so it can be killed mid-stream)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self.lines = proc, []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def wait_for(self, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [x for x in self.lines if x.startswith(prefix)]
            if found:
                return found[0]
            if self.proc.poll() is not None and not self._thread.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no {prefix!r} from the child; it said {self.lines[-5:]}")

    def join(self, timeout: float) -> list[str]:
        self.proc.wait(timeout)
        self._thread.join(timeout)
        return self.lines


def _reported(lines: list[str]) -> dict[str, tuple[int, int]]:
    """The runs a writer reported committed: trajectory id -> (index, exposures written)."""
    out: dict[str, tuple[int, int]] = {}
    for line in lines:
        if line.startswith("ok "):
            _, tid, i, n = line.split()
            assert tid not in out, f"run {tid} reported twice"
            out[tid] = (int(i), int(n))
    return out


def _bank_with_canaries(url: str) -> dict[str, str]:
    """Three canaries in a new bank at ``url``: role -> skill id."""
    with SkillBank.open(url, embedder="hash") as bank:
        ids = {}
        for role in ROLES:
            skill = bank.add_skill(name=f"refund-{role}", description=f"Refund a damaged order ({role})",
                                   body=f"Do the {role} thing.")
            ids[role] = start_canary(bank.skills, skill.id).id
        return ids


def _roles_arg(ids: dict[str, str]) -> str:
    return ",".join(f"{sid}={role}" for role, sid in ids.items())


def _committed_runs_are_all_there(bank: SkillBank, reported: dict[str, tuple[int, int]]) -> None:
    """Every reported run is stored once, complete, labelled, with exactly its exposures."""
    exposures: dict[str, int] = {}
    for r in bank.store.query("SELECT run_id, count(*) AS n FROM exposures GROUP BY run_id"):
        exposures[r["run_id"]] = int(r["n"])
    rows = {r["id"]: r for r in bank.store.query("SELECT id, status, success FROM trajectories")}
    missing = [tid for tid in reported if tid not in rows]
    assert missing == [], f"{len(missing)} committed runs lost"
    assert all(rows[tid]["status"] == "complete" and rows[tid]["success"] is not None for tid in reported)
    wrong = {tid: (exposures.get(tid, 0), n) for tid, (_, n) in reported.items() if exposures.get(tid, 0) != n}
    assert wrong == {}, f"runs whose exposures differ from what was written (stored, written): {wrong}"


def _monitor_versions(bank: SkillBank, skill_id: str) -> list:
    return [v for v in bank.history(skill_id) if v.author == "monitor"]


def _no_partial_decision(bank: SkillBank, ids: dict[str, str]) -> None:
    """Every skill has exactly the versions its row claims; each monitor version is whole (its
    change-log event holds the evidence, the skill's state is the decision's); the chain verifies."""
    rows = bank.store.query("SELECT s.id, s.version, count(v.version) AS n FROM skills s"
                            " LEFT JOIN skill_versions v ON v.skill_id = s.id GROUP BY s.id, s.version")
    assert all(int(r["version"]) == int(r["n"]) for r in rows), rows
    for role, sid in ids.items():
        versions = _monitor_versions(bank, sid)
        assert len(versions) <= 1, f"{role} decided {len(versions)} times"
        for v in versions:
            assert v.reason.startswith("monitor: ") and "overall" in bank.skills.recorded_evidence([sid])[sid][v.version]
            skill = bank.get_skill(sid)
            if "promote" in v.reason:
                assert skill.status == SkillStatus.active and CANARY_TAG not in skill.tags
            else:
                assert skill.status == SkillStatus.retired
    report = bank.verify(check_index=False)
    assert report.ok, report.problems


def _decided_once(bank: SkillBank, ids: dict[str, str]) -> None:
    assert [v.reason.split(":")[1].strip() for v in _monitor_versions(bank, ids["good"])] == ["promote"]
    assert [v.reason.split(":")[1].strip() for v in _monitor_versions(bank, ids["bad"])] == ["reject"]
    assert _monitor_versions(bank, ids["neutral"]) == []
    assert CANARY_TAG in bank.get_skill(ids["neutral"]).tags


@pytest.mark.slow
def test_eight_writers_and_two_monitors_at_once_decide_each_skill_once(pg_server, tmp_path: Path):
    url = pg_server.create_database()
    ids = _bank_with_canaries(url)
    stop = tmp_path / "stop"
    monitors = [Lines(_python(MONITOR, url, str(stop))) for _ in range(2)]
    for m in monitors:
        m.wait_for("ready", 120)
    writers = [Lines(_python(WRITER, url, str(w), "0", str(PER_WRITER), _roles_arg(ids))) for w in range(WRITERS)]
    try:
        for w in writers:
            w.join(600)
        stop.touch()
        for m in monitors:
            m.join(600)
    finally:
        for child in writers + monitors:
            if child.proc.poll() is None:
                child.proc.kill()
                child.proc.wait()
    assert [w.proc.returncode for w in writers + monitors] == [0] * (WRITERS + 2), \
        [w.lines[-3:] for w in writers + monitors]
    assert all(w.lines[-1] == "finished" for w in writers)
    reported: dict[str, tuple[int, int]] = {}
    for w in writers:
        mine = _reported(w.lines)
        assert len(mine) == PER_WRITER and not set(mine) & set(reported)
        reported.update(mine)
    applied = [line.split()[1:] for m in monitors for line in m.lines if line.startswith("applied ")]
    passes = [int(m.lines[-1].split()[1]) for m in monitors]
    with SkillBank.open(url, embedder="hash") as bank:
        # Exact counts: every reported run once, its exposures and its outcome, nothing more.
        assert bank.store.query_one("SELECT count(*) AS n FROM trajectories")["n"] == WRITERS * PER_WRITER
        assert bank.store.query_one("SELECT count(*) AS n FROM trajectories WHERE success IS NOT NULL")["n"] \
            == WRITERS * PER_WRITER
        assert bank.store.query_one("SELECT count(*) AS n FROM exposures")["n"] == sum(n for _, n in reported.values())
        labels = {(t.labels["worker"], t.labels["i"]) for t in bank.trajectories.list(limit=None)}
        assert len(labels) == WRITERS * PER_WRITER
        _committed_runs_are_all_there(bank, reported)
        # Each decision once: one monitor version per decided skill, applied by one monitor. The
        # second half is the sharp one: a second write of the same decision is a no-op version
        # (the store writes nothing for it), so without the lock two monitors would both report
        # the decision applied while the history still showed one version.
        _no_partial_decision(bank, ids)
        _decided_once(bank, ids)
        assert sorted((sid, action) for sid, action, _ in applied) == sorted(
            [(ids["good"], "promote"), (ids["bad"], "reject")]), applied
        # Both monitors read the bank while the writers wrote, and the decisions came mid-stream:
        # on fewer labelled runs than the skill ended with.
        assert min(passes) >= 2, passes
        for role in ("good", "bad"):
            (version,) = _monitor_versions(bank, ids[role])
            evidence = bank.skills.recorded_evidence([ids[role]])[ids[role]][version.version]["overall"]
            final = bank.store.query_one("SELECT count(*) AS n FROM exposures WHERE skill_id = ?", (ids[role],))["n"]
            assert evidence["shown"][1] + evidence["held"][1] < final, (role, evidence, final)


@pytest.mark.slow
def test_kill_9_of_a_writer_and_of_a_monitor_loses_nothing_and_decides_once(pg_server):
    url = pg_server.create_database()
    ids = _bank_with_canaries(url)
    rng = random.Random(26)
    reported: dict[str, tuple[int, int]] = {}
    unreported_allowed = 0
    next_i = 0
    for attempt in range(4):  # kill -9 mid-stream, then the next writer goes on where it stopped
        writer = Lines(_python(WRITER, url, "k", str(next_i), str(10**6), _roles_arg(ids)))
        writer.wait_for("ready", 120)
        time.sleep(rng.uniform(0.3, 1.5))
        writer.proc.send_signal(signal.SIGKILL)
        mine = _reported(writer.join(60))
        assert mine, f"attempt {attempt}: the writer reported no run before it was killed"
        assert not set(mine) & set(reported)
        reported.update(mine)
        unreported_allowed += 1  # the run it was killed in may be partly written
        next_i = max(i for i, _ in mine.values()) + 1
        with SkillBank.open(url, embedder="hash") as bank:
            _committed_runs_are_all_there(bank, reported)
    # Enough evidence for both decisions (about 100 runs per canary), written to completion.
    writer = Lines(_python(WRITER, url, "k", str(next_i), "300", _roles_arg(ids)))
    lines = writer.join(600)
    assert writer.proc.returncode == 0 and lines[-1] == "finished", lines[-3:]
    reported.update(_reported(lines))
    with SkillBank.open(url, embedder="hash") as bank:
        _committed_runs_are_all_there(bank, reported)
        stored = bank.store.query_one("SELECT count(*) AS n FROM trajectories")["n"]
        assert len(reported) <= stored <= len(reported) + unreported_allowed
        assert bank.monitor(LiveConfig(**LIVE), apply=False).decisions, "the streams must be strong enough to decide"
        _no_partial_decision(bank, ids)

    # kill -9 a monitor at each point of its first decision; the bank keeps a whole decision or none
    for point in ("decided", "uncommitted", "written"):
        child = _python(MONITOR_KILLED, url, point, stdin=True)
        try:
            assert child.stdout.readline().strip() == "ready"
            assert child.stdout.readline().strip() == f"at {point}"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        with SkillBank.open(url, embedder="hash") as bank:
            _no_partial_decision(bank, ids)
            written = sum(len(_monitor_versions(bank, sid)) for sid in ids.values())
            assert written == (1 if point == "written" else 0), (point, written)
    # The next monitor (the killed one's lock released by the server) completes the decisions once.
    with SkillBank.open(url, embedder="hash") as bank:
        done = bank.monitor(LiveConfig(**LIVE), apply=True, lock_timeout=60)
        assert sum(s.applied for s in done.skills) == 1  # the one the killed monitor had not written
        _no_partial_decision(bank, ids)
        _decided_once(bank, ids)
        again = bank.monitor(LiveConfig(**LIVE), apply=True, lock_timeout=60)
        assert not any(s.applied for s in again.skills)
        _decided_once(bank, ids)
        _committed_runs_are_all_there(bank, reported)

