"""``skillbank demo``: the whole loop, offline, on the embedded defaults, in a few minutes.

1. Tasks: seeded tasks from the bundled environments (car, retail, calendar), split by template
   into an evolution set (``train``) and a held-out set (``heldout``) whose templates the skills
   never see.
2. Baseline: every evolution-set task, ``trials`` times, without the bank and with the (empty)
   bank. Every trial is a trajectory in the bank.
3. Evolution rounds: the rule-based distiller reads the evolution-set trajectories and proposes
   skills; they start as candidates. A candidate is promoted only if re-running its evidence
   tasks plus a sample of other evolution-set tasks (never held-out tasks) with it is better
   than without it, with no task getting worse (the gate). Between rounds the agent runs the
   evolution set with the bank, so the next round sees how the skills did.
4. Final: every task of both sets, ``trials`` times, without and with the bank.
5. A terminal table and an HTML report (with a JSON file of every number).

The agent is :class:`~skillbank_harness.envs.SimulatedPolicy`: the numbers show the machinery working.
They are not a claim about any real model; ``skillbank eval --model provider:model`` measures
one.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbank.adapters.config import InjectionConfig
from skillbank.consistency.precision import InjectionPrecision, injection_precision
from skillbank.consistency.report import SIMULATED_NOTE, rich_table, write_report
from skillbank.consistency.runner import ARM_WITH, ARM_WITHOUT, MeasureResult
from skillbank_harness.envs.measure import measure_env
from skillbank_harness.envs.workers import TaskRecipe, TrialWorkers

__all__ = ["DemoConfig", "DemoResult", "run_demo", "QUICK", "FULL"]


@dataclass(frozen=True)
class DemoConfig:
    """The demo's size. ``FULL`` is sized for under 3 minutes on 2 cores with MiniLM."""

    families: tuple[str, ...] | None = None  # None: every family
    per_template: int = 2  # task instances per template (and its budget variant)
    trials: int = 4  # per task and arm; pass^3 needs 3
    rounds: int = 2  # evolution rounds
    gate: str = "validate"  # "validate": re-run candidates; "policy": promote lint-clean ones
    validate_trials: int = 2  # trials per task and arm when validating one candidate
    validate_tasks: int = 6  # tasks per candidate: its evidence tasks first, then a sample
    validate_budget: int = 600  # validation trials per round; candidates beyond it wait
    k: int = 5  # skills injected per model turn
    min_score: float = 0.0  # relevance floor for injected skills (cosine similarity)
    # Lessons learned for several tools become general skills (evolution step 6); False is the
    # ablation that keeps every lesson tool-specific.
    general_lessons: bool = True
    # Inject only skills learned with the agent's own tools (InjectionConfig.match_toolset);
    # False is the ablation where retrieval alone decides.
    match_toolset: bool = True
    concurrency: int = 2
    # Worker processes for the measurements' simulated trials and the failure-mass re-runs
    # (0: threads of this process). The gate's re-runs stay on threads: it counts each run's
    # injections in its own middleware (RESULTS.md: in workers they gained nothing measurable).
    processes: int = 2
    max_train_tasks: int | None = None  # cap on evolution-set tasks (quick mode)
    max_heldout_tasks: int | None = None


FULL = DemoConfig()
QUICK = DemoConfig(families=("car",), per_template=1, trials=3, rounds=1, validate_trials=1,
                   validate_tasks=2, validate_budget=32, max_train_tasks=6, max_heldout_tasks=3,
                   processes=0)  # a few dozen trials: starting workers would take longer


@dataclass
class DemoResult:
    bank_path: Path
    report_html: Path
    report_json: Path
    baseline: MeasureResult
    final: MeasureResult
    evolution: list[dict[str, Any]] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def headline(self) -> dict[str, dict[str, dict[str, float]]]:
        """``split -> arm -> {pass^1, pass^3, pass@3, gap}`` of the final measurement."""
        return {split: self.final.headline(split) for split in self.final.splits}


