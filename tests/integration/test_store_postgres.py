"""What only a PostgreSQL bank has: connection strings, pgvector and its fallback, advisory locks
that survive a killed holder, concurrent first opens, and ``skillbank copy`` between backends.

The guarantees shared with SQLite are in test_store_conformance.py.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from typer.testing import CliRunner

from skillbank import SkillBank
from skillbank.queries import SearchFilters
from skillbank.cli import app
from skillbank.errors import BankUnavailableError, LockedError, MissingExtraError, NotABankError
from skillbank.evolution import evolve, evolution_lock
from skillbank.store._index import ExactIndex
from skillbank.store._vectors import PgVectorIndex
from test_evolution_support import refund, window

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("cli_env")


@pytest.fixture(autouse=True)
def _pgvector_at_any_size(monkeypatch):
    """These tests are about the pgvector table: use it however few the skills (the exact path
    below skillbank.store._index.EXACT_MAX is the conformance suite's)."""
    monkeypatch.setenv("SKILLBANK_EXACT_MAX", "0")


def _skills(bank):
    bank.add_skill(name="battery-first", description="check the battery before climate control",
                   body="Call get_battery first.", kind="policy", tools=["get_battery"], tags=["car"])
    bank.add_skill(name="refund-check", description="refund an order after the eligibility check",
                   body="Check eligibility, then refund.", tools=["check_eligibility"], tags=["retail"])


def test_pgvector_search_is_one_filtered_query(pg_url):
    with SkillBank.open(pg_url, embedder="hash") as bank:
        _skills(bank)
        assert bank.search("battery climate", k=1)[0].skill.name == "battery-first"
        index = bank.index.current
        assert isinstance(index, PgVectorIndex)
        index.ensure_fresh()
        vector = bank.embedder.embed_query("refund battery order")
        hits = index.query(vector, 5, SearchFilters(kinds=["policy"]))
        assert [h.skill.name for h in hits] == ["battery-first"]  # filtered in SQL, skill read with it
        hits = index.query(vector, 5, SearchFilters(tags=["retail"], exclude=()))
        assert [h.skill.name for h in hits] == ["refund-check"]
        assert np.isclose(np.linalg.norm(hits[0].vector), 1.0, atol=1e-3)
        indexes = bank.store.query("SELECT indexdef FROM pg_indexes WHERE tablename = ?", (index.table,))
        assert any("hnsw" in r["indexdef"] and "vector_cosine_ops" in r["indexdef"] for r in indexes)


def test_pgvector_search_scans_the_hnsw_index(pg_url):
    with SkillBank.open(pg_url, embedder="hash") as bank:
        with bank.store.transaction():
            for i in range(1500):
                bank.add_skill(name=f"skill-{i}", description=f"skill {i} about topic {i % 13}", body="b",
                               kind="policy" if i % 2 else "procedure", tags=[f"t{i % 5}"])
        bank.search("skill 7 about topic 7", k=5)  # builds the table and its HNSW index
        vector = bank.embedder.embed_query("skill 7 about topic 7")
        for filters in (None, SearchFilters(kinds=["policy"], tags=["t2"], exclude=("x",))):
            sql, params, ef = bank.index.current.search_sql(vector, 5, filters)
            with bank.store.transaction() as conn:  # as the search runs it
                conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                plan = "\n".join(r["QUERY PLAN"] for r in bank.store.query("EXPLAIN " + sql, params))
            assert f"Index Scan using {bank.index.current.table}_hnsw" in plan, plan


def test_without_pgvector_search_is_exact_and_says_so_once(pg_plain_server, caplog):
    url = pg_plain_server.create_database()
    with caplog.at_level(logging.WARNING, logger="skillbank.store"):
        for _ in range(2):
            with SkillBank.open(url, embedder="hash") as bank:
                if not bank.list_skills():
                    _skills(bank)
                assert bank.search("battery climate", k=1)[0].skill.name == "battery-first"
                assert isinstance(bank.index, ExactIndex)
    said = [r.getMessage() for r in caplog.records if "pgvector" in r.getMessage()]
    assert len(said) == 1 and "searching exactly over the cached embeddings" in said[0]


def test_a_database_without_a_bank_is_not_created_by_accident(pg_server):
    url = pg_server.create_database()
    with pytest.raises(NotABankError, match="no skill bank in .*skillbank init"):
        SkillBank.open(url, create=False)
    # the CLI's -d is a path option: the URL survives it (and SKILLBANK_DIR)
    assert runner.invoke(app, ["init", "-d", url]).exit_code == 0
    assert runner.invoke(app, ["skills", "add", "-d", url, "--name", "from-cli", "--description", "d",
                               "--body", "b"]).exit_code == 0
    result = runner.invoke(app, ["skills", "list"], env={"SKILLBANK_DIR": url})
    assert result.exit_code == 0 and "from-cli" in result.output


def test_an_unreachable_server_is_one_clear_error(pg_server):
    url = f"postgresql://postgres:secret@127.0.0.1:{pg_server.port + 1 if pg_server.port < 65535 else 1}/nothing"
    with pytest.raises(BankUnavailableError, match="cannot connect to the PostgreSQL bank") as info:
        SkillBank.open(url)
    assert "secret" not in str(info.value) and "***" in str(info.value)
    result = runner.invoke(app, ["stats", "-d", url])
    assert result.exit_code == 1 and result.stderr.startswith("error: cannot connect")


def test_the_import_guard_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'skillbank\[postgres\]'"):
        SkillBank.open("postgresql://postgres@127.0.0.1:1/x")


def _open_and_write(url, worker):
    with SkillBank.open(url, embedder="hash") as bank:
        bank.add_skill(name=f"first-open-{worker}", description="d", body="b")


def test_concurrent_first_opens_migrate_once(pg_server):
    url = pg_server.create_database()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_open_and_write, args=(url, w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 4
    with SkillBank.open(url, embedder="hash") as bank:
        assert len(bank.list_skills()) == 4
        rows = bank.store.query("SELECT name, count(*) AS n FROM skillbank_migrations GROUP BY name")
        assert rows and all(r["n"] == 1 for r in rows)
        assert bank.verify(check_index=False).ok


HOLD = textwrap.dedent("""
    import sys, time
    from skillbank import SkillBank
    from skillbank.evolution import evolution_lock
    bank = SkillBank.open(sys.argv[1], embedder="hash")
    with evolution_lock(bank, timeout=5):
        print("held", flush=True)
        time.sleep(120)
""")


def test_the_round_lock_of_a_killed_process_is_released_by_the_server(pg_url):
    SkillBank.open(pg_url, embedder="hash").close()
    proc = subprocess.Popen([sys.executable, "-c", HOLD, pg_url], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with SkillBank.open(pg_url, embedder="hash") as bank:
            bank.trajectories.save(refund(0))
            with pytest.raises(LockedError, match=rf"another evolution round is running .*pid {proc.pid}"):
                evolve(bank, lock_timeout=0.3)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            # The server let the dead process's lock go: taking it does not time out (LockedError).
            with evolution_lock(bank, timeout=10):
                pass
            assert evolve(bank, lock_timeout=5).trajectories == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _filled(bank):
    _skills(bank)
    skill = bank.get_skill("refund-check")
    for i in range(3):
        bank.trajectories.save(refund(i, skill=skill))
    bank.trajectories.save(window(0))
    evolve(bank, promote_policy="all")
    bank.update_skill(skill.id, body="Check eligibility first, then refund.", reason="edit")
    bank.rollback(skill.id, 1)
    assert bank.search("refund order", k=2)


def _snapshot(bank):
    skills = {s.name: [(v.version, v.content_hash, v.author, v.reason) for v in bank.history(s.id)]
              for s in bank.list_skills()}
    runs = {t.id: (t.task, t.outcome.success if t.outcome else None, len(t.steps), len(t.injections),
                   len(t.limit_events)) for t in bank.trajectories.list(limit=None, with_steps=True)}
    events = [(e["seq"], e["hash"]) for e in bank.skills.events_since(0)]
    return skills, runs, events, bank.snapshot_id(), bank.rounds.current()


def test_copy_sqlite_to_postgres_and_back(tmp_path, pg_server):
    src = tmp_path / "bank"
    with SkillBank.open(src, embedder="hash") as bank:
        _filled(bank)
        original = _snapshot(bank)
    url = pg_server.create_database()
    result = runner.invoke(app, ["copy", str(src), url])
    assert result.exit_code == 0, result.output
    assert "verify on the copy: OK" in result.output
    with SkillBank.open(url, embedder="hash") as bank:
        assert _snapshot(bank) == original
        assert bank.verify().ok  # index built on first use, from the copied embedding cache
        assert bank.search("battery climate", k=1)[0].skill.name == "battery-first"
    back = tmp_path / "back"
    result = runner.invoke(app, ["copy", "-d", url, str(back)])
    assert result.exit_code == 0, result.output
    with SkillBank.open(back, embedder="hash") as bank:
        assert _snapshot(bank) == original
        assert bank.verify().ok
    again = runner.invoke(app, ["copy", str(src), url])  # into a bank that is not empty
    assert again.exit_code == 1 and "already holds a bank" in again.stderr
