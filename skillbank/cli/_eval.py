"""``skillbank eval``: measure pass^k with and without the bank, on the bundled environments or
on your own agent (``--agent module:factory --tasks tasks.jsonl``)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from rich.markup import escape

from skillbank.cli._common import console, err_console, fail, open_bank
from skillbank.cli._agent_factory import load_factory
from skillbank.cli.options import DirOption, EmbedderOption


def _provider(env: str) -> Any:
    """The installed task set that answers for ``--env env``."""
    from skillbank.cli._plugins import environment_providers

    providers = environment_providers()
    for provider in providers:
        if env in provider.names:
            return provider
    known = [name for p in providers for name in p.names]
    if not known:
        fail(f"--env {env}: no task sets are installed (they come with skillbank's harness, "
             "`pip install -e .` from the repository); use --agent and --tasks for your own agent")
    fail(f"unknown --env {env!r}: choose from {', '.join(known)}")


def _env_tasks(env: str, model: str | None, *, categories: str | None, scenarios: int | None,
               split: str | None, per_template: int, seed: int) -> list[Any]:
    """The tasks of ``--env`` (BFCL's entries for ``bfcl``), only ``split``'s if given."""
    try:
        tasks = _provider(env).tasks(env, model=model, categories=categories, scenarios=scenarios,
                                     per_template=per_template, seed=seed)
    except ValueError as exc:
        fail(str(exc))
    if split is not None:
        from skillbank._splits import SPLITS

        # A task set with split names of its own (τ²-bench's train and test) is split by them.
        named = {str(t.split) for t in tasks if getattr(t, "split", None) is not None}
        known = list(SPLITS) if named <= set(SPLITS) else sorted(named, key=lambda s: (s != "train", s))
        if split not in known:
            fail(f"unknown --split {split!r}: choose {' or '.join(known)}")
        tasks = [t for t in tasks if t.split == split]
    return tasks


# Model options a task set may take besides --model (EnvironmentProvider.options): the keyword
# measure() gets -> the flag.
_MODEL_OPTIONS = {"user_model": "--user-model", "judge_model": "--judge-model"}


def _model_options(env: str, given: dict[str, str | None]) -> dict[str, Any]:
    """The chat models of the options the task set of ``env`` takes, checked against it."""
    provider = _provider(env)
    takes = provider.options(env) if hasattr(provider, "options") else {}
    for name, spec in given.items():
        if spec is not None and name not in takes:
            fail(f"{_MODEL_OPTIONS[name]} does not apply to --env {env}")
    for name, required in takes.items():
        if required and given.get(name) is None:
            fail(f"--env {env} needs {_MODEL_OPTIONS[name]}")
    return {name: load_chat_model(spec, _MODEL_OPTIONS[name]) for name, spec in given.items()
            if spec is not None}


def load_chat_model(spec: str, option: str = "--model") -> Any:
    """``provider:model`` or ``local:PATH.gguf`` -> a chat model; a bad spec fails in one line."""
    from skillbank.chat import ModelSpecError, resolve_chat_model
    from skillbank.errors import MissingExtraError

    try:
        return resolve_chat_model(spec)
    except (ModelSpecError, MissingExtraError) as exc:
        fail(f"{option} {spec}: {exc}")


def _per_trial(chat_model: Any) -> Callable[[Any, int], Any]:
    """One client for every trial; a model that takes a seed (the local one) samples with the
    trial's seed, so both arms of a trial start alike and a rerun repeats it."""
    from skillbank.chat import with_seed

    def factory(task: Any, trial_seed: int) -> Any:
        return with_seed(chat_model, trial_seed)
    return factory


def default_run_id(*parts: Any) -> str:
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:10]
    return f"eval-{digest}"


