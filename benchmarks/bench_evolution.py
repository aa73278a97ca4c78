"""Evolution round cost: rule-based wall time, and the LLM distiller's model calls.

    python benchmarks/bench_evolution.py                     # 100 and 1,000 labelled trajectories
    python benchmarks/bench_evolution.py --sizes 100 1000 10000 100000
    python benchmarks/bench_evolution.py --quick             # smoke run (hash embedder, tiny)

Synthetic but realistic workload (seeded): 24 task families, each a request template with
values (order numbers, names, cities, dates) and phrasing variants, solved by a 2-4 tool method
out of a pool of 30 tools; ~70 % of runs succeed, failures skip a check or call a wrong tool;
~10 % of runs hit a limit (a missing tool, an unknown field, a tool-call budget burnt by
repeated searches); 6 active skills are injected into the runs of 6 families. Every run has a
model turn before each tool call and a final answer.

For each size the same bank is evolved twice, from identical copies:

- the rule-based round (``evolve(bank)``), wall time including loading the trajectories,
  clustering (embedding task templates in batches) and writing the candidates; the embedding
  model is loaded before timing, as in a long-lived process;
- the LLM distiller with a counting fake chat model: calls, against the bound "one call per
  touched skill (with something to learn) plus one per recurring uncovered cluster", and against
  one reflection call per trajectory (per-trajectory reflect-and-curate systems).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

TOOLS = [f"{verb}_{noun}" for verb, noun in [
    ("find", "order"), ("check", "refund_policy"), ("issue", "refund"), ("track", "order"),
    ("get", "carrier_status"), ("search", "flights"), ("book", "flight"), ("get", "weather"),
    ("list", "invoices"), ("send", "invoice"), ("get", "account"), ("update", "address"),
    ("search", "hotels"), ("book", "hotel"), ("cancel", "booking"), ("get", "balance"),
    ("transfer", "funds"), ("verify", "identity"), ("open", "ticket"), ("close", "ticket"),
    ("get", "battery"), ("start", "climate"), ("set", "seat"), ("get", "menu"),
    ("place", "order"), ("search", "docs"), ("summarise", "doc"), ("translate", "text"),
    ("get", "calendar"), ("create", "event")]]
NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Fatima", "Goran", "Hana", "Ivan", "Julia"]
CITIES = ["Paris", "Lagos", "Osaka", "Lima", "Oslo", "Quito", "Accra", "Perth"]
PHRASES = ["", "Please ", "Could you ", "I need you to ", "Quickly "]
TEMPLATES = [
    "refund order {n} for {name}, it arrived damaged",
    "where is my parcel {n}? it was shipped to {city}",
    "book the cheapest flight from {city} to Rome for {name} on day {n}",
    "what's the weather going to be in {city} tomorrow",
    "send invoice {n} to the billing contact of {name}",
    "change the delivery address on account {n} to a street in {city}",
    "find a hotel near the station in {city} for two nights",
    "cancel booking {n}, {name} can no longer travel",
    "how much money is left on account {n}",
    "transfer {n} euros from savings to checking for {name}",
    "open a support ticket: the app crashes when {name} logs in",
    "close ticket {n}, the customer confirmed the fix",
    "is the car battery charged enough to drive to {city}",
    "warm up the car to 21 degrees before {name} leaves",
    "move the driver seat back for {name}",
    "what's on the lunch menu today at the {city} office",
    "order two vegetarian meals for {name} to desk {n}",
    "search the handbook for the parental leave policy",
    "summarise the quarterly report {n} in five bullet points",
    "translate this message for {name} into Japanese",
    "what meetings does {name} have on Thursday",
    "schedule a call with {name} next week about contract {n}",
    "list unpaid invoices older than {n} days",
    "verify the identity of {name} before resetting the password",
]


def families(rng: random.Random) -> list[dict]:
    out = []
    for f in range(24):
        method = rng.sample(TOOLS, rng.randint(2, 4))
        out.append({"id": f, "method": method, "wrong": rng.choice([t for t in TOOLS if t not in method]),
                    "template": TEMPLATES[f]})
    return out


def make_trajectories(n: int, seed: int = 7):
    from skillbank.models import Injection, LimitEvent, Outcome, Step, Trajectory, utcnow

    rng = random.Random(seed)
    fams = families(rng)
    start = utcnow() - timedelta(days=1)
    out = []
    for i in range(n):
        fam = fams[rng.randrange(len(fams))]
        values = {"n": str(rng.randint(1000, 99999)), "name": rng.choice(NAMES), "city": rng.choice(CITIES)}
        task = rng.choice(PHRASES) + fam["template"].format(**values)
        task = task[0].upper() + task[1:]
        success = rng.random() < 0.7
        method = list(fam["method"])
        limits: list = []
        if not success:
            roll = rng.random()
            if roll < 0.12:
                method = [method[0], "open_window"]
                limits = [LimitEvent(type="missing_tool", step=3, detail="open_window is not available",
                                     tool="open_window")]
            elif roll < 0.22:
                limits = [LimitEvent(type="unknown_field", step=1, detail="eta is null", tool=method[0],
                                     data={"field": "eta"})]
            elif roll < 0.32:
                method = ["search_docs"] * 8
                limits = [LimitEvent(type="tool_call_limit", step=16, detail="limit reached",
                                     data={"limit": 8, "used": 8})]
            elif roll < 0.7 and len(method) > 2:
                method = [method[0]] + method[2:]  # skipped a check
            else:
                method = method[:-1] + [fam["wrong"]]
        steps = []
        t0 = start + timedelta(seconds=i)
        for tool in method:
            args = {"id": values["n"], "name": values["name"]}
            k = len(steps)
            steps.append(Step(index=k, kind="model", started_at=t0, input_tokens=900, output_tokens=40,
                              tool_calls=[{"name": tool, "args": args, "id": f"c{k}"}]))
            steps.append(Step(index=k + 1, kind="tool", started_at=t0, tool=tool, args=args,
                              result=json.dumps({"ok": True, "id": values["n"], "detail": "x" * rng.randint(50, 400)})))
        steps.append(Step(index=len(steps), kind="model", started_at=t0, content="Done: " + task,
                          input_tokens=1200, output_tokens=80))
        inj = []
        if fam["id"] < 6:
            inj = [Injection(step=0, skill_id=f"SKILL{fam['id']}", version=1, rank=0, score=0.7)]
        out.append(Trajectory(task=task, task_id=f"bench-{fam['id']}-{i}", model="fake", status="complete",
                              final_answer="Done.", started_at=t0, ended_at=t0 + timedelta(seconds=3),
                              steps=steps, limit_events=limits, injections=inj,
                              outcome=Outcome(success=success, source="verifier")))
    return fams, out


def build_bank(path: Path, n: int, embedder):
    from skillbank.bank import SkillBank

    fams, trajs = make_trajectories(n)
    bank = SkillBank.open(path, embedder=embedder)
    ids = {}
    for fam in fams[:6]:
        s = bank.add_skill(name=f"family-{fam['id']}-method", description=fam["template"].split("{")[0].strip(" ,?") or fam["template"],
                           body="Use the usual tools.", tools=fam["method"][:2])
        ids[f"SKILL{fam['id']}"] = s.id
    with bank.store.transaction():
        for t in trajs:
            t.injections = [i.model_copy(update={"skill_id": ids[i.skill_id]}) for i in t.injections]
            bank.trajectories.save(t)
    bank.close()


def counting_model():
    from skillbank.adapters.testing import ScriptedChatModel

    def respond(messages):
        if "Improve this skill" in messages[1].content:
            return json.dumps({"action": "keep", "reason": "fine"})
        return json.dumps({"create": False, "reason": "benchmark"})

    return ScriptedChatModel([respond])


def run_size(n: int, embedder_spec: str, root: Path) -> dict:
    from skillbank.bank import SkillBank
    from skillbank.embed import resolve_embedder
    from skillbank.evolution import LLMDistiller, evolve

    embedder = resolve_embedder(embedder_spec)
    embedder.embed(["warm up"])
    base = root / f"bank-{n}"
    shutil.rmtree(base, ignore_errors=True)
    t0 = time.perf_counter()
    build_bank(base, n, embedder)
    build_s = time.perf_counter() - t0
    llm_copy = root / f"bank-{n}-llm"
    shutil.rmtree(llm_copy, ignore_errors=True)
    shutil.copytree(base, llm_copy)

    with SkillBank.open(base, embedder=embedder) as bank:
        t0 = time.perf_counter()
        rule = evolve(bank)
        rule_s = time.perf_counter() - t0
    model = counting_model()
    with SkillBank.open(llm_copy, embedder=embedder) as bank:
        t0 = time.perf_counter()
        llm = evolve(bank, distiller=LLMDistiller(model))
        llm_s = time.perf_counter() - t0
    touched = llm.touched_skills
    bound = touched + llm.recurring_clusters
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(llm_copy, ignore_errors=True)
    return {"n": n, "build_s": build_s, "rule_s": rule_s, "rule_changes": len(rule.changes),
            "rule_rejected": len(rule.rejected), "clusters": rule.clusters,
            "recurring": rule.recurring_clusters, "situations": rule.situations, "touched": touched,
            "llm_calls": llm.usage.calls, "bound": bound, "llm_in": llm.usage.input_tokens,
            "llm_out": llm.usage.output_tokens, "llm_s": llm_s, "per_traj": n}


def main(argv: list[str] | None = None) -> int:
    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--embedder", default="minilm", help="embedder for clustering (default: bundled MiniLM)")
    args = parser.parse_args(argv)
    sizes, embedder = (args.sizes, args.embedder) if not args.quick else ([60], "hash")
    root = common.OUT_DIR / "evolution"
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    results = []
    for n in sizes:
        r = run_size(n, embedder, root)
        results.append(r)
        rows.append([f"{r['n']:,}", f"{r['rule_s']:.2f}", r["rule_changes"], f"{r['recurring']}/{r['clusters']}",
                     r["situations"], r["touched"], r["llm_calls"], r["bound"], f"{r['per_traj']:,}",
                     f"{r['llm_in']:,}/{r['llm_out']:,}", f"{r['build_s']:.1f}"])
        assert r["llm_calls"] <= r["bound"], r
    headers = ["labelled runs", "rule round s", "changes", "recurring/clusters", "limit situations",
               "touched skills", "LLM calls", "bound (touched+recurring)", "1 call/trajectory",
               "LLM tokens in/out", "setup s"]
    common.print_table(f"Evolution round ({embedder} embedder)", headers, rows)
    if not args.quick and not args.no_write:
        body = (common.machine_markdown() + "\n\n" + f"Embedder: {embedder}. Command: "
                f"`python benchmarks/bench_evolution.py --sizes {' '.join(map(str, sizes))}`\n\n"
                + common.markdown_table(headers, rows))
        common.update_results("Evolution round", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
