"""``skillbank runs ...``: recorded agent runs (trajectories): list, read and label them."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from skillbank.cli._common import console, fail, open_bank, print_json, short_time
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption
from skillbank.cli._rows import Column, print_rows

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.models import LimitEvent, Step, Trajectory

app = typer.Typer(help="List, read and label recorded agent runs (trajectories).", no_args_is_help=True)

RunId = Annotated[str, typer.Argument(help="Run id (tr_...).")]
PREVIEW_CHARS = 2000  # per field in `runs show`; --full prints everything


class RunStatus(str, Enum):
    running = "running"
    complete = "complete"
    incomplete = "incomplete"


def _outcome_text(traj: "Trajectory") -> Text:
    outcome = traj.outcome
    if outcome is None or (outcome.success is None and outcome.score is None):
        return Text("unlabelled", style="dim")
    if outcome.success is True:
        text = Text("success", style="green")
    elif outcome.success is False:
        text = Text("failure", style="red")
    else:
        text = Text("scored")
    if outcome.score is not None:
        text.append(f" ({outcome.score:g})")
    return text


def _run_json(traj: "Trajectory", *, full: bool) -> dict[str, Any]:
    data = traj.model_dump(mode="json", exclude=None if full else {"steps", "injections", "limit_events"})
    data.update({
        "steps_count": len(traj.steps),
        "model_turns": traj.model_turns,
        "input_tokens": traj.input_tokens,
        "output_tokens": traj.output_tokens,
        "limit_events_count": len(traj.limit_events),
        "success": traj.success,
    })
    return data


@app.command("list")
def list_runs(
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many, newest first.", min=1)] = 20,
    status: Annotated[Optional[RunStatus], typer.Option("--status", help="Only runs with this status.")] = None,
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """List recent runs with their status, size and outcome."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        runs = bank.trajectories.list(limit=limit, status=status.value if status else None, with_steps=True)
    if as_json:
        print_json([_run_json(t, full=False) for t in runs])
        return
    if not runs:
        console().print("No runs recorded" + (" with that status." if status else " yet."))
        return
    rows: list[list[str | Text]] = []
    for t in runs:
        shown = Text(t.status, style="yellow" if t.status == "incomplete" else "")
        rows.append([Text(t.id, style="dim"), _started(t.started_at), shown, str(len(t.steps)),
                     str(t.input_tokens), str(t.output_tokens),
                     Text(str(len(t.limit_events)), style="yellow" if t.limit_events else ""), _outcome_text(t)])
    print_rows(console(), [Column("id"), Column("started"), Column("status"), Column("steps", right=True),
                           Column("in", right=True), Column("out", right=True),
                           Column("limits", right=True), Column("outcome")],
               rows, title=f"{len(runs)} most recent run{'s' if len(runs) != 1 else ''}",
               text_header="task", texts=[t.task for t in runs],
               caption="in, out: the model's input and output tokens over the run; started: UTC")


def _started(value: Any) -> str:
    return value.strftime("%m-%d %H:%M") if value is not None else "-"


def _clip(text: str, full: bool) -> str:
    if full or len(text) <= PREVIEW_CHARS:
        return text
    return text[:PREVIEW_CHARS] + f"\n... [{len(text) - PREVIEW_CHARS} more characters; --full shows all]"


