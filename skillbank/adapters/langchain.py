"""``SkillBankMiddleware``: skills in, trajectories out, for ``langchain.agents.create_agent``.

    agent = create_agent(model, tools, system_prompt="...",
                         middleware=[SkillBankMiddleware(bank, k=5, verifier=my_check)])
    result = agent.invoke({"messages": [("user", "turn on the AC")]})
    bank.trajectories.get(result["skillbank_trajectory_id"])

The middleware costs the agent no step. ``create_agent`` turns ``before_*`` / ``after_*`` hooks
into graph nodes, and each node run is a superstep counted against ``recursion_limit``; so this
middleware has none. It works entirely inside ``wrap_model_call`` and ``wrap_tool_call``:

- a run starts on its first wrapped call, and its trajectory id goes into the state with that
  model call's own update (no node of its own);
- per model turn it injects skills (a block that stays the same through the run unless a new
  skill becomes relevant, so prompt caches stay warm), records the turn, and enforces the token
  and wall-clock budgets by answering with a final message instead of calling the model;
- it records every tool call, and every limit the run runs into from the real signal: the
  exception, the error ``ToolMessage`` LangGraph wrote, the message a limit middleware appended;
- the run ends when its graph run ends: a process-wide callback (``_watch.py``) sees that, and
  also sees the errors raised *between* nodes (``GraphRecursionError``) that no node could.
  There the verifier labels the run; a run that ended at a limit is labelled even when the
  graph raised (the verifier gets the last state seen; without one it is a failure).

Per-run state is keyed by the graph run, so concurrent runs of one agent (threads, asyncio
tasks, ``batch``) never mix; a run paused by an interrupt continues in the same trajectory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence
from uuid import UUID

from langchain.agents.middleware import AgentMiddleware, AgentState, ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command
from typing_extensions import NotRequired

from skillbank.adapters._watch import watcher as _get_watcher
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.config import InjectionConfig, RecordingConfig, split_options
from skillbank.adapters.injection import Block, SkillInjector, merge_system_message, tool_names
from skillbank.adapters.limits import LimitSignal, is_interrupt, limit_from_message, unknown_parameters
from skillbank.adapters.recorder import TrajectoryRecorder, model_name_of
from skillbank.messages import first_human_text, last_message, message_text, response_message, tool_result_message
from skillbank.models import LimitType

__all__ = ["SkillBankMiddleware", "SkillBankState", "TRAJECTORY_KEY"]

log = logging.getLogger("skillbank.adapters")

TRAJECTORY_KEY = "skillbank_trajectory_id"
# create_agent's node names: the middleware's wrappers run inside these nodes.
_NODES = ("model", "tools")
_STOP_KEY = "skillbank_stop"


class SkillBankState(AgentState):
    """Adds the run's trajectory id to the agent state (and so to ``invoke``'s result)."""

    skillbank_trajectory_id: NotRequired[str | None]


@dataclass
class _Run:
    recorder: TrajectoryRecorder
    task: str
    start_message: str | None  # id of the human message the run began from
    graph_run: UUID | None = None
    seen: set[str] = field(default_factory=set)  # message ids already scanned for limits
    block: Block = field(default_factory=Block)
    state: dict[str, Any] = field(default_factory=dict)  # the last state a wrapper saw
    tail: list[Any] = field(default_factory=list)  # messages produced since that state
    stop: LimitSignal | None = None  # the budget that ended the run, if one did
    interrupted: bool = False
    keyed: bool = False  # the trajectory id is in the graph state
    tools: tuple[str, ...] | None = None  # tool names offered at the last model turn

    def last_state(self) -> dict[str, Any]:
        """The last state seen, with the messages produced since: what a verifier gets when the
        graph raised before returning a final state."""
        messages = list(self.state.get("messages") or ())
        return {**self.state, "messages": messages + self.tail, TRAJECTORY_KEY: self.recorder.id}


def _paused(state: dict[str, Any]) -> bool:
    """Whether a graph that returned ``state`` stopped before answering (a static breakpoint):
    its last message is a tool call still waiting for its result."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    return getattr(last, "type", None) == "ai" and bool(getattr(last, "tool_calls", None))


