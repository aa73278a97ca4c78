"""Inspecting and pruning a bank from the command line without surprises (issue 53).

Each test is the case a new user met, on a small bank made here: the CLI at 80 columns, its
output captured as when piped.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import add_sample_skills
from skillbank.bank import SkillBank
from skillbank.cli import app
from skillbank.models import Injection, Outcome, Step, Trajectory, utcnow
from skillbank.store._gate_records import GateRecord, GateVerdict

runner = CliRunner()
LONG = "finish-within-steps-budget-stop-repeating-check-eligibility"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("SKILLBANK_DIR", raising=False)


def cli(*args: str | Path, ok: bool = True, input: str | None = None):
    result = runner.invoke(app, [str(a) for a in args], input=input)
    if ok:
        assert result.exit_code == 0, (args, result.output)
    return result


@pytest.fixture
def bank_dir(tmp_path: Path) -> Path:
    path = tmp_path / "bank"
    with SkillBank.open(path, embedder="hash") as b:
        add_sample_skills(b)
        b.add_skill(LONG, "When the step budget runs low and a call repeats.", "Stop repeating the call.",
                    kind="guard", tools=["check_eligibility"])
    return path


def files(folder: Path, *, sqlite_shared_memory: bool = False) -> dict[str, bytes]:
    """Each file's bytes; ``sqlite_shared_memory``: leave out the -wal/-shm files SQLite makes
    to coordinate readers with writers (a reader of a WAL database makes them when missing)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not (sqlite_shared_memory and p.name.endswith(("-wal", "-shm")))}


def listed(path: Path) -> dict[str, tuple[str, int]]:
    return {s["name"]: (s["status"], s["version"]) for s in json.loads(cli("skills", "list", "-d", path, "--json").stdout)}


# -- 1. export, then import into a copy ------------------------------------------------------------


def test_an_export_imported_into_a_copy_of_its_bank_changes_nothing(bank_dir: Path, tmp_path: Path):
    exported, copy = tmp_path / "exported", tmp_path / "copy"
    cli("export", exported, "-d", bank_dir)
    shutil.copytree(bank_dir, copy)
    before = listed(copy)
    out = cli("import", exported, "-d", copy).stdout
    assert listed(copy) == before  # every skill still active, at the same version
    assert "Nothing changed" in out and "0 new, 0 changed, 4 unchanged" in out
    assert "Imported" not in out
    search = cli("search", "refund an order after checking eligibility", "-d", copy).stdout
    assert "refund-after-eligibility" in search


def test_an_edited_skill_md_arrives_as_a_candidate_of_its_skill(bank_dir: Path, tmp_path: Path):
    exported, copy = tmp_path / "exported", tmp_path / "copy"
    cli("export", exported, "-d", bank_dir)
    shutil.copytree(bank_dir, copy)
    skill_md = exported / "refund-after-eligibility" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("then refund.", "then refund. Quote the order id."))
    out = cli("import", exported, "-d", copy).stdout
    assert "1 changed, 3 unchanged" in " ".join(out.split())
    assert listed(copy)["refund-after-eligibility"] == ("active", 1)  # still injected meanwhile
    candidates = cli("candidates", "list", "-d", copy).stdout
    assert "refund-after-eligibility" in candidates.split() and "edit v1→v2" in candidates
    cli("candidates", "promote", "refund-after-eligibility", "--yes", "-d", copy)
    shown = json.loads(cli("skills", "show", "refund-after-eligibility", "-d", copy, "--json").stdout)
    assert (shown["version"], shown["status"]) == (2, "active") and "Quote the order id." in shown["body"]


# -- 2. an empty, damaged or foreign bank.db -----------------------------------------------------------


def _zero_bytes(folder: Path) -> None:
    folder.mkdir()
    (folder / "bank.db").write_bytes(b"")


