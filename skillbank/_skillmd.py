"""Interop with the Agent Skills ``SKILL.md`` folder format.

A skill folder is named after the skill and holds ``SKILL.md``: YAML front matter between two
``---`` lines, with the required ``name`` and ``description``, then the markdown body::

    ---
    name: decline-missing-tool
    description: 'Use when a needed tool is missing: say so and stop.'
    metadata:
      skillbank_id: sk_0123456789abcdef
      kind: guard
      tools: [search]
      tags: [limits]
      status: active
      version: 3
      content_hash: sha256:...
      pinned: false
      lessons:                      # the structured lessons the body was rendered from
      - {kind: missing_tool, tool: search}
    ---

    Tell the user which tool is missing ...

Our own fields live under ``metadata`` (the spec's free-form mapping) so that other Agent Skills
readers accept the files unchanged. We never write ``allowed-tools``: in some hosts it pre-approves
tools, which is a permission decision an export must not make. When reading a folder written by
someone else, ``allowed-tools`` (a space-separated string) supplies the tools if
``metadata.tools`` is absent.

Reading is all-or-nothing: :func:`read_skill_dir` checks every file first and raises one
:class:`~skillbank.errors.SkillFileError` naming each bad file and why, so an import never
half-happens.

Over 500 lines because it holds both halves of one format; most of it is the reader's checks.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Iterable

import yaml
from pydantic import ValidationError

from skillbank.errors import SkillFileError
from skillbank.models import Skill, SkillContent, SkillKind, SkillStatus, error_message

__all__ = [
    "SKILL_FILE",
    "MAX_FILE_BYTES",
    "ALLOWED_KEYS",
    "ParsedSkill",
    "render_skill_md",
    "export_skills",
    "parse_skill_md",
    "read_skill_dir",
]

SKILL_FILE = "SKILL.md"
MAX_FILE_BYTES = 1024 * 1024  # 1 MB; larger files are refused without being read in full
# Top-level front-matter keys the Agent Skills spec allows; anything else is reported.
ALLOWED_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")

_KINDS = tuple(k.value for k in SkillKind)
_STATUSES = tuple(s.value for s in SkillStatus)


@dataclass
class ParsedSkill:
    """One SKILL.md as read: the content plus whatever skillbank metadata it carried.

    ``skill_id``/``status`` are ``None`` for files not written by skillbank. ``version`` and
    ``content_hash`` record what was exported; :attr:`edited` tells whether the content has
    changed since.
    """

    path: str
    content: SkillContent
    skill_id: str | None = None
    status: str | None = None
    pinned: bool = False
    version: int | None = None
    content_hash: str | None = None

    @property
    def edited(self) -> bool:
        """True when the file carries a content hash and the content no longer matches it."""
        return self.content_hash is not None and self.content_hash != self.content.hash()


# --------------------------------------------------------------------------------------- writing


class _Dumper(yaml.SafeDumper):
    """SafeDumper that double-quotes strings holding YAML's extra line breaks.

    PyYAML writes NEL/LS/PS (U+0085, U+2028, U+2029) unescaped in plain scalars, and a reader
    then folds them into spaces; double quotes escape them.
    """


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(ch in value for ch in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump_front(front: dict[str, Any]) -> str:
    options: dict[str, Any] = dict(
        Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
        width=float("inf"),
    )
    dumped = yaml.dump(front, **options)
    if yaml.safe_load(dumped) != front:  # belt and braces: never write what reads back differently
        dumped = yaml.dump(front, default_style='"', **options)
    return dumped


def render_skill_md(skill: Skill) -> str:
    """The SKILL.md text for ``skill``: front matter (name, description, metadata) and body."""
    content = skill.content
    front: dict[str, Any] = {
        "name": content.name,
        "description": content.description,
        "metadata": {
            "skillbank_id": skill.id,
            "kind": content.kind.value,
            "tools": list(content.tools),
            "tags": list(content.tags),
            "status": skill.status.value,
            "version": skill.version,
            "content_hash": skill.content_hash,
            "pinned": skill.pinned,
        },
    }
    # The lessons the body was rendered from, so an import gets the data back, not just prose.
    if content.lessons:
        front["metadata"]["lessons"] = [x.model_dump(mode="json", exclude_defaults=True) for x in content.lessons]
    if content.toolset:
        front["metadata"]["toolset"] = list(content.toolset)
    # yaml.safe_dump's representers (sort_keys=False, allow_unicode=True) plus the NEL/LS/PS fix
    # above. An unlimited width keeps each value on one line, with no folding that naive readers
    # would trip over; quoting and escapes (colons, newlines, quotes, control characters) are
    # PyYAML's.
    return f"---\n{_dump_front(front)}---\n\n{content.body}\n"


def export_skills(skills: Iterable[Skill], directory: str | os.PathLike[str]) -> list[Path]:
    """Write ``<directory>/<name>/SKILL.md`` for each skill and return the paths, in order.

    Creates the directories as needed. Each file is written atomically (a temporary file in the
    same folder, then ``os.replace``), so a reader never sees a half-written SKILL.md. An existing
    folder of the same name has its SKILL.md replaced; other files in it are left alone.
    Raises :class:`SkillFileError` before writing anything if two skills share a name.
    """
    skills = list(skills)
    root = Path(directory)
    seen: dict[str, str] = {}
    problems: dict[str, list[str]] = {}
    for skill in skills:
        if skill.name in seen:
            clash = str(root / skill.name / SKILL_FILE)
            problems.setdefault(clash, []).append(
                f"two skills are named {skill.name!r} ({seen[skill.name]} and {skill.id}); "
                "folder names must be unique"
            )
        seen.setdefault(skill.name, skill.id)
    if problems:
        reasons = "; ".join(r for rs in problems.values() for r in rs)
        raise SkillFileError(f"cannot export, nothing was written: {reasons}", problems)

    root.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for skill in skills:
        folder = root / skill.name
        folder.mkdir(exist_ok=True)
        target = folder / SKILL_FILE
        _atomic_write(target, render_skill_md(skill).encode("utf-8"))
        written.append(target)
    return written


def _atomic_write(target: Path, data: bytes) -> None:
    # os.open with 0o666 (not mkstemp's 0o600) so the file gets the usual umask-derived mode.
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------------------- reading


class _Invalid(Exception):
    """Internal: stop parsing one file with these reasons."""

    def __init__(self, *reasons: str, name: str | None = None, skill_id: str | None = None):
        super().__init__(*reasons)
        self.reasons = list(reasons)
        # What the file claims to be, when readable: lets a folder read flag duplicates among
        # files that are invalid for other reasons too.
        self.name = name
        self.skill_id = skill_id


def parse_skill_md(text: str | bytes, path: str | os.PathLike[str] = "<string>") -> ParsedSkill:
    """Parse one SKILL.md. ``text`` may be ``bytes``, which must be UTF-8.

    When ``path`` names a ``SKILL.md`` inside a folder, the skill's name must equal the folder's
    name (an Agent Skills rule). Raises :class:`SkillFileError` whose ``problems`` maps ``path``
    to every reason found.
    """
    path = str(path)
    try:
        return _parse(text, path)
    except _Invalid as exc:
        problems = {path: exc.reasons}
        raise SkillFileError(_summary(problems), problems) from None


def _parse(text: str | bytes, path: str) -> ParsedSkill:
    text = _as_text(text)
    front, body = _split_front_matter(text)
    data = _load_yaml(front)

    reasons: list[str] = []
    unknown = [k for k in data if k not in ALLOWED_KEYS]
    for key in unknown:
        reasons.append(
            f"unknown key {_show_key(key)} (allowed: {', '.join(ALLOWED_KEYS)}; "
            "put anything else under 'metadata')"
        )

    name = _required_str(data, "name", reasons)
    description = _required_str(data, "description", reasons)
    for key in ("license", "compatibility"):
        if key in data and not isinstance(data[key], str):
            reasons.append(f"{key} must be a string, not {_type_name(data[key])}")

    meta = data.get("metadata")
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        reasons.append(f"metadata must be a mapping of keys to values, not {_type_name(meta)}")
        meta = {}

    kind = meta.get("kind")
    if kind is None:
        kind = SkillKind.procedure.value
    elif not isinstance(kind, str) or kind not in _KINDS:
        reasons.append(
            f"metadata.kind {kind!r} is not a skill kind (use one of: {', '.join(_KINDS)})"
        )
        kind = None

    tools_source = "metadata.tools"
    if "tools" in meta:
        tools = _str_list(meta["tools"], "metadata.tools", reasons)
    elif "allowed-tools" in data:
        tools_source = "allowed-tools"
        tools = _allowed_tools(data["allowed-tools"], reasons)
    else:
        tools = []
    tags = _str_list(meta["tags"], "metadata.tags", reasons) if "tags" in meta else []
    toolset = _str_list(meta["toolset"], "metadata.toolset", reasons) if "toolset" in meta else []
    lessons = meta.get("lessons", [])
    if not isinstance(lessons, list) or not all(isinstance(x, dict) for x in lessons):
        reasons.append("metadata.lessons must be a list of lessons (mappings with a 'kind'); "
                       "remove it to import the body as free guidance")
        lessons = None

    skill_id = meta.get("skillbank_id")
    if skill_id is not None and (not isinstance(skill_id, str) or not skill_id.strip()):
        reasons.append(f"metadata.skillbank_id must be a non-empty string, not {skill_id!r}")
        skill_id = None
    status = meta.get("status")
    if status is not None and (not isinstance(status, str) or status not in _STATUSES):
        reasons.append(
            f"metadata.status {status!r} is not a skill status (use one of: {', '.join(_STATUSES)})"
        )
        status = None
    pinned = meta.get("pinned", False)
    if pinned is None:
        pinned = False
    elif not isinstance(pinned, bool):
        reasons.append(f"metadata.pinned must be true or false, not {pinned!r}")
        pinned = False
    version = meta.get("version")
    if version is not None and (
        isinstance(version, bool) or not isinstance(version, int) or version < 1
    ):
        reasons.append(f"metadata.version must be a whole number of at least 1, not {version!r}")
        version = None
    chash = meta.get("content_hash")
    if chash is not None and not isinstance(chash, str):
        reasons.append(f"metadata.content_hash must be a string, not {_type_name(chash)}")
        chash = None

    # Agent Skills rule: the folder is named after the skill.
    pure = PurePath(path)
    folder = pure.parent.name if pure.name == SKILL_FILE else ""
    if folder and isinstance(name, str) and name != folder:
        reasons.append(
            f"name {name!r} does not match its folder name {folder!r} "
            "(rename the folder or change the name)"
        )

    # Validate what we have with SkillContent's own rules. Fields that already failed above are
    # replaced by a valid placeholder and their (duplicate) errors ignored, so every problem in the
    # file is reported at once.
    placeholders = {"name": "x", "description": "x", "body": "x", "kind": "procedure", "lessons": ()}
    values: dict[str, Any] = {
        "name": name,
        "description": description,
        "body": body,
        "kind": kind,
        "tools": tuple(tools) if tools is not None else None,
        "tags": tuple(tags) if tags is not None else None,
        "toolset": tuple(toolset) if toolset is not None else None,
        "lessons": tuple(lessons) if lessons is not None else None,
    }
    skipped = {k for k, v in values.items() if v is None}
    candidate: dict[str, Any] = {k: (placeholders.get(k, ()) if v is None else v) for k, v in values.items()}
    content = None
    try:
        content = SkillContent(**candidate)
    except ValidationError as exc:
        labels = {"tools": tools_source}
        for err in exc.errors():
            field = str(err["loc"][0]) if err["loc"] else ""
            if field in skipped:
                continue
            reasons.append(_pydantic_reason(field, labels.get(field, field), err))

    if reasons:
        raise _Invalid(*reasons, name=name, skill_id=skill_id)
    assert content is not None
    return ParsedSkill(
        path=path,
        content=content,
        skill_id=skill_id,
        status=status,
        pinned=pinned,
        version=version,
        content_hash=chash,
    )


def _as_text(text: str | bytes) -> str:
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if len(raw) > MAX_FILE_BYTES:
            raise _Invalid(_too_large(len(raw)))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Invalid(_not_utf8(exc)) from None
    if not isinstance(text, str):
        raise _Invalid(f"expected the file's text (str or bytes), not {_type_name(text)}")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise _Invalid(
            f"not valid Unicode: unpaired surrogate {text[exc.start]!r} at character {exc.start}"
        ) from None
    if size > MAX_FILE_BYTES:
        raise _Invalid(_too_large(size))
    return text


def _split_front_matter(text: str) -> tuple[str, str]:
    """``(front matter, body)``; the body is everything after the closing ``---`` line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    # Only "\n" (optionally preceded by "\r") ends a line here; other Unicode line breaks are
    # ordinary characters of the front matter or body.
    lines = text.split("\n")
    if _strip_eol(lines[0]) != "---":
        raise _Invalid(
            "no front matter: the file must start with a '---' line, then YAML with name and "
            "description, then another '---' line"
        )
    start = offset = len(lines[0]) + 1
    for line in lines[1:]:
        if _strip_eol(line) == "---":
            return text[start:offset], text[offset + len(line) + 1 :]
        offset += len(line) + 1
    raise _Invalid("front matter is not closed: add a '---' line after the YAML, before the body")


