"""skillbank serve: server time per page (routing, bank reads, rendering), target p95 <= 150 ms.

    python benchmarks/bench_serve.py            # 1k and 10k skills, 50 versions, 200 candidates
    python benchmarks/bench_serve.py --quick    # smoke run (tiny sizes; numbers meaningless)
    python benchmarks/bench_serve.py --runs-only  # the runs list at 10,000 runs alone

Pages: the skills list at two bank sizes (page 1 by name, page 1 by success rate, which sorts
every row, and the last page by name, the deepest OFFSET), one skill's page with 50 versions
(history table and the diff of the first and last), the candidates queue with 200
candidates, each a draft edit of an active skill (so each card renders a diff against its
target), the runs list with 10,000 stored runs (page 1, the last page, and filtered by outcome,
by a skill's name and by limit type, each paged and counted in SQL over every run), and rounds and reports: the list with 100 finished rounds (10 versions each, half of
them gated) and 20 stored measurements, one round's page, and one measurement's report (its
trials read back and its tables); its figures are separate requests, drawn once per state of
the run's trials and then served from a cache: timed both ways. The app runs in process under Starlette's TestClient; "server" is the time from the
ASGI call to the last body byte, measured by a wrapper around the app (all the server does,
no socket); "client" adds the TestClient's round trip. The model-free hash embedder is used:
no page embeds anything (only search would). The skills are written before timing; the bench
times reading. No assertion on the figures: the table is the result.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402

TOKEN = "bench-token"
TARGET_MS = 150.0


def fill(bank, n: int) -> None:
    """``n`` active skills, written in one transaction, with usage on every third (so the
    success-rate order has something to sort)."""
    from datetime import datetime, timezone

    made = []
    with bank.store.transaction():
        for i, s in enumerate(common.synthetic_skills(n)):
            made.append(bank.add_skill(f"{s['name']}-{i}"[:64], s["description"], s["body"], tags=s["tags"],
                                       tools=s["tools"]).id)
    with bank.store.transaction() as conn:
        for i, sid in enumerate(made[::3]):
            bank.skills.bump_usage(conn, [sid], datetime.now(timezone.utc), uses=i % 7 + 1,
                                   successes=i % 5, failures=i % 3)


class ServerTimer:
    """ASGI wrapper: the seconds from the call to the response's last body chunk."""

    def __init__(self, app) -> None:
        self.app, self.last = app, float("nan")

    async def __call__(self, scope, receive, send):
        t0 = time.perf_counter()

        async def timed_send(message):
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.last = time.perf_counter() - t0

        await self.app(scope, receive, timed_send)


def client(bank):
    from starlette.testclient import TestClient

    from skillbank._web import create_app

    timer = ServerTimer(create_app(bank, token=TOKEN))
    c = TestClient(timer, base_url="http://127.0.0.1", follow_redirects=False)
    c.cookies.set("skillbank_token", TOKEN)
    return c, timer


def fill_rounds(bank, rounds: int, runs: int) -> None:
    """``rounds`` finished rounds, each with 10 versions by the rule distiller and 5 of them
    promoted or rejected by its gate; and ``runs`` stored measurements (4 tasks x 3 trials, two
    arms), written as `skillbank eval` writes them."""
    from datetime import datetime, timezone

    from skillbank.consistency.measure import measure as run_measure
    from skillbank.consistency.tasks import SimpleTask
    from skillbank.models import SkillStatus

    for r in range(1, rounds + 1):
        with bank.store.transaction():
            made = [bank.add_skill(f"round-{r}-skill-{i}", "Look the order up first.", f"Call get_order.\nStep {i}.",
                                   status=SkillStatus.candidate, author="evolution:rule") for i in range(10)]
        bank.rounds.finish(r, datetime.now(timezone.utc), trajectories=60)
        for i, skill in enumerate(made[:5]):
            if i % 2:
                bank.set_status(skill.id, SkillStatus.active, author="gate", reason="gate: gain +0.250")
            else:
                bank.set_status(skill.id, SkillStatus.retired, author="gate", reason="rejected: gate: gain +0.000")
    tasks = [SimpleTask(id=f"t{i}", type="refund", input=f"order {i}") for i in range(4)]
    for n in range(runs):
        run_measure(lambda arm, b, task: (lambda spec: arm == "with"), tasks, trials=3, bank=bank,
                    run_id=f"run-{n}", progress=False)


