"""Files and network: private permissions, nothing written outside the bank, no sockets (item 5)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillbank import SkillBank
from skillbank.evolution import evolve
from skillbank.store._sqlite import DB_FILENAME
from test_hardening_support import family_runs, make_agent


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for root in roots:
        for p in root.rglob("*"):
            st = p.lstat()
            out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


def _exercise(path: Path) -> None:
    """Open, run agents, evolve, search, verify: everything a user does with a bank."""
    with SkillBank.open(path, embedder="hash") as bank:
        bank.add_skill(name="look-up-first", description="Look orders up first", body="Call `lookup`.",
                       tools=["lookup"])
        agent, _ = make_agent(bank)
        for i in range(3):
            agent.invoke({"messages": [("user", f"look up order {i}")]})
        for f in range(3):
            for t in family_runs(f):
                bank.trajectories.save(t)
        evolve(bank, promote_policy="all")
        bank.render(bank.search("look up an order", k=3))
        assert bank.verify().ok


def _db_modes(path: Path) -> dict[str, int]:
    files = [path / (DB_FILENAME + s) for s in ("", "-wal", "-shm")]
    return {f.name: _mode(f) for f in files if f.exists()}


def test_bank_folder_and_database_files_are_private(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLBANK_EXACT_MAX", "0")  # the Chroma directory too, at any size
    old = os.umask(0o022)  # a typical, permissive umask
    try:
        path = tmp_path / "bank"
        with SkillBank.open(path, embedder="hash") as bank:  # a brand-new bank, still open
            bank.add_skill(name="first", description="d", body="b")
            assert _mode(path) == 0o700
            assert _db_modes(path) == {DB_FILENAME: 0o600, DB_FILENAME + "-wal": 0o600,
                                       DB_FILENAME + "-shm": 0o600}
        _exercise(path)
        with SkillBank.open(path, embedder="hash") as bank:
            bank.add_skill(name="one-more", description="d", body="b")  # WAL/SHM exist while open
            modes = _db_modes(path)
            assert DB_FILENAME in modes and set(modes.values()) == {0o600}, modes
            assert _mode(path) == 0o700 and _mode(path / "index") == 0o700
    finally:
        os.umask(old)


def test_agent_evolve_and_search_write_nothing_outside_and_open_no_socket(tmp_path, monkeypatch):
    home, cwd, bank_dir = tmp_path / "home", tmp_path / "cwd", tmp_path / "data"
    for d in (home, cwd, bank_dir):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.chdir(cwd)
    calls = []

    def refuse(self, address, *a, **k):
        calls.append(repr(address))
        raise OSError("network disabled by the hardening test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", lambda address, *a, **k: refuse(None, address))
    before = _snapshot(home, cwd)
    _exercise(bank_dir / "bank")
    assert calls == []
    assert _snapshot(home, cwd) == before == {}
    assert {p.name for p in bank_dir.iterdir()} == {"bank"}


CHILD = textwrap.dedent("""
    import json, socket, sys
    sys.path[:0] = sys.argv[2].split(__import__('os').pathsep)
    calls = []
    def refuse(self, address, *a, **k):
        calls.append(repr(address))
        raise OSError("network disabled")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    from pathlib import Path
    from test_hardening_files import _exercise
    _exercise(Path(sys.argv[1]))
    print(json.dumps(calls))
""")


def test_fresh_interpreter_with_empty_home_writes_nothing_outside(tmp_path):
    """The same, in a new interpreter whose HOME and cwd are empty from the start (so Chroma's
    import-time setup and any telemetry default are covered); no telemetry env var is set."""
    home, cwd, bank_dir = tmp_path / "home", tmp_path / "cwd", tmp_path / "data"
    for d in (home, cwd, bank_dir):
        d.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in {"ANONYMIZED_TELEMETRY", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"}}
    env.update(HOME=str(home), HF_HUB_OFFLINE="1")
    # This module's folder and tests/ (test_hardening_support), for the child's imports.
    tests_dir = os.pathsep.join([str(Path(__file__).parent), str(Path(__file__).parents[2])])
    out = subprocess.run([sys.executable, "-c", CHILD, str(bank_dir / "bank"), tests_dir], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
    assert _snapshot(home, cwd) == {}
    assert {p.name for p in bank_dir.iterdir()} == {"bank"}


def test_the_minilm_engine_leaves_no_onnx_runtime_telemetry(tmp_path):
    """ONNX Runtime 1.29 on records usage telemetry on Linux (a device id and an event queue
    under ~/.cache/Microsoft/DeveloperTools, uploaded when a network is there) unless
    ORT_DISABLE_TELEMETRY is set before its first session: importing skillbank sets it."""
    pytest.importorskip("onnxruntime")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME"}}
    env.update(HOME=str(home), HF_HUB_OFFLINE="1")
    child = ("import skillbank.embed as e\n"
             "embedder = e.MiniLMEmbedder(engine='onnx')\n"
             "print(len(embedder.embed(['hello world'])[0]))\n")
    out = subprocess.run([sys.executable, "-c", child], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "384"
    assert not (home / ".cache" / "Microsoft").exists(), sorted(p.name for p in (home / ".cache").iterdir())
