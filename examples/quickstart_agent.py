"""skillbank on a small agent, offline: skills in, a trajectory out, an outcome on it.

    python examples/quickstart_agent.py            # bundled MiniLM embeddings (offline)
    python examples/quickstart_agent.py --embedder hash

A scripted fake chat model stands in for an LLM (no network, no API key): it turns on the AC,
then tries to open the window with a tool the agent does not have, then answers. The bank (in a
temporary folder) holds two skills. The script prints what the model was shown, which skill
versions were injected at each turn, the stored transcript with its limit events, and labels
the run.

With a real model, swap ``ScriptedChatModel(...)`` for e.g. ``init_chat_model("openai:gpt-4o-mini")``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.tools import tool

from skillbank import ScriptedChatModel, SkillBank, SkillBankMiddleware, tool_call


@tool
def turn_on_ac(temperature: int) -> str:
    """Turn on the air conditioning at the given temperature in Celsius."""
    return json.dumps({"ac": "on", "temperature": temperature})


@tool
def get_windows() -> str:
    """Report which windows are open."""
    return json.dumps({"driver": "closed", "passenger": "closed", "rear": None})


def window_is_open(final_state: dict) -> bool:
    """The verifier: did any tool actually open a window? (None can: there is no such tool.)"""
    return any(m.type == "tool" and '"open"' in str(m.content) for m in final_state["messages"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", help="minilm (default) or hash")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        bank = SkillBank.open(Path(tmp) / "bank", embedder=args.embedder)
        bank.add_skill(
            name="ac-before-window",
            description="The user wants the AC on and a window open at the same time",
            body="Turn on the AC first, then check the windows with `get_windows`.",
            tools=["turn_on_ac", "get_windows"],
        )
        bank.add_skill(
            name="decline-missing-tool",
            description="A requested action needs a tool the agent does not have",
            body="Do the part you can, then say exactly which tool is missing. Never claim success.",
            kind="guard",
        )

        model = ScriptedChatModel([
            tool_call("turn_on_ac", temperature=21),
            tool_call("open_window", which="driver"),  # not in the toolset
            tool_call("get_windows"),
            "The AC is on at 21°C. I can't open the window: there is no window tool.",
        ])
        middleware = SkillBankMiddleware(bank, k=2, verifier=window_is_open)
        agent = create_agent(model, [turn_on_ac, get_windows],
                             system_prompt="You control a car. Be brief.", middleware=[middleware])

        result = agent.invoke({"messages": [("user", "turn on the AC and open the window")]})
        tid = result["skillbank_trajectory_id"]
        traj = bank.trajectories.get(tid)

        print("== what the model was shown on its first turn (system message) ==")
        print(model.received[0][0].text)
        print()
        print(f"== trajectory {traj.id}: {traj.status}, model {traj.model}, "
              f"{traj.input_tokens}+{traj.output_tokens} tokens ==")
        print(f"task: {traj.task}")
        names = {s.id: s.name for s in bank.list_skills()}
        for step in traj.steps:
            if step.kind == "model":
                injected = [f"{names[i.skill_id]}@v{i.version} (rank {i.rank}, {i.score:.2f})"
                            for i in traj.injections if i.step == step.index]
                said = step.content or ", ".join(f"call {c['name']}({c['args']})" for c in step.tool_calls)
                print(f"[{step.index}] model  {said}")
                print(f"         injected: {', '.join(injected) or '-'}")
            else:
                outcome = f"ERROR {step.error}" if step.error else step.result
                print(f"[{step.index}] tool   {step.tool}({step.args}) -> {outcome}")
        print("limit events:")
        for event in traj.limit_events:
            print(f"  step {event.step}: {event.type.value} ({event.category}) {event.detail}")
        print(f"final answer: {traj.final_answer}")
        print(f"outcome (verifier): success={traj.outcome.success} score={traj.outcome.score}")

        # A person can relabel it at any time; skill statistics follow the label.
        bank.record_outcome(tid, success=False, score=0.0, note="window stayed closed")
        print(f"relabelled: {bank.trajectories.get(tid).outcome.note!r}; "
              f"stats of ac-before-window: {bank.get_skill('ac-before-window').stats.model_dump()}")
        bank.close()


if __name__ == "__main__":
    main()