def _round_row(report: Any, validation: dict[str, Any] | None) -> dict[str, Any]:
    statuses = [c.status for c in report.changes]
    promoted = sum(1 for d in report.gate if d.decision == "promoted")
    rejected = sum(1 for d in report.gate if d.decision == "rejected")
    waiting = sum(1 for d in report.gate if d.decision == "waiting")
    row = {
        "round": report.round,
        "trajectories": report.trajectories,
        "successes": report.successes,
        "proposed": len(report.changes) + len(report.rejected),
        "candidates": sum(1 for s in statuses if s in ("candidate", "active", "rejected",
                                                         "quarantined")),
        "promoted": promoted,
        "rejected": rejected + len(report.rejected),
        "waiting": waiting,
        "retired": sum(1 for c in report.changes if c.status == "retired"),
        "evolved_on": "train",
        "seconds": round(report.seconds, 2),
        "changes": [{"kind": c.kind, "skill": c.skill, "status": c.status, "reason": c.reason,
                     "note": c.note} for c in report.changes],
    }
    notes = []
    if rejected:
        notes.append(f"{rejected} failed the gate")
    if report.rejected:
        notes.append(f"{len(report.rejected)} refused by lint")
    if waiting:
        notes.append(f"{waiting} waiting for review")
    if validation is not None:
        row["validation_trials"] = validation["trials"]
        row["validation_seconds"] = round(validation["seconds"], 1)
        notes.append(f"gate re-ran {validation['trials']} trials")
    row["note"] = "; ".join(notes)
    return row


