"""The loop on a real model: a local Qwen2.5-Coder (llama.cpp) as the agent and as the distiller.

    python benchmarks/bench_real_model.py --calibrate            # unguided 1.5B, per template
    python benchmarks/bench_real_model.py --quick                # end to end in a few minutes
    python benchmarks/bench_real_model.py                        # the full configuration
    python benchmarks/bench_real_model.py --size 0.5b --trials 3 --per-template 2 --rounds 2

Needs ``pip install 'skillbank[local]'`` and ``skillbank model fetch --size 1.5b``.

What runs (the simple tier, ``skillbank_harness.envs`` family ``simple``, split by template):

1. Baseline: the evolution set, ``trials`` times per task, logged through
   ``SkillBankMiddleware`` (``skillbank_harness.envs.measure_env``) with the empty bank.
2. For each distiller -- (a) the rule distiller, (b) ``LLMDistiller`` on the *same* local model --
   a copy of the baseline bank goes through ``rounds`` evolution rounds. The gate re-runs every
   candidate on evolution-set tasks with and without it (``make_validator``) and promotes it
   only for a gain with no task worse. Between rounds the evolution set runs with the bank.
3. Final: both sets, without and with the evolved bank, ``trials`` times per task and arm:
   pass^1, pass^3, pass@3, the gap, tokens and seconds per trial, bootstrap intervals.

For the LLM distiller the report counts what it proposed, what lint refused, what the gate
rejected and what it promoted. ``--calibrate`` runs the unguided 1.5B model on every simple
template (no bank, no middleware: the agent as it is) and prints each template's success rate;
templates are kept when it lies between 30% and 70%.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

FAMILY = "small"
MIN_HEADROOM = 0.20  # keep a template when the oracle beats the unguided model by this much
CALIBRATION_FILE = Path(__file__).resolve().parent / "real_model_calibration.json"
CALIBRATION_SECTION = "Real model: calibration of the small tier by headroom"
LOOP_SECTION = "Real model: the loop on a local Qwen2.5-Coder"
ARM_ORACLE = "oracle"


def _model(size: str) -> Any:
    from skillbank.chat import resolve_chat_model

    model = resolve_chat_model(f"local:{size}")
    model.engine()  # load once, before anything is timed
    return model


# ------------------------------------------------------------------------------- the oracle


def oracle_block(template_id: str) -> str:
    """A template's oracle hint as the bank would inject it: one skill in the skills block."""
    from datetime import datetime, timezone

    from oracle_hints import ORACLE
    from skillbank.models import Skill, SkillContent, SkillKind, SkillStatus
    from skillbank.retrieval import render

    oracle = ORACLE[template_id]
    now = datetime.now(timezone.utc)
    skill = Skill(id="oracle", content=SkillContent(name=template_id.rsplit(".", 1)[-1].replace("_", "-"),
                                                    description=oracle.when, body=oracle.hint,
                                                    kind=SkillKind.procedure),
                  status=SkillStatus.active, version=1, content_hash="oracle", created_at=now,
                  updated_at=now)
    return render([skill])


def run_oracle(task: Any, model: Any) -> Any:
    """One run with the template's oracle hint where the bank puts skills (the system message)."""
    from skillbank_harness import envs

    return envs.run_task(task, model, system_prompt=task.system_prompt + "\n\n" + oracle_block(task.template))


# ------------------------------------------------------------------------------- calibration


def _tokens(messages: list) -> int:
    return sum((m.usage_metadata or {}).get("total_tokens", 0)
               for m in messages if getattr(m, "usage_metadata", None))


