"""The loop on a real model, measured against an oracle: a local Qwen2.5-Coder (llama.cpp).

    python benchmarks/bench_real_model.py --calibrate --runs 5   # without vs oracle, per template
    python benchmarks/bench_real_model.py                        # the loop on the kept templates
    python benchmarks/bench_real_model.py --quick                # a smoke run (0.5B model)

Needs ``pip install 'skillbank[local]'`` and ``skillbank model fetch --size 1.5b``.

The tasks are the ``small`` tier (``skillbank_harness.envs.families.small``): 24 templates, six
lessons, four toolsets. Every template has an *oracle*: the skill a person would write for it,
its hint (``oracle_hints.py``) and the lessons a call can be checked against
(``oracle_lessons.py``), placed where the bank places skills (the skills block, and reminders at
the tool boundary) by the bank's own injection middleware. It never enters the measured bank.

1. ``--calibrate``: each template in two arms on the unguided model, *without* and *oracle*; a
   template is kept when oracle − without ≥ 20 points of pass^1 (a lesson can help this model
   there). The calibration is committed (``protocols/real_model_calibration.json``) before a bank runs.
2. The loop, on the kept templates (split by template): the oracle arm (no bank); the baseline
   (the evolution set without the bank, recorded: the round's only evidence); one rule round
   whose gate re-runs each candidate on the model itself (``make_validator``, budgeted); the
   evolution set with the bank in each skill form (``FORMS``: InjectionConfig switches); then
   the held-out set without and with the bank in the form that won on the evolution set.
3. Headroom captured, (with − without) / (oracle − without), for pass^1 and pass^3 with
   bootstrap intervals, per set and per lesson, next to the plain numbers.
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
CALIBRATION_FILE = Path(__file__).resolve().parent / "protocols" / "real_model_calibration.json"
CALIBRATION_SECTION = "Real model: calibration by headroom, the oracle in the block and at the tool"
LOOP_SECTION = "Real model: the loop on a local Qwen2.5-Coder"
ARM_ORACLE = "oracle"


def _model(size: str, threads: int | None = None) -> Any:
    from skillbank.chat import resolve_chat_model

    model = resolve_chat_model(f"local:{size}")
    if threads:
        # One thread degrades gracefully on a machine other jobs share; two threads wait on each
        # other whenever another process holds a core (4-5x slower per run, measured).
        model = model.model_copy(update={"n_threads": threads})
    model.engine()  # load once, before anything is timed
    return model


# ------------------------------------------------------------------------------- the oracle


class OracleSkills:
    """Every template's oracle as the skill a person would write for it, placed where the bank
    places skills, by the bank's own injection middleware: its hint in the skills block and its
    typed lessons (``oracle_lessons.py``) at the tool boundary (``reminders``).

    The skills live in a bank of their own in a temporary folder, one pinned per run: never in
    the measured bank, and never retrieved (``k=0``), so a run sees exactly its template's
    oracle and nothing else.
    """

    def __init__(self) -> None:
        import tempfile

        from oracle_hints import ORACLE
        from oracle_lessons import ORACLE_LESSONS
        from skillbank.bank import SkillBank
        from skillbank.lessons import Lesson, LessonKind

        self._folder = tempfile.TemporaryDirectory(prefix="skillbank-oracle-")
        self.bank = SkillBank.open(Path(self._folder.name) / "bank", embedder="hash")
        self.names: dict[str, str] = {}
        for template_id, oracle in ORACLE.items():
            name = "oracle-" + template_id.rsplit(".", 1)[-1].replace("_", "-")
            skill = self.bank.add_skill(
                name=name, description=oracle.when, kind="procedure", allow_unsafe=True,
                lessons=(Lesson(kind=LessonKind.guidance, text=oracle.hint), *ORACLE_LESSONS[template_id]))
            assert skill.status.value == "active", (template_id, skill.status)
            self.names[template_id] = name

    def middleware(self, template_id: str) -> Any:
        from skillbank.adapters.config import InjectionConfig
        from skillbank.adapters._injection_middleware import SkillInjectionMiddleware

        return SkillInjectionMiddleware(self.bank, InjectionConfig(k=0, general_k=0, token_budget=None, reminders=True,
                                                                   pinned=(self.names[template_id],)))

    def run(self, task: Any, model: Any) -> Any:
        """One run of ``task`` with its template's oracle."""
        from skillbank_harness import envs

        return envs.run_task(task, model, middleware=[self.middleware(task.template)])


