"""``skillbank export`` / ``skillbank import``: Agent Skills ``SKILL.md`` folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from skillbank.cli._common import DirOption, EmbedderOption, console, open_bank
from skillbank.models import SkillStatus


def export(
    directory: Annotated[Path, typer.Argument(help="Folder to write <name>/SKILL.md into.")],
    status: Annotated[SkillStatus, typer.Option("--status", help="Export skills with this status.")] = SkillStatus.active,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Export skills as SKILL.md folders."""
    with open_bank(bank_dir, embedder) as bank:
        paths = bank.export_skills(directory, status=status)
    out = console()
    out.print(f"Exported {len(paths)} {status.value} skill{'s' if len(paths) != 1 else ''} "
              f"to {escape(str(directory))}.")
    for path in paths:
        out.print(f"  {escape(str(path))}", soft_wrap=True)


def import_(
    directory: Annotated[Path, typer.Argument(help="Folder of <name>/SKILL.md folders (or one SKILL.md).")],
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Import SKILL.md folders; nothing is imported if any file is invalid."""
    with open_bank(bank_dir, embedder) as bank:
        skills = bank.import_skills(directory)
    out = console()
    out.print(f"Imported {len(skills)} skill{'s' if len(skills) != 1 else ''} from {escape(str(directory))}.")
    for s in skills:
        out.print(f"  {escape(s.name)} ({s.id}) v{s.version}, {s.status.value}")
