"""``skillbank monitor`` (each randomized skill's live effect, and the monitor's decisions) and
``skillbank canary`` (put a skill into canary)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from skillbank.cli._common import console, fail, open_bank, print_json
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption
from skillbank.cli._rows import Column, print_rows

__all__ = ["EFFECT_COLUMNS", "canary", "effect_rows", "monitor", "print_live_view", "register"]


def _kind(task: str | None, task_type: str | None) -> str | None:
    """A run's kind of request (:func:`skillbank.evolution._templates.request_kind`)."""
    from skillbank.evolution._templates import request_kind

    return request_kind(task, task_type)


def _diff(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f}"


def _arm(a: dict[str, Any]) -> str:
    return f"{a['successes']}/{a['labelled']}"


def _pair(effect: dict[str, Any], key: str) -> str:
    """Shown | held of one per-run average."""
    return " | ".join("-" if effect[arm][key] is None else f"{effect[arm][key]:.0f}" if key.startswith("tokens")
                      else f"{effect[arm][key]:.1f}" for arm in ("shown", "held"))


def monitor(
    apply: Annotated[bool, typer.Option("--apply", help="Write the decisions as new versions by 'monitor'.")] = False,
    holdout: Annotated[float, typer.Option(help="The standing holdout of active skills (0 ignores them).")] = 0.05,
    alpha: Annotated[float, typer.Option(help="Error rate of each skill's anytime-valid interval.")] = 0.05,
    stale_days: Annotated[float, typer.Option(help="Flag a skill stale after this many days without an "
                                                   "eligible run.")] = 14.0,
    every: Annotated[float | None, typer.Option("--every", min=0, help="With --apply: decide again every this "
                                                "many seconds, until Ctrl-C (or --rounds).")] = None,
    rounds: Annotated[int | None, typer.Option("--rounds", min=1, help="With --every: stop after this many "
                                               "rounds.")] = None,
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Show each randomized skill's live effect and what the monitor decides.

    Success shown vs held back, overall and per kind of request; with --apply, write the decisions;
    with --apply --every SECONDS, keep deciding on that cadence (one line per decision written, or
    one JSON line per round with --json)."""
    from datetime import timedelta

    from skillbank.live._config import LiveConfig

    if every is None and rounds is not None:
        fail("--rounds goes with --every: skillbank monitor --apply --every SECONDS --rounds N")
    if every is not None and not apply:
        fail("--every decides on a cadence, so it writes: add --apply (skillbank monitor --apply --every SECONDS)")
    config = LiveConfig(holdout=holdout, alpha=alpha, stale_after=timedelta(days=stale_days))
    with open_bank(bank_dir, embedder) as bank:
        if every is not None:
            _on_cadence(bank, config, every, rounds, as_json)
            return
        report = bank.monitor(config, apply=apply, kind_of=_kind)
    data = report.as_dict()
    if as_json:
        print_json(data)
        return
    if not data["skills"]:
        console().print("No randomized skill yet: put one into canary (skillbank canary NAME), or run the agents "
                        "with a holdout (InjectionConfig.live).")
        return
    rows: list[list[Any]] = []
    decisions: list[str] = []
    for s in data["skills"]:
        decision = s["decision"]
        said = "no decision" if decision is None else decision["action"] + (" (applied)" if s["applied"] else "")
        status = "canary" if s["canary"] else s["status"]
        status += " (pinned)" if s["pinned"] else " (person)" if s["held_by_person"] else ""
        added = effect_rows(s["name"], s, [status], [])
        rows += added
        decisions += [said] + [""] * (len(added) - 1)
    print_rows(console(), [Column("skill"), Column("status"), *EFFECT_COLUMNS], rows, text_header="decision",
               texts=decisions, title=f"Live effect (anytime-valid, alpha {alpha:g})",
               caption="Indented: per kind of request. tok/run, steps/run: shown | held back.")


def _on_cadence(bank: Any, config: Any, every: float, rounds: int | None, as_json: bool) -> None:
    """``bank.monitor(config, apply=True)`` every ``every`` seconds, ``rounds`` times (None: until
    Ctrl-C), printing what each round wrote."""
    import time

    from skillbank.models import utcnow

    done = 0
    try:
        while rounds is None or done < rounds:
            if done:
                time.sleep(every)
            data = bank.monitor(config, apply=True, kind_of=_kind).as_dict()
            done += 1
            if as_json:
                print_json({"round": done, "at": utcnow().isoformat(timespec="seconds"), **data}, indent=None)
                continue
            at = utcnow().strftime("%Y-%m-%d %H:%M:%S")
            written = [s for s in data["skills"] if s["applied"]]
            for s in written:
                d = s["effect"]["difference"]
                console().print(f"{at}  {s['decision']['action']} {escape(s['name'])}: shown "
                                f"{_arm(s['effect']['shown'])}, held {_arm(s['effect']['held'])}, "
                                f"interval [{d['low']:+.2f}, {d['high']:+.2f}]", soft_wrap=True)
            if not written:
                console().print(f"{at}  round {done}: {len(data['skills'])} randomized skill(s), no decision written")
    except KeyboardInterrupt:
        console().print(f"stopped after {done} round(s)")


#: The columns of a live effect: success shown and held back (successes/labelled), the difference
#: with its anytime-valid interval, and tokens and steps per run (shown | held back).
EFFECT_COLUMNS = [Column("shown", right=True), Column("held", right=True), Column("effect", right=True),
                  Column("interval"), Column("tok/run"), Column("steps/run")]


def _cells(e: dict[str, Any]) -> list[str]:
    d = e["difference"]
    return [_arm(e["shown"]), _arm(e["held"]), _diff(d["estimate"]), f"[{d['low']:+.2f}, {d['high']:+.2f}]",
            _pair(e, "tokens_per_run"), _pair(e, "steps_per_run")]


def effect_rows(label: str, entry: dict[str, Any], before: list[str], after: list[str]) -> list[list[Any]]:
    """The rows of one skill's live effect (``entry``: a monitor report's skill, or a
    :meth:`~skillbank.live._view.LiveView.as_dict`): ``label``, the ``before`` cells, the
    :data:`EFFECT_COLUMNS`, the ``after`` cells; then a row per kind of request, indented, its
    other cells empty."""
    rows: list[list[Any]] = [[Text(label, style="bold"), *before, *_cells(entry["effect"]), *after]]
    for kind, k in entry["by_kind"].items():  # per kind of request (each at the skill's alpha)
        rows.append([f"  {kind}", *([""] * len(before)), *_cells(k), *([""] * len(after))])
    return rows


def _when(value: str | None) -> str:
    return "-" if not value else value[:16].replace("T", " ")


def print_live_view(out: Any, view: Any) -> None:
    """Print a skill's live effect block (``view``: a :class:`~skillbank.live._view.LiveView`):
    the numbers ``skillbank monitor`` prints for it, then exposure, staleness and the monitor's
    decisions, one labelled line each."""
    entry = view.as_dict()
    out.print(Text(f"Live effect (anytime-valid, alpha {view.alpha:g}; runs since v{view.since_version})",
                   style="bold"), soft_wrap=True)
    if not view.has_evidence:
        how = ("no eligible run recorded yet" if view.randomized else "it is not randomized: put it into canary "
               "(skillbank canary NAME) or run the agents with a holdout (InjectionConfig.live)")
        out.print(f"  none: {how}.")
    else:
        print_rows(out, [Column(""), *EFFECT_COLUMNS], effect_rows("overall", entry, [], []))
    shown, held = entry["effect"]["shown"], entry["effect"]["held"]
    lines = [("exposures", f"{shown['exposed']} shown, {held['exposed']} held back"
                           f" ({shown['labelled'] + held['labelled']} labelled)"),
             ("randomized", "no" if not view.randomized or view.p_shown is None else
              f"{'canary' if entry['canary'] else 'standing holdout'}: shown to {view.p_shown:.0%} of its "
              "eligible runs"),
             ("last eligible", _when(entry["last_exposed"]) + (" (stale)" if view.stale else ""))]
    now = entry["decision"]
    lines.append(("monitor now", "no decision" + (" (a person decided)" if entry["held_by_person"] else "")
                  if now is None else f"{now['action']}: {now['reason']}"))
    written = view.last_written
    lines.append(("last decision", "none written" if written is None else
                  f"{written.action.value} at v{written.version}, {_when(written.at.isoformat())}: {written.words()}"))
    if view.waiting is not None:
        lines.append(("needs a look", f"rolled back by the monitor ({view.waiting.action.value}); "
                                      f"skillbank skills ack {view.skill.name}"))
    grid = Table.grid(padding=(0, 2), pad_edge=True)
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for key, value in lines:
        grid.add_row(key, Text(value))
    out.print(grid)


def canary(
    skill: Annotated[str, typer.Argument(help="The skill's id or name.")],
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Put a skill into canary.

    It stays active, shown to part of the runs it is eligible for, until the monitor promotes or rejects it."""
    from skillbank.live._canary import canary_refusal, start_canary

    with open_bank(bank_dir, embedder) as bank:
        found = bank.get_skill(skill)
        refused = canary_refusal(bank, found)
        if refused:
            fail(refused)
        done = start_canary(bank.skills, found.id)
    console().print(f"{escape(done.name)} is in canary (v{done.version}).")


def register(app: typer.Typer) -> None:
    app.command("monitor")(monitor)
    app.command("canary")(canary)
