"""Capture on a step-limited agent: steps the adapters cost, and limit-ended runs labelled.

    python benchmarks/bench_capture.py              # 200 runs per configuration
    python benchmarks/bench_capture.py --runs 50

The agent is the real ``create_agent`` (and ``create_react_agent``) over a scripted chat model
that needs ``n`` lookups before it can answer, ``n`` drawn per run from 1-12 with a fixed seed,
under ``recursion_limit=16``: a run that needs 8 or more lookups ends in
``GraphRecursionError``, the step budget most production agents hit. For each way in, the same
runs go without and with the adapter; the table counts the runs that finished, the lookups made
before the limit, and, for the runs that ended at the limit, how many the bank labelled (with a
verifier, and without one). The embedder is the hashing one: capture does not depend on it.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

LIMIT = 16
SECTION = "Capture on a step-limited agent"


def _script(need: int) -> Any:
    """A model that looks up until it has ``need`` results, then answers."""
    from langchain_core.messages import AIMessage

    from skillbank.adapters.testing import tool_call

    def respond(messages: list[Any]) -> AIMessage:
        done = sum(1 for m in messages if m.type == "tool")
        return tool_call("lookup", {"page": done + 1}) if done < need else AIMessage(content="done")

    return respond


def _lookup_tool(calls: list[int]) -> Any:
    from langchain_core.tools import tool

    @tool
    def lookup(page: int) -> str:
        """Read one page of the record."""
        calls.append(page)
        return f"page {page}: 40 more rows"

    return lookup


def _verifier(state: dict[str, Any]) -> bool:
    last = state["messages"][-1]
    return last.type == "ai" and not last.tool_calls and "done" in last.text


def _run(build: Callable[[Any, Any], Any], need: int, config: dict[str, Any]) -> tuple[bool, int]:
    """(answered, lookups) of one run. ``create_react_agent`` at an even limit does not raise: it
    answers "Sorry, need more steps ..." instead, which is a run that ended at the limit too."""
    from langgraph.errors import GraphRecursionError

    from skillbank.adapters.testing import ScriptedChatModel

    calls: list[int] = []
    agent = build(ScriptedChatModel([_script(need)]), _lookup_tool(calls))
    try:
        result = agent.invoke({"messages": [("user", "summarise the record")]},
                              {"recursion_limit": LIMIT, **config})
        return result["messages"][-1].text == "done", len(calls)
    except GraphRecursionError:
        return False, len(calls)


def _ways_in(bank: Any, verifier: Any) -> dict[str, tuple[Callable, Callable]]:
    """name -> (build without, a fresh adapter: () -> (build with, run config, last trajectory id))."""
    from langchain.agents import create_agent

    from skillbank.adapters.callbacks import SkillBankCallbackHandler
    from skillbank.adapters.langchain import SkillBankMiddleware
    from skillbank.adapters.langgraph import skillbank_prompt

    from langgraph.prebuilt import create_react_agent

    def middleware() -> tuple[Callable, dict, Callable]:
        mw = SkillBankMiddleware(bank, k=2, verifier=verifier)
        return (lambda model, t: create_agent(model, [t], middleware=[mw]), {},
                lambda: mw.recording_middleware.last_trajectory_id)

    def prompt_and_handler() -> tuple[Callable, dict, Callable]:
        handler = SkillBankCallbackHandler(bank, verifier=verifier)
        return (lambda model, t: create_react_agent(model, [t], prompt=skillbank_prompt(bank, k=2)),
                {"callbacks": [handler]}, lambda: handler.last_trajectory_id)

    return {
        "create_agent + SkillBankMiddleware": (lambda model, t: create_agent(model, [t]), middleware),
        "create_react_agent + skillbank_prompt + callback handler":
            (lambda model, t: create_react_agent(model, [t]), prompt_and_handler),
    }


def measure(runs: int, seed: int) -> list[dict[str, Any]]:
    from skillbank import SkillBank

    rng = random.Random(seed)
    needs = [rng.randint(1, 12) for _ in range(runs)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for verifier_name, verifier in (("verifier", _verifier), ("none", None)):
            bank = SkillBank.open(Path(tmp) / f"bank-{verifier_name}", embedder="hash")
            bank.add_skill(name="page-through-records", description="summarising a long record",
                           body="Read the pages you need, then answer.")
            for name, (plain, adapter) in _ways_in(bank, verifier).items():
                t0 = time.perf_counter()
                without = [_run(plain, need, {}) for need in needs]
                with_bank, labels = [], Counter()
                for need in needs:
                    build, config, last_id = adapter()
                    with_bank.append(_run(build, need, config))
                    traj = bank.trajectories.get(last_id())
                    if not with_bank[-1][0]:
                        o = traj.outcome
                        labels["limit"] += 1
                        labels["labelled"] += o is not None and o.success is False
                        labels[o.source if o else "unlabelled"] += 1
                rows.append({
                    "way in": name, "verifier": verifier_name, "runs": runs,
                    "finished without": sum(f for f, _ in without),
                    "finished with": sum(f for f, _ in with_bank),
                    "lookups without": sum(n for _, n in without),
                    "lookups with": sum(n for _, n in with_bank),
                    "ended at limit": labels["limit"], "labelled": labels["labelled"],
                    "sources": ", ".join(f"{k} {v}" for k, v in sorted(labels.items())
                                         if k not in ("limit", "labelled")),
                    "seconds": time.perf_counter() - t0})
            bank.close()
    return rows


HEADERS = ("way in", "verifier", "runs", "finished without / with", "lookups without / with",
           "ended at limit", "labelled", "outcome sources")


def _cells(row: dict[str, Any]) -> list[Any]:
    return [row["way in"], row["verifier"], row["runs"],
            f"{row['finished without']} / {row['finished with']}",
            f"{row['lookups without']} / {row['lookups with']}",
            row["ended at limit"], f"{row['labelled']} ({row['labelled'] / max(1, row['ended at limit']):.0%})",
            row["sources"]]


def main(argv: list[str] | None = None) -> int:
    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*create_react_agent.*")
    runs = 20 if args.quick else args.runs
    t0 = time.perf_counter()
    rows = measure(runs, args.seed)
    common.print_table(SECTION, HEADERS, [_cells(r) for r in rows])
    if not (args.no_write or args.quick):
        body = (f"{common.machine_markdown()}\n\nCommand: `python benchmarks/bench_capture.py --runs {runs} "
                f"--seed {args.seed}` ({time.perf_counter() - t0:.0f} s). A scripted model that needs 1-12 "
                f"lookups (seeded) under `recursion_limit={LIMIT}`; the same runs without and with the "
                "adapter. *Ended at limit* and *labelled* count the runs with the adapter.\n\n"
                + common.markdown_table(HEADERS, [_cells(r) for r in rows]))
        common.update_results(SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
