"""Which of skillbank's files one model request enters on its way through the prompt middleware.

Walks a run's first model request and its next one (with the state ``create_agent`` would hand
it). Prints the files in the order a request first enters them, how many times it came back
into a file it had left, and the recording middleware's imports. Run:

    HF_HUB_OFFLINE=1 python benchmarks/walk_prompt_middleware.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import skillbank
from skillbank import SkillBank
from skillbank.adapters._prompt_middleware import SkillPromptMiddleware
from skillbank.lessons import Lesson

ROOT = Path(skillbank.__file__).parent


def walk(call) -> list[str]:
    files: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            path = Path(frame.f_code.co_filename)
            if path.is_relative_to(ROOT):
                name = str(path.relative_to(ROOT))
                if not files or files[-1] != name:
                    files.append(name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return files


def report(title: str, sequence: list[str]) -> None:
    distinct = list(dict.fromkeys(sequence))
    returns = len(sequence) - len(distinct)
    print(f"{title}: files entered: {len(distinct)}; came back into a file it had left: {returns} times")
    for name in distinct:
        print("  ", name)
    adapters = [n for n in distinct if n.startswith("adapters/")]
    print(f"of them in skillbank/adapters: {len(adapters)} ({', '.join(adapters)})")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, SkillBank.open(tmp) as bank:
        bank.add_skill("refunds", "When refunding an order.", lessons=[Lesson(kind="check_first", check="get_order", tool="refund")])
        middleware = SkillPromptMiddleware(bank)
        middleware.wrap_model_call(request({"messages": [HumanMessage("warm up", id="h0")]}),
                                   lambda r: AIMessage("ok"))  # warm: caches, lazy imports
        # A run's first model call, then its next one, with the state create_agent would hand it:
        # the run's messages and what the first call wrote to the state.
        state: dict = {"messages": [HumanMessage("refund order A1", id="h1")]}
        answers: list = []
        first = walk(lambda: answers.append(middleware.wrap_model_call(request(state), lambda r: AIMessage("ok"))))
        state = {**state, **answers[-1].command.update}
        state["messages"] = [*state["messages"], AIMessage("", id="a1"), ToolMessage("{}", tool_call_id="c1", id="t1")]
        later = walk(lambda: answers.append(middleware.wrap_model_call(request(state), lambda r: AIMessage("ok"))))
    report("the run's first model request", first)
    report("its next model request", later)
    recording = (ROOT / "adapters" / "_recording_middleware.py").read_text()
    imported = sorted({line.split()[1] for line in recording.splitlines() if line.startswith("from skillbank.")})
    print("the recording middleware imports:", ", ".join(imported))


def request(state: dict) -> ModelRequest:
    return ModelRequest(model=None, messages=list(state["messages"]), system_message=None,  # type: ignore[arg-type]
                        tools=[], state=state, runtime=None)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