def _strip_eol(line: str) -> str:
    return line.rstrip(" \t\r")


def _load_yaml(front: str) -> dict[Any, Any]:
    try:
        data = yaml.safe_load(front)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = ""
        if mark is not None:
            # +2: lines count from 1, and the opening '---' is line 1 of the file.
            where = f" at line {mark.line + 2}, column {mark.column + 1}"
        problem = exc.problem or exc.context or "syntax error"
        raise _Invalid(f"YAML syntax error in front matter{where}: {problem}") from None
    except yaml.YAMLError as exc:
        raise _Invalid(f"YAML error in front matter: {_one_line(str(exc))}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # PyYAML's constructors can raise these (e.g. an impossible date like 2021-02-30).
        detail = _one_line(str(exc)) or type(exc).__name__
        raise _Invalid(f"YAML error in front matter: {detail}") from None
    if data is None:
        raise _Invalid("front matter is empty: add at least 'name' and 'description'")
    if not isinstance(data, dict):
        raise _Invalid(
            f"front matter must be a YAML mapping (key: value lines), not {_type_name(data)}"
        )
    return data


def _required_str(data: dict[Any, Any], key: str, reasons: list[str]) -> str | None:
    if key not in data:
        reasons.append(f"missing required key {key!r}")
        return None
    value = data[key]
    if value is None:
        reasons.append(f"{key} is empty")
        return None
    if not isinstance(value, str):
        reasons.append(f"{key} must be a string, not {_type_name(value)} ({_short(value)})")
        return None
    return value


def _str_list(value: Any, label: str, reasons: list[str]) -> list[str] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        reasons.append(f"{label} must be a list of strings, not {_type_name(value)}")
        return None
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        reasons.append(
            f"{label} must be a list of strings; {_short(bad[0])} is {_type_name(bad[0])}"
        )
        return None
    return list(value)


def _allowed_tools(value: Any, reasons: list[str]) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)  # not the spec's form, but unambiguous
    reasons.append(f"allowed-tools must be a space-separated string, not {_type_name(value)}")
    return None