def _args(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _limit_line(event: "LimitEvent") -> Text:
    style = "bold red" if event.category == "capability" else "bold yellow"
    text = Text(f"  ! limit: {event.type.value} ({event.category})", style=style)
    if event.tool:
        text.append(f" tool={event.tool}", style=style)
    text.append(f": {event.detail}", style=style.replace("bold ", ""))
    return text


def _step_lines(step: "Step", full: bool) -> list[Text]:
    from skillbank.models import ANSWER_REMINDER_STEP

    lines: list[Text] = []
    if step.kind == "model":
        meta = []
        if step.input_tokens is not None or step.output_tokens is not None:
            meta.append(f"tokens in {step.input_tokens or 0} / out {step.output_tokens or 0}")
        if step.input_messages is not None:
            meta.append(f"{step.input_messages} messages")
        if step.latency_ms is not None:
            meta.append(f"{step.latency_ms:.0f} ms")
        head = Text(f"[{step.index}] model", style="bold blue")
        if meta:
            head.append("  " + ", ".join(meta), style="dim")
        lines.append(head)
        if step.content:
            lines.append(Text("    " + _clip(step.content, full).replace("\n", "\n    ")))
        for call in step.tool_calls:
            name = call.get("name") or call.get("tool") or "?"
            args = call.get("args", call.get("arguments", {}))
            lines.append(Text(f"    -> call {name}({_clip(_args(args), full)})", style="cyan"))
    else:
        # A "reminder" step is a tool call answered with a lesson instead of being run; an
        # "answer_reminder" a final reply asked again with a lesson's note.
        if step.kind == ANSWER_REMINDER_STEP:
            head = Text(f"[{step.index}] reply asked again: {step.reason or '?'}", style="bold cyan")
        else:
            what = "tool" if step.kind == "tool" else f"{step.kind} at tool"
            head = Text(f"[{step.index}] {what} {step.tool or '?'}", style="bold cyan")
        if step.latency_ms is not None:
            head.append(f"  {step.latency_ms:.0f} ms", style="dim")
        lines.append(head)
        if step.args is not None:
            lines.append(Text(f"    args: {_clip(_args(step.args), full)}"))
        if step.result is not None:
            lines.append(Text("    result: " + _clip(step.result, full).replace("\n", "\n    ")))
        if step.error is not None:
            lines.append(Text("    error: " + _clip(step.error, full).replace("\n", "\n    "), style="red"))
    return lines


@app.command("show")
def show(
    run_id: RunId,
    full: Annotated[bool, typer.Option("--full", help="Do not shorten long contents and results.")] = False,
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Show a run as a readable transcript: steps, limits, injected skills, outcome."""
    with open_bank(bank_dir, embedder, read_only=True) as bank:
        traj = bank.trajectories.get(run_id)
        skills = bank.skills.get_many({i.skill_id for i in traj.injections})
    if as_json:
        print_json(_run_json(traj, full=True))
        return

    out = console()
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("task", escape(traj.task) or "-")
    for label, value in (("task id", traj.task_id), ("task type", traj.task_type), ("model", traj.model),
                         ("bank snapshot", traj.bank_snapshot)):
        if value:
            head.add_row(label, escape(str(value)))
    if traj.labels:
        head.add_row("labels", escape(", ".join(f"{k}={v}" for k, v in traj.labels.items())))
    head.add_row("status", Text(traj.status, style="yellow" if traj.status == "incomplete" else ""))
    head.add_row("started", short_time(traj.started_at))
    head.add_row("ended", short_time(traj.ended_at))
    head.add_row("tokens", f"in {traj.input_tokens} / out {traj.output_tokens} over {traj.model_turns} model turns")
    out.print(Panel(head, title=Text(f"run {traj.id}", style="bold"), title_align="left"))

    by_step_inj: dict[int, list] = {}
    for inj in traj.injections:
        by_step_inj.setdefault(inj.step, []).append(inj)
    by_step_lim: dict[int, list] = {}
    for event in traj.limit_events:
        by_step_lim.setdefault(event.step, []).append(event)
    indices = {s.index for s in traj.steps}

    for step in traj.steps:
        for inj in sorted(by_step_inj.get(step.index, []), key=lambda i: i.rank):
            skill = skills.get(inj.skill_id)
            name = skill.name if skill else inj.skill_id
            out.print(Text(f"  * skill injected: {name} v{inj.version} (rank {inj.rank}, score {inj.score:.3f})",
                           style="magenta"), soft_wrap=True)
        for line in _step_lines(step, full):
            out.print(line, soft_wrap=True)
        for event in by_step_lim.get(step.index, []):
            out.print(_limit_line(event), soft_wrap=True)

    orphans = [e for e in traj.limit_events if e.step not in indices]
    orphan_inj = [i for i in traj.injections if i.step not in indices]
    if orphans or orphan_inj:
        out.print(Text("outside recorded steps:", style="bold"))
        for inj in orphan_inj:
            skill = skills.get(inj.skill_id)
            out.print(Text(f"  * skill injected at step {inj.step}: {skill.name if skill else inj.skill_id} "
                           f"v{inj.version} (rank {inj.rank}, score {inj.score:.3f})", style="magenta"),
                      soft_wrap=True)
        for event in orphans:
            line = _limit_line(event)
            line.append(f" (step {event.step})")
            out.print(line, soft_wrap=True)
    if not traj.steps:
        out.print(Text("(no steps recorded)", style="dim"))

    out.print()
    if traj.final_answer:
        out.print(Text("final answer: ", style="bold").append(_clip(traj.final_answer, full), style=""),
                  soft_wrap=True)
    if traj.error:
        out.print(Text(f"error: {_clip(traj.error, full)}", style="red"), soft_wrap=True)
    outcome = Text("outcome: ", style="bold").append_text(_outcome_text(traj))
    if traj.outcome is not None:
        if traj.outcome.source:
            outcome.append(f" [{traj.outcome.source}]", style="dim")
        if traj.outcome.note:
            outcome.append(f" - {traj.outcome.note}")
    out.print(outcome, soft_wrap=True)


@app.command("label")
def label(
    run_id: RunId,
    success: Annotated[Optional[bool], typer.Option(
        "--success/--failure", help="Whether the run achieved its task.", show_default=False)] = None,
    score: Annotated[Optional[float], typer.Option(
        "--score", help="A score in 0-1 (>= 0.5 counts as success).", min=0, max=1)] = None,
    note: Annotated[Optional[str], typer.Option("--note", help="Why; shown with the run.")] = None,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Label a run's outcome; the injected skills' statistics follow."""
    if success is None and score is None:
        fail("say how the run went: pass --success or --failure (and optionally --score, --note)")
    with open_bank(bank_dir, embedder) as bank:
        bank.record_outcome(run_id, success=success, score=score, note=note, source="manual")
        traj = bank.trajectories.get(run_id)
    console().print(Text(f"Labelled run {traj.id}: ").append_text(_outcome_text(traj)))

