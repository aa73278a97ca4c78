"""A scripted model that replays BFCL's ground truth through the agent, turn by turn.

It proves the adapter without a model: the ground-truth calls go through the real
``create_agent`` loop, the tools, the executor and the turn feeding, and BFCL's checker must
accept the run. Mutated ground truth (a call dropped or altered) must be refused.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any, Sequence

from langchain_core.messages import AIMessage, BaseMessage

from skillbank import ScriptedChatModel
from skillbank_harness.envs.bfcl import _bfcl
from skillbank_harness.envs.bfcl.tasks import BfclTask

__all__ = ["GroundTruthModel", "parse_call", "TURN_DONE"]

TURN_DONE = "Done."
"""What the replay says to end a turn (any answer without a tool call ends one)."""


def parse_call(call: str, classes: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """A ground-truth call string -> ``(function, keyword arguments)``.

    Positional arguments (``sort('report.pdf')``) are named by the signature of the BFCL
    method the call runs, found among ``classes``.
    """
    node = ast.parse(call.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {call!r}")
    name = node.func.id
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
    if not args:
        return name, kwargs
    for class_name in classes:
        try:
            method = _bfcl.backend_method(class_name, name)
        except AttributeError:
            continue
        bound = inspect.signature(method).bind(None, *args, **kwargs)  # None stands for self
        named = dict(bound.arguments)
        named.pop(next(iter(named)))
        return name, named
    raise ValueError(f"{call!r}: no method {name!r} in {list(classes)}")


class GroundTruthModel(ScriptedChatModel):
    """Emits ``turns`` (call strings per turn; the task's ground truth by default) as messages.

    Each call is one model message (``parallel=True``: one message per turn with all of the
    turn's calls), and every turn closes with :data:`TURN_DONE`. A scripted chat model
    (``bind_tools`` returns it unchanged) that reports estimated token usage.
    """

    model_name: str = "bfcl-ground-truth"

    @classmethod
    def for_task(cls, task: BfclTask, turns: Sequence[Sequence[str]] | None = None, *,
                 parallel: bool = False) -> "GroundTruthModel":
        turns = task.ground_truth if turns is None else turns
        responses: list[BaseMessage] = []
        for t, calls in enumerate(turns):
            tool_calls = []
            for i, call in enumerate(calls):
                name, args = parse_call(call, task.classes)
                tool_calls.append({"name": name, "args": args, "id": "", "type": "tool_call"})
            if parallel and tool_calls:
                responses.append(AIMessage(content="", tool_calls=tool_calls))
            else:
                responses.extend(AIMessage(content="", tool_calls=[tc]) for tc in tool_calls)
            responses.append(AIMessage(content=TURN_DONE))
        return cls(responses, cycle=False)
