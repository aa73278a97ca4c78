"""``skillbank monitor`` (each randomized skill's live effect, and the monitor's decisions) and
``skillbank canary`` (put a skill into canary)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from skillbank.cli._common import console, open_bank, print_json
from skillbank.cli.options import DirOption, EmbedderOption, JsonOption

__all__ = ["canary", "monitor", "register"]


def _kind(task: str | None, task_type: str | None) -> str | None:
    """A run's kind of request: its task type when recorded, else its task's template."""
    from skillbank.evolution.templates import task_template

    return task_type or (task_template(task) if task else None)


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
    as_json: JsonOption = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Show each randomized skill's live effect and what the monitor decides.

    Success shown vs held back, overall and per kind of request; with --apply, write the decisions."""
    from datetime import timedelta

    from skillbank.live.config import LiveConfig

    config = LiveConfig(holdout=holdout, alpha=alpha, stale_after=timedelta(days=stale_days))
    with open_bank(bank_dir, embedder) as bank:
        report = bank.monitor(config, apply=apply, kind_of=_kind)
    data = report.as_dict()
    if as_json:
        print_json(data)
        return
    table = Table(title=f"Live effect (anytime-valid, alpha {alpha:g})")
    for col in ("skill", "status", "shown", "held", "effect", "interval", "tokens/run", "steps/run", "decision"):
        table.add_column(col)
    for s in data["skills"]:
        e = s["effect"]
        d = e["difference"]
        decision = s["decision"]
        said = "-" if decision is None else decision["action"] + (" (applied)" if s["applied"] else "")
        status = "canary" if s["canary"] else s["status"]
        status += " (pinned)" if s["pinned"] else " (person)" if s["held_by_person"] else ""
        table.add_row(escape(s["name"]), status, _arm(e["shown"]), _arm(e["held"]), _diff(d["estimate"]),
                      f"[{d['low']:+.2f}, {d['high']:+.2f}]", _pair(e, "tokens_per_run"), _pair(e, "steps_per_run"),
                      escape(said))
        for kind, k in s["by_kind"].items():  # per kind of request (each at the skill's alpha)
            kd = k["difference"]
            table.add_row(f"  {escape(kind)}", "", _arm(k["shown"]), _arm(k["held"]), _diff(kd["estimate"]),
                          f"[{kd['low']:+.2f}, {kd['high']:+.2f}]", _pair(k, "tokens_per_run"),
                          _pair(k, "steps_per_run"), "")
    if not data["skills"]:
        console().print("No randomized skill yet: put one into canary (skillbank canary NAME), or run the agents "
                        "with a holdout (InjectionConfig.live).")
        return
    console().print(table)


def canary(
    skill: Annotated[str, typer.Argument(help="The skill's id or name.")],
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Put a skill into canary.

    It stays active, shown to part of the runs it is eligible for, until the monitor promotes or rejects it."""
    from skillbank.live.canary import start_canary

    with open_bank(bank_dir, embedder) as bank:
        done = start_canary(bank.skills, skill)
    console().print(f"{escape(done.name)} is in canary (v{done.version}).")


def register(app: typer.Typer) -> None:
    app.command("monitor")(monitor)
    app.command("canary")(canary)
