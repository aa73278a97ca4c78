"""SKILL.md interop: rendering, export, parsing, folder reading and every reported problem."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from skillbank.errors import SkillFileError
from skillbank.models import (
    BODY_MAX,
    DESCRIPTION_MAX,
    NAME_MAX,
    Skill,
    SkillContent,
    SkillKind,
    SkillStatus,
)
from skillbank._skillmd import (
    ALLOWED_KEYS,
    MAX_FILE_BYTES,
    ParsedSkill,
    export_skills,
    parse_skill_md,
    read_skill_dir,
    render_skill_md,
)

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def make_skill(
    name: str = "decline-missing-tool",
    description: str = "Use when a needed tool is missing.",
    body: str = "Say which tool is missing and stop.",
    *,
    id: str | None = None,
    kind: SkillKind | str = SkillKind.procedure,
    tools: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    status: SkillStatus | str = SkillStatus.active,
    pinned: bool = False,
    version: int = 1,
) -> Skill:
    content = SkillContent(
        name=name, description=description, body=body, kind=kind, tools=tools, tags=tags
    )
    return Skill(
        id=id or f"sk_{name.replace('-', '')[:16]}",
        content=content,
        status=status,
        pinned=pinned,
        version=version,
        content_hash=content.hash(),
        created_at=NOW,
        updated_at=NOW,
    )


def skill_md(front: str, body: str = "Do the thing.") -> str:
    return f"---\n{front.strip()}\n---\n\n{body}\n"


VALID_FRONT = "name: my-skill\ndescription: Use when testing."


def problems_of(text: str | bytes, path: str = "skills/my-skill/SKILL.md") -> list[str]:
    with pytest.raises(SkillFileError) as info:
        parse_skill_md(text, path)
    assert list(info.value.problems) == [path]
    reasons = info.value.problems[path]
    assert reasons, "a SkillFileError must say why"
    for reason in reasons:
        assert reason in str(info.value)
    return reasons


def assert_round_trip(skill: Skill) -> ParsedSkill:
    parsed = parse_skill_md(render_skill_md(skill), f"out/{skill.name}/SKILL.md")
    assert parsed.content == skill.content
    assert parsed.content.hash() == skill.content_hash
    assert parsed.skill_id == skill.id
    assert parsed.status == skill.status.value
    assert parsed.pinned is skill.pinned
    assert parsed.version == skill.version
    assert parsed.content_hash == skill.content_hash
    assert parsed.edited is False
    return parsed


# ------------------------------------------------------------------------------------ rendering

ROUND_TRIP_SKILLS = [
    make_skill(),
    make_skill(
        "guard-budget",
        "Use when: the token budget is nearly spent; key: value pairs # and hashes",
        "# Guard\n\n- stop early\n- summarise\n\n```yaml\n---\nkey: value\n---\n```\n",
        kind=SkillKind.guard,
        tools=("search", "calc.eval", "web-fetch"),
        tags=("limits", "budget"),
        status=SkillStatus.candidate,
        pinned=True,
        version=7,
    ),
    make_skill(
        "unicode-skill",
        "Ünïcödé — 日本語の説明 🚀 «quotes» and \u00a0nbsp",
        "Körper mit Umlauten ✓\n\nЭмодзи 🎉",
        tags=("été", "naïve"),
        kind=SkillKind.policy,
    ),
    make_skill(
        "multiline",
        'First line: "quoted"\nSecond line: \'single\'\n\n  indented third\ttab',
        "body",
        kind=SkillKind.pitfall,
        status=SkillStatus.quarantined,
    ),
    make_skill("yaml-lookalikes", "yes", "no"),
    make_skill("numbers", "1.5e3", "0x1F"),
    make_skill("nulls", "null", "~"),
    make_skill("dashes", "--- not a delimiter", "---\nstill body\n---"),
    make_skill("special-start", "- a list? [no] {nor: map} &anchor *alias !tag | > % @ `", "x"),
    make_skill("control-chars", "bell\x07 nul\x00 del\x7f nel\x85 ls\u2028 ps\u2029 bom\ufeff", "b"),
    make_skill("crlf", "carriage\r\nreturn", "line one\r\nline two"),
    make_skill("long-desc", "word " * 200, "b" * BODY_MAX),
    make_skill("a" * NAME_MAX, "d" * DESCRIPTION_MAX, "body"),
    make_skill("retired-one", "Retired.", "Old body.", status=SkillStatus.retired),
]


@pytest.mark.parametrize("skill", ROUND_TRIP_SKILLS, ids=lambda s: s.name[:20])
def test_render_parse_round_trip(skill: Skill) -> None:
    assert_round_trip(skill)


def test_render_layout() -> None:
    skill = make_skill(
        tools=("search",), tags=("limits",), kind=SkillKind.guard, pinned=True, version=4
    )
    text = render_skill_md(skill)
    assert text.startswith("---\n")
    front, body = text[4:].split("\n---\n", 1)
    data = yaml.safe_load(front)
    assert list(data) == ["name", "description", "metadata"]
    assert data["name"] == skill.name
    assert data["description"] == skill.description
    assert data["metadata"] == {
        "skillbank_id": skill.id,
        "kind": "guard",
        "tools": ["search"],
        "tags": ["limits"],
        "status": "active",
        "version": 4,
        "content_hash": skill.content_hash,
        "pinned": True,
    }
    assert list(data["metadata"]) == [
        "skillbank_id", "kind", "tools", "tags", "status", "version", "content_hash", "pinned"
    ]
    assert body.strip() == skill.body
    assert "allowed-tools" not in front  # exports never grant tool permissions


def test_render_keeps_unicode_readable() -> None:
    text = render_skill_md(make_skill(description="Café ✓ 日本"))
    assert "Café ✓ 日本" in text


# ------------------------------------------------------------------------------------- parsing


def test_parse_minimal_foreign_skill() -> None:
    parsed = parse_skill_md(skill_md(VALID_FRONT), "skills/my-skill/SKILL.md")
    assert parsed.path == "skills/my-skill/SKILL.md"
    assert parsed.content.name == "my-skill"
    assert parsed.content.description == "Use when testing."
    assert parsed.content.body == "Do the thing."
    assert parsed.content.kind is SkillKind.procedure
    assert parsed.content.tools == () and parsed.content.tags == ()
    assert parsed.skill_id is None and parsed.status is None and parsed.pinned is False
    assert parsed.version is None and parsed.content_hash is None and parsed.edited is False


def test_parse_accepts_spec_keys_and_foreign_metadata() -> None:
    front = VALID_FRONT + (
        "\nlicense: MIT\ncompatibility: Needs python 3.10+\nallowed-tools: Read Grep  web.fetch"
        "\nmetadata:\n  author: someone\n  tags: [Alpha, beta]"
    )
    parsed = parse_skill_md(skill_md(front))
    assert parsed.content.tools == ("Read", "Grep", "web.fetch")
    assert parsed.content.tags == ("alpha", "beta")


def test_metadata_tools_take_precedence_over_allowed_tools() -> None:
    front = VALID_FRONT + "\nallowed-tools: Read Grep\nmetadata:\n  tools: [search]"
    assert parse_skill_md(skill_md(front)).content.tools == ("search",)


def test_parse_bytes_crlf_and_bom() -> None:
    text = skill_md(VALID_FRONT, "line one\nline two").replace("\n", "\r\n")
    parsed = parse_skill_md(("\ufeff" + text).encode("utf-8"))
    assert parsed.content.name == "my-skill"
    assert parsed.content.description == "Use when testing."
    assert parsed.content.body == "line one\r\nline two"


def test_body_may_follow_closing_line_directly_and_file_may_end_there() -> None:
    assert parse_skill_md(f"---\n{VALID_FRONT}\n---\nbody").content.body == "body"
    assert problems_of(f"---\n{VALID_FRONT}\n---") == [
        "body is empty: write the skill's instructions in markdown"
    ]


def test_edited_detects_hand_changes() -> None:
    skill = make_skill()
    text = render_skill_md(skill).replace(skill.body, "A hand-edited body.")
    parsed = parse_skill_md(text)
    assert parsed.edited is True
    assert parsed.content_hash == skill.content_hash


def test_name_need_not_match_without_a_folder() -> None:
    assert parse_skill_md(skill_md(VALID_FRONT)).content.name == "my-skill"
    assert parse_skill_md(skill_md(VALID_FRONT), "my-skill.md").content.name == "my-skill"


# --------------------------------------------------------------------------- each problem type

PROBLEMS = [
    ("no-front-matter", "# Just markdown\n\nNo front matter here.", "no front matter"),
    ("empty-file", "", "no front matter"),
    ("blank-before-front", "\n" + skill_md(VALID_FRONT), "no front matter"),
    ("unclosed", f"---\n{VALID_FRONT}\n\nbody without a closing line\n", "front matter is not closed"),
    ("only-opening", "---", "front matter is not closed"),
    ("yaml-syntax", "---\nname: my-skill\ndescription: [unclosed\n---\nbody\n", "YAML syntax error"),
    ("yaml-tab", "---\nname: my-skill\n\tdescription: x\n---\nbody\n", "YAML syntax error"),
    ("yaml-bad-date", skill_md(VALID_FRONT + "\nlicense: 2021-02-30"), "YAML error"),
    ("empty-front", "---\n---\nbody\n", "front matter is empty"),
    ("front-is-list", skill_md("- name\n- description"), "must be a YAML mapping"),
    ("front-is-scalar", skill_md("just a string"), "must be a YAML mapping"),
    ("missing-name", skill_md("description: x"), "missing required key 'name'"),
    ("missing-description", skill_md("name: my-skill"), "missing required key 'description'"),
    ("empty-name", skill_md("name:\ndescription: x"), "name is empty"),
    ("name-not-string", skill_md("name: 12\ndescription: x"), "name must be a string"),
    ("description-not-string", skill_md("name: my-skill\ndescription: [a]"), "description must be a string"),
    ("name-mismatch", skill_md("name: other-skill\ndescription: x"), "does not match its folder name 'my-skill'"),
    ("invalid-name", skill_md("name: My_Skill\ndescription: x"), "invalid skill name 'My_Skill'"),
    ("name-too-long", skill_md(f"name: {'a' * (NAME_MAX + 1)}\ndescription: x"), "invalid skill name"),
    ("blank-description", skill_md("name: my-skill\ndescription: '   '"), "description is empty"),
    ("description-too-long", skill_md(f"name: my-skill\ndescription: {'d' * (DESCRIPTION_MAX + 1)}"), f"the limit is {DESCRIPTION_MAX}"),
    ("empty-body", skill_md(VALID_FRONT, "   \n\n  "), "body is empty"),
    ("body-too-large", skill_md(VALID_FRONT, "b" * (BODY_MAX + 1)), f"body has {BODY_MAX + 1} characters; the limit is {BODY_MAX}"),
    ("unknown-key", skill_md(VALID_FRONT + "\nversion: 2"), "unknown key 'version'"),
    ("unknown-non-string-key", skill_md(VALID_FRONT + "\n3: x"), "unknown key 3"),
    ("bad-kind", skill_md(VALID_FRONT + "\nmetadata:\n  kind: recipe"), "metadata.kind 'recipe' is not a skill kind"),
    ("kind-not-string", skill_md(VALID_FRONT + "\nmetadata:\n  kind: [guard]"), "is not a skill kind"),
    ("tools-not-list", skill_md(VALID_FRONT + "\nmetadata:\n  tools: search"), "metadata.tools must be a list of strings"),
    ("tools-not-strings", skill_md(VALID_FRONT + "\nmetadata:\n  tools: [search, 3]"), "metadata.tools must be a list of strings"),
    ("tags-not-list", skill_md(VALID_FRONT + "\nmetadata:\n  tags: {a: b}"), "metadata.tags must be a list of strings"),
    ("tags-not-strings", skill_md(VALID_FRONT + "\nmetadata:\n  tags: [[x]]"), "metadata.tags must be a list of strings"),
    ("invalid-tool-name", skill_md(VALID_FRONT + "\nmetadata:\n  tools: ['bad tool']"), "metadata.tools: invalid tool name 'bad tool'"),
    ("invalid-allowed-tool", skill_md(VALID_FRONT + "\nallowed-tools: Bash(git:*) Read"), "allowed-tools: invalid tool name 'Bash(git:*)'"),
    ("allowed-tools-not-string", skill_md(VALID_FRONT + "\nallowed-tools: {a: 1}"), "allowed-tools must be a space-separated string"),
    ("metadata-not-mapping", skill_md(VALID_FRONT + "\nmetadata: [a]"), "metadata must be a mapping"),
    ("bad-status", skill_md(VALID_FRONT + "\nmetadata:\n  status: live"), "metadata.status 'live' is not a skill status"),
    ("bad-pinned", skill_md(VALID_FRONT + "\nmetadata:\n  pinned: 'yes'"), "metadata.pinned must be true or false"),
    ("bad-version", skill_md(VALID_FRONT + "\nmetadata:\n  version: 0"), "metadata.version must be a whole number"),
    ("bad-skillbank-id", skill_md(VALID_FRONT + "\nmetadata:\n  skillbank_id: 12"), "metadata.skillbank_id must be a non-empty string"),
    ("bad-content-hash", skill_md(VALID_FRONT + "\nmetadata:\n  content_hash: 12"), "metadata.content_hash must be a string"),
    ("bad-license", skill_md(VALID_FRONT + "\nlicense: [MIT]"), "license must be a string"),
    ("not-utf8", b"---\nname: my-skill\ndescription: caf\xe9\n---\nbody\n", "not UTF-8: invalid byte 0xe9 at byte offset 35"),
    ("surrogate", "---\nname: my-skill\ndescription: \ud800\n---\nbody\n", "unpaired surrogate"),
    ("too-large-bytes", skill_md(VALID_FRONT, "b" * MAX_FILE_BYTES).encode(), "file too large"),
    ("too-large-text", skill_md(VALID_FRONT, "é" * (MAX_FILE_BYTES // 2)), "file too large"),
]


@pytest.mark.parametrize("text,expected", [p[1:] for p in PROBLEMS], ids=[p[0] for p in PROBLEMS])
def test_each_problem_is_reported(text: str | bytes, expected: str) -> None:
    reasons = problems_of(text)
    assert any(expected in r for r in reasons), reasons


def test_yaml_error_reports_the_file_line() -> None:
    text = "---\nname: my-skill\ndescription: ok\nlicense: [unclosed\n---\nbody\n"
    (reason,) = problems_of(text)
    assert "line 5" in reason or "line 4" in reason  # PyYAML flags the token after the bad one
    text = "---\nname: my-skill\ndescription: a: b\n---\nbody\n"
    (reason,) = problems_of(text)
    assert "line 3" in reason


def test_all_problems_in_one_file_are_reported_together() -> None:
    text = skill_md(
        "name: Bad_Name\nextra: 1\nmetadata:\n  kind: nope\n  tools: 5\n  tags: [1]", "  "
    )
    reasons = problems_of(text)
    joined = "\n".join(reasons)
    for expected in (
        "unknown key 'extra'",
        "missing required key 'description'",
        "metadata.kind 'nope'",
        "metadata.tools must be a list",
        "metadata.tags must be a list",
        "does not match its folder name",
        "invalid skill name 'Bad_Name'",
        "body is empty",
    ):
        assert expected in joined
    # No pydantic noise: no error URLs, no "Value error," prefixes, one line each.
    assert "pydantic" not in joined and "Value error" not in joined
    assert all("\n" not in r for r in reasons)


def test_all_allowed_keys_are_accepted() -> None:
    front = VALID_FRONT + "\nlicense: MIT\ncompatibility: any\nmetadata: {}\nallowed-tools: Read"
    parsed = parse_skill_md(skill_md(front))
    assert parsed.content.tools == ("Read",)
    assert set(ALLOWED_KEYS) == {
        "name", "description", "license", "compatibility", "metadata", "allowed-tools"
    }


# ------------------------------------------------------------------------------ export and read


def test_export_then_read(tmp_path: Path) -> None:
    skills = ROUND_TRIP_SKILLS
    out = tmp_path / "nested" / "skills"
    paths = export_skills(iter(skills), out)
    assert paths == [out / s.name / "SKILL.md" for s in skills]
    assert all(p.is_file() for p in paths)
    assert not [p for p in out.rglob("*") if p.name.startswith(".")], "temp files left behind"

    parsed = read_skill_dir(out)
    assert [p.path for p in parsed] == sorted(str(p) for p in paths)
    by_id = {p.skill_id: p for p in parsed}
    for skill in skills:
        got = by_id[skill.id]
        assert got.content == skill.content
        assert (got.status, got.pinned, got.version, got.content_hash) == (
            skill.status.value, skill.pinned, skill.version, skill.content_hash
        )


def test_export_overwrites_same_name_and_keeps_other_files(tmp_path: Path) -> None:
    first = make_skill(body="Old body.")
    export_skills([first], tmp_path)
    extra = tmp_path / first.name / "scripts" / "helper.py"
    extra.parent.mkdir()
    extra.write_text("print('hi')\n")
    second = make_skill(body="New body.", version=2)
    (path,) = export_skills([second], tmp_path)
    assert "New body." in path.read_text(encoding="utf-8")
    assert extra.read_text() == "print('hi')\n"
    (parsed,) = read_skill_dir(tmp_path)
    assert parsed.content.body == "New body." and parsed.version == 2


def test_export_refuses_duplicate_names_and_writes_nothing(tmp_path: Path) -> None:
    a = make_skill(id="sk_a")
    b = make_skill(id="sk_b")
    with pytest.raises(SkillFileError) as info:
        export_skills([make_skill("other"), a, b], tmp_path / "out")
    message = str(info.value)
    assert message.startswith("cannot export, nothing was written: two skills are named")
    assert "decline-missing-tool" in message and "sk_a" in message and "sk_b" in message
    assert list(info.value.problems) == [str(tmp_path / "out" / "decline-missing-tool" / "SKILL.md")]
    assert not (tmp_path / "out").exists()


def test_export_writes_utf8_bytes_verbatim(tmp_path: Path) -> None:
    skill = make_skill(description="crlf\r\nkept", body="a\r\nb ✓")
    (path,) = export_skills([skill], tmp_path)
    assert path.read_bytes() == render_skill_md(skill).encode("utf-8")


def test_export_file_mode_follows_umask(tmp_path: Path) -> None:
    (path,) = export_skills([make_skill()], tmp_path)
    umask = os.umask(0)
    os.umask(umask)
    assert (path.stat().st_mode & 0o777) == (0o666 & ~umask)


def test_export_cleans_up_temp_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        export_skills([make_skill()], tmp_path)
    assert list((tmp_path / "decline-missing-tool").iterdir()) == []


def write(root: Path, folder: str, text: str | bytes) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


def valid_text(name: str, **kwargs: object) -> str:
    return render_skill_md(make_skill(name, **kwargs))  # type: ignore[arg-type]


def test_one_invalid_file_among_valid_ones_fails_the_whole_read(tmp_path: Path) -> None:
    write(tmp_path, "alpha", valid_text("alpha"))
    bad = write(tmp_path, "beta", skill_md("name: beta"))
    write(tmp_path, "gamma", valid_text("gamma"))
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    err = info.value
    assert list(err.problems) == [str(bad)]
    assert err.problems[str(bad)] == ["missing required key 'description'"]
    message = str(err)
    assert str(bad) in message and "missing required key 'description'" in message
    assert "alpha" not in message and "gamma" not in message
    assert "nothing was read" in message


def test_every_bad_file_is_listed(tmp_path: Path) -> None:
    write(tmp_path, "good", valid_text("good"))
    b1 = write(tmp_path, "b1", "no front matter")
    b2 = write(tmp_path, "b2", b"---\nname: b2\ndescription: \xff\n---\nx\n")
    b3 = write(tmp_path, "b3", skill_md("name: other\ndescription: d"))
    b4 = write(tmp_path, "b4", skill_md("name: b4\ndescription: d\nfoo: bar"))
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    err = info.value
    assert set(err.problems) == {str(b1), str(b2), str(b3), str(b4)}
    assert "no front matter" in err.problems[str(b1)][0]
    assert err.problems[str(b2)] == [
        "not UTF-8: invalid byte 0xff at byte offset 26; save the file as UTF-8"
    ]
    assert "does not match its folder name 'b3'" in err.problems[str(b3)][0]
    assert "unknown key 'foo'" in err.problems[str(b4)][0]
    message = str(err)
    assert message.startswith("4 invalid SKILL.md files")
    lines = message.splitlines()[1:]
    assert [line.split(": ", 1)[0].strip() for line in lines] == sorted(
        [str(b1), str(b2), str(b3), str(b4)]
    )


def test_duplicate_names_across_folders(tmp_path: Path) -> None:
    a = write(tmp_path, "same", valid_text("same", id="sk_one"))
    b = write(tmp_path, "zz-copy", valid_text("same", id="sk_two"))
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    problems = info.value.problems
    assert set(problems) == {str(a), str(b)}
    assert problems[str(a)] == [f"duplicate name 'same': also in {b}"]
    assert any(f"duplicate name 'same': also in {a}" == r for r in problems[str(b)])


def test_duplicate_skillbank_ids_across_folders(tmp_path: Path) -> None:
    a = write(tmp_path, "one", valid_text("one", id="sk_same"))
    b = write(tmp_path, "two", valid_text("two", id="sk_same"))
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    assert info.value.problems == {
        str(a): [f"duplicate skillbank_id 'sk_same': also in {b}"],
        str(b): [f"duplicate skillbank_id 'sk_same': also in {a}"],
    }


def test_file_too_large_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "fine", valid_text("fine"))
    huge = tmp_path / "huge" / "SKILL.md"
    huge.parent.mkdir()
    with open(huge, "wb") as fh:  # sparse: 8 GB on paper, nothing on disk
        fh.truncate(8 * 1024**3)
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    assert info.value.problems == {
        str(huge): [f"file too large: {8 * 1024**3} bytes; the limit is {MAX_FILE_BYTES} bytes (1 MB)"]
    }


def test_file_just_over_the_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "big", skill_md("name: big\ndescription: d", "x" * MAX_FILE_BYTES))
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    assert "file too large" in info.value.problems[str(path)][0]


def test_read_a_single_skill_folder_or_file(tmp_path: Path) -> None:
    path = write(tmp_path, "solo", valid_text("solo"))
    (from_folder,) = read_skill_dir(tmp_path / "solo")
    (from_file,) = read_skill_dir(path)
    assert from_folder.content.name == from_file.content.name == "solo"
    assert from_folder.path == from_file.path == str(path)


def test_read_skips_hidden_and_plain_files_and_reports_misnamed(tmp_path: Path) -> None:
    write(tmp_path, "ok", valid_text("ok"))
    write(tmp_path, ".hidden", "garbage")
    (tmp_path / "README.md").write_text("not a skill")
    (tmp_path / "notes").mkdir()  # folder without a SKILL.md: ignored
    (tmp_path / "nested" / "deeper").mkdir(parents=True)
    (tmp_path / "nested" / "deeper" / "SKILL.md").write_text("one level only")
    assert [p.content.name for p in read_skill_dir(tmp_path)] == ["ok"]

    lower = tmp_path / "lower" / "skill.md"
    lower.parent.mkdir()
    lower.write_text(skill_md("name: lower\ndescription: d"))
    entries = {p.name for p in lower.parent.iterdir()}
    if "SKILL.md" in entries:  # case-insensitive file system: the file simply counts
        return
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    assert info.value.problems == {
        str(lower): ["the file must be named exactly 'SKILL.md', not 'skill.md'"]
    }


def test_read_empty_and_missing_directories(tmp_path: Path) -> None:
    assert read_skill_dir(tmp_path) == []
    with pytest.raises(SkillFileError, match="no such directory"):
        read_skill_dir(tmp_path / "missing")
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with pytest.raises(SkillFileError, match="not a directory"):
        read_skill_dir(plain)


def test_skill_md_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "odd" / "SKILL.md").mkdir(parents=True)
    with pytest.raises(SkillFileError) as info:
        read_skill_dir(tmp_path)
    assert info.value.problems == {str(tmp_path / "odd" / "SKILL.md"): ["not a regular file"]}


# ------------------------------------------------------------------------------- property tests

NAMES = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,5}", fullmatch=True)
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300
)
TOOLS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True)


@st.composite
def skill_contents(draw: st.DrawFn) -> SkillContent:
    description = draw(TEXT.filter(lambda s: s.strip()))
    body = draw(
        st.one_of(TEXT, st.text(alphabet="-\n\r \t#:'\"ab", min_size=1, max_size=80)).filter(
            lambda s: s.strip()
        )
    )
    return SkillContent(
        name=draw(NAMES),
        description=description,
        body=body,
        kind=draw(st.sampled_from(list(SkillKind))),
        tools=tuple(draw(st.lists(TOOLS, max_size=4))),
        tags=tuple(draw(st.lists(TEXT, max_size=4))),
    )


@given(
    content=skill_contents(),
    status=st.sampled_from(list(SkillStatus)),
    pinned=st.booleans(),
    version=st.integers(min_value=1, max_value=10_000),
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_render_parse_is_identity(
    content: SkillContent, status: SkillStatus, pinned: bool, version: int
) -> None:
    # The tag normaliser (strip + lower) must be stable for identity to be meaningful.
    assume(SkillContent(**{**content.model_dump(), "tags": content.tags}) == content)
    skill = Skill(
        id="sk_prop", content=content, status=status, pinned=pinned, version=version,
        content_hash=content.hash(), created_at=NOW, updated_at=NOW,
    )
    assert_round_trip(skill)


def check_parse(text: str | bytes) -> None:
    try:
        parsed = parse_skill_md(text, "fuzz/x/SKILL.md")
    except SkillFileError as exc:
        assert exc.problems and all(exc.problems.values())
    else:
        assert isinstance(parsed, ParsedSkill)
        assert isinstance(parsed.content, SkillContent)


@given(st.text(max_size=500))
@settings(max_examples=300, deadline=None)
def test_parse_arbitrary_text_only_raises_skillfileerror(text: str) -> None:
    check_parse(text)


@given(st.text(alphabet=st.characters(), max_size=200))
@settings(max_examples=200, deadline=None)
def test_parse_text_with_surrogates_only_raises_skillfileerror(text: str) -> None:
    check_parse("---\n" + text + "\n---\n" + text)


@given(st.binary(max_size=500))
@settings(max_examples=300, deadline=None)
def test_parse_arbitrary_bytes_only_raises_skillfileerror(data: bytes) -> None:
    check_parse(data)
    check_parse(data.decode("utf-8", errors="replace"))
    check_parse(data.decode("latin-1"))
    check_parse(b"---\n" + data + b"\n---\n" + data)


YAMLISH = st.text(alphabet="-:[]{}&*!|>'\"%@`#,?\n\t ab12.", max_size=120)


@given(front=YAMLISH, body=st.text(max_size=50))
@settings(max_examples=400, deadline=None)
def test_parse_yamlish_front_matter_only_raises_skillfileerror(front: str, body: str) -> None:
    check_parse(f"---\n{front}\n---\n{body}")
    check_parse(f"---\nname: x\ndescription: d\n{front}\n---\n{body}")


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20),
    st.datetimes(), st.binary(max_size=8),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
KEYS = st.sampled_from(list(ALLOWED_KEYS) + ["kind", "tools", "version"]) | st.text(max_size=10)
META_KEYS = st.sampled_from(
    ["skillbank_id", "kind", "tools", "tags", "status", "version", "content_hash", "pinned"]
)


@given(
    front=st.dictionaries(KEYS, VALUES, max_size=6),
    meta=st.dictionaries(META_KEYS, VALUES, max_size=8),
    body=st.text(max_size=40),
)
@settings(max_examples=400, deadline=None)
def test_parse_random_front_matter_values_only_raises_skillfileerror(
    front: dict[str, object], meta: dict[str, object], body: str
) -> None:
    data = {"name": "x", "description": "d", **front}
    if meta:
        data["metadata"] = meta
    dumped = yaml.dump(data, allow_unicode=True)  # full dumper: also emits tags safe_load rejects
    check_parse(f"---\n{dumped}---\n{body}")
