"""One BFCL run: the entry's API instances, its tools, its user turns and what the agent did.

:class:`BfclEnv` holds one run's world. Its API instances are BFCL's, created by BFCL's executor
from the entry's initial config on the first call; every call the agent's tools make goes
through that executor and is logged under the turn and the step (one model message) it came
from, which is what BFCL's checker judges.

:class:`BfclUserMiddleware` plays BFCL's side of the conversation inside one ``create_agent``
run, as BFCL's inference loop does:

* a turn ends when the model answers without a tool call; the next user turn is then appended
  and the loop goes back to the model (the run is one trajectory);
* in ``multi_turn_miss_func`` the withheld functions join the toolset at the turn BFCL names,
  whose user message is BFCL's "I have updated some more functions..." prompt. Before that
  they are not offered, and a call to one is a call to an unknown tool (LangChain's
  ``ToolNode`` answers it with its usual error);
* more than BFCL's 20 tool-calling steps in one turn force-quits the run, as in BFCL (the run
  ends with LangGraph's "need more steps" message);
* the tool calls of one model message run one at a time in the order the model wrote them
  (LangGraph would run them concurrently, and BFCL's backends are stateful).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
import weakref
from typing import Any, Sequence

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import hook_config
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool

from skillbank.adapters.limits import NEED_MORE_STEPS
from skillbank_harness.envs.bfcl import _bfcl
from skillbank_harness.envs.bfcl.tools import make_tool

__all__ = ["BfclEnv", "BfclUserMiddleware", "FORCE_QUIT_MESSAGE"]

log = logging.getLogger("skillbank_harness.envs.bfcl")

FORCE_QUIT_MESSAGE = NEED_MORE_STEPS
"""The run's last message when BFCL force-quits it. BFCL writes its reason only to its own log,
never to the model; this is LangGraph's message for the same stop (steps ran out)."""

# A call waits at most this long for the calls written before it in the same message; they
# start first (LangGraph submits a message's calls in order), so this only bounds a surprise.
_ORDER_TIMEOUT_S = 60.0


class BfclEnv:
    """One run of one BFCL entry: API instances, tools, the current turn and the call log.

    ``turns[t][s]`` lists the call strings executed in step ``s`` (one model message) of turn
    ``t``, errors included; a call to a tool the model was not offered is refused before it
    reaches a backend and is not logged.
    """

    def __init__(self, entry: dict[str, Any]):
        self.entry = entry
        self.run_name = f"skillbank_{uuid.uuid4().hex}"
        self.questions: list[list[dict[str, Any]]] = entry["question"]
        self.turn = 0
        self.turns: list[list[list[str]]] = [[]]
        self.forced_quit = False
        self.last_check: dict[str, Any] | None = None
        self._offered = {t.name: t for t in self._tools(entry["function"])}
        self._held = {int(turn): self._tools(docs) for turn, docs in (entry.get("missed_function") or {}).items()}
        self._initial = tuple(self._offered)
        self._release(0)
        self._lock = threading.Lock()
        self._order = threading.Condition()
        self._done: set[str] = set()
        # BFCL's executor keeps instances in module globals for good: free them with the env.
        weakref.finalize(self, _bfcl.forget, self.run_name)

    def _tools(self, docs: Sequence[dict[str, Any]]) -> list[BaseTool]:
        return [make_tool(doc, self._run) for doc in docs]

    # ---------------------------------------------------------------- what the agent gets

    def tools(self) -> list[BaseTool]:
        """The toolset the agent is built with: the functions offered from the first turn."""
        return [self._offered[name] for name in self._initial]

    def offered(self) -> list[BaseTool]:
        """The toolset of the current turn (withheld functions join at their turn)."""
        return list(self._offered.values())

    def added_tool(self, name: str) -> BaseTool | None:
        """A withheld function that has joined the toolset (the agent was built without it)."""
        return None if name in self._initial else self._offered.get(name)

    def user_turn(self, index: int) -> list[HumanMessage]:
        """The user's messages of turn ``index`` (BFCL's prompt on a turn that adds functions)."""
        messages = self.questions[index]
        if not messages and index in self._held:
            messages = [{"role": "user", "content": _bfcl.MORE_FUNCTIONS_PROMPT}]
        out = []
        for m in messages:
            if m.get("role") != "user":
                raise ValueError(f"{self.entry['id']} turn {index}: a {m.get('role')!r} message; "
                                 "only user turns are supported")
            out.append(HumanMessage(m["content"]))
        return out

    def user_middleware(self) -> list[AgentMiddleware]:
        """The middleware that plays BFCL's user in the run (see ``run_task``)."""
        return [BfclUserMiddleware(self)]

    # ---------------------------------------------------------------- turns and steps

    def begin_step(self) -> None:
        """A model message with tool calls opens a step of the current turn."""
        self.turns[self.turn].append([])

    def steps_in_turn(self) -> int:
        return len(self.turns[self.turn])

    def next_turn(self) -> list[HumanMessage] | None:
        """End the current turn; the next turn's user messages, or ``None`` after the last."""
        if self.turn + 1 >= len(self.questions):
            return None
        self.turn += 1
        self.turns.append([])
        self._release(self.turn)
        return self.user_turn(self.turn)

    def _release(self, turn: int) -> None:
        for tool in self._held.get(turn, ()):
            self._offered[tool.name] = tool

    def _run(self, call: str) -> str:
        with self._lock:
            result = _bfcl.execute([call], self.entry, self.run_name)[0]
            if not self.turns[self.turn]:  # a call outside any model message (a direct tool call)
                self.turns[self.turn].append([])
            self.turns[self.turn][-1].append(call)
        return result

    def instances(self) -> dict[str, Any]:
        """The run's live API instances by class name."""
        return _bfcl.instances(self.entry, self.run_name)

    # ---------------------------------------------------------------- call order

    def wait_for(self, earlier: Sequence[str]) -> None:
        """Block until the tool calls ``earlier`` (ids) of the same message have run."""
        with self._order:
            if not self._order.wait_for(lambda: self._done.issuperset(earlier), timeout=_ORDER_TIMEOUT_S):
                log.warning("skillbank: BFCL %s: a tool call ran before the calls written before it",
                            self.entry["id"])

    def call_done(self, call_id: str) -> None:
        with self._order:
            self._done.add(call_id)
            self._order.notify_all()


