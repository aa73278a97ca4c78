"""What the no-tool scope costs a turn: labelled neighbours read from the bank's recorded runs.

    python benchmarks/bench_no_tool_scope.py              # 200 and 1,000 recorded runs, MiniLM
    python benchmarks/bench_no_tool_scope.py --quick      # smoke run: hash embedder, few runs

A real bank (SQLite file + index folder) holds one no-tool skill, a few tool skills, and N
recorded runs that succeeded (half called a tool, half did not; the scope reads the newest 200).
``SkillInjector.inject`` runs on distinct requests, each a new text, with the agent's tools and
their purposes, in three arms:

- ``without``: the same bank without the no-tool skill (no scope runs: the baseline turn);
- ``scope, first turn``: a new injector per request, so the recorded requests are embedded on
  its first turn (what a process pays once);
- ``scope, later turns``: one injector, so the recorded requests come from its cache and a turn
  pays the store query and one comparison per recorded request.

The store query alone (``SkillBank.solved_requests``) is timed apart.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from langchain_core.messages import HumanMessage  # noqa: E402

from skillbank import SkillBank  # noqa: E402
from skillbank.adapters.injection import SkillInjector  # noqa: E402
from skillbank.lessons import Lesson, LessonKind  # noqa: E402
from skillbank.models import Outcome, Step, Trajectory, utcnow  # noqa: E402

TOOLS = ["get_tide_times", "get_weather"]
PURPOSES = ["get tide times: High and low tide times for a port on a day.",
            "get weather: The weather for a place now."]
PORTS = ["Dover", "Brest", "Oban", "Plymouth", "Cork", "Bergen", "Porto", "Gdansk", "Kiel", "Malmo"]


def recorded(i: int) -> Trajectory:
    """A run that succeeded: a tide request with a call (even i) or small talk without one."""
    port, day = PORTS[i % len(PORTS)], ["Monday", "Friday", "Sunday"][i % 3]
    now = utcnow()
    if i % 2:
        task, steps = f"Thanks a lot for the help with {port}, number {i}!", []
    else:
        task = f"When is high tide in {port} on {day}? (request {i})"
        steps = [Step(index=0, kind="tool", started_at=now, tool="get_tide_times",
                      args={"port": port, "day": day}, result='{"high": "06:12"}')]
    return Trajectory(task=task, status="complete", started_at=now, ended_at=now, steps=steps,
                      final_answer="Done.", outcome=Outcome(success=True, source="verifier"))


def build(folder: Path, runs: int, embedder: str, no_tool: bool) -> SkillBank:
    bank = SkillBank.open(folder, embedder=embedder)
    if no_tool:
        bank.add_skill("tide-thanks-no-tools", 'When the user says something like "lovely, thanks '
                       'for the tide times!" and asks for nothing a tool does.', kind="pitfall",
                       lessons=[Lesson(kind=LessonKind.no_tool)], toolset=["get_tide_times"])
    for tool in TOOLS:
        bank.add_skill(f"use-{tool.replace('_', '-')}", f"How to call {tool}", f"Call `{tool}` with the place the user names.",
                       tools=[tool], toolset=TOOLS)
    with bank.store.transaction():
        for i in range(runs):
            bank.trajectories.save(recorded(i))
    bank.sync_index()
    return bank


def requests(n: int) -> list[str]:
    return [f"Is the tide high at {PORTS[i % len(PORTS)]} around {6 + i % 12}:{i % 60:02d} on day {i}?"
            if i % 2 else f"Cheers, that helped a lot, talk soon ({i})" for i in range(n)]


def turn(injector: SkillInjector, text: str, shown: list[bool] | None = None) -> float:
    """One turn's seconds; ``shown`` gets whether the no-tool skill went in."""
    t0 = time.perf_counter()
    result = injector.inject([HumanMessage(text)], tools=TOOLS, purposes=PURPOSES)
    seconds = time.perf_counter() - t0
    if shown is not None:
        shown.append(any(h.skill.name == "tide-thanks-no-tools" for h in result.hits))
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[200, 1000], help="recorded runs per bank")
    parser.add_argument("--turns", type=int, default=200, help="requests per arm (default 200)")
    parser.add_argument("--quick", action="store_true", help="hash embedder, tiny sizes (smoke run)")
    args = parser.parse_args(argv)
    embedder = "hash" if args.quick else "minilm"
    sizes, turns = ([20], 10) if args.quick else (args.runs, args.turns)
    cold_turns = min(turns, 10 if args.quick else 40)  # each embeds up to 200 recorded requests
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            without = build(Path(tmp) / f"without-{n}", n, embedder, no_tool=False)
            scoped = build(Path(tmp) / f"scoped-{n}", n, embedder, no_tool=True)
            texts = requests(turns + cold_turns + 5)
            warm = SkillInjector(scoped, k=3)
            base = SkillInjector(without, k=3)
            for text in texts[:5]:  # load the model and fill the recorded requests' cache
                turn(warm, text), turn(base, text)
            shown: dict[str, list[bool]] = {"scope, first turn": [], "scope, later turns": []}
            arms = {
                "without (no no-tool skill)": [turn(base, t) for t in texts[5:5 + turns]],
                "scope, first turn": [turn(SkillInjector(scoped, k=3), t, shown["scope, first turn"])
                                      for t in texts[5 + turns:5 + turns + cold_turns]],
                "scope, later turns": [turn(warm, t, shown["scope, later turns"]) for t in texts[5:5 + turns]],
            }
            query = []
            for _ in range(turns):
                t0 = time.perf_counter()
                scoped.solved_requests()
                query.append(time.perf_counter() - t0)
            arms["solved_requests() alone"] = query
            for name, samples in arms.items():
                ms = common.summarize_ms(samples)
                went_in = f"{sum(shown[name])} of {len(shown[name])}" if name in shown else "–"
                rows.append([n, name, len(samples), f"{ms['p50']:.2f}", f"{ms['p95']:.2f}", went_in])
            without.close()
            scoped.close()
    headers = ["recorded runs", "arm", "turns", "p50 ms", "p95 ms", "no-tool skill in (half are small talk)"]
    common.print_table(f"No-tool scope per turn ({embedder} embedder)", headers, rows)
    if not args.quick:  # quick numbers are meaningless: never recorded
        body = (f"Command: `python benchmarks/bench_no_tool_scope.py` ({embedder} embedder, SQLite).\n\n"
                + common.markdown_table(headers, rows))
        common.update_results("No-tool scope: cost per turn", common.machine_markdown() + "\n\n" + body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
