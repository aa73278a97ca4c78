"""Two rounds at once: the second waits, then fails with a clear message; a dead holder frees it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from skillbank.errors import LockedError
from skillbank.evolution import evolve, evolution_lock
from test_evolution_support import refund

HOLD = textwrap.dedent("""
    import sys, time
    from skillbank.evolution._lock import evolution_lock
    with evolution_lock(sys.argv[1], timeout=5):
        print("held", flush=True)
        time.sleep(60)
""")


def _holder(path):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_round_fails_clearly_while_another_holds_the_lock(bank):
    bank.trajectories.save(refund(0))
    proc = _holder(bank.path)
    try:
        with pytest.raises(LockedError, match=rf"another evolution round is running .*pid {proc.pid}"
                                                r".*after waiting 0.3s"):
            evolve(bank, lock_timeout=0.3)
        assert evolve(bank, dry_run=True).trajectories == 1  # a dry run takes no lock
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    # A killed holder cannot keep the bank locked.
    assert evolve(bank, lock_timeout=2).trajectories == 1


def test_second_round_waits_for_the_first(bank):
    bank.trajectories.save(refund(0))
    with evolution_lock(bank.path):
        result = {}
        worker = threading.Thread(target=lambda: result.update(r=evolve(bank, lock_timeout=10)))
        worker.start()
        time.sleep(0.3)
        assert worker.is_alive()  # waiting
    worker.join(10)
    assert result["r"].trajectories == 1


def test_lock_in_the_same_process_is_exclusive(tmp_path):
    with evolution_lock(tmp_path, timeout=0):
        with pytest.raises(LockedError):
            with evolution_lock(tmp_path, timeout=0):
                pass
    with evolution_lock(tmp_path, timeout=0):
        pass