def eval_(
    env: Annotated[str, typer.Option("--env", help="Task set: demo (car, retail, calendar), car, "
                                     "retail, calendar, simple (for small real models), all, bfcl "
                                     "(BFCL multi-turn; needs --model), or tau2:DOMAIN (τ²-bench: "
                                     "mock, airline, retail, telecom; tau2:mock:solo and "
                                     "tau2:telecom:solo without a user; needs --model and "
                                     "--user-model).")] = "demo",
    categories: Annotated[Optional[str], typer.Option(
        "--categories", help="With --env bfcl: BFCL categories, comma-separated, from base, "
        "miss_func, miss_param, long_context. Default: base,miss_func,miss_param.")] = None,
    scenarios: Annotated[Optional[int], typer.Option(
        "--scenarios", min=1, help="With --env bfcl: only this many of BFCL's 200 scenarios "
        "(the same ones in every category, spread over API classes). Default: all.")] = None,
    split: Annotated[Optional[str], typer.Option(
        "--split", help="Only the tasks of this split (train or heldout; τ²-bench: its own "
        "train or test), e.g. to log runs for evolution on train and measure on the held-out "
        "split, which evolution never learns from. Default: both.")] = None,
    trials: Annotated[int, typer.Option("--trials", "-n", min=1, help="Trials per task and arm.")] = 5,
    model: Annotated[Optional[str], typer.Option(
        "--model", help="A chat model: provider:model (init_chat_model, e.g. openai:gpt-4o-mini), "
        "or local:PATH.gguf / local:1.5b (skillbank model fetch). Default: the simulated "
        "policy.")] = None,
    user_model: Annotated[Optional[str], typer.Option(
        "--user-model", help="With --env tau2:DOMAIN: the chat model that plays τ²'s user "
        "simulator (same forms as --model).")] = None,
    judge_model: Annotated[Optional[str], typer.Option(
        "--judge-model", help="With --env tau2:*: a chat model that judges τ²'s natural-language "
        "assertions. Default: they are skipped (as on τ²'s leaderboard), and the result says so.")] = None,
    agent: Annotated[Optional[str], typer.Option(
        "--agent", help="Your agent instead of the environments: module:factory or "
        "file.py:factory; factory(middleware=[...], seed=N) returns (agent, verify). Needs "
        "--tasks.")] = None,
    tasks_path: Annotated[Optional[Path], typer.Option(
        "--tasks", help="With --agent: a JSON Lines file, one task per line with id, type, "
        "input (optional split) and what your verify needs.")] = None,
    report: Annotated[Optional[Path], typer.Option("--report", help="Write an HTML report here "
                                                   "(and its numbers next to it as .json).")] = None,
    json_path: Annotated[Optional[Path], typer.Option(
        "--json", help="Write every number as JSON here ('-': print it instead of the table).")] = None,
    per_template: Annotated[int, typer.Option("--per-template", min=1,
                                              help="Task instances per template.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Task and trial seed.")] = 0,
    concurrency: Annotated[Optional[int], typer.Option(
        "--concurrency", "-c", min=1, help="Trials run at once. Default 2; 1 for a local model "
        "(it generates one reply at a time and reuses the previous prompt's cache).")] = None,
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
    """Measure consistency (pass^k, pass@k) without and with the bank.

    Every trial is stored in the bank, labelled with the run, arm, trial and split.

    Without --model or --agent the agent is the simulated policy: the numbers show the
    machinery only.
    """
    from skillbank.consistency.report import SIMULATED_NOTE, rich_table, write_report
    from skillbank.consistency.agents import measure_agent
    from skillbank.consistency._trials import new_run_id

    quiet = json_path is not None and str(json_path) == "-"
    out = err_console() if quiet else console()
    if (agent is None) != (tasks_path is None):
        fail("--agent and --tasks go together: --agent module:factory --tasks tasks.jsonl")
    if agent is not None:
        if model is not None:
            fail("--model does not apply with --agent: your factory builds the agent and its model")
        if user_model is not None or judge_model is not None:
            fail("--user-model and --judge-model do not apply with --agent: they are task-set options")
        from skillbank.consistency._taskfile import load_tasks

        assert tasks_path is not None  # checked above: --agent and --tasks go together
        build = load_factory(agent)
        tasks: list[Any] = load_tasks(tasks_path)
        what = f"agent {agent}"
        title = f"skillbank eval: {agent}"
        args: tuple[Any, ...] = ("agent", agent, hashlib.sha256(tasks_path.read_bytes()).hexdigest(), seed, trials, k)
        command = f"skillbank eval --agent {agent} --tasks {tasks_path} --trials {trials}"
        concurrency = concurrency or 1  # a user's agent may not be thread-safe
    else:
        tasks = _env_tasks(env, model, categories=categories, scenarios=scenarios, split=split,
                           per_template=per_template, seed=seed)
        if not tasks:
            fail(f"--env {env} has no tasks")
        model_factory = None  # the simulated policy, seeded per trial
        specs = {"user_model": user_model, "judge_model": judge_model}
        extra_models = _model_options(env, specs)
        local = any(m is not None and m.startswith("local:") for m in (model, user_model, judge_model))
        if model is not None:
            model_factory = _per_trial(load_chat_model(model))
        what = f"model {model}" if model else "the simulated policy (SimulatedPolicy)"
        if user_model is not None:
            what += f", user {user_model}"
        title = f"skillbank eval: {env}"
        # New options join the run id only when used, so earlier runs keep their ids (and resume).
        subset = [categories, scenarios] if env == "bfcl" else []
        used = [f"{name}={spec}" for name, spec in specs.items() if spec is not None]
        args = (env, seed, per_template, trials, model or "simulated", k, *subset,
                *([split] if split else []), *used)
        options = "".join(f" {flag} {value}" for flag, value in (("--categories", categories),
                          ("--scenarios", scenarios), ("--split", split)) if value is not None)
        command = (f"skillbank eval --env {env}{options} --trials {trials}"
                   + (f" --model {model}" if model else "")
                   + "".join(f" {_MODEL_OPTIONS[name]} {spec}" for name, spec in specs.items()
                             if spec is not None))
        concurrency = concurrency or (1 if local else 2)

    with open_bank(bank_dir, embedder, create=True) as bank:
        if run_id is None:
            run_id = new_run_id("eval") if fresh else default_run_id(*args, bank.snapshot_id())
        existing = bank.trajectories.count(labels={"run": run_id})
        out.print(f"Measuring {len(tasks)} tasks × {trials} trials × 2 arms with {escape(what)} "
                  f"on bank {escape(bank.location)}")
        out.print(f"run id {run_id}" + (f" (resuming: {existing} trials already stored)"
                                          if existing else "")
                  + "; if interrupted, rerun the same command to resume")
        common: dict[str, Any] = dict(trials=trials, bank=bank, k=k, run_id=run_id, concurrency=concurrency,
                      progress=not (quiet or no_progress), seed=seed)
        if agent is not None:
            result = measure_agent(build, tasks, model=agent, **common)
        else:
            result = _provider(env).measure(tasks, model_factory, model=model or None,
                                            **extra_models, **common)
        notes = [f"{command} on bank {bank.location}", *result.notes]
        if report is not None:
            html_path, numbers = write_report(result, report, title=title, notes=notes)
    if json_path is not None:
        from skillbank.consistency.report import report_data

        data = report_data(result, title=title, notes=notes)
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
        for line in result.notes:
            out.print(escape(line))
        for warning in result.warnings:
            out.print(f"[red]warning:[/] {escape(warning)}")
        if report is not None:
            out.print(f"Report: {escape(str(html_path))} (numbers: {escape(str(numbers))})")
        if json_path is not None:
            out.print(f"Numbers: {escape(str(json_path))}")
