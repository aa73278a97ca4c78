"""``skillbank evolve`` and ``skillbank candidates ...``: run an evolution round, review its output.

Registered in ``skillbank/cli/__init__.py`` with ``evolve.register(app)``.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from datetime import datetime, timedelta, timezone
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.console import Group
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from skillbank.cli._common import console, err_console, fail, get_skill, open_bank, print_json, short_hash, skill_json
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption
from skillbank.cli._rows import Cell, Column, print_rows

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.store._gate_records import GateRecord

candidates_app = typer.Typer(
    help="Review candidate skills from evolution rounds: list, show, promote, reject.",
    no_args_is_help=True,
)

CandidateId = Annotated[str, typer.Argument(help="Candidate skill id (sk_...) or name.")]


class PromotePolicy(str, Enum):
    all = "all"
    guards = "guards"
    canary = "canary"


def register(app: typer.Typer) -> None:
    """Add ``evolve`` and ``candidates`` to the root ``skillbank`` app."""
    app.command("evolve")(evolve)
    app.add_typer(candidates_app, name="candidates")


# -- parsing helpers -------------------------------------------------------------------------------

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(value: str | None, now: datetime | None = None) -> datetime | None:
    """``7d``, ``12h``, ``30m`` (ago), or an ISO date/time (UTC if no zone is given)."""
    if value is None:
        return None
    now = now or datetime.now(timezone.utc)
    m = _RELATIVE.match(value)
    if m:
        return now - timedelta(**{_UNITS[m.group(2)]: float(m.group(1))})
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        fail(f"cannot read --since {value!r}: use a duration like 7d, 12h, 30m or an ISO date "
             "like 2025-01-31 or 2025-01-31T12:00")
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def load_callable(spec: str) -> Any:
    """``package.module:function`` -> the function (for --validate)."""
    module, _, attr = spec.partition(":")
    if not module or not attr:
        fail(f"--validate takes module:function (e.g. mypkg.gates:replay), not {spec!r}")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        fail(f"cannot load --validate {spec!r}: {exc}")
    if not callable(obj):
        fail(f"--validate {spec!r} is not callable")
    return obj


# -- skillbank evolve -----------------------------------------------------------------------------


def evolve(
    llm: Annotated[Optional[str], typer.Option(
        "--llm", help="Distil with this chat model (provider:model, e.g. ollama:qwen2.5:3b); "
                      "default: the rule-based distiller, no model.")] = None,
    with_rules: Annotated[bool, typer.Option(
        "--with-rules", help="With --llm: run the rule-based distiller too, on the same evidence, "
                             "and pool both distillers' proposals.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; write nothing.")] = False,
    since: Annotated[Optional[str], typer.Option(
        "--since", help="Re-read labelled runs from this time on (7d, 12h or an ISO date), "
                        "including runs earlier rounds consumed.")] = None,
    auto_promote: Annotated[bool, typer.Option(
        "--auto-promote/--review", help="Promote candidates that pass --validate (or a --promote-policy); "
                                        "--review leaves them for `skillbank candidates`.")] = False,
    validate: Annotated[Optional[str], typer.Option(
        "--validate", help="Validation function module:function, called as f(candidate, task_ids) "
                           "-> GateResult.")] = None,
    gate_agent: Annotated[Optional[str], typer.Option(
        "--gate-agent", help="Validate each candidate on your agent, as `skillbank eval --agent` "
                             "runs it: module:factory or file.py:factory; factory(middleware=[...], "
                             "seed=N) returns (agent, verify). Needs --tasks; implies --auto-promote.")] = None,
    tasks_path: Annotated[Optional[Path], typer.Option(
        "--tasks", help="With --gate-agent: the JSON Lines task file of `skillbank eval --tasks`. A "
                        "candidate runs on its evidence tasks and the other tasks its retrieval "
                        "reaches, never on tasks it cannot reach; held-out tasks only with "
                        "--include-heldout.")] = None,
    gate_trials: Annotated[int, typer.Option(
        "--gate-trials", min=1, help="With --gate-agent: trials of each task in each arm.")] = 2,
    promote_policy: Annotated[Optional[PromotePolicy], typer.Option(
        "--promote-policy", help="Promote without validation: all candidates, template guards only, "
                                  "or every new skill into canary (the live monitor decides). With "
                                  "validation, canary takes the candidates the --eval-budget left "
                                  "unmeasured.")] = None,
    eval_budget: Annotated[Optional[float], typer.Option(
        "--eval-budget", help="Stop validating after this much evaluation cost (1 per call by default).")] = None,
    min_support: Annotated[int, typer.Option(
        "--min-support", min=1, help="Runs a pattern needs before it becomes a new skill.")] = 2,
    lock_timeout: Annotated[float, typer.Option(
        "--lock-timeout", min=0, help="Seconds to wait for another running round before giving up.")] = 10.0,
    include_heldout: Annotated[bool, typer.Option(
        "--include-heldout", help="Also learn from runs labelled with a held-out split "
                                  "(split=heldout, test, ...); skipped by default.")] = False,
    as_json: JsonOption = False,
    dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Run an evolution round: distil labelled runs into candidate skills."""
    from skillbank._splits import HELD_OUT_SPLITS
    from skillbank.evolution import EvolutionConfig, GateConfig
    from skillbank.evolution import evolve as run_round

    if (gate_agent is None) != (tasks_path is None):
        fail("--gate-agent and --tasks go together: --gate-agent module:factory --tasks tasks.jsonl")
    if gate_agent is not None and validate is not None:
        fail("--gate-agent and --validate are two ways to validate candidates: pass one of them")
    validator = load_callable(validate) if validate else None
    agent_gate = _agent_gate(gate_agent, tasks_path, include_heldout) if gate_agent is not None else None
    auto_promote = auto_promote or agent_gate is not None
    since_at = parse_since(since)
    if with_rules and not llm:
        raise typer.BadParameter("--with-rules pools the rule distiller with an --llm model; "
                                 "without --llm the rule distiller runs alone already")
    distiller = None
    if llm:
        from skillbank.evolution import LLMDistiller, RuleDistiller, resolve_distiller

        distiller = resolve_distiller([RuleDistiller(), LLMDistiller(llm)]) if with_rules else LLMDistiller(llm)
    with open_bank(dir, embedder) as bank:
        gate = GateConfig(validate=validator, auto_promote=auto_promote,
                          promote_policy=promote_policy.value if promote_policy else None,
                          eval_budget=eval_budget)
        if agent_gate is not None:
            gate = dataclasses.replace(gate, validate=_agent_validator(bank, agent_gate, gate, gate_trials))
        report = run_round(bank, distiller, dry_run=dry_run, since=since_at, gate=gate,
                           config=EvolutionConfig(min_support=min_support, include_heldout=include_heldout),
                           lock_timeout=lock_timeout)
        held_out = 0 if include_heldout else bank.trajectories.count(
            labelled=True, unconsumed=since_at is None, since=since_at, splits=HELD_OUT_SPLITS)
    if as_json:
        print_json({**report.to_dict(), "held_out_skipped": held_out})
        return
    console().print(Text(str(report)), soft_wrap=True)
    if held_out:
        console().print(f"Skipped {held_out} run(s) labelled with a held-out split "
                        "(pass --include-heldout to learn from them).")


