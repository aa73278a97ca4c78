"""``SkillRecordingMiddleware``: a ``create_agent`` run, recorded as a trajectory while it happens.

One concern, the record. It works entirely inside ``wrap_model_call`` and ``wrap_tool_call``
(each graph node ``before_*`` / ``after_*`` hooks would add is a superstep counted against
``recursion_limit``, so it has none):

- a run starts on its first wrapped call, and its trajectory id goes into the state with that
  model call's own update (no node of its own);
- it records every model call, with the skills injected into it (the call's
  :class:`~skillbank.adapters.injection.ShownCall`, on the request's state, read when the call
  returns, so the injection part may sit inside or around it; else the record on the system message,
  :func:`~skillbank.adapters.injection.injections_from_messages`), and every tool call, a call
  answered with a lesson as a ``reminder`` step with that skill injected at it
  (read from the message's :class:`~skillbank.adapters._interventions.Intervention`; when the
  guidance part sits around it and answers first, it is told, :meth:`record_answer`); a model call a run budget stops is
  not a model call (the budget's final message is read with the run's messages);
- it records every limit the run runs into from the real signal: the exception, the error
  ``ToolMessage`` LangGraph wrote, the message a limit middleware or a run budget appended;
- the run ends when its graph run ends (:class:`~skillbank.adapters._agent_runs.AgentRuns`,
  which also sees the errors raised *between* nodes, as ``GraphRecursionError`` is; the run's
  :class:`~skillbank.adapters._run_context.RunContext` hands its ends to :meth:`ended`,
  :meth:`failed` and :meth:`paused`). There the
  verifier labels the run; a run that ended at a limit is labelled even when the graph raised
  (the verifier gets the last state seen; without one it is a failure).

A run paused by an interrupt continues in the same trajectory, in this process or, through the
trajectory id in the checkpointed state, in another. A ``SkillBankCallbackHandler`` on the same
bank in the same run's callbacks is told to leave the run to this middleware, so it is recorded
once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Sequence

from langchain.agents.middleware import (AgentMiddleware, AgentState, ExtendedModelResponse, ModelCallResult,
                                         ModelRequest, ModelResponse, ToolCallRequest)
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command
from typing_extensions import NotRequired

from skillbank.adapters._agent_runs import AgentRuns, run_config
from skillbank.adapters._run_context import CallContext, RunContext, agent_runs, enter_call, leave_call
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.config import RecordingConfig
from skillbank._config_keywords import with_options
from skillbank.adapters.injection import SHOWN_CALL_KEY, ShownCall, injections_from_messages
from skillbank.live._recording import keep_exposures
from skillbank.adapters.limits import LimitSignal, limit_from_message, unknown_parameters
from skillbank.adapters._recorder import ModelTurn, ToolTurn, TrajectoryRecorder, model_name_of
from skillbank.adapters._interventions import Intervention, intervention_of
from skillbank.adapters._tools import tool_names
from skillbank.messages import (first_human_text, last_message, message_text, response_message, state_messages,
                                tool_result_message)
from skillbank.models import LimitType
from skillbank.protocols import TrajectorySink

__all__ = ["SkillRecordingMiddleware", "SkillRecordingState", "RecordedRun", "TRAJECTORY_KEY"]

log = logging.getLogger("skillbank.adapters")

TRAJECTORY_KEY = "skillbank_trajectory_id"


class SkillRecordingState(AgentState):
    """Adds the run's trajectory id to the agent state (and so to ``invoke``'s result)."""

    skillbank_trajectory_id: NotRequired[str | None]


@dataclass
class RecordedRun:
    recorder: TrajectoryRecorder
    seen: set[str] = field(default_factory=set)  # message ids already scanned for limits
    state: dict[str, Any] = field(default_factory=dict)  # the last state a wrapper saw
    tail: list[Any] = field(default_factory=list)  # messages produced since that state
    keyed: bool = False  # the trajectory id is in the graph state
    tools: tuple[str, ...] | None = None  # tool names offered at the last model call

    def last_state(self) -> dict[str, Any]:
        """The last state seen, with the messages produced since: what a verifier gets when the
        graph raised before returning a final state."""
        messages = list(self.state.get("messages") or ())
        return {**self.state, "messages": messages + self.tail, TRAJECTORY_KEY: self.recorder.id}


class SkillRecordingMiddleware(AgentMiddleware[SkillRecordingState]):
    """Records each run of the agent into ``bank.trajectories``.

    ``SkillRecordingMiddleware(bank, verifier=check)``.

    Args:
        bank: Anything a :class:`~skillbank.protocols.TrajectorySink`.
        recording: A whole :class:`~skillbank.adapters.config.RecordingConfig` (then
            ``verifier`` and ``judge`` are set on it, not here); every other option is set there.
        verifier: ``verifier(final_state)`` labels each run (``RecordingConfig.verifier``).
        judge: An :class:`~skillbank.adapters.judge.LLMJudge` that labels each run instead.

    Raises:
        TypeError: an unknown keyword, or ``verifier``/``judge`` given along with ``recording``.
    """

    state_schema = SkillRecordingState

    def __init__(self, bank: TrajectorySink, recording: RecordingConfig | None = None, *,
                 verifier: Callable[[Any], Any] | None = None, judge: Any = None):
        super().__init__()
        self.bank = bank
        self.recording = with_options(recording, RecordingConfig, owner="SkillRecordingMiddleware",
                                      argument="recording", options={"verifier": verifier, "judge": judge})
        self.detectors = self.recording.detectors()
        self.last_trajectory_id: str | None = None
        # The runs this middleware started, oldest first (the latest 10,000).
        self.trajectory_ids: deque[str] = deque(maxlen=10_000)
        self._by_trajectory: dict[str, RecordedRun] = {}  # trajectory id -> live or paused run
        self._lock = threading.Lock()
        self._closed_write_seconds = 0.0
        self._runs = agent_runs()

    @property
    def logging_seconds(self) -> float:
        """Seconds spent writing trajectories so far (all runs of this middleware)."""
        with self._lock:
            return self._closed_write_seconds + sum(r.recorder.write_seconds for r in self._by_trajectory.values())

    def recorder(self, trajectory_id: str) -> TrajectoryRecorder | None:
        """The live recorder of a running trajectory (``None`` once it has finished)."""
        with self._lock:
            run = self._by_trajectory.get(trajectory_id)
        return run.recorder if run else None

    # -- a run's life (RunContext hands these on from AgentRuns) -----------------------------------

    def _join(self, context: RunContext, state: Any) -> RecordedRun:
        """This part's record of a run it meets for the first time: a run paused in another
        process that ``state`` continues, or a new one."""
        state = state if isinstance(state, Mapping) else {}
        made = self._resumed_run(state) or self._new_run(state)
        with context.lock:
            run = context.records.setdefault(self, made)
        if run is made:
            self.attached(run)
        return run

    def _new_run(self, state: Mapping[str, Any]) -> RecordedRun:
        messages = state_messages(state)
        cfg = self.recording
        metadata = dict(run_config().get("metadata") or {})
        labels = {**cfg.labels, **{str(k): str(v) for k, v in (metadata.get("skillbank_labels") or {}).items()}}
        # On a thread with history the newest human message is what this run is about.
        recorder = TrajectoryRecorder(
            self.bank, task=first_human_text(messages, last=True), model=cfg.model_name,
            task_id=metadata.get("skillbank_task_id") or cfg.task_id,
            task_type=metadata.get("skillbank_task_type") or cfg.task_type, labels=labels,
            scrubber=cfg.scrubber, detectors=self.detectors, flush_every=cfg.flush_every,
            clock=cfg.clock, today=cfg.today,
        )
        return RecordedRun(recorder, seen=_ids(messages))

    def _resumed_run(self, state: Mapping[str, Any]) -> RecordedRun | None:
        """The run ``state`` continues when it was paused in another process: its trajectory is
        still ``running`` and the state's newest human message is its task."""
        tid = state.get(TRAJECTORY_KEY)
        if not tid:
            return None
        with self._lock:
            if tid in self._by_trajectory:  # live here: a concurrent run on its thread is a run of its own
                return None
        messages = state_messages(state)
        newest = last_message(messages, "human")
        try:
            traj = self.bank.trajectories.get(tid)
        except Exception:
            return None
        if traj.status != "running" or self.bank.scrubber(message_text(newest)) != traj.task:
            return None
        cfg = self.recording
        recorder = TrajectoryRecorder(
            self.bank, task=traj.task, trajectory_id=tid, model=traj.model, scrubber=cfg.scrubber,
            detectors=self.detectors, snapshot=traj.bank_snapshot, flush_every=cfg.flush_every, clock=cfg.clock,
            resume_index=max((s.index for s in traj.steps), default=-1) + 1, today=traj.today,
        )
        return RecordedRun(recorder, seen=_ids(messages), keyed=True)

    def attached(self, run: RecordedRun) -> None:
        recorder = run.recorder
        with self._lock:
            known = recorder.id in self._by_trajectory  # resumed in this process
            self._by_trajectory[recorder.id] = run
            started = not known and not run.keyed  # not resumed from another process either
            if started:
                self.last_trajectory_id = recorder.id
                self.trajectory_ids.append(recorder.id)
        if started:
            # The row exists from now on: a process killed at any later point leaves it 'running'.
            recorder.start()
        self._claim(run)

    def _claim(self, run: RecordedRun) -> None:
        # A SkillBankCallbackHandler on this bank in the same run's callbacks would record the
        # run a second time, less precisely: tell it this graph run is ours. The handlers this
        # node's callback manager carries are exactly the ones that see this run.
        callbacks = run_config().get("callbacks")
        node_run = getattr(callbacks, "parent_run_id", None)
        if node_run is None:
            return
        for handler in getattr(callbacks, "handlers", None) or ():
            if isinstance(handler, SkillBankCallbackHandler) and _same_bank(handler.bank, self.bank):
                try:
                    handler.leave(node_run, run.recorder.id)
                except Exception:
                    log.warning("skillbank: could not tell a callback handler to leave this run", exc_info=True)

    def ended(self, run: RecordedRun, outputs: Any) -> None:
        if run.recorder.closed:
            return
        state = outputs if isinstance(outputs, dict) and "messages" in outputs else run.last_state()
        messages = state.get("messages", [])
        self._scan(run, messages)
        last = last_message(messages, "ai")
        answer = message_text(last) if last is not None else None
        if not answer and state.get("structured_response") is not None:  # response_format runs
            answer = _as_text(state["structured_response"])
        run.recorder.finish(answer)
        self._release(run)
        run.recorder.label(self.recording.scorer(), state, run.recorder.ended_at_limit(state))

    def failed(self, run: RecordedRun, error: BaseException) -> None:
        if run.recorder.closed:
            return
        state = run.last_state()
        self._scan(run, state["messages"])
        run.recorder.fail(error)
        self._release(run)
        limit = run.recorder.ended_at_limit(state, error=error)
        if limit is not None:
            run.recorder.label(self.recording.scorer(), state, limit)

    def paused(self, run: RecordedRun, kept: bool) -> None:
        """The graph run ended but the run did not: it waits for a resume (here when ``kept``,
        else through its trajectory, as a run paused in another process does)."""
        run.recorder.flush()
        if not kept:
            self._release(run)

    def _release(self, run: RecordedRun) -> None:
        with self._lock:
            if self._by_trajectory.pop(run.recorder.id, None) is not None:
                self._closed_write_seconds += run.recorder.write_seconds

    # -- what the wrappers record ----------------------------------------------------------------

    def _scan(self, run: RecordedRun, messages: Sequence[Any]) -> None:
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
            signal = limit_from_message(message)
            if signal is not None:
                earlier = found.get(signal.type)
                tool = signal.tool or (earlier.tool if earlier else None)
                found[signal.type] = LimitSignal(signal.type, signal.detail, tool, signal.data)
        for signal in found.values():
            run.recorder.add_limit(signal)

    def _begin_model(self, run: RecordedRun, request: ModelRequest) -> ModelTurn:
        # The agent's state as the verifier will get it: without the call's handoff between parts.
        run.state = {k: v for k, v in (request.state or {}).items() if k != SHOWN_CALL_KEY}
        run.tail = []
        self._scan(run, request.messages)
        recorder = run.recorder
        if request.messages and (asked := _answer_reminder(request.messages[-1])) is not None:
            # The guidance part (around this one) asks the reply again: the draft is this
            # recorder's previous model step; the note and why go between it and the reply.
            _record_answer_reminder(recorder, asked, draft=None)
        recorder.set_model(model_name_of(request.model))
        tools = tool_names(request.tools)
        offered = tools if tools != run.tools else None  # stored when it changes, not every turn
        run.tools = tools
        n_in = len(request.messages) + (1 if request.system_message is not None else 0)
        return recorder.begin_model(n_in, tools=offered)

    def _injected(self, run: RecordedRun, turn: ModelTurn, shown: ShownCall, request: ModelRequest) -> None:
        """The skills the call went out with, known once it has returned: from the injection
        part (wherever it sits), else from the record on the system message the call was made
        with (an injector that writes only that)."""
        system = request.system_message
        if shown.records is not None:
            injected: Sequence[tuple[str, int, float]] = shown.records
            if shown.system_added and system is None:  # the injection made the system message inside us
                turn.input_messages = (turn.input_messages or 0) + 1
        else:
            injected = injections_from_messages([system]) if system is not None else ()
        run.recorder.add_injections(turn.index, injected)
        keep_exposures(self.bank, run.recorder.id, shown.exposures)

    def _model_done(self, run: RecordedRun, turn: ModelTurn, response: ModelCallResult) -> ModelCallResult:
        """The wrapper's answer: the model's response, and on the run's first answer the state
        update that puts the trajectory id into the graph state (no node of its own needed)."""
        message = response_message(response)
        run.recorder.end_model(turn, message)
        if (asked := _answer_reminder(message)) is not None:
            # The guidance part sits inside this one: the call held a draft this recorder never
            # saw, then the reply that replaced it; the draft is kept with the note.
            _record_answer_reminder(run.recorder, asked, draft=asked.draft)
        if message is not None:
            run.tail.append(message)
        if run.keyed:
            return response
        run.keyed = True
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        # create_agent hands every layer a plain ModelResponse (inner layers' updates are kept
        # aside and applied with ours), so this never hides another middleware's update.
        return ExtendedModelResponse(model_response=response,  # type: ignore[arg-type]  # made a ModelResponse above
                                     command=Command(update={TRAJECTORY_KEY: run.recorder.id}))

    def _begin_tool(self, run: RecordedRun, request: ToolCallRequest) -> ToolTurn:
        call = request.tool_call
        return run.recorder.begin_tool(call.get("name") or "?", call.get("args"), call.get("id"))

    def _tool_done(self, run: RecordedRun, turn: ToolTurn, request: ToolCallRequest,
                   result: ToolMessage | Command[Any]) -> None:
        message = tool_result_message(result)
        if isinstance(message, ToolMessage):
            run.tail.append(message)
        recorder = run.recorder
        given = intervention_of(message)
        if given is not None and given.kind == "reminder" and given.skill_id is not None:
            recorder.end_reminder(turn, message_text(message), given.skill_id, int(given.version or 0))
        elif request.tool is None:
            # ToolNode had no tool by that name: whatever answered, the tool is not in the toolset.
            recorder.end_tool(turn, result=message, status="error", limit=LimitType.missing_tool)
        else:
            recorder.end_tool(turn, result=message)
            for signal in unknown_parameters(request.tool_call.get("args"), request.tool):
                recorder.add_limit(signal, turn.index)

    def record_answer(self, run: RecordedRun, request: ToolCallRequest, answer: ToolMessage) -> None:
        """A tool call another part answered without running it (the injection's reminder, when
        it sits around this part): recorded as if it had come back through here."""
        self._tool_done(run, self._begin_tool(run, request), request, answer)

    def _run_for(self, call: CallContext) -> RecordedRun | None:
        if call.run is None:
            _warn_unwatched()
            return None
        return call.run.records.get(self) or self._join(call.run, call.state)

    # -- wrappers ------------------------------------------------------------------------------

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        call, token = enter_call(request.state)
        try:
            run = self._run_for(call)
            if run is None or call.stop() is not None:  # a budget's stop is no model call
                return handler(request)
            shown, request = ShownCall.of(request)
            turn = self._begin_model(run, request)
            with _Step(self._runs, run.recorder, turn, lambda: self._injected(run, turn, shown, request)):
                response = handler(request)
            self._injected(run, turn, shown, request)
            return self._model_done(run, turn, response)
        finally:
            leave_call(token)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        call, token = enter_call(request.state)
        try:
            run = self._run_for(call)
            if run is None or call.stop() is not None:  # a budget's stop is no model call
                return await handler(request)
            shown, request = ShownCall.of(request)
            turn = self._begin_model(run, request)
            with _Step(self._runs, run.recorder, turn, lambda: self._injected(run, turn, shown, request)):
                response = await handler(request)
            self._injected(run, turn, shown, request)
            return self._model_done(run, turn, response)
        finally:
            leave_call(token)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        call, token = enter_call(request.state)
        try:
            run = self._run_for(call)
            if run is None:
                return handler(request)
            call.recording.append(self)  # an answer given inside this call comes back through here
            turn = self._begin_tool(run, request)
            with _Step(self._runs, run.recorder, turn):
                result = handler(request)
            self._tool_done(run, turn, request, result)
            return result
        finally:
            leave_call(token)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        call, token = enter_call(request.state)
        try:
            run = self._run_for(call)
            if run is None:
                return await handler(request)
            call.recording.append(self)  # an answer given inside this call comes back through here
            turn = self._begin_tool(run, request)
            with _Step(self._runs, run.recorder, turn):
                result = await handler(request)
            self._tool_done(run, turn, request, result)
            return result
        finally:
            leave_call(token)


