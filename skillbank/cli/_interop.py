"""``skillbank export`` / ``skillbank import``: Agent Skills ``SKILL.md`` folders."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.text import Text

from skillbank.cli._common import console, fail, open_bank
from skillbank.cli.options import DirOption, EmbedderOption
from skillbank.models import SkillStatus


def export(
    directory: Annotated[Path, typer.Argument(help="Folder to write <name>/SKILL.md into.")],
    status: Annotated[SkillStatus,
                      typer.Option("--status", help="Export skills with this status.")] = SkillStatus.active,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Export skills as SKILL.md folders."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        paths = bank.export_skills(directory, status=status)
    out = console()
    out.print(f"Exported {len(paths)} {status.value} skill{'s' if len(paths) != 1 else ''} "
              f"to {escape(str(directory))}.")
    for path in paths:
        out.print(f"  {escape(str(path))}", soft_wrap=True)


def import_(
    directory: Annotated[Path, typer.Argument(help="Folder of <name>/SKILL.md folders (or one SKILL.md).")],
    allow_unsafe: Annotated[bool, typer.Option(
        "--allow-unsafe", help="Import skills the injection lint flags with their file's status "
        "instead of quarantined (the findings go in their notes).")] = False,
    trust: Annotated[bool, typer.Option(
        "--trust", help="Keep each file's status (active unless it says otherwise) instead of "
        "importing every skill as a candidate: only for folders you wrote or reviewed.")] = False,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Import SKILL.md folders; unchanged skills are left alone.

    New skills and changed ones arrive as candidates (a change of an active skill as its proposed
    edit); nothing is imported if any file is invalid.
    """
    from skillbank._intake import ImportChange
    from skillbank._skillmd import SKILL_FILE

    if not directory.exists():
        fail(f"no such folder: {directory}; pass a folder of <name>/{SKILL_FILE} folders "
             f"(as `skillbank export` writes) or one {SKILL_FILE}")
    with open_bank(bank_dir, embedder) as bank:
        report = bank.import_skills(directory, allow_unsafe=allow_unsafe, trusted=trust)
    out = console()
    if not report.items:
        out.print(f"Nothing was imported: no <name>/{SKILL_FILE} folders in {escape(str(directory))}.")
        return
    new, changed = report.of(ImportChange.new), report.of(ImportChange.changed)
    proposed, unchanged = report.of(ImportChange.proposed), report.of(ImportChange.unchanged)
    total = len(report.items)
    counts = f"{len(new)} new, {len(changed) + len(proposed)} changed, {len(unchanged)} unchanged"
    if not report.written:
        out.print(f"Nothing changed: the {total} skill file{'s' if total != 1 else ''} in "
                  f"{escape(str(directory))} match the bank ({counts}).", soft_wrap=True)
        return
    out.print(f"Imported {len(report.written)} of {total} skill file{'s' if total != 1 else ''} from "
              f"{escape(str(directory))}: {counts}.", soft_wrap=True)
    for i in new + changed:
        what = "new" if i.change == ImportChange.new else "new version"
        out.print(f"  {escape(i.skill.name)}: {what} v{i.skill.version}, {i.skill.status.value}", soft_wrap=True)
    for i in proposed:
        assert i.target is not None  # a proposed edit names its target
        out.print(f"  {escape(i.target.name)}: proposed edit (v{i.target.version} stays active until "
                  f"promoted), {i.skill.status.value}", soft_wrap=True)
    waiting = [i for i in report.items if i.change != ImportChange.unchanged
               and i.skill.status == SkillStatus.candidate]
    if waiting:
        out.print(f"{len(waiting)} arrived as candidate{'s' if len(waiting) != 1 else ''} (imported text is "
                  "never injected until promoted): read one with `skillbank candidates show NAME`, promote "
                  "it with `skillbank candidates promote NAME`, or import with --trust to keep the files' "
                  "status.", soft_wrap=True)
    held = [i.skill for i in report.items if i.change != ImportChange.unchanged
            and i.skill.status == SkillStatus.quarantined]
    if held:
        out.print(Text(f"{len(held)} quarantined by the injection lint (never injected until "
                       "reviewed):", style="yellow"))
        for s in held:
            out.print(Text(f"  {s.name}: {s.note}", style="yellow"), soft_wrap=True)
        out.print("Read each with `skillbank candidates show NAME`; promote one with "
                  "`skillbank candidates promote NAME --force` if it is safe.")


class DetectorChoice(str, Enum):
    embedding = "embedding"
    llm = "llm"
    both = "both"


def lint(
    detector_choice: Annotated[Optional[DetectorChoice], typer.Option(
        "--detector", help="The detector behind the patterns: embedding (MiniLM), llm (a classifier "
        "prompt on the local model: skillbank\\[local] and `skillbank model fetch`) or both (the "
        "embedding detector as the LLM's first stage). Default: "
        "the one SKILLBANK_INJECTION_DETECTOR names, else embedding.")] = None,
    patterns_only: Annotated[bool, typer.Option(
        "--patterns-only", help="Re-check with the pattern layer alone (no detector behind it).")] = False,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Re-check every stored version of every skill with the injection screens; exit 1 if any is flagged.

    Versions stored before a screen existed (or with --allow-unsafe) get the same patterns and
    detector every new version meets. Quarantined versions are listed too: they were already held.
    """
    from skillbank._screen import lint_incoming
    from skillbank._screen.second_layer import active_detector, configured_mode, unavailable

    mode = "off" if patterns_only else (detector_choice.value if detector_choice else
                                        configured_mode(default="embedding"))
    detector = active_detector(mode)
    out = console()
    flagged = checked = 0
    with open_bank(bank_dir, embedder) as bank:
        for skill in bank.list_skills():
            for version in bank.history(skill.id):
                checked += 1
                result = lint_incoming(version.content, detector=detector or False)
                if not result.ok:
                    flagged += 1
                    out.print(Text(f"{skill.name} v{version.version} ({version.status.value}): {result.reason}",
                                   style="yellow"), soft_wrap=True)
    layers = "patterns" if detector is None else f"patterns and the {detector.name}"
    missing = unavailable(mode)
    if missing:
        layers += " (" + "; ".join(f"{label} cannot run: {why}" for label, why in missing.items()) + \
            (": only the pattern layer is active)" if detector is None else ")")
    out.print(f"Checked {checked} version{'s' if checked != 1 else ''} with {layers}: {flagged} flagged.",
              soft_wrap=True)
    if flagged:
        raise typer.Exit(1)
