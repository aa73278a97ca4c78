"""One skill's live effect where people look (skillbank skills show, skills list) and the
acknowledgement of a rollback by the monitor."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from test_evolution_support import refund
from typer.testing import CliRunner

from skillbank.bank import SkillBank
from skillbank.cli import app
from skillbank.errors import SkillBankError
from skillbank.live._canary import start_canary
from skillbank.live._decisions import NothingToAcknowledge, acknowledge_rollback, pending_rollbacks
from skillbank.live._exposure import Arm, Exposure
from skillbank.live._monitor import Action
from skillbank.live._view import live_view
from skillbank.models import SkillStatus

runner = CliRunner()
LONG = "refund-damaged-orders-after-checking-the-refund-policy-first"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("SKILLBANK_DIR", raising=False)


def cli(*args: str | Path, ok: bool = True):
    result = runner.invoke(app, [str(a) for a in args])
    if ok:
        assert result.exit_code == 0, (args, result.output)
    return result


def _runs(bank, skill, n, p_shown, p_held, seed=0):
    rng = random.Random(seed)
    for i in range(n):
        arm = Arm.shown if rng.random() < 0.5 else Arm.held
        success = rng.random() < (p_shown if arm == Arm.shown else p_held)
        tid = bank.trajectories.save(refund(i, success=success, task_type="refund" if i % 2 else "return"))
        bank.exposures.record(tid, [Exposure(skill.id, skill.version, arm, 0.5)])


def _skill(bank, name):
    return bank.add_skill(name=name, description=f"Refund an order that arrived damaged ({name})", body="Do it.")


@pytest.fixture
def rolled_back(tmp_path: Path) -> tuple[Path, str]:
    """A bank whose canary the monitor rejected (harmful), with a helpful canary beside it."""
    path = tmp_path / "bank"
    with SkillBank.open(path, embedder="hash") as bank:
        hurt = start_canary(bank.skills, _skill(bank, LONG).id)
        _runs(bank, hurt, 300, 0.3, 0.9, seed=1)
        good = start_canary(bank.skills, _skill(bank, "refund-good").id)
        _runs(bank, good, 40, 0.9, 0.3, seed=2)
        bank.monitor(apply=True)
        assert bank.get_skill(hurt.id).status == SkillStatus.retired
    return path, hurt.id


def test_the_live_view_is_the_monitor_s_numbers_for_any_status(bank):
    canary = start_canary(bank.skills, _skill(bank, "refund-canary").id)
    _runs(bank, canary, 200, 0.9, 0.3)
    (entry,) = bank.monitor().skills
    view = live_view(bank, canary.id)
    assert view.as_dict()["effect"] == entry.as_dict(0.05)["effect"]
    assert view.as_dict()["by_kind"] == entry.as_dict(0.05)["by_kind"] and set(view.tally.by_kind) == {"refund",
                                                                                                      "return"}
    assert view.decision is not None and view.decision.action == Action.promote and view.p_shown == 0.5
    assert view.last_written is None and view.waiting is None and not view.stale
    bank.monitor(apply=True)
    after = live_view(bank, canary.id)
    assert after.last_written is not None and after.last_written.action == Action.promote
    assert after.tally.overall.shown.labelled == entry.tally.overall.shown.labelled  # same content: same evidence
    assert "runs shown the skill" in after.last_written.words()


def test_a_rollback_is_marked_until_acknowledged_on_the_change_log(rolled_back):
    path, hurt_id = rolled_back
    with SkillBank.open(path, embedder="hash") as bank:
        waiting = pending_rollbacks(bank)
        assert list(waiting) == [hurt_id] and waiting[hurt_id].action == Action.reject
        versions, events = len(bank.history(hurt_id)), bank.skills.last_event_seq()
        done = acknowledge_rollback(bank, hurt_id, author="ann", reason="saw it hurt refunds")
        assert done.version == versions  # the monitor's retiring version
        assert len(bank.history(hurt_id)) == versions  # no version written: the skill is as the monitor left it
        assert bank.skills.last_event_seq() == events + 1  # one event on the hash chain
        assert pending_rollbacks(bank) == {}
        assert bank.verify(check_index=False).ok
        with pytest.raises(NothingToAcknowledge, match="no rollback by the monitor"):
            acknowledge_rollback(bank, hurt_id)
        # Tried again by a person and retired again by the monitor: a new rollback to acknowledge.
        bank.activate(hurt_id, reason="try again")
        start_canary(bank.skills, hurt_id)
        bank.monitor(apply=True)
        assert list(pending_rollbacks(bank)) == [hurt_id]
        # A person's retirement is theirs: nothing to acknowledge.
        other = _skill(bank, "refund-other")
        bank.retire(other.id, reason="not needed")
        with pytest.raises(SkillBankError, match="refund-other has no rollback"):
            acknowledge_rollback(bank, other.id)


def test_skills_list_marks_the_rollback_until_skills_ack(rolled_back):
    path, hurt_id = rolled_back
    lines = cli("skills", "list", "-d", path).stdout.splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in "\n".join(lines)
    assert lines.count(LONG) == 2  # its row, and the rollbacks below, each with the name in full
    assert any("retired!" in line for line in lines)
    assert "skillbank skills ack NAME" in " ".join(lines)
    data = {s["name"]: s for s in json.loads(cli("skills", "list", "-d", path, "--json").stdout)}
    assert data[LONG]["rolled_back_by_monitor"]["action"] == "reject"
    assert data["refund-good"]["rolled_back_by_monitor"] is None

    said = cli("skills", "ack", LONG, "--reason", "read it", "-d", path).stdout
    assert "Acknowledged" in said and "reject" in said
    after = cli("skills", "list", "-d", path).stdout
    assert after.count(LONG) == 1 and "retired!" not in after
    again = cli("skills", "ack", LONG, "-d", path, ok=False)
    assert again.exit_code == 1 and "no rollback by the monitor" in again.output


def test_skills_show_prints_the_live_effect_the_monitor_prints(rolled_back):
    path, hurt_id = rolled_back
    out = cli("skills", "show", LONG, "-d", path).stdout
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in out
    with SkillBank.open(path, embedder="hash", read_only=True) as bank:
        view = live_view(bank, hurt_id)
    e = view.as_dict()["effect"]
    overall = next(line for line in lines if line.strip().startswith("overall"))
    for arm in ("shown", "held"):
        assert f"{e[arm]['successes']}/{e[arm]['labelled']}" in overall
    d = e["difference"]
    assert f"{d['estimate']:+.2f}" in overall and f"[{d['low']:+.2f}, {d['high']:+.2f}]" in overall
    assert any(line.strip().startswith("refund") for line in lines)  # a kind of request
    assert "last decision" in out and "reject at v" in out and "skillbank skills ack" in out
    data = json.loads(cli("skills", "show", LONG, "--json", "-d", path).stdout)
    assert data["live"]["effect"] == e and data["live"]["waiting_acknowledgement"]["action"] == "reject"
    # The same numbers as skillbank monitor prints (the good canary; the retired one it no longer reads).
    monitor = json.loads(cli("monitor", "--json", "-d", path).stdout)
    good = next(s for s in monitor["skills"] if s["name"] == "refund-good")
    shown_good = json.loads(cli("skills", "show", "refund-good", "--json", "-d", path).stdout)["live"]
    assert shown_good["effect"] == good["effect"] and shown_good["by_kind"] == good["by_kind"]


def test_skills_show_of_a_skill_never_randomized_says_how_to_start(tmp_path: Path):
    path = tmp_path / "bank"
    with SkillBank.open(path, embedder="hash") as bank:
        _skill(bank, "refund-plain")
    out = cli("skills", "show", "refund-plain", "-d", path).stdout
    assert "none: it is not randomized" in out and "last decision  none written" in out


def test_the_monitor_table_fits_80_columns_with_names_in_full(rolled_back):
    path, _ = rolled_back
    with SkillBank.open(path, embedder="hash") as bank:
        start_canary(bank.skills, _skill(bank, "refund-after-checking-the-refund-policy-first-and-again").id)
    out = cli("monitor", "-d", path).stdout
    assert max(map(len, out.splitlines())) <= 80 and "…" not in out
    assert "refund-after-checking-the-refund-policy-first-and-again" in out.splitlines() and "refund-good" in out


def test_reading_the_live_effect_writes_nothing(rolled_back):
    path, _ = rolled_back

    def files() -> dict[str, bytes]:
        return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
                if p.is_file() and not p.name.endswith(("-wal", "-shm"))}

    before = files()
    for command in (["skills", "list"], ["skills", "list", "--json"], ["skills", "show", LONG],
                    ["skills", "show", LONG, "--json"], ["skills", "show", "refund-good"]):
        cli(*command, "-d", path)
        assert files() == before, command
    cli("skills", "ack", LONG, "-d", path)
    assert files() != before  # the acknowledgement is the one that writes


def test_the_canary_command_refuses_a_quarantined_pinned_or_proposed_skill(tmp_path: Path):
    path = tmp_path / "bank"
    with SkillBank.open(path, embedder="hash") as bank:
        bank.pin(_skill(bank, "refund-pinned").id)
        bank.add_skill("refund-flagged", "Refund an order", "Do it.", status="quarantined")
    assert "is pinned" in cli("canary", "refund-pinned", "-d", path, ok=False).output
    assert "is quarantined" in cli("canary", "refund-flagged", "-d", path, ok=False).output
    with SkillBank.open(path, embedder="hash") as bank:
        assert bank.get_skill("refund-flagged").status == SkillStatus.quarantined


def test_skillbank_copy_carries_the_acknowledgement(rolled_back, tmp_path: Path):
    path, hurt_id = rolled_back
    cli("skills", "ack", LONG, "-d", path)
    cli("copy", path, tmp_path / "copy")
    with SkillBank.open(tmp_path / "copy", embedder="hash") as copy:
        assert copy.get_skill(hurt_id).status == SkillStatus.retired
        assert pending_rollbacks(copy) == {} and copy.verify(check_index=False).ok
    assert "retired!" not in cli("skills", "list", "-d", tmp_path / "copy").stdout