def calibrate(size: str, runs: int, seed: int, templates: list[str] | None, log: Path) -> list[dict]:
    """Each small template ``runs`` times (fresh instances) in two arms, on the unguided model:
    *without* (the task's system prompt only) and *oracle* (plus the template's hint, where the
    bank would put it). Both arms of a run share the instance and the sampling seed."""
    from oracle_hints import ORACLE
    from skillbank.consistency.runner import trial_seed
    from skillbank_harness import envs

    model = _model(size)
    tasks = envs.generate_tasks([FAMILY], per_template=runs, seed=seed)
    by_template: dict[str, list] = {}
    for t in tasks:
        if not templates or t.template in templates:
            by_template.setdefault(t.template, []).append(t)
    rows = []
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        for template_id, group in sorted(by_template.items()):
            ok = {"without": 0, ARM_ORACLE: 0}
            seconds = 0.0
            for task in group[:runs]:
                for arm in ("without", ARM_ORACLE):
                    run_model = model.with_seed(trial_seed(task.id, 0, seed))
                    t0 = time.perf_counter()
                    result = (envs.run_task(task, run_model) if arm == "without"
                              else run_oracle(task, run_model))
                    dt = time.perf_counter() - t0
                    ok[arm] += result.success
                    seconds += dt
                    out.write(json.dumps({"template": template_id, "task": task.id, "arm": arm,
                                          "success": result.success, "seconds": round(dt, 2),
                                          "tokens": _tokens(result.messages),
                                          "reasons": task.explain(result.env, result.final_answer,
                                                                  result.messages),
                                          "answer": result.final_answer[:300]}) + "\n")
                    out.flush()
            n = len(group[:runs])
            without, oracle = ok["without"] / n, ok[ARM_ORACLE] / n
            row = {"template": template_id, "split": group[0].split,
                   "lesson": ORACLE[template_id].lesson, "runs": n,
                   "without": ok["without"], "oracle": ok[ARM_ORACLE],
                   "headroom": oracle - without, "kept": oracle - without >= MIN_HEADROOM - 1e-9,
                   "seconds_per_run": seconds / (2 * n)}
            rows.append(row)
            print(f"{template_id:36s} {row['split']:8s} without {ok['without']}/{n} oracle "
                  f"{ok[ARM_ORACLE]}/{n} headroom {row['headroom']:+.0%} "
                  f"{'kept' if row['kept'] else 'dropped'} ({row['seconds_per_run']:.1f} s/run)",
                  flush=True)
    return rows


