"""The ``skillbank`` command line, run through typer's CliRunner against real banks on disk."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from skillbank.bank import SkillBank
from skillbank.cli import app, main
from skillbank.models import Injection, LimitEvent, LimitType, Outcome, Step, Trajectory

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")  # wide tables: ids and names are not shortened
    monkeypatch.delenv("SKILLBANK_DIR", raising=False)


def run(*args: str | Path, ok: bool = True, input: str | None = None):
    result = runner.invoke(app, [str(a) for a in args], input=input)
    if ok:
        assert result.exit_code == 0, (result.output, result.exception)
    return result


def add(bank: Path, name: str, description: str, body: str, *extra: str) -> str:
    run("skills", "add", "-d", bank, "--name", name, "--description", description, "--body", body, *extra)
    return skills_json(bank)[name]["id"]


def skills_json(bank: Path, *extra: str) -> dict[str, dict]:
    result = run("skills", "list", "-d", bank, "--json", *extra)
    return {s["name"]: s for s in json.loads(result.stdout)}


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    path = tmp_path / "bank"
    run("init", "-d", path)
    return path


@pytest.fixture
def seeded(bank: Path) -> Path:
    add(bank, "decline-missing-tool", "Use when a needed tool is missing: say so and stop.",
        "Tell the user which tool is **missing** and stop.", "--kind", "guard", "--tool", "search",
        "--tag", "limits", "--tag", "tools")
    add(bank, "summarise-long-pages", "Use when a web page is too long to read whole.",
        "Read the headings first, then only the relevant sections.", "--tool", "fetch", "--tag", "web")
    add(bank, "avoid-guessing-fields", "Use before passing a field name to a tool.",
        "Check the tool schema; never invent field names.", "--kind", "pitfall")
    return bank


# -- structure -------------------------------------------------------------------------------------


def _walk(command, path=()):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


def test_every_command_and_group_has_help():
    root = typer.main.get_command(app)
    seen = []
    for path, command in _walk(root):
        seen.append(" ".join(path))
        assert (command.help or "").strip(), f"{' '.join(path) or 'skillbank'} has no help"
        assert command.help.strip().splitlines()[0].strip()
        result = run(*path, "--help")
        assert "Usage" in result.output
        if path and not getattr(command, "commands", None) and path[0] != "model":
            # every leaf command takes the shared bank options (`model` commands touch no bank)
            assert "--dir" in result.output and "--embedder" in result.output, path
    expected = {
        "init", "search", "stats", "reindex", "verify", "export", "import",
        "skills", "skills list", "skills show", "skills add", "skills edit", "skills history",
        "skills diff", "skills rollback", "skills retire", "skills activate", "skills pin",
        "skills unpin", "skills prune", "runs", "runs list", "runs show", "runs label",
        "model", "model fetch", "model path", "model list",
    }
    assert expected <= set(seen)


def test_importing_the_cli_does_not_load_heavy_modules():
    code = ("import sys, skillbank.cli; heavy = [m for m in ('torch', 'chromadb', 'sentence_transformers')"
            " if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- skills ----------------------------------------------------------------------------------------


def test_add_list_show_edit_history_diff_rollback(seeded: Path):
    listing = run("skills", "list", "-d", seeded).stdout
    for name in ("decline-missing-tool", "summarise-long-pages", "avoid-guessing-fields"):
        assert name in listing
    assert "guard" in listing

    by_name = skills_json(seeded)
    skill = by_name["decline-missing-tool"]
    assert skill["kind"] == "guard" and skill["tools"] == ["search"] and skill["tags"] == ["limits", "tools"]
    assert skill["version"] == 1 and skill["status"] == "active"
    datetime.fromisoformat(skill["created_at"])  # ISO strings

    assert set(skills_json(seeded, "--kind", "pitfall")) == {"avoid-guessing-fields"}
    assert set(skills_json(seeded, "--tag", "web")) == {"summarise-long-pages"}

    shown = run("skills", "show", "-d", seeded, skill["id"]).stdout
    assert "decline-missing-tool" in shown and "Use when a needed tool is missing" in shown
    assert "missing" in shown and "**missing**" not in shown  # body rendered as markdown
    data = json.loads(run("skills", "show", "-d", seeded, "decline-missing-tool", "--json").stdout)
    assert data["body"] == "Tell the user which tool is **missing** and stop."

    body_file = seeded.parent / "body.md"
    body_file.write_text("Name the missing tool, offer an alternative, then stop.\n")
    out = run("skills", "edit", "-d", seeded, "decline-missing-tool", "--body-file", body_file,
              "--reason", "offer an alternative").stdout
    assert "v2" in out
    run("skills", "edit", "-d", seeded, "decline-missing-tool", "--description",
        "Use when a tool the task needs is not available.")
    assert skills_json(seeded)["decline-missing-tool"]["version"] == 3

    history = run("skills", "history", "-d", seeded, "decline-missing-tool").stdout
    assert "offer an alternative" in history and "created" in history
    for v in ("v1", "v2", "v3"):
        assert v in history
    rows = json.loads(run("skills", "history", "-d", seeded, "decline-missing-tool", "--json").stdout)
    assert [r["version"] for r in rows] == [1, 2, 3]
    assert rows[1]["reason"] == "offer an alternative"

    diff = run("skills", "diff", "-d", seeded, "decline-missing-tool", "1", "2").stdout
    assert "-Tell the user which tool is **missing** and stop." in diff
    assert "+Name the missing tool, offer an alternative, then stop." in diff
    assert "@@" in diff

    out = run("skills", "rollback", "-d", seeded, "decline-missing-tool", "1", "--reason", "too wordy").stdout
    assert "v4" in out
    data = json.loads(run("skills", "show", "-d", seeded, "decline-missing-tool", "--json").stdout)
    assert data["version"] == 4
    assert data["body"] == "Tell the user which tool is **missing** and stop."
    assert data["description"] == "Use when a needed tool is missing: say so and stop."
    assert json.loads(run("skills", "history", "-d", seeded, "decline-missing-tool", "--json").stdout)[-1][
        "reason"] == "too wordy"


def test_skills_list_fits_80_columns_and_wide_shows_everything(seeded: Path, monkeypatch: pytest.MonkeyPatch):
    long_names = [f"finish-within-steps-budget-stop-repeating-{tool}" for tool in
                  ("check-eligibility", "get-vehicle-status", "list-events")]
    for name in long_names:
        add(seeded, name, "Use when the step budget runs low.", "Stop repeating the call.",
            "--kind", "guard", "--tag", "budget", "--tool", "check_refund_eligibility")
    run("skills", "pin", "-d", seeded, long_names[0])
    by_name = skills_json(seeded)
    monkeypatch.setenv("COLUMNS", "80")

    lines = run("skills", "list", "-d", seeded).stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    for name in by_name:  # every name in full, alone on its line when the row would not fit
        assert name in lines, name
    assert "…" not in "\n".join(lines)
    rows = [line for line in lines if line.split() and line.split()[-1] in ("-", "0%", "100%")]
    assert len(rows) == len(by_name)
    pinned_at = lines.index(long_names[0])
    assert "yes" in lines[pinned_at + 1] and "guard" in lines[pinned_at + 1]  # its row, below its name
    assert not any(s["id"] in line for s in by_name.values() for line in lines)  # ids only with --wide
    assert "--wide" in lines[-1]

    wide = run("skills", "list", "-d", seeded, "--wide").stdout
    for name, skill in by_name.items():
        line = next(line for line in wide.splitlines() if skill["id"] in line)
        assert line.startswith(f"{name} ") and "…" not in line  # full name on the id's line
        assert ", ".join(skill["tags"]) in wide
    assert "check_refund_eligibility" in wide

    # --json is not a table: same records whatever the width or --wide
    assert json.loads(run("skills", "list", "-d", seeded, "--json").stdout) == list(by_name.values())
    assert json.loads(run("skills", "list", "-d", seeded, "--json", "--wide").stdout) == list(by_name.values())


def test_add_reads_body_from_stdin_and_rejects_bad_input(bank: Path):
    run("skills", "add", "-d", bank, "--name", "from-stdin", "--description", "Stdin body.",
        "--body-file", "-", input="Body from stdin.\n")
    assert json.loads(run("skills", "show", "-d", bank, "from-stdin", "--json").stdout)["body"] == "Body from stdin."

    bad = run("skills", "add", "-d", bank, "--name", "Bad_Name", "--description", "x", "--body", "y", ok=False)
    assert_one_line_error(bad, "invalid skill name")
    missing_body = run("skills", "add", "-d", bank, "--name", "no-body", "--description", "x", ok=False)
    assert_one_line_error(missing_body, "--body")
    missing_file = run("skills", "add", "-d", bank, "--name", "no-file", "--description", "x",
                       "--body-file", bank.parent / "nope.md", ok=False)
    assert_one_line_error(missing_file, "nope.md")
    dup = run("skills", "add", "-d", bank, "--name", "from-stdin", "--description", "x", "--body", "y", ok=False)
    assert_one_line_error(dup, "already exists")
    nothing = run("skills", "edit", "-d", bank, "from-stdin", ok=False)
    assert_one_line_error(nothing, "nothing to change")
    assert set(skills_json(bank)) == {"from-stdin"}


def test_retire_activate_pin_unpin(seeded: Path):
    run("skills", "retire", "-d", seeded, "summarise-long-pages", "--reason", "never helped")
    skill = skills_json(seeded)["summarise-long-pages"]
    assert skill["status"] == "retired" and skill["note"] == "never helped"
    assert set(skills_json(seeded, "--status", "active")) == {"decline-missing-tool", "avoid-guessing-fields"}
    retire_needs_reason = run("skills", "retire", "-d", seeded, "decline-missing-tool", ok=False)
    assert retire_needs_reason.exit_code == 2  # missing required option (usage error)

    run("skills", "activate", "-d", seeded, "summarise-long-pages")
    assert skills_json(seeded)["summarise-long-pages"]["status"] == "active"
    assert "already" in run("skills", "activate", "-d", seeded, "summarise-long-pages").stdout

    run("skills", "pin", "-d", seeded, "avoid-guessing-fields")
    assert skills_json(seeded)["avoid-guessing-fields"]["pinned"] is True
    assert "yes" in run("skills", "list", "-d", seeded).stdout
    run("skills", "unpin", "-d", seeded, "avoid-guessing-fields")
    assert skills_json(seeded)["avoid-guessing-fields"]["pinned"] is False


def test_prune_dry_run_changes_nothing_then_prunes(seeded: Path):
    run("skills", "pin", "-d", seeded, "avoid-guessing-fields")
    before = skills_json(seeded)

    no_rule = run("skills", "prune", "-d", seeded, ok=False)
    assert_one_line_error(no_rule, "--unused-days", "--min-success-rate", "--max-active")

    dry = run("skills", "prune", "-d", seeded, "--max-active", "2", "--dry-run")
    assert "Would retire 1 skill" in dry.stdout and "over-cap" in dry.stdout
    plan = json.loads(run("skills", "prune", "-d", seeded, "--max-active", "2", "--dry-run", "--json").stdout)
    assert plan["dry_run"] is True and len(plan["actions"]) == 1
    doomed = plan["actions"][0]["name"]
    assert doomed != "avoid-guessing-fields"  # pinned skills are never pruned
    assert skills_json(seeded) == before  # nothing changed, not even a version

    real = run("skills", "prune", "-d", seeded, "--max-active", "2")
    assert "Retired 1 skill" in real.stdout and doomed in real.stdout
    after = skills_json(seeded)
    assert after[doomed]["status"] == "retired" and after[doomed]["version"] == before[doomed]["version"] + 1
    assert sum(s["status"] == "active" for s in after.values()) == 2
    history = json.loads(run("skills", "history", "-d", seeded, doomed, "--json").stdout)
    assert history[-1]["author"] == "prune" and "over-cap" in history[-1]["reason"]

    again = run("skills", "prune", "-d", seeded, "--max-active", "2")
    assert "Nothing to prune" in again.stdout


# -- search ----------------------------------------------------------------------------------------


def test_search_table_json_filters_and_render(seeded: Path):
    table = run("search", "-d", seeded, "a needed tool is missing").stdout
    assert "decline-missing-tool" in table and "score" in table

    data = json.loads(run("search", "-d", seeded, "a needed tool is missing", "-k", "2", "--json").stdout)
    assert data["query"] == "a needed tool is missing"
    assert 1 <= len(data["hits"]) <= 2
    assert data["hits"][0]["name"] == "decline-missing-tool"
    assert all(isinstance(h["score"], float) for h in data["hits"])

    only_pitfalls = json.loads(run("search", "-d", seeded, "tool missing", "--kind", "pitfall", "--json").stdout)
    assert [h["name"] for h in only_pitfalls["hits"]] == ["avoid-guessing-fields"]  # the one pitfall
    by_tool = json.loads(run("search", "-d", seeded, "tool missing", "--tool", "fetch", "--json").stdout)
    assert [h["name"] for h in by_tool["hits"]] == ["summarise-long-pages"]  # the one skill using fetch
    by_tag = json.loads(run("search", "-d", seeded, "tool", "--tag", "limits", "--json").stdout)
    assert {h["name"] for h in by_tag["hits"]} == {"decline-missing-tool"}

    rendered = run("search", "-d", seeded, "a needed tool is missing", "-k", "1", "--render").stdout
    assert "<skills>" in rendered and 'name="decline-missing-tool"' in rendered
    both = json.loads(run("search", "-d", seeded, "a needed tool is missing", "--render", "--json").stdout)
    assert "<skills>" in both["rendered"]

    run("skills", "retire", "-d", seeded, "decline-missing-tool", "--reason", "test")
    data = json.loads(run("search", "-d", seeded, "a needed tool is missing", "--json").stdout)
    assert "decline-missing-tool" not in {h["name"] for h in data["hits"]}


def test_search_shows_the_general_skills_injected_whatever_the_query(seeded: Path):
    run("skills", "add", "-d", seeded, "--name", "ask-instead-of-guessing", "--description",
        "For any request that leaves a needed value unstated: ask first.", "--body",
        "Ask the user instead of guessing.", "--kind", "policy", "--tag", "general")
    data = json.loads(run("search", "-d", seeded, "summarise this long page", "-k", "1", "--json").stdout)
    assert [(h["name"], h["general"]) for h in data["hits"]][0] == ("ask-instead-of-guessing", True)
    assert len(data["hits"]) == 2 and not data["hits"][1]["general"]
    assert "general" in run("search", "-d", seeded, "summarise this long page").stdout
    off = json.loads(run("search", "-d", seeded, "summarise", "-k", "1", "--no-general", "--json").stdout)
    assert [h["general"] for h in off["hits"]] == [False]


# -- bank-level commands ---------------------------------------------------------------------------


def test_stats_reindex_and_verify(seeded: Path):
    stats = json.loads(run("stats", "-d", seeded, "--json").stdout)
    assert stats["skills"]["total"] == 3 and stats["skills"]["active"] == 3
    assert stats["active_by_kind"] == {"guard": 1, "procedure": 1, "pitfall": 1}
    assert "trajectories" in run("stats", "-d", seeded).stdout

    out = run("reindex", "-d", seeded).stdout
    assert "3 skills indexed" in out

    ok = run("verify", "-d", seeded)
    assert ok.stdout.startswith("OK") and "3 versions" in ok.stdout
    assert json.loads(run("verify", "-d", seeded, "--json").stdout)["ok"] is True


def test_verify_detects_a_tampered_version(seeded: Path):
    skill_id = skills_json(seeded)["decline-missing-tool"]["id"]
    with sqlite3.connect(seeded / "bank.db") as conn:
        conn.execute("UPDATE skill_versions SET body = 'x' WHERE skill_id = ? AND version = 1", (skill_id,))
    conn.close()
    result = run("verify", "-d", seeded, ok=False)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "FAILED" in result.stdout
    assert f"skill {skill_id} v1: content does not match its content hash" in result.stdout
    report = json.loads(run("verify", "-d", seeded, "--json", ok=False).stdout)
    assert report["ok"] is False and report["problems"]


def test_export_import_round_trip(seeded: Path, tmp_path: Path):
    run("skills", "edit", "-d", seeded, "summarise-long-pages", "--body", "Headings first.")
    run("skills", "retire", "-d", seeded, "avoid-guessing-fields", "--reason", "test")
    out_dir = tmp_path / "exported"
    out = run("export", "-d", seeded, out_dir).stdout
    assert "Exported 2 active skills" in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["decline-missing-tool", "summarise-long-pages"]

    retired_dir = tmp_path / "retired"
    run("export", "-d", seeded, retired_dir, "--status", "retired")
    assert [p.name for p in retired_dir.iterdir()] == ["avoid-guessing-fields"]

    second = tmp_path / "second"
    run("init", "-d", second)
    out = run("import", "-d", second, out_dir, "--trust").stdout  # the bank's own export
    assert "Imported 2 of 2 skill files" in out and "2 new, 0 changed, 0 unchanged" in out
    original, copy = skills_json(seeded, "--status", "active"), skills_json(second)
    assert set(copy) == set(original)
    for name, skill in original.items():
        for key in ("id", "description", "kind", "tools", "tags", "status", "content_hash"):
            assert copy[name][key] == skill[key], (name, key)
        body = json.loads(run("skills", "show", "-d", second, name, "--json").stdout)["body"]
        assert body == json.loads(run("skills", "show", "-d", seeded, name, "--json").stdout)["body"]
    assert run("verify", "-d", second).stdout.startswith("OK")


def test_import_with_one_bad_file_imports_nothing(seeded: Path, tmp_path: Path):
    folder = tmp_path / "incoming"
    run("export", "-d", seeded, folder)
    bad = folder / "broken-skill" / "SKILL.md"
    bad.parent.mkdir()
    bad.write_text("---\nname: broken-skill\n---\n\nNo description above.\n")

    second = tmp_path / "second"
    run("init", "-d", second)
    result = run("import", "-d", second, folder, ok=False)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert result.stderr.startswith("error: ")
    assert str(bad) in result.stderr and "description" in result.stderr
    assert "decline-missing-tool" not in result.stderr  # only the bad file is named
    assert skills_json(second) == {}

    missing = run("import", "-d", second, tmp_path / "does-not-exist", ok=False)
    assert missing.exit_code == 1 and "no such folder" in missing.stderr


# -- errors ----------------------------------------------------------------------------------------


def test_unknown_ids_and_versions_are_one_line_errors(seeded: Path):
    for args in (
        ("skills", "show", "-d", seeded, "no-such-skill"),
        ("skills", "history", "-d", seeded, "no-such-skill"),
        ("skills", "edit", "-d", seeded, "no-such-skill", "--body", "x"),
        ("skills", "retire", "-d", seeded, "no-such-skill", "--reason", "x"),
        ("skills", "pin", "-d", seeded, "no-such-skill"),
        ("skills", "diff", "-d", seeded, "no-such-skill", "1", "2"),
    ):
        assert_one_line_error(run(*args, ok=False), "no-such-skill")
    assert_one_line_error(run("skills", "diff", "-d", seeded, "decline-missing-tool", "1", "9", ok=False),
                          "no version 9")
    assert_one_line_error(run("skills", "rollback", "-d", seeded, "decline-missing-tool", "7", ok=False),
                          "no version 7")
    assert_one_line_error(run("runs", "show", "-d", seeded, "tr_nope", ok=False), "tr_nope")
    assert_one_line_error(run("runs", "label", "-d", seeded, "tr_nope", "--success", ok=False), "tr_nope")


def test_missing_and_foreign_bank_folders(tmp_path: Path):
    missing = tmp_path / "no-bank-here"
    result = run("skills", "list", "-d", missing, ok=False)
    assert_one_line_error(result, "no skill bank", "skillbank init")
    assert not missing.exists()  # reading never creates a bank

    foreign = tmp_path / "project"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not a bank")
    for args in (("skills", "list"), ("stats",), ("init",), ("verify",)):
        assert_one_line_error(run(*args, "-d", foreign, ok=False), "is not a skill bank", "not empty")
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


def test_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "env-bank"
    monkeypatch.setenv("SKILLBANK_DIR", str(path))
    run("init")
    run("skills", "add", "--name", "env-skill", "--description", "From the env.", "--body", "Body.")
    assert "env-skill" in json.dumps(json.loads(run("skills", "list", "--json").stdout))
    assert (path / "bank.db").exists()


def test_main_prints_one_red_line_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setattr(sys, "argv", ["skillbank", "skills", "show", "-d", str(tmp_path / "none"), "x"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: no skill bank") and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err


# -- runs ------------------------------------------------------------------------------------------


def _save_runs(path: Path) -> tuple[str, str]:
    t0 = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
    with SkillBank.open(path, embedder="hash", create=False) as bank:
        skill = bank.get_skill("decline-missing-tool")
        limited = Trajectory(
            task="Find the weather in Paris and book a table",
            task_type="booking",
            model="fake-model",
            status="incomplete",
            error="recursion limit reached",
            started_at=t0,
            ended_at=t0 + timedelta(seconds=30),
            steps=[
                Step(index=0, kind="model", started_at=t0, content="I will search for the weather.",
                     tool_calls=[{"name": "search", "args": {"q": "weather Paris"}, "id": "c1"}],
                     input_tokens=120, output_tokens=15, input_messages=2, latency_ms=350),
                Step(index=1, kind="tool", started_at=t0, tool="search", args={"q": "weather Paris"},
                     result="Sunny, 21C"),
                Step(index=2, kind="model", started_at=t0, content="",
                     tool_calls=[{"name": "book_table", "args": {"when": "8pm"}, "id": "c2"}],
                     input_tokens=160, output_tokens=12),
                Step(index=3, kind="tool", started_at=t0, tool="book_table", args={"when": "8pm"},
                     error="tool 'book_table' does not exist"),
            ],
            limit_events=[
                LimitEvent(type=LimitType.missing_tool, step=3, detail="book_table is not available",
                           tool="book_table"),
                LimitEvent(type=LimitType.recursion_limit, step=3, detail="hit recursion limit 4"),
            ],
            injections=[Injection(step=0, skill_id=skill.id, version=skill.version, rank=1, score=0.61)],
        )
        plain = Trajectory(task="Say hello", status="complete", final_answer="Hello!",
                           started_at=t0 + timedelta(minutes=5), ended_at=t0 + timedelta(minutes=6),
                           steps=[Step(index=0, kind="model", started_at=t0, content="Hello!",
                                       input_tokens=10, output_tokens=2)],
                           outcome=Outcome(success=True, source="verifier"))
        return bank.trajectories.save(limited), bank.trajectories.save(plain)


def test_runs_list_show_label(seeded: Path):
    assert "No runs recorded yet" in run("runs", "list", "-d", seeded).stdout
    limited, plain = _save_runs(seeded)

    listing = run("runs", "list", "-d", seeded).stdout
    assert limited in listing and plain in listing and "incomplete" in listing
    runs = json.loads(run("runs", "list", "-d", seeded, "--json").stdout)
    assert [r["id"] for r in runs] == [plain, limited]  # newest first
    assert runs[1]["steps_count"] == 4 and runs[1]["limit_events_count"] == 2
    assert runs[1]["input_tokens"] == 280 and runs[0]["success"] is True
    datetime.fromisoformat(runs[1]["started_at"])
    only = json.loads(run("runs", "list", "-d", seeded, "--status", "incomplete", "--json").stdout)
    assert [r["id"] for r in only] == [limited]
    assert len(json.loads(run("runs", "list", "-d", seeded, "--limit", "1", "--json").stdout)) == 1

    shown = run("runs", "show", "-d", seeded, limited).stdout
    for fragment in (
        "Find the weather in Paris", "I will search for the weather.", "call search",
        '"q": "weather Paris"', "Sunny, 21C", "tokens in 120 / out 15",
        "tool 'book_table' does not exist", "limit: missing_tool (capability)",
        "limit: recursion_limit (budget)", "skill injected: decline-missing-tool v1",
        "recursion limit reached", "unlabelled",
    ):
        assert fragment in shown, fragment
    assert shown.index("skill injected") < shown.index("I will search")
    assert shown.index("limit: missing_tool") > shown.index("does not exist")
    full = json.loads(run("runs", "show", "-d", seeded, limited, "--json").stdout)
    assert len(full["steps"]) == 4 and full["limit_events"][0]["type"] == "missing_tool"

    assert_one_line_error(run("runs", "label", "-d", seeded, limited, ok=False), "--success", "--failure")
    out = run("runs", "label", "-d", seeded, limited, "--failure", "--note", "never booked").stdout
    assert "failure" in out
    shown = run("runs", "show", "-d", seeded, limited).stdout
    assert "outcome: failure" in shown and "never booked" in shown
    skill = skills_json(seeded)["decline-missing-tool"]
    assert skill["stats"]["failures"] == 1 and skill["stats"]["uses"] == 1

    run("runs", "label", "-d", seeded, limited, "--score", "0.8")
    skill = skills_json(seeded)["decline-missing-tool"]
    assert skill["stats"]["successes"] == 1 and skill["stats"]["failures"] == 0
    assert "success (0.8)" in run("runs", "show", "-d", seeded, limited).stdout

    stats = json.loads(run("stats", "-d", seeded, "--json").stdout)
    assert stats["trajectories"]["total"] == 2 and stats["limit_events"] == {
        "missing_tool": 1, "recursion_limit": 1}


def test_runs_show_highlights_limits_and_injections(seeded: Path, monkeypatch: pytest.MonkeyPatch):
    limited, _ = _save_runs(seeded)
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    shown = run("runs", "show", "-d", seeded, limited).stdout
    lines = {line.split("limit: ")[1].split(" ")[0] if "limit: " in line else None: line
             for line in shown.splitlines()}
    assert "\x1b[1;31m" in lines["missing_tool"]  # capability limit: red
    assert "\x1b[1;33m" in lines["recursion_limit"]  # budget limit: yellow
    injected = next(line for line in shown.splitlines() if "skill injected" in line)
    assert "\x1b[35m" in injected  # injected skills: magenta
    # --json is never coloured
    json.loads(run("runs", "show", "-d", seeded, limited, "--json").stdout)