# ------------------------------------------------------------------------------- calibration


def _tokens(messages: list) -> int:
    return sum((m.usage_metadata or {}).get("total_tokens", 0)
               for m in messages if getattr(m, "usage_metadata", None))


def calibrate(size: str, runs: int, seed: int, templates: list[str] | None, log: Path,
              threads: int | None = None) -> list[dict]:
    """Each small template ``runs`` times (fresh instances) in two arms, on the unguided model:
    *without* (the task's system prompt only) and *oracle* (plus the template's skill, where the
    bank would put it). Both arms of a run share the instance and the sampling seed. Runs
    already in ``log`` (same task and arm) are not run again: a stopped calibration resumes."""
    from skillbank.consistency.runner import trial_seed
    from skillbank_harness import envs

    done = ({(r["task"], r["arm"]) for r in map(json.loads, log.open())} if log.exists() else set())
    model = _model(size, threads)
    oracle = OracleSkills()
    tasks = envs.generate_tasks([FAMILY], per_template=runs, seed=seed)
    by_template: dict[str, list] = {}
    for t in tasks:
        if not templates or t.template in templates:
            by_template.setdefault(t.template, []).append(t)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        for template_id, group in sorted(by_template.items()):
            for task in group[:runs]:
                for arm in ("without", ARM_ORACLE):
                    if (task.id, arm) in done:
                        continue
                    run_model = model.with_seed(trial_seed(task.id, 0, seed))
                    t0 = time.perf_counter()
                    result = (envs.run_task(task, run_model) if arm == "without"
                              else oracle.run(task, run_model))
                    dt = time.perf_counter() - t0
                    out.write(json.dumps({"template": template_id, "split": task.split,
                                          "task": task.id, "arm": arm,
                                          "success": result.success, "seconds": round(dt, 2),
                                          "tokens": _tokens(result.messages),
                                          "reasons": task.explain(result.env, result.final_answer,
                                                                  result.messages),
                                          "answer": result.final_answer[:300]}) + "\n")
                    out.flush()
            print(summarise([json.loads(line) for line in log.open()
                             if json.loads(line)["template"] == template_id])[0]["line"], flush=True)
    return summarise([json.loads(line) for line in log.open()])


def summarise(records: list[dict]) -> list[dict]:
    """One row per template from the calibration log: runs with both arms, successes per arm,
    headroom and the verdict."""
    from oracle_hints import ORACLE
    from skillbank_harness.envs.base import TEMPLATES

    by_task: dict[str, dict[str, dict]] = {}
    for r in records:
        by_task.setdefault(r["task"], {})[r["arm"]] = r
    by_template: dict[str, list[dict[str, dict]]] = {}
    for arms in by_task.values():
        if "without" in arms and ARM_ORACLE in arms:  # a run cut off between its arms is left out
            by_template.setdefault(arms["without"]["template"], []).append(arms)
    rows = []
    for template_id, pairs in sorted(by_template.items()):
        n = len(pairs)
        ok = {arm: sum(p[arm]["success"] for p in pairs) for arm in ("without", ARM_ORACLE)}
        headroom = (ok[ARM_ORACLE] - ok["without"]) / n
        row = {"template": template_id,
               "split": "heldout" if TEMPLATES[template_id].heldout else "train",
               "lesson": ORACLE[template_id].lesson, "runs": n, "without": ok["without"],
               "oracle": ok[ARM_ORACLE], "headroom": headroom,
               "kept": headroom >= MIN_HEADROOM - 1e-9,
               "seconds_per_run": sum(p[a]["seconds"] for p in pairs for a in p) / (2 * n)}
        row["line"] = (f"{template_id:36s} without {ok['without']}/{n} oracle {ok[ARM_ORACLE]}/{n} "
                       f"headroom {headroom:+.0%} {'kept' if row['kept'] else 'dropped'} "
                       f"({row['seconds_per_run']:.1f} s/run)")
        rows.append(row)
    return rows


