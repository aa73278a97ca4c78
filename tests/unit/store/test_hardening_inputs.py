"""Bad input gives a clear error and loses nothing (hardening, item 3)."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

import skillbank.store._location as bank_module
from skillbank import SkillBank
from skillbank.adapters.testing import ScriptedChatModel
from skillbank.cli import app
from skillbank.errors import NotABankError
from skillbank.evolution import LLMDistiller, evolve
from skillbank.store._sqlite import DB_FILENAME
from test_hardening_support import family_runs, make_agent

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("SKILLBANK_DIR", raising=False)


def _cli(*args):
    return runner.invoke(app, [str(a) for a in args])


def _one_error_line(result):
    assert result.exit_code == 1, (result.output, result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def _seeded(path):
    with SkillBank.open(path, embedder="hash") as bank:
        bank.add_skill(name="keep-me", description="must survive", body="body")


OPEN_IN_CHILD = """
import sys
from skillbank import SkillBank
from skillbank.errors import NotABankError
try:
    SkillBank.open(sys.argv[1], embedder="hash")
except NotABankError as exc:
    print(exc)
else:
    print("opened")
"""


def _without_root_file_powers() -> None:
    """In the child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the
    bounding set, so root's next program has neither and the kernel applies folder permissions
    to it (access(2) too: it checks against the permitted set, which now lacks them)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_capbset_drop, cap_dac_override, cap_dac_read_search = 24, 1, 2
    for cap in (cap_dac_override, cap_dac_read_search):
        if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def test_read_only_bank_folder_real_permissions(tmp_path):
    """The kernel's permissions, not a patched ``os.access``. Root ignores folder permissions
    (and CI runs as root): as root, the bank is opened by a child process that runs without the
    capabilities that let root write anywhere."""
    import subprocess
    import sys

    path = tmp_path / "bank"
    _seeded(path)
    before = (path / DB_FILENAME).read_bytes()
    os.chmod(path, 0o500)
    try:
        if os.geteuid() == 0:
            child = subprocess.run([sys.executable, "-c", OPEN_IN_CHILD, str(path)],
                                   preexec_fn=_without_root_file_powers, capture_output=True,
                                   text=True, timeout=120,
                                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
            assert child.returncode == 0, child.stderr[-3000:]
            message = child.stdout
        else:
            with pytest.raises(NotABankError) as info:
                SkillBank.open(path)
            message = str(info.value)
    finally:
        os.chmod(path, 0o700)
    assert "not writable" in message and "-d / SKILLBANK_DIR" in message, message
    assert (path / DB_FILENAME).read_bytes() == before
    with SkillBank.open(path, embedder="hash") as bank:
        assert bank.get_skill("keep-me").version == 1


def test_read_only_bank_folder_simulated(tmp_path, monkeypatch):
    """SIMULATED: os.access(folder, W_OK) is patched to say False (the tests may run as root,
    which a chmod 0o500 does not stop). Checks the refusal path, not the kernel's permissions."""
    path = tmp_path / "bank"
    _seeded(path)
    before = (path / DB_FILENAME).read_bytes()
    real = os.access
    monkeypatch.setattr(bank_module.os, "access",
                        lambda p, mode, *a, **k: False if mode == os.W_OK and str(p) == str(path)
                        else real(p, mode, *a, **k))
    with pytest.raises(NotABankError, match=r"not writable.*-d / SKILLBANK_DIR"):
        SkillBank.open(path)
    line = _one_error_line(_cli("skills", "list", "-d", path))
    assert "not writable" in line
    assert (path / DB_FILENAME).read_bytes() == before  # nothing touched
    monkeypatch.setattr(bank_module.os, "access", real)
    with SkillBank.open(path, embedder="hash") as bank:
        assert bank.get_skill("keep-me").version == 1


def test_bank_folder_that_is_a_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("my notes")
    with pytest.raises(NotABankError, match="is a file"):
        SkillBank.open(path)
    assert "is a file" in _one_error_line(_cli("skills", "list", "-d", path))
    assert path.read_text() == "my notes"


def _corrupt_pages(db, offset=4096 * 2, size=4096 * 3):
    with open(db, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"\xde\xad\xbe\xef" * (size // 4))


def test_corrupt_database_in_the_middle_of_a_run(tmp_path):
    path = tmp_path / "bank"
    with SkillBank.open(path, embedder="hash") as bank:
        for i in range(40):
            bank.add_skill(name=f"skill-{i}", description=f"look up orders {i}", body="x " * 200)
        agent, _ = make_agent(bank)
        agent.invoke({"messages": [("user", "look up order 1")]})
        bank.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _corrupt_pages(path / DB_FILENAME)  # the disk goes bad while the bank is open
        try:
            agent.invoke({"messages": [("user", "look up order 2")]})
        except Exception as exc:  # noqa: BLE001 - whatever the run did, the CLI must stay clear
            assert "database" in str(exc).lower() or "malformed" in str(exc).lower()
    for args in (("skills", "list"), ("runs", "list"), ("stats",), ("verify",), ("search", "orders")):
        line = _one_error_line(_cli(*args, "-d", path))
        assert "bank" in line.lower() or "database" in line.lower(), (args, line)


def test_overwritten_header_gives_one_line(tmp_path):
    path = tmp_path / "bank"
    _seeded(path)
    with open(path / DB_FILENAME, "r+b") as handle:
        handle.write(b"garbage garbage!")
    line = _one_error_line(_cli("skills", "list", "-d", path))
    assert "not a SQLite database" in line


@pytest.mark.parametrize("reply", ["", "I'm sorry, but I can't help with that request."])
def test_llm_distiller_with_empty_or_refusing_model_skips_with_reason(bank, reply):
    for f in range(3):
        for t in family_runs(f):
            bank.trajectories.save(t)
    model = ScriptedChatModel([reply])
    report = evolve(bank, distiller=LLMDistiller(model))
    assert report.trajectories == 9  # the round completed and consumed its evidence
    assert report.changes == []
    assert report.usage.failures and all("skipped after" in f for f in report.usage.failures)
    assert "skipped after" in str(report)
    assert bank.list_skills(status="candidate") == [] and bank.list_skills() == []
    assert bank.verify().ok
