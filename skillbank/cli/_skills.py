"""``skillbank skills ...``: list, show, add, edit and curate skills and their versions."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich import box
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from skillbank.cli._common import (console, fail, get_skill, held_for_review, iso, name_column, open_bank, print_json,
                                   rate, read_body, short_hash, short_time, skill_json)
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption
from skillbank.cli._rows import Column, print_rows
from skillbank.cli._live import print_live_view
from skillbank.errors import SkillBankError
from skillbank.live._decisions import acknowledge_rollback, pending_rollbacks
from skillbank.live._view import live_view
from skillbank.models import SkillKind, SkillStatus
from skillbank._provenance import text_source

app = typer.Typer(
    help="List, show, add, edit and curate skills and their versions.",
    no_args_is_help=True,
)

SkillId = Annotated[str, typer.Argument(help="Skill id (sk_...) or name.")]
BodyOption = Annotated[Optional[str], typer.Option("--body", help="Markdown instructions.")]
BodyFileOption = Annotated[
    Optional[Path],
    typer.Option("--body-file", help="Read the body from this file (- for stdin).", dir_okay=False),
]

_STATUS_STYLE = {"active": "green", "candidate": "cyan", "retired": "dim", "quarantined": "red"}


def _status(value: str) -> Text:
    return Text(value, style=_STATUS_STYLE.get(value, ""))


# -- reading -------------------------------------------------------------------------------------


def request_kind() -> Any:
    """The kind of request ``skillbank monitor`` reads runs by (imported here, when needed: the
    evolution package is large)."""
    from skillbank.evolution._templates import request_kind as kind

    return kind


def proposed_edits(bank: Any, skills: list[Any]) -> dict[str, Any]:
    """Of ``skills``, the draft rows that hold proposed edits of another skill, each mapped to
    the skill it edits (drafts whose target is gone are left out: they list as skills)."""
    found = {}
    ids = {s.id for s in skills}
    for draft_id, target_id in bank.drafts.targets().items():
        if draft_id in ids:
            with contextlib.suppress(SkillBankError):
                found[draft_id] = bank.get_skill(target_id)
    return found


@app.command("list")
def list_skills(
    status: Annotated[Optional[SkillStatus], typer.Option("--status", help="Only this status.")] = None,
    kind: Annotated[Optional[SkillKind], typer.Option("--kind", help="Only this kind.")] = None,
    tag: Annotated[Optional[str], typer.Option("--tag", help="Only skills with this tag.")] = None,
    wide: Annotated[
        bool, typer.Option("--wide", "-w", help="Also show ids, tags and tools.")
    ] = False,
    as_json: JsonOption = False,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """List skills with their status, version and success rate (--wide: ids, tags, tools too)."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        rows = bank.list_skills(status=status, kind=kind.value if kind else None, tag=tag, drafts=True)
        edits = proposed_edits(bank, rows)
        waiting = pending_rollbacks(bank, [s.id for s in rows])
    skills = [s for s in rows if s.id not in edits]
    if as_json:
        print_json([{**skill_json(s, body=False),
                     "proposed_edit_of": edits[s.id].name if s.id in edits else None,
                     "rolled_back_by_monitor": waiting[s.id].as_dict() if s.id in waiting else None} for s in rows])
        return
    if not rows:
        console().print("No skills" + (" match those filters." if (status or kind or tag) else " yet; add one "
                        "with `skillbank skills add`."))
        return
    # One line per skill, names in full (they are what other commands take); --wide adds ids,
    # tags and tools.
    columns = [Column("name")] + ([Column("id")] if wide else []) + [
        Column("kind"), Column("status"), Column("ver", right=True), Column("pin"),
        Column("uses", right=True), Column("ok", right=True)]
    table = []
    for s in skills:
        cells: list[Any] = [Text(s.name, style="bold")] + ([s.id] if wide else []) + [
            s.kind.value, _status(s.status.value + ("!" if s.id in waiting else "")), f"v{s.version}",
            "yes" if s.pinned else "", str(s.stats.uses), rate(s.stats.success_rate)]
        table.append(cells)
    texts = [", ".join(filter(None, [", ".join(s.tags) and f"tags: {', '.join(s.tags)}",
                                     ", ".join(s.tools) and f"tools: {', '.join(s.tools)}"]))
             for s in skills] if wide else None
    title = f"{len(skills)} skill{'s' if len(skills) != 1 else ''}"
    if edits:
        title += f" and {len(edits)} proposed edit{'s' if len(edits) != 1 else ''} of them (below)"
    out = console()
    print_rows(out, columns, table, title=title, text_header="tags and tools", texts=texts, stack=not wide,
               caption=None if wide else "--wide for ids, tags and tools")
    if edits:
        out.print()
        print_rows(out, [Column("proposed edit"), Column("of skill"), Column("status"), Column("ver", right=True)],
                   [[Text(s.name, style="bold"), edits[s.id].name, _status(s.status.value), f"v{s.version}"]
                    for s in rows if s.id in edits],
                   caption="An edit waits in a row of its own until promoted into its skill "
                           "(`skillbank candidates list`).")
    if waiting:
        out.print()
        by_id = {s.id: s for s in rows}
        print_rows(out, [Column("rolled back by the monitor (retired!)"), Column("as"), Column("ver", right=True),
                         Column("when")],
                   [[Text(by_id[sid].name, style="bold"), w.action.value, f"v{w.version}", short_time(w.at)]
                    for sid, w in sorted(waiting.items(), key=lambda item: by_id[item[0]].name)])
        out.print(Text("Its live effect was below zero. Read it (`skillbank skills show NAME`) and acknowledge "
                       "it (`skillbank skills ack NAME`).", style="dim"))


