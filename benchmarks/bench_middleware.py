"""What SkillBankMiddleware adds to every model turn: retrieval and logging, measured.

    python benchmarks/bench_middleware.py                      # 1,000 turns, 1,000 skills, MiniLM
    python benchmarks/bench_middleware.py --quick --embedder hash

A real ``create_agent`` agent with a scripted fake chat model (so the model itself costs ~nothing
and what remains is the framework plus skillbank) runs the same workload three ways, interleaved
run by run so drift hits all arms alike:

- ``baseline``: no middleware;
- ``logging``: ``SkillBankMiddleware(inject=False)`` (trajectory recording only);
- ``injection``: the default middleware (per-turn retrieval + rendering + recording), with the
  bundled MiniLM on its default engine (ONNX Runtime where installed);
- ``injection-numpy`` (with ``--embedder minilm``): the same on the numpy engine, the query
  embedding before ONNX Runtime, on a second handle of the same bank (same skills, same index).

Each run is ``--turns-per-run`` model turns (the model calls a trivial tool, then answers), so
``--turns`` turns are ``turns / turns-per-run`` runs per arm. A turn is measured as the wall time
from one model call to the next (the first from ``invoke``; the last until ``invoke`` returns),
so per-turn times add up to the run time and include the tool node, the middleware hooks and
the per-run start and finish writes. The added time per turn is an arm's median (and p95) minus
the baseline's. Retrieval is timed directly around search + render (query embedding included);
logging is the rest of the added time, with the part spent inside SQLite writes shown apart.

It also measures how much of each turn's prompt repeats the previous turn's prefix (what a
prompt cache keeps); the target is at least 90% with the bank.

Queries change every turn (the tool answers something different each time, and tasks differ
between runs). The middleware embeds the task and each recent message's gist separately (each
text once, cached) and averages them, so each turn embeds only what is new, in one batch; the
cache hit rate and the number of embedding passes per turn are printed. Targets: at most 8 ms
added per turn (median) with injection and real MiniLM embeddings at 10,000 skills; under 1 ms
with injection off. Each arm's turn is also given as a ratio to the bare turn.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from skillbank import SkillBank  # noqa: E402
from skillbank.adapters.langchain import SkillBankMiddleware  # noqa: E402
from skillbank.adapters.testing import ScriptedChatModel, tool_call  # noqa: E402
from skillbank.models import GENERAL_TAG  # noqa: E402

DOMAINS = ["car", "home", "retail", "travel", "banking", "calendar", "email", "support", "weather",
           "music", "fitness", "recipes", "shipping", "insurance", "hr", "it-helpdesk", "billing",
           "real-estate", "pharmacy", "education"]
ACTIONS = ["book", "cancel", "refund", "check", "update", "schedule", "reset", "transfer", "open",
           "close", "report", "verify", "compare", "escalate", "summarise", "track", "renew", "lock"]
OBJECTS = ["order", "window", "account", "appointment", "password", "ticket", "flight", "invoice",
           "thermostat", "subscription", "parcel", "policy", "playlist", "reservation", "claim",
           "prescription", "meeting", "payment", "door", "battery"]
KINDS = ["procedure", "guard", "policy", "pitfall"]
CONDITIONS = ["when the tool returns an error", "before calling any write tool", "if a field is unknown",
              "when the user is in a hurry", "if the amount is above the limit", "when two requests conflict",
              "if the item is out of stock", "before confirming to the user", "when the budget is tight",
              "if the tool is missing"]


def synthetic_skills(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    combos = list(itertools.product(DOMAINS, ACTIONS, OBJECTS))
    rng.shuffle(combos)
    out = []
    for i, (domain, action, obj) in enumerate(combos[:n]):
        cond = rng.choice(CONDITIONS)
        steps = rng.sample(["look it up first", "confirm the identifiers", "check eligibility",
                            "read the current state", "ask for the missing value", "retry once",
                            "name the blocker", "summarise what was done", "stop after one attempt"], 3)
        out.append({
            "name": f"{domain}-{action}-{obj}-{i}",
            "description": f"{action.capitalize()} a {obj} in {domain.replace('-', ' ')} tasks, {cond}",
            "body": f"To {action} the {obj}: {steps[0]}, then {steps[1]}, then {steps[2]}. "
                    f"Applies {cond}.",
            "kind": KINDS[i % len(KINDS)],
            "tools": [f"{action}_{obj}".replace("-", "_")],
            "tags": [domain],
        })
    return out


def task_texts(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [f"please {rng.choice(ACTIONS)} my {rng.choice(OBJECTS)} for the {rng.choice(DOMAINS)} "
            f"request number {rng.randint(100, 999)}" for _ in range(n)]


class Clock:
    """Timestamps of model calls and the prompts they got, per run (the scripted model stamps
    each call)."""

    def __init__(self) -> None:
        self.stamps: list[float] = []
        self.prompts: list[str] = []

    def stamp(self, messages: list[Any]) -> None:
        self.stamps.append(time.perf_counter())
        self.prompts.append(prompt_text(messages))


def prompt_text(messages: list[Any]) -> str:
    """The prompt as a provider or a chat template would lay it out: every message in order."""
    return "\n".join(f"<{m.type}>{m.text}{json.dumps(getattr(m, 'tool_calls', None) or [])}" for m in messages)


def prefix_reuse(prompts: list[str]) -> tuple[int, int]:
    """(characters of turns 2+ that repeat the previous turn's prompt prefix, all their characters).

    A prompt cache (OpenAI's and Anthropic's prompt caching, llama.cpp's KV cache) reuses the
    longest prefix a prompt shares with the previous one; the rest is processed again.
    Characters stand in for tokens (both grow with the text alike).
    """
    reused = total = 0
    for before, after in zip(prompts, prompts[1:]):
        reused += len(os.path.commonprefix([before, after]))
        total += len(after)
    return reused, total


def make_agent(turns_per_run: int, middleware: list[Any], clock: Clock) -> Any:
    facts = itertools.count()

    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        k = next(facts)
        return (f"record {k}: {OBJECTS[k % len(OBJECTS)]} in {DOMAINS[(k * 7) % len(DOMAINS)]} is "
                f"{ACTIONS[(k * 3) % len(ACTIONS)]}-pending, field {k % 13} unknown")

    def respond(messages: list[Any]) -> Any:
        clock.stamp(messages)
        done = sum(1 for m in messages if m.type == "tool")
        if done < turns_per_run - 1:
            return tool_call("lookup", query=f"step {done} of {messages[-1].content[:40] if done else 'task'}")
        return "All steps done."

    model = ScriptedChatModel([respond], usage={"input_tokens": 50, "output_tokens": 10})
    return create_agent(model, [lookup], system_prompt="You are a helpful assistant. Be brief.",
                        middleware=middleware)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def compare_engines(queries: int = 300, seed: int = 5) -> dict[str, Any]:
    """One query embedding (a single text of 20-60 tokens) on each MiniLM engine: numpy, ONNX
    Runtime on 1 and 2 threads, sentence-transformers (torch). Interleaved query by query; wall
    and CPU time (CPU is the cost itself, wall also counts waiting for a busy machine)."""
    import numpy as np

    from skillbank.embed import MiniLMEmbedder
    from skillbank._engines.minilm import NumpyMiniLM
    from skillbank._engines.minilm_onnx import OnnxMiniLM

    model_dir = MiniLMEmbedder().model_ref
    engines: dict[str, Any] = {"numpy (1 BLAS thread)": NumpyMiniLM(model_dir)}
    for threads in (1, 2):
        engines[f"onnx ({threads} thread{'s' if threads > 1 else ''})"] = OnnxMiniLM(model_dir, threads=threads)
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(model_dir, device="cpu")
    engines["sentence-transformers"] = type("ST", (), {"encode": staticmethod(
        lambda texts: st.encode(texts, normalize_embeddings=True, show_progress_bar=False))})()
    rng = random.Random(seed)
    words = " ".join(task_texts(50) + synthetic_skills(50)[0]["body"].split()).split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(16, 45))) for _ in range(queries)]
    tokens = [len(engines["numpy (1 BLAS thread)"].tokenizer.encode(t).ids) for t in texts]
    reference = engines["sentence-transformers"].encode(texts[:20])
    out: dict[str, Any] = {"queries": queries, "tokens_min": min(tokens), "tokens_max": max(tokens),
                           "tokens_median": statistics.median(tokens)}
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in engines}
    for name, engine in engines.items():
        engine.encode(texts[:5])  # warm
        got = np.asarray(engine.encode(texts[:20]))
        got /= np.linalg.norm(got, axis=1, keepdims=True)
        out.setdefault("min_cosine_to_st", {})[name] = round(float((got * reference).sum(1).min()), 6)
    with _one_blas_thread():
        for text in texts:
            for name, engine in engines.items():
                w0, c0 = time.perf_counter(), time.thread_time()
                engine.encode([text])
                c1, w1 = time.thread_time(), time.perf_counter()
                times[name][0].append((w1 - w0) * 1000)
                times[name][1].append((c1 - c0) * 1000)
    for name, (wall, cpu) in times.items():
        out[name] = {"wall_p50_ms": round(statistics.median(wall), 2), "wall_p95_ms": round(pct(wall, 0.95), 2),
                     "cpu_p50_ms": round(statistics.median(cpu), 2)}
    with contextlib.suppress(OSError):
        out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _one_blas_thread() -> Any:
    # As the numpy engine runs a query (and torch's BLAS would otherwise wake every core).
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def print_engines(report: dict[str, Any]) -> None:
    print(f"\none query embedding, {report['queries']} queries of {report['tokens_min']}-{report['tokens_max']} "
          f"tokens (median {report['tokens_median']}); load average {report.get('load_average')}")
    print(f"{'engine':<24} {'wall p50 ms':>12} {'wall p95 ms':>12} {'cpu p50 ms':>11} {'min cos vs ST':>14}")
    for name, cos in report["min_cosine_to_st"].items():
        r = report[name]
        print(f"{name:<24} {r['wall_p50_ms']:>12.2f} {r['wall_p95_ms']:>12.2f} {r['cpu_p50_ms']:>11.2f} {cos:>14.6f}")
    print("(cpu: this thread's CPU time; ONNX Runtime's second thread works outside it, so its "
          "2-thread cpu figure counts the calling thread only)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Per-turn overhead of SkillBankMiddleware.")
    parser.add_argument("--turns", type=int, default=1000, help="model turns per arm (default 1000)")
    parser.add_argument("--skills", type=int, default=1000, help="skills in the bank (default 1000)")
    parser.add_argument("--embedder", default="minilm", help="minilm (default) or hash")
    parser.add_argument("--turns-per-run", type=int, default=10, help="model turns per agent run (default 10)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per arm first (default 3)")
    parser.add_argument("--general", type=int, default=5,
                        help="skills tagged general, injected on every turn as an evolved bank's "
                             "general lessons are (default 5, the injector's general_k)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes for a smoke test")
    parser.add_argument("--engines", action="store_true",
                        help="only compare the MiniLM engines on one query (numpy, ONNX 1/2 threads, "
                             "sentence-transformers)")
    parser.add_argument("--json", action="store_true", help="also print the report as one JSON line")
    parser.add_argument("--dir", help="bank folder to use and keep (default: a temporary one); "
                                      "reusing one skips re-embedding the skills")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.skills, args.turns_per_run, args.warmup = 40, 60, 5, 1
    if args.engines:
        engines = compare_engines(queries=30 if args.quick else 300)
        print_engines(engines)
        if args.json:
            print(json.dumps(engines))
        return 0

    tmp = tempfile.TemporaryDirectory()
    bank_dir = Path(args.dir) if args.dir else Path(tmp.name) / "bank"
    from skillbank.embed import MiniLMEmbedder

    minilm = args.embedder == "minilm"
    bank = SkillBank.open(bank_dir, embedder=MiniLMEmbedder() if minilm else args.embedder)
    t0 = time.perf_counter()
    existing = {s.name for s in bank.list_skills()}  # a reused --dir keeps its skills
    with bank.store.transaction():
        for i, spec in enumerate(synthetic_skills(args.skills)):
            # Skills this agent learned: their toolset is its own (the injector keeps skills
            # learned with other tools away from it).
            spec = {**spec, "toolset": ["lookup"]}
            if i < args.general:
                spec = {**spec, "tags": [*spec["tags"], GENERAL_TAG]}
            if spec["name"] not in existing:
                bank.add_skill(**spec)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    bank.sync_index()  # embed and index every skill before anything is timed
    indexed = time.perf_counter() - t0
    print(f"bank: {args.skills} skills added in {built:.1f}s, indexed ({bank.embedder.name}) in {indexed:.1f}s",
          file=sys.stderr)

    engine = bank.embedder.engine_name if minilm else None
    # The old query embedding beside the new: a second handle on the same bank (same skills, same
    # vectors: the engines share the embedder name) whose MiniLM runs on numpy.
    old_bank = SkillBank.open(bank_dir, embedder=MiniLMEmbedder(engine="numpy")) if minilm and engine != "numpy" else None
    if old_bank is not None:
        old_bank.sync_index()
    index_mode = getattr(bank.index, "mode", type(bank.index).__name__)

    runs = max(1, args.turns // args.turns_per_run)
    tasks = task_texts(runs + args.warmup)
    arms: dict[str, dict[str, Any]] = {}
    plan: list[tuple[str, Any, Any]] = [("baseline", None, None), ("logging", bank, {"inject": False})]
    if old_bank is not None:
        plan.append(("injection-numpy", old_bank, {}))
    plan.append(("injection", bank, {}))
    for name, arm_bank, options in plan:
        clock = Clock()
        mw = [SkillBankMiddleware(arm_bank, **options)] if options is not None else []
        arms[name] = {"agent": make_agent(args.turns_per_run, mw, clock), "clock": clock, "mw": mw,
                      "turns": [], "retrieval": [], "embedding": [], "cpu": [], "reuse": [0, 0]}
        inj = arms[name]
        if mw and mw[0].inject:
            original = mw[0].prompt_middleware.injector.inject

            def timed(messages: Any, task: Any = None, _orig: Any = original, _arm: Any = inj,
                      **options: Any) -> Any:
                result = _orig(messages, task, **options)
                _arm["retrieval"].append(result.seconds)
                _arm["embedding"].append(result.embed_seconds)
                return result

            mw[0].prompt_middleware.injector.inject = timed


    def one_run(arm: dict[str, Any], task: str, timed: bool) -> None:
        clock = arm["clock"]
        clock.stamps, clock.prompts = [], []
        cpu0 = time.process_time()
        start = time.perf_counter()
        arm["agent"].invoke({"messages": [("user", task)]})
        end = time.perf_counter()
        cpu = time.process_time() - cpu0
        if timed:
            # CPU time is the cost itself; wall time also counts waiting for a busy CPU.
            arm["cpu"].append(cpu * 1000 / max(1, len(clock.stamps)))
            marks = [start, *clock.stamps[1:], end]
            arm["turns"].extend((b - a) * 1000 for a, b in zip(marks, marks[1:]))
            reused, total = prefix_reuse(clock.prompts)
            arm["reuse"][0] += reused
            arm["reuse"][1] += total

    for i in range(args.warmup):
        for arm in arms.values():
            one_run(arm, tasks[i], timed=False)
    for arm in arms.values():
        arm["retrieval"].clear()
        arm["embedding"].clear()
        for m in arm["mw"]:
            m.prompt_middleware.retrieval_seconds = 0.0
    inj_injector = arms["injection"]["mw"][0].prompt_middleware.injector
    cache_before = (inj_injector.cache_hits, inj_injector.cache_misses, inj_injector.embed_batches)
    write_before = {name: sum(m.recording_middleware.logging_seconds for m in arm["mw"]) for name, arm in arms.items()}

    t_all = time.perf_counter()
    step = max(1, runs // 10)
    for i in range(runs):
        for arm in arms.values():
            one_run(arm, tasks[args.warmup + i], timed=True)
        if (i + 1) % step == 0:
            print(f"  {i + 1}/{runs} runs per arm ({time.perf_counter() - t_all:.0f}s)", file=sys.stderr)
    wall = time.perf_counter() - t_all

    report: dict[str, Any] = {"turns": runs * args.turns_per_run, "skills": args.skills,
                              "embedder": bank.embedder.name, "engine": engine, "index": index_mode,
                              "turns_per_run": args.turns_per_run,
                              "runs_per_arm": runs, "wall_seconds": round(wall, 2)}
    for name, arm in arms.items():
        turns = arm["turns"]
        writes = (sum(m.recording_middleware.logging_seconds for m in arm["mw"]) - write_before[name]) * 1000 / max(1, len(turns))
        report[name] = {"median_ms": round(statistics.median(turns), 3), "p95_ms": round(pct(turns, 0.95), 3),
                        "mean_ms": round(statistics.fmean(turns), 3), "writes_ms_per_turn": round(writes, 3),
                        "cpu_ms_per_turn": round(statistics.median(arm["cpu"]), 3),
                        "prefix_reuse": round(arm["reuse"][0] / arm["reuse"][1], 4) if arm["reuse"][1] else None}
        if arm["retrieval"]:
            r = [s * 1000 for s in arm["retrieval"]]
            report[name]["retrieval_median_ms"] = round(statistics.median(r), 3)
            report[name]["retrieval_p95_ms"] = round(pct(r, 0.95), 3)
            e = [s * 1000 for s in arm["embedding"]]
            report[name]["embedding_median_ms"] = round(statistics.median(e), 3)
    base = report["baseline"]
    added_log = report["logging"]["median_ms"] - base["median_ms"]
    added_inj = report["injection"]["median_ms"] - base["median_ms"]
    retrieval = report["injection"].get("retrieval_median_ms", 0.0)
    for name in arms:
        report[name]["ratio_to_bare"] = round(report[name]["median_ms"] / base["median_ms"], 2)
        if name != "baseline":
            report[name]["added_median_ms"] = round(report[name]["median_ms"] - base["median_ms"], 3)
    report["added"] = {
        "logging_only_median_ms": round(added_log, 3),
        "logging_only_p95_ms": round(report["logging"]["p95_ms"] - base["p95_ms"], 3),
        "injection_median_ms": round(added_inj, 3),
        "injection_p95_ms": round(report["injection"]["p95_ms"] - base["p95_ms"], 3),
        "retrieval_ms": round(retrieval, 3),
        "logging_ms": round(added_inj - retrieval, 3),
        "sqlite_writes_ms": report["injection"]["writes_ms_per_turn"],
        "logging_only_cpu_ms": round(report["logging"]["cpu_ms_per_turn"] - base["cpu_ms_per_turn"], 3),
        "injection_cpu_ms": round(report["injection"]["cpu_ms_per_turn"] - base["cpu_ms_per_turn"], 3),
    }
    report["cpus"] = os.cpu_count()
    with contextlib.suppress(OSError):  # getloadavg is not available everywhere
        report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    injector = arms["injection"]["mw"][0].prompt_middleware.injector
    hits, misses = injector.cache_hits - cache_before[0], injector.cache_misses - cache_before[1]
    batches = injector.embed_batches - cache_before[2]
    report["query_cache"] = {"texts": hits + misses, "hits": hits,
                             "hit_rate": round(hits / (hits + misses), 3) if hits + misses else None,
                             "embed_batches": batches,
                             "embed_batches_per_turn": round(batches / max(1, len(arms["injection"]["turns"])), 3)}
    report["targets"] = {"injection_at_most_8ms": added_inj <= 8.0, "logging_only_under_1ms": added_log < 1.0,
                         "prefix_reuse_at_least_90pct": (report["injection"]["prefix_reuse"] or 0) >= 0.9}

    a = report["added"]
    print(f"\n{report['turns']} model turns per arm ({runs} runs x {args.turns_per_run} turns), "
          f"{args.skills} skills ({args.general} general), embedder {report['embedder']}"
          + (f" ({engine} engine)" if engine else "") + f", index {index_mode}, {wall:.1f}s total")
    if "load_average" in report:
        print(f"machine: {report['cpus']} CPUs, load average {report['load_average'][0]} at the end "
              f"(other processes inflate wall times; CPU times are the cost itself)")
    print(f"{'arm':<16} {'median ms/turn':>15} {'x bare':>7} {'added':>7} {'p95 ms/turn':>12} {'mean':>8} "
          f"{'cpu ms/turn':>12} {'db writes':>10} {'query embed':>12}")
    for name in arms:
        r = report[name]
        embed = f"{r['embedding_median_ms']:.2f}" if "embedding_median_ms" in r else "-"
        print(f"{name:<16} {r['median_ms']:>15.3f} {r['ratio_to_bare']:>7.2f} {r.get('added_median_ms', 0.0):>7.2f} "
              f"{r['p95_ms']:>12.3f} {r['mean_ms']:>8.3f} {r['cpu_ms_per_turn']:>12.3f} "
              f"{r['writes_ms_per_turn']:>10.3f} {embed:>12}")
    if "injection-numpy" in report:
        print(f"(injection-numpy: the same bank with the query embedded on the numpy engine, as before "
              f"ONNX Runtime: {report['injection-numpy']['added_median_ms']:.2f} ms added)")
    print(f"\nadded per turn, injection off : {a['logging_only_median_ms']:.2f} ms median "
          f"({a['logging_only_p95_ms']:.2f} ms p95)  target < 1 ms: "
          f"{'MET' if report['targets']['logging_only_under_1ms'] else 'NOT MET'}")
    print(f"added per turn, injection on  : {a['injection_median_ms']:.2f} ms median "
          f"({a['injection_p95_ms']:.2f} ms p95)  target <= 8 ms: "
          f"{'MET' if report['targets']['injection_at_most_8ms'] else 'NOT MET'}")
    print(f"  of which retrieval (embed + search + render): {a['retrieval_ms']:.2f} ms median "
          f"(p95 {report['injection'].get('retrieval_p95_ms', 0):.2f} ms; query embedding "
          f"{report['injection'].get('embedding_median_ms', 0):.2f} ms median)")
    print(f"  of which logging (hooks + recorder)         : {a['logging_ms']:.2f} ms "
          f"(SQLite writes alone {a['sqlite_writes_ms']:.2f} ms)")
    print(f"added CPU per turn (median of runs): injection off {a['logging_only_cpu_ms']:.2f} ms, "
          f"injection on {a['injection_cpu_ms']:.2f} ms")
    reuse = {name: report[name]["prefix_reuse"] or 0.0 for name in ("baseline", "injection")}
    print(f"prompt prefix reused on turns 2+ (what a prompt cache keeps): without the bank "
          f"{reuse['baseline']:.1%}, with it {reuse['injection']:.1%}  target >= 90%: "
          f"{'MET' if report['targets']['prefix_reuse_at_least_90pct'] else 'NOT MET'}")
    q = report["query_cache"]
    print(f"query texts: {q['texts']}, cache hits {q['hits']} ({(q['hit_rate'] or 0):.1%}); "
          f"{q['embed_batches']} embedding passes ({q['embed_batches_per_turn']:.2f} per turn)")
    if args.json:
        print(json.dumps(report))
    bank.close()
    if old_bank is not None:
        old_bank.close()
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