class SkillBankMiddleware(AgentMiddleware):
    """Injects skills per model turn and records the run as a trajectory.

    ``SkillBankMiddleware(bank, k=5, verifier=check)``: keyword options are the fields of
    :class:`~skillbank.adapters.config.InjectionConfig` (what is injected) and
    :class:`~skillbank.adapters.config.RecordingConfig` (how the run is recorded and
    labelled); ``injection=`` / ``recording=`` take whole configs. ``inject=False`` only records.
    """

    state_schema = SkillBankState

    def __init__(self, bank: Any, *, injection: InjectionConfig | None = None,
                 recording: RecordingConfig | None = None, inject: bool = True, **options: Any):
        super().__init__()
        self.bank = bank
        self.inject = inject
        self.injection, self.recording = split_options(options, injection=injection, recording=recording,
                                                       owner="SkillBankMiddleware")
        self.injector = SkillInjector(bank, self.injection)
        self.detectors = self.recording.detectors()
        self.last_trajectory_id: str | None = None
        # The runs this middleware started, oldest first (the latest 10,000).
        self.trajectory_ids: deque[str] = deque(maxlen=10_000)
        self._runs: dict[str, _Run] = {}
        self._by_graph: dict[UUID, str] = {}
        self._lock = threading.Lock()
        # Time spent in retrieval and in the recorder, for overhead reports.
        self.retrieval_seconds = 0.0
        self._closed_write_seconds = 0.0
        self._watcher = _get_watcher()
        if self._watcher is not None:
            self._watcher.add_node_names(*_NODES)

    # -- per-run state -----------------------------------------------------------------------

    @property
    def logging_seconds(self) -> float:
        """Seconds spent writing trajectories so far (all runs of this middleware)."""
        with self._lock:
            return self._closed_write_seconds + sum(r.recorder.write_seconds for r in self._runs.values())

    def recorder(self, trajectory_id: str) -> TrajectoryRecorder | None:
        """The live recorder of a running trajectory (``None`` once it has finished)."""
        with self._lock:
            run = self._runs.get(trajectory_id)
        return run.recorder if run else None

    def _run_for(self, state: Any) -> _Run | None:
        """The run the calling wrapper belongs to: this graph run's, a paused one it resumes,
        or a new one."""
        graph_run = self._watcher.current_graph_run() if self._watcher is not None else None
        if graph_run is None:
            _warn_unwatched()
            return None
        with self._lock:
            tid = self._by_graph.get(graph_run)
            if tid is not None and tid in self._runs:
                return self._runs[tid]
        state = state if isinstance(state, dict) else {}
        run = self._resume(state) or self._start(state)
        with self._lock:
            run.graph_run = graph_run
            self._by_graph[graph_run] = run.recorder.id
        self._watcher.watch(graph_run, self, run.recorder.id)
        self._claim(run)
        return run

    def _resume(self, state: dict[str, Any]) -> _Run | None:
        """The paused run ``state`` belongs to, if it is being resumed (not given a new message)."""
        tid = state.get(TRAJECTORY_KEY)
        if not tid:
            return None
        messages = state.get("messages", [])
        newest = last_message(messages, "human")
        with self._lock:
            run = self._runs.get(tid)
        if run is not None:
            same = run.start_message is not None and getattr(newest, "id", None) == run.start_message
            return run if same and run.graph_run is None else None
        try:  # paused in another process
            traj = self.bank.trajectories.get(tid)
        except Exception:
            return None
        if traj.status != "running" or self.bank.scrubber(message_text(newest)) != traj.task:
            return None
        cfg = self.recording
        recorder = TrajectoryRecorder(
            self.bank, task=traj.task, trajectory_id=tid, model=traj.model, scrubber=cfg.scrubber,
            detectors=self.detectors, snapshot=traj.bank_snapshot, flush_every=cfg.flush_every, clock=cfg.clock,
            resume_index=max((s.index for s in traj.steps), default=-1) + 1,
        )
        run = _Run(recorder, traj.task, getattr(newest, "id", None), keyed=True,
                   seen={m.id for m in messages if getattr(m, "id", None)})
        with self._lock:
            return self._runs.setdefault(tid, run)

    def _start(self, state: dict[str, Any]) -> _Run:
        messages = state.get("messages", [])
        cfg = self.recording
        metadata = _metadata()
        labels = {**cfg.labels, **{str(k): str(v) for k, v in (metadata.get("skillbank_labels") or {}).items()}}
        # On a thread with history the newest human message is what this run is about.
        newest = last_message(messages, "human")
        recorder = TrajectoryRecorder(
            self.bank, task=first_human_text(messages, last=True), model=cfg.model_name,
            task_id=metadata.get("skillbank_task_id") or cfg.task_id,
            task_type=metadata.get("skillbank_task_type") or cfg.task_type, labels=labels,
            scrubber=cfg.scrubber, detectors=self.detectors, flush_every=cfg.flush_every,
            clock=cfg.clock,
        )
        run = _Run(recorder, recorder.trajectory.task, getattr(newest, "id", None),
                   seen={m.id for m in messages if getattr(m, "id", None)})
        with self._lock:
            self._runs[recorder.id] = run
            self.last_trajectory_id = recorder.id
            self.trajectory_ids.append(recorder.id)
        # The row exists from now on: a process killed at any later point leaves it 'running'.
        recorder.start()
        return run

    def _claim(self, run: _Run) -> None:
        # A SkillBankCallbackHandler on this bank in the same run's callbacks would record the
        # run a second time, less precisely: tell it this graph run is ours. The handlers this
        # node's callback manager carries are exactly the ones that see this run.
        callbacks = _config().get("callbacks")
        node_run = getattr(callbacks, "parent_run_id", None)
        if node_run is None:
            return
        for handler in getattr(callbacks, "handlers", None) or ():
            if isinstance(handler, SkillBankCallbackHandler) and _same_bank(handler.bank, self.bank):
                try:
                    handler.leave(node_run, run.recorder.id)
                except Exception:
                    log.warning("skillbank: could not tell a callback handler to leave this run", exc_info=True)

    def _release(self, run: _Run) -> None:
        with self._lock:
            self._runs.pop(run.recorder.id, None)
            if run.graph_run is not None:
                self._by_graph.pop(run.graph_run, None)
            self._closed_write_seconds += run.recorder.write_seconds

    def _detach(self, run: _Run) -> None:
        """The graph run ended but the run did not: it waits, paused, for a resume."""
        with self._lock:
            if run.graph_run is not None:
                self._by_graph.pop(run.graph_run, None)
            run.graph_run = None
        run.recorder.flush()

    # -- the end of a graph run (GraphListener) -------------------------------------------------

    def graph_ended(self, key: str, outputs: Any) -> None:
        with self._lock:
            run = self._runs.get(key)
        if run is None or run.recorder.closed:
            return
        state = outputs if isinstance(outputs, dict) and "messages" in outputs else run.last_state()
        if run.interrupted or _paused(state):
            run.interrupted = False
            self._detach(run)
            return
        self._finish(run, state)
        run.recorder.label(self.recording.scorer(), state, run.recorder.ended_at_limit(state, stop=run.stop))

    def graph_failed(self, key: str, error: BaseException) -> None:
        with self._lock:
            run = self._runs.get(key)
        if run is None or run.recorder.closed:
            return
        if is_interrupt(error):  # a subgraph agent pausing for input: it will resume
            self._detach(run)
            return
        state = run.last_state()
        self._scan(run, state["messages"])
        run.recorder.fail(error)
        self._release(run)
        limit = run.recorder.ended_at_limit(state, error=error)
        if limit is not None:
            run.recorder.label(self.recording.scorer(), state, limit)

    def _finish(self, run: _Run, state: dict[str, Any]) -> None:
        messages = state.get("messages", [])
        self._scan(run, messages)
        last = last_message(messages, "ai")
        answer = message_text(last) if last is not None else None
        if not answer and state.get("structured_response") is not None:  # response_format runs
            answer = _as_text(state["structured_response"])
        run.recorder.finish(answer)
        self._release(run)

    # -- shared parts of the wrappers ----------------------------------------------------------

    def _scan(self, run: _Run, messages: Sequence[Any]) -> None:
        """Record limits announced by messages other components appended since the last look."""
        fresh = []
        for message in reversed(messages):
            mid = getattr(message, "id", None)
            if mid is not None and mid in run.seen:
                break
            fresh.append(message)
        # One limit announces itself in several messages (ToolCallLimitMiddleware writes an error
        # ToolMessage per blocked call and a final AIMessage): one event per limit type per look,
        # with the most specific detail (the final message's) and the tool name if any gave it.
        found: dict[LimitType, LimitSignal] = {}
        for message in reversed(fresh):
            if getattr(message, "id", None) is not None:
                run.seen.add(message.id)
            if getattr(message, "response_metadata", {}).get(_STOP_KEY):
                continue  # our own budget stop, recorded when it was made
            signal = limit_from_message(message)
            if signal is not None:
                earlier = found.get(signal.type)
                tool = signal.tool or (earlier.tool if earlier else None)
                found[signal.type] = LimitSignal(signal.type, signal.detail, tool)
        for signal in found.values():
            run.recorder.add_limit(signal)

    def _budget_stop(self, run: _Run) -> AIMessage | None:
        cfg, recorder = self.recording, run.recorder
        signal = None
        if cfg.max_tokens_per_run is not None and recorder.total_tokens > cfg.max_tokens_per_run:
            used, budget = recorder.total_tokens, cfg.max_tokens_per_run
            signal = LimitSignal(LimitType.token_budget, f"token budget exceeded: {used} tokens used, budget {budget}")
            text = (f"Stopped before finishing: this run used {used} tokens, over its budget of "
                    f"{budget} tokens.")
            data: dict[str, Any] = {"used": used, "budget": budget}
        elif cfg.max_seconds_per_run is not None and recorder.elapsed > cfg.max_seconds_per_run:
            used_s, budget_s = round(recorder.elapsed, 3), cfg.max_seconds_per_run
            signal = LimitSignal(LimitType.time_budget, f"time budget exceeded: {used_s}s elapsed, budget {budget_s}s")
            text = (f"Stopped before finishing: this run took {used_s} seconds, over its time budget "
                    f"of {budget_s} seconds.")
            data = {"used_seconds": used_s, "budget_seconds": budget_s}
        if signal is None:
            return None
        recorder.add_limit(signal, data=data)
        run.stop = signal
        message = AIMessage(content=text, id=f"skillbank-stop-{recorder.id}",
                            response_metadata={_STOP_KEY: signal.type.value})
        run.seen.add(message.id)
        return message

    def _before_call(self, run: _Run, request: Any) -> AIMessage | None:
        """Bookkeeping before a model call; a message when a budget ends the run instead."""
        run.state, run.tail = dict(request.state or {}), []
        self._scan(run, request.messages)
        return self._budget_stop(run)

    def _prepare_call(self, run: _Run, request: Any, tools: tuple[str, ...],
                      injection: Any) -> tuple[Any, Any]:
        recorder = run.recorder
        recorder.set_model(model_name_of(request.model))
        records: Sequence[tuple[str, int, float]] = ()
        if injection is not None:
            with self._lock:
                self.retrieval_seconds += injection.seconds
            if injection:
                request = request.override(system_message=merge_system_message(request.system_message, injection.text))
                records = injection.records
        offered = tools if tools != run.tools else None  # stored when it changes, not every turn
        run.tools = tools
        if self.injection.reminders:
            run.block.reminders.know_tools(request.tools)
        n_in = len(request.messages) + (1 if request.system_message is not None else 0)
        return request, recorder.begin_model(n_in, records, tools=offered)

    def _safe_inject(self, run: _Run, request: Any, tools: tuple[str, ...]) -> Any:
        try:
            return self.injector.inject(request.messages, task=run.task, block=run.block, tools=tools)
        except Exception:
            # Retrieval failing must not take the agent down: run this turn without skills.
            log.warning("skillbank: skill retrieval failed; this turn runs without skills", exc_info=True)
            return None

    def _respond(self, run: _Run, response: Any) -> Any:
        """The wrapper's answer: the model's response, and on the run's first answer the state
        update that puts the trajectory id into the graph state (no node of its own needed)."""
        message = response_message(response)
        if message is not None:
            run.tail.append(message)
        if run.keyed:
            return response
        run.keyed = True
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        # create_agent hands every layer a plain ModelResponse (inner layers' updates are kept
        # aside and applied with ours), so this never hides another middleware's update.
        return ExtendedModelResponse(model_response=response,
                                     command=Command(update={TRAJECTORY_KEY: run.recorder.id}))

    def _model_failed(self, run: _Run, turn: Any, error: BaseException) -> None:
        run.recorder.end_model(turn, error=error)
        if is_interrupt(error):
            run.interrupted = True

    def _begin_tool(self, run: _Run, request: Any) -> Any:
        call = request.tool_call
        return run.recorder.begin_tool(call.get("name") or "?", call.get("args"), call.get("id"))

    def _remind(self, run: _Run, request: Any, turn: Any) -> ToolMessage | None:
        """The lesson's sentence as this call's result, when the call breaks a lesson of the
        run's block that can be checked here (``InjectionConfig.reminders``; see reminders.py)."""
        if not self.injection.reminders:
            return None
        found = run.block.reminders.intercept(run.block.hits, request)
        if found is None:
            return None
        reminder, message = found
        run.tail.append(message)
        run.recorder.end_reminder(turn, message.text, reminder.skill_id, reminder.version)
        return message

    def _ran(self, run: _Run, request: Any) -> None:
        if self.injection.reminders:
            run.block.reminders.ran(request)

    def _tool_done(self, run: _Run, turn: Any, request: Any, result: Any) -> None:
        self._ran(run, request)
        message = tool_result_message(result)
        if isinstance(message, ToolMessage):
            run.tail.append(message)
        if request.tool is None:
            # ToolNode had no tool by that name: whatever answered, the tool is not in the toolset.
            run.recorder.end_tool(turn, result=message, status="error", limit=LimitType.missing_tool)
        else:
            run.recorder.end_tool(turn, result=message)
            for signal in unknown_parameters(request.tool_call.get("args"), request.tool):
                run.recorder.add_limit(signal, turn.index)

    def _tool_failed(self, run: _Run, turn: Any, request: Any, error: BaseException) -> None:
        self._ran(run, request)
        run.recorder.end_tool(turn, error=error)
        if is_interrupt(error):
            run.interrupted = True

    # -- wrappers: sync ------------------------------------------------------------------------

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return handler(request)
        stop = self._before_call(run, request)
        if stop is not None:
            return self._respond(run, stop)
        tools = tool_names(request.tools)
        injection = self._safe_inject(run, request, tools) if self.inject else None
        request, turn = self._prepare_call(run, request, tools, injection)
        try:
            response = handler(request)
        except BaseException as exc:
            self._model_failed(run, turn, exc)
            raise
        run.recorder.end_model(turn, response_message(response))
        return self._respond(run, response)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return handler(request)
        turn = self._begin_tool(run, request)
        reminder = self._remind(run, request, turn)
        if reminder is not None:
            return reminder
        try:
            result = handler(request)
        except BaseException as exc:
            self._tool_failed(run, turn, request, exc)
            raise
        self._tool_done(run, turn, request, result)
        return result

    # -- wrappers: async -----------------------------------------------------------------------

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return await handler(request)
        stop = self._before_call(run, request)
        if stop is not None:
            return self._respond(run, stop)
        # Embedding the query is CPU work: keep it off the event loop.
        tools = tool_names(request.tools)
        injection = await asyncio.to_thread(self._safe_inject, run, request, tools) if self.inject else None
        request, turn = self._prepare_call(run, request, tools, injection)
        try:
            response = await handler(request)
        except BaseException as exc:
            self._model_failed(run, turn, exc)
            raise
        run.recorder.end_model(turn, response_message(response))
        return self._respond(run, response)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return await handler(request)
        turn = self._begin_tool(run, request)
        reminder = self._remind(run, request, turn)
        if reminder is not None:
            return reminder
        try:
            result = await handler(request)
        except BaseException as exc:
            self._tool_failed(run, turn, request, exc)
            raise
        self._tool_done(run, turn, request, result)
        return result


def _config() -> dict[str, Any]:
    try:
        from langgraph.config import get_config

        return get_config()
    except Exception:
        return {}


def _metadata() -> dict[str, Any]:
    return dict(_config().get("metadata") or {})


_WARNED = threading.Event()


def _warn_unwatched() -> None:
    if not _WARNED.is_set():
        _WARNED.set()
        log.warning("skillbank: SkillBankMiddleware cannot see which graph run this call belongs "
                    "to (it runs only inside create_agent's model and tools nodes, with LangChain "
                    "callbacks enabled); this run is not recorded and gets no skills")


def _same_bank(a: Any, b: Any) -> bool:
    if a is b:
        return True
    path_a, path_b = getattr(a, "path", None), getattr(b, "path", None)
    return path_a is not None and str(path_a) == str(path_b)


def _as_text(value: Any) -> str:
    if hasattr(value, "model_dump_json"):
        return value.model_dump_json()
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return str(value)
