"""Bank growth: active skills and rendered tokens over many evolution rounds, with and without the bank budget.

    python benchmarks/bench_growth.py                  # 20 rounds, MiniLM
    python benchmarks/bench_growth.py --rounds 10 --embedder hash
    python benchmarks/bench_growth.py --quick          # smoke run (3 rounds, tiny, hash embedder)

Workload: the bundled demo environments (``skillbank_harness.envs``: car, retail, calendar), seeded
tasks split by template; only the evolution-set (``train``) tasks are used. Two arms, each on its
own fresh bank:

- ``budget on``: the bank budget at its defaults (``EvolutionConfig.max_active`` active skills,
  ``max_rendered_tokens`` rendered tokens), or the caps given with ``--max-active`` /
  ``--max-tokens``;
- ``budget off``: both caps set to 10**9.

Each round: every train task runs once with the bank (arm ``with``, simulated policy, skills
injected by ``SkillBankMiddleware``), then one rule-based evolution round promotes every
lint-clean candidate (``promote_policy="all"``: no validation gate, so growth is stressed).
Recorded after the round: active skills, the total rendered tokens of all active skills
(``approx_tokens(render_one(skill))`` summed, the quantity the budget caps), and from that
round's trajectories the mean tokens injected per model turn (the rendered ``<skills>`` block of
the skill versions each turn's injections name; turns without injections count as 0) and the
pass rate. The injected block is also capped per turn by the middleware's own ``token_budget``
(1,200 tokens by default), independently of the bank budget.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

OFF = 10**9


def injected_per_turn(bank: Any, trajectory_ids: list[str], cache: dict) -> tuple[float, int]:
    """Mean rendered tokens injected per model turn over the trajectories, and the max of one turn."""
    from skillbank.retrieval import approx_tokens, render

    total = turns = peak = 0
    for tid in trajectory_ids:
        traj = bank.trajectories.get(tid)
        turns += traj.model_turns
        by_step: dict[int, list] = {}
        for inj in sorted(traj.injections, key=lambda i: (i.step, i.rank)):
            key = (inj.skill_id, inj.version)
            if key not in cache:
                v = bank.version(inj.skill_id, inj.version)
                cache[key] = SimpleNamespace(name=v.content.name, kind=v.content.kind, version=v.version,
                                             description=v.content.description, body=v.content.body)
            by_step.setdefault(inj.step, []).append(cache[key])
        for skills in by_step.values():
            tokens = approx_tokens(render(skills))
            total += tokens
            peak = max(peak, tokens)
    return (total / turns if turns else 0.0), peak


def run_arm(name: str, caps: dict[str, int], train: list, rounds: int, embedder: Any, root: Path,
            seed: int, log: Any) -> list[dict[str, Any]]:
    from skillbank.bank import SkillBank
    from skillbank_harness.envs.measure import ARM_WITH, measure_env
    from skillbank.evolution import evolve
    from skillbank.evolution._budget import rendered_tokens

    path = root / name.replace(" ", "-")
    shutil.rmtree(path, ignore_errors=True)
    rows: list[dict[str, Any]] = []
    cache: dict = {}
    with SkillBank.open(path, embedder=embedder) as bank:
        for r in range(1, rounds + 1):
            t0 = time.perf_counter()
            run = measure_env(train, trials=1, bank=bank, k=5, arms=(ARM_WITH,),
                              run_id=f"growth-{name.replace(' ', '-')}-r{r}", concurrency=2,
                              progress=False, seed=seed + r)
            ids = [rec.trajectory_id for rec in run.records if rec.trajectory_id]
            per_turn, peak = injected_per_turn(bank, ids, cache)
            success = sum(rec.success for rec in run.records) / max(1, len(run.records))
            report = evolve(bank, promote_policy="all", **caps)
            active = bank.list_skills(status="active")
            retired = [c for c in report.changes if c.status == "retired"]
            by_budget = sum(1 for c in retired if "bank budget" in (c.reason or ""))
            row = {"round": r, "arm": name, "active": len(active), "bank_tokens": rendered_tokens(active),
                   "per_turn": per_turn, "peak_turn": peak, "success": success, "retired": len(retired),
                   "budget_retired": by_budget,
                   "seconds": time.perf_counter() - t0}
            rows.append(row)
            log(f"  {name} round {r}: {row['active']} active, {row['bank_tokens']:,} bank tokens, "
                f"{per_turn:.0f} injected tokens/turn, success {success:.0%}, {len(retired)} retired "
                f"({by_budget} by the budget) "
                f"({row['seconds']:.1f}s)")
    return rows


def main(argv: list[str] | None = None) -> int:
    from skillbank.evolution.config import EvolutionConfig

    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-template", type=int, default=1, help="task instances per template (and budget variant)")
    parser.add_argument("--max-tasks", type=int, default=None,
                        help="cap on train tasks run per round (round-robin over templates)")
    parser.add_argument("--embedder", default="minilm", help="bank embedder: minilm (default) or hash")
    parser.add_argument("--max-active", type=int, default=None, help="budget-on arm cap (default: EvolutionConfig)")
    parser.add_argument("--max-tokens", type=int, default=None, help="budget-on arm cap (default: EvolutionConfig)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.per_template, args.embedder = 3, 1, "hash"
        args.max_tasks = args.max_tasks or 6

    from skillbank_harness import envs
    from skillbank.embed import resolve_embedder

    defaults = EvolutionConfig()
    on_caps = {"max_active": args.max_active if args.max_active is not None else defaults.max_active,
               "max_rendered_tokens": args.max_tokens if args.max_tokens is not None else defaults.max_rendered_tokens}
    off_caps = {"max_active": OFF, "max_rendered_tokens": OFF}

    tasks = envs.generate_tasks(per_template=args.per_template, seed=args.seed)
    train, _heldout = envs.split_tasks(tasks, by="template")
    all_train = len(train)
    train = envs.take_spread(train, args.max_tasks)
    embedder = resolve_embedder(args.embedder)
    embedder.embed(["warm up the embedding model"])
    root = common.OUT_DIR / "growth"
    root.mkdir(parents=True, exist_ok=True)

    print(f"Bank growth: {args.rounds} rounds, {len(train)} train tasks per round"
          + (f" (capped from {all_train} with --max-tasks)" if len(train) < all_train else "")
          + f", {args.embedder} embedder, promote_policy='all'. Simulated policy: the numbers show"
          " the machinery, not a real model.")
    print(f"budget on: max_active={on_caps['max_active']}, max_rendered_tokens={on_caps['max_rendered_tokens']:,}; "
          f"budget off: both {OFF:,}")
    t0 = time.perf_counter()
    results = {"budget on": run_arm("budget on", on_caps, train, args.rounds, embedder, root, args.seed, print),
               "budget off": run_arm("budget off", off_caps, train, args.rounds, embedder, root, args.seed, print)}
    wall = time.perf_counter() - t0

    headers = ["round", "arm", "active skills", "bank tokens", "injected tokens/turn", "max tokens/turn",
               "success", "retired (by budget)"]
    rows = []
    for r in range(args.rounds):
        for arm in ("budget on", "budget off"):
            x = results[arm][r]
            rows.append([x["round"], arm, x["active"], f"{x['bank_tokens']:,}", f"{x['per_turn']:.0f}",
                         x["peak_turn"], f"{x['success']:.0%}", f"{x['retired']} ({x['budget_retired']})"])
    common.print_table(f"Bank growth over {args.rounds} evolution rounds ({args.embedder} embedder)", headers, rows)

    on, off = results["budget on"], results["budget off"]
    violations = [x["round"] for x in on if x["active"] > on_caps["max_active"]
                  or x["bank_tokens"] > on_caps["max_rendered_tokens"]]
    binding = any(x["budget_retired"] for x in on) or any(
        x["active"] > on_caps["max_active"] or x["bank_tokens"] > on_caps["max_rendered_tokens"] for x in off)
    half = max(1, args.rounds // 2)
    off_second_half = off[-1]["active"] - off[half - 1]["active"] if args.rounds > 1 else 0
    verdict = (
        f"Verdict: {'BOUNDED' if not violations else 'NOT BOUNDED'}: the budget-on arm "
        + ("never exceeded its caps" if not violations else f"exceeded its caps in round(s) {violations}")
        + f" (max {max(x['active'] for x in on)} active skills of {on_caps['max_active']}, "
        f"max {max(x['bank_tokens'] for x in on):,} bank tokens of {on_caps['max_rendered_tokens']:,}); "
        + (f"the caps bound ({sum(x['budget_retired'] for x in on)} skill(s) retired by the budget)" if binding
           else "the caps never bound (the bank stayed below them; other retirements are not the budget's, e.g. the harmful-skill rule)")
        + f". Budget-off arm: {off[0]['active']} -> {off[-1]['active']} active skills, "
        f"{off[0]['bank_tokens']:,} -> {off[-1]['bank_tokens']:,} bank tokens over {args.rounds} rounds "
        f"({off_second_half:+d} active skills in rounds {half + 1}-{args.rounds}); injected tokens/turn "
        f"{off[0]['per_turn']:.0f} -> {off[-1]['per_turn']:.0f} (per-turn max "
        f"{max(x['peak_turn'] for x in off)}, capped by the middleware's token_budget). Wall time {wall:.0f}s."
    )
    print(verdict)

    if not args.quick and not args.no_write:
        cmd = f"python benchmarks/bench_growth.py --rounds {args.rounds} --per-template {args.per_template} " \
              f"--embedder {args.embedder}" + (f" --max-tasks {args.max_tasks}" if args.max_tasks else "") \
              + (f" --max-active {args.max_active}" if args.max_active is not None else "") \
              + (f" --max-tokens {args.max_tokens}" if args.max_tokens is not None else "")
        body = (common.machine_markdown() + "\n\n"
                + f"Command: `{cmd}`. {len(train)} train tasks of the demo environments per round, one "
                "trial each with the bank (simulated policy), then one rule-based evolution round with "
                "`promote_policy=\"all\"`. Budget on: "
                f"max_active={on_caps['max_active']}, max_rendered_tokens={on_caps['max_rendered_tokens']:,}; "
                f"budget off: both 10**9. Bank tokens = rendered tokens of all active skills; injected "
                "tokens/turn = mean rendered `<skills>` block per model turn of that round's runs (0 when "
                "nothing was injected).\n\n"
                + common.markdown_table(headers, rows) + "\n\n" + verdict)
        common.update_results("Bank growth", body)
    return 0 if not violations else 1


if __name__ == "__main__":
    raise SystemExit(main())
