"""Trajectory logging throughput: one process, then 4 and 8 writer processes on one bank.

    python benchmarks/bench_logging.py              # 2,000 trajectories per configuration
    python benchmarks/bench_logging.py --n 5000
    python benchmarks/bench_logging.py --quick      # smoke run

Each trajectory has 10 steps (5 model turns, 5 tool calls) with realistic text sizes: model
content 200-900 chars with a tool call, tool results 0.5-3 KB of JSON-ish text, token counts,
and 2 skill injections per model turn (so ``finish`` updates those skills' usage rows, as in
real runs). Two write patterns:

- incremental (the LangGraph adapter's pattern): ``start``, then ``append`` one model step +
  one tool step + the turn's injections per turn (5 appends), then ``finish``;
- whole: ``trajectories.save(traj)`` of the finished trajectory in one transaction.

Multi-process runs use ``multiprocessing`` with the spawn start method; every worker opens the
same bank and writes its share with the incremental pattern. Afterwards the parent counts
trajectories and steps (expected == found) and runs ``bank.verify()``.
Database size per 1,000 trajectories is measured after a WAL checkpoint.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import shutil
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

STEPS = 10
N_SKILLS = 50

_WORDS = ("the invoice customer ticket status pending resolved field query page result order "
          "account update error retry token limit budget tool call record owner date region "
          "priority summary total amount currency refund shipment warehouse contact email").split()


def _text(rng: random.Random, lo: int, hi: int) -> str:
    target = rng.randint(lo, hi)
    words: list[str] = []
    size = 0
    while size < target:
        w = rng.choice(_WORDS)
        words.append(w)
        size += len(w) + 1
    return " ".join(words)[:target]


def make_turns(rng: random.Random, skill_ids: list[str]) -> tuple[str, list[tuple[list[Any], list[Any]]]]:
    """A task text and 5 turns of (steps, injections)."""
    from skillbank.models import Injection, Step, utcnow

    task = "Task: " + _text(rng, 80, 300)
    now = utcnow()
    turns = []
    for t in range(STEPS // 2):
        tool = rng.choice(["crm_search", "crm_update", "sql_query", "http_get", "send_email"])
        args = {"query": _text(rng, 20, 80), "limit": rng.randint(5, 100)}
        model = Step(index=2 * t, kind="model", started_at=now + timedelta(seconds=2 * t),
                     latency_ms=rng.uniform(300, 3000), content=_text(rng, 200, 900),
                     tool_calls=[{"name": tool, "args": args, "id": f"call_{rng.getrandbits(40):x}"}],
                     input_messages=2 + 2 * t, input_tokens=rng.randint(800, 6000),
                     output_tokens=rng.randint(40, 400))
        result = '{"results": [' + ", ".join(
            '{"id": %d, "text": "%s"}' % (rng.randint(1, 10**6), _text(rng, 60, 200))
            for _ in range(rng.randint(3, 12))) + "]}"
        call = Step(index=2 * t + 1, kind="tool", started_at=now + timedelta(seconds=2 * t + 1),
                    latency_ms=rng.uniform(20, 800), tool=tool, args=args, result=result[:3000],
                    error=None if rng.random() > 0.1 else "HTTP 429: rate limited")
        inj = [Injection(step=2 * t, skill_id=sid, version=1, rank=r, score=rng.uniform(0.3, 0.9))
               for r, sid in enumerate(rng.sample(skill_ids, 2))]
        turns.append(([model, call], inj))
    return task, turns


def write_incremental(bank: Any, rng: random.Random, skill_ids: list[str], n: int, tag: str) -> int:
    from skillbank.models import Trajectory

    steps = 0
    for _ in range(n):
        task, turns = make_turns(rng, skill_ids)
        traj = Trajectory(task=task, model="gpt-x", labels={"writer": tag})
        bank.trajectories.start(traj)
        for step_list, injections in turns:
            bank.trajectories.append(traj.id, step_list, injections=injections)
            steps += len(step_list)
        bank.trajectories.finish(traj.id, final_answer=_text(rng, 100, 400))
    return steps


def write_whole(bank: Any, rng: random.Random, skill_ids: list[str], n: int, tag: str) -> int:
    from skillbank.models import Trajectory

    steps = 0
    for _ in range(n):
        task, turns = make_turns(rng, skill_ids)
        traj = Trajectory(task=task, model="gpt-x", labels={"writer": tag}, status="complete",
                          final_answer=_text(rng, 100, 400))
        for step_list, injections in turns:
            traj.steps.extend(step_list)
            traj.injections.extend(injections)
        bank.trajectories.save(traj)
        steps += len(traj.steps)
    return steps


def _worker(path: str, n: int, seed: int, skill_ids: list[str], barrier: Any, out: Any) -> None:
    from skillbank import SkillBank

    bank = SkillBank.open(path, embedder="hash")
    rng = random.Random(seed)
    make_turns(rng, skill_ids)  # warm imports
    barrier.wait()
    t0 = time.time()
    steps = write_incremental(bank, rng, skill_ids, n, f"w{seed}")
    out.put((seed, t0, time.time(), steps))
    bank.close()


def parallel_write(ctx: Any, target: str, writers: int, per: int, skill_ids: list[str]) -> tuple[float, list]:
    """``writers`` processes write ``per`` trajectories each into the bank at ``target`` (a folder
    or a connection string), started together; returns the seconds from first start to last
    finish and each worker's ``(seed, start, end, steps)``."""
    barrier, out = ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(target, per, 100 + i, skill_ids, barrier, out))
             for i in range(writers)]
    for p in procs:
        p.start()
    barrier.wait()
    results = [out.get(timeout=3600) for _ in procs]
    for p in procs:
        p.join()
    return max(r[2] for r in results) - min(r[1] for r in results), results