def calibration_markdown(rows: list[dict], command: str) -> str:
    lines = [f"Command: `{command}`. Each template {rows[0]['runs'] if rows else 0} runs per arm "
             "(fresh instances; both arms of a run share its instance and sampling seed). Kept "
             f"when oracle − without ≥ {MIN_HEADROOM:.0%} of pass^1.", "",
             "| template | lesson | split | without | oracle | headroom | kept |",
             "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["lesson"], r["split"], r["template"])):
        lines.append(f"| `{r['template']}` | {r['lesson']} | {r['split']} | "
                     f"{r['without']}/{r['runs']} | {r['oracle']}/{r['runs']} | "
                     f"{100 * r['headroom']:+.0f} pts | {'kept' if r['kept'] else 'dropped'} |")
    kept = [r for r in rows if r["kept"]]
    lines += ["", f"Kept {len(kept)} of {len(rows)} templates: "
              f"{sum(r['split'] == 'train' for r in kept)} evolution-set, "
              f"{sum(r['split'] == 'heldout' for r in kept)} held-out."]
    return "\n".join(lines)


def kept_templates(path: Path = CALIBRATION_FILE) -> list[str]:
    """The templates the committed calibration kept."""
    if not path.exists():
        raise SystemExit(f"no calibration at {path}: run `python benchmarks/bench_real_model.py "
                         "--calibrate` first (and commit it before any bank runs)")
    return [r["template"] for r in json.loads(path.read_text())["rows"] if r["kept"]]


# ---------------------------------------------------------------------------- the prefix cache


def prefix_cache(model: Any, tasks: list, seed: int) -> dict[str, Any]:
    """What llama.cpp's prefix reuse saves, on the prompts of real runs.

    The runs go once with reuse on, recording every prompt the agent sent. Then the recorded
    prompts are replayed in the same order, one generated token each, with reuse on and with
    the context reset before every call: the same token sequences both ways, so the difference
    is prompt evaluation alone (free runs diverge: reusing a prefix changes the floats a little,
    and with them the sampled tokens).
    """
    from skillbank_harness import envs
    from skillbank.consistency.runner import trial_seed

    engine = model.engine()
    prompts: list[str] = []
    complete = engine.complete

    def recording(prompt: str, **kwargs: Any) -> Any:
        prompts.append(prompt)
        return complete(prompt, **kwargs)

    engine.complete = recording  # record what the agent sends; the call itself is untouched
    try:
        t0 = time.perf_counter()
        for task in tasks:
            envs.run_task(task, model.with_seed(trial_seed(task.id, 0, seed)))
        run_seconds = time.perf_counter() - t0
    finally:
        del engine.complete
    out: dict[str, Any] = {"runs": len(tasks), "seconds_per_run": run_seconds / max(1, len(tasks)),
                           "model_calls": len(prompts)}
    for reuse in (True, False):
        engine.llama.reset()
        before = replace(engine.stats)
        t0 = time.perf_counter()
        for prompt in prompts:
            engine.complete(prompt, max_tokens=1, temperature=0.0, top_p=1.0, top_k=1, min_p=0.0,
                            repeat_penalty=1.0, seed=seed, reuse_prefix=reuse)
        s = engine.stats
        prompt_tokens = s.prompt_tokens - before.prompt_tokens
        out["reuse" if reuse else "no reuse"] = {
            "seconds_per_call": (time.perf_counter() - t0) / max(1, len(prompts)),
            "prompt_tokens": prompt_tokens,
            "prompt_tokens_evaluated": prompt_tokens - (s.reused_tokens - before.reused_tokens)}
    return out


# ------------------------------------------------------------------------------ the loop


@dataclass(frozen=True)
class Config:
    size: str = "1.5b"
    per_template: int = 2
    trials: int = 3
    rounds: int = 1
    validate_trials: int = 2
    validate_tasks: int = 4
    validate_budget: int = 80
    max_train_tasks: int | None = None
    max_heldout_tasks: int | None = None
    k: int = 5
    distillers: tuple[str, ...] = ("rule", "llm")
    prefix_runs: int = 4


QUICK = Config(size="0.5b", per_template=1, trials=3, rounds=1, validate_trials=1,
               validate_tasks=2, validate_budget=8, max_train_tasks=3, max_heldout_tasks=2,
               prefix_runs=2)


def _distiller(name: str, model: Any) -> Any:
    if name == "rule":
        return None  # evolve's default, the rule distiller
    from skillbank.evolution.llm import LLMDistiller

    # The same loaded model as the agent; greedy, as a curator should be.
    return LLMDistiller(model.model_copy(update={"temperature": 0.0, "max_tokens": 1024}))


def _counts(reports: list[Any], origins: tuple[str, ...]) -> dict[str, int]:
    """What one distiller's own proposals became: proposed, refused by lint, quarantined by
    lint, rejected by the gate, promoted, still waiting."""
    c = {"proposed": 0, "lint_refused": 0, "quarantined": 0, "gate_rejected": 0, "promoted": 0,
         "waiting": 0}
    for report in reports:
        own = [ch for ch in report.changes if ch.origin in origins]
        refused = [ch for ch in report.rejected if ch.origin in origins]
        c["proposed"] += len(own) + len(refused)
        c["lint_refused"] += len(refused)
        c["quarantined"] += sum(ch.status == "quarantined" for ch in own)
        c["gate_rejected"] += sum(ch.status == "rejected" for ch in own)
        c["promoted"] += sum(ch.status == "active" for ch in own)
        c["waiting"] += sum(ch.status == "candidate" for ch in own)
    return c


def _paired(without: Any, with_: Any) -> Any:
    """One result with both arms: the ``without`` trials are shared by every distiller (they
    never see the bank) and have the same paired seeds as each ``with`` run."""
    from skillbank.consistency.runner import ARM_WITH, ARM_WITHOUT

    return replace(with_, arms=(ARM_WITHOUT, ARM_WITH), records=without.records + with_.records,
                   run_id=f"{without.run_id}+{with_.run_id}",
                   wall_time_s=(without.wall_time_s or 0) + (with_.wall_time_s or 0))


def run_loop(cfg: Config, seed: int, out_dir: Path, templates: list[str] | None) -> dict[str, Any]:
    from skillbank_harness import envs
    from skillbank.bank import SkillBank
    from skillbank_harness.envs.measure import ARM_WITH, ARM_WITHOUT, measure_env
    from skillbank.consistency.validation import ValidationLog, make_validator
    from skillbank_harness.demo import _round_row
    from skillbank.evolution import evolve

    started = time.perf_counter()
    model = _model(cfg.size)
    tasks = envs.generate_tasks(["simple"], per_template=cfg.per_template, seed=seed)
    if templates:
        tasks = [t for t in tasks if t.template in templates]
    train, heldout = envs.split_tasks(tasks, by="template")
    train = envs.take_spread(train, cfg.max_train_tasks)
    heldout = envs.take_spread(heldout, cfg.max_heldout_tasks)
    by_id = {t.id: t for t in train}
    print(f"{len(train)} evolution-set and {len(heldout)} held-out tasks (simple tier, split by "
          f"template); model {model.model_name}; {cfg.trials} trials per task and arm", flush=True)

    def factory(task: Any, trial_seed: int) -> Any:
        return model.with_seed(trial_seed)

    measure = dict(k=cfg.k, concurrency=1, progress=False, seed=seed, model=model.model_name,
                   simulated=False)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    base_path = out_dir / "baseline-bank"
    phases: dict[str, float] = {}

    t0 = time.perf_counter()
    with SkillBank.open(base_path) as bank:
        baseline = measure_env(train, factory, trials=cfg.trials, bank=bank, arms=(ARM_WITHOUT,),
                               run_id="baseline", **measure)
        final_without = measure_env(train + heldout, factory, trials=cfg.trials, bank=bank,
                                    arms=(ARM_WITHOUT,), run_id="final-without", **measure)
    phases["baseline + final without"] = time.perf_counter() - t0
    print(f"baseline and final 'without' arm done in {phases['baseline + final without']:.0f}s",
          flush=True)

    def trial_fn(task: Any, middleware: Any, trial_seed: int) -> bool:
        return envs.run_task(task, model.with_seed(trial_seed), middleware=[middleware]).success

    arms: dict[str, Any] = {}
    for name in cfg.distillers:
        t0 = time.perf_counter()
        path = out_dir / f"bank-{name}"
        shutil.copytree(base_path, path)
        reports, rows = [], []
        with SkillBank.open(path) as bank:
            distiller = _distiller(name, model)
            for round_no in range(1, cfg.rounds + 1):
                log = ValidationLog()
                validate = make_validator(bank, by_id, trial_fn, trials=cfg.validate_trials,
                                          concurrency=1, seed=seed + 1000 * round_no, k=cfg.k,
                                          max_tasks=cfg.validate_tasks, log=log)
                report = evolve(bank, distiller=distiller, auto_promote=True, validate=validate,
                                eval_budget=cfg.validate_budget)
                reports.append(report)
                row = _round_row(report, {"trials": log.trials, "seconds": log.seconds})
                row["usage"] = report.usage.as_dict()
                rows.append(row)
                print(f"  {name} round {round_no}: {row['proposed']} proposed, {row['promoted']} "
                      f"promoted, {row['rejected']} rejected ({row['note']}); distiller calls "
                      f"{report.usage.calls}", flush=True)
                if round_no < cfg.rounds:
                    measure_env(train, factory, trials=cfg.trials, bank=bank, arms=(ARM_WITH,),
                                run_id=f"round{round_no}", **measure)
            with_ = measure_env(train + heldout, factory, trials=cfg.trials, bank=bank,
                                arms=(ARM_WITH,), run_id=f"final-with-{name}", **measure)
            active = [s.name for s in bank.list_skills(status="active")]
        own = ("revise", "induce")
        arms[name] = {"result": _paired(final_without, with_), "rounds": rows,
                      "active_skills": active, "own_proposals": _counts(reports, own),
                      "all_proposals": _counts(reports, tuple({c.origin for r in reports
                                                               for c in r.changes + r.rejected}))}
        phases[f"{name}: rounds + final with"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    prefix = prefix_cache(model, envs.take_spread(train, cfg.prefix_runs), seed) if cfg.prefix_runs else {}
    phases["prefix-cache measurement"] = time.perf_counter() - t0
    return {"config": asdict(cfg), "seed": seed, "baseline": baseline, "arms": arms,
            "prefix": prefix, "phases": phases, "seconds": time.perf_counter() - started,
            "n_train": len(train), "n_heldout": len(heldout), "model": model.model_name}


def _fmt_ci(ci: tuple[float, float]) -> str:
    return f"[{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]"


def loop_markdown(out: dict[str, Any], command: str) -> str:
    """The results as RESULTS.md tables: per distiller, split and arm."""
    lines = [f"Command: `{command}` ({out['seconds'] / 60:.1f} min, model {out['model']}, "
             f"{out['n_train']} evolution-set and {out['n_heldout']} held-out tasks, "
             f"{out['config']['trials']} trials per task and arm).", "",
             "| distiller | set | arm | pass^1 | pass^3 [95% CI] | pass@3 | gap | tokens/trial | "
             "s/trial |", "|---|---|---|---|---|---|---|---|---|"]
    for name, arm in out["arms"].items():
        result = arm["result"]
        k = result.key_k
        for split in result.splits:
            head = result.headline(split)
            for which, numbers in head.items():
                cost = result.cost(which, split)
                ci = result.ci(which, split, k)
                lines.append(f"| {name} | {split} | {which} | {numbers['pass^1']:.0%} | "
                             f"{numbers[f'pass^{k}']:.0%} {_fmt_ci(ci)} | {numbers[f'pass@{k}']:.0%} | "
                             f"{numbers['gap']:.0%} | {cost['tokens']:.0f} | {cost['latency_s']:.1f} |")
            d = result.delta(split, k)
            lines.append(f"| {name} | {split} | Δ with − without | | {100 * d['delta']:+.0f} pts "
                         f"{_fmt_ci(d['ci'])} | | | | |")
    lines += ["", "| distiller | proposed | refused by lint | quarantined | rejected by the gate | "
              "promoted | waiting | distiller calls | failed calls |", "|---|---|---|---|---|---|---|---|---|"]
    for name, arm in out["arms"].items():
        c = arm["own_proposals"]
        calls = sum(r["usage"]["calls"] for r in arm["rounds"])
        failed = sum(len(r["usage"]["failures"]) for r in arm["rounds"])
        lines.append(f"| {name} (its own: revise/induce) | {c['proposed']} | {c['lint_refused']} | "
                     f"{c['quarantined']} | {c['gate_rejected']} | {c['promoted']} | {c['waiting']} | "
                     f"{calls} | {failed} |")
        a = arm["all_proposals"]
        lines.append(f"| {name} (whole round, incl. guards/general) | {a['proposed']} | "
                     f"{a['lint_refused']} | {a['quarantined']} | {a['gate_rejected']} | "
                     f"{a['promoted']} | {a['waiting']} | | |")
    if out["prefix"]:
        lines += ["", prefix_markdown(out["prefix"])]
    return "\n".join(lines)


def prefix_markdown(prefix: dict[str, Any]) -> str:
    lines = [f"{prefix['runs']} runs with reuse on: {prefix['seconds_per_run']:.1f} s per run, "
             f"{prefix['model_calls']} model calls. Their prompts replayed, one token each:", "",
             "| prefix reuse | s per model call | prompt tokens | evaluated |", "|---|---|---|---|"]
    for mode in ("reuse", "no reuse"):
        p = prefix[mode]
        lines.append(f"| {mode} | {p['seconds_per_call']:.2f} | {p['prompt_tokens']} | "
                     f"{p['prompt_tokens_evaluated']} |")
    return "\n".join(lines)


# -------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibrate", action="store_true", help="Calibrate the simple tier.")
    parser.add_argument("--prefix", type=int, metavar="RUNS",
                        help="Only measure the prefix cache: RUNS evolution-set runs, reuse on and off.")
    parser.add_argument("--runs", type=int, default=6, help="Calibration runs per template and arm.")
    parser.add_argument("--templates", nargs="*", help="Only these templates.")
    parser.add_argument("--size", default="1.5b", help="Model: 1.5b or 0.5b.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", type=Path, default=common.OUT_DIR / "real_model_calibration.jsonl")
    parser.add_argument("--quick", action="store_true", help="A small configuration (0.5B model).")
    parser.add_argument("--trials", type=int)
    parser.add_argument("--per-template", type=int)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--validate-trials", type=int)
    parser.add_argument("--validate-tasks", type=int)
    parser.add_argument("--validate-budget", type=int)
    parser.add_argument("--max-train-tasks", type=int)
    parser.add_argument("--max-heldout-tasks", type=int)
    parser.add_argument("--distillers", nargs="+", choices=("rule", "llm"))
    parser.add_argument("--out", type=Path, default=common.OUT_DIR / "real_model")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args(argv)
    if args.calibrate:
        command = "python benchmarks/bench_real_model.py --calibrate " + " ".join(
            a for a in (argv if argv is not None else sys.argv[1:]) if a != "--calibrate")
        t0 = time.perf_counter()
        rows = calibrate(args.size, args.runs, args.seed, args.templates, args.log)
        minutes = (time.perf_counter() - t0) / 60
        print()
        text = calibration_markdown(rows, command.strip()) + f" ({minutes:.1f} min.)"
        print(text)
        if not args.no_write and not args.templates:
            CALIBRATION_FILE.write_text(json.dumps({"command": command.strip(), "size": args.size,
                                                    "seed": args.seed, "minutes": minutes,
                                                    "rows": rows}, indent=2) + "\n")
            common.update_results(CALIBRATION_SECTION, common.machine_markdown() + "\n\n" + text)
        return 0
    if args.prefix:
        from skillbank_harness import envs

        train, _ = envs.split_tasks(envs.generate_tasks(["simple"], per_template=args.prefix,
                                                        seed=args.seed), by="template")
        result = prefix_cache(_model(args.size), envs.take_spread(train, args.prefix), args.seed)
        print(prefix_markdown(result))
        return 0
    cfg = QUICK if args.quick else Config()
    overrides = {f: getattr(args, f) for f in ("trials", "per_template", "rounds", "validate_trials",
                                               "validate_tasks", "validate_budget",
                                               "max_train_tasks", "max_heldout_tasks")
                 if getattr(args, f) is not None}
    if args.distillers:
        overrides["distillers"] = tuple(args.distillers)
    if "--size" in (argv if argv is not None else sys.argv[1:]):
        overrides["size"] = args.size
    cfg = replace(cfg, **overrides)
    command = "python benchmarks/bench_real_model.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out = run_loop(cfg, args.seed, args.out, args.templates)
    text = loop_markdown(out, command.strip())
    print()
    print(text)
    data = {k: v for k, v in out.items() if k not in ("baseline", "arms")}
    data["arms"] = {name: {**{k: v for k, v in arm.items() if k != "result"},
                           "result": arm["result"].to_dict()} for name, arm in out["arms"].items()}
    data["baseline"] = out["baseline"].to_dict()
    data["markdown"] = text
    (args.out / "results.json").write_text(json.dumps(data, indent=2, default=str) + "\n")
    print(f"\nNumbers: {args.out / 'results.json'}")
    if not args.quick and not args.no_write:
        common.update_results(LOOP_SECTION, common.machine_markdown() + "\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
