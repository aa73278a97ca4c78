"""A bank written before lesson kinds became plug-ins reads unchanged.

``tests/data/bank_before_lesson_plugins/bank.db`` was written by the release before (commit
ca2924a) with ``make_bank.py`` beside it: one skill per lesson kind, each edited once. Today's code
must read every version with the same hash, body and lesson identities, and verify the chain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillbank import SkillBank
from skillbank.lessons import KINDS, Lesson

DATA = Path(__file__).resolve().parents[2] / "data" / "bank_before_lesson_plugins"


@pytest.fixture()
def old_bank(tmp_path):
    shutil.copy(DATA / "bank.db", tmp_path / "bank.db")
    with SkillBank.open(tmp_path) as bank:
        yield bank


def test_every_version_reads_with_its_hash_body_and_lessons(old_bank):
    expected = json.loads((DATA / "expected.json").read_text())
    assert len(expected) == len(KINDS)  # one skill per kind
    for name, want in expected.items():
        skill = old_bank.get_skill(want["id"])
        assert skill.version == want["version"]
        assert skill.content_hash == want["hash"] == skill.content.hash(), name
        assert skill.content.body == want["body"], name
        assert [lesson.key for lesson in skill.content.lessons] == want["keys"], name
        assert all(type(lesson) is KINDS[lesson.kind.value].cls for lesson in skill.content.lessons)
        for version in old_bank.history(skill.id):
            assert version.content.hash() == version.content_hash


def test_the_chain_verifies_and_a_new_version_chains_on(old_bank):
    assert not old_bank.verify().problems
    skill = next(s for s in old_bank.list_skills() if s.content.name == "budget")
    edited = old_bank.update_skill(skill.id, reason="tightened", lessons=[Lesson(kind="budget", budget=2)])
    assert edited.version == skill.version + 1
    assert not old_bank.verify().problems


def test_a_read_only_command_lists_an_older_bank_without_upgrading_it(tmp_path):
    from typer.testing import CliRunner

    from skillbank.cli import app

    shutil.copy(DATA / "bank.db", tmp_path / "bank.db")
    before = (tmp_path / "bank.db").read_bytes()
    result = CliRunner().invoke(app, ["skills", "list", "-d", str(tmp_path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "check-first" in result.output and "stated-date" in result.output
    assert (tmp_path / "bank.db").read_bytes() == before  # the exposures table waits for a write
