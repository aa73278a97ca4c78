"""Protocol v9's unseen tiers, resumed on the crashed run's own bank after the harness fix.
NOT a clean protocol run: see RESULTS.md, "protocol v9".

v9's run (0adb502) completed its evidence phase, its round and both arms of the evolution tier,
then died in the unseen-instances tier on a harness bug (the clinic's ``get_booking`` raised a
``KeyError`` where the task has no booking). This measures the two unseen tiers exactly as
``real_model_protocol.measure`` does (same tasks, seeds, arms, options and bank, the promoted
skill included), in the crashed run's bank folder, where the trials finished before the crash
are found again (``resumed``) and the rest are run. The evolution tier is read back from the
trials log. The resume is the one deviation from the committed protocol (no measured trial
called the tool that crashed: RESULTS.md).

    python benchmarks/protocols/resume_protocol_v9.py <the crashed run's folder, /tmp/skillbank-consistency-*>
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

# This folder (by_template), benchmarks/ (common, bench_real_model) and the repository.
sys.path[:0] = [str(Path(__file__).resolve().parents[i]) for i in (0, 1, 2)]

import real_model_protocol as rmp  # noqa: E402


def main(folder: Path) -> int:
    from bench_real_model import _model
    from skillbank.bank import SkillBank
    from skillbank_harness import envs
    from skillbank_harness.envs.families.steady import AGAIN
    from skillbank_harness.envs.measure import ARM_WITH, ARM_WITHOUT, measure_env

    rmp.use(9)
    protocol, seeds = rmp.PROTOCOL, rmp.PROTOCOL["seeds"]
    rows = json.loads(rmp.SUMMARY.read_text())["rows"]
    evolution = [r["template"] for r in rows if r["measured"]]
    m = protocol["measurement"]
    n, trials = m["instances_per_template"], m["trials_per_instance"]
    (name, options), = rmp.variants().values()
    model = _model(protocol["model"].split()[0].removeprefix("local:"), None)
    common_args = dict(k=3, concurrency=1, progress=False, model=model.model_name, simulated=False)
    factory = lambda task, s: model.with_seed(s)  # noqa: E731
    logged = [json.loads(line) for line in rmp.TRIALS_LOG.open()]
    evo = {"without": {}, "with": {}}
    for r in sorted(logged, key=lambda r: (r.get("task_id", ""), r.get("trial", 0))):
        if r["phase"].startswith("evolution/"):
            evo["without" if r["arm"] == ARM_WITHOUT else "with"].setdefault(r["task_id"], []).append(bool(r["success"]))
    tiers = {"evolution": (evo["without"], evo["with"])}
    started = time.perf_counter()
    with rmp.TRIALS_LOG.open("a") as log, SkillBank.open(folder / f"bank-{name}") as bank:
        for tier, templates in (("unseen instances", [AGAIN[t] for t in evolution]),
                                ("unseen templates", rmp.unseen_templates(9))):
            tasks = envs.generate_tasks(["steady"], per_template=n, seed=seeds["measurement"], templates=templates)
            result = measure_env(tasks, factory, trials=trials, bank=bank, arms=(ARM_WITHOUT, ARM_WITH),
                                 run_id=tier.replace(" ", "-"), middleware_options=options,
                                 seed=seeds["measurement"], **common_args)
            split = {a: {} for a in (ARM_WITHOUT, ARM_WITH)}
            for r in sorted(result.records, key=lambda r: (r.task_id, r.trial)):
                log.write(json.dumps({"phase": tier, **asdict(r)}) + "\n")
                split[r.arm].setdefault(r.task_id, []).append(bool(r.success))
            log.flush()
            tiers[tier] = (split[ARM_WITHOUT], split[ARM_WITH])
    rmp.keep_transcripts({"evidence": folder / "evidence", name: folder / f"bank-{name}"},
                         rmp.TRIALS_LOG.with_name("consistency_transcripts_v9.jsonl.gz"))
    out = {"protocol": 9, "resumed_after_crash": True, "unseen_minutes": (time.perf_counter() - started) / 60,
           "table": rmp.table_of(tiers, trials),
           "tiers": {t: {"without": a, "with": b} for t, (a, b) in tiers.items()}}
    rmp.MEASUREMENT.write_text(json.dumps(out, indent=2) + "\n")
    for tier, row in out["table"].items():
        p = row[f"pass^{trials}"]
        print(f"{tier}: pass^{trials} {p['without']:.0%} -> {p['with']:.0%}, {p['gain'] * 100:+.0f} pts "
              f"[{p['ci'][0] * 100:+.0f}, {p['ci'][1] * 100:+.0f}], p = {p['p']:.2f}; "
              f"pass^1 {row['pass^1']['without']:.0%} -> {row['pass^1']['with']:.0%}; "
              f"headroom {row['consistency headroom'] * 100:.0f} pts, closed {row['closed']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
