"""``skillbank copy`` between two SQLite banks: every row, paged, the copy verifiable and searchable,
the source untouched. (SQLite <-> PostgreSQL is in test_store_postgres.py.)"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from skillbank import SkillBank
from skillbank.cli import app
from skillbank.live._exposure import Arm, Exposure
from skillbank.store._compat import READERS_MUST_KNOW
import skillbank.store._transfer as transfer
from skillbank.store._transfer import TABLES
from test_evolution_support import refund
from test_store_postgres import _filled, _snapshot

runner = CliRunner()


def _rows(bank) -> dict[str, int]:
    return {table: bank.store.query_one(f"SELECT count(*) AS n FROM {table}")["n"] for table, _, _ in TABLES}


def test_copy_sqlite_to_sqlite(tmp_path, monkeypatch):
    monkeypatch.setattr(transfer, "_PAGE", 16)  # pages of 16 rows: most tables take several
    src, dst = tmp_path / "bank", tmp_path / "copy"
    with SkillBank.open(src, embedder="hash") as bank:
        _filled(bank)
        with bank.store.transaction():
            for i in range(10, 30):
                tid = bank.trajectories.save(refund(i))
                skill = bank.list_skills()[0]
                bank.exposures.record(tid, [Exposure(skill.id, skill.version, Arm(("shown", "held")[i % 2]), 0.5)])
        original, rows = _snapshot(bank), _rows(bank)
        exposures = [(e.run_id, e.skill_id, e.arm) for r in bank.exposures.runs() for e in [r.exposure]]
    assert rows["steps"] > 3 * 16 and rows["trajectories"] > 16 and rows["exposures"] > 16
    before = (src / "bank.db").read_bytes()

    result = runner.invoke(app, ["copy", str(src), str(dst)])
    assert result.exit_code == 0, result.output
    assert "verify on the copy: OK" in result.output
    with SkillBank.open(dst, embedder="hash") as bank:
        assert _snapshot(bank) == original
        copied = _rows(bank)
        # every row but the source's own lock and index bookkeeping in meta
        assert {t: n for t, n in copied.items() if t != "meta"} == {t: n for t, n in rows.items() if t != "meta"}
        assert [(e.run_id, e.skill_id, e.arm) for r in bank.exposures.runs() for e in [r.exposure]] == exposures
        assert bank.verify().ok  # index built from the copied embedding cache
        assert bank.search("battery climate", k=1)[0].skill.name == "battery-first"
    assert (src / "bank.db").read_bytes() == before  # the source is only read

    again = runner.invoke(app, ["copy", str(src), str(dst)])  # into a bank that is not empty
    assert again.exit_code == 1 and "already holds a bank" in again.stderr


def test_copy_keeps_the_destinations_own_schema_record(tmp_path):
    src, dst = tmp_path / "bank", tmp_path / "copy"
    with SkillBank.open(src, embedder="hash") as bank:
        _filled(bank)
        own = bank.store.get_meta(READERS_MUST_KNOW)
        bank.store.set_meta(READERS_MUST_KNOW, json.dumps(sorted(json.loads(own), reverse=True)))  # other text
    result = runner.invoke(app, ["copy", str(src), str(dst)])
    assert result.exit_code == 0, result.output
    with SkillBank.open(dst, embedder="hash") as bank:
        assert bank.store.get_meta(READERS_MUST_KNOW) == own  # written by its own migrations, not copied