def _answer_reminder(message: object) -> Intervention | None:
    given = intervention_of(message)
    return given if given is not None and given.kind == "answer_reminder" else None


def _record_answer_reminder(recorder: TrajectoryRecorder, asked: Intervention, *, draft: str | None) -> None:
    recorder.add_answer_reminder(note=asked.note or "", reason=asked.reason or "", skill_id=asked.skill_id,
                                 version=asked.version, tool=asked.tool, draft=draft)


class _Step:
    """``with _Step(...):`` around a wrapped call: if it raises, its step ends with the error
    (and an interrupt pauses the run). A class, not a generator: it runs on every call."""

    __slots__ = ("runs", "recorder", "turn", "before_end")

    def __init__(self, runs: AgentRuns[Any], recorder: TrajectoryRecorder, turn: ModelTurn | ToolTurn,
                 before_end: Callable[[], None] | None = None):
        self.runs, self.recorder, self.turn = runs, recorder, turn
        self.before_end = before_end  # what the step still needs before it ends (a model call's skills)

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> None:
        if error is None:
            return
        if self.before_end is not None:
            self.before_end()
        if isinstance(self.turn, ModelTurn):
            self.recorder.end_model(self.turn, error=error)
        else:
            self.recorder.end_tool(self.turn, error=error)
        self.runs.interrupted(error)


def _ids(messages: Sequence[Any]) -> set[str]:
    return {m.id for m in messages if getattr(m, "id", None)}


_WARNED = threading.Event()


def _warn_unwatched() -> None:
    if not _WARNED.is_set():
        _WARNED.set()
        log.warning("skillbank: the recording middleware cannot see which graph run this call belongs "
                    "to (it runs only inside create_agent's model and tools nodes, with LangChain "
                    "callbacks enabled); this run is not recorded")


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