def calibration_markdown(rows: list[dict], command: str) -> str:
    lines = [f"Command: `{command}`. Each template `runs` times per arm "
             "(fresh instances; both arms of a run share its instance and sampling seed). Oracle: "
             "the template's hint in the skills block and its typed lessons as reminders at the "
             "tool boundary (`oracle_lessons.py`), through the bank's injection middleware. Kept "
             f"when oracle − without ≥ {MIN_HEADROOM:.0%} of pass^1.", "",
             "| template | lesson | split | runs | without | oracle | headroom | kept |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["lesson"], r["split"], r["template"])):
        lines.append(f"| `{r['template']}` | {r['lesson']} | {r['split']} | {r['runs']} | "
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


# Skill forms measured as an ablation (InjectionConfig switches); "rules" is the plain block.
FORMS: dict[str, dict[str, Any]] = {
    "rules": {"examples": False, "reminders": False, "lean": False},
    "+ examples": {"examples": True, "reminders": False, "lean": False},
    "+ reminders": {"examples": False, "reminders": True, "lean": False},
    "lean block": {"examples": False, "reminders": False, "lean": True},
    "all": {"examples": True, "reminders": True, "lean": True},
}


@dataclass(frozen=True)
class Config:
    size: str = "1.5b"
    per_template: int = 2
    trials: int = 3
    rounds: int = 1
    validate_trials: int = 2
    validate_tasks: int = 3
    validate_budget: int = 40
    k: int = 3
    forms: tuple[str, ...] = tuple(FORMS)
    gate_form: str = "all"
    max_train_tasks: int | None = None  # caps, for the smoke run
    max_heldout_tasks: int | None = None


QUICK = Config(size="0.5b", per_template=1, trials=3, rounds=1, validate_trials=1,
               validate_tasks=2, validate_budget=4, forms=("rules",), max_train_tasks=1,
               max_heldout_tasks=1)


def _oracle_arm(tasks: list, model: Any, trials: int, seed: int) -> dict[str, list[bool]]:
    """The oracle arm, outside the measured bank (its runs must never become evolution data):
    each task ``trials`` times with the same trial seeds as the measured arms."""
    from skillbank.consistency.runner import trial_seed

    oracle = OracleSkills()
    return {task.id: [bool(oracle.run(task, model.with_seed(trial_seed(task.id, t, seed))).success)
                      for t in range(trials)] for task in tasks}


def _outcomes(result: Any, arm: str) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for r in sorted(result.records, key=lambda r: (r.task_id, r.trial)):
        if r.arm == arm:
            out.setdefault(r.task_id, []).append(bool(r.success))
    return out


def _pass_hat(outcomes: list[bool], k: int) -> float:
    from skillbank.consistency._metrics import pass_hat_k

    return pass_hat_k(sum(outcomes), len(outcomes), k)


def captured(without: dict, oracle: dict, with_: dict, task_ids: list[str], k: int,
             n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Headroom captured, (with − without) / (oracle − without), for pass^k, with a bootstrap
    interval over tasks (the three arms resampled together). Resamples with no headroom (oracle
    − without ≤ 0) have no ratio and are left out; ``defined`` says how many were kept."""
    import numpy as np

    ids = [t for t in task_ids if t in without and t in oracle and t in with_]
    if not ids:
        return {"tasks": 0}
    per = np.array([[_pass_hat(without[t], k), _pass_hat(oracle[t], k), _pass_hat(with_[t], k)]
                    for t in ids])
    means = per.mean(axis=0)
    head = means[1] - means[0]
    out = {"tasks": len(ids), "without": means[0], "oracle": means[1], "with": means[2],
           "headroom": head, "gain": means[2] - means[0],
           "captured": (means[2] - means[0]) / head if head > 1e-9 else None}
    draws = np.random.default_rng(seed).integers(0, len(ids), size=(n_resamples, len(ids)))
    resampled = per[draws].mean(axis=1)
    denominators = resampled[:, 1] - resampled[:, 0]
    ok = denominators > 1e-9
    ratios = (resampled[ok, 2] - resampled[ok, 0]) / denominators[ok]
    gains = resampled[:, 2] - resampled[:, 0]
    out["gain_ci"] = tuple(float(x) for x in np.quantile(gains, [0.025, 0.975]))
    out["captured_ci"] = (tuple(float(x) for x in np.quantile(ratios, [0.025, 0.975]))
                          if ok.sum() >= 20 else None)
    out["defined"] = int(ok.sum())
    return out


def run_loop(cfg: Config, seed: int, out_dir: Path, templates: list[str] | None) -> dict[str, Any]:
    """Baseline, oracle, a gated rule round on the real model, the forms ablation on the
    evolution set, then held-out with the winning form. See the module docstring."""
    from oracle_hints import ORACLE
    from skillbank.bank import SkillBank
    from skillbank.consistency.validation import ValidationConfig, ValidationLog, make_validator
    from skillbank.evolution import evolve
    from skillbank_harness import envs
    from skillbank_harness.demo import _round_row
    from skillbank_harness.envs.measure import ARM_WITH, ARM_WITHOUT, measure_env

    started = time.perf_counter()
    model = _model(cfg.size)
    kept = templates or kept_templates()
    tasks = envs.generate_tasks([FAMILY], per_template=cfg.per_template, seed=seed, templates=kept)
    train, heldout = envs.split_tasks(tasks, by="template")
    train = envs.take_spread(train, cfg.max_train_tasks)
    heldout = envs.take_spread(heldout, cfg.max_heldout_tasks)
    by_id = {t.id: t for t in train}
    lesson_of = {t.id: ORACLE[t.template].lesson for t in tasks}
    print(f"{len(train)} evolution-set and {len(heldout)} held-out tasks ({FAMILY} tier, kept by "
          f"the committed calibration); model {model.model_name}; {cfg.trials} trials per task "
          "and arm", flush=True)

    def factory(task: Any, trial_seed: int) -> Any:
        return model.with_seed(trial_seed)

    measure = dict(k=cfg.k, concurrency=1, progress=False, seed=seed, model=model.model_name,
                   simulated=False)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    phases: dict[str, float] = {}

    def phase(name: str, t0: float) -> None:
        phases[name] = time.perf_counter() - t0
        print(f"  {name}: {phases[name] / 60:.1f} min", flush=True)

    t0 = time.perf_counter()
    oracle = _oracle_arm(train + heldout, model, cfg.trials, seed)
    phase("oracle arm (no bank)", t0)

    t0 = time.perf_counter()
    bank_path = out_dir / "bank"
    with SkillBank.open(bank_path) as bank:
        baseline = measure_env(train, factory, trials=cfg.trials, bank=bank, arms=(ARM_WITHOUT,),
                               run_id="baseline", **measure)
        phase("baseline (evolution set, without)", t0)

        def trial_fn(task: Any, middleware: Any, trial_seed: int) -> bool:
            return envs.run_task(task, model.with_seed(trial_seed), middleware=[middleware]).success

        t0 = time.perf_counter()
        rows = []
        for round_no in range(1, cfg.rounds + 1):
            log = ValidationLog()
            checks = ValidationConfig(trials=cfg.validate_trials, concurrency=1, seed=seed + 1000 * round_no,
                                      k=cfg.k, max_tasks=cfg.validate_tasks, middleware_options=FORMS[cfg.gate_form])
            validate = make_validator(bank, by_id, trial_fn, checks, log=log)
            # Worked examples are written by the round (three per lesson); whether they are
            # shown is the form's switch.
            report = evolve(bank, auto_promote=True, validate=validate,
                            eval_budget=cfg.validate_budget, examples_per_lesson=3)
            row = _round_row(report, {"trials": log.trials, "seconds": log.seconds})
            rows.append(row)
            print(f"  round {round_no}: {row['proposed']} proposed, {row['promoted']} promoted, "
                  f"{row['rejected']} rejected ({row['note']}); gate trials {log.trials}",
                  flush=True)
        phase("evolution round(s) with the gate on the model", t0)
        skills = [{"name": s.name, "kind": s.kind.value, "body": s.body}
                  for s in bank.list_skills(status="active")]

        without_train = _outcomes(baseline, ARM_WITHOUT)
        forms: dict[str, dict[str, list[bool]]] = {}
        for name in cfg.forms:
            t0 = time.perf_counter()
            result = measure_env(train, factory, trials=cfg.trials, bank=bank, arms=(ARM_WITH,),
                                 run_id=f"form-{name}", middleware_options=FORMS[name], **measure)
            forms[name] = _outcomes(result, ARM_WITH)
            phase(f"evolution set, with: {name}", t0)
        train_ids = [t.id for t in train]
        ablation = {name: captured(without_train, oracle, out, train_ids, 1)
                    for name, out in forms.items()}
        winner = max(cfg.forms, key=lambda n: (ablation[n].get("with", 0), -cfg.forms.index(n)))
        print(f"  the evolution set's winning form: {winner}", flush=True)

        t0 = time.perf_counter()
        held = measure_env(heldout, factory, trials=cfg.trials, bank=bank,
                           arms=(ARM_WITHOUT, ARM_WITH), run_id="heldout",
                           middleware_options=FORMS[winner], **measure) if heldout else None
        phase(f"held-out, without and with ({winner})", t0)

    sets = {"evolution set": (without_train, forms[winner], train_ids)}
    if held is not None:
        sets["held-out"] = (_outcomes(held, ARM_WITHOUT), _outcomes(held, ARM_WITH),
                            [t.id for t in heldout])
    table: dict[str, dict[str, Any]] = {}
    for set_name, (without, with_, ids) in sets.items():
        table[set_name] = {f"pass^{k}": captured(without, oracle, with_, ids, k)
                           for k in (1, cfg.trials)}
        table[set_name]["kinds"] = {
            lesson: {f"pass^{k}": captured(without, oracle, with_,
                                           [i for i in ids if lesson_of[i] == lesson], k)
                     for k in (1, cfg.trials)}
            for lesson in dict.fromkeys(lesson_of[i] for i in ids)}
    return {"config": asdict(cfg), "seed": seed, "rounds": rows, "skills": skills,
            "ablation": ablation, "winner": winner, "table": table, "phases": phases,
            "seconds": time.perf_counter() - started, "n_train": len(train),
            "n_heldout": len(heldout), "model": model.model_name, "templates": kept,
            "arms": {"oracle": oracle, "without_train": without_train, "forms": forms,
                     "heldout": {a: _outcomes(held, a) for a in (ARM_WITHOUT, ARM_WITH)}
                     if held is not None else {}}}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _ci(ci: tuple[float, float] | None, points: bool = True) -> str:
    if ci is None:
        return "(too little headroom to resample)"
    return f"[{100 * ci[0]:+.0f}, {100 * ci[1]:+.0f}]" if points else f"[{100 * ci[0]:.0f}%, {100 * ci[1]:.0f}%]"


def _row(label: str, c: dict[str, Any]) -> str:
    if not c.get("tasks"):
        return f"| {label} | 0 | | | | | | |"
    return (f"| {label} | {c['tasks']} | {_pct(c['without'])} | {_pct(c['with'])} | "
            f"{_pct(c['oracle'])} | {100 * c['gain']:+.0f} pts {_ci(c['gain_ci'])} | "
            f"{_pct(c['captured'])} {_ci(c['captured_ci'], points=False)} |")


def loop_markdown(out: dict[str, Any], command: str) -> str:
    """The results as RESULTS.md tables: headroom captured per set, k and lesson; the ablation."""
    k = out["config"]["trials"]
    lines = [f"Command: `{command}` ({out['seconds'] / 60:.1f} min, model {out['model']}, "
             f"{out['n_train']} evolution-set and {out['n_heldout']} held-out tasks, {k} trials "
             "per task and arm). Oracle: the template's hint where the bank puts skills, no bank. "
             "Headroom captured = (with − without) / (oracle − without); 95% bootstrap intervals "
             "over tasks.", "",
             "| set / metric | tasks | without | with | oracle | with − without | headroom captured |",
             "|---|---|---|---|---|---|---|"]
    for set_name, numbers in out["table"].items():
        for metric in ("pass^1", f"pass^{k}"):
            lines.append(_row(f"**{set_name}**, {metric}", numbers[metric]))
    lines += ["", "Per lesson (pass^1 and pass^%d):" % k, "",
              "| set | lesson | metric | tasks | without | with | oracle | with − without | headroom captured |",
              "|---|---|---|---|---|---|---|---|---|"]
    for set_name, numbers in out["table"].items():
        for lesson, by_k in numbers["kinds"].items():
            for metric, c in by_k.items():
                lines.append(_row(f"{set_name} | {lesson} | {metric}", c).replace("| 0 | | |", "| 0 | | | |"))
    lines += ["", f"Forms on the evolution set (pass^1; the winner, **{out['winner']}**, is the arm "
              "held-out ran with):", "",
              "| form | with | with − without | headroom captured |", "|---|---|---|---|"]
    for name, c in out["ablation"].items():
        lines.append(f"| {name} | {_pct(c.get('with'))} | {100 * c.get('gain', 0):+.0f} pts "
                     f"{_ci(c.get('gain_ci'))} | {_pct(c.get('captured'))} |")
    lines += ["", "Rounds: " + "; ".join(
        f"round {r['round']}: {r['proposed']} proposed, {r['promoted']} promoted, "
        f"{r['rejected']} rejected ({r['note']})" for r in out["rounds"]),
        "", "Active skills after the round: " + (", ".join(
            f"`{s['name']}` ({s['kind']})" for s in out["skills"]) or "none"),
        "", "Phases: " + "; ".join(f"{name} {sec / 60:.1f} min" for name, sec in out["phases"].items())]
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
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: every core)")
    parser.add_argument("--log", type=Path, default=common.OUT_DIR / "real_model_calibration.jsonl")
    parser.add_argument("--quick", action="store_true", help="A small configuration (0.5B model).")
    parser.add_argument("--trials", type=int)
    parser.add_argument("--per-template", type=int)
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--validate-trials", type=int)
    parser.add_argument("--validate-tasks", type=int)
    parser.add_argument("--validate-budget", type=int)
    parser.add_argument("--forms", nargs="+", choices=tuple(FORMS), help="Skill forms to compare.")
    parser.add_argument("--out", type=Path, default=common.OUT_DIR / "real_model")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    args = parser.parse_args(argv)
    if args.calibrate:
        from oracle_hints import ORACLE

        command = "python benchmarks/bench_real_model.py --calibrate " + " ".join(
            a for a in (argv if argv is not None else sys.argv[1:]) if a != "--calibrate")
        t0 = time.perf_counter()
        rows = calibrate(args.size, args.runs, args.seed, args.templates, args.log, args.threads)
        minutes = (time.perf_counter() - t0) / 60
        print()
        text = calibration_markdown(rows, command.strip()) + f" ({minutes:.1f} min.)"
        print(text)
        if not args.no_write and len(rows) == len(ORACLE):
            CALIBRATION_FILE.write_text(json.dumps({"command": command.strip(), "size": args.size,
                                                    "seed": args.seed, "minutes": minutes,
                                                    "rows": rows}, indent=2) + "\n")
            common.update_results(CALIBRATION_SECTION, common.machine_markdown() + "\n\n" + text)
        return 0
    if args.prefix:
        from skillbank_harness import envs

        train, _ = envs.split_tasks(envs.generate_tasks([FAMILY], per_template=args.prefix,
                                                        seed=args.seed), by="template")
        result = prefix_cache(_model(args.size), envs.take_spread(train, args.prefix), args.seed)
        print(prefix_markdown(result))
        return 0
    cfg = QUICK if args.quick else Config()
    overrides = {f: getattr(args, f) for f in ("trials", "per_template", "rounds", "validate_trials",
                                               "validate_tasks", "validate_budget")
                 if getattr(args, f) is not None}
    if args.forms:
        overrides["forms"] = tuple(args.forms)
    if "--size" in (argv if argv is not None else sys.argv[1:]):
        overrides["size"] = args.size
    cfg = replace(cfg, **overrides)
    command = "python benchmarks/bench_real_model.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out = run_loop(cfg, args.seed, args.out, args.templates)
    text = loop_markdown(out, command.strip())
    print()
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps({**out, "markdown": text}, indent=2,
                                                      default=str) + "\n")
    print(f"\nNumbers: {args.out / 'results.json'}")
    if not args.quick and not args.no_write and not args.templates:
        common.update_results(LOOP_SECTION, common.machine_markdown() + "\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