def _pydantic_reason(field: str, label: str, err: Any) -> str:
    msg = _one_line(error_message(err))
    if not field or msg.lower().startswith(field):
        return msg
    return f"{label}: {msg}"


# ------------------------------------------------------------------------------ reading a folder


def read_skill_dir(directory: str | os.PathLike[str], *,
                   consequence: str = "nothing was read") -> list[ParsedSkill]:
    """Read every ``*/SKILL.md`` under ``directory`` (one level deep), sorted by path.

    ``directory`` may also be a single skill folder (holding ``SKILL.md`` itself) or the path of
    a ``SKILL.md``. Every file is validated before anything is returned; if any is invalid, or
    two files share a name or skillbank id, one :class:`SkillFileError` lists each bad file and
    why, and nothing is returned; its message says ``consequence`` (an import says "nothing was
    imported"). Folders whose names start with ``.`` are skipped.
    """
    root = Path(directory)
    problems: dict[str, list[str]] = {}
    if root.is_file() and root.name == SKILL_FILE:
        files = [root]
    elif not root.exists():
        problems[str(root)] = ["no such directory"]
        raise SkillFileError(_summary(problems, "cannot read skills"), problems)
    elif not root.is_dir():
        problems[str(root)] = [f"not a directory (or a {SKILL_FILE} file)"]
        raise SkillFileError(_summary(problems, "cannot read skills"), problems)
    elif (root / SKILL_FILE).exists():
        files = [root / SKILL_FILE]
    else:
        files = []
        for sub in sorted(root.iterdir()):
            if sub.name.startswith(".") or not sub.is_dir():
                continue
            candidate = sub / SKILL_FILE
            if candidate.exists():
                files.append(candidate)
                continue
            near = [p.name for p in _safe_iterdir(sub) if p.name.lower() == SKILL_FILE.lower()]
            if near:
                problems[str(sub / near[0])] = [
                    f"the file must be named exactly {SKILL_FILE!r}, not {near[0]!r}"
                ]

    parsed: list[ParsedSkill] = []
    claims: list[tuple[str, str | None, str | None]] = []  # (path, name, skillbank_id)
    for file in files:
        key = str(file)
        try:
            result = _parse(_read_capped(file), key)
        except _Invalid as exc:
            problems.setdefault(key, []).extend(exc.reasons)
            claims.append((key, exc.name, exc.skill_id))
        else:
            parsed.append(result)
            claims.append((key, result.content.name, result.skill_id))

    _check_unique([(path, name) for path, name, _ in claims], "name", problems)
    _check_unique([(path, sid) for path, _, sid in claims], "skillbank_id", problems)

    if problems:
        raise SkillFileError(_summary(problems, consequence), problems)
    return parsed