def run_demo(
    bank_dir: str | Path | None = None,
    *,
    seed: int = 0,
    config: DemoConfig = FULL,
    report_path: str | Path | None = None,
    embedder: Any = None,
    console: Any = None,
    progress: bool = True,
) -> DemoResult:
    """Run the demo and write its report; returns the measurements and where things are.

    Args:
        bank_dir: The bank folder; default: a new temporary folder (kept, so it can be
            inspected with ``skillbank -d``). A folder with a bank in it is used as it is: its
            skills count as the starting bank.
        seed: Seeds the tasks, the trials and the bootstrap.
        config: :data:`FULL` (default) or :data:`QUICK` (a smoke test), or your own.
        report_path: Where the HTML report goes; default ``<bank>/demo-report.html``.
        embedder: The bank's embedder; default: the bundled MiniLM model.
        console: A rich console for progress lines; default: a new one.
        progress: Show progress bars.
    """
    from rich.console import Console
    from rich.markup import escape

    from skillbank_harness import envs
    from skillbank import SkillBank, evolve
    from skillbank.consistency.validation import ValidationConfig, ValidationLog, make_validator

    if config.gate not in ("validate", "policy"):
        raise ValueError(f"unknown gate {config.gate!r}: use 'validate' or 'policy'")
    out = console or Console(highlight=False)
    started = time.perf_counter()
    phases: dict[str, float] = {}
    cpu: dict[str, float] = {}
    cpu_mark = [time.process_time()]

    def phase(name: str, t0: float) -> None:
        phases[name] = round(time.perf_counter() - t0, 2)
        now = time.process_time()
        cpu[name] = round(now - cpu_mark[0], 2)  # CPU seconds of this process (not its workers)
        cpu_mark[0] = now

    bank_path = Path(bank_dir) if bank_dir is not None else Path(tempfile.mkdtemp(prefix="skillbank-demo-")) / "bank"
    report_html = Path(report_path) if report_path is not None else bank_path / "demo-report.html"

    tasks = envs.generate_tasks(list(config.families) if config.families else None,
                                per_template=config.per_template, seed=seed)
    train, heldout = envs.split_tasks(tasks, by="template")
    train = envs.take_spread(train, config.max_train_tasks)
    heldout = envs.take_spread(heldout, config.max_heldout_tasks)
    out.print(f"[bold]skillbank demo[/] (seed {seed}): {len(train)} evolution-set tasks and "
              f"{len(heldout)} held-out tasks from {', '.join(sorted({t.family for t in tasks}))}, "
              f"split by template; {config.trials} trials per task and arm")
    out.print("[yellow]The agent is a simulated policy: these numbers show the machinery "
              "working, not any real model.[/]")
    out.print(f"Bank: {escape(str(bank_path))}")

    t0 = time.perf_counter()
    bank = SkillBank.open(bank_path, embedder=embedder)
    _refuse_rerun(bank)
    workers = None
    if config.processes > 0:
        recipe = TaskRecipe(config.families, config.per_template, seed)
        workers = TrialWorkers(bank.location, recipe, config.processes, embedder)
        workers.warm_up()  # the workers start while this process loads its own model
    blas = _one_blas_thread_each()
    try:
        bank.embedder.embed_query("warm up the embedding model")
        phase("open bank + load model", t0)
        run_tag = f"demo-{seed}"

        # -- 1. baseline on the evolution set --------------------------------------------------
        t0 = time.perf_counter()
        out.print("\n[bold]1. Baseline[/] on the evolution set: without the bank and with the "
                  "empty bank")
        baseline = measure_env(train, trials=config.trials, bank=bank, k=config.k, middleware_options=_injection_options(config),
                               run_id=f"{run_tag}-baseline", concurrency=config.concurrency, workers=workers,
                               progress=progress, seed=seed, description="baseline")
        phase("baseline", t0)
        _print_line(out, "baseline", baseline, None)
        # Which baseline failures a lesson could fix: the workers re-run them during evolution.
        mass = workers.failure_mass(baseline.records) if workers is not None else None

        # -- 2. evolution rounds ---------------------------------------------------------------
        out.print(f"\n[bold]2. Evolution[/]: {config.rounds} round(s) of the rule-based "
                  f"distiller on evolution-set trajectories; the gate "
                  + ("re-runs each candidate on evolution-set tasks" if config.gate == "validate"
                     else "promotes every lint-clean candidate (policy)"))
        by_id = {t.id: t for t in train}

        def trial_fn(task: Any, middleware: Any, trial_seed: int) -> bool:
            return envs.run_task(task, envs.SimulatedPolicy(seed=trial_seed),
                                 middleware=[middleware]).success

        rounds: list[dict[str, Any]] = []
        general_tools = None if config.general_lessons else 0  # None: EvolutionConfig's default
        k = baseline.key_k
        empty = baseline.headline("train").get(ARM_WITH, {})
        progress_points = [_point("baseline\n(without)", baseline, ARM_WITHOUT, "train",
                                  f"the evolution set without the bank (run {baseline.run_id}; with the "
                                  f"bank as it started: pass^{k} {empty.get(f'pass^{k}', 0):.0%}). Every "
                                  f"stage runs the same tasks with the same trial seeds (seed {seed}: trial "
                                  "i of a task gets the same seed at every stage), so the points differ "
                                  "in the bank only.")]
        active_before = _active(bank)
        for round_no in range(1, config.rounds + 1):
            t0 = time.perf_counter()
            log = ValidationLog()
            status = out.status(f"round {round_no}: distilling candidates") if progress \
                else contextlib.nullcontext()
            with status as spinner:
                if spinner is not None:
                    log.listener = lambda e, r=round_no, s=spinner, lg=log: s.update(
                        f"round {r}: the gate has checked {len(lg.entries)} candidate(s) "
                        f"({lg.trials} trials); last: {e['skill']}, gain {e['gain']:+.2f}")
                if config.gate == "validate":
                    checks = ValidationConfig(trials=config.validate_trials, concurrency=config.concurrency,
                                              seed=seed + 1000 * round_no, k=config.k,
                                              middleware_options=_injection_options(config),
                                              max_tasks=config.validate_tasks)
                    validate = make_validator(bank, by_id, trial_fn, checks, log=log)
                    report = evolve(bank, auto_promote=True, validate=validate,
                                    eval_budget=config.validate_budget, min_general_tools=general_tools)
                else:
                    report = evolve(bank, promote_policy="all", min_general_tools=general_tools)
            row = _round_row(report, {"trials": log.trials, "seconds": log.seconds}
                             if config.gate == "validate" else None)
            row["gate"] = config.gate
            row["validations"] = log.entries
            phase(f"evolution round {round_no}", t0)
            active = [s.name for s in bank.list_skills(status="active")]
            row["active_after"] = len(active)
            out.print(f"  round {round_no}: read {row['trajectories']} trajectories, "
                      f"{row['candidates']} candidate(s), {row['promoted']} promoted, "
                      f"{row['rejected']} rejected ({row['note'] or 'no gate work'}); "
                      f"{len(active)} active skill(s) in {phase_time(phases, round_no)}s")
            if round_no < config.rounds:
                t0 = time.perf_counter()
                run = measure_env(train, trials=config.trials, bank=bank, k=config.k, middleware_options=_injection_options(config),
                                  arms=(ARM_WITH,), run_id=f"{run_tag}-round{round_no}",
                                  concurrency=config.concurrency, workers=workers, progress=progress, seed=seed,
                                  description=f"evolution set with the bank (round {round_no})")
                phase(f"trials after round {round_no}", t0)
                head = run.headline()[ARM_WITH]
                progress_points.append(_point(f"after round {round_no}\n(with)", run, ARM_WITH, None,
                                              _bank_note(run, active_before, _active(bank), round_no)))
                active_before = _active(bank)
                row["train_pass_hat_k"] = head[f"pass^{k}"]
                out.print(f"  evolution set with the bank after round {round_no}: pass^{k} "
                          f"{head[f'pass^{k}']:.0%}, pass@{k} {head[f'pass@{k}']:.0%}")
            rounds.append(row)

        # -- 3. final measurement ----------------------------------------------------------------
        t0 = time.perf_counter()
        out.print("\n[bold]3. Final[/]: every task of both sets, without and with the bank")
        final = measure_env(train + heldout, trials=config.trials, bank=bank, k=config.k, middleware_options=_injection_options(config),
                            run_id=f"{run_tag}-final", concurrency=config.concurrency, workers=workers,
                            progress=progress, seed=seed, description="final")
        phase("final", t0)
        last = config.rounds
        progress_points.append(_point(f"after round {last}\n(final, with)", final, ARM_WITH, "train",
                                      _bank_note(final, active_before, _active(bank), last)
                                      + " The final measurement: held-out tasks were run too, "
                                        "this point counts the evolution set only."))
        precision = injection_precision(bank, [r.trajectory_id for r in final.records
                                               if r.arm == ARM_WITH and r.trajectory_id])

        # -- 4. report -----------------------------------------------------------------------------
        t0 = time.perf_counter()
        general_note = (
            "General lessons: on. A lesson learned for two or more tools became one general skill "
            "(no tool named), injected on every turn. The simulated policy applies a general "
            "sentence to every tool by construction, so most of the held-out gain depends on it: "
            "compare `skillbank demo --no-general`, where every lesson stays tool-specific."
            if config.general_lessons else
            "General lessons: off (--no-general): every lesson stays specific to its tool.")
        notes = [
            (f"Command: skillbank demo --seed {seed}. {len(train)} evolution-set (train) tasks "
             f"and {len(heldout)} held-out tasks, {config.trials} trials per task and arm; the "
             "split is by template: held-out tasks are phrasings and procedures no skill was "
             "evolved on."),
            f"Evolution: {config.rounds} round(s) of the rule-based distiller on evolution-set "
            "trajectories only; gate: " + (
                f"each candidate re-run on up to {config.validate_tasks} evolution-set tasks "
                f"({config.validate_trials} paired trial(s) each, with and without it), promoted "
                f"only for a gain (the mean of the changes in pass^{config.validate_trials} and in "
                "success rate) with no task getting worse; tasks run one at a time, and a "
                "validation stops once the tasks left cannot change its verdict."
                if config.gate == "validate" else "every lint-clean candidate promoted (policy)."),
            general_note,
            _precision_note(precision),
        ]
        notes += [line for line in (verdict(final, split) for split in final.splits) if line]
        html_path, json_path = write_report(
            {"Final: evolution set and held-out set, without vs with the bank": final,
             "Baseline: evolution set before evolution (the bank is empty)": baseline},
            report_html, title="skillbank demo: consistency with and without the skill bank",
            notes=notes, evolution=rounds, progress=progress_points,
            extra={"demo": {"seed": seed, "config": _config_dict(config), "phases": phases,
                            "cpu_seconds": cpu, "bank": str(bank_path),
                            "injection_precision": precision.as_dict()}})
        phase("report", t0)
        mass = mass.result() if mass is not None else None  # long done: it ran during evolution
    finally:
        blas.__exit__(None, None, None)
        if workers is not None:
            workers.close()
        bank.close()

    seconds = time.perf_counter() - started
    out.print()
    out.print(rich_table(final, title=f"Final: pass^k without and with the bank "
                                      f"({config.trials} trials per task and arm)"))
    _print_verdict(out, final)
    out.print(escape((mass or _failure_mass(baseline, train)).summary()))
    out.print(escape(general_note))
    out.print(escape(_precision_note(precision)))
    out.print(f"[yellow]{escape(SIMULATED_NOTE)}[/]")
    out.print(f"Report: {escape(str(html_path))}  (numbers: {escape(str(json_path))})")
    out.print(f"Bank: {escape(str(bank_path))}  (try: skillbank skills list -d {escape(str(bank_path))})")
    out.print(f"Finished in {seconds:.0f}s.")
    return DemoResult(bank_path=bank_path, report_html=html_path, report_json=json_path,
                      baseline=baseline, final=final, evolution=rounds, phases=phases,
                      cpu_seconds=cpu, seconds=seconds)