@app.command("show")
def show(
    skill_id: SkillId,
    as_json: JsonOption = False,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Show one skill's fields, statistics and body."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        s = get_skill(bank, skill_id)
        source = text_source(bank.history(s.id))
        live = live_view(bank, s.id, kind_of=request_kind())
    if as_json:
        print_json({**skill_json(s), "source": str(source) if source else None, "live": live.as_dict()})
        return
    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold")
    fields.add_column()
    fields.add_row("id", s.id)
    fields.add_row("description", escape(s.description))
    fields.add_row("kind", s.kind.value)
    fields.add_row("status", _status(s.status.value))
    fields.add_row("version", f"v{s.version}  ({short_hash(s.content_hash)})")
    fields.add_row("source", escape(str(source)) if source else "-")
    fields.add_row("pinned", "yes" if s.pinned else "no")
    fields.add_row("tools", escape(", ".join(s.tools)) or "-")
    fields.add_row("tags", escape(", ".join(s.tags)) or "-")
    fields.add_row("uses", f"{s.stats.uses} ({s.stats.successes} ok, {s.stats.failures} failed; "
                           f"success rate {rate(s.stats.success_rate)})")
    fields.add_row("last used", short_time(s.stats.last_used_at))
    fields.add_row("created", short_time(s.created_at))
    fields.add_row("updated", short_time(s.updated_at))
    if s.note:
        fields.add_row("note", escape(s.note))
    out = console()
    out.print(Panel(fields, title=Text(s.name, style="bold"), title_align="left"))
    out.print(Markdown(s.body))
    out.print()
    print_live_view(out, live)


@app.command("history")
def history(
    skill_id: SkillId,
    as_json: JsonOption = False,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Show every version of a skill: who changed it, why and when."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        skill = get_skill(bank, skill_id)
        versions = bank.history(skill.id)
    if as_json:
        print_json([
            {"version": v.version, "status": v.status.value, "pinned": v.pinned,
             "author": v.author, "reason": v.reason, "provenance": list(v.provenance),
             "content_hash": v.content_hash, "parent_hash": v.parent_hash,
             "created_at": iso(v.created_at), "name": v.content.name}
            for v in versions
        ])
        return
    print_rows(console(), [Column("ver", right=True), Column("status"), Column("author"),
                           Column("created"), Column("hash"), Column("provenance", right=True)],
               [[f"v{v.version}", _status(v.status.value), v.author, short_time(v.created_at),
                 Text(short_hash(v.content_hash), style="dim"), str(len(v.provenance))] for v in versions],
               title=f"{skill.name} ({skill.id})", text_header="reason", texts=[v.reason for v in versions])


@app.command("diff")
def diff(
    skill_id: SkillId,
    v1: Annotated[Optional[int], typer.Argument(help="Older version number (default: the one before V2).")] = None,
    v2: Annotated[Optional[int], typer.Argument(help="Newer version number (default: the current one).")] = None,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Show a coloured diff between two versions of a skill (default: previous and current)."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        skill = get_skill(bank, skill_id)
        v2 = skill.version if v2 is None else v2
        v1 = v2 - 1 if v1 is None else v1
        if v1 < 1:
            fail(f"{skill.name} has only v{v2}: there is no earlier version to compare it with")
        text = bank.diff(skill.id, v1, v2)
    out = console()
    if not text.strip():
        out.print(f"v{v1} and v{v2} are identical.")
        return
    for line in text.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        out.print(Text(line, style=style), soft_wrap=True)


# -- writing -------------------------------------------------------------------------------------


@app.command("add")
def add(
    name: Annotated[str, typer.Option("--name", help="Lower-case, hyphenated name, e.g. decline-missing-tool.")],
    description: Annotated[str, typer.Option("--description", help="When the skill applies.")],
    body: BodyOption = None,
    body_file: BodyFileOption = None,
    kind: Annotated[SkillKind, typer.Option("--kind", help="What sort of skill it is.")] = SkillKind.procedure,
    tool: Annotated[Optional[list[str]], typer.Option("--tool", help="A tool the skill concerns (repeatable).")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="A tag (repeatable).")] = None,
    status: Annotated[SkillStatus, typer.Option("--status", help="Initial status.")] = SkillStatus.active,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Add a new skill (version 1)."""
    text = read_body(body, body_file, required=True)
    with open_bank(bank_dir, embedder) as bank:
        skill = bank.add_skill(name, description, text or "", kind=kind, tools=tool or (),
                               tags=tag or (), status=status)
    out = console()
    out.print(f"Added skill [bold]{escape(skill.name)}[/] ({skill.id}) v{skill.version}, {skill.status.value}.")
    if skill.status == SkillStatus.quarantined and status != SkillStatus.quarantined:
        out.print(held_for_review(skill), soft_wrap=True)


@app.command("edit")
def edit(
    skill_id: SkillId,
    description: Annotated[Optional[str], typer.Option("--description", help="New description.")] = None,
    body: BodyOption = None,
    body_file: BodyFileOption = None,
    name: Annotated[Optional[str], typer.Option("--name", help="New name.")] = None,
    kind: Annotated[Optional[SkillKind], typer.Option("--kind", help="New kind.")] = None,
    tool: Annotated[Optional[list[str]], typer.Option("--tool", help="Replace the tools (repeatable).")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Replace the tags (repeatable).")] = None,
    reason: Annotated[str, typer.Option("--reason", help="Why; kept in the history.")] = "edited",
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Edit a skill, appending a new version."""
    text = read_body(body, body_file, required=False)
    changes: dict[str, Any] = {"description": description, "body": text, "name": name, "kind": kind,
               "tools": tuple(tool) if tool else None, "tags": tuple(tag) if tag else None}
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        fail("nothing to change: pass --description, --body/--body-file, --name, --kind, --tool or --tag")
    with open_bank(bank_dir, embedder) as bank:
        before = get_skill(bank, skill_id)
        after = bank.update_skill(before.id, reason=reason, **changes)
    out = console()
    if after.version == before.version:
        out.print(f"No change: {escape(after.name)} is already like that (still v{after.version}).")
    else:
        out.print(f"Updated [bold]{escape(after.name)}[/] to v{after.version}, {after.status.value}.")
        if after.status == SkillStatus.quarantined and before.status != SkillStatus.quarantined:
            out.print(held_for_review(after), soft_wrap=True)


@app.command("rollback")
def rollback(
    skill_id: SkillId,
    version: Annotated[int, typer.Argument(help="Version whose content to restore.")],
    reason: Annotated[Optional[str], typer.Option("--reason", help="Why; kept in the history.")] = None,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Restore an earlier version's content as a new version."""
    with open_bank(bank_dir, embedder) as bank:
        before = get_skill(bank, skill_id)
        after = bank.rollback(before.id, version, reason=reason)
    if after.version == before.version:
        console().print(f"No change: {escape(after.name)} v{after.version} already has v{version}'s content.")
    else:
        console().print(f"Rolled back [bold]{escape(after.name)}[/] to the content of v{version} "
                        f"(now v{after.version}).")


def _status_change(skill_id: str, bank_dir: Path | None, embedder: str | None, verb: str, action) -> None:
    with open_bank(bank_dir, embedder) as bank:
        before = get_skill(bank, skill_id)
        after = action(bank, before)
    if after.version == before.version:
        console().print(f"No change: {escape(after.name)} is already {verb}.")
    else:
        console().print(f"{verb.capitalize()} [bold]{escape(after.name)}[/] (v{after.version}).")


@app.command("retire")
def retire(
    skill_id: SkillId,
    reason: Annotated[str, typer.Option("--reason", help="Why it is retired; kept in the history.")],
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Retire a skill: kept for history, never injected."""
    _status_change(skill_id, bank_dir, embedder, "retired", lambda b, s: b.retire(s.id, reason=reason))


@app.command("activate")
def activate(
    skill_id: SkillId,
    reason: Annotated[str, typer.Option("--reason", help="Why; kept in the history.")] = "activated",
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Make a skill active (retrievable and injected)."""
    def action(bank: Any, skill: Any) -> Any:
        if skill.status == SkillStatus.quarantined:  # the review path says --force knowingly
            fail(f"{skill.name} is quarantined ({skill.note or 'flagged by a lint'}); read it with "
                 f"`skillbank candidates show {skill.name}` and promote it with "
                 f"`skillbank candidates promote {skill.name} --force` if it is safe")
        return bank.activate(skill.id, reason=reason)

    _status_change(skill_id, bank_dir, embedder, "activated", action)


@app.command("pin")
def pin(
    skill_id: SkillId,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Pin a skill so pruning and evolution leave it alone."""
    _status_change(skill_id, bank_dir, embedder, "pinned", lambda b, s: b.pin(s.id, True))


@app.command("unpin")
def unpin(
    skill_id: SkillId,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Unpin a skill."""
    _status_change(skill_id, bank_dir, embedder, "unpinned", lambda b, s: b.pin(s.id, False))


@app.command("ack")
def ack(
    skill_id: SkillId,
    reason: Annotated[str, typer.Option("--reason", help="What you concluded; kept on the change log.")]
    = "acknowledged the monitor's rollback",
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Acknowledge the live monitor's rollback of a skill, so skills list stops marking it.

    The skill stays retired (activate it to try it again); the acknowledgement is an event on the
    bank's change log."""
    with open_bank(bank_dir, embedder) as bank:
        skill = get_skill(bank, skill_id)
        done = acknowledge_rollback(bank, skill.id, reason=reason)
    console().print(f"Acknowledged: the monitor's {done.action.value} of [bold]{escape(skill.name)}[/] "
                    f"(v{done.version}, {short_time(done.at)}). It stays retired; "
                    f"`skillbank skills activate {escape(skill.name)}` tries it again.")


@app.command("prune")
def prune(
    unused_days: Annotated[Optional[float], typer.Option(
        "--unused-days", help="Retire skills not used for this many days.", min=0)] = None,
    min_success_rate: Annotated[Optional[float], typer.Option(
        "--min-success-rate", help="Retire skills whose success rate is below this (0-1).", min=0, max=1)] = None,
    min_evidence: Annotated[int, typer.Option(
        "--min-evidence", help="Labelled uses needed before --min-success-rate applies.", min=0)] = 5,
    max_active: Annotated[Optional[int], typer.Option(
        "--max-active", help="Retire the least useful skills beyond this many active ones.", min=0)] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be retired; change nothing.")] = False,
    as_json: JsonOption = False,
    bank_dir: DirOption = None,
    embedder: EmbedderOption = None,
) -> None:
    """Retire active, unpinned skills by rule (unused, low success, over a cap)."""
    if unused_days is None and min_success_rate is None and max_active is None:
        fail("no prune rule given: pass at least one of --unused-days N, --min-success-rate X "
             "(with --min-evidence N) or --max-active N; add --dry-run to preview")
    with open_bank(bank_dir, embedder) as bank:
        plan = bank.prune_plan(unused_days=unused_days, min_success_rate=min_success_rate,
                               min_evidence=min_evidence, max_active=max_active)
        if not dry_run:
            bank.apply_prune(plan)
    if as_json:
        def row(a: Any) -> dict[str, Any]:
            effect = None if a.effect is None else {"kind": a.effect.kind.value, "gain": a.effect.gain,
                                                   "version": a.effect.version, "round": a.effect.round}
            return {"skill_id": a.skill_id, "name": a.name, "rule": a.rule, "detail": a.detail, "effect": effect}

        print_json({"dry_run": dry_run, "actions": [row(a) for a in plan.retire],
                    "spared": [row(a) for a in plan.spared]})
        return
    out = console()
    if not plan.retire and not plan.spared:
        out.print("Nothing to prune: no active, unpinned skill matches those rules.")
        return
    n = len(plan.retire)
    title = (f"Would retire {n} skill{'s' if n != 1 else ''} (dry run, nothing changed)" if dry_run
             else f"Retired {n} skill{'s' if n != 1 else ''}")
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  caption="effect: the measured change in success with the skill (gate: the evolution "
                          "gate's trials); - never measured", caption_style="dim")
    name_column(table, [a.name for a in plan.retire + plan.spared])
    table.add_column("rule", no_wrap=True)
    table.add_column("effect", no_wrap=True)
    table.add_column("detail", ratio=1)
    for a in plan.retire:
        table.add_row(escape(a.name), a.rule, a.effect.label() if a.effect else "-", escape(a.detail))
    for a in plan.spared:
        table.add_row(escape(a.name), Text("kept", style="green"), a.effect.label() if a.effect else "-",
                      escape(a.detail), style="dim")
    out.print(table)