def fill_runs(bank, n: int) -> str:
    """``n`` finished runs over ``n`` minutes, each with four steps, one of 20 skills injected,
    a third failed with a verifier's note and every tenth with a limit event; returns the name
    of the skill injected into the most runs' filter case."""
    from datetime import datetime, timedelta, timezone

    from skillbank.models import Injection, LimitEvent, LimitType, Outcome, Step, Trajectory

    skills = [bank.add_skill(f"runs-skill-{i}", "Look the order up first.", "Call get_order.") for i in range(20)]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with bank.store.transaction():
        for i in range(n):
            at = start + timedelta(minutes=i)
            run = Trajectory(task=f"refund order {i}: it arrived damaged", status="complete", started_at=at,
                             final_answer=f"Refunded order {i}.")
            run.steps = [Step(index=0, kind="model", started_at=at, content="I will look the order up.",
                              tool_calls=[{"name": "get_order", "args": {"id": str(i)}, "id": "c1"}]),
                         Step(index=1, kind="tool", started_at=at, tool="get_order", args={"id": str(i)},
                              result=f'{{"order": {i}, "status": "delivered"}}'),
                         Step(index=2, kind="model", started_at=at, content="Refunding.",
                              tool_calls=[{"name": "refund", "args": {"id": str(i)}, "id": "c2"}]),
                         Step(index=3, kind="tool", started_at=at, tool="refund", args={"id": str(i)},
                              result="refund issued")]
            run.injections = [Injection(step=0, skill_id=skills[i % 20].id, version=1, rank=0, score=0.7)]
            if i % 10 == 0:
                run.limit_events = [LimitEvent(type=LimitType.missing_tool, step=1, detail="no refund tool")]
            run.outcome = Outcome(success=i % 3 != 0, source="verifier",
                                  note=None if i % 3 else "expected a policy check before the refund")
            bank.trajectories.save(run)
    return skills[7].name


def measure(bank, path: str, repeat: int, expect: str) -> dict[str, dict[str, float]]:
    c, timer = client(bank)
    r = c.get(path)  # warm: templates compile, caches fill
    if r.status_code != 200 or expect not in r.text:
        raise SystemExit(f"{path}: HTTP {r.status_code}, {expect!r} not in the page: the bench measures nothing")
    server, rtt = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = c.get(path)
        rtt.append(time.perf_counter() - t0)
        server.append(timer.last)
        if r.status_code != 200:
            raise SystemExit(f"{path}: HTTP {r.status_code}")
    return {"server": common.summarize_ms(server), "client": common.summarize_ms(rtt)}


def first_draws(bank, paths: list[str]) -> dict[str, dict[str, float]]:
    """Each of ``paths`` requested once on a fresh app: what nothing cached costs."""
    c, timer = client(bank)
    server, rtt = [], []
    for path in paths:
        t0 = time.perf_counter()
        if c.get(path).status_code != 200:
            raise SystemExit(f"{path}: not served")
        rtt.append(time.perf_counter() - t0)
        server.append(timer.last)
    return {"server": common.summarize_ms(server), "client": common.summarize_ms(rtt)}


def row(label: str, m: dict[str, dict[str, float]]) -> list[str]:
    s, c = m["server"], m["client"]
    return [label, common.fmt(s["p50"], 1), common.fmt(s["p95"], 1), common.fmt(c["p95"], 1),
            "yes" if s["p95"] <= TARGET_MS else "NO"]