def _failure_mass(baseline: MeasureResult, train: list[Any]) -> Any:
    """Which baseline failures some lesson kind could fix at all (re-runs the failed trials)."""
    from skillbank_harness import envs
    from skillbank_harness.envs.failures import failure_mass

    return failure_mass(baseline.records, train,
                        lambda task, seed: envs.run_task(task, envs.SimulatedPolicy(seed=seed)))


def _injection_options(config: DemoConfig) -> dict[str, Any]:
    return {"injection": InjectionConfig(min_score=config.min_score, match_toolset=config.match_toolset)}


def _precision_note(precision: InjectionPrecision) -> str:
    share = precision.share
    on = "n/a" if share is None else f"{share:.1%}"
    return (f"Injection precision (final, with the bank): {on} of {precision.pairs} injected learned "
            f"skills were learned with the agent's own tools; {precision.no_toolset} more were general "
            "lessons or skills without a recorded toolset.")


def _refuse_rerun(bank: Any) -> None:
    """A second demo on one bank would evolve on the first one's runs (held-out ones included)
    and compare against a baseline that is no longer the starting bank: refuse, say why."""
    from skillbank.errors import AlreadyMeasuredError

    earlier = {run: n for run, n in bank.trajectories.label_values("run").items() if run.startswith("demo-")}
    if earlier:
        bank.close()
        runs = ", ".join(f"{run}: {n} trajectories" for run, n in sorted(earlier.items()))
        raise AlreadyMeasuredError(
            f"{bank.location} already holds an earlier demo's runs ({runs}); a rerun would learn "
            "from them and its baseline would not be this bank's starting point. Run the demo "
            "in a new folder (omit -d), or remove this one first.")


