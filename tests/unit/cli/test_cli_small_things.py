"""Small things a user trips over on the command line (issue 15)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank.bank import SkillBank
from skillbank.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLBANK_EMBEDDER", "hash")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("SKILLBANK_DIR", raising=False)


def cli(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


def _commands(group=None, path=()):
    """Every command path of the app, e.g. ("skills", "list")."""
    from typer.main import get_command

    group = group or get_command(app)
    for name, cmd in getattr(group, "commands", {}).items():
        yield path + (name,)
        yield from _commands(cmd, path + (name,))


def test_help_prints_no_value_type_after_flags():
    paths = list(_commands())
    assert ("skills", "prune") in paths and ("demo",) in paths
    for path in paths:
        out = cli(*path, "--help").stdout
        assert "<bool>" not in out, path
    prune = cli("skills", "prune", "--help").stdout
    assert re.search(r"--max-active\s+<int range>", prune)  # options that take a value keep their type


def test_eval_has_no_progress(tmp_path):
    result = cli("eval", "--env", "car", "--trials", "1", "--per-template", "1", "-d", tmp_path / "bank",
                 "--no-progress")
    assert result.exit_code == 0, result.output
    assert "Consistency, 1 trials per task and arm" in result.stdout


def test_a_mistyped_skill_name_gets_a_suggestion(tmp_path):
    bank = tmp_path / "bank"
    with SkillBank.open(bank, embedder="hash") as b:
        b.add_skill("refund-after-eligibility", "Refund eligible orders.", "Check, then refund.")
        b.add_skill("decline-missing-tool", "When a tool is missing.", "Say which tool is missing.")
    for args in (("skills", "show", "refund-after-eligibilty"), ("skills", "history", "refnd-after-eligibility"),
                 ("skills", "retire", "refund-after-eligibilty", "--reason", "x"),
                 ("candidates", "show", "refund-after-eligibilty")):
        result = cli(*args, "-d", bank)
        assert result.exit_code == 1, args
        assert "Did you mean 'refund-after-eligibility'?" in result.stderr, (args, result.stderr)
    far = cli("skills", "show", "zzz-nothing-like-it", "-d", bank)
    assert far.exit_code == 1 and "Did you mean" not in far.stderr


def test_import_says_nothing_was_imported(tmp_path):
    bank = tmp_path / "bank"
    SkillBank.open(bank, embedder="hash").close()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("import", empty, "-d", bank)
    assert result.exit_code == 0 and result.stdout.startswith("Nothing was imported: no <name>/SKILL.md folders")
    bad = tmp_path / "bad" / "x"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: x\n---\nbody\n", encoding="utf-8")
    result = cli("import", tmp_path / "bad", "-d", bank)
    assert result.exit_code == 1 and "(nothing was imported)" in result.stderr
    assert "nothing was read" not in result.stderr


def test_candidates_table_shows_a_long_reason_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    bank = tmp_path / "bank"
    words = " ".join(f"word{i}" for i in range(60))
    with SkillBank.open(bank, embedder="hash") as b:
        b.add_skill("long-note", "A candidate with a long note.", "Do the thing.", status="quarantined",
                    note="quarantined: " + words)
    out = cli("candidates", "list", "-d", bank).stdout
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    assert words in " ".join(" ".join(lines).split())  # every word, in order, none cut


def test_the_bank_folder_default_is_defined_once():
    import skillbank.cli._common as common
    import skillbank.store._location as location

    assert not hasattr(common, "DEFAULT_DIR") or common.DEFAULT_DIR is location.DEFAULT_DIR
    source = Path(common.__file__).read_text(encoding="utf-8")
    assert '".skillbank"' not in source and '"SKILLBANK_DIR"' not in source


def test_help_keeps_the_extra_to_install():
    # Help text is rich markup: "pip install 'skillbank[web]'" printed "pip install 'skillbank'"
    # (the extra read as a style tag) until the bracket was escaped.
    from typer.main import get_command

    named = 0
    for path in _commands():
        cmd = get_command(app)
        for name in path:
            cmd = cmd.commands[name]
        source = " ".join(t for t in [cmd.help, *(getattr(p, "help", None) for p in cmd.params)] if t)
        extras = re.findall(r"skillbank\\?\[(\w+)\]", source)
        out = " ".join(cli(*path, "--help").stdout.split())
        for extra in extras:
            named += 1
            assert f"skillbank[{extra}]" in out, (path, extra)
    assert named >= 2  # serve's [web], lint --detector's [local]
