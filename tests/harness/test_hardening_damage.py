"""Damage that must be named and repaired, and held-out runs that must not leak (issue 15).

- a damaged index (``index/chroma.sqlite3`` truncated or overwritten): ``verify`` says so in
  one line, ``search`` rebuilds it on the spot and says it did, ``reindex`` always works;
- a 0-byte ``bank.db`` beside the files a used bank leaves: one clear error, nothing written;
- evolution skips runs labelled with a held-out split unless asked; a rerun of the demo on the
  same bank refuses with a clear message.
"""

from __future__ import annotations

from skillbank._provenance import evidence as evidence_ids

import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank import SkillBank
from skillbank.cli import app
from skillbank.errors import AlreadyMeasuredError, CorruptBankError
from skillbank.evolution import evolve
from skillbank._splits import HELD_OUT_SPLITS
from test_evolution_support import refund, window

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("cli_env")


@pytest.fixture(autouse=True)
def _chroma_index(monkeypatch):
    """The damage is done to Chroma's files: use the Chroma directory at any size."""
    monkeypatch.setenv("SKILLBANK_EXACT_MAX", "0")


def _used_bank(path: Path) -> None:
    with SkillBank.open(path, embedder="hash") as bank:
        for i, topic in enumerate(["battery before climate", "refund after eligibility", "free calendar slot"]):
            bank.add_skill(name=f"skill-{i}", description=f"check the {topic}", body=f"Do the {topic} check.")
        assert bank.search("battery climate", k=1)  # builds the index files
        assert (path / "index" / "chroma.sqlite3").exists()


def _truncate(file: Path) -> None:
    with open(file, "r+b") as handle:
        handle.truncate(4096)


def _overwrite(file: Path) -> None:
    file.write_bytes(os.urandom(20_000))


DAMAGES = {"truncated": _truncate, "overwritten": _overwrite}


@pytest.fixture(params=DAMAGES)
def damaged(tmp_path, request):
    """A used bank whose index file was truncated or overwritten."""
    path = tmp_path / "bank"
    _used_bank(path)
    DAMAGES[request.param](path / "index" / "chroma.sqlite3")
    return path


def test_verify_names_a_damaged_index_in_one_line(damaged):
    path = damaged
    result = runner.invoke(app, ["verify", "-d", str(path)])
    assert result.exit_code == 1
    problems = [line for line in result.output.splitlines() if line.strip().startswith("- ")]
    assert len(problems) == 1, result.output
    assert "search index" in problems[0] and "damaged" in problems[0] and "skillbank reindex" in problems[0]
    assert "Traceback" not in result.output


def test_search_rebuilds_a_damaged_index_and_says_so(damaged, caplog):
    path = damaged
    with caplog.at_level(logging.WARNING, logger="skillbank"):
        with SkillBank.open(path, embedder="hash") as bank:
            hits = bank.search("battery climate", k=1)
            assert hits[0].skill.name == "skill-0"
            assert bank.verify().ok  # rebuilt from the database
    said = [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()]
    assert len(said) == 1 and "rebuilding it from the bank" in said[0]


def test_reindex_always_repairs(damaged):
    path = damaged
    result = runner.invoke(app, ["reindex", "-d", str(path)])
    assert result.exit_code == 0, result.output
    assert "3 skills indexed" in result.output
    assert runner.invoke(app, ["verify", "-d", str(path)]).exit_code == 0


def test_a_zero_byte_database_beside_a_used_bank_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "bank"
    _used_bank(path)
    with SkillBank.open(path, embedder="hash") as bank:
        bank.trajectories.save(refund(0))
        evolve(bank)  # leaves evolve.lock
    (path / "bank.db").write_bytes(b"")
    before = sorted((p.relative_to(path), p.stat().st_size) for p in path.rglob("*") if p.is_file())
    with pytest.raises(CorruptBankError, match=r"bank\.db is empty \(0 bytes\).*once held data"):
        SkillBank.open(path, embedder="hash")
    for command in (["skills", "list"], ["verify"], ["stats"]):
        result = runner.invoke(app, [*command, "-d", str(path)])
        assert result.exit_code == 1, (command, result.output)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and "0 bytes" in lines[0], lines
    after = sorted((p.relative_to(path), p.stat().st_size) for p in path.rglob("*") if p.is_file())
    assert after == before  # nothing written


def test_a_zero_byte_database_alone_is_still_a_new_bank(tmp_path):
    path = tmp_path / "bank"
    path.mkdir()
    (path / "bank.db").write_bytes(b"")
    with SkillBank.open(path, embedder="hash") as bank:
        assert bank.list_skills() == []


# -- held-out runs ------------------------------------------------------------------------------------


def _split(traj, split):
    traj.labels = {**traj.labels, "split": split}
    return traj


def test_evolve_skips_held_out_runs_unless_asked(tmp_path):
    path = tmp_path / "bank"
    with SkillBank.open(path, embedder="hash") as bank:
        train = [bank.trajectories.save(_split(refund(i), "train")) for i in range(3)]
        held = [bank.trajectories.save(_split(window(i), "heldout")) for i in range(2)]
        report = evolve(bank)
        assert report.trajectories == 3
        evidence = {tid for skill in bank.list_skills(status=None) for v in bank.history(skill.id)
                    for tid in evidence_ids(v.provenance)}
        assert evidence and evidence <= set(train) and not evidence & set(held)
        assert bank.trajectories.count(unconsumed=True, splits=HELD_OUT_SPLITS) == 2  # left for measurement

    result = runner.invoke(app, ["evolve", "-d", str(path)])
    assert result.exit_code == 0, result.output
    assert "Skipped 2 run(s) labelled with a held-out split" in result.output
    assert "--include-heldout" in result.output
    result = runner.invoke(app, ["evolve", "-d", str(path), "--include-heldout", "--json"])
    assert result.exit_code == 0, result.output
    with SkillBank.open(path, embedder="hash") as bank:
        assert bank.trajectories.count(unconsumed=True, splits=HELD_OUT_SPLITS) == 0


def test_a_second_demo_on_the_same_bank_refuses_clearly(tmp_path):
    from skillbank_harness.demo import QUICK, run_demo

    path = tmp_path / "demo-bank"
    with SkillBank.open(path, embedder="hash") as bank:  # what a first demo left behind
        for i in range(3):
            t = refund(i)
            t.labels = {"run": "demo-0-final", "split": "heldout" if i else "train"}
            bank.trajectories.save(t)
        before = bank.stats()
    with pytest.raises(AlreadyMeasuredError, match=r"already holds an earlier demo's runs \(demo-0-final: 3"):
        run_demo(path, config=QUICK, embedder="hash", progress=False)
    with SkillBank.open(path, embedder="hash") as bank:
        assert bank.stats() == before  # nothing measured, nothing evolved
    result = runner.invoke(app, ["demo", "--quick", "-d", str(path), "--no-progress"])
    assert result.exit_code == 1
    assert "error:" in result.stderr and "new folder" in result.stderr
