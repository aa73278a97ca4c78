"""Shared pieces of the ``skillbank`` command: options, bank opening, output and errors.

Command modules import from here (never from ``skillbank.cli`` itself, which imports them).
Nothing heavy is imported at module level: the bank's index (Chroma) and the embedding model
load only when a command needs them.
"""

from __future__ import annotations

import difflib
import json
import sys
from contextlib import contextmanager
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NoReturn

from rich.console import Console
from rich.text import Text

from skillbank.errors import CliError, SkillBankError, SkillFileError

if TYPE_CHECKING:  # pragma: no cover
    from rich.table import Table

    from skillbank.bank import SkillBank
    from skillbank.models import Skill

# -- consoles ------------------------------------------------------------------------------------
# Made per call so the width (COLUMNS) and streams are read when a command runs, not at import.


def console() -> Console:
    return Console(highlight=False)


def err_console() -> Console:
    return Console(stderr=True, highlight=False)


# -- errors --------------------------------------------------------------------------------------


def error_message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: {exc.filename}"
    text = str(exc) or type(exc).__name__
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def report_error(exc: BaseException) -> None:
    """Print ``error: <message>`` in red on stderr; a SKILL.md error also lists each bad file."""
    err = err_console()
    if isinstance(exc, SkillFileError) and exc.problems:
        head = str(exc).splitlines()[0].rstrip(":")
        if len(exc.problems) == 1:
            head = head.split(": ", 1)[0] if ": " in head else head
        err.print(Text(f"error: {head}", style="red"), soft_wrap=True)
        for path in sorted(exc.problems):
            err.print(Text(f"  {path}: {'; '.join(exc.problems[path])}", style="red"), soft_wrap=True)
        return
    err.print(Text(f"error: {error_message(exc)}", style="red"), soft_wrap=True)


def fail(message: str) -> NoReturn:
    raise CliError(message)


HANDLED_ERRORS = (SkillBankError, FileNotFoundError, PermissionError, IsADirectoryError,
                  NotADirectoryError)


# -- opening the bank ----------------------------------------------------------------------------


@contextmanager
def open_bank(path: str | Path | None, embedder: str | None = None, *, create: bool = False,
              read_only: bool = False) -> Iterator["SkillBank"]:
    """The bank at ``path`` (a folder, or a postgresql:// URL; never created unless ``create``);
    ``read_only`` for commands that only read, so that they cannot change a single byte of it."""
    from skillbank.bank import SkillBank

    bank = SkillBank.open(path, embedder=embedder or None, create=create, read_only=read_only)
    try:
        yield bank
    finally:
        bank.close()


def get_skill(bank: "SkillBank", ref: str) -> "Skill":
    """The skill ``ref`` (an id or a name) names; a miss suggests the closest names."""
    from skillbank.errors import SkillNotFoundError

    try:
        return bank.get_skill(ref)
    except SkillNotFoundError as exc:
        close = difflib.get_close_matches(ref, [s.name for s in bank.list_skills()], n=3, cutoff=0.6)
        if not close:
            raise
        raise SkillNotFoundError(f"{exc}. Did you mean {' or '.join(map(repr, close))}?") from None


def held_for_review(skill: "Skill") -> Text:
    """What to tell someone whose skill the injection lint quarantined, and what to do next."""
    return Text(f"{skill.name} is quarantined and will not be injected: {skill.note or 'flagged by a lint'}. "
                f"Read it with `skillbank candidates show {skill.name}`; if it is safe, "
                f"`skillbank candidates promote {skill.name} --force` makes it active.", style="yellow")


# -- output helpers ------------------------------------------------------------------------------


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def print_json(data: Any, *, indent: int | None = 2) -> None:
    """Valid JSON on stdout and nothing else (``indent=None``: one line, for JSON Lines)."""
    sys.stdout.write(json.dumps(data, indent=indent, default=_default, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def short_time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else "-"


def short_hash(value: str | None, n: int = 12) -> str:
    if not value:
        return "-"
    return value.split(":", 1)[-1][:n]


def name_column(table: "Table", names: list[str], header: str = "name", style: str = "bold") -> None:
    """Add a column for skill names that is never cut or wrapped: as wide as the longest name,
    so each can be copied into another command; the other columns wrap to make room."""
    table.add_column(header, style=style, no_wrap=True, min_width=max((len(n) for n in names), default=4))


def rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def skill_json(skill: "Skill", *, body: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "kind": skill.kind.value,
        "tools": list(skill.tools),
        "tags": list(skill.tags),
        "status": skill.status.value,
        "pinned": skill.pinned,
        "version": skill.version,
        "content_hash": skill.content_hash,
        "note": skill.note,
        "created_at": iso(skill.created_at),
        "updated_at": iso(skill.updated_at),
        "stats": {
            "uses": skill.stats.uses,
            "successes": skill.stats.successes,
            "failures": skill.stats.failures,
            "success_rate": skill.stats.success_rate,
            "last_used_at": iso(skill.stats.last_used_at),
        },
    }
    if body:
        data["body"] = skill.body
    return data


def read_body(body: str | None, body_file: Path | None, *, required: bool) -> str | None:
    """The body from ``--body`` or ``--body-file`` (``-`` reads stdin); never both."""
    if body is not None and body_file is not None:
        fail("pass either --body or --body-file, not both")
    if body_file is not None:
        if str(body_file) == "-":
            return sys.stdin.read()
        try:
            return body_file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            fail(f"{body_file} is not UTF-8 text")
    if body is None and required:
        fail("a skill needs a body: pass --body TEXT or --body-file PATH (- for stdin)")
    return body
