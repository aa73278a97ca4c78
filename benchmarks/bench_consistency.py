"""The consistency protocol (``protocol.json``) on the real model: the calibration step.

    python benchmarks/bench_consistency.py --calibrate      # the steady tier's evolution side

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

HERE = Path(__file__).resolve().parent
PROTOCOL = json.loads((HERE / "protocol.json").read_text())
LOG = HERE / "runs" / "consistency_calibration.jsonl"
SUMMARY = HERE / "consistency_calibration.json"
SECTION = "Real model: calibration of the consistency tier (protocol v1)"


def _tools_called(messages: list) -> list[str]:
    return [call["name"] for m in messages for call in (getattr(m, "tool_calls", None) or [])]


def _tokens(messages: list) -> int:
    return sum((getattr(m, "usage_metadata", None) or {}).get("total_tokens", 0) for m in messages)


def calibrate(threads: int | None) -> list[dict]:
    from bench_real_model import _model
    from skillbank.consistency.trials import trial_seed
    from skillbank_harness import envs
    from skillbank_harness.envs.families.steady import EVOLUTION, KINDS

    seed = PROTOCOL["seeds"]["calibration"]
    n = PROTOCOL["calibration"]["instances_per_template"]
    done = {json.loads(line)["task"] for line in LOG.open()} if LOG.exists() else set()
    model = _model(PROTOCOL["model"].split()[0].removeprefix("local:"), threads)
    tasks = envs.generate_tasks(["steady"], per_template=n, seed=seed, templates=EVOLUTION)
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
    return summarise([json.loads(line) for line in LOG.open()])


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
    measured = {r["template"] for r in kept[:6]}
    for r in rows:
        r["measured"] = r["template"] in measured
    return rows


def markdown(rows: list[dict], minutes: float) -> str:
    lines = ["Command: `python benchmarks/bench_consistency.py --calibrate` (protocol v1, "
             f"`benchmarks/protocol.json`: seed {PROTOCOL['seeds']['calibration']}, unguided, "
             f"{PROTOCOL['calibration']['keep']}; {PROTOCOL['calibration']['cap']}). "
             f"{sum(r['runs'] for r in rows)} runs, {minutes:.1f} min; every run in "
             "`benchmarks/runs/consistency_calibration.jsonl`.", "",
             "| template | lesson kind | runs | successes | kept | measured |", "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["kind"], r["template"])):
        lines.append(f"| `{r['template']}` | {r['kind']} | {r['runs']} | {r['successes']}/{r['runs']} "
                     f"| {'kept' if r['kept'] else 'dropped'} | {'yes' if r['measured'] else ''} |")
    hist = {k: sum(r["successes"] == k for r in rows) for k in range(0, 5)}
    lines += ["", "Successes of 4 per template: " + ", ".join(f"{k}/4: {v}" for k, v in hist.items())
              + f". Kept {sum(r['kept'] for r in rows)} of {len(rows)}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibrate", action="store_true", required=True)
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: every core)")
    args = parser.parse_args(argv)
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