def _truncated(folder: Path) -> None:
    with SkillBank.open(folder, embedder="hash") as b:
        for i in range(50):
            b.add_skill(name=f"s-{i}", description="d" * 200, body="b" * 2000)
    data = (folder / "bank.db").read_bytes()
    for extra in folder.glob("bank.db-*"):
        extra.unlink()
    (folder / "bank.db").write_bytes(data[: len(data) // 3])


def _foreign(folder: Path) -> None:
    folder.mkdir()
    conn = sqlite3.connect(folder / "bank.db")
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("damage, advice", [(_zero_bytes, "skillbank init"), (_truncated, "restore"),
                                            (_foreign, "not a skill bank")])
def test_a_bank_db_that_is_no_bank_is_refused_and_left_as_it_was(tmp_path: Path, damage, advice):
    folder = tmp_path / "bank"
    damage(folder)
    before = files(folder)
    for command in (["skills", "list"], ["skills", "show", "s-1"], ["stats"], ["candidates", "list"],
                    ["runs", "list"], ["verify"]):
        result = cli(*command, "-d", folder, ok=False)
        assert result.exit_code == 1, (command, result.output)
        assert result.stderr.startswith("error:") and advice in result.stderr.lower(), (command, result.stderr)
        assert files(folder) == before, command  # not a byte written, no file made


def test_init_starts_a_bank_over_a_zero_byte_file(tmp_path: Path):
    folder = tmp_path / "bank"
    _zero_bytes(folder)
    cli("init", "-d", folder)
    assert listed(folder) == {}


def test_a_read_only_command_leaves_a_sound_bank_byte_for_byte(bank_dir: Path):
    before = files(bank_dir, sqlite_shared_memory=True)
    for command in (["skills", "list"], ["skills", "history", "decline-missing-tool"], ["stats"],
                    ["candidates", "list"], ["runs", "list"], ["skills", "show", "decline-missing-tool"]):
        cli(*command, "-d", bank_dir)
        assert files(bank_dir, sqlite_shared_memory=True) == before, command


# -- 3. prune and the measured effect ------------------------------------------------------------------


def _used(b: SkillBank, skill_id: str, successes: int, failures: int) -> None:
    for i in range(successes + failures):
        run = Trajectory(task=f"task {i}", status="complete", outcome=Outcome(success=i < successes),
                         injections=[Injection(step=0, skill_id=skill_id, version=1, rank=0, score=1.0)])
        b.trajectories.save(run)


def test_prune_never_retires_on_success_rate_a_skill_the_gate_measured_as_helpful(tmp_path: Path):
    path = tmp_path / "bank"
    with SkillBank.open(path, embedder="hash") as b:
        helpful = b.add_skill("ask-instead-of-guessing", "Ask when a parameter is missing.", "Ask first.",
                              tags=["general"])
        unmeasured = b.add_skill("guess-the-date", "Guess a missing date.", "Use today.")
        _used(b, helpful.id, 69, 31)
        _used(b, unmeasured.id, 2, 8)
        b.gate_records.add(GateRecord(skill_id=helpful.id, version=1, decision=GateVerdict.promoted,
                                      reason="helps", gain=0.29, cost=40))
    out = cli("skills", "prune", "--min-success-rate", "0.7", "--dry-run", "-d", path).stdout
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    kept = next(line for line in lines if line.startswith("ask-instead-of-guessing"))
    assert "kept" in kept and "gate +0.29" in kept
    retired = next(line for line in lines if line.startswith("guess-the-date"))
    assert "low-success" in retired and "never measured" not in retired and " - " in retired
    assert "Would retire 1 skill" in out
    data = json.loads(cli("prune", "--min-success-rate", "0.7", "--json", "-d", path).stdout)
    assert [a["name"] for a in data["actions"]] == ["guess-the-date"]
    assert data["spared"][0]["effect"] == {"kind": "gate", "gain": 0.29, "version": 1, "round": None}
    assert listed(path) == {"ask-instead-of-guessing": ("active", 1), "guess-the-date": ("retired", 2)}


# -- 4. 80 columns and piped ---------------------------------------------------------------------------


def test_history_keeps_each_reason_whole_at_80_columns(bank_dir: Path):
    reason = "reworded after three failed refunds where the order had not been looked up first " * 2
    with SkillBank.open(bank_dir, embedder="hash") as b:
        b.update_skill("refund-after-eligibility", body="Look the order up first.", reason=reason.strip())
    lines = cli("skills", "history", "refund-after-eligibility", "-d", bank_dir).stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert reason.strip() in " ".join(" ".join(lines).split())
    assert len(lines) <= 10  # a line or two per version, not a 5-character column


def test_listings_print_every_name_whole_at_80_columns(bank_dir: Path):
    with SkillBank.open(bank_dir, embedder="hash") as b:
        b.add_skill(LONG.replace("check", "candidate"), "A long-named candidate.", "Wait.", status="candidate")
        b.trajectories.save(Trajectory(task="Refund order 17 " * 12, status="complete", outcome=Outcome(success=False),
                                       steps=[Step(index=0, kind="model", started_at=utcnow(),
                                                   input_tokens=5390, output_tokens=93)]))
    for command in (["skills", "list"], ["candidates", "list"]):
        lines = cli(*command, "-d", bank_dir).stdout.splitlines()
        assert max(map(len, lines)) <= 80, command
        names = [line.split()[0] for line in lines if line.split()]
        assert LONG.replace("check", "candidate") in names, (command, lines)
    runs = cli("runs", "list", "-d", bank_dir).stdout.splitlines()
    assert max(map(len, runs)) <= 80
    header = next(line for line in runs if line.startswith("id "))
    assert "outcome" in header and " in " in header and " out " in header
    assert "input and output tokens" in runs[-1]
    row = next(line for line in runs if line.startswith("tr_"))
    assert "failure" in row and "5390" in row and "93" in row and "5390/93" not in row
    assert ("Refund order 17 " * 12).strip() in " ".join(" ".join(runs).split())


# -- 5. the bank option at every level, and verbs where people look ------------------------------------


def test_the_bank_option_works_before_the_noun_after_it_and_from_the_environment(bank_dir: Path, monkeypatch):
    expected = cli("skills", "list", "-d", bank_dir).stdout
    assert cli("-d", bank_dir, "skills", "list").stdout == expected
    assert cli("skills", "-d", bank_dir, "list").stdout == expected
    assert cli("--dir", bank_dir, "candidates", "list").exit_code == 0
    monkeypatch.setenv("SKILLBANK_DIR", str(bank_dir))
    assert cli("skills", "list").stdout == expected
    monkeypatch.setenv("SKILLBANK_DIR", str(bank_dir.parent / "elsewhere"))
    assert cli("-d", bank_dir, "skills", "list").stdout == expected  # the option beats the environment


def test_common_verbs_answer_at_the_top_and_a_miss_names_the_full_command(bank_dir: Path):
    assert "Nothing to prune" in cli("prune", "--unused-days", "30", "--dry-run", "-d", bank_dir).stdout
    assert "refund-after-eligibility" in cli("history", "refund-after-eligibility", "-d", bank_dir).stdout
    miss = cli("pin", "decline-missing-tool", "-d", bank_dir, ok=False)
    assert miss.exit_code == 2 and "skillbank skills pin" in miss.output


# -- 6. small things -----------------------------------------------------------------------------------


def test_diff_without_versions_shows_the_previous_against_the_current(bank_dir: Path):
    with SkillBank.open(bank_dir, embedder="hash") as b:
        b.update_skill("decline-missing-tool", body="Name the missing tool first.", reason="x")
        b.update_skill("decline-missing-tool", body="Name the missing tool, then stop.", reason="y")
    out = cli("skills", "diff", "decline-missing-tool", "-d", bank_dir).stdout
    assert "v2" in out and "v3" in out and "+Name the missing tool, then stop." in out
    only = cli("skills", "diff", "check-battery-first", "-d", bank_dir, ok=False)
    assert only.exit_code == 1 and "no earlier version" in only.stderr


def test_importing_a_missing_folder_says_so(bank_dir: Path, tmp_path: Path):
    result = cli("import", tmp_path / "nowhere", "-d", bank_dir, ok=False)
    assert result.exit_code == 1 and "no such folder" in result.stderr and "invalid" not in result.stderr


def _commands(group, path=()):
    for name, command in getattr(group, "commands", {}).items():
        yield path + (name,), command
        yield from _commands(command, path + (name,))


def test_each_command_is_listed_in_help_with_a_whole_sentence():
    from typer.main import get_command

    for path, command in _commands(get_command(app)):
        first = (command.help or "").strip().splitlines()[0]
        assert first.rstrip().endswith((".", ")")), (path, first)  # the line a group's help lists
    listing = " ".join(cli("candidates", "--help").stdout.split())
    assert "Show a candidate: why it was proposed, its evidence and its diff." in listing


# -- 12. search shows what would be injected -------------------------------------------------------------


def test_search_shows_what_would_be_injected_and_marks_the_rest(bank_dir: Path):
    with SkillBank.open(bank_dir, embedder="hash") as b:
        b.add_skill("ask-instead-of-guessing", "Ask when a parameter is missing.", "Ask first.", tags=["general"])
    out = cli("search", "refund an order", "-k", "1", "-d", bank_dir).stdout
    assert "in prompt order (pinned, general, then by similarity)" in out
    injected = [line.split()[1] for line in out.splitlines()
                if line.split()[:1] and line.split()[0].isdigit() and line.split()[2] in ("general", "retrieved")]
    assert injected[0] == "ask-instead-of-guessing" and len(injected) == 2  # general, then top 1
    assert "3 other active skills not injected" in out
    every = cli("search", "refund an order", "-k", "1", "--all", "-d", bank_dir).stdout
    assert every.count("not in the top 1") == 3
    data = json.loads(cli("search", "refund an order", "-k", "1", "--all", "--json", "-d", bank_dir).stdout)
    assert [h["why"] for h in data["hits"]] == ["general", "retrieved"] and len(data["not_injected"]) == 3


# -- 13. promoting what the gate never measured ------------------------------------------------------------


def test_promoting_an_unmeasured_candidate_asks_first(bank_dir: Path):
    with SkillBank.open(bank_dir, embedder="hash") as b:
        b.add_skill("new-idea", "An untested idea.", "Try it.", status="candidate")
        measured = b.add_skill("measured-idea", "A tested idea.", "Try it.", status="candidate")
        b.gate_records.add(GateRecord(skill_id=measured.id, version=1, decision=GateVerdict.decided,
                                      reason="measured", gain=0.1, cost=10))
    refused = cli("candidates", "promote", "new-idea", "-d", bank_dir, ok=False)
    assert refused.exit_code == 1 and "never measured" in refused.stderr and "--yes" in refused.stderr
    assert listed(bank_dir)["new-idea"] == ("candidate", 1)
    cli("candidates", "promote", "new-idea", "-d", bank_dir, input="y\n")
    assert listed(bank_dir)["new-idea"][0] == "active"
    quiet = cli("candidates", "promote", "measured-idea", "-d", bank_dir)
    assert "never measured" not in quiet.output


# -- 14. counts agree -------------------------------------------------------------------------------------


def test_skills_list_counts_every_row_stats_counts_and_labels_proposed_edits(bank_dir: Path, tmp_path: Path):
    exported = tmp_path / "exported"
    cli("export", exported, "-d", bank_dir)
    skill_md = exported / "decline-missing-tool" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("name the missing tool.", "name it."))
    cli("import", exported, "-d", bank_dir)
    stats = json.loads(cli("stats", "--json", "-d", bank_dir).stdout)
    total = stats["skills"]["total"]
    out = cli("skills", "list", "-d", bank_dir).stdout
    assert out.startswith("4 skills and 1 proposed edit") and total == 5 and stats["proposed_edits"] == 1
    assert "proposed edits  1" in cli("stats", "-d", bank_dir).stdout
    edit = next(line for line in out.splitlines() if line.startswith("decline-missing-tool-next"))
    assert "decline-missing-tool" in edit.split()[1:] and "candidate" in edit
    rows = json.loads(cli("skills", "list", "--json", "-d", bank_dir).stdout)
    assert len(rows) == total
    assert [r["proposed_edit_of"] for r in rows if r["proposed_edit_of"]] == ["decline-missing-tool"]


def test_promoting_an_edit_the_skill_already_has_keeps_the_reason_on_the_edit(bank_dir: Path, tmp_path: Path):
    # The edit arrives as a proposed edit; meanwhile the skill itself is given the same text.
    from skillbank.evolution import _review as review

    exported = tmp_path / "exported"
    cli("export", exported, "-d", bank_dir)
    skill_md = exported / "refund-after-eligibility" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("then refund.", "then refund. Quote the order id."))
    cli("import", exported, "-d", bank_dir)
    with SkillBank.open(bank_dir, embedder="hash") as bank:
        target = next(s for s in bank.list_skills() if s.name == "refund-after-eligibility")
        draft_id = bank.drafts.draft_for(target.id)
        draft = bank.get_skill(draft_id)
        bank.update_skill(target.id, reason="the same edit, typed in", body=draft.content.body)
        before = bank.get_skill(target.id).version
        review.promote(bank, draft_id, force=True, reason="reviewed: already there", author="web")
        assert bank.get_skill(target.id).version == before  # nothing new on the skill
        last = bank.history(draft_id)[-1]
        assert last.author == "web" and "reviewed: already there" in last.reason