def _one_blas_thread_each() -> Any:
    """Limit BLAS to one thread per calling thread while the demo runs.

    Trials already run on ``concurrency`` threads; each embedding's matrix products spawning
    their own BLAS threads on top oversubscribes two cores (measured: about a third more CPU
    time, spent spinning). ``threadpoolctl`` ships with scikit-learn, a sentence-transformers
    dependency; without it nothing is limited.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - always there with sentence-transformers
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _point(label: str, result: MeasureResult, arm: str, split: str | None, note: str) -> dict[str, Any]:
    k = result.key_k
    summary = result.summary(arm, split, ks=(k,))
    return {"label": label, "k": k, "pass_hat_k": summary.pass_hat_k[k],
            "pass_at_k": summary.pass_at_k[k], "arm": arm, "run": result.run_id, "note": note,
            "snapshot": result.bank_snapshot,
            "title": f"evolution set: pass^{k} and pass@{k} over the stages of the demo"}


def _active(bank: Any) -> dict[str, int]:
    """Active skill name -> version: what the 'with' arm can inject."""
    return {s.name: s.version for s in bank.list_skills(status="active")}


def _bank_note(result: MeasureResult, before: dict[str, int], after: dict[str, int], round_no: int) -> str:
    """Which bank a point measured and how it differs from the previous point's."""
    added = sorted(set(after) - set(before))
    retired = sorted(set(before) - set(after))
    edited = sorted(f"{n} (v{before[n]} to v{after[n]})" for n in set(before) & set(after) if before[n] != after[n])
    changes = [f"{label} {', '.join(names)}" for label, names in
               (("added", added), ("edited", edited), ("retired", retired)) if names]
    snapshot = (result.bank_snapshot or "").split(":")[-1][:12]
    return (f"with the bank (run {result.run_id}, bank snapshot {snapshot}, {len(after)} active skills); "
            f"round {round_no} " + ("; ".join(changes) if changes else "changed no active skill")
            + ". The skills' usage statistics, which weigh in the retrieval ranking, also grew with "
              "the trials in between.")