def main(argv: list[str] | None = None) -> int:
    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40, help="timed requests per page (after one warm-up)")
    parser.add_argument("--runs-only", action="store_true",
                        help="only the runs list (writes nothing to RESULTS.md: the table would be partial)")
    args = parser.parse_args(argv)
    from skillbank import SkillBank
    from skillbank.models import SkillStatus
    from skillbank._web.runs import RUNS_PER_PAGE
    from skillbank._web.views import PAGE_SIZE

    sizes = [120, 250] if args.quick else [1_000, 10_000]
    versions, candidates = (5, 10) if args.quick else (50, 200)
    repeat = 3 if args.quick else args.repeat
    rows, loads = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in [] if args.runs_only else sizes:
            bank = SkillBank.open(Path(tmp) / f"list-{n}", embedder="hash")
            t0 = time.perf_counter()
            fill(bank, n)
            print(f"filled {n:,} skills in {time.perf_counter() - t0:.1f}s", flush=True)
            last = -(-n // PAGE_SIZE)
            for label, path in [("page 1 by name", "/skills?sort=name&page=1"),
                                ("page 1 by success rate", "/skills?sort=success&page=1"),
                                (f"last page ({last}) by name", f"/skills?sort=name&page={last}")]:
                rows.append(row(f"skills list, {n:,} skills, {label}",
                                measure(bank, path, repeat, f"Page {1 if 'page=1' in path else last} of {last}")))
                loads.append(os.getloadavg()[0])
            bank.close()

        bank = SkillBank.open(Path(tmp) / "runs", embedder="hash")
        t0 = time.perf_counter()
        n_runs_stored = 300 if args.quick else 10_000
        name = fill_runs(bank, n_runs_stored)
        print(f"filled {n_runs_stored:,} runs in {time.perf_counter() - t0:.1f}s", flush=True)
        last_runs = -(-n_runs_stored // RUNS_PER_PAGE)
        for label, path, expect in [
                ("page 1", "/runs", f"Page 1 of {last_runs}"),
                (f"last page ({last_runs})", f"/runs?page={last_runs}", f"Page {last_runs} of {last_runs}"),
                ("failures (a third)", "/runs?outcome=failure", "match"),
                ("one skill's runs, by name (a 20th)", f"/runs?skill={name}", "match"),
                ("a limit type and failures", "/runs?limit=missing_tool&outcome=failure", "match")]:
            rows.append(row(f"runs list, {n_runs_stored:,} runs, {label}", measure(bank, path, repeat, expect)))
            loads.append(os.getloadavg()[0])
        bank.close()

        if args.runs_only:
            return report(rows, loads, repeat, args, argv, write=False)

        bank = SkillBank.open(Path(tmp) / "versions", embedder="hash")
        skill = bank.add_skill("many-versions", "A skill edited often.", "step 0")
        for v in range(2, versions + 1):
            bank.update_skill(skill.id, reason=f"edit {v}", body="\n".join(f"step {i}" for i in range(v)))
        rows.append(row(f"skill page, {versions} versions + diff v1..v{versions}",
                        measure(bank, f"/skills/{skill.id}?a=1&b={versions}", repeat, f"edit {versions}")))
        loads.append(os.getloadavg()[0])
        bank.close()

        bank = SkillBank.open(Path(tmp) / "candidates", embedder="hash")
        with bank.store.transaction():
            for i in range(candidates):
                target = bank.add_skill(f"target-{i}", "Look the order up first.", f"Call get_order.\nStep {i}.")
                cand = bank.add_skill(f"draft-{i}", "Look the order up first.",
                                      f"Call get_order with the id.\nStep {i}.\nThen refund.",
                                      status=SkillStatus.candidate, author="evolution:rule")
                bank.drafts.save_pending(cand.id, {"kind": "edit", "target": target.id, "evidence": [f"tr_{i:016x}"],
                                                   "task_ids": [], "reason": "seen in runs", "author": "evolution:rule",
                                                   "round": 1, "name": target.name, "base_hash": target.content_hash})
        rows.append(row(f"candidates page, {candidates} drafts with diffs",
                        measure(bank, "/candidates", repeat, f"cand-{cand.id}")))
        loads.append(os.getloadavg()[0])
        bank.close()

        bank = SkillBank.open(Path(tmp) / "rounds", embedder="hash")
        n_rounds, n_runs = (10, 3) if args.quick else (100, 20)
        fill_rounds(bank, n_rounds, n_runs)
        middle = n_rounds // 2
        for label, path, expect in [
                (f"rounds and reports list, {n_rounds} rounds, {n_runs} measurements", "/rounds", f"run-{n_runs - 1}"),
                ("one round's page, 10 versions", f"/rounds/{middle}", f"round-{middle}-skill-9"),
                ("one report, 4 tasks x 3 trials x 2 arms", "/reports/run-1", "run-1"),
                ("one report's figure (pass^k), again: from the cache", "/reports/run-1/pass_k.png", "")]:
            rows.append(row(label, measure(bank, path, repeat, expect)))
            loads.append(os.getloadavg()[0])
        rows.append(row(f"one report's figure (pass^k), first draw: each of {n_runs} runs once",
                        first_draws(bank, [f"/reports/run-{i}/pass_k.png" for i in range(n_runs)])))
        bank.close()

    return report(rows, loads, repeat, args, argv, write=not args.no_write and not args.quick)


def report(rows: list[list[str]], loads: list[float], repeat: int, args, argv: list[str] | None, *,
           write: bool) -> int:
    """Print the table (and, with ``write``, replace this benchmark's section of RESULTS.md)."""
    headers = ["page", "server p50 ms", "server p95 ms", "client p95 ms", f"p95 <= {TARGET_MS:.0f} ms"]
    common.print_table(f"skillbank serve: time per page ({repeat} requests each, after a warm-up)", headers, rows)
    load = (f"1-minute load average while measuring: {min(loads):.2f} to {max(loads):.2f} "
            f"on {os.cpu_count()} CPUs")
    print(load)
    if write:
        cmd = "python benchmarks/bench_serve.py " + " ".join(argv if argv is not None else sys.argv[1:])
        common.update_results("Review web app (skillbank serve)", "\n\n".join([
            f"Command: `{cmd.strip()}`", common.machine_markdown(),
            f"{load}. Server time: from the ASGI call to the last body byte, the app in process "
            f"(Starlette's TestClient), {repeat} requests per page after one warm-up; client time adds "
            "the TestClient's round trip. Target: p95 <= 150 ms.",
            common.markdown_table(headers, rows)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
