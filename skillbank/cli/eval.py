"""``skillbank eval``: measure pass^k with and without the bank on the bundled environments."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from skillbank.cli._common import (
    DirOption,
    EmbedderOption,
    console,
    err_console,
    fail,
    open_bank,
)

ENV_CHOICES = ("demo", "all", "car", "retail", "calendar")


def _families(env: str) -> list[str] | None:
    if env in ("demo", "all"):
        return None
    from skillbank.envs import FAMILY_NAMES

    if env not in FAMILY_NAMES:
        fail(f"unknown --env {env!r}: choose from demo, all, {', '.join(FAMILY_NAMES)}")
    return [env]


def load_chat_model(spec: str) -> Any:
    """``provider:model`` -> a LangChain chat model, via ``init_chat_model``.

    A missing provider package becomes one clear error naming the package to install.
    """
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(spec)
    except ImportError as exc:
        text = " ".join(str(exc).split())
        if "pip install" not in text:
            provider = spec.split(":", 1)[0] if ":" in spec else None
            package = f"langchain-{provider.replace('_', '-')}" if provider else "langchain-<provider>"
            text = f"{text}; install the provider's package, e.g. pip install {package}"
        fail(f"--model {spec}: {text}")
    except ValueError as exc:
        fail(f"--model {spec}: {exc}")


def _same_model(chat_model: Any) -> Any:
    """A real model is one client for every trial (its sampling is its own business)."""
    def factory(task: Any, trial_seed: int) -> Any:
        return chat_model
    return factory


def default_run_id(*parts: Any) -> str:
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:10]
    return f"eval-{digest}"


def eval_(
    env: Annotated[str, typer.Option("--env", help="Task set: demo (all families), car, retail, "
                                     "calendar.")] = "demo",
    trials: Annotated[int, typer.Option("--trials", "-n", min=1, help="Trials per task and arm.")] = 5,
    model: Annotated[Optional[str], typer.Option(
        "--model", help="A LangChain chat model as provider:model (init_chat_model), e.g. "
        "openai:gpt-4o-mini. Default: the simulated policy.")] = None,
    report: Annotated[Optional[Path], typer.Option("--report", help="Write an HTML report here "
                                                   "(and its numbers next to it as .json).")] = None,
    json_path: Annotated[Optional[Path], typer.Option(
        "--json", help="Write every number as JSON here ('-': print it instead of the table).")] = None,
    per_template: Annotated[int, typer.Option("--per-template", min=1,
                                              help="Task instances per template.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Task and trial seed.")] = 0,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1,
                                             help="Trials run at once.")] = 2,
    k: Annotated[int, typer.Option("--k", min=0, help="Skills injected per model turn.")] = 5,
    run_id: Annotated[Optional[str], typer.Option(
        "--run-id", help="Name of the run; an interrupted run resumes under the same name. "
        "Default: derived from the arguments and the bank's active skills.")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Start a new run even if one with the "
                                        "same arguments exists.")] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
    bank_dir: DirOption = Path(".skillbank"),
    embedder: EmbedderOption = None,
) -> None:
    """Measure consistency (pass^k, pass@k) on environment tasks, without and with the bank.

    Every trial is stored in the bank, labelled with the run, arm, trial and split.

    Without --model the agent is the simulated policy: the numbers show the machinery only.
    """
    from skillbank import envs
    from skillbank.consistency.report import SIMULATED_NOTE, rich_table, write_report
    from skillbank.consistency.runner import measure_env, new_run_id

    families = _families(env)
    quiet = json_path is not None and str(json_path) == "-"
    out = err_console() if quiet else console()
    tasks = envs.generate_tasks(families, per_template=per_template, seed=seed)
    if not tasks:
        fail(f"--env {env} has no tasks")
    model_factory = None  # the simulated policy, seeded per trial
    if model is not None:
        chat_model = load_chat_model(model)
        model_factory = _same_model(chat_model)

    with open_bank(bank_dir, embedder, create=True) as bank:
        if run_id is None:
            run_id = new_run_id("eval") if fresh else default_run_id(
                env, seed, per_template, trials, model or "simulated", k, bank.snapshot_id())
        existing = bank.trajectories.count(labels={"run": run_id})
        policy = f"model {model}" if model else "the simulated policy (SimulatedPolicy)"
        out.print(f"Measuring {len(tasks)} tasks × {trials} trials × 2 arms with {escape(policy)} "
                  f"on bank {escape(str(bank.path))}")
        out.print(f"run id {run_id}" + (f" (resuming: {existing} trials already stored)"
                                          if existing else "")
                  + "; if interrupted, rerun the same command to resume")
        result = measure_env(tasks, model_factory, trials=trials, bank=bank, k=k, run_id=run_id,
                             concurrency=concurrency, progress=not (quiet or no_progress), seed=seed,
                             model=model or None)
        notes = [f"skillbank eval --env {env} --trials {trials} on bank {bank.path}"]
        if report is not None:
            html_path, numbers = write_report(result, report, title=f"skillbank eval: {env}",
                                              notes=notes)
    if json_path is not None:
        from skillbank.consistency.report import report_data

        data = report_data(result, title=f"skillbank eval: {env}", notes=notes)
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
        if quiet:
            sys.stdout.write(text + "\n")
        else:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(text + "\n", encoding="utf-8")
    if not quiet:
        out.print(rich_table(result, title=f"Consistency, {trials} trials per task and arm"))
        if result.simulated:
            out.print(f"[yellow]{escape(SIMULATED_NOTE)}[/]")
        for warning in result.warnings:
            out.print(f"[red]warning:[/] {escape(warning)}")
        if report is not None:
            out.print(f"Report: {escape(str(html_path))} (numbers: {escape(str(numbers))})")
        if json_path is not None:
            out.print(f"Numbers: {escape(str(json_path))}")
