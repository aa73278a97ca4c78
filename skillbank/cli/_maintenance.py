"""Bank-level commands: ``init``, ``stats``, ``reindex``, ``verify`` and ``copy``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

from skillbank.cli._common import console, open_bank, print_json
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption
from skillbank.cli._rows import Column, print_rows


def init(
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Create a skill bank (or confirm that one exists)."""
    from skillbank.errors import NotABankError

    try:
        with open_bank(bank_dir, embedder, create=False) as bank:
            count, where = len(bank.list_skills()), bank.location
        console().print(f"Skill bank already exists at {escape(where)} ({count} skills).")
    except NotABankError:
        with open_bank(bank_dir, embedder, create=True) as bank:
            where = bank.location
        console().print(f"Created a skill bank at {escape(where)}.")


def stats(
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Show counts of skills, runs, labels and limit events."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        data = bank.stats()
    if as_json:
        print_json(data)
        return
    labels, values = [], []
    for key, value in data.items():
        if key == "path":
            continue
        labels.append(key.replace("_", " "))
        values.append(", ".join(f"{k} {v}" for k, v in value.items()) or "-" if isinstance(value, dict)
                      else str(value))
    # Plain lines, every value whole (a snapshot id is for copying).
    print_rows(console(), [Column("")], [[Text(label, style="bold")] for label in labels], texts=values,
               title=f"Skill bank {data.get('path', '')}")


def reindex(
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Rebuild the search index and the caches (current rows, cached vectors) from the versions."""
    with open_bank(bank_dir, embedder) as bank:
        counts = bank.reindex()
    repaired = ""
    if counts.get("rebuilt_rows") or counts.get("dropped_vectors"):
        repaired = (f" Rebuilt {counts.get('rebuilt_rows', 0)} damaged skill row(s) from their versions "
                    f"and re-embedded or dropped {counts.get('dropped_vectors', 0)} damaged cached vector(s).")
    console().print(f"Reindexed: {counts.get('upserted', 0)} skills indexed, "
                    f"{counts.get('deleted', 0)} removed.{repaired}")


def verify(
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Check the change log, every version's hash, the caches and the index; exit 1 on any problem."""
    with open_bank(bank_dir, embedder) as bank:
        report = bank.verify()
    if as_json:
        print_json({"ok": report.ok, "events": report.events, "versions": report.versions,
                    "problems": list(report.problems)})
    elif report.ok:
        console().print(Text(f"OK: {report.events} change-log events and {report.versions} versions "
                             "verified; the index matches the database.", style="green"))
    else:
        out = console()
        n = len(report.problems)
        out.print(Text(f"FAILED: {n} problem{'s' if n != 1 else ''} "
                       f"({report.events} events, {report.versions} versions checked)", style="bold red"))
        for problem in report.problems:
            out.print(Text(f"  - {problem}", style="red"), soft_wrap=True)
    if not report.ok:
        raise typer.Exit(1)


def copy(
    locations: Annotated[list[str], typer.Argument(
        metavar="[SRC] DST", help="SRC DST, or only DST to copy the -d bank. Each is a folder or a PostgreSQL "
             "connection string (postgresql://user@host/db); DST must be new or empty.")],
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Copy a bank to another store (SQLite <-> PostgreSQL): versions, change log, runs."""
    from skillbank.bank import SkillBank
    from skillbank.cli._common import fail
    from skillbank.store._transfer import copy_store

    if len(locations) not in (1, 2):
        fail("copy takes SRC DST (or DST alone, with the source from -d / SKILLBANK_DIR)")
    source, destination = locations if len(locations) == 2 else (str(bank_dir), locations[0])
    with SkillBank.open(source, create=False, embedder=embedder) as src, \
            SkillBank.open(destination, create=True, embedder=embedder) as dst:
        counts = copy_store(src.store, dst.store)
        report = dst.verify(check_index=False)  # the index is derived: built on first search
    console().print(
        f"Copied {counts['skills']} skills ({counts['skill_versions']} versions, "
        f"{counts['events']} change-log events) and {counts['trajectories']} runs "
        f"({counts['steps']} steps) from {escape(src.location)} to {escape(dst.location)}.")
    if not report.ok:
        for problem in report.problems:
            console().print(Text(f"  - {problem}", style="red"), soft_wrap=True)
        raise typer.Exit(1)
    console().print(Text(f"verify on the copy: OK ({report.events} events, {report.versions} versions).",
                         style="green"))