def _agent_gate(spec: str, tasks_path: Path | None, include_heldout: bool) -> tuple[Any, list[Any]]:
    """``--gate-agent`` and ``--tasks``: the factory and the tasks the gate may run (without
    held-out ones unless ``include_heldout``); a bad spec or task file fails in one line."""
    from skillbank.cli._agent_factory import load_factory
    from skillbank.consistency._taskfile import load_tasks
    from skillbank._splits import HELD_OUT_SPLITS

    assert tasks_path is not None
    build = load_factory(spec, "--gate-agent")
    tasks = load_tasks(tasks_path)
    pool = [t for t in tasks if include_heldout or t.split not in HELD_OUT_SPLITS]
    if not pool:
        fail(f"--tasks {tasks_path}: every task is in a held-out split, which evolution never "
             "learns from; add tasks of another split, or pass --include-heldout")
    return build, pool


def _agent_validator(bank: Any, agent_gate: tuple[Any, list[Any]], gate: Any, trials: int) -> Any:
    """The gate's validator on the user's agent: one trial at a time (an agent of one's own may
    not be thread-safe), its tasks chosen by reach."""
    from skillbank.consistency.agents import agent_trial_fn
    from skillbank.consistency.validation import ValidationConfig, make_validator

    build, pool = agent_gate
    return make_validator(bank, pool, agent_trial_fn(build), ValidationConfig(trials=trials, concurrency=1),
                          gate=gate)


