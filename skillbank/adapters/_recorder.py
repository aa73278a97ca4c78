"""``TrajectoryRecorder``: one run's trajectory, written while it happens.

Framework-neutral: the LangChain middleware, the LangGraph hook and the callback handler all
drive the same recorder. Steps get their index when they *begin* (so parallel tool calls keep
the order they were issued in) and are written when they *end*; every completed step is
flushed at once by default, so an agent that dies loses at most the step in flight, and one that
raises is stored as ``incomplete`` with its error. Every text passes the scrubber before it is
stored. All methods are thread safe, and a failure to write is logged, never raised into the
agent being observed.

Over 500 lines because TrajectoryRecorder is one thread-safe state machine over a run's steps.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
import time
import weakref
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Callable, Sequence

from langchain_core.messages import BaseMessage

from skillbank.adapters.limits import (
    Detectors,
    LimitSignal,
    classify_exception,
    classify_tool_exception,
    classify_tool_message,
    describe_exception,
    is_interrupt,
    limit_from_message,
)
from skillbank.messages import last_message, message_text, state_messages
from skillbank.models import (ANSWER_REMINDER_STEP, Injection, LimitEvent, LimitType, Outcome, Step, Trajectory,
                              new_id, utcnow)
from skillbank.protocols import TrajectorySink

__all__ = ["TrajectoryRecorder", "ModelTurn", "ToolTurn", "message_text", "model_name_of",
           "snapshot_id", "coerce_outcome", "call_verifier", "REMINDER_STEP"]

log = logging.getLogger("skillbank.adapters")

# The kind of step a tool call answered with a lesson instead of run is stored as: not a
# "tool" step, so the evolution loop never reads it as a call the agent made.
REMINDER_STEP = "reminder"


def model_name_of(model: Any) -> str | None:
    """The model's name as its integration reports it (``gpt-4o``, ``claude-...``)."""
    seen = 0
    while model is not None and seen < 5:
        for attr in ("model_name", "model", "model_id", "deployment_name", "repo_id"):
            value = getattr(model, attr, None)
            if isinstance(value, str) and value:
                return value
        bound = getattr(model, "bound", None)  # RunnableBinding from bind_tools
        if bound is None:
            break
        model, seen = bound, seen + 1
    if model is None:
        return None
    llm_type = getattr(model, "_llm_type", None)
    return llm_type if isinstance(llm_type, str) else type(model).__name__


# The snapshot hashes every active skill: cheap, but not free with thousands of skills, and it
# only changes when the change log does.
_SNAPSHOTS: "weakref.WeakKeyDictionary[TrajectorySink, tuple[int, str]]" = weakref.WeakKeyDictionary()
_SNAPSHOT_LOCK = threading.Lock()


def snapshot_id(bank: TrajectorySink) -> str | None:
    try:
        seq = bank.skills.last_event_seq()
        with _SNAPSHOT_LOCK:
            cached = _SNAPSHOTS.get(bank)
        if cached and cached[0] == seq:
            return cached[1]
        snap = bank.snapshot_id()
        with _SNAPSHOT_LOCK:
            _SNAPSHOTS[bank] = (seq, snap)
        return snap
    except Exception:  # a bank we cannot read must not stop the agent
        log.warning("skillbank: could not compute the bank snapshot id", exc_info=True)
        return None


def coerce_outcome(value: Any, source: str) -> Outcome | None:
    """A verifier's or judge's answer as an ``Outcome`` (bool, number, Outcome, verdict, None)."""
    if value is None:
        return None
    if isinstance(value, Outcome):
        return value
    if isinstance(value, bool):
        return Outcome(success=value, score=1.0 if value else 0.0, source=source)
    if isinstance(value, (int, float)):
        number = float(value)
        return Outcome(success=number >= 0.5, score=number, source=source)
    if isinstance(value, tuple) and value and isinstance(value[0], (bool, int, float)):
        out = coerce_outcome(value[0], source)
        if out is not None and len(value) > 1 and value[1] is not None:
            out.note = str(value[1])
        return out
    success = getattr(value, "success", None)
    score = getattr(value, "score", None)
    if success is None and score is None and isinstance(value, dict):
        success, score = value.get("success"), value.get("score")
        note = value.get("reason") or value.get("note")
    else:
        note = getattr(value, "reason", None) or getattr(value, "note", None)
    if success is None:
        if score is None:
            raise TypeError(f"a verifier must return bool, a number in [0, 1] or an Outcome, not {value!r}")
        success = float(score) >= 0.5
    return Outcome(success=bool(success), score=None if score is None else float(score),
                   note=None if note is None else str(note), source=source)