def _earlier_calls(state: Any, call_id: str) -> list[str]:
    """Ids of the tool calls written before ``call_id`` in the same model message."""
    for message in reversed((state or {}).get("messages", [])):
        ids = [c.get("id") for c in getattr(message, "tool_calls", None) or ()]
        if call_id in ids:
            return ids[:ids.index(call_id)]
    return []


class BfclUserMiddleware(AgentMiddleware):
    """Feeds BFCL's user turns, offers each turn's toolset and runs a message's calls in order.

    Put it first in the middleware list: its ``after_model`` then runs last, after other
    middleware saw the turn's final message, and its tool wrapper is outermost, so a capture
    middleware inside it sees every call, including one to a function not offered.
    """

    def __init__(self, env: BfclEnv) -> None:
        super().__init__()
        self.env = env

    # -- turns

    def _after_model(self, state: Any) -> dict[str, Any] | None:
        messages = (state or {}).get("messages") or []
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            return None
        if last.tool_calls:
            self.env.begin_step()
            if self.env.steps_in_turn() > _bfcl.MAXIMUM_STEP_LIMIT:
                self.env.forced_quit = True  # BFCL runs this step's calls, then stops
            return None
        if self.env.forced_quit:
            return {"jump_to": "end"}
        following = self.env.next_turn()
        if following is None:
            return None
        return {"messages": following, "jump_to": "model"}

    @hook_config(can_jump_to=["model", "end"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._after_model(state)

    @hook_config(can_jump_to=["model", "end"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._after_model(state)

    # -- the toolset of the turn

    def _request(self, request: Any) -> Any:
        return request.override(tools=self.env.offered())

    def _quit(self) -> AIMessage:
        return AIMessage(content=FORCE_QUIT_MESSAGE)

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        if self.env.forced_quit:
            return self._quit()
        return handler(self._request(request))

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        if self.env.forced_quit:
            return self._quit()
        return await handler(self._request(request))

    # -- tool calls

    def _tool_request(self, request: Any) -> Any:
        if request.tool is None and (added := self.env.added_tool(request.tool_call["name"])):
            return request.override(tool=added)
        return request

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        call_id = request.tool_call.get("id") or ""
        self.env.wait_for(_earlier_calls(request.state, call_id))
        try:
            return handler(self._tool_request(request))
        finally:
            self.env.call_done(call_id)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        call_id = request.tool_call.get("id") or ""
        await asyncio.to_thread(self.env.wait_for, _earlier_calls(request.state, call_id))
        try:
            return await handler(self._tool_request(request))
        finally:
            self.env.call_done(call_id)
