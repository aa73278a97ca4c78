"""The consistency protocol (``protocol.json``) on the real model: calibration and measurement.

    python benchmarks/protocols/real_model_protocol.py --calibrate      # the steady tier's evolution side
    python benchmarks/protocols/real_model_protocol.py --measure        # evidence, round(s), variants, three tiers
    python benchmarks/protocols/real_model_protocol.py --measure --resume "$RUN_DIR"  # a run cut short after its round
    (--protocol 1 or 2 re-runs a superseded version into its own files; the default is the newest)

Each evolution template of the ``steady`` tier runs ``instances_per_template`` times on the
unguided model (no bank, no oracle), at the protocol's calibration seed, which no later phase
uses. A template is kept when the model sometimes succeeds (the protocol's keep rule). Every run
is logged as one JSON line (``runs/consistency_calibration.jsonl``); a stopped calibration
resumes from the log. The summary goes to ``consistency_calibration.json`` and RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

# This folder (by_template), benchmarks/ (common, bench_real_model) and the repository.
sys.path[:0] = [str(Path(__file__).resolve().parents[i]) for i in (0, 1, 2)]

import common  # noqa: E402

HERE = Path(__file__).resolve().parent
# Every version's JSON: protocol.json (v1), protocol_vN.json (vN); a new version needs only its file.
PROTOCOLS = {1: HERE / "protocol.json",
             **{int(p.stem.removeprefix("protocol_v")): p for p in HERE.glob("protocol_v*.json")}}
# Where each version keeps its logs and summaries: a later version never overwrites an earlier
# one's (a superseded result stays, with why).
FILES = {
    1: {"calibration_log": "consistency_calibration.jsonl", "calibration": "consistency_calibration.json",
        "trials_log": "consistency_trials.jsonl", "measurement": "consistency_measurement.json"},
    # v3 and later keep v2's calibration (their protocols say so): they read v2's files and write none.
    **{v: {"calibration_log": "consistency_calibration_v2.jsonl", "calibration": "consistency_calibration_v2.json",
           "trials_log": f"consistency_trials_v{v}.jsonl", "measurement": f"consistency_measurement_v{v}.json"}
       for v in PROTOCOLS if v >= 2},
}
PROTOCOL: dict = {}


def use(version: int) -> None:
    """Run under protocol ``version`` (its JSON and its own log files)."""
    global PROTOCOL, LOG, SUMMARY, SECTION, TRIALS_LOG, MEASURE_SECTION, MEASUREMENT
    PROTOCOL = json.loads(PROTOCOLS[version].read_text())
    files = FILES[version]
    LOG, SUMMARY = HERE / "runs" / files["calibration_log"], HERE / files["calibration"]
    TRIALS_LOG, MEASUREMENT = HERE / "runs" / files["trials_log"], HERE / files["measurement"]
    SECTION = f"Real model: calibration of the consistency tier (protocol v{version})"
    MEASURE_SECTION = f"Real model: consistency under protocol v{version}"


def calibration_templates(version: int) -> tuple[str, ...]:
    """The templates a version calibrates itself (v2 keeps v1's calibration of the first 16)."""
    from skillbank_harness.envs.families import steady, steady_more

    return steady.EVOLUTION if version == 1 else steady_more.EVOLUTION_MORE


def unseen_templates(version: int) -> list[str]:
    from skillbank_harness.envs.families import steady, steady_more

    return list(steady.UNSEEN_TEMPLATES) + ([] if version == 1 else list(steady_more.UNSEEN_MORE))


def resamples() -> int:
    """The bootstrap's resample count: a version names its own from v23 on (v22's lower bound
    of +10 was its seed's: 2,000 resamples drew 2.45% where the exact share is 2.8%)."""
    from by_template import resamples_of

    return resamples_of(PROTOCOL)


def cap() -> int:
    return PROTOCOL["calibration"].get("measured_cap", 6)  # v1 named its cap (6) only in words


def gate(name: str, v1: int) -> int:
    return PROTOCOL["round"].get(f"gate_{name}", v1)  # likewise v1's gate: 2 trials, 3 tasks, 24 runs


def calibration_records() -> list[dict]:
    """Every calibration run the version's selection is made from: its own, and (v2) v1's."""
    logs = [LOG] + ([HERE / "runs" / FILES[1]["calibration_log"]] if PROTOCOL["version"] == 2 else [])
    return [json.loads(line) for log in logs if log.exists() for line in log.open()]


def _tools_called(messages: list) -> list[str]:
    return [call["name"] for m in messages for call in (getattr(m, "tool_calls", None) or [])]


def _asked_again(messages: list) -> list[dict]:
    """Each answer reminder of a run (why, and the draft it asked again): the gate keeps no
    transcript, so its trial row says whether a reply was asked again (from v13)."""
    from skillbank.adapters._interventions import intervention_of

    markers = [m for m in map(intervention_of, messages) if m is not None and m.kind == "answer_reminder"]
    unique = dict.fromkeys((m.reason, m.draft or "") for m in markers)  # the note and the reply carry one each
    return [{"reason": reason, "draft": draft[:200]} for reason, draft in unique]


def _tokens(messages: list) -> int:
    return sum((getattr(m, "usage_metadata", None) or {}).get("total_tokens", 0) for m in messages)


def calibrate(threads: int | None) -> list[dict]:
    from bench_real_model import _model
    from skillbank.consistency._trials import trial_seed
    from skillbank_harness import envs
    from skillbank_harness.envs.families.steady import KINDS

    seed = PROTOCOL["seeds"]["calibration"]
    n = PROTOCOL["calibration"]["instances_per_template"]
    done = {json.loads(line)["task"] for line in LOG.open()} if LOG.exists() else set()
    model = _model(PROTOCOL["model"].split()[0].removeprefix("local:"), threads)
    tasks = envs.generate_tasks(["steady"], per_template=n, seed=seed,
                                templates=calibration_templates(PROTOCOL["version"]))
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with LOG.open("a") as out:
        for task in tasks:
            if task.id in done:
                continue
            sampling = trial_seed(task.id, 0, seed)
            t0 = time.perf_counter()
            result = envs.run_task(task, model.with_seed(sampling))
            record = {"template": task.template, "kind": KINDS[task.template], "task": task.id,
                      "arm": "without", "trial": 0, "seed": sampling, "success": bool(result.success),
                      "reasons": task.explain(result.env, result.final_answer, result.messages),
                      "seconds": round(time.perf_counter() - t0, 2),
                      "tokens": _tokens(result.messages), "tools": _tools_called(result.messages),
                      "answer": (result.final_answer or "")[:300]}
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(f"{task.id:45s} {'ok ' if record['success'] else 'BAD'} {record['seconds']:5.1f} s "
                  f"{record['tools']}", flush=True)
    return summarise(calibration_records())


def summarise(records: list[dict]) -> list[dict]:
    by_template: dict[str, list[dict]] = {}
    for r in records:
        by_template.setdefault(r["template"], []).append(r)
    rows = []
    for template_id, runs in sorted(by_template.items()):
        ok = sum(r["success"] for r in runs)
        rows.append({"template": template_id, "kind": runs[0]["kind"], "runs": len(runs),
                     "successes": ok, "kept": 1 <= ok <= len(runs) - 1,
                     "seconds_per_run": sum(r["seconds"] for r in runs) / len(runs)})
    kept = sorted((r for r in rows if r["kept"]), key=lambda r: (abs(r["successes"] - r["runs"] / 2),
                                                                  r["template"]))
    measured = {r["template"] for r in kept[:cap()]}
    for r in rows:
        r["measured"] = r["template"] in measured
    return rows


def markdown(rows: list[dict], minutes: float) -> str:
    version = PROTOCOL["version"]
    lines = [f"Command: `python benchmarks/protocols/real_model_protocol.py --calibrate --protocol {version}` (protocol "
             f"v{version}, `benchmarks/{PROTOCOLS[version].name}`: seed {PROTOCOL['seeds']['calibration']}, unguided, "
             f"{PROTOCOL['calibration']['keep']}; {PROTOCOL['calibration']['cap']}). "
             f"{sum(r['runs'] for r in rows)} runs (this version's and any it keeps), {minutes:.1f} min; "
             "every run in " + " and ".join(f"`benchmarks/runs/{FILES[v]['calibration_log']}`"
                                            for v in sorted(FILES) if v <= version) + ".", "",
             "| template | lesson kind | runs | successes | kept | measured |", "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["kind"], r["template"])):
        lines.append(f"| `{r['template']}` | {r['kind']} | {r['runs']} | {r['successes']}/{r['runs']} "
                     f"| {'kept' if r['kept'] else 'dropped'} | {'yes' if r['measured'] else ''} |")
    hist = {k: sum(r["successes"] == k for r in rows) for k in range(0, 5)}
    lines += ["", "Successes of 4 per template: " + ", ".join(f"{k}/4: {v}" for k, v in hist.items())
              + f". Kept {sum(r['kept'] for r in rows)} of {len(rows)}."]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- measurement

def run_options() -> dict:
    """The middleware options every run of every arm takes, the evidence's and the gate's
    included (v19 on: the world's today, which its recorded runs and its checks count from)."""
    return dict(PROTOCOL.get("every_run", {}).get("options", {}))


def variants() -> dict[str, tuple[str, dict]]:
    """What the evolution tier compares: label -> (the distiller arm whose bank it reads, its
    middleware options). v2 compared forms on one rule round; v3 compares distillers in one form."""
    m = PROTOCOL["measurement"]
    if "variants" in m:
        return {label: (v["distiller"], {**run_options(), **v["options"]}) for label, v in m["variants"].items()}
    return {form: (PROTOCOL["round"]["distiller"], {**run_options(), **options})
            for form, options in m["forms"].items()}


def gate_options(distiller: str) -> dict:
    """The middleware options the gate measures a distiller's candidates under: v2's gate ran
    every form at once; v3's runs the form its variant is measured in."""
    m = PROTOCOL["measurement"]
    if "variants" not in m:
        return {**run_options(), **m["forms"]["both"]}
    return {**run_options(), **next(v["options"] for v in m["variants"].values() if v["distiller"] == distiller)}


def make_distiller(name: str, model) -> object:
    """A protocol's distiller name as what ``evolve`` takes; the LLM distills greedily."""
    from skillbank.evolution import LLMDistiller

    if name == "rule":
        return "rule"
    llm = LLMDistiller(model.model_copy(update={"temperature": 0.0}))
    return {"llm": llm, "rule+llm": ["rule", llm]}[name]


def written_phases(path: Path) -> dict[str, list[dict]]:
    """The measurement phases a trials log holds (every phase but the gate's), each with its
    rows; a phase is written whole when it ends, so a phase here is a finished one."""
    phases: dict[str, list[dict]] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{number} is not a JSON line ({exc}): the log was cut mid-write; "
                             "remove that line to resume") from None
        if row["phase"] != "gate":
            phases.setdefault(row["phase"], []).append(row)
    return phases


def outcomes(rows: list[dict], arm: str | None = None) -> dict[str, list[bool]]:
    """task id -> its trials' outcomes in trial order (only ``arm``'s rows, when named)."""
    out: dict[str, list[bool]] = {}
    for r in sorted(rows, key=lambda r: (r["task_id"], r["trial"])):
        if arm is None or r["arm"] == arm:
            out.setdefault(r["task_id"], []).append(bool(r["success"]))
    return out


def measure(threads: int | None, resume: Path | None = None) -> dict:
    """Every phase after calibration, as the protocol names it; every trial (the gate's
    included) appended to the version's trials log.

    ``resume``: the temporary folder of a run cut short after its round (a session's end): its
    banks are reused and every phase its trials log holds is read back, not run again. Tasks
    and trial seeds derive from the protocol's seeds, so a phase run on resume is the one the
    first run would have run."""
    import shutil
    import tempfile
    from dataclasses import asdict

    from bench_real_model import _model
    from by_template import per_template
    from skillbank.bank import SkillBank
    from skillbank_harness import envs
    from skillbank_harness.envs.families.steady import AGAIN
    from skillbank_harness.envs.measure import ARM_WITH, ARM_WITHOUT, measure_env

    rows = json.loads(SUMMARY.read_text())["rows"]
    evolution = [r["template"] for r in rows if r["measured"]]
    seeds, m = PROTOCOL["seeds"], PROTOCOL["measurement"]
    compared = variants()
    if resume is not None:
        done = written_phases(TRIALS_LOG)
        unfinished = [name for name in dict.fromkeys(d for d, _ in compared.values())
                      if not (resume / f"round-{name}.json").exists()]
        if "evidence" not in done or unfinished:
            raise SystemExit(f"{resume} cannot be resumed: its evidence or its round ({', '.join(unfinished)}) "
                             "did not finish there. Start a new run (without --resume).")
    else:
        done = {}
    model = _model(PROTOCOL["model"].split()[0].removeprefix("local:"), threads)
    TRIALS_LOG.parent.mkdir(parents=True, exist_ok=True)
    log = TRIALS_LOG.open("a" if resume else "w")

    def phase(name: str, run) -> list[dict]:
        """``name``'s rows: read back when a resumed run's log holds them, else run and written."""
        if name in done:
            return done[name]
        result = run()
        written = [{"phase": name, **asdict(r)} for r in sorted(result.records, key=lambda r: (r.task_id, r.trial))]
        log.writelines(json.dumps(row) + "\n" for row in written)
        log.flush()
        return written

    def tasks(templates, seed, n):
        return envs.generate_tasks(["steady"], per_template=n, seed=seed, templates=templates)

    common_args = dict(k=3, concurrency=1, progress=False, model=model.model_name, simulated=False)
    factory = lambda task, s: model.with_seed(s)  # noqa: E731
    started = time.perf_counter()
    folder = resume or Path(tempfile.mkdtemp(prefix="skillbank-consistency-"))
    print(f"run folder (for --resume): {folder}", file=sys.stderr, flush=True)
    ev = PROTOCOL["evidence"]
    evidence = tasks(evolution, seeds["evidence"], ev["instances_per_template"])
    with SkillBank.open(folder / "evidence") as bank:
        phase("evidence", lambda: measure_env(evidence, factory, trials=ev["trials_per_instance"], bank=bank,
                                              arms=(ARM_WITHOUT,), run_id="evidence", seed=seeds["evidence"],
                                              middleware_options=run_options(), **common_args))
    banks: dict[str, Path] = {}
    rounds: dict[str, dict] = {}
    for name in dict.fromkeys(d for d, _ in compared.values()):  # one round per distiller, each on a copy
        banks[name] = folder / f"bank-{name}"
        saved = folder / f"round-{name}.json"
        if resume is not None:
            rounds[name] = json.loads(saved.read_text())
            continue
        shutil.copytree(folder / "evidence", banks[name])
        with SkillBank.open(banks[name]) as bank:
            rounds[name] = run_round(bank, name, model, {t.id: t for t in evidence}, log)
        saved.write_text(json.dumps(rounds[name]))

    n, trials = m["instances_per_template"], m["trials_per_instance"]
    evo_tasks = tasks(evolution, seeds["measurement"], n)
    with SkillBank.open(folder / "evidence") as bank:
        arms = {"without": outcomes(phase("evolution/without", lambda: measure_env(
            evo_tasks, factory, trials=trials, bank=bank, arms=(ARM_WITHOUT,), run_id="evo-without",
            middleware_options=run_options(), seed=seeds["measurement"], **common_args)))}
    for label, (name, options) in compared.items():
        with SkillBank.open(banks[name]) as bank:
            arms[label] = outcomes(phase(f"evolution/{label}", lambda: measure_env(
                evo_tasks, factory, trials=trials, bank=bank, arms=(ARM_WITH,), run_id=f"evo-{label}",
                middleware_options=options, seed=seeds["measurement"], **common_args)))
    score = {label: sum(per_template(arms[label], trials).values()) for label in compared}
    chosen = max(compared, key=lambda label: (score[label], -list(compared).index(label)))

    tiers = {"evolution": (arms["without"], arms[chosen])}
    name, options = compared[chosen]
    with SkillBank.open(banks[name]) as bank:
        for tier, templates in (("unseen instances", [AGAIN[t] for t in evolution]),
                                ("unseen templates", unseen_templates(PROTOCOL["version"]))):
            written = phase(tier, lambda: measure_env(
                tasks(templates, seeds["measurement"], n), factory, trials=trials, bank=bank,
                arms=(ARM_WITHOUT, ARM_WITH), run_id=tier.replace(" ", "-"), middleware_options=options,
                seed=seeds["measurement"], **common_args))
            tiers[tier] = (outcomes(written, ARM_WITHOUT), outcomes(written, ARM_WITH))
    if PROTOCOL["version"] >= 2:  # every transcript (reminders, injected skills, drafts) kept too
        keep_transcripts({"evidence": folder / "evidence", **banks},
                         TRIALS_LOG.with_name(TRIALS_LOG.stem.replace("trials", "transcripts") + ".jsonl.gz"))
    log.close()
    return {"protocol": PROTOCOL["version"], "evolution_templates": evolution, "rounds": rounds,
            "gate_trials": sum(r["gate_trials"] for r in rounds.values()), "scores": score,
            "chosen": chosen, "table": table_of(tiers, trials),
            "minutes": (time.perf_counter() - started) / 60, "resumed": [p for p in done if p != "evidence"],
            "arms": arms, "tiers": {t: {"without": a, "with": b} for t, (a, b) in tiers.items()}}


def run_round(bank, name: str, model, evidence: dict, log) -> dict:
    """One evolution round with distiller ``name`` on ``bank``, gated on the model itself; every
    gate trial logged."""
    from skillbank.consistency.validation import ValidationConfig, ValidationLog, make_validator
    from skillbank.evolution import evolve
    from skillbank_harness import envs
    from skillbank_harness.demo import _round_row

    def trial_fn(task, middleware, seed: int) -> bool:
        before = Counter(middleware.injected)  # trials run one at a time (concurrency 1)
        result = envs.run_task(task, model.with_seed(seed), middleware=[middleware])
        shown = sorted(bank.get_skill(i).name for i, n in middleware.injected.items() if n > before[i])
        # The candidate arm reads a CandidateView; the current arm, the bank (shared by a round's
        # candidates). Named, so a trial whose candidate never reached the prompt is still read.
        candidate = getattr(middleware.injector.bank, "candidate", None)
        log.write(json.dumps({"phase": "gate", "distiller": name, "task_id": task.id, "seed": seed,
                              "candidate": candidate.name if candidate is not None else None,
                              "success": bool(result.success), "injected": shown,
                              "reasons": task.explain(result.env, result.final_answer, result.messages),
                              "tools": _tools_called(result.messages),
                              "asked_again": _asked_again(result.messages),
                              "answer": (result.final_answer or "")[:300]}) + "\n")
        log.flush()
        return result.success

    gate_log = ValidationLog()
    checks = ValidationConfig(trials=gate("trials", 2), concurrency=1, seed=PROTOCOL["seeds"]["gate"], k=3,
                              max_tasks=gate("max_tasks", 3), middleware_options=gate_options(name))
    validate = make_validator(bank, evidence, trial_fn, checks, log=gate_log)
    report = evolve(bank, distiller=make_distiller(name, model), auto_promote=True, validate=validate,
                    eval_budget=gate("budget", 24),
                    examples_per_lesson=PROTOCOL["round"]["examples_per_lesson"])
    return {"row": _round_row(report, {"trials": gate_log.trials, "seconds": gate_log.seconds}),
            "usage": report.usage.as_dict(), "gate_trials": gate_log.trials,
            "skills": [{"name": s.name, "kind": s.kind.value, "body": s.body}
                       for s in bank.list_skills(status="active")]}


def table_of(tiers: dict, trials: int) -> dict:
    """Per tier: pass^1 and pass^k without and with, the gain with its interval by template and
    its sign-flip p, the consistency headroom and the share of it closed."""
    from by_template import bootstrap, per_template, sign_flip_p
    from skillbank_harness.envs.families.steady import KINDS

    table = {}
    for tier, (without, with_) in tiers.items():
        row = {"templates": len(per_template(without, 1)), "tasks": len(without), "trials": trials}
        for kk in (1, trials):
            w, b = per_template(without, kk), per_template(with_, kk)
            gain, lo, hi = bootstrap(w, b, n=resamples())
            row[f"pass^{kk}"] = {"without": sum(w.values()) / len(w), "with": sum(b.values()) / len(b),
                                 "gain": gain, "ci": [lo, hi], "p": sign_flip_p(w, b)}
        at_k = {t: float(any(o)) for t, o in without.items()}
        row["pass@k without"] = sum(at_k.values()) / len(at_k)
        head = row["pass@k without"] - row[f"pass^{trials}"]["without"]
        row["consistency headroom"] = head
        row["closed"] = row[f"pass^{trials}"]["gain"] / head if head > 1e-9 else None
        row["kinds"] = sorted({KINDS[t.split("#")[0]] for t in without})
        table[tier] = row
    return table


def keep_transcripts(banks: dict[str, Path], path: Path) -> None:
    """Every trajectory each bank recorded, steps included, as gzipped JSON lines, each line
    naming its bank."""
    import gzip

    from skillbank.bank import SkillBank

    with gzip.open(path, "wt") as out:
        for name, folder in banks.items():
            with SkillBank.open(folder) as bank:
                for traj in bank.trajectories.list(limit=None, with_steps=True):
                    out.write(json.dumps({"bank": name, **json.loads(traj.model_dump_json())}) + "\n")


def table_row(tier: str, r: dict, k: int) -> str:
    """One tier's row of the measurement table (``r``: its entry of :func:`table_of`)."""
    a, b = r["pass^1"], r[f"pass^{k}"]
    closed = "–" if r["closed"] is None else f"{r['closed']:.0%}"
    return (f"| {tier} | {r['templates']}, {r['tasks']} x {r['trials']} | {a['without']:.0%} → "
            f"{a['with']:.0%} | {b['without']:.0%} → {b['with']:.0%} | {100 * b['gain']:+.0f} pts "
            f"[{100 * b['ci'][0]:+.0f}, {100 * b['ci'][1]:+.0f}], p = {b['p']:.2f} | "
            f"{100 * r['consistency headroom']:.0f} pts | {closed} |")


def measure_markdown(out: dict) -> str:
    k = PROTOCOL["measurement"]["trials_per_instance"]
    what = "variant" if "variants" in PROTOCOL["measurement"] else "form"
    lines = [f"Command: `python benchmarks/protocols/real_model_protocol.py --measure --protocol {out['protocol']}` "
             f"(protocol v{out['protocol']}, {out['minutes']:.1f} min"
             + (f" after resuming; read back: {', '.join(out['resumed'])}" if out.get("resumed") else "")
             + f"; every trial, the gate's {out['gate_trials']} "
             f"included, in `benchmarks/runs/{TRIALS_LOG.name}`). Evolution templates: "
             + ", ".join(f"`{t}`" for t in out["evolution_templates"])
             + f". {what.capitalize()} chosen on the evolution tier: **{out['chosen']}** (sum of pass^{k} "
             "over templates: " + ", ".join(f"{f} {v:.2f}" for f, v in out["scores"].items()) + ").", "",
             f"| tier | templates, tasks x trials | pass^1 without → with | pass^{k} without → with | "
             f"with − without pass^{k} [95% CI by template], p | consistency headroom (pass@{k} − pass^{k}) | closed |",
             "|---|---|---|---|---|---|---|"]
    lines += [table_row(tier, r, k) for tier, r in out["table"].items()]
    if what == "variant":
        lines += ["", f"| {what} | pass^{k} on the evolution tier (sum over templates) |", "|---|---|"]
        lines += [f"| {label} | {score:.2f} |" for label, score in out["scores"].items()]
    for name, r in out["rounds"].items():
        row, usage = r["row"], r["usage"]
        lines += ["", f"Round ({name}): {row['proposed']} proposed, {row['promoted']} promoted, "
                  f"{row['rejected']} rejected ({row['note']}); model calls {usage['calls']}, "
                  f"{len(usage['failures'])} skipped. Active skills after it: " + (", ".join(
                      f"`{s['name']}` ({s['kind']})" for s in r["skills"]) or "none") + "."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: every core)")
    parser.add_argument("--protocol", type=int, choices=sorted(PROTOCOLS), default=max(PROTOCOLS),
                        help="the protocol version to run under (default: the newest)")
    parser.add_argument("--resume", type=Path, metavar="RUN_DIR",
                        help="with --measure: go on with a run cut short after its round (the folder it printed)")
    args = parser.parse_args(argv)
    use(args.protocol)
    if args.resume is not None and not (args.measure and args.resume.is_dir()):
        parser.error("--resume takes the folder a cut-short --measure run printed, with --measure")
    if args.measure:
        out = measure(args.threads, args.resume)
        text = measure_markdown(out)
        print(text)
        MEASUREMENT.write_text(json.dumps(out, indent=2) + "\n")
        common.update_results(MEASURE_SECTION, common.machine_markdown() + "\n\n" + text)
        return 0
    if not args.calibrate:
        parser.error("say --calibrate or --measure")
    if not isinstance(PROTOCOL["seeds"]["calibration"], int):
        parser.error(f"protocol v{args.protocol} calibrates nothing: it keeps v2's calibration "
                     "(--calibrate --protocol 2)")
    t0 = time.perf_counter()
    rows = calibrate(args.threads)
    minutes = (time.perf_counter() - t0) / 60
    text = markdown(rows, minutes)
    print(text)
    SUMMARY.write_text(json.dumps({"protocol": PROTOCOL["version"], "minutes": minutes, "rows": rows},
                                  indent=2) + "\n")
    common.update_results(SECTION, common.machine_markdown() + "\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