def phase_time(phases: dict[str, float], round_no: int) -> float:
    return phases.get(f"evolution round {round_no}", 0.0)


def _config_dict(config: DemoConfig) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(config)


def _print_line(out: Any, label: str, result: MeasureResult, split: str | None) -> None:
    k = result.key_k
    parts = []
    for arm, numbers in result.headline(split).items():
        parts.append(f"{arm}: pass^{k} {numbers[f'pass^{k}']:.0%}, pass@{k} "
                     f"{numbers[f'pass@{k}']:.0%}")
    out.print(f"  {label}: " + "; ".join(parts))


def verdict(final: MeasureResult, split: str) -> str | None:
    """One plain sentence: did pass^k rise and the gap shrink with the bank on ``split``, how
    large is the change, and does its bootstrap interval exclude zero?"""
    k = final.key_k
    head = final.headline(split)
    if ARM_WITH not in head or ARM_WITHOUT not in head:
        return None
    d_hat = head[ARM_WITH][f"pass^{k}"] - head[ARM_WITHOUT][f"pass^{k}"]
    d_gap = head[ARM_WITH]["gap"] - head[ARM_WITHOUT]["gap"]
    low, high = final.delta(split, k)["ci"]
    name = {"heldout": "held-out set", "train": "evolution set"}.get(split, split)
    ci = f"95% CI {100 * low:+.0f} to {100 * high:+.0f}"
    if d_hat > 0:
        size = "a small gain" if d_hat < 0.10 else "a large gain"
        sure = "the interval excludes zero" if low > 0 else "within the noise of this sample"
        text = f"{name}: pass^{k} {100 * d_hat:+.0f} pts with the bank ({ci}): {size}, {sure}"
    else:
        text = f"{name}: no gain in pass^{k} with the bank ({100 * d_hat:+.0f} pts, {ci})"
    if d_gap < 0:
        text += f"; the gap pass@{k} − pass^{k} shrank by {100 * -d_gap:.0f} pts."
    else:
        text += f"; the gap pass@{k} − pass^{k} did not shrink ({100 * d_gap:+.0f} pts)."
    return text


def _print_verdict(out: Any, final: MeasureResult) -> None:
    for split in final.splits:
        text = verdict(final, split)
        if text:
            out.print("  " + text)