def _scrub_obj_with(scrubber: Callable[[str], str]) -> Callable[[Any], Any]:
    method = getattr(scrubber, "scrub_obj", None)
    if callable(method):
        return method

    def walk(obj: Any, depth: int = 0) -> Any:
        if isinstance(obj, str):
            return scrubber(obj)
        if depth > 20:
            return obj
        if isinstance(obj, dict):
            return {k: walk(v, depth + 1) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [walk(v, depth + 1) for v in obj]
        return obj

    return walk


def _jsonable(obj: Any, depth: int = 0) -> Any:
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if depth > 20:
        return repr(obj)
    if isinstance(obj, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_jsonable(v, depth + 1) for v in obj]
    if hasattr(obj, "model_dump"):
        try:
            return _jsonable(obj.model_dump(), depth + 1)
        except Exception:
            pass
    return repr(obj)


@dataclass
class ModelTurn:
    index: int
    started_at: datetime
    t0: float
    input_messages: int | None
    tools_offered: list[str] | None = None


@dataclass
class ToolTurn:
    index: int
    started_at: datetime
    t0: float
    tool: str
    args: dict[str, Any] | None
    call_id: str | None = None


@dataclass
class _Pending:
    steps: list[Step] = field(default_factory=list)
    limits: list[LimitEvent] = field(default_factory=list)
    injections: list[Injection] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.steps or self.limits or self.injections)