def new_bank(path: Path) -> tuple[Any, list[str]]:
    from skillbank import SkillBank

    if path.exists():
        shutil.rmtree(path)
    bank = SkillBank.open(path, embedder="hash")
    with bank.store.transaction():
        ids = [bank.add_skill(f"skill-{i}", f"When to use skill {i}.", f"Do thing {i}.").id
               for i in range(N_SKILLS)]
    return bank, ids


def db_bytes(bank: Any) -> int:
    bank.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db = bank.path / "bank.db"
    return sum(p.stat().st_size for p in bank.path.glob("bank.db*") if p.is_file()) if db.exists() else 0


def check(bank: Any, expected: int) -> tuple[int, int, str]:
    found = bank.trajectories.count()
    steps = bank.store.query_one("SELECT count(*) AS n FROM steps")["n"]
    report = bank.verify()
    ok = "ok" if report.ok else "; ".join(report.problems)[:120]
    return found, steps, ok


def main(argv: list[str] | None = None) -> int:
    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="trajectories per configuration")
    parser.add_argument("--procs", nargs="+", type=int, default=[4, 8])
    args = parser.parse_args(argv)
    n = 24 if args.quick else args.n
    root = common.OUT_DIR / "logging"
    root.mkdir(parents=True, exist_ok=True)
    headers = ["pattern", "writers", "trajectories", "seconds", "traj/s", "steps/s",
               "expected", "found", "steps found", "verify"]
    rows = []

    # single process: incremental, then whole-trajectory save
    size_per_1000 = {}
    for name, fn in (("incremental (adapter)", write_incremental), ("whole save()", write_whole)):
        bank, ids = new_bank(root / f"single-{fn.__name__}")
        before = db_bytes(bank)
        rng = random.Random(1)
        t0 = time.perf_counter()
        steps = fn(bank, rng, ids, n, "single")
        dt = time.perf_counter() - t0
        size_per_1000[name] = (db_bytes(bank) - before) / n * 1000
        found, steps_found, ok = check(bank, n)
        rows.append([name, 1, n, f"{dt:.2f}", f"{n / dt:.0f}", f"{steps / dt:.0f}", n, found,
                     steps_found, ok])
        bank.close()

    ctx = mp.get_context("spawn")
    for w in args.procs:
        bank, ids = new_bank(root / f"procs-{w}")
        per = max(1, n // w)
        dt, results = parallel_write(ctx, str(bank.path), w, per, ids)
        steps = sum(r[3] for r in results)
        expected = per * w
        found, steps_found, ok = check(bank, expected)
        lost = "" if (found == expected and steps_found == expected * STEPS) else " LOST!"
        rows.append([f"incremental (adapter){lost}", w, expected, f"{dt:.2f}", f"{expected / dt:.0f}",
                     f"{steps / dt:.0f}", expected, found, steps_found, ok])
        bank.close()

    common.print_table("Trajectory logging throughput (10 steps per trajectory)", headers, rows)
    size_rows = [[k, f"{v / 1e6:.2f} MB", f"{v / 1000 / 1024:.1f} KB"] for k, v in size_per_1000.items()]
    common.print_table("Database size", ["pattern", "per 1,000 trajectories", "per trajectory"], size_rows)
    if not args.no_write and not args.quick:
        cmd = "python benchmarks/bench_logging.py " + " ".join(argv if argv is not None else sys.argv[1:])
        common.update_results("Trajectory logging", "\n\n".join([
            f"Command: `{cmd.strip()}`", common.machine_markdown(),
            "10-step trajectories (5 model turns with a tool call, 5 tool results of 0.5-3 KB, "
            "2 skill injections per turn). Multi-process rows: spawn workers on one bank, "
            "incremental pattern; expected/found counted afterwards, `bank.verify()` run.",
            common.markdown_table(headers, rows),
            common.markdown_table(["pattern", "per 1,000 trajectories", "per trajectory"], size_rows),
        ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