def _safe_iterdir(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _read_capped(file: Path) -> bytes:
    """The file's bytes, refusing non-regular and over-large files without reading them in full."""
    try:
        st = file.stat()
        if not file.is_file():
            raise _Invalid("not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise _Invalid(_too_large(st.st_size))
        with open(file, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _Invalid(f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:  # grew since stat
        raise _Invalid(_too_large(len(data), at_least=True))
    return data


def _check_unique(
    claims: list[tuple[str, str | None]], label: str, problems: dict[str, list[str]]
) -> None:
    groups: dict[str, list[str]] = {}
    for path, value in claims:
        if value is not None:
            groups.setdefault(value, []).append(path)
    for value, paths in groups.items():
        if len(paths) < 2:
            continue
        for path in paths:
            others = ", ".join(q for q in paths if q != path)
            problems.setdefault(path, []).append(f"duplicate {label} {value!r}: also in {others}")


# ------------------------------------------------------------------------------------- messages


def _summary(problems: dict[str, list[str]], consequence: str = "") -> str:
    count = len(problems)
    head = f"{count} invalid {SKILL_FILE} file{'s' if count != 1 else ''}"
    if consequence:
        head += f" ({consequence})"
    if count == 1:
        (path, reasons), = problems.items()
        return f"{head}: {path}: {'; '.join(reasons)}"
    lines = [f"{head}:"]
    for path in sorted(problems):
        lines.append(f"  {path}: {'; '.join(problems[path])}")
    return "\n".join(lines)


def _too_large(size: int, at_least: bool = False) -> str:
    more = "more than " if at_least else ""
    return f"file too large: {more}{size} bytes; the limit is {MAX_FILE_BYTES} bytes (1 MB)"


def _not_utf8(exc: UnicodeDecodeError) -> str:
    byte = exc.object[exc.start : exc.start + 1]
    return (
        f"not UTF-8: invalid byte 0x{byte.hex()} at byte offset {exc.start}; "
        "save the file as UTF-8"
    )


def _type_name(value: Any) -> str:
    names = {
        dict: "a mapping",
        list: "a list",
        str: "a string",
        bool: "true/false",
        int: "a number",
        float: "a number",
        type(None): "empty",
    }
    return names.get(type(value), f"a {type(value).__name__}")


def _show_key(key: Any) -> str:
    return repr(key) if isinstance(key, str) else _short(key)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(text: str) -> str:
    return " ".join(text.split())