class TrajectoryRecorder:
    """Records one run into ``bank.trajectories``.

    ``flush_every`` is how many completed steps are buffered before a write (1: each one at
    once). Limit events and injections ride along with the next write; ``finish``/``fail``
    write everything that is left.
    """

    def __init__(
        self,
        bank: TrajectorySink,
        *,
        task: str = "",
        trajectory_id: str | None = None,
        model: str | None = None,
        task_id: str | None = None,
        task_type: str | None = None,
        labels: dict[str, str] | None = None,
        scrubber: Callable[[str], str] | None = None,
        detectors: Detectors | None = None,
        snapshot: str | None = None,
        flush_every: int = 1,
        resume_index: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        today: date | None = None,
    ):
        self.bank = bank
        self.scrub: Callable[[str], str] = scrubber or bank.scrubber
        self.scrub_obj = _scrub_obj_with(self.scrub)
        self.detectors = detectors or Detectors()
        self.flush_every = max(1, int(flush_every))
        self.trajectory = Trajectory(
            id=trajectory_id or new_id("tr"),
            task=self._s(task) or "",
            task_id=task_id,
            task_type=task_type,
            labels=dict(labels or {}),
            model=model,
            bank_snapshot=snapshot if snapshot is not None else snapshot_id(bank),
            today=today or date.today(),  # what "tomorrow" in the request meant to this run
        )
        self._lock = threading.RLock()
        self._pending = _Pending()
        self._inserted = resume_index is not None  # a resumed run already has its row
        self._model_unsaved = False  # named after the row was written: goes with the next write
        self._discarded = False
        self._next = resume_index or 0
        self._last_index: int | None = (resume_index - 1) if resume_index else None
        self._seen_errors: set[int] = set()
        self.closed = False
        self.status = "running"
        self.input_tokens = 0
        self.output_tokens = 0
        self.clock = clock  # seconds, for latencies and the time budget (tests pass a fake)
        self.t0 = clock()
        self.model_turns = 0
        self.tool_calls = 0
        self.final_answer: str | None = None
        self.limit_types: list[str] = []  # in the order they were recorded, for callers and tests
        self.write_seconds = 0.0  # time spent writing to the bank (the logging overhead)

    # -- identity ----------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.trajectory.id

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def elapsed(self) -> float:
        return self.clock() - self.t0

    def set_model(self, name: str | None) -> None:
        # The row is usually written when the run starts, before the first model call names
        # the model: then the name goes with the next write instead of a write of its own.
        with self._lock:
            if name and not self.trajectory.model:
                self.trajectory.model = name
                self._model_unsaved = self._inserted

    def _s(self, text: str | None) -> str | None:
        if text is None:
            return None
        try:
            return self.scrub(text)
        except Exception:
            log.warning("skillbank: scrubber failed; text withheld", exc_info=True)
            return "[scrubber failed]"

    def _o(self, obj: Any) -> Any:
        try:
            return _jsonable(self.scrub_obj(obj))
        except Exception:
            log.warning("skillbank: scrubber failed; value withheld", exc_info=True)
            return "[scrubber failed]"

    # -- steps -------------------------------------------------------------------------------

    def _take_index(self) -> int:
        with self._lock:
            index = self._next
            self._next += 1
            self._last_index = index
            return index

    @property
    def current_step(self) -> int:
        """Index of the latest step begun (where a limit that happens now is attributed)."""
        return self._last_index if self._last_index is not None else 0

    def begin_model(self, input_messages: int | None = None,
                    injections: Sequence[tuple[str, int, float]] = (),
                    tools: Sequence[str] | None = None) -> ModelTurn:
        """Start a model turn; ``injections`` are ``(skill_id, version, score)`` in rank order,
        ``tools`` the names of the tools the model is offered (when they changed since the
        previous turn: the evolution loop learns which toolset a lesson holds for)."""
        index = self._take_index()
        self.add_injections(index, injections)
        return ModelTurn(index, utcnow(), self.clock(), input_messages,
                         list(tools) if tools is not None else None)

    def add_injections(self, step: int, injections: Sequence[tuple[str, int, float]]) -> None:
        """The skills injected into model turn ``step``: ``(skill_id, version, score)`` in rank
        order (given at :meth:`begin_model`, or before :meth:`end_model` when the recorder learns
        them only once the call has returned)."""
        if injections:
            with self._lock:
                self._pending.injections.extend(
                    Injection(step=step, skill_id=sid, version=int(version), rank=rank, score=float(score))
                    for rank, (sid, version, score) in enumerate(injections)
                )

    def end_model(self, turn: ModelTurn, message: BaseMessage | None = None, *, error: BaseException | None = None,
                  detect_refusal: bool = True) -> None:
        latency = (self.clock() - turn.t0) * 1000
        step = Step(index=turn.index, kind="model", started_at=turn.started_at,
                    latency_ms=round(latency, 3), input_messages=turn.input_messages,
                    tools_offered=turn.tools_offered)
        signals: list[LimitSignal] = []
        if message is not None:
            text = message_text(message)
            step.content = self._s(text)
            calls = getattr(message, "tool_calls", None) or []
            step.tool_calls = [
                {"name": c.get("name"), "args": self._o(c.get("args") or {}), "id": c.get("id")}
                for c in calls
            ]
            for bad in getattr(message, "invalid_tool_calls", None) or []:
                step.tool_calls.append({"name": bad.get("name"), "args": self._s(str(bad.get("args"))),
                                        "id": bad.get("id"), "invalid": self._s(str(bad.get("error")))})
            usage = getattr(message, "usage_metadata", None) or {}
            if usage:
                step.input_tokens = int(usage.get("input_tokens") or 0)
                step.output_tokens = int(usage.get("output_tokens") or 0)
            if detect_refusal and not calls and text:
                if sig := self.detectors.refused(text, where="the model's answer"):
                    signals.append(sig)
        if error is not None and is_interrupt(error):
            step.content = "[interrupted: waiting for input]"
        elif error is not None:
            step.error = self._s(describe_exception(error))
            if sig := classify_exception(error):
                signals.append(sig)
            self._seen_errors.add(id(error))
        with self._lock:
            self.model_turns += 1
            self.input_tokens += step.input_tokens or 0
            self.output_tokens += step.output_tokens or 0
            self._pending.steps.append(step)
            for sig in signals:
                self._limit_locked(sig, turn.index)
        self._maybe_flush()

    def begin_tool(self, name: str, args: Any = None, call_id: str | None = None) -> ToolTurn:
        index = self._take_index()
        return ToolTurn(index, utcnow(), self.clock(), name,
                        args if isinstance(args, dict) or args is None else {"input": args}, call_id)

    def end_tool(self, turn: ToolTurn, *, result: Any = None, status: str | None = None,
                 error: BaseException | None = None, limit: LimitType | None = None) -> None:
        """Finish a tool step with its result (a ``ToolMessage``, text or object) or error.

        ``status="error"`` marks ``result`` as an error the tool layer already turned into a
        message (LangGraph's ``ToolNode`` does this for unknown tools and bad arguments).
        ``limit`` overrides the classification when the caller knows better (an unbound tool).
        """
        latency = (self.clock() - turn.t0) * 1000
        step = Step(index=turn.index, kind="tool", started_at=turn.started_at,
                    latency_ms=round(latency, 3), tool=turn.tool,
                    args=self._o(turn.args) if turn.args is not None else None)
        signals: list[LimitSignal] = []
        if result is not None and hasattr(result, "content") and getattr(result, "type", None) == "tool":
            status = status or getattr(result, "status", None)
            text = message_text(result)
        elif result is not None:
            text = message_text(result)
        else:
            text = None
        if error is not None and is_interrupt(error):
            # Paused for human input, not failed; the resumed run calls the tool again.
            step.result = "[interrupted: waiting for input]"
        elif error is not None:
            step.error = self._s(describe_exception(error))
            signals.append(classify_tool_exception(error, turn.tool))
            self._seen_errors.add(id(error))
        elif status == "error":
            step.error = self._s(text)
            sig = classify_tool_message(text or "", turn.tool)
            if limit is not None and sig.type != limit:
                sig = LimitSignal(limit, text or limit.value, turn.tool)
            signals.append(sig)
        else:
            step.result = self._s(text)
            if text:
                if found := self.detectors.error_in(text, turn.tool):
                    signals.append(found)
                elif found := self.detectors.unknown(text, turn.tool):
                    signals.append(found)
                if found := self.detectors.refused(text, turn.tool, where=f"the result of {turn.tool}"):
                    signals.append(found)
        with self._lock:
            self.tool_calls += 1
            self._pending.steps.append(step)
            for sig in signals:
                self._limit_locked(sig, turn.index)
        self._maybe_flush()

    def end_reminder(self, turn: ToolTurn, text: str, skill_id: str, version: int) -> None:
        """Finish a tool call that was answered with a lesson instead of run (a reminder at the
        tool): a ``reminder`` step holding the call and the text the model got, and an injection
        of the lesson's skill version at that step, so attribution counts the run as helped (or
        not) by it."""
        latency = (time.monotonic() - turn.t0) * 1000
        step = Step(index=turn.index, kind=REMINDER_STEP, started_at=turn.started_at, latency_ms=round(latency, 3),
                    tool=turn.tool, args=self._o(turn.args) if turn.args is not None else None,
                    result=self._s(text))
        with self._lock:
            self._pending.steps.append(step)
            self._pending.injections.append(Injection(step=turn.index, skill_id=skill_id, version=int(version),
                                                      rank=0, score=1.0))
        self._maybe_flush()

    def add_answer_reminder(self, *, note: str, reason: str, skill_id: str | None, version: int | None,
                            tool: str | None = None, draft: str | None = None) -> None:
        """A final reply asked again (an answer reminder): an ``answer_reminder`` step holding the
        note the model got, why (``reason``), the tool it was about, and ``draft`` where no model
        step of this recorder holds it; and an injection of the lesson's skill version at that
        step, so attribution counts the run as helped (or not) by it."""
        index = self._take_index()
        step = Step(index=index, kind=ANSWER_REMINDER_STEP, started_at=utcnow(), tool=tool,
                    content=self._s(draft), result=self._s(note), reason=reason)
        with self._lock:
            self._pending.steps.append(step)
            if skill_id is not None and version is not None:
                self._pending.injections.append(Injection(step=index, skill_id=skill_id, version=int(version),
                                                          rank=0, score=1.0))
        self._maybe_flush()

    def record_tool_message(self, message: BaseMessage, tool: str | None = None) -> None:
        """A tool result that no tool run produced (e.g. ``ToolNode``'s unknown-tool error)."""
        turn = self.begin_tool(tool or getattr(message, "name", None) or "unknown", None,
                               getattr(message, "tool_call_id", None))
        self.end_tool(turn, result=message)

    # -- limits, injections ------------------------------------------------------------------

    def _limit_locked(self, sig: LimitSignal, step: int | None, data: dict[str, Any] | None = None) -> None:
        merged = {**(sig.data or {}), **(data or {})}
        event = LimitEvent(type=sig.type, step=self.current_step if step is None else step,
                           detail=self._s(sig.detail) or "", tool=sig.tool, data=self._o(merged))
        self._pending.limits.append(event)
        self.limit_types.append(sig.type.value)

    def add_limit(self, signal: LimitSignal, step: int | None = None, data: dict[str, Any] | None = None,
                  *, flush: bool = True) -> None:
        with self._lock:
            self._limit_locked(signal, step, data)
        if flush:
            self.flush()

    def note_error(self, error: BaseException) -> bool:
        """True the first time this exception object is seen (so it is classified once)."""
        with self._lock:
            if id(error) in self._seen_errors:
                return False
            self._seen_errors.add(id(error))
            return True

    # -- writing -----------------------------------------------------------------------------

    def _ensure_inserted(self) -> None:
        if not self._inserted:
            self.bank.trajectories.start(self.trajectory)
            self._inserted = True

    def _maybe_flush(self) -> None:
        if len(self._pending.steps) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            if self._discarded or (self.closed and not self._pending):
                return
            t0 = time.perf_counter()
            try:
                self._ensure_inserted()
                if self._pending:
                    pending, self._pending = self._pending, _Pending()
                    model = self.trajectory.model if self._model_unsaved else None
                    try:
                        self.bank.trajectories.append(self.id, pending.steps, pending.limits, pending.injections,
                                                      model=model)
                        self._model_unsaved = False
                    except Exception:
                        # Keep what could not be written for the next attempt.
                        pending.steps.extend(self._pending.steps)
                        pending.limits.extend(self._pending.limits)
                        pending.injections.extend(self._pending.injections)
                        self._pending = pending
                        raise
            except Exception:
                log.warning("skillbank: could not write trajectory %s", self.id, exc_info=True)
            finally:
                self.write_seconds += time.perf_counter() - t0

    def start(self) -> "TrajectoryRecorder":
        """Write the trajectory row now, as ``running`` (otherwise it is written with the first step).

        The adapters call this when a run begins, so a process killed at any later point (even
        inside the first model call) leaves a row saying the run started and never finished.
        """
        with self._lock:
            t0 = time.perf_counter()
            try:
                self._ensure_inserted()
            except Exception:
                log.warning("skillbank: could not start trajectory %s", self.id, exc_info=True)
            finally:
                self.write_seconds += time.perf_counter() - t0
        return self

    def discard(self) -> None:
        """Stop recording and delete what was written: the run turned out to be another's to record."""
        with self._lock:
            if self.closed:
                return
            self.closed = self._discarded = True
            self._pending = _Pending()
            if not self._inserted:
                return
            try:
                self.bank.trajectories.discard(self.id)
            except Exception:
                log.warning("skillbank: could not discard trajectory %s", self.id, exc_info=True)

    def finish(self, final_answer: str | None = None, *, status: str = "complete",
               error: str | None = None) -> None:
        with self._lock:
            if self.closed:
                return
            self.flush()
            self.closed = True
            self.status = status
            self.final_answer = self._s(final_answer)
            t0 = time.perf_counter()
            try:
                self._ensure_inserted()
                self.bank.trajectories.finish(self.id, status=status, final_answer=self.final_answer,
                                              error=self._s(error))
            except Exception:
                log.warning("skillbank: could not finish trajectory %s", self.id, exc_info=True)
            finally:
                self.write_seconds += time.perf_counter() - t0

    def fail(self, error: BaseException | str, final_answer: str | None = None) -> None:
        """End the run as ``incomplete``; a limit the error is evidence of becomes an event."""
        with self._lock:
            if self.closed:
                return
            if isinstance(error, BaseException):
                if self.note_error(error) and (sig := classify_exception(error)):
                    self._limit_locked(sig, None)
                text = describe_exception(error)
            else:
                text = str(error)
            self.finish(final_answer, status="incomplete", error=text)

    def ended_at_limit(self, state: dict[str, Any] | None, *,
                       error: BaseException | None = None) -> LimitType | None:
        """The limit this run ended at, if it did: the error that ended it (a tool that raised
        ends it at that tool), or the final message a limit middleware, a run budget or
        ``create_react_agent`` answered with."""
        if error is not None:
            signal = classify_exception(error)
            if signal is not None:
                return signal.type
            last = self.limit_types[-1] if self.limit_types else None
            return LimitType(last) if last in _TOOL_ENDINGS else None
        last_ai = last_message(state_messages(state), "ai")
        signal = limit_from_message(last_ai) if last_ai is not None else None
        return signal.type if signal is not None else None

    def label(self, scorer: tuple[Callable[[Any], Any], str] | None, state: Any,
              limit: LimitType | None) -> Outcome | None:
        """Label the finished run: ``scorer`` is ``(verifier, source)``. A run that ended at a
        ``limit`` is a failure (source ``limit:<type>``) whenever the verifier cannot say: there
        is none, it raised, or it answered ``None``."""
        outcome = None
        if scorer is not None:
            fn, source = scorer
            try:
                outcome = self.record_outcome(call_verifier(fn, state), source)
            except Exception:
                why = "the run is labelled a failure at its limit" if limit else "the run stays unlabelled"
                log.warning("skillbank: verifier failed; %s", why, exc_info=True)
        if outcome is None and limit is not None:
            outcome = self.record_outcome(False, f"limit:{limit.value}")
        return outcome

    def record_outcome(self, value: Any, source: str = "verifier") -> Outcome | None:
        outcome = coerce_outcome(value, source)
        if outcome is None:
            return None
        if outcome.note:
            outcome = outcome.model_copy(update={"note": self._s(outcome.note)})
        try:
            self.bank.trajectories.record_outcome(self.id, outcome)
        except Exception:
            log.warning("skillbank: could not record the outcome of %s", self.id, exc_info=True)
            return None
        return outcome


# Limits a tool call ends a run at when the tool raised.
_TOOL_ENDINGS = frozenset({LimitType.tool_error.value, LimitType.invalid_tool_args.value})


def call_verifier(fn: Callable[[Any], Any], state: Any) -> Any:
    """The verifier's answer for ``state``, from the thread that ended the run.

    Adapters see the end of a run in a callback, which cannot await: an async verifier runs to
    completion on a worker thread's own event loop, blocking the caller meanwhile, as a sync
    verifier does (an ``LLMJudge`` is called through its sync ``__call__``).
    """
    value = fn(state)
    if inspect.isawaitable(value):
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            value = pool.submit(asyncio.run, _awaited(value)).result()
    return value


async def _awaited(value: Any) -> Any:
    return await value