# -- skillbank candidates ... ------------------------------------------------------------------------


def _pending_json(p: Any) -> dict[str, Any]:
    data = skill_json(p.skill)
    data["pending"] = p.info()
    return data


@candidates_app.command("list")
def list_(
    as_json: JsonOption = False,
    dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """List candidate and quarantined skills waiting for review."""
    from skillbank.evolution import list_candidates

    with open_bank(dir, embedder, read_only=True) as bank:
        pending = list_candidates(bank)
        targets = {p.target: bank.get_skill(p.target) for p in pending if p.target}
    if as_json:
        print_json([_pending_json(p) for p in pending])
        return
    if not pending:
        console().print("No candidates waiting; run `skillbank evolve` to propose some.")
        return
    rows: list[list[Cell]] = []
    reasons: list[str] = []
    for p in pending:
        # A pending edit is shown under the name of the skill it edits (what `candidates show`,
        # `promote` and `reject` take), as that skill's next version.
        target = targets.get(p.target) if p.target else None
        quarantined = p.skill.status.value == "quarantined"
        change = p.kind + (f" v{target.version}→v{target.version + 1}" if target else "")
        rows.append([Text(target.name if target else p.skill.name, style="bold"), change,
                     Text(p.skill.status.value, style="red" if quarantined else "cyan"), str(len(p.evidence))])
        reasons.append((p.skill.note if quarantined else p.reason) or "")
    print_rows(console(), [Column("name"), Column("change"), Column("status"), Column("evidence", right=True)],
               rows, title=f"{len(pending)} candidate{'s' if len(pending) != 1 else ''}",
               text_header="reason", texts=reasons)


@candidates_app.command("show")
def show(
    candidate: CandidateId,
    as_json: JsonOption = False,
    dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Show a candidate: why it was proposed, its evidence and its diff.

    For an edit, the diff against the active version; when the gate measured it, its latest
    measurement too (each task's trials with and without it).
    """
    from skillbank.evolution._review import get_pending

    with open_bank(dir, embedder, read_only=True) as bank:
        p = get_pending(bank, get_skill(bank, candidate).id)
        diff = None
        if p.target:
            target = bank.get_skill(p.target)
            diff = _content_diff(target.content, p.skill.content, target.name)
        record = bank.gate_records.latest_for(p.skill.id)
    if as_json:
        data = _pending_json(p)
        data["diff"] = diff
        data["gate"] = dataclasses.asdict(record) if record is not None else None
        print_json(data)
        return
    out = console()
    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold")
    fields.add_column()
    fields.add_row("id", p.skill.id)
    status = p.skill.status.value
    fields.add_row("status", Text(status, style="red" if status == "quarantined" else "cyan"))
    fields.add_row("change", escape(p.kind + (f" of {p.target}" if p.target else "")))
    if p.skill.note:
        fields.add_row("note", Text(p.skill.note, style="red"))
    fields.add_row("reason", escape(p.reason or "-"))
    fields.add_row("author", escape(p.author or "-"))
    fields.add_row("evidence", escape(", ".join(p.evidence) or "-"))
    fields.add_row("description", escape(p.skill.description))
    fields.add_row("version", f"v{p.skill.version} ({short_hash(p.skill.content_hash)})")
    out.print(Panel(fields, title=Text(p.skill.name, style="bold"), title_align="left"))
    if diff:
        out.print(Panel(Text(diff), title="diff against the active version", title_align="left"))
    else:
        out.print(Panel(Markdown(p.skill.body), title="body", title_align="left"))
    if record is not None:
        out.print(_gate_panel(record))


def _gate_panel(record: GateRecord) -> Panel:
    """A gate record: the decision and its figures, then each task's trials in both arms."""
    def change(value: float | None) -> str:
        return "not reported" if value is None else f"{value:+.3f}"

    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold")
    fields.add_column()
    fields.add_row("measured", f"v{record.version} of {record.skill_id}"
                   + (f" (an edit of {record.target_id})" if record.target_id else "")
                   + f", {record.decided_at:%Y-%m-%d %H:%M}"
                   + (f", round {record.round}" if record.round is not None else ""))
    fields.add_row("decision", record.decision.value)
    fields.add_row("reason", escape(record.reason))
    fields.add_row("gain", f"{record.gain:+.3f}" + (" (a bound: stopped early)" if record.stopped_early else ""))
    fields.add_row(f"pass^{record.k or 'k'} change", change(record.pass_hat_k_change))
    fields.add_row("success change", change(record.success_change))
    fields.add_row("cost", f"{record.cost:g}")
    if record.not_reached:
        fields.add_row("not reached", escape(", ".join(record.not_reached)))
    parts: list[Any] = [fields]
    if record.trials:
        trials = Table(title="trials per task (✓ success, ✗ failure)", title_justify="left")
        trials.add_column("task")
        trials.add_column("current (without)")
        trials.add_column("candidate (with)")
        for t in record.trials:
            trials.add_row(escape(t.task_id), _marks(t.current), _marks(t.candidate))
        parts.append(trials)
    else:
        parts.append(Text("no per-task trials recorded"))
    return Panel(Group(*parts), title="the gate's latest measurement", title_align="left")


def _marks(outcomes: tuple[bool, ...]) -> str:
    return "".join("✓" if ok else "✗" for ok in outcomes)


def _content_diff(old: Any, new: Any, name: str) -> str:
    import difflib

    def lines(c: Any) -> list[str]:
        return [f"description: {c.description}", f"tools: {', '.join(c.tools)}", ""] + c.body.splitlines()

    return "\n".join(difflib.unified_diff(lines(old), lines(new), f"{name} (active)", f"{name} (candidate)",
                                          lineterm=""))


@candidates_app.command("promote")
def promote(
    candidate: CandidateId,
    force: Annotated[bool, typer.Option(
        "--force", help="Promote a quarantined candidate, or an edit whose target changed since.")] = False,
    reason: Annotated[Optional[str], typer.Option("--reason", help="Why (kept in the history).")] = None,
    yes: Annotated[bool, typer.Option(
        "--yes", "-y", help="Promote without asking, even a candidate the gate never measured.")] = False,
    dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Make a candidate active (an edit becomes a new version of its skill).

    A candidate the gate never measured asks for a confirmation first (--yes skips it).
    """
    from skillbank.evolution import promote as do_promote
    from skillbank.evolution._lock import evolution_lock
    from skillbank.evolution._review import get_pending

    with open_bank(dir, embedder) as bank:
        p = get_pending(bank, get_skill(bank, candidate).id)
        held = p.skill.status.value == "quarantined" and not force  # refused below, whatever the answer
        if not (yes or held) and bank.gate_records.latest_for(p.skill.id, p.skill.version) is None:
            _confirm_unmeasured(p.skill.name if not p.target else (p.name or p.skill.name))
        if force and p.skill.status.value == "quarantined":
            console().print(Text(f"promoting a quarantined candidate: {p.skill.note}", style="yellow"))
        with evolution_lock(bank, timeout=30, what="candidates promote"):
            skill = do_promote(bank, p.skill.id, force=force, reason=reason or "promoted by review")
    console().print(f"Promoted: {escape(skill.name)} is active at v{skill.version} ({skill.id}).")


def _confirm_unmeasured(name: str) -> None:
    """Ask before promoting a candidate with no gate measurement; no answer (no terminal) is no."""
    err_console().print(Text(f"The gate never measured {name}: nothing shows it helps, and once active it "
                             "is injected into every matching prompt.", style="yellow"), soft_wrap=True)
    try:
        agreed = typer.confirm("Promote it anyway?", default=False, err=True)
    except typer.Abort:
        agreed = False
    if not agreed:
        fail(f"{name} was not promoted (no measurement, no confirmation); pass --yes to promote it "
             "without a measurement")


@candidates_app.command("reject")
def reject(
    candidate: CandidateId,
    reason: Annotated[str, typer.Option("--reason", help="Why (remembered; the edit is not proposed again).")]
    = "rejected by review",
    dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Reject a candidate; the same edit will not be proposed again."""
    from skillbank.evolution import reject as do_reject
    from skillbank.evolution._lock import evolution_lock

    with open_bank(dir, embedder) as bank:
        with evolution_lock(bank, timeout=30, what="candidates reject"):
            skill = do_reject(bank, get_skill(bank, candidate).id, reason=reason)
    console().print(f"Rejected: {escape(skill.name)} ({skill.id}) is retired and remembered.")
