"""The sealed tier's one run, exactly as ``benchmarks/sealed/protocol.json`` says.

    PYTHONPATH=$PWD HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/sealed/run.py       # next phase(s)
    python benchmarks/sealed/run.py --status                                         # where it stands
    python benchmarks/sealed/run.py --fake --out /tmp/sealed-fake                    # plumbing smoke run

It runs the library and the harness of the protocol's library commit, never the checkout's: it
adds a detached git worktree of that commit (``.sealed-library/``, ignored by git) and re-runs
itself with that worktree first on ``PYTHONPATH``. Before any trial it checks the template
file's SHA-256 in that worktree and the model file's SHA-256 against the protocol, and records
the commit it ran in every log line.

Phases, each resumable (a trial already in ``trials.jsonl`` is never run again):

1. **calibrate**: instance 0 of every template (the first instance of
   ``generate_tasks(families, per_template=2, seed=EVIDENCE_SEED, budget=False)``), one unguided
   run (no middleware) per calibration seed, the seed being the model's sampling seed. When all
   are in, ``kept.json`` lists the templates with 2, 3 or 4 successes of 6 and the run stops:
   ``kept.json`` must be committed to git before the next phase starts (the runner checks).
2. **evidence**: the kept templates' instances 0 and 1, one run per evidence trial seed,
   through ``SkillBankMiddleware(bank)`` (the library's defaults) into a fresh bank
   (``bank/``), each labelled by the task's verifier (``record_outcome``).
3. **round**: one ``evolve(bank)`` with the library's defaults, its gate on the model
   (``make_validator`` with ``ValidationConfig()``, run one trial at a time: both cores are the
   model's; concurrency changes no seed). The bank is copied to ``bank.evidence/`` first; a round
   stopped midway restarts from that copy (its gate trials are run again; no measured trial is).
   ``round.json`` keeps the report.
4. **measure**: the kept templates' two measurement instances
   (``generate_tasks(..., seed=MEASURE_SEED)``), each measurement trial seed in both arms one
   after the other (*without*: no middleware; *with*: ``SkillBankMiddleware(bank)``).
5. **report**: pass^3 per template (mean over its instances) per arm, with − without averaged
   over templates, a 95 % bootstrap interval over templates and the paired sign-flip test over
   templates (every flip up to 20 templates, else 200,000 random flips), into ``result.json``
   and ``result.md``.

Every trial's transcript (its messages) goes to ``transcripts/<phase>.jsonl``.

``--fake`` replaces the model by the task's reference run on odd seeds and a give-up reply on
even ones, and skips the model file's check: it tests the plumbing, nothing about a model.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROTOCOL = HERE / "protocol.json"
LIBRARY = ROOT / ".sealed-library"
DEFAULT_OUT = ROOT / "benchmarks" / "runs" / "sealed"
PHASES = ("calibrate", "evidence", "round", "measure", "report")
K = 3


# ------------------------------------------------------------------------------- the library


def protocol() -> dict[str, Any]:
    return json.loads(PROTOCOL.read_text())


def library_commit() -> str:
    return protocol()["library_commit"].split()[0]


def ensure_library() -> Path:
    """The protocol's library commit as a detached worktree (added once)."""
    commit = library_commit()
    if not LIBRARY.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(LIBRARY), commit],
                       check=True, stdout=subprocess.DEVNULL)
    head = subprocess.run(["git", "-C", str(LIBRARY), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    if not head.startswith(commit):
        sys.exit(f"{LIBRARY} is at {head[:12]}, not the protocol's {commit}: remove it "
                 f"(git worktree remove {LIBRARY}) and run again")
    return LIBRARY


def in_library() -> bool:
    import skillbank
    import skillbank_harness

    return all(Path(m.__file__).resolve().is_relative_to(LIBRARY.resolve())
               for m in (skillbank, skillbank_harness))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_templates() -> None:
    spec = protocol()["templates"]
    found = sha256(LIBRARY / spec["file"])
    if found != spec["sha256"]:
        sys.exit(f"{spec['file']} at the library commit has sha256 {found}, not the protocol's "
                 f"{spec['sha256']}: the tier is not the one sealed")


# ------------------------------------------------------------------------------- the model


def real_model() -> Callable[[Any, int], Any]:
    from skillbank.chat import resolve_chat_model

    model = resolve_chat_model("local:1.5b")
    expected = protocol()["model"]["sha256"]
    found = sha256(Path(model.model_path))
    if found != expected:
        sys.exit(f"{model.model_path} has sha256 {found}, not the protocol's {expected}")
    model.engine()
    return lambda task, seed: model.with_seed(seed)


def fake_model() -> Callable[[Any, int], Any]:
    from langchain_core.messages import AIMessage

    from skillbank_harness.envs.runner import ReferenceModel

    def make(task: Any, seed: int) -> Any:
        if seed % 2:
            return ReferenceModel.for_task(task)
        return ReferenceModel(responses=[AIMessage(content="I cannot do that.")])
    return make


# ------------------------------------------------------------------------------- the log


class Log:
    """``trials.jsonl`` (one line per trial, appended as each ends) and the transcripts."""

    def __init__(self, out: Path, commit: str):
        self.out = out
        self.commit = commit
        self.path = out / "trials.jsonl"
        out.mkdir(parents=True, exist_ok=True)
        (out / "transcripts").mkdir(exist_ok=True)
        self.rows = [json.loads(line) for line in self.path.open()] if self.path.exists() else []
        self.done = {(r["phase"], r["task"], r["arm"], r["seed"]) for r in self.rows}

    def has(self, phase: str, task: Any, arm: str, seed: int) -> bool:
        return (phase, task.id, arm, seed) in self.done

    def write(self, phase: str, task: Any, arm: str, seed: int, result: Any, seconds: float,
              trajectory: str | None = None) -> None:
        from langchain_core.messages import messages_to_dict

        row = {"phase": phase, "template": task.template, "task": task.id, "arm": arm, "seed": seed,
               "success": bool(result.success), "seconds": round(seconds, 2),
               "reasons": task.explain(result.env, result.final_answer, result.messages),
               "answer": result.final_answer[:300], "trajectory": trajectory,
               "library_commit": self.commit}
        with (self.out / "transcripts" / f"{phase}.jsonl").open("a") as handle:
            handle.write(json.dumps({"task": task.id, "arm": arm, "seed": seed,
                                     "messages": messages_to_dict(result.messages)}, default=str) + "\n")
        with self.path.open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        self.rows.append(row)
        self.done.add((phase, task.id, arm, seed))
        print(f"{phase:9s} {arm:8s} {task.id:52s} {'ok  ' if row['success'] else 'FAIL'} {seconds:6.1f}s",
              flush=True)

    def of(self, phase: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["phase"] == phase]


# ------------------------------------------------------------------------------- the phases


def tasks(seed: int, templates: list[str] | None = None) -> list[Any]:
    from skillbank_harness import envs

    families = protocol()["templates"]["families"]
    found = envs.generate_tasks(families, per_template=2, seed=seed, budget=False)
    return [t for t in found if templates is None or t.template in templates]


def metadata(task: Any) -> dict[str, Any]:
    return {"metadata": {"skillbank_task_id": task.id, "skillbank_task_type": str(task.type)}}


def calibrate(log: Log, model_for: Callable[[Any, int], Any]) -> bool:
    """Returns True when every calibration trial is in and ``kept.json`` is written."""
    from skillbank_harness import envs

    spec = protocol()
    firsts = [t for t in tasks(spec["evidence"]["seed"]) if t.instance == 0]
    for seed in spec["calibration"]["seeds"]:
        for task in firsts:
            if not log.has("calibrate", task, "without", seed):
                t0 = time.perf_counter()
                result = envs.run_task(task, model_for(task, seed))
                log.write("calibrate", task, "without", seed, result, time.perf_counter() - t0)
    wins: dict[str, int] = {}
    for row in log.of("calibrate"):
        wins[row["template"]] = wins.get(row["template"], 0) + row["success"]
    kept = sorted(t for t, n in wins.items() if 2 <= n <= 4)
    (log.out / "kept.json").write_text(json.dumps(
        {"rule": spec["calibration"]["keep"], "successes_of_6": dict(sorted(wins.items())),
         "kept": kept, "library_commit": log.commit}, indent=1) + "\n")
    print(f"calibration done: {len(kept)} of {len(wins)} templates kept (2-4 of 6)")
    return True


def kept_committed(out: Path) -> list[str] | None:
    """The kept list, when ``kept.json`` is committed unchanged; None otherwise."""
    path = out / "kept.json"
    if not path.exists():
        return None
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch", str(path)],
                             capture_output=True).returncode == 0
    clean = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", str(path)]).returncode == 0
    return json.loads(path.read_text())["kept"] if tracked and clean else None


def _recorded_run(bank: Any, task: Any, model: Any) -> tuple[Any, str | None]:
    from skillbank.adapters.langchain import TRAJECTORY_KEY, SkillBankMiddleware
    from skillbank_harness import envs

    result = envs.run_task(task, model, middleware=[SkillBankMiddleware(bank)], config=metadata(task))
    trajectory = (result.state or {}).get(TRAJECTORY_KEY)
    if trajectory is not None:
        bank.record_outcome(trajectory, success=bool(result.success), source="verifier")
    return result, trajectory


def evidence(log: Log, model_for: Callable[[Any, int], Any], kept: list[str]) -> None:
    from skillbank.bank import SkillBank

    spec = protocol()["evidence"]
    with SkillBank.open(log.out / "bank") as bank:
        for seed in spec["trial_seeds"]:
            for task in tasks(spec["seed"], kept):
                if not log.has("evidence", task, "without", seed):
                    t0 = time.perf_counter()
                    result, trajectory = _recorded_run(bank, task, model_for(task, seed))
                    log.write("evidence", task, "without", seed, result, time.perf_counter() - t0, trajectory)


def round_(log: Log, model_for: Callable[[Any, int], Any], kept: list[str]) -> None:
    from skillbank.bank import SkillBank
    from skillbank.consistency.validation import ValidationConfig, ValidationLog, make_validator
    from skillbank.evolution import evolve
    from skillbank.evolution.gate import GateConfig
    from skillbank_harness import envs

    bank_path, snapshot = log.out / "bank", log.out / "bank.evidence"
    if snapshot.exists():
        shutil.rmtree(bank_path)  # a round stopped midway: start it again from the evidence
        shutil.copytree(snapshot, bank_path)
    else:
        shutil.copytree(bank_path, snapshot)
    by_id = {t.id: t for t in tasks(protocol()["evidence"]["seed"], kept)}

    def trial_fn(task: Any, middleware: Any, seed: int) -> bool:
        return bool(envs.run_task(task, model_for(task, seed), middleware=[middleware]).success)

    t0 = time.perf_counter()
    with SkillBank.open(bank_path) as bank:
        gate_log = ValidationLog()
        validate = make_validator(bank, by_id, trial_fn, ValidationConfig(concurrency=1), log=gate_log)
        report = evolve(bank, gate=GateConfig(validate=validate, auto_promote=True))
        active = [{"name": s.name, "version": s.version, "body": s.body}
                  for s in bank.list_skills(status="active")]
    (log.out / "round.json").write_text(json.dumps(
        {"report": report.to_dict(), "gate": gate_log.entries,
         "gate_trials": gate_log.trials, "seconds": round(time.perf_counter() - t0, 1),
         "active_skills": active, "library_commit": log.commit}, indent=1, default=str) + "\n")
    shutil.rmtree(snapshot)
    print(f"round done: {len(active)} active skills, {gate_log.trials} gate trials")


def measure(log: Log, model_for: Callable[[Any, int], Any], kept: list[str]) -> None:
    from skillbank.bank import SkillBank
    from skillbank_harness import envs

    spec = protocol()["measurement"]
    with SkillBank.open(log.out / "bank") as bank:
        for seed in spec["trial_seeds"]:
            for task in tasks(spec["seed"], kept):
                if not log.has("measure", task, "without", seed):
                    t0 = time.perf_counter()
                    result = envs.run_task(task, model_for(task, seed))
                    log.write("measure", task, "without", seed, result, time.perf_counter() - t0)
                if not log.has("measure", task, "with", seed):
                    t0 = time.perf_counter()
                    result, trajectory = _recorded_run(bank, task, model_for(task, seed))
                    log.write("measure", task, "with", seed, result, time.perf_counter() - t0, trajectory)


# ------------------------------------------------------------------------------- the analysis


def per_template(rows: list[dict[str, Any]], arm: str) -> dict[str, float]:
    """Each template's mean over its instances of pass^3 (all three trials succeeded)."""
    by_task: dict[str, list[bool]] = {}
    template_of: dict[str, str] = {}
    for r in rows:
        if r["arm"] == arm:
            by_task.setdefault(r["task"], []).append(r["success"])
            template_of[r["task"]] = r["template"]
    groups: dict[str, list[float]] = {}
    for task, outcomes in by_task.items():
        groups.setdefault(template_of[task], []).append(float(len(outcomes) == K and all(outcomes)))
    return {t: sum(v) / len(v) for t, v in sorted(groups.items())}


def sign_flip_p(diffs: list[float], *, draws: int = 200_000, seed: int = 0) -> float:
    import numpy as np

    d = np.array(diffs)
    observed = abs(d.sum())
    if len(d) <= 20:
        flips = np.array(list(itertools.product((1, -1), repeat=len(d))))
    else:
        flips = np.random.default_rng(seed).choice((1, -1), size=(draws, len(d)))
    return float(np.mean(np.abs(flips @ d) >= observed - 1e-12))


def report(log: Log, kept: list[str]) -> dict[str, Any]:
    import numpy as np

    rows = log.of("measure")
    without, with_ = per_template(rows, "without"), per_template(rows, "with")
    names = sorted(set(without) & set(with_))
    diffs = [with_[t] - without[t] for t in names]
    resamples = 200_000
    draws = np.random.default_rng(0).integers(0, len(names), size=(resamples, len(names)))
    low, high = np.quantile(np.array(diffs)[draws].mean(axis=1), [0.025, 0.975])
    out = {"templates": len(names), "instances": len({r["task"] for r in rows}), "trials": len(rows),
           "pass3_without": float(np.mean([without[t] for t in names])),
           "pass3_with": float(np.mean([with_[t] for t in names])),
           "difference": float(np.mean(diffs)), "interval_95": [float(low), float(high)],
           "bootstrap_resamples": resamples, "sign_flip_p": sign_flip_p(diffs),
           "per_template": {t: {"without": without[t], "with": with_[t]} for t in names},
           "kept_templates": len(kept), "library_commit": log.commit}
    (log.out / "result.json").write_text(json.dumps(out, indent=1) + "\n")
    (log.out / "result.md").write_text(
        f"Sealed tier, held-out instances: pass^3 {100 * out['pass3_without']:.1f}% without, "
        f"{100 * out['pass3_with']:.1f}% with the bank; with - without {100 * out['difference']:+.1f} "
        f"points [{100 * low:+.1f}, {100 * high:+.1f}] (95% bootstrap over {len(names)} templates), "
        f"sign-flip p = {out['sign_flip_p']:.3f}; {out['trials']} trials on {out['instances']} "
        f"instances, library {log.commit}.\n")
    print((log.out / "result.md").read_text(), end="")
    return out


# ------------------------------------------------------------------------------- the run


def status(out: Path) -> str:
    rows = [json.loads(line) for line in (out / "trials.jsonl").open()] if (out / "trials.jsonl").exists() else []
    counts = {p: sum(r["phase"] == p for r in rows) for p in ("calibrate", "evidence", "measure")}
    return (f"{out}: calibrate {counts['calibrate']} trials, evidence {counts['evidence']}, measure "
            f"{counts['measure']}; kept.json {'committed' if kept_committed(out) is not None else 'not committed'}; "
            f"round {'done' if (out / 'round.json').exists() else 'not done'}; "
            f"result {'written' if (out / 'result.json').exists() else 'not written'}")


def run(out: Path, fake: bool) -> int:
    check_templates()
    commit = subprocess.run(["git", "-C", str(LIBRARY), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    log = Log(out, commit)
    model_for = fake_model() if fake else real_model()
    if not (out / "kept.json").exists():
        calibrate(log, model_for)
    kept = kept_committed(out) if not fake else json.loads((out / "kept.json").read_text())["kept"]
    if kept is None:
        print(f"commit {out / 'kept.json'} (git add + commit), then run again for the evidence phase")
        return 0
    evidence(log, model_for, kept)
    if not (out / "round.json").exists():
        round_(log, model_for, kept)
    measure(log, model_for, kept)
    report(log, kept)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--fake", action="store_true", help="scripted model: a plumbing smoke run")
    parser.add_argument("--status", action="store_true", help="print where the run stands and exit")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if args.status:
        print(status(out))
        return 0
    if not args.fake and out != DEFAULT_OUT.resolve():
        sys.exit("the sealed run writes only to its committed place; --out is for --fake")
    library = ensure_library()
    if not in_library():
        if os.environ.get("SKILLBANK_SEALED_CHILD"):
            sys.exit(f"skillbank was not imported from {library}: run without PYTHONPATH pointing elsewhere")
        env = {**os.environ, "SKILLBANK_SEALED_CHILD": "1",
               "PYTHONPATH": os.pathsep.join([str(library), os.environ.get("PYTHONPATH", "")])}
        return subprocess.run([sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]], env=env).returncode
    return run(out, args.fake)


if __name__ == "__main__":
    sys.exit(main())
