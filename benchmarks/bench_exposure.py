"""What randomized exposure adds to a model turn: the live draw and its record, at 10,000 skills.

    python benchmarks/bench_exposure.py                  # 10,000 skills, 2,000 turns per arm
    python benchmarks/bench_exposure.py --quick          # a smoke run; numbers meaningless

One bank (SQLite, the hash embedder: the exposure path does not depend on the embedder) and the
same ``create_agent`` agent with a scripted model (``bench_middleware.make_agent``: the model
calls a tool each turn, then answers) runs through ``SkillBankMiddleware`` two ways, interleaved
run by run in one process so drift hits both alike:

- ``live off``: ``InjectionConfig(live=None)``: no active skill is randomized, nothing drawn or
  recorded (the bank holds no canary: a canary is drawn whatever the config, so a bank with one
  has no exposure-free arm);
- ``live on``: ``InjectionConfig(live=LiveConfig(holdout=...))``: every eligible skill of every
  turn is randomized, its arm drawn once per run and recorded in the exposure table on the turn
  it first becomes eligible (a canary takes the same draw and the same record; the holdout makes
  every eligible skill one, the most records a turn can write).

A turn is the wall time from one model call to the next (as ``bench_middleware``); the added time
is ``live on`` minus ``live off``, median and p95, with the CPU time per turn beside it, and the
median of the differences paired by run (the same task, the arms back to back). The
exposure path is also timed directly: the draw (``ExposureDraw.assign``) and the record
(``keep_exposures``, one write transaction per turn with new exposures).
Target: at most 0.5 ms added per model turn at 10,000 skills.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_middleware import Clock, make_agent, pct, task_texts  # noqa: E402
from common import base_parser, synthetic_skills  # noqa: E402

import skillbank.adapters._recording_middleware as recording_mod  # noqa: E402
from skillbank import SkillBank  # noqa: E402
from skillbank.adapters.config import InjectionConfig, RecordingConfig  # noqa: E402
from skillbank.adapters.langchain import SkillBankMiddleware  # noqa: E402
from skillbank.live._config import LiveConfig  # noqa: E402

ARMS = ("live off", "live on")


class ExposureTimer:
    """Seconds spent in the draw and the record, and exposures recorded, per arm."""

    def __init__(self) -> None:
        self.arm = ARMS[0]
        self.draw = {a: 0.0 for a in ARMS}
        self.record = {a: 0.0 for a in ARMS}
        self.recorded = {a: 0 for a in ARMS}
        self.timing = False

    def wrap_draw(self, injector: Any, arm: str) -> None:
        original = injector._exposure.assign

        def assign(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            out = original(*args, **kwargs)
            if self.timing:
                self.draw[arm] += time.perf_counter() - t0
            return out

        injector._exposure.assign = assign

    def wrap_record(self) -> None:
        original = recording_mod.keep_exposures

        def keep(sink: Any, run_id: str, exposures: Any) -> bool:
            t0 = time.perf_counter()
            out = original(sink, run_id, exposures)
            if self.timing:
                self.record[self.arm] += time.perf_counter() - t0
                self.recorded[self.arm] += len(exposures) if out else 0
            return out

        recording_mod.keep_exposures = keep  # the name the recording middleware calls


def build_bank(path: Path, n: int) -> tuple[SkillBank, float]:
    bank = SkillBank.open(path, embedder="hash")
    t0 = time.perf_counter()
    existing = {s.name for s in bank.list_skills()}  # a reused --dir keeps its skills
    with bank.store.transaction():
        for spec in synthetic_skills(n):
            if spec["name"] not in existing:
                # Skills this agent learned: their toolset is its own (the injector keeps skills
                # learned with other tools away from it).
                bank.add_skill(**spec, toolset=["lookup"])
    bank.sync_index()  # embed and index every skill before anything is timed
    return bank, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = base_parser("Per-turn cost of recording randomized exposures (skillbank.live).")
    parser.add_argument("--skills", type=int, default=10_000, help="skills in the bank (default 10,000)")
    parser.add_argument("--turns", type=int, default=2000, help="model turns per arm (default 2,000)")
    parser.add_argument("--turns-per-run", type=int, default=5, help="model turns per agent run (default 5)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs per arm first (default 5)")
    parser.add_argument("--holdout", type=float, default=0.05, help="the live arm's holdout (default 0.05)")
    parser.add_argument("--dir", help="bank folder to use and keep (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="also print the report as one JSON line")
    args = parser.parse_args(argv)
    if args.quick:
        args.skills, args.turns, args.warmup = 200, 40, 1

    tmp = tempfile.TemporaryDirectory()
    bank, built = build_bank(Path(args.dir) if args.dir else Path(tmp.name) / "bank", args.skills)
    print(f"bank: {args.skills} skills added and indexed ({bank.embedder.name}) in {built:.1f}s", file=sys.stderr)

    timer = ExposureTimer()
    timer.wrap_record()
    lives = {"live off": None, "live on": LiveConfig(holdout=args.holdout)}
    arms: dict[str, dict[str, Any]] = {}
    for name in ARMS:
        clock = Clock()
        mw = SkillBankMiddleware(bank, injection=InjectionConfig(live=lives[name]), recording=RecordingConfig())
        timer.wrap_draw(mw.prompt_middleware.injector, name)
        arms[name] = {"agent": make_agent(args.turns_per_run, [mw], clock), "clock": clock, "turns": [],
                      "cpu": [], "run_turn": []}

    def one_run(name: str, task: str, timed: bool) -> None:
        arm = arms[name]
        clock = arm["clock"]
        clock.stamps, clock.prompts = [], []
        timer.arm, timer.timing = name, timed
        cpu0, start = time.process_time(), time.perf_counter()
        arm["agent"].invoke({"messages": [("user", task)]})
        end, cpu = time.perf_counter(), time.process_time() - cpu0
        if timed:
            marks = [start, *clock.stamps[1:], end]
            arm["turns"].extend((b - a) * 1000 for a, b in zip(marks, marks[1:]))
            arm["cpu"].append(cpu * 1000 / max(1, len(clock.stamps)))
            arm["run_turn"].append((end - start) * 1000 / max(1, len(clock.stamps)))

    runs = max(1, args.turns // args.turns_per_run)
    tasks = task_texts(runs + args.warmup)
    for i in range(args.warmup):
        for name in ARMS:
            one_run(name, tasks[i], timed=False)
    exposures_before = bank.store.query_one("SELECT count(*) AS n FROM exposures")["n"]
    t_all = time.perf_counter()
    step = max(1, runs // 10)
    for i in range(runs):
        # Alternate which arm goes first, so neither always runs on a cache the other warmed.
        for name in ARMS if i % 2 == 0 else ARMS[::-1]:
            one_run(name, tasks[args.warmup + i], timed=True)
        if (i + 1) % step == 0:
            print(f"  {i + 1}/{runs} runs per arm ({time.perf_counter() - t_all:.0f}s)", file=sys.stderr)
    wall = time.perf_counter() - t_all
    stored = bank.store.query_one("SELECT count(*) AS n FROM exposures")["n"] - exposures_before

    report: dict[str, Any] = {"skills": args.skills, "turns_per_arm": runs * args.turns_per_run,
                              "turns_per_run": args.turns_per_run, "holdout": args.holdout,
                              "wall_seconds": round(wall, 1), "exposures_stored": stored}
    for name in ARMS:
        turns, n = arms[name]["turns"], len(arms[name]["turns"])
        report[name] = {"median_ms": round(statistics.median(turns), 3), "p95_ms": round(pct(turns, 0.95), 3),
                        "cpu_ms_per_turn": round(statistics.median(arms[name]["cpu"]), 3),
                        "draw_ms_per_turn": round(timer.draw[name] * 1000 / n, 4),
                        "record_ms_per_turn": round(timer.record[name] * 1000 / n, 4),
                        "exposures_per_turn": round(timer.recorded[name] / n, 3)}
    off, on = report["live off"], report["live on"]
    report["added"] = {"median_ms": round(on["median_ms"] - off["median_ms"], 3),
                       "p95_ms": round(on["p95_ms"] - off["p95_ms"], 3),
                       "cpu_ms": round(on["cpu_ms_per_turn"] - off["cpu_ms_per_turn"], 3),
                       "exposure_path_ms": round(on["draw_ms_per_turn"] + on["record_ms_per_turn"]
                                                 - off["draw_ms_per_turn"] - off["record_ms_per_turn"], 4)}
    # Paired by run: the same task, one arm right after the other, so a load that drifts over
    # the run mostly cancels (the per-turn medians above do not pair).
    paired = [b - a for a, b in zip(arms["live off"]["run_turn"], arms["live on"]["run_turn"])]
    paired_cpu = [b - a for a, b in zip(arms["live off"]["cpu"], arms["live on"]["cpu"])]
    report["added"]["paired_median_ms"] = round(statistics.median(paired), 3)
    report["added"]["paired_cpu_median_ms"] = round(statistics.median(paired_cpu), 3)
    with contextlib.suppress(OSError):
        report["load_average"] = [round(x, 2) for x in os.getloadavg()]

    print(f"\n{report['turns_per_arm']} model turns per arm ({runs} runs x {args.turns_per_run} turns, "
          f"interleaved), {args.skills} skills, embedder {bank.embedder.name}, holdout {args.holdout}, "
          f"{wall:.1f}s; load average {report.get('load_average')}")
    print(f"{'arm':<10} {'median ms/turn':>15} {'p95 ms/turn':>12} {'cpu ms/turn':>12} {'draw ms/turn':>13} "
          f"{'record ms/turn':>15} {'exposures/turn':>15}")
    for name in ARMS:
        r = report[name]
        print(f"{name:<10} {r['median_ms']:>15.3f} {r['p95_ms']:>12.3f} {r['cpu_ms_per_turn']:>12.3f} "
              f"{r['draw_ms_per_turn']:>13.4f} {r['record_ms_per_turn']:>15.4f} {r['exposures_per_turn']:>15.3f}")
    a = report["added"]
    print(f"\nadded per turn by exposure: {a['median_ms']:.3f} ms median, {a['p95_ms']:.3f} ms p95 "
          f"(cpu {a['cpu_ms']:.3f} ms); the draw and the record timed directly: {a['exposure_path_ms']:.4f} ms "
          f"per turn; {stored} exposures stored (target: at most 0.5 ms per turn)")
    print(f"paired by run (same task, arms back to back): {a['paired_median_ms']:.3f} ms per turn median, "
          f"cpu {a['paired_cpu_median_ms']:.3f} ms")
    if args.json:
        print(json.dumps(report))
    bank.close()
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
